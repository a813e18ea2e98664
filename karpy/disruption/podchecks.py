"""The per-node pod checks of NewCandidate, kept for one look at an unchanged cluster.

types.go NewCandidate runs ValidatePodsDisruptable and the reschedulable-pod costs for every state
node, and the controller asks it once per method in a round (five times). Their answers read only
the node's bound pods, the PodDisruptionBudgets and the instant, so within one store version at
one virtual time they are the same each time: :class:`PodChecksMemo` computes them once and hands
the later methods the same answer, with the events the first computation published
(``DoNotDisruptGracePeriodElapsed`` ...) published again at the same point. A cluster look
without a ``version`` is never memoised. Checked against the plain path by
tests/disruption/test_podchecks_equivalence.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from karpy.utils.disruption import eviction_cost, rescheduling_cost
from karpy.utils.pod import is_reschedulable

if TYPE_CHECKING:  # pragma: no cover
    from karpy.api.pod import Pod
    from karpy.state.cluster import StateNode

__all__ = ["Look", "PodChecks", "PodChecksMemo", "pod_checks"]

class Look(Protocol):
    """What the checks read of :class:`karpy.disruption.types.Cluster` (not imported: types imports
    this module)."""

    events: list[tuple[str, str, str]]
    version: int | None
    now: float
    pdbs: list[Any]


L = TypeVar("L", bound=Look)


@dataclass(frozen=True)
class PodChecks:
    """ValidatePodsDisruptable's answer and the costs NewCandidate derives from the pods."""

    pods: list[Pod]
    error: str | None
    block_eviction: bool
    reschedulable: list[Pod]
    #: ReschedulingCost of all the node's pods (before the lifetime factor)
    rescheduling_cost: float
    #: Σ max(0, EvictionCost) of the reschedulable pods (before the per-node base cost)
    eviction_costs: float
    #: the events the checks published, in order
    events: tuple[tuple[str, str, str], ...]
    #: what later looks derive from these very pods while it cannot change (Cluster.movable_keyed)
    kept: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


def pod_checks(sn: StateNode, cluster: L,
               validate: Callable[[StateNode, L], tuple[list[Pod], str | None, bool]]) -> PodChecks:
    """The plain computation (types.go NewCandidate's pod part); ``validate`` is types.go
    ValidatePodsDisruptable."""
    start = len(cluster.events)
    pods, err, block = validate(sn, cluster)
    events = tuple(cluster.events[start:])
    reschedulable = [p for p in pods if is_reschedulable(p)]
    return PodChecks(pods, err, block, reschedulable, rescheduling_cost(pods),
                     sum(max(0.0, eviction_cost(p)) for p in reschedulable), events)


class PodChecksMemo:
    """:func:`pod_checks` per node name for one (store version, instant); a node whose bound pods
    are not the very objects seen is computed again.

    Without PodDisruptionBudgets, checks that published no event read nothing but the node's bound
    pods: the instant is read only by a do-not-disrupt duration with a start time, which always
    publishes DoNotDisruptUntil or DoNotDisruptGracePeriodElapsed (utils/pod.py). Those answers are
    kept across versions and instants, for as long as the node's bound pods are the very objects
    seen (the store replaces a pod to change it); one not asked for during a whole (version,
    instant) is dropped."""

    #: False: computed every time (the plain path the equivalence test compares against)
    enabled = True
    #: False: every answer is kept for one (version, instant) only
    across_versions = True

    def __init__(self) -> None:
        self._key: tuple[int, float] | None = None
        self._by_node: dict[str, tuple[tuple[Any, ...], PodChecks]] = {}
        #: node name -> (bound pods, checks) of the nodes whose checks read only their pods; this
        #: (version, instant)'s and the previous one's
        self._pods_only: dict[str, tuple[tuple[Any, ...], PodChecks]] = {}
        self._pods_only_before: dict[str, tuple[tuple[Any, ...], PodChecks]] = {}

    def get(self, sn: StateNode, cluster: L,
            validate: Callable[[StateNode, L], tuple[list[Pod], str | None, bool]]) -> PodChecks:
        version = cluster.version
        if not self.enabled or version is None:
            return pod_checks(sn, cluster, validate)
        key = (version, cluster.now)
        if key != self._key:
            self._key = key
            self._by_node = {}
            self._pods_only_before = self._pods_only
            self._pods_only = {}
        bound = tuple(sn.pods)
        name = sn.name
        pods_only = self.across_versions and not cluster.pdbs
        if pods_only:
            hit = self._pods_only.get(name) or self._pods_only_before.get(name)
            if hit is not None and _same(hit[0], bound):
                self._pods_only[name] = hit
                cluster.events.extend(hit[1].events)
                return hit[1]
        else:
            hit = self._by_node.get(name)
            if hit is not None and _same(hit[0], bound):
                cluster.events.extend(hit[1].events)
                return hit[1]
        checks = pod_checks(sn, cluster, validate)
        (self._pods_only if pods_only and not checks.events else self._by_node)[name] = (bound, checks)
        return checks


def _same(seen: tuple[Any, ...], bound: tuple[Any, ...]) -> bool:
    return len(seen) == len(bound) and all(a is b for a, b in zip(seen, bound))
