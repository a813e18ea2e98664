"""Ported PodTopologySpread score, InterPodAffinity, preemption node-picking and queue-timing cases."""

import math

import pytest

from karpy.api.builders import make_node, make_pod, pod_affinity_term, topology_spread
from karpy.api.meta import LabelSelector
from karpy.kubescheduler.framework import Framework
from karpy.kubescheduler.plugins import PodTopologySpread
from karpy.kubescheduler.plugins.interpodaffinity import InterPodAffinity
from karpy.kubescheduler.podinfo import new_pod_info
from karpy.kubescheduler.preemption import Candidate, pick_one_node_for_preemption
from karpy.kubescheduler.queue import PriorityQueue, QueuedPodInfo
from karpy.kubescheduler.types import Code

from ._helpers import infos, node, pod, run_filter, run_score
from .conftest import FakeClock

H = "kubernetes.io/hostname"
FOO = LabelSelector.model_validate({"matchExpressions": [{"key": "foo", "operator": "Exists"}]})
BAR = LabelSelector.model_validate({"matchExpressions": [{"key": "bar", "operator": "Exists"}]})


def _spread(key, sel, skew=1, when="ScheduleAnyway"):
    return topology_spread(key, None, skew, when, label_selector=sel)


def _pods(spec):
    """"a:2,b:1" -> pods p-a1, p-a2, p-b1 with label foo on node-a/node-b."""
    out = []
    for part in spec.split(","):
        n, c = part.split(":")
        out += [pod(f"p-{n}{i}", labels={"foo": ""}, node_name=f"node-{n}") for i in range(int(c))]
    return out


def _hn(*names, zones=None):
    return [node(f"node-{n}", labels={"zone": zones[i]} if zones else None) for i, n in enumerate(names)]


# upstream: podtopologyspread/scoring_test.go TestPodTopologySpreadScore
@pytest.mark.parametrize("name,constraints,existing,feasible,failed,want", [
    ("one constraint on node, no existing pods", [(H, FOO, 1)], "", ["a", "b"], [], [100, 100]),
    ("one constraint on node, only one node is candidate", [(H, FOO, 1)], "a:2,b:1", ["a"], ["b"], [100]),
    ("one constraint on node, all nodes have the same number of matching pods", [(H, FOO, 1)], "a:1,b:1", ["a", "b"],
     [], [100, 100]),
    ("one constraint on node, all 4 nodes are candidates", [(H, FOO, 1)], "a:2,b:1,d:3", ["a", "b", "c", "d"], [],
     [20, 60, 100, 0]),
    ("one constraint on node, all 4 nodes are candidates, maxSkew=2", [(H, FOO, 2)], "a:2,b:1,d:3",
     ["a", "b", "c", "d"], [], [33, 66, 100, 16]),
    ("one constraint on node, all 4 nodes are candidates, maxSkew=3", [(H, FOO, 3)], "a:4,b:3,c:2,d:1",
     ["a", "b", "c", "d"], [], [44, 66, 77, 100]),
    ("one constraint on node, 3 out of 4 nodes are candidates", [(H, FOO, 1)], "a:4,b:2,x:1,y:3", ["a", "b", "x"],
     ["y"], [33, 83, 100]),
])
def test_pod_topology_spread_score(name, constraints, existing, feasible, failed, want):
    p = pod("p", labels={"foo": ""}, topology_spread_constraints=[_spread(k, s, m) for k, s, m in constraints])
    nodes = infos(_hn(*feasible, *failed), _pods(existing) if existing else [])
    assert run_score(PodTopologySpread(), p, nodes[:len(feasible)], nodes) == want


def test_pod_topology_spread_score_node_missing_topology_key_is_ignored():
    # upstream: scoring_test.go "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match
    # topology key"
    ns = [node("node-a"), node("node-b", labels={"n": "node-b"}, hostname=False), node("node-x"), node("node-y")]
    nodes = infos(ns, _pods("a:4,b:2,x:1,y:3"))
    p = pod("p", labels={"foo": ""}, topology_spread_constraints=[_spread(H, FOO)])
    assert run_score(PodTopologySpread(), p, nodes[:3], nodes) == [16, 0, 100]


def test_pod_topology_spread_score_zone_constraint():
    # upstream: scoring_test.go "one constraint on zone, 3 out of 4 nodes are candidates"
    nodes = infos(_hn("a", "b", "x", "y", zones=["zone1", "zone1", "zone2", "zone2"]), _pods("a:4,b:2,x:1,y:3"))
    p = pod("p", labels={"foo": ""}, topology_spread_constraints=[_spread("zone", FOO)])
    assert run_score(PodTopologySpread(), p, nodes[:3], nodes) == [75, 75, 100]


