"""Ported kube-scheduler v1.37 placement tests (TopologyAwareWorkloadScheduling).

Upstream: pkg/scheduler/framework/plugins/topologyaware/topology_placement_test.go (TestGeneratePlacements),
pkg/scheduler/framework/plugins/podgrouppodscount/podgroup_pods_count_test.go (TestScorePlacement,
TestNormalizePlacementScore) and pkg/scheduler/schedule_one_podgroup_test.go
(TestPodGroupSchedulingPlacementAlgorithm, TestPodGroupSchedulingPlacementAlgorithm_Scoring). The
per-pod algorithm inside a placement is a fake here, as upstream's fake Filter / PlacementFeasible.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Optional

import pytest

from karpy.kubescheduler.compositepodgroup import GroupNode
from karpy.kubescheduler.nodeinfo import NodeInfo
from karpy.kubescheduler.placement import (
    ERR_POD_GROUP_UNSCHEDULABLE,
    GroupResult,
    Placement,
    PlacementView,
    ProposedAssignment,
    find_best_placement,
    generate_placements,
    normalize_pod_group_pods_count,
    placement_algorithm,
    score_pod_group_pods_count,
    unschedulable_with_error,
)
from karpy.kubescheduler.podinfo import new_pod_info
from karpy.kubescheduler.types import Code, Status

from ._helpers import node, pod

INITIAL = "test-placement"


def _ni(name: str, labels: Optional[dict[str, str]] = None) -> NodeInfo:
    return NodeInfo.from_node(node(name, labels=labels, hostname=False))


def _lookup(nodes: list[NodeInfo]) -> dict[str, NodeInfo]:
    return {n.name: n for n in nodes}


# ---- TestGeneratePlacements ------------------------------------------------------------------------
_GEN_CASES: dict[str, dict[str, Any]] = {
    "without constraint returns placement matching all nodes": dict(
        key=None, placement=[("node1", {}), ("node2", {"foo": "bar"})], other=[("node3", {})],
        want={INITIAL: ["node1", "node2"]}),
    "with topology key constraint, returns placement for each topology domain": dict(
        key="topology1",
        placement=[("node0", {"topology2": "d1"}), ("node1", {"topology2": "d4"}), ("node2", {"topology1": "d1"}),
                   ("node3", {"topology1": "d2"}), ("node4", {"topology1": "d1"}), ("node5", {"topology1": "d3"})],
        want={"d1": ["node2", "node4"], "d2": ["node3"], "d3": ["node5"]}),
    "without matching topology label, returns empty": dict(
        key="topology3",
        placement=[("node0", {"topology2": "d1"}), ("node2", {"topology1": "d1"}), ("node5", {"topology1": "d3"})],
        want={}),
    "with pods already scheduled in a single domain, returns that domain": dict(
        key="topology", scheduled=["node2", "node3"],
        placement=[("node0", {"topology": "d2"}), ("node1", {"topology": "d1"})],
        other=[("node2", {"topology": "d1"}), ("node3", {"topology": "d1"})], want={"d1": ["node1"]}),
    "with pods already scheduled in a single domain not present in current placement, returns empty": dict(
        key="topology", scheduled=["node2", "node3"], placement=[("node0", {"topology": "d2"})],
        other=[("node2", {"topology": "d1"}), ("node3", {"topology": "d1"})], want={}),
    "with pods already scheduled in conflicting domains, returns error": dict(
        key="topology", scheduled=["node2", "node3"],
        placement=[("node0", {"topology": "d2"}), ("node1", {"topology": "d1"})],
        other=[("node2", {"topology": "d0"}), ("node3", {"topology": "d1"})], code=Code.ERROR),
    "with pods already scheduled in the empty string domain, returns that domain": dict(
        key="topology", scheduled=["node2", "node3"],
        placement=[("node0", {"topology": "d1"}), ("node1", {"topology": ""})],
        other=[("node2", {"topology": ""}), ("node3", {"topology": ""})], want={"": ["node1"]}),
    "with already scheduled pod on node outside of snapshot, returns error": dict(
        key="topology", scheduled=["node2", "node4"],
        placement=[("node0", {"topology": "d2"}), ("node1", {"topology": "d1"})],
        other=[("node2", {"topology": "d1"}), ("node3", {"topology": "d1"})], code=Code.ERROR),
    "with already scheduled pod on node without topology label, returns error": dict(
        key="topology", scheduled=["node2"], placement=[("node1", {"topology": "d2"})],
        other=[("node2", {"foo": "bar"})], code=Code.ERROR),
}


def _gen(case: dict[str, Any], view: PlacementView) -> tuple[list[Placement], Status]:
    placement = [_ni(n, lab) for n, lab in case["placement"]]
    other = [_ni(n, lab) for n, lab in case.get("other", [])]
    return generate_placements(view, Placement(INITIAL, tuple(placement)), _lookup(placement + other))


def _check_gen(case: dict[str, Any], got: tuple[list[Placement], Status]) -> None:
    placements, st = got
    assert st.code == case.get("code", Code.SUCCESS), st
    if st.is_success():
        assert {p.name: p.node_names() for p in placements} == case["want"]


@pytest.mark.parametrize("name", list(_GEN_CASES))
def test_generate_placements(name: str) -> None:
    """TestGeneratePlacements (cpg=false): a PodGroup's placements."""
    case = _GEN_CASES[name]
    view = PlacementView("podgroup/default/pg", case["key"], tuple(case.get("scheduled", ())))
    _check_gen(case, _gen(case, view))


