"""kube-scheduler v1.37 workload-aware scheduling: ports of upstream's behaviour-defining cases.

Each test names the upstream test function it ports (kubernetes/kubernetes v1.37):
pkg/scheduler/schedule_one_podgroup_test.go, plugins/gangscheduling/gangscheduling_test.go,
backend/queue/backoff_queue_test.go and scheduling_queue_test.go.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import pytest

from karpy.kubescheduler.gang import MSG_WAIT_MIN_COUNT, pre_enqueue_v137
from karpy.kubescheduler.podgroupcycle import (BIND, ERROR, NOMINATE, REJECT_GROUP, REJECT_OWN, AlgorithmResult,
                                               PlacementProgress, PodResult, PostFilterResult, default_algorithm,
                                               entity_key, placement_feasible, run_pod_group_cycle,
                                               submit_actions, update_pod_group_condition, validate_pod_group)
from karpy.kubescheduler.queue import entity_backoff_duration
from karpy.kubescheduler.types import Code, Status


# -- gangscheduling_test.go TestPlacementFeasible ------------------------------------------------------

# (name, minCount (0 = basic), childrenCount, podStatuses, expectedStatuses, initialScheduledCount):
# gangscheduling_test.go TestPlacementFeasible's table, verbatim
_PF_CASES = [
    ("All pods succeed, minCount met at end", 2, 2, "SS", "WS", 0),
    ("First pod fails, minCount not satisfiable", 3, 3, "U", "U", 0),
    ("Second pod fails, minCount not satisfiable", 2, 2, "SU", "WU", 0),
    ("Non-gang pod group with 0 scheduled pods fails", 0, 1, "U", "U", 0),
    ("Non-gang pod group with succeeds once 1 pod is scheduled", 0, 1, "S", "S", 0),
    ("Non-gang pod group with 1 initially scheduled pod succeeds", 0, 1, "U", "S", 1),
    ("More than minCount pods, all succeed", 2, 3, "SSS", "WSS", 0),
    ("More than minCount pods, first fails", 2, 3, "USS", "WWS", 0),
    ("More than minCount pods, minCount not satisfiable", 2, 3, "UU", "WU", 0),
    ("1 pod scheduled, 2 unscheduled pods succeed, minCount 3 met", 3, 2, "SS", "WS", 1),
    ("minCount already met by scheduled pods", 2, 1, "U", "S", 2),
    ("1 pod scheduled, minCount 3, first unscheduled fails, not enough remaining", 3, 2, "U", "U", 1),
    ("1 pod scheduled, minCount 4, first unscheduled succeeds, not enough remaining", 4, 2, "S", "U", 1),
]
_CODES = {"S": Code.SUCCESS, "W": Code.WAIT, "U": Code.UNSCHEDULABLE}


@pytest.mark.parametrize("name,min_count,children,pods,expected,initial", _PF_CASES, ids=[c[0] for c in _PF_CASES])
def test_placement_feasible(name: str, min_count: int, children: int, pods: str, expected: str, initial: int) -> None:
    """TestPlacementFeasible: the gang rule step by step (basic = minCount 1)."""
    scheduled = initial
    for i, code in enumerate(pods):
        if code == "S":
            scheduled += 1
        st = placement_feasible(min_count or None, PlacementProgress(children - (i + 1), scheduled))
        assert st.code == _CODES[expected[i]], f"step {i}"


@pytest.mark.parametrize("min_count,remaining,scheduled,message", [
    (3, 3, 0, "minCount (3) is not yet satisfied: 0 scheduled, 3 remaining"),
    (3, 1, 1, "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining"),
    (None, 0, 0, "minCount (1) cannot be satisfied: 0 scheduled, 0 remaining"),
    (16, 0, 16, ""),
])
def test_placement_feasible_messages(min_count: Optional[int], remaining: int, scheduled: int, message: str) -> None:
    """GangScheduling.PlacementFeasible's exact words (fmt.Sprintf in gangscheduling.go)."""
    assert placement_feasible(min_count, PlacementProgress(remaining, scheduled)).message() == message


# -- gangscheduling_test.go PreEnqueue table ----------------------------------------------------------

class _PG:
    def __init__(self, min_count: Optional[int]) -> None:
        self.min_count = min_count


