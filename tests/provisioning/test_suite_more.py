"""More ports of pkg/controllers/provisioning/scheduling/suite_test.go (S:<line>, Karpenter core @2266468).

Covers In-Flight Nodes (topology, taints, daemonsets, ordering, host ports), Existing Nodes, No
Pre-Binding, Deleting Nodes (non-volume, non-PDB), NodePool requirements instance filtering and
Offering Overrides. The default NodePool is the file's (capacity-type In [spot, on-demand, reserved]).

Harness notes: upstream's ``ExpectDeleted(pod)`` is ``h.pods.remove(pod)``; ``cluster.MarkForDeletion``
is ``h.marked_for_deletion.add(name)``; ``ExpectEvicted`` sets the pod's deletionTimestamp;
``ExpectProvisionedNoBinding`` is ``h.provision(..., bind=False)``; ``cluster.Nodes()`` is
``h.cluster().nodes``.
"""

from __future__ import annotations

import random
from collections import Counter
from datetime import datetime, timezone

import pytest

from karpy.api.builders import make_daemonset, make_node, make_nodepool, make_pod, pod_affinity_term, topology_spread
from karpy.api.meta import ObjectMeta
from karpy.api.node import Node, NodeCondition, NodeSpec, NodeStatus
from karpy.api.nodeclaim import NodeClaim
from karpy.api.quantity import Quantity
from karpy.cloudprovider import fake
from karpy.cloudprovider.types import InstanceTypeOverhead, Offering
from tests.provisioning.harness import Harness
from karpy.scheduling.resources import from_quantities

ZONE = "topology.kubernetes.io/zone"
IT = "node.kubernetes.io/instance-type"
ARCH = "kubernetes.io/arch"
HOST = "kubernetes.io/hostname"
CT = "karpenter.sh/capacity-type"
NODEPOOL = "karpenter.sh/nodepool"
INITIALIZED = "karpenter.sh/initialized"
REGISTERED = "karpenter.sh/registered"
CT_REQ = (CT, "In", ["spot", "on-demand", "reserved"])
NANO = 1_000_000_000


def pool(**kw):
    reqs = list(kw.pop("requirements", []))
    return make_nodepool(kw.pop("name", "default"), requirements=[CT_REQ, *reqs], **kw)


def cpu(rl) -> float:
    return rl.get("cpu", 0) / NANO


def ds_owner(ds) -> dict:
    return {"api_version": "apps/v1", "kind": "DaemonSet", "name": ds.metadata.name, "uid": ds.metadata.uid,
            "controller": True}


def skew(h, key, labels):
    """ExpectSkew: pods matching ``labels`` bound to nodes, counted per value of node label ``key``."""
    counts: Counter = Counter()
    for p in h.pods:
        if not p.spec.node_name or any(p.metadata.labels.get(k) != v for k, v in labels.items()):
            continue
        node = h.node_of(p)
        if node is not None and key in node.metadata.labels:
            counts[node.metadata.labels[key]] += 1
    return sorted(counts.values())


def evict(pod) -> None:
    """ExpectEvicted: the pod gets a deletionTimestamp but stays bound."""
    pod.metadata.deletion_timestamp = datetime(2024, 1, 1, tzinfo=timezone.utc)


def linked_nodeclaim_and_node(name: str, allocatable: dict, labels: dict | None = None, *, initialized: bool = True):
    """test.NodeClaimAndNode + ExpectMakeNodeClaimsInitialized/ExpectMakeNodesInitialized."""
    labels = {"karpenter.test.sh/testnodeclass": "default", **(labels or {})}
    pid = f"fake:///{name}"
    nc = NodeClaim.model_validate({
        "metadata": {"name": name, "labels": dict(labels)},
        "spec": {"nodeClassRef": {"group": "karpenter.test.sh", "kind": "TestNodeClass", "name": "default"}},
        "status": {"providerID": pid, "nodeName": name, "capacity": dict(allocatable),
                   "allocatable": dict(allocatable)}})
    node_labels = {**labels, HOST: name, REGISTERED: "true"}
    if initialized:
        node_labels[INITIALIZED] = "true"
    node = make_node(name, labels=node_labels, capacity=allocatable, provider_id=pid)
    return nc, node


