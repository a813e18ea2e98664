"""EC2NodeClass status conditions (awsprovider.nodeclassstatus) and what follows from them.

Ports the behaviour-defining Its of aws/karpenter-provider-aws 1d92708
pkg/controllers/nodeclass/{subnet,securitygroup,validation,placementgroup,capacityreservation}_test.go
and pkg/cloudprovider/suite_test.go (Create on a NodeClass that is not ready), and of
kubernetes-sigs/karpenter 2266468 pkg/controllers/nodepool/readiness/suite_test.go. Upstream's
fake EC2 answers DescribeSubnets with four test subnets; here a karpy.io Network defines them in
the mocked EC2 and the provider resolves them through boto3 (a Network that defines subnets is all
that exists: nothing is created for a selector that matches none).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from awsprovider.apis.ec2nodeclass import EC2NodeClass
from awsprovider.apis.network import Network
from awsprovider.cloudprovider import AWSCloudProvider
from awsprovider.nodeclassstatus import (CONDITION_AMIS_READY, CONDITION_CAPACITY_RESERVATIONS_READY,
                                         CONDITION_INSTANCE_PROFILE_READY, CONDITION_PLACEMENT_GROUP_READY,
                                         CONDITION_SECURITY_GROUPS_READY, CONDITION_SUBNETS_READY,
                                         CONDITION_VALIDATION_SUCCEEDED, nodeclass_condition_types,
                                         reconcile_validation)
from karpy.api.conditionset import ConditionSet
from karpy.api.meta import Condition
from karpy.api.nodepool import NodePool
from karpy.cloudprovider.types import CreateError, NodeClassNotReadyError, is_nodeclass_not_ready_error
from karpy.options import FeatureGates
from karpy.options import Options
from karpy.provisioning.nodepoolvalidation import (NODECLASS_NOT_FOUND, nodepool_is_ready, reconcile_status)
from karpy.sim.clock import VirtualClock

NETWORK = {
    "apiVersion": "karpy.io/v1alpha1", "kind": "Network", "metadata": {"name": "test"},
    "spec": {
        "subnets": [
            {"id": "subnet-0test1", "zone": "us-east-1a", "availableIPs": 20,
             "tags": {"Name": "test-subnet-1", "foo": "bar"}},
            {"id": "subnet-0test2", "zone": "us-east-1b", "availableIPs": 100,
             "tags": {"Name": "test-subnet-2", "foo": "bar"}},
            {"id": "subnet-0test3", "zone": "us-east-1c", "availableIPs": 50,
             "tags": {"Name": "test-subnet-3", "foo": "bar"}},
        ],
        "securityGroups": [
            {"id": "sg-0test1", "name": "securityGroup-test1", "tags": {"Name": "test-security-group-1", "foo": "bar"}},
            {"id": "sg-0test2", "name": "securityGroup-test2", "tags": {"Name": "test-security-group-2", "foo": "bar"}},
        ],
    },
}
ALL_SUBNETS = [("subnet-0test2", "us-east-1b"), ("subnet-0test3", "us-east-1c"), ("subnet-0test1", "us-east-1a")]


def nodeclass(name: str, **spec: Any) -> EC2NodeClass:
    body = {"amiSelectorTerms": [{"alias": "al2023@latest"}], "role": "KarpenterNodeRole-test",
            "subnetSelectorTerms": [{"tags": {"foo": "bar"}}],
            "securityGroupSelectorTerms": [{"tags": {"foo": "bar"}}], **spec}
    return EC2NodeClass.model_validate({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
                                        "metadata": {"name": name}, "spec": body})


def nodepool(nodeclass_name: str, group: str = "karpenter.k8s.aws", kind: str = "EC2NodeClass") -> NodePool:
    return NodePool.model_validate({"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
                                    "metadata": {"name": f"np-{nodeclass_name}"},
                                    "spec": {"template": {"spec": {
                                        "nodeClassRef": {"group": group, "kind": kind, "name": nodeclass_name},
                                        "requirements": []}}}})


@pytest.fixture(scope="module")
def provider() -> Iterator[AWSCloudProvider]:
    p = AWSCloudProvider("us-east-1", prices="2026-07-20", clock=VirtualClock(),
                         nodeclasses=[nodeclass("seed")], networks=[Network.model_validate(NETWORK)])
    yield p
    p.close()


def reconciled(p: AWSCloudProvider, nc: EC2NodeClass) -> Any:
    """ExpectApplied + ExpectObjectReconciled: the NodeClass (re)applied and resolved now."""
    p.apply(nc)
    resolved = p.resolve_nodeclass(nc.metadata.name)
    assert resolved is not None
    return resolved


def cond(resolved: Any, cond_type: str) -> Condition:
    found = next((c for c in resolved.conditions if c.type == cond_type), None)
    assert found is not None, cond_type
    return found


def subnets(resolved: Any) -> list[tuple[str, str]]:
    return [(s.id, s.zone) for s in resolved.subnets]


# -- subnet_test.go ------------------------------------------------------------------------------

def test_should_update_ec2nodeclass_status_for_subnets(provider: AWSCloudProvider) -> None:
    # subnet_test.go It("Should update EC2NodeClass status for Subnets") and
    # It("Should have the correct ordering for the Subnets"): by available IPs, most first
    r = reconciled(provider, nodeclass("subnets-all"))
    assert subnets(r) == ALL_SUBNETS
    assert cond(r, CONDITION_SUBNETS_READY).status == "True"
    assert cond(r, "Ready").status == "True"


def test_should_resolve_a_valid_selectors_for_subnet_by_tags(provider: AWSCloudProvider) -> None:
    # subnet_test.go It("Should resolve a valid selectors for Subnet by tags")
    r = reconciled(provider, nodeclass("subnets-tags", subnetSelectorTerms=[
        {"tags": {"Name": "test-subnet-1"}}, {"tags": {"Name": "test-subnet-2"}}]))
    assert subnets(r) == [("subnet-0test2", "us-east-1b"), ("subnet-0test1", "us-east-1a")]
    assert cond(r, CONDITION_SUBNETS_READY).status == "True"


def test_should_resolve_a_valid_selectors_for_subnet_by_ids(provider: AWSCloudProvider) -> None:
    # subnet_test.go It("Should resolve a valid selectors for Subnet by ids")
    r = reconciled(provider, nodeclass("subnets-ids", subnetSelectorTerms=[{"id": "subnet-0test1"}]))
    assert subnets(r) == [("subnet-0test1", "us-east-1a")]
    assert cond(r, CONDITION_SUBNETS_READY).status == "True"


@pytest.mark.parametrize("terms", [[{"tags": {"Name": "test-subnet-1"}}, {"tags": {"Name": "test-subnet-2"}}],
                                   [{"id": "subnet-0test1"}]], ids=["tags", "ids"])
def test_should_update_subnet_status_when_the_subnet_selector_gets_updated(provider: AWSCloudProvider,
                                                                          terms: list[dict[str, Any]]) -> None:
    # subnet_test.go It("Should update Subnet status when the Subnet selector gets updated by tags")
    # and It("... by ids")
    name = f"subnets-update-{len(terms)}"
    assert subnets(reconciled(provider, nodeclass(name))) == ALL_SUBNETS
    r = reconciled(provider, nodeclass(name, subnetSelectorTerms=terms))
    assert {s for s, _ in subnets(r)} == ({"subnet-0test1", "subnet-0test2"} if len(terms) == 2 else {"subnet-0test1"})
    assert cond(r, CONDITION_SUBNETS_READY).status == "True"


def test_should_not_resolve_a_invalid_selectors_for_subnet(provider: AWSCloudProvider) -> None:
    # subnet_test.go It("Should not resolve a invalid selectors for Subnet"); reason and message:
    # subnet.go SetFalse(ConditionTypeSubnetsReady, "SubnetsNotFound", ...)
    r = reconciled(provider, nodeclass("subnets-invalid", subnetSelectorTerms=[{"tags": {"foo": "invalid"}}]))
    assert r.subnets == ()
    c = cond(r, CONDITION_SUBNETS_READY)
    assert (c.status, c.reason, c.message) == ("False", "SubnetsNotFound", "SubnetSelector did not match any Subnets")
    ready = cond(r, "Ready")
    assert (ready.status, ready.reason, ready.message) == ("False", "UnhealthyDependents",
                                                           "SubnetsReady=False, ValidationSucceeded=False")
    assert not provider.ec2.client.describe_subnets(Filters=[{"Name": "tag:foo", "Values": ["invalid"]}])["Subnets"]


def test_should_not_resolve_a_invalid_selectors_for_an_updated_subnet_selector(provider: AWSCloudProvider) -> None:
    # subnet_test.go It("Should not resolve a invalid selectors for an updated subnet selector"); the
    # conditions re-evaluate when an EC2NodeClass is applied (a Scenario apply event)
    assert cond(reconciled(provider, nodeclass("subnets-broken")), CONDITION_SUBNETS_READY).status == "True"
    provider.clock.advance_to(provider.clock.now() + 60)
    r = reconciled(provider, nodeclass("subnets-broken", subnetSelectorTerms=[{"tags": {"foo": "invalid"}}]))
    c = cond(r, CONDITION_SUBNETS_READY)
    assert c.status == "False" and r.subnets == ()
    assert c.last_transition_time is not None and c.last_transition_time.timestamp() == pytest.approx(
        1767225600 + provider.clock.now())  # the virtual clock's instant of the change
    # a condition whose status did not change keeps its transition time
    assert cond(r, CONDITION_SECURITY_GROUPS_READY).last_transition_time < c.last_transition_time


# -- securitygroup_test.go -----------------------------------------------------------------------

def test_should_update_ec2nodeclass_status_for_security_groups(provider: AWSCloudProvider) -> None:
    # securitygroup_test.go It("Should update EC2NodeClass status for Security Groups")
    r = reconciled(provider, nodeclass("sgs-all"))
    assert r.security_groups == (("sg-0test1", "securityGroup-test1"), ("sg-0test2", "securityGroup-test2"))
    assert cond(r, CONDITION_SECURITY_GROUPS_READY).status == "True"


@pytest.mark.parametrize("term,expected", [({"tags": {"Name": "test-security-group-2"}}, "sg-0test2"),
                                           ({"id": "sg-0test1"}, "sg-0test1")], ids=["tags", "ids"])
def test_should_resolve_a_valid_selectors_for_security_groups(provider: AWSCloudProvider, term: dict[str, Any],
                                                              expected: str) -> None:
    # securitygroup_test.go It("Should resolve a valid selectors for Security Groups by tags") / "by ids"
    r = reconciled(provider, nodeclass(f"sgs-{expected}", securityGroupSelectorTerms=[term]))
    assert [g for g, _ in r.security_groups] == [expected]
    assert cond(r, CONDITION_SECURITY_GROUPS_READY).status == "True"


def test_should_not_resolve_a_invalid_selectors_for_security_groups(provider: AWSCloudProvider) -> None:
    # securitygroup_test.go It("Should not resolve a invalid selectors for Security Groups") and
    # It("... for an updated Security Groups selector")
    assert cond(reconciled(provider, nodeclass("sgs-invalid")), CONDITION_SECURITY_GROUPS_READY).status == "True"
    r = reconciled(provider, nodeclass("sgs-invalid", securityGroupSelectorTerms=[{"tags": {"foo": "invalid"}}]))
    c = cond(r, CONDITION_SECURITY_GROUPS_READY)
    assert r.security_groups == ()
    assert (c.status, c.reason, c.message) == ("False", "SecurityGroupsNotFound",
                                               "SecurityGroupSelector did not match any SecurityGroups")
    assert cond(r, CONDITION_VALIDATION_SUCCEEDED).reason == "DependenciesNotReady"
    assert cond(r, "Ready").status == "False"


# -- validation_test.go --------------------------------------------------------------------------

_REQUIRED = [CONDITION_AMIS_READY, CONDITION_INSTANCE_PROFILE_READY, CONDITION_SECURITY_GROUPS_READY,
             CONDITION_SUBNETS_READY]


def _preconditions() -> ConditionSet:
    """validation_test.go Context("Preconditions") BeforeEach: the four required conditions True."""
    nc = nodeclass("validation")
    cs = ConditionSet.for_object(nc, nodeclass_condition_types(True), 0.0)
    for t in _REQUIRED:
        cs.set_true(t)
    return cs


@pytest.mark.parametrize("cond_type", _REQUIRED)
def test_validated_false_when_any_required_condition_is_false(cond_type: str) -> None:
    # validation_test.go DescribeTable("should set validated status condition to false when any required condition is false")
    cs = _preconditions()
    cs.set_false(cond_type, "test", "test")
    reconcile_validation(cs, None)
    got = cs.get(CONDITION_VALIDATION_SUCCEEDED)
    assert got is not None and (got.status, got.reason) == ("False", "DependenciesNotReady")
    assert got.message == "Awaiting AMI, Instance Profile, Security Group, and Subnet resolution"


@pytest.mark.parametrize("cond_type", _REQUIRED)
def test_validated_unknown_when_no_required_condition_is_false_and_any_are_unknown(cond_type: str) -> None:
    # validation_test.go DescribeTable("should set validated status condition to unknown when no required
    # condition is false and any are unknown")
    cs = _preconditions()
    cs.set_unknown(cond_type)
    reconcile_validation(cs, None)
    got = cs.get(CONDITION_VALIDATION_SUCCEEDED)
    assert got is not None and (got.status, got.reason) == ("Unknown", "DependenciesNotReady")


@pytest.mark.parametrize("tag", ["kubernetes.io/cluster/acluster", "karpenter.sh/nodepool", "eks:eks-cluster-name",
                                 "karpenter.k8s.aws/ec2nodeclass", "karpenter.sh/nodeclaim"])
def test_not_ready_when_tag_validation_fails(provider: AWSCloudProvider, tag: str) -> None:
    # validation_test.go DescribeTable("should update status condition on nodeClass as NotReady when tag validation fails")
    r = reconciled(provider, nodeclass("tags", tags={tag: "owned"}))
    c = cond(r, CONDITION_VALIDATION_SUCCEEDED)
    assert (c.status, c.reason) == ("False", "TagValidationFailed")
    assert c.message == f'tags failed validation requirements (tags="{tag}")'
    ready = cond(r, "Ready")
    assert (ready.status, ready.message) == ("False", "ValidationSucceeded=False")


def test_ready_when_tags_are_valid(provider: AWSCloudProvider) -> None:
    # validation_test.go It("should update status condition as Ready when tags are valid")
    r = reconciled(provider, nodeclass("tags-valid", tags={}))
    assert cond(r, CONDITION_VALIDATION_SUCCEEDED).status == "True"
    assert cond(r, "Ready").status == "True"


# -- placementgroup_test.go / capacityreservation_test.go / instanceprofile ----------------------

def test_placement_group_ready_true_when_no_placement_group_selector_is_specified(provider: AWSCloudProvider) -> None:
    # placementgroup_test.go It("should have PlacementGroupReady condition set to true when no placement group
    # selector is specified"); instanceprofile.go sets InstanceProfileReady once the profile exists
    r = reconciled(provider, nodeclass("pg"))
    assert cond(r, CONDITION_PLACEMENT_GROUP_READY).status == "True"
    assert cond(r, CONDITION_INSTANCE_PROFILE_READY).status == "True"


@pytest.mark.parametrize("gate", [True, False], ids=["enabled", "disabled"])
def test_should_update_status_condition_on_nodeclass_as_ready(gate: bool) -> None:
    # capacityreservation_test.go DescribeTable("should update status condition on nodeClass as Ready"):
    # 8 conditions with the ReservedCapacity gate, 7 without (CapacityReservationsReady is not a dependent)
    with AWSCloudProvider("us-east-1", prices="2026-07-20", nodeclasses=[nodeclass("cr")],
                          networks=[Network.model_validate(NETWORK)],
                          options=Options(feature_gates=FeatureGates(reserved_capacity=gate))) as p:
        r = p.resolve_nodeclass("cr")
        assert r is not None
        assert len(r.conditions) == (8 if gate else 7)
        assert any(c.type == CONDITION_CAPACITY_RESERVATIONS_READY for c in r.conditions) is gate
        assert cond(r, "Ready").status == "True"
        assert r.conditions[-1].type == "Ready"  # operatorpkg keeps the root last


# -- pkg/cloudprovider/suite_test.go: Create ----------------------------------------------------

def _nodeclaim(nodeclass_name: str) -> Any:
    from karpy.api.nodeclaim import NodeClaim

    return NodeClaim.model_validate({"metadata": {"name": f"claim-{nodeclass_name}", "labels": {
        "karpenter.sh/nodepool": "np"}}, "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
                                                                  "name": nodeclass_name}, "requirements": [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m7i.large"]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}],
        "resources": {"requests": {"cpu": "1"}}}})


def test_create_returns_node_class_not_ready_if_nodeclass_is_not_ready(provider: AWSCloudProvider) -> None:
    # cloudprovider/suite_test.go It("should return NodeClassNotReady error on creation if NodeClass is not ready")
    reconciled(provider, nodeclass("create-bad", subnetSelectorTerms=[{"tags": {"foo": "invalid"}}]))
    with pytest.raises(NodeClassNotReadyError) as e:
        provider.create(_nodeclaim("create-bad"))
    assert is_nodeclass_not_ready_error(e.value)
    assert str(e.value) == "NodeClassRef not ready, SubnetsReady=False, ValidationSucceeded=False"


def test_create_returns_node_class_not_ready_if_tag_validation_fails(provider: AWSCloudProvider) -> None:
    # cloudprovider/suite_test.go It("should return NodeClassNotReady error on creation if NodeClass tag
    # validation fails"): the validation reconciler already failed the NodeClass
    reconciled(provider, nodeclass("create-tags", tags={"karpenter.sh/nodepool": "x"}))
    with pytest.raises(NodeClassNotReadyError, match="ValidationSucceeded=False"):
        provider.create(_nodeclaim("create-tags"))


def test_create_on_a_nodeclass_in_ready_unknown_is_a_create_error(provider: AWSCloudProvider) -> None:
    # cloudprovider.go Create: Ready=Unknown -> CreateError "NodeClassReadinessUnknown"
    import dataclasses

    r = reconciled(provider, nodeclass("create-unknown"))
    unknown = tuple(c.model_copy(update={"status": "Unknown", "message": "waiting"}) if c.type == "Ready" else c
                    for c in r.conditions)
    provider._resolved["create-unknown"] = dataclasses.replace(r, conditions=unknown)
    with pytest.raises(CreateError) as e:
        provider.create(_nodeclaim("create-unknown"))
    assert e.value.condition_reason == "NodeClassReadinessUnknown"
    assert "nodeclass is in Ready=Unknown, waiting" in str(e.value)


# -- core pkg/controllers/nodepool/readiness/suite_test.go ---------------------------------------



def _readiness(p: AWSCloudProvider, np: NodePool) -> NodePool:
    ready = p.nodeclass_readiness(np)
    if ready is not None:
        reconcile_status(np, p.well_known_labels(), ready, float(p.clock.now()))
    return np


def test_readiness_ignores_nodepools_not_managed_by_this_instance(provider: AWSCloudProvider) -> None:
    # readiness/suite_test.go It("should ignore NodePools which aren't managed by this instance of Karpenter")
    np = nodepool("default", group="karpenter.test.sh", kind="UnmanagedNodeClass")
    assert provider.nodeclass_readiness(np) is None
    assert _readiness(provider, np).status.conditions == []


def test_readiness_not_ready_when_nodeclass_does_not_exist(provider: AWSCloudProvider) -> None:
    # readiness/suite_test.go It("should have status condition on nodePool as not ready when nodeClass does not exist")
    np = _readiness(provider, nodepool("missing"))
    assert provider.nodeclass_readiness(np) == NODECLASS_NOT_FOUND
    got = {c.type: (c.status, c.reason, c.message) for c in np.status.conditions}
    assert got["NodeClassReady"] == ("False", "NodeClassNotFound", "NodeClass not found on cluster")
    assert got["Ready"] == ("False", "UnhealthyDependents", "NodeClassReady=False")
    assert not nodepool_is_ready(np)


def test_readiness_ready_if_nodeclass_is_ready(provider: AWSCloudProvider) -> None:
    # readiness/suite_test.go It("should have status condition on nodePool as ready if nodeClass is ready")
    reconciled(provider, nodeclass("np-ready"))
    np = _readiness(provider, nodepool("np-ready"))
    assert [(c.type, c.status) for c in np.status.conditions] == [
        ("ValidationSucceeded", "True"), ("NodeClassReady", "True"), ("Ready", "True")]
    assert nodepool_is_ready(np)


def test_readiness_not_ready_if_nodeclass_is_not_ready(provider: AWSCloudProvider) -> None:
    # readiness/suite_test.go It("should have status condition on nodePool as not ready if nodeClass is not
    # ready"): NodeClassReady carries the NodeClass's Ready reason and message
    reconciled(provider, nodeclass("np-bad", subnetSelectorTerms=[{"tags": {"foo": "invalid"}}]))
    np = _readiness(provider, nodepool("np-bad"))
    got = {c.type: (c.status, c.reason, c.message) for c in np.status.conditions}
    assert got["NodeClassReady"] == ("False", "UnhealthyDependents", "SubnetsReady=False, ValidationSucceeded=False")
    assert not nodepool_is_ready(np)


def test_readiness_not_ready_if_nodeclass_does_not_have_status_conditions() -> None:
    # readiness/suite_test.go It("should have status condition on nodePool as not ready if nodeClass does not
    # have status conditions"): readiness.go NodeClassReadinessUnknown
    np = nodepool("x")
    reconcile_status(np, frozenset(), None, 0.0)
    got = {c.type: (c.status, c.reason, c.message) for c in np.status.conditions}
    assert got["NodeClassReady"] == ("False", "NodeClassReadinessUnknown", "Node Class Readiness Unknown")
    assert not nodepool_is_ready(np)


def test_nodepool_ready_recovers_when_the_nodeclass_is_fixed(provider: AWSCloudProvider) -> None:
    # the NodePool conditions follow the NodeClass over time (its transition time moves with the status)
    reconciled(provider, nodeclass("np-fix", subnetSelectorTerms=[{"tags": {"foo": "invalid"}}]))
    np = _readiness(provider, nodepool("np-fix"))
    assert not nodepool_is_ready(np)
    provider.clock.advance_to(provider.clock.now() + 300)
    reconciled(provider, nodeclass("np-fix"))
    np = _readiness(provider, np)
    assert nodepool_is_ready(np)
    ready = next(c for c in np.status.conditions if c.type == "Ready")
    assert ready.last_transition_time is not None
    assert ready.last_transition_time.timestamp() == pytest.approx(1767225600 + provider.clock.now())


def test_a_sweep_cell_keeps_the_network_as_all_that_exists() -> None:
    # with_scenario (sweeps, compare): the next cell's provider still takes the Network's subnets as all
    # the VPC has, so the unmatched selector stays NotReady instead of getting a subnet made for it
    p = AWSCloudProvider("us-east-1", prices="2026-07-20", networks=[Network.model_validate(NETWORK)],
                         nodeclasses=[nodeclass("sweep", subnetSelectorTerms=[{"tags": {"foo": "invalid"}}])])
    try:
        assert cond(p.resolve_nodeclass("sweep"), CONDITION_SUBNETS_READY).status == "False"
        p = p.with_scenario(prices="2026-07-20")
        r = p.resolve_nodeclass("sweep")
        assert r is not None and r.subnets == ()
        assert cond(r, CONDITION_SUBNETS_READY).reason == "SubnetsNotFound"
    finally:
        p.close()
