"""CompositePodGroup (v1.37 alpha, gates CompositePodGroup + TopologyAwareWorkloadScheduling): the
recursive scheduling of a group tree, its rollback, the commitment of the chosen subtree, the failure
propagation that keeps binding atomic, and the hierarchy helpers (root lookup, cycle detection).

Mirrors pkg/scheduler/schedule_one_podgroup.go (podGroupSchedulingRecursiveAlgorithm,
compositePodGroupSchedulingPlacementAlgorithm, compositePodGroupSchedulingDefaultAlgorithm,
findBestCompositePodGroupPlacement, makeCompositePodGroupAssignments, assumeSubtreeWithRevert,
successfulLeafResults, completeCompositePodGroupAlgorithmResultMap),
pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go (PlacementFeasible, getMinCount) and
pkg/scheduler/backend/queue/workload_forest.go (getRootLookupInfoForPod: a cycle has no root).
The leaf algorithm (podGroupSchedulingDefaultAlgorithm inside one placement) is the caller's.
Placement order and score ties follow :mod:`karpy.kubescheduler.placement`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Optional

from karpy._errors import KarpyError

from .nodeinfo import NodeInfo
from .placement import (
    GroupResult,
    Placement,
    PlacementScorer,
    PlacementView,
    Revert,
    as_error,
    default_placement_scorers,
    find_best_placement,
    no_placement_message,
    placement_algorithm,
    run_placement_generate,
    unschedulable_with_error,
)
from .types import Code, Status

__all__ = [
    "COMPOSITE_POD_GROUP",
    "POD_GROUP",
    "WORKLOAD_MAX_TREE_DEPTH",
    "CompositePodGroupCycleError",
    "CompositeResult",
    "GroupNode",
    "PlacementProgress",
    "bindable_leaf_results",
    "check_no_cycle",
    "complete_results",
    "find_cycle",
    "placement_feasible",
    "root_of",
    "schedule_group_tree",
    "successful_leaf_results",
]

#: fwk.EntityKeyType values (kube-scheduler framework/types.go)
POD_GROUP = "podgroup"
COMPOSITE_POD_GROUP = "compositepodgroup"
#: scheduling/v1beta1 WorkloadMaxTreeDepth
WORKLOAD_MAX_TREE_DEPTH = 4

MSG_MIN_COUNT_UNSATISFIABLE = "minCount ({}) cannot be satisfied: {} scheduled, {} remaining"
MSG_MIN_COUNT_NOT_YET = "minCount ({}) is not yet satisfied: {} scheduled, {} remaining"
MSG_CHILD_ERROR = "composite pod group evaluation failed due to child error: {}"


class CompositePodGroupCycleError(KarpyError, ValueError):
    """parentCompositePodGroupName links that close a circle: bad input (no group of it has a root)."""


@dataclass(frozen=True, slots=True)
class GroupNode:
    """One node of a group tree: a leaf PodGroup or a CompositePodGroup (``children`` in
    GetChildGroups order). ``key`` is the EntityKey string (``podgroup/ns/name`` or
    ``compositepodgroup/ns/name``); ``min_count`` the gang's minCount (leaf) or minGroupCount
    (composite), None for a basic policy; ``topology_key`` its schedulingConstraints.topology[0].key;
    ``scheduled_node_names`` the nodes of the leaf's scheduled (assumed or bound) pods."""

    key: str
    min_count: Optional[int] = None
    topology_key: Optional[str] = None
    scheduled_node_names: tuple[str, ...] = ()
    children: tuple[GroupNode, ...] = ()

    @property
    def is_composite(self) -> bool:
        return self.key.startswith(COMPOSITE_POD_GROUP + "/")

    def leaves(self) -> Iterator[GroupNode]:
        if not self.is_composite:
            yield self
        for c in self.children:
            yield from c.leaves()

    def view(self) -> PlacementView:
        """The placement view: for a composite node, the scheduled pods of every leaf under it
        (helper.GetPodGroupStates over the subtree)."""
        nodes = self.scheduled_node_names if not self.is_composite else tuple(
            n for leaf in self.leaves() for n in leaf.scheduled_node_names)
        return PlacementView(self.key, self.topology_key, nodes)


