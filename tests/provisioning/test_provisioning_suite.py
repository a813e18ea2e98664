"""Ports of pkg/controllers/provisioning/suite_test.go (P:<line>, Karpenter core @2266468) and in-flight /
existing node cases of sched/suite_test.go (S:<line>).

The later part's NodePool is ``test.NodePool()`` (no requirements) over the default fake catalogue.
Upstream's ``instanceTypeMap[node IT].Capacity`` is the Node's status.capacity here (the harness copies
the launched type's capacity); upstream's ``node.Annotations`` are the created NodeClaim's annotations
(the harness does not copy annotations onto Nodes); ``cloudProvider.CreateCalls[0]`` is
``res.requested[0]``. Its last section re-ports, with upstream's exact setup and numbers, cases the
first part ports with a simplified setup."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from karpy.api.builders import make_daemonset, make_node, make_nodepool, make_pod, pod_affinity_term, topology_spread
from karpy.api.nodeclaim import NodeClaim
from karpy.api.pod import (
    Affinity,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
)
from karpy.api.quantity import Quantity, parse_nanos
from karpy.cloudprovider import fake
from karpy.cloudprovider.types import Offering
from tests.provisioning.harness import Harness, expect_provisioned
from karpy.scheduling.requirements import Requirements
from karpy.scheduling.resources import from_quantities

ZONE = "topology.kubernetes.io/zone"
IT = "node.kubernetes.io/instance-type"
ARCH = "kubernetes.io/arch"
CT = "karpenter.sh/capacity-type"
HOST = "kubernetes.io/hostname"
GB = 1 << 30


def cap_of(h, pod):
    node = h.node_of(pod)
    return {k: str(v) for k, v in node.status.capacity.items()}


def test_provision_nodes():
    # upstream: P:225 "should provision nodes"
    p = make_pod("p")
    h, res = expect_provisioned([p], [make_nodepool()])
    assert h.node_of(p) is not None and len(res.created) == 1


def test_provision_multiple_pods():
    # upstream: P:236 "Should provision nodes for multiple pods"
    pods = [make_pod(f"p{i}") for i in range(3)]
    h, res = expect_provisioned(pods, [make_nodepool()])
    assert all(h.node_of(p) is not None for p in pods)


def test_ignore_deleting_nodepools():
    # upstream: P:283 "should ignore NodePools that are deleting"
    from datetime import datetime, timezone
    np = make_nodepool()
    np.metadata.deletion_timestamp = datetime(2024, 1, 1, tzinfo=timezone.utc)
    p = make_pod("p")
    h, res = expect_provisioned([p], [np])
    assert h.node_of(p) is None
    assert res.errors[p.key] == "no dynamic nodepools found"


def test_no_valid_nodepools():
    # upstream: P:294 "should mark pod as unschedulable if there are no valid nodepools"
    p = make_pod("p")
    h, res = expect_provisioned([p], [])
    assert res.errors[p.key] == "no dynamic nodepools found"


def test_supported_node_selectors():
    # upstream: P:336 "should provision nodes for pods with supported node selectors"
    np = make_nodepool()
    ok = [make_pod("a", node_selector={"karpenter.sh/nodepool": "default"}),
          make_pod("b", node_selector={ZONE: "test-zone-1"}),
          make_pod("c", node_selector={CT: "on-demand"})]
    bad = [make_pod("x", node_selector={"karpenter.sh/nodepool": "unknown"}),
           make_pod("y", node_selector={ZONE: "unknown"}),
           make_pod("z", node_selector={CT: "unknown"})]
    h, res = expect_provisioned(ok + bad, [np])
    assert all(h.node_of(p) is not None for p in ok)
    assert all(h.node_of(p) is None for p in bad)


def test_accelerators():
    # upstream: P:416 "should provision nodes for accelerators"
    pods = [make_pod("a", limits={fake.RESOURCE_GPU_VENDOR_A: "1"}), make_pod("b", limits={fake.RESOURCE_GPU_VENDOR_B: "1"})]
    h, _ = expect_provisioned(pods, [make_nodepool()])
    assert h.labels_of(pods[0])[IT] == "gpu-vendor-instance-type"
    assert h.labels_of(pods[1])[IT] == "gpu-vendor-b-instance-type"


def test_max_pods():
    # upstream: P:431 "should provision multiple nodes when maxPods is set"
    its = [fake.new_instance_type("single-pod", resources={"pods": "1"})]
    pods = [make_pod(f"p{i}") for i in range(3)]
    h, res = expect_provisioned(pods, [make_nodepool()], its)
    assert len(res.created) == 3


def test_sidecar_init_first():
    # upstream: P:532 "...with sidecar containers when initcontainer comes first"
    p = make_pod("p", requests={"cpu": "6", "memory": "2Gi"},
                 init_containers=[{"requests": {"cpu": "10", "memory": "2Gi"}},
                                  {"requests": {"cpu": "4.9", "memory": "2Gi"}, "restart_policy": "Always"}])
    h, res = expect_provisioned([p], [make_nodepool()], fake.instance_types(20))
    # need max(10, 6 + 4.9) = 10.9 cpu; fake-it-10 (11 cpu, 10.9 allocatable) fits exactly
    assert h.labels_of(p)[IT] == "fake-it-10"


# --- Resource Limits ---------------------------------------------------------------------------------
def test_limits_exceeded_by_existing():
    # upstream: P:742 "should not schedule when limits are exceeded"
    h = Harness([make_nodepool(limits={"cpu": "20"})])
    h.add_nodeclaim(NodeClaim.model_validate({"metadata": {"name": "nc", "labels": {"karpenter.sh/nodepool": "default"}},
                                              "status": {"capacity": {"cpu": "100"}}}))
    p = make_pod("p")
    res = h.provision(p)
    assert h.node_of(p) is None
    assert "all available instance types exceed limits for nodepool (NodePool=default)" in res.errors[p.key]


def test_limits_would_be_met():
    # upstream: P:765 "should schedule if limits would be met"
    p = make_pod("p", requests={"cpu": "1.75"})
    h, _ = expect_provisioned([p], [make_nodepool(limits={"cpu": "2"})])
    assert h.labels_of(p)[IT] == "small-instance-type"


def test_partially_schedule_limits():
    # upstream: P:782 "should partially schedule if limits would be exceeded"
    pods = [make_pod(f"p{i}", labels={"app": "x"}, requests={"cpu": "1.5"},
                     pod_anti_affinity=[pod_affinity_term({"app": "x"}, HOST)]) for i in range(2)]
    h, res = expect_provisioned(pods, [make_nodepool(limits={"cpu": "3"})])
    assert sum(h.node_of(p) is not None for p in pods) == 1


def test_limits_would_be_exceeded():
    # upstream: P:832 "should not schedule if limits would be exceeded"
    p = make_pod("p", requests={"cpu": "2.1"})
    h, _ = expect_provisioned([p], [make_nodepool(limits={"cpu": "2"})])
    assert h.node_of(p) is None


def test_limits_would_be_exceeded_gpu():
    # upstream: P:847 "should not schedule if limits would be exceeded (GPU)"
    p = make_pod("p", limits={fake.RESOURCE_GPU_VENDOR_A: "1"})
    h, _ = expect_provisioned([p], [make_nodepool(limits={"pods": "1"})])
    assert h.node_of(p) is None


def test_limits_after_round():
    # upstream: P:863 "should not schedule to a nodepool after a scheduling round if limits would be exceeded"
    h = Harness([make_nodepool(limits={"cpu": "2"})])
    p1 = make_pod("p1", requests={"cpu": "1.75"})
    h.provision(p1)
    assert h.node_of(p1) is not None
    p2 = make_pod("p2", requests={"cpu": "1.75"})
    h.provision(p2)
    assert h.node_of(p2) is None


def test_node_limits():
    # upstream: P:891 "should not schedule if limits would be exceeded (node)"
    h = Harness([make_nodepool(limits={"nodes": "2"})])
    pods = [make_pod(f"p{i}", labels={"app": "x"}, pod_anti_affinity=[pod_affinity_term({"app": "x"}, HOST)])
            for i in range(3)]
    res = [h.provision(p) for p in pods]
    assert h.node_of(pods[0]) is not None and h.node_of(pods[1]) is not None
    assert h.node_of(pods[2]) is None
    assert "node limits have been exhausted for nodepool (NodePool=default)" in res[2].errors[pods[2].key]


# --- Daemonsets ---------------------------------------------------------------------------------------
def test_daemonset_overhead():
    # upstream: P:935 "should account for daemonsets"
    ds = make_daemonset("ds", requests={"cpu": "1", "memory": "1Gi"})
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"})
    h, _ = expect_provisioned([p], [make_nodepool()], daemonsets=[ds])
    assert h.labels_of(p)[IT] == "default-instance-type"


def test_daemonset_hostports():
    # upstream: P:956 "should account for daemonset hostports"
    ds = make_daemonset("ds", host_ports=[8080])
    p = make_pod("p", host_ports=[8080])
    h, res = expect_provisioned([p], [make_nodepool()], daemonsets=[ds])
    assert h.node_of(p) is None and not res.created


def test_daemonset_startup_taint():
    # upstream: P:974 "should account for daemonsets (with startup taint)"
    ds = make_daemonset("ds", requests={"cpu": "1", "memory": "1Gi"})
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"})
    np = make_nodepool(startup_taints=[{"key": "foo.com/taint", "effect": "NoSchedule"}])
    h, _ = expect_provisioned([p], [np], daemonsets=[ds])
    assert h.labels_of(p)[IT] == "default-instance-type"


def test_daemonset_too_large():
    # upstream: P:1004 "should not schedule if daemonset overhead is too large"
    ds = make_daemonset("ds", requests={"cpu": "10000", "memory": "10000Gi"})
    p = make_pod("p")
    h, _ = expect_provisioned([p], [make_nodepool()], daemonsets=[ds])
    assert h.node_of(p) is None


def test_daemonset_limits_as_requests_too_large():
    # upstream: P:1057 "should not schedule if resource requests are not defined and limits (requests) are too large"
    ds = make_daemonset("ds", limits={"cpu": "10000", "memory": "10000Gi"})
    p = make_pod("p")
    h, _ = expect_provisioned([p], [make_nodepool()], daemonsets=[ds])
    assert h.node_of(p) is None


def test_daemonset_init_container_max():
    # upstream: P:1070 "should schedule based on the max resource requests of containers and initContainers"
    ds = make_daemonset("ds", requests={"cpu": "1", "memory": "1Gi"},
                        init_containers=[{"requests": {"cpu": "2", "memory": "1Gi"}}])
    p = make_pod("p")
    h, _ = expect_provisioned([p], [make_nodepool()], daemonsets=[ds])
    assert h.labels_of(p)[IT] == "default-instance-type"


def test_daemonset_init_container_too_large():
    # upstream: P:1119 "should not schedule if initContainer resources are too large"
    ds = make_daemonset("ds", init_containers=[{"requests": {"cpu": "10000", "memory": "10000Gi"}}])
    p = make_pod("p")
    h, _ = expect_provisioned([p], [make_nodepool()], daemonsets=[ds])
    assert h.node_of(p) is None


def test_daemonset_without_requests():
    # upstream: P:1135 "should be able to schedule pods if resource requests and limits are not defined"
    ds = make_daemonset("ds")
    p = make_pod("p")
    h, _ = expect_provisioned([p], [make_nodepool()], daemonsets=[ds])
    assert h.node_of(p) is not None


def test_daemonset_without_tolerations_ignored():
    # upstream: P:1143 "should ignore daemonsets without matching tolerations"
    ds = make_daemonset("ds", requests={"cpu": "1", "memory": "1Gi"})
    np = make_nodepool(taints=[{"key": "foo", "value": "bar", "effect": "NoSchedule"}])
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"}, tolerations=[{"operator": "Exists"}])
    h, _ = expect_provisioned([p], [np], daemonsets=[ds])
    assert h.labels_of(p)[IT] == "small-instance-type"


def test_daemonset_invalid_selector_ignored():
    # upstream: P:1175 "should ignore daemonsets with an invalid selector"
    ds = make_daemonset("ds", requests={"cpu": "1", "memory": "1Gi"}, node_selector={"node": "invalid"})
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"})
    h, _ = expect_provisioned([p], [make_nodepool()], daemonsets=[ds])
    assert h.labels_of(p)[IT] == "small-instance-type"


def test_daemonset_no_instance_type_meets_requirements():
    # upstream: P:1197 "should ignore daemonsets when no instance types meet the daemonset requirements"
    ds = make_daemonset("ds", requests={"cpu": "1", "memory": "1Gi"}, node_requirements=[(ARCH, "In", ["s390x"])])
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"})
    h, _ = expect_provisioned([p], [make_nodepool()], daemonsets=[ds])
    assert h.labels_of(p)[IT] == "small-instance-type"


def test_daemonset_custom_label_matches_pool():
    # upstream: P:1219 "should account for daemonsets with a custom label nodeSelector that matches the nodepool"
    ds = make_daemonset("ds", requests={"cpu": "1", "memory": "1Gi"}, node_selector={"foo": "bar"})
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"})
    h, _ = expect_provisioned([p], [make_nodepool(labels={"foo": "bar"})], daemonsets=[ds])
    assert h.labels_of(p)[IT] == "default-instance-type"


def test_daemonset_filter_by_instance_type_requirements():
    # upstream: P:1246 "should filter out daemonsets based on instance type requirements"
    small = make_daemonset("small", requests={"cpu": "1"}, node_requirements=[("size", "In", ["small"])])
    large = make_daemonset("large", requests={"cpu": "10"}, node_requirements=[("size", "In", ["large"])])
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"})
    h, _ = expect_provisioned([p], [make_nodepool()], daemonsets=[small, large])
    assert h.labels_of(p)[IT] == "default-instance-type"


def test_daemonset_not_in_unspecified_key():
    # upstream: P:1276 "should account daemonsets with NotIn operator and unspecified key"
    ds = make_daemonset("ds", requests={"cpu": "1", "memory": "1Gi"}, node_requirements=[("foo", "NotIn", ["bar"])])
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"})
    h, _ = expect_provisioned([p], [make_nodepool()], daemonsets=[ds])
    assert h.labels_of(p)[IT] == "default-instance-type"


def test_daemonset_prefer_no_schedule():
    # upstream: P:1459 "should consider a daemonset schedulable with a PreferNoSchedule taint"
    ds = make_daemonset("ds", requests={"cpu": "1", "memory": "1Gi"})
    np = make_nodepool(taints=[{"key": "foo", "value": "bar", "effect": "PreferNoSchedule"}])
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"}, tolerations=[{"operator": "Exists"}])
    h, _ = expect_provisioned([p], [np], daemonsets=[ds])
    assert h.labels_of(p)[IT] == "default-instance-type"


def test_daemonset_multiple_node_affinity_terms():
    # upstream: P:1371 "should consider a daemonset schedulable with multiple node affinity terms"
    from karpy.api.pod import NodeSelectorRequirement, NodeSelectorTerm
    ds = make_daemonset("ds", requests={"cpu": "1", "memory": "1Gi"}, node_requirements=[("foo", "In", ["bar"])])
    ds.spec.template.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms.append(
        NodeSelectorTerm(match_expressions=[NodeSelectorRequirement(key=ZONE, operator="In", values=["test-zone-1"])]))
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"})
    h, _ = expect_provisioned([p], [make_nodepool()], daemonsets=[ds])
    assert h.labels_of(p)[IT] == "default-instance-type"


def test_nodeclaim_requests_with_daemon_overhead():
    # upstream: P:1939 "should create a nodeclaim with resource requests with daemon overhead"
    ds = make_daemonset("ds", requests={"cpu": "1", "memory": "1Mi"})
    p = make_pod("p", requests={"cpu": "1", "memory": "1Mi"})
    h, res = expect_provisioned([p], [make_nodepool()], daemonsets=[ds])
    reqs = {k: str(v) for k, v in res.requested[0].spec.resources.requests.items()}
    assert reqs == {"cpu": "2", "memory": "2Mi", "pods": "2"}


def test_daemon_overhead_not_double_counted():
    # upstream: P:1959 "should not double-count daemon overhead when multiple pods are scheduled to the same nodeclaim"
    ds = make_daemonset("ds", requests={"cpu": "1", "memory": "1Mi"})
    pods = [make_pod(f"p{i}", requests={"cpu": "1", "memory": "1Mi"}) for i in range(2)]
    h, res = expect_provisioned(pods, [make_nodepool()], daemonsets=[ds])
    reqs = {k: str(v) for k, v in res.requested[0].spec.resources.requests.items()}
    assert reqs == {"cpu": "3", "memory": "3Mi", "pods": "3"}


def test_nodeclaim_resource_requests():
    # upstream: P:1913 "should create a nodeclaim with resource requests"
    p = make_pod("p", requests={"cpu": "1", "memory": "1Mi", fake.RESOURCE_GPU_VENDOR_A: "1"})
    h, res = expect_provisioned([p], [make_nodepool()])
    reqs = {k: str(v) for k, v in res.requested[0].spec.resources.requests.items()}
    assert reqs == {"cpu": "1", "memory": "1Mi", fake.RESOURCE_GPU_VENDOR_A: "1", "pods": "1"}


# --- Labels / Annotations / Taints ---------------------------------------------------------------
def test_annotate_nodes():
    # upstream: P:1528 "should annotate nodes"
    np = make_nodepool(annotations={"karpenter.sh/do-not-disrupt": "true"})
    p = make_pod("p")
    h, res = expect_provisioned([p], [np])
    assert res.created[0].metadata.annotations["karpenter.sh/do-not-disrupt"] == "true"


def test_label_nodes():
    # upstream: P:1546 "should label nodes"
    np = make_nodepool(labels={"test-key-1": "test-value-1"},
                       requirements=[("test-key-2", "In", ["test-value-2"]), ("test-key-3", "NotIn", ["test-value-3"]),
                                     ("test-key-4", "Lt", ["4"]), ("test-key-5", "Gt", ["5"]),
                                     ("test-key-6", "Exists", []), ("test-key-7", "DoesNotExist", [])])
    p = make_pod("p")
    h, _ = expect_provisioned([p], [np])
    labels = h.labels_of(p)
    assert labels["test-key-1"] == "test-value-1"
    assert labels["test-key-2"] == "test-value-2"
    assert labels.get("test-key-3") != "test-value-3"
    assert int(labels["test-key-4"]) < 4
    assert int(labels["test-key-5"]) > 5
    assert "test-key-6" in labels
    assert "test-key-7" not in labels


def test_no_well_known_labels_from_requirements():
    # upstream: P:1623 "should not label nodes with well-known labels from requirements"
    np = make_nodepool(requirements=[(ZONE, "In", ["test-zone-1", "test-zone-2"])])
    p = make_pod("p")
    h, res = expect_provisioned([p], [np])
    assert ZONE not in res.requested[0].metadata.labels


def test_pods_tolerating_taints():
    # upstream: P:1645 "should schedule pods that tolerate taints"
    np = make_nodepool(taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}])
    pods = [make_pod("a", tolerations=[{"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}]),
            make_pod("b", tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]),
            make_pod("c", tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}]),
            make_pod("d", tolerations=[{"operator": "Exists"}])]
    h, _ = expect_provisioned(pods, [np])
    assert all(h.node_of(p) is not None for p in pods)


def test_untolerated_taint_error():
    # upstream: taints.go Tolerates message ("did not tolerate taint")
    np = make_nodepool(taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}])
    p = make_pod("p")
    h, res = expect_provisioned([p], [np])
    assert res.errors[p.key] == "did not tolerate taint (taint=nvidia.com/gpu=true:NoSchedule)"


# --- NodeClaim Creation ----------------------------------------------------------------------------
def test_nodeclaim_expected_requirements():
    # upstream: P:1695 "should create a nodeclaim request with expected requirements"
    p = make_pod("p")
    h, res = expect_provisioned([p], [make_nodepool()])
    reqs = {r.key: r for r in res.requested[0].spec.requirements}
    assert sorted(reqs[IT].values) == sorted(["default-instance-type", "small-instance-type", "gpu-vendor-instance-type",
                                             "gpu-vendor-b-instance-type", "arm-instance-type", "single-pod-instance-type"])
    assert reqs["karpenter.sh/nodepool"].values == ["default"]
    assert "karpenter.sh/registered" not in reqs and "karpenter.sh/initialized" not in reqs
    assert sorted(reqs[CT].values) == ["on-demand", "spot"]


def test_nodeclaim_arch_restriction():
    # upstream: P:1766 "should create a nodeclaim request restricting instance types on architecture"
    p = make_pod("p")
    h, res = expect_provisioned([p], [make_nodepool(requirements=[(ARCH, "In", ["arm64"])])])
    reqs = {r.key: r for r in res.requested[0].spec.requirements}
    assert reqs[IT].values == ["arm-instance-type"]


def test_nodeclaim_resource_restriction():
    # upstream: P:1840 "should create a nodeclaim request restricting instance types based on pod resource requests"
    p = make_pod("p", requests={fake.RESOURCE_GPU_VENDOR_A: "1"})
    h, res = expect_provisioned([p], [make_nodepool()])
    reqs = {r.key: r for r in res.requested[0].spec.requirements}
    assert reqs[IT].values == ["gpu-vendor-instance-type"]


def test_nodeclaim_owner_reference_and_nodeclass():
    # upstream: P:1867 owner reference; P:1885 "should create a nodeclaim request propagating the nodeClass reference"
    p = make_pod("p")
    h, res = expect_provisioned([p], [make_nodepool()])
    nc = res.requested[0]
    assert nc.metadata.owner_references[0].kind == "NodePool" and nc.metadata.owner_references[0].name == "default"
    assert nc.spec.node_class_ref.kind == "TestNodeClass"
    assert nc.metadata.generate_name == "default-"


# --- Preferential fallback (provisioning suite) ----------------------------------------------------
def test_pns_taint_used_last():
    # upstream: P:2487 "should tolerate PreferNoSchedule taint only after trying to relax Affinity terms"
    np = make_nodepool(taints=[{"key": "foo", "value": "bar", "effect": "PreferNoSchedule"}])
    from karpy.api.pod import NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm
    p = make_pod("p", node_preferences=[(ZONE, "In", ["invalid"])])
    p.spec.affinity.node_affinity.preferred_during_scheduling_ignored_during_execution.append(
        PreferredSchedulingTerm(weight=1, preference=NodeSelectorTerm(match_expressions=[
            NodeSelectorRequirement(key=IT, operator="In", values=["invalid"])])))
    h, res = expect_provisioned([p], [np])
    assert h.node_of(p) is not None
    assert [t.key for t in h.node_of(p).spec.taints] == ["foo"]


def test_pns_pool_not_preferred():
    # upstream: P:2797 "should not match NodePool with PreferNoSchedule taint when other NodePool match"
    a = make_nodepool("nodepool-a", taints=[{"key": "foo", "value": "bar", "effect": "PreferNoSchedule"}])
    b = make_nodepool("nodepool-b")
    p = make_pod("p")
    h, _ = expect_provisioned([p], [a, b])
    assert h.labels_of(p)["karpenter.sh/nodepool"] == "nodepool-b"


def test_ignore_node_affinity_preferences():
    # upstream: P:2566 "should ignore node affinity preferences" (PreferencePolicy=Ignore)
    z1 = make_pod("z1", requests={"cpu": "2"}, node_selector={ZONE: "test-zone-1"})
    z2 = [make_pod(f"z2-{i}", requests={"cpu": "3"}, node_selector={ZONE: "test-zone-2"}) for i in range(2)]
    p = make_pod("p", requests={"cpu": "1"}, node_preferences=[(ZONE, "In", ["test-zone-2"])])
    h, _ = expect_provisioned([z1, *z2, p], [make_nodepool()], fake.instance_types(10), preference_policy="Ignore")
    assert h.node_of(p).metadata.name == h.node_of(z1).metadata.name


def test_respect_node_affinity_preferences():
    # contrast of P:2566 under Respect: the preference puts the pod in test-zone-2
    z1 = make_pod("z1", requests={"cpu": "2"}, node_selector={ZONE: "test-zone-1"})
    p = make_pod("p", requests={"cpu": "1"}, node_preferences=[(ZONE, "In", ["test-zone-2"])])
    h, _ = expect_provisioned([z1, p], [make_nodepool()], fake.instance_types(10))
    assert h.labels_of(p)[ZONE] == "test-zone-2"


def test_ignore_preferred_anti_affinity():
    # upstream: P:2663 "should ignore pod anti-affinity preferences"
    pods = [make_pod(f"p{i}", labels={"app": "x"}, pod_anti_affinity_preferences=[(1, pod_affinity_term({"app": "x"}, HOST))])
            for i in range(3)]
    h, res = expect_provisioned(pods, [make_nodepool()], preference_policy="Ignore")
    assert len(res.created) == 1


# --- Weighted NodePools -------------------------------------------------------------------------------
def test_highest_weight_pool():
    # upstream: P:2815 "should schedule to the nodepool with the highest priority always"
    pools = [make_nodepool("a"), make_nodepool("b", weight=20), make_nodepool("c", weight=100)]
    pods = [make_pod(f"p{i}") for i in range(3)]
    h, _ = expect_provisioned(pods, pools)
    assert {h.labels_of(p)["karpenter.sh/nodepool"] for p in pods} == {"c"}


def test_explicit_pool_over_weight():
    # upstream: P:2831 "should schedule to explicitly selected nodepool even if other nodePools are higher priority"
    pools = [make_nodepool("a"), make_nodepool("b", weight=20), make_nodepool("c", weight=100)]
    p = make_pod("p", node_selector={"karpenter.sh/nodepool": "a"})
    h, _ = expect_provisioned([p], pools)
    assert h.labels_of(p)["karpenter.sh/nodepool"] == "a"


def test_equal_weight_name_descending():
    # upstream: pkg/utils/nodepool OrderByWeight ties -> name descending
    pools = [make_nodepool("alpha"), make_nodepool("beta")]
    p = make_pod("p")
    h, _ = expect_provisioned([p], pools)
    assert h.labels_of(p)["karpenter.sh/nodepool"] == "beta"


def test_static_nodepool_dropped():
    # upstream: P:2848 "should not create NodeClaims for StaticNodePool"
    p = make_pod("p")
    h, res = expect_provisioned([p], [make_nodepool("static", replicas=1)])
    assert not res.created and res.errors[p.key] == "no dynamic nodepools found"


def test_static_and_dynamic():
    # upstream: P:2859 "should still provision dynamic NodeClaims when there are both Static and Dynamic NodePools"
    p = make_pod("p")
    h, res = expect_provisioned([p], [make_nodepool("static", replicas=1), make_nodepool("dynamic")])
    assert h.labels_of(p)["karpenter.sh/nodepool"] == "dynamic"


# --- MinValuesPolicy -----------------------------------------------------------------------------------
def _mv_its():
    def it(name, zone):
        return fake.new_instance_type(name, resources={"cpu": "4", "memory": "4Gi"}, offerings=[
            Offering(Requirements.from_labels({CT: "spot", ZONE: zone}), 0.52)])
    return [it("instance-type-1", "test-zone-1-spot"), it("instance-type-2", "test-zone-2-spot")]


def _mv_pool(name="default", weight=100):
    return make_nodepool(name, weight=weight, requirements=[
        {"key": IT, "operator": "In", "values": ["instance-type-1", "instance-type-2", "instance-type-3"], "minValues": 3}])


def test_min_values_strict():
    # upstream: P:2911 "should not schedule when minValues requirement is not met"
    p = make_pod("p")
    h, _ = expect_provisioned([p], [_mv_pool()], _mv_its())
    assert h.node_of(p) is None


def test_min_values_best_effort():
    # upstream: P:2962 "should schedule even when minValues requirement is not met"
    p = make_pod("p")
    h, res = expect_provisioned([p], [_mv_pool()], _mv_its(), min_values_policy="BestEffort")
    assert h.labels_of(p)[IT] == "instance-type-1"
    nc = res.requested[0]
    assert nc.metadata.annotations["karpenter.sh/nodeclaim-min-values-relaxed"] == "true"
    it_req = [r for r in nc.spec.requirements if r.key == IT][0]
    assert sorted(it_req.values) == ["instance-type-1", "instance-type-2"] and it_req.min_values == 2


def test_min_values_relax_before_fallback():
    # upstream: P:3024 "should relax minValues before falling back to other nodepools"
    p = make_pod("p")
    other = make_nodepool("other", weight=10)
    h, res = expect_provisioned([p], [_mv_pool(), other], _mv_its(), min_values_policy="BestEffort")
    assert h.labels_of(p)["karpenter.sh/nodepool"] == "default"


def test_min_values_not_relaxed_annotation_false():
    # upstream: scheduler.go:740-750 annotation "false" when nothing was relaxed
    p = make_pod("p")
    h, res = expect_provisioned([p], [make_nodepool()], min_values_policy="BestEffort")
    assert res.requested[0].metadata.annotations["karpenter.sh/nodeclaim-min-values-relaxed"] == "false"


def test_zone_min_values_strict_and_best_effort():
    # upstream: P:3216 / P:3259 zone minValues Strict / BestEffort
    pool = make_nodepool(requirements=[{"key": ZONE, "operator": "In", "values": ["test-zone-1", "test-zone-2", "test-zone-3"],
                                        "minValues": 3}])
    its = [fake.new_instance_type("it", resources={"cpu": "4", "memory": "4Gi"}, offerings=[
        Offering(Requirements.from_labels({CT: "on-demand", ZONE: "test-zone-1"}), 1.0),
        Offering(Requirements.from_labels({CT: "on-demand", ZONE: "test-zone-2"}), 1.0)])]
    p = make_pod("p")
    h, _ = expect_provisioned([p], [pool], its)
    assert h.node_of(p) is None
    p2 = make_pod("p2")
    h2, res = expect_provisioned([p2], [pool], its, min_values_policy="BestEffort")
    assert h2.node_of(p2) is not None
    zone_req = [r for r in res.requested[0].spec.requirements if r.key == ZONE][0]
    assert zone_req.min_values == 2


# --- In-flight / existing nodes (sched suite) ---------------------------------------------------
def test_inflight_reuse():
    # upstream: S:1830 "should not launch a second node if there is an in-flight node that can support the pod"
    h = Harness([make_nodepool()])
    a, b = make_pod("a", requests={"cpu": "10m"}), make_pod("b", requests={"cpu": "10m"})
    h.provision(a)
    res = h.provision(b)
    assert h.node_of(a).metadata.name == h.node_of(b).metadata.name and not res.created


def test_inflight_node_selectors():
    # upstream: S:1847 "...in-flight node that can support the pod (node selectors)"
    h = Harness([make_nodepool()])
    a = make_pod("a", node_requirements=[(ZONE, "In", ["test-zone-2"])])
    h.provision(a)
    b = make_pod("b", node_requirements=[(ZONE, "In", ["test-zone-1", "test-zone-2"])])
    h.provision(b)
    assert h.node_of(b).metadata.name == h.node_of(a).metadata.name
    c = make_pod("c", node_requirements=[(ZONE, "In", ["test-zone-1", "test-zone-3"])])
    h.provision(c)
    assert h.node_of(c).metadata.name != h.node_of(a).metadata.name


def test_inflight_wont_fit():
    # upstream: S:1896 "should launch a second node if a pod won't fit on the existingNodes node"
    h = Harness([make_nodepool()])
    a = make_pod("a", requests={"cpu": "1001m"})
    h.provision(a)
    b = make_pod("b", requests={"cpu": "1"})
    h.provision(b)
    assert h.node_of(a).metadata.name != h.node_of(b).metadata.name


def test_inflight_incompatible_selector():
    # upstream: S:1915 "should launch a second node if a pod isn't compatible with the existingNodes node (node selector)"
    h = Harness([make_nodepool()])
    a = make_pod("a")
    h.provision(a)
    b = make_pod("b", node_selector={ARCH: "arm64"})
    h.provision(b)
    assert h.node_of(a).metadata.name != h.node_of(b).metadata.name


def test_inflight_terminating():
    # upstream: S:1932 "should launch a second node if an in-flight node is terminating"
    h = Harness([make_nodepool()])
    a = make_pod("a")
    h.provision(a)
    first = h.node_of(a).metadata.name
    h.marked_for_deletion.add(first)
    b = make_pod("b")
    res = h.provision(b)
    assert h.node_of(b).metadata.name != first and len(res.created) == 1
    # the deleting node's pod is rescheduled too (provisioner.go:387 CurrentlyReschedulablePods)
    assert res.placements[a.key] == h.node_of(b).metadata.name


def test_inflight_startup_taint():
    # upstream: S:2110 "should assume pod will schedule to a tainted node with a custom startup taint"
    np = make_nodepool(startup_taints=[{"key": "foo.com/taint", "effect": "NoSchedule"}])
    h = Harness([np])
    a = make_pod("a")
    h.provision(a)
    b = make_pod("b")
    h.provision(b)
    assert h.node_of(b).metadata.name == h.node_of(a).metadata.name


def test_startup_taint_after_initialization():
    # upstream: S:2143 "should not assume pod will schedule to a node with startup taints after initialization"
    np = make_nodepool(startup_taints=[{"key": "foo.com/taint", "effect": "NoSchedule"}])
    h = Harness([np])
    a = make_pod("a")
    h.provision(a)
    node = h.node_of(a)
    node.metadata.labels["karpenter.sh/initialized"] = "true"  # initialized, startup taint still present
    b = make_pod("b")
    h.provision(b)
    assert h.node_of(b).metadata.name != node.metadata.name


def test_inflight_not_ready_ephemeral_taint():
    # upstream: S:2040 "...ephemeral taint node.kubernetes.io/not-ready:NoExecute when the node is uninitialized"
    h = Harness([make_nodepool()])
    a = make_pod("a")
    h.provision(a)
    from karpy.api.pod import Taint
    h.node_of(a).spec.taints.append(Taint(key="node.kubernetes.io/not-ready", effect="NoExecute"))
    b = make_pod("b")
    h.provision(b)
    assert h.node_of(b).metadata.name == h.node_of(a).metadata.name


def test_inflight_tainted_node():
    # upstream: S:2078 "should not assume pod will schedule to a tainted node"
    h = Harness([make_nodepool()])
    a = make_pod("a")
    h.provision(a)
    node = h.node_of(a)
    node.metadata.labels["karpenter.sh/initialized"] = "true"
    from karpy.api.pod import Taint
    node.spec.taints.append(Taint(key="foo.com/taint", value="tainted", effect="NoSchedule"))
    b = make_pod("b")
    h.provision(b)
    assert h.node_of(b).metadata.name != node.metadata.name


def test_inflight_host_ports():
    # upstream: S:2593 "should schedule pods with the same host port to different nodes"
    h = Harness([make_nodepool()])
    a = make_pod("a", host_ports=[80])
    h.provision(a)
    b = make_pod("b", host_ports=[80])
    h.provision(b)
    assert h.node_of(a).metadata.name != h.node_of(b).metadata.name


def test_pack_inflight_before_new():
    # upstream: S:2492 "should pack in-flight nodes before launching new nodes"
    h = Harness([make_nodepool()], fake.instance_types(10))
    pods = [make_pod(f"p{i}", requests={"cpu": "1"}) for i in range(2)]
    h.provision(*pods)
    more = [make_pod(f"q{i}", requests={"cpu": "100m"}) for i in range(3)]
    res = h.provision(*more)
    assert not res.created


def test_existing_unmanaged_node():
    # upstream: S:2607 "should schedule a pod to an existing node unowned by Karpenter"
    h = Harness([make_nodepool()])
    h.add_node(make_node("node-a", capacity={"cpu": "10", "memory": "10Gi", "pods": "110"}))
    p = make_pod("p")
    res = h.provision(p)
    assert h.node_of(p).metadata.name == "node-a" and not res.created


def test_existing_unmanaged_node_many_pods():
    # upstream: S:2633 "should schedule multiple pods to an existing node unowned by Karpenter"
    h = Harness([make_nodepool()])
    h.add_node(make_node("node-a", capacity={"cpu": "10", "memory": "10Gi", "pods": "110"}))
    pods = [make_pod(f"p{i}") for i in range(100)]
    res = h.provision(*pods)
    assert all(h.node_of(p).metadata.name == "node-a" for p in pods) and not res.created


def test_existing_incompatible_but_pool_compatible():
    # upstream: S:2695 "should consider a pod incompatible with an existing node but compatible with NodePool"
    h = Harness([make_nodepool()])
    h.add_node(make_node("node-a", capacity={"cpu": "10", "memory": "10Gi", "pods": "110"}))
    p = make_pod("p", node_requirements=[(ZONE, "In", ["test-zone-1"])])
    res = h.provision(p)
    assert h.node_of(p).metadata.name != "node-a" and len(res.created) == 1


def test_existing_initialized_first():
    # upstream: S:2662 "should order initialized nodes for scheduling uninitialized nodes"
    h = Harness([make_nodepool()])
    h.add_node(make_node("node-a", capacity={"cpu": "10", "memory": "10Gi", "pods": "110"}))
    h.add_node(make_node("node-b", capacity={"cpu": "10", "memory": "10Gi", "pods": "110"}))
    cluster = h.cluster()
    names = [sn.name for sn in cluster.nodes]
    assert names == ["node-a", "node-b"]
    p = make_pod("p")
    h.provision(p)
    assert h.node_of(p).metadata.name == "node-a"


def test_existing_node_daemon_not_strictly_compatible():
    # upstream: S:2729 "should not subtract daemonset overhead that is not strictly compatible with an existing node"
    h = Harness([make_nodepool()], daemonsets=[make_daemonset("ds", requests={"cpu": "1", "memory": "1Gi"},
                                                              node_selector={"foo": "bar"})])
    h.add_node(make_node("node-a", capacity={"cpu": "2", "memory": "2Gi", "pods": "110"}))
    p = make_pod("p", requests={"cpu": "1.5", "memory": "1.5Gi"})
    h.provision(p)
    assert h.node_of(p).metadata.name == "node-a"


OS = "kubernetes.io/os"


NODEPOOL = "karpenter.sh/nodepool"


WINDOWS_BUILD = "node.kubernetes.io/windows-build"


MIN_VALUES_RELAXED = "karpenter.sh/nodeclaim-min-values-relaxed"


HASH = "karpenter.sh/nodepool-hash"


ALL_TYPES = {"default-instance-type", "small-instance-type", "gpu-vendor-instance-type", "gpu-vendor-b-instance-type",
             "arm-instance-type", "single-pod-instance-type"}


def capacity(h, pod) -> tuple[int, int]:
    """(cpu, memory) nano-units of the launched type's capacity."""
    cap = from_quantities(h.node_of(pod).status.capacity)
    return cap["cpu"], cap["memory"]


