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
    """After upstream podtopologyspread/filtering_test.go TestPreFilterStateAddPod (adapted: its
    cases check the state's counts and minimum after AddPod; here Filter's answer): a matching pod
    added to the emptiest zone raises the minimum; one more makes that zone reject. The
    precomputed bound must follow both, and a cloned state decides on its own counts."""
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
    e3 = new_pod_info(make_pod("e3", uid="e3", labels={"foo": "x"}, node_name="b"))
    plugin.add_pod(state, incoming, e3, nodes[1])
    assert [plugin.filter(state, incoming, ni).code for ni in nodes] == [Code.SUCCESS, Code.UNSCHEDULABLE]
    clone = state.clone()  # a dry run's copy decides on its own counts
    plugin.remove_pod(clone, incoming, e3, nodes[1])
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
    """MoveAllToActiveOrBackoffQueue as the scan over every pooled pod for every event (main
    f984868, the shape of upstream's movePodsToActiveOrBackoffQueue): the reference for the class
    index. The hints are called for every pod (no per-event signature memo)."""

    def _move_by_class(self, event: ClusterEvent, old: Any, new: Any) -> list[str]:
        return self._move_by_scan(event, old, new, None)

    def _worth_requeuing(self, q: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any,
                         matching: Any = None, hints: Any = None) -> Strategy:
        return super()._worth_requeuing(q, event, old, new, matching, None)


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
    """After upstream scheduling_queue_test.go TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint
    (adapted): a hint answering QueueSkip leaves the pods, Queue moves them; with the index the hint
    runs once per event for all pods of a class."""
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


# ---- PerNode: cluster-wide PreFilter aggregates kept across cycles -------------------------------------------------
def _tree_snapshot(nodes: list[NodeInfo], tree: Optional[list[NodeInfo]] = None) -> Any:
    """A snapshot as KubeScheduler._snapshot makes one: its NodeInfos journal their pod changes
    into one ChangeJournal (the first one a node already has; attached here to those without)."""
    from karpy.kubescheduler.nodeinfo import ChangeJournal, Snapshot
    journal = next((ni.journal for ni in nodes if ni.journal is not None), None) or ChangeJournal()
    for ni in nodes:
        if ni.journal is None:
            ni.journal = journal
    snap = Snapshot(nodes)
    snap.tree = nodes if tree is None else tree
    snap.journal = journal
    return snap


def test_per_node_values_recompute_only_changed_nodes_and_rebuild_on_a_new_tree():
    from karpy.kubescheduler.nodeinfo import PerNode
    nodes = [NodeInfo.from_node(make_node(f"n{i}", capacity={"pods": "110"})) for i in range(4)]
    seen: list[str] = []

    def count(ni: NodeInfo) -> int:
        seen.append(ni.name)
        return len(ni.pods)
    per: PerNode[int] = PerNode()
    assert per.refresh(_tree_snapshot(nodes), count) is None and seen == ["n0", "n1", "n2", "n3"]
    seen.clear()
    assert per.refresh(_tree_snapshot(nodes), count) == [] and seen == []  # nothing changed: nothing walked
    nodes[2].add_pod(new_pod_info(make_pod("a", uid="a", node_name="n2")))
    assert per.refresh(_tree_snapshot(nodes), count) == [(2, 0, 1)] and seen == ["n2"]
    seen.clear()
    grown = nodes + [NodeInfo.from_node(make_node("n4", capacity={"pods": "110"}))]  # a node added: a new tree
    # the same NodeInfo objects with unchanged generations keep their values: only n4 is computed
    assert per.refresh(_tree_snapshot(grown), count) is None and seen == ["n4"] and per.values == [0, 0, 1, 0, 0]
    seen.clear()
    grown[1].add_pod(new_pod_info(make_pod("b", uid="b", node_name="n1")))
    rebuilt = [grown[0], NodeInfo.from_node(grown[1].node, grown[1].pods)] + grown[2:]  # n1 updated: a new object
    assert per.refresh(_tree_snapshot(rebuilt), count) is None and seen == ["n1"] and per.values == [0, 1, 1, 0, 0]
    seen.clear()
    grown[3].add_pod(new_pod_info(make_pod("c", uid="c", node_name="n3")))
    clone = rebuilt[0].clone()
    clone.add_pod(new_pod_info(make_pod("d", uid="d", node_name="n0")))  # a clone's changes are not journaled
    assert per.refresh(_tree_snapshot(rebuilt), count) == [(3, 0, 1)] and seen == ["n3"]
    seen.clear()
    grown = rebuilt
    seen.clear()
    assert per.refresh(list(grown), count) is None and len(seen) == 5  # not a scheduler snapshot: nothing kept
    seen.clear()
    assert per.refresh(list(grown), count) is None and len(seen) == 5


