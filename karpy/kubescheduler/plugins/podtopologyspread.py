"""PodTopologySpread filter and score (incl. system default constraints).

Mirrors pkg/scheduler/framework/plugins/podtopologyspread/{common.go, filtering.go, scoring.go, plugin.go}.
Determinism: domains are iterated in sorted order where Go iterates maps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Optional

from karpy.api.meta import LabelSelector, LabelSelectorRequirement

from ..framework import (_AGGREGATE_LIMIT, ADD, ASSIGNED_POD, DELETE, NODE, UPDATE, UPDATE_NODE_LABEL,
                         UPDATE_NODE_TAINT, ClusterEvent, CycleState, HintFn, LabelCheck, MemoKeys, Plugin,
                         QueueingHint, hint_signature, plugin_status)
from ..nodeinfo import NodeInfo, PerNode, pods_by_labels
from ..podinfo import PodInfo, selector_signature
from ..types import LABEL_HOSTNAME, LABEL_ZONE, MAX_NODE_SCORE, SUCCESS_STATUS, Code, Status, unresolvable, unschedulable
from .helpers import NO_EXECUTE, NO_SCHEDULE, find_matching_untolerated_taint, required_node_affinity_matches

REASON = "node(s) didn't match pod topology spread constraints"
REASON_MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"


@dataclass
class Constraint:
    """topologySpreadConstraint (common.go) with the selector merged with matchLabelKeys."""

    max_skew: int
    topology_key: str
    selector: Optional[LabelSelector]
    min_domains: int = 1
    node_affinity_policy: str = "Honor"
    node_taints_policy: str = "Ignore"

    def matches_inclusion(self, pod: PodInfo, ni: NodeInfo) -> bool:
        """matchNodeInclusionPolicies."""
        if self.node_affinity_policy == "Honor" and not required_node_affinity_matches(pod.spec, ni.node):
            return False
        if self.node_taints_policy == "Honor":
            tols = list(getattr(pod.spec, "tolerations", None) or [])
            if find_matching_untolerated_taint(ni.taints, tols, lambda t: t.effect in (NO_SCHEDULE, NO_EXECUTE)) is not None:
                return False
        return True

    def self_match(self, pod: PodInfo) -> int:
        return 1 if self.selector is not None and self.selector.matches(pod.labels) else 0

    def inclusion_is_trivial(self, pod: PodInfo) -> bool:
        """matches_inclusion is True on every node: the affinity policy is Honor only for a pod
        without nodeSelector / required node affinity (which every node matches), taints ignored."""
        if self.node_taints_policy == "Honor":
            return False
        return self.node_affinity_policy != "Honor" or not _has_required_node_affinity(pod)

    @cached_property
    def selector_key(self) -> Any:
        return selector_signature(self.selector)


def _selectors_signature(pod: PodInfo) -> Any:
    """What the assigned-pod hint reads from the pod: its namespace and its constraints' selectors."""
    return pod.namespace, tuple(selector_signature(c.label_selector)
                                for c in getattr(pod.spec, "topology_spread_constraints", None) or [])


def _topology_keys(pod: PodInfo) -> tuple[str, ...]:
    """What the node hint reads from the pod: its constraints' topology keys."""
    return tuple(c.topology_key for c in getattr(pod.spec, "topology_spread_constraints", None) or [])


def _has_required_node_affinity(pod: PodInfo) -> bool:
    spec = pod.spec
    if getattr(spec, "node_selector", None):
        return True
    aff = getattr(spec, "affinity", None)
    na = getattr(aff, "node_affinity", None) if aff is not None else None
    return na is not None and getattr(na, "required_during_scheduling_ignored_during_execution", None) is not None


_MEMO_LIMIT = 256


#: the bound of a SelectorMatches table (selector signatures) and of each of its rows (pod labels)
_SELECTOR_MATCHES_LIMIT = 4096

#: selector signature -> pod (namespace, labels) -> whether the selector matches
#: (count_matching_on_node's answers, kept by one PodTopologySpread instance)
SelectorMatches = dict[Any, dict[Any, bool]]


