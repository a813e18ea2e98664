"""karpy/kubescheduler/queue.py's shortcuts against the plain computation each replaces: the
requeue-class index of the unschedulable pool, the queueing-hint memo and signatures, the
nominator index, the event registrations, the backoff heap's head and the PreEnqueue order."""

from __future__ import annotations

import random
from typing import Any, Optional

import pytest

from karpy.api.builders import make_node, make_pod, pod_affinity_term
from karpy.kubescheduler import KubeScheduler
from karpy.kubescheduler.framework import ADD, ASSIGNED_POD, NODE, UPDATE_NODE_TAINT, ClusterEvent, QueueingHint
from karpy.kubescheduler.podinfo import new_pod_info
from karpy.kubescheduler.queue import PriorityQueue, QueuedPodInfo, Strategy

from ._helpers import node, pod
from .conftest import FakeClock
from .test_framework_equivalence import _memo_cluster_ops, _play


def test_event_registrations_match_the_plain_scan():
    """PriorityQueue's registrations per event (kept per equal event) are the ones a scan of every
    registration with ClusterEvent.Match finds, for every resource and action, asked repeatedly
    and interleaved; is_event_of_interest follows them."""
    from karpy.kubescheduler import framework as F
    ks = KubeScheduler(FakeClock(), random.Random(0))
    q = ks.queue
    resources = [F.NODE, F.ASSIGNED_POD, F.UNSCHEDULED_POD, F.WILDCARD, "PersistentVolumeClaim", "CSINode"]
    actions = [F.ADD, F.DELETE, F.UPDATE, F.UPDATE_NODE_ALLOCATABLE, F.UPDATE_NODE_LABEL, F.UPDATE_NODE_TAINT,
               F.UPDATE_NODE_CONDITION, F.UPDATE_POD_LABEL, F.UPDATE_POD_TOLERATION,
               F.UPDATE_POD_SCHEDULING_GATES_ELIMINATED, F.UPDATE_POD_SCALE_DOWN, F.ALL, "GangMemberAdd"]
    events = [F.ClusterEvent(r, a) for r in resources for a in actions]
    rng = random.Random(2)
    seen = set()
    for _ in range(3):
        rng.shuffle(events)
        for ev in events:
            plain = [(p, fn) for p, reg, fn in q._events if reg.matches(ev)]
            plain_idx = frozenset(i for i, (_p, reg, _fn) in enumerate(q._events) if reg.matches(ev))
            assert q._matching(ev) == plain, ev
            assert q._matching_indices(ev) == plain_idx, ev
            assert q.is_event_of_interest(ev) == (ev.is_wildcard() or any(reg.matches(ev) for _, reg, _ in q._events))
            seen.add(len(plain))
    assert len(seen) > 3, seen