def _churned_cluster(seed: int) -> tuple[KubeScheduler, random.Random]:
    rng = random.Random(seed)
    ks = KubeScheduler(FakeClock(), random.Random(seed))
    for i in range(8):
        labels = {HOST: f"n{i}"}
        if i % 5:
            labels[ZONE] = f"z{i % 3}"
        ks.add_node(make_node(f"n{i}", labels=labels, capacity={"cpu": "64", "memory": "64Gi", "pods": "110"}))
    return ks, rng


def _churn_pod(rng: random.Random, i: int, node: Optional[str]) -> Any:
    app = rng.choice("abc")
    kw: dict = {}
    kind = rng.randrange(5)
    if kind == 1:
        kw["pod_anti_affinity"] = [pod_affinity_term({"app": rng.choice("abc")}, rng.choice([ZONE, HOST]))]
    elif kind == 2:
        kw["pod_affinity"] = [pod_affinity_term({"app": rng.choice("abc")}, rng.choice([ZONE, HOST]))]
    elif kind == 3:
        kw["topology_spread_constraints"] = [
            {"maxSkew": 1, "topologyKey": k, "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": rng.choice("abc")}}} for k in rng.choice([[ZONE], [HOST], [ZONE, HOST]])]
    return make_pod(f"p{i}", rng.choice(["default", "ns2"]), uid=f"p{i}", labels={"app": app}, node_name=node, **kw)


@pytest.mark.parametrize("seed", range(4))
def test_prefilter_aggregates_kept_across_cycles_match_a_fresh_walk(seed):
    """PodTopologySpread's domain counts and InterPodAffinity's three count maps, kept across
    cycles and updated from the nodes whose pods changed, equal a fresh plugin's walk over fresh
    NodeInfos after every pod add / delete / update and node add / delete of the scheduler."""
    from karpy.kubescheduler.plugins import InterPodAffinity
    ks, rng = _churned_cluster(seed)
    pts = next(p for p in ks.framework.plugins if p.name == "PodTopologySpread")
    ipa = next(p for p in ks.framework.plugins if p.name == "InterPodAffinity")
    bound: list[str] = []
    checked = nonzero = rejected = 0
    for step in range(250):
        r = rng.random()
        if r < 0.55 or not bound:
            node = rng.choice(list(ks.nodes))
            ks.add_pod(_churn_pod(rng, step, node))
            bound.append(f"{'default'}/p{step}")
            p = ks.pods.get(bound[-1])
            if p is None:  # made in ns2
                bound[-1] = f"ns2/p{step}"
        elif r < 0.75:
            ks.delete_pod(bound.pop(rng.randrange(len(bound))))
        elif r < 0.85:
            key = rng.choice(bound)
            old = ks.pods[key]
            ks.update_pod(make_pod(old.metadata.name, old.metadata.namespace, uid=old.metadata.uid,
                                   labels={"app": rng.choice("abc")}, node_name=old.spec.node_name))
        elif r < 0.9:
            name = f"x{step}"
            ks.add_node(make_node(name, labels={HOST: name, ZONE: "z9"}, capacity={"cpu": "64", "pods": "110"}))
        elif len(ks.nodes) > 4:
            gone = rng.choice([n for n in ks.nodes if n.startswith("x")] or [None])
            if gone is not None:
                ks.delete_node(gone)
        snap = ks._snapshot()
        fresh = [NodeInfo.from_node(ni.node, list(ni.pods)) for ni in snap]
        for _ in range(2):  # a second cycle with nothing changed reuses the kept counts
            incoming = new_pod_info(_churn_pod(rng, 10_000 + step, None))
            state, fresh_state = CycleState(), CycleState()
            a = pts.pre_filter(state, incoming, snap)[0].code
            b = PodTopologySpread().pre_filter(fresh_state, incoming, fresh)[0].code
            assert a == b
            if a != Code.SKIP:
                assert state.data[pts.name].counts == fresh_state.data[pts.name].counts
                nonzero += any(v for d in state.data[pts.name].counts for v in d.values())
            a = ipa.pre_filter(state, incoming, snap)[0].code
            b = InterPodAffinity().pre_filter(fresh_state, incoming, fresh)[0].code
            assert a == b
            if a != Code.SKIP:
                x, y = state.data[ipa.name], fresh_state.data[ipa.name]
                assert (x.existing_anti, x.affinity, x.anti) == (y.existing_anti, y.affinity, y.anti)
                assert 0 not in x.existing_anti.values() and 0 not in x.affinity.values() and 0 not in x.anti.values()
                nonzero += bool(x.existing_anti or x.affinity or x.anti)
            # Plugin.node_filter (bound once per filter pass) gives Filter's status on every node
            for plugin in (pts, ipa):
                bound_filter = plugin.node_filter(state, incoming)
                for ni in snap:
                    got, want = bound_filter(ni), plugin.filter(state, incoming, ni)
                    assert (got.code, got.reasons) == (want.code, want.reasons)
                    rejected += bool(got.code)
            checked += 1
    assert checked == 500 and nonzero > 200 and rejected > 200


