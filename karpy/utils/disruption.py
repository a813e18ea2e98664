"""Disruption costs: pkg/utils/disruption/disruption.go (EvictionCost, ReschedulingCost,
LifetimeRemaining), shared by the disruption controller and static NodePools' deprovisioning."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from karpy.utils.duration import to_seconds

if TYPE_CHECKING:  # pragma: no cover
    from karpy.api.nodeclaim import NodeClaim
    from karpy.api.pod import Pod

__all__ = ["POD_DELETION_COST_ANNOTATION", "eviction_cost", "lifetime_remaining", "rescheduling_cost"]

POD_DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"


def eviction_cost(pod: Pod) -> float:
    """disruption.go EvictionCost: 1 + deletionCost/2^27 + priority/2^25, clamped to [-10, 10]
    (an unparsable deletion cost is skipped)."""
    cost = 1.0
    raw = (pod.metadata.annotations or {}).get(POD_DELETION_COST_ANNOTATION)
    if raw is not None:
        try:
            cost += float(raw) / 2**27
        except ValueError:
            pass
    if pod.spec.priority is not None:
        cost += pod.spec.priority / 2**25
    return min(max(cost, -10.0), 10.0)


def rescheduling_cost(pods: Sequence[Pod]) -> float:
    """disruption.go ReschedulingCost: Σ EvictionCost (negatives kept)."""
    return sum(eviction_cost(p) for p in pods)


def lifetime_remaining(nodeclaim: NodeClaim | None, now: float) -> float:
    """disruption.go LifetimeRemaining: ``(expireAfter − age) / expireAfter`` in [0, 1], 1 without
    an expireAfter."""
    expire = nodeclaim.spec.expire_after_seconds if nodeclaim is not None else None
    if nodeclaim is None or not expire:
        return 1.0
    created = to_seconds(nodeclaim.metadata.creation_timestamp) or 0.0
    return min(max((expire - (now - created)) / expire, 0.0), 1.0)
