"""Karpenter's AWS provider in Python, talking boto3 to a mocked EC2 (moto + a fleet model).

The package root names the provider, its NodeClass kind, the mocked EC2, the bundled price tables
and the provider's errors (all :class:`karpy.errors.KarpyError`). Names resolve lazily, so
importing the package stays light (boto3/moto load only when a provider or the mock is built).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._exports import lazy_exports

_EXPORTS = {
    "AWSCloudProvider": "cloudprovider",
    "EC2NodeClass": "apis", "EXTRA_KINDS": "apis",
    "MockedEC2": "ec2.backend",
    "CapacitySpecError": "ec2.capacity", "parse_capacity_spec": "ec2.capacity",
    "PriceBook": "ec2.fleet", "StaticPriceBook": "ec2.fleet",
    "InstanceTypeError": "instancetype",
    "NodeClassError": "nodeclass",
    "PriceTable": "pricing", "PricingError": "pricing", "UnknownPriceTable": "pricing",
    "list_tables": "pricing", "load_table": "pricing", "load_table_from_path": "pricing",
    "resolve_table": "pricing",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from awsprovider.apis import EXTRA_KINDS, EC2NodeClass
    from awsprovider.cloudprovider import AWSCloudProvider
    from awsprovider.ec2.backend import MockedEC2
    from awsprovider.ec2.capacity import CapacitySpecError, parse_capacity_spec
    from awsprovider.ec2.fleet import PriceBook, StaticPriceBook
    from awsprovider.instancetype import InstanceTypeError
    from awsprovider.nodeclass import NodeClassError
    from awsprovider.pricing import (PriceTable, PricingError, UnknownPriceTable, list_tables, load_table,
                                     load_table_from_path, resolve_table)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
