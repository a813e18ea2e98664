"""NodeResourcesFit and NodeResourcesBalancedAllocation.

Mirrors pkg/scheduler/framework/plugins/noderesources/{fit.go, resource_allocation.go,
least_allocated.go, most_allocated.go, requested_to_capacity_ratio.go, balanced_allocation.go}
and helper/shape_score.go (BuildBrokenLinearFunction).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

from ..framework import (ADD, ASSIGNED_POD, DELETE, NODE, UPDATE_NODE_ALLOCATABLE, UPDATE_POD_SCALE_DOWN,
                         NOT_NODE_LOCAL, ClusterEvent, CycleState, HintFn, Plugin, QueueingHint, hint_signature)
from ..nodeinfo import NodeInfo
from ..podinfo import CPU, EPHEMERAL, MEMORY, PODS, PodInfo, ResourceList, _nanos
from ..types import MAX_NODE_SCORE, SUCCESS_STATUS, Code, Status

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
MAX_CUSTOM_PRIORITY_SCORE = 10


@dataclass(frozen=True)
class InsufficientResource:
    resource: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool


def fits_request(pod_req: ResourceList, ni: NodeInfo, ignored: frozenset[str] = frozenset(),
                 ignored_groups: frozenset[str] = frozenset()) -> list[InsufficientResource]:
    """fit.go fitsRequest (1.34+: a request above the node's allocatable is unresolvable)."""
    out: list[InsufficientResource] = []
    allowed = ni.allowed_pod_number
    if len(ni.pods) + 1 > allowed:
        out.append(InsufficientResource(PODS, "Too many pods", 1, len(ni.pods), allowed, False))
    if all(v == 0 for v in pod_req.values()):
        return out
    for r in (CPU, MEMORY, EPHEMERAL):
        req = pod_req.get(r, 0)
        alloc = ni.allocatable.get(r, 0)
        used = ni.requested.get(r, 0)
        if req > 0 and req > alloc - used:
            out.append(InsufficientResource(r, f"Insufficient {r}", req, used, alloc, req > alloc))
    for r in sorted(pod_req):
        if r in (CPU, MEMORY, EPHEMERAL, PODS):
            continue
        req = pod_req[r]
        if req == 0:
            continue
        if r in ignored or (("/" in r) and r.split("/", 1)[0] in ignored_groups):
            continue
        alloc = ni.allocatable.get(r, 0)
        used = ni.requested.get(r, 0)
        if req > alloc - used:
            out.append(InsufficientResource(r, f"Insufficient {r}", req, used, alloc, req > alloc))
    return out


def _broken_linear(shape: list[tuple[int, int]], p: int) -> int:
    """helper.BuildBrokenLinearFunction (integer interpolation)."""
    for i, (u, s) in enumerate(shape):
        if p <= u:
            if i == 0:
                return shape[0][1]
            u0, s0 = shape[i - 1]
            num, den = (s - s0) * (p - u0), (u - u0)
            q = abs(num) // abs(den)  # Go int64 division truncates toward zero
            return s0 + (q if (num >= 0) == (den >= 0) else -q)
    return shape[-1][1]


@dataclass
class ScoringStrategy:
    type: str = LEAST_ALLOCATED
    resources: list[tuple[str, int]] = field(default_factory=lambda: [(CPU, 1), (MEMORY, 1)])
    shape: list[tuple[int, int]] = field(default_factory=lambda: [(0, 10), (100, 0)])


def _go_round(x: float) -> int:
    """math.Round: half away from zero."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


@dataclass(frozen=True)
class _FitPreFilterState:
    """fit.go preFilterState: the pod's request vector, computed once per cycle in PreFilter.

    ``checks`` lists, in fitsRequest's order (cpu, memory, ephemeral-storage, then scalar resources
    sorted by name), every (resource, request, reason) that fitsRequest compares against a node:
    the three basic resources when requested (> 0) and every scalar with a non-zero request that is
    not ignored. ``requests_nothing`` is fitsRequest's "pod requests nothing" early return."""

    requests_nothing: bool
    checks: tuple[tuple[str, int, str], ...]