def test_pod_topology_spread_score_two_constraints_different_selectors():
    # upstream: scoring_test.go "two Constraints on zone and node, with different labelSelectors"
    ns = _hn("a", "b", "x", "y", zones=["zone1", "zone1", "zone2", "zone2"])
    existing = [pod("p-a1", labels={"foo": ""}, node_name="node-a"),
                pod("p-b1", labels={"foo": "", "bar": ""}, node_name="node-b"),
                pod("p-y1", labels={"foo": ""}, node_name="node-y"), pod("p-y2", labels={"bar": ""}, node_name="node-y")]
    nodes = infos(ns, existing)
    p = pod("p", labels={"foo": "", "bar": ""}, topology_spread_constraints=[_spread("zone", FOO), _spread(H, BAR)])
    assert run_score(PodTopologySpread(), p, nodes, nodes) == [60, 20, 100, 60]


def test_pod_topology_spread_score_system_defaulting():
    # upstream: scoring_test.go "system defaulting, nodes don't have zone, pods match service"
    # (default constraints hostname/3 + zone/5 with the Service selector foo; only scoring)
    sel = LabelSelector(match_labels={"foo": ""})
    nodes = infos(_hn("a", "b", "c", "d"), _pods("a:4,b:3,c:2,d:1"))
    pl = PodTopologySpread(default_selector=lambda _pod: sel)
    assert run_score(pl, pod("p", labels={"foo": ""}), nodes, nodes) == [44, 66, 77, 100]
    # a bare pod (no Service/controller selector) gets no default constraints: PreScore skips
    assert run_score(PodTopologySpread(default_selector=lambda _pod: None), pod("p"), nodes, nodes) == "skip"
    assert run_filter(pl, pod("p", labels={"foo": ""}), nodes).is_success()  # defaults never filter


# upstream: podtopologyspread/filtering_test.go TestSingleConstraint
@pytest.mark.parametrize("name,existing,zones,skew,want", [
    ("pods spread across zones as 3/3, all nodes fit", "a:1,b:2,x:2,y:1", ["zone1", "zone1", "zone2", "zone2"], 1,
     [True, True, True, True]),
    ("pods spread across zones as 2/1 (zone1 heavier), zone1 nodes fail", "a:1,b:1,x:1",
     ["zone1", "zone1", "zone2", "zone2"], 1, [False, False, True, True]),
    ("pods spread across zones as 2/1 with maxSkew 2, all nodes fit", "a:1,b:1,x:1",
     ["zone1", "zone1", "zone2", "zone2"], 2, [True, True, True, True]),
])
def test_pod_topology_spread_filter(name, existing, zones, skew, want):
    nodes = infos(_hn("a", "b", "x", "y", zones=zones), _pods(existing))
    p = pod("p", labels={"foo": ""},
            topology_spread_constraints=[_spread("zone", FOO, skew, "DoNotSchedule")])
    got = [run_filter(PodTopologySpread(), p, nodes, n).is_success() for n in nodes]
    assert got == want


def test_pod_topology_spread_filter_min_domains():
    # upstream: filtering_test.go "pods spread across zones as 1/1, minDomains 3 forces the global min to 0"
    nodes = infos(_hn("a", "x", zones=["zone1", "zone2"]), _pods("a:1,x:1"))
    c = _spread("zone", FOO, 1, "DoNotSchedule")
    c.min_domains = 3
    p = pod("p", labels={"foo": ""}, topology_spread_constraints=[c])
    st = run_filter(PodTopologySpread(), p, nodes, nodes[0])
    assert (st.code, st.reasons) == (Code.UNSCHEDULABLE, ["node(s) didn't match pod topology spread constraints"])


# ---- InterPodAffinity ------------------------------------------------------------------------------------------
SEC = {"security": "S1"}


