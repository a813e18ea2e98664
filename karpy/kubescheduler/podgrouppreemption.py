"""Workload-aware preemption (v1.37, GenericWorkload): DefaultPreemption's PodGroupPostFilter, as a
pure algorithm over the cycle's NodeInfos.

Mirrors pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go (PodGroupPostFilter),
pkg/scheduler/framework/preemption/podgrouppreemption.go (PodGroupEvaluator.Preempt,
selectVictimsOnDomain, preemptorEligibleToPreemptOthers, resolvePreemptionPolicy),
pkg/scheduler/framework/preemption/types.go (victims as units: getHighestAllAncestor,
getCrossNodesVictims, searchCrossNodesVictimPods, NewPodVictim, NewVictim) and
pkg/scheduler/framework/preemption/util.go (MoreImportantVictim, GetPodPriority,
FilterVictimsWithPDBViolation, PodTerminatingByPreemption, TraverseHierarchyUp).

The domain is the whole cluster. Victim units: a pod whose group hierarchy has an ancestor with
``disruptionMode: all`` is evicted with every scheduled pod under the highest such ancestor; any other
pod is its own unit. Ties in the victim order keep the cluster's order (nodes, then their pods): Go's
sort.Slice is an insertion sort, hence stable, below 13 elements and unspecified above.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Protocol

from .framework import CycleState, Framework
from .nodeinfo import NodeInfo
from .placement import ProposedAssignment
from .podinfo import PodInfo
from .preemption import pdb_allowed
from .types import Code, Status

__all__ = [
    "MSG_NO_VICTIMS",
    "MSG_POLICY_NEVER",
    "MSG_PREFIX",
    "MSG_TERMINATING",
    "MSG_TOPOLOGY",
    "FrameworkReprieve",
    "core_post_filter_hook",
    "GroupMeta",
    "PodGroupPostFilterResult",
    "Preemptor",
    "ReprieveHandle",
    "Victim",
    "filter_victims_with_pdb_violation",
    "highest_all_ancestor",
    "more_important_victim",
    "pod_group_post_filter",
    "pod_priority_in_groups",
    "pod_terminating_by_preemption",
    "resolve_preemption_policy",
    "victim_units",
]

MSG_PREFIX = "pod group preemption: "
MSG_TOPOLOGY = "pod group preemption: not supported with topology constraints"
MSG_POLICY_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_TERMINATING = "not eligible due to a terminating pod on the nominated node."
MSG_NO_VICTIMS = "No preemption victims found for incoming preemptor"
PREEMPT_NEVER = "Never"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
#: scheduling/v1beta1 WorkloadMaxTreeDepth (TraverseHierarchyUp's bound)
_MAX_DEPTH = 4

_POD, _POD_GROUP, _COMPOSITE = "pod", "podgroup", "compositepodgroup"
_RANK = {_COMPOSITE: 3, _POD_GROUP: 2, _POD: 1}


@dataclass(frozen=True, slots=True)
class GroupMeta:
    """What preemption reads of one PodGroup / CompositePodGroup object: its EntityKey string, its
    parent's key (parentCompositePodGroupName, None at a root), ``spec.priority`` (nil → 0,
    util.PodGroupPriority) and whether ``disruptionMode`` is ``all``."""

    key: str
    parent: Optional[str] = None
    priority: int = 0
    disruption_all: bool = False


@dataclass(frozen=True, slots=True)
class Preemptor:
    """podGroupPreemptor: the group's key, its priority and resolved preemption policy
    (:func:`resolve_preemption_policy`), its unscheduled pods in cycle order, and whether the group
    (tree) has topology constraints with TopologyAwareWorkloadScheduling on."""

    key: str
    priority: int
    pods: tuple[PodInfo, ...]
    preemption_policy: str = PREEMPT_LOWER_PRIORITY
    topology_constrained: bool = False


def resolve_preemption_policy(group_policy: Optional[str], pods: Iterable[PodInfo], policy_gate: bool) -> str:
    """resolvePreemptionPolicy: with PodGroupPreemptionPolicy on, the group's field (nil →
    PreemptLowerPriority, the pods' own ignored); off, Never if any pod says Never."""
    if policy_gate:
        return group_policy or PREEMPT_LOWER_PRIORITY
    for p in pods:
        if getattr(p.pod.spec, "preemption_policy", None) == PREEMPT_NEVER:
            return PREEMPT_NEVER
    return PREEMPT_LOWER_PRIORITY


