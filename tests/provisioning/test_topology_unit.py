"""Unit tests of karpy.provisioning.topology* driving Topology directly (no scheduler).

Each test mimics what the scheduler does around one NodeClaim / existing node: ``add_requirements``
with the claim's requirements, then ``register`` + ``record`` with the narrowed requirements.
"""

from __future__ import annotations

from karpy.api.builders import make_node, make_nodepool, make_pod, pod_affinity_term, topology_spread
from karpy.api.meta import LabelSelector, LabelSelectorRequirement
from karpy.cloudprovider.fake import default_instance_types
from karpy.provisioning.topology import Topology, TopologyError, build_domain_groups, pretty_map
from karpy.provisioning.topologydomaingroup import TopologyDomainGroup
from karpy.provisioning.topologygroup import TopologyType, compile_selector
from karpy.provisioning.topologynodefilter import ZERO_NODE_FILTER, make_topology_node_filter
from karpy.scheduling.labels import LABEL_CAPACITY_TYPE, LABEL_HOSTNAME, LABEL_ZONE
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements, strict_pod_requirements
from karpy.state.cluster import ClusterState

ZONES = ["test-zone-1", "test-zone-2", "test-zone-3"]
LABELS = {"test": "test"}


def _topology(pods, nodepools=None, cluster=None, state_nodes=None, policy="Respect", its=None):
    nodepools = nodepools if nodepools is not None else [make_nodepool("default")]
    its = its if its is not None else {np.metadata.name: default_instance_types() for np in nodepools}
    cluster = cluster if cluster is not None else ClusterState()
    state_nodes = state_nodes if state_nodes is not None else cluster.nodes
    return Topology(cluster, state_nodes, nodepools, its, pods, preference_policy=policy)


class Claim:
    """A stand-in for an in-flight NodeClaim: requirements + hostname placeholder."""

    counter = 0

    def __init__(self, topo: Topology, *reqs: Requirement, hostname: str | None = None, taints=()):
        Claim.counter += 1
        self.topo = topo
        self.hostname = hostname or f"hostname-placeholder-{Claim.counter:04d}"
        self.reqs = Requirements(Requirement(LABEL_HOSTNAME, "In", [self.hostname]), *reqs)
        self.taints = list(taints)
        self.pods = []

    def try_add(self, pod, allow_undefined=frozenset()):
        reqs = self.reqs.copy()
        reqs.add(*strict_pod_requirements(pod).values())
        narrowed, err = self.topo.add_requirements(pod, self.taints, strict_pod_requirements(pod), reqs, allow_undefined)
        if err is not None:
            return err
        self.reqs = narrowed
        self.pods.append(pod)
        self.topo.register(LABEL_HOSTNAME, self.hostname)
        self.topo.record(pod, self.taints, narrowed, allow_undefined)
        return None

    def zone(self):
        return self.reqs.get(LABEL_ZONE)


def _place_each_on_new_claim(topo, pods, *reqs):
    claims = []
    for p in pods:
        c = Claim(topo, *reqs)
        assert c.try_add(p) is None
        claims.append(c)
    return claims


def _group(topo, key, ttype=TopologyType.SPREAD):
    return next(g for g in topo.groups() if g.key == key and g.type == ttype)


# --- domain universe ---------------------------------------------------------------------------
def test_domain_universe_from_instance_types():
    groups = build_domain_groups([make_nodepool("default")], {"default": default_instance_types()})
    assert sorted(groups[LABEL_ZONE].domains()) == ZONES
    assert sorted(groups[LABEL_CAPACITY_TYPE].domains()) == ["on-demand", "spot"]
    assert "arm-instance-type" in groups["node.kubernetes.io/instance-type"].domains()


def test_domain_universe_narrowed_by_nodepool_requirements_and_labels():
    np = make_nodepool("a", requirements=[(LABEL_ZONE, "In", ["test-zone-1", "test-zone-2"])])
    groups = build_domain_groups([np], {"a": default_instance_types()})
    assert sorted(groups[LABEL_ZONE].domains()) == ["test-zone-1", "test-zone-2"]
    np2 = make_nodepool("b", labels={LABEL_ZONE: "test-zone-1", "custom": "x"})
    groups = build_domain_groups([np2], {"b": default_instance_types()})
    assert groups[LABEL_ZONE].domains() == ["test-zone-1"]
    assert groups["custom"].domains() == ["x"]


