"""Test harness for provisioning (modelled on Karpenter's ExpectProvisioned / ExpectScheduled).

``Harness`` keeps a tiny cluster (Nodes, NodeClaims, bound pods) across provisioning rounds:

    h = Harness([make_nodepool()], instance_types=fake.default_instance_types())
    res = h.provision(pod1, pod2)          # Provisioner.schedule + FakeCloudProvider.create + bind
    h.node_of(pod1)                         # the Node model the pod was bound to, or None
    h.labels_of(pod1)                       # that node's labels (or None)
    res.errors[pod.key]                     # scheduling error text
    len(res.created)                        # NodeClaims launched this round

Launched NodeClaims become Nodes immediately (registered, not initialized; taints = NodeClaim
taints + startup taints, like a node that just joined). ``h.initialize(node)`` marks a node
initialized (and drops its startup taints, as the initialization controller does).
``expect_provisioned(pods, nodepools, instance_types, ...)`` is a one-round shortcut.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from karpy.api.meta import OwnerReference
from karpy.api.node import Node, NodeCondition, NodeSpec, NodeStatus
from karpy.api.meta import ObjectMeta
from karpy.cloudprovider import fake
from karpy.cloudprovider.types import MIN_VALUES_POLICY_STRICT
from karpy.provisioning.provisioner import Provisioner
from karpy.provisioning.scheduler import Results
from karpy.state.cluster import ClusterState
from karpy.scheduling.labels import NODE_INITIALIZED, NODE_REGISTERED

__all__ = ["Harness", "Provisioned", "expect_provisioned"]


@dataclass
class Provisioned:
    """One provisioning round's outcome."""

    results: Results
    #: NodeClaim API objects as returned by FakeCloudProvider.create (labels resolved)
    created: list[Any] = field(default_factory=list)
    #: NodeClaim objects built by ToNodeClaim (what was sent to the cloud provider)
    requested: list[Any] = field(default_factory=list)
    #: pod key -> error text (scheduling errors, validation "ignoring pod, ..." and launch errors)
    errors: dict[str, str] = field(default_factory=dict)
    #: pod key -> node name for every pod placed this round (new or existing node)
    placements: dict[str, str] = field(default_factory=dict)

    def scheduled(self, pod: Any) -> bool:
        return pod.key in self.placements


