"""DefaultPreemption (PostFilter).

Mirrors pkg/scheduler/framework/preemption/preemption.go (Preempt, findCandidates, DryRunPreemption,
SelectCandidate, pickOneNodeForPreemption, filterPodsWithPDBViolation) and
pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go (PodEligibleToPreemptOthers,
SelectVictimsOnNode, calculateNumCandidates, GetOffsetAndNumCandidates).
Step 6 of the node choice (Go map order) is replaced by "first candidate in dry-run order".
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from .framework import CycleState, Framework
from .nodeinfo import NodeInfo, PerNode, Snapshot
from .podinfo import PodInfo
from .schedule_one import FitError
from .types import Diagnosis
from .types import MIN_CANDIDATE_NODES_ABSOLUTE, MIN_CANDIDATE_NODES_PERCENTAGE, Code, Status, unresolvable

MSG_NO_VICTIMS = "No preemption victims found for incoming pod"
MSG_NOT_HELPFUL = "Preemption is not helpful for scheduling"
MSG_POLICY_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_TERMINATING = "not eligible due to a terminating pod on the nominated node."
INT32_MAX = 2**31 - 1


@dataclass(slots=True)
class Candidate:
    node: str
    victims: list[PodInfo]
    num_pdb_violations: int


@dataclass(slots=True)
class PreemptionOutcome:
    """PostFilterResult + status. ``nominated_node``: None = keep (no change), "" = clear, else the node."""

    status: Status
    nominated_node: Optional[str] = None
    victims: list[PodInfo] = field(default_factory=list)
    message: str = ""  # PostFilterMsg ("preemption: ..." or "")


def more_important_pod(a: PodInfo, b: PodInfo, now: float) -> bool:
    """corev1helpers MoreImportantPod: higher priority, then earlier start time."""
    if a.priority != b.priority:
        return a.priority > b.priority
    return start_time(a, now) < start_time(b, now)


def start_time(p: PodInfo, now: float) -> float:
    st = getattr(getattr(p.pod, "status", None), "start_time", None)
    if st is None:
        return now
    if hasattr(st, "timestamp"):
        return float(st.timestamp())
    return float(st)


def pdb_allowed(pdb: Any, pods: list[PodInfo]) -> int:
    """status.disruptionsAllowed, from status when present, else computed like the disruption
    controller from the matching non-terminating assigned pods (all assumed healthy)."""
    status = getattr(pdb, "status", None)
    if status is not None and getattr(status, "disruptions_allowed", None) is not None:
        return int(status.disruptions_allowed)
    matched = [p for p in pods if pdb.selects(p.namespace, p.labels) and not p.terminating]
    n = len(matched)

    def val(v: Any, round_up: bool) -> int:
        if isinstance(v, str) and v.endswith("%"):
            x = int(v[:-1]) * n / 100
            return math.ceil(x) if round_up else math.floor(x)
        return int(v)
    spec = pdb.spec
    if spec.min_available is not None:
        return max(0, n - val(spec.min_available, True))
    if spec.max_unavailable is not None:
        return max(0, val(spec.max_unavailable, True))
    return 0


def filter_pods_with_pdb_violation(pods: list[PodInfo], pdbs: list[Any], allowed: dict[int, int]) -> tuple[list[PodInfo], list[PodInfo]]:
    """filterPodsWithPDBViolation: (violating, non-violating), order preserved."""
    allowed = dict(allowed)
    violating: list[PodInfo] = []
    non: list[PodInfo] = []
    for p in pods:
        bad = False
        if p.labels:
            for i, pdb in enumerate(pdbs):
                if pdb.metadata.namespace != p.namespace:
                    continue
                sel = pdb.spec.selector
                if sel is None or sel.is_empty() or not sel.matches(p.labels):
                    continue
                disrupted = getattr(getattr(pdb, "status", None), "disrupted_pods", None) or {}
                if p.name in disrupted:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    bad = True
        (violating if bad else non).append(p)
    return violating, non


class DefaultPreemption:
    """The DefaultPreemption PostFilter plugin."""

    name = "DefaultPreemption"

    def __init__(self, fwk: Framework, rng: random.Random, min_pct: int = MIN_CANDIDATE_NODES_PERCENTAGE,
                 min_abs: int = MIN_CANDIDATE_NODES_ABSOLUTE) -> None:
        self.fwk = fwk
        self.rng = rng
        self.min_pct = min_pct
        self.min_abs = min_abs
        self._lowest: PerNode[float] = PerNode()  # each snapshot node's lowest pod priority
        self._lowest_min: Optional[float] = None  # the smallest of _lowest.values (_lowest_priority)
        # the last potential nodes (see _potential_nodes): (Diagnosis, node tree, absent code,
        # the nodes, their names)
        self._potential: Optional[tuple[Diagnosis, list[NodeInfo], Optional[Code], list[NodeInfo], list[str]]] = None

    def eligible(self, pod: PodInfo, nodes: dict[str, NodeInfo], diag: Diagnosis,
                 terminating_by_preemption: Callable[[PodInfo], bool]) -> tuple[bool, str]:
        """PodEligibleToPreemptOthers."""
        if pod.preemption_policy == "Never":
            return False, MSG_POLICY_NEVER
        nnn = pod.nominated_node_name
        if nnn:
            st = diag.node_to_status.get(nnn)
            if st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            ni = nodes.get(nnn)
            if ni is not None:
                for p in ni.pods:
                    if p.priority < pod.priority and terminating_by_preemption(p):
                        return False, MSG_TERMINATING
        return True, ""

    def num_candidates(self, n: int) -> int:
        c = n * self.min_pct // 100
        if c < self.min_abs:
            c = self.min_abs
        return min(c, n)

    def select_victims_on_node(self, state: CycleState, pod: PodInfo, ni: NodeInfo, pdbs: list[Any],
                               allowed: dict[int, int], nominated: Callable[[str], list[PodInfo]],
                               now: float) -> tuple[list[PodInfo], int, Status]:
        """SelectVictimsOnNode on copies of the node and state."""
        potential = [p for p in ni.pods if p.priority < pod.priority]
        if not potential:
            return [], 0, unresolvable(MSG_NO_VICTIMS)
        for p in potential:
            ni.remove_pod(p)
            self.fwk.run_remove_pod(state, pod, p, ni)
        st = self.fwk.run_filter_with_nominated_pods(state, pod, ni, nominated(ni.name))
        if not st.is_success():
            return [], 0, st
        import functools
        potential.sort(key=functools.cmp_to_key(
            lambda a, b: -1 if more_important_pod(a, b, now) else (1 if more_important_pod(b, a, now) else 0)))
        violating, non = filter_pods_with_pdb_violation(potential, pdbs, allowed)
        victims: list[PodInfo] = []
        num_viol = 0

        def reprieve(p: PodInfo) -> bool:
            ni.add_pod(p)
            self.fwk.run_add_pod(state, pod, p, ni)
            if self.fwk.run_filter_with_nominated_pods(state, pod, ni, nominated(ni.name)).is_success():
                return True
            ni.remove_pod(p)
            self.fwk.run_remove_pod(state, pod, p, ni)
            victims.append(p)
            return False
        for p in violating:
            if not reprieve(p):
                num_viol += 1
        for p in non:
            reprieve(p)
        victims.sort(key=functools.cmp_to_key(
            lambda a, b: -1 if more_important_pod(a, b, now) else (1 if more_important_pod(b, a, now) else 0)))
        return victims, num_viol, Status()

    def preempt(self, state: CycleState, pod: PodInfo, all_nodes: list[NodeInfo], diag: Diagnosis,
                pdbs: list[Any], nominated: Callable[[str], list[PodInfo]], now: float,
                terminating_by_preemption: Callable[[PodInfo], bool]) -> PreemptionOutcome:
        """Evaluator.Preempt."""
        # eligible() reads the nodes only for a pod with a nominated node
        by_name = {n.name: n for n in all_nodes} if pod.nominated_node_name else {}
        ok, msg = self.eligible(pod, by_name, diag, terminating_by_preemption)
        if not ok:
            return PreemptionOutcome(Status(Code.UNSCHEDULABLE, [msg]), None, [], "preemption: " + msg)
        potential, names = self._potential_nodes(all_nodes, diag)
        if not potential:
            fe = FitError(pod, len(all_nodes), Diagnosis(absent_status=unresolvable(MSG_NOT_HELPFUL)))
            return PreemptionOutcome(Status(Code.UNSCHEDULABLE, [fe.message()]), "", [], "preemption: " + fe.message())
        all_pods = [p for ni in all_nodes for p in ni.pods] if pdbs else []
        allowed = {i: pdb_allowed(pdb, all_pods) for i, pdb in enumerate(pdbs)}
        n_cand = self.num_candidates(len(potential))
        offset = self.rng.randrange(len(potential))
        non_viol: list[Candidate] = []
        viol: list[Candidate] = []
        statuses: dict[str, Status] = {}
        priority = pod.priority
        no_victims = unresolvable(MSG_NO_VICTIMS)  # one status for every such node (only read)
        if not priority > self._lowest_priority(all_nodes):
            # Not in upstream (DryRunPreemption runs SelectVictimsOnNode on every potential node);
            # same result because no node holds a pod of lower priority than the preemptor, so
            # SelectVictimsOnNode answers "No preemption victims found" on each potential node, no
            # candidate is found and the loop below would record exactly these statuses.
            statuses = dict.fromkeys(names, no_victims)
            # every status is ``no_victims`` (one reason): its reason counted once per node
            msg = FitError(pod, len(all_nodes), Diagnosis(node_to_status=statuses,
                                                           absent_status=unresolvable(MSG_NOT_HELPFUL),
                                                           reason_counts={MSG_NO_VICTIMS: len(statuses)})).message()
            return PreemptionOutcome(Status(Code.UNSCHEDULABLE, [msg]), None, [], "preemption: " + msg)
        for i in range(len(potential)):
            ni = potential[(offset + i) % len(potential)]
            if not priority > lowest_pod_priority(ni):
                # SelectVictimsOnNode's first answer, given before the copies are touched: skip
                # copying the node and the cycle state (DryRunPreemption's Snapshot / Clone) for it
                statuses[ni.name] = no_victims
                continue
            victims, nv, st = self.select_victims_on_node(state.clone(), pod, ni.clone(), pdbs, allowed, nominated, now)
            if st.is_success():
                c = Candidate(ni.name, victims, nv)
                (viol if nv > 0 else non_viol).append(c)
                if non_viol and len(non_viol) + len(viol) >= n_cand:
                    break
            else:
                statuses[ni.name] = st
        candidates = non_viol + viol
        if not candidates:
            fe = FitError(pod, len(all_nodes), Diagnosis(node_to_status=statuses,
                                                          absent_status=unresolvable(MSG_NOT_HELPFUL)))
            return PreemptionOutcome(Status(Code.UNSCHEDULABLE, [fe.message()]), None, [], "preemption: " + fe.message())
        best = pick_one_node_for_preemption(candidates, now)
        return PreemptionOutcome(Status(), best.node, best.victims, "")


    def _lowest_priority(self, all_nodes: list[NodeInfo]) -> float:
        """The lowest priority of any pod on ``all_nodes`` (inf when there is none).

        Not in upstream (performance only; the smallest of the nodes' lowest priorities, each kept
        by PerNode); same value because the minimum is taken again whenever PerNode recomputed a
        value (a changed node or another node tree) and kept only while none changed."""
        changed = self._lowest.refresh(all_nodes, lowest_pod_priority)
        if changed or changed is None or self._lowest_min is None:
            self._lowest_min = min(self._lowest.values, default=math.inf)
        return self._lowest_min

    def _potential_nodes(self, all_nodes: list[NodeInfo], diag: Diagnosis) -> tuple[list[NodeInfo], list[str]]:
        """nodesWherePreemptionMightHelp: the nodes (in ``all_nodes`` order) whose filter status
        is Unschedulable (a node without one has the absent status), and their names.

        Not in upstream (it walks every node's status each PostFilter); same nodes because a
        Diagnosis that repeats an earlier one (``Diagnosis.repeats``: a failed filter pass answered
        from the first one's statuses) maps the same nodes to the same Status objects with the
        same absent_status code, and ``all_nodes`` is a copy of the same node tree (the same
        NodeInfos in the same order): the walk would give the same list. Such passes are the
        pods of a ReplicaSet that fail one after another."""
        tree = all_nodes.tree if isinstance(all_nodes, Snapshot) else None
        src = diag.repeats if diag.repeats is not None else diag
        absent = diag.absent_status
        absent_code = absent.code if absent is not None else None
        memo = self._potential
        if (tree is not None and memo is not None and memo[0] is src and memo[1] is tree
                and memo[2] == absent_code):
            return memo[3], memo[4]
        potential = []
        node_to_status = diag.node_to_status
        for ni in all_nodes:
            st = node_to_status.get(ni.name, absent)
            if st is not None and st.code == Code.UNSCHEDULABLE:
                potential.append(ni)
        names = [ni.name for ni in potential]
        if tree is not None:
            self._potential = (src, tree, absent_code, potential, names)
        return potential, names


def lowest_pod_priority(ni: NodeInfo) -> float:
    """The lowest priority of the node's pods (inf when it has none), kept in the node's memo
    until its pods change: a node can hold victims of a pod only if this is below its priority."""
    hit = ni.memo.get("lowest_pod_priority")
    if hit is not None and hit[0] == ni.generation:
        return hit[1]  # type: ignore[no-any-return]
    low = min((p.priority for p in ni.pods), default=math.inf)
    ni.memo["lowest_pod_priority"] = (ni.generation, low)
    return low


def pick_one_node_for_preemption(candidates: list[Candidate], now: float) -> Candidate:
    """pickOneNodeForPreemption: the six criteria, in order; ties broken by candidate order."""
    for c in candidates:
        if not c.victims:
            return c

    def earliest_start_of_highest(c: Candidate) -> float:
        top = c.victims[0].priority
        return min(start_time(v, now) for v in c.victims if v.priority == top)
    scorers: list[Callable[[Candidate], float]] = [
        lambda c: -c.num_pdb_violations,
        lambda c: -c.victims[0].priority,
        lambda c: -sum(v.priority + INT32_MAX + 1 for v in c.victims),
        lambda c: -len(c.victims),
        earliest_start_of_highest,
    ]
    remaining = list(candidates)
    for f in scorers:
        scores = [f(c) for c in remaining]
        m = max(scores)
        remaining = [c for c, s in zip(remaining, scores) if s == m]
        if len(remaining) == 1:
            break
    return remaining[0]
