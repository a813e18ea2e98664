"""Preference relaxation.

Mirrors pkg/controllers/provisioning/scheduling/preferences.go (Preferences.Relax and the
relaxation steps, in this exact order): remove the first required node-affinity term (never the
last one), the heaviest preferred pod-affinity term, the heaviest preferred pod-anti-affinity term,
the heaviest preferred node-affinity term, the first ScheduleAnyway topology spread constraint
(swapped with the last and truncated), and -- only when some NodePool has a PreferNoSchedule taint
-- a toleration for PreferNoSchedule taints. Each ``relax`` applies ONE step and mutates the pod
(callers pass a copy). Heaviest = after a stable sort by weight descending (sort.SliceStable).
"""

from __future__ import annotations

from typing import Any

from karpy.api.pod import Pod, Toleration

__all__ = ["Preferences", "PNS_TOLERATION", "relaxable_copy", "changes_node_requirements", "describe_relaxations"]

PNS_TOLERATION = {"operator": "Exists", "effect": "PreferNoSchedule"}


def _match_toleration(t: Any) -> bool:
    """corev1 Toleration.MatchToleration against {Exists, PreferNoSchedule} (key, operator, value,
    effect all equal; an unset operator counts as Equal)."""
    return (
        (t.key or "") == ""
        and (t.operator or "Equal") == "Exists"
        and (t.value or "") == ""
        and (t.effect or "") == "PreferNoSchedule"
    )


class Preferences:
    """preferences.go Preferences."""

    __slots__ = ("tolerate_prefer_no_schedule",)

    def __init__(self, tolerate_prefer_no_schedule: bool = False) -> None:
        self.tolerate_prefer_no_schedule = tolerate_prefer_no_schedule

    def relax(self, pod: Pod) -> str | None:
        """preferences.go Relax: apply the first applicable relaxation; returns its reason or None."""
        for fn in (
            remove_required_node_affinity_term,
            remove_preferred_pod_affinity_term,
            remove_preferred_pod_anti_affinity_term,
            remove_preferred_node_affinity_term,
            remove_topology_spread_schedule_anyway,
        ):
            reason = fn(pod)
            if reason is not None:
                return reason
        if self.tolerate_prefer_no_schedule:
            return tolerate_prefer_no_schedule_taints(pod)
        return None


def _heaviest_removed(terms: list[Any], path: str) -> tuple[list[Any], str]:
    ordered = sorted(terms, key=lambda t: -t.weight)  # stable
    return ordered[1:], f"removing: {path}[0]"


def _remove_heaviest_preferred(pod: Pod, attr: str, path: str) -> str | None:
    """Drop the heaviest preferred term of ``spec.affinity.<attr>`` (stable by weight), if any."""
    aff = pod.spec.affinity
    part = getattr(aff, attr, None) if aff is not None else None
    if part is None:
        return None
    terms = part.preferred_during_scheduling_ignored_during_execution
    if not terms:
        return None
    rest, reason = _heaviest_removed(terms, path)
    part.preferred_during_scheduling_ignored_during_execution = rest
    return reason


def remove_preferred_node_affinity_term(pod: Pod) -> str | None:
    return _remove_heaviest_preferred(
        pod, "node_affinity", "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution")


def remove_required_node_affinity_term(pod: Pod) -> str | None:
    aff = pod.spec.affinity
    if aff is None or aff.node_affinity is None:
        return None
    req = aff.node_affinity.required_during_scheduling_ignored_during_execution
    if req is None or len(req.node_selector_terms) <= 1:
        return None
    req.node_selector_terms = req.node_selector_terms[1:]
    return "removing: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"


def remove_topology_spread_schedule_anyway(pod: Pod) -> str | None:
    tscs = pod.spec.topology_spread_constraints
    for i, tsc in enumerate(tscs):
        if tsc.when_unsatisfiable == "ScheduleAnyway":
            new = list(tscs)
            new[i] = new[-1]
            new.pop()
            pod.spec.topology_spread_constraints = new
            return "removing: spec.topologySpreadConstraints"
    return None


