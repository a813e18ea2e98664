"""EC2NodeClass drift: why a launched instance no longer matches its EC2NodeClass.

Mirrors aws:pkg/cloudprovider/drift.go (isNodeClassDrifted: areStaticFieldsDrifted, isAMIDrifted,
areSecurityGroupsDrifted, isSubnetDrifted; reasons verbatim) and the static hash of
aws:pkg/apis/v1/ec2nodeclass.go Hash: the spec *without* the selector-driven fields
(subnetSelectorTerms, securityGroupSelectorTerms, capacityReservationSelectorTerms,
amiSelectorTerms, ipPrefixCount, the literal amiFamily) — those drift through the resolved
subnets, security groups and AMIs instead. karpy hashes those fields with SHA-256 (stable, not
Go's hashstructure digits).

The reasons, in upstream's order: NodeClassDrift (static hash, equal hash versions), AMIDrift (the
NodeClaim's ``status.imageID`` is not the AMI the NodeClass's AMIs map its instance type to --
``status.amis`` of the EC2NodeClass when given, else karpy's stub AMIs), then the first of
SecurityGroupDrift, SubnetDrift, CapacityReservationDrift, PlacementGroupDrift.

CapacityReservationDrift (isCapacityReservationDrifted): a reserved instance whose reservation is
no longer in the EC2NodeClass's status -- the instance's ``CapacityReservationId`` comes from the
mocked EC2's reservation store, only with the ReservedCapacity gate, as NewInstance reads it --
against the NodeClass's reservations (``capacity_reservations`` of the resolved NodeClass or of its
status: ids or objects with ``id``). PlacementGroupDrift is written against a small interface,
because karpy's mocked EC2 has no placement groups: the NodeClaim's
``karpenter.k8s.aws/placement-group-id`` label against the NodeClass's ``placement_group_id`` (karpy does not parse ``placementGroupSelector``, so that is "" and a
NodeClaim carrying the label drifts, as upstream's does when the selector is removed).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from awsprovider.labels import LABEL_PLACEMENT_GROUP_ID

__all__ = ["AMI_DRIFT", "CAPACITY_RESERVATION_DRIFT", "NODECLASS_DRIFT", "PLACEMENT_GROUP_DRIFT",
           "SECURITY_GROUP_DRIFT", "SUBNET_DRIFT", "is_drifted", "resolved_static_hash", "static_hash"]

AMI_DRIFT = "AMIDrift"
SUBNET_DRIFT = "SubnetDrift"
SECURITY_GROUP_DRIFT = "SecurityGroupDrift"
CAPACITY_RESERVATION_DRIFT = "CapacityReservationDrift"
PLACEMENT_GROUP_DRIFT = "PlacementGroupDrift"
NODECLASS_DRIFT = "NodeClassDrift"
#: ec2nodeclass.go Hash ignores these (hash:"ignore"); drift comes from the resolved status instead
_DYNAMIC_FIELDS = ("subnetSelectorTerms", "securityGroupSelectorTerms", "capacityReservationSelectorTerms",
                   "amiSelectorTerms", "ipPrefixCount", "amiFamily")


def static_hash(nodeclass: Any) -> str:
    """``EC2NodeClass.Hash()``: the static fields of the spec plus the resolved AMI family."""
    spec = nodeclass.spec.model_dump(mode="json", by_alias=True, exclude_none=True)
    for key in _DYNAMIC_FIELDS:
        spec.pop(key, None)
    spec["resolvedAMIFamily"] = nodeclass.ami_family()
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()
    return str(int(digest[:16], 16))


def resolved_static_hash(resolved: Any) -> str:
    """:func:`static_hash` of a ResolvedNodeClass's EC2NodeClass, kept on the resolution (the drift
    check asks it for every NodeClaim every round; a resolution is made anew when its NodeClass changes)."""
    derived: dict[Any, Any] | None = getattr(resolved, "derived", None)
    if derived is None:
        return static_hash(resolved.nodeclass)
    held: str | None = derived.get("static_hash")
    if held is None:
        held = derived["static_hash"] = static_hash(resolved.nodeclass)
    return held


def is_drifted(provider: Any, nodeclaim: Any, nodeclass: Any, instance: dict[str, Any] | None,
               hash_key: str, version_key: str, version: str) -> str | None:
    """drift.go isNodeClassDrifted: the first reason, or None. ``nodeclass`` is the resolved
    EC2NodeClass (``awsprovider.nodeclass.ResolvedNodeClass``), ``instance`` the EC2
    DescribeInstances entry (None: gone)."""
    ann = nodeclaim.metadata.annotations or {}
    if ann.get(version_key) == version and ann.get(hash_key) is not None \
            and ann[hash_key] != resolved_static_hash(nodeclass):
        return NODECLASS_DRIFT
    expected = provider.expected_ami(nodeclaim)
    if expected is not None and nodeclaim.status.image_id and expected != nodeclaim.status.image_id:
        return AMI_DRIFT
    if instance is None:
        return None
    status_sgs = {sg_id for sg_id, _ in nodeclass.security_groups}
    instance_sgs = {g["GroupId"] for g in instance.get("SecurityGroups", [])}
    if status_sgs and status_sgs != instance_sgs:
        return SECURITY_GROUP_DRIFT
    subnets = {s.id for s in nodeclass.subnets}
    if subnets and instance.get("SubnetId") not in subnets:
        return SUBNET_DRIFT
    reservation = instance.get("CapacityReservationId")
    if reservation and reservation not in _reservation_ids(nodeclass):
        return CAPACITY_RESERVATION_DRIFT
    if (nodeclaim.metadata.labels or {}).get(LABEL_PLACEMENT_GROUP_ID, "") != \
            (getattr(nodeclass, "placement_group_id", "") or ""):
        return PLACEMENT_GROUP_DRIFT
    return None


def _reservation_ids(nodeclass: Any) -> frozenset[str]:
    """The NodeClass's capacity reservation ids (``status.capacityReservations`` upstream)."""
    found = getattr(nodeclass, "capacity_reservations", None)
    if found is None:
        found = getattr(getattr(getattr(nodeclass, "nodeclass", None), "status", None), "capacity_reservations", None)
    return frozenset(r if isinstance(r, str) else str(getattr(r, "id", "")) for r in found or ())
