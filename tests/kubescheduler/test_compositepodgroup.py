"""Ported kube-scheduler v1.37 CompositePodGroup tests: the recursive algorithm, rollback, commitment,
failure propagation (atomic binding), PlacementFeasible for composite nodes and the hierarchy helpers.

Upstream: pkg/scheduler/schedule_one_podgroup_test.go (TestCPGSchedulingPlacementAlgorithm,
TestPlacementCycleStateLifecycle_MultiLevel), pkg/scheduler/framework/plugins/gangscheduling/
gangscheduling_test.go (TestPlacementFeasible), pkg/scheduler/backend/queue/workload_forest_test.go
(cycle handling of getRootLookupInfoForPod). The leaf algorithm is a fake world of one-pod nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import pytest

from karpy.errors import KarpyError
from karpy.kubescheduler.compositepodgroup import (
    CompositePodGroupCycleError,
    GroupNode,
    PlacementProgress,
    bindable_leaf_results,
    check_no_cycle,
    complete_results,
    find_cycle,
    placement_feasible,
    root_of,
    schedule_group_tree,
    successful_leaf_results,
)
from karpy.kubescheduler.nodeinfo import NodeInfo
from karpy.kubescheduler.placement import GroupResult, Placement, PlacementView, ProposedAssignment
from karpy.kubescheduler.podinfo import PodInfo, new_pod_info
from karpy.kubescheduler.types import Code, Status

from ._helpers import node, pod

CPG = "compositepodgroup/default/cpg"
PG1 = "podgroup/default/pg1"
PG2 = "podgroup/default/pg2"


def _ni(name: str) -> NodeInfo:
    return NodeInfo.from_node(node(name, hostname=False))


@dataclass
class _World:
    """One pod per node; ``taken`` node → pod key is the snapshot the assumes change."""

    nodes: list[NodeInfo]
    pods: dict[str, list[PodInfo]]
    rejected: set[str] = field(default_factory=set)
    errors: dict[str, str] = field(default_factory=dict)
    taken: dict[str, str] = field(default_factory=dict)
    evaluations: list[tuple[str, str]] = field(default_factory=list)

    def evaluate_leaf(self, leaf: GroupNode, p: Placement) -> tuple[GroupResult, Any]:
        """podGroupSchedulingDefaultAlgorithm on one placement: each pod on the first free node,
        assumed so the next pod sees it; gang rule: all-or-nothing at minCount (basic: ≥ 1)."""
        self.evaluations.append((leaf.key, p.name))
        if leaf.key in self.errors:
            return GroupResult(leaf.key, Status(Code.ERROR, [self.errors[leaf.key]]), placement=p), lambda: None
        placed: list[ProposedAssignment] = []
        statuses: dict[str, Status] = {}
        for q in self.pods[leaf.key]:
            free = [n.name for n in p.nodes if n.name not in self.taken and n.name not in self.rejected]
            if free:
                self.taken[free[0]] = q.key
                placed.append(ProposedAssignment(q, free[0]))
                statuses[q.key] = Status()
            else:
                statuses[q.key] = Status(Code.UNSCHEDULABLE, [f"0/{len(p.nodes)} nodes are available"])
        need = leaf.min_count or 1

        def revert() -> None:
            for a in placed:
                self.taken.pop(a.node_name, None)
        if len(placed) < need:
            revert()
            st = Status(Code.UNSCHEDULABLE, [f"minCount ({need}) cannot be satisfied: {len(placed)} scheduled, 0 remaining"])
            return GroupResult(leaf.key, st, placed, statuses, False, p), lambda: None
        return GroupResult(leaf.key, Status(), placed, statuses, True, p), revert

    def assume(self, result: GroupResult) -> tuple[Status, Any]:
        for a in result.assignments:
            self.taken[a.node_name] = a.pod.key

        def revert() -> None:
            for a in result.assignments:
                self.taken.pop(a.node_name, None)
        return Status(), revert


@dataclass
class _KeyedScorer:
    """fakePlacementPlugin's ScorePlacement: a score per (group key, placement name)."""

    scores: dict[str, dict[str, int]]
    name: str = "FakePlacementPlugin"
    weight: int = 1

    def score(self, view: PlacementView, result: GroupResult) -> tuple[int, Status]:
        assert result.placement is not None
        return self.scores.get(view.key, {}).get(result.placement.name, 0), Status()

    def normalize(self, scores: list[int]) -> Optional[Status]:
        return None


