"""The ICE (insufficient capacity) cache. Mirrors pkg/cache/unavailableofferings.go.

Three TTL caches, each entry living :data:`UNAVAILABLE_OFFERINGS_TTL` (3 min, pkg/cache/cache.go)
on an injected clock (any object with ``now() -> float`` seconds, or a zero-argument callable):

* offerings keyed ``"<capacityType>:<instanceType>:<zone>[:<pgID>[:<partition>]]"``;
* capacity types (``mark_capacity_type_unavailable("spot")``);
* subnets (``mark_subnet_unavailable(subnet_id)``).

``is_unavailable`` = offering key present, or capacity type present, or every subnet of the zone
present (and the zone has subnets). Marking always re-sets the entry (extends its TTL).

Expiry. go-cache treats an entry as gone once ``now > expiration`` (``Get``); its janitor evicts
expired entries every 10 s and the eviction callback bumps the sequence numbers. karpy has no
janitor: expired entries are evicted (and sequence numbers bumped) lazily, at the first call that
observes them -- equivalent to a janitor running exactly at expiry. Eviction order is sorted by
key (deterministic rule for go-cache's map iteration).

Sequence numbers (``seq_num(type)``) mirror upstream: per-type marks and evictions plus the
capacity-type and subnet caches' counters. ``flush()`` (go-cache Flush) does not run the eviction
callback upstream, so it does not bump them; :meth:`UnavailableOfferings.version` is an internal
counter that changes on every mutation including flushes, for cache invalidation.
"""

from __future__ import annotations

from typing import Callable, Iterable, Protocol, Union

__all__ = [
    "UNAVAILABLE_OFFERINGS_TTL",
    "UNAVAILABLE_OFFERINGS_CLEANUP_INTERVAL",
    "Clock",
    "UnavailableOfferings",
    "UnavailableView",
    "offering_key",
]

#: pkg/cache/cache.go UnavailableOfferingsTTL (seconds)
UNAVAILABLE_OFFERINGS_TTL: float = 180.0
#: pkg/cache/cache.go UnavailableOfferingsCleanupInterval (seconds; documented only, see module doc)
UNAVAILABLE_OFFERINGS_CLEANUP_INTERVAL: float = 10.0


class Clock(Protocol):
    """Anything with ``now() -> float`` (seconds); karpy.sim's virtual clock qualifies."""

    def now(self) -> float: ...


ClockLike = Union[Clock, Callable[[], float]]


def offering_key(instance_type: str, zone: str, capacity_type: str,
                 placement_group_id: str = "", placement_group_partition: str = "") -> str:
    """unavailableofferings.go key()."""
    if placement_group_id:
        if placement_group_partition:
            return f"{capacity_type}:{instance_type}:{zone}:{placement_group_id}:{placement_group_partition}"
        return f"{capacity_type}:{instance_type}:{zone}:{placement_group_id}"
    return f"{capacity_type}:{instance_type}:{zone}"


class _TTLCache:
    """A go-cache with default expiration ``ttl`` on a virtual clock (lazy eviction)."""

    __slots__ = ("ttl", "items")

    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self.items: dict[str, float] = {}  # key -> expiration

    def set_default(self, key: str, now: float) -> None:
        self.items[key] = now + self.ttl

    def get(self, key: str, now: float) -> bool:
        exp = self.items.get(key)
        return exp is not None and not now > exp

    def expired(self, now: float) -> list[str]:
        """Remove and return (sorted) the keys whose entries expired."""
        if not self.items:
            return []
        gone = sorted(k for k, exp in self.items.items() if now > exp)
        for k in gone:
            del self.items[k]
        return gone


class UnavailableView:
    """An immutable snapshot of :class:`UnavailableOfferings` (same ``is_unavailable`` semantics)."""

    __slots__ = ("offerings", "capacity_types", "subnets", "global_version", "type_versions")

    def __init__(self, offerings: frozenset[str], capacity_types: frozenset[str], subnets: frozenset[str],
                 global_version: int, type_versions: dict[str, int]) -> None:
        self.offerings = offerings
        self.capacity_types = capacity_types
        self.subnets = subnets
        self.global_version = global_version
        self.type_versions = type_versions

    def is_unavailable(self, instance_type: str, zone: str, subnet_ids: Iterable[str], capacity_type: str,
                       placement_group_id: str = "", placement_group_partition: str = "") -> bool:
        """unavailableofferings.go IsUnavailable on the snapshot."""
        if capacity_type in self.capacity_types:
            return True
        if self.offerings and offering_key(instance_type, zone, capacity_type, placement_group_id,
                                           placement_group_partition) in self.offerings:
            return True
        if not self.subnets:
            return False
        subnets = list(subnet_ids)
        return bool(subnets) and all(s in self.subnets for s in subnets)