def remove_preferred_pod_affinity_term(pod: Pod) -> str | None:
    return _remove_heaviest_preferred(
        pod, "pod_affinity", "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution")


def remove_preferred_pod_anti_affinity_term(pod: Pod) -> str | None:
    return _remove_heaviest_preferred(
        pod, "pod_anti_affinity", "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution")


def tolerate_prefer_no_schedule_taints(pod: Pod) -> str | None:
    for t in pod.spec.tolerations:
        if _match_toleration(t):
            return None
    pod.spec.tolerations = [*pod.spec.tolerations, Toleration(operator="Exists", effect="PreferNoSchedule")]
    return "adding: toleration for PreferNoSchedule taints"


def can_relax(pod: Pod, tolerate_prefer_no_schedule: bool) -> bool:
    """Whether ``Preferences.relax`` would change the pod (checked without mutating it)."""
    spec = pod.spec
    aff = spec.affinity
    if aff is not None:
        na = aff.node_affinity
        if na is not None:
            req = na.required_during_scheduling_ignored_during_execution
            if req is not None and len(req.node_selector_terms) > 1:
                return True
            if na.preferred_during_scheduling_ignored_during_execution:
                return True
        if aff.pod_affinity is not None and aff.pod_affinity.preferred_during_scheduling_ignored_during_execution:
            return True
        if aff.pod_anti_affinity is not None and aff.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution:
            return True
    for tsc in spec.topology_spread_constraints:
        if tsc.when_unsatisfiable == "ScheduleAnyway":
            return True
    if tolerate_prefer_no_schedule:
        return not any(_match_toleration(t) for t in spec.tolerations)
    return False


def relaxable_copy(pod: Pod) -> Any:
    """A copy of ``pod`` that ``Preferences.relax`` can mutate without touching ``pod``.

    Upstream relaxes a ``pod.DeepCopy()`` (scheduler.go Solve). Every relaxation step above only
    *reassigns* an attribute of one of: the pod, ``spec``, ``spec.affinity``,
    ``affinity.node_affinity``, its ``required_during_scheduling_ignored_during_execution``
    NodeSelector, ``affinity.pod_affinity`` or ``affinity.pod_anti_affinity`` (the new lists are
    always fresh; no list or term is mutated in place). Shallow-copying exactly those objects
    therefore isolates the original as a deep copy would, at a fraction of the cost (a pydantic
    deep copy of a pod dominated the relaxation path). Everything else (metadata, containers,
    terms) is shared, as it already is for the un-relaxed pods the scheduler places without
    copying; the scheduler treats pods as read-only.
    """
    spec = pod.spec.model_copy()
    aff = spec.affinity
    if aff is not None:
        aff = aff.model_copy()
        na = aff.node_affinity
        if na is not None:
            na = na.model_copy()
            req = na.required_during_scheduling_ignored_during_execution
            if req is not None:
                na.required_during_scheduling_ignored_during_execution = req.model_copy()
            aff.node_affinity = na
        if aff.pod_affinity is not None:
            aff.pod_affinity = aff.pod_affinity.model_copy()
        if aff.pod_anti_affinity is not None:
            aff.pod_anti_affinity = aff.pod_anti_affinity.model_copy()
        spec.affinity = aff
    out = pod.model_copy()
    out.spec = spec
    return out


def changes_node_requirements(reason: str | None) -> bool:
    """Whether the relaxation step that returned ``reason`` can change the pod's node
    requirements (``NewPodRequirements`` / ``NewStrictPodRequirements`` read only the node
    selector and node affinity): only the two node-affinity steps do."""
    return reason is not None and reason.startswith("removing: spec.affinity.nodeAffinity.")


