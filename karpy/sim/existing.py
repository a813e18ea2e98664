"""NodeClaims in the input: a cluster dump's Karpenter-made capacity, held as upstream's cluster state
holds it.

Mirrors pkg/controllers/state/cluster.go: a NodeClaim and its Node are one StateNode, tied by
``status.providerID`` (UpdateNodeClaim / UpdateNode key state nodes by provider id); karpy falls back
to ``status.nodeName`` (the Node Karpenter's registration recorded). Each tied pair becomes a
:class:`~karpy.sim.simulation.LaunchRecord` launched, registered and initialized at the start, so it
is what a NodeClaim karpy launched is: a disruption candidate, counted in its NodePool's limits and a
static NodePool's replicas, and priced from its instance type, zone and capacity type. The record is
named after its Node (the name its pods are bound to, by which the simulation finds a NodeClaim's
Node); the NodeClaim's own name finds it too (``Simulation.nodeclaim``, ``delete_nodeclaim``).

A Node that carries ``karpenter.sh/nodepool`` without a NodeClaim is a StateNode without a NodeClaim
upstream: ``Managed()`` is false, so it is never consolidated, drifted or expired (it still counts in
its NodePool's resources, by its label); a warning says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from karpy.provisioning.nodeclaimtemplate import NODEPOOL_HASH_VERSION
from karpy.scheduling.labels import (LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_NODEPOOL, LABEL_ZONE,
                                     NODE_INITIALIZED, NODE_REGISTERED, NODEPOOL_HASH_ANNOTATION_KEY,
                                     NODEPOOL_HASH_VERSION_ANNOTATION_KEY)

from karpy.sim.records import LaunchRecord

if TYPE_CHECKING:  # pragma: no cover
    from karpy.sim.clock import VirtualClock
    from karpy.sim.lifecycle import NodeClaimLifecycle

__all__ = ["adopt_nodeclaims", "offering_price"]


def offering_price(cloud_provider: Any, nodepool: Any, instance_type: str | None, zone: str | None,
                   capacity_type: str | None) -> float | None:
    """$/h of the offering ``instance_type`` / ``zone`` / ``capacity_type`` among the provider's
    instance types for ``nodepool`` (None when unknown)."""
    if nodepool is None or instance_type is None:
        return None
    for it in cloud_provider.get_instance_types(nodepool):
        if it.name != instance_type:
            continue
        for o in it.offerings:
            if o.zone == zone and o.capacity_type == capacity_type:
                price: float = o.price
                return price
    return None


def adopt_nodeclaims(manifests: Any, lifecycle: NodeClaimLifecycle, clock: VirtualClock) -> list[str]:
    """Make every NodeClaim of the input ``manifests`` (tied to its Node, see the module docstring) a
    launch record of ``lifecycle``; returns the warnings (a NodeClaim without a Node, a Node that looks
    Karpenter-made without a NodeClaim)."""
    warnings: list[str] = []
    nodes = list(manifests.nodes)
    by_pid = {n.spec.provider_id: n for n in nodes if n.spec.provider_id}
    by_name = {n.metadata.name: n for n in nodes}
    pools = {np.metadata.name: np for np in manifests.nodepools}
    tied: set[str] = set()
    for claim in getattr(manifests, "nodeclaims", ()):
        name = claim.metadata.name
        status = claim.status
        node = by_pid.get(status.provider_id) if status.provider_id else None
        if node is None and status.node_name:
            node = by_name.get(status.node_name)
        if node is None or node.metadata.name in tied:
            warnings.append(f"NodeClaim {name} has no Node in the input (status.providerID "
                            f"{status.provider_id or '<unset>'}, status.nodeName {status.node_name or '<unset>'}): "
                            "left out (an in-flight NodeClaim is not modelled)")
            continue
        if claim.metadata.deletion_timestamp is not None:
            warnings.append(f"NodeClaim {name} is being deleted (metadata.deletionTimestamp): left out, with its "
                            f"Node {node.metadata.name} as an unmanaged node")
            continue
        tied.add(node.metadata.name)
        lifecycle.adopt(_record(lifecycle.cloud_provider, clock, claim, node, pools), claim.metadata.name)
    for node in nodes:
        pool = (node.metadata.labels or {}).get(LABEL_NODEPOOL)
        if pool and node.metadata.name not in tied:
            warnings.append(f"Node {node.metadata.name} carries {LABEL_NODEPOOL}={pool} but no NodeClaim in the input "
                            "is tied to it (status.providerID): Karpenter's cluster state holds it as an unmanaged node "
                            "(never consolidated, drifted or expired; counted in the NodePool's limits by its label); "
                            "include the NodeClaims: kubectl get nodeclaims -o yaml")
    return warnings


def _restamped(cloud_provider: Any, claim: Any, pool: Any) -> Any:
    """The claim with karpy's hashes: karpy's ``NodePool.hash()`` digits are not Go's hashstructure
    digits, so the dump's ``karpenter.sh/nodepool-hash`` cannot be compared; the claim is taken as
    launched from the input's NodePool (as upstream's hash controller re-stamps on a hash-version
    change), then the provider's ``adopt_nodeclaim`` stamps its own (the AWS NodeClass hash, AMI)."""
    claim = claim.model_copy(deep=True)
    if pool is not None:
        claim.metadata.annotations = {**(claim.metadata.annotations or {}),
                                      NODEPOOL_HASH_ANNOTATION_KEY: pool.hash(),
                                      NODEPOOL_HASH_VERSION_ANNOTATION_KEY: NODEPOOL_HASH_VERSION}
    adopt = getattr(cloud_provider, "adopt_nodeclaim", None)
    return adopt(claim) if adopt is not None else claim


def _record(cloud_provider: Any, clock: VirtualClock, claim: Any, node: Any, pools: dict[str, Any]) -> LaunchRecord:
    """The launch record of a NodeClaim tied to ``node``: launched, registered and initialized as its
    Node's labels say, priced from its offering."""
    labels = claim.metadata.labels or {}
    node_labels = node.metadata.labels or {}
    name = node.metadata.name
    nodepool = labels.get(LABEL_NODEPOOL) or node_labels.get(LABEL_NODEPOOL) or ""
    claim = _restamped(cloud_provider, claim, pools.get(nodepool))
    rec = LaunchRecord(name=name, nodepool=nodepool, created_at=clock.now(), requested=claim, launched=claim,
                     instance_type=labels.get(LABEL_INSTANCE_TYPE) or node_labels.get(LABEL_INSTANCE_TYPE),
                     capacity_type=labels.get(LABEL_CAPACITY_TYPE) or node_labels.get(LABEL_CAPACITY_TYPE),
                     zone=labels.get(LABEL_ZONE) or node_labels.get(LABEL_ZONE), node_name=name)
    rec.price = offering_price(cloud_provider, pools.get(nodepool), rec.instance_type, rec.zone, rec.capacity_type)
    if node_labels.get(NODE_REGISTERED) == "true":
        rec.registered_at = clock.now()
    if node_labels.get(NODE_INITIALIZED) == "true":
        rec.initialized_at = clock.now()
    return rec
