"""The v1.37 PodGroup cycle inside KubeScheduler: the group entity popped whole, PreEnqueue gating,
the submit matrix applied to the queue (leftovers to activeQ with their timestamp, rejected members
backing off with the entity's √size cap), the PodGroupInitiallyScheduled condition, validation as a
SchedulerError. Each test names the upstream test it ports (kubernetes/kubernetes v1.37)."""

from __future__ import annotations

import random
from typing import Any, Optional

import pytest

from karpy.api.podgroup import SchedulingPodGroup
from karpy.kubescheduler.scheduler import BOUND, ERROR, UNSCHEDULABLE, KubeScheduler, SchedulerConfig

from ._helpers import node, pod
from .conftest import FakeClock


def _sched(clock: Optional[FakeClock] = None, gw: bool = True, version: str = "1.37") -> KubeScheduler:
    gates = {"GenericWorkload": gw} if version == "1.37" else None
    return KubeScheduler(clock or FakeClock(), random.Random(1),
                         SchedulerConfig(kubernetes_version=version, feature_gates=gates))


def _group(name: str = "pg", min_count: Optional[int] = 2, priority: Optional[int] = None) -> SchedulingPodGroup:
    policy: dict[str, Any] = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    spec: dict[str, Any] = {"schedulingPolicy": policy}
    if priority is not None:
        spec["priority"] = priority
    return SchedulingPodGroup.model_validate({"metadata": {"name": name, "namespace": "default", "generation": 1},
                                              "spec": spec})


def _member(name: str, cpu: str = "1", group: str = "pg", **kw: Any) -> Any:
    p = pod(name, [{"cpu": cpu}], **kw)
    p.spec.scheduling_group = type(p.spec).model_fields["scheduling_group"].annotation.__args__[0](
        pod_group_name=group)
    return p


def test_gang_binds_whole_in_one_cycle() -> None:
    """TestScheduleOnePodGroup: one entity pop schedules every member; all bind; condition True/Scheduled."""
    s = _sched()
    s.add_node(node("n1", {"cpu": "4", "pods": "110"}))
    s.add_pod_group(_group(min_count=3))
    for i in range(3):
        s.add_pod(_member(f"p{i}"))
    r = s.schedule_one()
    assert r is not None and r.outcome == BOUND
    assert sorted(m.pod_key for m in r.members if m.outcome == BOUND) == ["default/p0", "default/p1", "default/p2"]
    assert s.schedule_one() is None  # nothing left: the entity took every member
    cond = s.pod_group_conditions["default/pg"][0]
    assert (cond["type"], cond["status"], cond["reason"]) == ("PodGroupInitiallyScheduled", "True", "Scheduled")


def test_gang_all_or_nothing_reverts() -> None:
    """TestPodGroupSchedulingAlgorithm via the scheduler: 2 of 3 fit, minCount 3 -> none bound, the
    snapshot assumes reverted, condition False/Unschedulable with PlacementFeasible's words."""
    s = _sched()
    s.add_node(node("n1", {"cpu": "2", "pods": "110"}))
    s.add_pod_group(_group(min_count=3))
    for i in range(3):
        s.add_pod(_member(f"p{i}"))
    r = s.schedule_one()
    assert r is not None and r.outcome == UNSCHEDULABLE
    assert not s.assigned and not s.node_infos["n1"].pods
    msgs = {m.pod_key: m.condition["message"] for m in r.members if m.condition}
    # DefaultPreemption's PodGroupPostFilter runs (default profile) and finds no lower-priority victim:
    # its message is appended with the "pod group preemption: " prefix (default_preemption.go, AppendReason)
    post = ", pod group preemption: No preemption victims found for incoming preemptor"
    assert msgs["default/p0"] == "pod group is unschedulable, minCount (3) cannot be satisfied: 2 scheduled, 0 remaining" + post
    assert msgs["default/p2"].startswith("0/1 nodes are available")
    cond = s.pod_group_conditions["default/pg"][0]
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert cond["message"] == "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining" + post


def test_pre_enqueue_gates_until_min_count_pods_exist() -> None:
    """gangscheduling_test.go PreEnqueue + scheduling_queue_test.go: a gang below quorum is gated
    (no condition, never popped); the last member's arrival releases the whole entity."""
    s = _sched()
    s.add_node(node("n1", {"cpu": "4", "pods": "110"}))
    s.add_pod_group(_group(min_count=2))
    assert s.add_pod(_member("p0")) is False
    assert s.gated_pods() == ["default/p0"] and s.schedule_one() is None
    s.add_pod(_member("p1"))
    r = s.schedule_one()
    assert r is not None and r.outcome == BOUND and len(r.members) == 2


