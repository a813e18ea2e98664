"""Ports of pkg/controllers/provisioning/scheduling/suite_test.go (S:<line>)."""

from __future__ import annotations

import pytest

from karpy.api.builders import make_nodepool, make_pod
from karpy.cloudprovider import fake
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
