"""The PodGroup cycle's hook points wired to the placement and group-preemption modules
(karpy.kubescheduler.placement / podgrouppreemption, built alongside): skipped until they exist."""

from __future__ import annotations

import random
from typing import Any

import pytest

from karpy.api.podgroup import SchedulingPodGroup
from karpy.kubescheduler.scheduler import BOUND, NOMINATED, KubeScheduler, SchedulerConfig

from ._helpers import node, pod
from .conftest import FakeClock


def _group(min_count: int, priority: int = 0, topology: str | None = None) -> SchedulingPodGroup:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}}, "priority": priority}
    if topology:
        spec["schedulingConstraints"] = {"topology": [{"key": topology}]}
    return SchedulingPodGroup.model_validate({"metadata": {"name": "pg", "namespace": "default"}, "spec": spec})


def _member(name: str, cpu: str, priority: int = 0) -> Any:
    from karpy.api.pod import PodSchedulingGroup
    p = pod(name, [{"cpu": cpu}])
    p.spec.scheduling_group = PodSchedulingGroup(pod_group_name="pg")
    p.spec.priority = priority
    return p


def test_pod_group_post_filter_nominates_and_evicts() -> None:
    """TestPodGroupCycle_PodGroupPostFilter (GenericWorkload + DefaultPreemption): a high-priority
    gang that fits only without the low-priority pods gets NominatedNodeName on its members and
    the victims evicted; nothing binds this cycle."""
    pytest.importorskip("karpy.kubescheduler.podgrouppreemption")
    s = KubeScheduler(FakeClock(), random.Random(1), SchedulerConfig(feature_gates={"GenericWorkload": True}))
    s.add_node(node("n1", {"cpu": "4", "pods": "110"}))
    for i in range(2):
        low = pod(f"low{i}", [{"cpu": "2"}])
        low.spec.node_name = "n1"
        s.add_pod(low)
    s.add_pod_group(_group(2, priority=100))
    for i in range(2):
        s.add_pod(_member(f"p{i}", "2", priority=100))
    r = s.schedule_one()
    assert r is not None
    assert [m.outcome for m in r.members] == [NOMINATED, NOMINATED]
    assert [m.nominated_node_name for m in r.members] == ["n1", "n1"]
    assert sorted(v.key for m in r.members for v in m.victims) == ["default/low0", "default/low1"]
    assert not any(m.outcome == BOUND for m in r.members)
    # the victims go; the next cycle places the gang where it was nominated (its own nominations
    # are not counted twice once a member is assumed)
    for m in r.members:
        for v in m.victims:
            s.delete_pod(v.key)
    s.queue.activate(["default/p0", "default/p1"])
    r2 = s.schedule_one()
    assert r2 is not None and [(m.outcome, m.node_name) for m in r2.members] == [(BOUND, "n1"), (BOUND, "n1")]


def test_topology_placement_keeps_the_gang_in_one_domain() -> None:
    """TestPodGroupSchedulingPlacementAlgorithm (TAS on): the gang lands in one rack even when the
    default algorithm alone would split it."""
    pytest.importorskip("karpy.kubescheduler.placement")
    s = KubeScheduler(FakeClock(), random.Random(1), SchedulerConfig(feature_gates={
        "GenericWorkload": True, "TopologyAwareWorkloadScheduling": True}))
    s.add_node(node("a1", {"cpu": "2", "pods": "110"}, labels={"rack": "a"}))
    s.add_node(node("b1", {"cpu": "2", "pods": "110"}, labels={"rack": "b"}))
    s.add_node(node("b2", {"cpu": "2", "pods": "110"}, labels={"rack": "b"}))
    s.add_pod_group(_group(2, topology="rack"))
    for i in range(2):
        s.add_pod(_member(f"p{i}", "2"))
    r = s.schedule_one()
    assert r is not None and r.outcome == BOUND
    assert sorted(m.node_name or "" for m in r.members) == ["b1", "b2"]