# --- In-Flight Nodes / Topology --------------------------------------------------------------------
def test_inflight_balance_zones():
    # upstream: S:1959 "should balance pods across zones with in-flight nodes"
    labels = {"foo": "bar"}
    tsc = [topology_spread(ZONE, labels)]
    h = Harness([pool()])
    h.provision(*[make_pod(f"a{i}", labels=labels, topology_spread_constraints=tsc) for i in range(4)])
    assert skew(h, ZONE, labels) == [1, 1, 2]
    first_round = len(h.nodes)
    h.provision(*[make_pod(f"b{i}", labels=labels, topology_spread_constraints=tsc) for i in range(5)])
    assert skew(h, ZONE, labels) == [3, 3, 3]
    # shouldn't create any new nodes as the in-flight ones can support the pods
    assert len(h.nodes) == first_round


def test_inflight_balance_hostnames():
    # upstream: S:1990 "should balance pods across hostnames with in-flight nodes"
    labels = {"foo": "bar"}
    tsc = [topology_spread(HOST, labels)]
    h = Harness([pool()])
    h.provision(*[make_pod(f"a{i}", labels=labels, topology_spread_constraints=tsc) for i in range(4)])
    assert skew(h, HOST, labels) == [1, 1, 1, 1]
    h.provision(*[make_pod(f"b{i}", labels=labels, topology_spread_constraints=tsc) for i in range(5)])
    assert skew(h, HOST, labels) == [1] * 9


# --- In-Flight Nodes / Taints -------------------------------------------------------------------------
def test_inflight_node_with_no_taints():
    # upstream: S:2018 "should assume pod will schedule to a tainted node with no taints"
    h = Harness([pool()])
    initial = make_pod("initial", limits={"cpu": "8"})
    h.provision(initial)
    node1 = h.node_of(initial)
    h.pods.remove(initial)  # ExpectDeleted
    node1.spec.taints = []
    second = make_pod("second")
    h.provision(second)
    assert h.node_of(second).metadata.name == node1.metadata.name


# --- In-Flight Nodes / Daemonsets ---------------------------------------------------------------------
def test_inflight_daemonset_usage_tracked_separately():
    # upstream: S:2203 "should track daemonset usage separately so we know how many DS resources are remaining to be scheduled"
    ds = make_daemonset("ds", requests={"cpu": "1", "memory": "1Gi"})
    h = Harness([pool()], daemonsets=[ds])
    initial = make_pod("initial", limits={"cpu": "8"})
    h.provision(initial)
    node1 = h.node_of(initial)
    ds_pod = make_pod("ds-pod", requests={"cpu": "1", "memory": "2Gi"}, owner_references=[ds_owner(ds)])
    h.pods.remove(initial)
    h.pods.append(ds_pod)
    for n in h.cluster().nodes:
        assert cpu(n.daemonset_requests()) == pytest.approx(0)
        assert cpu(n.available()) == pytest.approx(15.9)  # 16 cpu - 100m overhead
    h.bind(ds_pod, node1.metadata.name)
    for n in h.cluster().nodes:
        assert cpu(n.daemonset_requests()) == pytest.approx(1)
        assert cpu(n.available()) == pytest.approx(14.9)
    second = make_pod("second", limits={"cpu": "14.9"})
    h.provision(second)
    assert h.node_of(second).metadata.name == node1.metadata.name


