"""The per-node pod checks of NewCandidate, kept for one look at an unchanged cluster.

types.go NewCandidate runs ValidatePodsDisruptable and the reschedulable-pod costs for every state
node, and the controller asks it once per method in a round (five times). Their answers read only
the node's bound pods, the PodDisruptionBudgets and the instant, so within one store version at
one virtual time they are the same each time: :class:`PodChecksMemo` computes them once and hands
the later methods the same answer, with the events the first computation published
(``DoNotDisruptGracePeriodElapsed`` ...) published again at the same point. A cluster look
without a ``version`` is never memoised. Checked against the plain path by
tests/disruption/test_podchecks_equivalence.py.

Without PodDisruptionBudgets, a node whose bound pods changed is checked again from what each pod
alone answers (:class:`PodFacts`, kept from the node's last checks for the pods still bound), as
long as none of them has a do-not-disrupt annotation: ValidatePodsDisruptable then passes every
pod, and the costs are the per-pod costs summed in the same order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from karpy.scheduling.labels import DO_NOT_DISRUPT_ANNOTATION_KEY
from karpy.utils.disruption import eviction_cost, rescheduling_cost
from karpy.utils.pod import is_reschedulable

if TYPE_CHECKING:  # pragma: no cover
    from karpy.api.pod import Pod
    from karpy.state.cluster import StateNode

__all__ = ["Look", "PodChecks", "PodChecksMemo", "PodFacts", "pod_checks"]

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


@dataclass(frozen=True, slots=True)
class PodFacts:
    """What one pod without a do-not-disrupt annotation answers to the checks, whatever the instant
    (no PDB asked): its key (the validation's order), IsReschedulable and EvictionCost."""

    pod: Pod
    key: str
    reschedulable: bool
    cost: float

    @staticmethod
    def of(pod: Pod) -> PodFacts | None:
        """None for a pod with the annotation (its checks read the instant and publish events)."""
        if DO_NOT_DISRUPT_ANNOTATION_KEY in (pod.metadata.annotations or {}):
            return None
        return PodFacts(pod, pod.key, is_reschedulable(pod), eviction_cost(pod))


#: id(pod) -> the pod's facts, for the pods bound to one node at its last checks
Facts = dict[int, PodFacts]


def checks_from_facts(bound: tuple[Pod, ...], known: Facts) -> tuple[PodChecks, Facts] | None:
    """:func:`pod_checks` without PDBs for pods none of which has a do-not-disrupt annotation (None
    otherwise), from the facts ``known`` of pods seen before and those of the new ones."""
    facts: Facts = {}
    for p in bound:
        f = known.get(id(p))
        if f is None or f.pod is not p:
            f = PodFacts.of(p)
            if f is None:
                return None
        facts[id(p)] = f
    ordered = sorted(facts.values(), key=_by_key)  # ValidatePodsDisruptable's order (keys are unique)
    movable = [f for f in ordered if f.reschedulable]
    checks = PodChecks([f.pod for f in ordered], None, False, [f.pod for f in movable],
                       sum(f.cost for f in ordered), sum(max(0.0, f.cost) for f in movable), ())
    # Cluster.movable_keyed, read only without PDBs: IsCurrentlyReschedulable of a pod without the
    # annotation is then IsReschedulable, so every reschedulable pod is movable
    checks.kept["movable_keyed"] = [(f.key, f.pod) for f in movable]
    return checks, facts


def _by_key(f: PodFacts) -> str:
    return f.key


#: what the memo keeps of a node: its bound pods, their checks, their facts (None: not built from facts)
_Kept = tuple[tuple[Any, ...], PodChecks, "Facts | None"]


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
    instant) is dropped. When the node's pods changed, the facts of those still bound are kept
    (:func:`checks_from_facts`)."""

    #: False: computed every time (the plain path the equivalence test compares against)
    enabled = True
    #: False: every answer is kept for one (version, instant) only
    across_versions = True
    #: False: a node whose pods changed is checked by pod_checks, never from its pods' facts
    from_facts = True

    def __init__(self) -> None:
        self._key: tuple[int, float] | None = None
        self._by_node: dict[str, tuple[tuple[Any, ...], PodChecks]] = {}
        #: node name -> (bound pods, checks, their pods' facts or None) of the nodes whose checks
        #: read only their pods; this (version, instant)'s and the previous one's
        self._pods_only: dict[str, _Kept] = {}
        self._pods_only_before: dict[str, _Kept] = {}

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
        if self.across_versions and not cluster.pdbs:
            return self._pods_only_checks(sn, cluster, validate, bound)
        hit = self._by_node.get(name)
        if hit is not None and _same(hit[0], bound):
            cluster.events.extend(hit[1].events)
            return hit[1]
        checks = pod_checks(sn, cluster, validate)
        self._by_node[name] = (bound, checks)
        return checks

    def _pods_only_checks(self, sn: StateNode, cluster: L,
                          validate: Callable[[StateNode, L], tuple[list[Pod], str | None, bool]],
                          bound: tuple[Any, ...]) -> PodChecks:
        name = sn.name
        hit = self._pods_only.get(name) or self._pods_only_before.get(name)
        if hit is not None and _same(hit[0], bound):
            self._pods_only[name] = hit
            return hit[1]
        known = hit[2] if hit is not None and hit[2] is not None else {}
        built = checks_from_facts(bound, known) if self.from_facts else None
        if built is not None:
            self._pods_only[name] = (bound, built[0], built[1])
            return built[0]
        checks = pod_checks(sn, cluster, validate)
        if not checks.events:  # (checks that published events are computed again at every look)
            self._pods_only[name] = (bound, checks, None)
        return checks


def _same(seen: tuple[Any, ...], bound: tuple[Any, ...]) -> bool:
    return len(seen) == len(bound) and all(a is b for a, b in zip(seen, bound))
