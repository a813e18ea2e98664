"""SimulateScheduling, GetCandidates and the NodePool maps every method shares.

Mirrors pkg/controllers/disruption/helpers.go (SimulateScheduling, UninitializedNodeError,
GetCandidates, BuildNodePoolMap) and the consolidation option of the provisioning scheduler
(scheduling.IsConsolidationSimulation: an existing node still under its NodePool's
consolidateAfter accepts only pending pods and pods of deleting nodes; scheduler.go
addToExistingNode :628-632) plus Results.AllNonPendingPodsScheduled /
NonPendingPodSchedulingErrors (scheduler.go :388-415).

Determinism: state nodes are ordered by name before filtering (upstream: map order); pods fed to
the scheduler are pending pods (store order), then candidate pods and deleting-node pods sorted by
key; NonPendingPodSchedulingErrors lists pods sorted by key.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from karpy.api.nodepool import parse_duration
from karpy.utils import pod as podutils
from karpy.provisioning.existingnode import ExistingNode
from karpy.provisioning.existingnodememo import ExistingNodeMemo
from karpy.provisioning.scheduler import Results
from karpy.scheduling.labels import LABEL_NODEPOOL
from karpy.disruption.certainfailure import CertainFailure
from karpy.disruption.queueorder import LookOrder
from karpy.disruption.types import Candidate, CandidateError, Cluster, condition, look_candidate
from karpy.utils.duration import to_seconds

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = [
    "ERR_CANDIDATE_DELETING",
    "SimulationResults",
    "SimulationShare",
    "build_nodepool_map",
    "get_candidates",
    "get_candidates_with_totals",
    "is_under_consolidate_after",
    "simulate_scheduling",
]

ERR_CANDIDATE_DELETING = "candidate is deleting"
#: scheduler.go NonPendingPodSchedulingErrors MaxErrors
MAX_ERRORS = 5


def is_under_consolidate_after(nodepool: Any, nodeclaim: Any, now: float) -> bool:
    """pkg/utils/disruption IsUnderConsolidateAfter: consolidateAfter set and > 0, the NodeClaim
    initialized, and less than consolidateAfter since its lastPodEventTime (else since it became
    Initialized)."""
    if nodepool is None or nodeclaim is None:
        return False
    after = parse_duration(nodepool.spec.disruption.consolidate_after)
    if not after:
        return False
    init = condition(nodeclaim, "Initialized")
    if init is None or init.status != "True":
        return False
    last = to_seconds(getattr(nodeclaim.status, "last_pod_event_time", None))
    t = last if last is not None else (to_seconds(init.last_transition_time) or 0.0)
    return now - t < after


def _consolidate_after_gated(deleting_keys: frozenset[str]) -> type[ExistingNode]:
    """An ExistingNode class for nodes under consolidateAfter in a consolidation simulation: only
    pending pods and pods of deleting nodes may land on it (scheduler.go addToExistingNode). Same
    layout as ExistingNode (no new slots), so a node built by the Scheduler can switch to it."""

    def can_add(self: ExistingNode, pod: Pod, pod_data: Any) -> tuple[Any, str | None]:
        if pod.status.phase != "Pending" and pod.key not in deleting_keys:
            return None, "node is under consolidateAfter"
        return ExistingNode.can_add(self, pod, pod_data)

    return type("ConsolidateAfterGatedNode", (ExistingNode,), {"__slots__": (), "can_add": can_add})


@dataclass
class SimulationResults:
    """scheduling.Results of a disruption simulation, with the helpers disruption reads."""

    results: Results
    pods: dict[str, Any] = field(default_factory=dict)  # key -> pod, every pod simulated
    #: ids of the look's pending pods among ``pods`` (GetPendingPods kept them as provisionable)
    pending: frozenset[int] = frozenset()
    _errors: dict[str, str] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def new_nodeclaims(self) -> list[Any]:
        return self.results.new_nodeclaims

    @property
    def pod_errors(self) -> dict[str, str]:
        return self.results.pod_errors

    def _non_pending_errors(self) -> dict[str, str]:
        # asked twice when a simulation fails (the check, then its message); the results are not edited between
        if self._errors is None:
            pending, pods, tried = self.pending, self.pods, self.results.pods
            self._errors = {}
            for k, v in self.results.pod_errors.items():
                pod = pods.get(k) or tried[k]
                if id(pod) not in pending and not podutils.is_provisionable(pod):
                    self._errors[k] = v
        return self._errors

    def all_non_pending_pods_scheduled(self) -> bool:
        """Results.AllNonPendingPodsScheduled: every failing pod is a provisionable (pending) one."""
        return not self._non_pending_errors()

    def non_pending_pod_scheduling_errors(self) -> str:
        """Results.NonPendingPodSchedulingErrors (pods sorted by key, at most five named)."""
        errs = self._non_pending_errors()
        if not errs:
            return "No Pod Scheduling Errors"
        msg = "not all pods would schedule, "
        for i, k in enumerate(sorted(errs)):
            msg += f"{k} => {errs[k]} "
            if i + 1 >= MAX_ERRORS:
                msg += f" and {len(errs) - MAX_ERRORS} other(s)"
                break
        return msg


class SimulationShare:
    """What every SimulateScheduling of one look reads alike: the state nodes in name order split
    into deleting and active ones, the deleting nodes' currently reschedulable pods, which nodes are
    under consolidateAfter, the snapshot's ExistingNodes (:mod:`karpy.provisioning.existingnodememo`)
    and which pods are the look's pending ones (provisionable: AllNonPendingPodsScheduled skips them).
    Not in upstream (each call derives them); the same answers because a look is not edited while
    its methods compute (the controller takes a new look after acting). Also the look's failed
    simulations, answered again for the same candidates and gating (``failed``). Checked against the
    plain path by tests/disruption/test_simulationshare_equivalence.py and
    test_failed_simulation_reuse.py."""

    #: False: every call derives everything (the plain path the equivalence test compares against)
    enabled = True
    #: False: a failed simulation is run again when the look asks for it again (the plain path)
    reuse_failed = True

    def __init__(self, cluster: Cluster) -> None:
        self.state = cluster.state
        nodes = sorted(cluster.state.nodes, key=lambda n: n.name)
        self.deleting = [n for n in nodes if n.marked_for_deletion()]
        self.deleting_names = frozenset(n.name for n in self.deleting)
        self.active = [n for n in nodes if not n.marked_for_deletion()]
        #: (name, node) of ``active`` (StateNode.name reads the Node's registration each time)
        self.active_named = [(n.name, n) for n in self.active]
        movable = cluster.currently_reschedulable
        #: (key, pod) of the deleting nodes' currently reschedulable pods, by key; the pods; their keys
        self.deleting_keyed, self.deleting_pods, self.deleting_keys = _deleting_pods(self.deleting, movable)
        #: ids of ``deleting_pods`` (held by it, so no id is reused while the share lives)
        self.deleting_ids = frozenset(map(id, self.deleting_pods))
        self.gated_class = _consolidate_after_gated(self.deleting_keys)
        self.existing_nodes = ExistingNodeMemo(cluster.state)
        self.pending_ids = frozenset(map(id, cluster.pending_pods()))
        self._gated: tuple[frozenset[str], frozenset[int]] | None = None
        #: failed simulations by (candidate names, the nodes gated by consolidateAfter in it): drift's
        #: simulation of a node and single-node consolidation's of the same node read the same inputs
        #: when no node is gated, and a failed one is read, never edited, by every method
        self.failed: dict[tuple[tuple[str, ...], frozenset[str]], SimulationResults] = {}
        self._pending_keyed: tuple[list[Pod], list[tuple[str, Pod]]] | None = None
        self._pending_key_by_id: tuple[list[Pod], dict[int, str]] | None = None
        #: Provisioner.prepare of the pending and the deleting pods, under the SpecMemo it read
        self._pending_prepared: tuple[list[Pod], Any, list[Any]] | None = None
        self._deleting_prepared: tuple[Any, list[Any]] | None = None
        self._look_order: LookOrder | None = None
        #: id of a prepared list -> (it, its distinct requests)
        self._requests_of: dict[int, tuple[list[Any], dict[Any, Any]]] = {}

    def pending_prepared(self, pending: list[Pod], prov: Any) -> list[Any]:
        """``prov.prepare`` of the look's pending pods (the same list each time it is asked)."""
        held = self._pending_prepared
        specs = prov.scheduler_cache.specs
        if held is None or held[0] is not pending or held[1] is not specs:
            held = self._pending_prepared = (pending, specs, prov.prepare(pending))
        return held[2]

    def look_order(self, pending: list[Pod], pending_prepared: list[Any], deleting_prepared: list[Any]) -> LookOrder:
        """The look's pending and deleting pods in queue order (what :meth:`pending_prepared` and
        :meth:`deleting_prepared` answered: built again when either is)."""
        held = self._look_order
        if held is None or held.pending is not pending_prepared or held.deleting is not deleting_prepared:
            held = self._look_order = LookOrder(pending, pending_prepared, self.deleting_pods, deleting_prepared)
        return held

    def requests_of(self, prepared: list[Any]) -> dict[Any, Any]:
        """:func:`distinct_requests` of one of this look's prepared lists (kept while it is the one)."""
        held = self._requests_of.get(id(prepared))
        if held is None or held[0] is not prepared:
            held = self._requests_of[id(prepared)] = (prepared, distinct_requests(prepared))
        return held[1]

    def deleting_prepared(self, prov: Any) -> list[Any]:
        """``prov.prepare`` of :attr:`deleting_pods`."""
        held = self._deleting_prepared
        specs = prov.scheduler_cache.specs
        if held is None or held[0] is not specs:
            held = self._deleting_prepared = (specs, prov.prepare(self.deleting_pods))
        return held[1]

    def pending_keyed(self, pending: list[Pod]) -> list[tuple[str, Pod]]:
        """(key, pod) of the look's pending pods, in their order (the same list each time it is asked)."""
        held = self._pending_keyed
        if held is None or held[0] is not pending:
            held = self._pending_keyed = (pending, [(p.key, p) for p in pending])
        return held[1]

    def pending_key_by_id(self, pending: list[Pod]) -> dict[int, str]:
        """id -> key of the look's pending pods (held by ``pending``, so no id is reused)."""
        held = self._pending_key_by_id
        if held is None or held[0] is not pending:
            held = self._pending_key_by_id = (pending, {id(p): k for k, p in self.pending_keyed(pending)})
        return held[1]

    @classmethod
    def of(cls, cluster: Cluster) -> SimulationShare | None:
        """The look's share (None when switched off)."""
        if not cls.enabled:
            return None
        share = cluster.simulation_share
        if not isinstance(share, SimulationShare) or share.state is not cluster.state:
            share = cluster.simulation_share = cls(cluster)
        return share

    def gated(self, cluster: Cluster) -> tuple[frozenset[str], frozenset[int]]:
        """The names and ids of the active nodes that are managed and under their NodePool's
        consolidateAfter at this look (the share holds the nodes, so no id is reused)."""
        if self._gated is None:
            gated = [(name, n) for name, n in self.active_named if _gated(cluster, n)]
            self._gated = (frozenset(name for name, _ in gated), frozenset(id(n) for _, n in gated))
        return self._gated


