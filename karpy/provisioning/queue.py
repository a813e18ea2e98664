"""The scheduling queue.

Mirrors pkg/controllers/provisioning/scheduling/queue.go (Queue, NewQueue, Pop, Push,
byCPUAndMemoryDescending). Upstream uses ``sort.Slice`` with a total order (CPU desc, memory desc,
creationTimestamp asc, UID asc), so a stable sort gives the same result; pods with neither a
creation timestamp nor a UID keep their input order.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = ["Queue", "SortKey", "sort_key"]

_EPOCH = datetime(1, 1, 1, tzinfo=timezone.utc)

#: (-cpu, -memory, creationTimestamp, uid)
SortKey = tuple[int, int, datetime, str]


def sort_key(pod: Pod, requests: Mapping[str, int]) -> SortKey:
    """queue.go byCPUAndMemoryDescending as a sort key."""
    ts = pod.metadata.creation_timestamp
    if ts is None:
        ts = _EPOCH
    elif ts.tzinfo is None:
        ts = ts.replace(tzinfo=timezone.utc)
    return (-requests.get("cpu", 0), -requests.get("memory", 0), ts, pod.metadata.uid or "")


class Queue:
    """queue.go Queue: pods sorted once; stops when a full cycle makes no progress."""

    __slots__ = ("pods", "_head", "_last_len")

    def __init__(self, pods: Sequence[Pod], keys_of: Mapping[int, SortKey]) -> None:
        """``keys_of`` maps ``id(pod)`` to its :func:`sort_key` (the scheduler's pod data)."""
        self.pods: list[Pod] = sorted(pods, key=lambda p: keys_of[id(p)])
        self._head = 0
        self._last_len: dict[int, int] = {}

    @classmethod
    def in_order(cls, pods: Sequence[Pod]) -> Queue:
        """The queue of ``pods`` already in its order (karpy.disruption.queueorder found it)."""
        q = cls.__new__(cls)
        q.pods = list(pods)
        q._head = 0
        q._last_len = {}
        return q

    def __len__(self) -> int:
        return len(self.pods) - self._head

    def pop(self) -> Any | None:
        """queue.go Pop: the head, or None when empty or the head was last pushed when the queue
        had this same length (a whole cycle without progress)."""
        n = len(self.pods) - self._head
        if n == 0:
            return None
        p = self.pods[self._head]
        if self._last_len.get(id(p)) == n:
            return None
        self._head += 1
        if self._head > 1024 and self._head * 2 > len(self.pods):
            del self.pods[: self._head]
            self._head = 0
        return p

    def upcoming(self) -> Iterator[Pod]:
        """The pods ``pop`` would return one after another, nothing pushed in between (not in
        upstream: the look-ahead of karpy.provisioning.podruns); the queue is not changed."""
        pods, last = self.pods, self._last_len
        n = len(pods) - self._head
        for i in range(self._head, len(pods)):  # (islice would walk the popped head first)
            p = pods[i]
            if last.get(id(p)) == n:
                return
            yield p
            n -= 1

    def push(self, pod: Pod) -> None:
        """queue.go Push: append and remember the queue length."""
        self.pods.append(pod)
        self._last_len[id(pod)] = len(self.pods) - self._head

    def list(self) -> list[Any]:
        return self.pods[self._head :]
