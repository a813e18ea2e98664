"""kube-scheduler semantics of tolerations and node selectors.

Mirrors pkg/apis/core/v1/helper (ToleratesTaint, FindMatchingUntoleratedTaint) and
staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go
(NodeSelector.Match, RequiredNodeAffinity, PreferredSchedulingTerms). These differ from Karpenter's
Requirements (e.g. an empty term matches nothing, Gt/Lt are strict int64 comparisons).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"
PREFER_NO_SCHEDULE = "PreferNoSchedule"


def toleration_tolerates_taint(tol: Any, taint: Any) -> bool:
    """v1.Toleration.ToleratesTaint."""
    if tol.effect and tol.effect != taint.effect:
        return False
    if tol.key and tol.key != taint.key:
        return False
    op = tol.operator or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        return (tol.value or "") == (taint.value or "")
    return False


def tolerations_tolerate_taint(tolerations: list[Any], taint: Any) -> bool:
    return any(toleration_tolerates_taint(t, taint) for t in tolerations)


def find_matching_untolerated_taint(taints: list[Any], tolerations: list[Any],
                                    pred: Callable[[Any], bool]) -> Optional[Any]:
    """v1helper.FindMatchingUntoleratedTaint: first taint passing ``pred`` not tolerated."""
    for t in taints:
        if pred(t) and not tolerations_tolerate_taint(tolerations, t):
            return t
    return None


def _parse_int(s: str) -> Optional[int]:
    try:
        return int(s, 10)
    except (TypeError, ValueError):
        return None


def requirement_matches(req: Any, labels: dict[str, str]) -> bool:
    """nodeSelectorRequirementsAsSelector + labels.Requirement.Matches for one expression.

    An invalid requirement (In/NotIn without values, Exists with values, Gt/Lt not one int) makes
    the whole term fail (the Go code returns an error and treats the term as not matching)."""
    op = req.operator
    values = list(req.values or [])
    key = req.key
    if op in ("In", "NotIn"):
        if not values:
            raise ValueError("values required")
        if op == "In":
            return key in labels and labels[key] in values
        return key not in labels or labels[key] not in values
    if op in ("Exists", "DoesNotExist"):
        if values:
            raise ValueError("no values allowed")
        return (key in labels) == bool(op == "Exists")
    if op in ("Gt", "Lt"):
        if len(values) != 1 or _parse_int(values[0]) is None:
            raise ValueError("one int value required")
        if key not in labels:
            return False
        lv = _parse_int(labels[key])
        if lv is None:
            return False
        rv = _parse_int(values[0])
        assert rv is not None
        return lv > rv if op == "Gt" else lv < rv
    raise ValueError(f"unknown operator {op}")


def term_matches(term: Any, node_name: str, labels: dict[str, str]) -> bool:
    """nodeSelectorTerm match: expressions ANDed, fields ANDed; an empty term matches nothing."""
    exprs = list(getattr(term, "match_expressions", None) or [])
    fields = list(getattr(term, "match_fields", None) or [])
    if not exprs and not fields:
        return False
    try:
        for r in exprs:
            if not requirement_matches(r, labels):
                return False
        for f in fields:
            if f.key != "metadata.name" or f.operator not in ("In", "NotIn") or len(f.values or []) != 1:
                return False
            if not requirement_matches(f, {"metadata.name": node_name}):
                return False
    except ValueError:
        return False
    return True


def node_selector_matches(selector: Any, node_name: str, labels: dict[str, str]) -> bool:
    """NodeSelector.Match: terms ORed; no terms matches nothing."""
    return any(term_matches(t, node_name, labels) for t in (selector.node_selector_terms or []))


def required_node_affinity_matches(pod_spec: Any, node: Any) -> bool:
    """nodeaffinity.GetRequiredNodeAffinity(pod).Match(node): nodeSelector AND required affinity."""
    labels = node.metadata.labels or {}
    for k, v in (getattr(pod_spec, "node_selector", None) or {}).items():
        if labels.get(k) != v:
            return False
    aff = getattr(pod_spec, "affinity", None)
    na = getattr(aff, "node_affinity", None) if aff is not None else None
    req = getattr(na, "required_during_scheduling_ignored_during_execution", None) if na is not None else None
    if req is None:
        return True
    return node_selector_matches(req, node.metadata.name, labels)
