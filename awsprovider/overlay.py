"""NodeOverlay application: core's nodeoverlay controller + InstanceTypeStore, and the AWS
provider's overlay price for unpriced types.

Mirrors kubernetes-sigs/karpenter (2266468):

* pkg/controllers/nodeoverlay/controller.go ``Reconcile``: overlays ordered by weight desc, ties by
  name *descending* (nodeoverlay.go ``OrderByWeight``; ``sort.Slice`` is unstable but the key is
  total for distinct names); runtime validation; for each overlay, validate against every
  NodePool first and only then store its updates (all-or-nothing); a conflicting overlay is
  rejected with condition ``ValidationSucceeded=False, reason Conflict``.
* ``getOverlaidOfferings``: the overlay matches an instance type when
  ``{karpenter.sh/nodepool In [np]} ∪ nodepool template labels ∪ IT requirements`` is compatible
  with the overlay requirements (no undefined labels allowed); affected offerings are
  ``it.Offerings.Compatible(overlayReqs)`` (undefined well-known labels allowed).
* pkg/controllers/nodeoverlay/store.go: price updates keyed by ``offering.Requirements.String()``;
  the first (highest-weight) overlay sets the price change and later ones only lower the
  recorded weight; an overlay whose weight equals the recorded weight of an offering it touches is
  a conflict. Capacity updates: the first overlay's resources win per resource, lower-weight
  overlays add resources not yet set; equal weight touching a resource of the lowest-weight set is
  a conflict. ``apply`` returns copies: overlaid offerings are new :class:`Offering` objects with
  ``price_overlaid=True`` (so core sets ``karpenter.sh/price-overlay-applied``), capacity overlays
  go through ``InstanceType.apply_capacity_overlay``.
* pkg/cloudprovider/types.go ``AdjustedPrice`` via :func:`karpy.cloudprovider.types.adjusted_price`.

AWS provider: offering/offering.go ``GetOverlayPrice`` -> :func:`overlay_prices` (validated
overlays with ``price`` and exactly one requirement ``node.kubernetes.io/instance-type In [...]``).

Determinism: NodePools are evaluated in the order given (upstream: the API list order, i.e. by
name); :func:`overlay_prices` walks overlays sorted by name (later names win on a shared type).
The NodeOverlay feature gate (default off upstream) is the caller's decision: karpy applies
overlays whenever it is given some.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from awsprovider.labels import CORE_WELL_KNOWN_RESOURCES, WELL_KNOWN_LABELS
from karpy.cloudprovider.types import InstanceType, Offering, Offerings, UnevaluatedNodePoolError
from karpy.scheduling.labels import LABEL_INSTANCE_TYPE, LABEL_NODEPOOL, OP_IN, OP_NOT_IN, validate_requirement
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

__all__ = [
    "CONDITION_VALIDATION_SUCCEEDED",
    "OverlayStatus",
    "NodeOverlayStore",
    "apply_overlays",
    "evaluate_overlays",
    "order_by_weight",
    "overlay_prices",
    "runtime_validate",
]

CONDITION_VALIDATION_SUCCEEDED = "ValidationSucceeded"


@dataclass(frozen=True)
class OverlayStatus:
    """The ``ValidationSucceeded`` condition the controller sets on one overlay."""

    name: str
    succeeded: bool
    reason: str = ""
    message: str = ""


@dataclass
class _PriceUpdate:
    change: str
    lowest_weight: int


@dataclass
class _CapacityUpdate:
    overlay_update: dict[str, int] = field(default_factory=dict)
    lowest_weight_resources: dict[str, int] = field(default_factory=dict)
    lowest_weight: int = 0


@dataclass
class _InstanceTypeUpdate:
    price: dict[str, _PriceUpdate] = field(default_factory=dict)
    capacity: _CapacityUpdate = field(default_factory=_CapacityUpdate)


def _weight(overlay: Any) -> int:
    return int(overlay.spec.weight or 0)


def _name(obj: Any) -> str:
    return str(obj.metadata.name)


def order_by_weight(overlays: Iterable[Any]) -> list[Any]:
    """nodeoverlay.go OrderByWeight: weight desc, equal weights by name descending."""
    return sorted(overlays, key=lambda o: (_weight(o), _name(o)), reverse=True)


def _overlay_requirements(overlay: Any) -> Requirements:
    """scheduling.NewNodeSelectorRequirements of the overlay requirements (minValues ignored)."""
    return Requirements.from_node_selector_requirements(overlay.spec.requirements, with_min_values=False)


def _capacity(overlay: Any) -> dict[str, int]:
    return {k: (v.nanos if hasattr(v, "nanos") else int(v)) for k, v in (overlay.spec.capacity or {}).items()}


def runtime_validate(overlay: Any, well_known: frozenset[str] = WELL_KNOWN_LABELS,
                     well_known_resources: frozenset[str] = CORE_WELL_KNOWN_RESOURCES) -> str | None:
    """v1alpha1 nodeoverlay_validation.go RuntimeValidate; errors joined with "; " (multierr).
    Capacity is checked against core's WellKnownResources (:data:`CORE_WELL_KNOWN_RESOURCES`)."""
    errs: list[str] = []
    for req in overlay.spec.requirements:
        err = validate_requirement(_PlainReq(req.key, req.operator, list(req.values or ())), well_known)
        if err is not None:
            errs.append(f"invalid value: {err} in requirements, restricted")
        if req.operator == OP_NOT_IN and not req.values:
            errs.append(f"key {req.key} with operator {req.operator} must have a value defined")
    for name in (overlay.spec.capacity or {}):
        if name in well_known_resources:
            errs.append(f"invalid capacity: {name} in resource, restricted")
    return "; ".join(errs) if errs else None