def test_domain_universe_in_requirement_without_instance_types_value():
    # an In requirement of the pool contributes its values even if no IT defines the key
    np = make_nodepool("a", requirements=[("capacity.spread", "In", ["1", "2"])])
    groups = build_domain_groups([np], {"a": default_instance_types()})
    assert sorted(groups["capacity.spread"].domains()) == ["1", "2"]


def test_domain_universe_pool_without_instance_types_adds_nothing():
    np = make_nodepool("a", requirements=[(LABEL_ZONE, "In", ["zz"])])
    assert LABEL_ZONE not in build_domain_groups([np], {})


def test_domain_group_taint_sets_empty_set_supersedes():
    g = TopologyDomainGroup()
    taint = make_nodepool("x", taints=[("k", "v", "NoSchedule")]).spec.template.spec.taints[0]
    g.insert("foo", [taint])
    assert g.taint_sets("foo") == [(taint,)]
    g.insert("foo", [])
    assert g.taint_sets("foo") == [()]
    g.insert("foo", [taint])
    assert g.taint_sets("foo") == [()]
    assert g.tolerated_domains([], "Honor") == ["foo"]


def test_domain_group_honor_filters_untolerated_domains():
    np = make_nodepool("t", taints=[("k", "v", "NoSchedule")], requirements=[("spread", "In", ["bar"])])
    g = build_domain_groups([np], {"t": default_instance_types()})["spread"]
    assert g.tolerated_domains([], "Honor") == []
    assert g.tolerated_domains([], "Ignore") == ["bar"]
    # the zero policy of affinity groups behaves like Honor (topologydomaingroup.go compares == Ignore)
    assert g.tolerated_domains([], "") == []
    tol = make_pod(tolerations=[{"key": "k", "operator": "Exists"}]).spec.tolerations
    assert g.tolerated_domains(tol, "Honor") == ["bar"]


# --- selectors ---------------------------------------------------------------------------------
def test_selector_nil_vs_empty_vs_invalid():
    assert not compile_selector(None).matches({"a": "b"})
    assert compile_selector(None, nil_matches=True).matches({"a": "b"})
    assert compile_selector(LabelSelector()).matches({})
    bad = LabelSelector(match_labels={"app.kubernetes.io/name": "{{ zqfmgb }}"})
    assert not compile_selector(bad).matches({"app.kubernetes.io/name": "{{ zqfmgb }}"})
    assert not compile_selector(bad, nil_matches=True).matches({})
    expr = LabelSelector(match_expressions=[LabelSelectorRequirement(key="test", operator="In", values=["test"])])
    assert compile_selector(expr).matches({"test": "test"})
    assert not compile_selector(expr).matches({"test": "x"})
    notin = LabelSelector(match_expressions=[LabelSelectorRequirement(key="t", operator="NotIn", values=["a"])])
    assert compile_selector(notin).matches({}) and not compile_selector(notin).matches({"t": "a"})


# --- groups and ownership ----------------------------------------------------------------------
def test_groups_are_deduplicated_with_owners():
    tsc = topology_spread(LABEL_ZONE, LABELS)
    pods = [make_pod(f"p{i}", labels=LABELS, topology_spread_constraints=[tsc]) for i in range(100)]
    topo = _topology(pods)
    assert len(topo.groups()) == 1
    assert len(topo.groups()[0].owners) == 100


def test_min_domains_not_part_of_group_hash():
    a = make_pod("a", labels=LABELS, topology_spread_constraints=[topology_spread(LABEL_ZONE, LABELS, min_domains=3)])
    b = make_pod("b", labels=LABELS, topology_spread_constraints=[topology_spread(LABEL_ZONE, LABELS)])
    topo = _topology([a, b])
    assert len(topo.groups()) == 1
    assert topo.groups()[0].min_domains == 3


def test_node_filter_is_part_of_group_hash():
    tsc = topology_spread(LABEL_ZONE, LABELS)
    a = make_pod("a", labels=LABELS, topology_spread_constraints=[tsc])
    b = make_pod("b", labels=LABELS, topology_spread_constraints=[tsc], node_selector={LABEL_ZONE: "test-zone-1"})
    assert len(_topology([a, b]).groups()) == 2


