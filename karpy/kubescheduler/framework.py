"""Scheduling framework: plugin interface, cycle state, cluster events, profile runner.

Mirrors pkg/scheduler/framework/interface.go (extension points), pkg/scheduler/framework/cycle_state.go,
pkg/scheduler/framework/events.go (ClusterEvent, ActionType) and pkg/scheduler/framework/runtime/framework.go
(RunPreFilterPlugins, RunFilterPlugins, RunFilterPluginsWithNominatedPods, RunScorePlugins).
Extension points, in order: PreEnqueue, QueueSort, PreFilter, Filter, PostFilter, PreScore, Score,
NormalizeScore, Reserve, Permit, PreBind, Bind, PostBind.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Callable, Optional

from .nodeinfo import NodeInfo
from .podinfo import PodInfo
from .types import MAX_NODE_SCORE, SUCCESS_STATUS, Code, Status, unresolvable

# ---- cluster events (events.go) -------------------------------------------------------------------
NODE = "Node"
ASSIGNED_POD = "Pod"
UNSCHEDULED_POD = "UnscheduledPod"
WILDCARD = "*"

ADD = "Add"
DELETE = "Delete"
UPDATE_NODE_ALLOCATABLE = "UpdateNodeAllocatable"
UPDATE_NODE_LABEL = "UpdateNodeLabel"
UPDATE_NODE_TAINT = "UpdateNodeTaint"
UPDATE_NODE_CONDITION = "UpdateNodeCondition"
UPDATE_POD_LABEL = "UpdatePodLabel"
UPDATE_POD_TOLERATION = "UpdatePodToleration"
UPDATE_POD_SCHEDULING_GATES_ELIMINATED = "UpdatePodSchedulingGatesEliminated"
UPDATE_POD_SCALE_DOWN = "UpdatePodScaleDown"
UPDATE = "Update"  # any update (matches every Update* action)
ALL = "All"


@dataclass(frozen=True)
class ClusterEvent:
    """framework.ClusterEvent{Resource, ActionType}."""

    resource: str
    action: str

    def is_wildcard(self) -> bool:
        return self.resource == WILDCARD

    def matches(self, incoming: ClusterEvent) -> bool:
        """ClusterEvent.Match: registered (self) matches incoming."""
        if self.resource not in (WILDCARD, incoming.resource):
            return False
        if self.action in (ALL, incoming.action):
            return True
        return self.action == UPDATE and incoming.action.startswith("Update")


UNSCHEDULABLE_TIMEOUT = ClusterEvent(WILDCARD, "UnschedulableTimeout")
FORCE_ACTIVATE = ClusterEvent(WILDCARD, "ForceActivate")


class QueueingHint(enum.Enum):
    QUEUE_SKIP = 0
    QUEUE = 1


HintFn = Callable[[PodInfo, Any, Any], QueueingHint]


def queue_always(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE


# ---- cycle state -----------------------------------------------------------------------------------
class CycleState:
    """framework.CycleState: per-cycle plugin data; ``clone`` deep-copies cloneable entries."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()
        # Filter plugins not skipped by PreFilter, resolved once (see Framework.run_filter); keyed by
        # the skip set it was computed from so a later change to skip_filter is never missed.
        self._filter_plugins: Optional[tuple[frozenset[str], list[Plugin]]] = None

    def clone(self) -> CycleState:
        c = CycleState()
        c.data = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in self.data.items()}
        c.skip_filter = set(self.skip_filter)
        c.skip_score = set(self.skip_score)
        c._filter_plugins = self._filter_plugins
        return c


