"""CompositePodGroup trees: the v1.37 gaps closed after the first tree cycle (issue #34; reference
kube-scheduler-1.37.md §8). Each test names the upstream behaviour it follows."""

from __future__ import annotations

from typing import Any, Optional

from karpy.api.podgroup import CompositePodGroup, SchedulingPodGroup
from karpy.kubescheduler.podgroupcycle import validate_pod_group_hierarchy
from karpy.kubescheduler.scheduler import ERROR, KubeScheduler

from ._helpers import node
from .test_compositepodgroup_cycle import _sched
from .test_podgroup_v137_scheduler import _member


def _leaf(name: str, min_count: int, priority: Optional[int] = None) -> SchedulingPodGroup:
    spec: dict[str, Any] = {"parentCompositePodGroupName": "job", "schedulingPolicy": {"gang": {"minCount": min_count}}}
    if priority is not None:
        spec["priority"] = priority
    return SchedulingPodGroup.model_validate({"metadata": {"name": name, "namespace": "default", "generation": 1},
                                              "spec": spec})


def _root(priority: Optional[int] = None) -> CompositePodGroup:
    spec: dict[str, Any] = {"workloadRef": {"workloadName": "job", "templateName": "job"},
                            "schedulingPolicy": {"gang": {"minGroupCount": 2}}}
    if priority is not None:
        spec["priority"] = priority
    return CompositePodGroup.model_validate({"metadata": {"name": "job", "namespace": "default", "generation": 1},
                                             "spec": spec})


def _tree(root_prio: Optional[int], leaf_b_prio: Optional[int], pod_prio: int) -> KubeScheduler:
    s = _sched()
    s.add_node(node("n1", {"cpu": "8", "pods": "110"}))
    s.add_pod_group(_root(root_prio))
    s.add_pod_group(_leaf("a", 2, root_prio))
    s.add_pod_group(_leaf("b", 2, leaf_b_prio))
    for g in ("a", "b"):
        for i in range(2):
            s.add_pod(_member(f"{g}{i}", group=g, priority=pod_prio))
    return s


# ---- 1. the tree validated against the root (validatePodGroup / validatePodGroupHierarchy) --------
def test_tree_pod_priority_mismatch_is_scheduler_error() -> None:
    """schedule_one_podgroup.go validatePodGroup over a CompositePodGroup root: a pod whose priority
    differs from the root's fails every pod of the tree with SchedulerError and upstream's text;
    every leaf PodGroup's condition is False/SchedulerError (updatePodGroupConditionWithError)."""
    s = _tree(root_prio=10, leaf_b_prio=10, pod_prio=0)
    r = s.schedule_one()
    assert r is not None and len(r.members) == 4 and all(m.outcome == ERROR for m in r.members)
    want = ("all pods in a pod group hierarchy should have the same priority as the root pod group's priority, "
            "got 0 (\"a0\") and 10 (\"compositepodgroup/default/job\")")
    assert r.members[0].condition is not None and r.members[0].condition["message"] == want
    assert r.members[0].condition["reason"] == "SchedulerError"
    assert not s.assigned
    for g in ("default/a", "default/b"):
        cond = s.pod_group_conditions[g][0]
        assert (cond["status"], cond["reason"], cond["message"]) == ("False", "SchedulerError", want)


def test_tree_group_priority_mismatch_is_scheduler_error() -> None:
    """validatePodGroupHierarchy checks each group (pre-order) before its pods: a child PodGroup whose
    priority differs from the root's is named by its entity key."""
    s = _tree(root_prio=10, leaf_b_prio=None, pod_prio=10)
    r = s.schedule_one()
    assert r is not None and all(m.outcome == ERROR for m in r.members)
    want = ("all pod groups in a hierarchy should have the same priority as the root pod group's priority, "
            "got 0 (\"podgroup/default/b\") and 10 (\"compositepodgroup/default/job\")")
    assert r.members[0].condition is not None and r.members[0].condition["message"] == want