def test_pod_group_missing_gates() -> None:
    """TestWorkloadForest_AddPodGroup / incompletePodGroupPods: pods whose PodGroup is not observed
    wait; the PodGroup's arrival queues the group."""
    s = _sched()
    s.add_node(node("n1", {"cpu": "4", "pods": "110"}))
    s.add_pod(_member("p0"))
    s.add_pod(_member("p1"))
    assert s.schedule_one() is None and len(s.gated_pods()) == 2
    assert s.queue.unschedulable["default/p0"].gating_message == \
        'waiting for pods\'s pod group "pg" to appear in scheduling queue'
    s.add_pod_group(_group(min_count=2))
    r = s.schedule_one()
    assert r is not None and r.outcome == BOUND


def test_leftover_back_to_active_keeping_timestamp() -> None:
    """TestSubmitPodGroupAlgorithmResult "One unschedulable": group Success with minCount met; the
    misfit goes back to activeQ at once, no backoff, its timestamp preserved."""
    clock = FakeClock(0.0)
    s = _sched(clock)
    s.add_node(node("n1", {"cpu": "2", "pods": "110"}))
    s.add_pod_group(_group(min_count=2))
    for i in range(3):
        s.add_pod(_member(f"p{i}"))
    ts = s.queue.infos["default/p2"].timestamp
    clock.t = 5.0
    r = s.schedule_one()
    assert r is not None and r.outcome == BOUND
    assert [m.outcome for m in r.members] == [BOUND, BOUND, UNSCHEDULABLE]
    q = s.queue.infos["default/p2"]
    assert "default/p2" in s.queue._active_entries and q.timestamp == ts


def test_rejected_entity_backs_off_with_sqrt_size_cap() -> None:
    """backoff_queue_test.go (entity size) + AddAttemptedPodGroupIfNeeded: a rejected 16-pod gang
    backs off as one entity; its cap is 10 s·√16 = 40 s."""
    s = _sched()
    s.add_node(node("n1", {"cpu": "1", "pods": "110"}))
    s.add_pod_group(_group(min_count=16))
    for i in range(16):
        s.add_pod(_member(f"p{i:02d}"))
    s.schedule_one()
    q = s.queue.infos["default/p00"]
    assert q.entity_key == "podgroup/default/pg" and q.entity_size == 16
    q.unschedulable_count = 9
    assert s.queue.backoff_duration(q) == pytest.approx(40.0)
    assert {s.queue.infos[f"default/p{i:02d}"].unschedulable_count for i in range(1, 16)} == {1}


def test_priority_mismatch_is_scheduler_error() -> None:
    """TestValidatePodGroup through scheduleOnePodGroup: a member whose priority differs from the
    PodGroup's -> every pod SchedulerError, condition False/SchedulerError with the text."""
    s = _sched()
    s.add_node(node("n1", {"cpu": "4", "pods": "110"}))
    s.add_pod_group(_group(min_count=2, priority=10))
    for i in range(2):
        s.add_pod(_member(f"p{i}"))
    r = s.schedule_one()
    assert r is not None and all(m.outcome == ERROR for m in r.members)
    want = "all pods in a single pod group should have the same priority as the pod group's priority, got 0 and 10"
    assert r.members[0].condition == {"type": "PodScheduled", "status": "False", "reason": "SchedulerError",
                                      "message": want}
    cond = s.pod_group_conditions["default/pg"][0]
    assert (cond["reason"], cond["message"]) == ("SchedulerError", want)


def test_condition_not_regressed_by_late_member() -> None:
    """TestSubmitPodGroupAlgorithmResult "Already Scheduled ... does not regress": a late member
    that misfits leaves PodGroupInitiallyScheduled True; it is judged with ScheduledPodsCount."""
    s = _sched()
    s.add_node(node("n1", {"cpu": "2", "pods": "110"}))
    s.add_pod_group(_group(min_count=2))
    for i in range(2):
        s.add_pod(_member(f"p{i}"))
    assert s.schedule_one().outcome == BOUND  # type: ignore[union-attr]
    s.add_pod(_member("late"))
    r = s.schedule_one()
    assert r is not None and r.members[0].outcome == UNSCHEDULABLE
    # a misfit keeps its own FitError (submit matrix), whatever the group status
    assert r.members[0].condition is not None
    assert r.members[0].condition["message"] == "0/1 nodes are available: 1 Insufficient cpu."
    assert s.pod_group_conditions["default/pg"][0]["status"] == "True"


def test_basic_group_schedules_what_fits() -> None:
    """TestPodGroupSchedulingAlgorithm (basic policy): the group succeeds when one pod fits."""
    s = _sched()
    s.add_node(node("n1", {"cpu": "1", "pods": "110"}))
    s.add_pod_group(_group(min_count=None))
    for i in range(2):
        s.add_pod(_member(f"p{i}"))
    r = s.schedule_one()
    assert r is not None and [m.outcome for m in r.members] == [BOUND, UNSCHEDULABLE]


