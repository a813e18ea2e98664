"""Pod predicates: pkg/utils/pod/scheduling.go, one module as upstream's package.

Provisioning's (IsProvisionable, FailedToSchedule, IsScheduled, IsPreempting, IsOwnedBy...,
HasRequiredPodAntiAffinity, HasPodAntiAffinity, HasPreferredNodeAffinity, HasDRARequirements,
IsTerminal, IsTerminating) and the disruption and termination controllers' (IsActive,
IsReschedulable, IsEvictable, IsWaitingEviction, IsDrainable, IsPodEligibleForForcedEviction,
IsDisruptable, IsStuckTerminating, IsOwnedByStatefulSet, IsDoNotDisruptActive,
ToleratesDisruptedNoScheduleTaint, IsPending).

Time is the virtual clock's: ``now`` is seconds since :data:`karpy.api.time.EPOCH`, pod
timestamps (``status.startTime``, ``metadata.deletionTimestamp``) are converted with
:func:`karpy.utils.duration.to_seconds`. Upstream publishes events from IsDoNotDisruptActive; here
an optional ``events`` list receives ``(reason, pod key, message)`` tuples instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy.scheduling.labels import DO_NOT_DISRUPT_ANNOTATION_KEY
from karpy.scheduling.taints import TaintSpec, tolerates
from karpy.utils.duration import DurationError, parse_go_duration, to_rfc3339, to_seconds

if TYPE_CHECKING:  # pragma: no cover
    from karpy.api.pod import Pod

__all__ = [
    "DISRUPTED_NO_SCHEDULE_TAINT",
    "DISRUPTED_TAINT_KEY",
    "STUCK_TERMINATING_SECONDS",
    "do_not_disrupt_until",
    "failed_to_schedule",
    "has_dra_requirements",
    "has_pod_anti_affinity",
    "has_preferred_node_affinity",
    "has_required_pod_anti_affinity",
    "is_active",
    "is_disruptable",
    "is_do_not_disrupt_active",
    "is_drainable",
    "is_evictable",
    "is_owned_by",
    "is_owned_by_daemonset",
    "is_owned_by_node",
    "is_owned_by_statefulset",
    "is_pending",
    "is_pod_eligible_for_forced_eviction",
    "is_preempting",
    "is_provisionable",
    "is_reschedulable",
    "is_scheduled",
    "is_stuck_terminating",
    "is_terminal",
    "is_terminating",
    "is_waiting_eviction",
    "tolerates_disrupted_no_schedule_taint",
]

#: pkg/apis/v1/taints.go DisruptedTaintKey / DisruptedNoScheduleTaint (no value)
DISRUPTED_TAINT_KEY = "karpenter.sh/disrupted"
DISRUPTED_NO_SCHEDULE_TAINT = TaintSpec(DISRUPTED_TAINT_KEY, None, "NoSchedule")
#: scheduling.go IsStuckTerminating: one minute past the deletionTimestamp
STUCK_TERMINATING_SECONDS = 60.0

Events = list[tuple[str, str, str]] | None


def is_active(pod: Pod) -> bool:
    """IsActive: not terminal and not terminating."""
    return not is_terminal(pod) and not is_terminating(pod)


def is_owned_by_statefulset(pod: Pod) -> bool:
    """IsOwnedByStatefulSet: ownerReference apps/v1 StatefulSet."""
    return is_owned_by(pod, "apps/v1", "StatefulSet")


def is_pending(pod: Pod) -> bool:
    """IsPending: phase Pending."""
    return bool(pod.status.phase == "Pending")


def is_reschedulable(pod: Pod) -> bool:
    """IsReschedulable: (active, or a terminating StatefulSet pod) and neither a DaemonSet nor a
    mirror pod."""
    return ((is_active(pod) or (is_owned_by_statefulset(pod) and is_terminating(pod)))
            and not is_owned_by_daemonset(pod) and not is_owned_by_node(pod))


def tolerates_disrupted_no_schedule_taint(pod: Pod) -> bool:
    """ToleratesDisruptedNoScheduleTaint."""
    return tolerates((DISRUPTED_NO_SCHEDULE_TAINT,), pod.spec.tolerations or ()) is None


def is_stuck_terminating(pod: Pod, now: float) -> bool:
    """IsStuckTerminating: terminating for more than a minute past its deletionTimestamp."""
    deleted = to_seconds(pod.metadata.deletion_timestamp)
    return deleted is not None and now - deleted > STUCK_TERMINATING_SECONDS


def do_not_disrupt_until(pod: Pod, events: Events = None) -> float | None:
    """The virtual time the pod's do-not-disrupt protection ends: ``inf`` for ``"true"`` (or a
    duration with no ``status.startTime``, upstream's fail-safe), ``None`` when it never applies
    (absent or invalid annotation; an invalid one records ``InvalidDoNotDisruptAnnotation``)."""
    value = (pod.metadata.annotations or {}).get(DO_NOT_DISRUPT_ANNOTATION_KEY)
    if value is None:
        return None
    if value == "true":
        return float("inf")
    try:
        d = parse_go_duration(value)
        err = None if d > 0 else f'duration "{value}" must be positive'
    except DurationError as e:
        err = f'failed to parse "{value}" as a duration: {e}'
    if err is not None:
        if events is not None:
            events.append(("InvalidDoNotDisruptAnnotation", pod.key,
                           f"Invalid karpenter.sh/do-not-disrupt annotation: {err}, ignoring annotation"))
        return None
    start = to_seconds(pod.status.start_time)
    if start is None:
        return float("inf")
    return start + d


def is_do_not_disrupt_active(pod: Pod, now: float, events: Events = None) -> bool:
    """IsDoNotDisruptActive: ``"true"``, or a positive Go duration not yet elapsed since
    ``status.startTime`` (no start time: active). Invalid values count as absent. The duration
    form records ``DoNotDisruptUntil`` / ``DoNotDisruptGracePeriodElapsed`` as upstream does."""
    until = do_not_disrupt_until(pod, events)
    if until is None:
        return False
    active = now < until
    value = (pod.metadata.annotations or {}).get(DO_NOT_DISRUPT_ANNOTATION_KEY)
    if events is not None and value != "true" and until != float("inf"):
        if active:
            at = to_rfc3339(until)
            events.append(("DoNotDisruptUntil", pod.key,
                           f"The karpenter.sh/do-not-disrupt grace period will elapse at {at}"))
        else:
            events.append(("DoNotDisruptGracePeriodElapsed", pod.key,
                           "The karpenter.sh/do-not-disrupt grace period has elapsed, pod is now disruptable"))
    return active


def is_disruptable(pod: Pod, now: float, events: Events = None) -> bool:
    """IsDisruptable: inactive pods always are; otherwise no active do-not-disrupt."""
    return not is_active(pod) or not is_do_not_disrupt_active(pod, now, events)


def is_evictable(pod: Pod, now: float, events: Events = None) -> bool:
    """IsEvictable: active, not tolerating karpenter.sh/disrupted:NoSchedule, not a mirror pod, no
    active do-not-disrupt."""
    return (is_active(pod) and not tolerates_disrupted_no_schedule_taint(pod) and not is_owned_by_node(pod)
            and not is_do_not_disrupt_active(pod, now, events))


def is_drainable(pod: Pod, now: float) -> bool:
    """IsDrainable: does not tolerate the disrupted taint, not stuck terminating, not a mirror pod
    (do-not-disrupt pods *are* drainable: the drain waits for them)."""
    return (not tolerates_disrupted_no_schedule_taint(pod) and not is_stuck_terminating(pod, now)
            and not is_owned_by_node(pod))


def is_waiting_eviction(pod: Pod, now: float) -> bool:
    """IsWaitingEviction: not terminal and drainable."""
    return not is_terminal(pod) and is_drainable(pod, now)


def is_pod_eligible_for_forced_eviction(pod: Pod, grace_expiration: float | None) -> bool:
    """IsPodEligibleForForcedEviction: terminating with a deletionTimestamp after the node's
    terminationGracePeriod expiration."""
    deleted = to_seconds(pod.metadata.deletion_timestamp)
    return grace_expiration is not None and deleted is not None and deleted > grace_expiration


def is_owned_by(pod: Pod, api_version: str, kind: str) -> bool:
    """Any ownerReference with exactly this apiVersion and kind (scheduling.go IsOwnedBy)."""
    for ref in pod.metadata.owner_references or ():
        if ref.api_version == api_version and ref.kind == kind:
            return True
    return False


def is_owned_by_daemonset(pod: Pod) -> bool:
    """scheduling.go IsOwnedByDaemonSet: ownerReference apps/v1 DaemonSet."""
    return is_owned_by(pod, "apps/v1", "DaemonSet")


def is_owned_by_node(pod: Pod) -> bool:
    """scheduling.go IsOwnedByNode: static / mirror pods (ownerReference v1 Node)."""
    return is_owned_by(pod, "v1", "Node")


def failed_to_schedule(pod: Pod) -> bool:
    """scheduling.go FailedToSchedule: a PodScheduled condition with reason Unschedulable.

    The condition *status* and the pod phase are deliberately not checked (upstream).
    """
    for cond in pod.status.conditions or ():
        if cond.type == "PodScheduled" and cond.reason == "Unschedulable":
            return True
    return False


def is_scheduled(pod: Pod) -> bool:
    """scheduling.go IsScheduled: spec.nodeName is set."""
    return bool(pod.spec.node_name)


def is_preempting(pod: Pod) -> bool:
    """scheduling.go IsPreempting: status.nominatedNodeName is set."""
    return bool(pod.status.nominated_node_name)


def is_provisionable(pod: Pod) -> bool:
    """scheduling.go IsProvisionable (:102-108), exactly.

    Upstream tests FailedToSchedule first; here a bound pod (the common case, every pass walks
    every pod) is answered by its ``spec.nodeName`` before its conditions are walked. Not in
    upstream; same result because the five tests only read the pod and are joined by ``and``, so
    their order cannot change the answer. ``is_scheduled`` is read inline (``spec.nodeName``,
    exactly its test): a function call less per pod of those walks."""
    if pod.spec.node_name:
        return False
    return (
        failed_to_schedule(pod)
        and not is_preempting(pod)
        and not is_owned_by_daemonset(pod)
        and not is_owned_by_node(pod)
    )


def is_terminal(pod: Pod) -> bool:
    """scheduling.go IsTerminal: phase Failed or Succeeded."""
    return pod.status.phase in ("Failed", "Succeeded")


def is_terminating(pod: Pod) -> bool:
    """scheduling.go IsTerminating: deletionTimestamp set."""
    return pod.metadata.deletion_timestamp is not None


def has_required_pod_anti_affinity(pod: Pod) -> bool:
    """scheduling.go HasRequiredPodAntiAffinity."""
    aff = pod.spec.affinity
    return bool(
        aff is not None
        and aff.pod_anti_affinity is not None
        and aff.pod_anti_affinity.required_during_scheduling_ignored_during_execution
    )


def has_pod_anti_affinity(pod: Pod) -> bool:
    """scheduling.go HasPodAntiAffinity: required or preferred anti-affinity terms."""
    aff = pod.spec.affinity
    if aff is None or aff.pod_anti_affinity is None:
        return False
    paa = aff.pod_anti_affinity
    return bool(
        paa.required_during_scheduling_ignored_during_execution
        or paa.preferred_during_scheduling_ignored_during_execution
    )


def has_preferred_node_affinity(pod: Pod) -> bool:
    """scheduling.go HasPreferredNodeAffinity."""
    aff = pod.spec.affinity
    return bool(
        aff is not None
        and aff.node_affinity is not None
        and aff.node_affinity.preferred_during_scheduling_ignored_during_execution
    )


def has_dra_requirements(pod: Pod) -> bool:
    """scheduling.go HasDRARequirements: the pod references a ResourceClaim, at the pod level or
    consumed by any init or regular container."""
    spec = pod.spec
    if getattr(spec, "resource_claims", None):
        return True
    return any(c.resources.claims for c in (*spec.init_containers, *spec.containers))