def count_matching_on_node(ni: NodeInfo, c: Constraint, ns: str, answers: Optional[SelectorMatches] = None) -> int:
    """count_pods_match_selector(ni.pods, c.selector, ns), memoized on the NodeInfo.

    Performance: the count is a pure function of the node's pods (PodInfos are immutable; any
    add/remove bumps ``ni.generation``), the namespace and the selector, so it is cached per
    (namespace, selector) and reused until the node's pods change. Upstream recounts every node on
    every PreFilter; the counts are identical."""
    sel = c.selector
    if sel is None or sel.is_empty():
        return 0
    key = ("PodTopologySpread", ns, c.selector_key)
    memo = ni.memo
    hit = memo.get(key)
    gen = ni.generation
    if hit is not None and hit[0] == gen:
        count: int = hit[1]
        return count
    # Not in upstream (it matches the selector against every pod): whether the selector matches
    # a pod is a function of the selector (its signature) and the pod's labels alone, so the
    # answers are kept per selector signature and pod (namespace, labels) across nodes and
    # cycles, in ``answers`` (the plugin's; a fresh table when None); the same pods are counted
    # (namespace and terminating are checked as before).
    if answers is None:
        answers = {}
    matches = answers.get(c.selector_key)
    if matches is None:
        if len(answers) >= _SELECTOR_MATCHES_LIMIT:
            answers.clear()
        matches = answers[c.selector_key] = {}
    elif len(matches) >= _SELECTOR_MATCHES_LIMIT:
        matches.clear()
    # Not in upstream either: the pods are taken by labels_key group (nodeinfo.pods_by_labels,
    # kept per node generation); a group counts its non-terminating pods when its namespace
    # (labels_key[0], the pods' namespace) is ``ns`` and the selector matches its labels: the
    # same pods one by one would add exactly those.
    n = 0
    for lk, _n, live, p in pods_by_labels(ni):
        if live and lk[0] == ns:
            r = matches.get(lk)
            if r is None:
                r = matches[lk] = bool(sel.matches(p.labels))
            if r:
                n += live
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[key] = (gen, n)
    return n


SYSTEM_DEFAULT_CONSTRAINTS = ((LABEL_HOSTNAME, 3), (LABEL_ZONE, 5))


def count_pods_match_selector(pods: list[PodInfo], selector: Optional[LabelSelector], ns: str) -> int:
    """common.go countPodsMatchSelector: same namespace, not terminating; empty/nil selector counts 0."""
    if selector is None or selector.is_empty():
        return 0
    return sum(1 for p in pods if p.namespace == ns and not p.terminating and selector.matches(p.labels))


def _node_has_all_keys(ni: NodeInfo, cs: list[Constraint]) -> bool:
    labels = ni.labels
    return all(c.topology_key in labels for c in cs)


def build_constraints(pod: PodInfo, action: str) -> list[Constraint]:
    """filterTopologySpreadConstraints: those with whenUnsatisfiable == action, matchLabelKeys merged.

    Not in upstream (it rebuilds them every PreFilter / PreScore): built once per PodInfo and
    action and kept in ``pod.memo``; same constraints because they are a function of the pod
    object alone (a pod update builds a new PodInfo) and are never changed once built."""
    key = ("PodTopologySpread.constraints", action)
    hit: Optional[list[Constraint]] = pod.memo.get(key)
    if hit is None:
        hit = pod.memo[key] = _build_constraints(pod, action)
    return hit


def _build_constraints(pod: PodInfo, action: str) -> list[Constraint]:
    out = []
    for c in getattr(pod.spec, "topology_spread_constraints", None) or []:
        if c.when_unsatisfiable != action:
            continue
        sel = c.label_selector
        mlk = getattr(c, "match_label_keys", None) or []
        if sel is not None and mlk:
            exprs = list(sel.match_expressions)
            for k in mlk:
                if k in pod.labels:
                    exprs.append(LabelSelectorRequirement(key=k, operator="In", values=[pod.labels[k]]))
            sel = LabelSelector(match_labels=dict(sel.match_labels), match_expressions=exprs)
        out.append(Constraint(
            int(c.max_skew), c.topology_key, sel,
            int(getattr(c, "min_domains", None) or 1),
            getattr(c, "node_affinity_policy", None) or "Honor",
            getattr(c, "node_taints_policy", None) or "Ignore",
        ))
    return out