def test_prefilter_counts_handed_to_a_cycle_are_copies():
    """AddPod / RemovePod on one cycle's state (nominated pods, preemption dry runs) never reach
    the kept counts nor the next cycle."""
    ks, rng = _churned_cluster(0)
    for i in range(6):
        ks.add_pod(make_pod(f"e{i}", uid=f"e{i}", labels={"app": "a"}, node_name=f"n{i % 3 + 1}"))
    tsc = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "a"}}}]
    incoming = new_pod_info(make_pod("p", uid="p", labels={"app": "a"}, topology_spread_constraints=tsc,
                                     pod_anti_affinity=[pod_affinity_term({"app": "a"}, ZONE)]))
    pts = next(p for p in ks.framework.plugins if p.name == "PodTopologySpread")
    ipa = next(p for p in ks.framework.plugins if p.name == "InterPodAffinity")
    s1 = CycleState()
    pts.pre_filter(s1, incoming, ks._snapshot())
    ipa.pre_filter(s1, incoming, ks._snapshot())
    before = ([dict(d) for d in s1.data[pts.name].counts], dict(s1.data[ipa.name].anti))
    ni = ks.node_infos["n1"]
    extra = new_pod_info(make_pod("x", uid="x", labels={"app": "a"}, node_name="n1"))
    pts.add_pod(s1, incoming, extra, ni)
    ipa.add_pod(s1, incoming, extra, ni)
    assert s1.data[pts.name].counts != before[0] and s1.data[ipa.name].anti != before[1]
    s2 = CycleState()
    pts.pre_filter(s2, incoming, ks._snapshot())
    ipa.pre_filter(s2, incoming, ks._snapshot())
    assert (s2.data[pts.name].counts, s2.data[ipa.name].anti) == before


# ---- preemption: nothing of lower priority anywhere ----------------------------------------------------------------
def _preemption_cluster(priorities: list[int]) -> KubeScheduler:
    ks = KubeScheduler(FakeClock(), random.Random(5))
    for i, prio in enumerate(priorities):
        ks.add_node(make_node(f"n{i}", capacity={"cpu": "1", "memory": "4Gi", "pods": "10"}))
        ks.add_pod(make_pod(f"e{i}", uid=f"e{i}", requests={"cpu": "1"}, node_name=f"n{i}", priority=prio))
    ks.add_node(make_node("tainted", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}],
                          capacity={"cpu": "4", "memory": "4Gi", "pods": "10"}))
    return ks