@dataclass(slots=True)
class PlacementProgress:
    """framework.PlacementProgress: evaluations left and successes so far (pods, or child groups)."""

    remaining: int
    scheduled: int = 0


def placement_feasible(node: GroupNode, progress: PlacementProgress, composite_gate: bool = True) -> Status:
    """GangScheduling.PlacementFeasible with getMinCount: basic → 1 (always Success with the
    CompositePodGroup gate off); too few left → Unschedulable; fewer than minCount yet → Wait."""
    if node.min_count is None and not composite_gate:
        return Status()
    min_count = 1 if node.min_count is None else node.min_count
    left, done = progress.remaining, progress.scheduled
    if left + done < min_count:
        return Status(Code.UNSCHEDULABLE, [MSG_MIN_COUNT_UNSATISFIABLE.format(min_count, done, left)])
    if done < min_count:
        return Status(Code.WAIT, [MSG_MIN_COUNT_NOT_YET.format(min_count, done, left)])
    return Status()


@dataclass(slots=True)
class CompositeResult:
    """The outcome of one tree: the root's result, every node's result by key (after
    :func:`complete_results`), and the revert of the committed (assumed) subtree."""

    root: GroupResult
    results: dict[str, GroupResult] = field(default_factory=dict)
    revert: Revert = field(default=lambda: None)


def _noop() -> None:
    return None


def _chain(reverts: Sequence[Revert]) -> Revert:
    def run() -> None:
        for r in reversed(reverts):
            r()
    return run


LeafEvaluate = Callable[[GroupNode, Placement], tuple[GroupResult, Revert]]
Generate = Callable[[GroupNode, Placement], tuple[list[Placement], Status]]
Assume = Callable[[GroupResult], tuple[Status, Revert]]
Feasible = Callable[[GroupNode, PlacementProgress], Status]