@dataclass(slots=True)
class Victim:
    """One preemption unit (types.go victim): its pods, priority, type (``pod``, ``podgroup`` or
    ``compositepodgroup``) and the earliest start time of its pods (None when none has one)."""

    pods: list[PodInfo]
    priority: int
    kind: str
    earliest_start: Optional[float] = None

    @property
    def is_group(self) -> bool:
        return self.kind != _POD


def _start(p: PodInfo) -> Optional[float]:
    st = getattr(getattr(p.pod, "status", None), "start_time", None)
    if st is None:
        return None
    return float(st.timestamp()) if hasattr(st, "timestamp") else float(st)


def _new_victim(pods: list[PodInfo], priority: int, kind: str) -> Victim:
    """NewVictim: the earliest non-nil start time of the pods."""
    starts = [t for t in map(_start, pods) if t is not None]
    return Victim(pods, priority, kind, min(starts) if starts else None)


def more_important_victim(a: Victim, b: Victim) -> bool:
    """MoreImportantVictim: higher priority; then CompositePodGroup > PodGroup > Pod (a pod of a
    ``single``-mode group is typed PodGroup, NewPodVictim); then more pods; then the earlier start
    (metav1.Time.Before: false when either is nil)."""
    if a.priority != b.priority:
        return a.priority > b.priority
    ra, rb = _RANK[a.kind], _RANK[b.kind]
    if ra != rb:
        return ra > rb
    if len(a.pods) != len(b.pods):
        return len(a.pods) > len(b.pods)
    return a.earliest_start is not None and b.earliest_start is not None and a.earliest_start < b.earliest_start


def _importance_key() -> Any:
    return functools.cmp_to_key(lambda a, b: -1 if more_important_victim(a, b) else (1 if more_important_victim(b, a) else 0))


def _ancestors(leaf: str, groups: Mapping[str, GroupMeta], composite_gate: bool) -> list[GroupMeta]:
    """TraverseHierarchyUp from the pod's PodGroup: the groups found, leaf first; it stops at a
    missing group, a repeated key or after WorkloadMaxTreeDepth steps (only the leaf with the
    CompositePodGroup gate off)."""
    out: list[GroupMeta] = []
    seen: set[str] = set()
    key: Optional[str] = leaf
    for _ in range(_MAX_DEPTH if composite_gate else 1):
        if key is None or key in seen:
            break
        seen.add(key)
        g = groups.get(key)
        if g is None:
            break
        out.append(g)
        key = g.parent
    return out


def pod_priority_in_groups(p: PodInfo, leaf: Optional[str], groups: Mapping[str, GroupMeta],
                           composite_gate: bool = False) -> int:
    """GetPodPriority: the priority of the topmost group found above the pod, else the pod's own."""
    if leaf is None:
        return p.priority
    chain = _ancestors(leaf, groups, composite_gate)
    return chain[-1].priority if chain else p.priority


def highest_all_ancestor(leaf: Optional[str], groups: Mapping[str, GroupMeta],
                         composite_gate: bool = False) -> Optional[str]:
    """getHighestAllAncestor: the key of the highest group above the pod with disruptionMode all."""
    if leaf is None:
        return None
    found = None
    for g in _ancestors(leaf, groups, composite_gate):
        if g.disruption_all:
            found = g.key
    return found


