"""Ports of pkg/controllers/provisioning/scheduling/instance_selection_test.go (I:<line>)."""

from __future__ import annotations

import random

import pytest

from karpy.api.builders import make_nodepool, make_pod
from karpy.cloudprovider import fake
from karpy.cloudprovider.types import Offering
from tests.provisioning.harness import expect_provisioned
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

ZONE = "topology.kubernetes.io/zone"
IT = "node.kubernetes.io/instance-type"
ARCH = "kubernetes.io/arch"
OS = "kubernetes.io/os"
CT = "karpenter.sh/capacity-type"
GEN = "karpenter/numerical-value"
MIN_PRICE = 0.2073741824


def assorted():
    its = fake.instance_types_assorted()
    random.Random(7).shuffle(its)  # upstream shuffles to check we sort everywhere
    return its


def base_pool(extra=()):
    return make_nodepool("default", requirements=[(CT, "In", ["spot", "on-demand"]), (ARCH, "In", ["arm64", "amd64"]), *extra])


def node_price(its, labels):
    it = next(i for i in its if i.name == labels[IT])
    reqs = Requirements.from_labels(labels)
    return min(o.price for o in it.offerings if o.is_compatible(reqs, it.well_known))


def launched_types(res):
    return [r for r in res.requested[0].spec.requirements if r.key == IT][0].values


def by_name(its):
    return {i.name: i for i in its}


@pytest.mark.parametrize("pool_extra,pod_kw,check", [
    ((), {}, None),                                                                          # I:82
    ((), {"node_requirements": [(ARCH, "In", ["amd64"])]}, (ARCH, "amd64")),                 # I:89
    ((), {"node_requirements": [(ARCH, "In", ["arm64"])]}, (ARCH, "arm64")),                 # I:103
    (((ARCH, "In", ["amd64"]),), {}, (ARCH, "amd64")),                                       # I:116
    (((ARCH, "In", ["arm64"]),), {}, (ARCH, "arm64")),                                       # I:131
    (((OS, "In", ["windows"]),), {}, (OS, "windows")),                                       # I:146
    ((), {"node_requirements": [(OS, "In", ["windows"])]}, (OS, "windows")),                 # I:161
    ((), {"node_requirements": [(OS, "In", ["linux"])]}, (OS, "linux")),                     # I:189
    (((ZONE, "In", ["test-zone-2"]),), {}, (ZONE, "test-zone-2")),                           # I:215
    ((), {"node_requirements": [(ZONE, "In", ["test-zone-2"])]}, (ZONE, "test-zone-2")),     # I:230
    (((CT, "In", ["spot"]),), {}, (CT, "spot")),                                             # I:243
    ((), {"node_requirements": [(CT, "In", ["spot"])]}, (CT, "spot")),                       # I:258
    (((CT, "In", ["on-demand"]), (ZONE, "In", ["test-zone-1"])), {}, (ZONE, "test-zone-1")),  # I:271
    ((), {"node_requirements": [(CT, "In", ["spot"]), (ZONE, "In", ["test-zone-1"])]}, (CT, "spot")),  # I:291
])
def test_cheapest_instance(pool_extra, pod_kw, check):
    # upstream: I:82-396 "should schedule on one of the cheapest instances (...)"
    its = assorted()
    p = make_pod("p", **pod_kw)
    h, res = expect_provisioned([p], [base_pool(pool_extra)], its)
    labels = h.labels_of(p)
    assert labels is not None
    assert node_price(its, labels) == pytest.approx(MIN_PRICE)
    if check:
        assert labels[check[0]] == check[1]
        m = by_name(its)
        # every instance type sent to the cloud provider satisfies the constraint
        for name in launched_types(res):
            if check[0] in (ARCH, OS):
                assert m[name].requirements.get(check[0]).has(check[1])


def test_cheapest_complex():
    # upstream: I:330 "prov ct = ondemand/test-zone-1/arm64/windows"
    its = assorted()
    p = make_pod("p")
    pool = make_nodepool("default", requirements=[(CT, "In", ["on-demand"]), (ZONE, "In", ["test-zone-1"]),
                                                  (ARCH, "In", ["arm64"]), (OS, "In", ["windows"])])
    h, _ = expect_provisioned([p], [pool], its)
    labels = h.labels_of(p)
    assert (labels[CT], labels[ZONE], labels[ARCH], labels[OS]) == ("on-demand", "test-zone-1", "arm64", "windows")
    assert node_price(its, labels) == pytest.approx(MIN_PRICE)