@pytest.mark.parametrize("name", list(_GEN_CASES))
def test_generate_placements_for_cpg(name: str) -> None:
    """TestGeneratePlacements "for cpg …" cases: the scheduled pods of every leaf under the
    CompositePodGroup count (here split over two child PodGroups, as the upstream pathToRoot)."""
    case = _GEN_CASES[name]
    sched = list(case.get("scheduled", ()))
    leaves = (GroupNode("podgroup/default/pg1", scheduled_node_names=tuple(sched[:1])),
              GroupNode("podgroup/default/pg2", scheduled_node_names=tuple(sched[1:])))
    root = GroupNode("compositepodgroup/default/cpg", topology_key=case["key"],
                     children=(GroupNode("compositepodgroup/default/cpg1", children=leaves[:1]),
                               GroupNode("compositepodgroup/default/cpg2", children=leaves[1:])))
    _check_gen(case, _gen(case, root.view()))


def test_generate_placements_for_cpg_conflicting_domains_in_a_single_pod_group() -> None:
    """TestGeneratePlacements "for cpg with pods already scheduled in conflicting domains in a single
    pod group, returns error"."""
    root = GroupNode("compositepodgroup/default/cpg", topology_key="topology", children=(
        GroupNode("podgroup/default/pg1", scheduled_node_names=("node2", "node3")),))
    case = dict(placement=[("node0", {"topology": "d2"}), ("node1", {"topology": "d1"})],
                other=[("node2", {"topology": "d0"}), ("node3", {"topology": "d1"})], code=Code.ERROR)
    _check_gen(case, _gen(case, root.view()))


def test_generate_placements_follow_node_order() -> None:
    """karpy: Go builds the placements from a map (random order); here they follow the first
    appearance of each domain in the parent's node order."""
    nodes = [_ni("a", {"rack": "r2"}), _ni("b", {"rack": "r1"}), _ni("c", {"rack": "r2"})]
    got, st = generate_placements(PlacementView("podgroup/default/pg", "rack"), Placement("all", tuple(nodes)), _lookup(nodes))
    assert st.is_success() and [(p.name, p.node_names()) for p in got] == [("r2", ["a", "c"]), ("r1", ["b"])]


# ---- TestScorePlacement / TestNormalizePlacementScore ----------------------------------------------
_PROPOSED = [ProposedAssignment(new_pod_info(pod("proposed-pod-1")), "node1"),
             ProposedAssignment(new_pod_info(pod("proposed-pod-2")), "node2")]


@pytest.mark.parametrize("name,scheduled,want", [
    ("existing assigned and assumed pods", ("node2", "node3", "node1"), 5),
    ("no assumed pods", ("node1",), 3),
    ("no assigned pods", ("node1",), 3),
    ("no assigned pods, no assumed pods", (), 2),
])
def test_score_placement(name: str, scheduled: tuple[str, ...], want: int) -> None:
    """TestScorePlacement: ScheduledPodsCount (assumed and assigned) + proposed assignments."""
    assert score_pod_group_pods_count(PlacementView("podgroup/default/pg1", None, scheduled), _PROPOSED) == want