def victim_units(nodes: Sequence[NodeInfo], group_of: Callable[[PodInfo], Optional[str]],
                 groups: Mapping[str, GroupMeta], composite_gate: bool = False) -> list[Victim]:
    """getCrossNodesVictims: every pod of the cluster once, in node then pod order, as a unit."""
    by_leaf: dict[str, list[PodInfo]] = {}
    for ni in nodes:
        for p in ni.pods:
            leaf = group_of(p)
            if leaf is not None:
                by_leaf.setdefault(leaf, []).append(p)
    seen: set[str] = set()
    out: list[Victim] = []
    for ni in nodes:
        for p in ni.pods:
            leaf = group_of(p)
            top = highest_all_ancestor(leaf, groups, composite_gate)
            prio = pod_priority_in_groups(p, leaf, groups, composite_gate)
            if top is None:
                if p.key not in seen:
                    seen.add(p.key)
                    out.append(_new_victim([p], prio, _POD_GROUP if leaf is not None else _POD))
                continue
            if top in seen:
                continue
            seen.add(top)
            members = [q for lk, qs in by_leaf.items()
                       if any(g.key == top for g in _ancestors(lk, groups, composite_gate)) for q in qs]
            kind = _COMPOSITE if top.startswith(_COMPOSITE + "/") else _POD_GROUP
            out.append(_new_victim(members or [p], prio, kind if members else _POD_GROUP))
    return out


def pod_terminating_by_preemption(p: PodInfo) -> bool:
    """PodTerminatingByPreemption: deleting, and its first DisruptionTarget condition is True with
    reason PreemptionByScheduler."""
    if getattr(p.pod.metadata, "deletion_timestamp", None) is None:
        return False
    for c in getattr(getattr(p.pod, "status", None), "conditions", None) or []:
        if c.type == "DisruptionTarget":
            return bool(c.status == "True" and c.reason == "PreemptionByScheduler")
    return False


def filter_victims_with_pdb_violation(victims: Sequence[Victim], pdbs: Sequence[Any],
                                      allowed: Sequence[int]) -> tuple[list[tuple[Victim, int]], list[Victim]]:
    """FilterVictimsWithPDBViolation: a unit is violating if any of its pods would take a matching
    PDB (same namespace, non-empty selector, pod not in disruptedPods) below zero; budgets are
    shared across units in order. Returns ((victim, violating pods), ...) and the rest."""
    left = list(allowed)
    violating: list[tuple[Victim, int]] = []
    rest: list[Victim] = []

    # stops at the first PDB taken below zero, as preemption/util.go's generic filter does (the
    # single-pod filterPodsWithPDBViolation in preemption.py spends every matching PDB's budget)
    def violates(p: PodInfo) -> bool:
        if not p.labels:
            return False
        for i, pdb in enumerate(pdbs):
            if pdb.metadata.namespace != p.namespace:
                continue
            sel = pdb.spec.selector
            if sel is None or sel.is_empty() or not sel.matches(p.labels):
                continue
            if p.name in (getattr(getattr(pdb, "status", None), "disrupted_pods", None) or {}):
                continue
            left[i] -= 1
            if left[i] < 0:
                return True
        return False
    for v in victims:
        n = sum(1 for p in v.pods if violates(p))
        if n:
            violating.append((v, n))
        else:
            rest.append(v)
    return violating, rest


class ReprieveHandle(Protocol):
    """What the reprieve runs for one proposed assignment (its pod, node and CycleState)."""

    def add_pod(self, a: ProposedAssignment, added: PodInfo, ni: NodeInfo) -> None:
        """RunPreFilterExtensionAddPod."""

    def remove_pod(self, a: ProposedAssignment, removed: PodInfo, ni: NodeInfo) -> None:
        """RunPreFilterExtensionRemovePod."""

    def filter(self, a: ProposedAssignment, ni: NodeInfo) -> Status:
        """RunFilterPluginsWithNominatedPods of the assignment's pod on ``ni``."""


