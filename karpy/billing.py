"""The bill of a run: a :class:`~karpy.api.billing.BillingProfile` applied to its node-hours (modelled).

Karpenter ranks by list prices; the account pays after Reserved Instances, Savings Plans, an
enterprise discount and per-node fees. :func:`billed_cost` applies a profile over ``[0, horizon]``
clock hour by clock hour (virtual time 0 is the top of an hour), in the order AWS documents
(docs/guides/billing.md has the rule and its sources):

1. zonal RIs: the exact type in the RI's zone, up to ``count`` x 3600 instance-seconds per hour;
2. regional RIs: the RI's family in the region, size-flexible by normalization factor (Linux;
   a Windows node only matches the exact type), smallest size first;
3. EC2 Instance Savings Plans, then 4. Compute Savings Plans, each up to its $/h commitment, usage
   with the highest discount first (ties: the lowest Savings Plan rate first);
5. the rest at the on-demand price less ``enterpriseDiscount``; spot at the spot price less
   ``spotDiscount``; nodes in a capacity reservation at Karpenter's reserved price (the
   reservation's own bill is ``cost.capacity_reservations``, not discounted here).

A commitment is paid whether used or not: its unused part is ``unused_commitment``. Node fees are
per node-hour or per vCPU-hour on every launched node. The last hour is prorated when the horizon
ends inside it (a commitment's fee too). Prices are the provider's list prices (never NodeOverlay's
adjusted prices): on-demand by type, spot by type and zone; a price the provider lacks falls back
to the node's launch price. Dollars are rounded to 6 decimals at the end, never per hour.

``cost.billed.misalignments`` names where Karpenter's list-price choice is not the cheapest on this
bill and :func:`aligning_overlays` the NodeOverlay ``priceAdjustment``s that would teach Karpenter
the bill.
This module reads launch records and prices only; it never imports the simulation.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from karpy.api.billing import BillingProfile, BillingProfileSpec, ReservedInstance, SavingsPlan, family_of_type
from karpy.cost import family_of, generation_of

__all__ = ["NORMALIZATION_FACTORS", "PriceBook", "TablePriceBook", "Usage", "aligning_overlays", "billed_cost",
           "check_profile", "price_book_of", "resolve_profile", "size_factor", "usages"]

#: Regional RI size flexibility: normalization factor by size (AWS, "Instance size flexibility",
#: docs.aws.amazon.com/AWSEC2/latest/UserGuide/apply_ri.html). ``metal`` is absent: karpy matches
#: a metal RI and metal usage by exact type only.
NORMALIZATION_FACTORS: Mapping[str, float] = {
    "nano": 0.25, "micro": 0.5, "small": 1, "medium": 2, "large": 4, "xlarge": 8, "2xlarge": 16, "3xlarge": 24,
    "4xlarge": 32, "6xlarge": 48, "8xlarge": 64, "9xlarge": 72, "10xlarge": 80, "12xlarge": 96, "16xlarge": 128,
    "18xlarge": 144, "24xlarge": 192, "32xlarge": 256, "48xlarge": 384, "56xlarge": 448, "112xlarge": 896,
}
_HOUR = 3600.0
_EPS = 1e-12
#: how each dollar of usage was billed (``cost.billed.by_pricing``), in the order they apply
PRICINGS = ("reserved-instance", "ec2-instance-savings-plan", "compute-savings-plan", "on-demand", "spot",
            "capacity-reservation", "fees", "unused-commitment")
_LABEL_INSTANCE_TYPE = "node.kubernetes.io/instance-type"
_LABEL_CAPACITY_TYPE = "karpenter.sh/capacity-type"
_LABEL_OS = "kubernetes.io/os"
_LABEL_CPU = "karpenter.k8s.aws/instance-cpu"
_LABEL_FAMILY = "karpenter.k8s.aws/instance-family"


def size_factor(instance_type: str) -> float | None:
    """The normalization factor of ``instance_type``'s size (``m7i.xlarge`` -> 8), None if not listed."""
    _, _, size = instance_type.partition(".")
    return NORMALIZATION_FACTORS.get(size)


def _r(x: float) -> float:
    return round(x + 0.0, 6)


def _pct(fraction: float) -> str:
    text = f"{fraction * 100:.4f}".rstrip("0").rstrip(".")
    return f"{text}%"


# -- inputs -----------------------------------------------------------------------------------------

class PriceBook(Protocol):
    """List prices the bill starts from (the cloud provider's, before any NodeOverlay)."""

    def on_demand(self, instance_type: str) -> float | None: ...

    def spot(self, instance_type: str, zone: str) -> float | None: ...

    def instance_types(self) -> Sequence[str]: ...


