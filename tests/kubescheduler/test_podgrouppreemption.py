"""Ported kube-scheduler v1.37 workload-aware preemption tests (DefaultPreemption.PodGroupPostFilter).

Upstream: pkg/scheduler/framework/preemption/podgrouppreemption_test.go
(TestPodGroupEvaluator_Preempt_Victims, TestPodGroupEvaluator_Preempt_NominatedNodes,
TestPodGroupEvaluator_Preempt), pkg/scheduler/framework/preemption/types_test.go
(TestGetHighestAllAncestor) and util_test.go (MoreImportantVictim, FilterVictimsWithPDBViolation).
The harness is upstream's: a capacity Filter (pod size from the "size" label, default 1) and a
round-robin scheduling function honouring minCount.

Where the test file of a later release expects another outcome, the 1.37 code wins and the case says
so: a group without victims is UnschedulableAndUnresolvable (1.38 returns Unschedulable), and a member
nominated to a node with a terminating lower-priority pod makes the group ineligible (1.38 returns
Success "ongoing preemption on nominated nodes").
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Optional

import pytest

from karpy.api.meta import LabelSelector, ObjectMeta
from karpy.api.pod import PodCondition
from karpy.api.poddisruptionbudget import PodDisruptionBudget
from karpy.kubescheduler.framework import CycleState, Framework, Plugin
from karpy.kubescheduler.nodeinfo import NodeInfo
from karpy.kubescheduler.placement import ProposedAssignment
from karpy.kubescheduler.podgrouppreemption import (
    MSG_TOPOLOGY,
    FrameworkReprieve,
    GroupMeta,
    Preemptor,
    Victim,
    filter_victims_with_pdb_violation,
    highest_all_ancestor,
    more_important_victim,
    pod_group_post_filter,
    pod_priority_in_groups,
    resolve_preemption_policy,
    victim_units,
)
from karpy.kubescheduler.podinfo import PodInfo, new_pod_info
from karpy.kubescheduler.types import Code, Status

from ._helpers import node, pod

LOW, MID, HIGH = 0, 100, 1000


def _pod(name: str, on: str = "", prio: int = LOW, group: str = "", size: int = 1, start: Optional[int] = None,
         labels: Optional[dict[str, str]] = None, nominated: str = "", terminating: bool = False,
         policy: Optional[str] = None) -> PodInfo:
    lab = {"size": str(size), **(labels or {})}
    if group:
        lab["pg"] = group
    p = pod(name, labels=lab, node_name=on or None, priority=prio, nominated_node_name=nominated or None,
            preemption_policy=policy, uid=name)
    if start is not None:
        p.status.start_time = datetime.fromtimestamp(start, timezone.utc)
    if terminating:
        p.metadata.deletion_timestamp = datetime.fromtimestamp(0, timezone.utc)
        p.status.conditions = [PodCondition(type="DisruptionTarget", status="True", reason="PreemptionByScheduler")]
    return new_pod_info(p)


def _group_of(p: PodInfo) -> Optional[str]:
    g = p.labels.get("pg")
    return f"podgroup/default/{g}" if g else None


def _size(p: PodInfo) -> int:
    return int(p.labels.get("size", "1"))


class _Capacity:
    """mockFilterPlugin as a ReprieveHandle: a node fits while the sizes of its pods stay within its capacity."""

    def __init__(self, caps: dict[str, int]) -> None:
        self.caps = caps
        self.ext_calls = 0

    def add_pod(self, a: ProposedAssignment, added: PodInfo, ni: NodeInfo) -> None:
        self.ext_calls += 1

    def remove_pod(self, a: ProposedAssignment, removed: PodInfo, ni: NodeInfo) -> None:
        self.ext_calls += 1

    def filter(self, a: ProposedAssignment, ni: NodeInfo) -> Status:
        used = sum(_size(p) for p in ni.pods)
        return Status() if used + _size(a.pod) <= self.caps[ni.name] else Status(Code.UNSCHEDULABLE, ["not enough capacity"])


def _round_robin(nodes: list[NodeInfo], caps: dict[str, int], pods: list[PodInfo], min_count: int) -> Any:
    """mockSchedulingFunc: each pod on the next node (round-robin) with room; Unschedulable below minCount."""
    def schedule() -> tuple[list[ProposedAssignment], Status]:
        used = {n.name: sum(_size(p) for p in n.pods) for n in nodes}
        out: list[ProposedAssignment] = []
        idx = 0
        for p in pods:
            for step in range(len(nodes)):
                i = (idx + step) % len(nodes)
                n = nodes[i].name
                if used[n] + _size(p) <= caps[n]:
                    out.append(ProposedAssignment(p, n, CycleState()))
                    used[n] += _size(p)
                    idx = (i + 1) % len(nodes)
                    break
        if len(out) >= min_count:
            return out, Status()
        return [], Status(Code.UNSCHEDULABLE)
    return schedule


def _pdb(app: str, allowed: int = 0) -> PodDisruptionBudget:
    return PodDisruptionBudget.model_validate({
        "metadata": {"name": f"pdb-{app}", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": app}}},
        "status": {"disruptionsAllowed": allowed}})


def _run(caps: dict[str, int], init: list[PodInfo], preemptor: list[PodInfo], prio: int = HIGH,
         groups: Optional[list[GroupMeta]] = None, min_count: int = 1, pdbs: Optional[list[Any]] = None,
         policy: str = "PreemptLowerPriority") -> tuple[Any, list[NodeInfo]]:
    nodes = [NodeInfo.from_node(node(n), [p for p in init if p.node_name == n]) for n in caps]
    before = {n.name: [p.key for p in n.pods] for n in nodes}
    res = pod_group_post_filter(
        Preemptor("podgroup/default/preemptor-pg", prio, tuple(preemptor), policy), nodes,
        _round_robin(nodes, caps, preemptor, min_count), _Capacity(caps), _group_of,
        {g.key: g for g in (groups or [])}, pdbs or [])
    assert {n.name: [p.key for p in n.pods] for n in nodes} == before  # EndMutations restored the snapshot
    return res, nodes


def _pg(name: str, prio: int, all_: bool = False) -> GroupMeta:
    return GroupMeta(f"podgroup/default/{name}", None, prio, all_)


def _victims(res: Any) -> set[str]:
    return {p.name for p in res.victims}


# ---- TestPodGroupEvaluator_Preempt_Victims ----------------------------------------------------------
def test_priority_mix_of_no_groups_and_pod_groups() -> None:
    """"Priority: mix of no groups and pod groups": a single-mode group member ranks above a plain pod."""
    res, _ = _run({"node1": 2}, [_pod("p1", "node1"), _pod("p2", "node1", group="pg1")], [_pod("p", prio=HIGH)],
                  groups=[_pg("pg1", LOW)])
    assert res.status.is_success() and _victims(res) == {"p1"}


def test_priority_start_time_of_pods_from_same_single_group() -> None:
    """"Priority: StartTime of pods from same group with disruption mode single": the later start goes."""
    res, _ = _run({"node1": 2}, [_pod("p1", "node1", group="pg1", start=1), _pod("p2", "node1", group="pg1", start=0)],
                  [_pod("p", prio=HIGH)], groups=[_pg("pg1", LOW)])
    assert _victims(res) == {"p1"}


def test_pod_group_with_disruption_mode_all_not_reprieved() -> None:
    """"Pod group with disruption mode group not reprieved": the unit spans both nodes."""
    res, _ = _run({"node1": 1, "node2": 1}, [_pod("p1", "node1", group="pg1"), _pod("p2", "node2", group="pg1")],
                  [_pod("p", prio=HIGH)], groups=[_pg("pg1", LOW, True)])
    assert _victims(res) == {"p1", "p2"} and len(res.units) == 1


def test_complex_mixed_shared_different_and_no_groups() -> None:
    """"Complex Mixed: Shared, different, and no groups"."""
    init = [_pod("p1", "node1", group="pg1", start=2), _pod("p2", "node2", group="pg1", start=1),
            _pod("p3", "node3", group="pg2", start=0), _pod("p4", "node4", MID),
            _pod("p5", "node5", HIGH, group="pg3", start=0)]
    res, _ = _run({"node1": 2, "node2": 1, "node3": 2, "node4": 2, "node5": 2}, init,
                  [_pod(f"p-{i}", prio=HIGH) for i in (1, 2, 3)],
                  groups=[_pg("pg1", LOW), _pg("pg2", LOW), _pg("pg3", HIGH)])
    assert _victims(res) == {"p2"}


def test_pdb_mixed_groups() -> None:
    """"PDB: Mixed groups": the PDB-protected member is reprieved first."""
    init = [_pod("victim-pdb", "node1", group="pg1", labels={"app": "foo"}), _pod("victim-no-pdb", "node1", group="pg1")]
    res, _ = _run({"node1": 2}, init, [_pod("p", prio=HIGH)], pdbs=[_pdb("foo")])
    assert _victims(res) == {"victim-no-pdb"}


@pytest.mark.parametrize("name", [
    "PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption",
    "PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption, ignoring member pod preemption policy",
    "PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption with PodGroup victims",
    "PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption with PodGroup victims, ignoring member pod preemption policy",
])
def test_preempt_lower_priority_policy(name: str) -> None:
    """The four PreemptLowerPriority cases: the plain pod (lowest rank) is the one victim; with
    PodGroupPreemptionPolicy on, a member's own Never is ignored."""
    ignoring = "ignoring" in name
    groups = [_pg("pg1", LOW), _pg("pg2", LOW)] if "PodGroup victims" in name else []
    members = [_pod("p-1", prio=HIGH, policy="Never" if ignoring else None)]
    policy = resolve_preemption_policy("PreemptLowerPriority", members, policy_gate=True)
    init = [_pod("p1", "node1"), _pod("p2", "node2", group="pg1"), _pod("p3", "node3", group="pg2")]
    res, _ = _run({"node1": 1, "node2": 1, "node3": 1}, init, members, groups=groups, policy=policy)
    assert res.status.is_success() and _victims(res) == {"p1"}


