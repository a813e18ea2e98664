"""NodePool runtime validation and readiness: a NodePool the validation controller fails is NotReady.

Mirrors pkg/apis/v1/nodepool_validation.go RuntimeValidate (validateLabels, validateTaints,
validateRequirements, validateRequirementsNodePoolKeyDoesNotExist), nodeclaim_validation.go
validateTaintsField, and the two controllers that feed the NodePool's root ``Ready`` condition:
pkg/controllers/nodepool/validation (``ValidationSucceeded``) and .../readiness (``NodeClassReady``).

karpy has no controllers writing NodePool status, so readiness is computed on read:
- ``ValidationSucceeded`` is ``runtime_validate``'s verdict (a pool whose requirement values are
  all invalid for a well-known label, e.g. ``capacity-type In [xspot]``, fails it);
- ``NodeClassReady`` is taken from the manifest: a ``Ready`` condition written in the pool's status
  that is not ``True`` keeps the pool NotReady; a pool without conditions counts as NodeClass-ready
  (the provider reports NodeClass errors at launch instead).
The provisioner drops NotReady pools, so a lone invalid pool yields "no dynamic nodepools found".
"""

from __future__ import annotations

from typing import Any

from karpy.scheduling.labels import (LABEL_NODEPOOL, is_qualified_name, is_restricted_label, is_valid_label_value,
                                     validate_requirement)

__all__ = [
    "CONDITION_NODE_CLASS_READY",
    "CONDITION_READY",
    "CONDITION_VALIDATION_SUCCEEDED",
    "REASON_VALIDATION_FAILED",
    "nodepool_is_ready",
    "runtime_validate",
]

CONDITION_READY = "Ready"
CONDITION_VALIDATION_SUCCEEDED = "ValidationSucceeded"
CONDITION_NODE_CLASS_READY = "NodeClassReady"
#: validation/controller.go SetFalse reason
REASON_VALIDATION_FAILED = "NodePoolValidationFailed"
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute", "")


def _validate_labels(labels: dict[str, str], well_known: frozenset[str]) -> list[str]:
    """nodepool_validation.go validateLabels (labels in sorted key order; Go ranges a map)."""
    errs: list[str] = []
    for key in sorted(labels):
        value = labels[key]
        if key == LABEL_NODEPOOL:
            errs.append(f'invalid key name "{key}" in labels, restricted')
        errs.extend(f'invalid key name "{key}" in labels, "{e}"' for e in is_qualified_name(key))
        errs.extend(f"invalid value: {value} for label[{key}], {e}" for e in is_valid_label_value(value))
        e = is_restricted_label(key, well_known)
        if e is not None:
            errs.append(f'invalid key name "{key}" in labels, {e}')
    return errs


def _validate_taints_field(taints: Any, existing: set[tuple[str, str]], field_name: str) -> list[str]:
    """nodeclaim_validation.go validateTaintsField. An empty key reproduces Go's
    ``fmt.Errorf("%w", errs)`` of the errors so far (``%!w(<nil>)`` when there are none)."""
    errs: list[str] = []
    for taint in taints or ():
        key, value, effect = taint.key or "", taint.value or "", taint.effect or ""
        if not key:
            errs.append(f"invalid value: {'; '.join(errs) if errs else '%!w(<nil>)'} in {field_name}")
        errs.extend(f"invalid value: {e} in {field_name}" for e in is_qualified_name(key))
        if value:
            errs.extend(f"invalid value: {e} in {field_name}" for e in is_qualified_name(value))
        if effect not in _TAINT_EFFECTS:
            errs.append(f'invalid value: "{effect}" in {field_name}')
        if (key, effect) in existing:
            errs.append(f"duplicate taint Key/Effect pair {key}={effect}")
        existing.add((key, effect))
    return errs


def runtime_validate(nodepool: Any, well_known: frozenset[str]) -> str | None:
    """nodepool_validation.go RuntimeValidate: the errors joined with "; " (multierr), or None.
    ``well_known``: core + cloud-provider well-known labels (what upstream's WellKnownLabels holds)."""
    template = nodepool.spec.template
    spec = template.spec
    errs = _validate_labels(dict(template.metadata.labels or {}), well_known)
    existing: set[tuple[str, str]] = set()
    errs += _validate_taints_field(spec.taints, existing, "taints")
    errs += _validate_taints_field(spec.startup_taints, existing, "startupTaints")
    for req in spec.requirements or ():
        e = validate_requirement(req, well_known)
        if e is not None:
            errs.append(f"invalid value: {e} in requirements, restricted")
    errs += [f'invalid key: "{req.key}" in requirements, restricted'
             for req in spec.requirements or () if req.key == LABEL_NODEPOOL]
    return "; ".join(errs) if errs else None


def nodepool_is_ready(nodepool: Any, well_known: frozenset[str] | None = None) -> bool:
    """The root ``Ready`` condition (see module doc): a written ``Ready`` condition that is not
    True, or (when ``well_known`` is given) a failing RuntimeValidate, makes the pool NotReady."""
    for c in nodepool.status.conditions or ():
        if c.type == CONDITION_READY and c.status != "True":
            return False
    return well_known is None or runtime_validate(nodepool, well_known) is None
