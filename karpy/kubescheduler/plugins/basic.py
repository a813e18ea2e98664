"""Small default plugins: SchedulingGates, PrioritySort, NodeUnschedulable, NodeName, NodePorts,
TaintToleration, NodeAffinity, ImageLocality.

Mirrors pkg/scheduler/framework/plugins/{schedulinggates/scheduling_gates.go,
queuesort/priority_sort.go, nodeunschedulable/node_unschedulable.go, nodename/node_name.go,
nodeports/node_ports.go, tainttoleration/taint_toleration.go, nodeaffinity/node_affinity.go,
imagelocality/image_locality.go}.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any, Optional

from ..framework import (ADD, ASSIGNED_POD, DELETE, NODE, UNSCHEDULED_POD, UPDATE_NODE_LABEL,
                         UPDATE_NODE_TAINT, UPDATE_POD_SCHEDULING_GATES_ELIMINATED, UPDATE_POD_TOLERATION,
                         ClusterEvent, CycleState, HintFn, Plugin, QueueingHint, default_normalize_score,
                         hint_signature)
from ..nodeinfo import NodeInfo, normalized_image_name
from ..podinfo import HostPortEntry, PodInfo
from ..types import MAX_NODE_SCORE, SUCCESS_STATUS, TAINT_NODE_UNSCHEDULABLE, Code, Status, unresolvable, unschedulable
from .helpers import (NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, find_matching_untolerated_taint,
                      node_selector_matches, required_node_affinity_matches, term_matches,
                      tolerations_tolerate_taint)

if TYPE_CHECKING:  # pragma: no cover
    from ..queue import QueuedPodInfo

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def _tolerations(pod: PodInfo) -> list[Any]:
    return list(getattr(pod.spec, "tolerations", None) or [])


def tolerations_signature(pod: PodInfo) -> tuple[tuple[Any, ...], ...]:
    """Everything ToleratesTaint reads from the pod's tolerations (key, operator, value, effect),
    as a hashable value (a Filter signature; computed once per PodInfo)."""
    memo = pod.memo
    sig = memo.get("tolerations")
    if sig is None:
        sig = memo["tolerations"] = tuple((t.key, t.operator, t.value, t.effect) for t in _tolerations(pod))
    return sig


def node_selector_signature(sel: Any) -> Any:
    """A NodeSelector (or None) as a hashable value of everything NodeSelector.Match reads."""
    if sel is None:
        return None
    return tuple((tuple((r.key, r.operator, tuple(r.values or ())) for r in (t.match_expressions or ())),
                  tuple((f.key, f.operator, tuple(f.values or ())) for f in (t.match_fields or ())))
                 for t in (sel.node_selector_terms or ()))


class SchedulingGates(Plugin):
    """schedulinggates: PreEnqueue rejects pods with non-empty spec.schedulingGates (UAU)."""

    name = "SchedulingGates"
    has_pre_enqueue = True

    def pre_enqueue(self, pod: PodInfo) -> Status:
        gates = getattr(pod.spec, "scheduling_gates", None)
        if not gates:
            return SUCCESS_STATUS  # (RunPreEnqueuePlugins only asks it is_success)
        names = " ".join(getattr(g, "name", str(g)) for g in gates)
        return unresolvable(f"waiting for scheduling gates: [{names}]")

    def events_to_register(self) -> list[tuple[ClusterEvent, HintFn]]:
        def hint(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
            if new is not None and getattr(new.metadata, "uid", None) == pod.uid and not (getattr(new.spec, "scheduling_gates", None) or []):
                return Q
            return SKIP
        return [(ClusterEvent(UNSCHEDULED_POD, UPDATE_POD_SCHEDULING_GATES_ELIMINATED), hint)]


def priority_sort_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """queuesort.PrioritySort.Less: priority desc, then queue timestamp asc."""
    if a.pod_info.priority != b.pod_info.priority:
        return a.pod_info.priority > b.pod_info.priority
    return a.timestamp < b.timestamp


class NodeUnschedulable(Plugin):
    """nodeunschedulable: spec.unschedulable and the pod does not tolerate the unschedulable taint."""

    name = "NodeUnschedulable"
    has_filter = True
    REASON = "node(s) were unschedulable"

    def filter(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> Status:
        if not ni.unschedulable:  # node.Spec.Unschedulable, read once per NodeInfo
            return SUCCESS_STATUS
        taint = _T(TAINT_NODE_UNSCHEDULABLE, "", NO_SCHEDULE)
        if tolerations_tolerate_taint(_tolerations(pod), taint):
            return SUCCESS_STATUS
        return unresolvable(self.REASON)

    def filter_signature(self, state: CycleState, pod: PodInfo) -> Any:
        return tolerations_signature(pod)

    def events_to_register(self) -> list[tuple[ClusterEvent, HintFn]]:
        @hint_signature(tolerations_signature)
        def hint(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
            if new is None:
                return SKIP
            if old is None or (getattr(old.spec, "unschedulable", False) and not getattr(new.spec, "unschedulable", False)):
                return Q if not getattr(new.spec, "unschedulable", False) else (
                    Q if tolerations_tolerate_taint(_tolerations(pod), _T(TAINT_NODE_UNSCHEDULABLE, "", NO_SCHEDULE)) else SKIP)
            return SKIP
        return [(ClusterEvent(NODE, ADD), hint), (ClusterEvent(NODE, UPDATE_NODE_TAINT), hint)]


class _Terms:
    """A NodeSelector-shaped wrapper of terms (for node_selector_signature)."""

    def __init__(self, terms: list[Any]) -> None:
        self.node_selector_terms = terms


class _T:
    """A minimal taint value."""

    def __init__(self, key: str, value: str, effect: str) -> None:
        self.key, self.value, self.effect = key, value, effect


class NodeName(Plugin):
    """nodename: pod.spec.nodeName set and different from the node."""

    name = "NodeName"
    has_filter = True
    REASON = "node(s) didn't match the requested node name"

    def filter(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> Status:
        if pod.node_name and pod.node_name != ni.name:
            return unresolvable(self.REASON)
        return SUCCESS_STATUS

    def filter_passes_every_node(self, state: CycleState, pod: PodInfo) -> bool:
        return not pod.node_name

    def filter_signature(self, state: CycleState, pod: PodInfo) -> Any:
        return pod.node_name

    def events_to_register(self) -> list[tuple[ClusterEvent, HintFn]]:
        @hint_signature(lambda pod: pod.node_name)
        def hint(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
            return Q if not pod.node_name or (new is not None and new.metadata.name == pod.node_name) else SKIP
        return [(ClusterEvent(NODE, ADD), hint)]


def ports_conflict(existing: list[HostPortEntry], wanted: list[HostPortEntry]) -> bool:
    """HostPortInfo.CheckConflict: same protocol+port and same IP or either 0.0.0.0."""
    for w in wanted:
        for e in existing:
            if e.port == w.port and e.protocol == w.protocol and (
                    e.ip == w.ip or e.ip == "0.0.0.0" or w.ip == "0.0.0.0"):
                return True
    return False


class NodePorts(Plugin):
    """nodeports: host port conflicts (Unschedulable)."""

    name = "NodePorts"
    has_pre_filter = True
    has_filter = True
    REASON = "node(s) didn't have free ports for the requested pod ports"

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> tuple[Status, Optional[set[str]]]:
        if not pod.host_ports:
            return Status(Code.SKIP), None
        return Status(), None

    def filter(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> Status:
        if ports_conflict(ni.used_ports, pod.host_ports):
            return unschedulable(self.REASON)
        return SUCCESS_STATUS

    def filter_signature(self, state: CycleState, pod: PodInfo) -> Any:
        return tuple(pod.host_ports)

    def events_to_register(self) -> list[tuple[ClusterEvent, HintFn]]:
        from ..podinfo import host_ports_of

        @hint_signature(lambda pod: tuple(pod.host_ports))
        def pod_deleted(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
            # node_ports.go isSchedulableAfterPodDeleted: a deleted pod that was neither bound nor
            # nominated frees nothing; otherwise queue when its host ports conflicted with ours
            if old is None or not (old.spec.node_name or old.status.nominated_node_name):
                return SKIP
            return Q if ports_conflict(host_ports_of(old), pod.host_ports) else SKIP
        return [(ClusterEvent(ASSIGNED_POD, DELETE), pod_deleted),
                (ClusterEvent(NODE, ADD), hint_signature(lambda pod: None)(lambda p, o, n: Q))]


class TaintToleration(Plugin):
    """tainttoleration: Filter on NoSchedule/NoExecute (UAU); Score counts untolerated PreferNoSchedule."""

    name = "TaintToleration"
    has_filter = True
    has_pre_score = True
    has_score = True
    has_normalize = True

    def __init__(self, message_style: str = "1.35") -> None:
        self.message_style = message_style

    @staticmethod
    def _filter_pred(t: Any) -> bool:
        return t.effect in (NO_SCHEDULE, NO_EXECUTE)

    def filter(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> Status:
        if not _node_taints(ni):
            return SUCCESS_STATUS  # FindMatchingUntoleratedTaint over no taints finds nothing
        taint = find_matching_untolerated_taint(ni.taints, _tolerations(pod), self._filter_pred)
        if taint is None:
            return SUCCESS_STATUS
        if self.message_style == "1.34":
            return unresolvable(f"node(s) had untolerated taint {{{taint.key}: {taint.value or ''}}}")
        return unresolvable("node(s) had untolerated taint(s)")

    def filter_signature(self, state: CycleState, pod: PodInfo) -> Any:
        return tolerations_signature(pod)

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], all_nodes: list[NodeInfo]) -> Status:
        state.data[self.name] = [t for t in _tolerations(pod) if not t.effect or t.effect == PREFER_NO_SCHEDULE]
        return Status()

    def score(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> int:
        if not _node_taints(ni):
            return 0  # countIntolerableTaintsPreferNoSchedule over no taints
        tols = state.data.get(self.name, [])
        return sum(1 for t in ni.taints if t.effect == PREFER_NO_SCHEDULE and not tolerations_tolerate_taint(tols, t))

    def score_signature(self, state: CycleState, pod: PodInfo) -> Any:
        return tolerations_signature(pod)  # PreScore keeps a subset of these

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[int]) -> None:
        default_normalize_score(MAX_NODE_SCORE, True, scores)

    def events_to_register(self) -> list[tuple[ClusterEvent, HintFn]]:
        @hint_signature(tolerations_signature)
        def node_hint(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
            if new is None:
                return SKIP
            tols = _tolerations(pod)
            now_ok = find_matching_untolerated_taint(list(new.spec.taints or []), tols, self._filter_pred) is None
            if not now_ok:
                return SKIP
            if old is None:
                return Q
            was_ok = find_matching_untolerated_taint(list(old.spec.taints or []), tols, self._filter_pred) is None
            return Q if not was_ok else SKIP

        def pod_hint(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
            # taint_toleration.go isSchedulableAfterPodChange: the target pod itself, with changed tolerations
            if new is None or old is None or getattr(new.metadata, "uid", None) != pod.uid:
                return SKIP
            return Q if list(old.spec.tolerations or ()) != list(new.spec.tolerations or ()) else SKIP
        return [(ClusterEvent(NODE, ADD), node_hint), (ClusterEvent(NODE, UPDATE_NODE_TAINT), node_hint),
                (ClusterEvent(UNSCHEDULED_POD, UPDATE_POD_TOLERATION), pod_hint)]


def _node_taints(ni: NodeInfo) -> Any:
    """The node's spec.taints as stored (falsy when it has none) — ``ni.taints`` without the copy."""
    return ni.spec_taints