def test_tree_matching_priorities_bind() -> None:
    """Every group and pod at the root's priority: the tree passes validation and binds whole."""
    s = _tree(root_prio=10, leaf_b_prio=10, pod_prio=10)
    r = s.schedule_one()
    assert r is not None and sorted(s.assigned) == ["default/a0", "default/a1", "default/b0", "default/b1"]


def test_validate_hierarchy_preemption_policy_gate_off_uses_first_pod() -> None:
    """validatePodGroup, PodGroupPreemptionPolicy off: the first queued pod's policy is the reference."""
    nodes = [("compositepodgroup/default/job", 0, "PreemptLowerPriority", []),
             ("podgroup/default/a", 0, "PreemptLowerPriority",
              [("a0", "default-scheduler", 0, "Never"), ("a1", "default-scheduler", 0, "PreemptLowerPriority")])]
    err = validate_pod_group_hierarchy(nodes, ("a0", "default-scheduler", "Never"), False)
    assert err == ("all pods in a pod group hierarchy should have the same preemption policy, "
                   "got PreemptLowerPriority (\"a1\") and Never (\"a0\")")


# ---- 2. tree-wide readiness at PreEnqueue (hierarchy_tracker.go isGroupReady at the root) ---------
def _tree_min(min_groups: int, b_pods: int) -> KubeScheduler:
    s = _sched()
    s.add_node(node("n1", {"cpu": "8", "pods": "110"}))
    root = _root()
    assert root.spec.scheduling_policy.gang is not None
    root.spec.scheduling_policy.gang.min_group_count = min_groups
    s.add_pod_group(root)
    s.add_pod_group(_leaf("a", 2))
    s.add_pod_group(_leaf("b", 2))
    for i in range(2):
        s.add_pod(_member(f"a{i}", group="a"))
    for i in range(b_pods):
        s.add_pod(_member(f"b{i}", group="b"))
    return s


def test_tree_not_ready_holds_every_leaf() -> None:
    """TestHierarchyTracker_FindRootGroupReadiness: leaf a ready (2 of minCount 2) but b not (1 of
    2) and the root wants minGroupCount 2 -> the root is not ready: a's pods are held at
    PreEnqueue too (no cycle runs), not queued on a's own quorum."""
    s = _tree_min(2, 1)
    assert s.schedule_one() is None
    assert not s.assigned
    s.add_pod(_member("b1", group="b"))  # b ready -> root ready -> the whole tree is queued and binds
    r = s.schedule_one()
    assert r is not None and sorted(s.assigned) == ["default/a0", "default/a1", "default/b0", "default/b1"]


def test_tree_ready_releases_a_leaf_below_its_own_quorum() -> None:
    """hierarchy_tracker.go: the root (minGroupCount 1) is ready once leaf a is; b's single pod
    (below b's minCount 2) passes PreEnqueue with the tree and fails in the cycle, a binds."""
    s = _tree_min(1, 1)
    r = s.schedule_one()
    assert r is not None
    assert {m.pod_key for m in r.members} == {"default/a0", "default/a1", "default/b0"}
    assert sorted(s.assigned) == ["default/a0", "default/a1"]


# ---- 3. child visiting order (PodGroupInfo.SortChildren: creationTimestamp, name, type) -----------
def _stamped_leaf(name: str, created: str) -> SchedulingPodGroup:
    return SchedulingPodGroup.model_validate({
        "metadata": {"name": name, "namespace": "default", "generation": 1, "creationTimestamp": created},
        "spec": {"parentCompositePodGroupName": "job", "schedulingPolicy": {"gang": {"minCount": 2}}}})


def _race(a_created: str, b_created: str) -> list[str]:
    """Room for one leaf only and a root that needs one: the first child visited takes the node."""
    s = _sched()
    s.add_node(node("n1", {"cpu": "2", "pods": "110"}))
    root = _root()
    assert root.spec.scheduling_policy.gang is not None
    root.spec.scheduling_policy.gang.min_group_count = 1
    s.add_pod_group(root)
    s.add_pod_group(_stamped_leaf("a", a_created))
    s.add_pod_group(_stamped_leaf("b", b_created))
    for g in ("a", "b"):
        for i in range(2):
            s.add_pod(_member(f"{g}{i}", group=g))
    s.schedule_one()
    return sorted(s.assigned)


