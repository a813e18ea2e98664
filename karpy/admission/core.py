"""The required fields of built-in kinds that their OpenAPI schemas cannot express.

Mirrors the parts of kubernetes ``pkg/apis/core/validation`` (``validateContainers``: at least one
container, each with a DNS-1123-label ``name`` and an ``image``) and ``pkg/apis/apps/validation``
(``ValidateDeploymentSpec`` & co.: a non-empty selector that matches the template's labels; the
counts' ``ValidateNonnegativeField``, also in ``pkg/apis/batch/validation`` ``validateJobSpec``) that
decide whether a manifest is accepted at all, and the selectors as the API server validates them:
``ValidateNodeSelector`` / ``ValidateNodeSelectorRequirement`` / ``ValidatePreferredSchedulingTerms``
(a pod's node affinity: ``Gte``/``Lte`` are NodePool operators, not a pod's), ``ValidateLabels`` (a
pod's ``nodeSelector``) and apimachinery's ``ValidateLabelSelector`` (workload selectors, pod
(anti-)affinity terms, topology spread constraints). Runs on schema-valid, defaulted data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from karpy.admission.fielderrors import FieldError
from karpy.admission.names import is_dns1123_label
from karpy.validation import is_label_key, is_label_value

__all__ = ["validate_core"]

#: kind -> (path to its PodTemplateSpec, controller word in the empty-selector message, selector required)
_TEMPLATES: Mapping[str, tuple[tuple[str, ...], str, bool]] = {
    "Deployment": (("spec", "template"), "deployment", True),
    "ReplicaSet": (("spec", "template"), "deployment", True),
    "StatefulSet": (("spec", "template"), "statefulset", True),
    "DaemonSet": (("spec", "template"), "daemonset", True),
    "Job": (("spec", "template"), "job", False),
    "CronJob": (("spec", "jobTemplate", "spec", "template"), "job", False),
    "ReplicationController": (("spec", "template"), "", False),
}

#: kind -> the int fields its Go validation checks with ValidateNonnegativeField (pkg/apis/core/validation)
_NONNEGATIVE: Mapping[str, tuple[tuple[str, ...], ...]] = {
    "Deployment": (("spec", "replicas"),),
    "ReplicaSet": (("spec", "replicas"),),
    "StatefulSet": (("spec", "replicas"),),
    "ReplicationController": (("spec", "replicas"),),
    "Job": (("spec", "parallelism"), ("spec", "completions")),
    "CronJob": (("spec", "jobTemplate", "spec", "parallelism"), ("spec", "jobTemplate", "spec", "completions")),
}
#: apimachinery ``validation.isNegativeErrorMsg``
IS_NEGATIVE_ERROR_MSG = "must be greater than or equal to 0"


def _get(obj: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(part)
    return obj


def validate_core(kind: str, obj: Mapping[str, Any]) -> list[FieldError]:
    """Field errors the Go validation of ``kind`` adds to its schema."""
    if kind == "Pod":
        return _pod_spec(obj.get("spec"), "spec")
    entry = _TEMPLATES.get(kind)
    if entry is None:
        return []
    template_path, word, selector_required = entry
    errs: list[FieldError] = []
    for path in _NONNEGATIVE.get(kind, ()):
        value = _get(obj, path)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            errs.append(FieldError("Invalid", ".".join(path), value, IS_NEGATIVE_ERROR_MSG))
    template = _get(obj, template_path)
    where = ".".join(template_path)
    if isinstance(template, Mapping):
        errs.extend(_pod_spec(template.get("spec"), f"{where}.spec"))
    if selector_required:
        selector = _get(obj, ("spec", "selector"))
        if isinstance(selector, Mapping):
            errs.extend(_label_selector(selector, "spec.selector"))
            if not selector.get("matchLabels") and not selector.get("matchExpressions"):
                errs.append(FieldError("Invalid", "spec.selector", selector, f"empty selector is invalid for {word}"))
            else:
                labels = _get(template, ("metadata", "labels")) or {}
                # a mis-typed selector or label map is the schema's error (reported there), not a mismatch
                if _well_typed(selector, labels) and not _matches(selector, labels):
                    errs.append(FieldError("Invalid", f"{where}.metadata.labels", labels,
                                           "`selector` does not match template `labels`"))
    return errs


def _pod_spec(spec: Any, path: str) -> list[FieldError]:
    if not isinstance(spec, Mapping):
        return [FieldError("Required", f"{path}.containers")]
    errs: list[FieldError] = []
    containers = spec.get("containers")
    if not containers:
        errs.append(FieldError("Required", f"{path}.containers"))
    for group in ("initContainers", "containers"):
        items = spec.get(group)
        if not isinstance(items, list):
            continue  # absent, or mis-typed: the schema's "must be of type array"
        for i, c in enumerate(items):
            if not isinstance(c, Mapping):
                continue
            where = f"{path}.{group}[{i}]"
            name = c.get("name")
            if not name:
                errs.append(FieldError("Required", f"{where}.name"))
            else:
                errs.extend(FieldError("Invalid", f"{where}.name", name, m) for m in is_dns1123_label(str(name)))
            if not c.get("image"):
                errs.append(FieldError("Required", f"{where}.image"))
    errs.extend(_labels(spec.get("nodeSelector"), f"{path}.nodeSelector"))
    affinity = spec.get("affinity")
    if isinstance(affinity, Mapping):
        errs.extend(_affinity(affinity, f"{path}.affinity"))
    for i, c in enumerate(_list(spec.get("topologySpreadConstraints"))):
        if isinstance(c, Mapping) and isinstance(c.get("labelSelector"), Mapping):
            errs.extend(_label_selector(c["labelSelector"], f"{path}.topologySpreadConstraints[{i}].labelSelector"))
    return errs


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _label_name(key: Any, path: str) -> list[FieldError]:
    """apimachinery ValidateLabelName."""
    return [FieldError("Invalid", path, key, m) for m in is_label_key(str(key))]


def _labels(labels: Any, path: str) -> list[FieldError]:
    """apimachinery ValidateLabels: each key a qualified name, each value a label value."""
    if not isinstance(labels, Mapping):
        return []
    errs: list[FieldError] = []
    for k, v in labels.items():
        errs.extend(_label_name(k, path))
        errs.extend(FieldError("Invalid", path, v, m) for m in is_label_value(str(v)))
    return errs


def _label_selector(selector: Mapping[str, Any], path: str) -> list[FieldError]:
    """apimachinery metav1 validation ValidateLabelSelector (matchExpressions, then matchLabels)."""
    errs: list[FieldError] = []
    for i, req in enumerate(_list(selector.get("matchExpressions"))):
        if not isinstance(req, Mapping):
            continue
        where = f"{path}.matchExpressions[{i}]"
        errs.extend(_operator_values(req, where, single_value_ops=()))
        errs.extend(_label_name(req.get("key"), f"{where}.key"))
    errs.extend(_labels(selector.get("matchLabels"), f"{path}.matchLabels"))
    return errs


def _node_selector_requirement(req: Mapping[str, Any], where: str) -> list[FieldError]:
    """core validation ValidateNodeSelectorRequirement: In/NotIn/Exists/DoesNotExist/Gt/Lt only."""
    errs = _operator_values(req, where, single_value_ops=("Gt", "Lt"))
    errs.extend(_label_name(req.get("key"), f"{where}.key"))
    return errs


def _operator_values(req: Mapping[str, Any], where: str, single_value_ops: tuple[str, ...]) -> list[FieldError]:
    """The operator / values rule both selector validators share (In/NotIn need values, Exists/DoesNotExist
    take none; a node selector's Gt/Lt take one); any other operator is invalid."""
    op, values = req.get("operator"), _list(req.get("values"))
    if op in ("In", "NotIn"):
        if not values:
            return [FieldError("Required", f"{where}.values", detail="must be specified when `operator` is 'In' or 'NotIn'")]
    elif op in ("Exists", "DoesNotExist"):
        if values:
            return [FieldError("Forbidden", f"{where}.values",
                               detail="may not be specified when `operator` is 'Exists' or 'DoesNotExist'")]
    elif op in single_value_ops:
        if len(values) != 1:
            return [FieldError("Required", f"{where}.values",
                               detail="must be specified single value when `operator` is 'Lt' or 'Gt'")]
    else:
        return [FieldError("Invalid", f"{where}.operator", op, "not a valid selector operator")]
    return []


def _node_field_selector_requirement(req: Mapping[str, Any], where: str) -> list[FieldError]:
    """core validation ValidateNodeFieldSelectorRequirement: ``metadata.name`` In/NotIn one value."""
    errs: list[FieldError] = []
    op = req.get("operator")
    if op in ("In", "NotIn"):
        if len(_list(req.get("values"))) != 1:
            errs.append(FieldError("Required", f"{where}.values",
                                   detail="must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
    else:
        errs.append(FieldError("Invalid", f"{where}.operator", op, "not a valid selector operator"))
    if req.get("key") != "metadata.name":
        errs.append(FieldError("Invalid", f"{where}.key", req.get("key"), "not a valid field selector key"))
    return errs


def _node_selector_term(term: Mapping[str, Any], where: str) -> list[FieldError]:
    """core validation ValidateNodeSelectorTerm."""
    errs: list[FieldError] = []
    for j, req in enumerate(_list(term.get("matchExpressions"))):
        if isinstance(req, Mapping):
            errs.extend(_node_selector_requirement(req, f"{where}.matchExpressions[{j}]"))
    for j, req in enumerate(_list(term.get("matchFields"))):
        if isinstance(req, Mapping):
            errs.extend(_node_field_selector_requirement(req, f"{where}.matchFields[{j}]"))
    return errs


def _affinity(affinity: Mapping[str, Any], path: str) -> list[FieldError]:
    """core validation validateAffinity: node affinity (ValidateNodeSelector,
    ValidatePreferredSchedulingTerms) and the pod (anti-)affinity terms' label selectors."""
    errs: list[FieldError] = []
    node = affinity.get("nodeAffinity")
    if isinstance(node, Mapping):
        where = f"{path}.nodeAffinity"
        required = node.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(required, Mapping):
            terms_path = f"{where}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
            terms = _list(required.get("nodeSelectorTerms"))
            if not terms:
                errs.append(FieldError("Required", terms_path, detail="must have at least one node selector term"))
            for i, term in enumerate(terms):
                if isinstance(term, Mapping):
                    errs.extend(_node_selector_term(term, f"{terms_path}[{i}]"))
        for i, pref in enumerate(_list(node.get("preferredDuringSchedulingIgnoredDuringExecution"))):
            if not isinstance(pref, Mapping):
                continue
            pwhere = f"{where}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
            weight = pref.get("weight")
            if isinstance(weight, int) and not 1 <= weight <= 100:
                errs.append(FieldError("Invalid", f"{pwhere}.weight", weight, "must be in the range 1-100"))
            if isinstance(pref.get("preference"), Mapping):
                errs.extend(_node_selector_term(pref["preference"], f"{pwhere}.preference"))
    for kind in ("podAffinity", "podAntiAffinity"):
        block = affinity.get(kind)
        if not isinstance(block, Mapping):
            continue
        where = f"{path}.{kind}"
        for i, term in enumerate(_list(block.get("requiredDuringSchedulingIgnoredDuringExecution"))):
            if isinstance(term, Mapping) and isinstance(term.get("labelSelector"), Mapping):
                errs.extend(_label_selector(term["labelSelector"],
                                            f"{where}.requiredDuringSchedulingIgnoredDuringExecution[{i}].labelSelector"))
        for i, wterm in enumerate(_list(block.get("preferredDuringSchedulingIgnoredDuringExecution"))):
            term = wterm.get("podAffinityTerm") if isinstance(wterm, Mapping) else None
            if isinstance(term, Mapping) and isinstance(term.get("labelSelector"), Mapping):
                errs.extend(_label_selector(
                    term["labelSelector"],
                    f"{where}.preferredDuringSchedulingIgnoredDuringExecution[{i}].podAffinityTerm.labelSelector"))
    return errs


def _well_typed(selector: Mapping[str, Any], labels: Any) -> bool:
    """Whether ``selector`` and ``labels`` have the shapes :func:`_matches` reads."""
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    return (isinstance(labels, Mapping) and isinstance(match_labels, Mapping) and isinstance(expressions, list)
            and all(isinstance(r, Mapping) and isinstance(r.get("values") or [], list) for r in expressions))


def _matches(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    """metav1.LabelSelectorAsSelector(selector).Matches(labels)."""
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for req in selector.get("matchExpressions") or ():
        key, op, values = req.get("key"), req.get("operator"), req.get("values") or []
        present = key in labels
        if op == "In" and not (present and labels[key] in values):
            return False
        if op == "NotIn" and present and labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True