def _deleting_pods(deleting: Sequence[Any], movable: Callable[[Pod], bool]
                   ) -> tuple[list[tuple[str, Pod]], list[Pod], frozenset[str]]:
    """The deleting nodes' currently reschedulable pods as (key, pod) by key, the pods, their keys."""
    keyed = sorted(((p.key, p) for n in deleting for p in n.pods if movable(p)), key=itemgetter(0))
    return keyed, [p for _, p in keyed], frozenset(k for k, _ in keyed)


def _gated(cluster: Cluster, sn: Any) -> bool:
    pool = cluster.nodepools.get(sn.labels().get(LABEL_NODEPOOL, ""))
    return sn.managed() and is_under_consolidate_after(pool, sn.nodeclaim, cluster.now)


def _pods_to_solve(cluster: Cluster, candidates: Sequence[Candidate], share: SimulationShare | None,
                   deleting_pods: list[Pod], deleting_keyed: list[tuple[str, Pod]]
                   ) -> tuple[list[Pod], list[Any], dict[str, Pod], list[Pod] | None, dict[Any, Any] | None]:
    """SimulateScheduling's pods (pending, the candidates' currently reschedulable ones by key, the
    deleting nodes'), each one's PodData inputs (Provisioner.prepare: a candidate's are kept on its
    checks), the pods by key and, through the look's share, the pods in queue order (queueorder)
    and their distinct requests (existingnodememo)."""
    prov = cluster.provisioner
    pending = cluster.pending_pods()
    per_candidate = [(keyed, cluster.movable_prepared(c, keyed)) for c in candidates
                     for keyed in (cluster.movable_keyed(c),)]
    leaving = [(k, p, a) for keyed, prep in per_candidate for (k, p), a in zip(keyed, prep)]
    leaving.sort(key=itemgetter(0))
    leaving_pods, leaving_prepared = [p for _, p, _ in leaving], [a for _, _, a in leaving]
    pods = list(pending) + leaving_pods + deleting_pods
    order = requests = None
    if share is not None:
        pending_prepared, deleting_prepared = share.pending_prepared(pending, prov), share.deleting_prepared(prov)
        prepared = pending_prepared + leaving_prepared + deleting_prepared
        requests = {**share.requests_of(pending_prepared), **share.requests_of(deleting_prepared)}
        for _, prep in per_candidate:  # (a candidate's list is kept on its checks while its pods are)
            requests.update(share.requests_of(prep))
        if LookOrder.enabled:
            order = share.look_order(pending, pending_prepared, deleting_prepared).merged(leaving_pods,
                                                                                          leaving_prepared)
    else:
        prepared = prov.prepare(pending) + leaving_prepared + prov.prepare(deleting_pods)
    # {p.key: p for p in pods}, each key read once (the pending and deleting pods' once per look)
    all_pods = dict(share.pending_keyed(pending) if share is not None else [(p.key, p) for p in pending])
    all_pods.update((k, p) for k, p, _ in leaving)
    all_pods.update(deleting_keyed)
    return pods, prepared, all_pods, order, requests