def _pod(group: Optional[str] = "pg", name: str = "p", priority: int | None = None) -> Any:
    from karpy.api.pod import Pod
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    if priority is not None:
        spec["priority"] = priority
    return Pod.model_validate({"metadata": {"name": name, "namespace": "default"}, "spec": spec})


def test_pre_enqueue_no_scheduling_group() -> None:
    """GangScheduling PreEnqueue table: "pod without schedulingGroup" -> Success."""
    assert pre_enqueue_v137(_pod(None), None, 0).is_success()


def test_pre_enqueue_group_missing() -> None:
    """GangScheduling PreEnqueue table: "pod group not found" -> UnschedulableAndUnresolvable."""
    st = pre_enqueue_v137(_pod(), None, 1)
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.message() == 'waiting for pods\'s pod group "pg" to appear in scheduling queue'


def test_pre_enqueue_basic_policy() -> None:
    """GangScheduling PreEnqueue table: "basic policy" -> Success."""
    assert pre_enqueue_v137(_pod(), _PG(None), 1).is_success()


def test_pre_enqueue_gang_quorum_not_met() -> None:
    """GangScheduling PreEnqueue table: "gang, fewer pods than minCount" -> UAU."""
    st = pre_enqueue_v137(_pod(), _PG(3), 2)
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and st.message() == MSG_WAIT_MIN_COUNT


def test_pre_enqueue_gang_quorum_met() -> None:
    """GangScheduling PreEnqueue table: "gang, enough pods" -> Success."""
    assert pre_enqueue_v137(_pod(), _PG(3), 3).is_success()


# -- schedule_one_podgroup_test.go TestPodGroupSchedulingAlgorithm ------------------------------------

def _run(fits: dict[str, bool], min_count: Optional[int], scheduled: int = 0,
         errors: frozenset[str] = frozenset()) -> tuple[AlgorithmResult, list[str], list[tuple[str, str]]]:
    order = list(fits)
    tried: list[str] = []
    log: list[tuple[str, str]] = []

    def schedule(k: str) -> tuple[Optional[str], Optional[Status], Any]:
        tried.append(k)
        if k in errors:
            return None, Status(Code.ERROR, ['running "X" filter plugin: boom']), None
        if fits[k]:
            return f"node-{k}", None, None
        return None, Status(Code.UNSCHEDULABLE, [f"0/1 nodes are available: {k} misfit."]), None
    res = run_pod_group_cycle(order, min_count, scheduled, schedule, lambda k, n: log.append(("assume", k)),
                              lambda k: log.append(("revert", k)))
    return res, tried, log


def test_algorithm_all_fit_gang() -> None:
    """TestPodGroupSchedulingAlgorithm: "all pods feasible" -> Success, every pod placed."""
    res, tried, _ = _run({"a": True, "b": True, "c": True}, 3)
    assert res.status.is_success() and res.any_scheduled
    assert [r.node for r in res.pods] == ["node-a", "node-b", "node-c"]


def test_algorithm_reverts_every_assume() -> None:
    """TestPodGroupSchedulingAlgorithm: the algorithm only simulates (runRootSchedulingAlgorithm's
    deferred revert): every assume is reverted, in reverse order."""
    _, _, log = _run({"a": True, "b": True}, 2)
    assert log == [("assume", "a"), ("assume", "b"), ("revert", "b"), ("revert", "a")]


def test_algorithm_early_stop_first_misfit() -> None:
    """TestPodGroupSchedulingAlgorithm: minCount == N, the first pod misfits -> Unschedulable at
    once; the later pods are not evaluated and get the group status."""
    res, tried, _ = _run({"a": False, "b": True, "c": True, "d": True}, 4)
    assert tried == ["a"]
    assert res.status.code == Code.UNSCHEDULABLE
    assert res.status.message() == "minCount (4) cannot be satisfied: 0 scheduled, 3 remaining"
    assert [r.evaluated for r in res.pods] == [True, False, False, False]
    assert res.pods[1].status is not None
    assert res.pods[1].status.message() == "minCount (4) cannot be satisfied: 0 scheduled, 3 remaining"