def _fake_generate(table: dict[str, dict[str, list[str]]], calls: Optional[list[tuple[str, str]]] = None) -> Any:
    """fakePlacementPlugin.GeneratePlacements: the configured placements, nodes outside the parent dropped."""
    def gen(n: GroupNode, parent: Placement) -> tuple[list[Placement], Status]:
        if calls is not None:
            calls.append((n.key, parent.name))
        inside = {x.name: x for x in parent.nodes}
        return [Placement(name, tuple(inside[m] for m in members if m in inside))
                for name, members in table[n.key].items()], Status()
    return gen


def _always(node_: GroupNode, progress: PlacementProgress) -> Status:
    return Status()  # upstream's fakePlacementFeasiblePlugin with nothing injected


def _tree() -> tuple[GroupNode, _World, Placement]:
    nodes = [_ni(f"node{i}") for i in range(1, 5)]
    root = GroupNode(CPG, children=(GroupNode(PG1), GroupNode(PG2)))
    world = _World(nodes, {PG1: [new_pod_info(pod("p1"))], PG2: [new_pod_info(pod("p2"))]})
    return root, world, Placement("cluster", tuple(nodes))


_DEFAULT_PLACEMENTS = {
    CPG: {"placement1": ["node1", "node2"], "placement2": ["node3", "node4"]},
    PG1: {f"placement{i}": [f"node{i}"] for i in range(1, 5)},
    PG2: {f"placement{i}": [f"node{i}"] for i in range(1, 5)},
}


def _hosts(results: dict[str, GroupResult], key: str) -> list[str]:
    return [a.node_name for a in results[key].assignments]


def test_cpg_respects_higher_score_of_parent_placement() -> None:
    """TestCPGSchedulingPlacementAlgorithm "respects higher score of parent placement": the children's
    higher scores in the parent's losing placement are disregarded."""
    root, world, cluster = _tree()
    scorer = _KeyedScorer({CPG: {"placement1": 1, "placement2": 2},
                           PG1: {"placement1": 5, "placement2": 5, "placement3": 1, "placement4": 2},
                           PG2: {"placement1": 5, "placement2": 5, "placement3": 2, "placement4": 1}})
    out = schedule_group_tree(root, cluster, {}, world.evaluate_leaf, world.assume, [scorer], feasible=_always,
                              generate=_fake_generate(_DEFAULT_PLACEMENTS))
    assert out.root.status.is_success()
    assert _hosts(out.results, PG1) == ["node4"] and _hosts(out.results, PG2) == ["node3"]
    assert world.taken == {"node4": "default/p1", "node3": "default/p2"}  # the committed subtree
    out.revert()
    assert world.taken == {}


def test_cpg_discards_infeasible_placements() -> None:
    """TestCPGSchedulingPlacementAlgorithm "discards infeasible placements": PlacementFeasible
    rejects the composite in placement1 before any child is evaluated."""
    root, world, cluster = _tree()
    scorer = _KeyedScorer({CPG: {"placement1": 2, "placement2": 1},
                           PG1: {"placement3": 1, "placement4": 2}, PG2: {"placement3": 2, "placement4": 1}})
    seen: list[int] = []

    def feasible(n: GroupNode, progress: PlacementProgress) -> Status:
        if n.key == CPG:
            seen.append(progress.remaining)
            if len(seen) == 1:
                return Status(Code.UNSCHEDULABLE, ["injected"])
        return Status()
    out = schedule_group_tree(root, cluster, {}, world.evaluate_leaf, world.assume, [scorer], feasible=feasible,
                              generate=_fake_generate(_DEFAULT_PLACEMENTS))
    assert out.root.status.is_success()
    assert _hosts(out.results, PG1) == ["node4"] and _hosts(out.results, PG2) == ["node3"]
    assert len(world.evaluations) == 8  # only under cpg/placement2: 4 placements per child