def test_match_label_keys_split_groups():
    tsc = topology_spread(LABEL_HOSTNAME, LABELS, match_label_keys=["test-label"])
    a = make_pod("a", labels={**LABELS, "test-label": "value-a"}, topology_spread_constraints=[tsc])
    b = make_pod("b", labels={**LABELS, "test-label": "value-b"}, topology_spread_constraints=[tsc])
    c = make_pod("c", labels=LABELS, topology_spread_constraints=[tsc])  # unknown key ignored
    topo = _topology([a, b, c])
    assert len(topo.groups()) == 3
    ga = topo.owned_groups(a)[0]
    assert ga.selects(a) and not ga.selects(b) and not ga.selects(c)
    gc = topo.owned_groups(c)[0]
    assert gc.selects(a) and gc.selects(b) and gc.selects(c)
    # the pod's own selector is not mutated
    assert a.spec.topology_spread_constraints[0].label_selector.match_expressions == []


def test_update_after_relaxation_drops_ownership():
    pod = make_pod("a", labels=LABELS, topology_spread_constraints=[
        topology_spread(LABEL_ZONE, LABELS, when_unsatisfiable="ScheduleAnyway")])
    topo = _topology([pod])
    assert topo.owned_groups(pod)
    relaxed = pod.model_copy(deep=True)
    relaxed.spec.topology_spread_constraints = []
    assert topo.update(relaxed) is None
    assert topo.owned_groups(pod) == []
    assert all(not g.owners for g in topo.groups())


def test_ignore_policy_skips_schedule_anyway_and_preferred_terms():
    pod = make_pod("a", labels=LABELS, topology_spread_constraints=[
        topology_spread(LABEL_ZONE, LABELS, when_unsatisfiable="ScheduleAnyway"),
        topology_spread(LABEL_HOSTNAME, LABELS)],
        pod_affinity_preferences=[pod_affinity_term(LABELS, LABEL_ZONE)],
        pod_anti_affinity_preferences=[pod_affinity_term(LABELS, LABEL_ZONE)])
    ignore = _topology([pod], policy="Ignore")
    assert [(g.key, g.type) for g in ignore.groups()] == [(LABEL_HOSTNAME, TopologyType.SPREAD)]
    respect = _topology([pod], policy="Respect")
    assert len(respect.groups()) == 4
    # preferred anti-affinity is never tracked inversely
    assert respect.inverse_groups() == []


# --- topology spread ---------------------------------------------------------------------------
def test_zonal_spread_pins_each_claim_to_one_least_loaded_zone():
    tsc = topology_spread(LABEL_ZONE, LABELS)
    pods = [make_pod(f"p{i}", labels=LABELS, topology_spread_constraints=[tsc]) for i in range(4)]
    topo = _topology(pods)
    claims = _place_each_on_new_claim(topo, pods)
    # deterministic tie-break: smallest domain name among the least loaded
    assert [c.zone().sorted_values() for c in claims] == [["test-zone-1"], ["test-zone-2"], ["test-zone-3"], ["test-zone-1"]]
    assert _group(topo, LABEL_ZONE).domains == {"test-zone-1": 2, "test-zone-2": 1, "test-zone-3": 1}


def test_zonal_spread_rejects_skew_violation_with_verbatim_error():
    np = make_nodepool("default", requirements=[(LABEL_ZONE, "In", ZONES)])
    tsc = topology_spread(LABEL_ZONE, LABELS)
    pods = [make_pod(f"p{i}", labels=LABELS, topology_spread_constraints=[tsc]) for i in range(3)]
    topo = _topology(pods, nodepools=[np])
    assert Claim(topo, Requirement(LABEL_ZONE, "In", ["test-zone-1"])).try_add(pods[0]) is None
    err = Claim(topo, Requirement(LABEL_ZONE, "In", ["test-zone-1"])).try_add(pods[1])
    assert isinstance(err, TopologyError)
    assert str(err) == (
        "unsatisfiable topology constraint for topology spread, key=topology.kubernetes.io/zone "
        "(counts = test-zone-1: 1, test-zone-2: 0, test-zone-3: 0, podDomains = topology.kubernetes.io/zone Exists, "
        "nodeDomains = topology.kubernetes.io/zone In [test-zone-1]"
    )
    assert err == str(err)


