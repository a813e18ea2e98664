"""KubeScheduler.schedule_one(flushed=True): the simulation loop's cycle after next_event_time
skips the queue flushes next_event_time has just run at the same instant."""

from __future__ import annotations

import random

from karpy.api.builders import make_node, make_pod
from karpy.kubescheduler import KubeScheduler

from .conftest import FakeClock


def test_schedule_one_after_next_event_time_needs_no_flush():
    """schedule_one(flushed=True) right after next_event_time at the same instant pops what a
    flushing schedule_one pops: next_event_time ran the due flushes (here the error-backoff pod's)."""
    outcomes = []
    for flushed in (False, True):
        clock = FakeClock()
        ks = KubeScheduler(clock, random.Random(0))
        ks.add_pod(make_pod("p", requests={"cpu": "1"}))
        r = ks.schedule_one()
        assert r is not None and r.outcome == "Unschedulable"  # no nodes: error backoff, 1 s
        assert ks.queue.pending_count() == (0, 1, 0)  # in the (error) backoff queue
        clock.t = 5.0
        ks.add_node(make_node("n1", capacity={"cpu": "8", "memory": "8Gi", "pods": "10"}))
        if flushed:
            assert ks.next_event_time() == 5.0
        r = ks.schedule_one(flushed=flushed)
        assert r is not None
        outcomes.append((r.pod_key, r.outcome, r.node_name))
    assert outcomes[0] == outcomes[1] == ("default/p", "Bound", "n1")