def test_eligible_if_terminating_pods_are_on_non_nominated_nodes() -> None:
    """"Preemptor group is eligible if terminating pods are on non-nominated nodes"."""
    init = [_pod("victim", "node2", terminating=True), _pod("other-victim", "node1")]
    res, _ = _run({"node1": 1, "node2": 1}, init, [_pod("p1", prio=HIGH), _pod("p2", prio=HIGH, nominated="node1")])
    assert res.status.is_success() and _victims(res) == {"other-victim", "victim"}


@pytest.mark.parametrize("mode_all", [True, False])
def test_eligible_if_nominated_node_has_terminating_pod_of_higher_priority_group(mode_all: bool) -> None:
    """"Preemptor group is eligible if nominated node has terminating pod belonging to a pod group of
    higher priority" (disruptionMode all, and single / nil): the group's priority counts, not the pod's."""
    init = [_pod("victim", "node1", LOW, group="victim-pg", terminating=True), _pod("other-victim", "node1")]
    res, _ = _run({"node1": 2, "node2": 1}, init, [_pod("p1", prio=MID), _pod("p2", prio=MID, nominated="node1")],
                  prio=MID, groups=[_pg("victim-pg", HIGH, mode_all)])
    assert res.status.is_success() and _victims(res) == {"other-victim"}


