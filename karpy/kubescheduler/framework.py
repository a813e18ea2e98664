"""Scheduling framework: plugin interface, cycle state, cluster events, profile runner.

Mirrors pkg/scheduler/framework/interface.go (extension points), pkg/scheduler/framework/cycle_state.go,
pkg/scheduler/framework/events.go (ClusterEvent, ActionType) and pkg/scheduler/framework/runtime/framework.go
(RunPreFilterPlugins, RunFilterPlugins, RunFilterPluginsWithNominatedPods, RunScorePlugins).
Extension points, in order: PreEnqueue, QueueSort, PreFilter, Filter, PostFilter, PreScore, Score,
NormalizeScore, Reserve, Permit, PreBind, Bind, PostBind.
"""

from __future__ import annotations

import enum
import itertools
import operator
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Optional

from .nodeinfo import _NODE_MEMO_LIMIT, NodeInfo
from .podinfo import PodInfo
from .types import MAX_NODE_SCORE, REJECTED_CODES, SUCCESS_STATUS, Code, Status, unresolvable

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


@dataclass(frozen=True, slots=True)
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


def hint_signature(signature: Callable[[PodInfo], Any]) -> Callable[[HintFn], HintFn]:
    """Declare that a QueueingHintFn reads the pod only through ``signature(pod)`` (a hashable
    value): pods with equal signatures get the same hint for one event, so the queue calls the
    function once per event and signature (PriorityQueue._worth_requeuing). Performance only."""
    def mark(fn: HintFn) -> HintFn:
        fn.pod_signature = signature  # type: ignore[attr-defined]
        return fn
    return mark