def test_unknown_topology_key_is_unschedulable():
    pod = make_pod("a", labels=LABELS, topology_spread_constraints=[topology_spread("unknown", LABELS)])
    topo = _topology([pod])
    err = Claim(topo).try_add(pod)
    assert err is not None and str(err).startswith("unsatisfiable topology constraint for topology spread, key=unknown")


def test_hostname_spread_special_case_uses_zero_min():
    tsc = topology_spread(LABEL_HOSTNAME, LABELS, max_skew=1)
    pods = [make_pod(f"p{i}", labels=LABELS, topology_spread_constraints=[tsc]) for i in range(2)]
    topo = _topology(pods)
    c = Claim(topo)
    assert c.try_add(pods[0]) is None
    assert c.try_add(pods[1]) is not None  # 1 + self > maxSkew on the same host
    assert Claim(topo).try_add(pods[1]) is None


def test_hostname_spread_max_skew_four_packs():
    tsc = topology_spread(LABEL_HOSTNAME, LABELS, max_skew=4)
    pods = [make_pod(f"p{i}", labels=LABELS, topology_spread_constraints=[tsc]) for i in range(5)]
    topo = _topology(pods)
    c = Claim(topo)
    assert [c.try_add(p) is None for p in pods] == [True, True, True, True, False]


def test_non_self_selecting_spread_does_not_count():
    # "should handle interdependent selectors": pods not matching the selector can pack
    tsc = topology_spread(LABEL_HOSTNAME, LABELS)
    pods = [make_pod(f"p{i}", topology_spread_constraints=[tsc]) for i in range(5)]
    topo = _topology(pods)
    c = Claim(topo)
    assert all(c.try_add(p) is None for p in pods)
    assert _group(topo, LABEL_HOSTNAME).domains.get(c.hostname, 0) == 0


def test_min_domains_forces_zero_global_minimum():
    np = make_nodepool("default", requirements=[(LABEL_ZONE, "In", ["test-zone-1", "test-zone-2"])])
    tsc = topology_spread(LABEL_ZONE, LABELS, min_domains=3)
    pods = [make_pod(f"p{i}", labels=LABELS, topology_spread_constraints=[tsc]) for i in range(3)]
    topo = _topology(pods, nodepools=[np])
    results = [Claim(topo).try_add(p) is None for p in pods]
    assert results == [True, True, False]
    assert _group(topo, LABEL_ZONE).domains == {"test-zone-1": 1, "test-zone-2": 1}


def test_min_domains_satisfied_allows_normal_skew():
    np = make_nodepool("default", requirements=[(LABEL_ZONE, "In", ZONES)])
    tsc = topology_spread(LABEL_ZONE, LABELS, min_domains=2)
    pods = [make_pod(f"p{i}", labels=LABELS, topology_spread_constraints=[tsc]) for i in range(11)]
    topo = _topology(pods, nodepools=[np])
    assert all(Claim(topo).try_add(p) is None for p in pods)
    assert sorted(_group(topo, LABEL_ZONE).domains.values()) == [3, 4, 4]


def test_pod_domains_use_strict_requirements_for_min():
    # preferred node affinity must not narrow the global-min domains
    tsc = topology_spread(LABEL_ZONE, LABELS)
    pod = make_pod("a", labels=LABELS, topology_spread_constraints=[tsc],
                   node_preferences=[(LABEL_ZONE, "In", ["test-zone-1"])])
    topo = _topology([pod])
    strict = strict_pod_requirements(pod)
    assert not strict.has(LABEL_ZONE)
    g = _group(topo, LABEL_ZONE)
    g.record("test-zone-1")
    node = Requirements(Requirement(LABEL_ZONE, "In", ["test-zone-1"]))
    _, err = topo.add_requirements(pod, [], strict, node)
    assert err is not None  # 1 + 1 - 0 (zone-2/3 empty) > 1