def test_preempt_single_lower_priority_pod() -> None:
    """"Preempt single lower priority pod", with the nomination of the preemptor pod."""
    res, _ = _run({"node1": 1}, [_pod("p1", "node1")], [_pod("p", prio=HIGH)])
    assert _victims(res) == {"p1"} and res.nominations == {"default/p": "node1"}


def test_prefer_lower_priority_victim() -> None:
    """"Priority: Prefer lower priority victim"."""
    res, _ = _run({"node1": 2}, [_pod("p1", "node1", LOW), _pod("p2", "node1", MID), _pod("p3", "node1", HIGH)],
                  [_pod("p", prio=HIGH)])
    assert _victims(res) == {"p1", "p2"}


def test_efficiency_preempt_minimum_number_of_victims() -> None:
    """"Efficiency: Preempt minimum number of victims": equal units keep the cluster order."""
    res, _ = _run({"node1": 3}, [_pod(f"p{i}", "node1") for i in (1, 2, 3, 4)], [_pod("p", prio=HIGH)])
    assert _victims(res) == {"p3", "p4"}


def test_pdb_prefer_non_violating_victim() -> None:
    """"PDB: Prefer non-violating victim"."""
    res, _ = _run({"node1": 2}, [_pod("victim-pdb", "node1", labels={"app": "foo"}), _pod("victim-no-pdb", "node1")],
                  [_pod("p", prio=HIGH)], pdbs=[_pdb("foo")])
    assert _victims(res) == {"victim-no-pdb"} and res.num_pdb_violations == 0


def test_pdb_prefer_removing_non_violating_over_lower_priority_violating() -> None:
    """"PDB: Prefer removing non-violating victim over lower priority violating victim"."""
    res, _ = _run({"node1": 2}, [_pod("victim-pdb", "node1", LOW, labels={"app": "foo"}),
                                 _pod("victim-no-pdb", "node1", MID)], [_pod("p", prio=HIGH)], pdbs=[_pdb("foo")])
    assert _victims(res) == {"victim-no-pdb"}


def test_pdb_prefer_lower_priority_when_violation_unavoidable() -> None:
    """"PDB: Prefer lower priority pod for preemption, when preemption without pdb violation is not possible"."""
    res, _ = _run({"node1": 2}, [_pod("p1", "node1", LOW, labels={"app": "foo"}), _pod("p2", "node1", MID, labels={"app": "foo"})],
                  [_pod("p", prio=HIGH)], pdbs=[_pdb("foo")])
    assert _victims(res) == {"p1"} and res.num_pdb_violations == 1


def test_pod_group_preempt_group_as_a_whole() -> None:
    """"PodGroup: Preempt group as a whole"."""
    res, _ = _run({"node1": 1, "node2": 2}, [_pod("p1", "node1", group="pg1"), _pod("p2", "node2", group="pg1")],
                  [_pod("p", prio=HIGH)], groups=[_pg("pg1", LOW, True)])
    assert _victims(res) == {"p1", "p2"}


def test_pod_group_prefer_single_pod_over_pod_group() -> None:
    """"PodGroup: Prefer single pod over podGroup for preemption candidate"."""
    init = [_pod("p1", "node1"), _pod("g1-1", "node1", group="pg1"), _pod("g1-2", "node1", group="pg1")]
    res, _ = _run({"node1": 3}, init, [_pod("p", prio=HIGH)], groups=[_pg("pg1", LOW, True)])
    assert _victims(res) == {"p1"}


