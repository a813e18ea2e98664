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
