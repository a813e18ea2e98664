"""Batching window for provisioning triggers.

Mirrors pkg/controllers/provisioning/batcher.go (Batcher.Trigger / Wait) on an injected clock
(anything with ``now() -> float`` seconds, e.g. karpy.sim.clock.VirtualClock). A window opens at
the first trigger and closes after ``idle`` seconds without a *new* UID (re-triggers of a UID
already in the window are ignored, batcher.go:55-60) or ``max`` seconds in total
(options.go BatchIdleDuration=1s, BatchMaxDuration=10s). The UID set is cleared when the window
closes. Event driven instead of goroutines: callers ask ``deadline()`` and ``ready(now)``.
"""

from __future__ import annotations

from typing import Any, Hashable

__all__ = ["BATCH_IDLE_DURATION", "BATCH_MAX_DURATION", "Batcher"]

#: options.go BATCH_IDLE_DURATION default (seconds)
BATCH_IDLE_DURATION = 1.0
#: options.go BATCH_MAX_DURATION default (seconds)
BATCH_MAX_DURATION = 10.0


class Batcher:
    """batcher.go Batcher on a virtual clock."""

    def __init__(self, clock: Any, idle: float = BATCH_IDLE_DURATION, max_duration: float = BATCH_MAX_DURATION) -> None:
        self.clock = clock
        self.idle = idle
        self.max_duration = max_duration
        self._elems: set[Hashable] = set()
        self._start: float | None = None
        self._last: float | None = None

    def trigger(self, uid: Hashable) -> bool:
        """batcher.go Trigger: opens or extends the window; returns False if the UID was already seen."""
        if uid in self._elems:
            return False
        now = self.clock.now()
        self._elems.add(uid)
        if self._start is None:
            self._start = now
        self._last = now
        return True

    @property
    def open(self) -> bool:
        return self._start is not None

    def deadline(self) -> float | None:
        """When the current window closes (min of last-new-trigger + idle, start + max)."""
        if self._start is None or self._last is None:
            return None
        return min(self._last + self.idle, self._start + self.max_duration)

    def ready(self, now: float | None = None) -> bool:
        """True when the window has closed; closing clears the UID set (batcher.go Wait's defer)."""
        d = self.deadline()
        if d is None:
            return False
        t = self.clock.now() if now is None else now
        if t >= d:
            self._elems.clear()
            self._start = None
            self._last = None
            return True
        return False

    def __len__(self) -> int:
        return len(self._elems)
