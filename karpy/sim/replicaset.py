"""The ReplicaSet controller: keep ``replicas`` active pods, delete the lowest-ranked ones first.

Mirrors kubernetes ``pkg/controller/replicaset/replica_set.go`` (``manageReplicas``,
``getPodsToDelete``) and ``pkg/controller/controller_utils.go`` (``ActivePodsWithRanks.Less``,
``FilterActivePods``). Deterministic choices:

* pods are created at once (upstream: slow-start batches of 1, 2, 4, ... — all within the same
  instant on a virtual clock) with the next free index of the ReplicaSet (``ReplicaSet.pod_for``);
* ``sort.Sort`` is unstable upstream; here a stable sort, with the pod UID as the final tie-break
  (upstream's own tie-break inside the logarithmic buckets);
* a pod is *ready* from the moment it is bound (no readiness probes, ``minReadySeconds`` 0).

Ranking (``ActivePodsWithRanks.Less``, k8s v1.34; ``PodDeletionCost`` and ``LogarithmicScaleDown``
GA): unassigned < assigned; Pending < Unknown < Running; not ready < ready; lower
``controller.kubernetes.io/pod-deletion-cost`` first; more related pods on the same node first;
ready more recently first (log2 buckets of the time since ready, UID inside a bucket); created more
recently first (log2 buckets, UID inside a bucket).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol

from karpy.api.time import EPOCH

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = ["POD_DELETION_COST_ANNOTATION", "ControllerHost", "ManagedReplicaSet", "ManagedWorkload",
           "ReplicaSetController", "find_by_key", "is_active", "rank_pods_for_deletion"]

#: pkg/apis/core annotation read by ActivePodsWithRanks (PodDeletionCost, GA)
POD_DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"
_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}


class ControllerHost(Protocol):
    """What the workload controllers need from the simulation (:class:`karpy.sim.simulation.Simulation`)."""

    def now(self) -> float: ...
    def owned_pods(self, owner_uid: str) -> list[Any]: ...
    def active_owned_pods(self, owner_uid: str) -> list[Any]: ...
    def active_owned_count(self, owner_uid: str) -> int: ...
    def create_controller_pod(self, pod: Pod) -> None: ...
    def delete_controller_pod(self, key: str, reason: str) -> None: ...
    def ready_since(self, key: str) -> float | None: ...
    def counts_as_active(self, pod: Pod) -> bool: ...
    def record(self, kind: str, obj: str, **detail: Any) -> None: ...


def is_active(pod: Pod) -> bool:
    """controller_utils.go IsPodActive: not Succeeded/Failed and not terminating."""
    return pod.status.phase not in ("Succeeded", "Failed") and pod.metadata.deletion_timestamp is None


def _deletion_cost(pod: Pod) -> int:
    try:
        return int((pod.metadata.annotations or {}).get(POD_DELETION_COST_ANNOTATION, "0"))
    except ValueError:
        return 0  # upstream: an invalid cost is treated as 0 (GetDeletionCostFromPodAnnotations errors are ignored)


def _log_rank(t: float | None, now: float) -> int:
    """``int(math.Log2(float(now - t)))`` in nanoseconds, -1 for a non-positive duration."""
    if t is None:
        return -1
    d = (now - t) * 1e9
    return int(math.log2(d)) if d > 0 else -1


def rank_pods_for_deletion(pods: Sequence[Pod], related: Sequence[Any], now: float,
                           ready_since: Callable[[str], float | None],
                           created_at: Callable[[Any], float | None]) -> list[Any]:
    """``pods`` in the order the ReplicaSet controller deletes them (replica_set.go getPodsToDelete
    with getPodsRankedByRelatedPodsOnSameNode; ``related`` = the active pods of every ReplicaSet
    of the same Deployment)."""
    on_node: dict[str, int] = {}
    for p in related:
        if p.spec.node_name:
            on_node[p.spec.node_name] = on_node.get(p.spec.node_name, 0) + 1
    # what ActivePodsWithRanks.Less reads, once per pod (the comparison below is upstream's, field
    # by field); the creation time only when a comparison reaches it, as upstream reads it
    facts = []
    for p in pods:
        node = p.spec.node_name
        since = ready_since(p.key) if node else None
        facts.append(_RankFacts(p, bool(node), _PHASE_ORDINAL.get(p.status.phase or "Pending", 0), since is not None,
                                _deletion_cost(p), on_node.get(node, 0) if node else 0, since))
    created: dict[int, float | None] = {}

    def created_of(f: _RankFacts) -> float | None:
        key = id(f)
        if key not in created:
            created[key] = created_at(f.pod)
        return created[key]

    def less(a: _RankFacts, b: _RankFacts) -> int:
        if a.bound != b.bound:
            return -1 if not a.bound else 1
        if a.phase != b.phase:
            return -1 if a.phase < b.phase else 1
        if a.ready != b.ready:
            return -1 if not a.ready else 1
        if a.cost != b.cost:
            return -1 if a.cost < b.cost else 1
        if a.related != b.related:
            return -1 if a.related > b.related else 1
        if a.ready and b.ready:
            ra, rb = a.since, b.since
            if ra != rb:
                diff = _log_rank(ra, now) - _log_rank(rb, now)
                if diff != 0:
                    return -1 if diff < 0 else 1
                return -1 if (a.pod.metadata.uid or "") < (b.pod.metadata.uid or "") else 1
        ta, tb = created_of(a), created_of(b)
        if ta != tb and (ta is None or tb is None):
            return -1 if ta is None else 1
        if ta != tb:
            diff = _log_rank(ta, now) - _log_rank(tb, now)
            if diff != 0:
                return -1 if diff < 0 else 1
            return -1 if (a.pod.metadata.uid or "") < (b.pod.metadata.uid or "") else 1
        return 0

    return [f.pod for f in sorted(facts, key=functools.cmp_to_key(less))]


class _RankFacts(NamedTuple):
    """One pod's fields that ActivePodsWithRanks.Less compares (see rank_pods_for_deletion)."""

    pod: Any
    bound: bool
    phase: int
    ready: bool
    cost: int
    #: active pods of the same Deployment on the pod's node
    related: int
    since: float | None