def cap_is(h, pod, cpu: str, memory: str) -> bool:
    return capacity(h, pod) == (parse_nanos(cpu), parse_nanos(memory))


def reqs_of(nodeclaim) -> dict:
    return {(r.key, r.operator): r for r in nodeclaim.spec.requirements}


def expect_requirement(nodeclaim, key, op, values) -> None:
    """ExpectNodeClaimRequirements: a requirement with that key and operator holding exactly ``values``."""
    r = reqs_of(nodeclaim).get((key, op))
    assert r is not None, f"no {key} {op} requirement"
    assert set(r.values) == set(values)


def ds_owner(ds) -> dict:
    return {"api_version": "apps/v1", "kind": "DaemonSet", "name": ds.metadata.name, "uid": ds.metadata.uid,
            "controller": True}


def add_instance_resources(its, cpu: str, memory: str):
    """suite_test.go AddInstanceResources: an "example" type (arch "arch", linux, spot test-zone-1)."""
    res = {"cpu": cpu, "memory": memory}
    price = fake.price_from_resources(from_quantities({k: Quantity(v) for k, v in res.items()}))
    its.append(fake.new_instance_type("example", resources=res, architecture="arch", operating_systems=["linux"],
                                      offerings=[Offering(Requirements.from_labels({CT: "spot", ZONE: "test-zone-1"}),
                                                          price)]))
    return its


