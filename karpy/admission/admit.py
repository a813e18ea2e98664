"""Admission of one manifest, in the API server's order.

For a create request the API server (1) decodes strictly: duplicate fields, then unknown fields —
warnings under ``fieldValidation=Warn`` (what ``kubectl --validate=warn`` prints), errors under
``Strict``; (2) prunes unknown fields and non-nullable nulls and applies the schema defaults;
(3) validates ObjectMeta (names, namespace, labels), the OpenAPI schema and the required fields a
schema cannot express; (4) evaluates the CRD's CEL rules unless step 3 found a blocking error
(``customresource/strategy.go`` ``Validate``, ``hasBlockingErr``).

Custom resources use their CRD (:mod:`karpy.admission.crd`; a model class names its CRD file in a
``CRD`` class attribute, karpy's Karpenter kinds are in :data:`~karpy.admission.crd.KARPENTER_CRDS`);
built-in kinds use the Kubernetes schemas of :data:`~karpy.admission.builtin.KUBERNETES_VERSION`.
``status`` is not admitted: the API server drops it on create (``PrepareForCreate``); karpy keeps
it as written. A kind with no schema (e.g. the scheduler-plugins PodGroup) is passed through.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from karpy.admission.builtin import KUBERNETES_VERSION, builtin_schemas
from karpy.admission.core import validate_core
from karpy.admission.crd import KARPENTER_CRDS, CRD, load_crd
from karpy.admission.fielderrors import FieldError
from karpy.admission.names import validate_object_meta
from karpy.admission.schema import Schema, copy_json, normalize, validate, validate_rules
from karpy.admission.strict import duplicate_fields
from karpy._errors import KarpyError

__all__ = ["ADMITTED_UNMODELLED_KINDS", "UNKNOWN_FIELD_HINTS", "AdmissionError", "Admitted", "admit", "crd_for"]

#: built-in kinds karpy does not simulate but admits all the same (a manifest set the API server would
#: reject must not simulate): (apiVersion, kind)
ADMITTED_UNMODELLED_KINDS: frozenset[tuple[str, str]] = frozenset({
    ("batch/v1", "CronJob"), ("v1", "ReplicationController"), ("v1", "PersistentVolume"),
    ("v1", "PersistentVolumeClaim"), ("storage.k8s.io/v1", "StorageClass"),
})

#: the fields admission leaves alone at the top of an object
_SKIP = frozenset({"status"})

_RULES_NOT_CHECKED = ("some validation rules were not checked because the object was invalid; correct the "
                      "existing errors to complete validation")

#: (kind, unknown field path) -> why the field is unknown (a common leftover of an older API version)
UNKNOWN_FIELD_HINTS: Mapping[tuple[str, str], str] = {
    ("NodePool", "spec.template.spec.kubelet"):
        "a karpenter.sh/v1beta1 field: in karpenter.sh/v1 kubelet settings live on the NodeClass "
        "(e.g. EC2NodeClass spec.kubelet)",
}


class AdmissionError(KarpyError, ValueError):
    """The API server would reject the manifest. ``errors``: every field error, in its order."""

    def __init__(self, errors: list[FieldError], warnings: tuple[str, ...] = ()) -> None:
        self.errors = errors
        #: the warnings the API server would also have returned (unknown fields, often the cause:
        #: a typo'd ``requirments`` next to the missing ``requirements``)
        self.warnings = warnings
        super().__init__("; ".join(str(e) for e in errors))


@dataclass(frozen=True)
class Admitted:
    """An admitted manifest: ``data`` (a pruned, defaulted copy) and its warnings."""

    data: dict[str, Any]
    warnings: tuple[str, ...] = ()
    #: True when a schema was applied (False: no schema known for the kind)
    checked: bool = True


def crd_for(api_version: str, kind: str, cls: type | None = None) -> CRD | None:
    """The CRD of a custom kind: the model class's ``CRD`` file, else karpy's Karpenter CRDs."""
    source = getattr(cls, "CRD", None) if cls is not None else None
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    if source is None:
        source = KARPENTER_CRDS.get((group, kind))
    return load_crd(source) if source is not None else None


def _schemas(api_version: str, kind: str, cls: type | None,
             kubernetes_version: str) -> tuple[Schema | None, bool, bool]:
    """(schema, namespaced, is_custom) for the kind."""
    crd = crd_for(api_version, kind, cls)
    if crd is not None:
        return crd.versions.get(api_version.rsplit("/", 1)[-1]), crd.namespaced, True
    schema = builtin_schemas(kubernetes_version).for_kind(api_version, kind)
    namespaced = not getattr(cls, "CLUSTER_SCOPED", False)
    return schema, namespaced, False


def admit(data: Mapping[str, Any], cls: type | None = None, *, node: yaml.Node | None = None, strict: bool = False,
          kubernetes_version: str = KUBERNETES_VERSION) -> Admitted:
    """Admit one manifest (``apiVersion``/``kind`` already checked). ``node``: its YAML node tree, for
    duplicate keys. ``strict``: unknown fields are errors (``kubectl --validate=strict``).
    Raises :class:`AdmissionError`; never modifies ``data``."""
    errors = duplicate_fields(node)
    if errors:
        raise AdmissionError(errors)
    api_version, kind = str(data.get("apiVersion")), str(data.get("kind"))
    schema, namespaced, custom = _schemas(api_version, kind, cls, kubernetes_version)
    if schema is None:
        return Admitted(dict(data), checked=False)
    obj = copy_json(data)
    meta_schema = builtin_schemas(kubernetes_version).object_meta()
    unknown: list[str] = []
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        normalize(meta, meta_schema, ("metadata",), unknown)
    normalize(obj, schema, (), unknown, root=True, skip=_SKIP)
    unknown.sort()
    if strict and unknown:
        raise AdmissionError([FieldError("Decoding", path, detail=f"strict decoding error: unknown field \"{path}\"")
                              for path in unknown])
    warnings = tuple(_unknown_warning(kind, path) for path in unknown)
    errors = [] if meta is None else validate(meta, meta_schema, ("metadata",))
    if not any(e.blocking for e in errors):
        errors.extend(validate_object_meta(meta, namespaced=namespaced))
    errors.extend(validate(obj, schema, (), root=True, skip=_SKIP))
    if not custom:
        errors.extend(validate_core(kind, obj))
    if any(e.blocking for e in errors):
        if schema.has_rules():
            errors.append(FieldError("Invalid", "", None, _RULES_NOT_CHECKED))
    else:
        errors.extend(validate_rules(obj, schema, (), root=True, skip=_SKIP))
    if errors:
        raise AdmissionError(errors, warnings)
    return Admitted(obj, warnings)


def _unknown_warning(kind: str, path: str) -> str:
    text = f"unknown field \"{path}\""
    hint = UNKNOWN_FIELD_HINTS.get((kind, path))
    return f"{text} ({hint})" if hint else text