def test_inflight_unexpected_daemonset_pods():
    # upstream: S:2275 "should handle unexpected daemonset pods binding to the node"
    ds1 = make_daemonset("ds1", node_selector={"my-node-label": "value"}, requests={"cpu": "1", "memory": "1Gi"})
    ds2 = make_daemonset("ds2", requests={"cpu": "1m"})
    h = Harness([pool()], daemonsets=[ds1, ds2])
    initial = make_pod("initial", limits={"cpu": "8"})
    h.provision(initial)
    node1 = h.node_of(initial)
    node1.metadata.labels["my-node-label"] = "value"  # appears for a reason Karpenter can't track
    ds_pod = make_pod("ds-pod", node_selector={"my-node-label": "value"},
                      requests={"cpu": "1", "memory": "2Gi"}, owner_references=[ds_owner(ds1)])
    h.pods.remove(initial)
    h.pods.append(ds_pod)
    for n in h.cluster().nodes:
        assert cpu(n.daemonset_requests()) == pytest.approx(0)
        assert cpu(n.available()) == pytest.approx(15.9)
    h.bind(ds_pod, node1.metadata.name)
    for n in h.cluster().nodes:
        assert cpu(n.daemonset_requests()) == pytest.approx(1)
        assert cpu(n.available()) == pytest.approx(14.9)
    second = make_pod("second", limits={"cpu": "15.5"})
    h.provision(second)
    assert h.node_of(second) is not None
    assert h.node_of(second).metadata.name != node1.metadata.name  # must create a new node


def test_inflight_daemonset_initialized_registered_affinity():
    # upstream: S:2364 "Should properly handle DaemonSet resources with Node Affinity for `karpenter.sh/initialized`
    # and `karpenter.sh/registered`"
    ds1 = make_daemonset("ds1", node_requirements=[(INITIALIZED, "In", ["true"])], requests={"cpu": "1"})
    ds2 = make_daemonset("ds2", node_requirements=[(REGISTERED, "In", ["true"])], requests={"cpu": "1"})
    h = Harness([pool()], daemonsets=[ds1, ds2])
    initial = make_pod("initial", limits={"cpu": "2"})
    res = h.provision(initial)
    node1 = h.node_of(initial)
    assert node1 is not None
    # simulation-only requirements don't leak into the created NodeClaim
    assert len(res.requested) == 1
    created = res.requested[0]
    keys = {r.key for r in created.spec.requirements}
    assert REGISTERED not in keys and INITIALIZED not in keys
    assert REGISTERED not in created.metadata.labels and INITIALIZED not in created.metadata.labels
    ds1_pod = make_pod("ds1-pod", requests={"cpu": "1"}, owner_references=[ds_owner(ds1)])
    ds2_pod = make_pod("ds2-pod", requests={"cpu": "1"}, owner_references=[ds_owner(ds2)])
    h.pods.remove(initial)
    h.pods.extend([ds1_pod, ds2_pod])
    for n in h.cluster().nodes:
        assert cpu(n.daemonset_requests()) == pytest.approx(0)
        # both daemonsets counted at launch -> a 16 cpu node (else a 4 cpu one)
        assert cpu(n.available()) == pytest.approx(15.9)
    h.bind(ds1_pod, node1.metadata.name)
    h.bind(ds2_pod, node1.metadata.name)
    for n in h.cluster().nodes:
        assert cpu(n.daemonset_requests()) == pytest.approx(2)
        assert cpu(n.available()) == pytest.approx(13.9)


# --- In-Flight Nodes (rest) -------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pack_inflight_before_new_upstream_catalogue(seed):
    # upstream: S:2492 "should pack in-flight nodes before launching new nodes" (rand.Intn -> seeded Random)
    its = [fake.new_instance_type("medium", resources={"cpu": "4.25", "pods": "4"})]
    h = Harness([pool()], its)
    rng = random.Random(seed)
    n = 0
    for _ in range(10):
        batch = []
        for _ in range(rng.randrange(10)):
            n += 1
            batch.append(make_pod(f"p{n}", limits={"cpu": "1"}))
        h.provision(*batch)
        assert all(h.node_of(p) is not None for p in batch)
    with_cpu_free = sum(1 for sn in h.cluster().nodes if cpu(sn.available()) >= 1)
    assert with_cpu_free <= 1


def test_inflight_no_second_node_2011():
    # upstream: S:2531 "should not launch a second node if there is an in-flight node that can support the pod (#2011)"
    h = Harness([pool()])
    p = make_pod("p", limits={"cpu": "10m"})
    h.provision(p, bind=False)
    assert len(h.nodes) == 1
    h.provision(p, bind=False)
    assert len(h.nodes) == 1  # shouldn't create a second node


