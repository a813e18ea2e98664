"""Shortcuts of the scheduling cycle and the queue (issue #13, round 10), each against the plain
computation it replaces."""

from __future__ import annotations

import random
from typing import Any

from karpy.api.builders import make_node, make_pod
from karpy.kubescheduler import KubeScheduler

from .conftest import FakeClock


class _NeverEmpty(dict):  # type: ignore[type-arg]
    """A node cache that never looks empty: KubeScheduler._schedule_pod's no-node shortcut is not
    taken, the cycle builds its state and snapshot and Algorithm.schedule_pod raises."""

    def __bool__(self) -> bool:
        return True


def _queue_state(ks: KubeScheduler) -> Any:
    q = ks.queue
    return (list(q._active), list(q._backoff), list(q._error_backoff), sorted(q.unschedulable),
            sorted((k, i.attempts, i.unschedulable_count, i.consecutive_errors_count, i.timestamp, i.seq,
                    sorted(i.unschedulable_plugins)) for k, i in q.infos.items()),
            dict(ks.conditions), dict(ks.nominated))


def _no_node_run(ks: KubeScheduler) -> list[Any]:
    """Pods waiting for the first node (error backoff 1, 2, 4, 8, 10 s), then one small node
    (some bind, the rest fail on it), then none again."""
    out: list[Any] = []

    def cycles() -> None:
        while (r := ks.schedule_one()) is not None:
            out.append((r.pod_key, r.outcome, r.node_name, r.condition, r.condition_changed, r.nominated_node_name))
        out.append(_queue_state(ks))
    for i in range(6):
        ks.add_pod(make_pod(f"p{i}", uid=f"p{i}", requests={"cpu": "1"}, priority=i % 2))
    for _ in range(12):
        cycles()
        ks.clock.t += 3
    ks.add_node(make_node("n0", capacity={"cpu": "2", "pods": "10"}))
    for _ in range(4):
        cycles()
        ks.clock.t += 5
    ks.delete_node("n0")
    for i in range(6, 9):
        ks.add_pod(make_pod(f"p{i}", uid=f"p{i}", requests={"cpu": "1"}))
    for _ in range(6):
        cycles()
        ks.clock.t += 4
    return out


def test_no_node_cycles_match_the_full_cycle():
    """With no node cached, a cycle fails with "no nodes available" exactly as the full cycle
    (state, snapshot, Algorithm.schedule_pod raising NoNodesAvailable) does: same results,
    conditions, queue placement, backoff and counters, before, between and after nodes exist."""
    fast = KubeScheduler(FakeClock(), random.Random(1))
    plain = KubeScheduler(FakeClock(), random.Random(1))
    plain.node_infos = _NeverEmpty()
    got = _no_node_run(fast)
    assert got == _no_node_run(plain)
    outcomes = [o[1] for o in got if isinstance(o, tuple) and len(o) == 6 and isinstance(o[1], str)]
    assert {"Bound", "Unschedulable"} <= set(outcomes) and len(outcomes) > 30


def _plain_default_normalize(max_priority: int, reverse: bool, scores: list[int]) -> None:
    """helper.DefaultNormalizeScore as upstream writes it (index by index)."""
    m = max(scores) if scores else 0
    if m == 0:
        if reverse:
            for i in range(len(scores)):
                scores[i] = max_priority
        return
    for i, s in enumerate(scores):
        s = max_priority * s // m
        scores[i] = max_priority - s if reverse else s


def _plain_ipa_normalize(scores: list[int]) -> None:
    if not scores:
        return
    mn, mx = min(scores), max(scores)
    diff = mx - mn
    for i, s in enumerate(scores):
        scores[i] = int(100 * ((s - mn) / diff)) if diff > 0 else 0


def test_normalize_scores_match_the_index_loops():
    """DefaultNormalizeScore and InterPodAffinity's NormalizeScore, rewritten as one list
    comprehension each, give the index loops' ints, in place (the same list object)."""
    from karpy.kubescheduler.framework import CycleState, default_normalize_score
    from karpy.kubescheduler.plugins import InterPodAffinity
    rng = random.Random(3)
    ipa = InterPodAffinity()
    for _ in range(400):
        n = rng.randrange(0, 9)
        raw = [rng.choice([0, 0, 1, 7, 50, 100, 313, -40]) for _ in range(n)]
        for reverse in (False, True):
            got, want = list(raw), list(raw)
            same = got
            default_normalize_score(100, reverse, got)
            _plain_default_normalize(100, reverse, want)
            assert got == want and got is same, (raw, reverse)
        got, want = list(raw), list(raw)
        ipa.normalize_score(CycleState(), None, got)  # type: ignore[arg-type]
        _plain_ipa_normalize(want)
        assert got == want, raw


