"""TopologyAwareWorkloadScheduling (v1.37 alpha): PlacementGenerate, PlacementScore and the placement
phases of a PodGroup cycle, as pure functions over karpy's NodeInfo / PodInfo.

Mirrors pkg/scheduler/framework/plugins/topologyaware/topology_placement.go (TopologyPlacement),
pkg/scheduler/framework/plugins/podgrouppodscount/podgroup_pods_count.go (PodGroupPodsCount),
the framework runtime's RunPlacementScorePlugins (weighted, normalised sum) and
pkg/scheduler/schedule_one_podgroup.go (podGroupSchedulingPlacementAlgorithm,
findBestPodGroupPlacement, findBestPlacement). The per-pod algorithm inside one placement
(podGroupSchedulingDefaultAlgorithm) is the caller's: it is passed in as ``evaluate``.

Determinism (documented differences from Go, outcomes otherwise equal):
* TopologyPlacement builds its placements from a Go map, so their order is random; here they come in
  the order their domain first appears among the parent placement's nodes (node-tree order).
* findBestPlacement breaks a TotalScore tie with ``rand.Int()`` per placement; here, without an
  ``rng``, the earliest placement (generation order) wins; with an ``rng`` each placement draws a
  randomizer like Go and the largest wins.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Protocol

from .nodeinfo import NodeInfo
from .podinfo import PodInfo
from .types import MAX_NODE_SCORE, MIN_NODE_SCORE, Code, Status

__all__ = [
    "ERR_POD_GROUP_UNSCHEDULABLE",
    "MSG_NO_FEASIBLE_PLACEMENTS",
    "MSG_NO_PODS_IN_PLACEMENTS",
    "POD_GROUP_PODS_COUNT",
    "TOPOLOGY_PLACEMENT",
    "GroupResult",
    "Placement",
    "PlacementScorer",
    "PlacementView",
    "ProposedAssignment",
    "as_error",
    "core_placement_hook",
    "default_placement_scorers",
    "find_best_placement",
    "generate_placements",
    "no_placement_message",
    "normalize_pod_group_pods_count",
    "placement_algorithm",
    "run_placement_generate",
    "run_placement_score_plugins",
    "score_pod_group_pods_count",
    "unschedulable_with_error",
]

#: schedule_one_podgroup.go errPodGroupUnschedulable
ERR_POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"
#: podgroup_pods_count.go NormalizePlacementScore, when every score is 0
MSG_NO_PODS_IN_PLACEMENTS = "no pods from pod group are assigned to any of the candidate placements"
#: RunPlacementGeneratePlugins, when the plugins generate no placement
MSG_NO_FEASIBLE_PLACEMENTS = "no feasible placements found"
#: names.TopologyPlacementGenerator / names.PodGroupPodsCount
TOPOLOGY_PLACEMENT = "TopologyPlacement"
POD_GROUP_PODS_COUNT = "PodGroupPodsCount"


@dataclass(frozen=True, slots=True)
class Placement:
    """fwk.Placement{Name, Nodes}: a named subset of the nodes (a topology domain, or the parent)."""

    name: str
    nodes: tuple[NodeInfo, ...]

    def node_names(self) -> list[str]:
        return [ni.name for ni in self.nodes]


@dataclass(frozen=True, slots=True)
class ProposedAssignment:
    """fwk.ProposedAssignment: a pod the algorithm placed on a node (not yet bound). ``state`` is the
    pod's CycleState of that cycle (read back by the PodGroupPostFilter reprieve), if any."""

    pod: PodInfo
    node_name: str
    state: object = None


@dataclass(frozen=True, slots=True)
class PlacementView:
    """What the placement phase reads of one group node (a leaf PodGroup or a CompositePodGroup).

    ``key`` is the EntityKey string (``podgroup/ns/name`` or ``compositepodgroup/ns/name``);
    ``topology_key`` is ``schedulingConstraints.topology[0].key`` (None: no constraint, or the TAS gate
    off); ``scheduled_node_names`` the node of every scheduled (assumed or bound) pod of the group, or
    of every leaf under a CompositePodGroup (PodGroupState.ScheduledPods)."""

    key: str
    topology_key: Optional[str] = None
    scheduled_node_names: tuple[str, ...] = ()

    @property
    def scheduled_pods_count(self) -> int:
        return len(self.scheduled_node_names)