# --- (top level) -----------------------------------------------------------------------------------
def test_termination_grace_period_nil():
    # upstream: P:259 "should expect nodeclaim terminationGracePeriod to be the nil when the nodepool
    # terminationGracePeriod and global terminationGracePeriod is not set"
    p = make_pod("p")
    h, res = expect_provisioned([p], [make_nodepool()])
    assert h.node_of(p) is not None
    assert len(res.created) == 1
    assert res.created[0].spec.termination_grace_period is None


def test_termination_grace_period_from_nodepool():
    # upstream: P:270 "should respect terminationGracePeriod value set on the nodePool over global
    # terminationGracePeriod" (karpy has no global default to set; the NodePool value must win regardless)
    p = make_pod("p")
    h, res = expect_provisioned([p], [make_nodepool(termination_grace_period="223h")])
    assert h.node_of(p) is not None
    assert len(res.created) == 1
    tgp = res.created[0].spec.termination_grace_period
    from karpy.api.nodepool import parse_duration
    assert parse_duration(tgp) == 223 * 3600


def test_supported_node_affinities():
    # upstream: P:376 "should provision nodes for pods with supported node affinities"
    np = make_nodepool()
    schedulable = [
        make_pod("s-np", node_requirements=[(NODEPOOL, "In", [np.metadata.name])]),
        make_pod("s-zone", node_requirements=[(ZONE, "In", ["test-zone-1"])]),
        make_pod("s-it", node_requirements=[(IT, "In", ["default-instance-type"])]),
        make_pod("s-arch", node_requirements=[(ARCH, "In", ["arm64"])]),
        make_pod("s-os", node_requirements=[(OS, "In", ["linux"])]),
    ]
    unschedulable = [
        make_pod("u-np", node_requirements=[(NODEPOOL, "In", ["unknown"])]),
        make_pod("u-zone", node_requirements=[(ZONE, "In", ["unknown"])]),
        make_pod("u-it", node_requirements=[(IT, "In", ["unknown"])]),
        make_pod("u-arch", node_requirements=[(ARCH, "In", ["unknown"])]),
        make_pod("u-os", node_requirements=[(OS, "In", ["unknown"])]),
        make_pod("u-ct", node_requirements=[(CT, "In", ["unknown"])]),
        make_pod("u-foo", node_requirements=[("foo", "In", ["bar"])]),
    ]
    h = Harness([np])
    h.provision(*schedulable)
    assert all(h.node_of(p) is not None for p in schedulable)
    h.provision(*unschedulable)
    assert all(h.node_of(p) is None for p in unschedulable)