# upstream: interpodaffinity/filtering_test.go TestRequiredAffinitySingleNode
@pytest.mark.parametrize("name,incoming,existing_labels,existing_anti,code,reason", [
    ("A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
     {}, None, None, None, None),
    ("satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the "
     "existing pod", {"pod_affinity": [pod_affinity_term(SEC, "region")]}, SEC, None, None, None),
    ("Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
     {"pod_affinity": [pod_affinity_term(SEC, "region", namespaces=["DiffNameSpace"])]}, SEC, None,
     Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't match pod affinity rules"),
    ("Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
     {"pod_affinity": [pod_affinity_term({"security": "S2"}, "region")]}, SEC, None,
     Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't match pod affinity rules"),
    ("satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
     {"labels": SEC, "pod_anti_affinity": [pod_affinity_term({"security": "S2"}, "zone")]}, SEC,
     [pod_affinity_term(SEC, "zone")], Code.UNSCHEDULABLE, "node(s) didn't satisfy existing pods anti-affinity rules"),
    ("PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
     {"labels": SEC, "pod_anti_affinity": [pod_affinity_term(SEC, "zone")]}, SEC, None, Code.UNSCHEDULABLE,
     "node(s) didn't match pod anti-affinity rules"),
    ("verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't "
     "satisfy PodAntiAffinity symmetry with the existing pod", {"labels": SEC}, {"foo": "bar"},
     [pod_affinity_term(SEC, "zone")], Code.UNSCHEDULABLE, "node(s) didn't satisfy existing pods anti-affinity rules"),
    ("Does not satisfy the PodAffinity because the node lacks the topology key",
     {"pod_affinity": [pod_affinity_term(SEC, "nonexistent")]}, SEC, None, Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
     "node(s) didn't match pod affinity rules"),
])
def test_inter_pod_affinity_filter(name, incoming, existing_labels, existing_anti, code, reason):
    n = node("node1", labels={"region": "r1", "zone": "z11"})
    existing = [] if existing_labels is None else [
        make_pod("e", labels=existing_labels, node_name="node1", pod_anti_affinity=existing_anti)]
    st = run_filter(InterPodAffinity(), make_pod("p", **incoming), infos([n], existing))
    if code is None:
        assert st.is_success()
    else:
        assert (st.code, st.reasons) == (code, [reason])


def test_inter_pod_affinity_first_pod_of_series_needs_self_match():
    # upstream: filtering_test.go "Verify that an incoming pod that has affinity to itself and no other pods match can
    # schedule" vs a pod whose affinity does not match itself (fails)
    n = infos([node("node1", labels={"region": "r1"})])
    own = make_pod("p", labels=SEC, pod_affinity=[pod_affinity_term(SEC, "region")])
    assert run_filter(InterPodAffinity(), own, n).is_success()
    other = make_pod("p", labels={"x": "y"}, pod_affinity=[pod_affinity_term(SEC, "region")])
    assert not run_filter(InterPodAffinity(), other, n).is_success()


# upstream: interpodaffinity/scoring_test.go TestPreferredAffinity
def test_inter_pod_affinity_score_preferred():
    # "Affinity: pod that matches topology key & pods in nodes will get high score comparing to others which doesn't
    # match either pods in nodes or in topology key"
    ns = [node("node1", labels={"region": "China"}), node("node2", labels={"region": "India"}),
          node("node3", labels={"az": "az1"})]
    existing = [make_pod("e1", labels=SEC, node_name="node1"), make_pod("e2", labels={"security": "S2"},
                                                                      node_name="node2"),
                make_pod("e3", labels=SEC, node_name="node3")]
    p = make_pod("p", pod_affinity_preferences=[(5, pod_affinity_term(SEC, "region"))])
    nodes = infos(ns, existing)
    assert run_score(InterPodAffinity(), p, nodes) == [100, 0, 0]
    # anti-affinity preference reverses it
    p = make_pod("p", pod_anti_affinity_preferences=[(5, pod_affinity_term(SEC, "region"))])
    assert run_score(InterPodAffinity(), p, nodes) == [0, 100, 100]
    # no terms anywhere: PreScore skips (contributes 0)
    assert run_score(InterPodAffinity(), make_pod("p"), nodes) == "skip"


def test_inter_pod_affinity_score_existing_required_affinity_hard_weight():
    # upstream: scoring_test.go "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod
    # affinity symmetry" (hardPodAffinityWeight 1)
    ns = [node("node1", labels={"region": "China"}), node("node2", labels={"region": "India"})]
    existing = [make_pod("e1", node_name="node1", pod_affinity=[pod_affinity_term(SEC, "region")])]
    nodes = infos(ns, existing)
    assert run_score(InterPodAffinity(), make_pod("p", labels=SEC), nodes) == [100, 0]
    assert run_score(InterPodAffinity(hard_pod_affinity_weight=0), make_pod("p", labels=SEC), nodes) == "skip"


# ---- preemption ------------------------------------------------------------------------------------------------
def _v(name, prio, start=None):
    p = make_pod(name, priority=prio)
    p.status.start_time = start
    return new_pod_info(p)


# upstream: pkg/scheduler/framework/preemption/preemption_test.go TestPickOneNodeForPreemption (criteria 1-6)
@pytest.mark.parametrize("name,cands,want", [
    ("No node needs preemption", [("n1", [], 0), ("n2", [("a", 1)], 0)], "n1"),
    ("fewest PDB violations first", [("n1", [("a", 1)], 1), ("n2", [("b", 10)], 0)], "n2"),
    ("a pod that fits on both nodes when lower priority pods are preempted: lowest highest-priority victim",
     [("n1", [("a", 5)], 0), ("n2", [("b", 1)], 0)], "n2"),
    ("a pod that fits on a machine with no preemption (smallest sum of priorities)",
     [("n1", [("a", 5), ("b", 5)], 0), ("n2", [("c", 5), ("d", -3)], 0)], "n2"),
    # sum adds MaxInt32+1 per victim, so fewer victims wins even with a higher plain priority sum
    ("mixed priority pods are preempted, pick the one with fewer pods",
     [("n1", [("a", 5), ("b", 1), ("c", 1)], 0), ("n2", [("d", 5), ("e", 2)], 0)], "n2"),
    ("same priorities and counts: fewest victims", [("n1", [("a", 5), ("b", 1)], 0), ("n2", [("c", 5)], 0)], "n2"),
    ("mixed priority pods are preempted, pick the one with the latest start time",
     [("n1", [("a", 5, 100.0), ("b", 1, 50.0)], 0), ("n2", [("c", 5, 200.0), ("d", 1, 10.0)], 0)], "n2"),
    ("all tie: first candidate", [("n1", [("a", 5, 10.0)], 0), ("n2", [("b", 5, 10.0)], 0)], "n1"),
])
def test_pick_one_node_for_preemption(name, cands, want):
    cs = [Candidate(n, [_v(*v) for v in vs], pdb) for n, vs, pdb in cands]
    assert pick_one_node_for_preemption(cs, 1000.0).node == want


def test_preemption_minimal_victims_and_pdb_reprieve():
    # upstream: defaultpreemption/default_preemption_test.go TestSelectNodesForPreemption "a pod that would fit on the
    # machines, but other pods running are higher priority, no preemption would happen" is out of scope; this is
    # "mixed priority pods are preempted" + "pod with PDB violation is reprieved first": only as many victims as needed,
    # most important reprieved first, the PDB-protected victim reprieved before others.
    import random

    from karpy.kubescheduler import KubeScheduler
    from karpy.api.poddisruptionbudget import PodDisruptionBudget
    s = KubeScheduler(FakeClock(), random.Random(0))
    s.add_node(make_node("n", capacity={"cpu": "3", "pods": "10"}))
    s.add_pod(make_pod("lo1", requests={"cpu": "1"}, priority=1, node_name="n", labels={"app": "x"}))
    s.add_pod(make_pod("lo2", requests={"cpu": "1"}, priority=2, node_name="n"))
    s.add_pod(make_pod("lo3", requests={"cpu": "1"}, priority=1, node_name="n"))
    s.add_pdb(PodDisruptionBudget.model_validate({"metadata": {"name": "b"}, "spec": {
        "selector": {"matchLabels": {"app": "x"}}, "maxUnavailable": 0}}))
    s.add_pod(make_pod("hi", requests={"cpu": "1"}, priority=10))
    r = s.schedule_one()
    assert r.outcome == "Nominated" and [v.key for v in r.victims] == ["default/lo3"]


# ---- queue ------------------------------------------------------------------------------------------------------
def _q(clock):
    return PriorityQueue(Framework([], {}), clock)


# upstream: backend/queue/backoff_queue_test.go TestBackoffQueue_calculateBackoffDuration (1 s doubling to 10 s)
@pytest.mark.parametrize("count,want", [(0, 0), (1, 1), (2, 2), (3, 4), (4, 8), (5, 10), (6, 10), (40, 10)])
def test_backoff_duration(count, want):
    q = _q(FakeClock())
    qp = QueuedPodInfo(new_pod_info(make_pod("p")), 0.0, 1, unschedulable_count=count)
    assert q.backoff_duration(qp) == want


# upstream: backoff_queue_test.go TestBackoffQueueOrdering (clock on a whole second T; pod1 expiring exactly at T is
# still backing off; same-window pods ordered like activeQ: priority desc, then timestamp)
def test_backoff_queue_ordering_and_exact_second_edge():
    T = 100.0
    clock = FakeClock(T)
    q = _q(clock)
    specs = [("pod0", 1, T), ("pod1", 1, T - 1), ("pod2", 2, T - 2 + 0.001), ("pod3", 1, T - 2), ("pod4", 2, T - 2),
             ("pod5", 1, T - 3)]
    for i, (name, prio, ts) in enumerate(specs):
        qp = QueuedPodInfo(new_pod_info(make_pod(name, priority=prio)), ts, i, unschedulable_count=1,
                           unschedulable_plugins={"plugin"})
        q._push_backoff(qp)
    order = []
    while q._backoff and q._backoff[0][0] < math.floor(T):
        order.append(q._backoff.pop(0)[-1].split("/")[1])
    assert order == ["pod5", "pod4", "pod2", "pod3"]


@pytest.mark.parametrize("fail_at,leaves_at", [(0.0, 2.0), (0.3, 2.0), (0.999, 2.0), (1.0, 3.0), (5.5, 7.0)])
def test_one_second_backoff_leaves_at_following_tick(fail_at, leaves_at):
    # upstream: backoff_queue.go isPodBackingoff = !expiry.Before(now.Truncate(1s)), expiry = (Timestamp+1s).Truncate(1s);
    # flushes run on whole seconds, so expiry == tick is still backing off and leaves one tick later.
    clock = FakeClock(fail_at)
    q = _q(clock)
    qp = QueuedPodInfo(new_pod_info(make_pod("p")), fail_at, 1, unschedulable_count=1, unschedulable_plugins={"x"})
    q._push_backoff(qp)
    assert q.next_event_time() == leaves_at
    q.run_flushes(leaves_at - 1.0)
    assert not q._active
    q.run_flushes(leaves_at)
    assert len(q._active) == 1


def test_gated_pod_stays_unschedulable_through_leftover_flush():
    # upstream: scheduling_queue_test.go TestPriorityQueue_flushUnschedulablePodsLeftover + schedulinggates: gated pods
    # are re-run through PreEnqueue and stay gated; they are never popped.
    import random

    from karpy.kubescheduler import KubeScheduler
    clock = FakeClock()
    s = KubeScheduler(clock, random.Random(0))
    s.add_node(make_node("n", capacity={"cpu": "1", "pods": "10"}))
    assert s.add_pod(make_pod("g", scheduling_gates=["gate"])) is False
    clock.t = 1000.0
    assert s.schedule_one() is None and s.gated_pods() == ["default/g"]


def test_fit_error_histogram_lexicographic_sort():
    # upstream: framework/types.go FitError.Error ("10 ..." sorts before "2 ...")
    import random

    from karpy.kubescheduler import KubeScheduler
    s = KubeScheduler(FakeClock(), random.Random(0))
    for i in range(10):
        s.add_node(make_node(f"a{i}", capacity={"cpu": "1", "pods": "10"}, labels={"zone": "x"}))
    for i in range(2):
        s.add_node(make_node(f"b{i}", capacity={"cpu": "1", "pods": "10"}, unschedulable=True))
    s.add_pod(make_pod("p", node_selector={"zone": "y"}))
    msg = s.schedule_one().condition["message"]
    assert msg == ("0/12 nodes are available: 10 node(s) didn't match Pod's node affinity/selector, "
                   "2 node(s) were unschedulable. preemption: 0/12 nodes are available: "
                   "12 Preemption is not helpful for scheduling.")


def test_gang_all_or_nothing_binds_when_quorum_fits():
    # reference §5.1 (schedule_one_podgroup.go): the group commits when placed >= minCount
    import random

    from karpy.api.podgroup import POD_GROUP_LABEL, PodGroup
    from karpy.kubescheduler import KubeScheduler
    s = KubeScheduler(FakeClock(), random.Random(0))
    s.add_node(make_node("n", capacity={"cpu": "3", "pods": "10"}))
    s.add_pod_group(PodGroup.model_validate({"metadata": {"name": "g"}, "spec": {"minMember": 3}}))
    for i in range(3):
        s.add_pod(make_pod(f"m{i}", labels={POD_GROUP_LABEL: "g"}, requests={"cpu": "1"}))
    r = s.schedule_one()
    assert r.outcome == "Bound" and sorted(m.outcome for m in r.members) == ["Bound"] * 3
    assert len(s.node_infos["n"].pods) == 3