def _loop_only(ks: KubeScheduler) -> KubeScheduler:
    """``ks`` whose preemption never sees a cluster-wide lowest priority (the dry runs decide)."""
    from karpy.kubescheduler.nodeinfo import PerNode

    class NoMin(list):  # type: ignore[type-arg]
        def __iter__(self):  # min() of the kept lowest priorities sees -inf
            return iter([float("-inf")])

    class LoopOnly(PerNode):  # type: ignore[type-arg]
        def refresh(self, nodes: Any, compute: Any) -> Any:
            out = super().refresh(nodes, compute)
            self.values = NoMin(self.values)
            return out
    ks.preemption._lowest = LoopOnly()
    return ks


@pytest.mark.parametrize("priorities,preemptor,found", [
    ([0, 0, 0], 0, False), ([5, 7, 9], 5, False), ([5, 7, 9], 6, True), ([10, 10], 3, False), ([0, 10], 10, True)])
def test_no_lower_priority_pod_anywhere_gives_the_dry_runs_message(priorities, preemptor, found):
    """upstream default_preemption.go SelectVictimsOnNode: a node without a pod of lower priority
    answers "No preemption victims found for incoming pod" (UnschedulableAndUnresolvable); the
    shortcut gives each potential node that answer without the dry runs, with the same message,
    nomination and RNG draws (the candidate offset) as running them; a lower-priority pod
    anywhere takes the dry runs again."""
    outs = []
    for ks in (_preemption_cluster(priorities), _loop_only(_preemption_cluster(priorities))):
        ks.add_pod(make_pod("p", uid="p", requests={"cpu": "1"}, priority=preemptor))
        r = ks.schedule_one()
        outs.append((r.outcome, r.condition["message"], r.nominated_node_name, [v.key for v in r.victims],
                     ks.rng.random()))
    assert outs[0] == outs[1]
    if not found:
        n = len(priorities)
        assert outs[0][1] == (f"0/{n + 1} nodes are available: 1 node(s) had untolerated taint(s), "
                              f"{n} Insufficient cpu. preemption: 0/{n + 1} nodes are available: "
                              f"1 Preemption is not helpful for scheduling, {n} No preemption victims found for "
                              f"incoming pod.")
    else:
        assert outs[0][0] == "Nominated" and outs[0][3]


def test_lowest_priority_follows_a_bound_pod():
    """The kept lowest priorities follow the nodes' pods: a low-priority pod bound later makes the
    next preemptor find its victim."""
    ks = _preemption_cluster([10, 10])
    ks.add_pod(make_pod("p", uid="p", requests={"cpu": "1"}, priority=5))
    assert "No preemption victims" in ks.schedule_one().condition["message"]
    ks.add_node(make_node("n9", capacity={"cpu": "1", "memory": "4Gi", "pods": "10"}))
    ks.add_pod(make_pod("low", uid="low", requests={"cpu": "1"}, node_name="n9", priority=1))
    ks.delete_pod("default/p")
    ks.add_pod(make_pod("q", uid="q", requests={"cpu": "1"}, priority=5))
    r = ks.schedule_one()
    assert r.outcome == "Nominated" and r.nominated_node_name == "n9" and [v.key for v in r.victims] == ["default/low"]