def test_nodepool_hash_not_changed_during_scheduling():
    # upstream: P:460 "should not use a different NodePool hash on the NodeClaim if the NodePool changes during scheduling"
    np = make_nodepool()
    p = make_pod("p")
    h = Harness([np])
    results = h.provisioner.schedule([p], h.nodepools, h.cluster())
    assert len(results.new_nodeclaims) == 1
    before = h.provisioner.to_nodeclaim(results.new_nodeclaims[0]).metadata.annotations
    assert HASH in before
    np.spec.template.metadata.labels["new-label"] = "new-value"
    after = h.provisioner.to_nodeclaim(results.new_nodeclaims[0]).metadata.annotations
    assert after[HASH] == before[HASH]


def test_deleting_node_all_pods_one_inflight_node():
    # upstream: P:492 "should schedule all pods on one inflight node when node is in deleting state"
    its = fake.default_instance_types()
    np = make_nodepool()
    node = make_node("old-node", labels={NODEPOOL: np.metadata.name, IT: its[0].name})
    h = Harness([np])
    h.add_node(node)
    for i in range(3):
        h.bind(make_pod(f"bound-{i}"), "old-node")
    # the Node is deleted but held by its termination finalizer
    node.metadata.deletion_timestamp = datetime(2024, 1, 1, tzinfo=timezone.utc)
    new = [make_pod("new-0"), make_pod("new-1")]
    res = h.provision(*new, bind=False)
    assert len(h.nodes) == 2
    assert res.placements
    assert all(name != "old-node" for name in res.placements.values())


