"""The queue order of a look's simulations, found by merging instead of sorting each time.

Not in upstream (scheduler.go Solve sorts every pod by queue.go byCPUAndMemoryDescending in each
simulation). A disruption look's SimulateScheduling calls solve the same pending pods and the same
deleting nodes' pods with each candidate's own pods between them; the queue's stable sort of
``pending + candidate + deleting`` orders by (sort key, that part, place in it), so the look's two
fixed parts are sorted once and each simulation's few candidate pods are inserted where that order
puts them. Checked against the sort by tests/disruption/test_queueorder_equivalence.py.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from typing import TYPE_CHECKING

from karpy.provisioning.poddata import Prepared
from karpy.provisioning.queue import SortKey

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = ["LookOrder"]

_PENDING, _LEAVING, _DELETING = 0, 1, 2

_Place = tuple[SortKey, int, int]


class LookOrder:
    """The look's pending and deleting pods in queue order, with each simulation's candidate pods
    merged in (:meth:`merged`)."""

    #: False: each Solve sorts its pods itself (the plain path the equivalence test compares)
    enabled = True

    __slots__ = ("pending", "deleting", "_places", "_pods")

    def __init__(self, pending: Sequence[Pod], pending_prepared: Sequence[Prepared], deleting: Sequence[Pod],
                 deleting_prepared: Sequence[Prepared]) -> None:
        """``*_prepared``: what the provisioner's prepare answered for each pod (its sort key)."""
        #: what the order was built from (SimulationShare hands out one per pair of lists)
        self.pending, self.deleting = pending_prepared, deleting_prepared
        places = sorted(
            [((a.sort_key, _PENDING, i), p) for i, (p, a) in enumerate(zip(pending, pending_prepared))]
            + [((a.sort_key, _DELETING, i), p) for i, (p, a) in enumerate(zip(deleting, deleting_prepared))],
            key=lambda e: e[0])
        self._places: list[_Place] = [place for place, _ in places]
        self._pods: list[Pod] = [p for _, p in places]

    def merged(self, leaving: Sequence[Pod], leaving_prepared: Sequence[Prepared]) -> list[Pod]:
        """``sorted(pending + leaving + deleting)`` by sort key, stable: the candidates' pods put in."""
        places, pods = list(self._places), list(self._pods)
        for i, (p, a) in enumerate(zip(leaving, leaving_prepared)):
            place = (a.sort_key, _LEAVING, i)
            j = bisect_left(places, place)  # (places are distinct: no tie to break)
            places.insert(j, place)
            pods.insert(j, p)
        return pods