@dataclass
class TablePriceBook:
    """A :class:`PriceBook` over plain tables (tests, and providers without a pricing object)."""

    on_demand_prices: Mapping[str, float]
    spot_prices: Mapping[tuple[str, str], float] = field(default_factory=dict)

    def on_demand(self, instance_type: str) -> float | None:
        return self.on_demand_prices.get(instance_type)

    def spot(self, instance_type: str, zone: str) -> float | None:
        return self.spot_prices.get((instance_type, zone))

    def instance_types(self) -> Sequence[str]:
        return sorted(self.on_demand_prices)


class _ProviderPriceBook:
    """The AWS provider's pricing object (``on_demand_price``, ``spot_price``, ``instance_types``)."""

    def __init__(self, pricing: Any) -> None:
        self._pricing = pricing

    def on_demand(self, instance_type: str) -> float | None:
        price = self._pricing.on_demand_price(instance_type)
        return None if price is None else float(price)

    def spot(self, instance_type: str, zone: str) -> float | None:
        price = self._pricing.spot_price(instance_type, zone)
        return None if price is None else float(price)

    def instance_types(self) -> Sequence[str]:
        return list(self._pricing.instance_types())


def price_book_of(provider: Any) -> PriceBook:
    """The list prices of a cloud provider: its ``pricing`` object (the AWS provider), else the
    offerings of its ``instance_types`` (the fake provider), else an empty book (launch prices)."""
    pricing = getattr(provider, "pricing", None)
    if pricing is not None and callable(getattr(pricing, "on_demand_price", None)):
        return _ProviderPriceBook(pricing)
    od: dict[str, float] = {}
    spot: dict[tuple[str, str], float] = {}
    for it in getattr(provider, "instance_types", None) or ():
        for o in getattr(it, "offerings", ()):
            if o.capacity_type == "on-demand":
                od[it.name] = min(od.get(it.name, o.price), o.price)
            elif o.capacity_type == "spot":
                spot[(it.name, o.zone)] = o.price
    return TablePriceBook(od, spot)


@dataclass(frozen=True)
class Usage:
    """One launched node at one capacity type over ``[start, end)`` virtual seconds."""

    node: str
    nodepool: str
    instance_type: str
    zone: str
    capacity_type: str
    start: float
    end: float
    list_price: float
    """The $/h Karpenter saw at launch (the document's ``price``; possibly NodeOverlay-adjusted)."""
    family: str = ""
    generation: str = "unknown"
    vcpus: float = 0.0
    windows: bool = False
    candidates: tuple[str, ...] = ()
    """The instance types the NodeClaim allowed (its requirements), for ``cost.billed.misalignments``."""
    capacity_candidates: tuple[str, ...] = ()

    @property
    def fam(self) -> str:
        return self.family or family_of_type(self.instance_type)


def _requirement_values(model: Any, key: str) -> tuple[str, ...]:
    for r in getattr(getattr(model, "spec", None), "requirements", None) or ():
        if r.key == key and r.operator == "In":
            return tuple(r.values or ())
    return ()


def _vcpus(launched: Any) -> float:
    labels = getattr(getattr(launched, "metadata", None), "labels", None) or {}
    try:
        return float(labels[_LABEL_CPU])
    except (KeyError, ValueError):
        pass
    cpu = (getattr(getattr(launched, "status", None), "capacity", None) or {}).get("cpu")
    if cpu is None:
        return 0.0
    from karpy.scheduling.resources import from_quantities

    return from_quantities({"cpu": cpu}).get("cpu", 0) / 1e9


def usages(launches: Sequence[Any], horizon: float) -> list[Usage]:
    """The :class:`Usage` segments of launch records (``karpy.sim.simulation.LaunchRecord``), as
    :func:`karpy.cost.cost_integral` integrates them (a price change splits a node's life)."""
    out: list[Usage] = []
    for rec in launches:
        if rec.launched is None or not rec.instance_type:
            continue
        start = rec.created_at
        end = rec.deleted_at if rec.deleted_at is not None else horizon
        end = max(start, min(end, horizon))
        history = getattr(rec, "price_history", None) or [(start, rec.price or 0.0, rec.capacity_type)]
        labels = getattr(rec.launched.metadata, "labels", None) or {}
        requested = getattr(rec, "requested", None)
        common = {"node": rec.name, "nodepool": rec.nodepool, "instance_type": rec.instance_type,
                  "zone": rec.zone or "", "family": family_of(rec), "generation": generation_of(rec),
                  "vcpus": _vcpus(rec.launched), "windows": labels.get(_LABEL_OS) == "windows",
                  "candidates": _requirement_values(requested, _LABEL_INSTANCE_TYPE),
                  "capacity_candidates": _requirement_values(requested, _LABEL_CAPACITY_TYPE)}
        for i, (t, price, capacity_type) in enumerate(history):
            a = max(start, min(float(t), end))
            b = max(a, min(float(history[i + 1][0]), end)) if i + 1 < len(history) else end
            if b > a:
                out.append(Usage(start=a, end=b, list_price=float(price or 0.0),
                                 capacity_type=capacity_type or "unknown", **common))
    return out