def test_order_initialized_when_others_inflight():
    # upstream: S:2553 "should order initialized nodes for scheduling uninitialized nodes when all other nodes are inflight"
    h = Harness([pool()])
    elem = random.Random(7).randrange(100)
    init_node = None
    for i in range(100):
        nc = NodeClaim.model_validate({
            "metadata": {"name": f"nc-{i:03d}", "labels": {NODEPOOL: "default"}},
            "spec": {"nodeClassRef": {"group": "karpenter.test.sh", "kind": "TestNodeClass", "name": "default"}}})
        created = h.cloud_provider.create(nc)
        if i == elem:
            created.status.node_name = f"node-{i:03d}"
            init_node = Node(
                metadata=ObjectMeta(name=f"node-{i:03d}", labels={**created.metadata.labels, HOST: f"node-{i:03d}",
                                                                  REGISTERED: "true", INITIALIZED: "true"}),
                spec=NodeSpec(provider_id=created.status.provider_id),
                status=NodeStatus(capacity=dict(created.status.capacity),
                                  allocatable=dict(created.status.allocatable),
                                  conditions=[NodeCondition(type="Ready", status="True")]))
            h.add_node(init_node)
        h.add_nodeclaim(created)
    p = make_pod("p")
    res = h.provision(p)
    assert res.placements[p.key] == init_node.metadata.name
    assert h.node_of(p).metadata.name == init_node.metadata.name


def test_same_host_port_single_round():
    # upstream: S:2593 "should schedule pods with the same host port to different nodes"
    pods = [make_pod("a", host_ports=[8080]), make_pod("b", host_ports=[8080])]
    h = Harness([pool()])
    h.provision(*pods)
    assert h.node_of(pods[0]) is not None and h.node_of(pods[1]) is not None
    assert h.node_of(pods[0]).metadata.name != h.node_of(pods[1]).metadata.name


# --- Existing Nodes -----------------------------------------------------------------------------------
def test_existing_incompatible_then_pool_applied():
    # upstream: S:2695 "should consider a pod incompatible with an existing node but compatible with NodePool"
    nc, node = linked_nodeclaim_and_node("existing", {"cpu": "10", "memory": "10Gi", "pods": "110"})
    h = Harness([])
    h.add_node(node, nc)
    p = make_pod("p", node_requirements=[(ZONE, "In", ["test-zone-1"])])
    h.provision(p)
    assert h.node_of(p) is None
    h.nodepools.append(pool())
    h.provision()
    assert h.node_of(p) is not None and h.node_of(p).metadata.name != "existing"


def test_existing_daemonset_not_strictly_compatible():
    # upstream: S:2729 "should not subtract daemonset overhead that is not strictly compatible with an existing node"
    nc, node = linked_nodeclaim_and_node("existing", {"cpu": "1", "memory": "1Gi", "pods": "110"})
    ds = make_daemonset("ds", requests={"cpu": "100", "memory": "100Gi"},
                        node_requirements=[(ZONE, "In", ["test-zone-1"])])
    h = Harness([pool()], daemonsets=[ds])
    h.add_node(node, nc)
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"})
    h.provision(p)
    assert h.node_of(p) is not None and h.node_of(p).metadata.name == "existing"
    # the DS overhead takes every "theoretical node"'s capacity, so no new node can host pod2
    p2 = make_pod("p2", requests={"cpu": "1", "memory": "1Gi"})
    h.provision(p2)
    assert h.node_of(p2) is None


# --- No Pre-Binding ----------------------------------------------------------------------------------
def test_no_prebinding():
    # upstream: S:2788 "should not bind pods to nodes"
    h = Harness([pool()])
    assert not h.nodes
    initial = make_pod("initial", limits={"cpu": "10m"})
    h.provision(initial, bind=False)
    assert initial.spec.node_name is None
    assert len(h.nodes) == 1
    second = make_pod("second", limits={"cpu": "10m"})
    h.provision(second, bind=False)
    assert second.spec.node_name is None
    assert len(h.nodes) == 1  # can use the in-flight node


