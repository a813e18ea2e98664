"""Karpenter's AWS provider in Python, talking boto3 to a mocked EC2 (moto + a fleet model).

``AWSCloudProvider`` (:mod:`awsprovider.cloudprovider`) is exported lazily so that importing the
package stays light (boto3/moto load only when a provider is built).
"""

from __future__ import annotations

from typing import Any

__all__ = ["AWSCloudProvider"]


def __getattr__(name: str) -> Any:
    if name == "AWSCloudProvider":
        from awsprovider.cloudprovider import AWSCloudProvider

        return AWSCloudProvider
    raise AttributeError(f"module 'awsprovider' has no attribute {name!r}")