def test_cpg_returns_unschedulable_if_no_pods_got_scheduled() -> None:
    """TestCPGSchedulingPlacementAlgorithm "returns unschedulable if no pods got scheduled": a root
    success with nothing placed is Unschedulable (1.37: errPodGroupUnschedulable; 1.38 words it
    "no pods were schedulable"); the children keep their own statuses; nothing binds."""
    root, world, cluster = _tree()
    world.rejected = {"node1", "node2", "node3", "node4"}
    out = schedule_group_tree(root, cluster, {}, world.evaluate_leaf, world.assume, [_KeyedScorer({})],
                              feasible=_always, generate=_fake_generate(_DEFAULT_PLACEMENTS))
    assert out.root.status.code == Code.UNSCHEDULABLE and out.root.status.message() == "pod group is unschedulable"
    assert out.results[PG1].status.message().startswith("0/4 placements are available, first placement status: ")
    assert bindable_leaf_results(root, out.results) == [] and world.taken == {}


def test_cpg_child_error_aborts_with_parent_error() -> None:
    """TestCPGSchedulingPlacementAlgorithm child-error case: the composite fails with
    "composite pod group evaluation failed due to child error: …"; the sibling's result is kept."""
    root, world, cluster = _tree()
    world.errors[PG2] = "injected error"
    out = schedule_group_tree(root, cluster, {}, world.evaluate_leaf, world.assume, [_KeyedScorer({})],
                              feasible=_always, generate=_fake_generate(_DEFAULT_PLACEMENTS))
    assert out.root.status.code == Code.ERROR
    assert out.root.status.message() == "composite pod group evaluation failed due to child error: injected error"
    assert out.results[PG2].status.message() == "injected error"
    assert world.taken == {}  # rolled back


def test_placement_cycle_state_lifecycle_multi_level() -> None:
    """TestPlacementCycleStateLifecycle_MultiLevel: root → mid → leaf, two placements each: the
    generate and leaf-evaluation trajectories are depth-first in placement order."""
    n1 = _ni("node1")
    leaf = GroupNode("podgroup/default/pg")
    mid = GroupNode("compositepodgroup/default/midcpg", children=(leaf,))
    root = GroupNode("compositepodgroup/default/rootcpg", children=(mid,))
    world = _World([n1], {leaf.key: [new_pod_info(pod("p1"))]})
    two = {"placement1": ["node1"], "placement2": ["node1"]}
    calls: list[tuple[str, str]] = []
    out = schedule_group_tree(root, Placement("cluster", (n1,)), {}, world.evaluate_leaf, world.assume,
                              [_KeyedScorer({})], feasible=_always,
                              generate=_fake_generate({root.key: two, mid.key: two, leaf.key: two}, calls))
    assert out.root.status.is_success()
    assert [k.split("/")[-1] for k, _ in calls] == ["rootcpg", "midcpg", "pg", "pg", "midcpg", "pg", "pg"]
    assert [p for _, p in world.evaluations] == ["placement1", "placement2"] * 4


def test_cpg_sibling_sees_committed_sibling() -> None:
    """assumeSubtreeWithRevert inside the recursion: the first child's chosen placement is assumed
    before the second child is evaluated, so both cannot take the one node of a domain."""
    nodes = [_ni("a"), _ni("b")]
    root = GroupNode(CPG, min_count=2, children=(GroupNode(PG1), GroupNode(PG2)))
    world = _World(nodes, {PG1: [new_pod_info(pod("p1"))], PG2: [new_pod_info(pod("p2"))]})
    out = schedule_group_tree(root, Placement("cluster", tuple(nodes)), {}, world.evaluate_leaf, world.assume)
    assert out.root.status.is_success()
    assert sorted(_hosts(out.results, PG1) + _hosts(out.results, PG2)) == ["a", "b"]


