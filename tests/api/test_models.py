"""Model tests: aliases, defaulting, validation, copying, builders."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from karpy.admission import AdmissionError, admit
from karpy.api.builders import (
    make_node,
    make_nodeoverlay,
    make_nodepool,
    make_pod,
    make_pods,
    pod_affinity_term,
    requirement,
    topology_spread,
)
from karpy.api.meta import LabelSelector, ObjectMeta
from karpy.api.node import Node
from karpy.api.nodeclaim import NodeClaim
from karpy.api.nodeoverlay import NodeOverlay
from karpy.api.nodepool import NodePool, parse_duration
from karpy.api.pod import NodeSelectorRequirement, Pod, PodAffinityTerm, Toleration
from karpy.api.poddisruptionbudget import PodDisruptionBudget, scaled_value
from karpy.api.podgroup import GroupRef, PodGroup, Workload, pod_group_of
from karpy.api.priorityclass import PriorityClass
from karpy.api.quantity import Quantity

NCR = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}


def pool(**spec_extra: object) -> dict:
    return {"metadata": {"name": "p"}, "spec": {"template": {"spec": {"nodeClassRef": NCR, **spec_extra}}}}


# ---------------------------------------------------------------- LabelSelector

@pytest.mark.parametrize(("expr", "labels", "want"), [
    ({"key": "a", "operator": "In", "values": ["x"]}, {"a": "x"}, True),
    ({"key": "a", "operator": "In", "values": ["x"]}, {"a": "y"}, False),
    ({"key": "a", "operator": "In", "values": ["x"]}, {}, False),
    ({"key": "a", "operator": "NotIn", "values": ["x"]}, {}, True),
    ({"key": "a", "operator": "NotIn", "values": ["x"]}, {"a": "x"}, False),
    ({"key": "a", "operator": "Exists"}, {"a": ""}, True),
    ({"key": "a", "operator": "Exists"}, {"b": "1"}, False),
    ({"key": "a", "operator": "DoesNotExist"}, {"b": "1"}, True),
    ({"key": "a", "operator": "DoesNotExist"}, {"a": "1"}, False),
])
def test_label_selector_expressions(expr: dict, labels: dict, want: bool) -> None:
    assert LabelSelector.model_validate({"matchExpressions": [expr]}).matches(labels) is want


def test_label_selector_match_labels_and_empty() -> None:
    sel = LabelSelector.model_validate({"matchLabels": {"app": "web"}})
    assert sel.matches({"app": "web", "x": "y"})
    assert not sel.matches({"app": "db"})
    assert LabelSelector().matches({"anything": "1"}) and LabelSelector().is_empty()


def test_nil_vs_empty_selectors_preserved() -> None:
    term = PodAffinityTerm.model_validate({"topologyKey": "zone"})
    assert term.label_selector is None and term.namespace_selector is None
    term = PodAffinityTerm.model_validate({"topologyKey": "zone", "labelSelector": {}, "namespaceSelector": {}})
    assert term.label_selector == LabelSelector() and term.namespace_selector is not None


# ---------------------------------------------------------------- Pod

def test_pod_loads_camel_case_and_ignores_unknown_fields() -> None:
    pod = Pod.model_validate({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "uid": "u1", "unknownThing": 1},
        "spec": {
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "500m"}},
                            "ports": [{"containerPort": 80, "hostPort": 8080, "hostIP": "1.2.3.4"}],
                            "livenessProbe": {"httpGet": {"path": "/"}}}],
            "nodeSelector": {"kubernetes.io/arch": "amd64"},
            "priorityClassName": "high", "preemptionPolicy": "Never",
            "schedulingGates": [{"name": "g"}],
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                           "minDomains": 2, "nodeAffinityPolicy": "Ignore",
                                           "nodeTaintsPolicy": "Honor", "matchLabelKeys": ["pod-template-hash"]}],
        },
        "status": {"nominatedNodeName": "n1", "conditions": [{"type": "PodScheduled", "status": "False",
                                                                "reason": "Unschedulable"}]},
    })
    assert pod.key == "default/a"
    assert pod.spec.containers[0].resources.requests["cpu"] == Quantity("0.5")
    assert pod.spec.containers[0].ports[0].host_ip == "1.2.3.4"
    assert pod.spec.containers[0].ports[0].protocol == "TCP"
    assert pod.spec.topology_spread_constraints[0].min_domains == 2
    assert pod.spec.scheduling_gates[0].name == "g"
    assert pod.status.nominated_node_name == "n1" and pod.status.phase == "Pending"
    assert pod.status.condition("PodScheduled").reason == "Unschedulable"
    assert pod.spec.priority is None  # not resolved at load


def test_limits_without_requests_become_requests() -> None:
    pod = Pod.model_validate({"metadata": {"name": "a"}, "spec": {
        "containers": [{"resources": {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1"}}}],
        "initContainers": [{"resources": {"limits": {"cpu": "3"}}}]}})
    assert pod.spec.containers[0].resources.requests == {"cpu": Quantity("1"), "memory": Quantity("1Gi")}
    assert pod.spec.init_containers[0].resources.requests == {"cpu": Quantity("3")}


def test_request_above_limit_rejected() -> None:
    with pytest.raises(ValidationError, match="must be less than or equal to cpu limit"):
        Pod.model_validate({"spec": {"containers": [{"resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "2"}}}]}})


def test_negative_request_rejected_with_path() -> None:
    with pytest.raises(ValidationError) as info:
        Pod.model_validate({"spec": {"containers": [{"resources": {"requests": {"cpu": "-1"}}}]}})
    err = info.value.errors()[0]
    assert err["loc"] == ("spec", "containers", 0, "resources", "requests", "cpu")
    assert "greater than or equal to 0" in err["msg"]


def test_null_lists_and_namespace_default() -> None:
    pod = Pod.model_validate({"metadata": {"name": "a", "namespace": None, "labels": None},
                              "spec": {"containers": None, "tolerations": None, "nodeSelector": None}})
    assert pod.metadata.namespace == "default" and pod.metadata.labels == {}
    assert pod.spec.containers == [] and pod.spec.tolerations == [] and pod.spec.node_selector == {}


def test_host_network_defaults_host_port() -> None:
    pod = Pod.model_validate({"spec": {"hostNetwork": True, "containers": [{"ports": [{"containerPort": 53}]}]}})
    assert pod.spec.containers[0].ports[0].host_port == 53


def test_model_copy_deep_is_independent() -> None:
    pod = make_pod("a", labels={"x": "1"}, node_preferences=[("a", "In", ["b"])])
    clone = pod.model_copy(deep=True)
    clone.metadata.labels["x"] = "2"
    clone.spec.affinity.node_affinity.preferred_during_scheduling_ignored_during_execution.clear()
    assert pod.metadata.labels["x"] == "1"
    assert len(pod.spec.affinity.node_affinity.preferred_during_scheduling_ignored_during_execution) == 1


def test_toleration_defaults() -> None:
    tol = Toleration.model_validate({"key": "k", "effect": "NoSchedule"})
    assert tol.operator == "Equal" and tol.value == ""
    with pytest.raises(ValidationError):
        Toleration.model_validate({"operator": "Maybe"})


# ---------------------------------------------------------------- requirements

@pytest.mark.parametrize(("req", "fragment"), [
    ({"key": "a", "operator": "Foo", "values": ["x"]}, "unknown operator 'Foo'"),
    ({"key": "a", "operator": "In", "values": []}, "must have a value defined"),
    ({"key": "a", "operator": "Exists", "values": ["x"]}, "must not have values"),
    ({"key": "a", "operator": "Gt", "values": ["abc"]}, "needs an integer value"),
    ({"key": "a", "operator": "Lt", "values": ["1", "2"]}, "single integer value"),
    ({"key": "a", "operator": "In", "values": ["x"], "minValues": 2}, "at least that many values"),
    ({"key": "a", "operator": "In", "values": [True]}, "valid string"),
])
def test_invalid_requirements(req: dict, fragment: str) -> None:
    with pytest.raises(ValidationError, match=fragment):
        NodeSelectorRequirement.model_validate(req)


def test_requirement_helper_forms() -> None:
    assert requirement(("k", "In", ["a", "b"], 2)).min_values == 2
    assert requirement({"key": "k", "operator": "Exists"}).values == []
    assert requirement(("k", "Gte", ["3"])).operator == "Gte"


# ---------------------------------------------------------------- NodePool / NodeClaim / NodeOverlay

def test_nodepool_defaults() -> None:
    np = NodePool.model_validate(pool())
    assert np.spec.template.spec.expire_after == "720h"
    assert np.spec.template.spec.expire_after_seconds == 720 * 3600
    assert np.spec.disruption.consolidation_policy == "WhenEmptyOrUnderutilized"
    assert np.spec.disruption.consolidate_after == "0s"
    assert [b.nodes for b in np.spec.disruption.budgets] == ["10%"]
    assert np.spec.limits is None and np.weight == 0 and np.key == "p"


def test_nodepool_full_schema() -> None:
    np = NodePool.model_validate({
        "metadata": {"name": "gp"},
        "spec": {
            "template": {
                "metadata": {"labels": {"team": "a"}, "annotations": {"x": "y"}},
                "spec": {"nodeClassRef": NCR,
                         "requirements": [{"key": "k", "operator": "In", "values": ["a", "b"], "minValues": 2}],
                         "taints": [{"key": "t", "effect": "NoSchedule"}],
                         "startupTaints": [{"key": "s", "value": "v", "effect": "NoExecute"}],
                         "expireAfter": "Never", "terminationGracePeriod": "1h30m"}},
            "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s",
                           "budgets": [{"nodes": "0", "schedule": "@daily", "duration": "10m",
                                        "reasons": ["Drifted"]}]},
            "limits": {"cpu": "100", "memory": "100Gi", "nvidia.com/gpu": 4},
            "weight": 50,
        }})
    assert np.spec.template.metadata.labels == {"team": "a"}
    assert np.spec.template.spec.expire_after_seconds is None
    assert parse_duration(np.spec.template.spec.termination_grace_period) == 5400
    assert np.spec.limits["nvidia.com/gpu"] == Quantity(4)
    assert np.spec.template.spec.startup_taints[0].effect == "NoExecute"
    assert np.weight == 50


@pytest.mark.parametrize(("extra", "fragment"), [
    ({"weight": 0}, "spec.weight: Invalid value: 0: spec.weight in body should be greater than or equal to 1"),
    ({"weight": 101}, "spec.weight: Invalid value: 101: spec.weight in body should be less than or equal to 100"),
    ({"disruption": {"budgets": [{"nodes": "110%"}]}},
     'spec.disruption.budgets[0].nodes: Invalid value: "110%": spec.disruption.budgets[0].nodes in body should match'),
    ({"disruption": {"budgets": [{"nodes": "1", "schedule": "@daily"}]}},
     "spec.disruption.budgets: Invalid value: 'schedule' must be set with 'duration'"),
])
def test_nodepool_spec_validation(extra: dict, fragment: str) -> None:
    # the CRD's checks are admission's (karpy.admission), with the API server's messages
    data = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", **pool(requirements=[])}
    data["spec"].update(extra)
    with pytest.raises(AdmissionError) as info:
        admit(data)
    assert any(str(e).startswith(fragment) for e in info.value.errors), info.value.errors


def test_nodepool_model_keeps_its_own_quantity_check() -> None:
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        NodePool.model_validate({**pool(), "spec": {**pool()["spec"], "limits": {"cpu": "-1"}}})


def test_nodepool_rejects_bad_expire_after_and_negative_gt() -> None:
    base = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool"}
    with pytest.raises(AdmissionError, match="spec.template.spec.expireAfter in body should match"):
        admit({**base, **pool(expireAfter="30d", requirements=[])})
    with pytest.raises(AdmissionError, match="must have a single positive integer value"):
        admit({**base, **pool(requirements=[{"key": "a", "operator": "Gt", "values": ["-1"]}])})
    with pytest.raises(AdmissionError, match="spec.template.spec.nodeClassRef: Required value"):
        admit({**base, "metadata": {"name": "p"}, "spec": {"template": {"spec": {"requirements": []}}}})
    with pytest.raises(ValidationError, match="nodeClassRef"):
        NodePool.model_validate({"metadata": {"name": "p"}, "spec": {"template": {"spec": {}}}})


def test_nodeclaim() -> None:
    nc = NodeClaim.model_validate({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": "c1"},
        "spec": {"requirements": [{"key": "a", "operator": "In", "values": ["x"]}],
                 "resources": {"requests": {"cpu": "1", "pods": "2"}}, "nodeClassRef": NCR},
        "status": {"providerID": "aws:///us-east-1a/i-1", "nodeName": "n1", "imageID": "ami-1",
                   "capacity": {"cpu": "4"}, "allocatable": {"cpu": "3900m"},
                   "conditions": [{"type": "Launched", "status": "True"}]}})
    assert nc.status.provider_id == "aws:///us-east-1a/i-1"
    assert nc.status.allocatable["cpu"] == Quantity("3.9")
    assert nc.status.condition("Launched").status == "True"
    assert nc.spec.resources.requests["pods"] == Quantity(2)
    assert nc.to_dict()["status"]["providerID"] == "aws:///us-east-1a/i-1"


@pytest.mark.parametrize(("spec", "fragment"), [
    ({"price": "0.5", "priceAdjustment": "-10%"}, "cannot set both"),
    ({"priceAdjustment": "10%"}, "invalid priceAdjustment"),
    ({"price": 0.5}, "quote it"),
    ({"capacity": {"cpu": "1"}}, "invalid resource restricted"),
    ({"requirements": [{"key": "a", "operator": "NotIn", "values": []}]}, "'NotIn' must have a value"),
    ({"weight": 0}, "greater than or equal to 1"),
])
def test_nodeoverlay_validation(spec: dict, fragment: str) -> None:
    with pytest.raises(ValidationError, match=fragment):
        NodeOverlay.model_validate({"metadata": {"name": "o"}, "spec": spec})


def test_nodeoverlay_valid() -> None:
    ov = make_nodeoverlay("o", requirements=[("node.kubernetes.io/instance-type", "In", ["m5.large"])],
                          price_adjustment="+0.5", capacity={"example.com/fpga": 1}, weight=10)
    assert ov.weight == 10 and ov.spec.capacity["example.com/fpga"] == Quantity(1)


# ---------------------------------------------------------------- Node, PriorityClass, PDB, PodGroup

def test_node_allocatable_defaults_to_capacity() -> None:
    node = Node.model_validate({"metadata": {"name": "n"}, "spec": {"providerID": "p", "taints": [
        {"key": "k", "effect": "NoSchedule"}]}, "status": {"capacity": {"cpu": "2"}}})
    assert node.status.allocatable == {"cpu": Quantity(2)}
    assert node.spec.provider_id == "p" and node.key == "n"


def test_priority_class() -> None:
    pc = PriorityClass.model_validate({"metadata": {"name": "high"}, "value": 1000, "globalDefault": True})
    assert pc.value == 1000 and pc.global_default and pc.preemption_policy == "PreemptLowerPriority"


def test_pdb() -> None:
    pdb = PodDisruptionBudget.model_validate({"metadata": {"name": "p", "namespace": "ns"}, "spec": {
        "minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}})
    assert pdb.selects("ns", {"app": "web"}) and not pdb.selects("default", {"app": "web"})
    assert scaled_value(pdb.spec.min_available, 5, round_up=True) == 3
    with pytest.raises(ValidationError, match="cannot be both set"):
        PodDisruptionBudget.model_validate({"spec": {"minAvailable": 1, "maxUnavailable": 1}})
    with pytest.raises(ValidationError, match="percentage"):
        PodDisruptionBudget.model_validate({"spec": {"maxUnavailable": "lots"}})


def test_pod_groups() -> None:
    pg = PodGroup.model_validate({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                                  "metadata": {"name": "g"}, "spec": {"minMember": 3}})
    assert pg.spec.min_member == 3
    assert pod_group_of(make_pod("a", labels={"scheduling.x-k8s.io/pod-group": "g"})) == \
        GroupRef("PodGroup", "default", "g")
    assert pod_group_of(make_pod("a", labels={"pod-group.scheduling.sigs.k8s.io": "old"})).name == "old"
    assert pod_group_of(make_pod("a")) is None
    wl = Workload.model_validate({"metadata": {"name": "w"}, "spec": {"podGroups": [
        {"name": "workers", "policy": {"gang": {"minCount": 4}}}]}})
    assert wl.group("workers").policy.gang.min_count == 4
    pod = Pod.model_validate({"metadata": {"name": "p"}, "spec": {"workloadRef": {
        "name": "w", "podGroup": "workers", "podGroupReplicaKey": "0"}}})
    assert pod_group_of(pod).key == "default/w/workers/0"
    with pytest.raises(ValidationError, match="exactly one"):
        Workload.model_validate({"spec": {"podGroups": [{"name": "x", "policy": {}}]}})


# ---------------------------------------------------------------- builders

def test_make_pod_is_unschedulable_and_complete() -> None:
    pod = make_pod("a", "ns", requests={"cpu": "1"}, limits={"memory": "1Gi"},
                   node_requirements=[("zone", "In", ["z1"])], node_preferences=[("arch", "In", ["arm64"])],
                   pod_anti_affinity=[pod_affinity_term({"app": "a"})],
                   pod_affinity_preferences=[(10, pod_affinity_term({"app": "b"}, "zone"))],
                   topology_spread_constraints=[topology_spread("zone", {"app": "a"})],
                   tolerations=[{"key": "t", "operator": "Exists"}], host_ports=[8080], priority=5,
                   owner_references=[{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                                      "controller": True}])
    assert pod.key == "ns/a"
    cond = pod.status.condition("PodScheduled")
    assert cond is not None and cond.reason == "Unschedulable" and cond.status == "False"
    req = pod.spec.containers[0].resources.requests
    assert req == {"cpu": Quantity(1), "memory": Quantity("1Gi")}
    aff = pod.spec.affinity
    assert aff.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms[0] \
        .match_expressions[0].values == ["z1"]
    assert aff.node_affinity.preferred_during_scheduling_ignored_during_execution[0].weight == 1
    assert aff.pod_anti_affinity.required_during_scheduling_ignored_during_execution[0].topology_key == \
        "kubernetes.io/hostname"
    assert aff.pod_affinity.preferred_during_scheduling_ignored_during_execution[0].weight == 10
    assert pod.spec.containers[0].ports[0].host_port == 8080
    assert pod.metadata.owner_references[0].kind == "ReplicaSet"
    assert make_pod("b", unschedulable=False).status.conditions == []
    assert make_pod("c").spec.affinity is None


def test_make_pods_node_nodepool() -> None:
    assert [p.metadata.name for p in make_pods(3, "x")] == ["x-0", "x-1", "x-2"]
    node = make_node("n1", labels={"zone": "z1"}, taints=[("k", "v", "NoSchedule")], capacity={"cpu": "4"})
    assert node.metadata.labels["kubernetes.io/hostname"] == "n1"
    assert node.status.allocatable["cpu"] == Quantity(4) and node.spec.taints[0].value == "v"
    np = make_nodepool("a", requirements=[("k", "In", ["x", "y"], 2)], limits={"cpu": 10}, weight=3,
                       taints=[{"key": "t", "effect": "NoSchedule"}])
    assert np.requirements[0].min_values == 2 and np.spec.limits["cpu"] == Quantity(10) and np.weight == 3
    assert np.spec.template.spec.node_class_ref.kind == "TestNodeClass"
    assert ObjectMeta().namespace == "default"


def test_null_structs_decode_to_empty_structs() -> None:
    # Go decodes `spec: null` to a zero struct; Optional fields keep None (nil vs empty)
    from karpy.api.loader import load_manifests

    m = load_manifests("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec: null\nstatus: null\n---\n"
                       "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                       "spec: {containers: [{name: c, image: x, resources: null}], affinity: null}\n")
    assert m.nodes[0].spec.taints == [] and m.nodes[0].status.capacity == {}
    pod = m.pods[0]
    assert pod.spec.containers[0].resources.requests == {}
    assert pod.spec.affinity is None