# -- explain output (never on the hot path) ------------------------------------------------------
def _term_text(term: Any) -> str:
    """``key Op [values]`` of a NodeSelectorTerm's expressions, joined with `` and ``."""
    exprs = [f"{e.key} {e.operator} [{' '.join(e.values or ())}]".replace(" []", "")
             for e in (term.match_expressions or ())]
    return " and ".join(exprs) or "<empty term>"


def _selector_text(selector: Any) -> str:
    if selector is None:
        return "<none>"
    parts = [f"{k}={v}" for k, v in sorted((selector.match_labels or {}).items())]
    for e in selector.match_expressions or ():
        parts.append(f"{e.key} {e.operator} [{' '.join(e.values or ())}]".replace(" []", ""))
    return ",".join(parts) or "<everything>"


def _heaviest(terms: list[Any]) -> Any:
    return sorted(terms, key=lambda t: -t.weight)[0]  # stable, as _heaviest_removed


def _describe_step(pod: Any, reason: str) -> tuple[Any, str] | None:
    """(step function, name of what it will remove from ``pod``) for a ``Relax`` reason."""
    aff = pod.spec.affinity
    if reason.startswith("removing: spec.affinity.nodeAffinity.requiredDuringScheduling"):
        terms = aff.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms
        return remove_required_node_affinity_term, f"removed required node affinity term 0: {_term_text(terms[0])}"
    if reason.startswith("removing: spec.affinity.nodeAffinity.preferredDuringScheduling"):
        t = _heaviest(aff.node_affinity.preferred_during_scheduling_ignored_during_execution)
        return (remove_preferred_node_affinity_term,
                f"removed preferred node affinity term (weight {t.weight}): {_term_text(t.preference)}")
    for prefix, fn, what, holder in (
        ("removing: spec.affinity.podAffinity.", remove_preferred_pod_affinity_term, "pod affinity", "pod_affinity"),
        ("removing: spec.affinity.podAntiAffinity.", remove_preferred_pod_anti_affinity_term, "pod anti-affinity",
         "pod_anti_affinity"),
    ):
        if reason.startswith(prefix):
            t = _heaviest(getattr(aff, holder).preferred_during_scheduling_ignored_during_execution)
            term = t.pod_affinity_term
            return fn, (f"removed preferred {what} term (weight {t.weight}): topologyKey {term.topology_key}, "
                        f"selector {_selector_text(term.label_selector)}")
    if reason.startswith("removing: spec.topologySpreadConstraints"):
        tsc = next(c for c in pod.spec.topology_spread_constraints if c.when_unsatisfiable == "ScheduleAnyway")
        return (remove_topology_spread_schedule_anyway,
                f"removed ScheduleAnyway topology spread constraint: topologyKey {tsc.topology_key}, "
                f"maxSkew {tsc.max_skew}")
    if reason.startswith("adding: toleration for PreferNoSchedule"):
        return tolerate_prefer_no_schedule_taints, "added toleration for PreferNoSchedule taints"
    return None


def describe_relaxations(pod: Pod, reasons: list[str]) -> list[str]:
    """Name the relaxation steps ``reasons`` (what ``Preferences.relax`` returned, in order) with
    what each removed, e.g. ``removed preferred node affinity term (weight 100): zone In [a]``.

    For explain output: the scheduler records only the reason strings; this replays the same
    steps on a copy of the original ``pod`` (relaxation is deterministic). A reason that does not
    replay (e.g. the pod's spec changed since) is returned as is.
    """
    out: list[str] = []
    if not reasons:
        return out  # (no copy to replay on: explain asks for every pod, most never relaxed)
    p = relaxable_copy(pod)
    for reason in reasons:
        try:
            found = _describe_step(p, reason)
        except (AttributeError, IndexError, StopIteration, TypeError):
            found = None
        if found is None:
            out.append(str(reason))
            continue
        fn, text = found
        out.append(text if fn(p) == reason else str(reason))
    return out