def distinct_requests(prepared: Sequence[Any]) -> dict[Any, Any]:
    """requests key -> requests of the pods ``prepared`` stands for (Provisioner.prepare's answers)."""
    return {a.derived.requests_key: a.derived.requests for a in prepared}


def _gate(cluster: Cluster, share: SimulationShare | None, scheduler: Any, deleting_keys: frozenset[str]) -> None:
    """A consolidation simulation's existing nodes under consolidateAfter take only pending pods and
    deleting nodes' pods (scheduler.go addToExistingNode)."""
    if share is not None:
        _, gated_ids = share.gated(cluster)
        for en in scheduler.existing_nodes:
            if id(en.state_node) in gated_ids:
                en.__class__ = share.gated_class
    else:
        gated = _consolidate_after_gated(deleting_keys)
        for en in scheduler.existing_nodes:
            if _gated(cluster, en.state_node):
                en.__class__ = gated


def simulate_scheduling(cluster: Cluster, candidates: Sequence[Candidate], consolidation: bool
                        ) -> SimulationResults | str:
    """helpers.go SimulateScheduling: Solve pending pods + the candidates' currently reschedulable
    pods + deleting nodes' pods onto every active node except the candidates and new NodeClaims;
    returns :data:`ERR_CANDIDATE_DELETING` when a candidate is already deleting."""
    names = {c.name for c in candidates}
    share = SimulationShare.of(cluster)
    movable = cluster.currently_reschedulable
    if share is not None:
        if not share.deleting_names.isdisjoint(names):
            return ERR_CANDIDATE_DELETING
        state_nodes = [n for name, n in share.active_named if name not in names]
        deleting_pods = share.deleting_pods
        deleting_keyed = share.deleting_keyed
        deleting_keys: frozenset[str] = share.deleting_keys
        deleting_ids: frozenset[int] = share.deleting_ids
    else:
        nodes = sorted(cluster.state.nodes, key=lambda n: n.name)
        deleting = [n for n in nodes if n.marked_for_deletion()]
        if any(n.name in names for n in deleting):
            return ERR_CANDIDATE_DELETING
        state_nodes = [n for n in nodes if not n.marked_for_deletion() and n.name not in names]
        deleting_keyed, deleting_pods, deleting_keys = _deleting_pods(deleting, movable)
        deleting_ids = frozenset()  # (the plain path asks every key)
    failed_key = None
    if share is not None and share.reuse_failed:
        gated_names: frozenset[str] = frozenset()
        if consolidation:
            gated_names, _ = share.gated(cluster)
            gated_names -= names
        failed_key = (tuple(sorted(names)), gated_names)
        hit = share.failed.get(failed_key)
        if hit is not None:
            return hit
    prov = cluster.provisioner
    pods, prepared, all_pods, order, requests = _pods_to_solve(cluster, candidates, share, deleting_pods,
                                                               deleting_keyed)
    scheduler = prov.new_scheduler(pods, list(cluster.nodepools.values()), cluster.state, state_nodes,
                                   cluster.daemonsets, cluster.instance_types,
                                   instance_types_key_for=cluster.instance_types_key,
                                   existing_nodes_memo=share.existing_nodes if share is not None else None,
                                   prepared=prepared, requests=requests)
    if scheduler is None:
        from karpy.provisioning.provisioner import ERR_NO_DYNAMIC_NODEPOOLS

        return SimulationResults(Results([], [], {p.key: ERR_NO_DYNAMIC_NODEPOOLS for p in pods},
                                         dict(all_pods)), all_pods)
    if consolidation:
        _gate(cluster, share, scheduler, deleting_keys)
    placed = CertainFailure.of(all_pods, share.pending_ids, deleting_keys, scheduler) if share is not None else None
    results = scheduler.solve(pods, placed, order)
    results = results.truncate_instance_types(prov.max_instance_types, prov.min_values_policy, prov.well_known)
    # (a pending pod's key from the look's, by identity; a relaxed copy reads its own)
    pending_keys = share.pending_key_by_id(cluster.pending_pods()) if share is not None else {}
    for en in results.existing_nodes:
        if en.initialized():
            continue
        for p in en.pods:
            # (a deleting node's pod, the common case, by identity first; a relaxed copy by its key)
            if id(p) in deleting_ids:
                continue
            key = pending_keys.get(id(p)) or p.key
            if key not in deleting_keys:
                nc = en.state_node.nodeclaim
                nc_name = nc.metadata.name if nc is not None else ""
                node_name = en.state_node.node.metadata.name if en.state_node.node is not None else ""
                results.pod_errors[key] = f"would schedule against uninitialized nodeclaim/{nc_name}, node/{node_name}"
                results.pods[key] = p
    out = SimulationResults(results, all_pods, share.pending_ids if share is not None else frozenset())
    if failed_key is not None and share is not None and not out.all_non_pending_pods_scheduled():
        share.failed[failed_key] = out
    return out


