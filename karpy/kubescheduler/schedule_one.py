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
from typing import Any, Callable, Optional

from .filtercolumns import FilterColumns, run_prefix
from .framework import CycleState, Framework, _filter_failure
from .nodeinfo import NodeInfo, Snapshot
from .podinfo import PodInfo
from .types import Diagnosis
from .types import (ERR_NO_NODES_AVAILABLE, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND, MIN_FEASIBLE_NODES_TO_FIND, Code,
                    Status)

Nominated = Callable[[str], list[PodInfo]]

#: failed filter passes Algorithm keeps before it drops them all
_FAILED_LIMIT = 64
def _no_nominations(node: str) -> list[PodInfo]:
    """The nominator of a cycle in which no pod is nominated to any node."""
    return []


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

    #: a failed pass over every node recorded at the current journal position repeats without
    #: comparing the generations (False: always compared; the equivalence tests switch it off)
    trust_position = True

    def __init__(self, fwk: Framework, rng: random.Random, percentage_of_nodes_to_score: int = 0) -> None:
        self.fwk = fwk
        self.rng = rng
        self.percentage = percentage_of_nodes_to_score
        self.next_start_node_index = 0
        # The filter passes that found no feasible node (see _pass_filters_or_repeat): (cycle
        # signature, allowed names) -> (candidate generations, (name, status) per candidate in
        # candidate order, rejecting plugins, the pass's Diagnosis, the journal position of a pass
        # over every node or None). All dropped when the node tree changes.
        self._failed: dict[Any, tuple[list[int], list[tuple[str, Status]], frozenset[str], Diagnosis,
                                      Optional[int]]] = {}
        self._failed_tree: Optional[list[NodeInfo]] = None
        # the change-journal positions at which the entries of passes over every node (no
        # PreFilter narrowing) were recorded (see _pass_filters_or_repeat)
        self._failed_at: set[int] = set()
        # _pass_by_columns (filtercolumns.py); by_columns False: the per-node loop only
        self.by_columns = True
        self.columns = FilterColumns()

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
        no feasible node when nothing it read has changed (docs/internals/upstream-mirrors.md#schedule_one)."""
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
        # a pass over every node is looked up only at a journal position an entry was recorded at
        if pos is None or pos in self._failed_at:
            sig = self.fwk.filter_cycle_signature(state, pod, self.fwk._filter_plan(state, pod))
            if sig is None:
                return self._pass_filters(state, pod, nodes, num_all, diag, _no_nominations)
            key = (sig, None if allowed is None else frozenset(allowed))
            hit = self._failed.get(key)
            # recorded at this very journal position: no node's pods changed since (every
            # generation bump of a tree node is journaled), so the generations are equal unread
            if hit is not None and not (self.trust_position and pos is not None and hit[4] == pos):
                gens = [ni.generation for ni in nodes]
                if hit[0] != gens:
                    hit = None
            if hit is not None:
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
        self._failed[key] = (gens, statuses, frozenset(st.plugin for _, st in statuses), diag, pos)
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
        # nodes[(start + i) % n]; RunFilterPlugins inlined with the node-local prefix's memo
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
                    st = run_prefix(local, key, state, pod, ni)
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
        """_pass_filters over the whole node tree with no pod nominated, by columns (filtercolumns.py);
        None (nothing done) when it does not apply."""
        out = self.columns.pass_filters(self.fwk, state, pod, nodes, diag, to_find, self.next_start_node_index)
        if out is None:
            return None
        feasible, processed = out
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
        # the best-score nodes found by list.index: the same randrange calls as the full walk
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
