"""The cost integral of a run: node-hours and dollars from launch to deletion (or the horizon).

Each launched NodeClaim costs ``price × (end − launched_at) / 3600`` where ``price`` is the $/h of
the offering it launched on (``nodeclaims[].price``), ``launched_at`` the virtual second of its
launch and ``end`` its ``deleted_at`` or, while alive, the horizon (the end of the run). A NodeClaim
whose launch failed costs nothing. Sums are grouped by NodePool, instance family, generation and
capacity type; ``per_hour`` is the $/h step series ``[[t, $/h], ...]`` (one point at 0 and one at
every instant the running price changed). Dollars are rounded to 6 decimals, hours to 6.

Family and generation are read from the node labels ``karpenter.k8s.aws/instance-family`` /
``-generation`` when the provider sets them, else derived from the instance-type name
(``c7i.large`` -> family ``c7i``; generation: the first digits of the family); ``"unknown"`` when
neither applies. A price that is modelled (the AWS provider's spot model) is as modelled here as in
``nodeclaims[].price`` — ``prices.source`` says which table and model the run used.

A NodeClaim whose price changed during its life (``LaunchRecord.price_history``: a reserved node
demoted to on-demand when its reservation ended) is integrated step by step, each step counted
under the capacity type it had then.

Capacity reservations (``capacity_reservations``, only when the cloud provider bills them: its
``reservation_costs(start, end)``): what each reservation costs over the run, used or not, with the
unused share — the AWS provider bills an ODCR at the on-demand rate for every reserved instance
while it is provisioned and a capacity block up front (``modelled`` when no price was given).
Instances running in a reservation are priced at Karpenter's reserved offering price (near 0) in
the node integral, so ``total_with_reservations`` = ``total`` + the reservations' dollars counts
each instance-hour once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["FAMILY_LABEL", "GENERATION_LABEL", "cost_integral", "family_of", "generation_of", "reservation_block"]

FAMILY_LABEL = "karpenter.k8s.aws/instance-family"
GENERATION_LABEL = "karpenter.k8s.aws/instance-generation"
_GEN_RE = re.compile(r"^[a-z]+(\d+)")


def _labels(record: Any) -> dict[str, str]:
    launched = getattr(record, "launched", None)
    return dict(getattr(getattr(launched, "metadata", None), "labels", None) or {})


def family_of(record: Any) -> str:
    fam = _labels(record).get(FAMILY_LABEL)
    if fam:
        return fam
    it = record.instance_type or ""
    return it.split(".", 1)[0] if "." in it else "unknown"


def generation_of(record: Any) -> str:
    gen = _labels(record).get(GENERATION_LABEL)
    if gen:
        return gen
    m = _GEN_RE.match(family_of(record))
    return m.group(1) if m else "unknown"


def _r(x: float) -> float:
    return round(x, 6)


def _steps(rec: Any) -> list[tuple[float, float, str]]:
    """(from, $/h, capacity type) of a launch record's life."""
    history = getattr(rec, "price_history", None)
    if history:
        return [(float(t), float(p or 0.0), c or "unknown") for t, p, c in history]
    return [(rec.created_at, float(rec.price or 0.0), rec.capacity_type or "unknown")]


def reservation_block(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``cost.capacity_reservations`` block of a provider's reservation bill rows."""
    by_id: dict[str, Any] = {}
    total = unused = 0.0
    for row in rows:
        entry = {k: (_r(v) if isinstance(v, float) else v) for k, v in row.items() if k != "id"}
        by_id[str(row["id"])] = entry
        total += float(row["dollars"])
        unused += float(row["unused_dollars"])
    return {"total": _r(total), "unused": _r(unused), "by_reservation": by_id}


def cost_integral(launches: Sequence[Any], horizon: float,
                  reservations: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The document's ``cost`` key for ``launches`` (``karpy.sim.simulation.LaunchRecord``) over
    ``[0, horizon]`` seconds (see the module docstring); ``reservations``: the provider's bill rows
    (``capacity_reservations`` and ``total_with_reservations`` are added when given)."""
    groups: dict[str, dict[str, float]] = {"by_nodepool": {}, "by_family": {}, "by_generation": {},
                                           "by_capacity_type": {}}
    hour_groups: dict[str, dict[str, float]] = {k: {} for k in groups}
    by_claim: dict[str, dict[str, float]] = {}
    changes: dict[float, float] = {}
    total = hours_total = 0.0
    for rec in launches:
        if rec.launched is None:
            continue
        price = rec.price or 0.0
        start = rec.created_at
        end = rec.deleted_at if rec.deleted_at is not None else horizon
        end = max(start, min(end, horizon))
        steps = _steps(rec)
        claim_hours = claim_dollars = 0.0
        for i, (t, step_price, capacity_type) in enumerate(steps):
            a = max(start, min(t, end))
            b = max(a, min(steps[i + 1][0], end)) if i + 1 < len(steps) else end
            hours = (b - a) / 3600.0
            dollars = step_price * hours
            claim_hours += hours
            claim_dollars += dollars
            for group, key in (("by_nodepool", rec.nodepool), ("by_family", family_of(rec)),
                               ("by_generation", generation_of(rec)), ("by_capacity_type", capacity_type)):
                groups[group][key] = groups[group].get(key, 0.0) + dollars
                hour_groups[group][key] = hour_groups[group].get(key, 0.0) + hours
            if i == 0 or t <= horizon:
                changes[a] = changes.get(a, 0.0) + step_price
            if i + 1 < len(steps):
                if steps[i + 1][0] <= horizon:
                    changes[b] = changes.get(b, 0.0) - step_price
            elif rec.deleted_at is not None and rec.deleted_at <= horizon:
                changes[end] = changes.get(end, 0.0) - step_price
        total += claim_dollars
        hours_total += claim_hours
        by_claim[rec.name] = {"node_hours": _r(claim_hours), "dollars": _r(claim_dollars), "price": _r(price)}
    per_hour: list[list[float]] = [[0.0, 0.0]]
    running = 0.0
    for t in sorted(changes):
        running += changes[t]
        value = _r(max(running, 0.0))
        if per_hour and per_hour[-1][0] == t:
            per_hour[-1][1] = value
        elif per_hour[-1][1] != value:
            per_hour.append([t, value])
    out: dict[str, Any] = {"total": _r(total)}
    for group, values in groups.items():
        out[group] = {k: _r(v) for k, v in sorted(values.items())}
    out["node_hours"] = {"total": _r(hours_total),
                         **{g: {k: _r(v) for k, v in sorted(vals.items())} for g, vals in hour_groups.items()}}
    out["by_nodeclaim"] = by_claim
    out["per_hour"] = per_hour
    out["horizon"] = horizon
    if reservations is not None:
        block = reservation_block(reservations)
        out["capacity_reservations"] = block
        out["total_with_reservations"] = _r(total + block["total"])
    return out