def build_nodepool_map(cluster: Cluster, memo: dict[str, tuple[Hashable, dict[str, Any] | None]] | None = None
                       ) -> dict[str, dict[str, Any] | None]:
    """helpers.go BuildNodePoolMap: per managed NodePool its instance types by name; a pool whose
    lookup fails or returns none gets None (its nodes are then "NodePool not found"). ``memo``
    (pool name -> the provider's key and the map built under it) gives a pool the map it had while
    the cloud provider's key for its types holds (the same key: the same types)."""
    out: dict[str, dict[str, Any] | None] = {}
    key_of = cluster.instance_types_key
    kept = memo if memo is not None and key_of is not None else None
    for name in sorted(cluster.nodepools):
        np = cluster.nodepools[name]
        key: Hashable | None = None
        try:
            if kept is not None and key_of is not None:
                key = key_of(np)
                hit = kept.get(name)
                if key is not None and hit is not None and hit[0] == key:
                    out[name] = hit[1]
                    continue
            its = cluster.instance_types(np)
        except Exception:  # noqa: BLE001 - upstream logs and skips the pool
            key, its = None, []
        out[name] = {it.name: it for it in its} if its else None
        if kept is not None and key is not None:
            kept[name] = (key, out[name])
    return out


def get_candidates(cluster: Cluster, should_disrupt: Callable[[Candidate], bool], disruption_class: str,
                   nodepool_map: dict[str, dict[str, Any] | None] | None = None,
                   rejected: dict[str, str] | None = None) -> list[Candidate]:
    """helpers.go GetCandidates: every state node that is a candidate and passes the method's
    filter, in node-name order (upstream: map order). ``rejected`` (optional) receives
    name -> why a node was not a candidate."""
    return get_candidates_with_totals(cluster, should_disrupt, disruption_class, nodepool_map, rejected,
                                      totals=False)[0]