# ---- cycle state -----------------------------------------------------------------------------------
class CycleState:
    """framework.CycleState: per-cycle plugin data; ``clone`` deep-copies cloneable entries."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()
        # The Filter plan of this cycle (see Framework._filter_plan), resolved once; keyed by the
        # skip set and pod it was computed from so a later change to skip_filter is never missed.
        self._filter_plan: Optional[FilterPlan] = None

    def clone(self) -> CycleState:
        c = CycleState()
        c.data = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in self.data.items()}
        c.skip_filter = set(self.skip_filter)
        c.skip_score = set(self.skip_score)
        c._filter_plan = self._filter_plan
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

    # ---- Performance hooks (no upstream counterpart; they never change a result) ----
    def filter_passes_every_node(self, state: CycleState, pod: PodInfo) -> bool:
        """True when this plugin's Filter returns Success on every node for ``pod`` (e.g. NodeName
        for a pod without spec.nodeName): the framework then leaves it out of the cycle's Filter
        list, which is what running it would amount to."""
        return False

    def filter_signature(self, state: CycleState, pod: PodInfo) -> Any:
        """A hashable value of everything Filter reads from ``pod`` and ``state`` when Filter is
        *node-local*: a pure function of that value and the NodeInfo (its Node object and its
        pods, i.e. ``NodeInfo.generation``). ``NOT_NODE_LOCAL`` (the default) when Filter reads
        anything else (cluster-wide PreFilter state, volumes)."""
        return NOT_NODE_LOCAL

    def filter_state_signature(self, state: CycleState, pod: PodInfo) -> Any:
        """A hashable value of everything Filter reads from ``pod`` and ``state`` (its PreFilter
        state included) when Filter reads nothing else but the NodeInfo: equal values give equal
        statuses on an unchanged node. A node-local Filter's ``filter_signature`` is such a value
        (the default); ``NOT_NODE_LOCAL`` when Filter reads anything else (volumes)."""
        return self.filter_signature(state, pod)

    def node_filter(self, state: CycleState, pod: PodInfo) -> Callable[[NodeInfo], Status]:
        """This cycle's Filter as a function of the node: ``node_filter(state, pod)(ni)`` returns
        what ``filter(state, pod, ni)`` returns, for every node, while ``state`` is unchanged.
        A filter pass binds it once (a plugin may resolve its PreFilter state up front)."""
        filt = self.filter
        return lambda ni: filt(state, pod, ni)

    def label_checks(self, state: CycleState, pod: PodInfo) -> Optional[tuple[LabelCheck, ...]]:
        """This cycle's Filter as tests of single node labels, when it is one (Algorithm's filter
        pass then looks the statuses up per label value): a node's status is that of the first
        check that gives the node's label value a status (None: the check passes), Success when
        none does. Each status is the one RunFilterPlugins would leave of ``filter``'s (equal
        code, reasons; ``plugin`` set to this plugin's name; a rejection), and one that stands
        for the same verdict is the same object from cycle to cycle (the pass tells what changed
        by identity). None (the default) when Filter reads more of the node than its labels or
        cannot be put so."""
        return None

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        """The raw Score of each node: ``[score(state, pod, ni) for ni in nodes]`` (a plugin may
        resolve the cycle's PreScore state once for all the nodes)."""
        score = self.score
        return [score(state, pod, ni) for ni in nodes]

    def score_signature(self, state: CycleState, pod: PodInfo) -> Any:
        """Like ``filter_signature`` for Score (after PreScore): a hashable value of everything
        Score reads from ``pod`` and ``state`` when the raw score is a pure function of it and the
        NodeInfo; the framework then keeps each node's raw score in ``NodeInfo.memo``."""
        return NOT_NODE_LOCAL


#: Plugin.filter_signature's answer for a Filter that reads more than the pod and the NodeInfo.
NOT_NODE_LOCAL: Any = object()


class LabelCheck(NamedTuple):
    """One test of a Filter that reads a single label of the node (Plugin.label_checks): the
    status of a node whose ``key`` label has value ``v`` (None: the node lacks the label) is
    ``statuses[v]`` when ``v`` is a key of it, else ``default``; None means the node passes."""

    key: str
    statuses: dict[Optional[str], Optional[Status]]
    default: Optional[Status]


def plugin_status(code: Code, reason: str, plugin: str) -> Status:
    """A Filter status as RunFilterPlugins leaves a plugin's rejection (its plugin set)."""
    return Status(code, [reason], plugin)


class FilterPlan:
    """One cycle's Filter plugins: every active one (not skipped by PreFilter, not passing every
    node), split into the node-local prefix and the rest.

    Performance: RunFilterPlugins stops at the first rejecting plugin, and the default profile's
    node-local filters (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts,
    NodeResourcesFit) come before the cluster-wide ones (volumes, PodTopologySpread,
    InterPodAffinity). The prefix's status on a node is a pure function of the pod's filter
    signatures and the NodeInfo, so it is kept in ``NodeInfo.memo`` under ``memo_key`` (an int
    interned per signature) with the node's generation, and reused by later cycles of pods with
    the same signatures (a Deployment's replicas) until the node's pods change. The statuses
    reused are the ones the plugins returned (never mutated afterwards)."""

    __slots__ = ("skip", "pod", "plugins", "local", "rest", "memo_key")

    def __init__(self, skip: frozenset[str], pod: PodInfo, plugins: list[Plugin], local: list[Plugin],
                 rest: list[Plugin], memo_key: Optional[int]) -> None:
        self.skip = skip
        self.pod = pod
        self.plugins = plugins
        self.local = local
        self.rest = rest
        self.memo_key = memo_key


#: cluster-wide PreFilter aggregates (nodeinfo.PerNode, one per pod signature) a plugin keeps
#: before it drops them all
_AGGREGATE_LIMIT = 64
#: interned signatures a MemoKeys table keeps before it is dropped.
_MEMO_KEY_LIMIT = 4096
#: the source of memo-key ids: process-wide so that no two tables (and no table dropped and
#: refilled) ever give one id two meanings in a NodeInfo's memo; ids never reach any output.
_MEMO_KEYS = itertools.count()


class MemoKeys:
    """Interns signature values (hashable, possibly deep) as small ints, the keys under which
    per-node results are kept in ``NodeInfo.memo``: a lookup per node then hashes an int, not
    the signature. An id is never reused for another signature."""

    __slots__ = ("_ids",)

    def __init__(self) -> None:
        self._ids: dict[Any, int] = {}

    def __call__(self, sig: Any) -> int:
        key = self._ids.get(sig)
        if key is None:
            if len(self._ids) >= _MEMO_KEY_LIMIT:
                self._ids.clear()
            key = self._ids[sig] = next(_MEMO_KEYS)
        return key


def _run_filter_plugins(plugins: list[Plugin], state: CycleState, pod: PodInfo, ni: NodeInfo) -> Status:
    """RunFilterPlugins over ``plugins``: the first non-success status, its plugin set, a
    non-rejection turned into Error."""
    for p in plugins:
        st = p.filter(state, pod, ni)
        if st.code:
            return _filter_failure(st, p.name)
    return SUCCESS_STATUS


def _filter_failure(st: Status, plugin: str) -> Status:
    """RunFilterPlugins on a plugin's non-success status ``st``: the plugin set, a non-rejection
    turned into Error (``st`` itself, changed)."""
    st.plugin = plugin
    if st.code not in REJECTED_CODES:  # not st.is_rejected()
        st.code = Code.ERROR
    return st



def default_normalize_score(max_priority: int, reverse: bool, scores: list[int]) -> None:
    """helper.DefaultNormalizeScore (plugins/helper/normalize_score.go)."""
    m = max(scores) if scores else 0
    # (each score replaced in place, in one list comprehension: the same ints as the loop)
    if m == 0:
        if reverse:
            scores[:] = [max_priority] * len(scores)
        return
    if reverse:
        scores[:] = [max_priority - max_priority * s // m for s in scores]
    else:
        scores[:] = [max_priority * s // m for s in scores]


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
        self._intern = MemoKeys()  # node-local plugin signatures -> NodeInfo.memo keys

    def plugin(self, name: str) -> Plugin | None:
        for p in self.plugins:
            if p.name == name:
                return p
        return None

    def run_pre_enqueue(self, pod: PodInfo, first: str = "") -> Status:
        """RunPreEnqueuePlugins: the previously gating plugin runs first; first non-success gates."""
        # (without a previous gating plugin every plugin's sort key is equal and the stable sort
        # keeps the configured order: the list itself)
        order = sorted(self.pre_enqueue_plugins, key=lambda p: p.name != first) if first else self.pre_enqueue_plugins
        for p in order:
            st = p.pre_enqueue(pod)
            if not st.is_success():
                return st.with_plugin(p.name)
        return SUCCESS_STATUS

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

    def _filter_plan(self, state: CycleState, pod: PodInfo) -> FilterPlan:
        """The cycle's FilterPlan: Filter plugins whose PreFilter did not return Skip, in configured
        order, minus those that pass every node for ``pod``; split at the first plugin that is not
        node-local.

        Performance: upstream checks ``state.SkipFilterPlugins.Has(name)`` for every plugin on every
        node; the set is fixed once PreFilter has run, so we resolve the plan once per cycle (and
        recompute it if skip_filter or the pod is ever different from what it was built from)."""
        plan = state._filter_plan
        skip = state.skip_filter
        if plan is not None and plan.pod is pod and len(plan.skip) == len(skip) and (not skip or plan.skip == skip):
            return plan
        plugins = [p for p in self.filter_plugins
                   if p.name not in skip and not p.filter_passes_every_node(state, pod)]
        sigs = []
        for p in plugins:
            sig = p.filter_signature(state, pod)
            if sig is NOT_NODE_LOCAL:
                break
            sigs.append((p.name, sig))
        k = len(sigs)
        memo_key = self._intern(("Filter", tuple(sigs))) if k else None
        plan = FilterPlan(frozenset(skip), pod, plugins, plugins[:k], plugins[k:], memo_key)
        state._filter_plan = plan
        return plan

    def filter_cycle_signature(self, state: CycleState, pod: PodInfo, plan: FilterPlan) -> Any:
        """A hashable value of everything the plan's Filter plugins read from ``pod`` and ``state``
        (the node-local prefix's memo key, each other plugin's ``filter_state_signature``): on the
        same NodeInfos, equal values give the same status on every node. None when a plugin reads
        more (a volume plugin). Performance only (see Algorithm._pass_filters)."""
        sigs: list[Any] = [plan.memo_key]
        for p in plan.rest:
            sig = p.filter_state_signature(state, pod)
            if sig is NOT_NODE_LOCAL:
                return None
            sigs.append((p.name, sig))
        return tuple(sigs)

    def run_filter(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> Status:
        """RunFilterPlugins: stop at the first non-success plugin.

        Success is the shared immutable SUCCESS_STATUS (upstream: a nil *Status), so a node that
        passes allocates nothing; ``st.code`` is falsy exactly for Code.SUCCESS. The node-local
        prefix's status comes from the node's memo when the node is unchanged (FilterPlan)."""
        plan = self._filter_plan(state, pod)
        key = plan.memo_key
        if key is None:
            return _run_filter_plugins(plan.plugins, state, pod, ni)
        memo = ni.memo
        hit = memo.get(key)
        gen = ni.generation
        if hit is not None and hit[0] == gen:
            st: Status = hit[1]
        else:
            st = _run_filter_plugins(plan.local, state, pod, ni)
            if st.code != Code.ERROR:
                if len(memo) >= _NODE_MEMO_LIMIT:
                    memo.clear()
                memo[key] = (gen, st)
        if st.code:
            return st
        return _run_filter_plugins(plan.rest, state, pod, ni) if plan.rest else st

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
        per_plugin: dict[str, list[int]] = {}
        active = [p for p in self.score_plugins if p.name not in state.skip_score]
        sigs = [p.score_signature(state, pod) for p in active]
        # Performance: the raw scores of every plugin with a score signature come from one memo
        # entry per node (the tuple of them, _memo_score_rows), in one walk over the nodes; each
        # is what the plugin's Score returns (a pure function of its signature and the NodeInfo),
        # so computing them before the other plugins' scores changes nothing.
        memo_cols: dict[int, list[int]] = {}
        local = [i for i, sig in enumerate(sigs) if sig is not NOT_NODE_LOCAL]
        if local:
            key = self._intern(("Scores", tuple((active[i].name, sigs[i]) for i in local)))
            rows = self._memo_score_rows(key, [active[i].score for i in local], state, pod, nodes)
            cols = list(zip(*rows)) if rows else [() for _ in local]
            for j, i in enumerate(local):
                memo_cols[i] = list(cols[j])
        # each plugin's weighted scores, summed per node at the end (the same int sums as adding
        # them plugin by plugin)
        weighted: list[list[int]] = []
        for i, p in enumerate(active):
            scores = memo_cols[i] if i in memo_cols else p.score_nodes(state, pod, nodes)
            if p.has_normalize:
                p.normalize_score(state, pod, scores)
            # range check (framework.go): min/max first, then the first offending score in node order
            if scores and (min(scores) < 0 or max(scores) > MAX_NODE_SCORE):
                for s in scores:
                    if s < 0 or s > MAX_NODE_SCORE:
                        raise ValueError(f"plugin {p.name} returns an invalid score {s}")
            w = self.weights.get(p.name, 1)
            per_plugin[p.name] = scores
            weighted.append(scores if w == 1 else list(map(operator.mul, scores, itertools.repeat(w))))  # s * w
        totals = list(map(sum, zip(*weighted))) if weighted else [0] * len(nodes)
        return totals, per_plugin

    @staticmethod
    def _memo_score_rows(key: int, scores: list[Callable[[CycleState, PodInfo, NodeInfo], int]], state: CycleState,
                         pod: PodInfo, nodes: list[NodeInfo]) -> list[tuple[int, ...]]:
        """Per node, the raw score of each of ``scores`` (a tuple), from the node's memo while its
        pods are unchanged (Plugin.score_signature; the same ints each ``score`` returns)."""
        out = []
        for ni in nodes:
            memo = ni.memo
            hit = memo.get(key)
            gen = ni.generation
            if hit is not None and hit[0] == gen:
                out.append(hit[1])
                continue
            v = tuple([score(state, pod, ni) for score in scores])
            if len(memo) >= _NODE_MEMO_LIMIT:
                memo.clear()
            memo[key] = (gen, v)
            out.append(v)
        return out

    def all_events(self) -> list[tuple[str, ClusterEvent, HintFn]]:
        out = []
        for p in self.plugins:
            for ev, fn in p.events_to_register():
                out.append((p.name, ev, fn))
        return out