def test_algorithm_slack_allows_misfits() -> None:
    """TestPodGroupSchedulingAlgorithm: minCount 2 of 3, one misfit -> Success (partial)."""
    res, tried, _ = _run({"a": True, "b": False, "c": True}, 2)
    assert res.status.is_success() and tried == ["a", "b", "c"]
    assert [r.fit for r in res.pods] == [True, False, True]


def test_algorithm_wait_at_end_becomes_unschedulable() -> None:
    """TestPodGroupSchedulingAlgorithm: PlacementFeasible Wait at the end -> Unschedulable with
    errPodGroupUnschedulable first."""
    res, _, _ = _run({"a": True}, 3, scheduled=1)
    # pre-check: 1 remaining + 1 scheduled < 3 -> no pod evaluated
    assert res.status.message() == "pod group is unschedulable, minCount (3) cannot be satisfied: 1 scheduled, 1 remaining"
    assert not any(r.evaluated for r in res.pods)


def test_algorithm_pre_check_unschedulable() -> None:
    """TestPodGroupSchedulingAlgorithm: too few pods for minCount -> the pre-check rejects, no pod tried."""
    res, tried, _ = _run({"a": True, "b": True}, 3)
    assert tried == []
    assert res.status.code == Code.UNSCHEDULABLE
    assert res.status.message().startswith("pod group is unschedulable, minCount (3) cannot be satisfied")


def test_algorithm_already_scheduled_count() -> None:
    """TestPodGroupSchedulingAlgorithm: ScheduledPodsCount starts the progress (a late member of a
    placed gang passes alone)."""
    res, _, _ = _run({"late": True}, 4, scheduled=3)
    assert res.status.is_success() and res.pods[0].fit


def test_algorithm_basic_any_scheduled() -> None:
    """TestPodGroupSchedulingAlgorithm: basic group, one pod fits -> Success."""
    res, _, _ = _run({"a": False, "b": True}, None)
    assert res.status.is_success() and res.any_scheduled


def test_algorithm_basic_none_fit() -> None:
    """TestPodGroupSchedulingAlgorithm: "all pods unschedulable" (basic, minCount 1): Wait after the
    first misfit, Unschedulable after the last; each pod keeps its own FitError."""
    res, _, _ = _run({"a": False, "b": False}, None)
    assert res.status.code == Code.UNSCHEDULABLE
    assert res.status.message() == "minCount (1) cannot be satisfied: 0 scheduled, 0 remaining"
    assert res.pods[0].status is not None and "a misfit" in res.pods[0].status.message()


def test_algorithm_success_without_new_pod_is_unschedulable() -> None:
    """runRootSchedulingAlgorithm: Success with !anyScheduled -> Unschedulable errPodGroupUnschedulable."""
    res, _, _ = _run({"late": False}, 2, scheduled=2)
    assert res.status.code == Code.UNSCHEDULABLE and res.status.message() == "pod group is unschedulable"


def test_fills_pod_results_error_text() -> None:
    """TestPodGroupCycle_FillsPodResultsOnFewerResults: a pod's Error stops the loop; the group
    status is "failed to schedule other pod from a pod group: ..."."""
    res, tried, _ = _run({"a": True, "b": True, "c": True}, 3, errors=frozenset({"b"}))
    assert tried == ["a", "b"]
    assert res.status.code == Code.ERROR
    assert res.status.message() == 'failed to schedule other pod from a pod group: running "X" filter plugin: boom'
    acts = submit_actions(res, ["a", "b", "c"])
    assert [a.action for a in acts] == [ERROR, ERROR, ERROR]
    assert acts[1].message == 'running "X" filter plugin: boom'       # its own Error
    assert acts[2].message == res.status.message()                      # the other pods: the group's
    assert all(a.reason == "SchedulerError" for a in acts)


# -- TestSubmitPodGroupAlgorithmResult -----------------------------------------------------------------

def test_submit_all_bind() -> None:
    """TestSubmitPodGroupAlgorithmResult: "all scheduled" -> every pod binds."""
    res, _, _ = _run({"a": True, "b": True}, 2)
    assert [(a.action, a.node) for a in submit_actions(res, ["a", "b"])] == [(BIND, "node-a"), (BIND, "node-b")]