def test_spread_constraints_built_once_per_pod_info_and_again_for_an_updated_pod():
    """build_constraints keeps a PodInfo's constraints (pod.memo); the updated pod's new PodInfo
    gets its own, so a changed maxSkew decides the next cycle."""
    from karpy.kubescheduler.plugins.podtopologyspread import build_constraints

    def spread(skew: int) -> Any:
        return make_pod("p", uid="p", labels={"app": "a"}, requests={"cpu": "1"}, topology_spread_constraints=[
            {"maxSkew": skew, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": "a"}}}])
    pi = new_pod_info(spread(1))
    assert build_constraints(pi, "DoNotSchedule") is build_constraints(pi, "DoNotSchedule")
    assert build_constraints(pi, "ScheduleAnyway") == []
    ks = KubeScheduler(FakeClock(), random.Random(0))
    ks.add_node(make_node("a", labels={ZONE: "z1"}, capacity={"cpu": "8", "memory": "8Gi", "pods": "10"}))
    ks.add_node(make_node("c", labels={ZONE: "z2"}, taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}],
                          capacity={"cpu": "8", "memory": "8Gi", "pods": "10"}))
    for i in range(2):
        ks.add_pod(make_pod(f"e{i}", uid=f"e{i}", labels={"app": "a"}, node_name="a"))
    ks.add_pod(spread(1))
    r = ks.schedule_one()
    assert r.outcome == "Unschedulable" and "didn't match pod topology spread constraints" in r.condition["message"]
    ks.update_pod(spread(3))
    ks.activate(["default/p"])
    r = ks.schedule_one()
    assert (r.outcome, r.node_name) == ("Bound", "a")


def test_count_matching_on_node_with_kept_selector_answers_equals_the_plain_count():
    """count_matching_on_node (selector answers kept per selector signature and pod labels across
    nodes and cycles) equals count_pods_match_selector over the node's pods."""
    from karpy.api.meta import LabelSelector, LabelSelectorRequirement
    from karpy.kubescheduler.plugins.podtopologyspread import (Constraint, count_matching_on_node,
                                                               count_pods_match_selector)
    rng = random.Random(3)
    selectors = [LabelSelector(match_labels={"app": a}) for a in "abc"] + [
        LabelSelector(match_labels={}, match_expressions=[LabelSelectorRequirement(key="app", operator="In", values=["a", "b"])]),
        LabelSelector(match_labels={"app": "a"}, match_expressions=[LabelSelectorRequirement(key="tier", operator="Exists", values=[])])]
    nodes = [NodeInfo.from_node(make_node(f"n{i}", capacity={"pods": "110"})) for i in range(5)]
    checked = 0
    answers: dict = {}  # one table across nodes and steps, as a PodTopologySpread instance keeps it
    for step in range(300):
        ni = rng.choice(nodes)
        if ni.pods and rng.random() < 0.3:
            ni.remove_pod(rng.choice(ni.pods))
        else:
            labels = {"app": rng.choice("abcd")}
            if rng.random() < 0.5:
                labels["tier"] = "x"
            ni.add_pod(new_pod_info(make_pod(f"p{step}", rng.choice(["default", "ns2"]), uid=f"p{step}", labels=labels)))
        for sel in selectors:
            c = Constraint(1, HOST, sel)
            for ns in ("default", "ns2"):
                for n in nodes:
                    got = count_matching_on_node(n, c, ns, answers)
                    assert got == count_pods_match_selector(n.pods, sel, ns)
                    checked += got > 0
    assert checked > 1000


# ---- pods grouped by labels (nodeinfo.pods_by_labels) --------------------------------------------------------------
def _grouped_pod(rng: random.Random, i: int) -> Any:
    """A pod of a few shared label sets (replicas), namespaces, and sometimes terminating."""
    labels = {"app": rng.choice("abc")}
    if rng.random() < 0.4:
        labels["tier"] = rng.choice("xy")
    p = make_pod(f"p{i}", rng.choice(["default", "ns2"]), uid=f"p{i}", labels=labels)
    if rng.random() < 0.2:
        p.metadata.deletion_timestamp = "2024-01-01T00:00:00Z"
    return new_pod_info(p)


def _churned_groups(seed: int, steps: int = 300) -> Any:
    """Nodes whose pods are added and removed at random; yields the nodes after each change."""
    rng = random.Random(seed)
    nodes = [NodeInfo.from_node(make_node(f"n{i}", capacity={"pods": "110"})) for i in range(4)]
    for step in range(steps):
        ni = rng.choice(nodes)
        if ni.pods and rng.random() < 0.3:
            ni.remove_pod(rng.choice(ni.pods))
        else:
            ni.add_pod(_grouped_pod(rng, step))
        yield rng, nodes


def test_pods_by_labels_groups_every_pod_and_follows_pod_changes():
    """pods_by_labels (kept per node generation) equals grouping the node's current pods by
    labels_key: first-seen order, sizes, non-terminating sizes, the first pod of each group."""
    from karpy.kubescheduler.nodeinfo import pods_by_labels
    multi = 0
    for _rng, nodes in _churned_groups(1):
        for ni in nodes:
            want: dict = {}
            for p in ni.pods:
                g = want.setdefault(p.labels_key, [0, 0, p])
                g[0] += 1
                g[1] += not p.terminating
            got = pods_by_labels(ni)
            assert [(lk, n, live, first) for lk, n, live, first in got] == \
                [(lk, n, live, first) for lk, (n, live, first) in want.items()]
            assert pods_by_labels(ni) is got  # kept while the node's pods are unchanged
            multi += any(n > live > 0 for _lk, n, live, _p in got)
    assert multi > 100


def test_count_matching_on_node_by_label_groups_counts_each_live_pod():
    """count_matching_on_node over label groups (several replicas per group, terminating pods,
    two namespaces) equals count_pods_match_selector over the node's pods one by one."""
    from karpy.api.meta import LabelSelector, LabelSelectorRequirement
    from karpy.kubescheduler.plugins.podtopologyspread import (Constraint, count_matching_on_node,
                                                               count_pods_match_selector)
    selectors = [LabelSelector(match_labels={"app": a}) for a in "ab"] + [
        LabelSelector(match_labels={}, match_expressions=[LabelSelectorRequirement(key="tier", operator="Exists", values=[])])]
    answers: dict = {}
    checked = 0
    for _rng, nodes in _churned_groups(2):
        for sel in selectors:
            c = Constraint(1, HOST, sel)
            for ns in ("default", "ns2"):
                for ni in nodes:
                    got = count_matching_on_node(ni, c, ns, answers)
                    assert got == count_pods_match_selector(ni.pods, sel, ns)
                    checked += got > 1
    assert checked > 1000


def test_interpodaffinity_incoming_counts_by_label_groups_equal_upstreams_walk():
    """InterPodAffinity's PreFilter affinity / anti-affinity counts (node shares taken by label
    group) equal getIncomingAffinityAntiAffinityCounts' walk over every pod of every node
    (terminating pods included), written out here."""
    from karpy.kubescheduler.nodeinfo import Snapshot
    from karpy.kubescheduler.plugins import InterPodAffinity
    plugin = InterPodAffinity()

    def walk(pod: Any, nodes: list[NodeInfo]) -> tuple[dict, dict]:
        aff: dict = {}
        anti: dict = {}
        for ni in nodes:
            for other in ni.pods:
                if pod.required_affinity_terms and all(t.matches(other) for t in pod.required_affinity_terms):
                    for t in pod.required_affinity_terms:
                        if t.topology_key in ni.labels:
                            k = (t.topology_key, ni.labels[t.topology_key])
                            aff[k] = aff.get(k, 0) + 1
                for t in pod.required_anti_affinity_terms:
                    if t.matches(other) and t.topology_key in ni.labels:
                        k = (t.topology_key, ni.labels[t.topology_key])
                        anti[k] = anti.get(k, 0) + 1
        return aff, anti
    checked = 0
    for rng, nodes in _churned_groups(3):
        kw: dict = {}
        if rng.random() < 0.6:
            kw["pod_affinity"] = [pod_affinity_term({"app": rng.choice("ab")}, HOST)]
        if rng.random() < 0.6:
            kw["pod_anti_affinity"] = [pod_affinity_term({"app": rng.choice("abc")}, HOST),
                                       pod_affinity_term({"tier": "x"}, HOST)]
        if not kw:
            continue
        incoming = new_pod_info(make_pod("in", rng.choice(["default", "ns2"]), uid="in", **kw))
        state = CycleState()
        st, _ = plugin.pre_filter(state, incoming, Snapshot(nodes))
        assert st.code == Code.SUCCESS
        got = state.data[plugin.name]
        assert (got.affinity, got.anti) == walk(incoming, nodes)
        checked += any(n > 1 for n in list(got.affinity.values()) + list(got.anti.values()))
    assert checked > 50


# ---- selectHost and the cycle's score map --------------------------------------------------------------------------
def _plain_select_host(rng: random.Random, feasible: list[NodeInfo], scores: list[int]) -> str:
    """schedule_one.go selectHost: reservoir sampling over the max-score nodes, in node order."""
    best = max(scores)
    selected = ""
    cnt = 0
    for ni, s in zip(feasible, scores):
        if s != best:
            continue
        cnt += 1
        if cnt == 1 or rng.randrange(cnt) == 0:
            selected = ni.name
    return selected


def test_select_host_over_the_best_nodes_only_makes_the_same_choice_and_draws():
    """Algorithm.select_host (the best nodes found by list.index scans) picks the node the plain
    reservoir loop picks and leaves the random generator where the loop leaves it."""
    from karpy.kubescheduler.schedule_one import Algorithm
    nodes = [NodeInfo.from_node(make_node(f"n{i}")) for i in range(12)]
    rng = random.Random(4)
    ties = 0
    for case in range(500):
        n = rng.randrange(1, 13)
        scores = [rng.choice([0, 50, 99, 100, 100, 300]) for _ in range(n)]
        algo = Algorithm(None, random.Random(case), 0)  # type: ignore[arg-type]
        plain = random.Random(case)
        assert algo.select_host(nodes[:n], scores) == _plain_select_host(plain, nodes[:n], scores), (case, scores)
        assert algo.rng.random() == plain.random(), case
        ties += scores.count(max(scores)) > 2
    assert ties > 100


def test_schedule_result_scores_map_each_feasible_node_to_its_total():
    """ScheduleResult.scores: each feasible node's name with its own total (the names prioritize
    recorded for the cycle, in the feasible nodes' order)."""
    from karpy.kubescheduler.framework import CycleState
    ks = KubeScheduler(FakeClock(), random.Random(2))
    for i in range(6):
        ks.add_node(make_node(f"n{i}", labels={ZONE: f"z{i % 2}"}, capacity={"cpu": str(2 + i), "memory": "8Gi", "pods": "20"}))
    for j in range(5):
        ks.add_pod(make_pod(f"e{j}", uid=f"e{j}", node_name=f"n{j}", requests={"cpu": "1", "memory": "1Gi"}))
    p = ks._pod_info(make_pod("q", uid="q", requests={"cpu": "500m", "memory": "1Gi"}))
    nodes = ks._snapshot()
    state = CycleState()
    ks.framework.run_pre_filter(state, p, nodes)
    res = ks.algorithm.schedule_pod(state, p, nodes, lambda _n: [])
    feasible = [ni for ni in nodes if ni.name in res.scores]
    assert len(feasible) == 6 and list(res.scores) == [ni.name for ni in feasible]
    state2 = CycleState()
    ks.framework.run_pre_filter(state2, p, nodes)
    totals = ks.algorithm.prioritize(state2, p, feasible, nodes)
    assert list(res.scores.values()) == totals and len(set(totals)) > 2


def test_match_memo_answers_equal_term_matches_for_fresh_terms_and_reused_ids():
    """InterPodAffinity's _MatchMemo (rows found by term id, kept with the term itself) answers
    what AffinityTerm.matches answers, for terms made and dropped one after another (CPython
    hands a new term the id of a dropped one), against the incoming pod and other pods, with the
    other-pod table shared by successive memos as the plugin shares it."""
    from karpy.kubescheduler.plugins.interpodaffinity import _MatchMemo
    rng = random.Random(6)
    others = [new_pod_info(make_pod(f"o{i}", rng.choice(["default", "ns2"]), uid=f"o{i}",
                                    labels={"app": rng.choice("abc"), "tier": rng.choice("xy")})) for i in range(12)]
    shared: dict = {}
    checked = 0
    for cycle in range(40):
        incoming = rng.choice(others)
        memo = _MatchMemo(incoming, shared)
        for _ in range(30):
            sel = {"app": rng.choice("abc")}
            if rng.random() < 0.5:
                sel["tier"] = rng.choice("xy")
            holder = new_pod_info(make_pod("h", rng.choice(["default", "ns2"]), uid="h",
                                           pod_anti_affinity=[pod_affinity_term(sel, HOST)]))
            t = holder.required_anti_affinity_terms[0]
            assert memo.term_matches_incoming(t) == t.matches(incoming)
            for o in others:
                assert memo.term_matches(t, o) == t.matches(o)
                checked += t.matches(o)
            del holder, t
    assert checked > 500
