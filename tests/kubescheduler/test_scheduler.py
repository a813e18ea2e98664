"""End-to-end cycle tests for KubeScheduler (failure message, binding, queue, preemption, gangs)."""

import random

from karpy.api.builders import make_node, make_pod
from karpy.kubescheduler import KubeScheduler
from karpy.kubescheduler.scheduler import BOUND, NOMINATED, UNSCHEDULABLE

from .conftest import FakeClock


def _sched(clock=None):
    return KubeScheduler(clock or FakeClock(), random.Random(1))


def test_empty_cluster_no_nodes_available():
    # upstream: schedule_one.go ErrNoNodesAvailable -> reason Unschedulable
    s = _sched()
    s.add_pod(make_pod("p", requests={"cpu": "1"}))
    r = s.schedule_one()
    assert r.outcome == UNSCHEDULABLE
    assert r.condition == {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                           "message": "no nodes available to schedule pods"}


def test_fit_error_message_histogram_and_preemption_suffix():
    # upstream: framework/types.go FitError.Error; reference example "3 Insufficient cpu. preemption: ..."
    s = _sched()
    for i in range(3):
        s.add_node(make_node(f"n{i}", capacity={"cpu": "1", "memory": "1Gi", "pods": "10"}))
    s.add_pod(make_pod("p", requests={"cpu": "2"}))
    r = s.schedule_one()
    # request > allocatable on every node: UAU (1.34+), so preemption is not helpful
    assert r.condition["message"] == ("0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are "
                                      "available: 3 Preemption is not helpful for scheduling.")


