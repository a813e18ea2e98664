"""InterPodAffinity filter and score.

Mirrors pkg/scheduler/framework/plugins/interpodaffinity/{filtering.go, scoring.go, plugin.go}.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..framework import (ADD, ASSIGNED_POD, DELETE, NODE, UPDATE, UPDATE_NODE_LABEL, ClusterEvent, CycleState,
                         _AGGREGATE_LIMIT, HintFn, LabelCheck, MemoKeys, Plugin, QueueingHint, hint_signature,
                         plugin_status)
from ..nodeinfo import NodeInfo, PerNode, have_pods_with_affinity, pods_by_labels
from ..podinfo import AffinityTerm, PodInfo, WeightedAffinityTerm, new_pod_info
from ..types import MAX_NODE_SCORE, SUCCESS_STATUS, Code, Status, unresolvable, unschedulable

REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"

Pair = tuple[str, str]


def _inc(m: dict[Pair, int], key: str, labels: dict[str, str], d: int) -> None:
    if key in labels:
        p = (key, labels[key])
        m[p] = m.get(p, 0) + d
        if m[p] == 0:
            del m[p]


def _matches_all(terms: list[AffinityTerm], pod: PodInfo) -> bool:
    return all(t.matches(pod) for t in terms)


@dataclass
class _State:
    existing_anti: dict[Pair, int] = field(default_factory=dict)
    affinity: dict[Pair, int] = field(default_factory=dict)
    anti: dict[Pair, int] = field(default_factory=dict)
    # The topology keys of existing_anti's positive counts (see existing_keys); None = not known.
    _existing_keys: Optional[tuple[str, ...]] = field(default=None, repr=False, compare=False)

    def clone(self) -> _State:
        return _State(dict(self.existing_anti), dict(self.affinity), dict(self.anti))

    def existing_keys(self) -> tuple[str, ...]:
        """The topology keys (first-seen order) of the existing-anti counts above zero.

        Not in upstream (satisfyExistingPodsAntiAffinity looks up every label of the node); same
        answer because a node label (k, v) has a positive count exactly when k is one of these
        keys and the count of (k, node's value of k) is positive, and Filter only asks whether
        one exists. A node has a dozen labels, the counts one or two keys."""
        keys = self._existing_keys
        if keys is None:
            keys = self._existing_keys = tuple(dict.fromkeys(k for (k, _v), n in self.existing_anti.items() if n > 0))
        return keys

    def update(self, pod: PodInfo, other: PodInfo, labels: dict[str, str], d: int) -> None:
        """preFilterState.updateWithPod."""
        self._existing_keys = None
        for t in other.required_anti_affinity_terms:
            if t.matches(pod):
                _inc(self.existing_anti, t.topology_key, labels, d)
        if pod.required_affinity_terms and _matches_all(pod.required_affinity_terms, other):
            for t in pod.required_affinity_terms:
                _inc(self.affinity, t.topology_key, labels, d)
        for t in pod.required_anti_affinity_terms:
            if t.matches(other):
                _inc(self.anti, t.topology_key, labels, d)


def _terms_signature(pod: PodInfo) -> Any:
    """What the assigned-pod hint reads from the pod: its required (anti-)affinity terms (as
    AffinityTerm.matches reads them) and its namespace and labels."""
    return (tuple(t.signature for t in pod.required_affinity_terms),
            tuple(t.signature for t in pod.required_anti_affinity_terms), pod.labels_key)


def _topology_keys(pod: PodInfo) -> frozenset[str]:
    """What the node hint reads from the pod: its required terms' topology keys."""
    return frozenset(t.topology_key for t in pod.required_affinity_terms + pod.required_anti_affinity_terms)


def _weighted_signature(terms: list[WeightedAffinityTerm]) -> tuple[Any, ...]:
    """Everything the score walk reads from weighted terms: weight, topology key, match signature."""
    return tuple((w.weight, w.term.topology_key, w.term.signature) for w in terms)


def _add_score_share(sums: dict[str, dict[str, int]], entries: dict[Pair, int],
                     share: tuple[tuple[str, str, int], ...], sign: int) -> None:
    """Add (sign 1) or take away (-1) one node's PreScore share: an entry leaves the scores when
    no share holds it any more (its sum is then 0)."""
    for k, v, w in share:
        pair = (k, v)
        n = entries.get(pair, 0) + sign
        m = sums.get(k)
        if m is None:
            m = sums[k] = {}
        if n:
            entries[pair] = n
            m[v] = m.get(v, 0) + sign * w
        else:
            del entries[pair]
            del m[v]
            if not m:
                del sums[k]


def _add_weight(score: dict[str, dict[str, int]], labels: dict[str, str], key: str, w: int) -> None:
    """processExistingPod's add: ``w`` to the node's (key, value) entry when it has the label."""
    if key in labels:
        m = score.setdefault(key, {})
        m[labels[key]] = m.get(labels[key], 0) + w


#: term signatures whose (other pod) match results InterPodAffinity keeps across cycles before it
#: drops them all, and the results one signature keeps before it drops its own
_MATCH_LIMIT = 4096


#: AffinityTerm signatures -> small ids (_signature_id); dropped when full. The ids come from a
#: process-wide count, so an id never stands for two signatures (a signature may get a second
#: id after a drop: its results are then recomputed, never mixed up)
_SIGNATURE_IDS: dict[Any, int] = {}
_SIGNATURE_ID_COUNT = itertools.count()
_SIGNATURE_ID_LIMIT = 1 << 16
_SIGNATURE_TOKEN = object()


def _signature_id(t: AffinityTerm) -> int:
    """A small int standing for ``t.signature`` (terms with equal signatures match the same pods),
    kept on the term like the signature itself (a term is never changed once built), with this
    process's token: a term copied from another process gets its id here again."""
    d = t.__dict__
    hit = d.get("_signature_id")
    if hit is not None and hit[0] is _SIGNATURE_TOKEN:
        sid: int = hit[1]
        return sid
    sig = t.signature
    found = _SIGNATURE_IDS.get(sig)
    if found is None:
        if len(_SIGNATURE_IDS) >= _SIGNATURE_ID_LIMIT:
            _SIGNATURE_IDS.clear()
        found = _SIGNATURE_IDS[sig] = next(_SIGNATURE_ID_COUNT)
    d["_signature_id"] = (_SIGNATURE_TOKEN, found)
    return found


class _MatchMemo:
    """Per-cycle memo of AffinityTerm.matches results.

    Performance: ``matches`` is a pure function of the term (its ``signature``) and of the other
    pod's namespace and labels (``labels_key``). Upstream evaluates it for every (term, pod) pair
    it walks; within one cycle most of those pairs repeat (replicas share terms and labels), so the
    results are cached — the walk order and every count stay exactly as upstream's. The results
    for other pods do not depend on the incoming pod, so the plugin hands every cycle the same
    ``by_other`` table (term signature id -> labels_key -> result; bounded by _MATCH_LIMIT
    signatures, and each signature's results by _MATCH_LIMIT, then emptied).

    Signatures are looked up by their id (``_signature_id``, kept on each term), so a term's
    deep signature is hashed once per term, not once per lookup."""

    __slots__ = ("incoming", "by_incoming", "by_other")

    def __init__(self, incoming: PodInfo, by_other: Optional[dict[int, dict[Any, bool]]] = None) -> None:
        self.incoming = incoming
        self.by_incoming: dict[int, bool] = {}  # term signature id -> term.matches(incoming)
        # term signature id -> other.labels_key -> term.matches(other)
        self.by_other: dict[int, dict[Any, bool]] = {} if by_other is None else by_other

    def term_matches_incoming(self, t: AffinityTerm) -> bool:
        hit = t.__dict__.get("_signature_id")
        sid = hit[1] if hit is not None and hit[0] is _SIGNATURE_TOKEN else _signature_id(t)
        r = self.by_incoming.get(sid)
        if r is None:
            r = self.by_incoming[sid] = t.matches(self.incoming)
        return r

    def term_matches(self, t: AffinityTerm, other: PodInfo) -> bool:
        hit = t.__dict__.get("_signature_id")
        sid = hit[1] if hit is not None and hit[0] is _SIGNATURE_TOKEN else _signature_id(t)
        row = self.by_other.get(sid)
        if row is None:
            if len(self.by_other) >= _MATCH_LIMIT:
                self.by_other.clear()
            row = self.by_other[sid] = {}
        lk = other.labels_key
        r = row.get(lk)
        if r is None:
            if len(row) >= _MATCH_LIMIT:
                row.clear()
            r = row[lk] = t.matches(other)
        return r

    def all_match(self, terms: list[AffinityTerm], other: PodInfo) -> bool:
        for t in terms:
            if not self.term_matches(t, other):
                return False
        return True


def _success(ni: NodeInfo) -> Status:
    return SUCCESS_STATUS


class InterPodAffinity(Plugin):
    """interpodaffinity plugin (hardPodAffinityWeight 1, ignorePreferredTermsOfExistingPods false)."""

    name = "InterPodAffinity"
    has_pre_filter = True
    has_filter = True
    has_pre_filter_extensions = True
    has_pre_score = True
    has_score = True
    has_normalize = True

    def __init__(self, hard_pod_affinity_weight: int = 1, ignore_preferred_terms_of_existing_pods: bool = False) -> None:
        self.hard_weight = hard_pod_affinity_weight
        self.ignore_preferred_existing = ignore_preferred_terms_of_existing_pods
        self._keys = MemoKeys()
        # PreFilter's counts per pod signature, with each node's share (_aggregate)
        self._aggregates: dict[int, tuple[PerNode[Any], list[dict[Pair, int]]]] = {}
        # PreScore's topology scores per share key: each node's share, the scores, each entry's
        # count of shares holding it (pre_score)
        self._by_other: dict[int, dict[Any, bool]] = {}  # _MatchMemo.by_other, kept across cycles
        self._score_aggregates: dict[int, tuple[PerNode[Any], dict[str, dict[str, int]], dict[Pair, int]]] = {}
        # label_checks' statuses: one object per verdict, the same in every cycle
        self._check_affinity = plugin_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_AFFINITY, self.name)
        self._check_anti = plugin_status(Code.UNSCHEDULABLE, REASON_ANTI_AFFINITY, self.name)
        self._check_existing = plugin_status(Code.UNSCHEDULABLE, REASON_EXISTING_ANTI_AFFINITY, self.name)

    def _match_memo(self, pod: PodInfo) -> _MatchMemo:
        """A cycle's match memo, sharing the other pods' results with the previous cycles."""
        return _MatchMemo(pod, self._by_other)

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> tuple[Status, Optional[set[str]]]:
        """getExistingAntiAffinityCounts + getIncomingAffinityAntiAffinityCounts.

        A node's share of each count is a pure function of its pods, its labels and the incoming
        pod's terms (the existing-anti share: of the incoming pod's namespace and labels). Not in
        upstream (it walks the nodes each cycle): the shares and the counts summed from them are
        kept per pod signature across cycles (PerNode), and only the nodes whose pods changed are
        walked again, their difference added to the counts; same counts because a sum of per-node
        shares does not depend on when each was taken (a count that falls to zero is dropped, as
        the walk never creates one)."""
        memo = self._match_memo(pod)
        # getExistingAntiAffinityCounts walks havePodsWithRequiredAntiAffinityNodeInfoList: only the
        # nodes that hold a pod with required anti-affinity (the others contribute nothing).
        existing_key = self._keys(("existing", pod.labels_key))

        def existing_share(ni: NodeInfo) -> tuple[tuple[str, int], ...]:
            if not ni.pods_with_required_anti_affinity:
                return ()
            share: dict[str, int] = {}
            for other in ni.pods_with_required_anti_affinity:
                for t in other.required_anti_affinity_terms:
                    if memo.term_matches_incoming(t):
                        share[t.topology_key] = share.get(t.topology_key, 0) + 1
            return tuple(share.items())

        def add_existing(counts: list[dict[Pair, int]], labels: dict[str, str], share: Any, sign: int) -> None:
            for key, n in share:
                _inc(counts[0], key, labels, sign * n)
        existing_anti = self._aggregate(existing_key, nodes, existing_share, add_existing, 1)[0]
        aff_terms = pod.required_affinity_terms
        anti_terms = pod.required_anti_affinity_terms
        if not aff_terms and not anti_terms and not existing_anti:
            return Status(Code.SKIP), None
        st = _State(dict(existing_anti))
        if aff_terms or anti_terms:
            # the counts are keyed by the terms' topology keys too (AffinityTerm.signature has none)
            incoming_key = self._keys(("incoming", tuple((t.signature, t.topology_key) for t in aff_terms),
                                       tuple((t.signature, t.topology_key) for t in anti_terms)))

            def incoming_share(ni: NodeInfo) -> tuple[int, tuple[int, ...]]:
                # Not in upstream (it matches the terms against every pod): the pods are taken by
                # labels_key group (nodeinfo.pods_by_labels), each group counting its size; same
                # counts because a term's match reads only the pod's namespace and labels (the
                # match memo's key), equal within a group, and terminating pods count here too.
                n_aff = 0
                n_anti = [0] * len(anti_terms)
                for _lk, n, _live, other in pods_by_labels(ni):
                    if aff_terms and memo.all_match(aff_terms, other):
                        n_aff += n
                    for i, t in enumerate(anti_terms):
                        if memo.term_matches(t, other):
                            n_anti[i] += n
                return n_aff, tuple(n_anti)

            def add_incoming(counts: list[dict[Pair, int]], labels: dict[str, str], share: Any, sign: int) -> None:
                n_aff, anti_counts = share
                if n_aff:
                    for t in aff_terms:
                        _inc(counts[0], t.topology_key, labels, sign * n_aff)
                for t, n in zip(anti_terms, anti_counts):
                    if n:
                        _inc(counts[1], t.topology_key, labels, sign * n)
            affinity, anti = self._aggregate(incoming_key, nodes, incoming_share, add_incoming, 2)
            st.affinity, st.anti = dict(affinity), dict(anti)
        state.data[self.name] = st
        return Status(), None

    def _aggregate(self, key: int, nodes: list[NodeInfo], share_of: Callable[[NodeInfo], Any],
                   add: Callable[[list[dict[Pair, int]], dict[str, str], Any, int], None],
                   n: int) -> list[dict[Pair, int]]:
        """The ``n`` count dicts ``add`` sums from every node's share (``share_of``), kept under
        ``key`` across cycles and brought up to date from the nodes whose pods changed (PerNode).
        The returned dicts are the kept ones: callers copy them."""
        agg = self._aggregates.get(key)
        if agg is None:
            if len(self._aggregates) >= _AGGREGATE_LIMIT:
                self._aggregates.clear()
            agg = self._aggregates[key] = (PerNode(), [{} for _ in range(n)])
        shares, counts = agg
        changed = shares.refresh(nodes, share_of)
        if changed is None:
            for c in counts:
                c.clear()
            for ni, share in zip(nodes, shares.values):
                add(counts, ni.labels, share, 1)
        else:
            for i, old, new in changed:
                labels = nodes[i].labels
                add(counts, labels, old, -1)
                add(counts, labels, new, 1)
        return counts

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, ni: NodeInfo) -> None:
        st = state.data.get(self.name)
        if st is not None:
            st.update(pod, to_add, ni.labels, 1)

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo, ni: NodeInfo) -> None:
        st = state.data.get(self.name)
        if st is not None:
            st.update(pod, to_remove, ni.labels, -1)

    def filter(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> Status:
        st: Optional[_State] = state.data.get(self.name)
        if st is None:
            return SUCCESS_STATUS
        labels = ni.labels
        # satisfyPodAffinity
        pods_exist = True
        for t in pod.required_affinity_terms:
            if t.topology_key not in labels:
                return unresolvable(REASON_AFFINITY)
            if st.affinity.get((t.topology_key, labels[t.topology_key]), 0) <= 0:
                pods_exist = False
        if not pods_exist:
            if not (not st.affinity and _matches_all(pod.required_affinity_terms, pod)):
                return unresolvable(REASON_AFFINITY)
        # satisfyPodAntiAffinity
        for t in pod.required_anti_affinity_terms:
            v = labels.get(t.topology_key)
            if v is not None and st.anti.get((t.topology_key, v), 0) > 0:
                return unschedulable(REASON_ANTI_AFFINITY)
        # satisfyExistingPodsAntiAffinity (nothing to look up when no existing pod's term matched)
        existing_anti = st.existing_anti
        if existing_anti:
            for k in st.existing_keys():
                v = labels.get(k)
                if v is not None and existing_anti.get((k, v), 0) > 0:
                    return unschedulable(REASON_EXISTING_ANTI_AFFINITY)
        return SUCCESS_STATUS

    def node_filter(self, state: CycleState, pod: PodInfo) -> Callable[[NodeInfo], Status]:
        """``filter`` with the cycle's PreFilter state resolved once (it is not changed during a
        filter pass): the same tests in the same order, the same statuses."""
        st: Optional[_State] = state.data.get(self.name)
        if st is None:
            return _success
        aff_keys = tuple(t.topology_key for t in pod.required_affinity_terms)
        anti_keys = tuple(t.topology_key for t in pod.required_anti_affinity_terms)
        affinity, anti, existing_anti = st.affinity, st.anti, st.existing_anti
        # satisfyPodAffinity's "no pod matches anywhere, but the pod matches its own terms"
        self_ok = bool(aff_keys) and not affinity and _matches_all(pod.required_affinity_terms, pod)
        existing_keys = st.existing_keys() if existing_anti else ()

        def filt(ni: NodeInfo) -> Status:
            labels = ni.labels
            pods_exist = True
            for k in aff_keys:
                if k not in labels:
                    return unresolvable(REASON_AFFINITY)
                if affinity.get((k, labels[k]), 0) <= 0:
                    pods_exist = False
            if not pods_exist and not self_ok:
                return unresolvable(REASON_AFFINITY)
            for k in anti_keys:
                v = labels.get(k)
                if v is not None and anti.get((k, v), 0) > 0:
                    return unschedulable(REASON_ANTI_AFFINITY)
            for k in existing_keys:
                v = labels.get(k)
                if v is not None and existing_anti.get((k, v), 0) > 0:
                    return unschedulable(REASON_EXISTING_ANTI_AFFINITY)
            return SUCCESS_STATUS
        return filt

    def label_checks(self, state: CycleState, pod: PodInfo) -> Optional[tuple[LabelCheck, ...]]:
        """``node_filter``'s tests as label checks (Plugin.label_checks), in its order: the
        affinity term's key (missing: unresolvable; a domain without a matching pod fails unless
        the pod may be the first, self_ok), each anti-affinity term's key, then each key of the
        existing pods' anti-affinity (a domain with a positive count is rejected, a missing label
        passes). None with two or more affinity terms (their "every key's domain has a match"
        test reads all their keys at once)."""
        st: Optional[_State] = state.data.get(self.name)
        if st is None:
            return ()
        aff_terms = pod.required_affinity_terms
        if len(aff_terms) > 1:
            return None
        out = []
        if aff_terms:
            key = aff_terms[0].topology_key
            self_ok = not st.affinity and _matches_all(aff_terms, pod)
            fail = None if self_ok else self._check_affinity
            statuses: dict[Optional[str], Optional[Status]] = {
                v: (None if n > 0 else fail) for (k, v), n in st.affinity.items() if k == key}
            statuses[None] = self._check_affinity
            out.append(LabelCheck(key, statuses, fail))
        anti = self._check_anti
        for t in pod.required_anti_affinity_terms:
            key = t.topology_key
            out.append(LabelCheck(key, {v: anti for (k, v), n in st.anti.items() if k == key and n > 0}, None))
        if st.existing_anti:
            existing = self._check_existing
            for key in st.existing_keys():
                out.append(LabelCheck(key, {v: existing for (k, v), n in st.existing_anti.items() if k == key and n > 0},
                                      None))
        return tuple(out)

    def filter_state_signature(self, state: CycleState, pod: PodInfo) -> Any:
        """Everything Filter reads: the PreFilter counts, the required terms' topology keys and
        whether the affinity terms match the pod itself (their signatures, its namespace and
        labels); None without a PreFilter state."""
        st: Optional[_State] = state.data.get(self.name)
        if st is None:
            return None
        return (tuple((t.signature, t.topology_key) for t in pod.required_affinity_terms),
                tuple(t.topology_key for t in pod.required_anti_affinity_terms), pod.labels_key,
                frozenset(st.affinity.items()), frozenset(st.anti.items()), frozenset(st.existing_anti.items()))

    # ---- score ----
    def _process_existing(self, pod: PodInfo, other: PodInfo, labels: dict[str, str],
                          score: dict[str, dict[str, int]], memo: Optional[_MatchMemo] = None) -> None:
        if memo is None:
            memo = _MatchMemo(pod)
        def add(key: str, w: int) -> None:
            if key in labels:
                m = score.setdefault(key, {})
                m[labels[key]] = m.get(labels[key], 0) + w
        for wt in pod.preferred_affinity_terms:
            if memo.term_matches(wt.term, other):
                add(wt.term.topology_key, wt.weight)
        for wt in pod.preferred_anti_affinity_terms:
            if memo.term_matches(wt.term, other):
                add(wt.term.topology_key, -wt.weight)
        if self.hard_weight > 0:
            for t in other.required_affinity_terms:
                if memo.term_matches_incoming(t):
                    add(t.topology_key, self.hard_weight)
        if not self.ignore_preferred_existing:
            for wt in other.preferred_affinity_terms:
                if memo.term_matches_incoming(wt.term):
                    add(wt.term.topology_key, wt.weight)
            for wt in other.preferred_anti_affinity_terms:
                if memo.term_matches_incoming(wt.term):
                    add(wt.term.topology_key, -wt.weight)

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], all_nodes: list[NodeInfo]) -> Status:
        has_pref = bool(pod.preferred_affinity_terms or pod.preferred_anti_affinity_terms)
        if self.ignore_preferred_existing and not has_pref:
            return Status(Code.SKIP)
        memo = self._match_memo(pod)
        # Performance: a node's share of the topology scores (the (key, value, weight) entries its
        # pods add) depends only on its labels and pods and on the incoming pod's preferred terms,
        # namespace and labels (share_key). Not in upstream (it walks the nodes each cycle): the
        # shares and the scores summed from them are kept per share_key across cycles (PerNode)
        # and only the nodes whose pods changed are walked again, their difference applied. Same
        # scores because a sum of per-node shares does not depend on when each was taken, and an
        # entry (key, value) is kept exactly while some node's share has it (its count of
        # shares), as the walk creates one for every entry it adds, weight 0 included; the order
        # of the entries may differ from the walk's, and nothing reads it (Score sums them).
        share_key = self._keys(("score", _weighted_signature(pod.preferred_affinity_terms),
                                _weighted_signature(pod.preferred_anti_affinity_terms), pod.labels_key))

        hard = self.hard_weight
        existing_preferred = not self.ignore_preferred_existing
        matches_incoming = memo.term_matches_incoming

        def share_of(ni: NodeInfo) -> tuple[tuple[str, str, int], ...]:
            # upstream: without preferred terms of its own the pod is scored against
            # havePodsWithAffinityNodeInfoList only (the other nodes add nothing)
            others = ni.pods if has_pref else ni.pods_with_affinity
            if not others:
                return ()
            node_score: dict[str, dict[str, int]] = {}
            labels = ni.labels
            if has_pref:
                for other in others:
                    self._process_existing(pod, other, labels, node_score, memo)
            else:  # _process_existing without the pod's own (empty) preferred terms, inlined
                for other in others:
                    if hard > 0:
                        for t in other.required_affinity_terms:
                            if matches_incoming(t):
                                _add_weight(node_score, labels, t.topology_key, hard)
                    if existing_preferred:
                        for wt in other.preferred_affinity_terms:
                            if matches_incoming(wt.term):
                                _add_weight(node_score, labels, wt.term.topology_key, wt.weight)
                        for wt in other.preferred_anti_affinity_terms:
                            if matches_incoming(wt.term):
                                _add_weight(node_score, labels, wt.term.topology_key, -wt.weight)
            return tuple((k, v, w) for k, m in node_score.items() for v, w in m.items())
        agg = self._score_aggregates.get(share_key)
        if agg is None:
            if len(self._score_aggregates) >= _AGGREGATE_LIMIT:
                self._score_aggregates.clear()
            agg = self._score_aggregates[share_key] = (PerNode(), {}, {})
        shares, sums, entries = agg
        changed = shares.refresh(all_nodes, share_of)
        if changed is None:
            sums.clear()
            entries.clear()
            for share in shares.values:
                _add_score_share(sums, entries, share, 1)
        else:
            for _i, old, new in changed:
                _add_score_share(sums, entries, old, -1)
                _add_score_share(sums, entries, new, 1)
        if not sums:
            return Status(Code.SKIP)
        state.data[self.name + "/score"] = {k: dict(m) for k, m in sums.items()}
        return Status()

    def score(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> int:
        score = state.data[self.name + "/score"]
        total = 0
        for k, m in score.items():
            v = ni.labels.get(k)
            if v is not None:
                total += m.get(v, 0)
        return total

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        """``score`` of each node with the PreScore state read once."""
        items = list(state.data[self.name + "/score"].items())
        out = []
        for ni in nodes:
            labels = ni.labels
            total = 0
            for k, m in items:
                v = labels.get(k)
                if v is not None:
                    total += m.get(v, 0)
            out.append(total)
        return out

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[int]) -> None:
        if not scores:
            return
        mn, mx = min(scores), max(scores)
        diff = mx - mn
        # (in place, in one list comprehension: the same ints as the loop over the indices)
        if diff > 0:
            scores[:] = [int(MAX_NODE_SCORE * ((s - mn) / diff)) for s in scores]
        else:
            scores[:] = [0] * len(scores)

    def events_to_register(self) -> list[tuple[ClusterEvent, HintFn]]:
        Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP

        def all_match(terms: list[Any], obj: Any) -> bool:
            """podMatchesAllAffinityTerms: False for no terms, else every term matches the pod."""
            if not terms:
                return False
            other = new_pod_info(obj)
            return all(t.matches(other) for t in terms)

        @hint_signature(_terms_signature)
        def pod_hint(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
            """plugin.go isSchedulableAfterPodChange."""
            if (new is not None and not new.spec.node_name) or (old is not None and not old.spec.node_name):
                return SKIP  # an unscheduled pod changing cannot make the target schedulable
            terms, anti = pod.required_affinity_terms, pod.required_anti_affinity_terms
            if new is not None and old is not None:  # updated
                if not all_match(terms, old) and all_match(terms, new):
                    return Q
                return Q if all_match(anti, old) and not all_match(anti, new) else SKIP
            if new is not None:  # added
                return Q if all_match(terms, new) else SKIP
            # deleted: the target's anti-affinity matched it, or (newer upstream, per
            # plugin_test.go "delete a pod with anti-affinity that matches pending pod") its own
            # required anti-affinity matched the target
            if all_match(anti, old):
                return Q
            return Q if any(t.matches(pod) for t in new_pod_info(old).required_anti_affinity_terms) else SKIP

        @hint_signature(_topology_keys)
        def node_hint(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
            keys = {t.topology_key for t in pod.required_affinity_terms + pod.required_anti_affinity_terms}
            if not keys:
                return Q  # existing pods' anti-affinity: any labelled node may help
            for n in (old, new):
                if n is not None and keys & set((n.metadata.labels or {}).keys()):
                    return Q
            return SKIP
        return [(ClusterEvent(ASSIGNED_POD, ADD), pod_hint), (ClusterEvent(ASSIGNED_POD, UPDATE), pod_hint),
                (ClusterEvent(ASSIGNED_POD, DELETE), pod_hint), (ClusterEvent(NODE, ADD), node_hint),
                (ClusterEvent(NODE, UPDATE_NODE_LABEL), node_hint)]