def test_sidecar_first_init_smaller():
    # upstream: P:583 "should schedule based on the max resource requests of containers and initContainers with sidecar
    # containers when sidecar container comes first and init container resources are smaller than container resources"
    its = fake.default_instance_types()
    for c, m in (("10", "4Gi"), ("11", "5Gi"), ("12", "6Gi")):
        add_instance_resources(its, c, m)
    p = make_pod("p", requests={"cpu": "6", "memory": "2Gi"}, limits={"cpu": "6", "memory": "2Gi"},
                 init_containers=[
                     {"requests": {"cpu": "4.9", "memory": "2.9Gi"}, "limits": {"cpu": "4.9", "memory": "2.9Gi"},
                      "restart_policy": "Always"},
                     {"requests": {"cpu": "5", "memory": "1Gi"}, "limits": {"cpu": "5", "memory": "1Gi"}}])
    h, _ = expect_provisioned([p], [make_nodepool()], its)
    assert cap_is(h, p, "11", "5Gi")


def test_sidecar_first_init_bigger():
    # upstream: P:634 "...when sidecar container comes first and init container resources are bigger than container resources"
    its = fake.default_instance_types()
    for c, m in (("10", "4Gi"), ("11", "5Gi"), ("12", "6Gi")):
        add_instance_resources(its, c, m)
    p = make_pod("p", requests={"cpu": "5", "memory": "1Gi"}, limits={"cpu": "5", "memory": "1Gi"},
                 init_containers=[
                     {"requests": {"cpu": "4.9", "memory": "2.9Gi"}, "limits": {"cpu": "4.9", "memory": "2.9Gi"},
                      "restart_policy": "Always"},
                     {"requests": {"cpu": "6", "memory": "2Gi"}, "limits": {"cpu": "6", "memory": "2Gi"}}])
    h, _ = expect_provisioned([p], [make_nodepool()], its)
    assert cap_is(h, p, "11", "5Gi")


