"""A test harness for the disruption methods: a cluster built by hand, as upstream's disruption suites
build theirs (ExpectApplied of NodeClaim + Node pairs and bound pods, initialized), on Karpenter's
fake catalogue. Used by tests/disruption, tests/static and benchmarks/consolidation_benchmark.py."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from karpy.api.builders import make_node, make_nodepool, make_pod
from karpy.api.meta import Condition, ObjectMeta, OwnerReference
from karpy.api.nodeclaim import NodeClaim
from karpy.api.time import EPOCH
from karpy.cloudprovider.fake import FakeCloudProvider
from karpy.disruption.types import Cluster
from karpy.provisioning.provisioner import Provisioner
from karpy.state.cluster import ClusterState

__all__ = ["Env", "NOW", "meta", "owner", "ts"]

NOW = 3600.0


def ts(t: float) -> datetime:
    return EPOCH + timedelta(seconds=t)


class Env:
    """Nodes, NodeClaims, pods, PDBs and NodePools; :meth:`cluster` is the disruption view."""

    def __init__(self, provider: FakeCloudProvider | None = None) -> None:
        self.provider = provider or FakeCloudProvider()
        self.nodepools: dict[str, Any] = {"default": make_nodepool()}
        self.nodes: list[Any] = []
        self.claims: list[Any] = []
        self.pods: list[Any] = []
        self.pdbs: list[Any] = []
        self.nominated: dict[str, float] = {}
        self.in_queue: set[str] = set()
        self.marked: set[str] = set()
        self.gates: dict[str, bool] = {}
        #: Provisioner keyword options (``preference_policy``, ``min_values_policy``)
        self.provisioner_options: dict[str, Any] = {}
        self.now = NOW
        self._by_name: dict[str, Any] | None = None

    def _types(self) -> dict[str, Any]:
        if self._by_name is None:
            self._by_name = {it.name: it for it in self.provider.get_instance_types(self.nodepools["default"])}
        return self._by_name

    def instance_type(self, name: str) -> Any:
        return self._types()[name]

    def node(self, name: str, instance_type: str = "default-instance-type", capacity_type: str = "on-demand",
             zone: str = "test-zone-1", pool: str | None = "default", initialized: bool = True,
             consolidatable: bool = True, drifted: bool = False, node_annotations: dict[str, str] | None = None,
             with_node: bool = True, with_claim: bool = True, labels_drop: tuple[str, ...] = (),
             tgp: str | None = None, ready: bool = True, deleting: bool = False,
             allocatable: dict[str, str] | None = None, extra_labels: dict[str, str] | None = None
             ) -> tuple[Any, Any]:
        """A Node + NodeClaim pair (``allocatable`` overrides the instance type's capacity, as
        upstream's tests set ``Status.Allocatable``; ``extra_labels`` are added to both)."""
        it = self._types().get(instance_type)
        labels = {"node.kubernetes.io/instance-type": instance_type, "karpenter.sh/capacity-type": capacity_type,
                  "topology.kubernetes.io/zone": zone, "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
                  "karpenter.sh/registered": "true"}
        if pool is not None:
            labels["karpenter.sh/nodepool"] = pool
        if initialized:
            labels["karpenter.sh/initialized"] = "true"
        labels.update(extra_labels or {})
        for k in labels_drop:
            labels.pop(k, None)
        cap = {"cpu": "4", "memory": "16Gi", "pods": "110"} if it is None else _quantities(it)
        if allocatable is not None:
            cap = dict(allocatable)
        pid = f"fake://{name}"
        node = make_node(name, labels=labels, capacity=cap, provider_id=pid, annotations=node_annotations,
                         ready=ready)
        conds = []
        if initialized:
            conds.append(Condition(type="Initialized", status="True", last_transition_time=ts(0)))
        if consolidatable:
            conds.append(Condition(type="Consolidatable", status="True", last_transition_time=ts(0)))
        if drifted:
            conds.append(Condition(type="Drifted", status="True", reason="NodePoolDrifted", last_transition_time=ts(0)))
        claim = NodeClaim.model_validate({"metadata": {"name": name, "labels": labels},
                                          "spec": {"terminationGracePeriod": tgp},
                                          "status": {"providerID": pid, "nodeName": name, "capacity": cap,
                                                     "allocatable": cap}})
        claim.status.conditions = conds
        claim.metadata.creation_timestamp = ts(0)
        if deleting:
            claim.metadata.deletion_timestamp = ts(self.now - 1)
        if with_node:
            self.nodes.append(node)
        if with_claim:
            self.claims.append(claim)
        return node, claim

    def pod(self, name: str, node: str | None, cpu: str = "100m", requests: dict[str, str] | None = None,
            **kw: Any) -> Any:
        """A pod bound to ``node`` (Running), or pending when ``node`` is None; ``requests`` replaces the
        cpu-only request."""
        p = make_pod(name, requests=requests or {"cpu": cpu}, node_name=node, unschedulable=node is None,
                     phase="Running" if node else "Pending", **kw)
        p.status.start_time = ts(0) if node else None
        self.pods.append(p)
        return p

    def cluster(self) -> Cluster:
        state = ClusterState.from_objects(self.nodes, self.claims, self.pods, self.marked)
        return Cluster(now=self.now, state=state, nodepools=dict(self.nodepools), pods=list(self.pods),
                       pdbs=list(self.pdbs), daemonsets=[],
                       provisioner=Provisioner(self.provider, **self.provisioner_options),
                       instance_types=lambda np: self.provider.get_instance_types(np),
                       nominated_until=dict(self.nominated), in_queue=frozenset(self.in_queue),
                       feature_gates=dict(self.gates))


def _quantities(it: Any) -> dict[str, str]:
    from karpy.api.quantity import format_nanos

    return {k: format_nanos(v) for k, v in it.capacity.items()}


def owner(kind: str, api_version: str = "apps/v1") -> list[OwnerReference]:
    return [OwnerReference(api_version=api_version, kind=kind, name="owner", uid="owner-uid", controller=True)]


def meta(name: str) -> ObjectMeta:
    return ObjectMeta(name=name)
