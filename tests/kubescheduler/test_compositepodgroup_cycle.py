"""A CompositePodGroup tree inside KubeScheduler (gates CompositePodGroup + TAS): the root entity's
cycle schedules every leaf through compositepodgroup.schedule_group_tree on one snapshot and binds
the tree atomically or not at all (schedule_one_podgroup.go, podGroupSchedulingRecursiveAlgorithm;
reference kube-scheduler-1.37.md §8). Gates off: each leaf PodGroup is scheduled on its own."""

from __future__ import annotations

import random
from typing import Any, Optional

from karpy.api.podgroup import CompositePodGroup, SchedulingPodGroup
from karpy.kubescheduler.scheduler import BOUND, UNSCHEDULABLE, KubeScheduler, SchedulerConfig

from ._helpers import node
from .conftest import FakeClock
from .test_podgroup_v137_scheduler import _member

_GATES = {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True, "CompositePodGroup": True}


def _sched(gates: Optional[dict[str, bool]] = None) -> KubeScheduler:
    return KubeScheduler(FakeClock(), random.Random(1),
                         SchedulerConfig(kubernetes_version="1.37", feature_gates=gates or _GATES))


def _leaf(name: str, min_count: int, parent: str = "job") -> SchedulingPodGroup:
    return SchedulingPodGroup.model_validate({
        "metadata": {"name": name, "namespace": "default", "generation": 1},
        "spec": {"parentCompositePodGroupName": parent, "schedulingPolicy": {"gang": {"minCount": min_count}}}})


def _root(min_groups: int = 2) -> CompositePodGroup:
    return CompositePodGroup.model_validate({
        "metadata": {"name": "job", "namespace": "default", "generation": 1},
        "spec": {"workloadRef": {"workloadName": "job", "templateName": "job"},
                 "schedulingPolicy": {"gang": {"minGroupCount": min_groups}}}})


def _tree(cpu: str, gates: Optional[dict[str, bool]] = None) -> KubeScheduler:
    s = _sched(gates)
    s.add_node(node("n1", {"cpu": cpu, "pods": "110"}))
    s.add_pod_group(_root())
    s.add_pod_group(_leaf("a", 2))
    s.add_pod_group(_leaf("b", 2))
    for g in ("a", "b"):
        for i in range(2):
            s.add_pod(_member(f"{g}{i}", group=g))
    return s


def _bound(s: KubeScheduler) -> list[str]:
    return sorted(s.assigned)


def _drain(s: KubeScheduler) -> list[Any]:
    out = []
    while (r := s.schedule_one()) is not None:
        out.append(r)
    return out


def test_two_level_tree_binds_atomically() -> None:
    """Room for all 4 pods: one cycle of the root entity binds both leaves; each leaf PodGroup's
    condition is True, the CompositePodGroup gets none (1.37)."""
    s = _tree("4")
    r = s.schedule_one()
    assert r is not None and r.outcome == BOUND
    assert sorted(m.pod_key for m in r.members if m.outcome == BOUND) == [
        "default/a0", "default/a1", "default/b0", "default/b1"]
    assert s.schedule_one() is None
    assert _bound(s) == ["default/a0", "default/a1", "default/b0", "default/b1"]
    for g in ("default/a", "default/b"):
        cond = s.pod_group_conditions[g][0]
        assert (cond["type"], cond["status"]) == ("PodGroupInitiallyScheduled", "True")
    assert "default/job" not in s.pod_group_conditions


def test_two_level_tree_binds_nothing_when_a_leaf_fails() -> None:
    """Room for 3: leaf a fits (2 of 2) but leaf b only 1 of 2, so the root (minGroupCount 2) fails
    and nothing under it binds -- not even leaf a, which would have fit alone."""
    s = _tree("3")
    results = _drain(s)
    assert _bound(s) == []
    assert all(m.outcome == UNSCHEDULABLE for r in results for m in r.members)
    assert s.pod_group_conditions["default/a"][0]["status"] == "False"
    assert s.pod_group_conditions["default/b"][0]["status"] == "False"
    assert s.assigned == {} and all(not ni.pods for ni in s.node_infos.values())  # rollback left nothing


def test_gate_off_leaves_schedule_alone() -> None:
    """CompositePodGroup off: the same tree's leaves are separate gangs; leaf a binds on its own."""
    s = _tree("3", {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True})
    _drain(s)
    assert _bound(s) == ["default/a0", "default/a1"]