def test_sidecar_init_first_upstream_catalogue():
    # upstream: P:532 "...with sidecar containers when initcontainer comes first" (upstream's AddInstanceResources catalogue)
    its = fake.default_instance_types()
    for c, m in (("10", "4Gi"), ("11", "5Gi"), ("12", "6Gi")):
        add_instance_resources(its, c, m)
    p = make_pod("p", requests={"cpu": "6", "memory": "2Gi"}, limits={"cpu": "6", "memory": "2Gi"},
                 init_containers=[
                     {"requests": {"cpu": "10", "memory": "4Gi"}, "limits": {"cpu": "10", "memory": "4Gi"}},
                     {"requests": {"cpu": "4.9", "memory": "2.9Gi"}, "limits": {"cpu": "4.9", "memory": "2.9Gi"},
                      "restart_policy": "Always"}])
    h, _ = expect_provisioned([p], [make_nodepool()], its)
    assert cap_is(h, p, "11", "5Gi")


# --- Daemonsets ---------------------------------------------------------------------------------------
def test_daemonset_pod_spec_over_daemonset_spec():
    # upstream: P:1014 "should account for overhead using daemonset pod spec instead of daemonset spec"
    np = make_nodepool()
    ds = make_daemonset("ds", requests={"cpu": "4", "memory": "4Gi"})
    ds_pod = make_pod("ds-pod", owner_references=[ds_owner(ds)], requests={"cpu": "2", "memory": "2Gi"})
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"}, node_selector={NODEPOOL: np.metadata.name})
    h = Harness([np], daemonsets=[ds])
    h.pods.append(ds_pod)  # applied but never bound (a DaemonSet pod is not provisionable)
    h.provision(p)
    assert cap_is(h, p, "4", "4Gi")


def test_daemonset_combined_max_too_large():
    # upstream: P:1098 "should not schedule if combined max resources are too large for any node"
    ds = make_daemonset("ds", limits={"cpu": "10000", "memory": "1Gi"}, requests={"cpu": "1"},
                        init_containers=[{"limits": {"cpu": "10000", "memory": "10000Gi"}, "requests": {"cpu": "1"}}])
    p = make_pod("p")
    h, _ = expect_provisioned([p], [make_nodepool()], daemonsets=[ds])
    assert h.node_of(p) is None


def test_daemonset_hostname_affinity_removed():
    # upstream: P:1299 "should remove daemonset node hostname affinity when considering daemonset schedulability"
    np = make_nodepool(labels={"foo": "bar"})
    ds = make_daemonset("ds", node_requirements=[("foo", "In", ["bar"])], requests={"cpu": "4", "memory": "4Gi"})
    # the DS pod: the daemonset controller's node-name affinity, and requests lowered (a LimitRange, say)
    ds_pod = make_pod("ds-pod", owner_references=[ds_owner(ds)],
                      node_requirements=[("metadata.name", "In", ["node-name"])],
                      requests={"cpu": "2", "memory": "2Gi"})
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"}, node_selector={"foo": "bar"})
    h = Harness([np], daemonsets=[ds])
    h.pods.append(ds_pod)
    h.provision(p)
    assert cap_is(h, p, "4", "4Gi")


def test_daemonset_incompatible_preference():
    # upstream: P:1431 "should consider a daemonset schedulable with an incompatible node affinity preference"
    ds = make_daemonset("ds", node_preferences=[("node", "In", ["invalid"])], requests={"cpu": "2", "memory": "2Gi"})
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"})
    h, _ = expect_provisioned([p], [make_nodepool()], daemonsets=[ds])
    assert cap_is(h, p, "4", "4Gi")


def test_daemonset_hostports_only_when_daemonset_schedules():
    # upstream: P:1496 "should not account for daemonset hostports when daemonset would not schedule on selected node"
    large = make_daemonset("large", requests={"cpu": "4", "memory": "4Gi"},
                           node_requirements=[("size", "In", ["large"])], host_ports=[8080])
    small = make_daemonset("small", requests={"cpu": "2", "memory": "2Gi"},
                           node_requirements=[("size", "In", ["small"])], host_ports=[8081])
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"}, node_requirements=[("size", "In", ["small"])],
                 host_ports=[8080])
    h, _ = expect_provisioned([p], [make_nodepool()], daemonsets=[large, small])
    assert h.node_of(p) is not None
    assert h.labels_of(p)["size"] == "small"
    assert cap_is(h, p, "4", "4Gi")


# --- Labels --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("domain", ["kubernetes.io", "k8s.io"])
def test_label_nodes_kubernetes_domains(domain):
    # upstream: P:1579 "should label nodes with labels in the kubernetes domains"
    key = f"{domain}/test"
    p = make_pod("p", node_requirements=[(key, "In", ["test-value"])])
    h, _ = expect_provisioned([p], [make_nodepool(labels={key: "test-value"})])
    assert h.labels_of(p)[key] == "test-value"


@pytest.mark.parametrize("domain", ["kubernetes.io", "k8s.io"])
def test_label_nodes_kubernetes_subdomains(domain):
    # upstream: P:1601 "should label nodes with labels in the subdomain from kubernetes domains"
    key = f"subdomain.{domain}/test"
    p = make_pod("p", node_requirements=[(key, "In", ["test-value"])])
    h, _ = expect_provisioned([p], [make_nodepool(labels={key: "test-value"})])
    assert h.labels_of(p)[key] == "test-value"


def test_no_well_known_labels_from_requirements_upstream():
    # upstream: P:1623 "should not label nodes with well-known labels from requirements" (upstream's exact setup)
    np = make_nodepool(requirements=[("foo", "In", ["bar"]), (WINDOWS_BUILD, "NotIn", ["test-value"])])
    p = make_pod("p")
    h, _ = expect_provisioned([p], [np])
    labels = h.labels_of(p)
    assert labels.get(WINDOWS_BUILD) != "test-value"
    assert labels["foo"] == "bar"


def test_label_nodes_nodepool_label():
    # upstream: P:1546 "should label nodes" (the NodePool-name label asserted first upstream)
    np = make_nodepool(labels={"test-key-1": "test-value-1"})
    p = make_pod("p")
    h, _ = expect_provisioned([p], [np])
    assert h.labels_of(p)[NODEPOOL] == np.metadata.name


# --- NodeClaim Creation -----------------------------------------------------------------------------
def test_nodeclaim_additional_requirements():
    # upstream: P:1716 "should create a nodeclaim request with additional expected requirements"
    np = make_nodepool(requirements=[("custom-requirement-key", "In", ["value"]),
                                     ("custom-requirement-key2", "In", ["value"])])
    p = make_pod("p")
    h, res = expect_provisioned([p], [np])
    assert len(res.requested) == 1
    nc = res.requested[0]
    expect_requirement(nc, IT, "In", ALL_TYPES)
    expect_requirement(nc, NODEPOOL, "In", [np.metadata.name])
    expect_requirement(nc, "custom-requirement-key", "In", ["value"])
    expect_requirement(nc, "custom-requirement-key2", "In", ["value"])
    assert h.node_of(p) is not None


def test_nodeclaim_os_restriction():
    # upstream: P:1803 "should create a nodeclaim request restricting instance types on operating system"
    p = make_pod("p")
    h, res = expect_provisioned([p], [make_nodepool(requirements=[(OS, "In", ["ios"])])])
    assert len(res.requested) == 1
    expect_requirement(res.requested[0], OS, "In", ["ios"])
    expect_requirement(res.requested[0], IT, "In", ["arm-instance-type"])
    assert h.node_of(p) is not None


def test_nodeclaim_arch_restriction_requirements():
    # upstream: P:1766 "should create a nodeclaim request restricting instance types on architecture" (both requirements)
    p = make_pod("p")
    h, res = expect_provisioned([p], [make_nodepool(requirements=[(ARCH, "In", ["arm64"])])])
    expect_requirement(res.requested[0], ARCH, "In", ["arm64"])
    expect_requirement(res.requested[0], IT, "In", ["arm-instance-type"])
    assert h.node_of(p) is not None


def test_nodeclaim_owner_reference_exact():
    # upstream: P:1867 "should create a nodeclaim request with the correct owner reference"
    np = make_nodepool()
    p = make_pod("p")
    h, res = expect_provisioned([p], [np])
    refs = res.requested[0].metadata.owner_references
    assert any(r.api_version == "karpenter.sh/v1" and r.kind == "NodePool" and r.name == np.metadata.name
               and r.uid == np.metadata.uid for r in refs)