def test_cpg_gang_rollback_when_min_group_count_unmet() -> None:
    """compositePodGroupSchedulingDefaultAlgorithm: minGroupCount 2 with one child unplaceable →
    PlacementFeasible Unschedulable, every tentative assume of the subtree reverted, the placed
    child's success overwritten by the parent's failure (completeCompositePodGroupAlgorithmResultMap)."""
    nodes = [_ni("a")]
    root = GroupNode(CPG, min_count=2, children=(GroupNode(PG1), GroupNode(PG2)))
    world = _World(nodes, {PG1: [new_pod_info(pod("p1"))], PG2: [new_pod_info(pod("p2"))]})
    out = schedule_group_tree(root, Placement("cluster", tuple(nodes)), {}, world.evaluate_leaf, world.assume)
    assert world.taken == {}
    assert out.root.status.code == Code.UNSCHEDULABLE
    assert out.root.status.message() == ("0/1 placements are available, first placement status: "
                                         "minCount (2) cannot be satisfied: 1 scheduled, 0 remaining")
    assert not out.results[PG1].status.is_success()  # overwritten: it must not bind
    assert out.results[PG1].status.message() == out.root.status.message()
    assert _hosts(out.results, PG1) == ["a"]  # the pod fit: it is told the group's message
    assert bindable_leaf_results(root, out.results) == []


def test_cpg_topology_domain_per_composite() -> None:
    """A CompositePodGroup with a rack constraint: the whole tree lands in one rack (TopologyPlacement
    on the composite node), the rack fitting both children."""
    lab = {"a": "r1", "b": "r2", "c": "r2"}
    nodes = [NodeInfo.from_node(node(n, labels={"rack": r}, hostname=False)) for n, r in lab.items()]
    root = GroupNode(CPG, min_count=2, topology_key="rack", children=(GroupNode(PG1), GroupNode(PG2)))
    world = _World(nodes, {PG1: [new_pod_info(pod("p1"))], PG2: [new_pod_info(pod("p2"))]})
    out = schedule_group_tree(root, Placement("cluster", tuple(nodes)), {n.name: n for n in nodes},
                              world.evaluate_leaf, world.assume)
    assert out.root.status.is_success() and out.root.placement is not None and out.root.placement.name == "r2"
    assert sorted(_hosts(out.results, PG1) + _hosts(out.results, PG2)) == ["b", "c"]
    assert [r.key for r in bindable_leaf_results(root, out.results)] == [PG1, PG2]


def test_standalone_pod_group_root() -> None:
    """runRootSchedulingAlgorithm for a PodGroup root: the placement algorithm alone."""
    nodes = [_ni("a")]
    leaf = GroupNode(PG1)
    world = _World(nodes, {PG1: [new_pod_info(pod("p1"))]})
    out = schedule_group_tree(leaf, Placement("cluster", tuple(nodes)), {}, world.evaluate_leaf, world.assume)
    assert out.root.status.is_success() and [r.key for r in bindable_leaf_results(leaf, out.results)] == [PG1]


# ---- PlacementFeasible (gangscheduling_test.go TestPlacementFeasible) -------------------------------
@pytest.mark.parametrize("min_count,remaining,scheduled,gate,code,msg", [
    (None, 3, 0, False, Code.SUCCESS, ""),  # basic, CompositePodGroup gate off
    (None, 3, 0, True, Code.WAIT, "minCount (1) is not yet satisfied: 0 scheduled, 3 remaining"),
    (None, 0, 1, True, Code.SUCCESS, ""),
    (None, 0, 0, True, Code.UNSCHEDULABLE, "minCount (1) cannot be satisfied: 0 scheduled, 0 remaining"),
    (2, 2, 0, True, Code.WAIT, "minCount (2) is not yet satisfied: 0 scheduled, 2 remaining"),
    (2, 1, 0, True, Code.UNSCHEDULABLE, "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining"),
    (2, 0, 2, True, Code.SUCCESS, ""),
    (3, 1, 1, False, Code.UNSCHEDULABLE, "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining"),
])
def test_placement_feasible(min_count: Optional[int], remaining: int, scheduled: int, gate: bool, code: Code,
                            msg: str) -> None:
    """TestPlacementFeasible: the gang rule (getMinCount: basic → 1, composite → minGroupCount)."""
    st = placement_feasible(GroupNode(CPG, min_count=min_count), PlacementProgress(remaining, scheduled), gate)
    assert st.code == code and st.message() == msg