def test_counts_existing_pods_skipping_ignored_ones():
    n1 = make_node("n1", labels={LABEL_ZONE: "test-zone-1"})
    n2 = make_node("n2", labels={LABEL_ZONE: "test-zone-2"})
    n3 = make_node("n3")  # no zone
    tsc = topology_spread(LABEL_ZONE, LABELS)
    scheduled = make_pod("new", labels=LABELS, topology_spread_constraints=[tsc])
    existing = [
        make_pod("no-labels", node_name="n1", unschedulable=False, phase="Running"),
        make_pod("pending", labels=LABELS),
        make_pod("no-domain", labels=LABELS, node_name="n3", unschedulable=False),
        make_pod("wrong-ns", namespace="other", labels=LABELS, node_name="n1", unschedulable=False),
        make_pod("failed", labels=LABELS, node_name="n1", phase="Failed", unschedulable=False),
        make_pod("succeeded", labels=LABELS, node_name="n1", phase="Succeeded", unschedulable=False),
        make_pod("gone", labels=LABELS, node_name="deleted-node", unschedulable=False),
        make_pod("r1", labels=LABELS, node_name="n1", unschedulable=False, phase="Running"),
        make_pod("r2", labels=LABELS, node_name="n1", unschedulable=False, phase="Running"),
        make_pod("r3", labels=LABELS, node_name="n2", unschedulable=False, phase="Running"),
    ]
    terminating = make_pod("terminating", labels=LABELS, node_name="n2", unschedulable=False)
    terminating.metadata.deletion_timestamp = "2024-01-01T00:00:00Z"
    existing.append(terminating)
    cluster = ClusterState.from_objects(nodes=[n1, n2, n3], pods=existing)
    topo = _topology([scheduled], cluster=cluster)
    assert _group(topo, LABEL_ZONE).domains == {"test-zone-1": 2, "test-zone-2": 1, "test-zone-3": 0}


def test_pods_being_scheduled_are_excluded_from_counts():
    n1 = make_node("n1", labels={LABEL_ZONE: "test-zone-1"})
    tsc = topology_spread(LABEL_ZONE, LABELS)
    bound = make_pod("moving", labels=LABELS, node_name="n1", unschedulable=False, topology_spread_constraints=[tsc])
    cluster = ClusterState.from_objects(nodes=[n1], pods=[bound])
    topo = _topology([bound], cluster=cluster)
    assert _group(topo, LABEL_ZONE).domains["test-zone-1"] == 0


def test_nil_selector_counts_everything_but_selects_nothing():
    n1 = make_node("n1", labels={LABEL_ZONE: "test-zone-1"})
    other = make_pod("other", node_name="n1", unschedulable=False, phase="Running")
    tsc = topology_spread(LABEL_ZONE, None)
    pod = make_pod("a", labels=LABELS, topology_spread_constraints=[tsc])
    topo = _topology([pod], cluster=ClusterState.from_objects(nodes=[n1], pods=[other]))
    g = _group(topo, LABEL_ZONE)
    assert g.domains["test-zone-1"] == 1  # TopologyListOptions: nil -> everything
    assert not g.selects(pod)  # LabelSelectorAsSelector: nil -> nothing


def test_existing_nodes_register_domains_through_node_filter():
    tainted = make_node("n1", labels={"fake-label": "foo"}, taints=[("taintname", "taintvalue", "NoSchedule")])
    np = make_nodepool("default", labels={"fake-label": "baz"})
    cluster = ClusterState.from_objects(nodes=[tainted])
    for policy, expected in (("Ignore", {"baz": 0, "foo": 0}), ("Honor", {"baz": 0})):
        tsc = topology_spread("fake-label", LABELS, node_taints_policy=policy)
        pod = make_pod("a", labels=LABELS, topology_spread_constraints=[tsc])
        topo = _topology([pod], nodepools=[np], cluster=cluster)
        assert _group(topo, "fake-label").domains == expected, policy


def test_node_affinity_policy_filters_nodes():
    node = make_node("n1", labels={"fake-label": "foo", "selector": "mismatch"})
    np = make_nodepool("default", labels={"fake-label": "baz", "selector": "value"})
    cluster = ClusterState.from_objects(nodes=[node])
    for policy, expected in (("Ignore", {"baz": 0, "foo": 0}), ("Honor", {"baz": 0}), (None, {"baz": 0})):
        kwargs = {"node_affinity_policy": policy} if policy else {}
        tsc = topology_spread("fake-label", LABELS, **kwargs)
        pod = make_pod("a", labels=LABELS, topology_spread_constraints=[tsc], node_selector={"selector": "value"})
        topo = _topology([pod], nodepools=[np], cluster=cluster)
        assert _group(topo, "fake-label").domains == expected, policy


