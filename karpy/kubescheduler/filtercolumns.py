"""Answers schedule_one.go findNodesThatPassFilters over the whole node tree from per-node statuses kept
across cycles (the node-local Filters' memo, the others as label checks) -- the same feasible nodes,
Diagnosis and nextStartNodeIndex as the per-node loop, pinned by
tests/kubescheduler/test_filtercolumns_equivalence.py (why: docs/internals/upstream-mirrors.md#filtercolumns)."""

from __future__ import annotations

from itertools import compress, count, islice
from operator import attrgetter, itemgetter, not_
from typing import TYPE_CHECKING, Any, Optional

from .framework import CycleState, Framework, LabelCheck, _run_filter_plugins
from .nodeinfo import _NODE_MEMO_LIMIT, NodeInfo, PerNode, Snapshot
from .podinfo import PodInfo
from .types import Code, Status

if TYPE_CHECKING:
    from .types import Diagnosis

__all__ = ["FilterColumns", "run_prefix"]

#: column passes (one per Filter memo key and check layout) kept before they are all dropped
_COLUMNS_LIMIT = 64

_PLUGIN = attrgetter("plugin")
_FIRST = itemgetter(0)


def run_prefix(plugins: list[Any], key: Optional[int], state: CycleState, pod: PodInfo, ni: NodeInfo) -> Status:
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
    """One Filter memo key's pass over the node tree, for one layout of label checks: every node's
    status in tree order (None: feasible) and what it was computed from -- the node-local prefix's
    statuses (PerNode, through the change journal) and each check's statuses by label value as the
    last cycle gave them."""

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


class FilterColumns:
    """The column passes of one Algorithm, aligned to one node tree: each node's name and, per label
    key, each node's value and the nodes of each value."""

    def __init__(self) -> None:
        self._columns: dict[Any, _Columns] = {}
        self._tree: Optional[list[NodeInfo]] = None
        self._names: list[str] = []
        self._label_values: dict[str, list[Optional[str]]] = {}
        self._label_nodes: dict[str, dict[Optional[str], list[int]]] = {}

    def pass_filters(self, fwk: Framework, state: CycleState, pod: PodInfo, nodes: Snapshot, diag: Diagnosis,
                     to_find: int, start_index: int) -> Optional[tuple[list[NodeInfo], int]]:
        """The feasible nodes and the number of nodes visited from ``start_index`` (the loop's
        nextStartNodeIndex), the visited failures entered into ``diag``; None (nothing done) when
        a Filter has no label checks or a prefix status is an error (the loop then runs)."""
        plan = fwk._filter_plan(state, pod)
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
        if self._tree is not tree:
            self._tree = tree
            self._names = [ni.name for ni in tree]
            self._label_values = {}
            self._label_nodes = {}
        layout = (key, tuple(c.key for c in checks))
        cols = self._columns.get(layout)
        if cols is None:
            if len(self._columns) >= _COLUMNS_LIMIT:
                self._columns.clear()
            cols = self._columns[layout] = _Columns()
        changed = self._refresh_prefix(cols, layout, plan.local, key, state, pod, nodes)
        if changed is False:
            return None
        self._update(cols, checks, tree, changed)
        return self._pick(cols, nodes, diag, to_find, start_index)

    def _refresh_prefix(self, cols: _Columns, layout: Any, local: list[Any], key: int, state: CycleState,
                        pod: PodInfo, nodes: Snapshot) -> Any:
        """PerNode.refresh of the prefix's statuses (the loop's memo lookup, else its run of the
        prefix); False (the pass dropped) when a status is an error."""
        error = False

        def prefix_status(ni: NodeInfo) -> Status:
            nonlocal error
            hit = ni.memo.get(key)
            if hit is not None and hit[0] == ni.generation:
                st: Status = hit[1]
                return st
            st = run_prefix(local, key, state, pod, ni)
            error = error or st.code == Code.ERROR
            return st
        try:
            changed = cols.prefix.refresh(nodes, prefix_status)
        except BaseException:
            del self._columns[layout]  # (refreshed part-way)
            raise
        if error:
            del self._columns[layout]
            return False
        return changed

    def _update(self, cols: _Columns, checks: list[LabelCheck], tree: list[NodeInfo], changed: Any) -> None:
        """Recompute the final status of the nodes whose prefix status or check status changed."""
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

    def _pick(self, cols: _Columns, nodes: Snapshot, diag: Diagnosis, to_find: int,
              start_index: int) -> tuple[list[NodeInfo], int]:
        """The first ``to_find`` feasible nodes in visiting order and the number visited; each
        visited node that fails enters ``diag`` in visiting order."""
        final, passes = cols.final, cols.passes
        n = len(nodes)
        start = start_index % n
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
        return feasible, processed
