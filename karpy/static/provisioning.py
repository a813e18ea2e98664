"""The static provisioning controller: create NodeClaims until a static NodePool has ``replicas``.

Mirrors pkg/controllers/static/provisioning/controller.go (Reconcile, HasNodePoolReplicaOrStatusChanged)
and the static half of pkg/controllers/provisioning/provisioner.go CreateNodeClaims (the node-count
reservation is released for every static NodeClaim, created or not) and
scheduling/nodeclaimtemplate.go (a static NodeClaim is its NodePool's template alone: no pods, no
instance-type options; the cloud provider's Create picks the type).

Reconcile, in upstream's order: nothing for a NodePool that is not the cloud provider's, not Ready,
not static or being deleted; the cluster is always synced in karpy (upstream waits 1 s otherwise);
nothing while ``running + pendingDisruption >= replicas`` (scale-down is the deprovisioning
controller's; drifting NodeClaims count as active while StaticDrift replaces them); otherwise
reserve ``replicas - running`` against ``limits.nodes`` (:class:`karpy.static.nodepoolstate.NodePoolState`)
and create that many NodeClaims at once. Requeue: 1 min, 30 s when the node limit is reached, none
after an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from karpy.provisioning.nodeclaimtemplate import NodeClaimTemplate
from karpy.scheduling.requirements import Requirements
from karpy.static.nodepoolstate import MAX_INT64, NodePoolState

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = ["LIMIT_REQUEUE", "NODE_LIMIT_REACHED", "REQUEUE", "ReconcileResult", "StaticHost", "StaticNodeClaim",
           "create_nodeclaims", "has_nodepool_replica_or_status_changed", "node_limit", "reconcile"]

#: controller.go: RequeueAfter after a reconcile that had nothing to do or created NodeClaims
REQUEUE = 60.0
#: controller.go: RequeueAfter when limits.nodes leaves nothing to reserve
LIMIT_REQUEUE = 30.0
#: controller.go log line when the node limit is reached
NODE_LIMIT_REACHED = "nodepool node limit reached"


class StaticNodeClaim:
    """``scheduling.NodeClaim{NodeClaimTemplate: *NewNodeClaimTemplate(np)}``: an in-flight
    NodeClaim of a static NodePool, with no pods and no instance-type options."""

    def __init__(self, nodepool: Any, well_known: frozenset[str]) -> None:
        self.template = NodeClaimTemplate(nodepool)
        self.nodepool_name: str = self.template.nodepool_name
        self.requirements: Requirements = self.template.requirements.copy()
        self.instance_type_options: list[Any] = []
        self.requests: dict[str, int] = {}
        self.pods: list[Pod] = []
        self.annotations: dict[str, str] = dict(self.template.annotations)
        self.labels: dict[str, str] = dict(self.template.labels)
        self.taints: list[Any] = self.template.taints
        self.well_known = well_known
        #: what explain reads of a scheduler's claim (no placeholder hostname, no DaemonSet groups)
        self.hostname = ""
        self.daemon_groups: list[Any] = []

    def __repr__(self) -> str:
        return f"StaticNodeClaim({self.nodepool_name!r})"


class StaticHost(Protocol):
    """What the static controllers ask of the cluster (the simulation implements it)."""

    def is_managed(self, nodepool: Any) -> bool: ...
    def is_ready(self, nodepool: Any) -> bool: ...
    def create(self, claims: Sequence[StaticNodeClaim]) -> list[str | BaseException]: ...


@dataclass(frozen=True)
class ReconcileResult:
    """reconcile.Result plus what happened: ``requeue_after`` seconds (0: none), the NodeClaims
    created, and the error (upstream's wrapped text) or the log line of a no-op."""

    requeue_after: float = 0.0
    created: tuple[str, ...] = ()
    error: str | None = None
    message: str | None = None


def node_limit(nodepool: Any) -> int:
    """``limits.nodes`` of the pool (Quantity.Value(): rounded up), or MaxInt64 without one."""
    return int(nodepool.static_node_count(MAX_INT64))


def create_nodeclaims(host: StaticHost, state: NodePoolState, claims: Sequence[StaticNodeClaim]
                      ) -> tuple[list[str], str | None]:
    """provisioner.go CreateNodeClaims: create every claim, then release one reserved node per
    static claim whether or not it was created. Returns (names created, the combined error)."""
    outcomes = host.create(claims) if claims else []
    names: list[str] = []
    errors: list[str] = []
    for claim, out in zip(claims, outcomes):
        if isinstance(out, BaseException):
            errors.append(f"creating node claim, {out}")
        else:
            names.append(out)
        if claim.template.is_static:
            state.release_node_count(claim.nodepool_name, 1)
    return names, ("; ".join(errors) or None)


def reconcile(nodepool: Any, state: NodePoolState, host: StaticHost, well_known: frozenset[str]) -> ReconcileResult:
    """controller.go Reconcile (see the module docstring)."""
    if (not host.is_managed(nodepool) or not host.is_ready(nodepool) or nodepool.spec.replicas is None
            or nodepool.metadata.deletion_timestamp is not None):
        return ReconcileResult()
    name = nodepool.metadata.name
    running, _, pending = state.get_node_count(name)
    desired = int(nodepool.spec.replicas)
    if running + pending >= desired:
        return ReconcileResult(REQUEUE)
    count = state.reserve_node_count(name, node_limit(nodepool), desired - running)
    if count <= 0:
        return ReconcileResult(LIMIT_REQUEUE, message=NODE_LIMIT_REACHED)
    claims = [StaticNodeClaim(nodepool, well_known) for _ in range(count)]
    names, err = create_nodeclaims(host, state, claims)
    if err is not None:
        return ReconcileResult(0.0, tuple(names), f"creating nodeclaims, {err}")
    return ReconcileResult(REQUEUE, tuple(names), message="provisioning nodeclaims to satisfy replica count")


def _ready(nodepool: Any) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in nodepool.status.conditions or ())


def has_nodepool_replica_or_status_changed(old: Any, new: Any) -> bool:
    """HasNodePoolReplicaOrStatusChanged: replicas differ (nil = 0), or Ready went to True."""
    if (old.spec.replicas or 0) != (new.spec.replicas or 0):
        return True
    return not _ready(old) and _ready(new)
