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
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = ["FAMILY_LABEL", "GENERATION_LABEL", "cost_integral", "family_of", "generation_of"]

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


def cost_integral(launches: Sequence[Any], horizon: float) -> dict[str, Any]:
    """The document's ``cost`` key for ``launches`` (``karpy.sim.simulation.LaunchRecord``) over
    ``[0, horizon]`` seconds (see the module docstring)."""
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
        hours = (end - start) / 3600.0
        dollars = price * hours
        total += dollars
        hours_total += hours
        by_claim[rec.name] = {"node_hours": _r(hours), "dollars": _r(dollars), "price": _r(price)}
        for group, key in (("by_nodepool", rec.nodepool), ("by_family", family_of(rec)),
                           ("by_generation", generation_of(rec)), ("by_capacity_type", rec.capacity_type or "unknown")):
            groups[group][key] = groups[group].get(key, 0.0) + dollars
            hour_groups[group][key] = hour_groups[group].get(key, 0.0) + hours
        changes[start] = changes.get(start, 0.0) + price
        if rec.deleted_at is not None and rec.deleted_at <= horizon:
            changes[end] = changes.get(end, 0.0) - price
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
    return out
