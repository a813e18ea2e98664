"""A CompositePodGroup tree inside KubeScheduler (gates CompositePodGroup + TAS): the root entity's
cycle schedules every leaf through compositepodgroup.schedule_group_tree on one snapshot and binds
the tree atomically or not at all (schedule_one_podgroup.go, podGroupSchedulingRecursiveAlgorithm;
reference kube-scheduler-1.37.md §8). Gates off: each leaf PodGroup is scheduled on its own."""

from __future__ import annotations

import random
from typing import Any, Optional

import pytest

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


# -- end to end on real prices (the bundled 2026-07-20 AWS table) ---------------------------------

_WORKLOAD = """---
apiVersion: scheduling.k8s.io/v1alpha3
kind: Workload
metadata: {name: job, namespace: default}
spec:
  podGroupTemplates:
  - {name: workers, schedulingPolicy: {gang: {minCount: 4}}}
  compositePodGroupTemplates:
  - {name: job, schedulingPolicy: {gang: {minGroupCount: 2}}}
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: CompositePodGroup
metadata: {name: job, namespace: default}
spec:
  workloadRef: {workloadName: job, templateName: job}
  schedulingPolicy: {gang: {minGroupCount: 2}}
"""
_LEAF = """---
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: NAME, namespace: default}
spec:
  parentCompositePodGroupName: job
  workloadRef: {workloadName: job, templateName: workers}
  schedulingPolicy: {gang: {minCount: 4}}
"""


def _simulate_tree(limits: str = "") -> dict[str, Any]:
    import karpy

    from .test_podgroup_v137_scenarios import _POD, _POOL
    text = _POOL.replace("LIMITS", limits) + _WORKLOAD
    for g in ("a", "b"):
        text += _LEAF.replace("NAME", g) + "".join(
            _POD.replace("podGroupName: train", f"podGroupName: {g}").replace("worker-I", f"{g}-{i}") for i in range(4))
    doc: dict[str, Any] = karpy.simulate(text, prices="2026-07-20", feature_gates=_GATES).to_document()
    return doc


def test_simulated_tree_binds_whole() -> None:
    """8 pods x 3 vCPU in two leaves of 4 under one CompositePodGroup: Karpenter launches one
    m5.8xlarge and the whole tree binds when it initializes (36 s)."""
    doc = _simulate_tree()
    assert [n["instance_type"] for n in doc["nodeclaims"]] == ["m5.8xlarge"]
    assert all(p["node"] for p in doc["pods"].values())
    assert {e["t"] for e in doc["timeline"] if e["kind"] == "pod.bound"} == {36.0}
    assert doc["warnings"] == []


def test_simulated_tree_under_limit_binds_nothing() -> None:
    """A 20 vCPU NodePool limit: Karpenter launches an m5.4xlarge and an m5.xlarge (room for 6);
    leaf a fits whole, leaf b 2 of 4, so the tree (minGroupCount 2) binds nothing and karpy says
    why for each leaf; the root's PodGroupPostFilter finds no victims and appends its message
    (applyPodGroupPostFilterResult)."""
    doc = _simulate_tree('limits: {cpu: "20"}')
    assert sorted(n["instance_type"] for n in doc["nodeclaims"]) == ["m5.4xlarge", "m5.xlarge"]
    assert doc["cost_per_hour"] == pytest.approx(0.96)
    assert not any(p["node"] for p in doc["pods"].values())
    assert doc["pods"]["default/a-0"]["message"] == (
        "pod group is unschedulable, 0/1 placements are available, first placement status: minCount (2) cannot be "
        "satisfied: 1 scheduled, 0 remaining, pod group preemption: No preemption victims found for incoming preemptor")
    a, b = (next(w for w in doc["warnings"] if w.startswith(f"PodGroup default/{g} ")) for g in ("a", "b"))
    assert "in CompositePodGroup default/job" in a and "found room for 4 of its 4 pods" in a
    assert "found room for 2 of its 4 pods" in b and "binds atomically" in b