@dataclass(frozen=True)
class _PlainReq:
    key: str
    operator: str
    values: list[str]
    min_values: int | None = None


class NodeOverlayStore:
    """Mirrors nodeoverlay store.go internalInstanceTypeStore + InstanceTypeStore.ApplyAll/Apply."""

    def __init__(self) -> None:
        self.updates: dict[str, dict[str, _InstanceTypeUpdate]] = {}
        self.evaluated_nodepools: set[str] = set()
        self.statuses: dict[str, OverlayStatus] = {}

    # -- store.go mutations / conflict checks --------------------------------------------------
    def _entry(self, nodepool: str, it_name: str) -> _InstanceTypeUpdate:
        return self.updates.setdefault(nodepool, {}).setdefault(it_name, _InstanceTypeUpdate())

    def _update_offerings(self, nodepool: str, it_name: str, overlay: Any, keys: Iterable[str]) -> None:
        change = overlay.spec.price if overlay.spec.price is not None else overlay.spec.price_adjustment
        if change is None:
            return
        entry = self._entry(nodepool, it_name)
        weight = _weight(overlay)
        for key in keys:
            found = entry.price.get(key)
            if found is not None:
                found.lowest_weight = weight
                continue
            entry.price[key] = _PriceUpdate(change, weight)

    def _update_capacity(self, nodepool: str, it_name: str, overlay: Any) -> None:
        if not overlay.spec.capacity:
            return
        entry = self._entry(nodepool, it_name)
        cap = _capacity(overlay)
        for res, qty in cap.items():
            if res not in entry.capacity.overlay_update:
                entry.capacity.overlay_update[res] = qty
        entry.capacity.lowest_weight_resources = cap
        entry.capacity.lowest_weight = _weight(overlay)

    def _offering_conflicts(self, nodepool: str, it_name: str, key: str, overlay: Any) -> bool:
        entry = self.updates.get(nodepool, {}).get(it_name)
        if entry is None:
            return False
        found = entry.price.get(key)
        return found is not None and found.lowest_weight == _weight(overlay)

    def _capacity_conflicts(self, nodepool: str, it_name: str, overlay: Any) -> bool:
        entry = self.updates.get(nodepool, {}).get(it_name)
        if entry is None or entry.capacity.lowest_weight != _weight(overlay):
            return False
        return any(res in entry.capacity.lowest_weight_resources for res in (overlay.spec.capacity or {}))

    # -- apply ---------------------------------------------------------------------------------
    def apply(self, nodepool_name: str, it: InstanceType) -> InstanceType:
        """store.go Apply (internal): a copy with price/capacity overlays, or ``it`` itself."""
        if nodepool_name not in self.evaluated_nodepools:
            raise UnevaluatedNodePoolError(nodepool_name)
        return self._apply(nodepool_name, it)

    def _apply(self, nodepool_name: str, it: InstanceType) -> InstanceType:
        update = self.updates.get(nodepool_name, {}).get(it.name)
        if update is None:
            return it
        offerings: Iterable[Offering] = it.offerings
        if update.price:
            copied: list[Offering] = []
            keys: dict[int, str] = {}
            for o in it.offerings:
                k = keys.get(id(o.requirements))
                if k is None:
                    k = keys[id(o.requirements)] = str(o.requirements)
                pu = update.price.get(k)
                if pu is None:
                    copied.append(o)
                else:
                    c = Offering(o.requirements, o.price, o.available, o.reservation_capacity,
                                 reservation_id_label=o.reservation_id_label)
                    c.apply_price_overlay(pu.change)
                    copied.append(c)
            offerings = copied
        out = InstanceType(it.name, it.requirements, Offerings(offerings, it.offerings.well_known), it.capacity,
                           it.overhead, it.well_known)
        if update.capacity.overlay_update:
            out.apply_capacity_overlay(update.capacity.overlay_update)
        return out

    def apply_all(self, nodepool_name: str, its: Sequence[InstanceType]) -> list[InstanceType]:
        """store.go ApplyAll: raises UnevaluatedNodePoolError for a NodePool not evaluated."""
        if nodepool_name not in self.evaluated_nodepools:
            raise UnevaluatedNodePoolError(nodepool_name)
        if nodepool_name not in self.updates:
            return list(its)
        return [self._apply(nodepool_name, it) for it in its]

    def is_valid(self, overlay_name: str) -> bool:
        """Whether the overlay's ValidationSucceeded condition is true."""
        st = self.statuses.get(overlay_name)
        return st is not None and st.succeeded


