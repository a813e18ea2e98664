"""The API server's ObjectMeta rules: names, namespaces, label and annotation keys.

Mirrors k8s.io/apimachinery ``pkg/api/validation/objectmeta.go`` (``ValidateObjectMetaAccessor``),
``pkg/util/validation/validation.go`` (DNS-1123 subdomain/label) and ``pkg/api/validate/content``
(label keys and values). Every kind karpy admits names its objects with ``NameIsDNSSubdomain``
(Pods, Nodes, workloads, PriorityClass, PDB and every custom resource); a namespace is a DNS-1123
label. A cluster-scoped object's namespace is cleared before validation (``rest.BeforeCreate``);
a namespaced object without one gets the request's (``default``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from karpy.admission.fielderrors import FieldError

__all__ = ["is_dns1123_label", "is_dns1123_subdomain", "is_label_value", "is_qualified_name",
           "validate_object_meta"]

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
LABEL_KEY_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63
TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * (1 << 10)

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_ERR = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                      "and must start and end with an alphanumeric character")
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_ERR = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
                          "or '.', and must start and end with an alphanumeric character")
_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_ERR = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                  "alphanumeric character")
_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"
_LABEL_VALUE_ERR = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                    "and must start and end with an alphanumeric character")

_DNS1123_LABEL_RE = re.compile(f"^{_DNS1123_LABEL_FMT}$")
_DNS1123_SUBDOMAIN_RE = re.compile(f"^{_DNS1123_SUBDOMAIN_FMT}$")
_LABEL_KEY_RE = re.compile(f"^{_LABEL_KEY_FMT}$")
_LABEL_VALUE_RE = re.compile(f"^{_LABEL_VALUE_FMT}$")


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """validation.RegexError."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}'" for e in examples)
    return f"{msg} (e.g. {shown}, regex used for validation is '{fmt}')"


def is_dns1123_label(value: str) -> list[str]:
    """IsDNS1123Label."""
    errs = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(_max_len(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1123_LABEL_RE.match(value):
        if _DNS1123_SUBDOMAIN_RE.match(value):
            errs.append("must not contain dots")
        else:
            errs.append(_regex_error(_DNS1123_LABEL_ERR, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """IsDNS1123Subdomain."""
    errs = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(_max_len(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_ERR, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_qualified_name(value: str) -> list[str]:
    """content.IsLabelKey (IsQualifiedName)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return ["a valid label key " + _regex_error(_LABEL_KEY_ERR, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > LABEL_KEY_MAX_LENGTH:
        errs.append("name part " + _max_len(LABEL_KEY_MAX_LENGTH))
    if not _LABEL_KEY_RE.match(name):
        errs.append("name part " + _regex_error(_LABEL_KEY_ERR, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_label_value(value: str) -> list[str]:
    """content.IsLabelValue."""
    errs = []
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(_max_len(LABEL_VALUE_MAX_LENGTH))
    if not _LABEL_VALUE_RE.match(value):
        errs.append(_regex_error(_LABEL_VALUE_ERR, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


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