# ---- results over the tree -------------------------------------------------------------------------
def test_complete_results_propagates_parent_failure() -> None:
    """completeCompositePodGroupAlgorithmResultMap: missing and successful children under a failed
    parent take its status; a child's own failure is kept; successfulLeafResults then yields none."""
    mid = GroupNode("compositepodgroup/default/mid", children=(GroupNode(PG2),))
    root = GroupNode(CPG, children=(GroupNode(PG1), mid))
    q = new_pod_info(pod("p1"))
    results = {CPG: GroupResult(CPG, Status(Code.UNSCHEDULABLE, ["boom"])),
               PG1: GroupResult(PG1, Status(), [ProposedAssignment(q, "a")], any_scheduled=True),
               mid.key: GroupResult(mid.key, Status(Code.UNSCHEDULABLE, ["own"]))}
    complete_results(root, results)
    assert results[PG1].status.message() == "boom" and results[PG1].assignments
    assert results[mid.key].status.message() == "own"
    assert results[PG2].status.message() == "own"  # missing under the failed mid: its status
    assert list(successful_leaf_results(root, results)) == []


def test_successful_leaf_results_requires_every_ancestor() -> None:
    """successfulLeafResults: a successful leaf under a failed composite is not yielded."""
    mid = GroupNode("compositepodgroup/default/mid", children=(GroupNode(PG2),))
    root = GroupNode(CPG, children=(GroupNode(PG1), mid))
    q = new_pod_info(pod("p"))
    ok = Status()
    results = {CPG: GroupResult(CPG, ok, any_scheduled=True),
               PG1: GroupResult(PG1, ok, [ProposedAssignment(q, "a")]),
               mid.key: GroupResult(mid.key, Status(Code.UNSCHEDULABLE)),
               PG2: GroupResult(PG2, ok, [ProposedAssignment(q, "b")])}
    assert [r.key for r in successful_leaf_results(root, results)] == [PG1]
    assert [r.key for r in bindable_leaf_results(root, results)] == [PG1]


# ---- hierarchy helpers (workload_forest.go) ------------------------------------------------------
def test_root_of_walks_to_the_root() -> None:
    """getRootLookupInfoForPod: leaf → parents → root; a parent not observed yet is the root."""
    parents = {PG1: "compositepodgroup/default/mid", "compositepodgroup/default/mid": CPG, CPG: None}
    assert root_of(PG1, parents) == CPG
    assert root_of(PG2, parents) == PG2
    assert root_of("podgroup/default/orphan", {"podgroup/default/orphan": "compositepodgroup/default/gone"}) \
        == "compositepodgroup/default/gone"


def test_root_of_a_cycle_is_not_found() -> None:
    """getRootLookupInfoForPod detects a cycle and returns not-found."""
    parents = {PG1: "compositepodgroup/default/a", "compositepodgroup/default/a": "compositepodgroup/default/b",
               "compositepodgroup/default/b": "compositepodgroup/default/a"}
    assert root_of(PG1, parents) is None


def test_find_cycle_and_bad_input() -> None:
    """A CompositePodGroup cycle is bad input: one clear line naming the cycle."""
    a, b = "compositepodgroup/default/a", "compositepodgroup/default/b"
    parents = {PG1: a, a: b, b: a}
    assert find_cycle(parents) == [a, b]
    assert find_cycle({PG1: a, a: None}) is None
    assert find_cycle({a: a}) == [a]
    with pytest.raises(CompositePodGroupCycleError) as e:
        check_no_cycle(parents)
    assert isinstance(e.value, KarpyError) and isinstance(e.value, ValueError)
    assert str(e.value) == f"CompositePodGroup cycle: {a} -> {b} -> {a} (parentCompositePodGroupName)"
    check_no_cycle({PG1: a, a: None})