def _overlaid_offering_keys(nodepool: Any, it: InstanceType, overlay_reqs: Requirements,
                            key_cache: dict[int, str]) -> list[str] | None:
    """controller.go getOverlaidOfferings -> the offering keys (Requirements.String()), or None."""
    reqs = Requirements(Requirement(LABEL_NODEPOOL, OP_IN, [_name(nodepool)]))
    labels = nodepool.spec.template.metadata.labels or {}
    if labels:
        reqs.add(*Requirements.from_labels(labels).values())
    reqs.add(*it.requirements.values())
    if not reqs.is_compatible(overlay_reqs):
        return None
    keys: list[str] = []
    for o in it.offerings.compatible(overlay_reqs):
        k = key_cache.get(id(o.requirements))
        if k is None:
            k = key_cache[id(o.requirements)] = str(o.requirements)
        keys.append(k)
    return keys


def evaluate_overlays(overlays: Iterable[Any], nodepools: Sequence[tuple[Any, Sequence[InstanceType]]],
                      well_known: frozenset[str] = WELL_KNOWN_LABELS,
                      well_known_resources: frozenset[str] = CORE_WELL_KNOWN_RESOURCES) -> NodeOverlayStore:
    """controller.go Reconcile: evaluate ``overlays`` against ``(nodepool, instance types)`` pairs
    (the types as ``CloudProvider.GetInstanceTypes(nodepool)`` returns them) into a store; each
    overlay's condition is in ``store.statuses``."""
    store = NodeOverlayStore()
    key_cache: dict[int, str] = {}
    for overlay in order_by_weight(overlays):
        name = _name(overlay)
        err = runtime_validate(overlay, well_known, well_known_resources)
        if err is not None:
            store.statuses[name] = OverlayStatus(name, False, "RuntimeValidation", err)
            continue
        overlay_reqs = _overlay_requirements(overlay)
        has_price = overlay.spec.price is not None or overlay.spec.price_adjustment is not None
        has_capacity = bool(overlay.spec.capacity)
        matches: list[tuple[str, str, list[str]]] = []
        conflict = False
        for nodepool, its in nodepools:
            np_name = _name(nodepool)
            for it in its:
                keys = _overlaid_offering_keys(nodepool, it, overlay_reqs, key_cache)
                if not keys:
                    continue
                if has_price and any(store._offering_conflicts(np_name, it.name, k, overlay) for k in keys):
                    conflict = True
                if has_capacity and store._capacity_conflicts(np_name, it.name, overlay):
                    conflict = True
                if conflict:
                    break
                matches.append((np_name, it.name, keys))
            if conflict:
                break
        if conflict:
            store.statuses[name] = OverlayStatus(name, False, "Conflict", "conflict with another overlay")
            continue
        for np_name, it_name, keys in matches:
            store._update_offerings(np_name, it_name, overlay, keys)
            store._update_capacity(np_name, it_name, overlay)
        store.statuses[name] = OverlayStatus(name, True)
    store.evaluated_nodepools.update(_name(np) for np, _ in nodepools)
    return store


def apply_overlays(nodepool: Any, its: Sequence[InstanceType], overlays: Iterable[Any],
                   well_known: frozenset[str] = WELL_KNOWN_LABELS) -> list[InstanceType]:
    """Convenience: evaluate ``overlays`` for this one NodePool and apply them (copies)."""
    store = evaluate_overlays(overlays, [(nodepool, its)], well_known)
    return store.apply_all(_name(nodepool), its)


def overlay_prices(overlays: Iterable[Any], valid: Mapping[str, OverlayStatus] | None = None) -> dict[str, float]:
    """offering.go GetOverlayPrice's map: for overlays that passed validation (``valid``: the
    store's statuses; None = every overlay passing :func:`runtime_validate`), with ``price`` set and
    exactly one requirement ``node.kubernetes.io/instance-type In [...]``: type -> price."""
    prices: dict[str, float] = {}
    for overlay in sorted(overlays, key=_name):
        if valid is not None:
            st = valid.get(_name(overlay))
            if st is None or not st.succeeded:
                continue
        elif runtime_validate(overlay) is not None:
            continue
        if overlay.spec.price is None:
            continue
        reqs = overlay.spec.requirements
        if len(reqs) != 1 or reqs[0].key != LABEL_INSTANCE_TYPE or reqs[0].operator != OP_IN:
            continue
        try:
            price = float(overlay.spec.price)
        except ValueError:
            continue
        for value in reqs[0].values or ():
            prices[value] = price
    return prices
