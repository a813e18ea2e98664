"""Candidates and commands of the disruption controller.

Mirrors pkg/controllers/disruption/types.go (Candidate, NewCandidate, Command, Decision,
EstimatedSavings, String) and the disruptability checks of
pkg/controllers/state/statenode.go (ValidateNodeDisruptable, ValidatePodsDisruptable).

:class:`Cluster` is the round's view of the cluster the methods read (upstream: the state.Cluster,
the kube client, the provisioner and the clock); the simulation builds a fresh one per look.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from karpy.scheduling.labels import (DO_NOT_DISRUPT_ANNOTATION_KEY, LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE,
                                     LABEL_NODEPOOL, LABEL_ZONE)
from karpy.state.cluster import ClusterState, StateNode
from karpy.disruption.podchecks import PodChecks, PodChecksMemo, pod_checks
from karpy.utils.disruption import lifetime_remaining
from karpy.utils.pdb import Limits
from karpy.utils.pod import is_disruptable

if TYPE_CHECKING:
    from karpy.api.pod import Pod
    from karpy.provisioning.poddata import Prepared

__all__ = [
    "DECISION_DELETE",
    "DECISION_NOOP",
    "DECISION_REPLACE",
    "EVENTUAL",
    "GRACEFUL",
    "Candidate",
    "CandidateError",
    "Cluster",
    "Command",
    "PER_NODE_BASE_DISRUPTION_COST",
    "look_candidate",
    "new_candidate",
]

GRACEFUL = "graceful"
EVENTUAL = "eventual"
DECISION_DELETE = "delete"
DECISION_REPLACE = "replace"
DECISION_NOOP = "no-op"
#: types.go PerNodeBaseDisruptionCost
PER_NODE_BASE_DISRUPTION_COST = 1.0
def condition(obj: Any, cond_type: str) -> Any | None:
    for c in getattr(getattr(obj, "status", None), "conditions", None) or ():
        if c.type == cond_type:
            return c
    return None


def condition_true(obj: Any, cond_type: str) -> bool:
    c = condition(obj, cond_type)
    return c is not None and c.status == "True"


class ConsolidationAnswers(Protocol):
    """What computeConsolidation asks of :class:`karpy.disruption.consolidationmemo.ConsolidationMemo`
    (a Protocol here, so this module does not import the memo that reads it)."""

    def key(self, cluster: Cluster, candidates: Sequence[Candidate]) -> tuple[Hashable, ...] | None: ...

    def no_command(self, key: tuple[Hashable, ...], candidates: Sequence[Candidate]
                   ) -> tuple[tuple[str, str, str], ...] | None: ...

    def remember(self, key: tuple[Hashable, ...], candidates: Sequence[Candidate],
                 events: Sequence[tuple[str, str, str]]) -> None: ...

    def forget(self, candidates: Sequence[Candidate]) -> None: ...


@dataclass
class Cluster:
    """One look at the cluster (state.Cluster + kube client + provisioner + clock).

    ``state`` has the marked-for-deletion nodes marked; ``nominated_until`` maps a state-node name
    to the end of its nomination window; ``in_queue`` holds the names of candidates of in-flight
    commands; ``instance_types(pool)`` returns the cloud provider's types for the pool (cached by
    the caller); ``events`` collects ``(reason, object, message)`` like upstream's recorder.
    """

    now: float
    state: ClusterState
    nodepools: dict[str, Any]
    pods: list[Pod]
    pdbs: list[Any]
    daemonsets: list[Any]
    provisioner: Any
    instance_types: Callable[[Any], list[Any]]
    nominated_until: dict[str, float] = field(default_factory=dict)
    in_queue: frozenset[str] = frozenset()
    feature_gates: dict[str, bool] = field(default_factory=dict)
    #: state.Cluster ConsolidationState(): when the cluster last changed in a way that can open a
    #: consolidation (methods cache it to skip unchanged clusters)
    consolidation_state: float = 0.0
    events: list[tuple[str, str, str]] = field(default_factory=list)
    #: state.Cluster NodePoolState (karpy.static.nodepoolstate): static NodePools' NodeClaim
    #: counts and node-count reservations (StaticDrift); None: an empty one
    nodepool_state: Any = None
    #: the provider's key of ``instance_types(pool)``'s answer (CloudProvider.instance_types_key), so
    #: SimulateScheduling can reuse the provisioner's SchedulerCache; None: no key (built anew)
    instance_types_key: Callable[[Any], Hashable | None] | None = None
    #: the store's resource version this look was taken at (None: unknown, nothing is memoised)
    version: int | None = None
    #: NewCandidate's per-node pod checks, shared by the looks of one round
    #: (:mod:`karpy.disruption.podchecks`); None: computed every time
    pod_checks: PodChecksMemo | None = None
    #: computeConsolidation's no-command answers while the cluster is unchanged
    #: (:mod:`karpy.disruption.consolidationmemo`); None: computed every time
    consolidation_memo: ConsolidationAnswers | None = None
    #: what every SimulateScheduling of this look shares (karpy.disruption.helpers.SimulationShare,
    #: made by the first; a look is not edited while its methods compute)
    simulation_share: Any = None
    #: IsCurrentlyReschedulable kept across looks for the pods whose answer time and PDBs cannot
    #: change (no PodDisruptionBudget, no do-not-disrupt: it is then IsReschedulable, a function of
    #: the pod object); None: asked every look
    lasting_movable: dict[int, tuple[Pod, bool]] | None = None
    _limits: Limits | None = None
    _pending: list[Pod] | None = None
    _movable: dict[int, tuple[Pod, bool]] = field(default_factory=dict)
    #: (id of a state node, disruption class) -> (the node, its pool's instance-type map, NewCandidate's
    #: answer, the events it published): the answer for every method of this look (look_candidate)
    candidate_answers: dict[tuple[int, str], tuple[StateNode, Any, Any, list[tuple[str, str, str]]]] = field(
        default_factory=dict)

    #: False: NewCandidate is asked for every node by every method of a look (the plain path
    #: tests/disruption/test_candidates_equivalence.py compares against)
    share_candidates: ClassVar[bool] = True

    def pdb_limits(self) -> Limits:
        if self._limits is None:
            self._limits = Limits.from_objects(self.pdbs, self.pods)
        return self._limits

    def currently_reschedulable(self, pod: Pod) -> bool:
        """Limits.IsCurrentlyReschedulable at this look's instant, asked once per pod per look
        (SimulateScheduling and the consolidation memo's fingerprint read it for the same pods)."""
        hit = self._movable.get(id(pod))
        if hit is not None and hit[0] is pod:
            return hit[1]
        limits = self.pdb_limits()
        lasting = self.lasting_movable
        if lasting is not None and not limits.items and DO_NOT_DISRUPT_ANNOTATION_KEY not in (
                pod.metadata.annotations or {}):
            hit = lasting.get(id(pod))
            if hit is None or hit[0] is not pod:
                if len(lasting) > 2 * len(self.pods) + 1024:
                    lasting.clear()  # bounded by the live cluster: the pods of earlier looks go
                hit = lasting[id(pod)] = (pod, limits.is_currently_reschedulable(pod, self.now))
            ok = hit[1]
        else:
            ok = limits.is_currently_reschedulable(pod, self.now)
        self._movable[id(pod)] = (pod, ok)
        return ok

    def movable_keyed(self, c: Candidate) -> list[tuple[str, Pod]]:
        """(key, pod) of ``c``'s currently reschedulable pods, in its reschedulable pods' order (by
        key). While that cannot change -- no PodDisruptionBudget, no do-not-disrupt pod: each
        answer is then IsReschedulable of the pod object (``lasting_movable``) -- it is kept on the
        node's PodChecks, which later looks get back for the very same pods (PodChecksMemo)."""
        checks = c.pod_checks if self.lasting_movable is not None and not self.pdb_limits().items else None
        if checks is not None:
            hit: list[tuple[str, Pod]] | None = checks.kept.get("movable_keyed")
            if hit is not None:
                return hit
        movable = self.currently_reschedulable
        out = [(p.key, p) for p in c.reschedulable_pods if movable(p)]
        if checks is not None and not any(DO_NOT_DISRUPT_ANNOTATION_KEY in (p.metadata.annotations or {})
                                          for p in c.reschedulable_pods):
            checks.kept["movable_keyed"] = out
        return out

    #: False: a candidate's prepared pods are asked of the provisioner at every simulation (the
    #: plain path tests/disruption/test_podchecks_equivalence.py compares against)
    keep_prepared: ClassVar[bool] = True

    def movable_prepared(self, c: Candidate, keyed: list[tuple[str, Pod]]) -> list[Prepared]:
        """The provisioner's ``prepare`` of the pods of ``keyed`` (:meth:`movable_keyed` of ``c``),
        kept with them on the node's PodChecks while they are kept there, for the provisioner's
        SpecMemo they came from (a Solve compares its likeness numbers)."""
        prov = self.provisioner
        checks = c.pod_checks
        if not self.keep_prepared or checks is None or checks.kept.get("movable_keyed") is not keyed:
            fresh: list[Prepared] = prov.prepare([p for _, p in keyed])
            return fresh
        specs = prov.scheduler_cache.specs
        hit = checks.kept.get("movable_prepared")
        if hit is None or hit[0] is not specs or hit[1] != prov.preference_policy:
            hit = checks.kept["movable_prepared"] = (specs, prov.preference_policy,
                                                     prov.prepare([p for _, p in keyed]))
        kept: list[Prepared] = hit[2]
        return kept

    def pending_pods(self) -> list[Pod]:
        """The provisioner's pending pods of this look (GetPendingPods; asked once per look). A bound
        pod is never provisionable, so it is handed the snapshot's unbound pods when it knows them."""
        if self._pending is None:
            unbound = self.state.unbound_pods(self.pods)
            self._pending, _ = self.provisioner.pending_pods(self.pods if unbound is None else unbound)
        return self._pending

    def is_nominated(self, name: str) -> bool:
        return self.nominated_until.get(name, -1.0) > self.now

    def publish(self, reason: str, obj: str, message: str) -> None:
        self.events.append((reason, obj, message))


class CandidateError(str):
    """Why a state node is not a candidate (upstream's error text)."""


@dataclass
class Candidate:
    """types.go Candidate."""

    state_node: StateNode
    nodepool: Any
    instance_type: Any | None
    capacity_type: str | None
    zone: str | None
    reschedulable_pods: list[Pod]
    disruption_cost: float
    price: float
    reschedule_disruption_cost: float
    #: the node's pod checks this candidate was made from (None: made otherwise)
    pod_checks: PodChecks | None = None

    @property
    def name(self) -> str:
        return self.state_node.name

    @property
    def nodeclaim(self) -> Any:
        return self.state_node.nodeclaim

    @property
    def node(self) -> Any:
        return self.state_node.node

    def labels(self) -> dict[str, str]:
        return self.state_node.labels()

    def savings_ratio(self) -> float:
        """types.go SavingsRatio = Price / RescheduleDisruptionCost."""
        return self.price / self.reschedule_disruption_cost

    def is_empty(self) -> bool:
        """types.go IsEmpty: no reschedulable pod with a positive eviction cost."""
        return self.reschedule_disruption_cost <= PER_NODE_BASE_DISRUPTION_COST

    def owned_by_static_nodepool(self) -> bool:
        return self.nodepool.spec.replicas is not None

    def __repr__(self) -> str:
        return f"Candidate({self.name!r})"


def _sentence(text: str) -> str:
    """pretty.Sentence: first letter upper-cased."""
    return text[:1].upper() + text[1:]


def validate_node_disruptable(sn: StateNode, cluster: Cluster) -> str | None:
    """statenode.go ValidateNodeDisruptable (:212-237), the upstream texts in order."""
    if sn.nodeclaim is None:
        return "node isn't managed by karpenter"
    if sn.node is None:
        return "nodeclaim does not have an associated node"
    if not sn.initialized():
        return "node isn't initialized"
    if sn.marked_for_deletion():
        return "node is deleting or marked for deletion"
    if cluster.is_nominated(sn.name):
        return "node is nominated for a pending pod"
    if (sn.node.metadata.annotations or {}).get(DO_NOT_DISRUPT_ANNOTATION_KEY) == "true":
        return f'disruption is blocked through the "{DO_NOT_DISRUPT_ANNOTATION_KEY}" annotation'
    if LABEL_NODEPOOL not in sn.labels():
        return f"node doesn't have required label (label={LABEL_NODEPOOL})"
    return None


def validate_pods_disruptable(sn: StateNode, cluster: Cluster) -> tuple[list[Any], str | None, bool]:
    """statenode.go ValidatePodsDisruptable: (pods, error, is a PodBlockEvictionError). All bound
    pods count (DaemonSet and mirror pods can block; terminating and terminal ones cannot)."""
    pods = sorted(sn.pods, key=lambda p: p.key)
    for p in pods:
        if not is_disruptable(p, cluster.now, cluster.events):
            return pods, f'pod has "{DO_NOT_DISRUPT_ANNOTATION_KEY}" annotation (Pod={p.key})', True
    keys, ok = cluster.pdb_limits().can_evict_pods(pods, cluster.now, cluster.events)
    if not ok:
        if len(keys) > 1:
            return pods, f"eviction does not support multiple PDBs (PodDisruptionBudget(s)=[{' '.join(keys)}])", True
        return pods, f"pdb prevents pod evictions (PodDisruptionBudget=[{' '.join(keys)}])", True
    return pods, None, False


def resolve_node_price(sn: StateNode, instance_type: Any | None) -> float:
    """types.go resolveNodePrice: the *first* offering in the node's zone and capacity type,
    whatever its availability (InstanceType.OfferingPrice); none or NaN → 0."""
    if instance_type is None:
        return 0.0
    labels = sn.labels()
    zone, ct = labels.get(LABEL_ZONE), labels.get(LABEL_CAPACITY_TYPE)
    for o in instance_type.offerings:
        if o.zone == zone and o.capacity_type == ct:
            return 0.0 if math.isnan(o.price) else o.price
    return 0.0


def new_candidate(sn: StateNode, cluster: Cluster, disruption_class: str,
                  instance_type_maps: dict[str, dict[str, Any] | None]) -> Candidate | CandidateError:
    """types.go NewCandidate (:161-212): a Candidate or the reason it is not one (blocked nodes
    also get a ``DisruptionBlocked`` event, as upstream)."""
    name = sn.name
    if name in cluster.in_queue:
        return CandidateError("candidate is already being disrupted")
    err = validate_node_disruptable(sn, cluster)
    if err is not None:
        if sn.nodeclaim is not None:
            cluster.publish("DisruptionBlocked", f"node/{name}", _sentence(err))
        return CandidateError(err)
    labels = sn.labels()
    pool_name = labels[LABEL_NODEPOOL]
    nodepool = cluster.nodepools.get(pool_name)
    it_map = instance_type_maps.get(pool_name)
    if nodepool is None or it_map is None:
        cluster.publish("DisruptionBlocked", f"node/{name}", f"NodePool not found (NodePool={pool_name})")
        return CandidateError(f"nodepool not found (NodePool={pool_name})")
    instance_type = it_map.get(labels.get(LABEL_INSTANCE_TYPE, ""))
    checks = (cluster.pod_checks.get(sn, cluster, validate_pods_disruptable) if cluster.pod_checks is not None
              else pod_checks(sn, cluster, validate_pods_disruptable))
    err = checks.error
    if err is not None:
        assert sn.nodeclaim is not None  # validate_node_disruptable turned unmanaged nodes away
        eventual_ok = sn.nodeclaim.spec.termination_grace_period is not None and disruption_class == EVENTUAL
        if not (eventual_ok and checks.block_eviction):
            cluster.publish("DisruptionBlocked", f"node/{name}", _sentence(err))
            return CandidateError(err)
    return Candidate(
        state_node=sn,
        nodepool=nodepool,
        instance_type=instance_type,
        capacity_type=labels.get(LABEL_CAPACITY_TYPE),
        zone=labels.get(LABEL_ZONE),
        reschedulable_pods=list(checks.reschedulable),
        disruption_cost=checks.rescheduling_cost * lifetime_remaining(sn.nodeclaim, cluster.now),
        price=resolve_node_price(sn, instance_type),
        reschedule_disruption_cost=PER_NODE_BASE_DISRUPTION_COST + checks.eviction_costs,
        pod_checks=checks,
    )


def look_candidate(sn: StateNode, cluster: Cluster, disruption_class: str,
                   instance_type_maps: dict[str, dict[str, Any] | None]) -> Candidate | CandidateError:
    """:func:`new_candidate`, asked once per node and disruption class per look: the methods of a
    round that find no command share the look (DisruptionController._run_methods), and NewCandidate
    reads nothing they change; the events it published are published again. Not in upstream (each
    method asks GetCandidates anew). Asked again when the node's pool maps to other instance types."""
    if not cluster.share_candidates:
        return new_candidate(sn, cluster, disruption_class, instance_type_maps)
    it_map = instance_type_maps.get(sn.labels().get(LABEL_NODEPOOL, ""))
    key = (id(sn), disruption_class)
    hit = cluster.candidate_answers.get(key)
    if hit is not None and hit[0] is sn and hit[1] is it_map:
        cluster.events.extend(hit[3])
        answer: Candidate | CandidateError = hit[2]
        return answer
    before = len(cluster.events)
    answer = new_candidate(sn, cluster, disruption_class, instance_type_maps)
    cluster.candidate_answers[key] = (sn, it_map, answer, cluster.events[before:])
    return answer


class Method(Protocol):
    """types.go Method: what the controller asks of each disruption method (emptiness, static
    drift, drift, multi- and single-node consolidation)."""

    name: str
    reason: str
    disruption_class: str
    #: whether its commands wait COMMAND_VALIDATION_DELAY and are validated before they start
    validates: bool

    def should_disrupt(self, c: Candidate, cluster: Cluster) -> bool: ...

    def compute_commands(self, cluster: Cluster, budgets: dict[str, int],
                         candidates: Sequence[Candidate]) -> list[Command]: ...


@dataclass
class Command:
    """types.go Command: candidates to remove and the NodeClaims (provisioning claims) to launch
    first. ``method``/``reason`` are set when the controller starts it; ``id`` is a counter."""

    candidates: list[Candidate]
    replacements: list[Any] = field(default_factory=list)
    results: Any = None
    method: str | None = None
    reason: str | None = None
    id: int = 0
    created_at: float = 0.0

    def decision(self) -> str:
        if self.candidates and self.replacements:
            return DECISION_REPLACE
        if self.candidates:
            return DECISION_DELETE
        return DECISION_NOOP

    def source_cost(self) -> float:
        return sum(c.price for c in self.candidates)

    def estimated_savings(self) -> float:
        """types.go EstimatedSavings: delete = Σ price; replace = Σ price − the cheapest available
        compatible offering of each replacement's first (cheapest) option."""
        source = self.source_cost()
        if not self.replacements:
            return source
        dest = 0.0
        for nc in self.replacements:
            if nc.instance_type_options:
                offs = nc.instance_type_options[0].offerings.available().compatible(nc.requirements)
                best = offs.cheapest()
                if best is not None:
                    dest += best.price
        return source - dest

    def __str__(self) -> str:
        """types.go String (the full form: ``<Reason>/<id>: <decision>: nodepools=[..]: [..] ...``)."""
        sources = ", ".join(c.name for c in self.candidates)
        pools = ",".join(dict.fromkeys(c.nodepool.metadata.name for c in self.candidates))
        repl = ""
        if self.replacements:
            n = len(self.replacements)
            repl = f" -> [{n} {'replacement' if n == 1 else 'replacements'}]"
        if self.method is None:
            return f"{self.decision()}: [{sources}]{repl}"
        return (f"{self.reason}/{self.id}: {self.decision()}: nodepools=[{pools}]: [{sources}]{repl} "
                f"(savings: ${self.estimated_savings():.2f})")

    def string_for_node(self, candidate: Any) -> str:
        """types.go StringForNode: the command from one source candidate's side -- the whole
        command for a single node, else ``<decision>: [<node>] (part of N-node consolidation)``."""
        if len(self.candidates) == 1:
            return str(self)
        return f"{self.decision()}: [{candidate.name}] (part of {len(self.candidates)}-node consolidation)"
