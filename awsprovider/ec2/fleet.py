"""The EC2 Fleet model: which override an *instant* CreateFleet launches (pure: no boto, no moto).

Input is the CreateFleet request exactly as Karpenter builds it
(``pkg/providers/instance/types.go`` ``CreateFleetInputBuilder``; overrides from ``instance.go``
``getOverrides``), a :class:`PriceBook`, the zone offerings (type -> zones, from
DescribeInstanceTypeOfferings) and a :class:`~awsprovider.ec2.capacity.CapacityModel`.

AWS does not publish its allocation algorithms; these are documented approximations of the
CreateFleet docs (docs.aws.amazon.com/AWSEC2/latest/APIReference/API_OnDemandOptionsRequest.html
and API_SpotOptionsRequest.html):

Eligibility
  An override whose instance type is not offered in its zone (zone = ``AvailabilityZone``, else the
  subnet's zone) is not launchable; it is reported once per request unit with error code
  ``Unsupported`` (the code EC2 uses for "Your requested instance type (…) is not supported in your
  requested Availability Zone (…)"; Karpenter's ``pkg/errors/errors.go`` lists it among the
  unfulfillable-capacity codes). When no offerings are given the check is skipped.

Pool attempts (every strategy)
  The strategy picks the best remaining pool; the capacity model is asked for one launch there.
  On an error (``InsufficientInstanceCapacity`` by default) that override is reported in
  ``Errors`` and the strategy is re-run on the remaining overrides (pools EC2 never tried are not
  reported). When every override fails there is no instance. ``TotalTargetCapacity = N`` allocates
  N units one at a time, re-evaluating capacity for each.

On-demand (``OnDemandOptions.AllocationStrategy``; default ``lowest-price``)
  * ``lowest-price``: minimum on-demand price (``PriceBook.on_demand_price(type)``); ties → request
    order. Unknown prices sort last.
  * ``prioritized``: minimum ``Priority`` (missing Priority = lowest priority, i.e. last);
    ties → lower on-demand price → request order.

Spot (``SpotOptions.AllocationStrategy``; default ``lowest-price``). Depth is
``PriceBook.capacity_score(type, zone)`` when the book has it (higher = deeper), else 1.0 for all:
  * ``lowest-price``: minimum spot price (``PriceBook.spot_price(type, zone)``); ties → request order.
  * ``capacity-optimized``: maximum depth; ties → lower spot price → request order.
  * ``price-capacity-optimized``: the *deepest pools* are those whose depth is at least the depth of
    the pool ranked ``ceil(pco_depth_fraction × n)`` (ties included); among them the lowest spot
    price; ties → deeper → request order. Without depth data this is lowest-price.
  * ``capacity-optimized-prioritized``: pools with depth ≥ ``cop_min_relative_depth × max depth``;
    among them the minimum Priority; ties → deeper → lower spot price → request order. Without depth
    data this is prioritized.
  Any other strategy value (e.g. ``diversified``) is treated as ``lowest-price`` and the reason
  says so.

Request order = the order of overrides across ``LaunchTemplateConfigs`` then ``Overrides``; Karpenter
emits them by instance type (price order) then zone, so on ties the first listed zone wins.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from awsprovider.ec2.capacity import CapacityModel, ice_message

__all__ = [
    "DEFAULT_COP_MIN_RELATIVE_DEPTH",
    "DEFAULT_PCO_DEPTH_FRACTION",
    "FleetAllocator",
    "FleetChoice",
    "FleetDecision",
    "FleetOverride",
    "PriceBook",
    "StaticPriceBook",
    "UNSUPPORTED_ERROR_CODE",
    "is_modelled_request",
    "unsupported_message",
]

UNSUPPORTED_ERROR_CODE = "Unsupported"
DEFAULT_PCO_DEPTH_FRACTION = 0.25
DEFAULT_COP_MIN_RELATIVE_DEPTH = 0.5
_MODELLED_CAPACITY_TYPES = ("on-demand", "spot")
_OD_STRATEGIES = ("lowest-price", "prioritized")
_SPOT_STRATEGIES = (
    "lowest-price",
    "capacity-optimized",
    "price-capacity-optimized",
    "capacity-optimized-prioritized",
)


@runtime_checkable
class PriceBook(Protocol):
    """Prices the fleet model allocates by ($/h). ``None`` = unknown (sorts last).

    A book may also define ``capacity_score(instance_type, zone) -> float`` (higher = deeper spot
    pool); it is looked up with ``getattr`` and is optional.
    """

    def on_demand_price(self, instance_type: str) -> float | None:
        """On-demand price of the type in the region."""
        ...

    def spot_price(self, instance_type: str, zone: str) -> float | None:
        """Spot price of the (type, zone) pool."""
        ...


@dataclass(frozen=True)
class StaticPriceBook:
    """A :class:`PriceBook` from tables: on-demand by type; spot by (type, zone) or by type;
    optional capacity scores by (type, zone). Missing entries are ``None`` (scores: 1.0)."""

    on_demand: Mapping[str, float] = field(default_factory=dict)
    spot: Mapping[tuple[str, str] | str, float] = field(default_factory=dict)
    scores: Mapping[tuple[str, str], float] = field(default_factory=dict)

    def on_demand_price(self, instance_type: str) -> float | None:
        """On-demand price of the type."""
        return self.on_demand.get(instance_type)

    def spot_price(self, instance_type: str, zone: str) -> float | None:
        """Spot price of the pool, falling back to the type's regional spot price."""
        p = self.spot.get((instance_type, zone))
        return p if p is not None else self.spot.get(instance_type)

    def capacity_score(self, instance_type: str, zone: str) -> float:
        """Depth of the spot pool (higher = deeper)."""
        return self.scores.get((instance_type, zone), 1.0)


