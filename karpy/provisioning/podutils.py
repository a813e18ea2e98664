"""Pod predicates used by provisioning.

Mirrors pkg/utils/pod/scheduling.go (IsProvisionable, FailedToSchedule, IsScheduled,
IsPreempting, IsOwnedByDaemonSet, IsOwnedByNode, HasRequiredPodAntiAffinity,
HasPreferredNodeAffinity, HasDRARequirements, IsTerminal, IsTerminating).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "failed_to_schedule",
    "has_dra_requirements",
    "has_preferred_node_affinity",
    "has_required_pod_anti_affinity",
    "has_pod_anti_affinity",
    "is_owned_by",
    "is_owned_by_daemonset",
    "is_owned_by_node",
    "is_preempting",
    "is_provisionable",
    "is_scheduled",
    "is_terminal",
    "is_terminating",
]


def is_owned_by(pod: Any, api_version: str, kind: str) -> bool:
    """Any ownerReference with exactly this apiVersion and kind (scheduling.go IsOwnedBy)."""
    for ref in pod.metadata.owner_references or ():
        if ref.api_version == api_version and ref.kind == kind:
            return True
    return False


def is_owned_by_daemonset(pod: Any) -> bool:
    """scheduling.go IsOwnedByDaemonSet: ownerReference apps/v1 DaemonSet."""
    return is_owned_by(pod, "apps/v1", "DaemonSet")


def is_owned_by_node(pod: Any) -> bool:
    """scheduling.go IsOwnedByNode: static / mirror pods (ownerReference v1 Node)."""
    return is_owned_by(pod, "v1", "Node")


def failed_to_schedule(pod: Any) -> bool:
    """scheduling.go FailedToSchedule: a PodScheduled condition with reason Unschedulable.

    The condition *status* and the pod phase are deliberately not checked (upstream).
    """
    for cond in pod.status.conditions or ():
        if cond.type == "PodScheduled" and cond.reason == "Unschedulable":
            return True
    return False


def is_scheduled(pod: Any) -> bool:
    """scheduling.go IsScheduled: spec.nodeName is set."""
    return bool(pod.spec.node_name)


def is_preempting(pod: Any) -> bool:
    """scheduling.go IsPreempting: status.nominatedNodeName is set."""
    return bool(pod.status.nominated_node_name)


def is_provisionable(pod: Any) -> bool:
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


def is_terminal(pod: Any) -> bool:
    """scheduling.go IsTerminal: phase Failed or Succeeded."""
    return pod.status.phase in ("Failed", "Succeeded")


def is_terminating(pod: Any) -> bool:
    """scheduling.go IsTerminating: deletionTimestamp set."""
    return pod.metadata.deletion_timestamp is not None


def has_required_pod_anti_affinity(pod: Any) -> bool:
    """scheduling.go HasRequiredPodAntiAffinity."""
    aff = pod.spec.affinity
    return bool(
        aff is not None
        and aff.pod_anti_affinity is not None
        and aff.pod_anti_affinity.required_during_scheduling_ignored_during_execution
    )


def has_pod_anti_affinity(pod: Any) -> bool:
    """scheduling.go HasPodAntiAffinity: required or preferred anti-affinity terms."""
    aff = pod.spec.affinity
    if aff is None or aff.pod_anti_affinity is None:
        return False
    paa = aff.pod_anti_affinity
    return bool(
        paa.required_during_scheduling_ignored_during_execution
        or paa.preferred_during_scheduling_ignored_during_execution
    )


def has_preferred_node_affinity(pod: Any) -> bool:
    """scheduling.go HasPreferredNodeAffinity."""
    aff = pod.spec.affinity
    return bool(
        aff is not None
        and aff.node_affinity is not None
        and aff.node_affinity.preferred_during_scheduling_ignored_during_execution
    )


def has_dra_requirements(pod: Any) -> bool:
    """scheduling.go HasDRARequirements: the pod references a ResourceClaim, at the pod level or
    consumed by any init or regular container."""
    spec = pod.spec
    if getattr(spec, "resource_claims", None):
        return True
    return any(c.resources.claims for c in (*spec.init_containers, *spec.containers))