class UnavailableOfferings:
    """Mirrors cache.UnavailableOfferings on a virtual clock (see module doc)."""

    def __init__(self, clock: ClockLike, ttl: float = UNAVAILABLE_OFFERINGS_TTL) -> None:
        now_fn = getattr(clock, "now", None)
        self._now: Callable[[], float] = now_fn if callable(now_fn) else clock  # type: ignore[assignment]
        self.ttl = ttl
        self._offerings = _TTLCache(ttl)
        self._capacity_types = _TTLCache(ttl)
        self._subnets = _TTLCache(ttl)
        self._offering_seq: dict[str, int] = {}
        self._capacity_type_seq = 0
        self._subnet_seq = 0
        self._version = 0
        self._type_version: dict[str, int] = {}

    # -- clock / eviction -----------------------------------------------------------------------
    def now(self) -> float:
        """The injected clock's current time (seconds)."""
        return float(self._now())

    def _evict(self) -> float:
        now = self.now()
        for key in self._offerings.expired(now):
            itype = key.split(":")[1]
            self._offering_seq[itype] = self._offering_seq.get(itype, 0) + 1
            self._type_version[itype] = self._type_version.get(itype, 0) + 1
            self._version += 1
        n = len(self._capacity_types.expired(now))
        if n:
            self._capacity_type_seq += n
            self._version += 1
        n = len(self._subnets.expired(now))
        if n:
            self._subnet_seq += n
            self._version += 1
        return now

    # -- queries --------------------------------------------------------------------------------
    def seq_num(self, instance_type: str) -> int:
        """unavailableofferings.go SeqNum."""
        self._evict()
        return self._offering_seq.get(instance_type, 0) + self._capacity_type_seq + self._subnet_seq

    def version(self, instance_type: str | None = None) -> tuple[int, int]:
        """An invalidation stamp: changes whenever anything affecting ``instance_type`` (or, with
        ``None``, anything at all) changed, including flushes and evictions."""
        self._evict()
        per_type = self._type_version.get(instance_type, 0) if instance_type is not None else 0
        return (self._version, per_type)

    def global_version(self) -> int:
        """Counter of changes that affect every type (capacity types, subnets, flush)."""
        self._evict()
        return self._version

    def is_unavailable(self, instance_type: str, zone: str, subnet_ids: Iterable[str], capacity_type: str,
                       placement_group_id: str = "", placement_group_partition: str = "") -> bool:
        """unavailableofferings.go IsUnavailable."""
        now = self._evict()
        if self._offerings.get(offering_key(instance_type, zone, capacity_type, placement_group_id,
                                            placement_group_partition), now):
            return True
        if self._capacity_types.get(capacity_type, now):
            return True
        subnets = list(subnet_ids)
        return bool(subnets) and all(self._subnets.get(s, now) for s in subnets)

    def snapshot(self) -> UnavailableView:
        """A frozen view of the cache at ``now()`` (one eviction pass), for bulk lookups."""
        now = self._evict()
        return UnavailableView(
            frozenset(k for k, exp in self._offerings.items.items() if not now > exp),
            frozenset(k for k, exp in self._capacity_types.items.items() if not now > exp),
            frozenset(k for k, exp in self._subnets.items.items() if not now > exp),
            self._version, dict(self._type_version),
        )

    def is_capacity_type_unavailable(self, capacity_type: str) -> bool:
        """Whether ``mark_capacity_type_unavailable(capacity_type)`` is in force."""
        return self._capacity_types.get(capacity_type, self._evict())

    def is_subnet_unavailable(self, subnet_id: str) -> bool:
        """Whether the subnet is marked."""
        return self._subnets.get(subnet_id, self._evict())

    def entries(self) -> list[tuple[str, float]]:
        """Live offering entries ``(key, expiration)``, sorted by key (for explain output)."""
        self._evict()
        return sorted(self._offerings.items.items())

    # -- marks ----------------------------------------------------------------------------------
    def mark_unavailable(self, instance_type: str, zone: str, capacity_type: str,
                         reason: dict[str, str] | None = None, placement_group_id: str = "",
                         placement_group_partition: str = "") -> None:
        """unavailableofferings.go MarkUnavailable: (re)set the entry (extends its TTL), bump seq."""
        now = self._evict()
        self._offerings.set_default(
            offering_key(instance_type, zone, capacity_type, placement_group_id, placement_group_partition), now)
        self._offering_seq[instance_type] = self._offering_seq.get(instance_type, 0) + 1
        self._type_version[instance_type] = self._type_version.get(instance_type, 0) + 1

    def mark_capacity_type_unavailable(self, capacity_type: str) -> None:
        """unavailableofferings.go MarkCapacityTypeUnavailable."""
        now = self._evict()
        self._capacity_types.set_default(capacity_type, now)
        self._capacity_type_seq += 1
        self._version += 1

    def mark_subnet_unavailable(self, subnet_id: str) -> None:
        """unavailableofferings.go MarkSubnetUnavailable."""
        now = self._evict()
        self._subnets.set_default(subnet_id, now)
        self._subnet_seq += 1
        self._version += 1

    def delete(self, instance_type: str, zone: str, capacity_type: str) -> None:
        """unavailableofferings.go Delete (go-cache Delete runs the eviction callback: seq bump)."""
        self._evict()
        key = offering_key(instance_type, zone, capacity_type)
        if key in self._offerings.items:
            del self._offerings.items[key]
            self._offering_seq[instance_type] = self._offering_seq.get(instance_type, 0) + 1
        self._type_version[instance_type] = self._type_version.get(instance_type, 0) + 1

    def flush(self) -> None:
        """unavailableofferings.go Flush (no eviction callback upstream: seq numbers unchanged)."""
        self._offerings.items.clear()
        self._capacity_types.items.clear()
        self._subnets.items.clear()
        self._version += 1

    def __repr__(self) -> str:
        return (f"UnavailableOfferings(offerings={len(self._offerings.items)}, "
                f"capacity_types={sorted(self._capacity_types.items)}, subnets={sorted(self._subnets.items)})")