def test_queue_backoff_head_and_pre_enqueue_order_match_the_plain_forms():
    """The next backoff flush tick (the earlier head of the two backoff queues) and the
    PreEnqueue order (the configured one unless a plugin gated the pod before) equal the plain
    computations, at every step of a run with pods in both backoff queues and gated pods."""
    import math

    from karpy.kubescheduler.podinfo import new_pod_info
    ks = KubeScheduler(FakeClock(), random.Random(0))
    q = ks.queue
    fwk = ks.framework
    seen_heads = set()

    def check() -> None:
        heads = [sl[0][0] for sl in (q._backoff, q._error_backoff) if sl]
        want = math.inf if not heads else max(q._next_backoff_flush, min(heads) + 1.0)
        assert q._next_backoff_due() == want
        seen_heads.add((bool(q._backoff), bool(q._error_backoff)))
    for i in range(8):
        ks.add_pod(make_pod(f"p{i}", uid=f"p{i}", requests={"cpu": "3"}))
        check()
    for step in range(40):
        while (r := ks.schedule_one()) is not None:
            check()
        ks.clock.t += 0.7
        # no node first (the error backoff queue); then nodes one by one, each freeing the pods
        # that failed on the last one (the backoff queue while they back off)
        if step % 6 == 2 and len(ks.nodes) < 6:
            ks.add_node(make_node(f"n{step}", capacity={"cpu": "4", "pods": "10"}))
            check()
        ks.queue.run_flushes()
        check()
    assert {(True, False), (False, True), (False, False)} <= seen_heads, seen_heads
    names = [p.name for p in fwk.pre_enqueue_plugins]
    gated = new_pod_info(make_pod("g", labels={"scheduling.x-k8s.io/pod-group": "missing"}))
    for first in ["", *names, "Other"]:
        order = sorted(fwk.pre_enqueue_plugins, key=lambda p: p.name != first)
        calls: list[str] = []
        for p in fwk.pre_enqueue_plugins:
            def spy(pod: Any, _p: Any = p, _f: Any = type(p).pre_enqueue) -> Any:
                calls.append(_p.name)
                return _f(_p, pod)
            p.pre_enqueue = spy  # type: ignore[method-assign]
        st = fwk.run_pre_enqueue(gated, first)
        for p in fwk.pre_enqueue_plugins:
            del p.pre_enqueue
        want_calls = []
        for p in order:
            want_calls.append(p.name)
            if not type(p).pre_enqueue(p, gated).is_success():
                break
        assert calls == want_calls, first
        assert not st.is_success() and st.plugin == want_calls[-1]


ZONE = "topology.kubernetes.io/zone"


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


def _zonal_node(name: str, zone: str):
    return make_node(name, labels={"topology.kubernetes.io/zone": zone, "kubernetes.io/hostname": name},
                     capacity={"cpu": "4", "memory": "8Gi", "pods": "110"})


def test_nominator_index_matches_scan():
    ks = KubeScheduler(FakeClock(), random.Random(0))
    for i in range(4):
        ks.add_node(_zonal_node(f"n{i}", "z"))
    for i in range(6):
        ks.add_pod(make_pod(f"p{i}", uid=f"p{i}", requests={"cpu": "1"}))
    assert list(ks._nominator()("n0")) == [] == ks._nominated_on("n0")
    for i, n in enumerate(["n1", "n2", "n1", "n3", "n1"]):
        ks.nominated[f"default/p{i}"] = n
    ks.nominated["default/gone"] = "n1"  # a nomination whose pod is unknown is dropped by both
    look = ks._nominator()
    for n in ["n0", "n1", "n2", "n3", "nx"]:
        assert list(look(n)) == ks._nominated_on(n)


def _without_hint_signatures(ks: KubeScheduler) -> KubeScheduler:
    for _plugin, _event, fn in ks.queue._events:
        fn.__dict__.pop("pod_signature", None)
    return ks


def test_queueing_hint_memo_matches_calling_every_hint():
    """One QueueingHint call per event and pod signature (framework.hint_signature) moves the same
    pods as calling every hint for every unschedulable pod: same cycles, same outcomes."""
    retried = 0
    for seed in range(12):
        ops = _memo_cluster_ops(seed)
        fast_ks = KubeScheduler(FakeClock(), random.Random(seed))
        assert sum(1 for *_, fn in fast_ks.queue._events if hasattr(fn, "pod_signature")) >= 10
        fast = _play(fast_ks, ops)
        plain = _play(_without_hint_signatures(KubeScheduler(FakeClock(), random.Random(seed))), ops)
        assert fast == plain, seed
        retried += len(fast) - len({k for k, *_ in fast})  # cycles of pods retried after an event
    assert retried > 0


