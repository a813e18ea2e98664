"""One scheduling attempt: findNodesThatFitPod, prioritizeNodes, selectHost, FitError message.

Mirrors pkg/scheduler/schedule_one.go (schedulePod, findNodesThatFitPod, findNodesThatPassFilters,
numFeasibleNodesToFind, prioritizeNodes, selectHost) and pkg/scheduler/framework/types.go (FitError.Error).
Filtering is sequential (Go runs 16 workers and may over-check a few nodes); ties in selectHost are
broken by reservoir sampling over the tied nodes in feasible-list order with the seeded RNG.
"""

from __future__ import annotations

import operator
import random
from dataclasses import dataclass, field
from itertools import compress, count, islice
from operator import attrgetter, itemgetter, not_
from typing import Any, Callable, Optional

from .framework import CycleState, Framework, LabelCheck, _run_filter_plugins, _filter_failure
from .nodeinfo import _NODE_MEMO_LIMIT, NodeInfo, PerNode, Snapshot
from .podinfo import PodInfo
from .types import (ERR_NO_NODES_AVAILABLE, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND, MIN_FEASIBLE_NODES_TO_FIND, Code,
                    Status)

Nominated = Callable[[str], list[PodInfo]]

#: failed filter passes Algorithm keeps before it drops them all
_FAILED_LIMIT = 64
#: column passes (one per Filter memo key and check layout) Algorithm keeps before it drops them all
_COLUMNS_LIMIT = 64

_PLUGIN = attrgetter("plugin")
_FIRST = itemgetter(0)


def _run_prefix(plugins: list[Any], key: Optional[int], state: CycleState, pod: PodInfo, ni: NodeInfo) -> Status:
    """RunFilterPlugins over the node-local prefix ``plugins``, the status kept in NodeInfo.memo
    under the plan's memo ``key`` with the node's generation (not an error: it is not kept)."""
    st = _run_filter_plugins(plugins, state, pod, ni)
    if key is not None and st.code != Code.ERROR:
        memo = ni.memo
        if len(memo) >= _NODE_MEMO_LIMIT:
            memo.clear()
        memo[key] = (ni.generation, st)
    return st


class _Columns:
    """One Filter memo key's pass over the node tree by columns (Algorithm._pass_by_columns), for
    one layout of label checks: every node's status in tree order (None: feasible) and what it
    was computed from -- the node-local prefix's statuses (PerNode, through the change journal)
    and each check's statuses by label value as the last cycle gave them."""

    __slots__ = ("prefix", "final", "passes", "statuses", "ids", "defaults")

    def __init__(self) -> None:
        self.prefix: PerNode[Status] = PerNode()
        self.final: list[Optional[Status]] = []
        self.passes: list[bool] = []
        # per check, the last cycle's statuses by label value (kept: their ids stay theirs) and
        # those as value -> id(status)
        self.statuses: list[dict[Optional[str], Optional[Status]]] = []
        self.ids: list[dict[Optional[str], int]] = []
        self.defaults: list[Optional[Status]] = []


def _no_nominations(node: str) -> list[PodInfo]:
    """The nominator of a cycle in which no pod is nominated to any node."""
    return []


@dataclass(slots=True)
class Diagnosis:
    """framework.Diagnosis."""

    node_to_status: dict[str, Status] = field(default_factory=dict)
    absent_status: Optional[Status] = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    #: how many statuses of node_to_status carry each reason, once counted (FitError.message):
    #: node_to_status is complete when a Diagnosis is handed on and never changed afterwards.
    #: Performance only (not in upstream, which counts on every Error() call).
    reason_counts: Optional[dict[str, int]] = None
    #: the earlier Diagnosis whose node_to_status this one repeats (the same nodes mapped to the
    #: same Status objects, the same absent_status code: Algorithm._pass_filters_or_repeat), else
    #: None. Performance only (not in upstream): lets DefaultPreemption reuse what it derived from
    #: the statuses (its potential nodes).
    repeats: Optional[Diagnosis] = None