def test_generic_workload_off_pods_schedule_alone() -> None:
    """GenericWorkload off (1.37 default): no group cycle; each pod its own cycle."""
    s = _sched(gw=False)
    s.add_node(node("n1", {"cpu": "1", "pods": "110"}))
    s.add_pod_group(_group(min_count=2))
    s.add_pod(_member("p0"))
    r = s.schedule_one()
    assert r is not None and r.outcome == BOUND and not r.members


def test_135_ignores_scheduling_group() -> None:
    """At 1.35 the 1.37 cycle does not exist (schedulingGroup is a 1.36 field)."""
    s = _sched(version="1.35")
    s.add_node(node("n1", {"cpu": "1", "pods": "110"}))
    s.add_pod_group(_group(min_count=2))
    s.add_pod(_member("p0"))
    r = s.schedule_one()
    assert r is not None and r.outcome == BOUND


def test_karpenter_warning_names_the_room_found() -> None:
    """Karpenter v1.14 has no gang awareness: a gang left unplaced gets the mismatch warning."""
    s = _sched()
    s.add_node(node("n1", {"cpu": "2", "pods": "110"}))
    s.add_pod_group(_group(min_count=3))
    for i in range(3):
        s.add_pod(_member(f"p{i}"))
    s.schedule_one()
    (w,) = s.pod_group_warnings()
    assert "found room for 2 of its 3 pods" in w


def test_new_member_joins_the_backing_off_entity() -> None:
    """scheduling_queue_test.go (addPodGroupMember, entity in backoffQ): a member added while its
    group backs off joins the entity there, with its counters and timestamp, instead of forcing an
    early cycle from activeQ."""
    clock = FakeClock(0.0)
    s = _sched(clock)
    s.add_node(node("n1", {"cpu": "1", "pods": "110"}))
    s.add_pod_group(_group(min_count=2))
    for i in range(2):
        s.add_pod(_member(f"p{i}"))
    s.schedule_one()  # rejected: one CPU for two pods
    q0 = s.queue.infos["default/p0"]
    s.queue._push_backoff(q0)  # the entity backs off (as after a node event during the cycle)
    s.queue._push_backoff(s.queue.infos["default/p1"])
    s.add_pod(_member("p2"))
    q2 = s.queue.infos["default/p2"]
    assert q2.entity_key == "podgroup/default/pg" and q2.timestamp == q0.timestamp
    assert q2.unschedulable_count == q0.unschedulable_count == 1
    assert "default/p2" not in s.queue._active_entries


def test_deleting_member_is_skipped() -> None:
    """skipPodGroupPodSchedule (TestScheduleOnePodGroup): a member being deleted leaves the cycle
    (Done, not requeued); the others are scheduled."""
    s = _sched()
    s.add_node(node("n1", {"cpu": "4", "pods": "110"}))
    s.add_pod_group(_group(min_count=2))
    for i in range(3):
        s.add_pod(_member(f"p{i}"))
    gone = s.pods["default/p2"].model_copy(deep=True)
    gone.metadata.deletion_timestamp = "2026-01-01T00:00:00Z"
    s.pods["default/p2"] = gone
    r = s.schedule_one()
    assert r is not None and sorted(m.pod_key for m in r.members) == ["default/p0", "default/p1"]
    assert all(m.outcome == BOUND for m in r.members)
    assert "default/p2" not in s.queue.infos and "default/p2" not in s.queue.in_flight


def test_gated_pod_group_fields_are_reported() -> None:
    """dropDisabledFields: spec.schedulingConstraints without TopologyAwareWorkloadScheduling (and
    spec.preemptionPolicy without PodGroupPreemptionPolicy) never reach the scheduler; karpy says so."""
    s = _sched()
    pg = SchedulingPodGroup.model_validate({"metadata": {"name": "pg", "namespace": "default"}, "spec": {
        "schedulingPolicy": {"gang": {"minCount": 1}}, "preemptionPolicy": "Never",
        "schedulingConstraints": {"topology": [{"key": "rack"}]}}})
    s.add_pod_group(pg)
    (w,) = s.pod_group_warnings()
    assert w == ("PodGroup fields ignored, as the API server drops them while their feature gate is off: "
                 "spec.preemptionPolicy (PodGroupPreemptionPolicy is off: default/pg); "
                 "spec.schedulingConstraints (TopologyAwareWorkloadScheduling is off: default/pg)")


def test_135_group_missing_message_keeps_its_apostrophe() -> None:
    """gangscheduling.go PreEnqueue at 1.35 (coscheduling label): "waiting for pods's pod group %q
    ..." -- the name quoted as %q does, the apostrophe of "pods's" left alone (it read pods"s)."""
    s = _sched(version="1.35")
    p = pod("p0", [{"cpu": "1"}], labels={"scheduling.x-k8s.io/pod-group": "g"})
    s.add_pod(p)
    assert s.queue.unschedulable["default/p0"].gating_message == \
        'waiting for pods\'s pod group "g" to appear in scheduling queue'
