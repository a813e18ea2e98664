"""The launch-path instance-type filters. Mirrors pkg/providers/instance/filter/filter.go (v1.14.1).

``InstanceProvider.filterInstanceTypes`` (pkg/providers/instance/instance.go) runs six filters in
this order; after each one, an empty result is ``all requested instance types were unavailable
during launch``:

1. ``compatible-available-filter``   (requirements compatible, requests fit an allocatable group
   that has a compatible available offering)
2. ``capacity-reservation-type-filter`` (reserved launches: one reservation type per CreateFleet)
3. ``capacity-block-filter``         (reserved launches: one capacity block per CreateFleet)
4. ``reserved-offering-filter``      (reserved launches: one reserved offering per zone)
5. ``exotic-instance-filter``        (drop metal / GPU / accelerator types unless nothing else)
6. ``spot-offering-filter``          (drop spot offerings pricier than the cheapest on-demand)

Filters 2-4 only act when the NodeClaim allows ``reserved`` *and* some type carries reserved
offerings; karpy's AWS provider models no capacity reservations yet, so on its catalogue they are
no-ops, but they are implemented to upstream's semantics and kept in upstream's order.

Mutation. Upstream filters replace ``it.Offerings`` (the slice) on the cached instance types and
warn that only the slice, never the offerings, may be changed. karpy's instance types are shared
with the scheduler (and between launches: ``InstanceTypeProvider.list`` reuses its objects while
nothing changed), so the filters never mutate their input: a filter that narrows a type's offerings
returns a shallow copy (:func:`copy_instance_type`, copy-on-write) that shares requirements,
capacity, overhead and the Offering objects and owns its offerings list. Types no filter narrows
pass through as the caller's objects (upstream copies nothing at all).

Determinism. Where Go returns ``lo.Values(map)`` (capacity-reservation-type-filter's kept types,
reserved-offering-filter's per-zone offerings) karpy keeps the incoming order (types) and sorted
zone names (offerings). ``lo.MinBy`` over partitions iterates a Go map; karpy iterates the
partitions in the fixed priority order (default, capacity-block, interruptible default), which the
tie-break makes irrelevant for distinct keys.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from awsprovider.labels import (
    CAPACITY_RESERVATION_TYPE_CAPACITY_BLOCK,
    CAPACITY_RESERVATION_TYPE_DEFAULT,
    LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE,
    LABEL_CAPACITY_RESERVATION_TYPE,
    LABEL_INSTANCE_SIZE,
    RESOURCE_AMD_GPU,
    RESOURCE_AWS_NEURON,
    RESOURCE_AWS_NEURON_CORE,
    RESOURCE_HABANA_GAUDI,
    RESOURCE_NVIDIA_GPU,
    WELL_KNOWN_LABELS,
)
from karpy.cloudprovider.types import MAX_FLOAT64, InstanceType, Offerings
from karpy.scheduling.labels import (
    CAPACITY_TYPE_ON_DEMAND,
    CAPACITY_TYPE_RESERVED,
    CAPACITY_TYPE_SPOT,
    LABEL_CAPACITY_TYPE,
    LABEL_INSTANCE_TYPE,
)
from karpy.scheduling.requirements import Requirements
from karpy.scheduling.resources import fits

__all__ = [
    "ALL_UNAVAILABLE_MESSAGE",
    "EXOTIC_RESOURCES",
    "FILTER_NAMES",
    "FilterResult",
    "FilterTrace",
    "capacity_block_filter",
    "capacity_reservation_type_filter",
    "compatible_available_filter",
    "copy_instance_type",
    "exotic_instance_filter",
    "filter_instance_types",
    "reserved_offering_filter",
    "spot_offering_filter",
]

#: instance.go filterInstanceTypes: the error text when a filter leaves nothing.
ALL_UNAVAILABLE_MESSAGE = "all requested instance types were unavailable during launch"


#: filter.go ExoticInstanceTypeFilter: resources whose non-zero capacity makes a type "exotic".
EXOTIC_RESOURCES: tuple[str, ...] = (
    RESOURCE_AWS_NEURON,
    RESOURCE_AWS_NEURON_CORE,
    RESOURCE_AMD_GPU,
    RESOURCE_NVIDIA_GPU,
    RESOURCE_HABANA_GAUDI,
)

FILTER_NAMES: tuple[str, ...] = (
    "compatible-available-filter",
    "capacity-reservation-type-filter",
    "capacity-block-filter",
    "reserved-offering-filter",
    "exotic-instance-filter",
    "spot-offering-filter",
)

FilterResult = tuple[list[InstanceType], list[InstanceType]]


def copy_instance_type(it: InstanceType) -> InstanceType:
    """A shallow copy owning its offerings list (upstream mutates only ``it.Offerings``).

    The allocatable groups cached on the original stay valid (they were computed from the same
    offerings, and upstream computes them once too); the available-offerings cache is reset.
    """
    c = copy.copy(it)
    c.offerings = Offerings(it.offerings, it.offerings.well_known)
    c._available = None  # noqa: SLF001 - the copy owns a new offerings list
    return c


def _with_offerings(it: InstanceType, offerings: Sequence[object]) -> InstanceType:
    """A copy of ``it`` whose offerings list is ``offerings`` (upstream assigns ``it.Offerings``)."""
    c = copy_instance_type(it)
    c.offerings = Offerings(offerings, it.offerings.well_known)  # type: ignore[arg-type]
    return c


def _allows(reqs: Requirements, capacity_type: str) -> bool:
    return reqs.get(LABEL_CAPACITY_TYPE).has(capacity_type)


def _label(o_reqs: Requirements, key: str) -> str:
    return o_reqs.get(key).any() if o_reqs.has(key) else ""


# --------------------------------------------------------------------------------------------
def compatible_available_filter(
    reqs: Requirements, requests: Mapping[str, int], well_known: frozenset[str] = WELL_KNOWN_LABELS
) -> Callable[[list[InstanceType]], FilterResult]:
    """filter.go CompatibleAvailableFilter: keep a type iff ``reqs.IsCompatible(it.Requirements)``
    and some allocatable group fits ``requests`` and has a compatible (available) offering.

    Fast pre-check (same decisions): a NodeClaim built by core carries ``instance-type In [<=600
    names]``, and a type's own requirements say ``instance-type In [<its name>]``. Two such
    requirements intersect iff the NodeClaim's requirement ``has`` that name, so a type failing
    ``has`` would fail ``IsCompatible`` anyway; it is rejected without the full check. Types whose
    instance-type requirement is not a single ``In`` value get the full check only.
    """
    it_req = reqs.get(LABEL_INSTANCE_TYPE) if reqs.has(LABEL_INSTANCE_TYPE) else None

    def run(its: list[InstanceType]) -> FilterResult:
        kept: list[InstanceType] = []
        rejected: list[InstanceType] = []
        for it in its:
            ok = False
            if it_req is not None:
                own = dict.get(it.requirements, LABEL_INSTANCE_TYPE)
                if (own is not None and not own.complement and len(own.values) == 1
                        and not it_req.has(next(iter(own.values)))):
                    rejected.append(it)
                    continue
            if reqs.is_compatible(it.requirements, well_known):
                for group in it.allocatable_groups():
                    if fits(requests, group.allocatable) and group.offerings.has_compatible(reqs, well_known):
                        ok = True
                        break
            (kept if ok else rejected).append(it)
        return kept, rejected

    return run


# --------------------------------------------------------------------------------------------
_PARTITION_PRIORITY: tuple[tuple[str, bool], ...] = (
    (CAPACITY_RESERVATION_TYPE_DEFAULT, False),
    (CAPACITY_RESERVATION_TYPE_CAPACITY_BLOCK, False),
    (CAPACITY_RESERVATION_TYPE_DEFAULT, True),
)


@dataclass
class _Partition:
    reservation_type: str
    interruptible: bool
    cheapest: float = MAX_FLOAT64
    names: dict[str, InstanceType] = field(default_factory=dict)


def capacity_reservation_type_filter(
    reqs: Requirements, well_known: frozenset[str] = WELL_KNOWN_LABELS
) -> Callable[[list[InstanceType]], FilterResult]:
    """filter.go CapacityReservationTypeFilter: for reserved launches, keep only the partition
    (reservation type, interruptible) holding the cheapest reserved offering (ties: default <
    capacity-block < interruptible default) and strip the kept types to those reserved offerings.
    No reserved offerings (karpy's usual case) -> unchanged."""

    def run(its: list[InstanceType]) -> FilterResult:
        if not _allows(reqs, CAPACITY_TYPE_RESERVED):
            return its, []
        parts = {key: _Partition(*key) for key in _PARTITION_PRIORITY}
        for it in its:
            for o in it.available_offerings.compatible(reqs, well_known):
                if o.capacity_type != CAPACITY_TYPE_RESERVED:
                    continue
                key = (
                    _label(o.requirements, LABEL_CAPACITY_RESERVATION_TYPE),
                    _label(o.requirements, LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE) == "true",
                )
                p = parts.get(key)
                if p is None:
                    raise ValueError(
                        f"failed to partition capacity reservations, invalid capacity reservation type "
                        f"(type={key[0]}, interruptible={str(key[1]).lower()})"
                    )
                p.cheapest = min(p.cheapest, o.price)
                p.names[it.name] = it
        selected = min(parts.values(), key=lambda p: (p.cheapest, _PARTITION_PRIORITY.index((p.reservation_type, p.interruptible))))
        if not selected.names:
            return its, []
        stripped = {
            name: _with_offerings(it, [
                o for o in it.offerings
                if o.capacity_type == CAPACITY_TYPE_RESERVED
                and _label(o.requirements, LABEL_CAPACITY_RESERVATION_TYPE) == selected.reservation_type
                and (_label(o.requirements, LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE) == "true") == selected.interruptible
            ])
            for name, it in selected.names.items()
        }
        kept = [stripped[it.name] for it in its if it.name in stripped]
        return kept, [it for it in its if it.name not in stripped]

    return run


# --------------------------------------------------------------------------------------------
def capacity_block_filter(
    reqs: Requirements, well_known: frozenset[str] = WELL_KNOWN_LABELS
) -> Callable[[list[InstanceType]], FilterResult]:
    """filter.go CapacityBlockFilter: for reserved launches whose types carry capacity-block
    offerings (decided by the first offering with a reservation-type label, as upstream), keep the
    single type with the cheapest available compatible capacity-block offering, stripped to it."""

    def should_filter(its: list[InstanceType]) -> bool:
        if not _allows(reqs, CAPACITY_TYPE_RESERVED):
            return False
        for it in its:
            for o in it.offerings:
                if not o.requirements.has(LABEL_CAPACITY_RESERVATION_TYPE):
                    continue
                return o.requirements.get(LABEL_CAPACITY_RESERVATION_TYPE).any() == CAPACITY_RESERVATION_TYPE_CAPACITY_BLOCK
        return False

    def run(its: list[InstanceType]) -> FilterResult:
        if not should_filter(its):
            return its, []
        selected: InstanceType | None = None
        for it in its:
            best = None
            for o in it.offerings:
                if o.capacity_type != CAPACITY_TYPE_RESERVED or not o.available:
                    continue
                if not reqs.is_compatible(o.requirements, well_known):
                    continue
                if _label(o.requirements, LABEL_CAPACITY_RESERVATION_TYPE) != CAPACITY_RESERVATION_TYPE_CAPACITY_BLOCK:
                    continue
                if best is None or best.price > o.price:
                    best = o
            if best is not None and (selected is None or selected.offerings[0].price > best.price):
                selected = _with_offerings(it, [best])
        if selected is None:  # upstream would dereference nil here; karpy keeps everything
            return its, []
        return [selected], [it for it in its if it.name != selected.name]

    return run


# --------------------------------------------------------------------------------------------
def reserved_offering_filter(
    reqs: Requirements, well_known: frozenset[str] = WELL_KNOWN_LABELS
) -> Callable[[list[InstanceType]], FilterResult]:
    """filter.go ReservedOfferingFilter: for reserved launches keep only types with an available
    compatible reserved offering, each stripped to one reserved offering per zone (the largest
    ``reservation_capacity``; ties: the first seen). None at all -> unchanged."""

    def run(its: list[InstanceType]) -> FilterResult:
        if not _allows(reqs, CAPACITY_TYPE_RESERVED):
            return its, []
        remaining: list[InstanceType] = []
        rejected: list[InstanceType] = []
        for it in its:
            zonal: dict[str, object] = {}
            for o in it.available_offerings.compatible(reqs, well_known):
                if o.capacity_type != CAPACITY_TYPE_RESERVED:
                    continue
                cur = zonal.get(o.zone)
                if cur is None or o.reservation_capacity > cur.reservation_capacity:  # type: ignore[attr-defined]
                    zonal[o.zone] = o
            if not zonal:
                rejected.append(it)
                continue
            remaining.append(_with_offerings(it, [zonal[z] for z in sorted(zonal)]))
        if not remaining:
            return its, []
        return remaining, rejected

    return run


# --------------------------------------------------------------------------------------------
def exotic_instance_filter(reqs: Requirements) -> Callable[[list[InstanceType]], FilterResult]:
    """filter.go ExoticInstanceTypeFilter: unless ``reqs`` has minValues, drop types whose
    instance-size contains ``metal`` or with non-zero neuron/neuroncore/amd gpu/nvidia gpu/gaudi
    capacity -- unless that would drop every type."""

    def run(its: list[InstanceType]) -> FilterResult:
        if reqs.has_min_values():
            return its, []
        generic: list[InstanceType] = []
        exotic: list[InstanceType] = []
        for it in its:
            sizes = it.requirements.get(LABEL_INSTANCE_SIZE).values if it.requirements.has(LABEL_INSTANCE_SIZE) else ()
            capacity = it.capacity
            is_exotic = any("metal" in s for s in sizes) or any(capacity.get(r, 0) != 0 for r in EXOTIC_RESOURCES)
            (exotic if is_exotic else generic).append(it)
        if not generic:
            return its, []
        return generic, exotic

    return run


# --------------------------------------------------------------------------------------------
def spot_offering_filter(
    reqs: Requirements, well_known: frozenset[str] = WELL_KNOWN_LABELS
) -> Callable[[list[InstanceType]], FilterResult]:
    """filter.go SpotOfferingFilter: when ``reqs`` allows both spot and on-demand and has no
    minValues, and the types have both compatible available on-demand and spot offerings, drop
    every spot offering (available or not) priced strictly above the cheapest compatible available
    on-demand offering; types left with no offerings are rejected."""

    def run(its: list[InstanceType]) -> FilterResult:
        if reqs.has_min_values():
            return its, []
        if not (_allows(reqs, CAPACITY_TYPE_ON_DEMAND) and _allows(reqs, CAPACITY_TYPE_SPOT)):
            return its, []
        cheapest_od = MAX_FLOAT64
        has_spot = has_od = False
        for it in its:
            for o in it.available_offerings.compatible(reqs, well_known):
                ct = o.capacity_type
                if ct == CAPACITY_TYPE_ON_DEMAND:
                    has_od = True
                    cheapest_od = min(cheapest_od, o.price)
                elif ct == CAPACITY_TYPE_SPOT:
                    has_spot = True
        if not has_od or not has_spot:
            return its, []
        remaining: list[InstanceType] = []
        rejected: list[InstanceType] = []
        for it in its:
            kept = [o for o in it.offerings if not (o.capacity_type == CAPACITY_TYPE_SPOT and o.price > cheapest_od)]
            if kept:
                remaining.append(_with_offerings(it, kept) if len(kept) != len(it.offerings) else it)
            else:
                rejected.append(it)
        return remaining, rejected

    return run


# --------------------------------------------------------------------------------------------
@dataclass
class FilterTrace:
    """What each filter rejected (type names, in order), for explain output."""

    rejected: dict[str, list[str]] = field(default_factory=dict)
    emptied_by: str | None = None


def filter_instance_types(
    instance_types: Sequence[InstanceType],
    reqs: Requirements,
    requests: Mapping[str, int],
    well_known: frozenset[str] = WELL_KNOWN_LABELS,
    trace: FilterTrace | None = None,
) -> list[InstanceType] | None:
    """instance.go filterInstanceTypes minus the truncation: run the six filters in upstream order
    (copy-on-write: ``instance_types`` are never mutated, see the module doc). Returns ``None`` when
    a filter leaves nothing (the caller raises ``InsufficientCapacityError(ALL_UNAVAILABLE_MESSAGE)``)."""
    filters = zip(FILTER_NAMES, (
        compatible_available_filter(reqs, requests, well_known),
        capacity_reservation_type_filter(reqs, well_known),
        capacity_block_filter(reqs, well_known),
        reserved_offering_filter(reqs, well_known),
        exotic_instance_filter(reqs),
        spot_offering_filter(reqs, well_known),
    ))
    its: list[InstanceType] = list(instance_types)
    for name, run in filters:
        kept, rejected = run(its)
        if not kept:
            if trace is not None:
                trace.emptied_by = name
            return None
        if trace is not None and rejected and name != "compatible-available-filter":
            trace.rejected[name] = [it.name for it in rejected]
        its = kept
    return its
