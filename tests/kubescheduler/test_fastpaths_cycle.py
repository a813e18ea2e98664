"""The scheduling cycle's shortcuts of issue #13 (round 5) give upstream's answers.

Each test pits a shortcut against the computation it replaces (kept here as the reference) and
includes a change that must flip the answer, so a stale index or memo cannot pass:
PodTopologySpread's precomputed Filter test, the requeue-class index of the unschedulable pool,
preemption's cluster-wide "nothing can be evicted" exit and the per-node feasibility memo."""

from __future__ import annotations

import random
from typing import Any, Optional

import pytest

from karpy.api.builders import make_node, make_pod, pod_affinity_term
from karpy.kubescheduler import KubeScheduler
from karpy.kubescheduler.framework import (ADD, ASSIGNED_POD, NODE, UPDATE_NODE_TAINT, ClusterEvent, CycleState,
                                           QueueingHint)
from karpy.kubescheduler.nodeinfo import NodeInfo
from karpy.kubescheduler.plugins import PodTopologySpread
from karpy.kubescheduler.plugins.podtopologyspread import REASON, REASON_MISSING_LABEL
from karpy.kubescheduler.podinfo import new_pod_info
from karpy.kubescheduler.queue import PriorityQueue, QueuedPodInfo, Strategy
from karpy.kubescheduler.types import Code

from .conftest import FakeClock
from .test_fastpaths import _memo_cluster_ops, _play

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


# ---- PodTopologySpread Filter --------------------------------------------------------------------------------------
def _reference_spread_filter(st: Any, pod: Any, ni: NodeInfo) -> tuple[Code, list[str]]:
    """filtering.go Filter as upstream writes it: skew = matchNum + selfMatchNum - minMatchNum."""
    for i, c in enumerate(st.constraints):
        v = ni.labels.get(c.topology_key)
        if v is None:
            return Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [REASON_MISSING_LABEL]
        counts = st.counts[i]
        min_match = 0 if len(counts) < c.min_domains else (min(counts.values()) if counts else 0)
        self_match = 1 if c.selector is not None and c.selector.matches(pod.labels) else 0
        if counts.get(v, 0) + self_match - min_match > c.max_skew:
            return Code.UNSCHEDULABLE, [REASON]
    return Code.SUCCESS, []


def _spread_nodes(rng: random.Random) -> list[NodeInfo]:
    out = []
    for i in range(9):
        labels = {HOST: f"n{i}"}
        if i % 4:
            labels[ZONE] = f"z{i % 3}"
        out.append(NodeInfo.from_node(make_node(f"n{i}", labels=labels, capacity={"cpu": "64", "pods": "110"})))
    return out


def _spread_pod(rng: random.Random, i: int, node: Optional[str] = None) -> Any:
    keys = rng.choice([[ZONE], [HOST], [ZONE, HOST]])
    tsc = [{"maxSkew": rng.choice([1, 2]), "topologyKey": k, "whenUnsatisfiable": "DoNotSchedule",
            "minDomains": rng.choice([None, None, 4]),
            "labelSelector": {"matchLabels": {"app": rng.choice("ab")}}} for k in keys]
    for t in tsc:
        if t["minDomains"] is None:
            del t["minDomains"]
    return new_pod_info(make_pod(f"p{i}", uid=f"p{i}", labels={"app": rng.choice("ab")}, node_name=node,
                                 topology_spread_constraints=tsc))


