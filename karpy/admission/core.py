"""The required fields of built-in kinds that their OpenAPI schemas cannot express.

Mirrors the parts of kubernetes ``pkg/apis/core/validation`` (``validateContainers``: at least one
container, each with a DNS-1123-label ``name`` and an ``image``) and ``pkg/apis/apps/validation``
(``ValidateDeploymentSpec`` & co.: a non-empty selector that matches the template's labels; the
counts' ``ValidateNonnegativeField``, also in ``pkg/apis/batch/validation`` ``validateJobSpec``) that
decide whether a manifest is accepted at all. Runs on schema-valid, defaulted data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from karpy.admission.fielderrors import FieldError
from karpy.admission.names import is_dns1123_label

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

