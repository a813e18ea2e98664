"""Unit tests for queue.go, preferences.go, batcher.go, statenode.go and nodeclaim.go error texts."""

from __future__ import annotations

from datetime import datetime, timezone

from karpy.api.builders import make_node, make_nodepool, make_pod, pod_affinity_term, topology_spread
from karpy.api.nodeclaim import NodeClaim
from karpy.api.pod import NodeSelectorRequirement, NodeSelectorTerm, Taint
from karpy.cloudprovider import fake
from karpy.provisioning.batcher import Batcher
from karpy.provisioning.nodeclaim import InstanceTypeFilterError, resources_string
from karpy.provisioning.preferences import Preferences
from karpy.provisioning.provisioner import Provisioner, order_by_weight
from karpy.provisioning.queue import Queue, sort_key
from karpy.scheduling.requirements import Requirements
from karpy.scheduling.resources import pod_requests
from karpy.sim.clock import VirtualClock
from karpy.state.cluster import ClusterState, StateNode
from karpy.utils.pod import is_provisionable

ZONE = "topology.kubernetes.io/zone"


# --- queue.go -----------------------------------------------------------------------------
def test_queue_order_cpu_memory_time_uid():
    # upstream: queue.go byCPUAndMemoryDescending
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    t1 = datetime(2024, 1, 2, tzinfo=timezone.utc)
    pods = [make_pod("a", requests={"cpu": "1"}, creation_timestamp=t1, uid="b"),
            make_pod("b", requests={"cpu": "2"}),
            make_pod("c", requests={"cpu": "1", "memory": "1Gi"}),
            make_pod("d", requests={"cpu": "1"}, creation_timestamp=t0, uid="z"),
            make_pod("e", requests={"cpu": "1"}, creation_timestamp=t1, uid="a")]
    q = Queue(pods, {id(p): sort_key(p, pod_requests(p)) for p in pods})
    assert [p.metadata.name for p in q.list()] == ["b", "c", "d", "e", "a"]


def test_queue_stops_after_full_cycle():
    # upstream: queue.go Pop/Push lastLen
    pods = [make_pod(f"p{i}") for i in range(3)]
    q = Queue(pods, {id(p): sort_key(p, pod_requests(p)) for p in pods})
    popped = []
    while (p := q.pop()) is not None:
        popped.append(p.metadata.name)
        q.push(p)
    assert popped == ["p0", "p1", "p2"]


def test_queue_progress_continues():
    pods = [make_pod(f"p{i}") for i in range(2)]
    q = Queue(pods, {id(p): sort_key(p, pod_requests(p)) for p in pods})
    a = q.pop()
    q.push(a)
    assert q.pop().metadata.name == "p1"  # p1 scheduled: not pushed
    assert q.pop().metadata.name == "p0"  # queue length changed since p0's push -> retried
    q.push(a)
    assert q.pop() is None


# --- preferences.go -----------------------------------------------------------------------
def _terms(*zones):
    return [NodeSelectorTerm(match_expressions=[NodeSelectorRequirement(key=ZONE, operator="In", values=[z])]) for z in zones]


def test_relax_required_terms_first_never_last():
    # upstream: preferences.go removeRequiredNodeAffinityTerm
    p = make_pod("p", node_requirements=[(ZONE, "In", ["a"])], node_preferences=[(ZONE, "In", ["c"])])
    p.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms = _terms("a", "b")
    prefs = Preferences()
    assert prefs.relax(p).startswith("removing: spec.affinity.nodeAffinity.requiredDuringScheduling")
    req = p.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
    assert [t.match_expressions[0].values for t in req.node_selector_terms] == [["b"]]
    assert prefs.relax(p).startswith("removing: spec.affinity.nodeAffinity.preferredDuringScheduling")
    assert prefs.relax(p) is None
    assert len(req.node_selector_terms) == 1