def test_spread_filter_checks_match_upstreams_skew_formula():
    """The per-constraint bound (maxSkew - selfMatch + minMatch) decides every node as the skew
    formula does, also after AddPod / RemovePod changed the counts (preemption's dry runs, nominated
    pods), which must drop the precomputed bounds."""
    rng = random.Random(3)
    nodes = _spread_nodes(rng)
    for i in range(40):
        ni = rng.choice(nodes)
        ni.add_pod(_spread_pod(rng, i, ni.name))
    plugin = PodTopologySpread()
    decided = {Code.SUCCESS: 0, Code.UNSCHEDULABLE: 0, Code.UNSCHEDULABLE_AND_UNRESOLVABLE: 0}
    flipped = 0
    for step in range(200):
        incoming = _spread_pod(rng, 1000 + step)
        state = CycleState()
        plugin.pre_filter(state, incoming, nodes)
        st = state.data[plugin.name]
        for _ in range(4):
            before = [plugin.filter(state, incoming, ni).code for ni in nodes]
            for ni, code in zip(nodes, before):
                assert code == _reference_spread_filter(st, incoming, ni)[0]
                got = plugin.filter(state, incoming, ni)
                assert (got.code, got.reasons) == _reference_spread_filter(st, incoming, ni)
                decided[got.code] += 1
            ni = rng.choice(nodes)
            other = _spread_pod(rng, 5000 + step, ni.name)
            if ni.pods and rng.random() < 0.4:
                plugin.remove_pod(state, incoming, rng.choice(ni.pods), ni)
            else:
                plugin.add_pod(state, incoming, other, ni)
            flipped += before != [plugin.filter(state, incoming, n).code for n in nodes]
    assert all(n > 50 for n in decided.values()), decided
    assert flipped > 20


def test_spread_filter_add_pod_flips_a_node_from_fit_to_reject():
    """upstream filtering_test.go TestPreFilterStateAddPod ("node a and b both impact current min
    match"): a matching pod added to the emptiest zone raises the minimum; one added to a full
    zone makes that zone reject. The bound must follow both."""
    nodes = [NodeInfo.from_node(make_node(n, labels={ZONE: z, HOST: n}, capacity={"pods": "110"}))
             for n, z in (("a", "z1"), ("b", "z2"))]
    tsc = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"foo": "x"}}}]
    incoming = new_pod_info(make_pod("p", labels={"foo": "x"}, topology_spread_constraints=tsc))
    nodes[0].add_pod(new_pod_info(make_pod("e1", uid="e1", labels={"foo": "x"}, node_name="a")))
    plugin = PodTopologySpread()
    state = CycleState()
    plugin.pre_filter(state, incoming, nodes)
    assert [plugin.filter(state, incoming, ni).code for ni in nodes] == [Code.UNSCHEDULABLE, Code.SUCCESS]
    plugin.add_pod(state, incoming, new_pod_info(make_pod("e2", uid="e2", labels={"foo": "x"}, node_name="b")),
                   nodes[1])
    assert [plugin.filter(state, incoming, ni).code for ni in nodes] == [Code.SUCCESS, Code.SUCCESS]
    plugin.add_pod(state, incoming, new_pod_info(make_pod("e3", uid="e3", labels={"foo": "x"}, node_name="b")),
                   nodes[1])
    assert [plugin.filter(state, incoming, ni).code for ni in nodes] == [Code.SUCCESS, Code.UNSCHEDULABLE]
    clone = state.clone()  # a dry run's copy decides on its own counts
    plugin.remove_pod(clone, incoming, nodes[1].pods[0] if nodes[1].pods else
                      new_pod_info(make_pod("e3", uid="e3", labels={"foo": "x"}, node_name="b")), nodes[1])
    assert [plugin.filter(clone, incoming, ni).code for ni in nodes] == [Code.SUCCESS, Code.SUCCESS]
    assert [plugin.filter(state, incoming, ni).code for ni in nodes] == [Code.SUCCESS, Code.UNSCHEDULABLE]


def test_spread_filter_rejections_share_one_unchanged_status():
    nodes = [NodeInfo.from_node(make_node(n, labels={ZONE: n, HOST: n}, capacity={"pods": "110"})) for n in "abc"]
    for n in nodes[:2]:
        n.add_pod(new_pod_info(make_pod(f"e{n.name}", uid=f"e{n.name}", labels={"foo": "x"}, node_name=n.name)))
    tsc = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"foo": "x"}}}]
    incoming = new_pod_info(make_pod("p", labels={"foo": "x"}, topology_spread_constraints=tsc))
    plugin = PodTopologySpread()
    state = CycleState()
    plugin.pre_filter(state, incoming, nodes)
    a, b, c = (plugin.filter(state, incoming, ni) for ni in nodes)
    assert a is b and (a.code, a.reasons) == (Code.UNSCHEDULABLE, [REASON]) and c.code == Code.SUCCESS