@pytest.mark.parametrize("pool_extra,pod_reqs", [
    (((ARCH, "In", ["amd64"]),), [(ARCH, "In", ["arm64"])]),                                   # I:428
    (((ARCH, "In", ["amd64"]),), [(ARCH, "In", ["arm64"]), (ZONE, "In", ["test-zone-2"])]),    # I:448
    (((ARCH, "In", ["arm64"]), (ZONE, "In", ["test-zone-1"])), [(ZONE, "In", ["test-zone-2"])]),  # I:477
])
def test_no_instance_type_matches(pool_extra, pod_reqs):
    # upstream: I:428/448/477 "should not schedule if no instance type matches selector"
    p = make_pod("p", node_requirements=list(pod_reqs))
    h, _ = expect_provisioned([p], [base_pool(pool_extra)], assorted())
    assert h.node_of(p) is None


def test_enough_resources():
    # upstream: I:509 "should schedule on an instance with enough resources"
    its = assorted()
    for cpu, mem in [(0.1, 0.1), (1, 1), (2, 2), (4, 4), (8, 8), (16, 16)]:
        p = make_pod(f"p-{cpu}", requests={"cpu": str(cpu), "memory": f"{mem}Gi"})
        h, res = expect_provisioned([p], [base_pool()], its)
        m = by_name(its)
        for name in launched_types(res):
            it = m[name]
            assert it.allocatable()["cpu"] >= int(cpu * 1e9)


def test_on_demand_cheaper_despite_spot_ordering():
    # upstream: I:563 "should schedule on cheaper on-demand instance even when spot price ordering would place other instance types first"
    def it(name, od, spot):
        return fake.new_instance_type(name, resources={"cpu": "1", "memory": "1Gi"}, offerings=[
            Offering(Requirements.from_labels({CT: "on-demand", ZONE: "test-zone-1"}), od),
            Offering(Requirements.from_labels({CT: "spot", ZONE: "test-zone-1"}), spot)])
    its = [it("test-instance1", 1.0, 0.2), it("test-instance2", 1.3, 0.1)]
    p = make_pod("p")
    h, _ = expect_provisioned([p], [make_nodepool("default", requirements=[(CT, "In", ["on-demand"])])], its)
    assert h.labels_of(p)[IT] == "test-instance1"


# --- MinValues --------------------------------------------------------------------------------------
def spot_it(name, cpu, mem, price, zone="test-zone-1-spot", arch="arm64", gen=None):
    reqs = [Requirement(GEN, "In", [gen])] if gen is not None else None
    return fake.new_instance_type(name, architecture=arch, operating_systems=["linux"],
                                  resources={"cpu": cpu, "memory": mem},
                                  offerings=[Offering(Requirements.from_labels({CT: "spot", ZONE: zone}), price)],
                                  requirements=reqs)


def test_min_values_instance_type():
    # upstream: I:621 "should schedule respecting the minValues from instance-type requirements"
    its = [spot_it("instance-type-1", "1", "1Gi", 0.52), spot_it("instance-type-2", "4", "4Gi", 1.0)]
    pool = make_nodepool("default", requirements=[{"key": IT, "operator": "In",
                                                   "values": ["instance-type-1", "instance-type-2"], "minValues": 2}])
    pods = [make_pod(f"p{i}", requests={"cpu": "0.9", "memory": "0.9Gi"}) for i in range(2)]
    h, res = expect_provisioned(pods, [pool], its)
    assert h.node_of(pods[0]).metadata.name != h.node_of(pods[1]).metadata.name
    assert len(launched_types(res)) >= 2