def check_profile(profile: BillingProfile, prices: PriceBook, region: str | None) -> None:
    """Bad input a profile's model cannot see alone: an instance type or family the provider's
    price table does not know. Raises :class:`karpy.api.loader.ManifestError` naming the field."""
    from karpy.api.loader import ManifestError

    known_types = set(prices.instance_types())
    known_families = {family_of_type(t) for t in known_types}
    if not known_types:
        return
    file, index = profile.source

    def fail(path: str, message: str) -> ManifestError:
        return ManifestError(file, index, path, message, kind="BillingProfile", name=profile.metadata.name or None)

    for i, sp in enumerate(profile.spec.savings_plans):
        if sp.family is not None and sp.family not in known_families:
            raise fail(f"spec.savingsPlans[{i}].family", f"unknown instance family {sp.family!r} (not in the "
                       f"price table{' of ' + region if region else ''})")
        for key in sp.rates:
            if "." in key and key not in known_types:
                raise fail(f"spec.savingsPlans[{i}].rates.{key}", f"unknown instance type {key!r}")
            if "." not in key and key not in known_families:
                raise fail(f"spec.savingsPlans[{i}].rates.{key}", f"unknown instance family {key!r}")
    for i, ri in enumerate(profile.spec.reserved_instances):
        if ri.instance_type not in known_types:
            raise fail(f"spec.reservedInstances[{i}].instanceType", f"unknown instance type {ri.instance_type!r}")
        if ri.zone is not None and region and not ri.zone.startswith(region):
            raise fail(f"spec.reservedInstances[{i}].zone", f"zone {ri.zone!r} is not in the run's region {region}")


# -- the hourly rule --------------------------------------------------------------------------------

@dataclass
class _Commitment:
    name: str
    kind: str  # ReservedInstance, EC2InstanceSavingsPlan, ComputeSavingsPlan
    committed: float = 0.0
    used: float = 0.0
    covered_seconds: float = 0.0
    #: unused dollars per clock hour index (for misalignments: where it had headroom)
    unused_by_hour: dict[int, float] = field(default_factory=dict)


@dataclass
class _Item:
    usage: Usage
    index: int
    seconds: float
    remaining: float
    on_demand: float  # $/h list on-demand price of the usage's type


def _ri_price(ri: ReservedInstance, prices: PriceBook) -> float:
    price = prices.on_demand(ri.instance_type)
    return 0.0 if price is None else price * (1.0 - ri.discount)


def _apply_zonal(ri: ReservedInstance, c: _Commitment, items: list[_Item], window: float, prices: PriceBook,
                 add: Callable[[_Item, str, float, float], None]) -> None:
    budget = ri.count * window
    rate = _ri_price(ri, prices) / _HOUR  # $ per covered instance-second
    for it in items:
        if budget <= _EPS:
            break
        u = it.usage
        if it.remaining <= _EPS or u.instance_type != ri.instance_type or u.zone != ri.zone:
            continue
        take = min(it.remaining, budget)
        budget -= take
        add(it, "reserved-instance", take, take * rate)
        c.used += take * rate
        c.covered_seconds += take


def _apply_regional(ri: ReservedInstance, c: _Commitment, items: list[_Item], window: float, prices: PriceBook,
                    add: Callable[[_Item, str, float, float], None]) -> None:
    ri_factor = size_factor(ri.instance_type)
    family = family_of_type(ri.instance_type)
    unit = ri_factor if ri_factor is not None else 1.0
    budget = ri.count * unit * window  # unit-seconds
    rate = _ri_price(ri, prices) / unit / _HOUR  # $ per unit-second

    def factor(u: Usage) -> float | None:
        if u.instance_type == ri.instance_type:
            return unit
        if ri_factor is None or u.windows or u.fam != family:
            return None
        return size_factor(u.instance_type)

    eligible = [(f, it) for it in items if it.remaining > _EPS and (f := factor(it.usage)) is not None]
    eligible.sort(key=lambda p: (p[0], p[1].usage.node, p[1].index))  # smallest size first
    for f, it in eligible:
        if budget <= _EPS:
            break
        units = min(it.remaining * f, budget)
        budget -= units
        seconds = units / f
        add(it, "reserved-instance", seconds, units * rate)
        c.used += units * rate
        c.covered_seconds += seconds