def test_score_totals_match_adding_plugin_by_plugin():
    """RunScorePlugins' totals (weighted columns summed at the end) and per-plugin scores equal
    adding each plugin's weighted scores in turn, on clusters with taints, preferred node
    affinity, spread and (anti-)affinity preferences."""
    from karpy.api.builders import pod_affinity_term
    from karpy.kubescheduler.framework import CycleState
    rng = random.Random(5)
    checked = 0
    for seed in range(6):
        ks = KubeScheduler(FakeClock(), random.Random(seed))
        for i in range(12):
            ks.add_node(make_node(f"n{i}", labels={"topology.kubernetes.io/zone": f"z{i % 3}"},
                                  taints=[("soft", "x", "PreferNoSchedule")] if rng.random() < 0.4 else [],
                                  capacity={"cpu": rng.choice(["2", "4", "8"]), "memory": "16Gi", "pods": "20"}))
        for j in range(20):
            ks.add_pod(make_pod(f"e{j}", uid=f"e{j}", labels={"app": rng.choice("ab")}, node_name=f"n{rng.randrange(12)}",
                                requests={"cpu": rng.choice(["100m", "500m", "1"]), "memory": "1Gi"}))
        fwk = ks.framework
        for k in range(8):
            p = ks._pod_info(make_pod(
                f"q{k}", uid=f"q{k}", labels={"app": "a"}, requests={"cpu": "250m", "memory": "512Mi"},
                node_preferences=[("topology.kubernetes.io/zone", "In", ["z1"])] if k % 2 else None,
                pod_affinity_preferences=[(5, pod_affinity_term({"app": "b"}, "topology.kubernetes.io/zone"))] if k % 3 else None,
                pod_anti_affinity_preferences=[(3, pod_affinity_term({"app": "a"}, "kubernetes.io/hostname"))] if k % 4 else None))
            nodes = ks._snapshot()
            state = CycleState()
            fwk.run_pre_filter(state, p, nodes)
            assert fwk.run_pre_score(state, p, nodes, nodes).is_success()
            totals, per_plugin = fwk.run_score(state, p, nodes)
            want = [0] * len(nodes)
            for name, scores in per_plugin.items():
                w = fwk.weights.get(name, 1)
                want = [t + s * w for t, s in zip(want, scores)]
            assert totals == want
            active = [pl for pl in fwk.score_plugins if pl.name not in state.skip_score]
            assert list(per_plugin) == [pl.name for pl in active]
            for pl in active:
                raw = pl.score_nodes(state, p, nodes)
                if pl.has_normalize:
                    pl.normalize_score(state, p, raw)
                assert per_plugin[pl.name] == raw, pl.name
            checked += len(per_plugin) > 4 and max(totals) != min(totals)
    assert checked > 10, checked


class _EveryPosition(set):  # type: ignore[type-arg]
    """Algorithm._failed_at that holds every journal position: every pass looks its signature up
    first, as before the journal precheck."""

    def __contains__(self, pos: object) -> bool:
        return True


def test_failed_pass_lookup_only_at_recorded_positions_loses_no_repeat():
    """A pass over every node looks for a repeatable failed pass only when the change journal is
    where one was recorded (else no NodeInfo generation is what it was): the same placements,
    diagnoses and nextStartNodeIndex as looking up every pass, and not one more full pass."""
    from .test_failed_pass_repeat import _recording, _with_replicas
    from .test_fastpaths import _memo_cluster_ops, _play
    repeats = 0
    signatures = {"fast": 0, "eager": 0}

    def counting(ks: KubeScheduler, name: str) -> KubeScheduler:
        sig = ks.framework.filter_cycle_signature

        def counted(*a: Any) -> Any:
            signatures[name] += 1
            return sig(*a)
        ks.framework.filter_cycle_signature = counted  # type: ignore[method-assign]
        return ks
    for seed in range(12):
        ops = _with_replicas(_memo_cluster_ops(seed))
        fast, fast_diags, fast_full = _recording(counting(KubeScheduler(FakeClock(), random.Random(seed)), "fast"))
        eager, eager_diags, eager_full = _recording(counting(KubeScheduler(FakeClock(), random.Random(seed)), "eager"))
        eager.algorithm._failed_at = _EveryPosition()
        assert _play(fast, ops) == _play(eager, ops), seed
        assert fast_diags == eager_diags, seed
        assert fast_full[0] == eager_full[0], seed
        repeats += len(fast_diags) - fast_full[0]
    assert repeats > 1000, repeats
    assert signatures["fast"] < signatures["eager"], signatures


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