def test_node_filter_alternatives_from_required_terms():
    pod = make_pod("a", node_selector={"a": "1"}, node_requirements=[(LABEL_ZONE, "In", ["test-zone-1"])])
    f = make_topology_node_filter(pod, "Ignore", "Honor")
    assert len(f.requirements) == 1 and set(f.requirements[0]) == {"a", LABEL_ZONE}
    ok = Requirements.from_labels({"a": "1", LABEL_ZONE: "test-zone-1"})
    bad = Requirements.from_labels({"a": "1", LABEL_ZONE: "test-zone-2"})
    assert f.matches([], ok) and not f.matches([], bad)
    assert ZERO_NODE_FILTER.matches([object()], bad)


def test_spread_counts_only_nodes_passing_filter_on_record():
    # node requirements incompatible with the pod's selector: the pod does not count in the group
    tsc = topology_spread(LABEL_CAPACITY_TYPE, LABELS)
    spot = make_pod("spot", labels=LABELS, topology_spread_constraints=[tsc],
                    node_requirements=[(LABEL_CAPACITY_TYPE, "In", ["spot"])])
    other = make_pod("other", labels=LABELS, topology_spread_constraints=[tsc])
    topo = _topology([spot, other])
    g_spot = topo.owned_groups(spot)[0]
    g_other = topo.owned_groups(other)[0]
    assert g_spot is not g_other
    c = Claim(topo, Requirement(LABEL_CAPACITY_TYPE, "In", ["on-demand"]))
    assert c.try_add(other) is None
    assert g_other.domains["on-demand"] == 1
    assert g_spot.domains["on-demand"] == 0  # filtered by the spot pod's node affinity


# --- pod affinity ------------------------------------------------------------------------------
def test_self_affinity_zone_bootstrap_is_deterministic():
    term = pod_affinity_term(LABELS, LABEL_ZONE)
    pods = [make_pod(f"p{i}", labels=LABELS, pod_affinity=[term]) for i in range(3)]
    topo = _topology(pods)
    claims = _place_each_on_new_claim(topo, pods)
    assert {tuple(c.zone().sorted_values()) for c in claims} == {("test-zone-1",)}
    g = _group(topo, LABEL_ZONE, TopologyType.POD_AFFINITY)
    assert g.domains["test-zone-1"] == 3


def test_self_affinity_bootstrap_prefers_node_domains():
    term = pod_affinity_term(LABELS, LABEL_ZONE)
    pod = make_pod("p", labels=LABELS, pod_affinity=[term])
    topo = _topology([pod])
    c = Claim(topo, Requirement(LABEL_ZONE, "In", ["test-zone-2"]))
    assert c.try_add(pod) is None
    assert c.zone().sorted_values() == ["test-zone-2"]


def test_affinity_to_nonexistent_pod_fails():
    pod = make_pod("p", pod_affinity=[pod_affinity_term({"foo": "bar"}, LABEL_ZONE)])
    topo = _topology([pod])
    err = Claim(topo).try_add(pod)
    assert str(err).startswith("unsatisfiable topology constraint for pod affinity, key=topology.kubernetes.io/zone")


def test_affinity_follows_target_domain():
    target = make_pod("target", labels={"security": "s2"})
    follower = make_pod("f", pod_affinity=[pod_affinity_term({"security": "s2"}, LABEL_ZONE)])
    topo = _topology([target, follower])
    assert Claim(topo, Requirement(LABEL_ZONE, "In", ["test-zone-3"])).try_add(target) is None
    c = Claim(topo)
    assert c.try_add(follower) is None
    assert c.zone().sorted_values() == ["test-zone-3"]
    assert Claim(topo, Requirement(LABEL_ZONE, "In", ["test-zone-1"])).try_add(follower) is not None


def test_hostname_self_affinity_special_case():
    term = pod_affinity_term(LABELS, LABEL_HOSTNAME)
    pods = [make_pod(f"p{i}", labels=LABELS, pod_affinity=[term]) for i in range(3)]
    topo = _topology(pods)
    first = Claim(topo)
    assert first.try_add(pods[0]) is None
    # another empty host is not acceptable once a domain has pods
    assert Claim(topo).try_add(pods[1]) is not None
    assert first.try_add(pods[1]) is None