def test_submit_one_unschedulable_leftover() -> None:
    """TestSubmitPodGroupAlgorithmResult "One unschedulable": group Success, the misfit gets its own FitError."""
    res, _, _ = _run({"a": True, "b": False}, 1)
    acts = submit_actions(res, ["a", "b"])
    assert acts[0].action == BIND and acts[1].action == REJECT_OWN
    assert acts[1].message == "0/1 nodes are available: b misfit."


def test_submit_rejected_fit_pod_duplicated_prefix() -> None:
    """TestSubmitPodGroupAlgorithmResult: a pod that fit while the group was rejected gets
    "pod group is unschedulable, <group message>" (1.37's duplicated prefix)."""
    res, _, _ = _run({"a": True, "b": False, "c": True}, 3)
    acts = submit_actions(res, ["a", "b", "c"])
    assert acts[0].action == REJECT_GROUP
    assert acts[0].message == "pod group is unschedulable, minCount (3) cannot be satisfied: 1 scheduled, 1 remaining"
    assert acts[1].action == REJECT_OWN
    assert acts[2].message == "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining"


def test_submit_wait_fit_pod_message_twice_prefixed() -> None:
    """TestSubmitPodGroupAlgorithmResult: Wait -> Unschedulable WithError: the fitting pod's message
    carries the prefix twice."""
    res, _, _ = _run({"a": True, "b": False}, 2, scheduled=0)
    acts = submit_actions(res, ["a", "b"])
    assert res.status.message() == "minCount (2) cannot be satisfied: 1 scheduled, 0 remaining"
    assert acts[0].message.startswith("pod group is unschedulable, minCount (2)")


def test_submit_waiting_on_preemption_uses_nominating_info() -> None:
    """TestSubmitPodGroupAlgorithmResult "waiting on preemption uses nominating info"."""
    res = AlgorithmResult(Status(Code.UNSCHEDULABLE, ["pod group is unschedulable"]),
                          [PodResult("a", "n1"), PodResult("b", None, Status(Code.UNSCHEDULABLE, ["fit error"]))])
    res.waiting_on_preemption, res.nominations = True, {"a": "n1"}
    acts = submit_actions(res, ["a", "b"])
    assert (acts[0].action, acts[0].nominated) == (NOMINATE, "n1")
    assert (acts[1].action, acts[1].message) == (REJECT_OWN, "fit error")


def test_submit_not_all_processed() -> None:
    """submitPodGroupAlgorithmResult: results != queued pods -> Error "some pods were not processed"."""
    res = AlgorithmResult(Status(), [PodResult("a", "n1")])
    acts = submit_actions(res, ["a", "b"])
    assert all(a.action == ERROR for a in acts)
    assert acts[0].message == "scheduling error for pod group, some pods were not processed"


# -- TestPodGroupCycle_PodGroupPostFilter ---------------------------------------------------------------

def test_post_filter_runs_only_when_rejected() -> None:
    """TestPodGroupCycle_PodGroupPostFilter: the hook runs on Unschedulable only."""
    calls: list[int] = []

    def hook(res: AlgorithmResult, rerun: Any) -> Optional[PostFilterResult]:
        calls.append(1)
        return None
    run_pod_group_cycle(["a"], 1, 0, lambda k: ("n", None, None), lambda k, n: None, lambda k: None,
                        post_filter_hook=hook)
    assert calls == []
    run_pod_group_cycle(["a"], 1, 0, lambda k: (None, Status(Code.UNSCHEDULABLE, ["x"]), None),
                        lambda k, n: None, lambda k: None, post_filter_hook=hook)
    assert calls == [1]


def test_post_filter_success_sets_waiting_on_preemption() -> None:
    """TestPodGroupCycle_PodGroupPostFilter: Success -> waitingOnPreemption, an empty reason appended
    (the trailing ", "), unevaluated pods keep the message without the PostFilter part."""
    res = run_pod_group_cycle(["a", "b"], 2, 0, lambda k: (None, Status(Code.UNSCHEDULABLE, ["fit"]), None),
                              lambda k, n: None, lambda k: None,
                              post_filter_hook=lambda r, rerun: PostFilterResult(Status(), {"a": "n1"}))
    assert res.waiting_on_preemption and res.nominations == {"a": "n1"}
    assert res.status.message().endswith(", ")  # AppendReason(Success.String() == "")
    assert res.pods[1].status is not None and not res.pods[1].status.message().endswith(", ")


