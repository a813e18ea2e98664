"""Ported plugin cases (each names its upstream test)."""

import random

from karpy.api.builders import make_node, make_pod
from karpy.kubescheduler.framework import CycleState, default_normalize_score
from karpy.kubescheduler.nodeinfo import NodeInfo
from karpy.kubescheduler.plugins import BalancedAllocation, NodeResourcesFit, PodTopologySpread, ScoringStrategy
from karpy.kubescheduler.plugins.interpodaffinity import InterPodAffinity
from karpy.kubescheduler.podinfo import new_pod_info
from karpy.kubescheduler.preemption import Candidate, pick_one_node_for_preemption
from karpy.kubescheduler.queue import PriorityQueue
from karpy.kubescheduler.schedule_one import num_feasible_nodes_to_find
from karpy.kubescheduler.types import Code

from .conftest import FakeClock


def _ni(name, cpu, mem, labels=None, pods=()):
    return NodeInfo.from_node(make_node(name, capacity={"cpu": cpu, "memory": mem, "pods": "110"}, labels=labels),
                              [new_pod_info(p) for p in pods])


def _two_container_pod():
    return make_pod("p", requests={"cpu": "3", "memory": "5000"})


def test_least_allocated_differently_sized_nodes():
    # upstream: noderesources/least_allocated_test.go "nothing scheduled, resources requested, differently sized nodes"
    pl = NodeResourcesFit()
    pod = new_pod_info(_two_container_pod())
    scores = [pl.score(CycleState(), pod, _ni("n1", "4", "10000")), pl.score(CycleState(), pod, _ni("n2", "6", "10000"))]
    assert scores == [37, 50]


def test_most_allocated_differently_sized_nodes():
    # upstream: noderesources/most_allocated_test.go "nothing scheduled, resources requested, differently sized nodes"
    pl = NodeResourcesFit(ScoringStrategy(type="MostAllocated"))
    pod = new_pod_info(_two_container_pod())
    scores = [pl.score(CycleState(), pod, _ni("n1", "4", "10000")), pl.score(CycleState(), pod, _ni("n2", "6", "10000"))]
    assert scores == [62, 50]


def test_balanced_allocation_differently_sized_nodes():
    # upstream: noderesources/balanced_allocation_test.go "nothing scheduled, resources requested, differently sized nodes"
    pl = BalancedAllocation()
    pod = new_pod_info(_two_container_pod())
    assert [pl.score(CycleState(), pod, _ni("n1", "4", "10000")), pl.score(CycleState(), pod, _ni("n2", "6", "10000"))] == [87, 100]


def test_balanced_allocation_best_effort_skips():
    # upstream: balanced_allocation_test.go PreScore "best-effort pod" -> Skip
    st = BalancedAllocation().pre_score(CycleState(), new_pod_info(make_pod("be")), [], [])
    assert st.code == Code.SKIP


def test_fit_filter_unresolvable_when_request_exceeds_allocatable():
    # upstream: noderesources/fit_test.go "request exceeds allocatable -> UnschedulableAndUnresolvable" (1.34+)
    pl = NodeResourcesFit()
    st = pl.filter(CycleState(), new_pod_info(make_pod("p", requests={"cpu": "5"})), _ni("n", "4", "10Gi"))
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and st.reasons == ["Insufficient cpu"]
    used = make_pod("u", requests={"cpu": "3"}, node_name="n")
    st = pl.filter(CycleState(), new_pod_info(make_pod("p", requests={"cpu": "2"})), _ni("n", "4", "10Gi", pods=[used]))
    assert st.code == Code.UNSCHEDULABLE


def test_taint_toleration_normalize_reverse():
    # upstream: tainttoleration/taint_toleration_test.go "the more intolerable taints a node has, the lower score"
    scores = [0, 1, 2]
    default_normalize_score(100, True, scores)
    assert scores == [100, 50, 0]
    zeros = [0, 0]
    default_normalize_score(100, True, zeros)
    assert zeros == [100, 100]


def test_pod_topology_spread_filter_max_skew():
    # upstream: podtopologyspread/filtering_test.go "pods spread across zones as 3/3, all nodes fit" style
    tsc = [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"foo": ""}}}]
    pod = new_pod_info(make_pod("p", labels={"foo": ""}, topology_spread_constraints=tsc))
    existing = [make_pod(f"e{i}", labels={"foo": ""}, node_name="a") for i in range(2)]
    nodes = [_ni("a", "4", "1Gi", {"zone": "z1"}, existing), _ni("b", "4", "1Gi", {"zone": "z2"}),
             _ni("c", "4", "1Gi", {})]
    pl = PodTopologySpread()
    state = CycleState()
    st, _ = pl.pre_filter(state, pod, nodes)
    assert st.is_success()
    assert pl.filter(state, pod, nodes[0]).code == Code.UNSCHEDULABLE  # 2+1-0 > 1
    assert pl.filter(state, pod, nodes[1]).is_success()
    miss = pl.filter(state, pod, nodes[2])
    assert miss.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert miss.reasons == ["node(s) didn't match pod topology spread constraints (missing required label)"]