def test_nodeclaim_nodeclass_reference_propagated():
    # upstream: P:1885 "should create a nodeclaim request propagating the nodeClass reference"
    np = make_nodepool(node_class_ref={"group": "karpenter.test.sh", "kind": "TestNodeClass", "name": "test"})
    p = make_pod("p")
    h, res = expect_provisioned([p], [np])
    ref = res.requested[0].spec.node_class_ref
    assert (ref.group, ref.kind, ref.name) == ("karpenter.test.sh", "TestNodeClass", "test")


# --- Preferential Fallback ---------------------------------------------------------------------------
def _pod_with_required_terms(*terms):
    p = make_pod("p")
    p.spec.affinity = Affinity(node_affinity=NodeAffinity(
        required_during_scheduling_ignored_during_execution=NodeSelector(node_selector_terms=[
            NodeSelectorTerm(match_expressions=[NodeSelectorRequirement(key=k, operator=op, values=v)])
            for k, op, v in terms])))
    return p


def _pod_with_preferred_terms(*terms):
    p = make_pod("p")
    p.spec.affinity = Affinity(node_affinity=NodeAffinity(preferred_during_scheduling_ignored_during_execution=[
        PreferredSchedulingTerm(weight=w, preference=NodeSelectorTerm(match_expressions=[
            NodeSelectorRequirement(key=k, operator=op, values=v)])) for w, k, op, v in terms]))
    return p


def test_required_not_relax_final_term():
    # upstream: P:2389 "should not relax the final term"
    p = _pod_with_required_terms((ZONE, "In", ["invalid"]))
    h, _ = expect_provisioned([p], [make_nodepool(requirements=[(ZONE, "In", ["test-zone-1"])])])
    assert h.node_of(p) is None


def test_required_relax_multiple_terms():
    # upstream: P:2410 "should relax multiple terms"
    p = _pod_with_required_terms((ZONE, "In", ["invalid"]), (ZONE, "In", ["invalid"]), (ZONE, "In", ["test-zone-1"]),
                                 (ZONE, "In", ["test-zone-2"]))
    h, _ = expect_provisioned([p], [make_nodepool()])
    assert h.labels_of(p)[ZONE] == "test-zone-1"


def test_preferences_relax_all_node_affinity_terms():
    # upstream: P:2434 "should relax all node affinity terms"
    p = _pod_with_preferred_terms((1, ZONE, "In", ["invalid"]), (1, IT, "In", ["invalid"]))
    h, _ = expect_provisioned([p], [make_nodepool()])
    assert h.node_of(p) is not None


def test_preferences_relax_to_lighter_weights():
    # upstream: P:2453 "should relax to use lighter weights"
    p = _pod_with_preferred_terms((100, IT, "In", ["test-zone-3"]), (50, ZONE, "In", ["test-zone-2"]),
                                  (1, ZONE, "In", ["test-zone-1"]))
    h, _ = expect_provisioned([p], [make_nodepool(requirements=[(ZONE, "In", ["test-zone-1", "test-zone-2"])])])
    assert h.labels_of(p)[ZONE] == "test-zone-2"


@pytest.mark.parametrize("key", [ZONE, HOST])
def test_unsatisfiable_node_preference_relaxed_joins_node(key):
    # upstream: P:2516 [table] "should ignore node preferredDuringSchedulingIgnoredDuringExecution affinity"
    pod1 = make_pod("pod1", labels={"app": "foo"}, requests={"cpu": "2"})
    pref = make_pod("pref", labels={"app": "baz"}, requests={"cpu": "1"}, node_preferences=[(key, "In", ["value-1"])])
    h, _ = expect_provisioned([pod1, pref], [make_nodepool()])
    assert h.node_of(pod1) is not None and h.node_of(pref) is not None
    assert h.node_of(pod1).metadata.name == h.node_of(pref).metadata.name


@pytest.mark.parametrize("key", [ZONE, HOST])
def test_ignore_tsc_preferences(key):
    # upstream: P:2630 [table] "should ignore topologySpreadConstraint preferences" (PreferencePolicy=Ignore)
    pods = [make_pod(f"p{i}", labels={"app": "foo"},
                     topology_spread_constraints=[topology_spread(key, {"app": "foo"},
                                                                  when_unsatisfiable="ScheduleAnyway")])
            for i in range(5)]
    h, _ = expect_provisioned(pods, [make_nodepool()], preference_policy="Ignore")
    assert all(h.node_of(p) is not None for p in pods)
    assert len({h.node_of(p).metadata.name for p in pods}) == 1


def test_ignore_anti_affinity_preferences_zone():
    # upstream: P:2663 [table] "should ignore pod anti-affinity preferences" (zone entry; PreferencePolicy=Ignore)
    pods = [make_pod(f"p{i}", labels={"app": "foo"},
                     pod_anti_affinity_preferences=[(1, pod_affinity_term({"app": "foo"}, ZONE))]) for i in range(5)]
    h, _ = expect_provisioned(pods, [make_nodepool()], preference_policy="Ignore")
    assert all(h.node_of(p) is not None for p in pods)
    assert len({h.node_of(p).metadata.name for p in pods}) == 1


@pytest.mark.parametrize("key", [ZONE, HOST])
def test_ignore_pod_affinity_preferences(key):
    # upstream: P:2697 [table] "should ignore pod affinity preferences" (PreferencePolicy=Ignore)
    zone1 = make_pod("zone1", labels={"app": "foo"}, node_selector={ZONE: "test-zone-1"}, requests={"cpu": "2"})
    zone2 = [make_pod(f"zone2-{i}", labels={"app": "bar"}, node_selector={ZONE: "test-zone-2"}, requests={"cpu": "3"})
             for i in range(2)]
    aff = make_pod("aff", labels={"app": "baz"}, requests={"cpu": "1"},
                   pod_affinity_preferences=[(1, pod_affinity_term({"app": "bar"}, key))])
    h, _ = expect_provisioned([zone1, *zone2, aff], [make_nodepool()], preference_policy="Ignore")
    assert all(h.node_of(p) is not None for p in (zone1, *zone2, aff))
    assert h.node_of(aff).metadata.name == h.node_of(zone1).metadata.name
    assert h.node_of(aff).metadata.name != h.node_of(zone2[0]).metadata.name


# --- Multiple NodePools --------------------------------------------------------------------------------
def test_explicitly_selected_nodepool():
    # upstream: P:2773 "should schedule to an explicitly selected NodePool"
    # ("a" would lose the name-descending weight tie to "b", so the selector is what decides)
    a, b = make_nodepool("a"), make_nodepool("b")
    p = make_pod("p", node_selector={NODEPOOL: "a"})
    h, _ = expect_provisioned([p], [a, b])
    assert h.labels_of(p)[NODEPOOL] == "a"


def test_nodepool_by_labels():
    # upstream: P:2781 "should schedule to a NodePool by labels"
    a, b = make_nodepool("a", labels={"foo": "bar"}), make_nodepool("b")
    p = make_pod("p", node_selector={"foo": "bar"})
    h, _ = expect_provisioned([p], [a, b])
    assert h.labels_of(p)[NODEPOOL] == "a"


# --- MinValuesPolicy -----------------------------------------------------------------------------------
def _mv_it(name, *offerings):
    return fake.new_instance_type(name, architecture="arm64", operating_systems=["linux"],
                                  resources={"cpu": "4", "memory": "4Gi"},
                                  offerings=[Offering(Requirements.from_labels({CT: "spot", ZONE: z}), price)
                                             for z, price in offerings])


def _mv_two_types():
    return [_mv_it("instance-type-1", ("test-zone-1-spot", 0.52)), _mv_it("instance-type-2", ("test-zone-2-spot", 0.52))]


def _mv_zone_type():
    return [_mv_it("instance-type-1", ("test-zone-1", 0.52), ("test-zone-2", 0.54))]


IT_MV = {"key": IT, "operator": "In", "values": ["instance-type-1", "instance-type-2", "instance-type-3"], "minValues": 3}


ZONE_MV = {"key": ZONE, "operator": "In", "values": ["test-zone-1", "test-zone-2", "test-zone-3"], "minValues": 3}


def _mv_pod():
    return make_pod("p", requests={"cpu": "0.9", "memory": "0.9Gi"})


def _req(nc, key):
    return next(r for r in nc.spec.requirements if r.key == key)


def test_min_values_strict_upstream_setup():
    # upstream: P:2911 "should not schedule when minValues requirement is not met" (upstream's exact types and pod)
    p = _mv_pod()
    h, _ = expect_provisioned([p], [make_nodepool(weight=100, requirements=[IT_MV])], _mv_two_types())
    assert h.node_of(p) is None


def test_min_values_higher_weight_when_relaxing():
    # upstream: P:3100 "should choose nodepool with higher weight when relaxing minValues"
    default = make_nodepool("default", weight=100, requirements=[IT_MV])
    lower = make_nodepool("lower", weight=10, requirements=[IT_MV])
    p = _mv_pod()
    h, res = expect_provisioned([p], [default, lower], _mv_two_types(), min_values_policy="BestEffort")
    assert h.labels_of(p)[IT] == "instance-type-1"
    assert h.labels_of(p)[NODEPOOL] == "default"
    nc = res.requested[0]
    assert res.created[0].metadata.annotations[MIN_VALUES_RELAXED] == "true"
    r = _req(nc, IT)
    assert r.operator == "In" and sorted(r.values) == ["instance-type-1", "instance-type-2"] and r.min_values == 2


