"""A hand-built cluster for the static controllers, as upstream's static suites build theirs
(ExpectApplied NodeClaim + Node pairs, ExpectMakeNodesAndNodeClaimsInitializedAndStateUpdated):
Karpenter's fake catalogue, NodeClaims created through the provisioner's ToNodeClaim, the NodePool
state updated as the informers would."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from karpy.api.builders import make_nodepool
from karpy.api.meta import Condition
from tests.disruption.harness import Env, ts
from karpy.provisioning.nodepoolvalidation import nodepool_is_ready
from karpy.provisioning.provisioner import Provisioner
from karpy.state.cluster import ClusterState
from karpy.static.nodepoolstate import NodePoolState


def static_pool(name: str = "default", replicas: int | None = 1, **kw: Any) -> Any:
    """test.StaticNodePool: a NodePool with ``replicas`` (limits only ``nodes``, when given)."""
    return make_nodepool(name, replicas=replicas, **kw)


class Harness:
    """Env (nodes, NodeClaims, pods) + NodePoolState + the StaticHost / DeprovisioningHost."""

    def __init__(self) -> None:
        self.env = Env()
        self.provisioner = Provisioner(self.env.provider)
        self.state = NodePoolState()
        self.created: list[Any] = []  # NodeClaim models created by the controller
        self.deleted: list[str] = []
        self.fail_create = False
        self.fail_delete = False
        self.now = self.env.now
        self._n = 0

    # -- building the cluster ------------------------------------------------------------------
    def node(self, name: str, pool: str = "default", **kw: Any) -> tuple[Any, Any]:
        """A launched, registered, initialized NodeClaim + Node of ``pool``, tracked as active."""
        node, claim = self.env.node(name, pool=pool, **kw)
        self.state.update_nodeclaim(pool, name, False)
        return node, claim

    def unresolved(self, name: str, pool: str = "default") -> Any:
        """A NodeClaim without providerID (not launched yet, or its Create failed), tracked as active."""
        _, claim = self.env.node(name, pool=pool, with_node=False)
        claim.status.provider_id = None
        self.state.update_nodeclaim(pool, name, False)
        return claim

    def mark_for_deletion(self, name: str) -> None:
        """cluster.MarkForDeletion."""
        self.env.marked.add(name)
        pool = next(c for c in self.env.claims if c.metadata.name == name).metadata.labels["karpenter.sh/nodepool"]
        self.state.mark_deleting(pool, name)

    def names(self) -> list[str]:
        return sorted([c.metadata.name for c in self.env.claims] + [c.metadata.name for c in self.created])

    # -- StaticHost ---------------------------------------------------------------------------------
    def is_managed(self, nodepool: Any) -> bool:
        ref = nodepool.spec.template.spec.node_class_ref
        return ref is None or ref.kind != "UnmanagedNodeClass"

    def is_ready(self, nodepool: Any) -> bool:
        return nodepool_is_ready(nodepool)

    def create(self, claims: Sequence[Any]) -> list[str | BaseException]:
        out: list[str | BaseException] = []
        for claim in claims:
            if self.fail_create:
                out.append(RuntimeError("simulated error creating nodeclaims"))
                continue
            model = self.provisioner.to_nodeclaim(claim)
            self._n += 1
            model.metadata.name = f"{claim.nodepool_name}-{self._n:03d}"
            self.created.append(model)
            self.state.update_nodeclaim(claim.nodepool_name, model.metadata.name, False)  # Create -> UpdateNodeClaim
            out.append(model.metadata.name)
        return out

    # -- DeprovisioningHost -------------------------------------------------------------------------
    def list_nodeclaims(self, nodepool: str) -> list[Any]:
        return [c for c in self.env.claims + self.created
                if (c.metadata.labels or {}).get("karpenter.sh/nodepool") == nodepool]

    def cluster(self) -> ClusterState:
        claims = [c for c in self.env.claims if c.status.provider_id]
        return ClusterState.from_objects(self.env.nodes, claims, self.env.pods, self.env.marked)

    def delete(self, nodeclaim: str) -> str | None:
        if self.fail_delete:
            return "simulated error deleting nodeclaims"
        self.deleted.append(nodeclaim)
        self.env.claims = [c for c in self.env.claims if c.metadata.name != nodeclaim]
        self.env.nodes = [n for n in self.env.nodes if n.metadata.name != nodeclaim]
        return None

    def informer_cleanup(self) -> None:
        """The NodeClaim informer sees the deletions (NodePoolState.Cleanup)."""
        for name in self.deleted:
            self.state.cleanup(name)


def not_ready(nodepool: Any) -> Any:
    nodepool.status.conditions = [Condition(type="Ready", status="False", reason="ValidationFailed",
                                            last_transition_time=ts(0))]
    return nodepool