@pytest.mark.parametrize("name,scores,want,error", [
    ("distinct scores", [10, 50, 110], [9, 45, 100], ""),
    ("equal scores", [50, 50], [100, 100], ""),
    ("single score", [50], [100], ""),
    ("some minimal score that is far from a group of scores located closely", [11, 100, 101, 102], [10, 98, 99, 100], ""),
    ("zero scores", [0, 0], None, "no pods from pod group are assigned to any of the candidate placements"),
])
def test_normalize_placement_score(name: str, scores: list[int], want: Optional[list[int]], error: str) -> None:
    """TestNormalizePlacementScore."""
    st = normalize_pod_group_pods_count(scores)
    if error:
        assert not st.is_success() and st.message() == error
        return
    assert st.is_success() and scores == want


# ---- TestPodGroupSchedulingPlacementAlgorithm -------------------------------------------------------
@dataclass
class _FakeScorer:
    """fakePlacementPlugin as a PlacementScore plugin (no NormalizePlacementScore)."""

    scores: dict[str, int]
    statuses: dict[str, Status] = field(default_factory=dict)
    name: str = "FakePlacementPlugin"
    weight: int = 1

    def score(self, view: PlacementView, result: GroupResult) -> tuple[int, Status]:
        assert result.placement is not None
        n = result.placement.name
        return self.scores.get(n, 0), self.statuses.get(n, Status())

    def normalize(self, scores: list[int]) -> Optional[Status]:
        return None


class _FakeDefaultAlgorithm:
    """podGroupSchedulingDefaultAlgorithm for one pod, with a fake Filter (``filter_status`` per
    node; missing = Success) and injected PlacementFeasible codes per evaluated placement (pre-check,
    then after the pod), as upstream's fakePlacementFeasiblePlugin."""

    def __init__(self, filter_status: dict[str, Status], feasible: Optional[list[list[Code]]] = None) -> None:
        self.filter_status = filter_status
        self.feasible = list(feasible or [])
        self.evaluated: list[str] = []
        self.reverted: list[str] = []
        self.pod = new_pod_info(pod("foo"))

    def __call__(self, p: Placement) -> tuple[GroupResult, Any]:
        self.evaluated.append(p.name)
        codes = self.feasible.pop(0) if self.feasible else [Code.SUCCESS, Code.SUCCESS]
        key = "podgroup/default/pg"
        if codes[0] == Code.UNSCHEDULABLE:
            return GroupResult(key, Status(Code.UNSCHEDULABLE, ["injected placementFeasible status"])), lambda: None
        fit = [n for n in p.nodes if self.filter_status.get(n.name, Status()).is_success()]
        err = [n for n in p.nodes if self.filter_status.get(n.name, Status()).code == Code.ERROR]
        if err:
            msg = 'running "FakePlacementPlugin" filter plugin: error for test'
            st = Status(Code.ERROR, [f"failed to schedule other pod from a pod group: {msg}"])
            return GroupResult(key, st, pod_statuses={self.pod.key: Status(Code.ERROR, [msg])}), lambda: None
        result = GroupResult(key, Status(), placement=p)
        if fit:
            result.assignments = [ProposedAssignment(self.pod, fit[0].name)]
            result.pod_statuses = {self.pod.key: Status()}
            result.any_scheduled = True
        else:
            result.pod_statuses = {self.pod.key: Status(Code.UNSCHEDULABLE, [f"0/{len(p.nodes)} nodes are available:"])}
        after = codes[1]
        if after == Code.UNSCHEDULABLE:
            result.status = Status(Code.UNSCHEDULABLE, ["injected placementFeasible status"])
        elif not fit:  # gang of one: the default PlacementFeasible rejects, then the Wait is converted
            result.status, result.err = unschedulable_with_error(["minCount (1) cannot be satisfied: 0 scheduled, 0 remaining"])
        if not result.status.is_success():
            result.any_scheduled = False
        return result, lambda: self.reverted.append(p.name)


def _two_placements() -> tuple[Placement, Any]:
    n1, n2 = _ni("node1"), _ni("node2")
    parent = Placement("all", (n1, n2))

    def gen(view: PlacementView, par: Placement) -> tuple[list[Placement], Status]:
        return [Placement("placement1", (n1,)), Placement("placement2", (n2,))], Status()
    return parent, gen