def _apply_savings_plan(sp: SavingsPlan, c: _Commitment, items: list[_Item], window: float, region: str | None,
                        pricing: str, add: Callable[[_Item, str, float, float], None]) -> None:
    if sp.type == "EC2Instance" and sp.region is not None and region is not None and sp.region != region:
        return
    budget = sp.commitment * window / _HOUR
    eligible: list[tuple[float, float, _Item]] = []
    for it in items:
        u = it.usage
        if it.remaining <= _EPS or it.on_demand <= 0:
            continue
        if sp.type == "EC2Instance" and u.fam != sp.family:
            continue
        rate = sp.rate(u.instance_type)
        if rate is None:
            continue
        eligible.append((rate, it.on_demand * (1.0 - rate), it))
    # highest savings percentage first; equal percentages: the lower Savings Plan rate first
    eligible.sort(key=lambda e: (-e[0], e[1], e[2].usage.node, e[2].index))
    for _, sp_rate, it in eligible:
        if budget <= _EPS:
            break
        full = it.remaining / _HOUR * sp_rate
        take = min(full, budget)
        budget -= take
        seconds = it.remaining * (take / full) if full > 0 else it.remaining
        add(it, pricing, seconds, take)
        c.used += take
        c.covered_seconds += seconds


class _Plan:
    """The profile's commitments in AWS's order: zonal RIs, regional RIs, EC2 Instance SPs, Compute SPs."""

    def __init__(self, spec: BillingProfileSpec) -> None:
        self.zonal = [ri for ri in spec.reserved_instances if ri.zone is not None]
        self.regional = [ri for ri in spec.reserved_instances if ri.zone is None]
        self.instance_sps = [sp for sp in spec.savings_plans if sp.type == "EC2Instance"]
        self.compute_sps = [sp for sp in spec.savings_plans if sp.type == "Compute"]
        self.commitments: dict[str, _Commitment] = {}
        for ri in (*self.zonal, *self.regional):
            self.commitments[ri.label] = _Commitment(ri.label, "ReservedInstance")
        for sp in (*self.instance_sps, *self.compute_sps):
            self.commitments[sp.name] = _Commitment(sp.name, f"{sp.type}SavingsPlan")


class _Ledger:
    """The running sums of one bill: dollars and seconds per usage entry, dollars per pricing."""

    def __init__(self, n: int) -> None:
        self.node_dollars = [0.0] * n
        self.node_seconds = [0.0] * n
        self.node_pricing: list[dict[str, float]] = [{} for _ in range(n)]
        self.by_pricing: dict[str, float] = {}
        self.hourly: list[float] = []
        self.fees_total = self.usage_total = self.unused_total = 0.0

    @property
    def total(self) -> float:
        return self.usage_total + self.fees_total + self.unused_total

    def add(self, it: _Item, pricing: str, seconds: float, dollars: float) -> None:
        it.remaining = max(0.0, it.remaining - seconds)
        self._charge(it.index, pricing, dollars)
        self.usage_total += dollars

    def fee(self, index: int, dollars: float) -> None:
        self._charge(index, "fees", dollars)
        self.fees_total += dollars

    def _charge(self, index: int, pricing: str, dollars: float) -> None:
        self.node_dollars[index] += dollars
        self.node_pricing[index][pricing] = self.node_pricing[index].get(pricing, 0.0) + dollars
        self.by_pricing[pricing] = self.by_pricing.get(pricing, 0.0) + dollars


