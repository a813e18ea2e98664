"""The v1.37 PodGroup scheduling cycle (GenericWorkload): one cycle per group entity.

Mirrors pkg/scheduler/schedule_one_podgroup.go (validatePodGroup, podGroupSchedulingDefaultAlgorithm,
completePodGroupAlgorithmResult, submitPodGroupAlgorithmResult, updatePodGroupCondition) and
plugins/gangscheduling/gangscheduling.go (PlacementFeasible). The algorithm is a function over
callables (schedule one pod on the cycle's snapshot, assume, revert) so that upstream's table tests
port one to one; :class:`karpy.kubescheduler.scheduler.KubeScheduler` wires it to its cache.

Hook points for the other v1.37 pieces (absent modules or gates off: the default path):
``placement_hook`` (TopologyAwareWorkloadScheduling: PlacementGenerate/PlacementScore around
:func:`default_algorithm`) and ``post_filter_hook`` (DefaultPreemption.PodGroupPostFilter,
run when the group is rejected; see :func:`run_pod_group_cycle`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from .types import Code, Status

__all__ = [
    "ERR_POD_GROUP_UNSCHEDULABLE", "ERR_SOME_PODS_NOT_PROCESSED", "MSG_CANNOT_BE_SATISFIED", "MSG_NOT_YET_SATISFIED",
    "MSG_PRIORITY_MISMATCH", "MSG_SCHEDULER_NAME_MISMATCH", "AlgorithmResult", "PlacementProgress", "PodResult",
    "PostFilterResult", "SubmitAction", "default_algorithm", "entity_key", "group_message_for_fit_pod",
    "placement_feasible", "run_pod_group_cycle", "submit_actions", "update_pod_group_condition", "validate_pod_group", "validate_pod_group_hierarchy",
]

#: schedule_one_podgroup.go errPodGroupUnschedulable
ERR_POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"
ERR_SOME_PODS_NOT_PROCESSED = "scheduling error for pod group, some pods were not processed"
#: gangscheduling.go PlacementFeasible
MSG_CANNOT_BE_SATISFIED = "minCount ({}) cannot be satisfied: {} scheduled, {} remaining"
MSG_NOT_YET_SATISFIED = "minCount ({}) is not yet satisfied: {} scheduled, {} remaining"
#: validatePodGroup
MSG_PRIORITY_MISMATCH = ("all pods in a single pod group should have the same priority as the pod group's priority, "
                         "got {} and {}")
MSG_SCHEDULER_NAME_MISMATCH = ("all pods in a single pod group should have the same .spec.schedulerName set, "
                               "got: \"{}\" and \"{}\"")
MSG_PREEMPTION_POLICY_MISMATCH = ("all pods in a single pod group should have the same preemption policy as the pod "
                                  "group's preemption policy, got {} and {}")
MSG_PREEMPTION_POLICY_MISMATCH_PODS = "all pods in a single pod group should have the same preemption policy, got {} and {}"
MSG_OTHER_POD_ERROR = "failed to schedule other pod from a pod group: {}"


def entity_key(namespace: str, name: str, kind: str = "podgroup") -> str:
    """framework/types.go EntityKey.String(): ``type/ns/name`` (``podgroup/default/pg``)."""
    return f"{kind}/{namespace}/{name}"


@dataclass
class PlacementProgress:
    """framework.PlacementProgress: pods left to evaluate and pods placed (assumed or bound)."""

    remaining: int
    scheduled: int


def placement_feasible(min_count: Optional[int], progress: PlacementProgress) -> Status:
    """GangScheduling.PlacementFeasible: Unschedulable when ``remaining + scheduled < minCount``, Wait
    while ``scheduled < minCount``, Success after. ``min_count`` None = basic policy, counted as 1
    (getMinCount: "For basic groups it returns 1")."""
    if min_count is None:
        min_count = 1
    r, s = progress.remaining, progress.scheduled
    if r + s < min_count:
        return Status(Code.UNSCHEDULABLE, [MSG_CANNOT_BE_SATISFIED.format(min_count, s, r)], "GangScheduling")
    if s < min_count:
        return Status(Code.WAIT, [MSG_NOT_YET_SATISFIED.format(min_count, s, r)], "GangScheduling")
    return Status()


def _with_error(code: Code, error: str, reasons: Sequence[str]) -> Status:
    """NewStatus(code, reasons...).WithError(err): Reasons() puts the error first."""
    return Status(code, [error, *reasons])


@dataclass
class PodResult:
    """One pod's outcome in the cycle: ``node`` when it fit (assumed on the snapshot), else its
    own ``status`` (a FitError's message, or an Error); ``evaluated`` False = never tried."""

    key: str
    node: Optional[str] = None
    status: Optional[Status] = None
    evaluated: bool = True
    #: what a FitError carries (its rejector plugins), for the requeue
    detail: Any = None

    @property
    def fit(self) -> bool:
        return self.node is not None


@dataclass
class AlgorithmResult:
    """podGroupAlgorithmResult: the group status, per-pod results in queue order, anyScheduled."""

    status: Status
    pods: list[PodResult] = field(default_factory=list)
    any_scheduled: bool = False
    #: set by a PodGroupPostFilter Success (applyPodGroupPostFilterResult)
    waiting_on_preemption: bool = False
    #: pod key -> nominated node (PodGroupPostFilterResult.NominatingInfos)
    nominations: dict[str, str] = field(default_factory=dict)


#: schedule(pod key) -> (node | None, status | None, detail); raises nothing: a misfit returns
#: (None, Unschedulable status, fit error), an internal error (None, Error status, None)
ScheduleFn = Callable[[str], tuple[Optional[str], Optional[Status], Any]]


def default_algorithm(pod_keys: Sequence[str], min_count: Optional[int], scheduled_count: int,
                      schedule: ScheduleFn, assume: Callable[[str, str], None],
                      revert: Callable[[str], None]) -> AlgorithmResult:
    """podGroupSchedulingDefaultAlgorithm (+ runRootSchedulingAlgorithm's revert and the
    ``!anyScheduled`` rule): pre-check, then each pod in order on the one snapshot, PlacementFeasible
    after each (Unschedulable stops the loop). The assumes are reverted before returning: the
    algorithm only simulates; the submit assumes for real."""
    progress = PlacementProgress(len(pod_keys), scheduled_count)
    pre = placement_feasible(min_count, progress)
    if pre.code == Code.ERROR:
        return AlgorithmResult(pre)
    if pre.code == Code.UNSCHEDULABLE:
        return AlgorithmResult(_with_error(Code.UNSCHEDULABLE, ERR_POD_GROUP_UNSCHEDULABLE, pre.reasons))
    results: list[PodResult] = []
    assumed: list[str] = []
    status = Status()
    try:
        for key in pod_keys:
            node, st, detail = schedule(key)
            if node is None and st is not None and st.code == Code.ERROR:
                results.append(PodResult(key, None, st, detail=detail))
                status = Status(Code.ERROR, [MSG_OTHER_POD_ERROR.format(st.message())])
                break
            if node is not None:
                assume(key, node)
                assumed.append(key)
            results.append(PodResult(key, node, st, detail=detail))
            progress.remaining -= 1
            if node is not None:
                progress.scheduled += 1
            status = placement_feasible(min_count, progress)
            if status.code in (Code.ERROR, Code.UNSCHEDULABLE):
                break
    finally:
        for key in reversed(assumed):
            revert(key)
    if status.code == Code.WAIT:
        status = _with_error(Code.UNSCHEDULABLE, ERR_POD_GROUP_UNSCHEDULABLE, status.reasons)
    any_scheduled = status.is_success() and bool(assumed)
    if status.is_success() and not any_scheduled:
        status = Status(Code.UNSCHEDULABLE, [ERR_POD_GROUP_UNSCHEDULABLE])
    return AlgorithmResult(status, results, any_scheduled)


def complete_result(result: AlgorithmResult, pod_keys: Sequence[str]) -> AlgorithmResult:
    """completePodGroupAlgorithmResult: pods never evaluated get a clone of the group status."""
    seen = {r.key for r in result.pods}
    for key in pod_keys:
        if key not in seen:
            result.pods.append(PodResult(key, None, Status(result.status.code, list(result.status.reasons)),
                                         evaluated=False))
    order = {k: i for i, k in enumerate(pod_keys)}
    result.pods.sort(key=lambda r: order.get(r.key, len(order)))
    return result


@dataclass
class PostFilterResult:
    """framework.PodGroupPostFilterResult + its status (a hook's answer)."""

    status: Status
    nominations: dict[str, str] = field(default_factory=dict)


def apply_post_filter(result: AlgorithmResult, post: Optional[PostFilterResult]) -> AlgorithmResult:
    """applyPodGroupPostFilterResult: Success -> waitingOnPreemption with the nominations; Error
    replaces the status; otherwise ``AppendReason(status.String())``, even an empty one (the trailing
    ", " a Success leaves)."""
    if post is None:
        return result
    st = post.status
    if st.is_success():
        result.waiting_on_preemption = True
        result.nominations = dict(post.nominations)
    if st.code == Code.ERROR:
        result.status = st
        return result
    result.status.reasons.append(st.message())
    return result


#: the submit matrix's actions
BIND = "bind"
REJECT_OWN = "own-status"
REJECT_GROUP = "group-status"
NOMINATE = "nominate"
ERROR = "error"


@dataclass
class SubmitAction:
    """What submitPodGroupAlgorithmResult does with one pod: ``action`` (bind, own-status,
    group-status, nominate, error), the message and reason of its PodScheduled=False condition,
    the nominated node to set ("" clears)."""

    key: str
    action: str
    node: Optional[str] = None
    message: str = ""
    reason: str = "Unschedulable"
    nominated: Optional[str] = None


def group_message_for_fit_pod(group: Status) -> str:
    """A pod that fit while its group was rejected: NewStatus(Unschedulable,
    groupStatus.Message()).WithError(errPodGroupUnschedulable) — 1.37's duplicated prefix."""
    return ", ".join([ERR_POD_GROUP_UNSCHEDULABLE, group.message()])


def submit_actions(result: AlgorithmResult, pod_keys: Sequence[str]) -> list[SubmitAction]:
    """submitPodGroupAlgorithmResult's per-pod matrix (bind / own status / group status / nominate)."""
    if len(result.pods) != len(pod_keys):
        err = Status(Code.ERROR, [ERR_SOME_PODS_NOT_PROCESSED])
        return [SubmitAction(k, ERROR, message=err.message(), reason="SchedulerError", nominated="") for k in pod_keys]
    out = []
    group = result.status
    for r in result.pods:
        if group.code == Code.ERROR:
            own = r.status if r.status is not None and r.status.code == Code.ERROR else group
            out.append(SubmitAction(r.key, ERROR, message=own.message(), reason="SchedulerError", nominated=""))
        elif not r.evaluated or not r.fit:
            # FailureHandler(podResult.status, podResult.scheduleResult.nominatingInfo): its own (or
            # the padded group) status, and the PostFilter's nomination when it made one for it
            action = REJECT_GROUP if not r.evaluated else REJECT_OWN
            nominated = result.nominations.get(r.key) if result.waiting_on_preemption else None
            out.append(SubmitAction(r.key, NOMINATE if nominated else action,
                                    message=r.status.message() if r.status else group.message(),
                                    nominated=nominated))
        elif group.is_success():
            out.append(SubmitAction(r.key, BIND, node=r.node))
        elif result.waiting_on_preemption:
            out.append(SubmitAction(r.key, NOMINATE, message=group.message(),
                                    nominated=result.nominations.get(r.key)))
        else:
            out.append(SubmitAction(r.key, REJECT_GROUP, message=group_message_for_fit_pod(group)))
    return out


def validate_pod_group(pods: Sequence[tuple[str, int, str]], group_priority: Optional[int],
                       group_preemption_policy: Optional[str] = None, preemption_policy_gate: bool = False,
                       scheduled: Sequence[tuple[str, int, str]] = ()) -> Optional[str]:
    """validatePodGroup over ``(schedulerName, priority, preemptionPolicy)`` of the queued pods and
    the already scheduled ones: one scheduler name; every pod's priority equals the group's
    (nil = 0); the preemption policy equals the group's (gate on, default PreemptLowerPriority) or
    is shared by all pods (gate off). Returns the error text or None."""
    every = [*pods, *scheduled]
    if not every:
        return None
    first_name = every[0][0]
    want = group_priority or 0
    group_policy = (group_preemption_policy or "PreemptLowerPriority") if preemption_policy_gate else ""
    for name, prio, policy in every:  # validatePod, queued pods first, then validateScheduledPods
        if name != first_name:
            return MSG_SCHEDULER_NAME_MISMATCH.format(name, first_name)
        if prio != want:
            return MSG_PRIORITY_MISMATCH.format(prio, want)
        if preemption_policy_gate:
            if policy != group_policy:
                return MSG_PREEMPTION_POLICY_MISMATCH.format(policy, group_policy)
        elif not group_policy:
            group_policy = policy
        elif policy != group_policy:
            return MSG_PREEMPTION_POLICY_MISMATCH_PODS.format(policy, group_policy)
    return None


#: validatePodGroup over a CompositePodGroup hierarchy (schedule_one_podgroup.go)
MSG_TREE_GROUP_PRIORITY = ("all pod groups in a hierarchy should have the same priority as the root pod group's "
                           "priority, got {} (\"{}\") and {} (\"{}\")")
MSG_TREE_GROUP_POLICY = ("all pod groups in a hierarchy should have the same preemption policy as the root pod "
                         "group's preemption policy, got {} (\"{}\") and {} (\"{}\")")
MSG_TREE_SCHEDULER_NAME = ("all pods in a pod group hierarchy should have the same .spec.schedulerName set, "
                           "got: \"{}\" (\"{}\") and \"{}\" (\"{}\")")
MSG_TREE_POD_PRIORITY = ("all pods in a pod group hierarchy should have the same priority as the root pod group's "
                         "priority, got {} (\"{}\") and {} (\"{}\")")
MSG_TREE_POD_POLICY = ("all pods in a pod group hierarchy should have the same preemption policy as the root pod "
                       "group's preemption policy, got {} (\"{}\") and {} (\"{}\")")
MSG_TREE_POD_POLICY_PODS = "all pods in a pod group hierarchy should have the same preemption policy, got {} (\"{}\") and {} (\"{}\")"

#: one node of the hierarchy in validatePodGroupHierarchy order: (entity key, group priority (nil =
#: 0), group preemption policy, its pods as (name, schedulerName, priority, preemptionPolicy):
#: the queued ones, then the scheduled ones; none for a composite node)
TreeNodeFacts = tuple[str, int, str, Sequence[tuple[str, str, int, str]]]


def validate_pod_group_hierarchy(nodes: Sequence[TreeNodeFacts], first_pod: Optional[tuple[str, str, str]],
                                 preemption_policy_gate: bool = False) -> Optional[str]:
    """validatePodGroup for a CompositePodGroup root: every group of the tree (pre-order, root first)
    has the root's priority (and, gate on, its preemption policy); every pod the first queued pod's
    schedulerName ``first_pod = (name, schedulerName, policy)``, the root's priority, and the root's
    policy (gate on) or the first pod's (gate off). Returns the error text or None."""
    if not nodes:
        return None
    root_key, root_prio, root_policy, _ = nodes[0]
    first_name, scheduler_name, first_policy = first_pod if first_pod is not None else ("", "", "")
    if not preemption_policy_gate:
        root_policy = first_policy
    for key, prio, policy, pods in nodes:
        if prio != root_prio:
            return MSG_TREE_GROUP_PRIORITY.format(prio, key, root_prio, root_key)
        if preemption_policy_gate and policy != root_policy:
            return MSG_TREE_GROUP_POLICY.format(policy, key, root_policy, root_key)
        for name, sname, pprio, ppolicy in pods:
            if sname != scheduler_name:
                return MSG_TREE_SCHEDULER_NAME.format(sname, name, scheduler_name, first_name)
            if pprio != root_prio:
                return MSG_TREE_POD_PRIORITY.format(pprio, name, root_prio, root_key)
            if ppolicy != root_policy:
                if preemption_policy_gate:
                    return MSG_TREE_POD_POLICY.format(ppolicy, name, root_policy, root_key)
                return MSG_TREE_POD_POLICY_PODS.format(ppolicy, name, root_policy, first_name)
    return None


def update_pod_group_condition(conditions: list[dict[str, Any]], status: Status, now: str,
                               generation: Optional[int] = None, error: bool = False) -> bool:
    """updatePodGroupCondition: PodGroupInitiallyScheduled True/Scheduled on Success, False with
    reason Unschedulable or SchedulerError; never regressed once True; LastTransitionTime moves only
    when the status flips (SetStatusCondition). Returns whether ``conditions`` changed."""
    if status.is_success():
        want = {"status": "True", "reason": "Scheduled", "message": status.message()}
    else:
        want = {"status": "False", "reason": "SchedulerError" if error or status.code == Code.ERROR else "Unschedulable",
                "message": status.message()}
    current = next((c for c in conditions if c.get("type") == "PodGroupInitiallyScheduled"), None)
    if current is not None and current.get("status") == "True" and want["status"] == "False":
        return False
    if current is None:
        conditions.append({"type": "PodGroupInitiallyScheduled", **want, "lastTransitionTime": now,
                           "observedGeneration": generation})
        return True
    changed = False
    if current.get("status") != want["status"]:
        current["lastTransitionTime"] = now
        changed = True
    for k, v in (*want.items(), ("observedGeneration", generation)):
        if current.get(k) != v:
            current[k] = v
            changed = True
    return changed


def run_pod_group_cycle(pod_keys: Sequence[str], min_count: Optional[int], scheduled_count: int,
                        schedule: ScheduleFn, assume: Callable[[str, str], None], revert: Callable[[str], None],
                        placement_hook: Optional[Callable[..., AlgorithmResult]] = None,
                        post_filter_hook: Optional[Callable[[AlgorithmResult, Callable[[], AlgorithmResult]],
                                                            Optional[PostFilterResult]]] = None) -> AlgorithmResult:
    """podGroupCycle steps a–c: the root algorithm (``placement_hook`` when TAS is on, else
    :func:`default_algorithm`), padding, and on Unschedulable the PodGroupPostFilter hook, which
    receives the result and a re-run of the algorithm (pgSchedulingFunc)."""
    def algorithm() -> AlgorithmResult:
        if placement_hook is not None:
            return placement_hook(pod_keys, min_count, scheduled_count, schedule, assume, revert)
        return default_algorithm(pod_keys, min_count, scheduled_count, schedule, assume, revert)
    result = complete_result(algorithm(), pod_keys)
    if result.status.code == Code.UNSCHEDULABLE and post_filter_hook is not None:
        result = apply_post_filter(result, post_filter_hook(result, algorithm))
    return result