# ---- plugin base -----------------------------------------------------------------------------------
class Plugin:
    """Base plugin: subclasses override the extension points they implement."""

    name: str = ""
    has_pre_enqueue = False
    has_pre_filter = False
    has_filter = False
    has_pre_score = False
    has_score = False
    has_normalize = False
    has_pre_filter_extensions = False
    has_permit = False

    def pre_enqueue(self, pod: PodInfo) -> Status:
        return Status()

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> tuple[Status, Optional[set[str]]]:
        return Status(), None

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, ni: NodeInfo) -> None:
        pass

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo, ni: NodeInfo) -> None:
        pass

    def filter(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> Status:
        return Status()

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], all_nodes: list[NodeInfo]) -> Status:
        return Status()

    def score(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> int:
        return 0

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[int]) -> None:
        pass

    def events_to_register(self) -> list[tuple[ClusterEvent, HintFn]]:
        return []


def default_normalize_score(max_priority: int, reverse: bool, scores: list[int]) -> None:
    """helper.DefaultNormalizeScore (plugins/helper/normalize_score.go)."""
    m = max(scores) if scores else 0
    if m == 0:
        if reverse:
            for i in range(len(scores)):
                scores[i] = max_priority
        return
    for i, s in enumerate(scores):
        s = max_priority * s // m
        scores[i] = max_priority - s if reverse else s