def test_mixed_reasons_sorted_lexicographically():
    s = _sched()
    s.add_node(make_node("a", capacity={"cpu": "1", "pods": "10"}, taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]))
    s.add_node(make_node("b", capacity={"cpu": "1", "pods": "10"}, labels={"zone": "x"}))
    s.add_node(make_node("c", capacity={"cpu": "1", "pods": "10"}, unschedulable=True))
    s.add_pod(make_pod("p", requests={"cpu": "100m"}, node_selector={"zone": "y"}))
    r = s.schedule_one()
    assert r.condition["message"].startswith(
        "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "1 node(s) had untolerated taint(s), 1 node(s) were unschedulable.")


def test_bind_and_resources_consumed():
    s = _sched()
    s.add_node(make_node("n", capacity={"cpu": "1", "memory": "1Gi", "pods": "10"}))
    s.add_pod(make_pod("a", requests={"cpu": "600m"}))
    s.add_pod(make_pod("b", requests={"cpu": "600m"}))
    r1 = s.schedule_one()
    assert (r1.outcome, r1.node_name) == (BOUND, "n")
    r2 = s.schedule_one()
    assert r2.outcome == UNSCHEDULABLE
    assert "1 Insufficient cpu" in r2.condition["message"]
    assert "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod." in r2.condition["message"]


def test_node_add_requeues_via_queueing_hint():
    # upstream: scheduling_queue_test.go error-path pods wait in podErrorBackoffQ (not popped early);
    # noderesources/fit_test.go isSchedulableAfterNodeChange: Queue only when the pod fits the new node
    clock = FakeClock()
    s = _sched(clock)
    s.add_pod(make_pod("p", requests={"cpu": "1"}))
    assert s.schedule_one().outcome == UNSCHEDULABLE  # no nodes: error path, no rejector plugin
    assert s.schedule_one() is None  # error backoff is never popped early
    s.add_node(make_node("small", capacity={"cpu": "500m", "pods": "10"}))
    assert s.schedule_one() is None
    clock.t = 2.0  # expiry 1.0 (truncated) leaves backoff at the 2.0 flush (isBackingOff: expiry >= floor(now))
    r = s.schedule_one()
    assert r.outcome == UNSCHEDULABLE and "1 Insufficient cpu" in r.condition["message"]
    assert s.schedule_one() is None  # unschedulablePods, rejected by NodeResourcesFit
    s.add_node(make_node("small2", capacity={"cpu": "600m", "pods": "10"}))
    assert s.schedule_one() is None  # hint QueueSkip: the pod does not fit the new node
    s.add_node(make_node("big", capacity={"cpu": "2", "pods": "10"}))
    r = s.schedule_one()  # hint Queue -> backoffQ -> popped because activeQ is empty (PopFromBackoffQ)
    assert r is not None and r.outcome == BOUND and r.node_name == "big"


def test_gated_pod_never_attempted():
    # upstream: schedulinggates/scheduling_gates_test.go "pod with gates"
    s = _sched()
    s.add_node(make_node("n", capacity={"cpu": "1", "pods": "10"}))
    assert s.add_pod(make_pod("g", scheduling_gates=["example.com/gate"])) is False
    assert s.schedule_one() is None
    assert s.gated_pods() == ["default/g"]
    s.update_pod(make_pod("g"))
    r = s.schedule_one()
    assert r.outcome == BOUND


def test_preemption_nominates_and_lists_victims():
    s = _sched()
    s.add_node(make_node("n", capacity={"cpu": "1", "pods": "10"}))
    s.add_pod(make_pod("low", requests={"cpu": "800m"}, priority=1, node_name="n"))
    s.add_pod(make_pod("high", requests={"cpu": "800m"}, priority=100))
    r = s.schedule_one()
    assert r.outcome == NOMINATED
    assert r.nominated_node_name == "n"
    assert [v.key for v in r.victims] == ["default/low"]
    assert r.condition["reason"] == "Unschedulable"
    assert r.condition["message"] == "0/1 nodes are available: 1 Insufficient cpu."
    # victim deleted -> AssignedPodDelete hint queues the preemptor; it binds to the nominated node
    s.delete_pod("default/low")
    s.clock.t += 5
    r2 = s.schedule_one()
    assert (r2.outcome, r2.node_name) == (BOUND, "n")


def test_preemption_policy_never():
    s = _sched()
    s.add_node(make_node("n", capacity={"cpu": "1", "pods": "10"}))
    s.add_pod(make_pod("low", requests={"cpu": "800m"}, priority=1, node_name="n"))
    s.add_pod(make_pod("high", requests={"cpu": "800m"}, priority=100, preemption_policy="Never"))
    r = s.schedule_one()
    assert r.condition["message"].endswith("preemption: not eligible due to preemptionPolicy=Never.")


def test_priority_order_in_active_queue():
    s = _sched()
    s.add_node(make_node("n", capacity={"cpu": "1", "pods": "10"}))
    s.add_pod(make_pod("a", requests={"cpu": "800m"}, priority=1))
    s.add_pod(make_pod("b", requests={"cpu": "800m"}, priority=5))
    assert s.schedule_one().pod_key == "default/b"


def test_gang_all_or_nothing():
    # reference §5.1 "Minimal all-or-nothing model": gated until minMember pods exist; none bind if the group doesn't fit
    from karpy.api.podgroup import POD_GROUP_LABEL, PodGroup
    s = _sched()
    s.add_node(make_node("n", capacity={"cpu": "2", "pods": "10"}))
    s.add_pod_group(PodGroup.model_validate({"metadata": {"name": "g"}, "spec": {"minMember": 3}}))
    for i in range(2):
        assert s.add_pod(make_pod(f"m{i}", labels={POD_GROUP_LABEL: "g"}, requests={"cpu": "1"})) is False
    assert s.schedule_one() is None  # gated: fewer than minMember pods
    s.add_pod(make_pod("m2", labels={POD_GROUP_LABEL: "g"}, requests={"cpu": "1"}))
    r = s.schedule_one()
    assert r.outcome == UNSCHEDULABLE and len(r.members) == 3
    assert all(m.outcome == UNSCHEDULABLE and m.condition["reason"] == "Unschedulable" for m in r.members)
    assert s.node_infos["n"].pods == []  # nothing stays assumed