def test_relax_order_pod_affinity_before_node_preferences():
    # upstream: preferences.go Relax order
    p = make_pod("p", node_preferences=[(ZONE, "In", ["a"])],
                 pod_affinity_preferences=[(1, pod_affinity_term({"a": "b"}))],
                 pod_anti_affinity_preferences=[(5, pod_affinity_term({"a": "b"})), (10, pod_affinity_term({"c": "d"}))],
                 topology_spread_constraints=[topology_spread(ZONE, {"a": "b"}, when_unsatisfiable="ScheduleAnyway"),
                                              topology_spread(ZONE, {"x": "y"})])
    prefs = Preferences(tolerate_prefer_no_schedule=True)
    reasons = []
    while (r := prefs.relax(p)) is not None:
        reasons.append(r.split("=")[0].split("[")[0])
    assert reasons == [
        "removing: spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution",
        "removing: spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution",
        "removing: spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution",
        "removing: spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution",
        "removing: spec.topologySpreadConstraints",
        "adding: toleration for PreferNoSchedule taints",
    ]
    assert [t.when_unsatisfiable for t in p.spec.topology_spread_constraints] == ["DoNotSchedule"]


def test_relax_heaviest_anti_affinity_first():
    p = make_pod("p", pod_anti_affinity_preferences=[(5, pod_affinity_term({"w": "5"})), (10, pod_affinity_term({"w": "10"}))])
    Preferences().relax(p)
    rest = p.spec.affinity.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution
    assert [t.weight for t in rest] == [5]


def test_schedule_anyway_swap_remove():
    # upstream: preferences.go removeTopologySpreadScheduleAnyway swaps with the last and truncates
    tscs = [topology_spread(ZONE, {"k": "1"}, when_unsatisfiable="ScheduleAnyway"),
            topology_spread(ZONE, {"k": "2"}), topology_spread(ZONE, {"k": "3"})]
    p = make_pod("p", topology_spread_constraints=tscs)
    Preferences().relax(p)
    assert [t.label_selector.match_labels["k"] for t in p.spec.topology_spread_constraints] == ["3", "2"]


def test_pns_toleration_not_duplicated():
    p = make_pod("p", tolerations=[{"operator": "Exists", "effect": "PreferNoSchedule"}])
    assert Preferences(True).relax(p) is None


# --- batcher.go ---------------------------------------------------------------------------
def test_batcher_idle():
    # upstream: P:119 "should provision single pod if no other pod is received within the batch idle duration"
    c = VirtualClock()
    b = Batcher(c)
    b.trigger("a")
    assert b.deadline() == 1.0
    assert not b.ready(0.5) and b.ready(1.0)


def test_batcher_same_uid_does_not_extend():
    # upstream: P:137 "should not extend the timeout if we receive the same pod within the batch idle duration"
    c = VirtualClock()
    b = Batcher(c)
    b.trigger("a")
    c.advance(0.5)
    assert b.trigger("a") is False
    assert b.deadline() == 1.0


def test_batcher_new_uid_extends_up_to_max():
    # upstream: P:177 "should extend the timeout if we receive a new pod within the batch idle duration"
    c = VirtualClock()
    b = Batcher(c)
    for i in range(30):
        b.trigger(f"p{i}")
        c.advance(0.5)
    assert b.deadline() == 10.0
    assert b.ready() and len(b) == 0 and b.deadline() is None


# --- IsProvisionable / validation -----------------------------------------------------------
def test_is_provisionable():
    # upstream: pkg/utils/pod/scheduling.go IsProvisionable
    assert is_provisionable(make_pod("p"))
    assert not is_provisionable(make_pod("p", unschedulable=False))
    assert not is_provisionable(make_pod("p", node_name="n"))
    assert not is_provisionable(make_pod("p", nominated_node_name="n"))
    assert not is_provisionable(make_pod("p", owner_references=[{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "d"}]))
    assert not is_provisionable(make_pod("p", owner_references=[{"apiVersion": "v1", "kind": "Node", "name": "n"}]))
    p = make_pod("p", phase="Failed")
    p.status.conditions[0].status = "True"
    assert is_provisionable(p)  # status and phase are not checked


