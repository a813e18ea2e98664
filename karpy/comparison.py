"""``karpy.comparison``: two or more NodePool designs over the same workload, side by side.

Each design runs through :func:`karpy.simulate` with the shared manifests and the same scenario
options (region, prices, unavailable, policies). The comparison document holds every run's own
document, each design's :func:`karpy.summary.outcome`, and a ``diff`` section against the first
design (the baseline)::

    {"kind": "Comparison", "baseline": "A", "designs": ["A", "B"],
     "runs": {"A": <document>, "B": <document>},
     "outcomes": {"A": {...}, "B": {...}},
     "warnings": {"A": [...], "B": [...]},                # each run's own warnings (what karpy skipped)
     "diff": {"fields": ["generations", ...],           # outcome keys that differ anywhere
              "designs": {"B": {"fields": {"generations": {"A": {"7": 1}, "B": {"8": 1}}, ...},
                                "pods": {"default/web-0": {"A": "c7i.2xlarge", "B": "c8i.2xlarge"}},
                                "changes": ["generation 7 -> 8", ...]}}}}

Design order is the caller's order; everything else is sorted, so the same inputs give the same
bytes. ``exit_code`` is 3 when any design leaves a pod pending, else 0 (as ``karpy simulate``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from karpy._errors import KarpyError
from karpy.report.compare import DOLLARS as _DOLLARS
from karpy.report.compare import OUTCOME_FIELDS, format_value
from karpy.result import EXIT_OK, EXIT_PENDING, Result
from karpy.summary import outcome

__all__ = ["Comparison", "CompareError", "OUTCOME_FIELDS", "RANK_BY", "compare", "diff_outcomes", "format_value",
           "ranking"]

#: what ``--rank-by`` ranks designs by: list prices (``cost_total`` over the horizon, else
#: ``cost_per_hour``) or the bill (``billed_total``: every design needs a BillingProfile)
RANK_BY = ("list", "billed")


def ranking(outcomes: Mapping[str, Mapping[str, Any]], by: str) -> dict[str, Any]:
    """``{"by", "key", "designs": [{"design", "cost"}]}``: the designs cheapest first (design order on
    ties). Raises :class:`CompareError` for an unknown ``by`` or a design without a bill."""
    if by not in RANK_BY:
        raise CompareError(f"--rank-by must be one of {', '.join(RANK_BY)} (got {by!r})")
    names = list(outcomes)
    if by == "billed":
        key = "billed_total"
        missing = [n for n in names if outcomes[n].get(key) is None]
        if missing:
            raise CompareError(f"--rank-by billed needs a karpy.io/v1alpha1 BillingProfile in every design (or in "
                               f"the shared manifests); {missing[0]!r} has none")
    else:
        key = "cost_total" if all(outcomes[n].get("cost_total") is not None for n in names) else "cost_per_hour"
    order = sorted(range(len(names)), key=lambda i: (float(outcomes[names[i]].get(key) or 0.0), i))
    return {"by": by, "key": key, "designs": [{"design": names[i], "cost": outcomes[names[i]].get(key)} for i in order]}


class CompareError(KarpyError, ValueError):
    """Bad arguments to :func:`compare` (fewer than two designs, duplicate or empty names)."""


def _as_list(manifests: Any) -> list[Any]:
    return list(manifests) if isinstance(manifests, (list, tuple)) else [manifests]


def _pod_places(document: Mapping[str, Any]) -> dict[str, str]:
    """pod -> instance type of its node (``Pending`` / ``Deleted`` / the node name for existing nodes)."""
    types = {nc["name"]: nc.get("instance_type") for nc in document.get("nodeclaims") or ()}
    out = {}
    for key, pod in (document.get("pods") or {}).items():
        if pod.get("phase") != "Running":
            out[key] = str(pod.get("phase"))
        else:
            out[key] = str(types.get(pod.get("node")) or pod.get("node"))
    return out


def _change(key: str, label: str, old: Any, new: Any) -> str:
    if key == "generations":
        return f"generation {format_value(key, old)} -> {format_value(key, new)}"
    if key in _DOLLARS and old is not None and new is not None:
        delta = float(new) - float(old)
        pct = f", {100.0 * delta / float(old):+.1f}%" if old else ""
        return f"{label} {format_value(key, old)} -> {format_value(key, new)} ({delta:+.5f}{pct})"
    return f"{label} {format_value(key, old)} -> {format_value(key, new)}"


def diff_outcomes(names: Sequence[str], outcomes: Mapping[str, Mapping[str, Any]],
                  documents: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The ``diff`` section: every design against the first (see the module docstring)."""
    base = names[0]
    labels = dict(OUTCOME_FIELDS)
    changed: set[str] = set()
    per_design: dict[str, Any] = {}
    base_places = _pod_places(documents[base])
    for name in names[1:]:
        fields: dict[str, Any] = {}
        changes: list[str] = []
        for key, label in OUTCOME_FIELDS:
            old, new = outcomes[base].get(key), outcomes[name].get(key)
            if old != new:
                fields[key] = {base: old, name: new}
                changes.append(_change(key, label, old, new))
                changed.add(key)
        places = _pod_places(documents[name])
        pods = {pod: {base: base_places.get(pod, "-"), name: places.get(pod, "-")}
                for pod in sorted(set(base_places) | set(places))
                if base_places.get(pod) != places.get(pod)}
        if pods:
            changes.append(f"{len(pods)} pod(s) placed differently")
        per_design[name] = {"fields": fields, "pods": pods, "changes": changes}
    return {"baseline": base, "fields": [k for k, _ in OUTCOME_FIELDS if k in changed], "designs": per_design,
            "labels": {k: labels[k] for k, _ in OUTCOME_FIELDS if k in changed}}


