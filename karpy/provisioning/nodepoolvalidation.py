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

When the cloud provider reports its NodeClasses' ``Ready`` condition (an optional
``nodeclass_readiness(nodepool)`` method; the AWS provider's EC2NodeClass status), the two
controllers run instead of the read-time rule: :func:`reconcile_status` writes ``ValidationSucceeded``
(validation/controller.go) and ``NodeClassReady`` (readiness/controller.go setReadyCondition) into
the pool's status through :class:`karpy.api.conditionset.ConditionSet`, whose root ``Ready`` follows.
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
    "NODECLASS_NOT_FOUND",
    "nodepool_is_ready",
    "not_ready_reason",
    "reconcile_status",
    "runtime_validate",
]

CONDITION_READY = "Ready"
CONDITION_VALIDATION_SUCCEEDED = "ValidationSucceeded"
CONDITION_NODE_CLASS_READY = "NodeClassReady"
#: validation/controller.go SetFalse reason
REASON_VALIDATION_FAILED = "NodePoolValidationFailed"
#: readiness/controller.go reasons and messages
REASON_NODECLASS_NOT_FOUND = "NodeClassNotFound"
MESSAGE_NODECLASS_NOT_FOUND = "NodeClass not found on cluster"
REASON_NODECLASS_TERMINATING = "NodeClassTerminating"
MESSAGE_NODECLASS_TERMINATING = "NodeClass is Terminating"
REASON_NODECLASS_READINESS_UNKNOWN = "NodeClassReadinessUnknown"
MESSAGE_NODECLASS_READINESS_UNKNOWN = "Node Class Readiness Unknown"
#: what a provider's ``nodeclass_readiness`` answers for a NodeClass the cluster does not hold
NODECLASS_NOT_FOUND = "NotFound"
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


def reconcile_status(nodepool: Any, well_known: frozenset[str], nodeclass_ready: Any, now: float) -> None:
    """validation/controller.go and readiness/controller.go Reconcile over ``nodepool``'s status.
    ``nodeclass_ready``: the NodeClass's ``Ready`` condition (an object with ``status``,
    ``reason``, ``message``; None when it has none, i.e. Unknown), or :data:`NODECLASS_NOT_FOUND`;
    ``now``: virtual seconds (transition times). A NodeClass being deleted is not modelled."""
    from karpy.api.conditionset import ConditionSet

    cs = ConditionSet.for_object(nodepool, (CONDITION_VALIDATION_SUCCEEDED, CONDITION_NODE_CLASS_READY), now)
    err = runtime_validate(nodepool, well_known)
    if err is not None:
        cs.set_false(CONDITION_VALIDATION_SUCCEEDED, REASON_VALIDATION_FAILED, err)
    else:
        cs.set_true(CONDITION_VALIDATION_SUCCEEDED)
    if isinstance(nodeclass_ready, str):
        cs.set_false(CONDITION_NODE_CLASS_READY, REASON_NODECLASS_NOT_FOUND, MESSAGE_NODECLASS_NOT_FOUND)
    elif nodeclass_ready is None or nodeclass_ready.status not in ("True", "False"):
        cs.set_false(CONDITION_NODE_CLASS_READY, REASON_NODECLASS_READINESS_UNKNOWN, MESSAGE_NODECLASS_READINESS_UNKNOWN)
    elif nodeclass_ready.status == "False":
        cs.set_false(CONDITION_NODE_CLASS_READY, nodeclass_ready.reason or "", nodeclass_ready.message or "")
    else:
        cs.set_true(CONDITION_NODE_CLASS_READY)


def not_ready_reason(nodepool: Any) -> str:
    """Why a NodePool is not Ready, for the "ignored" warning: each dependent condition that is
    not True (``NodeClassReady=False, SubnetsNotFound: ...``), else its ``Ready`` condition."""
    conds = list(nodepool.status.conditions or ())
    bad = [c for c in conds if c.type in (CONDITION_VALIDATION_SUCCEEDED, CONDITION_NODE_CLASS_READY)
           and c.status != "True"]
    if bad:
        return "; ".join(f"{c.type}={c.status}, {c.reason}: {c.message}" for c in bad)
    return "its Ready condition is not True"