# ---- the requeue-class index of the unschedulable pool --------------------------------------------------------------
class _ScanQueue(PriorityQueue):
    """MoveAllToActiveOrBackoffQueue as the scan over every pooled pod (main f984868, the shape of
    upstream's movePodsToActiveOrBackoffQueue): the reference for the class index."""

    def move_all_to_active_or_backoff(self, event: ClusterEvent, old: Any = None, new: Any = None,
                                      only: Optional[set[str]] = None) -> list[str]:
        if self.in_flight:
            self.in_flight_events.append((event, old, new))
        if not self.is_event_of_interest(event):
            return []
        moved = []
        matching = self._matching(event)
        wildcard = event.is_wildcard()
        for key, q in list(self.unschedulable.items()):
            if only is not None and key not in only:
                continue
            if q.gating_plugin and not wildcard and not self._gate_matches(q.gating_plugin, event):
                continue
            s = self._worth_requeuing(q, event, old, new, matching)
            if s == Strategy.QUEUE_SKIP:
                continue
            self._requeue(q, s)
            if key not in self.unschedulable:
                moved.append(key)
        return moved


def _with_scan_queue(ks: KubeScheduler) -> KubeScheduler:
    q = ks.queue
    ks.queue = _ScanQueue(ks.framework, ks.clock, initial_backoff=q.initial_backoff, max_backoff=q.max_backoff,
                          max_in_unschedulable=q.max_in_unschedulable)
    return ks


def _queue_state(ks: KubeScheduler) -> tuple:
    q = ks.queue
    return (list(q._active), list(q._backoff), list(q._error_backoff), list(q.unschedulable),
            sorted((k, sorted(v.unschedulable_plugins), v.gating_plugin) for k, v in q.unschedulable.items()))


def _assert_index_consistent(q: PriorityQueue) -> None:
    """Every pooled pod is in exactly the class _requeue_class gives it; positions follow the pool."""
    want: dict[Any, list[str]] = {}
    for k, info in q.unschedulable.items():
        want.setdefault(q._requeue_class(info), []).append(k)
    got = {cls: sorted(members, key=q._pool_pos.__getitem__) for cls, members in q._classes.items()}
    assert got == want
    assert set(q._class_of) == set(q._pool_pos) == set(q.unschedulable)
    pos = [q._pool_pos[k] for k in q.unschedulable]
    assert pos == sorted(pos)


class _Checked(KubeScheduler):
    def _event(self, ev: ClusterEvent, old: Any, new: Any) -> None:
        super()._event(ev, old, new)
        _assert_index_consistent(self.queue)


@pytest.mark.parametrize("seed", range(16))
def test_requeue_class_index_moves_what_the_scan_moves(seed):
    """Same cycles, outcomes and messages, and the same queue contents in the same order after
    every step, as asking isPodWorthRequeuing of every pooled pod."""
    ops = _memo_cluster_ops(seed)
    fast = _Checked(FakeClock(), random.Random(seed))
    scan = _with_scan_queue(KubeScheduler(FakeClock(), random.Random(seed)))
    states_fast, states_scan = [], []
    out_fast, out_scan = [], []
    for op in ops:
        out_fast += _play(fast, [op])
        out_scan += _play(scan, [op])
        states_fast.append(_queue_state(fast))
        states_scan.append(_queue_state(scan))
    assert out_fast == out_scan
    assert states_fast == states_scan


def _tainted_node(name: str, value: Optional[str]) -> Any:
    taints = [{"key": "dedicated", "value": value, "effect": "NoSchedule"}] if value else []
    return make_node(name, labels={ZONE: "z1"}, taints=taints, capacity={"cpu": "4", "memory": "8Gi", "pods": "10"})


