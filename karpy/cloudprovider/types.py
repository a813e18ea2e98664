"""Cloud-provider types: InstanceType, Offering(s), InstanceTypes, the CloudProvider protocol, errors.

Mirrors pkg/cloudprovider/types.go of Karpenter core.

Well-known labels. Upstream compatibility checks use ``scheduling.AllowUndefinedWellKnownLabels``,
i.e. the *global* ``v1.WellKnownLabels`` that cloud providers extend at init time. karpy has no
global registry, so the set is stored on the objects: an :class:`InstanceType` carries
``well_known`` (default :data:`~karpy.scheduling.labels.CORE_WELL_KNOWN_LABELS`; providers pass
``CORE | provider.well_known_labels()``) and pushes it into its :class:`Offerings`. Every
compatibility method also takes an optional ``well_known=`` override.

Performance. These objects sit in the scheduler's innermost loop, so they are plain
``__slots__`` classes holding ``int`` nano-unit resource lists. Per instance type the allocatable
groups (``AllocatableOfferingsList``) are computed once, like upstream's ``sync.Once``; the
available offerings are cached too (call :meth:`InstanceType.refresh_availability` after flipping
an offering's ``available``). Offering compatibility has a fast path for the common offering
shape (every requirement a single-valued ``In`` or a ``DoesNotExist``) that is equivalent to
``reqs.is_compatible(offering.requirements, well_known)``; anything else uses the algebra.

Determinism. ``OrderByPrice`` uses Go's unstable ``sort.Slice``; karpy uses Python's stable sort,
so ties keep the incoming (catalogue) order. ``SatisfiesMinValues`` reports the unsatisfied keys
sorted (upstream's serrors formats its values with ``%v`` of a map-key slice, i.e. arbitrary order).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Protocol, Sequence, runtime_checkable

from karpy._errors import KarpyError
from karpy.scheduling.labels import (
    CAPACITY_TYPE_ON_DEMAND,
    CAPACITY_TYPE_RESERVED,
    CAPACITY_TYPE_SPOT,
    CORE_WELL_KNOWN_LABELS,
    LABEL_CAPACITY_TYPE,
    LABEL_ZONE,
    OP_IN,
)
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

if TYPE_CHECKING:  # pragma: no cover
    from karpy.api.nodeclaim import NodeClaim
    from karpy.api.nodepool import NodePool

__all__ = [
    "MAX_FLOAT64",
    "MAX_INSTANCE_TYPES",
    "MIN_VALUES_POLICY_BEST_EFFORT",
    "MIN_VALUES_POLICY_STRICT",
    "AllocatableGroup",
    "CloudProvider",
    "CloudProviderError",
    "UnavailableSpecError",
    "CreateError",
    "InstanceType",
    "InstanceTypeOverhead",
    "InstanceTypes",
    "OfferingCompatibility",
    "InsufficientCapacityError",
    "MinValuesError",
    "NodeClaimNotFoundError",
    "NodeClassNotReadyError",
    "Offering",
    "Offerings",
    "UnevaluatedNodePoolError",
    "adjusted_price",
    "capacity_type_requirements",
    "errors_as",
    "ignore_nodeclaim_not_found_error",
    "is_insufficient_capacity_error",
    "is_nodeclaim_not_found_error",
    "is_nodeclass_not_ready_error",
    "is_unevaluated_nodepool_error",
]

ResourceList = dict[str, int]

#: pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go MaxInstanceTypes: the cut applied
#: to a NodeClaim's instance-type options (after Solve and in ToNodeClaim).
MAX_INSTANCE_TYPES = 600

#: Go's math.MaxFloat64: the "no compatible offering" price of OrderByPrice / WorstLaunchPrice.
MAX_FLOAT64: float = sys.float_info.max

#: pkg/operator/options/options.go MinValuesPolicy values (default Strict), defined in karpy.options.
from karpy.options import MIN_VALUES_POLICY_BEST_EFFORT, MIN_VALUES_POLICY_STRICT  # noqa: E402

_HUGEPAGES_PREFIX = "hugepages-"  # corev1.ResourceHugePagesPrefix
_MEMORY = "memory"

# Offering fast-path markers.
_NOT_SIMPLE = 0
_SIMPLE = 1


# --------------------------------------------------------------------------------------------
# Price overlay
# --------------------------------------------------------------------------------------------
def adjusted_price(price: float, change: str) -> float:
    """Mirrors types.go AdjustedPrice: "" unchanged; no sign -> absolute price; ``±x%`` -> p*(1±x/100);
    ``±x`` -> p±x; adjusted (signed) results are clamped at 0. An absolute price is not clamped."""
    if change == "":
        return price
    if not (change.startswith("+") or change.startswith("-")):
        return float(change)
    if change.endswith("%"):
        result = price * (1 + float(change[:-1]) / 100)
    else:
        result = price + float(change)
    return result if result >= 0 else 0.0


# --------------------------------------------------------------------------------------------
# Overhead
# --------------------------------------------------------------------------------------------
class InstanceTypeOverhead:
    """Mirrors types.go InstanceTypeOverhead (resource lists in nano-units)."""

    __slots__ = ("kube_reserved", "system_reserved", "eviction_threshold")

    def __init__(
        self,
        kube_reserved: Mapping[str, int] | None = None,
        system_reserved: Mapping[str, int] | None = None,
        eviction_threshold: Mapping[str, int] | None = None,
    ) -> None:
        self.kube_reserved: ResourceList = dict(kube_reserved or {})
        self.system_reserved: ResourceList = dict(system_reserved or {})
        self.eviction_threshold: ResourceList = dict(eviction_threshold or {})

    def total(self) -> ResourceList:
        """Mirrors InstanceTypeOverhead.Total: resources.Merge of the three lists."""
        out: ResourceList = {}
        for rl in (self.kube_reserved, self.system_reserved, self.eviction_threshold):
            for k, v in rl.items():
                out[k] = out.get(k, 0) + v
        return out

    def _key(self) -> tuple[Any, ...]:
        return (
            tuple(sorted(self.kube_reserved.items())),
            tuple(sorted(self.system_reserved.items())),
            tuple(sorted(self.eviction_threshold.items())),
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, InstanceTypeOverhead) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (f"InstanceTypeOverhead(kube_reserved={self.kube_reserved!r}, system_reserved="
                f"{self.system_reserved!r}, eviction_threshold={self.eviction_threshold!r})")


# --------------------------------------------------------------------------------------------
# Offering(s)
# --------------------------------------------------------------------------------------------
class Offering:
    """Mirrors types.go Offering: where an instance type can launch (capacity type × zone [× reservation]).

    ``requirements`` must contain the capacity-type and zone keys. Treat them as immutable once the
    offering has been used (the compatibility fast path is derived from them lazily and cached).
    ``reservation_id_label`` replaces upstream's global ``cloudprovider.ReservationIDLabel``.
    """

    __slots__ = (
        "requirements",
        "price",
        "available",
        "reservation_capacity",
        "capacity_override",
        "overhead_override",
        "price_overlaid",
        "reservation_id_label",
        "_fast",
    )

    def __init__(
        self,
        requirements: Requirements,
        price: float,
        available: bool = True,
        reservation_capacity: int = 0,
        price_overlaid: bool = False,
        capacity_override: Mapping[str, int] | None = None,
        overhead_override: InstanceTypeOverhead | None = None,
        reservation_id_label: str = "",
    ) -> None:
        self.requirements = requirements
        self.price = float(price)
        self.available = available
        self.reservation_capacity = reservation_capacity
        self.price_overlaid = price_overlaid
        self.capacity_override: ResourceList | None = dict(capacity_override) if capacity_override else None
        self.overhead_override = overhead_override
        self.reservation_id_label = reservation_id_label
        self._fast: tuple[int, tuple[tuple[str, str | None], ...]] | None = None

    # -- accessors (types.go CapacityType / Zone / ReservationID) -----------------------------
    @property
    def capacity_type(self) -> str:
        """``Requirements.Get(capacity-type).Any()``."""
        return self.requirements.get(LABEL_CAPACITY_TYPE).any()

    @property
    def zone(self) -> str:
        """``Requirements.Get(topology.kubernetes.io/zone).Any()``."""
        return self.requirements.get(LABEL_ZONE).any()

    @property
    def reservation_id(self) -> str:
        """``Requirements.Get(ReservationIDLabel).Any()``; "" when the offering has no reservation label."""
        label = self.reservation_id_label
        if not label or not self.requirements.has(label):
            return ""
        return self.requirements.get(label).any()

    def is_price_overlaid(self) -> bool:
        """Mirrors Offering.IsPriceOverlaid."""
        return self.price_overlaid

    def apply_price_overlay(self, change: str) -> None:
        """Mirrors Offering.ApplyPriceOverlay."""
        self.price = adjusted_price(self.price, change)
        self.price_overlaid = True

    def has_override(self) -> bool:
        """True when the offering carries a capacity or overhead override (its own allocatable group)."""
        return bool(self.capacity_override) or self.overhead_override is not None

    # -- compatibility -------------------------------------------------------------------------
    def _fast_form(self) -> tuple[int, tuple[tuple[str, str | None], ...]]:
        fast = self._fast
        if fast is None:
            pairs: list[tuple[str, str | None]] = []
            kind = _SIMPLE
            for key, req in self.requirements.items():
                if req.complement:
                    kind = _NOT_SIMPLE
                    break
                n = len(req.values)
                if n == 1:
                    pairs.append((key, next(iter(req.values))))
                elif n == 0:
                    pairs.append((key, None))  # DoesNotExist
                else:
                    kind = _NOT_SIMPLE
                    break
            fast = (kind, tuple(pairs))
            self._fast = fast
        return fast

    def is_compatible(self, reqs: Requirements, well_known: frozenset[str] = CORE_WELL_KNOWN_LABELS) -> bool:
        """``reqs.IsCompatible(o.Requirements, AllowUndefinedWellKnownLabels)`` (requirements.go Compatible).

        Fast path for offerings whose requirements are all single-valued ``In`` / ``DoesNotExist``:
        an ``In [v]`` key defined on ``reqs`` must satisfy ``reqs.get(k).has(v)``, an undefined one must
        be well-known; a ``DoesNotExist`` key is fine when undefined on ``reqs`` and otherwise needs
        ``reqs[k]`` to be ``NotIn``/``DoesNotExist`` (requirements.go Intersects' complement exception).
        """
        kind, pairs = self._fast_form()
        if kind != _SIMPLE:
            return reqs.is_compatible(self.requirements, well_known)
        for key, value in pairs:
            existing = dict.get(reqs, key)  # Requirements.has + get without two method calls
            if existing is None:
                if value is not None and key not in well_known:
                    return False
                continue
            if value is None:
                # existing must be NotIn (complement with values) or DoesNotExist (concrete, empty)
                if existing.complement:
                    if not existing.values:
                        return False
                elif existing.values:
                    return False
            elif not existing.has(value):
                return False
        return True

    def __repr__(self) -> str:
        return (f"Offering(requirements={self.requirements}, price={self.price!r}, "
                f"available={self.available!r}, reservation_capacity={self.reservation_capacity!r})")


class OfferingCompatibility:
    """``o.is_compatible(reqs, well_known)`` for many offerings of one unchanging ``reqs``,
    memoised by the offering's simple requirement form (its ``(key, value)`` pairs).

    Not in upstream (which asks every offering); same answers because the fast path of
    :meth:`Offering.is_compatible` reads only those pairs, ``reqs`` and ``well_known``: the
    offerings of a catalogue repeat a few dozen forms (zone x capacity type). Offerings of
    another form are asked directly. Build one per ``reqs`` and drop it before ``reqs`` changes."""

    __slots__ = ("reqs", "_memo")

    def __init__(self, reqs: Requirements) -> None:
        self.reqs = reqs
        self._memo: dict[tuple[tuple[tuple[str, str | None], ...], frozenset[str]], bool] = {}

    def __call__(self, o: Offering, well_known: frozenset[str]) -> bool:
        kind, pairs = o._fast_form()
        if kind != _SIMPLE:
            return o.is_compatible(self.reqs, well_known)
        key = (pairs, well_known)
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = o.is_compatible(self.reqs, well_known)
        return hit


class Offerings(list[Offering]):
    """Mirrors types.go Offerings. ``well_known`` is the AllowUndefinedWellKnownLabels set (see module doc)."""

    __slots__ = ("well_known",)

    def __init__(self, items: Iterable[Offering] = (), well_known: frozenset[str] | None = None) -> None:
        super().__init__(items)
        self.well_known: frozenset[str] | None = well_known

    def _wk(self, well_known: frozenset[str] | None) -> frozenset[str]:
        if well_known is not None:
            return well_known
        return self.well_known if self.well_known is not None else CORE_WELL_KNOWN_LABELS

    def available(self) -> Offerings:
        """Mirrors Offerings.Available."""
        return Offerings([o for o in self if o.available], self.well_known)

    def compatible(self, reqs: Requirements, well_known: frozenset[str] | None = None) -> Offerings:
        """Mirrors Offerings.Compatible (AllowUndefinedWellKnownLabels)."""
        wk = self._wk(well_known)
        return Offerings([o for o in self if o.is_compatible(reqs, wk)], self.well_known)

    def has_compatible(self, reqs: Requirements, well_known: frozenset[str] | None = None) -> bool:
        """Mirrors Offerings.HasCompatible."""
        wk = self._wk(well_known)
        for o in self:
            if o.is_compatible(reqs, wk):
                return True
        return False

    def cheapest(self) -> Offering | None:
        """Mirrors Offerings.Cheapest (lo.MinBy: the first of equally cheap offerings); None if empty."""
        best: Offering | None = None
        for o in self:
            if best is None or o.price < best.price:
                best = o
        return best

    def most_expensive(self) -> Offering | None:
        """Mirrors Offerings.MostExpensive (lo.MaxBy: the first of equally priced); None if empty."""
        best: Offering | None = None
        for o in self:
            if best is None or o.price > best.price:
                best = o
        return best

    def worst_launch_price(self, reqs: Requirements, well_known: frozenset[str] | None = None) -> float:
        """Mirrors Offerings.WorstLaunchPrice: among offerings compatible with ``reqs``, the first non-empty
        capacity-type class in the order reserved, spot, on-demand gives its most expensive price;
        none -> :data:`MAX_FLOAT64`."""
        wk = self._wk(well_known)
        compat = self.compatible(reqs, wk)
        for ct in (CAPACITY_TYPE_RESERVED, CAPACITY_TYPE_SPOT, CAPACITY_TYPE_ON_DEMAND):
            of_ct = compat.compatible(capacity_type_requirements(ct), wk)
            if of_ct:
                most = of_ct.most_expensive()
                assert most is not None
                return most.price
        return MAX_FLOAT64


def capacity_type_requirements(capacity_type: str) -> Requirements:
    """A fresh ``capacity-type In [ct]`` Requirements (types.go Spot/OnDemand/ReservedRequirement)."""
    return Requirements(Requirement(LABEL_CAPACITY_TYPE, OP_IN, [capacity_type]))


# --------------------------------------------------------------------------------------------
# InstanceType
# --------------------------------------------------------------------------------------------
class AllocatableGroup:
    """Mirrors types.go AllocatableOfferings: an allocatable resource list and the available offerings
    that produce it."""

    __slots__ = ("allocatable", "offerings")

    def __init__(self, allocatable: ResourceList, offerings: Offerings) -> None:
        self.allocatable = allocatable
        self.offerings = offerings

    def __repr__(self) -> str:
        return f"AllocatableGroup(allocatable={self.allocatable!r}, offerings={len(self.offerings)})"


def _override_key(o: Offering) -> tuple[Any, ...]:
    cap = tuple(sorted(o.capacity_override.items())) if o.capacity_override else ()
    ovh = o.overhead_override._key() if o.overhead_override is not None else None
    return (cap, ovh)


class InstanceType:
    """Mirrors types.go InstanceType. ``capacity`` is a nano-unit resource list.

    ``requirements`` must define every well-known label (possibly DoesNotExist).
    ``well_known`` is the AllowUndefinedWellKnownLabels set for offering compatibility.
    """

    __slots__ = (
        "name",
        "requirements",
        "offerings",
        "capacity",
        "overhead",
        "well_known",
        "capacity_overlay_applied",
        "_groups",
        "_available",
    )

    def __init__(
        self,
        name: str,
        requirements: Requirements,
        offerings: Iterable[Offering],
        capacity: Mapping[str, int],
        overhead: InstanceTypeOverhead | None = None,
        well_known: frozenset[str] | None = None,
    ) -> None:
        self.name = name
        self.requirements = requirements
        self.well_known: frozenset[str] = well_known if well_known is not None else CORE_WELL_KNOWN_LABELS
        ofs = offerings if isinstance(offerings, Offerings) else Offerings(offerings)
        ofs.well_known = self.well_known
        self.offerings: Offerings = ofs
        self.capacity: ResourceList = dict(capacity)
        self.overhead: InstanceTypeOverhead = overhead if overhead is not None else InstanceTypeOverhead()
        self.capacity_overlay_applied = False
        self._groups: list[AllocatableGroup] | None = None
        self._available: Offerings | None = None

    # -- allocatable ---------------------------------------------------------------------------
    def _compute_allocatable(self, capacity_override: ResourceList | None,
                             overhead_override: InstanceTypeOverhead | None) -> ResourceList:
        """Mirrors InstanceType.computeAllocatable: capacity (lo.Assign override) minus overhead total
        (lo.Assign override total), resources.Subtract semantics (only keys of capacity); then memory
        minus every ``hugepages-*`` capacity, clamped at 0."""
        capacity = self.capacity
        if capacity_override:
            capacity = {**capacity, **capacity_override}
        overhead = self.overhead.total()
        if overhead_override is not None:
            overhead = {**overhead, **overhead_override.total()}
        allocatable = {k: v - overhead.get(k, 0) for k, v in capacity.items()}
        for name, qty in capacity.items():
            if name.startswith(_HUGEPAGES_PREFIX):
                current = allocatable.get(_MEMORY, 0) - qty
                allocatable[_MEMORY] = current if current >= 0 else 0
        return allocatable

    def allocatable_groups(self) -> list[AllocatableGroup]:
        """Mirrors InstanceType.AllocatableOfferingsList (computed once, like upstream's sync.Once):
        the base group first (no overrides), then one group per distinct (capacity, overhead) override
        in first-seen offering order; only available offerings are grouped."""
        groups = self._groups
        if groups is None:
            wk = self.well_known
            if not any(o.has_override() for o in self.offerings):
                groups = [AllocatableGroup(self._compute_allocatable(None, None),
                                           Offerings([o for o in self.offerings if o.available], wk))]
            else:
                base = Offerings((), wk)
                by_key: dict[tuple[Any, ...], Offerings] = {}
                for o in self.offerings:
                    if not o.available:
                        continue
                    if not o.has_override():
                        base.append(o)
                        continue
                    key = _override_key(o)
                    bucket = by_key.get(key)
                    if bucket is None:
                        bucket = by_key[key] = Offerings((), wk)
                    bucket.append(o)
                groups = [AllocatableGroup(self._compute_allocatable(None, None), base)]
                for bucket in by_key.values():
                    first = bucket[0]
                    groups.append(AllocatableGroup(
                        self._compute_allocatable(first.capacity_override, first.overhead_override), bucket))
            self._groups = groups
        return groups

    def allocatable(self) -> ResourceList:
        """Mirrors InstanceType.Allocatable: the base group's allocatable (cached; do not mutate)."""
        groups = self._groups
        if groups is None:
            groups = self.allocatable_groups()
        return groups[0].allocatable

    # -- offerings -----------------------------------------------------------------------------
    @property
    def available_offerings(self) -> Offerings:
        """``Offerings.Available()``, cached; see :meth:`refresh_availability`."""
        av = self._available
        if av is None:
            av = self._available = self.offerings.available()
        return av

    def refresh_availability(self) -> None:
        """Drop the cached available offerings (call after changing an offering's ``available``).
        The allocatable groups stay as first computed, like upstream's sync.Once."""
        self._available = None

    def min_compatible_price(self, reqs: Requirements, well_known: frozenset[str] | None = None,
                             compatible: OfferingCompatibility | None = None) -> float:
        """The OrderByPrice key: min price over available offerings compatible with ``reqs``; none ->
        :data:`MAX_FLOAT64`. ``compatible``: a memo of ``is_compatible`` for ``reqs``."""
        wk = self.well_known if well_known is None else well_known
        best = MAX_FLOAT64
        if compatible is None:
            for o in self.available_offerings:
                if o.price < best and o.is_compatible(reqs, wk):
                    best = o.price
        else:
            for o in self.available_offerings:
                if o.price < best and compatible(o, wk):
                    best = o.price
        return best

    def has_compatible_available_offering(self, reqs: Requirements,
                                          well_known: frozenset[str] | None = None) -> bool:
        """``Offerings.Available().HasCompatible(reqs)``."""
        wk = self.well_known if well_known is None else well_known
        for o in self.available_offerings:
            if o.is_compatible(reqs, wk):
                return True
        return False

    def offering_price(self, zone: str, capacity_type: str) -> tuple[float, bool]:
        """Mirrors InstanceType.OfferingPrice: the first offering with that zone and capacity type."""
        for o in self.offerings:
            if o.zone == zone and o.capacity_type == capacity_type:
                return o.price, True
        return 0.0, False

    def is_pricing_overlay_applied(self) -> bool:
        """Mirrors InstanceType.IsPricingOverlayApplied."""
        return any(o.price_overlaid for o in self.offerings)

    def apply_capacity_overlay(self, updated: Mapping[str, int]) -> None:
        """Mirrors InstanceType.ApplyCapacityOverlay (lo.Assign); also drops the allocatable cache."""
        self.capacity = {**self.capacity, **updated}
        self.capacity_overlay_applied = True
        self._groups = None

    def is_capacity_overlay_applied(self) -> bool:
        """Mirrors InstanceType.IsCapacityOverlayApplied."""
        return self.capacity_overlay_applied

    def __repr__(self) -> str:
        return f"InstanceType(name={self.name!r})"


# --------------------------------------------------------------------------------------------
# InstanceTypes
# --------------------------------------------------------------------------------------------
class InstanceTypes(list[InstanceType]):
    """Mirrors types.go InstanceTypes."""

    __slots__ = ()

    def order_by_price(self, reqs: Requirements, well_known: frozenset[str] | None = None) -> InstanceTypes:
        """Mirrors InstanceTypes.OrderByPrice: sorts IN PLACE (as upstream) ascending by the minimum
        price of available offerings compatible with ``reqs`` (none -> MaxFloat64, last) and returns
        ``self``. Deterministic rule: a stable sort, so ties keep the incoming order (Go: sort.Slice)."""
        compatible = OfferingCompatibility(reqs)
        keys = {id(it): it.min_compatible_price(reqs, well_known, compatible) for it in self}
        self.sort(key=lambda it: keys[id(it)])
        return self

    def compatible(self, reqs: Requirements, well_known: frozenset[str] | None = None) -> InstanceTypes:
        """Mirrors InstanceTypes.Compatible: types with an available offering compatible with ``reqs``."""
        return InstanceTypes(it for it in self if it.has_compatible_available_offering(reqs, well_known))

    def satisfies_min_values(self, reqs: Requirements) -> int:
        """Mirrors InstanceTypes.SatisfiesMinValues: how many types (a prefix, in the given order)
        it takes to meet every minValues requirement of ``reqs`` (0 when there is none).

        Raises :class:`MinValuesError` (``min_needed``, ``unsatisfied``: label -> distinct values
        found; upstream's message) when the whole list does not meet them. The provisioning hot
        paths call :meth:`_satisfies_min_values`, which returns the error as a value.
        """
        needed, unsatisfied, err = self._satisfies_min_values(reqs)
        if err is not None:
            raise MinValuesError(err, min_needed=needed, unsatisfied=unsatisfied or {})
        return needed

    def _satisfies_min_values(self, reqs: Requirements) -> tuple[int, dict[str, int] | None, str | None]:
        """Mirrors InstanceTypes.SatisfiesMinValues -> (min_needed, unsatisfied, error).

        Walks the types in the given order, accumulating per minValues key the union of each type's
        OWN values for that key (``it.requirements.get(k).values``); returns at the first prefix that
        satisfies every key. Error text: ``minValues requirement is not met for label(s)
        (label(s)=[k1 k2])`` with sorted keys (deterministic rule for Go's map-key order).
        """
        min_keys = [(key, req.min_values) for key, req in reqs.items() if req.min_values is not None]
        if not min_keys:
            return 0, None, None
        values_for_key: dict[str, set[str]] = {}
        incompatible: dict[str, int] = {}
        for i, it in enumerate(self):
            it_reqs = it.requirements
            for key, _ in min_keys:
                acc = values_for_key.get(key)
                if acc is None:
                    acc = values_for_key[key] = set()
                acc.update(it_reqs.get(key).values)
            for key, mv in min_keys:
                n = len(values_for_key[key])
                if n < mv:
                    incompatible[key] = n
                else:
                    incompatible.pop(key, None)
            if not incompatible:
                return i + 1, None, None
        if incompatible:
            keys = " ".join(sorted(incompatible))
            return len(self), incompatible, f"minValues requirement is not met for label(s) (label(s)=[{keys}])"
        return len(self), None, None

    def truncate(self, reqs: Requirements, max_items: int,
                 min_values_policy: str = MIN_VALUES_POLICY_STRICT,
                 well_known: frozenset[str] | None = None) -> InstanceTypes:
        """Mirrors InstanceTypes.Truncate: the ``max_items`` cheapest types for ``reqs``.

        Raises :class:`MinValuesError` (upstream's ``validating minValues, ...`` message;
        ``instance_types``: the whole list, price-ordered, as upstream returns it beside the error)
        when ``reqs`` has minValues, the policy is not BestEffort and the cut list fails them. The
        provisioning hot paths call :meth:`_truncate`, which returns the error as a value.
        """
        its, err = self._truncate(reqs, max_items, min_values_policy, well_known)
        if err is not None:
            raise MinValuesError(err, instance_types=its)
        return its

    def _truncate(self, reqs: Requirements, max_items: int,
                  min_values_policy: str = MIN_VALUES_POLICY_STRICT,
                  well_known: frozenset[str] | None = None) -> tuple[InstanceTypes, str | None]:
        """Mirrors InstanceTypes.Truncate: ``OrderByPrice(reqs)[:max_items]``; when ``reqs`` has minValues
        and the policy is not BestEffort and the cut list fails SatisfiesMinValues, returns the original
        (now price-ordered, as upstream sorts in place) list and ``validating minValues, <err>``."""
        ordered = self.order_by_price(reqs, well_known)
        truncated = InstanceTypes(ordered[: max(max_items, 0)])
        if reqs.has_min_values() and min_values_policy != MIN_VALUES_POLICY_BEST_EFFORT:
            _, _, err = truncated._satisfies_min_values(reqs)
            if err is not None:
                return self, f"validating minValues, {err}"
        return truncated, None


# --------------------------------------------------------------------------------------------
# Errors (types.go)
# --------------------------------------------------------------------------------------------
class CloudProviderError(KarpyError):
    """Base of the wrapping cloud-provider errors: ``str(e)`` = prefix + wrapped error text;
    :meth:`unwrap` returns the wrapped error (Go's Unwrap)."""

    prefix = ""

    def __init__(self, error: BaseException | str) -> None:
        self.error = error
        super().__init__(f"{self.prefix}{error}")
        if isinstance(error, BaseException):
            self.__cause__ = error

    def unwrap(self) -> BaseException | str:
        return self.error


class MinValuesError(KarpyError, ValueError):
    """A list of instance types does not meet the minValues of the requirements
    (:meth:`InstanceTypes.satisfies_min_values`, :meth:`InstanceTypes.truncate`); ``str(e)`` is
    upstream's text (types.go SatisfiesMinValues / Truncate). ``min_needed`` and ``unsatisfied``
    (label -> distinct values found) as SatisfiesMinValues returns them; ``instance_types``: the
    price-ordered list Truncate returns beside its error (else None)."""

    def __init__(self, message: str, *, min_needed: int | None = None, unsatisfied: Mapping[str, int] | None = None,
                 instance_types: InstanceTypes | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.min_needed = min_needed
        self.unsatisfied: dict[str, int] = dict(unsatisfied or {})
        self.instance_types = instance_types


class NodeClaimNotFoundError(CloudProviderError):
    """Mirrors types.go NodeClaimNotFoundError: ``nodeclaim not found, <err>``."""

    prefix = "nodeclaim not found, "


class InsufficientCapacityError(CloudProviderError):
    """Mirrors types.go InsufficientCapacityError: ``insufficient capacity, <err>``."""

    prefix = "insufficient capacity, "


class NodeClassNotReadyError(CloudProviderError):
    """Mirrors types.go NodeClassNotReadyError: ``NodeClassRef not ready, <err>``."""

    prefix = "NodeClassRef not ready, "


class CreateError(CloudProviderError):
    """Mirrors types.go CreateError: ``creating nodeclaim, <err>`` plus condition reason/message."""

    prefix = "creating nodeclaim, "

    def __init__(self, error: BaseException | str, condition_reason: str = "", condition_message: str = "") -> None:
        super().__init__(error)
        self.condition_reason = condition_reason
        self.condition_message = condition_message


def _go_quote(s: str) -> str:
    """Go's %q for printable strings."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


class UnavailableSpecError(KarpyError, ValueError):
    """A malformed injected-capacity spec (``TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE``): ``spec`` as
    given and ``reason``; ``str()`` is ``capacity spec '<spec>': <reason>``. The CLI reports it as
    ``--unavailable '<spec>': <reason>``."""

    def __init__(self, spec: Any, reason: str) -> None:
        self.spec = spec
        self.reason = reason
        super().__init__(f"capacity spec {spec!r}: {reason}")


class UnevaluatedNodePoolError(KarpyError):
    """Mirrors types.go UnevaluatedNodePoolError: ``nodepool "<name>" is awaiting evaluation``."""

    def __init__(self, nodepool_name: str) -> None:
        self.nodepool_name = nodepool_name
        super().__init__(f"nodepool {_go_quote(nodepool_name)} is awaiting evaluation")


def _chain(err: BaseException | str | None) -> Iterable[BaseException | str]:
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        yield err
        if isinstance(err, CloudProviderError):
            err = err.error
        elif isinstance(err, BaseException):
            err = err.__cause__
        else:
            err = None


def errors_as(err: BaseException | str | None, cls: type[BaseException]) -> BaseException | None:
    """Go's errors.As: the first error of type ``cls`` in the unwrap chain (Unwrap / ``__cause__``)."""
    for e in _chain(err):
        if isinstance(e, cls):
            return e
    return None


def is_nodeclaim_not_found_error(err: BaseException | str | None) -> bool:
    """Mirrors IsNodeClaimNotFoundError."""
    return errors_as(err, NodeClaimNotFoundError) is not None


def ignore_nodeclaim_not_found_error(err: BaseException | None) -> BaseException | None:
    """Mirrors IgnoreNodeClaimNotFoundError."""
    return None if is_nodeclaim_not_found_error(err) else err


def is_insufficient_capacity_error(err: BaseException | str | None) -> bool:
    """Mirrors IsInsufficientCapacityError."""
    return errors_as(err, InsufficientCapacityError) is not None


def is_nodeclass_not_ready_error(err: BaseException | str | None) -> bool:
    """Mirrors IsNodeClassNotReadyError."""
    return errors_as(err, NodeClassNotReadyError) is not None


def is_unevaluated_nodepool_error(err: BaseException | str | None) -> bool:
    """Mirrors IsUnevaluatedNodePoolError."""
    return errors_as(err, UnevaluatedNodePoolError) is not None


# --------------------------------------------------------------------------------------------
# Provider controllers (the cloud provider's own controllers on the virtual clock)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ProviderController:
    """One of a cloud provider's own controllers (upstream: the provider's singleton controllers,
    e.g. the AWS provider's capacity-reservation ``capacitytype`` and ``expiration`` controllers).

    A provider offers them through an optional ``controllers(cluster)`` method; karpy's simulation
    runs each ``reconcile(now)`` every ``interval`` virtual seconds from the start (skipping ticks at
    which nothing changed) and, when ``reconcile`` returns a virtual time, also at the first tick
    at or after it (a time-driven change the store cannot show, such as a reservation's end)."""

    name: str
    interval: float
    reconcile: Callable[[float], float | None]


# --------------------------------------------------------------------------------------------
# CloudProvider protocol
# --------------------------------------------------------------------------------------------
@runtime_checkable
class CloudProvider(Protocol):
    """Mirrors types.go CloudProvider (the parts karpy simulates). Errors are raised as the classes
    above (Go returns them)."""

    @property
    def name(self) -> str:
        """Name(): the implementation name (e.g. "fake", "aws")."""
        ...

    def get_instance_types(self, nodepool: NodePool) -> Sequence[InstanceType]:
        """GetInstanceTypes: every instance type, including those with no available offering."""
        ...

    def create(self, nodeclaim: NodeClaim) -> NodeClaim:
        """Create: launch and return the hydrated NodeClaim (resolved labels, capacity, provider id)."""
        ...

    def delete(self, nodeclaim: NodeClaim) -> None:
        """Delete: raise NodeClaimNotFoundError if already gone."""
        ...

    def well_known_labels(self) -> frozenset[str]:
        """The provider's extra well-known labels (what upstream inserts into v1.WellKnownLabels)."""
        ...
