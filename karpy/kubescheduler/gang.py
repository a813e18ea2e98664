"""Gang (PodGroup) scheduling: PreEnqueue quorum gate and the all-or-nothing group cycle.

Mirrors pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go (PreEnqueue messages) and
pkg/scheduler/schedule_one_podgroup.go (one snapshot, members in priority / initial-attempt order,
assume so later members see earlier ones, commit iff placed + already scheduled >= minCount).
Groups: coscheduling PodGroup (minMember) or Workload podGroups with a gang policy (minCount).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from karpy.api.podgroup import pod_group_of

from .framework import Plugin
from .podinfo import PodInfo
from .types import SUCCESS_STATUS, Status, unresolvable

if TYPE_CHECKING:
    from karpy.api.pod import Pod

MSG_GROUP_MISSING = "waiting for pods's pod group {!r} to appear in scheduling queue"
MSG_WAIT_MIN_COUNT = "waiting for minCount pods from a gang to appear in scheduling queue"
MSG_WAIT_SCHEDULED = "waiting for minCount pods from a gang to be scheduled"
MSG_OTHERS_UNSCHEDULABLE = "other pods from a pod group are unschedulable"


def group_key(pod: Pod) -> Optional[str]:
    ref = pod_group_of(pod)
    return None if ref is None else f"{ref.kind}/{ref.key}"


def min_count_of(group_obj: Any, pod: Pod) -> Optional[int]:
    """minMember (PodGroup) or the gang policy's minCount (Workload); None = basic policy (no gang)."""
    spec = getattr(group_obj, "spec", None)
    if spec is not None and hasattr(spec, "min_member"):
        return int(spec.min_member)
    ref = pod_group_of(pod)
    if ref is not None and hasattr(group_obj, "group") and ref.pod_group:
        g = group_obj.group(ref.pod_group)
        if g is not None and g.policy.gang is not None:
            return int(g.policy.gang.min_count)
    return None


class GangScheduling(Plugin):
    """PreEnqueue: group object missing → gated; fewer than minCount member pods exist → gated.

    ``v137``: the 1.37 check (preEnqueueHierarchiesDisabled) for pods with ``spec.schedulingGroup``
    while GenericWorkload is on: (PodGroup-or-None, AllPodsCount) of the pod's group, or None when
    the pod is not a 1.37 group member."""

    name = "GangScheduling"
    has_pre_enqueue = True

    def __init__(self, lookup: Callable[[Any], Optional[Any]], count_members: Callable[[str], int],
                 v137: Optional[Callable[[Any], Optional[tuple[Any, int]]]] = None,
                 v137_tree: Optional[Callable[[Any], Optional[bool]]] = None) -> None:
        self.lookup = lookup
        self.count_members = count_members
        self.v137 = v137
        #: hierarchy_tracker.go FindRootGroupReadiness: None when the pod's group is not in an
        #: observed CompositePodGroup tree, else whether the tree's root is ready
        self.v137_tree = v137_tree

    def pre_enqueue(self, pod: PodInfo) -> Status:
        if self.v137 is not None:
            found = self.v137(pod.pod)
            if found is not None:
                ready = self.v137_tree(pod.pod) if self.v137_tree is not None and found[0] is not None else None
                if ready is not None:  # a tree: the root's readiness, not the leaf's own quorum
                    return Status() if ready else unresolvable(MSG_WAIT_MIN_COUNT)
                return pre_enqueue_v137(pod.pod, found[0], found[1])
        ref = pod_group_of(pod.pod)
        if ref is None:
            return SUCCESS_STATUS
        obj = self.lookup(pod.pod)
        if obj is None:
            return unresolvable(MSG_GROUP_MISSING.replace("{!r}", '"{}"').format(ref.name))
        mc = min_count_of(obj, pod.pod)
        if mc is None:
            return Status()
        key = group_key(pod.pod)
        assert key is not None
        if self.count_members(key) < mc:
            return unresolvable(MSG_WAIT_MIN_COUNT)
        return Status()


def pre_enqueue_v137(pod: Pod, group: Any, all_pods_count: int) -> Status:
    """gangscheduling.go preEnqueueHierarchiesDisabled: no schedulingGroup → pass; PodGroup not
    found → UAU; basic policy → pass; gang with AllPodsCount < minCount → UAU."""
    sg = pod.spec.scheduling_group
    if sg is None or not sg.pod_group_name:
        return Status()
    if group is None:
        return unresolvable(MSG_GROUP_MISSING.replace("{!r}", '"{}"').format(sg.pod_group_name))
    mc = group.min_count
    if mc is None:
        return Status()
    if all_pods_count < mc:
        return unresolvable(MSG_WAIT_MIN_COUNT)
    return Status()