@dataclass(slots=True)
class FrameworkReprieve:
    """:class:`ReprieveHandle` over a karpy Framework; ``nominated(node)`` lists the pods nominated
    to a node. The assignments' ``state`` must be their CycleState."""

    fwk: Framework
    nominated: Callable[[str], list[PodInfo]] = field(default=lambda node: [])

    def add_pod(self, a: ProposedAssignment, added: PodInfo, ni: NodeInfo) -> None:
        self.fwk.run_add_pod(a.state, a.pod, added, ni)  # type: ignore[arg-type]

    def remove_pod(self, a: ProposedAssignment, removed: PodInfo, ni: NodeInfo) -> None:
        self.fwk.run_remove_pod(a.state, a.pod, removed, ni)  # type: ignore[arg-type]

    def filter(self, a: ProposedAssignment, ni: NodeInfo) -> Status:
        return self.fwk.run_filter_with_nominated_pods(a.state, a.pod, ni, self.nominated(ni.name))  # type: ignore[arg-type]


@dataclass(slots=True)
class PodGroupPostFilterResult:
    """The PostFilter's status (messages already prefixed ``pod group preemption: ``), the
    NominatingInfos (ModeOverride) as pod key → node, the victims' pods in importance order (to
    evict with DisruptionTarget / PreemptionByScheduler) and their units."""

    status: Status
    nominations: dict[str, str] = field(default_factory=dict)
    victims: list[PodInfo] = field(default_factory=list)
    units: list[Victim] = field(default_factory=list)
    num_pdb_violations: int = 0


class _Mutations:
    """MutableSnapshotSharedLister's StartMutations/EndMutations: every AddPod/RemovePod on the
    NodeInfos is journaled and undone at the end."""

    def __init__(self, nodes: Mapping[str, NodeInfo]) -> None:
        self.nodes = nodes
        self.journal: list[tuple[bool, NodeInfo, PodInfo]] = []
        self.original: dict[int, tuple[NodeInfo, list[PodInfo]]] = {}

    def _touch(self, ni: NodeInfo) -> None:
        if id(ni) not in self.original:
            self.original[id(ni)] = (ni, list(ni.pods))

    def add(self, p: PodInfo, node: str) -> NodeInfo:
        ni = self.nodes[node]
        self._touch(ni)
        ni.add_pod(p)
        self.journal.append((True, ni, p))
        return ni

    def remove(self, p: PodInfo, node: str) -> NodeInfo:
        ni = self.nodes[node]
        self._touch(ni)
        if ni.remove_pod(p):
            self.journal.append((False, ni, p))
        return ni

    def end(self) -> None:
        for added, ni, p in reversed(self.journal):
            if added:
                ni.remove_pod(p)
            else:
                ni.add_pod(p)
        self.journal.clear()
        for ni, pods in self.original.values():  # the same pods again: put them back in their order
            if [p.uid for p in ni.pods] != [p.uid for p in pods]:
                ni.pods[:] = pods
                ni.pod_uids[:] = [p.uid for p in pods]
                ni.pods_with_affinity[:] = [p for p in pods if p.has_affinity()]
                ni.pods_with_required_anti_affinity[:] = [p for p in pods if p.required_anti_affinity_terms]
                ni.used_ports[:] = [hp for p in pods for hp in p.host_ports]
        self.original.clear()


SchedulingFunc = Callable[[], tuple[list[ProposedAssignment], Status]]