def test_pod_group_preempt_group_as_a_whole_on_single_node() -> None:
    """"PodGroup: Preempt group as a whole on single node": the mid-priority pod is reprieved first."""
    init = [_pod("g1-1", "node1", group="pg1"), _pod("g1-2", "node1", group="pg1"), _pod("p1", "node1", MID)]
    res, _ = _run({"node1": 3}, init, [_pod("p", prio=HIGH)], groups=[_pg("pg1", LOW, True)])
    assert _victims(res) == {"g1-1", "g1-2"}


def test_pdb_unit_violation_if_any_member_violates() -> None:
    """"PDB: Unit violation if any member violates"."""
    init = [_pod("g1-1", "node1", group="pg1", labels={"app": "foo"}), _pod("g1-2", "node1", group="pg1"),
            _pod("p1", "node1")]
    res, _ = _run({"node1": 3}, init, [_pod("p", prio=HIGH)], groups=[_pg("pg1", LOW, True)], pdbs=[_pdb("foo")])
    assert _victims(res) == {"p1"}


@pytest.mark.parametrize("name,victim_prio", [
    ("Failure: Cannot preempt the victim with higher priority", HIGH),
    ("Failure: Cannot preempt the victim with equal priority", MID),
])
def test_failure_no_lower_priority_victim(name: str, victim_prio: int) -> None:
    """The "Failure: Cannot preempt the victim with higher/equal priority" cases (1.37: UAU)."""
    res, _ = _run({"node1": 100}, [_pod("p1", "node1", victim_prio)], [_pod("p", prio=MID)], prio=MID)
    assert res.status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert res.status.message() == "pod group preemption: No preemption victims found for incoming preemptor"


def test_failure_cannot_preempt_if_node_is_empty() -> None:
    """"Failure: Cannot preempt if node is empty": no victims even with room."""
    res, _ = _run({"node1": 100}, [], [_pod("p", prio=MID)], prio=MID)
    assert res.status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_priority_divergence_group_lower_than_its_pods() -> None:
    """"Priority divergence: candidate victim PodGroup has lower priority than the Pods from that group"."""
    res, _ = _run({"node1": 1, "node2": 1}, [_pod("p1", "node1", HIGH, group="pg1"), _pod("p2", "node2", HIGH, group="pg1")],
                  [_pod("p", prio=HIGH)], groups=[_pg("pg1", MID, True)])
    assert _victims(res) == {"p1", "p2"}


def test_priority_divergence_group_higher_than_its_pods() -> None:
    """"Priority divergence: candidate victim PodGroup has higher priority than the Pods from that group"."""
    res, _ = _run({"node1": 1, "node2": 1}, [_pod("p1", "node1", LOW, group="pg1"), _pod("p2", "node2", LOW, group="pg1")],
                  [_pod("p", prio=MID)], prio=MID, groups=[_pg("pg1", MID, True)])
    assert not res.status.is_success() and res.victims == []


@pytest.mark.parametrize("min_count", [1, 0])
def test_schedule_as_many_pods_as_possible_without_preempting_higher_priority(min_count: int) -> None:
    """"Gang scheduling: schedule as many pods as possible without preempting higher priority pods,
    but still more than minCount" and its "Basic scheduling" twin."""
    init = [_pod("p1", "node1"), _pod("p2", "node2"), _pod("p3", "node3", HIGH), _pod("p4", "node4", HIGH)]
    res, _ = _run({f"node{i}": 1 for i in (1, 2, 3, 4)}, init, [_pod(f"p-{c}", prio=HIGH) for c in "abc"],
                  min_count=min_count or 1)
    assert _victims(res) == {"p1", "p2"} and set(res.nominations) == {"default/p-a", "default/p-b"}


@pytest.mark.parametrize("variant", ["Gang scheduling", "Basic scheduling"])
def test_do_not_reprieve_victim_pod_group_of_lower_priority(variant: str) -> None:
    """"… scheduling: do not reprieve victim pod group of lower priority"."""
    init = [_pod("v1", "node1", MID, group="victim-pg"), _pod("v2", "node2", MID, group="victim-pg"), _pod("v3", "node3")]
    res, _ = _run({f"node{i}": 1 for i in (1, 2, 3)}, init, [_pod(f"p-{c}", prio=HIGH) for c in "abc"],
                  groups=[_pg("victim-pg", MID, True)])
    assert _victims(res) == {"v1", "v2", "v3"}