# ---- profile runner --------------------------------------------------------------------------------
class Framework:
    """frameworkImpl for one profile: plugins in configured order, score weights."""

    def __init__(self, plugins: list[Plugin], weights: dict[str, int], post_filter: list[Any] | None = None,
                 permit: list[Any] | None = None, profile_name: str = "default-scheduler") -> None:
        self.plugins = plugins
        self.weights = weights
        self.post_filter_plugins = post_filter or []
        self.permit_plugins = permit or []
        self.profile_name = profile_name
        self.pre_enqueue_plugins = [p for p in plugins if p.has_pre_enqueue]
        self.pre_filter_plugins = [p for p in plugins if p.has_pre_filter]
        self.filter_plugins = [p for p in plugins if p.has_filter]
        self.pre_score_plugins = [p for p in plugins if p.has_pre_score]
        self.score_plugins = [p for p in plugins if p.has_score]

    def plugin(self, name: str) -> Plugin | None:
        for p in self.plugins:
            if p.name == name:
                return p
        return None

    def run_pre_enqueue(self, pod: PodInfo, first: str = "") -> Status:
        """RunPreEnqueuePlugins: the previously gating plugin runs first; first non-success gates."""
        order = sorted(self.pre_enqueue_plugins, key=lambda p: p.name != first)
        for p in order:
            st = p.pre_enqueue(pod)
            if not st.is_success():
                return st.with_plugin(p.name)
        return Status()

    def run_pre_filter(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> tuple[Status, Optional[set[str]], set[str]]:
        """RunPreFilterPlugins: returns (status, node-name restriction or None, rejector plugins)."""
        result: Optional[set[str]] = None
        narrowing: list[str] = []
        rejected: Optional[Status] = None
        rejectors: set[str] = set()
        for p in self.pre_filter_plugins:
            st, res = p.pre_filter(state, pod, nodes)
            if st.is_skip():
                state.skip_filter.add(p.name)
                continue
            if not st.is_success():
                st.plugin = p.name
                if st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return st, None, {p.name}
                if st.code == Code.UNSCHEDULABLE:
                    rejected = rejected or st
                    rejectors.add(p.name)
                    continue
                return st, None, set()
            if res is not None:
                narrowing.append(p.name)
                result = set(res) if result is None else result & set(res)
                if not result:
                    if len(narrowing) > 1:
                        msg = f"node(s) didn't satisfy plugin(s) [{' '.join(narrowing)}] simultaneously"
                    else:
                        msg = f"node(s) didn't satisfy plugin {narrowing[0]}"
                    return unresolvable(msg).with_plugin(p.name), None, set(narrowing)
        if rejected is not None:
            return rejected, None, rejectors
        return Status(), result, set()

    def _active_filter_plugins(self, state: CycleState) -> list[Plugin]:
        """The Filter plugins whose PreFilter did not return Skip, in configured order.

        Performance: upstream checks ``state.SkipFilterPlugins.Has(name)`` for every plugin on every
        node; the set is fixed once PreFilter has run, so we resolve the list once per cycle (and
        recompute it if skip_filter is ever different from the set it was built from)."""
        cached = state._filter_plugins
        skip = state.skip_filter
        if cached is not None and len(cached[0]) == len(skip) and (not skip or cached[0] == skip):
            return cached[1]
        plugins = [p for p in self.filter_plugins if p.name not in skip]
        state._filter_plugins = (frozenset(skip), plugins)
        return plugins

    def run_filter(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> Status:
        """RunFilterPlugins: stop at the first non-success plugin.

        Success is the shared immutable SUCCESS_STATUS (upstream: a nil *Status), so a node that
        passes allocates nothing; ``st.code`` is falsy exactly for Code.SUCCESS."""
        for p in self._active_filter_plugins(state):
            st = p.filter(state, pod, ni)
            if st.code:
                st.plugin = p.name
                if not st.is_rejected():
                    st.code = Code.ERROR
                return st
        return SUCCESS_STATUS

    def run_add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, ni: NodeInfo) -> None:
        for p in self.pre_filter_plugins:
            if p.has_pre_filter_extensions and p.name not in state.skip_filter:
                p.add_pod(state, pod, to_add, ni)

    def run_remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo, ni: NodeInfo) -> None:
        for p in self.pre_filter_plugins:
            if p.has_pre_filter_extensions and p.name not in state.skip_filter:
                p.remove_pod(state, pod, to_remove, ni)

    def run_filter_with_nominated_pods(self, state: CycleState, pod: PodInfo, ni: NodeInfo,
                                       nominated: list[PodInfo]) -> Status:
        """RunFilterPluginsWithNominatedPods: pass 1 with nominated pods of priority >= pod's, pass 2 without
        (pass 2 only when pass 1 added pods)."""
        if not nominated:  # no pods nominated to this node: pass 1 would add nothing (only pass 2 runs)
            return self.run_filter(state, pod, ni)
        extra = [p for p in nominated if p.uid != pod.uid and p.priority >= pod.priority]
        if extra:
            st1 = state.clone()
            ni1 = ni.clone()
            for p in extra:
                ni1.add_pod(p)
                self.run_add_pod(st1, pod, p, ni1)
            st = self.run_filter(st1, pod, ni1)
            if not st.is_success():
                return st
        return self.run_filter(state, pod, ni)

    def run_pre_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], all_nodes: list[NodeInfo]) -> Status:
        for p in self.pre_score_plugins:
            st = p.pre_score(state, pod, nodes, all_nodes)
            if st.is_skip():
                state.skip_score.add(p.name)
            elif not st.is_success():
                return st.with_plugin(p.name)
        return Status()

    def run_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> tuple[list[int], dict[str, list[int]]]:
        """RunScorePlugins: score, normalize, weight, sum. Skipped plugins contribute 0."""
        totals = [0] * len(nodes)
        per_plugin: dict[str, list[int]] = {}
        for p in self.score_plugins:
            if p.name in state.skip_score:
                continue
            score = p.score
            scores = [score(state, pod, ni) for ni in nodes]
            if p.has_normalize:
                p.normalize_score(state, pod, scores)
            # range check (framework.go): min/max first, then the first offending score in node order
            if scores and (min(scores) < 0 or max(scores) > MAX_NODE_SCORE):
                for s in scores:
                    if s < 0 or s > MAX_NODE_SCORE:
                        raise ValueError(f"plugin {p.name} returns an invalid score {s}")
            w = self.weights.get(p.name, 1)
            per_plugin[p.name] = scores
            if w == 1:
                totals = [t + s for t, s in zip(totals, scores)]
            else:
                totals = [t + s * w for t, s in zip(totals, scores)]
        return totals, per_plugin

    def all_events(self) -> list[tuple[str, ClusterEvent, HintFn]]:
        out = []
        for p in self.plugins:
            for ev, fn in p.events_to_register():
                out.append((p.name, ev, fn))
        return out