def test_children_visited_by_creation_timestamp_first() -> None:
    """workload_forest.go buildPodGroupInfo -> PodGroupInfo.SortChildren (kubernetes PR #142271:
    "by creation timestamp, name, and entity type"): the older child b is visited before a."""
    assert _race("2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z") == ["default/b0", "default/b1"]


def test_children_with_equal_timestamps_visited_by_name() -> None:
    """SortChildren's tie-break: equal creationTimestamps -> by name (a before b)."""
    assert _race("2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z") == ["default/a0", "default/a1"]


# ---- 4. group preemption for a tree (podGroupCycle: PodGroupPostFilter on the root) ---------------
def test_tree_preempts_lower_priority_pods_as_the_root() -> None:
    """schedule_one_podgroup.go podGroupCycle + default_preemption.go PodGroupPostFilter with a
    CompositePodGroup root: the tree (priority 100) fits only without the low-priority pods; the
    PostFilter runs the whole tree algorithm as pgSchedulingFunc, evicts the low pods, and every
    pod of every leaf is nominated (applyPodGroupPostFilterResult over the tree); none binds."""
    from karpy.api.pod import PodSchedulingGroup
    from karpy.kubescheduler.scheduler import BOUND, NOMINATED

    from ._helpers import pod
    s = _sched()
    s.add_node(node("n1", {"cpu": "4", "pods": "110"}))
    for i in range(2):
        low = pod(f"low{i}", [{"cpu": "2"}])
        low.spec.node_name = "n1"
        s.add_pod(low)
    s.add_pod_group(_root(100))
    s.add_pod_group(_leaf("a", 1, 100))
    s.add_pod_group(_leaf("b", 1, 100))
    for g in ("a", "b"):
        p = pod(f"{g}0", [{"cpu": "2"}])
        p.spec.scheduling_group = PodSchedulingGroup(pod_group_name=g)
        p.spec.priority = 100
        s.add_pod(p)
    r = s.schedule_one()
    assert r is not None
    assert sorted((m.pod_key, m.outcome, m.nominated_node_name) for m in r.members) == [
        ("default/a0", NOMINATED, "n1"), ("default/b0", NOMINATED, "n1")]
    assert sorted(v.key for m in r.members for v in m.victims) == ["default/low0", "default/low1"]
    for m in r.members:
        for v in m.victims:
            s.delete_pod(v.key)
    s.queue.activate(["default/a0", "default/b0"])
    r2 = s.schedule_one()
    assert r2 is not None and sorted((m.pod_key, m.outcome) for m in r2.members) == [
        ("default/a0", BOUND), ("default/b0", BOUND)]


def test_tree_with_topology_is_not_preempted_for() -> None:
    """PodGroupPostFilter: a preemptor with topology constraints (any group of the tree) ->
    Unschedulable with upstream's message, no victims."""
    from karpy.api.pod import PodSchedulingGroup
    from karpy.kubescheduler.scheduler import UNSCHEDULABLE

    from ._helpers import pod
    s = _sched()
    s.add_node(node("n1", {"cpu": "4", "pods": "110"}, labels={"rack": "r1"}))
    low = pod("low0", [{"cpu": "4"}])
    low.spec.node_name = "n1"
    s.add_pod(low)
    root = _root(100)
    root.spec.scheduling_constraints = type(root.spec).model_fields["scheduling_constraints"].annotation.__args__[0] \
        .model_validate({"topology": [{"key": "rack"}]})
    s.add_pod_group(root)
    s.add_pod_group(_leaf("a", 1, 100))
    s.add_pod_group(_leaf("b", 1, 100))
    for g in ("a", "b"):
        p = pod(f"{g}0", [{"cpu": "2"}])
        p.spec.scheduling_group = PodSchedulingGroup(pod_group_name=g)
        p.spec.priority = 100
        s.add_pod(p)
    r = s.schedule_one()
    assert r is not None and all(m.outcome == UNSCHEDULABLE for m in r.members)
    assert not any(m.victims for m in r.members)
