"""Pod predicates the disruption and termination controllers share.

Mirrors pkg/utils/pod/scheduling.go (IsActive, IsReschedulable, IsEvictable, IsWaitingEviction,
IsDrainable, IsPodEligibleForForcedEviction, IsDisruptable, IsStuckTerminating,
IsOwnedByStatefulSet, IsDoNotDisruptActive, ToleratesDisruptedNoScheduleTaint, IsPending). The
provisioning predicates (IsProvisionable, IsTerminal, IsOwnedByDaemonSet ...) live in
:mod:`karpy.provisioning.podutils` and are re-exported here.

Time is the virtual clock's: ``now`` is seconds since :data:`karpy.sim.clock.EPOCH`, pod
timestamps (``status.startTime``, ``metadata.deletionTimestamp``) are converted with
:func:`karpy.utils.duration.to_seconds`. Upstream publishes events from IsDoNotDisruptActive; here
an optional ``events`` list receives ``(reason, pod key, message)`` tuples instead.
"""

from __future__ import annotations

from typing import Any

from karpy.provisioning.podutils import (
    is_owned_by,
    is_owned_by_daemonset,
    is_owned_by_node,
    is_provisionable,
    is_terminal,
    is_terminating,
)
from karpy.scheduling.labels import DO_NOT_DISRUPT_ANNOTATION_KEY
from karpy.scheduling.taints import TaintSpec, tolerates
from karpy.utils.duration import DurationError, parse_go_duration, to_rfc3339, to_seconds

__all__ = [
    "DISRUPTED_NO_SCHEDULE_TAINT",
    "DISRUPTED_TAINT_KEY",
    "STUCK_TERMINATING_SECONDS",
    "do_not_disrupt_until",
    "is_active",
    "is_disruptable",
    "is_do_not_disrupt_active",
    "is_drainable",
    "is_evictable",
    "is_owned_by_daemonset",
    "is_owned_by_node",
    "is_owned_by_statefulset",
    "is_pending",
    "is_pod_eligible_for_forced_eviction",
    "is_provisionable",
    "is_reschedulable",
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


def is_active(pod: Any) -> bool:
    """IsActive: not terminal and not terminating."""
    return not is_terminal(pod) and not is_terminating(pod)


def is_owned_by_statefulset(pod: Any) -> bool:
    """IsOwnedByStatefulSet: ownerReference apps/v1 StatefulSet."""
    return is_owned_by(pod, "apps/v1", "StatefulSet")


def is_pending(pod: Any) -> bool:
    """IsPending: phase Pending."""
    return bool(pod.status.phase == "Pending")


def is_reschedulable(pod: Any) -> bool:
    """IsReschedulable: (active, or a terminating StatefulSet pod) and neither a DaemonSet nor a
    mirror pod."""
    return ((is_active(pod) or (is_owned_by_statefulset(pod) and is_terminating(pod)))
            and not is_owned_by_daemonset(pod) and not is_owned_by_node(pod))


def tolerates_disrupted_no_schedule_taint(pod: Any) -> bool:
    """ToleratesDisruptedNoScheduleTaint."""
    return tolerates((DISRUPTED_NO_SCHEDULE_TAINT,), pod.spec.tolerations or ()) is None


def is_stuck_terminating(pod: Any, now: float) -> bool:
    """IsStuckTerminating: terminating for more than a minute past its deletionTimestamp."""
    deleted = to_seconds(pod.metadata.deletion_timestamp)
    return deleted is not None and now - deleted > STUCK_TERMINATING_SECONDS


def do_not_disrupt_until(pod: Any, events: Events = None) -> float | None:
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


def is_do_not_disrupt_active(pod: Any, now: float, events: Events = None) -> bool:
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


def is_disruptable(pod: Any, now: float, events: Events = None) -> bool:
    """IsDisruptable: inactive pods always are; otherwise no active do-not-disrupt."""
    return not is_active(pod) or not is_do_not_disrupt_active(pod, now, events)


def is_evictable(pod: Any, now: float, events: Events = None) -> bool:
    """IsEvictable: active, not tolerating karpenter.sh/disrupted:NoSchedule, not a mirror pod, no
    active do-not-disrupt."""
    return (is_active(pod) and not tolerates_disrupted_no_schedule_taint(pod) and not is_owned_by_node(pod)
            and not is_do_not_disrupt_active(pod, now, events))


def is_drainable(pod: Any, now: float) -> bool:
    """IsDrainable: does not tolerate the disrupted taint, not stuck terminating, not a mirror pod
    (do-not-disrupt pods *are* drainable: the drain waits for them)."""
    return (not tolerates_disrupted_no_schedule_taint(pod) and not is_stuck_terminating(pod, now)
            and not is_owned_by_node(pod))


def is_waiting_eviction(pod: Any, now: float) -> bool:
    """IsWaitingEviction: not terminal and drainable."""
    return not is_terminal(pod) and is_drainable(pod, now)


def is_pod_eligible_for_forced_eviction(pod: Any, grace_expiration: float | None) -> bool:
    """IsPodEligibleForForcedEviction: terminating with a deletionTimestamp after the node's
    terminationGracePeriod expiration."""
    deleted = to_seconds(pod.metadata.deletion_timestamp)
    return grace_expiration is not None and deleted is not None and deleted > grace_expiration