@pytest.mark.parametrize("variant", ["Gang scheduling", "Basic scheduling"])
def test_preempt_a_pod_group_victim_but_do_not_schedule_full_pod_group(variant: str) -> None:
    """"… scheduling: preempt a pod group victim but do not schedule full pod group"."""
    init = [_pod("v1", "node1", MID, group="victim-pg"), _pod("v2", "node2", MID, group="victim-pg"),
            _pod("v3", "node3", HIGH, group="victim-pg2"), _pod("v4", "node4", HIGH, group="victim-pg2")]
    res, _ = _run({f"node{i}": 1 for i in (1, 2, 3, 4)}, init, [_pod(f"p-{c}", prio=HIGH) for c in "abc"],
                  groups=[_pg("victim-pg", MID, True), _pg("victim-pg2", HIGH, True)])
    assert _victims(res) == {"v1", "v2"} and len(res.units) == 1


def test_scheduling_failure_after_removing_every_candidate_is_returned() -> None:
    """selectVictimsOnDomain: when the group does not fit even without every candidate, the
    scheduling status is returned (prefixed) and nothing is evicted."""
    res, _ = _run({"node1": 1}, [_pod("p1", "node1")], [_pod(f"p-{c}", prio=HIGH) for c in "ab"], min_count=2)
    assert res.status.code == Code.UNSCHEDULABLE and res.victims == [] and res.nominations == {}


# ---- TestPodGroupEvaluator_Preempt_NominatedNodes / TestPodGroupEvaluator_Preempt -------------------
def test_preempt_nominated_nodes_only_for_assigned_pods() -> None:
    """TestPodGroupEvaluator_Preempt_NominatedNodes: a preemptor pod without a node gets no nomination."""
    nodes = [NodeInfo.from_node(node("node1"), [_pod("p3", "node1")])]
    p1, p2 = _pod("p1", prio=HIGH), _pod("p2", prio=HIGH)

    def schedule() -> tuple[list[ProposedAssignment], Status]:
        return [ProposedAssignment(p1, "node1", CycleState()), ProposedAssignment(p2, "", CycleState())], Status()
    res = pod_group_post_filter(Preemptor("podgroup/default/preemptor-pg", HIGH, (p1, p2)), nodes, schedule,
                                _Capacity({"node1": 100}), _group_of, {})
    assert res.status.is_success() and res.nominations == {"default/p1": "node1"}


@pytest.mark.parametrize("victim_prio,groups", [
    (LOW, []),
    (HIGH, [_pg("victim-pg", LOW, True)]),
    (HIGH, [_pg("victim-pg", LOW, False)]),
])
def test_not_eligible_with_terminating_pod_on_nominated_node(victim_prio: int, groups: list[GroupMeta]) -> None:
    """TestPodGroupEvaluator_Preempt, the three "member has nominated node with terminating pods"
    cases, as 1.37 decides them: not eligible (1.38 answers Success "ongoing preemption on nominated
    nodes" with the current nominations)."""
    init = [_pod("victim", "node1", victim_prio, group="victim-pg" if groups else "", terminating=True)]
    called: list[bool] = []

    def schedule() -> tuple[list[ProposedAssignment], Status]:
        called.append(True)
        return [], Status()
    nodes = [NodeInfo.from_node(node("node1"), init)]
    res = pod_group_post_filter(
        Preemptor("podgroup/default/preemptor-pg", HIGH, (_pod("p1", prio=HIGH), _pod("p2", prio=HIGH, nominated="node1"))),
        nodes, schedule, _Capacity({"node1": 1}), _group_of, {g.key: g for g in groups})
    assert res.status.code == Code.UNSCHEDULABLE and not called
    assert res.status.message() == "pod group preemption: not eligible due to a terminating pod on the nominated node."


@pytest.mark.parametrize("with_groups", [False, True])
def test_preempt_never_policy_does_not_perform_preemption(with_groups: bool) -> None:
    """TestPodGroupEvaluator_Preempt "PodGroup preemptor with PreemptNever policy does not perform
    preemption" (with and without PodGroup victims)."""
    init = [_pod("p1", "node1"), _pod("p2", "node2", group="pg1"), _pod("p3", "node3", group="pg2")]
    groups = [_pg("pg1", LOW), _pg("pg2", LOW)] if with_groups else []
    policy = resolve_preemption_policy("Never", [], policy_gate=True)
    res, _ = _run({"node1": 1, "node2": 1, "node3": 1}, init, [_pod("p-1", prio=HIGH), _pod("p-2", prio=HIGH)],
                  groups=groups, policy=policy)
    assert res.status.code == Code.UNSCHEDULABLE
    assert res.status.message() == "pod group preemption: not eligible due to preemptionPolicy=Never."


def test_topology_constraints_are_not_supported() -> None:
    """DefaultPreemption.PodGroupPostFilter: a group with topology constraints is refused."""
    nodes = [NodeInfo.from_node(node("node1"), [_pod("p1", "node1")])]
    res = pod_group_post_filter(Preemptor("podgroup/default/pg", HIGH, (_pod("p", prio=HIGH),), topology_constrained=True),
                                nodes, lambda: ([], Status()), _Capacity({"node1": 1}), _group_of, {})
    assert res.status.code == Code.UNSCHEDULABLE and res.status.message() == MSG_TOPOLOGY


