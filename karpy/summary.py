"""One run's outcome in a few values: what launched, at what cost, what stayed pending.

Read from the JSON document (docs/contract.md) of a :class:`karpy.result.Result` (or the
document itself). Shared by ``karpy.testing`` (assertions and the cookbook table), ``karpy compare``
(the side-by-side rows) and ``karpy sweep`` (one row per cell). Generations are parsed the way the
AWS provider's ``instanceTypeScheme`` does when the node label is missing (provider-aws
``pkg/providers/instancetype/types.go``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "LABEL_INSTANCE_FAMILY",
    "LABEL_INSTANCE_GENERATION",
    "LABEL_INSTANCE_TYPE",
    "Summary",
    "candidate_types",
    "failed_nodeclaims",
    "family_of",
    "fleet_types",
    "generation_of",
    "generation_sort_key",
    "horizon",
    "launched_nodeclaims",
    "outcome",
    "summarize",
]

LABEL_INSTANCE_GENERATION = "karpenter.k8s.aws/instance-generation"
LABEL_INSTANCE_FAMILY = "karpenter.k8s.aws/instance-family"
LABEL_INSTANCE_TYPE = "node.kubernetes.io/instance-type"
#: provider-aws instancetype/types.go instanceTypeScheme: family prefix, optional "-NNtb", generation
_TYPE_SCHEME = re.compile(r"^([a-z]+)(-[0-9]+tb)?([0-9]+)")


def _document(result: Any) -> dict[str, Any]:
    return result.to_document() if hasattr(result, "to_document") else dict(result)


def _deleted_names(result: Any) -> set[str]:
    """NodeClaims deleted by the end of the run: from the Result's records, or (for a bare document)
    those with a ``deleted_at`` time."""
    if isinstance(result, Mapping):
        return {nc["name"] for nc in (result.get("nodeclaims") or ()) if nc.get("deleted_at") is not None}
    return {r.name for r in getattr(result, "launches", ()) if getattr(r, "deleted", False)}


def family_of(instance_type: str | None) -> str | None:
    """``"c8i.2xlarge"`` -> ``"c8i"``."""
    return instance_type.split(".", 1)[0] if instance_type else None


def generation_of(nodeclaim_or_type: Mapping[str, Any] | str | None) -> str | None:
    """The instance generation: the NodeClaim's ``instance-generation`` label, else parsed from the
    type name the way provider-aws does (``c8i.large`` -> ``"8"``, ``u-6tb1.metal`` -> ``"1"``)."""
    if nodeclaim_or_type is None:
        return None
    if isinstance(nodeclaim_or_type, Mapping):
        label = (nodeclaim_or_type.get("labels") or {}).get(LABEL_INSTANCE_GENERATION)
        if label:
            return str(label)
        nodeclaim_or_type = nodeclaim_or_type.get("instance_type")
        if not nodeclaim_or_type:
            return None
    m = _TYPE_SCHEME.match(str(nodeclaim_or_type))
    return m.group(3) if m else None


def _family(nc: Mapping[str, Any]) -> str | None:
    return (nc.get("labels") or {}).get(LABEL_INSTANCE_FAMILY) or family_of(nc.get("instance_type"))


def launched_nodeclaims(result: Any) -> list[dict[str, Any]]:
    """The document's NodeClaims whose launch succeeded (and that were not deleted since)."""
    deleted = _deleted_names(result)
    return [nc for nc in _document(result)["nodeclaims"]
            if nc.get("instance_type") and nc.get("launched", True) and nc["name"] not in deleted]


def failed_nodeclaims(result: Any) -> list[dict[str, Any]]:
    """The document's NodeClaims whose launch failed."""
    return [nc for nc in _document(result)["nodeclaims"] if not nc.get("instance_type") or nc.get("launched") is False]


def candidate_types(nodeclaim: Mapping[str, Any]) -> list[str]:
    """The NodeClaim's ``node.kubernetes.io/instance-type In [...]`` values (the candidate list)."""
    for r in nodeclaim.get("requirements") or ():
        if r.get("key") == LABEL_INSTANCE_TYPE and r.get("operator") == "In":
            return list(r.get("values") or ())
    return []


def fleet_types(nodeclaim: Mapping[str, Any]) -> list[str]:
    """Distinct instance types of the CreateFleet overrides, in the order they were sent."""
    out: list[str] = []
    for o in ((nodeclaim.get("fleet") or {}).get("overrides") or ()):
        if o.get("instance_type") not in out:
            out.append(o["instance_type"])
    return out


@dataclass(frozen=True)
class Summary:
    """One line's worth of a run: what launched, at what cost, what stayed pending."""

    instance_types: tuple[str, ...]
    generations: tuple[str, ...]
    capacity_types: tuple[str, ...]
    nodepools: tuple[str, ...]
    cost_per_hour: float
    pending: int
    failed_launches: int
    allocation_strategies: tuple[str, ...]
    #: virtual seconds from the start to the creation of the last launched NodeClaim (None: none launched)
    last_launch_at: float | None = None
    #: launched NodeClaims still running at the end
    nodeclaims: int = 0
    #: (instance type, how many launched), in document order of first launch
    instance_type_counts: tuple[tuple[str, int], ...] = ()
    #: (generation, how many launched NodeClaims), generations in numeric order
    nodes_by_generation: tuple[tuple[str, int], ...] = ()


