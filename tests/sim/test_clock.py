import pytest

from karpy.sim.clock import EPOCH, EventQueue, VirtualClock


def test_clock_only_moves_forward():
    c = VirtualClock()
    c.advance(1.5)
    assert c.now() == 1.5
    with pytest.raises(ValueError):
        c.advance_to(1.0)
    assert (c.timestamp() - EPOCH).total_seconds() == 1.5


def test_events_run_in_time_then_insertion_order():
    c = VirtualClock()
    q = EventQueue(c)
    seen = []
    q.schedule(2.0, "b", lambda: seen.append(("b", c.now())))
    q.schedule(1.0, "a1", lambda: seen.append(("a1", c.now())))
    q.schedule(1.0, "a2", lambda: seen.append(("a2", c.now())))
    while q.run_next():
        pass
    assert seen == [("a1", 1.0), ("a2", 1.0), ("b", 2.0)]
    assert q.next_time() is None