def test_is_provisionable_answers_as_upstreams_order_on_every_combination():
    """is_provisionable tests spec.nodeName before the conditions (cheapest first); upstream's
    order (scheduling.go IsProvisionable) must give the same answer on all 32 combinations."""
    import itertools

    from karpy.utils import pod as podutils

    def upstream_order(pod):
        return (podutils.failed_to_schedule(pod) and not podutils.is_scheduled(pod)
                and not podutils.is_preempting(pod) and not podutils.is_owned_by_daemonset(pod)
                and not podutils.is_owned_by_node(pod))

    answers = []
    for unsched, bound, nominated, ds, node_owned in itertools.product((True, False), repeat=5):
        owners = ([{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "d"}] if ds else []) + \
                 ([{"apiVersion": "v1", "kind": "Node", "name": "n"}] if node_owned else [])
        pod = make_pod("p", unschedulable=unsched, node_name="n" if bound else None,
                       nominated_node_name="n" if nominated else None, owner_references=owners)
        answers.append(is_provisionable(pod))
        assert answers[-1] == upstream_order(pod)
    assert answers.count(True) == 1  # only the unschedulable, unbound, unowned, not nominated pod


def test_validate_nodepool_does_not_exist():
    # upstream: provisioner.go validateKarpenterManagedLabelCanExist
    pr = Provisioner(fake.FakeCloudProvider())
    p = make_pod("p", node_requirements=[("karpenter.sh/nodepool", "DoesNotExist", [])])
    assert pr.validate(p).startswith("configured to not run on a Karpenter provisioned node")


def test_validate_match_fields():
    pr = Provisioner(fake.FakeCloudProvider())
    p = make_pod("p", node_requirements=[(ZONE, "In", ["a"])])
    term = p.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms[0]
    term.match_fields = [NodeSelectorRequirement(key="metadata.name", operator="In", values=["x"])]
    assert "node selector term with matchFields is not supported" in pr.validate(p)


def test_order_by_weight():
    pools = [make_nodepool("a"), make_nodepool("c"), make_nodepool("b", weight=10), make_nodepool("d", weight=10)]
    assert [p.metadata.name for p in order_by_weight(pools)] == ["d", "b", "c", "a"]


# --- statenode.go ---------------------------------------------------------------------------
def _nodeclaim(name, startup=()):
    return NodeClaim.model_validate({"metadata": {"name": name, "labels": {"karpenter.sh/nodepool": "default"}},
                                     "spec": {"startupTaints": list(startup)},
                                     "status": {"providerID": f"fake:///{name}", "capacity": {"cpu": "4", "pods": "5"},
                                                "allocatable": {"cpu": "3900m", "pods": "5"}}})


def test_statenode_inflight_claim():
    nc = _nodeclaim("nc")
    sn = StateNode(nodeclaim=nc)
    assert sn.name == "nc" and sn.managed() and not sn.initialized() and not sn.registered()
    assert sn.capacity()["nodes"] == 1_000_000_000
    assert sn.allocatable()["cpu"] == 3_900_000_000
    assert sn.hostname() == "nc"