@dataclass
class ManagedWorkload:
    """A workload a controller manages (its model builds the pods: ``pod_for``)."""

    model: Any

    @property
    def uid(self) -> str:
        uid: str = self.model.uid()
        return uid

    @property
    def key(self) -> str:
        return f"{self.model.metadata.namespace}/{self.model.metadata.name}"

    @property
    def object(self) -> str:
        return f"{self.model.kind}/{self.key}"


def find_by_key(items: Mapping[str, Any], key: str, kind: str | None = None) -> Any | None:
    """The managed workload ``namespace/name`` (of ``kind`` when given) among ``items`` (by uid), or None."""
    return next((w for w in items.values() if w.key == key and (kind is None or w.model.KIND == kind)), None)


@dataclass
class ManagedReplicaSet(ManagedWorkload):
    """One ReplicaSet the controller manages: the desired replicas and the next pod index
    (indices are never reused, so names stay unique)."""

    replicas: int = 0
    next_index: int = 0
    created_at: float = 0.0
    #: the owning Deployment's key ``namespace/name`` (None for a bare ReplicaSet)
    deployment: str | None = None


@dataclass
class ReplicaSetController:
    """replica_set.go manageReplicas for every managed ReplicaSet (see the module docstring) and
    every ReplicationController: upstream's replication manager (pkg/controller/replication) is this
    same controller run over ReplicationControllers through a conversion adapter, so an evicted or
    deleted RC replica is replaced exactly as a ReplicaSet's is."""

    host: ControllerHost
    sets: dict[str, ManagedReplicaSet] = field(default_factory=dict)  # by uid
    #: performance only: the host's ``active_owned_pods`` (one pass over its owner index) instead of
    #: ``counts_as_active`` per owned pod; the equivalence test switches it off
    fast_active: ClassVar[bool] = True

    def add(self, rs: ManagedReplicaSet) -> ManagedReplicaSet:
        self.sets[rs.uid] = rs
        return rs

    def get(self, key: str, kind: str = "ReplicaSet") -> ManagedReplicaSet | None:
        """The managed ReplicaSet (or ``kind="ReplicationController"``) ``namespace/name``."""
        found: ManagedReplicaSet | None = find_by_key(self.sets, key, kind)
        return found

    def active_pods(self, rs: ManagedReplicaSet) -> list[Any]:
        if self.fast_active:
            return self.host.active_owned_pods(rs.uid)
        return [p for p in self.host.owned_pods(rs.uid) if self.host.counts_as_active(p)]

    def available(self, rs: ManagedReplicaSet) -> int:
        """Active pods that are bound (available; minReadySeconds 0)."""
        return sum(1 for p in self.active_pods(rs) if p.spec.node_name)

    def scale(self, rs: ManagedReplicaSet, replicas: int, reason: str = "scale") -> None:
        if replicas != rs.replicas:
            self.host.record("scale", rs.object, replicas=replicas, previous=rs.replicas, reason=reason)
            rs.replicas = replicas
        self.sync(rs)

    def sync(self, rs: ManagedReplicaSet, related: Mapping[str, Any] | None = None) -> None:
        """Create or delete pods until ``replicas`` are active."""
        # the count alone decides unless pods are to go (the list is then ranked)
        n = self.host.active_owned_count(rs.uid) if self.fast_active else None
        active = self.active_pods(rs) if n is None or n > rs.replicas else []
        diff = (len(active) if n is None else n) - rs.replicas
        if diff < 0:
            for _ in range(-diff):
                pod = rs.model.pod_for(rs.next_index)
                rs.next_index += 1
                self.host.create_controller_pod(pod)
        elif diff > 0:
            related_pods = list(related.values()) if related is not None else active
            ranked = rank_pods_for_deletion(active, related_pods, self.host.now(), self.host.ready_since,
                                            _created_at)
            for pod in ranked[:diff]:
                self.host.delete_controller_pod(pod.key, "scale-down")


def _created_at(pod: Pod) -> float | None:
    ts = pod.metadata.creation_timestamp
    return (ts - EPOCH).total_seconds() if ts is not None else None