def _hint_pods() -> list:
    """Pending pods that differ in everything some QueueingHint reads."""
    pods = []
    i = 0
    for ns in ("default", "other"):
        for tol in (None, "dedicated", "exists"):
            for req in ({"cpu": "1"}, {"cpu": "3", "memory": "1Gi"}):
                for aff in range(7):
                    kw: dict = {}
                    if tol == "dedicated":
                        kw["tolerations"] = [{"key": "dedicated", "value": "a", "effect": "NoSchedule"}]
                    elif tol == "exists":
                        kw["tolerations"] = [{"operator": "Exists"}]
                    app = ("web", "db")[i % 2]
                    if aff == 1:
                        kw["node_selector"] = {"tier": "a"}
                    elif aff == 2:
                        kw["node_requirements"] = [("topology.kubernetes.io/zone", "In", ["z1"])]
                    elif aff == 3:
                        kw["topology_spread_constraints"] = [{
                            "maxSkew": 1, "topologyKey": ("topology.kubernetes.io/zone", "kubernetes.io/hostname")[i % 2],
                            "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": app}}}]
                    elif aff == 4:
                        kw["pod_anti_affinity"] = [pod_affinity_term({"app": app}, "kubernetes.io/hostname")]
                    elif aff == 5:
                        kw["pod_affinity"] = [pod_affinity_term({"app": app}, "topology.kubernetes.io/zone")]
                    elif aff == 6:
                        kw["host_ports"] = [80 + i % 2]
                    pods.append(new_pod_info(make_pod(f"h{i}", ns, uid=f"h{i}", labels={"app": app}, requests=req, **kw)))
                    i += 1
    return pods


def _hint_objects() -> list[tuple]:
    """(old, new) pairs of Nodes and assigned Pods as events carry them (adds, updates, deletes)."""
    def n(name, zone="z1", tier="a", taints=(), cpu="4", unsched=False):
        return make_node(name, labels={"topology.kubernetes.io/zone": zone, "tier": tier}, taints=list(taints),
                         unschedulable=unsched, capacity={"cpu": cpu, "memory": "8Gi", "pods": "10"})

    ded = [("dedicated", "a", "NoSchedule")]
    nodes = [(None, n("a")), (None, n("b", "z2", "b")), (None, n("c", taints=ded)), (None, n("d", cpu="2")),
             (n("e", taints=ded), n("e")), (n("f"), n("f", taints=ded)), (n("g", "z2", "b"), n("g")),
             (n("h", unsched=True), n("h")), (n("i", cpu="2"), n("i", cpu="8")), (n("j"), None)]

    def p(name, ns, app, node="a", anti=False, port=None):
        return make_pod(name, ns, uid=name, labels={"app": app}, node_name=node, unschedulable=False,
                        host_ports=[port] if port else (),
                        pod_anti_affinity=[pod_affinity_term({"app": "web"}, "kubernetes.io/hostname")] if anti else None)

    pods = [(None, p("x", "default", "web")), (None, p("y", "other", "db")), (p("z", "default", "web"), None),
            (p("w", "default", "db", anti=True), None), (p("v", "default", "web"), p("v", "default", "db")),
            (p("u", "other", "web", port=80), None), (None, p("t", "default", "web", anti=True))]
    return nodes + pods


def test_hint_signatures_capture_what_each_hint_reads():
    """For every hint that declares a pod signature: pods with equal signatures get equal hints for
    every event object, so the per-event memo answers exactly what calling the hint would."""
    from karpy.kubescheduler.framework import NODE
    ks = KubeScheduler(FakeClock(), random.Random(0))
    pods = _hint_pods()
    objects = _hint_objects()
    marked = [(plugin, ev, fn) for plugin, ev, fn in ks.queue._events if hasattr(fn, "pod_signature")]
    assert {plugin for plugin, _, _ in marked} >= {"NodeUnschedulable", "NodeName", "TaintToleration",
                                                    "NodeAffinity", "NodePorts", "NodeResourcesFit",
                                                    "PodTopologySpread", "InterPodAffinity"}
    compared = differing = 0
    for plugin, ev, fn in marked:
        for old, new in objects:
            if ((old or new).KIND == "Node") != (ev.resource == NODE):
                continue
            seen: dict = {}
            answers = set()
            for pi in pods:
                direct = fn(pi, old, new)
                answers.add(direct)
                sig = fn.pod_signature(pi)
                assert seen.setdefault(sig, direct) == direct, (plugin, ev, pi.name, old, new)
                compared += 1
            differing += len(answers) > 1
    assert compared > 1000 and differing > 10  # the pods and events do tell the hints apart