def test_min_values_gt():
    # upstream: I:693 "should schedule respecting the minValues in Gt operator"
    its = [spot_it("instance-type-1", "1", "1Gi", 0.52, gen="2"), spot_it("instance-type-2", "1", "1Gi", 1.0, gen="3"),
           spot_it("instance-type-3", "4", "4Gi", 1.2, gen="4")]
    pool = make_nodepool("default", requirements=[{"key": GEN, "operator": "Gt", "values": ["2"], "minValues": 2}])
    pods = [make_pod(f"p{i}", requests={"cpu": "0.9", "memory": "0.9Gi"}) for i in range(2)]
    h, res = expect_provisioned(pods, [pool], its)
    assert h.node_of(pods[0]).metadata.name != h.node_of(pods[1]).metadata.name
    assert set(launched_types(res)) == {"instance-type-2", "instance-type-3"}


def test_min_values_gt_not_satisfied():
    # upstream: I:784 "scheduler should fail if the minValues in Gt operator is not satisfied"
    its = [spot_it("instance-type-1", "1", "1Gi", 0.52, gen="2"), spot_it("instance-type-2", "4", "4Gi", 1.0, gen="3")]
    pool = make_nodepool("default", requirements=[{"key": GEN, "operator": "Exists", "minValues": 2}])
    pods = [make_pod(f"p{i}", requests={"cpu": "0.9", "memory": "0.9Gi"}, node_requirements=[(GEN, "Gt", ["2"])])
            for i in range(2)]
    h, res = expect_provisioned(pods, [pool], its)
    assert h.node_of(pods[0]) is None and h.node_of(pods[1]) is None
    assert "minValues requirement is not met for label(s) (label(s)=[karpenter/numerical-value])" in res.errors[pods[0].key]


def test_min_values_lt():
    # upstream: I:870 "should schedule respecting the minValues in Lt operator"
    its = [spot_it("instance-type-1", "1", "1Gi", 0.52, gen="2"), spot_it("instance-type-2", "4", "4Gi", 1.0, gen="3"),
           spot_it("instance-type-3", "4", "4Gi", 1.2, gen="4")]
    pool = make_nodepool("default", requirements=[{"key": GEN, "operator": "Lt", "values": ["4"], "minValues": 2}])
    pods = [make_pod(f"p{i}", requests={"cpu": "0.9", "memory": "0.9Gi"}) for i in range(2)]
    h, res = expect_provisioned(pods, [pool], its)
    assert h.node_of(pods[0]) is not None
    assert set(launched_types(res)) == {"instance-type-1", "instance-type-2"}


def test_min_values_lt_not_satisfied():
    # upstream: I:961 "scheduler should fail if the minValues in Lt operator is not satisfied"
    its = [spot_it("instance-type-1", "2", "2Gi", 0.52, gen="2"), spot_it("instance-type-2", "4", "4Gi", 1.0, gen="4")]
    pool = make_nodepool("default", requirements=[{"key": GEN, "operator": "Lt", "values": ["4"], "minValues": 2}])
    p = make_pod("p", requests={"cpu": "0.9", "memory": "0.9Gi"})
    h, res = expect_provisioned([p], [pool], its)
    assert h.node_of(p) is None
    assert res.errors[p.key] == "nodepool requirements filtered out all available instance types"


def test_min_values_in_and_not_in():
    # upstream: I:1029 "should schedule considering the max of the minValues of In and NotIn operators"
    its = [spot_it("instance-type-1", "1", "1Gi", 0.52), spot_it("instance-type-2", "4", "4Gi", 1.0),
           spot_it("instance-type-3", "4", "4Gi", 1.2)]
    pool = make_nodepool("default", requirements=[
        {"key": IT, "operator": "In", "values": ["instance-type-1", "instance-type-2", "instance-type-3"], "minValues": 1},
        {"key": IT, "operator": "NotIn", "values": ["instance-type-3"], "minValues": 2}])
    pods = [make_pod(f"p{i}", requests={"cpu": "0.9", "memory": "0.9Gi"}) for i in range(2)]
    h, res = expect_provisioned(pods, [pool], its)
    assert h.node_of(pods[0]).metadata.name != h.node_of(pods[1]).metadata.name
    assert set(launched_types(res)) == {"instance-type-1", "instance-type-2"}
    it_req = [r for r in res.requested[0].spec.requirements if r.key == IT][0]
    assert it_req.min_values == 2