def test_no_prebinding_extended_resource_zeroing():
    # upstream: S:2818 "should handle resource zeroing of extended resources by kubelet"
    h = Harness([pool()])
    opts = {"limits": {"cpu": "10m", fake.RESOURCE_GPU_VENDOR_A: "1"}}
    initial = make_pod("initial", **opts)
    h.provision(initial, bind=False)
    assert len(h.nodes) == 1
    node1 = h.nodes[0]
    # kubelet zeroing out the extended resources at startup
    node1.status.capacity = {fake.RESOURCE_GPU_VENDOR_A: Quantity("0")}
    node1.status.allocatable = {fake.RESOURCE_GPU_VENDOR_B: Quantity("0")}
    second = make_pod("second", **opts)
    h.provision(second, bind=False)
    assert second.spec.node_name is None
    assert len(h.nodes) == 1


def test_no_prebinding_self_affinity_zone():
    # upstream: S:2860 "should respect self pod affinity without pod binding (zone)"
    aff = {"security": "s2"}
    pods = [make_pod(f"p{i}", labels=aff, pod_affinity=[pod_affinity_term(aff, ZONE)]) for i in range(2)]
    h = Harness([pool()])
    h.provision(pods[0], bind=False)
    h.provision(pods[1], bind=False)
    assert len(h.nodes) == 1


# --- Deleting Nodes ----------------------------------------------------------------------------------
def _first_small(h, **kw):
    p = make_pod("p", requests={"memory": "100M"}, **kw)
    h.provision(p)
    node = h.node_of(p)
    assert node.metadata.labels[IT] == "small-instance-type"
    return p, node


def test_deleting_node_active_pods_rescheduled():
    # upstream: S:4061 "should re-schedule pods from a deleting node when pods are active"
    h = Harness([pool()])
    p, node = _first_small(h)
    h.marked_for_deletion.add(node.metadata.name)
    h.provision()
    assert len(h.nodes) == 2
    assert all(n.metadata.labels[IT] == "small-instance-type" for n in h.nodes)


def test_deleting_node_inactive_pods_not_rescheduled():
    # upstream: S:4087 "should not re-schedule pods from a deleting node when pods are not active"
    h = Harness([pool()])
    p, node = _first_small(h)
    h.marked_for_deletion.add(node.metadata.name)
    evict(p)
    h.provision()
    assert len(h.nodes) == 1


def test_deleting_node_daemonset_pods_not_rescheduled():
    # upstream: S:4114 "should not re-schedule pods from a deleting node when pods are owned by a DaemonSet"
    ds = make_daemonset("ds")
    h = Harness([pool()], daemonsets=[ds])
    nc, node = linked_nodeclaim_and_node("existing", {"cpu": "32"}, labels={
        NODEPOOL: "default", IT: "small-instance-type", CT: "on-demand", ZONE: "test-zone-1a"})
    h.add_node(node, nc)
    p = make_pod("p", requests={"memory": "100M"}, owner_references=[ds_owner(ds)])
    h.bind(p, "existing")
    h.marked_for_deletion.add("existing")
    evict(p)
    h.provision()
    assert len(h.nodes) == 1


def test_deleting_node_inactive_replicaset_pods_not_rescheduled():
    # upstream: S:4171 "should not reschedule pods from a deleting node when pods are not active and they are owned by a ReplicaSet"
    h = Harness([pool()])
    p, node = _first_small(h, owner_references=[{"api_version": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                                                 "uid": "rs-uid", "controller": True}])
    h.marked_for_deletion.add(node.metadata.name)
    evict(p)
    h.provision()
    assert len(h.nodes) == 1


def test_deleting_node_inactive_statefulset_pods_rescheduled():
    # upstream: S:4215 "should reschedule pods from a deleting node when pods are not active and they are owned by a StatefulSet"
    h = Harness([pool()])
    p, node = _first_small(h, owner_references=[{"api_version": "apps/v1", "kind": "StatefulSet", "name": "ss",
                                                 "uid": "ss-uid", "controller": True}])
    h.marked_for_deletion.add(node.metadata.name)
    evict(p)
    h.provision()
    assert len(h.nodes) == 2
    assert all(n.metadata.labels[IT] == "small-instance-type" for n in h.nodes)