def test_affinity_namespace_filtering():
    target = make_pod("t", namespace="other", labels={"app": "x"})
    own_ns = make_pod("a", pod_affinity=[pod_affinity_term({"app": "x"}, LABEL_ZONE)])
    listed = make_pod("b", pod_affinity=[pod_affinity_term({"app": "x"}, LABEL_ZONE, namespaces=["other"])])
    all_ns = make_pod("c", pod_affinity=[pod_affinity_term({"app": "x"}, LABEL_ZONE, namespace_selector=LabelSelector())])
    topo = _topology([target, own_ns, listed, all_ns])
    assert Claim(topo, Requirement(LABEL_ZONE, "In", ["test-zone-2"])).try_add(target) is None
    assert Claim(topo).try_add(own_ns) is not None
    assert Claim(topo).try_add(listed) is None
    assert Claim(topo).try_add(all_ns) is None
    assert "other" in topo.owned_groups(all_ns)[0].namespaces


# --- pod anti-affinity -------------------------------------------------------------------------
def test_hostname_anti_affinity_one_per_node():
    term = pod_affinity_term(LABELS, LABEL_HOSTNAME)
    pods = [make_pod(f"p{i}", labels=LABELS, pod_anti_affinity=[term]) for i in range(3)]
    topo = _topology(pods)
    c = Claim(topo)
    assert c.try_add(pods[0]) is None
    assert str(c.try_add(pods[1])).startswith("unsatisfiable topology constraint for pod anti-affinity")
    assert Claim(topo).try_add(pods[1]) is None


def test_zone_anti_affinity_uses_empty_domains():
    term = pod_affinity_term(LABELS, LABEL_ZONE)
    pods = [make_pod(f"p{i}", labels=LABELS, pod_anti_affinity=[term]) for i in range(4)]
    topo = _topology(pods)
    # an unconstrained claim may land in any zone: all of them are blocked (recorded) at once
    first = Claim(topo)
    assert first.try_add(pods[0]) is None
    assert first.zone().sorted_values() == ZONES
    assert Claim(topo).try_add(pods[1]) is not None
    topo2 = _topology(pods)
    results = [Claim(topo2, Requirement(LABEL_ZONE, "In", [z])).try_add(p) is None
               for z, p in zip(ZONES + ["test-zone-1"], pods)]
    assert results == [True, True, True, False]


def test_inverse_anti_affinity_blocks_other_pods():
    # the pod with anti-affinity is placed first; the selected pod must avoid its zone
    anti = make_pod("anti", pod_anti_affinity=[pod_affinity_term({"security": "s2"}, LABEL_ZONE)])
    target = make_pod("target", labels={"security": "s2"})
    topo = _topology([anti, target])
    assert len(topo.inverse_groups()) == 1
    assert Claim(topo, Requirement(LABEL_ZONE, "In", ["test-zone-1"])).try_add(anti) is None
    assert Claim(topo, Requirement(LABEL_ZONE, "In", ["test-zone-1"])).try_add(target) is not None
    c = Claim(topo)
    assert c.try_add(target) is None
    assert "test-zone-1" not in c.zone().values


def test_inverse_anti_affinity_schrodinger_records_all_possible_domains():
    anti = make_pod("anti", pod_anti_affinity=[pod_affinity_term({"security": "s2"}, LABEL_ZONE)])
    target = make_pod("target", labels={"security": "s2"})
    topo = _topology([anti, target])
    # the anti-affinity pod lands on a claim that could still be zone 1 or 2
    assert Claim(topo, Requirement(LABEL_ZONE, "In", ["test-zone-1", "test-zone-2"])).try_add(anti) is None
    inv = topo.inverse_groups()[0]
    assert inv.domains == {"test-zone-1": 1, "test-zone-2": 1, "test-zone-3": 0}
    c = Claim(topo)
    assert c.try_add(target) is None
    assert c.zone().sorted_values() == ["test-zone-3"]


def test_inverse_anti_affinity_from_running_pods():
    node = make_node("n1", labels={LABEL_ZONE: "test-zone-2"})
    running = make_pod("running", node_name="n1", unschedulable=False, phase="Running",
                       pod_anti_affinity=[pod_affinity_term({"security": "s2"}, LABEL_ZONE)])
    target = make_pod("target", labels={"security": "s2"})
    cluster = ClusterState.from_objects(nodes=[node], pods=[running])
    topo = _topology([target], cluster=cluster)
    assert topo.inverse_groups()[0].domains["test-zone-2"] == 1
    assert Claim(topo, Requirement(LABEL_ZONE, "In", ["test-zone-2"])).try_add(target) is not None
    assert Claim(topo, Requirement(LABEL_ZONE, "In", ["test-zone-1"])).try_add(target) is None


