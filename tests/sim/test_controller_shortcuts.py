"""The workload controllers', the event parser's and the run loop's shortcuts against their plain paths (issue #32):
each is switched off and the decisions compared on generated inputs."""

from __future__ import annotations

import functools
import random
import shlex
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

import karpy
import karpy.api.scenario as scenario_api
from karpy.api.builders import make_deployment, make_nodepool
from karpy.api.meta import ObjectMeta
from karpy.api.pod import Pod, PodSpec, PodStatus
from karpy.cloudprovider.fake import FakeCloudProvider
from karpy.sim import replicaset
from karpy.sim.pods import Pods
from karpy.sim.replicaset import ReplicaSetController, rank_pods_for_deletion


def _scenario(seed: int) -> tuple[list[Any], list[str]]:
    """Deployments (some pods finishing or departing) scaled up and down at random instants, with
    rollouts, so pods are created, condemned, evicted and replaced while others are still bound."""
    rng = random.Random(seed)
    objs: list[Any] = [make_nodepool()]
    names = []
    for i in range(rng.randint(1, 3)):
        ann = {}
        if rng.random() < 0.3:
            ann["karpy.io/depart-after"] = f"{rng.randint(1, 40)}m"
        if rng.random() < 0.3:
            ann["controller.kubernetes.io/pod-deletion-cost"] = str(rng.randint(-2, 2))
        name = f"w{i}"
        names.append(name)
        objs.append(make_deployment(name, replicas=rng.randint(1, 8), requests={"cpu": rng.choice(["250m", "1", "3"])},
                                    annotations=ann))
    events = []
    for _ in range(rng.randint(4, 12)):
        at = rng.randint(1, 170)
        name = rng.choice(names)
        if rng.random() < 0.2:
            events.append(f"{at}m rollout deployment/{name}")
        else:
            events.append(f"{at}m scale deployment/{name} {rng.randint(0, 14)}")
    return objs, events


def _run(objs: list[Any], events: list[str]) -> str:
    return karpy.simulate(objs, cloud_provider=FakeCloudProvider(), region=None, until="3h",
                          events=events).to_json()


