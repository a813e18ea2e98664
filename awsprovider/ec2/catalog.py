"""The instance-type catalogue as Karpenter reads it: DescribeInstanceTypes + offerings, via boto3.

Mirrors ``pkg/providers/instancetype/instancetype.go`` ``UpdateInstanceTypes`` (paginated,
``MaxResults=100``, filters ``supported-virtualization-type=[hvm]`` and
``processor-info.supported-architecture=[x86_64, arm64]``) and ``UpdateInstanceTypeOfferings``
(``LocationType=availability-zone``, ``MaxResults=1000``, no filters -> type -> set of zones).

Results are keyed by type name, in sorted name order (Go stores a map; sorted order is karpy's
deterministic rule). Each :class:`InstanceTypeCatalog` caches its answers (read once per object).

The process-level memo -- the one deliberate process-level cache in karpy. DescribeInstanceTypes
through moto costs seconds (moto serialises ~1,250 entries to XML and botocore parses them back),
and every MockedEC2 -- every test, every ``karpy simulate`` -- would pay it again for the same
answer. A catalogue built with :meth:`InstanceTypeCatalog.for_moto` reads through boto3 against moto
the first time in a process and then shares the parsed answer with later moto catalogues of the
same key ``(region, moto version, request filters)``. The first read leaves the backend's id
generator as it found it (``MockedEC2`` makes these reads id-neutral), so ids do not depend on
whether the memo answered. It is safe because it holds read-only data
derived from moto's static data files, and nothing in it can be mutated: every entry is frozen
(mappings are ``MappingProxyType``, lists are tuples, zone sets are frozensets), so no state can leak
from one simulation or test to another. Catalogues over other clients (real AWS) are never memoised.

Below the process memo sits the machine-wide one: :mod:`awsprovider.ec2.catalogcache` keeps the same
frozen answers on disk (keyed by moto version and data files, region, request and karpy version), so
only the first process on a machine pays the moto read. ``from_disk`` says an answer came from there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

__all__ = ["INSTANCE_TYPE_FILTERS", "InstanceTypeCatalog", "freeze"]

INSTANCE_TYPE_FILTERS: tuple[dict[str, Any], ...] = (
    {"Name": "supported-virtualization-type", "Values": ["hvm"]},
    {"Name": "processor-info.supported-architecture", "Values": ["x86_64", "arm64"]},
)
#: the DescribeInstanceTypeOfferings request (part of the offerings memo key)
OFFERINGS_LOCATION_TYPE = "availability-zone"

# (kind, region, moto version, request) -> (frozen answer, pages read to obtain it)
_MEMO: dict[tuple[Any, ...], tuple[Any, int]] = {}


def freeze(value: Any) -> Any:
    """A read-only deep image of parsed JSON-like data: dict -> MappingProxyType, list -> tuple."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def _filters_key(filters: tuple[dict[str, Any], ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple((f["Name"], tuple(f["Values"])) for f in filters)


