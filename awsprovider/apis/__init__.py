"""The AWS provider's API types (karpenter.k8s.aws/v1). Names resolve lazily (the models load
pydantic)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._exports import lazy_exports

_EXPORTS = {
    **dict.fromkeys(("EXTRA_KINDS", "EC2NodeClass"), "ec2nodeclass"),
    "Network": "network",
}

__all__ = [
    "EC2NodeClass", "EXTRA_KINDS", "Network",
]

if TYPE_CHECKING:  # pragma: no cover
    from awsprovider.apis.ec2nodeclass import EXTRA_KINDS, EC2NodeClass
    from awsprovider.apis.network import Network

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