@pytest.mark.parametrize("seed", range(12))
def test_active_owned_pods_decides_as_counts_as_active(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    objs, events = _scenario(seed)
    checked = [0, 0]
    original = ReplicaSetController.active_pods
    original_count = Pods.active_owned_count

    def both(self: ReplicaSetController, rs: Any) -> list[Any]:
        fast = original(self, rs)
        plain = [p for p in self.host.owned_pods(rs.uid) if self.host.counts_as_active(p)]
        assert [p.key for p in fast] == [p.key for p in plain] and all(a is b for a, b in zip(fast, plain))
        checked[0] += 1
        return fast

    def count_both(self: Pods, uid: str) -> int:
        n = original_count(self, uid)
        assert n == len([p for p in self.owned_pods(uid) if self.counts_as_active(p)])
        checked[1] += 1
        return n

    with monkeypatch.context() as m:
        m.setattr(ReplicaSetController, "active_pods", both)
        m.setattr(Pods, "active_owned_count", count_both)
        fast_doc = _run(objs, events)
    assert checked[0] > 0 and checked[1] > 0
    with monkeypatch.context() as m:
        m.setattr(ReplicaSetController, "fast_active", False)
        plain_doc = _run(objs, events)
    assert fast_doc == plain_doc


def _reference_rank(pods: Any, related: Any, now: float, ready_since: Any, created_at: Any) -> list[Any]:
    """rank_pods_for_deletion as it was before its per-pod facts (karpy 6bd996b), the reference."""
    on_node: dict[str, int] = {}
    for p in related:
        if p.spec.node_name:
            on_node[p.spec.node_name] = on_node.get(p.spec.node_name, 0) + 1
    rank = {p.key: (on_node.get(p.spec.node_name, 0) if p.spec.node_name else 0) for p in pods}

    def ready(p: Any) -> bool:
        return bool(p.spec.node_name) and ready_since(p.key) is not None

    def less(a: Any, b: Any) -> int:
        if bool(a.spec.node_name) != bool(b.spec.node_name):
            return -1 if not a.spec.node_name else 1
        pa = replicaset._PHASE_ORDINAL.get(a.status.phase or "Pending", 0)
        pb = replicaset._PHASE_ORDINAL.get(b.status.phase or "Pending", 0)
        if pa != pb:
            return -1 if pa < pb else 1
        if ready(a) != ready(b):
            return -1 if not ready(a) else 1
        ca, cb = replicaset._deletion_cost(a), replicaset._deletion_cost(b)
        if ca != cb:
            return -1 if ca < cb else 1
        if rank[a.key] != rank[b.key]:
            return -1 if rank[a.key] > rank[b.key] else 1
        if ready(a) and ready(b):
            ra, rb = ready_since(a.key), ready_since(b.key)
            if ra != rb:
                diff = replicaset._log_rank(ra, now) - replicaset._log_rank(rb, now)
                if diff != 0:
                    return -1 if diff < 0 else 1
                return -1 if (a.metadata.uid or "") < (b.metadata.uid or "") else 1
        ta, tb = created_at(a), created_at(b)
        if ta != tb and (ta is None or tb is None):
            return -1 if ta is None else 1
        if ta != tb:
            diff = replicaset._log_rank(ta, now) - replicaset._log_rank(tb, now)
            if diff != 0:
                return -1 if diff < 0 else 1
            return -1 if (a.metadata.uid or "") < (b.metadata.uid or "") else 1
        return 0

    return sorted(pods, key=functools.cmp_to_key(less))


@pytest.mark.parametrize("seed", range(40))
def test_rank_pods_for_deletion_ranks_as_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    epoch = datetime(2026, 1, 1, tzinfo=timezone.utc)
    now = 10_000.0
    pods, ready = [], {}
    for i in range(rng.randint(1, 30)):
        node = rng.choice([None, "n1", "n2", "n3"])
        ann = {}
        if rng.random() < 0.4:
            ann[replicaset.POD_DELETION_COST_ANNOTATION] = rng.choice(["0", "1", "-3", "bad", "7"])
        created = (None if rng.random() < 0.1
                   else epoch + timedelta(seconds=rng.choice([0.0, 5.0, 600.0, 9000.0, 9990.0, now])))
        pod = Pod(metadata=ObjectMeta(name=f"p{i}", uid=rng.choice(["", f"u{rng.randint(0, 9)}"]),
                                      annotations=ann, creation_timestamp=created),
                  spec=PodSpec(node_name=node), status=PodStatus(phase=rng.choice([None, "Pending", "Running",
                                                                                   "Unknown"])))
        pods.append(pod)
        if node and rng.random() < 0.8:
            ready[pod.key] = rng.choice([1.0, 5.0, 600.0, 3000.0, 3560.0, 9999.0, now, now + 1])
    related = pods + [Pod(metadata=ObjectMeta(name=f"r{i}"), spec=PodSpec(node_name=rng.choice(["n1", "n2", None])))
                      for i in range(rng.randint(0, 6))]

    def created_at(p: Pod) -> float | None:
        ts = p.metadata.creation_timestamp
        return (ts - epoch).total_seconds() if ts is not None else None

    expected = _reference_rank(pods, related, now, ready.get, created_at)
    assert [p.key for p in rank_pods_for_deletion(pods, related, now, ready.get, created_at)] == \
        [p.key for p in expected]


_CHARS = " \t\r\n\x0b\x0c\x1c\x85\xa0\u2003ab1/=-#'\"\\;|&*?~$`()<>"


def test_plain_event_lines_split_as_shlex_does(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(7)
    plain = 0
    for _ in range(50_000):
        line = "".join(rng.choice(_CHARS) for _ in range(rng.randint(0, 14)))
        if scenario_api._shlex_plain(line):
            plain += 1
            assert line.split() == shlex.split(line), repr(line)
    assert plain > 1000
    lines = ["10m scale deployment/web 3", "1h30m\tscale Deployment/web 0 -n team", "5m rollout deployment/a",
             "2m capacity unavailable 'c8i.*:*:*'", '3m delete pod/"x y"', "4m interrupt node=n1\r",
             "1m scale deployment/web\x0b3", "1m cancel-reservation cr-1", "bad", "1m scale deployment/web 'x"]

    def parsed() -> list[Any]:
        out = []
        for line in lines:
            try:
                out.append(scenario_api.parse_event_line(line))
            except ValueError as err:
                out.append(str(err))
        return out

    fast = parsed()
    monkeypatch.setattr(scenario_api, "_SHLEX_PLAIN_ENABLED", False)
    assert parsed() == fast


def _reference_duration(value: Any, what: str = "duration") -> float:
    """parse_duration as it was before it skipped float() for h/m/s texts (karpy 6bd996b)."""
    import math

    if isinstance(value, bool):
        raise ValueError(f"{what} {value!r} is not a duration (e.g. 90s, 2m, 1h30m)")
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip()
        try:
            seconds = float(text)
        except ValueError:
            m = scenario_api._DURATION_RE.match(text)
            if not text or not m or not any(m.groups()):
                raise ValueError(f"{what} {value!r} is not a duration (e.g. 90s, 2m, 1h30m)") from None
            h, mi, sec = (float(g[:-1]) if g else 0.0 for g in m.groups())
            seconds = h * 3600 + mi * 60 + sec
    else:
        raise ValueError(f"{what} {value!r} is not a duration (e.g. 90s, 2m, 1h30m)")
    if math.isnan(seconds) or math.isinf(seconds):
        raise ValueError(f"{what} {value!r} is not a finite duration")
    if seconds < 0:
        raise ValueError(f"{what} {value!r} must not be negative")
    return seconds


def test_parse_duration_reads_as_the_reference() -> None:
    rng = random.Random(3)
    alphabet = "0123456789.hms -+e_infaINFy "
    values: list[Any] = ["10m", "1h30m", "", "inf", "nan", "infinity", "1e3", "1_0", "-5m", True, 3, 2.5, None]
    values += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 7))) for _ in range(30_000)]

    def outcome(f: Any, v: Any) -> Any:
        try:
            return f(v, "at")
        except ValueError as err:
            return str(err)

    for v in values:
        assert outcome(scenario_api.parse_duration, v) == outcome(_reference_duration, v), repr(v)