def test_zone_min_values_strict():
    # upstream: P:3216 "should not schedule when zone minValues requirement is not met"
    p = _mv_pod()
    h, _ = expect_provisioned([p], [make_nodepool(requirements=[ZONE_MV])], _mv_zone_type())
    assert h.node_of(p) is None


def test_zone_min_values_best_effort():
    # upstream: P:3259 "should schedule even when zone minValues requirement is not met"
    p = _mv_pod()
    h, res = expect_provisioned([p], [make_nodepool(requirements=[ZONE_MV])], _mv_zone_type(),
                                min_values_policy="BestEffort")
    assert h.labels_of(p)[IT] == "instance-type-1"
    assert h.labels_of(p)[ZONE] in ("test-zone-1", "test-zone-2")
    assert res.created[0].metadata.annotations[MIN_VALUES_RELAXED] == "true"
    r = _req(res.requested[0], ZONE)
    assert r.operator == "In" and sorted(r.values) == ["test-zone-1", "test-zone-2", "test-zone-3"]
    assert r.min_values == 2


def test_instance_type_and_zone_min_values_best_effort():
    # upstream: P:3353 "should schedule when minValues requirement is not met" (instance type + zone, BestEffort)
    p = _mv_pod()
    np = make_nodepool(weight=100, requirements=[IT_MV, ZONE_MV])
    h, res = expect_provisioned([p], [np], _mv_zone_type(), min_values_policy="BestEffort")
    assert h.labels_of(p)[IT] == "instance-type-1"
    assert h.labels_of(p)[ZONE] in ("test-zone-1", "test-zone-2")
    nc = res.requested[0]
    assert nc.metadata.annotations[MIN_VALUES_RELAXED] == "true"
    assert res.created[0].metadata.annotations[MIN_VALUES_RELAXED] == "true"
    r = _req(nc, IT)
    assert r.operator == "In" and list(r.values) == ["instance-type-1"] and r.min_values == 1
    z = _req(nc, ZONE)
    assert z.operator == "In" and sorted(z.values) == ["test-zone-1", "test-zone-2", "test-zone-3"]
    assert z.min_values == 2


# --- Upstream-exact re-ports of loosely ported Daemonsets / Taints cases -------------------------------
def test_daemonset_overhead_upstream_values():
    # upstream: P:935 "should account for daemonsets" (DS 2 cpu / 2Gi)
    ds = make_daemonset("ds", requests={"cpu": "2", "memory": "2Gi"})
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"})
    h, _ = expect_provisioned([p], [make_nodepool()], daemonsets=[ds])
    assert cap_is(h, p, "4", "4Gi")


def test_daemonset_startup_taint_upstream_values():
    # upstream: P:974 "should account for daemonsets (with startup taint)" (DS 2 cpu / 2Gi)
    ds = make_daemonset("ds", requests={"cpu": "2", "memory": "2Gi"})
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"})
    np = make_nodepool(startup_taints=[{"key": "foo.com/taint", "effect": "NoSchedule"}])
    h, _ = expect_provisioned([p], [np], daemonsets=[ds])
    assert cap_is(h, p, "4", "4Gi")


def test_daemonset_limits_too_large_with_cpu_request():
    # upstream: P:1057 "should not schedule if resource requests are not defined and limits (requests) are too large"
    ds = make_daemonset("ds", limits={"cpu": "10000", "memory": "10000Gi"}, requests={"cpu": "1"})
    p = make_pod("p")
    h, _ = expect_provisioned([p], [make_nodepool()], daemonsets=[ds])
    assert h.node_of(p) is None


def test_daemonset_init_container_max_upstream_values():
    # upstream: P:1070 "should schedule based on the max resource requests of containers and initContainers"
    ds = make_daemonset("ds", limits={"cpu": "10000", "memory": "1Gi"}, requests={"cpu": "1"},
                        init_containers=[{"limits": {"cpu": "10000", "memory": "3Gi"}, "requests": {"cpu": "3"}}])
    p = make_pod("p")
    h, _ = expect_provisioned([p], [make_nodepool()], daemonsets=[ds])
    assert cap_is(h, p, "4", "4Gi")


def test_daemonset_without_tolerations_upstream_values():
    # upstream: P:1143 "should ignore daemonsets without matching tolerations"
    ds = make_daemonset("ds", requests={"cpu": "2", "memory": "2Gi"})
    np = make_nodepool(taints=[{"key": "foo", "value": "bar", "effect": "NoSchedule"}])
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"}, tolerations=[{"operator": "Exists"}])
    h, _ = expect_provisioned([p], [np], daemonsets=[ds])
    assert cap_is(h, p, "2", "2Gi")


def test_daemonset_invalid_selector_upstream_values():
    # upstream: P:1175 "should ignore daemonsets with an invalid selector"
    ds = make_daemonset("ds", node_selector={"node": "invalid"}, requests={"cpu": "2", "memory": "2Gi"})
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"})
    h, _ = expect_provisioned([p], [make_nodepool()], daemonsets=[ds])
    assert cap_is(h, p, "2", "2Gi")


def test_daemonset_no_instance_type_upstream_values():
    # upstream: P:1197 "should ignore daemonsets when no instance types meet the daemonset requirements"
    ds = make_daemonset("ds", node_requirements=[(IT, "In", ["non-existent-instance-type"])],
                        requests={"cpu": "2", "memory": "2Gi"})
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"})
    h, _ = expect_provisioned([p], [make_nodepool()], daemonsets=[ds])
    assert cap_is(h, p, "2", "2Gi")


def test_daemonset_custom_label_upstream_values():
    # upstream: P:1219 "should account for daemonsets with a custom label nodeSelector that matches the nodepool"
    ds = make_daemonset("ds", node_selector={"purpose": "monitoring"}, requests={"cpu": "2", "memory": "2Gi"})
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"})
    h, _ = expect_provisioned([p], [make_nodepool(labels={"purpose": "monitoring"})], daemonsets=[ds])
    assert cap_is(h, p, "4", "4Gi")


def test_daemonset_not_in_unspecified_key_upstream_values():
    # upstream: P:1276 "should account daemonsets with NotIn operator and unspecified key"
    ds = make_daemonset("ds", node_requirements=[("foo", "NotIn", ["bar"])], requests={"cpu": "2", "memory": "2Gi"})
    p = make_pod("p", node_requirements=[(ZONE, "In", ["test-zone-2"])], requests={"cpu": "1", "memory": "1Gi"})
    h, _ = expect_provisioned([p], [make_nodepool()], daemonsets=[ds])
    assert cap_is(h, p, "4", "4Gi")


def test_daemonset_multiple_terms_upstream_values():
    # upstream: P:1371 "should consider a daemonset schedulable with multiple node affinity terms"
    np = make_nodepool(labels={"foo": "bar"})
    ds = make_daemonset("ds", requests={"cpu": "2", "memory": "2Gi"})
    ds.spec.template.spec.affinity = Affinity(node_affinity=NodeAffinity(
        required_during_scheduling_ignored_during_execution=NodeSelector(node_selector_terms=[
            NodeSelectorTerm(match_expressions=[NodeSelectorRequirement(key="foo", operator="In", values=["voo"])]),
            NodeSelectorTerm(match_expressions=[NodeSelectorRequirement(key="foo", operator="In", values=["bar"])])])))
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"})
    h, _ = expect_provisioned([p], [np], daemonsets=[ds])
    assert cap_is(h, p, "4", "4Gi")


def test_daemonset_prefer_no_schedule_upstream_values():
    # upstream: P:1459 "should consider a daemonset schedulable with a PreferNoSchedule taint"
    np = make_nodepool(taints=[{"key": "test", "effect": "PreferNoSchedule"}])
    ds = make_daemonset("ds", requests={"cpu": "2", "memory": "2Gi"})
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"})
    h, _ = expect_provisioned([p], [np], daemonsets=[ds])
    assert cap_is(h, p, "4", "4Gi")


def test_supported_node_selectors_upstream_full():
    # upstream: P:336 "should provision nodes for pods with supported node selectors" (all upstream entries)
    np = make_nodepool()
    schedulable = [make_pod("s-np", node_selector={NODEPOOL: np.metadata.name}),
                   make_pod("s-zone", node_selector={ZONE: "test-zone-1"}),
                   make_pod("s-it", node_selector={IT: "default-instance-type"}),
                   make_pod("s-arch", node_selector={ARCH: "arm64"}),
                   make_pod("s-os", node_selector={OS: "linux"})]
    unschedulable = [make_pod("u-np", node_selector={NODEPOOL: "unknown"}),
                     make_pod("u-zone", node_selector={ZONE: "unknown"}),
                     make_pod("u-it", node_selector={IT: "unknown"}),
                     make_pod("u-arch", node_selector={ARCH: "unknown"}),
                     make_pod("u-os", node_selector={OS: "unknown"}),
                     make_pod("u-ct", node_selector={CT: "unknown"}),
                     make_pod("u-foo", node_selector={"foo": "bar"})]
    h = Harness([np])
    h.provision(*schedulable)
    assert all(h.node_of(p) is not None for p in schedulable)
    h.provision(*unschedulable)
    assert all(h.node_of(p) is None for p in unschedulable)
