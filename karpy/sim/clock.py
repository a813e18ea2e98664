"""The virtual clock every time-dependent part of karpy reads.

No component reads the wall clock: the simulation advances this clock from event to
event, so a run is deterministic and a 10-minute scenario takes milliseconds.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from karpy.api.time import EPOCH

__all__ = ["EPOCH", "EventQueue", "VirtualClock"]


class VirtualClock:
    """Seconds since the start of the simulation; only moves forward."""

    __slots__ = ("_now",)

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)

    def now(self) -> float:
        return self._now

    def advance_to(self, t: float) -> None:
        if t < self._now:
            raise ValueError(f"the clock cannot go back from {self._now} to {t}")
        self._now = float(t)

    def advance(self, seconds: float) -> None:
        self.advance_to(self._now + seconds)

    def timestamp(self, t: float | None = None) -> datetime:
        """The virtual time ``t`` (default: now) as an aware datetime."""
        return EPOCH + timedelta(seconds=self._now if t is None else t)


@dataclass(order=True)
class _Event:
    at: float
    seq: int
    name: str = field(compare=False)
    action: Callable[[], None] = field(compare=False)


class EventQueue:
    """Timed callbacks ordered by (time, insertion order): ties run first-scheduled first."""

    def __init__(self, clock: VirtualClock) -> None:
        self._clock = clock
        self._heap: list[_Event] = []
        self._seq = itertools.count()

    def schedule(self, at: float, name: str, action: Callable[[], None]) -> None:
        heapq.heappush(self._heap, _Event(max(at, self._clock.now()), next(self._seq), name, action))

    def schedule_in(self, delay: float, name: str, action: Callable[[], None]) -> None:
        self.schedule(self._clock.now() + delay, name, action)

    def last_time(self) -> float | None:
        """The latest scheduled time (None when empty)."""
        return max(ev.at for ev in self._heap) if self._heap else None

    def next_time(self) -> float | None:
        return self._heap[0].at if self._heap else None

    def run_next(self) -> str | None:
        """Advance the clock to the earliest event, run it, and return its name."""
        if not self._heap:
            return None
        ev = heapq.heappop(self._heap)
        self._clock.advance_to(ev.at)
        ev.action()
        return ev.name

    def __len__(self) -> int:
        return len(self._heap)