@dataclass
class _FilterState:
    constraints: list[Constraint]
    counts: list[dict[str, int]] = field(default_factory=list)  # per constraint: domain value -> matching pods
    # Per constraint: the global minimum match count Filter compares against, derived from
    # ``counts`` (upstream keeps it precomputed as TpKeyToCriticalPaths in the PreFilter state and
    # updates it in updateWithPod). Computed lazily, dropped whenever ``counts`` changes.
    _min_match: Optional[list[Optional[int]]] = field(default=None, repr=False, compare=False)
    # (pod, per-constraint selfMatchNum): depends only on the incoming pod, so computed once.
    _self_match: Optional[tuple[Any, list[int]]] = field(default=None, repr=False, compare=False)
    # (pod, per constraint (topology key, domain counts, the most matching pods a domain may hold)):
    # Filter's test as one comparison per constraint (see ``checks``); dropped with ``_min_match``.
    _checks: Optional[tuple[Any, tuple[tuple[str, dict[str, int], int], ...]]] = \
        field(default=None, repr=False, compare=False)
    # The status Filter rejects a node with in this state (see PodTopologySpread.filter).
    _reject: Optional[Status] = field(default=None, repr=False, compare=False)

    def clone(self) -> _FilterState:
        return _FilterState(self.constraints, [dict(c) for c in self.counts])

    def checks(self, pod: PodInfo) -> tuple[tuple[str, dict[str, int], int], ...]:
        """Per constraint: its topology key, its domain counts and the largest matching-pod count
        a domain may hold for ``pod`` to be placed in it.

        Not in upstream (filtering.go computes ``matchNum + selfMatchNum - minMatchNum`` per node
        and compares it with maxSkew); same result because for integers ``match + self - min >
        maxSkew`` exactly when ``match > maxSkew - self + min``, and self / min are fixed while the
        counts are (``update`` drops this with the minimum)."""
        ch = self._checks
        if ch is None or ch[0] is not pod:
            sm = self.self_match(pod)
            ch = self._checks = (pod, tuple(
                (c.topology_key, self.counts[i], c.max_skew - sm[i] + self.min_match(i))
                for i, c in enumerate(self.constraints)))
        return ch[1]

    def reject(self) -> Status:
        """The Unschedulable status (REASON) of this state's rejections.

        Not in upstream (a new *Status per rejected node); same result because a Filter status is
        never changed once returned (RunFilterPlugins sets its plugin, always "PodTopologySpread",
        and the node-local statuses are already shared through NodeInfo.memo), and every reader
        (the FitError histogram, preemption's potential-node test) reads only code and reasons."""
        st = self._reject
        if st is None:
            st = self._reject = unschedulable(REASON)
        return st

    def min_match(self, i: int) -> int:
        """0 when fewer than minDomains domains are eligible, else the smallest count."""
        mm = self._min_match
        if mm is None:
            mm = self._min_match = [None] * len(self.constraints)
        v = mm[i]
        if v is None:
            counts = self.counts[i]
            v = 0 if len(counts) < self.constraints[i].min_domains else (min(counts.values()) if counts else 0)
            mm[i] = v
        return v

    def self_match(self, pod: PodInfo) -> list[int]:
        sm = self._self_match
        if sm is None or sm[0] is not pod:
            sm = self._self_match = (pod, [c.self_match(pod) for c in self.constraints])
        return sm[1]

    def update(self, pod: PodInfo, other: PodInfo, ni: NodeInfo, delta: int) -> None:
        """updateWithPod."""
        if other.namespace != pod.namespace or not _node_has_all_keys(ni, self.constraints):
            return
        self._min_match = None
        self._checks = None
        for i, c in enumerate(self.constraints):
            if not c.matches_inclusion(pod, ni):
                continue
            if c.selector is None or not c.selector.matches(other.labels):
                continue
            v = ni.labels[c.topology_key]
            self.counts[i][v] = self.counts[i].get(v, 0) + delta