def test_requeue_class_follows_a_pooled_pods_update():
    """A pooled pod whose requests change (queue.update, no hint registered for the update) moves
    to the class of its new NodeResourcesFit signature: a node its new requests fit moves it, its
    old classmate stays (a stale class would leave both)."""
    clock = FakeClock()
    ks = KubeScheduler(clock, random.Random(0))
    ks.add_node(make_node("small", capacity={"cpu": "1", "memory": "8Gi", "pods": "10"}))
    for name in ("p1", "p2"):
        ks.add_pod(make_pod(name, uid=name, requests={"cpu": "8"}))
    while ks.schedule_one() is not None:
        pass
    q = ks.queue
    assert set(q.unschedulable) == {"default/p1", "default/p2"}
    assert q._class_of["default/p1"] == q._class_of["default/p2"]
    ks.update_pod(make_pod("p2", uid="p2", requests={"cpu": "2"}))
    assert set(q.unschedulable) == {"default/p1", "default/p2"}
    _assert_index_consistent(q)
    assert q._class_of["default/p1"] != q._class_of["default/p2"]
    ks.add_node(make_node("mid", capacity={"cpu": "3", "memory": "8Gi", "pods": "10"}))
    assert list(q.unschedulable) == ["default/p1"]
    _assert_index_consistent(q)


def test_requeue_class_asks_one_hint_per_class_and_event():
    """upstream scheduling_queue_test.go TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint
    shape: a hint answering Queue moves the pod, QueueSkip leaves it; with the index the hint runs
    once for all pods of a class."""
    clock = FakeClock()
    ks = KubeScheduler(clock, random.Random(0))
    calls: list[str] = []
    for i, (plugin, reg, fn) in enumerate(ks.queue._events):
        if plugin == "TaintToleration" and reg == ClusterEvent(NODE, UPDATE_NODE_TAINT):
            def spy(pod: Any, old: Any, new: Any, fn: Any = fn) -> QueueingHint:
                calls.append(pod.name)
                return fn(pod, old, new)  # type: ignore[no-any-return]
            spy.pod_signature = fn.pod_signature  # type: ignore[attr-defined]
            ks.queue._events[i] = (plugin, reg, spy)
    ks.add_node(_tainted_node("n", "b"))
    tol_a = [{"key": "dedicated", "operator": "Equal", "value": "a", "effect": "NoSchedule"}]
    for i in range(5):
        ks.add_pod(make_pod(f"p{i}", uid=f"p{i}", requests={"cpu": "1"}, tolerations=tol_a))
    while ks.schedule_one() is not None:
        pass
    assert len(ks.queue.unschedulable) == 5
    ks.update_node(_tainted_node("n", "c"))  # still untolerated: QueueSkip for the class
    assert calls == ["p0"] and len(ks.queue.unschedulable) == 5
    ks.update_node(_tainted_node("n", "a"))  # tolerated now: the whole class moves
    assert calls == ["p0", "p0"] and not ks.queue.unschedulable


def test_requeue_class_of_pods_without_rejectors_and_gated_pods():
    """A pooled pod without rejector plugins gets QueueAfterBackoff on any event of interest; a
    gated pod is re-examined only on its gating plugin's events (as the scan decides)."""
    clock = FakeClock()
    ks = KubeScheduler(clock, random.Random(0))
    q = ks.queue
    info = QueuedPodInfo(new_pod_info(make_pod("free", uid="free")), 0.0, 1)
    q._to_unschedulable(info)
    gated = QueuedPodInfo(new_pod_info(make_pod("gated", uid="gated")), 0.0, 2, gating_plugin="SchedulingGates",
                          unschedulable_plugins={"SchedulingGates"})
    q._to_unschedulable(gated)
    _assert_index_consistent(q)
    moved = q.move_all_to_active_or_backoff(ClusterEvent(ASSIGNED_POD, ADD), None,
                                            make_pod("x", uid="x", node_name="n"))
    assert moved == ["default/free"] and list(q.unschedulable) == ["default/gated"]
    _assert_index_consistent(q)
