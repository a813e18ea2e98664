"""The progress bar of ``karpy sweep`` on stderr: cells done / total, failures, rate and ETA.

Wall-clock time is UI only (the cells never read it). On a terminal the line is rewritten in place
after every cell; elsewhere (CI logs) a line is printed at most every :data:`LOG_EVERY_SECONDS`
seconds, and always for the last cell.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["SweepProgress"]

LOG_EVERY_SECONDS = 10.0
BAR_WIDTH = 24


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    minutes, s = divmod(seconds, 60)
    hours, m = divmod(minutes, 60)
    return f"{hours}:{m:02d}:{s:02d}" if hours else f"{m}:{s:02d}"


class SweepProgress:
    """Call with each finished row; ``close()`` ends the line."""

    def __init__(self, total: int, *, stream: TextIO | None = None, tty: bool | None = None,
                 now: Callable[[], float] = time.monotonic, label: str = "karpy sweep") -> None:
        self.total, self.done, self.failed = total, 0, 0
        self._stream = stream if stream is not None else sys.stderr
        self._tty = self._stream.isatty() if tty is None else tty
        self._now, self._start = now, now()
        self._last: float | None = None
        self._label = label

    def line(self, now: float | None = None) -> str:
        elapsed = max((self._now() if now is None else now) - self._start, 1e-9)
        rate = self.done / elapsed
        filled = BAR_WIDTH * self.done // max(self.total, 1)
        eta = _duration((self.total - self.done) / rate) if rate > 0 and self.done < self.total else "0:00"
        failed = f", {self.failed} failed" if self.failed else ""
        return (f"{self._label}: [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {self.done}/{self.total} cells"
                f"{failed}, {rate:.2f} cells/s, elapsed {_duration(elapsed)}, ETA {eta}")

    def __call__(self, row: dict[str, Any]) -> None:
        self.done += 1
        if row.get("status") != "ok":
            self.failed += 1
        t = self._now()
        last = self.done == self.total
        if not self._tty and not last and self._last is not None and t - self._last < LOG_EVERY_SECONDS:
            return
        self._last = t
        if self._tty:
            self._stream.write("\r" + self.line(t) + ("\n" if last else ""))
        else:
            self._stream.write(self.line(t) + "\n")
        self._stream.flush()
