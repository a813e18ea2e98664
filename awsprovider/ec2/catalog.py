"""The instance-type catalogue as Karpenter reads it: DescribeInstanceTypes + offerings, via boto3.

Mirrors ``pkg/providers/instancetype/instancetype.go`` ``UpdateInstanceTypes`` (paginated,
``MaxResults=100``, filters ``supported-virtualization-type=[hvm]`` and
``processor-info.supported-architecture=[x86_64, arm64]``) and ``UpdateInstanceTypeOfferings``
(``LocationType=availability-zone``, ``MaxResults=1000``, no filters -> type -> set of zones).

Results are plain dicts (the boto3 ``InstanceTypeInfo`` shape) keyed by type name, in sorted name
order (Go stores a map; sorted order is karpy's deterministic rule). Each :class:`InstanceTypeCatalog`
caches its answers: one instance per backend, read once (DescribeInstanceTypes costs ~2 s on moto).
"""

from __future__ import annotations

from typing import Any

__all__ = ["INSTANCE_TYPE_FILTERS", "InstanceTypeCatalog"]

INSTANCE_TYPE_FILTERS: tuple[dict[str, Any], ...] = (
    {"Name": "supported-virtualization-type", "Values": ["hvm"]},
    {"Name": "processor-info.supported-architecture", "Values": ["x86_64", "arm64"]},
)


class InstanceTypeCatalog:
    """Reads and caches the catalogue from an EC2 client (any boto3 EC2 client; moto in karpy)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._types: dict[str, dict[str, Any]] | None = None
        self._offerings: dict[str, frozenset[str]] | None = None
        self.describe_instance_types_pages = 0
        self.describe_offerings_pages = 0

    def instance_types(self) -> dict[str, dict[str, Any]]:
        """``InstanceTypeInfo`` dicts keyed by type (hvm, x86_64/arm64 only), sorted by name."""
        if self._types is None:
            found: dict[str, dict[str, Any]] = {}
            paginator = self._client.get_paginator("describe_instance_types")
            for page in paginator.paginate(Filters=[dict(f) for f in INSTANCE_TYPE_FILTERS], MaxResults=100):
                self.describe_instance_types_pages += 1
                for info in page.get("InstanceTypes", []):
                    found[info["InstanceType"]] = info
            self._types = {name: found[name] for name in sorted(found)}
        return self._types

    def offerings(self) -> dict[str, frozenset[str]]:
        """Instance type -> availability-zone names it is offered in, sorted by type."""
        if self._offerings is None:
            zones: dict[str, set[str]] = {}
            paginator = self._client.get_paginator("describe_instance_type_offerings")
            for page in paginator.paginate(LocationType="availability-zone", MaxResults=1000):
                self.describe_offerings_pages += 1
                for row in page.get("InstanceTypeOfferings", []):
                    zones.setdefault(row["InstanceType"], set()).add(row["Location"])
            self._offerings = {name: frozenset(zones[name]) for name in sorted(zones)}
        return self._offerings

    def zones(self) -> list[str]:
        """Every zone any type is offered in (Karpenter's ``allZones``), sorted."""
        return sorted({z for zs in self.offerings().values() for z in zs})

    def get(self, instance_type: str) -> dict[str, Any] | None:
        """One type's ``InstanceTypeInfo`` (``None`` if filtered out or unknown)."""
        return self.instance_types().get(instance_type)