def test_interpod_anti_affinity_and_first_pod_exception():
    # upstream: interpodaffinity/filtering_test.go "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution
    # in PodAffinity using In operator that matches the existing pod" / "...first pod of a series"
    term = {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}
    self_affine = new_pod_info(make_pod("p", labels={"app": "db"}, pod_affinity=[term]))
    nodes = [_ni("a", "4", "1Gi", {"zone": "z1"})]
    pl = InterPodAffinity()
    state = CycleState()
    pl.pre_filter(state, self_affine, nodes)
    assert pl.filter(state, self_affine, nodes[0]).is_success()  # no matching pod anywhere: allowed
    anti = new_pod_info(make_pod("q", labels={"app": "web"}, pod_anti_affinity=[term]))
    nodes = [_ni("a", "4", "1Gi", {"zone": "z1"}, [make_pod("db", labels={"app": "db"}, node_name="a")]),
             _ni("b", "4", "1Gi", {"zone": "z2"})]
    state = CycleState()
    pl.pre_filter(state, anti, nodes)
    st = pl.filter(state, anti, nodes[0])
    assert st.code == Code.UNSCHEDULABLE and st.reasons == ["node(s) didn't match pod anti-affinity rules"]
    assert pl.filter(state, anti, nodes[1]).is_success()


def test_pick_one_node_for_preemption_criteria():
    # upstream: preemption/preemption_test.go TestPickOneNodeForPreemption "a pod that fits on both nodes when
    # lower priority pods are preempted" / "fewest victims" criteria
    lo = new_pod_info(make_pod("lo", priority=1))
    mid = new_pod_info(make_pod("mid", priority=5))
    mid2 = new_pod_info(make_pod("mid2", priority=5))
    c = pick_one_node_for_preemption([Candidate("n1", [mid], 0), Candidate("n2", [lo], 0)], 0.0)
    assert c.node == "n2"  # lowest highest-priority victim
    c = pick_one_node_for_preemption([Candidate("n1", [mid, mid2], 0), Candidate("n2", [mid], 0)], 0.0)
    assert c.node == "n2"  # smaller priority sum
    c = pick_one_node_for_preemption([Candidate("n1", [lo], 1), Candidate("n2", [mid], 0)], 0.0)
    assert c.node == "n2"  # fewest PDB violations first


def test_backoff_durations():
    # upstream: backend/queue/scheduling_queue_test.go TestBackOffFlow (1s, 2s, 4s, 8s, 10s, 10s)
    from karpy.kubescheduler.framework import Framework
    q = PriorityQueue(Framework([], {}), FakeClock())
    from karpy.kubescheduler.queue import QueuedPodInfo
    qp = QueuedPodInfo(new_pod_info(make_pod("p")), 0.0, 1)
    out = []
    for n in range(1, 7):
        qp.unschedulable_count = n
        out.append(q.backoff_duration(qp))
    assert out == [1, 2, 4, 8, 10, 10]


def test_num_feasible_nodes_to_find():
    # upstream: schedule_one_test.go TestNumFeasibleNodesToFind
    assert num_feasible_nodes_to_find(0, 10) == 10
    assert num_feasible_nodes_to_find(0, 1000) == 420
    assert num_feasible_nodes_to_find(0, 6000) == 300
    assert num_feasible_nodes_to_find(40, 1000) == 400
    assert num_feasible_nodes_to_find(0, 10000) == 500


def test_unschedulable_leftover_flush_after_5_minutes():
    # upstream: scheduling_queue_test.go TestPriorityQueue_flushUnschedulablePodsLeftover (strict > 5 min, 30 s ticks)
    import random as _r

    from karpy.kubescheduler import KubeScheduler
    clock = FakeClock()
    s = KubeScheduler(clock, _r.Random(0))
    s.add_node(make_node("n", capacity={"cpu": "1", "pods": "10"}, labels={"zone": "a"}))
    s.add_pod(make_pod("p", node_selector={"zone": "b"}))
    assert s.schedule_one().outcome == "Unschedulable"
    assert s.next_event_time() == 330.0  # first 30 s tick with age > 300 s
    clock.t = 300.0
    assert s.schedule_one() is None
    clock.t = 330.0
    r = s.schedule_one()
    assert r is not None and r.pod_key == "default/p"