def test_statenode_taints_uninitialized_filtered():
    # upstream: statenode.go Taints (ephemeral + startup taints dropped until initialized)
    nc = _nodeclaim("nc", startup=[{"key": "foo", "effect": "NoSchedule"}])
    node = make_node("n", labels={"karpenter.sh/registered": "true"}, capacity={"cpu": "4"}, provider_id="fake:///nc",
                     taints=[{"key": "foo", "effect": "NoSchedule"}, {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"},
                             {"key": "bar", "effect": "NoSchedule"}])
    cs = ClusterState.from_objects([node], [nc])
    sn = cs.nodes[0]
    assert sn.name == "n"
    assert [t.key for t in sn.taints()] == ["bar"]
    node.metadata.labels["karpenter.sh/initialized"] = "true"
    assert [t.key for t in sn.taints()] == ["foo", "node.kubernetes.io/not-ready", "bar"]


def test_cluster_state_usage_and_bindings():
    node = make_node("n", labels={"karpenter.sh/nodepool": "default"}, capacity={"cpu": "4", "memory": "4Gi"})
    p = make_pod("p", requests={"cpu": "1"}, node_name="n", unschedulable=False)
    ds = make_pod("ds", requests={"cpu": "500m"}, node_name="n", unschedulable=False,
                  owner_references=[{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "d"}])
    cs = ClusterState.from_objects([node], [], [p, ds])
    sn = cs.node_for_pod(p)
    assert sn is cs.nodes[0]
    assert sn.pod_requests()["cpu"] == 1_500_000_000
    assert sn.daemonset_requests()["cpu"] == 500_000_000
    assert sn.available()["cpu"] == 2_500_000_000
    assert cs.nodepool_usage("default") == {"cpu": 4_000_000_000, "memory": 4 * (1 << 30) * 1_000_000_000,
                                            "nodes": 1_000_000_000}


def test_pods_with_anti_affinity():
    node = make_node("n", capacity={"cpu": "4"})
    a = make_pod("a", node_name="n", unschedulable=False, pod_anti_affinity=[pod_affinity_term({"x": "y"})])
    b = make_pod("b", node_name="n", unschedulable=False)
    c = make_pod("c", pod_anti_affinity=[pod_affinity_term({"x": "y"})])
    cs = ClusterState.from_objects([node], [], [a, b, c])
    assert [p.key for p, _ in cs.pods_with_anti_affinity()] == ["default/a"]


# --- nodeclaim.go InstanceTypeFilterError ---------------------------------------------------
def _err(r, f, o, rf=False, ro=False, fo=False, cpu=1_000_000_000):
    e = InstanceTypeFilterError(Requirements(), {"cpu": cpu, "pods": 1_000_000_000})
    e.requirements_met, e.fits, e.has_offering = r, f, o
    e.requirements_and_fits, e.requirements_and_offering, e.fits_and_offering = rf, ro, fo
    return str(e)


def test_filter_error_messages_order():
    # upstream: nodeclaim.go InstanceTypeFilterError.Error (:488-538)
    tail = ', requirements=, resources={"cpu":"1","pods":"1"}'
    assert _err(False, False, False) == "no instance type met the scheduling requirements or had enough resources or had a required offering" + tail
    assert _err(False, False, True) == "no instance type met the scheduling requirements or had enough resources" + tail
    assert _err(False, True, False) == "no instance type met the scheduling requirements or had a required offering" + tail
    assert _err(True, False, False) == "no instance type had enough resources or had a required offering" + tail
    assert _err(False, True, True) == "no instance type met all requirements" + tail
    assert _err(True, False, True) == "no instance type has enough resources" + tail
    assert _err(True, True, False) == "no instance type has the required offering" + tail
    assert _err(True, True, True, rf=True) == "no instance type which met the scheduling requirements and had enough resources, had a required offering" + tail
    assert _err(True, True, True, fo=True) == "no instance type which had enough resources and the required offering met the scheduling requirements" + tail
    assert _err(True, True, True, ro=True) == "no instance type which met the scheduling requirements and the required offering had the required resources" + tail
    assert _err(True, True, True) == "no instance type met the requirements/resources/offering tuple" + tail
    assert _err(True, False, True, cpu=10**15 * 1_000_000_000).endswith(" (CPU request >= 1 Million, m vs M typo?)")


def test_resources_string():
    assert resources_string({}) == "{}"
    assert resources_string({"memory": 1 << 30 * 1, "cpu": 500_000_000}) .startswith('{"cpu":"500m"')


def test_scheduler_error_includes_requirements():
    # upstream: nodeclaim.go:488 message ends with requirements=<reqs.String()>, resources=<res>
    from tests.provisioning.harness import expect_provisioned
    p = make_pod("p", requests={"cpu": "512"})
    h, res = expect_provisioned([p], [make_nodepool()])
    err = res.errors[p.key]
    assert err.startswith("no instance type has enough resources, requirements=")
    assert 'resources={"cpu":"512","pods":"1"}' in err
    assert "kubernetes.io/hostname" not in err


def test_hostname_placeholders_per_scheduler():
    # upstream: nodeclaim.go hostname-placeholder-%04d (a per-Scheduler counter here)
    from tests.provisioning.harness import expect_provisioned
    for _ in range(2):
        pods = [make_pod(f"p{i}", labels={"a": "b"}, pod_anti_affinity=[pod_affinity_term({"a": "b"})]) for i in range(2)]
        h, res = expect_provisioned(pods, [make_nodepool()])
        sched = h.provisioner.last_scheduler
        assert [nc.hostname for nc in sched.new_nodeclaims] == ["hostname-placeholder-0001", "hostname-placeholder-0002"]