class _Tree:
    """One recursive run (the arguments every level shares)."""

    def __init__(self, node_lookup: Mapping[str, NodeInfo], evaluate_leaf: LeafEvaluate, assume: Assume,
                 scorers: Sequence[PlacementScorer], rng: Optional[random.Random], feasible: Feasible,
                 generate: Optional[Generate]) -> None:
        self.lookup = node_lookup
        self.generate = generate
        self.evaluate_leaf = evaluate_leaf
        self.assume = assume
        self.scorers = scorers
        self.rng = rng
        self.feasible = feasible

    def _gen(self, node: GroupNode) -> Optional[Callable[[PlacementView, Placement], tuple[list[Placement], Status]]]:
        gen = self.generate
        if gen is None:
            return None
        return lambda _view, parent: gen(node, parent)

    def recursive(self, node: GroupNode, parent: Placement, results: dict[str, GroupResult]) -> tuple[GroupResult, Revert]:
        """podGroupSchedulingRecursiveAlgorithm: a leaf through the placement algorithm (its winner
        assumed so that siblings see it), a composite node through its own placements."""
        if not node.is_composite:
            r, rev = placement_algorithm(node.view(), parent, self.lookup, lambda p: self.evaluate_leaf(node, p),
                                         self.scorers, self.rng, assume=self.assume, generate=self._gen(node))
            results[node.key] = r
            return r, rev
        return self.composite_placements(node, parent, results)

    def composite_placements(self, node: GroupNode, parent: Placement,
                             results: dict[str, GroupResult]) -> tuple[GroupResult, Revert]:
        """compositePodGroupSchedulingPlacementAlgorithm: every placement of this node evaluated
        (and reverted) in turn, the best subtree scored on its combined leaf assignments, then
        re-assumed (commitment) and merged into ``results``."""
        view = node.view()
        placements, st = run_placement_generate(view, parent, self.lookup, self._gen(node))
        if not st.is_success():
            r = GroupResult(node.key, st, err=st.message() if st.code == Code.ERROR else None)
            results[node.key] = r
            return r, _noop
        first: Optional[dict[str, GroupResult]] = None
        successes: list[tuple[Placement, dict[str, GroupResult]]] = []
        for p in placements:
            subtree: dict[str, GroupResult] = {}
            r, rev = self.composite_default(node, p, subtree)
            rev()
            if r.status.code == Code.ERROR:
                results.update(subtree)  # the children keep their own results (a pod's own Error)
                return r, _noop
            if first is None:
                first = subtree
            if r.status.is_success():
                successes.append((p, subtree))
        if not successes:
            assert first is not None  # (run_placement_generate never returns an empty success)
            root = first[node.key]
            root.status = Status(Code.UNSCHEDULABLE, [no_placement_message(len(placements), root)])
            root.err, root.any_scheduled = None, False
            results.update(first)  # the children keep their own (FitError) statuses
            return root, _noop
        combined = [GroupResult(node.key, Status(), [a for leaf in successful_leaf_results(node, sub)
                                                     for a in leaf.assignments], placement=p)
                    for p, sub in successes]
        best, st = find_best_placement(view, combined, self.scorers, self.rng)
        if not st.is_success():
            r = GroupResult(node.key, st, err=st.message())
            results[node.key] = r
            return r, _noop
        chosen = successes[best][1]
        reverts: list[Revert] = []
        for leaf in successful_leaf_results(node, chosen):  # assumeSubtreeWithRevert
            ast, rev = self.assume(leaf)
            reverts.append(rev)
            if not ast.is_success():
                _chain(reverts)()
                r = GroupResult(node.key, Status(Code.ERROR, [f"failed to assume the subtree: {ast.message()}"]))
                results[node.key] = r
                return r, _noop
        results.update(chosen)
        return chosen[node.key], _chain(reverts)

    def composite_default(self, node: GroupNode, placement: Placement,
                          results: dict[str, GroupResult]) -> tuple[GroupResult, Revert]:
        """compositePodGroupSchedulingDefaultAlgorithm: PlacementFeasible over the children (early
        stop on Unschedulable or Error), each child recursed in ``placement``; a non-success
        reverts the whole subtree (rollback)."""
        progress = PlacementProgress(len(node.children))
        st = self.feasible(node, progress)
        reverts: list[Revert] = []
        any_scheduled = False
        err: Optional[str] = None
        if st.code not in (Code.UNSCHEDULABLE, Code.ERROR):
            for child in node.children:
                cr, crev = self.recursive(child, placement, results)
                if cr.status.code == Code.ERROR:
                    st = Status(Code.ERROR, [MSG_CHILD_ERROR.format(as_error(cr))])
                    err = st.message()
                    break
                any_scheduled = any_scheduled or cr.any_scheduled
                reverts.append(crev)
                progress.remaining -= 1
                if cr.status.is_success():
                    progress.scheduled += 1
                st = self.feasible(node, progress)
                if st.code in (Code.UNSCHEDULABLE, Code.ERROR):
                    break
            if st.code == Code.WAIT:
                st, err = unschedulable_with_error(st.reasons)
        result = GroupResult(node.key, st, any_scheduled=any_scheduled, placement=placement, err=err)
        results[node.key] = result
        if not st.is_success():
            _chain(reverts)()
            result.any_scheduled = False
            return result, _noop
        return result, _chain(reverts)


def schedule_group_tree(root: GroupNode, parent: Placement, node_lookup: Mapping[str, NodeInfo],
                        evaluate_leaf: LeafEvaluate, assume: Assume,
                        scorers: Optional[Sequence[PlacementScorer]] = None, rng: Optional[random.Random] = None,
                        feasible: Feasible = placement_feasible, generate: Optional[Generate] = None) -> CompositeResult:
    """runRootSchedulingAlgorithm for a CompositePodGroup root (podGroupSchedulingRecursiveAlgorithm).

    ``evaluate_leaf(leaf, placement)`` is podGroupSchedulingDefaultAlgorithm for one leaf on the
    snapshot restricted to ``placement``, returning its result and the revert of what it assumed;
    ``assume(result)`` assumes a chosen leaf result's assignments again (assumeAndReserveWithRevert
    per pod) and returns the revert. The returned results are completed (:func:`complete_results`);
    the caller reverts ``revert`` after the cycle (the algorithm only simulates) and binds
    :func:`bindable_leaf_results`. ``generate(node, parent)`` replaces TopologyPlacement (tests)."""
    tree = _Tree(node_lookup, evaluate_leaf, assume,
                 scorers if scorers is not None else default_placement_scorers(), rng, feasible, generate)
    results: dict[str, GroupResult] = {}
    r, rev = tree.recursive(root, parent, results)
    results[root.key] = r
    if r.status.is_success() and not r.any_scheduled:  # runRootSchedulingAlgorithm: nothing new placed
        r.status, r.err = unschedulable_with_error([])
    complete_results(root, results)
    return CompositeResult(r, results, rev)