def get_candidates_with_totals(cluster: Cluster, should_disrupt: Callable[[Candidate], bool], disruption_class: str,
                               nodepool_map: dict[str, dict[str, Any] | None] | None = None,
                               rejected: dict[str, str] | None = None, totals: bool = True
                               ) -> tuple[list[Candidate], dict[str, Any]]:
    """helpers.go GetCandidatesWithTotals: the candidates, and the Balanced NodePool totals
    (:func:`karpy.disruption.balanced.compute_nodepool_totals`) over *all* candidates before the
    method's filter and all nodes (``totals=False``: skip them, GetCandidates)."""
    from karpy.disruption.balanced import compute_nodepool_totals, is_balanced

    nodepool_map = nodepool_map if nodepool_map is not None else build_nodepool_map(cluster)
    nodes = sorted(cluster.state.nodes, key=lambda n: n.name)
    every: list[Candidate] = []
    for sn in nodes:
        cand = look_candidate(sn, cluster, disruption_class, nodepool_map)
        if isinstance(cand, CandidateError):
            if rejected is not None:
                rejected[sn.name] = str(cand)
            continue
        every.append(cand)
    # the totals are only read for Balanced pools: skipping them when no pool is Balanced changes nothing
    balanced = totals and any(is_balanced(np) for np in cluster.nodepools.values())
    pool_totals = compute_nodepool_totals(cluster, every, nodes) if balanced else {}
    return [c for c in every if should_disrupt(c)], pool_totals
