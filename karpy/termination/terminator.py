"""Node termination: taint, drain in upstream's four tiers with PDB-respecting eviction, then
delete the instance.

Mirrors pkg/controllers/node/termination/controller.go (finalize: taint, awaitDrain with
MinDrainTime, instance termination) and terminator/terminator.go (Taint, Drain, groupPodsByPriority)
and terminator/eviction.go (the Eviction API's PDB check, needsForceDelete at the
terminationGracePeriod deadline). Pods that tolerate ``karpenter.sh/disrupted:NoSchedule``,
mirror pods and terminal pods are never evicted and never block. A pod with an active
do-not-disrupt annotation is not evicted and blocks the drain until the NodeClaim's
terminationGracePeriod deadline (if any) force-deletes it.

The simulation side (pod deletion after its grace period, workload replicas coming back pending)
is the caller's: :class:`Terminator` asks ``evict(pod_key, grace_seconds)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from karpy.utils.duration import to_seconds
from karpy.utils.pdb import Limits
from karpy.utils.pod import is_active, is_evictable, is_owned_by_daemonset, is_terminating, is_waiting_eviction

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = ["CRITICAL_PRIORITY_CLASSES", "MIN_DRAIN_TIME", "DrainResult", "Terminator", "group_pods_by_priority"]

#: node/termination/controller.go MinDrainTime
MIN_DRAIN_TIME = 5.0
#: terminator.go: "critical" pods drain last
CRITICAL_PRIORITY_CLASSES = frozenset({"system-cluster-critical", "system-node-critical"})
#: requeue while draining (controller.go: 1 s)
DRAIN_REQUEUE = 1.0


def group_pods_by_priority(pods: Sequence[Pod]) -> list[list[Pod]]:
    """terminator.go groupPodsByPriority: non-critical non-DaemonSet, non-critical DaemonSet,
    critical non-DaemonSet, critical DaemonSet."""
    tiers: list[list[Any]] = [[], [], [], []]
    for p in pods:
        critical = p.spec.priority_class_name in CRITICAL_PRIORITY_CLASSES
        tiers[(2 if critical else 0) + (1 if is_owned_by_daemonset(p) else 0)].append(p)
    return tiers


class DrainResult:
    """One drain pass: pods evicted, pods force-deleted, the waiting count (0 = drained)."""

    __slots__ = ("evicted", "forced", "blocked", "waiting")

    def __init__(self) -> None:
        self.evicted: list[str] = []
        self.forced: list[str] = []
        self.blocked: list[tuple[str, str]] = []
        self.waiting = 0


class Terminator:
    """terminator.go Terminator over one node's pods."""

    def __init__(self, evict: Callable[[str, float], None]) -> None:
        self._evict = evict

    def drain(self, pods: Sequence[Pod], limits: Limits, now: float, deadline: float | None) -> DrainResult:
        """terminator.go Drain: enqueue the first non-empty tier (and, past the deadline, every pod
        that must be force-deleted); evict each one the Eviction API would allow."""
        res = DrainResult()
        waiting = sorted((p for p in pods if is_waiting_eviction(p, now)), key=lambda p: p.key)
        res.waiting = len(waiting)
        if not waiting:
            return res
        forced = [p for p in waiting if self._needs_force_delete(p, now, deadline)]
        for p in forced:
            grace = max(int((deadline or now) - now), 1)
            self._evict(p.key, float(grace))
            res.forced.append(p.key)
        done = {p.key for p in forced}
        for tier in group_pods_by_priority([p for p in waiting if p.key not in done]):
            if not tier:
                continue
            for p in tier:
                if not is_active(p):
                    continue
                if not is_evictable(p, now):
                    res.blocked.append((p.key, "do-not-disrupt"))
                    continue
                keys, ok = limits.can_evict_pods([p], now)
                if not ok:
                    res.blocked.append((p.key, "evicting pod violates a PDB" if len(keys) == 1
                                        else "eviction does not support multiple PDBs"))
                    continue
                self._evict(p.key, float(p.spec.termination_grace_period_seconds or 0))
                limits.record_eviction(p)  # the API server decrements the PDB's allowance
                res.evicted.append(p.key)
            break
        return res

    @staticmethod
    def _needs_force_delete(pod: Pod, now: float, deadline: float | None) -> bool:
        """eviction.go needsForceDelete (:226-238)."""
        if deadline is None:
            return False
        if is_terminating(pod):
            deleted = to_seconds(pod.metadata.deletion_timestamp)
            return deleted is not None and deleted > deadline
        tgps: float | None = pod.spec.termination_grace_period_seconds
        if tgps is None:
            return False
        return bool(now > deadline - tgps)