def test_preferred_anti_affinity_not_inverse():
    node = make_node("n1", labels={LABEL_ZONE: "test-zone-2"})
    running = make_pod("running", node_name="n1", unschedulable=False, phase="Running",
                       pod_anti_affinity_preferences=[pod_affinity_term({"security": "s2"}, LABEL_ZONE)])
    target = make_pod("target", labels={"security": "s2"})
    topo = _topology([target], cluster=ClusterState.from_objects(nodes=[node], pods=[running]))
    assert topo.inverse_groups() == []
    assert Claim(topo, Requirement(LABEL_ZONE, "In", ["test-zone-2"])).try_add(target) is None


def test_register_and_unregister_domains():
    term = pod_affinity_term(LABELS, LABEL_HOSTNAME)
    pod = make_pod("p", labels=LABELS, pod_anti_affinity=[term])
    topo = _topology([pod])
    topo.register(LABEL_HOSTNAME, "h1")
    g = _group(topo, LABEL_HOSTNAME, TopologyType.POD_ANTI_AFFINITY)
    assert g.domains["h1"] == 0 and "h1" in g.empty_domains
    assert topo.inverse_groups()[0].domains["h1"] == 0
    topo.unregister(LABEL_HOSTNAME, "h1")
    assert "h1" not in g.domains and "h1" not in g.empty_domains


def test_zone_constraints_helper():
    tsc = topology_spread(LABEL_ZONE, LABELS)
    pod = make_pod("p", labels=LABELS, topology_spread_constraints=[tsc])
    topo = _topology([pod])
    _group(topo, LABEL_ZONE).record("test-zone-1")
    zones, ok = topo.get_topology_zone_constraints(pod, strict_pod_requirements(pod))
    assert ok and zones == {"test-zone-2", "test-zone-3"}


def test_pretty_map_truncates():
    assert pretty_map({"b": 1, "a": 2}, 25) == "a: 2, b: 1"
    assert pretty_map({str(i): 0 for i in range(3)}, 2) == "0: 0, 1: 0 and 1 other(s)"


# --- group reuse (Topology looks a group up by its hash before building it) ---------------------
def _group_state(groups):
    return {k: (g.key, g.type, g.namespaces, g.max_skew, g.min_domains, dict(g.domains), set(g.empty_domains),
                set(g.owners), g.selector.checks, g.list_selector.kind, g.node_filter.hash_key)
            for k, g in groups.items()}


def test_reused_groups_equal_freshly_built_ones(monkeypatch):
    """The hash lookup before building a group gives the same groups as building every group and
    letting update keep the first one under each hash (the plain, upstream path)."""
    import itertools

    import karpy.provisioning.topology as topology_mod

    def pods():
        spread = [topology_spread(LABEL_ZONE, LABELS, min_domains=2), topology_spread(LABEL_HOSTNAME, LABELS, 2)]
        term = pod_affinity_term(LABELS)
        other = pod_affinity_term({"app": "b"}, LABEL_ZONE)
        out = [make_pod(f"s{i}", labels=LABELS, topology_spread_constraints=spread) for i in range(4)]
        out += [make_pod(f"a{i}", labels=LABELS, pod_anti_affinity=[term], pod_affinity=[other]) for i in range(3)]
        out += [make_pod("t", labels=LABELS, topology_spread_constraints=[topology_spread(LABEL_ZONE, LABELS)] * 2,
                         tolerations=[{"operator": "Exists"}])]
        return out

    fast = _topology(pods())
    for p in pods()[:3]:
        fast.update(p)
    unique = itertools.count()
    monkeypatch.setattr(topology_mod, "group_hash", lambda *a: ("never-held", next(unique)))
    plain = _topology(pods())
    for p in pods()[:3]:
        plain.update(p)
    assert _group_state(fast.topology_groups) == _group_state(plain.topology_groups)
    assert _group_state(fast.inverse_topology_groups) == _group_state(plain.inverse_topology_groups)
    assert len(fast.topology_groups) == 5  # zone, hostname, affinity, t's zone (its tolerations), anti