def _run(filter_status: dict[str, Status], scores: dict[str, int], feasible: Optional[list[list[Code]]] = None,
         score_statuses: Optional[dict[str, Status]] = None, gen: Any = None) -> tuple[GroupResult, _FakeDefaultAlgorithm]:
    parent, default_gen = _two_placements()
    alg = _FakeDefaultAlgorithm(filter_status, feasible)
    result, revert = placement_algorithm(PlacementView("podgroup/default/pg"), parent, {}, alg,
                                         [_FakeScorer(scores, score_statuses or {})], generate=gen or default_gen)
    revert()
    return result, alg


def _host(r: GroupResult) -> str:
    return r.assignments[0].node_name if r.assignments else ""


def test_placement_algorithm_respects_higher_score_of_placement1() -> None:
    """TestPodGroupSchedulingPlacementAlgorithm "respects higher score of placement1"."""
    r, alg = _run({}, {"placement1": 2, "placement2": 1})
    assert r.status.is_success() and _host(r) == "node1"
    assert alg.evaluated == alg.reverted == ["placement1", "placement2"]  # each evaluation undone at once


def test_placement_algorithm_respects_higher_score_of_placement2() -> None:
    """TestPodGroupSchedulingPlacementAlgorithm "respects higher score of placement2"."""
    r, _ = _run({}, {"placement1": 1, "placement2": 2})
    assert r.status.is_success() and _host(r) == "node2"


def test_placement_algorithm_when_no_placements_are_generated_returns_unschedulable() -> None:
    """TestPodGroupSchedulingPlacementAlgorithm "when no placements are generated, returns unschedulable"."""
    r, alg = _run({}, {}, gen=lambda v, p: ([], Status()))
    assert r.status.code == Code.UNSCHEDULABLE and r.status.message() == "no feasible placements found"
    assert r.status.plugin == "TopologyPlacement" and alg.evaluated == []


def test_placement_algorithm_when_all_placements_are_infeasible_returns_unschedulable() -> None:
    """TestPodGroupSchedulingPlacementAlgorithm "when all placements are infeasible, returns
    unschedulable": the first placement's result, its pod keeping its own FitError."""
    unsched = Status(Code.UNSCHEDULABLE)
    r, _ = _run({"node1": unsched, "node2": unsched}, {"placement1": 1, "placement2": 2},
                [[Code.WAIT, Code.UNSCHEDULABLE], [Code.WAIT, Code.UNSCHEDULABLE]])
    assert r.status.code == Code.UNSCHEDULABLE
    assert r.status.message() == "0/2 placements are available, first placement status: injected placementFeasible status"
    assert [st.message() for st in r.pod_statuses.values()] == ["0/1 nodes are available:"]
    assert r.placement is not None and r.placement.name == "placement1" and not r.any_scheduled


def test_placement_algorithm_all_placements_infeasible_but_pods_feasible() -> None:
    """TestPodGroupSchedulingPlacementAlgorithm "when all placements are infeasible, but pods are
    feasible, returns unschedulable": the pod keeps its SuggestedHost in the reported result."""
    r, _ = _run({}, {"placement1": 1, "placement2": 2}, [[Code.WAIT, Code.UNSCHEDULABLE], [Code.WAIT, Code.UNSCHEDULABLE]])
    assert r.status.message() == "0/2 placements are available, first placement status: injected placementFeasible status"
    assert _host(r) == "node1"


def test_placement_algorithm_first_placement_status_reads_as_error() -> None:
    """The 1.36 case of the same test: a first placement status built WithError(errPodGroupUnschedulable)
    reads as that error alone (Status.AsError)."""
    unsched = Status(Code.UNSCHEDULABLE)
    r, _ = _run({"node1": unsched, "node2": unsched}, {})
    assert r.status.message() == "0/2 placements are available, first placement status: " + ERR_POD_GROUP_UNSCHEDULABLE