def test_post_filter_message_appended() -> None:
    """applyPodGroupPostFilterResult: an Unschedulable PostFilter appends "pod group preemption: ..."."""
    res = run_pod_group_cycle(["a"], None, 0, lambda k: (None, Status(Code.UNSCHEDULABLE, ["fit"]), None),
                              lambda k, n: None, lambda k: None,
                              post_filter_hook=lambda r, rerun: PostFilterResult(
                                  Status(Code.UNSCHEDULABLE, ["pod group preemption: No preemption victims found "
                                                              "for incoming preemptor"])))
    assert res.status.message() == ("minCount (1) cannot be satisfied: 0 scheduled, 0 remaining, pod group "
                                    "preemption: No preemption victims found for incoming preemptor")


def test_post_filter_error_replaces_status() -> None:
    """applyPodGroupPostFilterResult: an Error replaces the group status."""
    res = run_pod_group_cycle(["a"], None, 0, lambda k: (None, Status(Code.UNSCHEDULABLE, ["fit"]), None),
                              lambda k, n: None, lambda k: None,
                              post_filter_hook=lambda r, rerun: PostFilterResult(Status(Code.ERROR, ["boom"])))
    assert res.status.code == Code.ERROR and res.status.message() == "boom"


# -- TestValidatePodGroup (schedule_one_podgroup_test.go) -----------------------------------------------

def test_validate_ok() -> None:
    """TestValidatePodGroup: same scheduler, same priority as the group -> valid."""
    assert validate_pod_group([("default-scheduler", 10, "PreemptLowerPriority")] * 3, 10) is None


def test_validate_scheduler_name_mismatch() -> None:
    """TestValidatePodGroup: pods with different schedulerName -> error."""
    err = validate_pod_group([("default-scheduler", 0, "P"), ("other", 0, "P")], None)
    assert err == ('all pods in a single pod group should have the same .spec.schedulerName set, '
                   'got: "other" and "default-scheduler"')


def test_validate_priority_mismatch() -> None:
    """TestValidatePodGroup: a pod's priority differs from the group's -> the upstream text."""
    err = validate_pod_group([("s", 10, "P")], None)
    assert err == ("all pods in a single pod group should have the same priority as the pod group's priority, "
                   "got 10 and 0")


def test_validate_includes_scheduled_pods() -> None:
    """TestValidatePodGroup (validateScheduledPods): already scheduled members count."""
    err = validate_pod_group([("s", 5, "P")], 5, scheduled=[("t", 5, "P")])
    assert err == 'all pods in a single pod group should have the same .spec.schedulerName set, got: "t" and "s"'


def test_validate_preemption_policy_gate_on() -> None:
    """TestValidatePodGroup: PodGroupPreemptionPolicy on -> each pod equals the group's policy."""
    assert validate_pod_group([("s", 0, "Never")], 0, "Never", True) is None
    assert validate_pod_group([("s", 0, "PreemptLowerPriority")], 0, "Never", True) is not None
    assert validate_pod_group([("s", 0, "PreemptLowerPriority")], 0, None, True) is None


def test_validate_preemption_policy_gate_off() -> None:
    """TestValidatePodGroup: gate off -> all pods equal to each other."""
    assert validate_pod_group([("s", 0, "Never"), ("s", 0, "Never")], 0, "PreemptLowerPriority") is None
    assert validate_pod_group([("s", 0, "Never"), ("s", 0, "PreemptLowerPriority")], 0) == (
        "all pods in a single pod group should have the same preemption policy, got PreemptLowerPriority and Never")


def test_validate_order_is_per_pod() -> None:
    """validatePodGroup: each pod is checked whole (name, priority, policy) before the next."""
    err = validate_pod_group([("s", 5, "P"), ("t", 0, "P")], 0)
    assert err is not None and "priority" in err


# -- TestUpdatePodGroupCondition ---------------------------------------------------------------------

def test_condition_scheduled() -> None:
    """TestUpdatePodGroupCondition: Success -> True/Scheduled."""
    conds: list[dict[str, Any]] = []
    assert update_pod_group_condition(conds, Status(), "t1", 1)
    assert conds[0]["status"] == "True" and conds[0]["reason"] == "Scheduled" and conds[0]["observedGeneration"] == 1