class InstanceTypeCatalog:
    """Reads and caches the catalogue from an EC2 client (any boto3 EC2 client; moto in karpy).

    ``describe_instance_types_pages`` / ``describe_offerings_pages``: the pages read to obtain the
    data (by this catalogue, or by the earlier one whose answer the process memo shares, in which
    case ``from_memo`` is True).
    """

    def __init__(self, client: Any) -> None:
        self._client = client
        self._region: str | None = None
        #: the on-disk cache under the process memo (moto catalogues only; None = not used)
        self.disk_cache: Any = None
        self.from_disk = False
        self._types: Mapping[str, Mapping[str, Any]] | None = None
        self._offerings: Mapping[str, frozenset[str]] | None = None
        self._memo_key: tuple[Any, ...] | None = None
        self.describe_instance_types_pages = 0
        self.describe_offerings_pages = 0
        self.from_memo = False

    @classmethod
    def for_moto(cls, client: Any, region: str, disk_cache: Any = None) -> InstanceTypeCatalog:
        """A catalogue over a moto-backed client, sharing the process memo (see module doc) and the
        on-disk cache: ``disk_cache`` None = the default :class:`~awsprovider.ec2.catalogcache.CatalogCache`
        unless ``KARPY_NO_CACHE`` is set, False = none, or a ``CatalogCache``."""
        import moto

        catalog = cls(client)
        catalog._memo_key = (region, moto.__version__)
        catalog._region = region
        if disk_cache is None:
            from awsprovider.ec2.catalogcache import CatalogCache, cache_disabled_by_env

            disk_cache = False if cache_disabled_by_env() else CatalogCache()
        catalog.disk_cache = disk_cache or None
        return catalog

    @property
    def cache_token(self) -> tuple[Any, ...] | None:
        """A content key of this catalogue's answers for process-wide caches of what is derived from
        them (:data:`awsprovider.instancetype.SHARED_CACHE`): the memo key of a moto catalogue --
        whose answers are moto's static data for the region and version -- or None (real AWS)."""
        if self._memo_key is None:
            return None
        return ("moto", *self._memo_key, _filters_key(INSTANCE_TYPE_FILTERS), OFFERINGS_LOCATION_TYPE)

    def _read_through_disk(self, kind: str, request: tuple[Any, ...],
                           read: Callable[[], tuple[Any, int]]) -> tuple[Any, int]:
        cache, region = self.disk_cache, self._region
        if cache is None or region is None:
            return read()
        hit = cache.load(kind, region, request)
        if hit is not None:
            self.from_disk = True
            return _DECODE[kind](hit[0]), hit[1]
        answer, pages = read()
        cache.store(kind, region, request, answer, pages)
        return answer, pages

    def _memoised(self, kind: str, request: tuple[Any, ...], read: Callable[[], tuple[Any, int]]) -> tuple[Any, int]:
        if self._memo_key is None:
            return read()
        key = (kind, *self._memo_key, request)
        hit = _MEMO.get(key)
        if hit is None:
            # moto draws a request id per call; a memo hit makes no call, so the miss must not
            # advance the backend's id generator either: MockedEC2 treats these two operations as
            # id-neutral (awsprovider.ec2.backend.ID_NEUTRAL_OPERATIONS).
            hit = _MEMO[key] = self._read_through_disk(kind, request, read)
        else:
            self.from_memo = True
        return hit

    def _read_instance_types(self) -> tuple[Mapping[str, Mapping[str, Any]], int]:
        found: dict[str, Any] = {}
        pages = 0
        paginator = self._client.get_paginator("describe_instance_types")
        for page in paginator.paginate(Filters=[dict(f) for f in INSTANCE_TYPE_FILTERS], MaxResults=100):
            pages += 1
            for info in page.get("InstanceTypes", []):
                found[info["InstanceType"]] = info
        return self._decode_instance_types(found), pages

    def _read_offerings(self) -> tuple[Mapping[str, frozenset[str]], int]:
        zones: dict[str, set[str]] = {}
        pages = 0
        paginator = self._client.get_paginator("describe_instance_type_offerings")
        for page in paginator.paginate(LocationType=OFFERINGS_LOCATION_TYPE, MaxResults=1000):
            pages += 1
            for row in page.get("InstanceTypeOfferings", []):
                zones.setdefault(row["InstanceType"], set()).add(row["Location"])
        return self._decode_offerings(zones), pages

    @staticmethod
    def _decode_instance_types(plain: Mapping[str, Any]) -> Mapping[str, Mapping[str, Any]]:
        return MappingProxyType({name: freeze(plain[name]) for name in sorted(plain)})

    @staticmethod
    def _decode_offerings(plain: Mapping[str, Any]) -> Mapping[str, frozenset[str]]:
        return MappingProxyType({name: frozenset(plain[name]) for name in sorted(plain)})

    def instance_types(self) -> Mapping[str, Mapping[str, Any]]:
        """Read-only ``InstanceTypeInfo`` mappings keyed by type (hvm, x86_64/arm64 only), sorted
        by name (lists in the entries are tuples)."""
        if self._types is None:
            self._types, self.describe_instance_types_pages = self._memoised(
                "DescribeInstanceTypes", _filters_key(INSTANCE_TYPE_FILTERS), self._read_instance_types)
        return self._types

    def offerings(self) -> Mapping[str, frozenset[str]]:
        """Instance type -> availability-zone names it is offered in, sorted by type (read-only)."""
        if self._offerings is None:
            self._offerings, self.describe_offerings_pages = self._memoised(
                "DescribeInstanceTypeOfferings", (OFFERINGS_LOCATION_TYPE,), self._read_offerings)
        return self._offerings

    def zones(self) -> list[str]:
        """Every zone any type is offered in (Karpenter's ``allZones``), sorted."""
        return sorted({z for zs in self.offerings().values() for z in zs})

    def get(self, instance_type: str) -> Mapping[str, Any] | None:
        """One type's ``InstanceTypeInfo`` (``None`` if filtered out or unknown)."""
        return self.instance_types().get(instance_type)


# operation -> how an on-disk entry (parsed frozen: read-only mappings, tuples) becomes the answer
# the reads return (entries are frozen already; only the zone lists become frozensets)
_DECODE = {
    "DescribeInstanceTypes": lambda frozen: MappingProxyType({name: frozen[name] for name in sorted(frozen)}),
    "DescribeInstanceTypeOfferings": InstanceTypeCatalog._decode_offerings,
}