@dataclass(slots=True)
class GroupResult:
    """podGroupAlgorithmResult of one group node in one placement: its status, the pods it placed
    (``assignments``, in cycle order), the status of every evaluated pod by pod key, whether any pod
    was newly placed (``any_scheduled``) and the placement it ran in. ``err`` is Go's ``WithError``:
    ``status.message()`` already starts with it, and :func:`as_error` returns it alone."""

    key: str
    status: Status
    assignments: list[ProposedAssignment] = field(default_factory=list)
    pod_statuses: dict[str, Status] = field(default_factory=dict)
    any_scheduled: bool = False
    placement: Optional[Placement] = None
    err: Optional[str] = None
    #: the caller's own result object for this evaluation (see :func:`core_placement_hook`)
    payload: Any = None


def unschedulable_with_error(reasons: Sequence[str], err: str = ERR_POD_GROUP_UNSCHEDULABLE) -> tuple[Status, str]:
    """``fwk.NewStatus(Unschedulable, reasons...).WithError(err)``: Reasons() puts ``err`` first."""
    return Status(Code.UNSCHEDULABLE, [err, *reasons]), err


def as_error(result: GroupResult) -> str:
    """Status.AsError().Error(): the error given by WithError, else the joined reasons."""
    return result.err if result.err is not None else result.status.message()


# ---- PlacementGenerate: TopologyPlacement ------------------------------------------------------------
def generate_placements(view: PlacementView, parent: Placement,
                        node_lookup: Mapping[str, NodeInfo]) -> tuple[list[Placement], Status]:
    """TopologyPlacement.GeneratePlacements.

    No constraint: the parent placement itself. Otherwise one placement per value of the key among
    the parent's nodes (nodes without the label are left out), named by the value; when the group
    already has scheduled pods, only their domain (an Error if they span two domains, or sit on a node
    missing from ``node_lookup`` -- the snapshot -- or without the label). Empty list = no placement."""
    key = view.topology_key
    if key is None:
        return [parent], Status()
    required: Optional[str] = None
    if view.scheduled_node_names:
        domain, err = _scheduled_pods_domain(key, view.scheduled_node_names, node_lookup)
        if err:
            return [], Status(Code.ERROR, [f"cannot determine domain for already scheduled pods: {err}"])
        required = domain
    by_domain: dict[str, list[NodeInfo]] = {}
    for ni in parent.nodes:
        labels = ni.labels
        if key in labels:
            domain = labels[key]
            if required is None or domain == required:
                by_domain.setdefault(domain, []).append(ni)
    return [Placement(d, tuple(nodes)) for d, nodes in by_domain.items() if nodes], Status()


def _scheduled_pods_domain(key: str, node_names: Sequence[str],
                           node_lookup: Mapping[str, NodeInfo]) -> tuple[str, str]:
    """getScheduledPodsTopologyDomain: (the one domain, "") or ("", the error text)."""
    found: Optional[str] = None
    for name in node_names:
        ni = node_lookup.get(name)
        if ni is None:
            return "", f'getting node for pod: nodeinfo not found for node name "{name}"'
        if key not in ni.labels:
            return "", "no topology domain found for pod"
        domain = ni.labels[key]
        if found is not None and found != domain:
            return "", f"more than 1 domain found for pod group: {found}, {domain}"
        found = domain
    return found or "", ""


# ---- PlacementScore: PodGroupPodsCount and the runner ---------------------------------------------
def score_pod_group_pods_count(view: PlacementView, assignments: Sequence[ProposedAssignment]) -> int:
    """PodGroupPodsCount.ScorePlacement: scheduled pods (assumed and bound) + proposed assignments."""
    return view.scheduled_pods_count + len(assignments)