@dataclass
class FitError(Exception):
    """framework.FitError."""

    pod: PodInfo
    num_all_nodes: int
    diagnosis: Diagnosis

    def message(self) -> str:
        """FitError.Error(): "0/N nodes are available: ..." with reasons histogram sorted lexicographically."""
        msg = f"0/{self.num_all_nodes} nodes are available:"
        d = self.diagnosis
        if d.pre_filter_msg:
            msg += " " + d.pre_filter_msg + "."
        else:
            counts = d.reason_counts
            if counts is None:
                counts = {}
                for st in d.node_to_status.values():
                    for r in st.reasons:
                        counts[r] = counts.get(r, 0) + 1
                d.reason_counts = counts
            hist = dict(counts)
            absent = self.num_all_nodes - len(d.node_to_status)
            if absent > 0 and d.absent_status is not None:
                for r in d.absent_status.reasons:
                    hist[r] = hist.get(r, 0) + absent
            items = sorted(f"{n} {r}" for r, n in hist.items())
            if items:
                msg += " " + ", ".join(items) + "."
        if d.post_filter_msg:
            msg += " " + d.post_filter_msg
        return msg

    __str__ = message


class NoNodesAvailable(Exception):
    """ErrNoNodesAvailable (wrapped as UAU → reason Unschedulable)."""

    def message(self) -> str:
        return ERR_NO_NODES_AVAILABLE


@dataclass(slots=True)
class ScheduleResult:
    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int
    scores: dict[str, int] = field(default_factory=dict)


def num_feasible_nodes_to_find(percentage: int, num_all: int) -> int:
    """numFeasibleNodesToFind (adaptive percentage when 0)."""
    if num_all < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all
    pct = percentage
    if pct == 0:
        pct = 50 - num_all // 125
        if pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    n = num_all * pct // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)