def test_placement_algorithm_filters_out_infeasible_placements() -> None:
    """TestPodGroupSchedulingPlacementAlgorithm "filters out infeasible placements": one success,
    no scoring."""
    r, _ = _run({"node2": Status(Code.UNSCHEDULABLE)}, {"placement1": 1},
                [[Code.WAIT, Code.SUCCESS], [Code.WAIT, Code.UNSCHEDULABLE]])
    assert r.status.is_success() and _host(r) == "node1"


def test_placement_algorithm_filters_out_infeasible_placements_with_feasible_pods() -> None:
    """TestPodGroupSchedulingPlacementAlgorithm "filters out infeasible placements with feasible pods":
    placement2 scores higher but its PlacementFeasible rejected it."""
    r, _ = _run({}, {"placement1": 1, "placement2": 2}, [[Code.WAIT, Code.SUCCESS], [Code.WAIT, Code.UNSCHEDULABLE]])
    assert r.status.is_success() and _host(r) == "node1"


def test_placement_algorithm_when_generate_plugin_fails_returns_error() -> None:
    """TestPodGroupSchedulingPlacementAlgorithm "when generate plugin fails, returns error"."""
    r, _ = _run({}, {}, gen=lambda v, p: ([], Status(Code.ERROR, ["error for test"], "FakePlacementPlugin")))
    assert r.status.code == Code.ERROR and r.status.message() == "error for test"
    assert r.status.plugin == "FakePlacementPlugin"


def test_placement_algorithm_when_score_plugin_fails_returns_error() -> None:
    """TestPodGroupSchedulingPlacementAlgorithm "when score plugin fails, returns error"."""
    r, _ = _run({}, {"placement1": 1}, score_statuses={"placement2": Status(Code.ERROR, ["error for test"])})
    assert r.status.code == Code.ERROR and r.status.plugin == "FakePlacementPlugin"
    assert r.status.message() == 'running PlacementScore plugins: plugin "FakePlacementPlugin" failed with: error for test'


def test_placement_algorithm_when_a_placement_evaluation_errors_returns_error() -> None:
    """TestPodGroupSchedulingPlacementAlgorithm "when a placement evaluation errors, returns error"."""
    r, alg = _run({"node1": Status(Code.ERROR, ["error for test"])}, {"placement1": 1})
    assert r.status.code == Code.ERROR
    assert r.status.message() == 'failed to schedule other pod from a pod group: running "FakePlacementPlugin" filter plugin: error for test'
    assert alg.evaluated == ["placement1"]  # the Error aborts: placement2 is never evaluated


@pytest.mark.parametrize("name,plugins,want", [
    ("respects higher score of placement1",
     [(1, {"placement1": 50, "placement2": 75}), (2, {"placement1": 25, "placement2": 10})], "node1"),
    ("respects higher score of placement2",
     [(1, {"placement1": 75, "placement2": 50}), (2, {"placement1": 10, "placement2": 25})], "node2"),
])
def test_placement_algorithm_scoring(name: str, plugins: list[tuple[int, dict[str, int]]], want: str) -> None:
    """TestPodGroupSchedulingPlacementAlgorithm_Scoring: weighted sum over the PlacementScore plugins."""
    parent, gen = _two_placements()
    scorers = [_FakeScorer(s, name=f"FakeScorePlugin[{i}]", weight=w) for i, (w, s) in enumerate(plugins)]
    r, _ = placement_algorithm(PlacementView("podgroup/default/pg"), parent, {}, _FakeDefaultAlgorithm({}), scorers,
                               generate=gen)
    assert _host(r) == want


def test_placement_algorithm_assumes_the_winner_with_composite_gate() -> None:
    """podGroupSchedulingPlacementAlgorithm with the CompositePodGroup gate: the winner is assumed
    again (assumeSubtreeWithRevert) and its revert returned."""
    parent, gen = _two_placements()
    assumed: list[str] = []

    def assume(res: GroupResult) -> tuple[Status, Any]:
        assumed.append(_host(res))
        return Status(), lambda: assumed.remove(_host(res))
    r, revert = placement_algorithm(PlacementView("podgroup/default/pg"), parent, {}, _FakeDefaultAlgorithm({}),
                                    [_FakeScorer({"placement2": 3})], assume=assume, generate=gen)
    assert assumed == ["node2"]
    revert()
    assert assumed == []


