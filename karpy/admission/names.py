"""The API server's ObjectMeta rules: names, namespaces, label and annotation keys.

Mirrors k8s.io/apimachinery ``pkg/api/validation/objectmeta.go`` (``ValidateObjectMetaAccessor``),
``pkg/util/validation/validation.go`` (DNS-1123 subdomain/label) and ``pkg/api/validate/content``
(label keys and values), both in :mod:`karpy.validation` (names say "characters", label and
annotation keys and values "bytes", as upstream's two packages do). Every kind karpy admits
names its objects with ``NameIsDNSSubdomain`` (Pods, Nodes, workloads, PriorityClass, PDB and every
custom resource); a namespace is a DNS-1123 label. A cluster-scoped object's namespace is cleared before validation (``rest.BeforeCreate``);
a namespaced object without one gets the request's (``default``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from karpy.admission.fielderrors import FieldError
from karpy.validation import is_dns1123_label, is_dns1123_subdomain, is_label_key, is_label_value

__all__ = ["is_dns1123_label", "is_dns1123_subdomain", "is_label_value", "is_qualified_name",
           "validate_object_meta"]

TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * (1 << 10)


#: ``validation.IsQualifiedName`` is content.IsLabelKey since apimachinery v0.35
is_qualified_name = is_label_key


def _mask_trailing_dash(name: str) -> str:
    return name[:-2] + "a" if len(name) > 1 and name.endswith("-") else name


def validate_object_meta(meta: Any, *, namespaced: bool, path: str = "metadata") -> list[FieldError]:
    """ValidateObjectMetaAccessor with NameIsDNSSubdomain, for metadata that already passed its schema."""
    errs: list[FieldError] = []
    if not isinstance(meta, Mapping):
        return [FieldError("Required", f"{path}.name", detail="name or generateName is required")]
    generate_name = meta.get("generateName")
    if isinstance(generate_name, str) and generate_name:
        for msg in is_dns1123_subdomain(_mask_trailing_dash(generate_name)):
            errs.append(FieldError("Invalid", f"{path}.generateName", generate_name, msg))
    name = meta.get("name")
    if not name:
        if not generate_name:
            errs.append(FieldError("Required", f"{path}.name", detail="name or generateName is required"))
    elif isinstance(name, str):
        for msg in is_dns1123_subdomain(name):
            errs.append(FieldError("Invalid", f"{path}.name", name, msg))
    namespace = meta.get("namespace")
    if namespaced and isinstance(namespace, str) and namespace:
        for msg in is_dns1123_label(namespace):
            errs.append(FieldError("Invalid", f"{path}.namespace", namespace, msg))
    errs.extend(validate_labels(meta.get("labels"), f"{path}.labels"))
    annotations = meta.get("annotations")
    if isinstance(annotations, Mapping):
        for key in annotations:
            for msg in is_qualified_name(str(key).lower()):
                errs.append(FieldError("Invalid", f"{path}.annotations", key, msg))
    return errs


def validate_labels(labels: Any, path: str) -> list[FieldError]:
    """ValidateLabels: every key a qualified name, every value a label value."""
    errs: list[FieldError] = []
    if isinstance(labels, Mapping):
        for key, value in labels.items():
            for msg in is_qualified_name(str(key)):
                errs.append(FieldError("Invalid", path, key, msg))
            if isinstance(value, str):
                for msg in is_label_value(value):
                    errs.append(FieldError("Invalid", path, value, msg))
    return errs
