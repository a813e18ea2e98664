"""PodDisruptionBudget limits as Karpenter evaluates them before disrupting a node.

Mirrors pkg/utils/pdb/pdb.go (Limits, NewLimits, CanEvictPods, isFullyBlocked, isEvictable,
IsCurrentlyReschedulable, newPdb).

``disruptionsAllowed`` is ``status.disruptionsAllowed`` of the PDB in the cluster. karpy has no
PDB status from manifests, so :func:`disruptions_allowed` computes it as the Kubernetes
disruption controller does (pkg/controller/disruption/disruption.go getExpectedPodCount /
updatePdbStatus): *expected* = the matching pods that are not terminal (the workload's replicas,
pending replicas included), *healthy* = the matching pods that are bound, Running, not
terminating and not ``Ready=False``; ``minAvailable`` N or N% (of expected, rounded up) gives
``healthy − desired``; ``maxUnavailable`` N or N% (rounded up) gives ``healthy − (expected − N)``;
never below 0. With neither field the controller's desired count is 0 (every healthy pod may go).

Determinism: PDBs are kept sorted by ``namespace/name`` (upstream: the informer's List order), so
the first blocking PDB reported is stable.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from karpy.api.poddisruptionbudget import scaled_value
from karpy.scheduling.labels import DO_NOT_DISRUPT_ANNOTATION_KEY
from karpy.utils.pod import Events, is_disruptable, is_evictable, is_reschedulable, is_terminal, is_terminating

if TYPE_CHECKING:  # pragma: no cover
    from karpy.api.pod import Pod
    from karpy.api.poddisruptionbudget import PodDisruptionBudget

__all__ = ["Limits", "PdbItem", "disruptions_allowed", "is_fully_blocking"]

ALWAYS_ALLOW = "AlwaysAllow"


def _selects(pdb: PodDisruptionBudget, pod: Pod) -> bool:
    """Same namespace and selector match; a nil selector selects nothing
    (metav1.LabelSelectorAsSelector(nil) = labels.Nothing())."""
    sel = pdb.spec.selector
    return (pod.metadata.namespace or "default") == (pdb.metadata.namespace or "default") and sel is not None \
        and sel.matches(pod.metadata.labels or {})


def _healthy(pod: Pod) -> bool:
    if not pod.spec.node_name or pod.status.phase != "Running" or is_terminating(pod):
        return False
    return not any(c.type == "Ready" and c.status == "False" for c in pod.status.conditions or ())


def disruptions_allowed(pdb: PodDisruptionBudget, pods: Iterable[Pod]) -> int:
    """``status.disruptionsAllowed`` of ``pdb`` over ``pods`` (see the module docstring)."""
    matched = [p for p in pods if _selects(pdb, p) and not is_terminal(p)]
    expected = len(matched)
    healthy = sum(1 for p in matched if _healthy(p))
    spec = pdb.spec
    if spec.max_unavailable is not None:
        desired = expected - scaled_value(spec.max_unavailable, expected, True)
    elif spec.min_available is not None:
        desired = scaled_value(spec.min_available, expected, True)
    else:
        desired = 0
    return max(0, healthy - max(desired, 0))


def is_fully_blocking(pdb: PodDisruptionBudget) -> bool:
    """newPdb isFullyBlocking: ``maxUnavailable: 0`` or ``"0%"``, or ``minAvailable: "100%"`` (an
    integer minAvailable equal to the replicas is *not* fully blocking)."""
    mu, ma = pdb.spec.max_unavailable, pdb.spec.min_available
    return bool((mu is not None and not isinstance(mu, str) and mu == 0) or mu == "0%" or ma == "100%")


@dataclass(frozen=True)
class PdbItem:
    """pdb.go pdbItem."""

    key: str  # "namespace/name"
    pdb: PodDisruptionBudget
    disruptions_allowed: int
    is_fully_blocking: bool
    can_always_evict_unhealthy_pods: bool


_ZERO_DISRUPTIONS = 0
_FULLY_BLOCKING = 1


def _do_not_disrupt_events(pods: Iterable[Pod], now: float, events: Events) -> None:
    """What isEvictable records for ``pods`` when no PDB is asked about: the do-not-disrupt check's
    events (the no-PDB shortcuts answer without running the rest of it)."""
    if events is not None:
        for pod in pods:
            if DO_NOT_DISRUPT_ANNOTATION_KEY in (pod.metadata.annotations or {}):
                is_evictable(pod, now, events)


class Limits:
    """pdb.go Limits: every PDB with its allowance, evaluated against candidate pods."""

    def __init__(self, items: Sequence[PdbItem] = ()) -> None:
        self.items: list[PdbItem] = sorted(items, key=lambda i: i.key)

    @classmethod
    def from_objects(cls, pdbs: Iterable[PodDisruptionBudget], pods: Sequence[Pod]) -> Limits:
        """NewLimits: each PDB's allowance computed over ``pods`` (all pods in the cluster)."""
        items = []
        for pdb in pdbs:
            items.append(PdbItem(
                key=f"{pdb.metadata.namespace or 'default'}/{pdb.metadata.name}",
                pdb=pdb,
                disruptions_allowed=disruptions_allowed(pdb, pods),
                is_fully_blocking=is_fully_blocking(pdb),
                can_always_evict_unhealthy_pods=pdb.spec.unhealthy_pod_eviction_policy == ALWAYS_ALLOW,
            ))
        return cls(items)

    def record_eviction(self, pod: Pod) -> None:
        """The API server's eviction handler (registry/core/pod/storage/eviction.go): an allowed
        eviction decrements ``status.disruptionsAllowed`` of the PDB that covers the pod, so a
        second eviction in the same drain pass sees the lower allowance."""
        self.items = [replace(i, disruptions_allowed=max(0, i.disruptions_allowed - 1)) if _selects(i.pdb, pod) else i
                      for i in self.items]

    def _is_evictable(self, pod: Pod, now: float, events: Events, blocker: int) -> tuple[list[str], bool]:
        """pdb.go isEvictable: (blocking PDB keys, evictable)."""
        if not is_evictable(pod, now, events):
            return [], True
        matching = [i for i in self.items if _selects(i.pdb, pod)]
        if len(matching) > 1:
            return [i.key for i in matching], False
        for item in matching:
            if item.can_always_evict_unhealthy_pods and any(
                    c.type == "Ready" and c.status == "False" for c in pod.status.conditions or ()):
                return [], True
            if blocker == _ZERO_DISRUPTIONS and item.disruptions_allowed == 0:
                return [item.key], False
            if blocker == _FULLY_BLOCKING and item.is_fully_blocking:
                return [item.key], False
        return [], True

    def can_evict_pods(self, pods: Iterable[Pod], now: float, events: Events = None) -> tuple[list[str], bool]:
        """CanEvictPods: every pod evictable on its own (no summing per PDB); the first failure
        wins with the PDB keys that block it."""
        if not self.items:
            _do_not_disrupt_events(pods, now, events)  # no PDB: every pod is evictable
            return [], True
        for pod in pods:
            keys, ok = self._is_evictable(pod, now, events, _ZERO_DISRUPTIONS)
            if not ok:
                return keys, False
        return [], True

    def is_fully_blocked(self, pod: Pod, now: float, events: Events = None) -> tuple[list[str], bool]:
        """isFullyBlocked."""
        if not self.items:
            _do_not_disrupt_events((pod,), now, events)  # no PDB: never blocked
            return [], False
        keys, ok = self._is_evictable(pod, now, events, _FULLY_BLOCKING)
        return (keys, True) if not ok else ([], False)

    def is_currently_reschedulable(self, pod: Pod, now: float, events: Events = None) -> bool:
        """IsCurrentlyReschedulable: reschedulable, disruptable, and not fully blocked by a PDB."""
        _, blocked = self.is_fully_blocked(pod, now, events)
        return is_reschedulable(pod) and is_disruptable(pod, now, events) and not blocked