def test_reprieve_runs_prefilter_extensions_with_a_framework() -> None:
    """The reprieve through a karpy Framework (FrameworkReprieve): AddPod/RemovePod extensions and
    RunFilterPluginsWithNominatedPods on the assignment's CycleState."""
    class Cap(Plugin):
        name = "Cap"
        has_filter = True

        def filter(self, state: CycleState, p: PodInfo, ni: NodeInfo) -> Status:
            return Status() if len(ni.pods) < 1 else Status(Code.UNSCHEDULABLE, ["full"])
    nodes = [NodeInfo.from_node(node("node1"), [_pod("v", "node1")])]
    p = _pod("p", prio=HIGH)
    res = pod_group_post_filter(Preemptor("podgroup/default/pg", HIGH, (p,)), nodes,
                                lambda: ([ProposedAssignment(p, "node1", CycleState())], Status()),
                                FrameworkReprieve(Framework([Cap()], {})), _group_of, {})
    assert res.status.is_success() and _victims(res) == {"v"}


# ---- victim units and their order (types_test.go, util_test.go) -----------------------------------
def test_get_highest_all_ancestor() -> None:
    """TestGetHighestAllAncestor: the highest ancestor with disruptionMode all; without the
    CompositePodGroup gate only the PodGroup itself is read."""
    groups = {g.key: g for g in [
        GroupMeta("podgroup/default/pg", "compositepodgroup/default/mid", LOW, True),
        GroupMeta("compositepodgroup/default/mid", "compositepodgroup/default/root", LOW, True),
        GroupMeta("compositepodgroup/default/root", None, MID, False)]}
    assert highest_all_ancestor("podgroup/default/pg", groups, composite_gate=True) == "compositepodgroup/default/mid"
    assert highest_all_ancestor("podgroup/default/pg", groups, composite_gate=False) == "podgroup/default/pg"
    assert highest_all_ancestor(None, groups) is None
    assert highest_all_ancestor("podgroup/default/missing", groups, True) is None
    # GetPodPriority: the root group's priority (the topmost found)
    p = _pod("x", prio=HIGH, group="pg")
    assert pod_priority_in_groups(p, "podgroup/default/pg", groups, composite_gate=True) == MID
    assert pod_priority_in_groups(p, "podgroup/default/pg", groups, composite_gate=False) == LOW
    assert pod_priority_in_groups(p, None, groups) == HIGH


def test_composite_victim_unit_spans_every_leaf() -> None:
    """getCrossNodesVictims with CompositePodGroups: a pod under a disruptionMode-all composite
    takes every scheduled pod of every leaf under it, as one compositepodgroup unit."""
    groups = {g.key: g for g in [
        GroupMeta("podgroup/default/a", "compositepodgroup/default/cpg", LOW),
        GroupMeta("podgroup/default/b", "compositepodgroup/default/cpg", LOW),
        GroupMeta("compositepodgroup/default/cpg", None, LOW, True)]}
    nodes = [NodeInfo.from_node(node("n1"), [_pod("a1", "n1", group="a"), _pod("x", "n1")]),
             NodeInfo.from_node(node("n2"), [_pod("b1", "n2", group="b")])]
    units = victim_units(nodes, _group_of, groups, composite_gate=True)
    assert [(sorted(p.name for p in u.pods), u.kind) for u in units] == [(["a1", "b1"], "compositepodgroup"), (["x"], "pod")]


def test_more_important_victim() -> None:
    """MoreImportantVictim: priority, then CompositePodGroup > PodGroup > Pod, then size, then the
    earlier start (a nil start is never earlier)."""
    a = _pod("a")
    assert more_important_victim(Victim([a], MID, "pod"), Victim([a, a], LOW, "compositepodgroup"))
    assert more_important_victim(Victim([a], LOW, "compositepodgroup"), Victim([a, a], LOW, "podgroup"))
    assert more_important_victim(Victim([a], LOW, "podgroup"), Victim([a], LOW, "pod"))
    assert more_important_victim(Victim([a, a], LOW, "podgroup"), Victim([a], LOW, "podgroup"))
    assert more_important_victim(Victim([a], LOW, "pod", 1.0), Victim([a], LOW, "pod", 2.0))
    assert not more_important_victim(Victim([a], LOW, "pod", None), Victim([a], LOW, "pod", 2.0))
    assert not more_important_victim(Victim([a], LOW, "pod", 1.0), Victim([a], LOW, "pod", None))


def test_filter_victims_with_pdb_violation_shares_budgets() -> None:
    """FilterVictimsWithPDBViolation: one budget across the units; a unit with a violating pod is
    violating with that pod counted; unlabelled pods never violate."""
    u1 = Victim([_pod("a", labels={"app": "foo"})], LOW, "pod")
    u2 = Victim([_pod("b", labels={"app": "foo"}), _pod("c", labels={"app": "foo"})], LOW, "podgroup")
    u3 = Victim([_pod("d")], LOW, "pod")
    violating, rest = filter_victims_with_pdb_violation([u1, u2, u3], [_pdb("foo", 1)], [1])
    assert [(v.pods[0].name, n) for v, n in violating] == [("b", 2)] and [v.pods[0].name for v in rest] == ["a", "d"]