# ---- results over the tree ----------------------------------------------------------------------
def successful_leaf_results(root: GroupNode, results: Mapping[str, GroupResult]) -> Iterator[GroupResult]:
    """successfulLeafResults: the leaf results (with assignments or pod statuses) whose every
    ancestor succeeded; a missing or failed node hides its subtree."""
    r = results.get(root.key)
    if r is None or not r.status.is_success():
        return
    for c in root.children:
        yield from successful_leaf_results(c, results)
    if not root.is_composite and (r.assignments or r.pod_statuses):
        yield r


def complete_results(root: GroupNode, results: dict[str, GroupResult]) -> dict[str, GroupResult]:
    """completeCompositePodGroupAlgorithmResultMap: under a failed node, every child result that is
    missing or a success takes the failed parent's status (its assignments kept), so nothing under
    a failed parent binds; a child's own failure is kept and passed down instead."""
    def walk(node: GroupNode, failed: Optional[GroupResult]) -> None:
        r = results.get(node.key)
        if failed is not None and (r is None or r.status.is_success()):
            r = GroupResult(node.key, Status(failed.status.code, list(failed.status.reasons)),
                            list(r.assignments) if r else [], dict(r.pod_statuses) if r else {},
                            False, r.placement if r else None, failed.err)
            results[node.key] = r
        down = r if r is not None and not r.status.is_success() else None
        for c in node.children:
            walk(c, down)
    walk(root, None)
    return results


def bindable_leaf_results(root: GroupNode, results: Mapping[str, GroupResult]) -> list[GroupResult]:
    """Atomic binding: the leaf results to bind -- all successful leaves when the root succeeded
    with something placed, else none."""
    r = results.get(root.key)
    if r is None or not r.status.is_success() or not r.any_scheduled:
        return []
    return list(successful_leaf_results(root, results))


# ---- hierarchy helpers ----------------------------------------------------------------------------
def root_of(key: str, parents: Mapping[str, Optional[str]]) -> Optional[str]:
    """getRootLookupInfoForPod: walk parentCompositePodGroupName links up to the root; None on a
    cycle (the queue treats the group as not found). A missing parent object ends the walk at the
    parent's key (its child→parent link is recorded before the parent is observed)."""
    seen = {key}
    cur = key
    while True:
        parent = parents.get(cur)
        if parent is None:
            return cur
        if parent in seen:
            return None
        seen.add(parent)
        cur = parent


def find_cycle(parents: Mapping[str, Optional[str]]) -> Optional[list[str]]:
    """The first parentCompositePodGroupName cycle (its keys in link order, in ``parents`` order of
    discovery), or None."""
    done: set[str] = set()
    for start in parents:
        if start in done:
            continue
        path: list[str] = []
        index: dict[str, int] = {}
        cur: Optional[str] = start
        while cur is not None and cur not in done:
            if cur in index:
                return path[index[cur]:]
            index[cur] = len(path)
            path.append(cur)
            cur = parents.get(cur)
        done.update(path)
    return None


def check_no_cycle(parents: Mapping[str, Optional[str]]) -> None:
    """Raise :class:`CompositePodGroupCycleError` naming the cycle (``a -> b -> a``), if any."""
    cycle = find_cycle(parents)
    if cycle:
        raise CompositePodGroupCycleError(
            "CompositePodGroup cycle: " + " -> ".join([*cycle, cycle[0]]) + " (parentCompositePodGroupName)")
