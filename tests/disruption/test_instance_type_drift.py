"""InstanceTypeNotFound drift: ports of pkg/controllers/nodeclaim/disruption/drift_test.go (core 2266468) and
a run on the AWS provider where an EC2NodeClass change takes the node's type out of the NodePool."""

from __future__ import annotations

from karpy.api.builders import make_nodepool
from karpy.api.nodeclaim import NodeClaim
from karpy.cloudprovider.fake import FakeCloudProvider
from karpy.cloudprovider.types import Offerings
from tests.disruption.harness import ts
from karpy.nodeclaim.disruption import (DRIFTED, INSTANCE_TYPE_NOT_FOUND, InstanceTypeCheckCache, drift_reason,
                                        instance_type_not_found, update_drifted)

HOUR = 3600.0


class Provider:
    """The fake provider with its instance types replaceable (upstream's cp.InstanceTypes) and a drift answer."""

    def __init__(self, types=None, drifted=None):
        self.fake = FakeCloudProvider()
        self.types = list(self.fake.get_instance_types(make_nodepool())) if types is None else types
        self.drifted = drifted
        self.calls = 0

    def get_instance_types(self, nodepool):
        self.calls += 1
        return self.types

    def is_drifted(self, nodeclaim):
        return self.drifted


def nodeclaim(instance_type="default-instance-type", zone="test-zone-1", ct="spot"):
    labels = {"karpenter.sh/nodepool": "default", "karpenter.sh/capacity-type": ct,
              "topology.kubernetes.io/zone": zone, "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux"}
    if instance_type is not None:
        labels["node.kubernetes.io/instance-type"] = instance_type
    nc = NodeClaim.model_validate({"metadata": {"name": "nc", "uid": "uid-1", "labels": labels}})
    nc.metadata.creation_timestamp = ts(0)
    return nc


def drifted_after(provider, nc, t=2 * HOUR):
    cache = InstanceTypeCheckCache()
    return drift_reason(make_nodepool(), nc, provider, t, cache)


# upstream: drift_test.go "should detect stale instance type drift if the instance type label doesn't exist"
def test_missing_instance_type_label_is_instance_type_not_found():
    assert drifted_after(Provider(), nodeclaim(instance_type=None)) == INSTANCE_TYPE_NOT_FOUND


# upstream: drift_test.go "should detect stale instance type drift if the instance type doesn't exist"
def test_instance_type_gone_from_the_catalogue():
    assert drifted_after(Provider(types=[]), nodeclaim()) == INSTANCE_TYPE_NOT_FOUND


# upstream: drift_test.go "should detect stale instance type drift if the instance type offerings doesn't exist"
def test_instance_type_without_offerings():
    p = Provider()
    for it in p.types:
        it.offerings = Offerings([])
    assert drifted_after(p, nodeclaim()) == INSTANCE_TYPE_NOT_FOUND


# upstream: drift_test.go "should detect stale instance type drift if the instance type offerings aren't compatible with the nodeclaim"
def test_offerings_not_compatible_with_the_nodeclaim():
    p = Provider()
    assert drifted_after(p, nodeclaim()) is None  # the same type in its zone: not drifted
    assert drifted_after(p, nodeclaim(zone="nowhere-zone")) == INSTANCE_TYPE_NOT_FOUND


# upstream: drift_test.go isDrifted: the check waits an hour after creation and a successful check is cached
# for 30 minutes (controller.go cache.New(time.Minute*30, ...))
def test_checked_only_after_an_hour_and_then_every_thirty_minutes():
    p, nc, cache = Provider(), nodeclaim(), InstanceTypeCheckCache()
    assert drift_reason(make_nodepool(), nc, p, 0.5 * HOUR, cache) is None and p.calls == 0
    assert drift_reason(make_nodepool(), nc, p, 1.1 * HOUR, cache) is None and p.calls == 1
    p.types = []  # the type disappears, but the successful check is cached
    assert drift_reason(make_nodepool(), nc, p, 1.4 * HOUR, cache) is None and p.calls == 1
    assert drift_reason(make_nodepool(), nc, p, 1.7 * HOUR, cache) == INSTANCE_TYPE_NOT_FOUND


# upstream: drift_test.go "should detect node requirement drift before cloud provider drift" (the order:
# static, requirements, InstanceTypeNotFound, then the cloud provider)
def test_instance_type_not_found_comes_before_cloud_provider_drift():
    assert drifted_after(Provider(types=[], drifted="drifted"), nodeclaim()) == INSTANCE_TYPE_NOT_FOUND
    assert drifted_after(Provider(drifted="drifted"), nodeclaim()) == "drifted"


def test_a_reserved_nodeclaim_matches_on_demand_offerings_too():
    """drift.go instanceTypeNotFound: a reserved NodeClaim may have been demoted to on-demand, so on-demand
    offerings count and the provider's reservation labels are ignored."""
    p = Provider()
    nc = nodeclaim(ct="reserved")
    nc.metadata.labels["karpenter.k8s.aws/capacity-reservation-id"] = "cr-1"
    its = [it for it in p.types if it.name == "default-instance-type"]
    assert instance_type_not_found(its, nc, frozenset({"karpenter.k8s.aws/capacity-reservation-id"})) is None


def test_update_drifted_sets_the_condition_reason():
    nc = nodeclaim()
    assert update_drifted(make_nodepool(), nc, 2 * HOUR, Provider(types=[]), InstanceTypeCheckCache()) \
        == INSTANCE_TYPE_NOT_FOUND
    assert next(c for c in nc.status.conditions if c.type == DRIFTED).reason == INSTANCE_TYPE_NOT_FOUND