def _count(values: Iterable[str]) -> tuple[tuple[str, int], ...]:
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return tuple(counts.items())


def generation_sort_key(generation: str) -> tuple[int, str]:
    """Numeric order for generations ("7" < "8" < "10"); anything else after them, by text."""
    return (int(generation), "") if generation.isdigit() else (1 << 30, generation)


def summarize(result: Any, document: Mapping[str, Any] | None = None) -> Summary:
    """Summarise a result (used by the cookbook's ``make_table.py``, compare and sweep).

    ``document``: the result's document when the caller already built it (building it is not free).
    """
    doc = dict(document) if document is not None else _document(result)
    deleted = _deleted_names(result)
    launched = [nc for nc in doc["nodeclaims"]
                if nc.get("instance_type") and nc.get("launched", True) and nc["name"] not in deleted]
    failed = [nc for nc in doc["nodeclaims"] if not nc.get("instance_type") or nc.get("launched") is False]
    pending = sum(1 for p in doc["pods"].values() if p.get("phase") == "Pending")

    def distinct(values: Iterable[Any]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(str(v) for v in values if v is not None))

    return Summary(
        instance_types=distinct(nc["instance_type"] for nc in launched),
        generations=distinct(generation_of(nc) for nc in launched),
        capacity_types=distinct(nc.get("capacity_type") for nc in launched),
        nodepools=distinct(nc.get("nodepool") for nc in launched),
        cost_per_hour=float(doc.get("cost_per_hour") or 0.0),
        pending=pending,
        failed_launches=len(failed),
        allocation_strategies=distinct((nc.get("fleet") or {}).get("allocation_strategy") for nc in launched),
        last_launch_at=max((float(nc["created_at"]) for nc in launched if nc.get("created_at") is not None),
                           default=None),
        nodeclaims=len(launched),
        instance_type_counts=_count(str(nc["instance_type"]) for nc in launched),
        nodes_by_generation=tuple(sorted(_count(str(generation_of(nc)) for nc in launched),
                                         key=lambda kv: generation_sort_key(kv[0]))),
    )


def outcome(result: Any, document: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The outcome of one run as plain, JSON-ready values (one compare column, one sweep row).

    Keys: ``nodeclaims`` (launched, still running), ``instance_types`` ({type: count}),
    ``generations`` ({generation: NodeClaims}), ``capacity_types``, ``nodepools``,
    ``allocation_strategies`` (lists, document order), ``pending_pods``, ``failed_launches``,
    ``cost_per_hour``, ``last_launch_at``; and, from the document's ``cost`` key (the timeline's),
    ``horizon`` (seconds), ``cost_total`` ($ over the horizon) and ``node_hours_by_generation``; with
    a BillingProfile, ``billed_total``, ``billed_per_hour`` and ``unused_commitment`` (``cost.billed``).
    """
    doc = dict(document) if document is not None else _document(result)
    s = summarize(result, doc)
    out: dict[str, Any] = {
        "nodeclaims": s.nodeclaims,
        "instance_types": dict(s.instance_type_counts),
        "generations": dict(s.nodes_by_generation),
        "capacity_types": list(s.capacity_types),
        "nodepools": list(s.nodepools),
        "allocation_strategies": list(s.allocation_strategies),
        "pending_pods": s.pending,
        "failed_launches": s.failed_launches,
        "cost_per_hour": round(s.cost_per_hour, 6),
        "last_launch_at": s.last_launch_at,
    }
    out.update(horizon(doc))
    return out


def horizon(document: Mapping[str, Any]) -> dict[str, Any]:
    """``horizon`` (virtual seconds the run covered), ``cost_total`` ($ over it) and
    ``node_hours_by_generation`` from the document's ``cost`` key (:mod:`karpy.cost`; empty when
    the document has none)."""
    cost = document.get("cost")
    if not isinstance(cost, Mapping):
        return {}
    out: dict[str, Any] = {}
    if isinstance(cost.get("horizon"), (int, float)):
        out["horizon"] = float(cost["horizon"])
    if isinstance(cost.get("total"), (int, float)):
        out["cost_total"] = round(float(cost["total"]), 6)
    hours = (cost.get("node_hours") or {}).get("by_generation") if isinstance(cost.get("node_hours"), Mapping) \
        else None
    if isinstance(hours, Mapping):
        out["node_hours_by_generation"] = {str(g): round(float(h), 6) for g, h in
                                           sorted(hours.items(), key=lambda kv: generation_sort_key(str(kv[0])))}
    billed = cost.get("billed")
    if isinstance(billed, Mapping):  # a BillingProfile was given (karpy.billing; modelled)
        out["billed_total"] = billed.get("total")
        out["billed_per_hour"] = billed.get("effective_per_hour")
        out["unused_commitment"] = billed.get("unused_commitment")
    return out