def normalize_pod_group_pods_count(scores: list[int]) -> Status:
    """PodGroupPodsCount.NormalizePlacementScore, in place: MinScore + s*(MaxScore-MinScore)/max;
    an Error when every score is 0."""
    top = max(scores, default=0)
    if top == 0:
        return Status(Code.ERROR, [MSG_NO_PODS_IN_PLACEMENTS])
    scores[:] = [MIN_NODE_SCORE + s * (MAX_NODE_SCORE - MIN_NODE_SCORE) // top for s in scores]
    return Status()


class PlacementScorer(Protocol):
    """fwk.PlacementScorePlugin (with its optional NormalizePlacementScore) and its weight."""

    @property
    def name(self) -> str: ...

    @property
    def weight(self) -> int: ...

    def score(self, view: PlacementView, result: GroupResult) -> tuple[int, Status]: ...

    def normalize(self, scores: list[int]) -> Optional[Status]: ...


@dataclass(frozen=True, slots=True)
class _PodGroupPodsCount:
    name: str = POD_GROUP_PODS_COUNT
    weight: int = 1

    def score(self, view: PlacementView, result: GroupResult) -> tuple[int, Status]:
        return score_pod_group_pods_count(view, result.assignments), Status()

    def normalize(self, scores: list[int]) -> Optional[Status]:
        return normalize_pod_group_pods_count(scores)


def default_placement_scorers() -> list[PlacementScorer]:
    """The PlacementScore plugins default_plugins.go enables with TopologyAwareWorkloadScheduling:
    PodGroupPodsCount, weight 1. (NodeResourcesFit's placement scoring is not modelled: its 1.37
    default weight was not verified, see docs reference §7.)"""
    return [_PodGroupPodsCount()]


def run_placement_score_plugins(view: PlacementView, results: Sequence[GroupResult],
                                scorers: Sequence[PlacementScorer]) -> tuple[list[int], Status]:
    """RunPlacementScorePlugins: per plugin, score every placement, normalise, multiply by the
    weight; TotalScore is the sum. A plugin's non-success status stops the run."""
    totals = [0] * len(results)
    for sc in scorers:
        scores: list[int] = []
        for r in results:
            s, st = sc.score(view, r)
            if not st.is_success():
                return [], Status(Code.ERROR, [f'running PlacementScore plugins: plugin "{sc.name}" failed with: {st.message()}'], sc.name)
            scores.append(s)
        nst = sc.normalize(scores)
        if nst is not None and not nst.is_success():
            return [], Status(Code.ERROR, [f'running NormalizePlacementScore plugins: plugin "{sc.name}" failed with: {nst.message()}'], sc.name)
        for i, s in enumerate(scores):
            totals[i] += s * sc.weight
    return totals, Status()


def find_best_placement(view: PlacementView, results: Sequence[GroupResult],
                        scorers: Sequence[PlacementScorer],
                        rng: Optional[random.Random] = None) -> tuple[int, Status]:
    """findBestPodGroupPlacement: the index of the winning result; with one result, no scoring.
    Ties: see the module docstring (the earliest, or Go's randomizer with ``rng``)."""
    if len(results) == 1:
        return 0, Status()
    totals, st = run_placement_score_plugins(view, results, scorers)
    if not st.is_success():
        return -1, st
    rand = [rng.getrandbits(63) for _ in totals] if rng is not None else [0] * len(totals)
    best = 0
    for i in range(1, len(totals)):
        if totals[i] > totals[best] or (totals[i] == totals[best] and rand[i] > rand[best]):
            best = i
    return best, Status()


def run_placement_generate(view: PlacementView, parent: Placement, node_lookup: Mapping[str, NodeInfo],
                           generate: Optional[Callable[[PlacementView, Placement], tuple[list[Placement], Status]]] = None,
                           ) -> tuple[list[Placement], Status]:
    """RunPlacementGeneratePlugins with the default TopologyPlacement (or ``generate``): the plugin's
    failure carries its name; an empty list is Unschedulable ``no feasible placements found``."""
    gen = generate if generate is not None else (lambda v, p: generate_placements(v, p, node_lookup))
    placements, st = gen(view, parent)
    if not st.is_success():
        return [], Status(st.code, list(st.reasons), st.plugin or TOPOLOGY_PLACEMENT)
    if not placements:
        return [], Status(Code.UNSCHEDULABLE, [MSG_NO_FEASIBLE_PLACEMENTS], TOPOLOGY_PLACEMENT)
    return placements, Status()


def no_placement_message(n: int, first: GroupResult) -> str:
    """The group status when no placement is feasible (1.37: without errPodGroupUnschedulable; the
    first placement's status read through AsError)."""
    return f"0/{n} placements are available, first placement status: {as_error(first)}"


# ---- the placement phases of one group node ---------------------------------------------------------
Revert = Callable[[], None]


def _noop() -> None:
    return None


def placement_algorithm(view: PlacementView, parent: Placement, node_lookup: Mapping[str, NodeInfo],
                        evaluate: Callable[[Placement], tuple[GroupResult, Revert]],
                        scorers: Optional[Sequence[PlacementScorer]] = None,
                        rng: Optional[random.Random] = None,
                        assume: Optional[Callable[[GroupResult], tuple[Status, Revert]]] = None,
                        generate: Optional[Callable[[PlacementView, Placement], tuple[list[Placement], Status]]] = None,
                        ) -> tuple[GroupResult, Revert]:
    """podGroupSchedulingPlacementAlgorithm.

    Phase 1 generates the placements within ``parent`` (TopologyPlacement unless ``generate`` is
    given). Phase 2 calls ``evaluate(p)`` -- podGroupSchedulingDefaultAlgorithm on the snapshot
    restricted to ``p`` -- for each placement and undoes its assumes at once (every placement sees the
    same base state); an Error result aborts. With no success the first placement's result is
    returned as Unschedulable ``0/K placements are available, first placement status: …``; phase 3 scores the successes and picks the best.
    ``assume`` (given when the CompositePodGroup gate is on: assumeSubtreeWithRevert) re-assumes the
    winner so sibling subtrees see it; its revert is returned (a no-op otherwise)."""
    placements, st = run_placement_generate(view, parent, node_lookup, generate)
    if not st.is_success():
        return GroupResult(view.key, st, err=st.message() if st.code == Code.ERROR else None), _noop
    first: Optional[GroupResult] = None
    successes: list[GroupResult] = []
    for p in placements:
        result, revert = evaluate(p)
        revert()
        result.placement = p
        if result.status.code == Code.ERROR:
            return result, _noop
        if first is None:
            first = result
        if result.status.is_success():
            successes.append(result)
    if not successes:
        assert first is not None  # (run_placement_generate never returns an empty success)
        first.status = Status(Code.UNSCHEDULABLE, [no_placement_message(len(placements), first)])
        first.err, first.any_scheduled = None, False
        return first, _noop
    best, st = find_best_placement(view, successes, scorers if scorers is not None else default_placement_scorers(), rng)
    if not st.is_success():
        return GroupResult(view.key, st, err=st.message()), _noop
    winner = successes[best]
    if assume is None:
        return winner, _noop
    ast, revert = assume(winner)
    if not ast.is_success():
        revert()
        return GroupResult(view.key, Status(Code.ERROR, [f"failed to assume the subtree: {ast.message()}"])), _noop
    return winner, revert


# ---- adapter for the PodGroup cycle (karpy.kubescheduler.podgroupcycle.run_pod_group_cycle) -------
def core_placement_hook(view: PlacementView, parent: Placement, node_lookup: Mapping[str, NodeInfo],
                        restrict: Callable[[Optional[Placement]], None], pod_info: Callable[[str], PodInfo],
                        default_algorithm: Callable[..., Any], make_result: Callable[[Status], Any], scorers: Optional[Sequence[PlacementScorer]] = None,
                        rng: Optional[random.Random] = None) -> Callable[..., Any]:
    """A ``placement_hook`` for one cycle of the PodGroup cycle (podgroupcycle.run_pod_group_cycle):
    ``hook(pod_keys, min_count, scheduled_count, schedule, assume, revert)``.

    ``restrict(p)`` narrows the cycle's snapshot to ``p``'s nodes (snapshot.AssumePlacement) and
    ``restrict(None)`` restores it (ForgetPlacement); ``default_algorithm`` is
    podgroupcycle.default_algorithm (it reverts its own assumes); its result (``.status``, ``.pods``
    with ``.key``/``.node``) is carried as the payload and the winner's is returned, with the group
    status replaced when no placement is feasible; ``make_result(status)`` builds one when no
    placement was evaluated (podgroupcycle.AlgorithmResult). CompositePodGroup gate off: the winner
    is not assumed again (its pods go straight to the submit)."""
    def hook(pod_keys: Sequence[str], min_count: Optional[int], scheduled_count: int, schedule: Any, assume: Any,
             revert: Any) -> Any:
        def evaluate(p: Placement) -> tuple[GroupResult, Revert]:
            restrict(p)
            try:
                r = default_algorithm(pod_keys, min_count, scheduled_count, schedule, assume, revert)
            finally:
                restrict(None)
            st: Status = r.status
            err = ERR_POD_GROUP_UNSCHEDULABLE if (not st.is_success() and st.reasons
                                                  and st.reasons[0] == ERR_POD_GROUP_UNSCHEDULABLE) else None
            got = [ProposedAssignment(pod_info(x.key), x.node) for x in r.pods if getattr(x, "node", None)]
            return GroupResult(view.key, st, got, any_scheduled=bool(r.any_scheduled), err=err, payload=r), _noop
        result, _ = placement_algorithm(view, parent, node_lookup, evaluate, scorers, rng)
        if result.payload is None:
            return make_result(result.status)
        out = result.payload
        if out.status is not result.status:  # no feasible placement: the group status is the phase's
            out.status = result.status
            out.any_scheduled = False
        return out
    return hook