@dataclass(frozen=True)
class _FitPreScoreState:
    """fit.go preScoreState (podRequests): per configured scoring resource (resource, weight,
    use non-zero requests, the pod's request). Extended resources the pod does not request are left
    out (the scorer skips them on every node)."""

    plan: tuple[tuple[str, int, bool, int], ...]


class NodeResourcesFit(Plugin):
    """noderesources Fit plugin."""

    name = "NodeResourcesFit"
    has_pre_filter = True
    has_filter = True
    has_pre_score = True
    has_score = True

    def __init__(self, strategy: Optional[ScoringStrategy] = None, ignored_resources: frozenset[str] = frozenset(),
                 ignored_resource_groups: frozenset[str] = frozenset()) -> None:
        self.strategy = strategy or ScoringStrategy()
        self.ignored = ignored_resources
        self.ignored_groups = ignored_resource_groups

    _PRE_FILTER_KEY = "PreFilterNodeResourcesFit"
    _PRE_SCORE_KEY = "PreScoreNodeResourcesFit"

    def _pre_filter_state(self, pod: PodInfo) -> _FitPreFilterState:
        """computePodResourceRequest → the checks fitsRequest makes (see _FitPreFilterState)."""
        pod_req = pod.requests
        checks: list[tuple[str, int, str]] = []
        for r in (CPU, MEMORY, EPHEMERAL):
            req = pod_req.get(r, 0)
            if req > 0:
                checks.append((r, req, f"Insufficient {r}"))
        for r in sorted(pod_req):
            if r in (CPU, MEMORY, EPHEMERAL, PODS):
                continue
            req = pod_req[r]
            if req == 0:
                continue
            if r in self.ignored or (("/" in r) and r.split("/", 1)[0] in self.ignored_groups):
                continue
            checks.append((r, req, f"Insufficient {r}"))
        return _FitPreFilterState(all(v == 0 for v in pod_req.values()), tuple(checks))

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> tuple[Status, Optional[set[str]]]:
        state.data[self._PRE_FILTER_KEY] = self._pre_filter_state(pod)
        return Status(), None

    def filter(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> Status:
        """fitsRequest against the PreFilter request vector (same checks, order and reasons as
        ``fits_request``; the common all-fit case allocates nothing)."""
        fs = state.data.get(self._PRE_FILTER_KEY)
        if fs is None:
            fs = self._pre_filter_state(pod)
        alloc = ni.allocatable
        used = ni.requested
        too_many = len(ni.pods) + 1 > alloc.get(PODS, 0) // 10**9
        if not too_many:
            if fs.requests_nothing:
                return SUCCESS_STATUS
            for r, req, _reason in fs.checks:
                if req > alloc.get(r, 0) - used.get(r, 0):
                    break
            else:
                return SUCCESS_STATUS
        # rejection: collect every insufficient resource exactly as fits_request does
        reasons = ["Too many pods"] if too_many else []
        unres = False
        if not fs.requests_nothing:
            for r, req, reason in fs.checks:
                a = alloc.get(r, 0)
                if req > a - used.get(r, 0):
                    reasons.append(reason)
                    if req > a:
                        unres = True
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unres else Code.UNSCHEDULABLE, reasons)

    def filter_signature(self, state: CycleState, pod: PodInfo) -> Any:
        fs = state.data.get(self._PRE_FILTER_KEY)
        if fs is None:
            fs = self._pre_filter_state(pod)
        return fs.requests_nothing, fs.checks

    def _pre_score_state(self, pod: PodInfo) -> _FitPreScoreState:
        plan = []
        for r, w in self.strategy.resources:
            if r not in (CPU, MEMORY, EPHEMERAL) and pod.requests.get(r, 0) == 0:
                continue  # score_resources skips it on every node
            if r in (CPU, MEMORY):
                plan.append((r, w, True, pod.non_zero_requests.get(r, 0)))
            else:
                plan.append((r, w, False, pod.requests.get(r, 0)))
        return _FitPreScoreState(tuple(plan))

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], all_nodes: list[NodeInfo]) -> Status:
        state.data[self._PRE_SCORE_KEY] = self._pre_score_state(pod)
        return Status()

    # resource_allocation.go calculateResourceAllocatableRequest
    def _alloc_req(self, ni: NodeInfo, pod: PodInfo, r: str, use_requested: bool) -> tuple[int, int]:
        alloc = ni.allocatable.get(r, 0)
        if r in (CPU, MEMORY) and not use_requested:
            return alloc, ni.non_zero_requested.get(r, 0) + pod.non_zero_requests.get(r, 0)
        return alloc, ni.requested.get(r, 0) + pod.requests.get(r, 0)

    def score(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> int:
        kind = self.strategy.type
        if kind != LEAST_ALLOCATED and kind != MOST_ALLOCATED:
            return score_resources(self.strategy, ni, pod, self._alloc_req)
        # LeastAllocated / MostAllocated with the PreScore request vector: the same arithmetic as
        # score_resources (calculateResourceAllocatableRequest + the scorer), minus the per-node
        # dict/list building.
        ps = state.data.get(self._PRE_SCORE_KEY)
        if ps is None:
            ps = self._pre_score_state(pod)
        alloc_l = ni.allocatable
        num = 0
        wsum = 0
        for r, w, non_zero, pod_req in ps.plan:
            a = alloc_l.get(r, 0)
            if a == 0:
                continue
            q = (ni.non_zero_requested if non_zero else ni.requested).get(r, 0) + pod_req
            if kind == LEAST_ALLOCATED:
                s = 0 if q > a else (a - q) * MAX_NODE_SCORE // a
            else:
                s = min(q, a) * MAX_NODE_SCORE // a
            num += s * w
            wsum += w
        return 0 if wsum == 0 else num // wsum

    def score_signature(self, state: CycleState, pod: PodInfo) -> Any:
        kind = self.strategy.type
        if kind != LEAST_ALLOCATED and kind != MOST_ALLOCATED:
            return NOT_NODE_LOCAL  # score_resources reads the pod's requests directly
        ps = state.data.get(self._PRE_SCORE_KEY)
        if ps is None:
            ps = self._pre_score_state(pod)
        return kind, ps.plan

    def events_to_register(self) -> list[tuple[ClusterEvent, HintFn]]:
        Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP

        @hint_signature(lambda pod: tuple(sorted(pod.requests.items())))
        def node_hint(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
            if new is None:
                return SKIP
            empty = NodeInfo.from_node(new)
            if fits_request(pod.requests, empty, self.ignored, self.ignored_groups):
                return SKIP
            if old is None:
                return Q
            old_alloc = NodeInfo.from_node(old).allocatable
            for r in list(pod.requests) + [PODS]:
                if empty.allocatable.get(r, 0) > old_alloc.get(r, 0):
                    return Q
            return SKIP

        @hint_signature(_nothing)
        def pod_deleted(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
            if old is None:
                return SKIP
            if getattr(old.spec, "node_name", None) or getattr(getattr(old, "status", None), "nominated_node_name", None):
                return Q
            return SKIP

        @hint_signature(_nothing)
        def scale_down(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
            return Q if new is not None and getattr(new.spec, "node_name", None) else SKIP
        return [(ClusterEvent(NODE, ADD), node_hint), (ClusterEvent(NODE, UPDATE_NODE_ALLOCATABLE), node_hint),
                (ClusterEvent(ASSIGNED_POD, DELETE), pod_deleted),
                (ClusterEvent(ASSIGNED_POD, UPDATE_POD_SCALE_DOWN), scale_down)]


def _nothing(pod: PodInfo) -> None:
    """The pod signature of a hint that reads nothing from the pod."""
    return None


def score_resources(strategy: ScoringStrategy, ni: NodeInfo, pod: PodInfo, alloc_req: Any) -> int:
    """resourceAllocationScorer.score with LeastAllocated/MostAllocated/RequestedToCapacityRatio."""
    allocs: list[int] = []
    reqs: list[int] = []
    weights: list[int] = []
    for r, w in strategy.resources:
        alloc, req = alloc_req(ni, pod, r, False)
        if r not in (CPU, MEMORY, EPHEMERAL) and (alloc == 0 or pod.requests.get(r, 0) == 0):
            continue  # extended resource not requested by the pod or not on the node: skipped
        if alloc == 0:
            continue  # least/most/rtcr scorers: "if allocable[i] == 0 { continue }" (not in the weight sum)
        allocs.append(alloc)
        reqs.append(req)
        weights.append(w)
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        shape = [(u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in strategy.shape]
        num = 0
        wsum = 0
        for a, q, w in zip(allocs, reqs, weights):
            util = 100 if (a == 0 or q > a) else q * 100 // a
            s = _broken_linear(shape, util)
            if s > 0:
                num += s * w
                wsum += w
        return 0 if wsum == 0 else _go_round(num / wsum)
    num = 0
    wsum = 0
    for a, q, w in zip(allocs, reqs, weights):
        if strategy.type == MOST_ALLOCATED:
            s = 0 if a == 0 else min(q, a) * MAX_NODE_SCORE // a
        else:
            s = 0 if (a == 0 or q > a) else (a - q) * MAX_NODE_SCORE // a
        num += s * w
        wsum += w
    return 0 if wsum == 0 else num // wsum


class BalancedAllocation(Plugin):
    """NodeResourcesBalancedAllocation (v1.34/1.35 formula: 1 - std of utilisation fractions)."""

    name = "NodeResourcesBalancedAllocation"
    has_pre_score = True
    has_score = True

    def __init__(self, resources: Optional[list[tuple[str, int]]] = None) -> None:
        self.resources = resources or [(CPU, 1), (MEMORY, 1)]

    _PRE_SCORE_KEY = "PreScoreNodeResourcesBalancedAllocation"

    def _plan(self, pod: PodInfo) -> tuple[tuple[str, int], ...]:
        """balancedAllocation preScoreState (podRequests): (resource, pod request) per configured
        resource; extended resources the pod does not request are skipped on every node."""
        return tuple((r, pod.requests.get(r, 0)) for r, _w in self.resources
                     if r in (CPU, MEMORY, EPHEMERAL) or pod.requests.get(r, 0) != 0)

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], all_nodes: list[NodeInfo]) -> Status:
        if all(pod.requests.get(r, 0) == 0 for r, _ in self.resources):
            return Status(Code.SKIP)  # best-effort pod (issue #129138)
        state.data[self._PRE_SCORE_KEY] = self._plan(pod)
        return Status()

    def score(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> int:
        plan = state.data.get(self._PRE_SCORE_KEY)
        if plan is None:
            plan = self._plan(pod)
        allocatable = ni.allocatable
        requested = ni.requested
        fractions: list[float] = []
        for r, pod_req in plan:
            alloc = allocatable.get(r, 0)
            if alloc == 0:
                continue
            f = (requested.get(r, 0) + pod_req) / alloc
            fractions.append(f if f < 1.0 else 1.0)  # min(f, 1.0)
        if len(fractions) == 2:  # balanced_score's two-resource case, same float expression inline
            return int((1 - abs((fractions[0] - fractions[1]) / 2)) * MAX_NODE_SCORE)
        return balanced_score(fractions)

    def score_signature(self, state: CycleState, pod: PodInfo) -> Any:
        plan = state.data.get(self._PRE_SCORE_KEY)
        return plan if plan is not None else self._plan(pod)


def balanced_score(fractions: list[float]) -> int:
    """balanced_allocation.go balancedResourceScorer."""
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)