class Harness:
    """A cluster across provisioning rounds with the fake cloud provider."""

    def __init__(
        self,
        nodepools: Sequence[Any],
        instance_types: Sequence[Any] | None = None,
        *,
        daemonsets: Sequence[Any] = (),
        preference_policy: str = "Respect",
        min_values_policy: str = MIN_VALUES_POLICY_STRICT,
        max_instance_types: int = 60,
        cloud_provider: Any | None = None,
    ) -> None:
        self.cloud_provider = cloud_provider or fake.FakeCloudProvider(
            list(instance_types) if instance_types is not None else None)
        self.nodepools = list(nodepools)
        self.daemonsets = list(daemonsets)
        self.provisioner = Provisioner(self.cloud_provider, preference_policy=preference_policy,
                                       min_values_policy=min_values_policy, max_instance_types=max_instance_types)
        self.nodes: list[Any] = []
        self.nodeclaims: list[Any] = []
        self.pods: list[Any] = []
        self.marked_for_deletion: set[str] = set()
        #: PodDisruptionBudgets in the cluster (the deleting-node pods they fully block stay put)
        self.pdbs: list[Any] = []
        #: virtual seconds handed to the provisioner (do-not-disrupt durations)
        self.now = 0.0
        #: the cluster's PVCs / PVs / StorageClasses (karpy.provisioning.volumetopology.VolumeTopology)
        self.volumes: Any = None
        self._seq = 0

    # -- cluster mutation -----------------------------------------------------------------------
    def add_node(self, node: Any, nodeclaim: Any | None = None) -> Any:
        self.nodes.append(node)
        if nodeclaim is not None:
            self.nodeclaims.append(nodeclaim)
        return node

    def add_nodeclaim(self, nodeclaim: Any) -> Any:
        self.nodeclaims.append(nodeclaim)
        return nodeclaim

    def bind(self, pod: Any, node_name: str) -> None:
        pod.spec.node_name = node_name
        pod.status.conditions = []
        if pod not in self.pods:
            self.pods.append(pod)

    def initialize(self, node: Any) -> None:
        node.metadata.labels[NODE_INITIALIZED] = "true"
        nc = self.nodeclaim_of(node)
        if nc is not None:
            startup = {(t.key, t.effect) for t in nc.spec.startup_taints}
            node.spec.taints = [t for t in node.spec.taints if (t.key, t.effect) not in startup]

    def nodeclaim_of(self, node: Any) -> Any | None:
        for nc in self.nodeclaims:
            if nc.status.node_name == node.metadata.name:
                return nc
        return None

    def cluster(self) -> ClusterState:
        return ClusterState.from_objects(self.nodes, self.nodeclaims, self.pods, self.marked_for_deletion)

    def node_of(self, pod: Any) -> Any | None:
        name = pod.spec.node_name
        for n in self.nodes:
            if n.metadata.name == name:
                return n
        return None

    def labels_of(self, pod: Any) -> dict[str, str] | None:
        n = self.node_of(pod)
        return None if n is None else dict(n.metadata.labels)

    # -- provisioning ---------------------------------------------------------------------------
    def provision(self, *pods: Any, bind: bool = True) -> Provisioned:
        """Schedule ``pods`` (plus anything already pending), launch NodeClaims, bind pods."""
        for p in pods:
            if p not in self.pods:
                self.pods.append(p)
        cluster = self.cluster()
        pending = [p for p in self.pods if not p.spec.node_name]
        results = self.provisioner.schedule(pending, self.nodepools, cluster, self.daemonsets,
                                            pdbs=self.pdbs, now=self.now, volumes=self.volumes)
        out = Provisioned(results)
        out.errors.update(getattr(results, "ignored", {}))
        out.errors.update(results.pod_errors)
        pools = {np.metadata.name: np for np in self.nodepools}
        for claim in results.new_nodeclaims:
            np = pools.get(claim.nodepool_name)
            if np is not None:
                err = self.provisioner.limits_exceeded(np, self.cluster())
                if err is not None:
                    for p in claim.pods:
                        out.errors[p.key] = err
                    continue
            model = self.provisioner.to_nodeclaim(claim)
            self._seq += 1
            model.metadata.name = f"{claim.nodepool_name}-{self._seq:05d}"
            out.requested.append(model)
            try:
                created = self.cloud_provider.create(model)
            except Exception as e:  # noqa: BLE001
                for p in claim.pods:
                    out.errors[p.key] = str(e)
                continue
            node_name = f"node-{self._seq:05d}"
            created.metadata.name = model.metadata.name
            created.status.node_name = node_name
            out.created.append(created)
            self.nodeclaims.append(created)
            labels = dict(created.metadata.labels)
            labels["kubernetes.io/hostname"] = node_name
            labels[NODE_REGISTERED] = "true"
            node = Node(
                metadata=ObjectMeta(name=node_name, uid=f"node/{node_name}", labels=labels,
                                    owner_references=[OwnerReference(api_version="karpenter.sh/v1", kind="NodeClaim",
                                                                     name=model.metadata.name)]),
                spec=NodeSpec(taints=[*created.spec.taints, *created.spec.startup_taints],
                              provider_id=created.status.provider_id),
                status=NodeStatus(capacity=dict(created.status.capacity), allocatable=dict(created.status.allocatable),
                                  conditions=[NodeCondition(type="Ready", status="True")]),
            )
            self.nodes.append(node)
            for p in claim.pods:
                out.placements[p.key] = node_name
                if bind:
                    self.bind(self._original(p), node_name)
        for en in results.existing_nodes:
            for p in en.pods:
                out.placements[p.key] = en.state_node.node.metadata.name if en.state_node.node else en.name
                if bind and en.state_node.node is not None:
                    self.bind(self._original(p), en.state_node.node.metadata.name)
        return out

    def _original(self, pod: Any) -> Any:
        for p in self.pods:
            if p.key == pod.key:
                return p
        return pod


def expect_provisioned(
    pods: Sequence[Any],
    nodepools: Sequence[Any],
    instance_types: Sequence[Any] | None = None,
    **kwargs: Any,
) -> tuple[Harness, Provisioned]:
    """One provisioning round: returns ``(harness, outcome)``; kwargs as :class:`Harness`."""
    h = Harness(nodepools, instance_types, **kwargs)
    return h, h.provision(*pods)