def test_resolve_preemption_policy() -> None:
    """resolvePreemptionPolicy: the group's field with the gate (nil → PreemptLowerPriority), else
    Never when any pod says Never."""
    never = [_pod("a", policy="Never"), _pod("b")]
    assert resolve_preemption_policy(None, never, policy_gate=True) == "PreemptLowerPriority"
    assert resolve_preemption_policy("Never", [], policy_gate=True) == "Never"
    assert resolve_preemption_policy(None, never, policy_gate=False) == "Never"
    assert resolve_preemption_policy("Never", [_pod("b")], policy_gate=False) == "PreemptLowerPriority"


# ---- the adapter for the PodGroup cycle's post_filter_hook ----------------------------------------
def test_core_post_filter_hook_evicts_through_the_cycle_algorithm() -> None:
    """core_post_filter_hook: the cycle's algorithm re-run on the scheduler's NodeInfos with the
    candidates removed, CycleStates rebuilt by PreFilter, victims handed to ``on_victims``, the
    nominations in podgroupcycle.PostFilterResult's shape; the NodeInfos restored."""
    from dataclasses import dataclass as _dc, field as _field

    from karpy.kubescheduler.podgrouppreemption import core_post_filter_hook

    class Cap(Plugin):
        name = "Cap"
        has_filter = True

        def filter(self, state: CycleState, p: PodInfo, ni: NodeInfo) -> Status:
            return Status() if sum(_size(q) for q in ni.pods) + _size(p) <= 1 else Status(Code.UNSCHEDULABLE, ["full"])

    @_dc
    class Res:
        status: Status
        pods: list[Any] = _field(default_factory=list)

    @_dc
    class PodRes:
        key: str
        node: Optional[str]

    nodes = [NodeInfo.from_node(node("n1"), [_pod("low1", "n1")]), NodeInfo.from_node(node("n2"), [_pod("low2", "n2")])]
    members = {k: _pod(k.split("/")[1], prio=HIGH) for k in ("default/m1", "default/m2")}
    fwk = Framework([Cap()], {})

    def algorithm() -> Res:
        got = []
        for k, pi in members.items():
            free = [ni for ni in nodes if fwk.run_filter(CycleState(), pi, ni).is_success()
                    and ni.name not in [g.node for g in got]]
            got.append(PodRes(k, free[0].name if free else None))
        ok = all(g.node for g in got)
        return Res(Status() if ok else Status(Code.UNSCHEDULABLE, ["pod group is unschedulable"]), got)
    evicted: list[str] = []
    hook = core_post_filter_hook(Preemptor("podgroup/default/pg", HIGH, tuple(members.values())), lambda: nodes, fwk,
                                 lambda n: [], members.__getitem__, _group_of, {},
                                 lambda st, nom: (st, nom), on_victims=lambda v: evicted.extend(p.name for p in v))
    st, nominations = hook(Res(Status(Code.UNSCHEDULABLE)), algorithm)
    assert st.is_success() and nominations == {"default/m1": "n1", "default/m2": "n2"}
    assert sorted(evicted) == ["low1", "low2"]
    assert [[p.name for p in ni.pods] for ni in nodes] == [["low1"], ["low2"]]


# ---- TestMultiTierCompositePodGroupPreemption_NestedDisruptionModes (test/integration) -------------
def _cpg(name: str, parent: Optional[str], all_: bool) -> GroupMeta:
    return GroupMeta(f"compositepodgroup/default/{name}", f"compositepodgroup/default/{parent}" if parent else None,
                     10, all_)


def _leaf(name: str, parent: str, all_: bool = False) -> GroupMeta:
    return GroupMeta(f"podgroup/default/{name}", f"compositepodgroup/default/{parent}", 10, all_)