@dataclass(frozen=True)
class Comparison:
    """The runs of :func:`compare`, in design order, and their diff."""

    names: tuple[str, ...]
    results: Mapping[str, Result]
    options: Mapping[str, Any]

    @cached_property
    def _documents(self) -> dict[str, dict[str, Any]]:
        return {n: self.results[n].to_document() for n in self.names}

    def documents(self) -> dict[str, dict[str, Any]]:
        """Each design's JSON document (``karpy simulate -o json``), in design order."""
        return dict(self._documents)

    @property
    def exit_code(self) -> int:
        """3 when any design leaves a pod pending, else 0."""
        return EXIT_PENDING if any(self.results[n].exit_code == EXIT_PENDING for n in self.names) else EXIT_OK

    def to_document(self, rank_by: str | None = None) -> dict[str, Any]:
        """The comparison as one JSON document; ``rank_by`` (``list`` / ``billed``, :data:`RANK_BY`)
        adds ``ranking`` (:func:`ranking`)."""
        docs = self.documents()
        outcomes = {n: outcome(self.results[n], docs[n]) for n in self.names}
        out = {
            "kind": "Comparison",
            "baseline": self.names[0],
            "designs": list(self.names),
            "options": dict(self.options),
            "outcomes": outcomes,
            "diff": diff_outcomes(self.names, outcomes, docs),
        }
        if rank_by is not None:
            out["ranking"] = ranking(outcomes, rank_by)
        out["warnings"] = {n: list(docs[n].get("warnings") or ()) for n in self.names}
        out["runs"] = docs
        return out

    @property
    def diff(self) -> dict[str, Any]:
        diff: dict[str, Any] = self.to_document()["diff"]
        return diff

    def to_json(self, indent: int | None = 2, rank_by: str | None = None) -> str:
        return json.dumps(self.to_document(rank_by), indent=indent, ensure_ascii=False) + "\n"


def compare(designs: Mapping[str, Any], shared: Any = (), **scenario_options: Any) -> Comparison:
    """Run each design (its manifests plus ``shared``) with the same ``scenario_options`` (any
    keyword of :func:`karpy.simulate`: ``region``, ``prices``, ``unavailable``, policies,
    ``cloud_provider``) and return the :class:`Comparison`. The first design is the baseline.

    Raises :class:`CompareError` for fewer than two designs or an empty name; bad manifests raise
    what :func:`karpy.simulate` raises (``ManifestError``, ``ValueError``).
    """
    from karpy.simulator import simulate

    names = tuple(designs)
    if len(names) < 2:
        raise CompareError(f"compare needs at least two designs, got {len(names)}")
    for n in names:
        if not isinstance(n, str) or not n.strip():
            raise CompareError(f"design names must be non-empty strings, got {n!r}")
    shared_list = _as_list(shared) if shared is not None else []
    results = {n: simulate([*_as_list(designs[n]), *shared_list], **scenario_options) for n in names}
    shown = {k: (list(v) if isinstance(v, (list, tuple)) else v) for k, v in sorted(scenario_options.items())
             if isinstance(v, (str, int, float, bool, list, tuple, type(None)))}
    return Comparison(names=names, results=results, options=shown)