def _success(ni: NodeInfo) -> Status:
    return SUCCESS_STATUS


class PodTopologySpread(Plugin):
    """podtopologyspread plugin. ``default_selector(pod)`` returns the merged Service/RS/STS/RC selector
    used for system default constraints (None: the pod gets no default constraints)."""

    name = "PodTopologySpread"
    has_pre_filter = True
    has_filter = True
    has_pre_filter_extensions = True
    has_pre_score = True
    has_score = True
    has_normalize = True

    def __init__(self, defaulting_type: str = "System",
                 default_selector: Optional[Callable[[Any], Optional[LabelSelector]]] = None) -> None:
        self.defaulting_type = defaulting_type
        self.default_selector = default_selector
        self._keys = MemoKeys()
        # per (namespace, constraints) key: each node's share and the domain counts (_count_shares)
        self._aggregates: dict[int, tuple[PerNode[Optional[tuple[int, ...]]], list[dict[str, int]]]] = {}
        #: count_matching_on_node's selector answers, kept across cycles (bounded)
        self._selector_matches: SelectorMatches = {}
        # label_checks' statuses: one object per verdict, the same in every cycle
        self._check_reject = plugin_status(Code.UNSCHEDULABLE, REASON, self.name)
        self._check_missing = plugin_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_MISSING_LABEL, self.name)

    # ---- filter ----
    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> tuple[Status, Optional[set[str]]]:
        cs = build_constraints(pod, "DoNotSchedule")
        if not cs:
            return Status(Code.SKIP), None
        st = _FilterState(cs, [{} for _ in cs])
        trivial = [c.inclusion_is_trivial(pod) for c in cs]
        ns = pod.namespace
        if all(trivial):
            self._count_shares(st, ns, nodes)
            state.data[self.name] = st
            return Status(), None
        for ni in nodes:
            labels = ni.labels
            if not all(c.topology_key in labels for c in cs):  # _node_has_all_keys
                continue
            for i, c in enumerate(cs):
                if not trivial[i] and not c.matches_inclusion(pod, ni):
                    continue
                v = labels[c.topology_key]
                counts = st.counts[i]
                counts[v] = counts.get(v, 0) + count_matching_on_node(ni, c, ns, self._selector_matches)
        state.data[self.name] = st
        return Status(), None

    def _count_shares(self, st: _FilterState, ns: str, nodes: list[NodeInfo]) -> None:
        """PreFilter's counting loop when every constraint's node inclusion is trivial.

        A node's share (None when it lacks a constraint's topology key, else its matching-pod
        count per constraint) depends only on its labels and pods, the namespace and the
        selectors. Not in upstream (it recounts every node each cycle): the shares and the domain
        counts summed from them are kept per (namespace, constraints) across cycles (PerNode) and
        only the nodes whose pods changed are recounted, their difference added to the counts;
        same counts because a sum of per-node shares does not depend on when each was counted,
        and the domains (keys, in node order) are those of the same nodes."""
        cs = st.constraints
        key = self._keys((ns, tuple((c.topology_key, c.selector_key) for c in cs)))
        agg = self._aggregates.get(key)
        if agg is None:
            if len(self._aggregates) >= _AGGREGATE_LIMIT:
                self._aggregates.clear()
            agg = self._aggregates[key] = (PerNode(), [])

        def share_of(ni: NodeInfo) -> Optional[tuple[int, ...]]:
            labels = ni.labels
            if not all(c.topology_key in labels for c in cs):
                return None
            return tuple(count_matching_on_node(ni, c, ns, self._selector_matches) for c in cs)
        shares, counts = agg
        changed = shares.refresh(nodes, share_of)
        if changed is None:
            counts[:] = [{} for _ in cs]
            for ni, share in zip(nodes, shares.values):
                if share is None:
                    continue
                labels = ni.labels
                for i, c in enumerate(cs):
                    v = labels[c.topology_key]
                    domain = counts[i]
                    domain[v] = domain.get(v, 0) + share[i]
        else:
            for n, old, new in changed:
                if old is None or new is None:  # labels are fixed, so both are None
                    continue
                labels = nodes[n].labels
                for i, c in enumerate(cs):
                    if new[i] != old[i]:
                        counts[i][labels[c.topology_key]] += new[i] - old[i]
        st.counts = [dict(d) for d in counts]

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, ni: NodeInfo) -> None:
        st = state.data.get(self.name)
        if st is not None:
            st.update(pod, to_add, ni, 1)

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo, ni: NodeInfo) -> None:
        st = state.data.get(self.name)
        if st is not None:
            st.update(pod, to_remove, ni, -1)

    def filter(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> Status:
        st: Optional[_FilterState] = state.data.get(self.name)
        if st is None:
            return SUCCESS_STATUS
        labels = ni.labels
        # skew = matchNum + selfMatchNum - minMatchNum > maxSkew, as one comparison (_FilterState.checks)
        for key, counts, most in st.checks(pod):
            v = labels.get(key)
            if v is None:
                return unresolvable(REASON_MISSING_LABEL)
            if counts.get(v, 0) > most:
                return st.reject()
        return SUCCESS_STATUS

    def node_filter(self, state: CycleState, pod: PodInfo) -> Callable[[NodeInfo], Status]:
        """``filter`` with the cycle's checks resolved once (the state is not changed during a
        filter pass; the same statuses: a missing label a new one, a rejection the state's)."""
        st: Optional[_FilterState] = state.data.get(self.name)
        if st is None:
            return _success
        checks = st.checks(pod)
        reject = st.reject()
        if len(checks) == 1:
            ((key, counts, most),) = checks

            def one(ni: NodeInfo) -> Status:
                v = ni.labels.get(key)
                if v is None:
                    return unresolvable(REASON_MISSING_LABEL)
                if counts.get(v, 0) > most:
                    return reject
                return SUCCESS_STATUS
            return one

        def every(ni: NodeInfo) -> Status:
            labels = ni.labels
            for key, counts, most in checks:
                v = labels.get(key)
                if v is None:
                    return unresolvable(REASON_MISSING_LABEL)
                if counts.get(v, 0) > most:
                    return reject
            return SUCCESS_STATUS
        return every

    def label_checks(self, state: CycleState, pod: PodInfo) -> Optional[tuple[LabelCheck, ...]]:
        """``node_filter``'s tests as label checks (Plugin.label_checks), one per constraint in
        order: a node without the topology label fails (missing label), a domain holding more
        matching pods than the most allowed is rejected, and so is a domain without a count when
        even none is too many."""
        st: Optional[_FilterState] = state.data.get(self.name)
        if st is None:
            return ()
        reject = self._check_reject
        out = []
        for key, counts, most in st.checks(pod):
            statuses: dict[Optional[str], Optional[Status]] = {v: reject for v, n in counts.items() if n > most}
            statuses[None] = self._check_missing
            if 0 > most:  # (counts are never negative: every value passes only with a count <= most)
                statuses.update((v, None) for v, n in counts.items() if n <= most)
            out.append(LabelCheck(key, statuses, reject if 0 > most else None))
        return tuple(out)

    def filter_state_signature(self, state: CycleState, pod: PodInfo) -> Any:
        """Everything Filter reads: per constraint its topology key, its domain counts and the most
        matching pods a domain may hold (``_FilterState.checks``); None without a PreFilter state."""
        st: Optional[_FilterState] = state.data.get(self.name)
        if st is None:
            return None
        return tuple((key, frozenset(counts.items()), most) for key, counts, most in st.checks(pod))

    # ---- score ----
    def _score_constraints(self, pod: PodInfo) -> tuple[list[Constraint], bool]:
        explicit = getattr(pod.spec, "topology_spread_constraints", None) or []
        if explicit:
            return build_constraints(pod, "ScheduleAnyway"), True
        if self.defaulting_type != "System" or self.default_selector is None:
            return [], True
        sel = self.default_selector(pod.pod)
        if sel is None or sel.is_empty():
            return [], False
        return [Constraint(skew, key, sel) for key, skew in SYSTEM_DEFAULT_CONSTRAINTS], False

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], all_nodes: list[NodeInfo]) -> Status:
        cs, require_all = self._score_constraints(pod)
        if not cs:
            return Status(Code.SKIP)
        ignored: set[str] = set()
        counts: list[dict[str, int]] = [{} for _ in cs]
        sizes = [0] * len(cs)
        for ni in nodes:
            if require_all and not _node_has_all_keys(ni, cs):
                ignored.add(ni.name)
                continue
            for i, c in enumerate(cs):
                if c.topology_key == LABEL_HOSTNAME:
                    sizes[i] += 1
                    continue
                v = ni.labels.get(c.topology_key)
                if v is not None and v not in counts[i]:
                    counts[i][v] = 0
        for i, c in enumerate(cs):
            if c.topology_key != LABEL_HOSTNAME:
                sizes[i] = len(counts[i])
        weights = [math.log(s + 2) for s in sizes]
        for ni in all_nodes:
            if require_all and not _node_has_all_keys(ni, cs):
                continue
            for i, c in enumerate(cs):
                if c.topology_key == LABEL_HOSTNAME:
                    continue
                v = ni.labels.get(c.topology_key)
                if v is None or v not in counts[i] or not c.matches_inclusion(pod, ni):
                    continue
                counts[i][v] += count_matching_on_node(ni, c, pod.namespace, self._selector_matches)
        state.data[self.name + "/score"] = (cs, counts, weights, ignored)
        return Status()

    def score(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> int:
        cs, counts, weights, ignored = state.data[self.name + "/score"]
        if ni.name in ignored:
            return 0
        s = 0.0
        for i, c in enumerate(cs):
            v = ni.labels.get(c.topology_key)
            if v is None:
                continue
            if c.topology_key == LABEL_HOSTNAME:
                cnt = count_matching_on_node(ni, c, pod.namespace, self._selector_matches)
            else:
                cnt = counts[i].get(v, 0)
            s += cnt * weights[i] + (c.max_skew - 1)
        return int(math.floor(s + 0.5))

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[int]) -> None:
        # needs node names: the framework passes scores in node order; ignored nodes recorded via state
        order: list[str] = state.data.get("_score_nodes", [])
        _cs, _counts, _w, ignored = state.data[self.name + "/score"]
        live = [s for n, s in zip(order, scores) if n not in ignored]
        if not live:
            return
        mn, mx = min(live), max(live)
        for i, n in enumerate(order):
            if n in ignored:
                scores[i] = 0
            elif mx == 0:
                scores[i] = MAX_NODE_SCORE
            else:
                scores[i] = MAX_NODE_SCORE * (mx + mn - scores[i]) // mx

    def events_to_register(self) -> list[tuple[ClusterEvent, HintFn]]:
        Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP

        @hint_signature(_selectors_signature)
        def pod_hint(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
            obj = new if new is not None else old
            if obj is None or (getattr(obj.metadata, "namespace", None) or "default") != pod.namespace:
                return SKIP
            labels_sets = [obj.metadata.labels or {}]
            if old is not None and new is not None:
                labels_sets.append(old.metadata.labels or {})
            for c in getattr(pod.spec, "topology_spread_constraints", None) or []:
                if c.label_selector is not None and any(c.label_selector.matches(ls) for ls in labels_sets):
                    return Q
            return SKIP

        @hint_signature(_topology_keys)
        def node_hint(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
            keys = [c.topology_key for c in getattr(pod.spec, "topology_spread_constraints", None) or []]
            if not keys:
                return SKIP
            for n in (old, new):
                if n is not None and any(k in (n.metadata.labels or {}) for k in keys):
                    return Q
            return SKIP
        return [(ClusterEvent(ASSIGNED_POD, ADD), pod_hint), (ClusterEvent(ASSIGNED_POD, UPDATE), pod_hint),
                (ClusterEvent(ASSIGNED_POD, DELETE), pod_hint), (ClusterEvent(NODE, ADD), node_hint),
                (ClusterEvent(NODE, DELETE), node_hint), (ClusterEvent(NODE, UPDATE_NODE_LABEL), node_hint),
                (ClusterEvent(NODE, UPDATE_NODE_TAINT), node_hint)]