def pod_group_post_filter(preemptor: Preemptor, nodes: Sequence[NodeInfo], schedule: SchedulingFunc,
                          handle: ReprieveHandle, group_of: Callable[[PodInfo], Optional[str]],
                          groups: Mapping[str, GroupMeta], pdbs: Sequence[Any] = (),
                          composite_gate: bool = False,
                          terminating_by_preemption: Callable[[PodInfo], bool] = pod_terminating_by_preemption,
                          ) -> PodGroupPostFilterResult:
    """DefaultPreemption.PodGroupPostFilter → PodGroupEvaluator.Preempt → selectVictimsOnDomain.

    ``nodes`` are the cycle's NodeInfos (mutated during the call and restored before it returns);
    ``schedule()`` is the pgSchedulingFunc: the group's whole algorithm on the current NodeInfos,
    returning its proposed assignments in cycle order (with their CycleStates) after reverting what
    it assumed. Steps: topology → Unschedulable; eligibility (policy Never, a member's nominated node
    holding a lower-priority pod terminating by preemption); units of lower priority (none → UAU);
    remove them all and schedule once (a failure is returned as is); reprieve units -- PDB-violating
    first, each list in importance order -- while every assigned preemptor pod still passes Filter
    on its node; the rest are victims, every assigned pod is nominated to its node."""
    if preemptor.topology_constrained:
        return PodGroupPostFilterResult(Status(Code.UNSCHEDULABLE, [MSG_TOPOLOGY]))
    by_name = {ni.name: ni for ni in nodes}
    mut = _Mutations(by_name)
    try:
        res = _select_victims(preemptor, nodes, by_name, mut, schedule, handle, group_of, groups, pdbs,
                              composite_gate, terminating_by_preemption)
    finally:
        mut.end()
    msg = res.status.message()
    if msg:
        res.status = Status(res.status.code, [MSG_PREFIX + msg], res.status.plugin)
    return res


def _eligible(preemptor: Preemptor, by_name: Mapping[str, NodeInfo], group_of: Callable[[PodInfo], Optional[str]],
              groups: Mapping[str, GroupMeta], composite_gate: bool,
              terminating_by_preemption: Callable[[PodInfo], bool]) -> str:
    """preemptorEligibleToPreemptOthers: "" when eligible, else the reason."""
    if preemptor.preemption_policy == PREEMPT_NEVER:
        return MSG_POLICY_NEVER
    nominated = {p.nominated_node_name for p in preemptor.pods if p.nominated_node_name}
    for name in sorted(nominated):
        ni = by_name.get(name)
        if ni is None:
            continue
        for p in ni.pods:
            if (pod_priority_in_groups(p, group_of(p), groups, composite_gate) < preemptor.priority
                    and terminating_by_preemption(p)):
                return MSG_TERMINATING
    return ""


def _select_victims(preemptor: Preemptor, nodes: Sequence[NodeInfo], by_name: Mapping[str, NodeInfo],
                    mut: _Mutations, schedule: SchedulingFunc, handle: ReprieveHandle,
                    group_of: Callable[[PodInfo], Optional[str]], groups: Mapping[str, GroupMeta],
                    pdbs: Sequence[Any], composite_gate: bool,
                    terminating_by_preemption: Callable[[PodInfo], bool]) -> PodGroupPostFilterResult:
    why = _eligible(preemptor, by_name, group_of, groups, composite_gate, terminating_by_preemption)
    if why:
        return PodGroupPostFilterResult(Status(Code.UNSCHEDULABLE, [why]))
    allowed = [pdb_allowed(pdb, [p for ni in nodes for p in ni.pods]) for pdb in pdbs] if pdbs else []
    where = {p.uid: ni.name for ni in nodes for p in ni.pods}  # an assumed pod may lack spec.nodeName
    potential = [v for v in victim_units(nodes, group_of, groups, composite_gate) if v.priority < preemptor.priority]
    if not potential:
        return PodGroupPostFilterResult(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [MSG_NO_VICTIMS]))
    for v in potential:
        for p in v.pods:
            mut.remove(p, where[p.uid])
    assignments, st = schedule()
    if not st.is_success():
        return PodGroupPostFilterResult(st)
    potential.sort(key=_importance_key())
    violating, rest = filter_victims_with_pdb_violation(potential, pdbs, allowed)
    valid = [a for a in assignments if a.node_name]

    def reprieve(v: Victim) -> bool:
        for p in v.pods:
            ni = mut.add(p, where[p.uid])
            for a in valid:
                handle.add_pod(a, p, ni)
        placed: list[ProposedAssignment] = []
        fits = True
        for a in valid:
            if not handle.filter(a, by_name[a.node_name]).is_success():
                fits = False
                break
            mut.add(a.pod, a.node_name)  # later preemptor pods see it (their state already does)
            placed.append(a)
        for a in reversed(placed):
            mut.remove(a.pod, a.node_name)
        if not fits:
            for p in v.pods:
                ni = mut.remove(p, where[p.uid])
                for a in valid:
                    handle.remove_pod(a, p, ni)
        return fits

    to_preempt: list[Victim] = []
    n_violating = 0
    for v, _ in violating:
        if not reprieve(v):
            to_preempt.append(v)
            n_violating += 1
    for v in rest:
        if not reprieve(v):
            to_preempt.append(v)
    to_preempt.sort(key=_importance_key())
    return PodGroupPostFilterResult(Status(), {a.pod.key: a.node_name for a in valid},
                                    [p for v in to_preempt for p in v.pods], to_preempt, n_violating)