@dataclass(frozen=True, slots=True)
class FleetOverride:
    """One override as the fleet saw it (request order), with the values it allocated by. Slotted:
    every launch's record keeps its ~300 overrides for the document (112 bytes each, not 328)."""

    index: int
    config_index: int
    instance_type: str
    zone: str
    subnet_id: str | None
    image_id: str | None
    priority: float | None
    price: float | None
    capacity_score: float
    offered: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (keys as in the explain output)."""
        d: dict[str, Any] = {
            "instance_type": self.instance_type,
            "zone": self.zone,
            "subnet_id": self.subnet_id,
            "price": self.price,
            "capacity_score": self.capacity_score,
            "offered": self.offered,
        }
        if self.priority is not None:
            d["priority"] = self.priority
        return d


@dataclass(frozen=True)
class FleetChoice:
    """The override a unit launched into."""

    instance_type: str
    zone: str
    subnet_id: str | None
    price: float | None
    priority: float | None
    override_index: int
    config_index: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "instance_type": self.instance_type,
            "zone": self.zone,
            "subnet_id": self.subnet_id,
            "price": self.price,
            "priority": self.priority,
        }


@dataclass(frozen=True)
class FleetDecision:
    """What the fleet decided for one unit of capacity, and why (data for explain output)."""

    allocation_strategy: str
    capacity_type: str
    overrides_considered: tuple[FleetOverride, ...]
    chosen: FleetChoice | None
    errors: tuple[dict[str, Any], ...]
    reason: str

    def to_dict(self, compact: bool = False) -> dict[str, Any]:
        """JSON-able form. ``compact``: the considered overrides as their count (what the
        document's explain block keeps of them)."""
        return {
            "allocation_strategy": self.allocation_strategy,
            "capacity_type": self.capacity_type,
            "overrides_considered": (len(self.overrides_considered) if compact
                                     else [o.to_dict() for o in self.overrides_considered]),
            "chosen": self.chosen.to_dict() if self.chosen else None,
            "errors": [
                {
                    "error_code": e["ErrorCode"],
                    "instance_type": e["LaunchTemplateAndOverrides"]["Overrides"].get("InstanceType"),
                    "zone": e["LaunchTemplateAndOverrides"]["Overrides"].get("AvailabilityZone"),
                }
                for e in self.errors
            ],
            "reason": self.reason,
        }


def is_modelled_request(params: Mapping[str, Any]) -> bool:
    """Whether the fleet model decides this request: an instant, non-DryRun fleet whose default
    capacity type is on-demand or spot, with plain ``InstanceType`` overrides."""
    if params.get("DryRun") or params.get("Type", "maintain") != "instant":
        return False
    tcs = params.get("TargetCapacitySpecification") or {}
    if tcs.get("DefaultTargetCapacityType") not in _MODELLED_CAPACITY_TYPES:
        return False
    configs = params.get("LaunchTemplateConfigs") or []
    if not configs:
        return False
    for ltc in configs:
        for ovr in ltc.get("Overrides") or []:
            if "InstanceType" not in ovr:
                return False
    return True


def unsupported_message(instance_type: str, zone: str, offered_zones: Collection[str]) -> str:
    """EC2's text for a type that is not offered in the requested zone."""
    msg = (
        f"Your requested instance type ({instance_type}) is not supported in your requested "
        f"Availability Zone ({zone})."
    )
    if offered_zones:
        msg += (
            " Please retry your request by not specifying an Availability Zone or choosing "
            + ", ".join(sorted(offered_zones))
            + "."
        )
    return msg


def _fmt_price(p: float | None) -> str:
    return "$?" if p is None else f"${p:.5f}".rstrip("0").rstrip(".") if p != 0 else "$0"


def _fmt_num(x: float | None) -> str:
    return "none" if x is None else f"{x:g}"


def _inf(x: float | None) -> float:
    return math.inf if x is None else x


class FleetAllocator:
    """Decides CreateFleet (instant) allocations; see the module docstring for the semantics.

    ``offerings`` maps instance type -> zones it is offered in (``None`` skips the check);
    ``zone_of_subnet`` resolves an override's zone when it carries only ``SubnetId``;
    ``capacity`` is mutated (counters) by :meth:`allocate`.
    """

    def __init__(
        self,
        price_book: PriceBook,
        offerings: Mapping[str, Collection[str]] | None = None,
        capacity: CapacityModel | None = None,
        zone_of_subnet: Callable[[str], str | None] | None = None,
        pco_depth_fraction: float = DEFAULT_PCO_DEPTH_FRACTION,
        cop_min_relative_depth: float = DEFAULT_COP_MIN_RELATIVE_DEPTH,
    ) -> None:
        if not 0.0 < pco_depth_fraction <= 1.0:
            raise ValueError("pco_depth_fraction must be in (0, 1]")
        if not 0.0 <= cop_min_relative_depth <= 1.0:
            raise ValueError("cop_min_relative_depth must be in [0, 1]")
        self.price_book = price_book
        self.offerings = offerings
        self.capacity = capacity if capacity is not None else CapacityModel()
        self.zone_of_subnet = zone_of_subnet
        self.pco_depth_fraction = pco_depth_fraction
        self.cop_min_relative_depth = cop_min_relative_depth

    # -- request parsing -------------------------------------------------------------------
    def _zone(self, ovr: Mapping[str, Any]) -> str:
        zone = ovr.get("AvailabilityZone")
        if zone:
            return str(zone)
        subnet = ovr.get("SubnetId")
        if subnet and self.zone_of_subnet is not None:
            return self.zone_of_subnet(str(subnet)) or ""
        return ""

    def overrides(self, params: Mapping[str, Any]) -> list[FleetOverride]:
        """The request's overrides in request order, priced for its capacity type."""
        capacity_type = params["TargetCapacitySpecification"]["DefaultTargetCapacityType"]
        score_fn = getattr(self.price_book, "capacity_score", None)
        spot = capacity_type == "spot"
        offerings = self.offerings
        price_book = self.price_book
        out: list[FleetOverride] = []
        append = out.append
        for ci, ltc in enumerate(params.get("LaunchTemplateConfigs") or []):
            for ovr in ltc.get("Overrides") or []:
                itype = str(ovr["InstanceType"])
                zone = ovr.get("AvailabilityZone")
                zone = str(zone) if zone else self._zone(ovr)
                if spot:
                    price = price_book.spot_price(itype, zone)
                    score = float(score_fn(itype, zone)) if score_fn is not None else 1.0
                else:
                    price = price_book.on_demand_price(itype)
                    score = 1.0
                offered = True
                if offerings is not None:
                    offered = zone in offerings.get(itype, ())
                prio = ovr.get("Priority")
                append(FleetOverride(len(out), ci, itype, zone, ovr.get("SubnetId"), ovr.get("ImageId"),
                                     None if prio is None else float(prio), price, score, offered))
        return out

    # -- strategies ------------------------------------------------------------------------
    @staticmethod
    def strategy_of(params: Mapping[str, Any]) -> str:
        """The allocation strategy the request asks for (AWS defaults when absent)."""
        ct = params["TargetCapacitySpecification"]["DefaultTargetCapacityType"]
        opts = params.get("SpotOptions" if ct == "spot" else "OnDemandOptions") or {}
        return str(opts.get("AllocationStrategy") or "lowest-price")

    def _pick(
        self, strategy: str, capacity_type: str, pool: list[FleetOverride], launchable: int
    ) -> tuple[FleetOverride, str]:
        """Best override of ``pool`` (non-empty) under ``strategy`` and a sentence saying why.

        ``launchable`` (offered overrides of the request, for the reason text) >= ``len(pool)``.
        """
        n = len(pool)
        of_n = f"of {launchable} launchable override{'s' if launchable != 1 else ''}"
        if n != launchable:
            of_n += f" ({launchable - n} failed)"
        if capacity_type == "on-demand" and strategy == "prioritized":
            best = min(pool, key=lambda o: (_inf(o.priority), _inf(o.price), o.index))
            ties = sum(1 for o in pool if o.priority == best.priority)
            why = (
                f"prioritized: {best.instance_type} in {best.zone} has the lowest Priority "
                f"{_fmt_num(best.priority)} {of_n} (on-demand {_fmt_price(best.price)})"
            )
            if ties > 1:
                why += f"; {ties} share that Priority, tie broken by lower price then request order"
            return best, why
        if capacity_type == "spot" and strategy == "capacity-optimized":
            best = min(pool, key=lambda o: (-o.capacity_score, _inf(o.price), o.index))
            return best, (
                f"capacity-optimized: {best.instance_type} in {best.zone} is the deepest pool "
                f"(capacity score {best.capacity_score:g}) {of_n}, spot {_fmt_price(best.price)}"
            )
        if capacity_type == "spot" and strategy == "price-capacity-optimized":
            scores = sorted((o.capacity_score for o in pool), reverse=True)
            k = max(1, math.ceil(self.pco_depth_fraction * n))
            threshold = scores[k - 1]
            deep = [o for o in pool if o.capacity_score >= threshold]
            best = min(deep, key=lambda o: (_inf(o.price), -o.capacity_score, o.index))
            return best, (
                f"price-capacity-optimized: {best.instance_type} at {_fmt_price(best.price)} in "
                f"{best.zone} is the cheapest of the {len(deep)} deepest pools (capacity score >= "
                f"{threshold:g}) {of_n}"
            )
        if capacity_type == "spot" and strategy == "capacity-optimized-prioritized":
            top = max(o.capacity_score for o in pool)
            threshold = top * self.cop_min_relative_depth if top > 0 else -math.inf
            deep = [o for o in pool if o.capacity_score >= threshold]
            best = min(deep, key=lambda o: (_inf(o.priority), -o.capacity_score, _inf(o.price), o.index))
            return best, (
                f"capacity-optimized-prioritized: {best.instance_type} in {best.zone} has the lowest "
                f"Priority {_fmt_num(best.priority)} among the {len(deep)} pools with capacity score >= "
                f"{threshold:g} {of_n} (spot {_fmt_price(best.price)})"
            )
        # lowest-price (on-demand or spot) and anything not modelled.
        known = _OD_STRATEGIES if capacity_type == "on-demand" else _SPOT_STRATEGIES
        note = "" if strategy in known else f" ({strategy!r} is not modelled; treated as lowest-price)"
        best = min(pool, key=lambda o: (_inf(o.price), o.index))
        ties = sum(1 for o in pool if o.price == best.price)
        why = (
            f"lowest-price: {best.instance_type} at {_fmt_price(best.price)} in {best.zone} is the "
            f"cheapest {of_n}{note}"
        )
        if ties > 1:
            why += f"; {ties} share that price, tie broken by request order"
        return best, why

    # -- allocation --------------------------------------------------------------------------
    @staticmethod
    def _error(params: Mapping[str, Any], o: FleetOverride, code: str, message: str, lifecycle: str) -> dict[str, Any]:
        ltc = params["LaunchTemplateConfigs"][o.config_index]
        sent = [ovr for c in params["LaunchTemplateConfigs"] for ovr in (c.get("Overrides") or [])][o.index]
        overrides = dict(sent)
        overrides.setdefault("AvailabilityZone", o.zone)
        return {
            "LaunchTemplateAndOverrides": {
                "LaunchTemplateSpecification": dict(ltc.get("LaunchTemplateSpecification") or {}),
                "Overrides": overrides,
            },
            "Lifecycle": lifecycle,
            "ErrorCode": code,
            "ErrorMessage": message,
        }

    def allocate_unit(self, params: Mapping[str, Any], now: float = 0.0) -> FleetDecision:
        """Allocate one unit of capacity (mutates the capacity model's counters)."""
        capacity_type = str(params["TargetCapacitySpecification"]["DefaultTargetCapacityType"])
        strategy = self.strategy_of(params)
        considered = self.overrides(params)
        return self._allocate_unit(params, capacity_type, strategy, tuple(considered), now)

    def _allocate_unit(
        self,
        params: Mapping[str, Any],
        capacity_type: str,
        strategy: str,
        considered: tuple[FleetOverride, ...],
        now: float,
    ) -> FleetDecision:
        errors: list[dict[str, Any]] = []
        for o in considered:
            if not o.offered:
                zones = self.offerings.get(o.instance_type, ()) if self.offerings is not None else ()
                errors.append(
                    self._error(params, o, UNSUPPORTED_ERROR_CODE, unsupported_message(o.instance_type, o.zone, zones), capacity_type)
                )
        pool = [o for o in considered if o.offered]
        launchable = len(pool)
        failed: list[str] = []
        while pool:
            best, why = self._pick(strategy, capacity_type, pool, launchable)
            code = self.capacity.try_launch(best.instance_type, best.zone, capacity_type, now)
            if code is None:
                if failed:
                    why += f"; tried first and failed: {', '.join(failed)}"
                if launchable != len(considered):
                    why += f"; {len(considered) - launchable} override(s) not offered in their zone (Unsupported)"
                choice = FleetChoice(
                    best.instance_type, best.zone, best.subnet_id, best.price, best.priority, best.index, best.config_index
                )
                return FleetDecision(strategy, capacity_type, considered, choice, tuple(errors), why)
            errors.append(self._error(params, best, code, ice_message(best.instance_type, best.zone, capacity_type), capacity_type))
            failed.append(f"{best.instance_type}/{best.zone} {code}")
            pool = [o for o in pool if o.index != best.index]
        counts = Counter(e["ErrorCode"] for e in errors)
        summary = ", ".join(f"{c} x{counts[c]}" for c in sorted(counts))
        reason = f"{strategy}: no override launched: all {len(considered)} overrides failed ({summary or 'no overrides'})"
        return FleetDecision(strategy, capacity_type, considered, None, tuple(errors), reason)

    def allocate(self, params: Mapping[str, Any], now: float = 0.0) -> list[FleetDecision]:
        """Allocate ``TotalTargetCapacity`` units, one decision per unit, re-evaluating capacity each time.

        Stops after the first unit that launches nothing: an instant fleet "makes only one
        attempt to launch your desired capacity" (EC2 docs), so the rest stays unfulfilled.
        """
        capacity_type = str(params["TargetCapacitySpecification"]["DefaultTargetCapacityType"])
        strategy = self.strategy_of(params)
        considered = tuple(self.overrides(params))
        total = int(params["TargetCapacitySpecification"].get("TotalTargetCapacity") or 0)
        decisions: list[FleetDecision] = []
        for _ in range(max(total, 0)):
            d = self._allocate_unit(params, capacity_type, strategy, considered, now)
            decisions.append(d)
            if d.chosen is None:
                break
        return decisions