def test_find_best_placement_tie_break() -> None:
    """karpy: Go breaks a TotalScore tie with rand.Int(); without an rng the earliest placement wins,
    with one the choice follows its draws (reproducible for a seed)."""
    results = [GroupResult("podgroup/default/pg", Status(), placement=Placement(n, ())) for n in ("a", "b", "c")]
    scorer = _FakeScorer({"a": 1, "b": 1, "c": 1})
    assert find_best_placement(PlacementView("podgroup/default/pg"), results, [scorer]) == (0, Status())
    picks = {find_best_placement(PlacementView("podgroup/default/pg"), results, [scorer], random.Random(s))[0]
             for s in range(20)}
    assert picks == {0, 1, 2}
    assert (find_best_placement(PlacementView("k"), results, [scorer], random.Random(7))
            == find_best_placement(PlacementView("k"), results, [scorer], random.Random(7)))


def test_placement_algorithm_default_scorer_prefers_the_domain_fitting_more_pods() -> None:
    """PodGroupPodsCount as the default scorer: the rack holding more of the group wins."""
    r1 = [_ni("a", {"rack": "r1"})]
    r2 = [_ni("b", {"rack": "r2"}), _ni("c", {"rack": "r2"})]
    pods = [new_pod_info(pod(f"p{i}")) for i in range(2)]

    def evaluate(p: Placement) -> tuple[GroupResult, Any]:
        got = [ProposedAssignment(q, n.name) for q, n in zip(pods, p.nodes)]
        return GroupResult("podgroup/default/pg", Status(), got, any_scheduled=True), lambda: None
    r, _ = placement_algorithm(PlacementView("podgroup/default/pg", "rack"), Placement("all", tuple(r1 + r2)),
                               _lookup(r1 + r2), evaluate)
    assert r.placement is not None and r.placement.name == "r2" and len(r.assignments) == 2


# ---- the adapter for the PodGroup cycle's placement_hook ------------------------------------------
@dataclass
class _CorePod:
    key: str
    node: Optional[str] = None


@dataclass
class _CoreResult:
    """The shape of podgroupcycle.AlgorithmResult the adapter reads and returns."""

    status: Status
    pods: list[_CorePod] = field(default_factory=list)
    any_scheduled: bool = False


def test_core_placement_hook_picks_the_rack_and_reports_infeasibility() -> None:
    """core_placement_hook around the cycle's default algorithm: each rack evaluated with the snapshot
    restricted to it, the winner's result returned; with no rack fitting the gang, the phase's
    "0/K placements are available" status (the first placement's text read through AsError)."""
    from karpy.kubescheduler.placement import core_placement_hook
    r1 = [_ni("a", {"rack": "r1"})]
    r2 = [_ni("b", {"rack": "r2"}), _ni("c", {"rack": "r2"})]
    nodes = r1 + r2
    current: list[Optional[Placement]] = [None]
    infos = {k: new_pod_info(pod(k.split("/")[1])) for k in ("default/p0", "default/p1")}

    def restrict(p: Optional[Placement]) -> None:
        current[0] = p

    def default_algorithm(keys: Any, min_count: Any, scheduled: Any, schedule: Any, assume: Any, revert: Any) -> _CoreResult:
        assert current[0] is not None  # always inside a placement
        free = [n.name for n in current[0].nodes]
        got = [_CorePod(k, free.pop(0) if free else None) for k in keys]
        if sum(1 for g in got if g.node) < min_count:
            return _CoreResult(Status(Code.UNSCHEDULABLE, [ERR_POD_GROUP_UNSCHEDULABLE, "minCount (2) …"]), got)
        return _CoreResult(Status(), got, True)

    def hook_for(min_count: int) -> Any:
        return core_placement_hook(PlacementView("podgroup/default/pg", "rack"), Placement("all", tuple(nodes)),
                                   {n.name: n for n in nodes}, restrict, infos.__getitem__, default_algorithm,
                                   lambda st: _CoreResult(st))
    out = hook_for(2)(list(infos), 2, 0, None, None, None)
    assert out.status.is_success() and [p.node for p in out.pods] == ["b", "c"] and current[0] is None
    out = hook_for(3)(list(infos), 3, 0, None, None, None)
    assert out.status.code == Code.UNSCHEDULABLE and not out.any_scheduled
    assert out.status.message() == ("0/2 placements are available, first placement status: "
                                    "pod group is unschedulable")