# ---- adapter for the PodGroup cycle (karpy.kubescheduler.podgroupcycle.run_pod_group_cycle) -------
def core_post_filter_hook(preemptor: Preemptor, nodes: Callable[[], Sequence[NodeInfo]], fwk: Framework,
                          nominated: Callable[[str], list[PodInfo]], pod_info: Callable[[str], PodInfo],
                          group_of: Callable[[PodInfo], Optional[str]], groups: Mapping[str, GroupMeta],
                          make_result: Callable[[Status, dict[str, str]], Any], pdbs: Sequence[Any] = (),
                          composite_gate: bool = False,
                          on_victims: Callable[[list[PodInfo]], None] = lambda victims: None) -> Callable[..., Any]:
    """A ``post_filter_hook`` for one cycle of the PodGroup cycle: ``hook(result, algorithm)``.

    ``nodes()`` are the scheduler's NodeInfos the ``algorithm`` (pgSchedulingFunc, podgroupcycle's
    re-run) schedules on, so removing victims from them is what it sees; each assigned pod's
    CycleState is rebuilt by PreFilter in cycle order with the earlier assigned pods added (as the
    algorithm saw them); ``on_victims`` evicts (Executor.actuatePodGroupPreemption: DisruptionTarget
    / PreemptionByScheduler); ``make_result(status, nominations)`` is podgroupcycle.PostFilterResult."""
    def hook(result: Any, algorithm: Callable[[], Any]) -> Any:
        def schedule() -> tuple[list[ProposedAssignment], Status]:
            r = algorithm()
            if not r.status.is_success():
                return [], r.status
            by_name = {ni.name: ni for ni in nodes()}
            out: list[ProposedAssignment] = []
            placed: list[tuple[NodeInfo, PodInfo]] = []
            try:
                for x in r.pods:
                    if not getattr(x, "node", None):
                        continue
                    pi = pod_info(x.key)
                    state = CycleState()
                    fwk.run_pre_filter(state, pi, list(by_name.values()))
                    out.append(ProposedAssignment(pi, x.node, state))
                    by_name[x.node].add_pod(pi)
                    placed.append((by_name[x.node], pi))
            finally:
                for ni, pi in reversed(placed):
                    ni.remove_pod(pi)
            return out, Status()
        res = pod_group_post_filter(preemptor, nodes(), schedule, FrameworkReprieve(fwk, nominated), group_of, groups,
                                    pdbs, composite_gate)
        if res.status.is_success():
            on_victims(res.victims)
        return make_result(res.status, res.nominations)
    return hook
