"""The static deprovisioning controller: delete NodeClaims while a static NodePool has more than
``replicas``.

Mirrors pkg/controllers/static/deprovisioning/controller.go (Reconcile, getDeprovisioningCandidates,
unresolvedDeprovisioningCandidates, resolvedDeprovisioningCandidates, HasNodePoolReplicaCountChanged).
Only running NodeClaims count (not deleting ones, not those pending disruption), so StaticDrift's
replacements never look like over-provisioning. ``running - replicas`` NodeClaims are deleted
(through the termination controller, as a client Delete is) and marked deleting, picked in
upstream's order:

1. unresolved NodeClaims (no providerID: not launched yet, or their Create failed);
2. empty nodes -- no pods, or only DaemonSet pods none of which has an active
   ``karpenter.sh/do-not-disrupt``;
3. the other nodes, those without an active do-not-disrupt pod first, then by
   ReschedulingCost(pods) x LifetimeRemaining, ascending.

Deterministic rule (upstream lists NodeClaims in the API server's name order but ranges a map of
state nodes and sorts with an unstable sort): every tier is in NodeClaim name order, and equal
costs keep it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from karpy.scheduling.labels import LABEL_NODEPOOL
from karpy.state.cluster import ClusterState
from karpy.static.nodepoolstate import NodePoolState
from karpy.static.provisioning import REQUEUE, ReconcileResult
from karpy.utils.disruption import lifetime_remaining, rescheduling_cost
from karpy.utils.pod import is_do_not_disrupt_active, is_owned_by_daemonset

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = ["TERMINATION_REASON", "DeprovisioningHost", "deprovisioning_candidates",
           "has_nodepool_replica_count_changed", "reconcile"]

#: controller.go TerminationReason (the ``deleted_by`` of a NodeClaim this controller deletes)
TERMINATION_REASON = "overprovisioned"


class DeprovisioningHost(Protocol):
    """What the deprovisioning controller asks of the cluster (the simulation implements it)."""

    @property
    def now(self) -> float: ...

    def is_managed(self, nodepool: Any) -> bool: ...
    def list_nodeclaims(self, nodepool: str) -> list[Any]: ...
    def cluster(self) -> ClusterState: ...
    def delete(self, nodeclaim: str) -> str | None: ...


def has_nodepool_replica_count_changed(old: Any, new: Any) -> bool:
    """HasNodePoolReplicaCountChanged (nil = 0)."""
    return (old.spec.replicas or 0) != (new.spec.replicas or 0)


@dataclass
class _NonEmpty:
    name: str
    nodeclaim: Any
    pods: list[Pod]
    has_do_not_disrupt: bool


def _unresolved(host: DeprovisioningHost, nodepool: str, count: int) -> list[str]:
    """unresolvedDeprovisioningCandidates: NodeClaims without a providerID, not deleting."""
    out = []
    for nc in sorted(host.list_nodeclaims(nodepool), key=lambda c: c.metadata.name):
        if not getattr(nc.status, "provider_id", None) and nc.metadata.deletion_timestamp is None:
            out.append(nc.metadata.name)
    return out[:count]


def _resolved(host: DeprovisioningHost, nodepool: Any, count: int) -> list[str]:
    """resolvedDeprovisioningCandidates over the pool's state nodes with a NodeClaim that are not
    marked for deletion."""
    now = host.now
    nodes = sorted((sn for sn in host.cluster().nodes
                    if sn.labels().get(LABEL_NODEPOOL) == nodepool.metadata.name and sn.nodeclaim is not None
                    and not sn.marked_for_deletion()), key=lambda sn: sn.name)
    if not nodes:
        return []
    empty, rest = [], []
    for sn in nodes:
        claim = sn.nodeclaim
        assert claim is not None  # filtered above
        pods = sorted(sn.pods, key=lambda p: p.key) if sn.node is not None else []
        dnd = any(is_do_not_disrupt_active(p, now) for p in pods)
        if not pods or (all(is_owned_by_daemonset(p) for p in pods) and not dnd):
            empty.append(claim.metadata.name)
        else:
            rest.append(_NonEmpty(claim.metadata.name, claim, pods, dnd))
    out = empty[:count]
    remaining = count - len(out)
    if remaining <= 0:
        return out
    rest.sort(key=lambda n: (n.has_do_not_disrupt,
                             rescheduling_cost(n.pods) * lifetime_remaining(n.nodeclaim, now)))
    return out + [n.name for n in rest[:remaining]]


def deprovisioning_candidates(host: DeprovisioningHost, nodepool: Any, count: int) -> list[str]:
    """getDeprovisioningCandidates: unresolved NodeClaims, then empty nodes, then by disruption
    cost (see the module docstring)."""
    out = _unresolved(host, nodepool.metadata.name, count)
    if len(out) >= count:
        return out
    return out + _resolved(host, nodepool, count - len(out))


def reconcile(nodepool: Any, state: NodePoolState, host: DeprovisioningHost) -> ReconcileResult:
    """controller.go Reconcile: delete ``running - replicas`` NodeClaims (see the module docstring).
    ``created`` of the result holds the NodeClaims deleted."""
    if not host.is_managed(nodepool) or nodepool.spec.replicas is None or nodepool.metadata.deletion_timestamp is not None:
        return ReconcileResult()
    name = nodepool.metadata.name
    running, _, _ = state.get_node_count(name)
    excess = running - int(nodepool.spec.replicas)
    if excess <= 0:
        return ReconcileResult(REQUEUE)
    deleted: list[str] = []
    errors: list[str] = []
    for nc in deprovisioning_candidates(host, nodepool, excess):
        err = host.delete(nc)
        if err is not None:
            errors.append(err)
            continue
        deleted.append(nc)
        state.mark_deleting(name, nc)
    if errors:
        return ReconcileResult(0.0, tuple(deleted), f"failed to deprovision nodeclaims, {'; '.join(errors)}")
    return ReconcileResult(REQUEUE, tuple(deleted), message="deprovisioning nodeclaims to satisfy replica count")