def test_min_values_gt_and_lt():
    # upstream: I:1121 "should schedule considering the max of the minValues of Gt and Lt operators."
    its = [spot_it(f"instance-type-{g}", "1" if g < 4 else "4", "1Gi" if g < 4 else "4Gi", 0.5 + g / 10, gen=str(g))
           for g in (2, 3, 4, 5)]
    pool = make_nodepool("default", requirements=[{"key": GEN, "operator": "Gt", "values": ["2"], "minValues": 1},
                                                  {"key": GEN, "operator": "Lt", "values": ["5"], "minValues": 2}])
    pods = [make_pod(f"p{i}", requests={"cpu": "0.9", "memory": "0.9Gi"}) for i in range(2)]
    h, res = expect_provisioned(pods, [pool], its)
    assert h.node_of(pods[0]).metadata.name != h.node_of(pods[1]).metadata.name
    assert len(launched_types(res)) >= 2


def test_min_values_instance_types_not_met():
    # upstream: I:1234 "schedule should fail if minimum number of InstanceTypes is not met as per the minValues in the requirement"
    its = fake.instance_types_assorted()[:10]
    pool = make_nodepool("default", requirements=[{"key": IT, "operator": "Exists", "minValues": 11}])
    p = make_pod("p")
    h, _ = expect_provisioned([p], [pool], its)
    assert h.node_of(p) is None


def test_min_values_after_truncation():
    # upstream: I:1261 "...as per the minValues in the requirement after truncation"
    its = [spot_it("instance-type-1", "1", "1Gi", 0.52), spot_it("instance-type-2", "4", "4Gi", 1.0)]
    pool = make_nodepool("default", requirements=[{"key": IT, "operator": "In",
                                                   "values": ["instance-type-1", "instance-type-2"], "minValues": 2}])
    p = make_pod("p", requests={"cpu": "0.9", "memory": "0.9Gi"})
    h, res = expect_provisioned([p], [pool], its, max_instance_types=1)
    assert h.node_of(p) is None
    assert res.errors[p.key].startswith(
        "pod didn\u2019t schedule because NodePool couldn\u2019t meet minValues requirements, validating minValues, "
        "minValues requirement is not met for label(s) (label(s)=[node.kubernetes.io/instance-type])")
    assert res.errors[p.key].endswith("(NodePool=default)")


def test_min_values_multiple_operators_same_key():
    # upstream: I:1331 "should schedule and pick the max of minValues of InstanceTypes if multiple operators are used"
    its = [spot_it("instance-type-1", "1", "1Gi", 0.52), spot_it("instance-type-2", "4", "4Gi", 1.0),
           spot_it("instance-type-3", "4", "4Gi", 1.2)]
    pool = make_nodepool("default", requirements=[
        {"key": IT, "operator": "Exists", "minValues": 2},
        {"key": IT, "operator": "In", "values": ["instance-type-1", "instance-type-2"], "minValues": 1}])
    p = make_pod("p", requests={"cpu": "0.9", "memory": "0.9Gi"})
    h, res = expect_provisioned([p], [pool], its)
    assert h.node_of(p) is not None
    it_req = [r for r in res.requested[0].spec.requirements if r.key == IT][0]
    assert it_req.min_values == 2 and sorted(it_req.values) == ["instance-type-1", "instance-type-2"]


def test_min_values_multiple_keys():
    # upstream: I:1410 "should schedule and respect multiple requirement keys with minValues"
    its = [spot_it("instance-type-1", "1", "1Gi", 0.52, arch="arm64"),
           spot_it("instance-type-2", "4", "4Gi", 1.0, arch="amd64")]
    pool = make_nodepool("default", requirements=[
        {"key": ARCH, "operator": "Exists", "minValues": 2},
        {"key": IT, "operator": "In", "values": ["instance-type-1", "instance-type-2"], "minValues": 1}])
    pods = [make_pod(f"p{i}", requests={"cpu": "0.9", "memory": "0.9Gi"}) for i in range(2)]
    h, res = expect_provisioned(pods, [pool], its)
    assert h.node_of(pods[0]).metadata.name != h.node_of(pods[1]).metadata.name