class NodeAffinity(Plugin):
    """nodeaffinity: nodeSelector + required affinity (UAU); preferred terms score."""

    name = "NodeAffinity"
    has_pre_filter = True
    has_filter = True
    has_pre_score = True
    has_score = True
    has_normalize = True
    REASON = "node(s) didn't match Pod's node affinity/selector"
    REASON_CONFLICT = "pod affinity terms conflict"

    @staticmethod
    def _required(pod: PodInfo) -> Any:
        aff = getattr(pod.spec, "affinity", None)
        na = getattr(aff, "node_affinity", None) if aff is not None else None
        return getattr(na, "required_during_scheduling_ignored_during_execution", None) if na is not None else None

    _PRE_FILTER_KEY = "PreFilterNodeAffinity"

    def _pre_filter_state(self, pod: PodInfo) -> tuple[tuple[tuple[str, str], ...], Any]:
        """nodeaffinity preFilterState.requiredNodeSelectorAndAffinity: the pod's nodeSelector pairs
        and required node affinity, read once per cycle instead of once per node."""
        return tuple((getattr(pod.spec, "node_selector", None) or {}).items()), self._required(pod)

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> tuple[Status, Optional[set[str]]]:
        req = self._required(pod)
        if req is None and not (getattr(pod.spec, "node_selector", None) or {}):
            return Status(Code.SKIP), None
        state.data[self._PRE_FILTER_KEY] = self._pre_filter_state(pod)
        if req is None:
            return Status(), None
        terms = list(req.node_selector_terms or [])
        names: Optional[set[str]] = None
        for t in terms:
            term_names: Optional[set[str]] = None
            for f in getattr(t, "match_fields", None) or []:
                if f.key == "metadata.name" and f.operator == "In":
                    s = set(f.values or [])
                    term_names = s if term_names is None else term_names & s
            if term_names is None:
                return Status(), None  # a term without a metadata.name In field: no restriction
            names = term_names if names is None else names | term_names
        if names is None:
            return Status(), None
        if not names:
            return unresolvable(self.REASON_CONFLICT), None
        return Status(), names

    def filter(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> Status:
        pre = state.data.get(self._PRE_FILTER_KEY)
        if pre is None:
            ok = required_node_affinity_matches(pod.spec, ni.node)
        else:
            # required_node_affinity_matches with the PreFilter state: nodeSelector AND required terms
            selector, required = pre
            node = ni.node
            labels = node.metadata.labels or {}
            ok = True
            for k, v in selector:
                if labels.get(k) != v:
                    ok = False
                    break
            if ok and required is not None:
                ok = node_selector_matches(required, node.metadata.name, labels)
        if ok:
            return SUCCESS_STATUS
        return unresolvable(self.REASON)

    def filter_signature(self, state: CycleState, pod: PodInfo) -> Any:
        pre = state.data.get(self._PRE_FILTER_KEY)
        if pre is None:
            pre = self._pre_filter_state(pod)
        return pre[0], node_selector_signature(pre[1])

    def _required_signature(self, pod: PodInfo) -> Any:
        """What required_node_affinity_matches reads from the pod (nodeSelector, required terms)."""
        selector, required = self._pre_filter_state(pod)
        return tuple(sorted(selector)), node_selector_signature(required)

    @staticmethod
    def _preferred(pod: PodInfo) -> list[Any]:
        aff = getattr(pod.spec, "affinity", None)
        na = getattr(aff, "node_affinity", None) if aff is not None else None
        return list(getattr(na, "preferred_during_scheduling_ignored_during_execution", None) or []) if na else []

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], all_nodes: list[NodeInfo]) -> Status:
        pref = [p for p in self._preferred(pod) if p.weight != 0]
        if not pref:
            return Status(Code.SKIP)
        state.data[self.name] = pref
        return Status()

    def score(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> int:
        total = 0
        for p in state.data.get(self.name, []):
            if term_matches(p.preference, ni.name, ni.labels):
                total += p.weight
        return total

    def score_signature(self, state: CycleState, pod: PodInfo) -> Any:
        pref = state.data.get(self.name, [])
        return tuple((p.weight, node_selector_signature(_Terms([p.preference]))) for p in pref)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[int]) -> None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)

    def events_to_register(self) -> list[tuple[ClusterEvent, HintFn]]:
        @hint_signature(self._required_signature)
        def hint(pod: PodInfo, old: Any, new: Any) -> QueueingHint:
            if new is None or not required_node_affinity_matches(pod.spec, new):
                return SKIP
            if old is None:
                return Q
            return SKIP if required_node_affinity_matches(pod.spec, old) else Q
        return [(ClusterEvent(NODE, ADD), hint), (ClusterEvent(NODE, UPDATE_NODE_LABEL), hint)]


MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


#: a NodeInfo's image states (falsy when it has none)
_image_states = operator.attrgetter("image_states")


class ImageLocality(Plugin):
    """imagelocality: prefer nodes already holding the pod's images (scaled by spread)."""

    name = "ImageLocality"
    has_score = True

    _IMAGES_KEY = "ImageLocalityPodImages"

    def _pod_images(self, state: CycleState, pod: PodInfo) -> tuple[Any, int, list[str], int]:
        # Performance: the pod's images, their normalized names and the score of a node holding
        # none of them (sum 0) depend only on the pod, so they are computed on the first Score of
        # the cycle and reused for the other nodes (upstream recomputes them per node).
        cached: Optional[tuple[Any, int, list[str], int]] = state.data.get(self._IMAGES_KEY)
        if cached is None or cached[0] is not pod:
            images = pod.images()
            cached = (pod, len(images), [normalized_image_name(img) for img in images],
                      self._scaled(0, len(images)))
            state.data[self._IMAGES_KEY] = cached
        return cached

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        """``score`` of each node; a node without image states gets the pod's sum-0 score, as
        ``score`` returns for it."""
        empty = self._pod_images(state, pod)[3]
        # (no node with image states, found by one C-level scan: every score is the sum-0 one)
        if not any(map(_image_states, nodes)):
            return [empty] * len(nodes)
        score = self.score
        return [score(state, pod, ni) if ni.image_states else empty for ni in nodes]

    def score(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> int:
        cached = self._pod_images(state, pod)
        image_states = ni.image_states
        if not image_states:
            return cached[3]
        total = max(int(state.data.get("_total_nodes", 1)), 1)
        s = 0
        for name in cached[2]:
            st = image_states.get(name)
            if st is not None:
                s += int(st.size * (st.num_nodes / total))
        return self._scaled(s, cached[1])

    @staticmethod
    def _scaled(s: int, num_images: int) -> int:
        """calculatePriority: clamp the summed image score and scale it to [0, MaxNodeScore]."""
        max_t = MAX_CONTAINER_THRESHOLD * num_images
        if s < MIN_THRESHOLD:
            s = MIN_THRESHOLD
        elif s > max_t:
            s = max_t
        if max_t <= MIN_THRESHOLD:
            return 0
        return MAX_NODE_SCORE * (s - MIN_THRESHOLD) // (max_t - MIN_THRESHOLD)
