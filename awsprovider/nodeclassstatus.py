"""EC2NodeClass status conditions, as the AWS provider's nodeclass controller computes them.

Mirrors pkg/controllers/nodeclass/controller.go ``Reconcile``: its reconcilers run in upstream's
order -- AMI, CapacityReservation (only with the ReservedCapacity gate), PlacementGroup, Subnet,
SecurityGroup, InstanceProfile, Validation -- over the conditions of
pkg/apis/v1/ec2nodeclass_status.go ``StatusConditions`` (root ``Ready``; ``CapacityReservationsReady``
is a dependent only when the gate is on, as ``CapacityReservationsEnabled`` in cmd/controller/main.go).
The condition semantics (transition times, the root) are :class:`karpy.api.conditionset.ConditionSet`.

What each reconciler reads in karpy (the resolution :mod:`awsprovider.nodeclass` already did
through boto3 against the mocked EC2):

* ``SubnetsReady`` (subnet.go): False ``SubnetsNotFound`` "SubnetSelector did not match any
  Subnets" when DescribeSubnets found none;
* ``SecurityGroupsReady`` (securitygroup.go): False ``SecurityGroupsNotFound`` "SecurityGroupSelector
  did not match any SecurityGroups" when the NodeClass has terms and DescribeSecurityGroups found none;
* ``AMIsReady`` (ami.go): False ``AMINotFound`` "AMISelector did not match any AMIs" when there is no
  AMI. karpy does not resolve ``amiSelectorTerms`` against EC2: the AMIs are the NodeClass's
  ``status.amis`` or karpy's stub AMIs, so this is True in practice;
* ``CapacityReservationsReady`` (capacityreservation.go): True once the reservations were listed
  (no reservation is not an error upstream);
* ``PlacementGroupReady`` (placementgroup.go): True (karpy's EC2NodeClass has no
  ``placementGroupSelector``; a selector is not modelled);
* ``InstanceProfileReady`` (instanceprofile.go): True (IAM is not modelled: the profile is taken as
  created, as upstream sets it after CreateInstanceProfile succeeds);
* ``ValidationSucceeded`` (validation.go): False ``DependenciesNotReady`` "Awaiting AMI, Instance
  Profile, Security Group, and Subnet resolution" when one of those four is False (Unknown when one
  is Unknown); False ``TagValidationFailed`` with GetTags' error for a restricted ``spec.tags`` key;
  else True (the mocked EC2 authorizes the CreateLaunchTemplate / CreateFleet / RunInstances dry
  runs). Upstream's kubelet checks (``InvalidKubeletConfiguration``, CEL expressions) and the
  AL2023 cluster-CIDR lookup are not modelled: karpy's loader rejects a malformed ``spec.kubelet``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from karpy.api.conditionset import CONDITION_READY, ConditionSet
from karpy.api.meta import Condition

__all__ = [
    "CONDITION_AMIS_READY",
    "CONDITION_CAPACITY_RESERVATIONS_READY",
    "CONDITION_INSTANCE_PROFILE_READY",
    "CONDITION_PLACEMENT_GROUP_READY",
    "CONDITION_SECURITY_GROUPS_READY",
    "CONDITION_SUBNETS_READY",
    "CONDITION_VALIDATION_SUCCEEDED",
    "REASON_AMI_NOT_FOUND",
    "REASON_DEPENDENCIES_NOT_READY",
    "REASON_SECURITY_GROUPS_NOT_FOUND",
    "REASON_SUBNETS_NOT_FOUND",
    "REASON_TAG_VALIDATION_FAILED",
    "describe",
    "nodeclass_condition_types",
    "ready_condition",
    "reconcile_conditions",
    "reconcile_validation",
]

#: pkg/apis/v1/ec2nodeclass_status.go condition types
CONDITION_SUBNETS_READY = "SubnetsReady"
CONDITION_SECURITY_GROUPS_READY = "SecurityGroupsReady"
CONDITION_AMIS_READY = "AMIsReady"
CONDITION_INSTANCE_PROFILE_READY = "InstanceProfileReady"
CONDITION_CAPACITY_RESERVATIONS_READY = "CapacityReservationsReady"
CONDITION_VALIDATION_SUCCEEDED = "ValidationSucceeded"
CONDITION_PLACEMENT_GROUP_READY = "PlacementGroupReady"
#: subnet.go / securitygroup.go / ami.go SetFalse reasons and messages
REASON_SUBNETS_NOT_FOUND = "SubnetsNotFound"
MESSAGE_SUBNETS_NOT_FOUND = "SubnetSelector did not match any Subnets"
REASON_SECURITY_GROUPS_NOT_FOUND = "SecurityGroupsNotFound"
MESSAGE_SECURITY_GROUPS_NOT_FOUND = "SecurityGroupSelector did not match any SecurityGroups"
REASON_AMI_NOT_FOUND = "AMINotFound"
MESSAGE_AMI_NOT_FOUND = "AMISelector did not match any AMIs"
#: validation.go reasons and messages
REASON_DEPENDENCIES_NOT_READY = "DependenciesNotReady"
MESSAGE_DEPENDENCIES_NOT_READY = "Awaiting AMI, Instance Profile, Security Group, and Subnet resolution"
REASON_TAG_VALIDATION_FAILED = "TagValidationFailed"
#: validation.go requiredConditions
_VALIDATION_REQUIRED = (CONDITION_AMIS_READY, CONDITION_INSTANCE_PROFILE_READY, CONDITION_SECURITY_GROUPS_READY,
                        CONDITION_SUBNETS_READY)


def nodeclass_condition_types(reserved_capacity: bool) -> tuple[str, ...]:
    """ec2nodeclass_status.go StatusConditions: the root's dependents, in upstream's order."""
    types = (CONDITION_AMIS_READY, CONDITION_SUBNETS_READY, CONDITION_SECURITY_GROUPS_READY,
             CONDITION_INSTANCE_PROFILE_READY, CONDITION_VALIDATION_SUCCEEDED, CONDITION_PLACEMENT_GROUP_READY)
    return types + ((CONDITION_CAPACITY_RESERVATIONS_READY,) if reserved_capacity else ())


def reconcile_conditions(nodeclass: Any, *, subnets: Sequence[Any], security_groups: Sequence[Any],
                         amis: Sequence[Any], tag_error: str | None, reserved_capacity: bool,
                         now: float, previous: Sequence[Condition] | None = None) -> list[Condition]:
    """controller.go Reconcile over an EC2NodeClass whose resolution gave ``subnets``,
    ``security_groups`` and ``amis``; ``tag_error``: GetTags' error (None when the tags are
    valid). ``previous``: the conditions before this reconcile (default: the object's
    ``status.conditions``, e.g. a ``kubectl get -o yaml`` dump's). Returns the new conditions;
    ``nodeclass`` is not changed."""
    holder = nodeclass.model_copy(update={"status": nodeclass.status.model_copy(update={
        "conditions": [c.model_copy() for c in (nodeclass.status.conditions if previous is None else previous)]})})
    cs = ConditionSet.for_object(holder, nodeclass_condition_types(reserved_capacity), now)
    # ami.go
    if amis:
        cs.set_true(CONDITION_AMIS_READY)
    else:
        cs.set_false(CONDITION_AMIS_READY, REASON_AMI_NOT_FOUND, MESSAGE_AMI_NOT_FOUND)
    # capacityreservation.go (controller.go skips it with the ReservedCapacity gate off)
    if reserved_capacity:
        cs.set_true(CONDITION_CAPACITY_RESERVATIONS_READY)
    # placementgroup.go: no selector
    cs.set_true(CONDITION_PLACEMENT_GROUP_READY)
    # subnet.go
    if subnets:
        cs.set_true(CONDITION_SUBNETS_READY)
    else:
        cs.set_false(CONDITION_SUBNETS_READY, REASON_SUBNETS_NOT_FOUND, MESSAGE_SUBNETS_NOT_FOUND)
    # securitygroup.go
    if not security_groups and nodeclass.spec.security_group_selector_terms:
        cs.set_false(CONDITION_SECURITY_GROUPS_READY, REASON_SECURITY_GROUPS_NOT_FOUND,
                     MESSAGE_SECURITY_GROUPS_NOT_FOUND)
    else:
        cs.set_true(CONDITION_SECURITY_GROUPS_READY)
    # instanceprofile.go
    cs.set_true(CONDITION_INSTANCE_PROFILE_READY)
    reconcile_validation(cs, tag_error)
    return cs.conditions


def reconcile_validation(cs: ConditionSet, tag_error: str | None) -> None:
    """validation.go Reconcile, the steps karpy models in upstream's order: the required
    conditions (AMIs, instance profile, security groups, subnets) -- one False makes
    ValidationSucceeded False, else one Unknown makes it Unknown, both ``DependenciesNotReady`` --
    then GetTags (``TagValidationFailed``), then the dry runs (authorized by the mocked EC2)."""
    if any((c := cs.get(t)) is not None and c.status == "False" for t in _VALIDATION_REQUIRED):
        cs.set_false(CONDITION_VALIDATION_SUCCEEDED, REASON_DEPENDENCIES_NOT_READY, MESSAGE_DEPENDENCIES_NOT_READY)
    elif any((c := cs.get(t)) is None or c.status == "Unknown" for t in _VALIDATION_REQUIRED):
        cs.set_unknown(CONDITION_VALIDATION_SUCCEEDED, REASON_DEPENDENCIES_NOT_READY, MESSAGE_DEPENDENCIES_NOT_READY)
    elif tag_error is not None:
        cs.set_false(CONDITION_VALIDATION_SUCCEEDED, REASON_TAG_VALIDATION_FAILED, tag_error)
    else:
        cs.set_true(CONDITION_VALIDATION_SUCCEEDED)


def ready_condition(conditions: Sequence[Condition]) -> Condition | None:
    """The root ``Ready`` condition of ``conditions`` (None when absent)."""
    return next((c for c in conditions if c.type == CONDITION_READY), None)


def describe(name: str, conditions: Sequence[Condition]) -> str | None:
    """One line for stderr when the NodeClass is not Ready (None when it is): the root and
    every dependent that is not True, with reason and message."""
    ready = ready_condition(conditions)
    if ready is None or ready.status == "True":
        return None
    bad = [c for c in conditions if c.type != CONDITION_READY and c.status != "True"]
    parts = "; ".join(f"{c.type}={c.status}, {c.reason}: {c.message}" for c in bad)
    return (f"EC2NodeClass {name}: not ready (Ready={ready.status}, {ready.reason}: {ready.message}"
            f"{'; ' + parts if parts else ''}); Karpenter launches no node for its NodePools")

