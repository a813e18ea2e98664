"""Ports of pkg/controllers/provisioning/scheduling/suite_test.go (S:<line>, Karpenter core @2266468).

The later part covers In-Flight Nodes (topology, taints, daemonsets, ordering, host ports), Existing
Nodes, No Pre-Binding, Deleting Nodes (non-volume, non-PDB), NodePool requirements instance filtering
and Offering Overrides, its default NodePool with capacity-type In [spot, on-demand, reserved].

Harness notes: upstream's ``ExpectDeleted(pod)`` is ``h.pods.remove(pod)``; ``cluster.MarkForDeletion``
is ``h.marked_for_deletion.add(name)``; ``ExpectEvicted`` sets the pod's deletionTimestamp;
``ExpectProvisionedNoBinding`` is ``h.provision(..., bind=False)``; ``cluster.Nodes()`` is
``h.cluster().nodes``."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone
import random

import pytest

from karpy.api.builders import make_nodepool, make_pod, make_daemonset, make_node, pod_affinity_term, topology_spread
from karpy.api.meta import ObjectMeta
from karpy.api.node import Node, NodeCondition, NodeSpec, NodeStatus
from karpy.api.nodeclaim import NodeClaim
from karpy.api.quantity import Quantity
from karpy.cloudprovider import fake
from karpy.cloudprovider.types import InstanceTypeOverhead, Offering
from karpy.scheduling.resources import from_quantities
from tests.provisioning.harness import Harness, expect_provisioned

ZONE = "topology.kubernetes.io/zone"
IT = "node.kubernetes.io/instance-type"
ARCH = "kubernetes.io/arch"
OS = "kubernetes.io/os"
CT = "karpenter.sh/capacity-type"
CT_REQ = (CT, "In", ["spot", "on-demand", "reserved"])


def pool(**kw):
    reqs = list(kw.pop("requirements", []))
    return make_nodepool(kw.pop("name", "default"), requirements=[CT_REQ, *reqs], **kw)


def one(pods, pools=None, its=None, **kw):
    h, res = expect_provisioned(pods, pools or [pool()], its, **kw)
    return h, res


# --- Custom Constraints / NodePool with Labels ------------------------------------------------------
def test_unconstrained_pod_gets_template_label():
    # upstream: S:155 "should schedule unconstrained pods that don't have matching node selectors"
    p = make_pod("p")
    h, _ = one([p], [pool(labels={"test-key": "test-value"})])
    assert h.labels_of(p)["test-key"] == "test-value"


def test_conflicting_node_selector_with_template_label():
    # upstream: S:163 "should not schedule pods that have conflicting node selectors"
    p = make_pod("p", node_selector={"test-key": "different-value"})
    h, res = one([p], [pool(labels={"test-key": "test-value"})])
    assert h.node_of(p) is None and p.key in res.errors


def test_node_selector_undefined_key():
    # upstream: S:172 "should not schedule pods that have node selectors with undefined key"
    p = make_pod("p", node_selector={"test-key": "test-value"})
    h, res = one([p])
    assert h.node_of(p) is None
    assert 'label "test-key" does not have known values' in res.errors[p.key]


def test_matching_requirements_with_template_label():
    # upstream: S:180 "should schedule pods that have matching requirements"
    p = make_pod("p", node_requirements=[("test-key", "In", ["test-value", "another-value"])])
    h, _ = one([p], [pool(labels={"test-key": "test-value"})])
    assert h.labels_of(p)["test-key"] == "test-value"


def test_conflicting_requirements_with_template_label():
    # upstream: S:192 "should not schedule pods that have conflicting requirements"
    p = make_pod("p", node_requirements=[("test-key", "In", ["another-value"])])
    h, _ = one([p], [pool(labels={"test-key": "test-value"})])
    assert h.node_of(p) is None


# --- Well Known Labels -------------------------------------------------------------------------
def test_use_nodepool_constraints():
    # upstream: S:205 "should use NodePool constraints"
    p = make_pod("p")
    h, _ = one([p], [pool(requirements=[(ZONE, "In", ["test-zone-2"])])])
    assert h.labels_of(p)[ZONE] == "test-zone-2"


def test_use_node_selectors():
    # upstream: S:214 "should use node selectors"
    p = make_pod("p", node_selector={ZONE: "test-zone-2"})
    h, _ = one([p], [pool(requirements=[(ZONE, "In", ["test-zone-1", "test-zone-2"])])])
    assert h.labels_of(p)[ZONE] == "test-zone-2"


def test_hostname_selector_rejected():
    # upstream: S:225 "should not schedule nodes with a hostname selector"
    p = make_pod("p", node_selector={"kubernetes.io/hostname": "red-node"})
    h, res = one([p])
    assert h.node_of(p) is None
    assert res.errors[p.key].startswith("ignoring pod, ")


def test_unknown_node_selector_value():
    # upstream: S:233 "should not schedule the pod if nodeselector unknown"
    p = make_pod("p", node_selector={ZONE: "unknown"})
    h, _ = one([p], [pool(requirements=[(ZONE, "In", ["test-zone-1"])])])
    assert h.node_of(p) is None


def test_node_selector_outside_nodepool():
    # upstream: S:243 "should not schedule if node selector outside of NodePool constraints"
    p = make_pod("p", node_selector={ZONE: "test-zone-2"})
    h, _ = one([p], [pool(requirements=[(ZONE, "In", ["test-zone-1"])])])
    assert h.node_of(p) is None


def test_requirements_in():
    # upstream: S:253 "should schedule compatible requirements with Operator=In"
    p = make_pod("p", node_requirements=[(ZONE, "In", ["test-zone-3"])])
    h, _ = one([p])
    assert h.labels_of(p)[ZONE] == "test-zone-3"
    assert h.labels_of(p)[CT] == "on-demand"


@pytest.mark.parametrize("op,value,expected", [
    ("Gt", "8", "16"),   # upstream: S:264 Operator=Gt
    ("Lt", "8", "2"),    # upstream: S:273 Operator=Lt
    ("Gte", "16", "16"),  # upstream: S:282 Operator=Gte
    ("Lte", "2", "2"),   # upstream: S:291 Operator=Lte
])
def test_integer_operators(op, value, expected):
    p = make_pod("p")
    h, _ = one([p], [pool(requirements=[("integer", op, [value])])])
    assert h.labels_of(p)["integer"] == expected


def test_incompatible_preferences_and_requirements_in():
    # upstream: S:300 "should not schedule incompatible preferences and requirements with Operator=In"
    p = make_pod("p", node_requirements=[(ZONE, "In", ["unknown"])])
    h, _ = one([p])
    assert h.node_of(p) is None


def test_requirements_not_in():
    # upstream: S:310 "should schedule compatible requirements with Operator=NotIn"
    p = make_pod("p", node_requirements=[(ZONE, "NotIn", ["test-zone-1", "test-zone-2", "unknown"])])
    h, _ = one([p])
    assert h.labels_of(p)[ZONE] == "test-zone-3"


def test_incompatible_requirements_not_in():
    # upstream: S:321 "should not schedule incompatible preferences and requirements with Operator=NotIn"
    p = make_pod("p", node_requirements=[(ZONE, "NotIn", ["test-zone-1", "test-zone-2", "test-zone-3", "unknown"])])
    h, _ = one([p])
    assert h.node_of(p) is None


def test_compatible_preferences_and_requirements_in():
    # upstream: S:332 "should schedule compatible preferences and requirements with Operator=In"
    p = make_pod("p", node_requirements=[(ZONE, "In", ["test-zone-1", "test-zone-2", "test-zone-3", "unknown"])],
                 node_preferences=[(ZONE, "In", ["test-zone-2", "unknown"])])
    h, _ = one([p])
    assert h.labels_of(p)[ZONE] == "test-zone-2"


def test_incompatible_preferences_relaxed_in():
    # upstream: S:346 "should schedule incompatible preferences and requirements with Operator=In"
    p = make_pod("p", node_requirements=[(ZONE, "In", ["test-zone-1", "test-zone-2", "test-zone-3", "unknown"])],
                 node_preferences=[(ZONE, "In", ["unknown"])])
    h, _ = one([p])
    assert h.labels_of(p) is not None


def test_compatible_preferences_and_requirements_not_in():
    # upstream: S:359 "should schedule compatible preferences and requirements with Operator=NotIn"
    p = make_pod("p", node_requirements=[(ZONE, "In", ["test-zone-1", "test-zone-2", "test-zone-3", "unknown"])],
                 node_preferences=[(ZONE, "NotIn", ["test-zone-1", "test-zone-3"])])
    h, _ = one([p])
    assert h.labels_of(p)[ZONE] == "test-zone-2"


def test_incompatible_preferences_relaxed_not_in():
    # upstream: S:373 "should schedule incompatible preferences and requirements with Operator=NotIn"
    p = make_pod("p", node_requirements=[(ZONE, "In", ["test-zone-1", "test-zone-2", "test-zone-3", "unknown"])],
                 node_preferences=[(ZONE, "NotIn", ["test-zone-1", "test-zone-2", "test-zone-3"])])
    h, _ = one([p])
    assert h.labels_of(p) is not None


def test_node_selector_preferences_requirements():
    # upstream: S:386 "should schedule compatible node selectors, preferences and requirements"
    p = make_pod("p", node_selector={ZONE: "test-zone-3"},
                 node_requirements=[(ZONE, "In", ["test-zone-1", "test-zone-2", "test-zone-3"])],
                 node_preferences=[(ZONE, "In", ["test-zone-2", "test-zone-3"])])
    h, _ = one([p])
    assert h.labels_of(p)[ZONE] == "test-zone-3"


def test_multidimensional_constraints():
    # upstream: S:401 "should combine multidimensional node selectors, preferences and requirements"
    p = make_pod("p", node_selector={ZONE: "test-zone-3", IT: "arm-instance-type"},
                 node_requirements=[(ZONE, "In", ["test-zone-2", "test-zone-3"]),
                                    (IT, "In", ["default-instance-type", "arm-instance-type"])],
                 node_preferences=[(ZONE, "NotIn", ["unknown"]), (IT, "NotIn", ["unknown"])])
    h, _ = one([p])
    assert h.labels_of(p)[ZONE] == "test-zone-3"
    assert h.labels_of(p)[IT] == "arm-instance-type"


# --- Constraints Validation ----------------------------------------------------------------------
@pytest.mark.parametrize("key", ["kubernetes.io/hostname", "karpenter.sh/nodepool-x", "karpenter.sh/custom",
                                 "sub.karpenter.sh/custom"])
def test_restricted_labels_and_domains(key):
    # upstream: S:426 restricted labels; S:442 restricted domains
    p = make_pod("p", node_selector={key: "test"})
    h, res = one([p])
    assert h.node_of(p) is None
    assert res.errors[p.key].startswith("ignoring pod, ")


@pytest.mark.parametrize("key", ["kubernetes.io/custom", "k8s.io/custom", "sub.kubernetes.io/custom",
                                 "sub.k8s.io/custom"])
def test_kubernetes_domains_allowed(key):
    # upstream: S:453 kubernetes domains; S:467 subdomains
    p = make_pod("p", node_selector={key: "test-value"})
    h, _ = one([p], [pool(requirements=[(key, "In", ["test-value"])])])
    assert h.labels_of(p)[key] == "test-value"


def test_well_known_label_selector():
    # upstream: S:481 "should schedule pods that have node selectors with label in wellknown label list"
    p = make_pod("p", node_selector={ZONE: "test-zone-1"})
    h, _ = one([p])
    assert h.labels_of(p)[ZONE] == "test-zone-1"


# --- Scheduling Logic -----------------------------------------------------------------------------
def test_nodepool_not_ready():
    # upstream: S:502 "should not schedule pods with nodePool which is not ready"
    np = pool()
    np.status.conditions = [type(np.status).model_fields["conditions"].annotation.__args__[0](
        type="Ready", status="False", reason="NotReady", message="")]
    p = make_pod("p")
    h, res = one([p], [np])
    assert h.node_of(p) is None
    assert res.errors[p.key] == "no dynamic nodepools found"


@pytest.mark.parametrize("op,values,scheduled", [
    ("In", ["test-value"], False),      # upstream: S:509
    ("NotIn", ["test-value"], True),    # upstream: S:518
    ("Exists", [], False),              # upstream: S:528
    ("DoesNotExist", [], True),         # upstream: S:537
])
def test_undefined_key_operators(op, values, scheduled):
    p = make_pod("p", node_requirements=[("test-key", op, values)])
    h, _ = one([p])
    assert (h.node_of(p) is not None) == scheduled
    if scheduled:
        # NotIn: upstream labels the node with Requirement.Any() (an integer), never the excluded value
        assert h.labels_of(p).get("test-key") != "test-value"
        if op == "DoesNotExist":
            assert "test-key" not in h.labels_of(p)


def test_pool_requirement_label():
    # upstream: S:547 "should schedule unconstrained pods that don't have matching node selectors"
    p = make_pod("p")
    h, _ = one([p], [pool(requirements=[("test-key", "In", ["test-value"])])])
    assert h.labels_of(p)["test-key"] == "test-value"


@pytest.mark.parametrize("op,values,scheduled,label", [
    ("In", ["test-value"], True, "test-value"),          # upstream: S:556
    ("NotIn", ["test-value"], False, None),              # upstream: S:568
    ("Exists", [], True, "test-value"),                  # upstream: S:579
    ("DoesNotExist", [], False, None),                   # upstream: S:591
    ("In", ["another-value"], False, None),              # upstream: S:603
    ("NotIn", ["another-value"], True, "test-value"),    # upstream: S:614
])
def test_defined_key_operators(op, values, scheduled, label):
    p = make_pod("p", node_requirements=[("test-key", op, values)])
    h, _ = one([p], [pool(requirements=[("test-key", "In", ["test-value"])])])
    assert (h.node_of(p) is not None) == scheduled
    if label:
        assert h.labels_of(p)["test-key"] == label


def test_compatible_pods_same_node():
    # upstream: S:626 "should schedule compatible pods to the same node"
    pods = [make_pod("a", node_requirements=[("test-key", "In", ["test-value"])]),
            make_pod("b", node_requirements=[("test-key", "NotIn", ["another-value"])])]
    h, _ = one(pods, [pool(requirements=[("test-key", "In", ["test-value", "another-value"])])])
    assert h.node_of(pods[0]).metadata.name == h.node_of(pods[1]).metadata.name
    assert h.labels_of(pods[0])["test-key"] == "test-value"


def test_incompatible_pods_different_nodes():
    # upstream: S:646 "should schedule incompatible pods to the different node"
    pods = [make_pod("a", node_requirements=[("test-key", "In", ["test-value"])]),
            make_pod("b", node_requirements=[("test-key", "In", ["another-value"])])]
    h, _ = one(pods, [pool(requirements=[("test-key", "In", ["test-value", "another-value"])])])
    assert h.node_of(pods[0]).metadata.name != h.node_of(pods[1]).metadata.name
    assert h.labels_of(pods[0])["test-key"] == "test-value"
    assert h.labels_of(pods[1])["test-key"] == "another-value"


def test_exists_does_not_overwrite_value():
    # upstream: S:666 "Exists operator should not overwrite the existing value"
    p = make_pod("p", node_requirements=[(ZONE, "In", ["non-existent-zone"]), (ZONE, "Exists", [])])
    h, _ = one([p])
    assert h.node_of(p) is None


# --- Preferential Fallback ------------------------------------------------------------------------
def _multi_term_pod(name, terms):
    from karpy.api.pod import NodeSelectorRequirement, NodeSelectorTerm
    p = make_pod(name, node_requirements=terms[0])
    p.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms = [
        NodeSelectorTerm(match_expressions=[NodeSelectorRequirement(key=k, operator=o, values=v) for k, o, v in t])
        for t in terms]
    return p


def test_required_does_not_relax_final_term():
    # upstream: S:1128 "should not relax the final term"
    p = _multi_term_pod("p", [[(ZONE, "In", ["invalid"])]])
    h, _ = one([p], [pool(requirements=[(ZONE, "In", ["test-zone-1"]), (IT, "In", ["default-instance-type"])])])
    assert h.node_of(p) is None


def test_required_relaxes_multiple_terms():
    # upstream: S:1144 "should relax multiple terms"
    p = _multi_term_pod("p", [[(ZONE, "In", ["invalid"])], [(ZONE, "In", ["invalid"])],
                              [(ZONE, "In", ["test-zone-1"])], [(ZONE, "In", ["test-zone-2"])]])
    h, _ = one([p])
    assert h.labels_of(p)[ZONE] == "test-zone-1"


def _preferred_pod(name, terms, required=None):
    from karpy.api.pod import NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm
    p = make_pod(name, node_requirements=required, node_preferences=[("x", "Exists", [])])
    p.spec.affinity.node_affinity.preferred_during_scheduling_ignored_during_execution = [
        PreferredSchedulingTerm(weight=w, preference=NodeSelectorTerm(match_expressions=[
            NodeSelectorRequirement(key=k, operator=o, values=v) for k, o, v in exprs])) for w, exprs in terms]
    return p


def test_preferred_relax_all_terms():
    # upstream: S:1168 "should relax all terms"
    p = _preferred_pod("p", [(1, [(ZONE, "In", ["invalid"])]), (1, [(IT, "In", ["invalid"])])])
    h, _ = one([p])
    assert h.node_of(p) is not None


def test_preferred_relax_to_lighter_weights():
    # upstream: S:1187 "should relax to use lighter weights"
    p = _preferred_pod("p", [(100, [(IT, "In", ["test-zone-3"])]), (50, [(ZONE, "In", ["test-zone-2"])]),
                             (1, [(ZONE, "In", ["test-zone-1"])])])
    h, _ = one([p], [pool(requirements=[(ZONE, "In", ["test-zone-1", "test-zone-2"])])])
    assert h.labels_of(p)[ZONE] == "test-zone-2"


def test_preference_conflicting_with_requirement():
    # upstream: S:1214 "should schedule even if preference is conflicting with requirement"
    p = _preferred_pod("p", [(1, [(ZONE, "NotIn", ["test-zone-3"])])], required=[(ZONE, "In", ["test-zone-3"])])
    h, _ = one([p])
    assert h.labels_of(p)[ZONE] == "test-zone-3"


def test_preference_requirements_conflicting():
    # upstream: S:1235 "should schedule even if preference requirements are conflicting"
    p = _preferred_pod("p", [(1, [(ZONE, "In", ["invalid"]), (ZONE, "NotIn", ["invalid"])])])
    h, _ = one([p])
    assert h.node_of(p) is not None


# --- Instance Type Compatibility -----------------------------------------------------------------
def test_more_resources_than_any_instance_type():
    # upstream: S:1248 "should not schedule if requesting more resources than any instance type has"
    p = make_pod("p", requests={"cpu": "512"})
    h, res = one([p])
    assert h.node_of(p) is None
    assert "no instance type has enough resources" in res.errors[p.key]


def test_different_archs_different_instances():
    # upstream: S:1259 "should launch pods with different archs on different instances"
    pods = [make_pod("a", node_selector={ARCH: "amd64"}), make_pod("b", node_selector={ARCH: "arm64"})]
    h, res = one(pods, [pool(requirements=[(ARCH, "In", ["arm64", "amd64"])])])
    assert len({h.node_of(p).metadata.name for p in pods}) == 2


def test_exclude_instance_types_by_pod_it_affinity():
    # upstream: S:1284 "should exclude instance types that are not supported by the pod constraints (node affinity/instance type)"
    p = make_pod("p", node_requirements=[(IT, "In", ["arm-instance-type"])])
    h, _ = one([p], [pool(requirements=[(ARCH, "In", ["amd64"])])])
    assert h.node_of(p) is None


def test_exclude_instance_types_by_os():
    # upstream: S:1305 "should exclude instance types that are not supported by the pod constraints (node affinity/operating system)"
    p = make_pod("p", node_requirements=[(OS, "In", ["ios"])])
    h, _ = one([p], [pool(requirements=[(ARCH, "In", ["amd64"])])])
    assert h.node_of(p) is None


def test_exclude_by_provider_arch():
    # upstream: S:1327 "should exclude instance types that are not supported by the provider constraints (arch)"
    p = make_pod("p", requests={"cpu": "14"})
    h, _ = one([p], [pool(requirements=[(ARCH, "In", ["amd64"])])])
    assert h.node_of(p) is None


def test_different_os_different_instances():
    # upstream: S:1342 "should launch pods with different operating systems on different instances"
    pods = [make_pod("a", node_selector={OS: "linux"}), make_pod("b", node_selector={OS: "ios"})]
    h, _ = one(pods, [pool(requirements=[(ARCH, "In", ["arm64", "amd64"])])])
    assert len({h.node_of(p).metadata.name for p in pods}) == 2
    assert h.labels_of(pods[1])[IT] == "arm-instance-type"  # the only type offering ios


def test_different_instance_type_selectors():
    # upstream: S:1367 "should launch pods with different instance type node selectors on different instances"
    pods = [make_pod("a", node_selector={IT: "small-instance-type"}),
            make_pod("b", node_selector={"beta.kubernetes.io/instance-type": "default-instance-type"})]
    h, _ = one(pods, [pool(requirements=[(ARCH, "In", ["arm64", "amd64"])])])
    assert len({h.node_of(p).metadata.name for p in pods}) == 2
    assert h.labels_of(pods[0])[IT] == "small-instance-type"
    assert h.labels_of(pods[1])[IT] == "default-instance-type"


def test_different_zone_selectors():
    # upstream: S:1392 "should launch pods with different zone selectors on different instances"
    pods = [make_pod("a", node_selector={ZONE: "test-zone-1"}), make_pod("b", node_selector={ZONE: "test-zone-2"})]
    h, _ = one(pods, [pool(requirements=[(ARCH, "In", ["arm64", "amd64"])])])
    assert len({h.node_of(p).metadata.name for p in pods}) == 2


def _gpu_its():
    its = fake.instance_types(5)
    its[0] = fake.new_instance_type("fake-it-0", resources={"cpu": "1", "memory": "2Gi", "pods": "10",
                                                             "karpenter.sh/super-great-gpu": "25"})
    its[1] = fake.new_instance_type("fake-it-1", resources={"cpu": "2", "memory": "4Gi", "pods": "20",
                                                             "karpenter.sh/even-better-gpu": "25"})
    return its


def test_resources_not_on_single_instance_type():
    # upstream: S:1417 "should launch pods with resources that aren't on any single instance type on different instances"
    pods = [make_pod("a", limits={"karpenter.sh/super-great-gpu": "1"}),
            make_pod("b", limits={"karpenter.sh/even-better-gpu": "1"})]
    h, _ = one(pods, [pool()], _gpu_its())
    assert h.labels_of(pods[0])[IT] == "fake-it-0"
    assert h.labels_of(pods[1])[IT] == "fake-it-1"


def test_resources_not_on_single_instance_type_one_pod():
    # upstream: S:1446 "should fail to schedule a pod with resources requests that aren't on a single instance type"
    p = make_pod("p", limits={"karpenter.sh/super-great-gpu": "1", "karpenter.sh/even-better-gpu": "1"})
    h, _ = one([p], [pool()], _gpu_its())
    assert h.node_of(p) is None


@pytest.mark.parametrize("selector,expected", [
    ({"size": "large"}, "fake-it-4"),   # upstream: S:1465 "should filter instance types that match labels"
    ({"size": "small"}, "fake-it-0"),
])
def test_provider_specific_labels(selector, expected):
    p = make_pod("p", node_selector=selector)
    h, _ = one([p], [pool()], fake.instance_types(5))
    assert h.labels_of(p)[IT] == expected


def test_provider_specific_incompatible_labels():
    # upstream: S:1478 "should not schedule with incompatible labels"
    p = make_pod("p", node_selector={"size": "large", IT: "fake-it-0"})
    h, _ = one([p], [pool()], fake.instance_types(5))
    assert h.node_of(p) is None


def test_provider_specific_optional_labels():
    # upstream: S:1495 "should schedule optional labels"
    p = make_pod("p", node_requirements=[("special", "Exists", [])])
    h, _ = one([p], [pool()], fake.instance_types(5))
    assert h.labels_of(p)[IT] == "fake-it-4"


def test_provider_specific_without_optional_labels():
    # upstream: S:1507 "should schedule without optional labels if disallowed"
    p = make_pod("p", node_requirements=[("special", "DoesNotExist", [])])
    h, _ = one([p], [pool()], fake.instance_types(5))
    assert h.labels_of(p)[IT] == "fake-it-0"


# --- Binpacking -----------------------------------------------------------------------------------
@pytest.mark.parametrize("memory", ["100M", "2000M"])
def test_small_pod_smallest_instance(memory):
    # upstream: S:1522 / S:1534 "should schedule a small pod on the smallest (possible) instance type"
    p = make_pod("p", requests={"memory": memory})
    h, _ = one([p])
    assert h.labels_of(p)[IT] == "small-instance-type"


def test_runtime_class_overhead():
    # upstream: S:1546 "should take pod runtime class into consideration"
    p = make_pod("p", requests={"cpu": "1"}, overhead={"cpu": "2"})
    h, _ = one([p])
    assert h.labels_of(p)[IT] == "default-instance-type"


def test_multiple_small_pods_smallest_instance():
    # upstream: S:1574 "should schedule multiple small pods on the smallest possible instance type"
    pods = [make_pod(f"p{i}", requests={"memory": "10M"}) for i in range(5)]
    h, res = one(pods)
    assert len({h.node_of(p).metadata.name for p in pods}) == 1
    assert h.labels_of(pods[0])[IT] == "small-instance-type"


def test_new_nodes_at_capacity():
    # upstream: S:1593 "should create new nodes when a node is at capacity"
    pods = [make_pod(f"p{i}", requests={"memory": "1.8G"}, node_selector={ARCH: "amd64"}) for i in range(40)]
    h, res = one(pods)
    assert len(res.created) == 20
    assert {h.labels_of(p)[IT] for p in pods} == {"default-instance-type"}


def test_pack_small_and_large():
    # upstream: S:1613 "should pack small and large pods together"
    large = [make_pod(f"l{i}", requests={"memory": "1.8G"}, node_selector={ARCH: "amd64"}) for i in range(40)]
    small = [make_pod(f"s{i}", requests={"memory": "400M"}, node_selector={ARCH: "amd64"}) for i in range(20)]
    h, res = one(large + small)
    assert len(res.created) == 20
    assert {h.labels_of(p)[IT] for p in large + small} == {"default-instance-type"}


def test_pack_nodes_tightly():
    # upstream: S:1645 "should pack nodes tightly"
    pods = [make_pod("big", requests={"cpu": "4.5"}), make_pod("small", requests={"cpu": "1"})]
    h, res = one(pods, [pool()], fake.instance_types(5))
    assert h.node_of(pods[0]).metadata.name != h.node_of(pods[1]).metadata.name
    assert h.labels_of(pods[0])[IT] != h.labels_of(pods[1])[IT]


def test_zero_quantity_resource():
    # upstream: S:1671 "should handle zero-quantity resource requests"
    p = make_pod("p", requests={"foo.com/weird-resources": "0"}, limits={"foo.com/weird-resources": "0"})
    h, _ = one([p])
    assert h.node_of(p) is not None


def test_exceed_every_instance_type():
    # upstream: S:1683 "should not schedule pods that exceed every instance type's capacity"
    p = make_pod("p", requests={"memory": "2Ti"})
    h, _ = one([p])
    assert h.node_of(p) is None


def test_pod_limits_per_node():
    # upstream: S:1694 "should create new nodes when a node is at capacity due to pod limits per node"
    pods = [make_pod(f"p{i}", requests={"cpu": "1m", "memory": "1m"}, node_selector={ARCH: "amd64"}) for i in range(25)]
    h, res = one(pods)
    assert len(res.created) == 5
    assert {h.labels_of(p)[IT] for p in pods} == {"small-instance-type"}


def test_init_container_requests():
    # upstream: S:1716 "should take into account initContainer resource requests when binpacking"
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"},
                 init_containers=[{"requests": {"cpu": "2", "memory": "1Gi"}}])
    h, _ = one([p])
    assert h.labels_of(p)[IT] == "default-instance-type"


def test_init_container_too_large():
    # upstream: S:1741 "should not schedule pods when initContainer resource requests are greater than available instance types"
    p = make_pod("p", requests={"cpu": "1", "memory": "1Gi"},
                 init_containers=[{"requests": {"cpu": "1", "memory": "1Ti"}}])
    h, _ = one([p])
    assert h.node_of(p) is None


def test_valid_instance_types_regardless_of_price():
    # upstream: S:1763 "should select for valid instance types, regardless of price"
    from karpy.cloudprovider.fake import _offering  # noqa: PLC2701
    its = [
        fake.new_instance_type("medium", resources={"cpu": "2", "memory": "2Gi"},
                               offerings=[_offering("on-demand", "test-zone-1a", 3.00)]),
        fake.new_instance_type("small", resources={"cpu": "1", "memory": "1Gi"},
                               offerings=[_offering("on-demand", "test-zone-1a", 2.00)]),
        fake.new_instance_type("large", resources={"cpu": "4", "memory": "4Gi"},
                               offerings=[_offering("on-demand", "test-zone-1a", 1.00)]),
    ]
    p = make_pod("p", limits={"cpu": "1m", "memory": "1Mi"})
    h, res = one([p], [pool()], its)
    assert h.labels_of(p)[IT] == "large"
    it_req = next(r for r in res.requested[0].spec.requirements if r.key == IT)
    assert sorted(it_req.values) == ["large", "medium", "small"]


HOST = "kubernetes.io/hostname"


NODEPOOL = "karpenter.sh/nodepool"


INITIALIZED = "karpenter.sh/initialized"


REGISTERED = "karpenter.sh/registered"


NANO = 1_000_000_000


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