class Algorithm:
    """schedulePod state kept across cycles (nextStartNodeIndex) + the seeded RNG."""

    def __init__(self, fwk: Framework, rng: random.Random, percentage_of_nodes_to_score: int = 0) -> None:
        self.fwk = fwk
        self.rng = rng
        self.percentage = percentage_of_nodes_to_score
        self.next_start_node_index = 0
        # The filter passes that found no feasible node (see _pass_filters_or_repeat): (cycle
        # signature, allowed names) -> (candidate generations, (name, status) per candidate in
        # candidate order, rejecting plugins, the pass's Diagnosis). All dropped when the node
        # tree changes.
        self._failed: dict[Any, tuple[list[int], list[tuple[str, Status]], frozenset[str], Diagnosis]] = {}
        self._failed_tree: Optional[list[NodeInfo]] = None
        # the change-journal positions at which the entries of passes over every node (no
        # PreFilter narrowing) were recorded (see _pass_filters_or_repeat)
        self._failed_at: set[int] = set()
        # _pass_by_columns: its passes by (memo key, check layout); the tree they are aligned to,
        # with each node's name and, per label key, each node's value and the nodes of each value
        self.by_columns = True
        self._columns: dict[Any, _Columns] = {}
        self._columns_tree: Optional[list[NodeInfo]] = None
        self._names: list[str] = []
        self._label_values: dict[str, list[Optional[str]]] = {}
        self._label_nodes: dict[str, dict[Optional[str], list[int]]] = {}

    def find_nodes_that_fit(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo],
                            nominated: Nominated) -> tuple[list[NodeInfo], Diagnosis]:
        diag = Diagnosis()
        st, allowed, rejectors = self.fwk.run_pre_filter(state, pod, nodes)
        if not st.is_success():
            if not st.is_rejected():
                raise RuntimeError(st.message())
            diag.pre_filter_msg = st.message()
            diag.absent_status = st
            diag.unschedulable_plugins |= rejectors or {st.plugin}
            return [], diag
        # nominated-node fast path (KEP-1923)
        nnn = pod.nominated_node_name
        if nnn:
            for ni in nodes:
                if ni.name == nnn and (allowed is None or nnn in allowed):
                    s = self.fwk.run_filter_with_nominated_pods(state, pod, ni, nominated(nnn))
                    if s.is_success():
                        return [ni], diag
                    break
        candidates = nodes
        if allowed is not None:
            candidates = [n for n in nodes if n.name in allowed]
            diag.absent_status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                        [_narrowing_msg(rejectors)] if rejectors else ["node(s) didn't satisfy plugin(s) [NodeAffinity]"])
            if len(candidates) < len(nodes):
                diag.unschedulable_plugins.add("NodeAffinity")
        tree = nodes.tree if isinstance(nodes, Snapshot) else None
        if tree is None or nominated is not _no_nominations:
            feasible = self._pass_filters(state, pod, candidates, len(nodes), diag, nominated)
        else:
            feasible = self._pass_filters_or_repeat(state, pod, candidates, len(nodes), diag, tree, allowed)
        return feasible, diag

    def _pass_filters_or_repeat(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], num_all: int,
                                diag: Diagnosis, tree: list[NodeInfo], allowed: Optional[set[str]]) -> list[NodeInfo]:
        """findNodesThatPassFilters for a cycle without nominated pods, repeating a pass that found
        no feasible node when nothing it read has changed.

        Not in upstream (it runs every Filter plugin on every node each cycle); same result because
        the status of a node is a function of what the plugins read from the pod and the cycle
        state (Framework.filter_cycle_signature) and of the NodeInfo, and the NodeInfos are the same
        (same node-tree list: no node added, removed or updated) with the same pods (generations):
        every candidate gets the status it got before, so no node is feasible, every node is
        visited (processed = len(nodes)) and node_to_status is rebuilt in the visiting order from
        nextStartNodeIndex. The pods of a ReplicaSet whose NodeClaim is still in flight fail this
        way one after another (a Diagnosis is then identical, and so are the messages)."""
        if not nodes:
            return []
        if tree is not self._failed_tree:
            self._failed.clear()
            self._failed_at.clear()
            self._failed_tree = tree
        # (a pass over every node is handed the cycle's snapshot itself, which carries the journal)
        journal = nodes.journal if isinstance(nodes, Snapshot) else None
        pos = journal.position() if journal is not None and allowed is None else None
        key: Any = None
        gens: Optional[list[int]] = None
        # Not in upstream (performance only): a pass over every node of the tree repeats an entry
        # only when no node's generation changed since the entry was recorded, i.e. when the
        # scheduler's change journal (every generation bump of its NodeInfos) is at the position it
        # was at then; at any other position no entry can match, so there is no lookup and the
        # signature is computed only to record a failure, after the pass (Filter plugins change
        # neither the cycle state nor the NodeInfos: it is the value a lookup would have computed).
        if pos is None or pos in self._failed_at:
            sig = self.fwk.filter_cycle_signature(state, pod, self.fwk._filter_plan(state, pod))
            if sig is None:
                return self._pass_filters(state, pod, nodes, num_all, diag, _no_nominations)
            key = (sig, None if allowed is None else frozenset(allowed))
            gens = [ni.generation for ni in nodes]
            hit = self._failed.get(key)
            if hit is not None and hit[0] == gens:
                n = len(nodes)
                start = self.next_start_node_index % n
                statuses = hit[1]
                diag.node_to_status.update(statuses[start:] + statuses[:start] if start else statuses)
                diag.unschedulable_plugins |= hit[2]
                # the same statuses: the same reasons histogram (once the first one's was counted)
                diag.reason_counts = hit[3].reason_counts
                diag.repeats = hit[3]
                self.next_start_node_index = (self.next_start_node_index + n) % max(num_all, 1)
                return []
        feasible = self._pass_filters(state, pod, nodes, num_all, diag, _no_nominations)
        if not feasible:
            if key is None:
                sig = self.fwk.filter_cycle_signature(state, pod, self.fwk._filter_plan(state, pod))
                if sig is None:
                    return feasible
                key = (sig, None)
            self._record_failed(key, nodes, diag, pos, gens)
        return feasible

    def _record_failed(self, key: Any, nodes: list[NodeInfo], diag: Diagnosis, pos: Optional[int],
                       gens: Optional[list[int]] = None) -> None:
        """Keep a pass that found no feasible node under ``key`` (cycle signature, allowed names)
        with the candidates' generations and statuses; ``pos``: the change-journal position of a
        pass over every node (None otherwise)."""
        if len(self._failed) >= _FAILED_LIMIT:
            self._failed.clear()
            self._failed_at.clear()
        statuses = [(ni.name, diag.node_to_status[ni.name]) for ni in nodes]
        if gens is None:
            gens = [ni.generation for ni in nodes]
        self._failed[key] = (gens, statuses, frozenset(st.plugin for _, st in statuses), diag)
        if pos is not None:
            self._failed_at.add(pos)

    def _pass_filters(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], num_all: int,
                      diag: Diagnosis, nominated: Nominated) -> list[NodeInfo]:
        to_find = num_feasible_nodes_to_find(self.percentage, len(nodes))
        if not nodes:
            return []
        check_nominated = nominated is not _no_nominations
        if (self.by_columns and not check_nominated and isinstance(nodes, Snapshot) and nodes.tree is not None
                and nodes.journal is not None and len(nodes) == len(nodes.tree)):
            found = self._pass_by_columns(state, pod, nodes, num_all, diag, to_find)
            if found is not None:
                return found
        feasible: list[NodeInfo] = []
        processed = 0
        n = len(nodes)
        start = self.next_start_node_index % n
        # Performance: same visiting order as nodes[(start + i) % n] for i in range(n), with the
        # framework calls bound once; a node nobody is nominated to goes straight to
        # RunFilterPlugins (RunFilterPluginsWithNominatedPods does only pass 2 in that case), whose
        # loop is inlined here with the node-local prefix's memo (Framework.run_filter, FilterPlan).
        run_nominated = self.fwk.run_filter_with_nominated_pods
        plan = self.fwk._filter_plan(state, pod)
        key = plan.memo_key
        local = plan.local if key is not None else plan.plugins
        # the plugins after the node-local prefix, each bound to this cycle (Plugin.node_filter);
        # the loop below does for them what _run_filter_plugins does
        rest = [(p.name, p.node_filter(state, pod)) for p in plan.rest] if key is not None else []
        node_to_status = diag.node_to_status
        rejectors = diag.unschedulable_plugins
        for ni in (nodes[start:] + nodes[:start]) if start else nodes:
            processed += 1
            noms = nominated(ni.name) if check_nominated else None
            if noms:
                st = run_nominated(state, pod, ni, noms)
            else:
                hit = ni.memo.get(key) if key is not None else None
                if hit is not None and hit[0] == ni.generation:
                    st = hit[1]
                else:
                    st = _run_prefix(local, key, state, pod, ni)
                if not st.code and rest:
                    for name, filt in rest:
                        st = filt(ni)
                        if st.code:
                            st = _filter_failure(st, name)
                            break
            code = st.code
            if not code:
                feasible.append(ni)
                if len(feasible) >= to_find:
                    break
            elif code == Code.ERROR:
                raise RuntimeError(st.message())
            else:
                node_to_status[ni.name] = st
                rejectors.add(st.plugin)
        self.next_start_node_index = (self.next_start_node_index + processed) % max(num_all, 1)
        return feasible

    def _pass_by_columns(self, state: CycleState, pod: PodInfo, nodes: Snapshot, num_all: int, diag: Diagnosis,
                         to_find: int) -> Optional[list[NodeInfo]]:
        """_pass_filters over the whole node tree with no pod nominated, from statuses kept per
        node across cycles; None (nothing done) when it does not apply.

        Not in upstream (findNodesThatPassFilters runs the Filter plugins node by node); same
        result because every node's status is the one the per-node loop would give it: the
        node-local prefix's status as the NodeInfo memo holds it (kept in tree order by PerNode,
        recomputed for the nodes whose generation changed), then, when that is Success, the
        first failing one of the other Filters' label checks (Plugin.label_checks: statuses by
        label value, so a node's status changes only when the prefix's does or a check's status
        for its label value does, which the kept statuses are compared against each cycle by
        identity), None when none fails. The feasible nodes are the first ``to_find`` of them in
        visiting order (from nextStartNodeIndex), the visited nodes those up to the last of them
        (all when fewer pass), and each visited node that fails enters the Diagnosis with its
        status in visiting order, as the loop enters them. A prefix status that is an error
        (which the memo never keeps, and on which the loop raises) sends the pass back to the
        loop, as does a Filter with no label checks."""
        plan = self.fwk._filter_plan(state, pod)
        key = plan.memo_key
        if key is None:
            return None
        checks: list[LabelCheck] = []
        for p in plan.rest:
            got = p.label_checks(state, pod)
            if got is None:
                return None
            checks.extend(got)
        tree = nodes.tree
        assert tree is not None
        if self._columns_tree is not tree:
            self._columns_tree = tree
            self._names = [ni.name for ni in tree]
            self._label_values = {}
            self._label_nodes = {}
        layout = (key, tuple(c.key for c in checks))
        cols = self._columns.get(layout)
        if cols is None:
            if len(self._columns) >= _COLUMNS_LIMIT:
                self._columns.clear()
            cols = self._columns[layout] = _Columns()
        local = plan.local
        error = False

        def prefix_status(ni: NodeInfo) -> Status:
            # the loop's memo lookup, else its run of the prefix
            nonlocal error
            hit = ni.memo.get(key)
            if hit is not None and hit[0] == ni.generation:
                st: Status = hit[1]
                return st
            st = _run_prefix(local, key, state, pod, ni)
            error = error or st.code == Code.ERROR
            return st
        try:
            changed = cols.prefix.refresh(nodes, prefix_status)
        except BaseException:
            del self._columns[layout]  # (refreshed part-way)
            raise
        if error:
            del self._columns[layout]
            return None
        values = []
        for c in checks:
            vals = self._label_values.get(c.key)
            if vals is None:
                vals = self._label_values[c.key] = [ni.labels.get(c.key) for ni in tree]
            values.append(vals)
        ids = [dict(zip(c.statuses, map(id, c.statuses.values()))) for c in checks]
        prefix = cols.prefix.values
        if changed is None or any(c.default is not d for c, d in zip(checks, cols.defaults)):
            # (a new tree, or a first pass: PerNode recomputed or took over every value)
            redo: Any = range(len(tree))
            cols.final = [None] * len(tree)
            cols.passes = [False] * len(tree)
        else:
            redo = {i for i, _old, _new in changed}
            for j, c in enumerate(checks):
                moved = ids[j].items() ^ cols.ids[j].items()
                if moved:
                    index = self._label_nodes.get(c.key)
                    if index is None:
                        index = self._label_nodes[c.key] = {}
                        for i, v in enumerate(values[j]):
                            index.setdefault(v, []).append(i)
                    for v in set(map(_FIRST, moved)):
                        redo.update(index.get(v, ()))
        final, passes = cols.final, cols.passes
        for i in redo:
            st: Optional[Status] = prefix[i]
            if not st.code:  # type: ignore[union-attr]
                st = None
                for c, vals in zip(checks, values):
                    st = c.statuses.get(vals[i], c.default)
                    if st is not None:
                        break
            final[i] = st
            passes[i] = st is None
        cols.statuses = [c.statuses for c in checks]
        cols.ids = ids
        cols.defaults = [c.default for c in checks]
        n = len(nodes)
        start = self.next_start_node_index % n
        if start:
            passes = passes[start:] + passes[:start]
        picked = list(islice(compress(count(), passes), to_find))
        processed = picked[-1] + 1 if len(picked) >= to_find else n
        order = nodes[start:] + nodes[:start] if start else nodes
        feasible = list(map(order.__getitem__, picked))
        if len(picked) < processed:  # some visited node failed
            names = self._names
            if start:
                final = final[start:] + final[:start]
                names = names[start:] + names[:start]
            visited_failed = list(map(not_, passes[:processed]))
            failed = list(compress(final, visited_failed))
            diag.node_to_status.update(zip(compress(names, visited_failed), failed))  # type: ignore[arg-type]
            diag.unschedulable_plugins.update(map(_PLUGIN, failed))
        self.next_start_node_index = (self.next_start_node_index + processed) % max(num_all, 1)
        return feasible

    def schedule_pod(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], nominated: Nominated) -> ScheduleResult:
        """schedulePod: raises NoNodesAvailable / FitError on failure."""
        if not nodes:
            raise NoNodesAvailable()
        feasible, diag = self.find_nodes_that_fit(state, pod, nodes, nominated)
        if not feasible:
            raise FitError(pod, len(nodes), diag)
        evaluated = len(diag.node_to_status) + len(feasible)
        if len(feasible) == 1:
            return ScheduleResult(feasible[0].name, evaluated, 1)
        scores = self.prioritize(state, pod, feasible, nodes)
        host = self.select_host(feasible, scores)
        # (the feasible nodes' names, in order, as prioritize recorded them for the cycle)
        names = state.data.get("_score_nodes")
        if names is None or len(names) != len(feasible):
            names = [n.name for n in feasible]
        return ScheduleResult(host, evaluated, len(feasible), dict(zip(names, scores)))

    def prioritize(self, state: CycleState, pod: PodInfo, feasible: list[NodeInfo], all_nodes: list[NodeInfo]) -> list[int]:
        """prioritizeNodes: PreScore, Score, NormalizeScore, weights (no extenders)."""
        if not self.fwk.score_plugins:
            return [1] * len(feasible)
        st = self.fwk.run_pre_score(state, pod, feasible, all_nodes)
        if not st.is_success():
            raise RuntimeError(st.message())
        state.data["_score_nodes"] = list(map(_node_name, feasible))  # [n.name for n in feasible]
        state.data["_total_nodes"] = len(all_nodes)
        totals, _ = self.fwk.run_score(state, pod, feasible)
        return totals

    def select_host(self, feasible: list[NodeInfo], scores: list[int]) -> str:
        """selectHost: uniform choice among the max-score nodes by reservoir sampling."""
        best = max(scores)
        # Not in upstream (selectHost walks every feasible node); same result because only the
        # nodes with the best score draw, and they are found in node order by C-level list.index
        # scans: the same rng.randrange(cnt) calls, cnt = 2, 3, ... in the same order, so the same
        # reservoir choice.
        i = scores.index(best)
        selected = feasible[i].name
        cnt = 1
        randrange = self.rng.randrange
        index = scores.index
        while True:
            try:
                i = index(best, i + 1)
            except ValueError:
                return selected
            cnt += 1
            if randrange(cnt) == 0:
                selected = feasible[i].name


#: a NodeInfo's name (for C-level maps over a node list)
_node_name = operator.attrgetter("name")


def _narrowing_msg(plugins: set[str]) -> str:
    names = sorted(plugins)
    if len(names) > 1:
        return f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
    return f"node(s) didn't satisfy plugin(s) [{names[0]}]"