# --- NodePool requirements instance filtering --------------------------------------------------------
FILTERED = "nodepool requirements filtered out all available instance types"


def test_filtered_requirements_error():
    # upstream: S:5197 "should return appropriate pod error when no available instance types exist"
    h = Harness([pool()])
    normal = make_pod("normal")
    h.provision(normal)
    assert h.node_of(normal) is not None
    # test.ReplaceRequirements: the pool's requirements become exactly this one
    h.nodepools = [make_nodepool("default", requirements=[(IT, "In", ["non-existent-instance-type"])])]
    p = make_pod("test-pod-filtered", limits={"cpu": "32", "memory": "256Gi"})
    res = h.provision(p)
    assert h.node_of(p) is None
    assert list(res.results.pod_errors) == [p.key]
    assert FILTERED in res.results.pod_errors[p.key]


def test_filtered_requirements_multiple_pods():
    # upstream: S:5242 "should handle multiple pods when requirements filter out all instance types"
    pods = [make_pod(f"pod-{i}") for i in (1, 2, 3)]
    h = Harness([make_nodepool("default", requirements=[(ARCH, "In", ["non-existent-arch"])])])
    res = h.provision(*pods)
    assert len(res.results.pod_errors) == 3
    for p in pods:
        assert h.node_of(p) is None
        assert FILTERED in res.results.pod_errors[p.key]


def test_filtered_requirements_conflicting():
    # upstream: S:5273 "should handle conflicting requirements that eliminate all instance types"
    h = Harness([make_nodepool("default", requirements=[(ARCH, "In", ["amd64"]), (ARCH, "In", ["arm64"])])])
    p = make_pod("conflicting-requirements-pod")
    res = h.provision(p)
    assert len(res.results.pod_errors) == 1
    assert FILTERED in res.results.pod_errors[p.key]


def test_filtered_requirements_zone():
    # upstream: S:5302 "should handle zone requirements that filter out all instance types"
    h = Harness([make_nodepool("default", requirements=[(ZONE, "In", ["non-existent-zone-1", "non-existent-zone-2"])])])
    p = make_pod("zone-filtered-pod")
    res = h.provision(p)
    assert len(res.results.pod_errors) == 1
    assert FILTERED in res.results.pod_errors[p.key]


# --- Offering Overrides ------------------------------------------------------------------------------
EXT = "test.com/extended-slots"


def _with_override_offerings(it, available: bool):
    for o in list(it.offerings):
        it.offerings.append(Offering(
            o.requirements, o.price, available=available and o.available,
            capacity_override=from_quantities({EXT: Quantity("4")}),
            overhead_override=InstanceTypeOverhead(system_reserved=from_quantities({"memory": Quantity("1Gi")}))))
    if hasattr(it, "refresh_availability"):
        it.refresh_availability()
    return it


def test_offering_override_selects_capable_types():
    # upstream: S:5524 "should only select instance types whose offerings have CapacityOverride when pod requests an
    # override resource"
    override = _with_override_offerings(
        fake.new_instance_type("override-capable", resources={"cpu": "4", "memory": "8Gi"}), available=True)
    normal = fake.new_instance_type("normal", resources={"cpu": "4", "memory": "8Gi"})
    h = Harness([pool()], [override, normal])
    p = make_pod("p", requests={EXT: "1"}, limits={EXT: "1"})
    results = h.provisioner.schedule([p], h.nodepools, h.cluster())
    assert len(results.new_nodeclaims) == 1
    names = [it.name for it in results.new_nodeclaims[0].instance_type_options]
    assert "override-capable" in names
    assert "normal" not in names


def test_offering_override_unavailable_rejected():
    # upstream: S:5568 "should reject instance type when override allocatable fits but override offerings are unavailable"
    override = _with_override_offerings(
        fake.new_instance_type("override-capable", resources={"cpu": "4", "memory": "8Gi"}), available=False)
    h = Harness([pool()], [override])
    p = make_pod("p", requests={EXT: "1"}, limits={EXT: "1"})
    results = h.provisioner.schedule([p], h.nodepools, h.cluster())
    assert len(results.new_nodeclaims) == 0