def test_condition_unschedulable() -> None:
    """TestUpdatePodGroupCondition: rejected -> False/Unschedulable with the message."""
    conds: list[dict[str, Any]] = []
    update_pod_group_condition(conds, Status(Code.UNSCHEDULABLE, ["pod group is unschedulable"]), "t1")
    assert (conds[0]["status"], conds[0]["reason"], conds[0]["message"]) == ("False", "Unschedulable",
                                                                           "pod group is unschedulable")


def test_condition_scheduler_error() -> None:
    """TestUpdatePodGroupCondition: Error -> False/SchedulerError."""
    conds: list[dict[str, Any]] = []
    update_pod_group_condition(conds, Status(Code.ERROR, ["boom"]), "t1")
    assert conds[0]["reason"] == "SchedulerError"


def test_condition_does_not_regress() -> None:
    """TestUpdatePodGroupCondition "do not regress Scheduled to Unschedulable"."""
    conds: list[dict[str, Any]] = []
    update_pod_group_condition(conds, Status(), "t1")
    assert not update_pod_group_condition(conds, Status(Code.UNSCHEDULABLE, ["x"]), "t2")
    assert conds[0]["status"] == "True" and conds[0]["lastTransitionTime"] == "t1"


def test_condition_transition_time_only_on_flip() -> None:
    """TestUpdatePodGroupCondition: LastTransitionTime changes only when the status flips."""
    conds: list[dict[str, Any]] = []
    update_pod_group_condition(conds, Status(Code.UNSCHEDULABLE, ["a"]), "t1")
    update_pod_group_condition(conds, Status(Code.UNSCHEDULABLE, ["b"]), "t2")
    assert conds[0]["lastTransitionTime"] == "t1" and conds[0]["message"] == "b"
    update_pod_group_condition(conds, Status(), "t3")
    assert conds[0]["lastTransitionTime"] == "t3" and conds[0]["status"] == "True"


# -- backoff_queue_test.go (calculateBackoffDuration with entity size) ---------------------------------

@pytest.mark.parametrize("count,size,want", [
    (0, 1, 0.0), (1, 1, 1.0), (2, 1, 2.0), (4, 1, 8.0), (5, 1, 10.0), (9, 1, 10.0),
    (5, 4, 16.0), (6, 4, 20.0), (9, 16, 40.0), (9, 2, 10.0 * math.sqrt(2)),
])
def test_entity_backoff_duration(count: int, size: int, want: float) -> None:
    """backoff_queue_test.go TestBackoffQueue_calculateBackoffDuration (entity size): the cap is
    maxBackoff·√size for a group entity (a 16-pod gang caps at 40 s)."""
    assert entity_backoff_duration(count, 1.0, 10.0, size) == pytest.approx(want)


def test_entity_key_string() -> None:
    """framework/types_test.go EntityKey.String(): "podgroup/ns/name"."""
    assert entity_key("default", "pg") == "podgroup/default/pg"
    assert entity_key("ns", "c", "compositepodgroup") == "compositepodgroup/ns/c"


def test_submit_waiting_on_preemption_misfit_keeps_own_status_with_nomination() -> None:
    """TestSubmitPodGroupAlgorithmResult (waiting on preemption): applyPodGroupPostFilterResult gives
    every pod its nominating info; a misfit keeps its own FitError but gets NominatedNodeName."""
    res = AlgorithmResult(Status(Code.UNSCHEDULABLE, ["minCount (2) cannot be satisfied: 0 scheduled, 1 remaining"]),
                          [PodResult("a", None, Status(Code.UNSCHEDULABLE, ["0/1 nodes are available: 1 Insufficient cpu."])),
                           PodResult("b", None, Status(Code.UNSCHEDULABLE, ["minCount (2) cannot be satisfied"]),
                                     evaluated=False)])
    res.waiting_on_preemption, res.nominations = True, {"a": "n1", "b": "n1"}
    acts = submit_actions(res, ["a", "b"])
    assert [(a.action, a.nominated) for a in acts] == [(NOMINATE, "n1"), (NOMINATE, "n1")]
    assert acts[0].message == "0/1 nodes are available: 1 Insufficient cpu."
    assert acts[1].message == "minCount (2) cannot be satisfied"
