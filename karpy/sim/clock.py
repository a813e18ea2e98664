"""The virtual clock every time-dependent part of karpy reads.

No component reads the wall clock: the simulation advances this clock from event to
event, so a run is deterministic and a 10-minute scenario takes milliseconds.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from datetime import datetime, timedelta

from karpy.api.time import EPOCH

__all__ = ["EPOCH", "EventQueue", "VirtualClock"]


class VirtualClock:
    """Seconds since the start of the simulation; only moves forward."""

    __slots__ = ("_now", "_stamp")

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)
        #: the last (seconds, datetime) :meth:`timestamp` built (a datetime is immutable)
        self._stamp: tuple[float, datetime] | None = None

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
        at = self._now if t is None else t
        stamp = self._stamp
        if stamp is not None and stamp[0] == at:
            return stamp[1]
        ts = EPOCH + timedelta(seconds=at)
        self._stamp = (at, ts)
        return ts


#: a scheduled callback: (at, seq, name, action); ordered by (at, seq) — seq is unique, so the
#: tuple comparison (in C, not a dataclass __lt__) never reaches the name
_Event = tuple[float, int, str, Callable[[], None]]


class EventQueue:
    """Timed callbacks ordered by (time, insertion order): ties run first-scheduled first."""

    def __init__(self, clock: VirtualClock) -> None:
        self._clock = clock
        self._heap: list[_Event] = []
        self._seq = itertools.count()

    def schedule(self, at: float, name: str, action: Callable[[], None]) -> None:
        heapq.heappush(self._heap, (max(at, self._clock.now()), next(self._seq), name, action))

    def schedule_in(self, delay: float, name: str, action: Callable[[], None]) -> None:
        self.schedule(self._clock.now() + delay, name, action)

    def last_time(self) -> float | None:
        """The latest scheduled time (None when empty)."""
        return max(ev[0] for ev in self._heap) if self._heap else None

    def next_time(self) -> float | None:
        return self._heap[0][0] if self._heap else None

    def run_next(self) -> str | None:
        """Advance the clock to the earliest event, run it, and return its name."""
        if not self._heap:
            return None
        at, _, name, action = heapq.heappop(self._heap)
        self._clock.advance_to(at)
        action()
        return name

    def __len__(self) -> int:
        return len(self._heap)