def _hour_buckets(usage: Sequence[Usage], horizon: float) -> list[list[tuple[int, float]]]:
    """Per clock hour of ``[0, horizon]``: ``(usage index, seconds)`` of every entry running in it."""
    n_hours = max(0, math.ceil(horizon / _HOUR - 1e-9))
    buckets: list[list[tuple[int, float]]] = [[] for _ in range(n_hours)]
    for i, u in enumerate(usage):
        if u.end <= u.start:
            continue
        h = int(u.start // _HOUR)
        while h < n_hours and h * _HOUR < u.end:
            seconds = min(u.end, (h + 1) * _HOUR, horizon) - max(u.start, h * _HOUR)
            if seconds > 0:
                buckets[h].append((i, seconds))
            h += 1
    return buckets


def _hour_items(bucket: Sequence[tuple[int, float]], usage: Sequence[Usage], spec: BillingProfileSpec,
                prices: PriceBook, ledger: _Ledger) -> list[_Item]:
    """One hour's on-demand usage, left for the commitments; spot, reservations and fees billed now."""
    items: list[_Item] = []
    for i, seconds in bucket:
        u = usage[i]
        ledger.node_seconds[i] += seconds
        od = prices.on_demand(u.instance_type)
        it = _Item(u, i, seconds, seconds, od if od is not None else u.list_price)
        if u.capacity_type not in ("spot", "reserved"):
            items.append(it)
        elif u.capacity_type == "spot":
            spot = prices.spot(u.instance_type, u.zone)
            ledger.add(it, "spot", seconds, seconds / _HOUR * (spot if spot is not None else u.list_price)
                       * (1.0 - spec.spot_discount))
        else:
            ledger.add(it, "capacity-reservation", seconds, seconds / _HOUR * u.list_price)
        fee = sum((f.per_node_hour or 0.0) + (f.per_vcpu_hour or 0.0) * u.vcpus for f in spec.node_fees)
        if fee:
            ledger.fee(i, seconds / _HOUR * fee)
    return items


def _bill_hour(h: int, window: float, items: list[_Item], plan: _Plan, spec: BillingProfileSpec,
               prices: PriceBook, region: str | None, ledger: _Ledger) -> None:
    """Hour ``h``'s on-demand usage through the commitments in AWS's order, the rest on demand."""
    for ris, apply in ((plan.zonal, _apply_zonal), (plan.regional, _apply_regional)):
        for ri in ris:
            c = plan.commitments[ri.label]
            used = c.used
            c.committed += ri.count * _ri_price(ri, prices) * window / _HOUR
            apply(ri, c, items, window, prices, ledger.add)
            c.unused_by_hour[h] = ri.count * _ri_price(ri, prices) * window / _HOUR - (c.used - used)
    for sps, pricing in ((plan.instance_sps, "ec2-instance-savings-plan"), (plan.compute_sps, "compute-savings-plan")):
        for sp in sps:
            c = plan.commitments[sp.name]
            used = c.used
            c.committed += sp.commitment * window / _HOUR
            _apply_savings_plan(sp, c, items, window, region, pricing, ledger.add)
            c.unused_by_hour[h] = sp.commitment * window / _HOUR - (c.used - used)
    for it in items:
        if it.remaining > _EPS:
            dollars = it.remaining / _HOUR * it.on_demand * (1.0 - spec.enterprise_discount)
            ledger.add(it, "on-demand", it.remaining, dollars)
    for c in plan.commitments.values():
        unused = c.unused_by_hour.get(h, 0.0)
        unused = unused if unused > 1e-9 else 0.0  # float residue of a used-up commitment
        c.unused_by_hour[h] = unused
        ledger.unused_total += unused


def _summary(usage: Sequence[Usage], horizon: float, name: str, plan: _Plan, ledger: _Ledger) -> dict[str, Any]:
    """The totals, the groups, the commitments' use and the per-hour series of ``cost.billed``."""
    groups: dict[str, dict[str, float]] = {"by_nodepool": {}, "by_family": {}, "by_generation": {},
                                           "by_capacity_type": {}}
    by_node: dict[str, dict[str, float]] = {}
    for i, u in enumerate(usage):
        for group, key in (("by_nodepool", u.nodepool), ("by_family", u.fam), ("by_generation", u.generation),
                           ("by_capacity_type", u.capacity_type)):
            groups[group][key] = groups[group].get(key, 0.0) + ledger.node_dollars[i]
        entry = by_node.setdefault(u.node, {"node_hours": 0.0, "dollars": 0.0})
        entry["node_hours"] += ledger.node_seconds[i] / _HOUR
        entry["dollars"] += ledger.node_dollars[i]
    per_hour: list[list[float]] = []
    for h, value in enumerate(ledger.hourly):
        v = _r(value)
        if not per_hour or per_hour[-1][1] != v:
            per_hour.append([h * _HOUR, v])
    total = ledger.total
    out: dict[str, Any] = {
        "modelled": True,
        "profile": name,
        "total": _r(total),
        "usage": _r(ledger.usage_total),
        "fees": _r(ledger.fees_total),
        "unused_commitment": _r(ledger.unused_total),
        "effective_per_hour": _r(total / horizon * _HOUR) if horizon > 0 else 0.0,
    }
    for group, values in groups.items():
        out[group] = {k: _r(v) for k, v in sorted(values.items())}
    out["by_pricing"] = {k: _r(ledger.by_pricing[k]) for k in PRICINGS if k in ledger.by_pricing}
    out["commitments"] = {c.name: {"kind": c.kind, "committed": _r(c.committed), "used": _r(c.used),
                                   "unused": _r(sum(c.unused_by_hour.values())),
                                   "utilization": _r(c.used / c.committed) if c.committed > 0 else 0.0,
                                   "covered_node_hours": _r(c.covered_seconds / _HOUR)}
                          for c in plan.commitments.values()}
    out["by_nodeclaim"] = {k: {"node_hours": _r(v["node_hours"]), "dollars": _r(v["dollars"])}
                           for k, v in by_node.items()}
    out["per_hour"] = per_hour
    return out


def _notes(usage: Sequence[Usage], plan: _Plan) -> list[str]:
    notes = ["modelled: Reserved Instances, Savings Plans and discounts as the BillingProfile gives them, "
             "applied hour by hour in AWS's documented order (docs/guides/billing.md)"]
    if any(u.capacity_type == "reserved" for u in usage):
        notes.append("nodes in capacity reservations are billed at Karpenter's reserved price; the reservations' "
                     "own bill is cost.capacity_reservations, without the profile's discounts")
    for sp in plan.compute_sps:
        missing = sorted({u.fam for u in usage if u.capacity_type == "on-demand" and sp.rate(u.instance_type) is None})
        if missing:
            notes.append(f"Compute Savings Plan {sp.name} has no rate for {', '.join(missing)}: that usage was "
                         "not covered by it")
    return notes


def billed_cost(usage: Sequence[Usage], horizon: float, profile: BillingProfile | BillingProfileSpec,
                prices: PriceBook, region: str | None = None) -> dict[str, Any]:
    """The document's ``cost.billed``: ``usage`` billed under ``profile`` over ``[0, horizon]``
    (see the module docstring). Every number in it is modelled."""
    spec = profile.spec if isinstance(profile, BillingProfile) else profile
    name = profile.metadata.name if isinstance(profile, BillingProfile) else ""
    plan = _Plan(spec)
    buckets = _hour_buckets(usage, horizon)
    ledger = _Ledger(len(usage))
    for h, bucket in enumerate(buckets):
        window = min((h + 1) * _HOUR, horizon) - h * _HOUR
        before = ledger.total
        items = _hour_items(bucket, usage, spec, prices, ledger)
        _bill_hour(h, window, items, plan, spec, prices, region, ledger)
        ledger.hourly.append((ledger.total - before) / window * _HOUR if window > 0 else 0.0)
    if ledger.unused_total:
        ledger.by_pricing["unused-commitment"] = ledger.unused_total
    out = _summary(usage, horizon, name, plan, ledger)
    out["notes"] = _notes(usage, plan)
    found = _misalignments(usage, spec, prices, plan.commitments, ledger.node_dollars, ledger.node_pricing,
                           ledger.node_seconds, len(buckets))
    for m in found:  # the overlays (by name) that teach Karpenter what this entry's discount does
        m["overlays"] = [o["metadata"]["name"] for o in aligning_overlays(spec, {m["via"]}, prices)]
    out["misalignments"] = found
    out["overlays"] = aligning_overlays(spec, {m["via"] for m in found}, prices)
    return out


# -- where the list-price choice is not the cheapest on the bill ------------------------------------

def _bill_rate(instance_type: str, capacity_type: str, zone: str, spec: BillingProfileSpec, prices: PriceBook,
               open_commitments: set[str], windows: bool = False) -> tuple[float, str] | None:
    """What one more hour of ``instance_type`` would cost on the bill, and through what: the best
    commitment with headroom (``open_commitments``) or the discounted list price."""
    if capacity_type == "spot":
        spot = prices.spot(instance_type, zone)
        return None if spot is None else (spot * (1.0 - spec.spot_discount), "spot-discount")
    if capacity_type != "on-demand":
        return None
    od = prices.on_demand(instance_type)
    if od is None:
        return None
    best = (od * (1.0 - spec.enterprise_discount), "enterprise-discount")
    fam = family_of_type(instance_type)
    for ri in spec.reserved_instances:
        if ri.label not in open_commitments:
            continue
        if ri.zone is not None:
            if ri.instance_type != instance_type or ri.zone != zone:
                continue
            rate = _ri_price(ri, prices)
        else:
            f, ri_f = size_factor(instance_type), size_factor(ri.instance_type)
            if ri.instance_type == instance_type:
                rate = _ri_price(ri, prices)
            elif f is None or ri_f is None or windows or family_of_type(ri.instance_type) != fam:
                continue
            else:
                rate = _ri_price(ri, prices) / ri_f * f
        best = min(best, (rate, ri.label))
    for sp in spec.savings_plans:
        if sp.name not in open_commitments or (sp.type == "EC2Instance" and sp.family != fam):
            continue
        r = sp.rate(instance_type)
        if r is not None:
            best = min(best, (od * (1.0 - r), sp.name))
    return best


def _misalignments(usage: Sequence[Usage], spec: BillingProfileSpec, prices: PriceBook,
                  commitments: Mapping[str, Any], node_dollars: Sequence[float],
                  node_pricing: Sequence[Mapping[str, float]], node_seconds: Sequence[float],
                  n_hours: int) -> list[dict[str, Any]]:
    """Where Karpenter's list-price choice is not the cheapest on the bill: a NodeClaim whose
    allowed types include one that lists at a higher price but bills lower (a commitment with
    unused headroom during the node's life, or a discount), grouped by NodePool, launched and
    cheaper offering; then every commitment left partly unused."""
    groups: dict[tuple[str, str, str, str, str], dict[str, Any]] = {}
    for i, u in enumerate(usage):
        if node_seconds[i] <= 0 or u.capacity_type not in ("on-demand", "spot") or not u.candidates:
            continue
        first, last = int(u.start // _HOUR), min(n_hours, math.ceil(u.end / _HOUR))
        open_now = {name for name, c in commitments.items()
                    if any(c.unused_by_hour.get(h, 0.0) > 1e-9 for h in range(first, last))}
        usage_dollars = node_dollars[i] - node_pricing[i].get("fees", 0.0)
        billed = usage_dollars / (node_seconds[i] / _HOUR)
        launched_list = prices.on_demand(u.instance_type) if u.capacity_type == "on-demand" else \
            prices.spot(u.instance_type, u.zone)
        launched_list = u.list_price if launched_list is None else launched_list
        best: tuple[float, str, str, str, float] | None = None
        capacity_types = u.capacity_candidates or (u.capacity_type,)
        for t in u.candidates:
            for ct in capacity_types:
                if (t, ct) == (u.instance_type, u.capacity_type):
                    continue
                quote = _bill_rate(t, ct, u.zone, spec, prices, open_now, u.windows)
                if quote is None:
                    continue
                listed = prices.on_demand(t) if ct == "on-demand" else prices.spot(t, u.zone)
                if listed is None or listed < launched_list:
                    continue  # cheaper on list as well: not a ranking the bill reverses
                if quote[0] < billed - 1e-9 and (best is None or (quote[0], t, ct) < (best[0], best[2], best[3])):
                    best = (quote[0], quote[1], t, ct, listed)
        if best is None:
            continue
        rate, via, t, ct, listed = best
        key = (u.nodepool, u.instance_type, u.capacity_type, t, ct)
        g = groups.setdefault(key, {
            "kind": "cheaper-on-bill", "nodepool": u.nodepool, "nodeclaims": [],
            "launched": {"instance_type": u.instance_type, "capacity_type": u.capacity_type,
                         "list_price": _r(launched_list), "billed_per_hour": _r(billed)},
            "cheaper_on_bill": {"instance_type": t, "capacity_type": ct, "list_price": _r(listed),
                                "billed_per_hour": _r(rate)},
            "via": via, "node_hours": 0.0, "overspend": 0.0})
        if u.node not in g["nodeclaims"]:
            g["nodeclaims"].append(u.node)
        hours = node_seconds[i] / _HOUR
        g["node_hours"] += hours
        g["overspend"] += (billed - rate) * hours
    out = []
    for g in groups.values():
        g["node_hours"] = _r(g["node_hours"])
        g["overspend"] = _r(g["overspend"])
        out.append(g)
    out.sort(key=lambda g: (-g["overspend"], g["nodepool"], g["launched"]["instance_type"]))
    for name, c in commitments.items():
        unused = sum(c.unused_by_hour.values())
        if unused > 1e-9:
            out.append({"kind": "unused-commitment", "commitment": name, "commitment_kind": c.kind,
                        "unused": _r(unused), "utilization": _r(c.used / c.committed) if c.committed > 0 else 0.0,
                        "via": name})
    return out


def _object_name(text: str) -> str:
    """``text`` as a Kubernetes object name (RFC 1123 subdomain: lowercase alphanumerics, ``-``, ``.``)."""
    name = re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9.-]+", "-", text.lower())).strip("-.")
    return name[:253].rstrip("-.") or "billing"


def _overlay(name: str, requirements: list[dict[str, Any]], adjustment: float, weight: int) -> dict[str, Any]:
    return {"apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay",
            "metadata": {"name": _object_name(name)},
            "spec": {"requirements": requirements, "priceAdjustment": f"-{_pct(adjustment)}", "weight": weight}}


def _req(key: str, values: Iterable[str]) -> dict[str, Any]:
    return {"key": key, "operator": "In", "values": sorted(values)}


def aligning_overlays(spec: BillingProfileSpec, names: set[str], prices: PriceBook) -> list[dict[str, Any]]:
    """NodeOverlays (``karpenter.sh/v1alpha1``, ``priceAdjustment``) that teach Karpenter the bill
    of each discount or commitment in ``names`` (``enterprise-discount``, ``spot-discount``, a
    commitment's name). Weights follow AWS's order (a later layer wins where overlays overlap):
    10 discounts, 20/21 Compute SP family/type, 30/31 EC2 Instance SP family/type, 40 regional RI,
    50 zonal RI. Karpenter cannot count: the overlay prices every such offering as covered, beyond
    the commitment."""
    od = _req(_LABEL_CAPACITY_TYPE, ["on-demand"])
    out: list[dict[str, Any]] = []
    if "enterprise-discount" in names and spec.enterprise_discount > 0:
        out.append(_overlay("billing-enterprise-discount", [od], spec.enterprise_discount, 10))
    if "spot-discount" in names and spec.spot_discount > 0:
        out.append(_overlay("billing-spot-discount", [_req(_LABEL_CAPACITY_TYPE, ["spot"])], spec.spot_discount, 10))
    for sp in spec.savings_plans:
        if sp.name not in names:
            continue
        base = 30 if sp.type == "EC2Instance" else 20
        by_rate: dict[tuple[bool, float], list[str]] = {}
        for key, rate in sp.rates.items():
            by_rate.setdefault(("." in key, rate), []).append(key)
        for (is_type, rate), keys in sorted(by_rate.items()):
            label = _LABEL_INSTANCE_TYPE if is_type else _LABEL_FAMILY
            suffix = "types" if is_type else "families"
            out.append(_overlay(f"billing-{sp.name}-{suffix}-{_pct(rate)[:-1].replace('.', '-')}",
                                [_req(label, keys), od], rate, base + (1 if is_type else 0)))
    for ri in spec.reserved_instances:
        if ri.label not in names:
            continue
        if ri.zone is not None:
            reqs = [_req(_LABEL_INSTANCE_TYPE, [ri.instance_type]), _req("topology.kubernetes.io/zone", [ri.zone]), od]
            out.append(_overlay(f"billing-{ri.label}", reqs, ri.discount, 50))
        else:
            reqs = [_req(_LABEL_FAMILY, [family_of_type(ri.instance_type)]), od]
            out.append(_overlay(f"billing-{ri.label}", reqs, ri.discount, 40))
    return out


def resolve_profile(billing: Any, manifests: Any, provider: Any, region: str | None) -> BillingProfile | None:
    """The run's BillingProfile: ``billing`` (a :class:`BillingProfile`, a path, YAML text or a
    dict -- ``karpy.simulate(billing=...)``, ``--billing``), else the one among the manifests, else
    None; checked against the provider's price table (:func:`check_profile`). A ``billing``
    argument wins over a profile in the manifests (a warning says so)."""
    from karpy.api.loader import ManifestError, load_manifests

    given = list(getattr(manifests, "billing_profiles", None) or ())
    profile: BillingProfile | None = given[0] if given else None
    if billing is not None:
        if isinstance(billing, BillingProfile):
            chosen = billing
        else:
            loaded = load_manifests(billing)
            if not loaded.billing_profiles:
                text = str(billing)
                where = text if not isinstance(billing, (dict, list)) and "\n" not in text else "<billing>"
                raise ManifestError(where, None, "", "no karpy.io/v1alpha1 BillingProfile found")
            chosen = loaded.billing_profiles[0]
        if profile is not None and hasattr(manifests, "warnings"):
            manifests.warnings.append(f"BillingProfile {chosen.metadata.name!r} given as billing= replaces "
                                      f"{profile.metadata.name!r} from the manifests")
        profile = chosen
    if profile is not None:
        check_profile(profile, price_book_of(provider), region)
    return profile