@pytest.mark.parametrize("name,groups,init,preempted", [
    ("Intermediate CPG has DisruptionModeAll - only intermediate subtree is evicted",
     [_cpg("cpg-root", None, False), _cpg("cpg-mid-a", "cpg-root", True), _cpg("cpg-mid-b", "cpg-root", False),
      _leaf("pg-a1", "cpg-mid-a"), _leaf("pg-a2", "cpg-mid-a"), _leaf("pg-b1", "cpg-mid-b")],
     [("victim-a1", "node1", "pg-a1", 2), ("victim-a2", "node2", "pg-a2", 2), ("victim-b1", "node3", "pg-b1", 2)],
     {"victim-a1", "victim-a2"}),
    ("Leaf PG has DisruptionModeAll - only leaf PG pods are evicted",
     [_cpg("cpg-root", None, False), _cpg("cpg-mid-a", "cpg-root", False), _cpg("cpg-mid-b", "cpg-root", False),
      _leaf("pg-a1", "cpg-mid-a", True), _leaf("pg-a2", "cpg-mid-a"), _leaf("pg-b1", "cpg-mid-b")],
     [("victim-a1-1", "node1", "pg-a1", 1), ("victim-a1-2", "node2", "pg-a1", 1), ("victim-a2-1", "node2", "pg-a2", 1),
      ("victim-filler-1", "node1", "", 1), ("victim-b1", "node3", "pg-b1", 2)],
     {"victim-a1-1", "victim-a1-2", "victim-filler-1"}),
    ("Root CPG has DisruptionModeAll - entire 3-tier tree is evicted atomically",
     [_cpg("cpg-root", None, True), _cpg("cpg-mid-a", "cpg-root", False), _cpg("cpg-mid-b", "cpg-root", False),
      _leaf("pg-a1", "cpg-mid-a"), _leaf("pg-b1", "cpg-mid-b")],
     [("victim-a1", "node1", "pg-a1", 2), ("victim-b1", "node2", "pg-b1", 2)],
     {"victim-a1", "victim-b1"}),
])
def test_multi_tier_composite_pod_group_preemption_nested_disruption_modes(
        name: str, groups: list[GroupMeta], init: list[tuple[str, str, str, int]], preempted: set[str]) -> None:
    """TestMultiTierCompositePodGroupPreemption_NestedDisruptionModes: the highest disruptionMode-all
    ancestor bounds the unit; siblings outside it stay (the preemptor needs node1's 2 CPU)."""
    caps = {n: 2 for _, n, _, _ in init}
    pods = [_pod(n, on, 10, group=g, size=s) for n, on, g, s in init]
    nodes = [NodeInfo.from_node(node(n), [p for p in pods if p.node_name == n]) for n in caps]
    preemptor = _pod("preemptor-1", prio=100, size=2)

    def schedule() -> tuple[list[ProposedAssignment], Status]:  # nodeSelector: node1 only
        n1 = nodes[0]
        if sum(_size(p) for p in n1.pods) + 2 <= 2:
            return [ProposedAssignment(preemptor, "node1", CycleState())], Status()
        return [], Status(Code.UNSCHEDULABLE)
    res = pod_group_post_filter(Preemptor("compositepodgroup/default/cpg-preemptor", 100, (preemptor,)), nodes, schedule,
                                _Capacity(caps), _group_of, {g.key: g for g in groups}, composite_gate=True)
    assert res.status.is_success() and _victims(res) == preempted


@pytest.mark.parametrize("name,parents", [
    ("Cyclic CompositePodGroup references during preemption dry-run ancestor traversal",
     {"pg-cyclic": "cpg-cycle-a", "cpg-cycle-a": "cpg-cycle-b", "cpg-cycle-b": "cpg-cycle-a"}),
    ("Multi-level loop reference in CompositePodGroup hierarchy",
     {"pg-cyclic": "cpg-loop-1", "cpg-loop-1": "cpg-loop-2", "cpg-loop-2": "cpg-loop-3", "cpg-loop-3": "cpg-loop-1"}),
    ("Self-referencing CompositePodGroup handling", {"pg-cyclic": "cpg-self", "cpg-self": "cpg-self"}),
    ("Dangling non-existent parent reference during preemption dry-run", {"pg-cyclic": "cpg-nonexistent"}),
])
def test_composite_pod_group_preemption_cyclic_references_and_edge_cases(name: str, parents: dict[str, str]) -> None:
    """TestCompositePodGroupPreemption_CyclicReferencesAndEdgeCases: TraverseHierarchyUp stops at a
    repeated key, WorkloadMaxTreeDepth or a missing parent, so the victim is still found and evicted."""
    def key(n: str) -> str:
        return ("podgroup/default/" if n.startswith("pg-") else "compositepodgroup/default/") + n
    groups = {key(c): GroupMeta(key(c), key(p), 10) for c, p in parents.items() if not p.endswith("nonexistent")}
    groups.setdefault(key("pg-cyclic"), GroupMeta(key("pg-cyclic"), key("cpg-nonexistent"), 10))
    nodes = [NodeInfo.from_node(node("node1"), [_pod("victim-cyclic", "node1", 10, group="pg-cyclic", size=2)])]
    pre = _pod("preemptor", prio=100, size=2)

    def schedule() -> tuple[list[ProposedAssignment], Status]:
        return ([ProposedAssignment(pre, "node1", CycleState())], Status()) if not nodes[0].pods else ([], Status(Code.UNSCHEDULABLE))
    res = pod_group_post_filter(Preemptor("podgroup/default/p", 100, (pre,)), nodes, schedule, _Capacity({"node1": 2}),
                                _group_of, groups, composite_gate=True)
    assert res.status.is_success() and _victims(res) == {"victim-cyclic"}