@pytest.mark.parametrize("seed", range(3))
def test_frozen_survivors_change_no_document(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    from karpy.sim import simulation
    from karpy.sim.collector import FrozenSurvivors

    objs, events = _scenario(100 + seed)
    frozen_during = []
    original = simulation.Simulation._run_loaded

    def spy(self: Any) -> Any:
        gc.collect()  # a full collection: its survivors are frozen too
        frozen_during.append(gc.get_freeze_count())
        return original(self)

    monkeypatch.setattr(simulation.Simulation, "_run_loaded", spy)
    with_freeze = _run(objs, events)
    assert frozen_during[-1] > 0 and gc.get_freeze_count() == 0  # handed back after the run
    monkeypatch.setattr(FrozenSurvivors, "enabled", False)
    assert _run(objs, events) == with_freeze
    assert frozen_during[-1] == 0


def test_a_callers_own_freeze_is_left_alone() -> None:
    import gc

    from karpy.sim.collector import FrozenSurvivors

    callbacks = list(gc.callbacks)
    gc.freeze()
    try:
        with FrozenSurvivors() as f:
            assert not f.active
        objs, events = _scenario(1)
        _run(objs, events)
        assert gc.get_freeze_count() > 0  # not unfrozen by the run
    finally:
        gc.unfreeze()
    with FrozenSurvivors() as f:
        assert f.active and gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0 and gc.callbacks == callbacks


def test_a_run_raises_the_collectors_thresholds_and_gives_the_hosts_back() -> None:
    import gc

    from karpy.sim import simulation
    from karpy.sim.collector import RUN_GC_THRESHOLDS, FrozenSurvivors

    host = gc.get_threshold()
    seen = []
    original = simulation.Simulation._run_loaded

    def spy(self: Any) -> Any:
        seen.append(gc.get_threshold())
        return original(self)

    objs, events = _scenario(2)
    try:
        for mine, during in [((700, 10, 10), RUN_GC_THRESHOLDS), ((200_000, 5, 50), (200_000, 20, 50))]:
            gc.set_threshold(*mine)
            with FrozenSurvivors() as f:
                assert f.active and gc.get_threshold() == during  # each at least the run's; a higher one kept
            assert gc.get_threshold() == mine
            seen.clear()
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(simulation.Simulation, "_run_loaded", spy)
                _run(objs, events)
            assert seen == [during] and gc.get_threshold() == mine
        gc.disable()  # a host without the collector: nothing is touched
        with FrozenSurvivors() as f:
            assert not f.active and gc.get_threshold() == (200_000, 5, 50)
    finally:
        gc.enable()
        gc.set_threshold(*host)


def collector_seen(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[tuple[tuple[int, ...], int]]:
    """The collector's thresholds and freeze count at each call of ``owner.name`` (filled as it is called)."""
    import gc

    seen: list[tuple[tuple[int, ...], int]] = []
    original = getattr(owner, name)

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append((gc.get_threshold(), gc.get_freeze_count()))
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, spy)
    return seen


def test_simulate_reads_its_input_under_frozen_survivors(monkeypatch: pytest.MonkeyPatch) -> None:
    """karpy.simulate freezes from the read of its manifests on (the provider's catalogue and the
    input are not rescanned by each full collection) with the host's thresholds there, raises them
    for the run inside that freeze, and gives the host's back: its thresholds and no freeze."""
    import gc

    from karpy import simulator
    from karpy.sim import simulation
    from karpy.sim.collector import RUN_GC_THRESHOLDS

    host = gc.get_threshold()
    seen = collector_seen(monkeypatch, simulator, "load_manifests")
    seen_run = collector_seen(monkeypatch, simulation.Simulation, "_run_loaded")
    objs, events = _scenario(3)
    _run(objs, events)
    (read, read_frozen), (run, run_frozen) = seen + seen_run
    assert read == host and read_frozen > 0
    assert run == tuple(map(max, host, RUN_GC_THRESHOLDS)) and run_frozen >= read_frozen
    assert gc.get_threshold() == host and gc.get_freeze_count() == 0


def test_a_read_freezes_without_thresholds_and_the_run_inside_raises_them_in_its_thread_only() -> None:
    """FrozenSurvivors(thresholds=False) freezes and keeps the host's thresholds; a FrozenSurvivors
    inside it in the same thread raises them and gives them back, one in another thread touches
    nothing (the other thread's run would otherwise give back thresholds it did not set)."""
    import gc
    import threading

    from karpy.sim.collector import RUN_GC_THRESHOLDS, FrozenSurvivors

    host = gc.get_threshold()
    raised = tuple(map(max, host, RUN_GC_THRESHOLDS))
    seen: list[Any] = []

    def other_thread() -> None:
        with FrozenSurvivors() as f:
            seen.append((f.active, gc.get_threshold()))

    with FrozenSurvivors(thresholds=False) as read:
        assert read.active and gc.get_freeze_count() > 0 and gc.get_threshold() == host
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
        assert seen == [(False, host)]
        with FrozenSurvivors() as run:
            assert not run.active and gc.get_threshold() == raised
            with FrozenSurvivors() as inner:  # (the document inside the run: nothing more to raise)
                assert gc.get_threshold() == raised
            assert gc.get_threshold() == raised
        assert gc.get_threshold() == host and gc.get_freeze_count() > 0
    assert gc.get_threshold() == host and gc.get_freeze_count() == 0 and not inner.active


def test_writing_the_document_freezes_the_heap_and_gives_the_collector_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """Result.to_json / write_json / to_document run under FrozenSurvivors, as the run does: the
    same text with it switched off, and the host's thresholds and freeze as they were."""
    import gc

    from karpy.sim.collector import FrozenSurvivors

    objs, events = _scenario(3)
    result = karpy.simulate(objs, cloud_provider=FakeCloudProvider(), region=None, until="3h", events=events)
    host = gc.get_threshold()
    frozen_during: list[int] = []
    original = FrozenSurvivors.__enter__

    def spy(self: FrozenSurvivors) -> FrozenSurvivors:
        out = original(self)
        frozen_during.append(gc.get_freeze_count() if self.active else 0)
        return out

    monkeypatch.setattr(FrozenSurvivors, "__enter__", spy)
    pieces: list[str] = []
    result.write_json(pieces.append)
    text, doc = result.to_json(), result.to_document()
    assert len(frozen_during) == 3 and all(n > 0 for n in frozen_during)  # write_json, to_json (its write_json), to_document
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == host
    monkeypatch.setattr(FrozenSurvivors, "enabled", False)
    assert "".join(pieces) == text == result.to_json() and doc == result.to_document()


def test_clock_timestamp_memo_is_the_plain_datetime() -> None:
    from karpy.sim.clock import EPOCH, VirtualClock

    rng = random.Random(5)
    clock = VirtualClock()
    for _ in range(2000):
        if rng.random() < 0.3:
            clock.advance(rng.choice([0.0, 0.5, 1, 30.0, 1e-9]))
        t = rng.choice([None, None, clock.now(), 0, 0.0, -0.0, 12.5, 3600])
        expected = EPOCH + timedelta(seconds=clock.now() if t is None else t)
        got = clock.timestamp(t)
        assert got == expected and got.tzinfo == expected.tzinfo


def test_stable_uid_is_uuid5(monkeypatch: pytest.MonkeyPatch) -> None:
    from karpy.api import workloads

    rng = random.Random(11)
    alphabet = "abc-./0123456789\u00e9\u4e2d\U0001f600 "
    names = [("Pod", "default", "web-bcdfg"), ("ReplicaSet", "", ""), ("Pod", "ns", "\u00e9\u4e2d")]
    names += [tuple("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 20))) for _ in range(3))
              for _ in range(3000)]
    fast = [workloads.stable_uid(*n) for n in names]
    monkeypatch.setattr(workloads, "_FAST_UUID5", False)
    assert [workloads.stable_uid(*n) for n in names] == fast