def _imaged_node(name: str, images: list[tuple[str, int]], cpu: str = "4") -> Any:
    """A Node whose status lists ``images`` (name, size): karpy's NodeStatus has no images field,
    the scheduler reads status.images wherever it is present."""
    from types import SimpleNamespace
    n = make_node(name, labels={"topology.kubernetes.io/zone": f"z{len(name) % 2}"},
                  capacity={"cpu": cpu, "memory": "8Gi", "pods": "10"})
    st = n.status
    imgs = [SimpleNamespace(names=[img], size_bytes=size) for img, size in images]
    n.__dict__["status"] = SimpleNamespace(allocatable=st.allocatable, capacity=st.capacity,
                                           conditions=st.conditions, images=imgs)
    return n


def _image_states(ks: KubeScheduler) -> dict[str, Any]:
    return {n: {img: (s.size, s.num_nodes) for img, s in ni.image_states.items()} for n, ni in ks.node_infos.items()}


def test_image_states_match_the_full_rebuild():
    """Node adds, updates and deletes with nodes without images (the refresh is skipped) and with
    images appearing and disappearing: every NodeInfo's image states, and the placements of pods
    using the images, equal rebuilding every node's states at each node event."""
    from karpy.api.pod import Container
    rng = random.Random(4)
    catalogue = [("reg/a:1", 300 << 20), ("reg/b:1", 900 << 20), ("reg/c:1", 40 << 20)]
    skipped = 0
    for seed in range(6):
        fast = KubeScheduler(FakeClock(), random.Random(seed))
        plain = KubeScheduler(FakeClock(), random.Random(seed))
        inner = plain._refresh_images
        plain._refresh_images = lambda changed=None, _inner=inner: _inner(None)  # type: ignore[method-assign]
        fast_inner = fast._refresh_images

        def counting(changed: Any = None, _inner: Any = fast_inner, _ks: Any = fast) -> None:
            nonlocal skipped
            before = {n: ni.image_states for n, ni in _ks.node_infos.items()}
            _inner(changed)
            skipped += all(ni.image_states is before.get(n, ni.image_states) for n, ni in _ks.node_infos.items())
        fast._refresh_images = counting  # type: ignore[method-assign]
        names: list[str] = []
        placed: list[Any] = []
        for step in range(40):
            r = rng.random()
            imaged = seed % 2 == 1 and 10 < step < 30
            if r < 0.45 or not names:
                name = f"n{step}"
                names.append(name)
                images = rng.sample(catalogue, rng.randrange(len(catalogue) + 1)) if imaged else []
                for ks in (fast, plain):
                    ks.add_node(_imaged_node(name, images))
            elif r < 0.75:
                name = rng.choice(names)
                images = rng.sample(catalogue, rng.randrange(len(catalogue) + 1)) if imaged else []
                for ks in (fast, plain):
                    ks.update_node(_imaged_node(name, images))
            elif r < 0.85:
                name = names.pop(rng.randrange(len(names)))
                for ks in (fast, plain):
                    ks.delete_node(name)
            else:
                pod = make_pod(f"p{step}", uid=f"p{step}", requests={"cpu": "500m"})
                pod.spec.containers = [Container(name="c", image=rng.choice(catalogue)[0],
                                                 resources=pod.spec.containers[0].resources)]
                for ks in (fast, plain):
                    ks.add_pod(pod)
                    placed.append([(r.pod_key, r.outcome, r.node_name) for r in iter(ks.schedule_one, None)])
            assert _image_states(fast) == _image_states(plain), (seed, step)
        assert placed[0::2] == placed[1::2], seed
    assert skipped > 50, skipped


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
