"""The queue order of a look's simulations, found by merging instead of sorting each time.

Not in upstream (scheduler.go Solve sorts every pod by queue.go byCPUAndMemoryDescending in each
simulation). A disruption look's SimulateScheduling calls solve the same pending pods and the same
deleting nodes' pods with each candidate's own pods between them; the queue's stable sort of
``pending + candidate + deleting`` orders by (sort key, that part, place in it), so the look's two
fixed parts are sorted once and each simulation's candidate pods, sorted, are merged with them (two
sorted runs: the sort merges them in linear time). Checked against the sort by
tests/disruption/test_queueorder_equivalence.py.
"""

from __future__ import annotations

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
    #: merge only when the look's part has at least this many pods per candidates' pod (0: always)
    look_pods_per_candidate_pod = 1

    __slots__ = ("pending", "deleting", "_pairs")

    def __init__(self, pending: Sequence[Pod], pending_prepared: Sequence[Prepared], deleting: Sequence[Pod],
                 deleting_prepared: Sequence[Prepared]) -> None:
        """``*_prepared``: what the provisioner's prepare answered for each pod (its sort key)."""
        #: what the order was built from (SimulationShare hands out one per pair of lists)
        self.pending, self.deleting = pending_prepared, deleting_prepared
        # (place, pod) in order; places are distinct, so no two pods are ever compared
        self._pairs: list[tuple[_Place, Pod]] = sorted(
            [((a.sort_key, _PENDING, i), p) for i, (p, a) in enumerate(zip(pending, pending_prepared))]
            + [((a.sort_key, _DELETING, i), p) for i, (p, a) in enumerate(zip(deleting, deleting_prepared))])

    def merged(self, leaving: Sequence[Pod], leaving_prepared: Sequence[Prepared]) -> list[Pod] | None:
        """``sorted(pending + leaving + deleting)`` by sort key, stable: the candidates' pods put in
        (the candidates' sorted, then the two sorted runs merged by the sort); None when the look's
        part is smaller than the candidates' (a multi-node simulation): the Solve's sort is quicker."""
        if len(self._pairs) < self.look_pods_per_candidate_pod * len(leaving):
            return None
        mine = sorted([((a.sort_key, _LEAVING, i), p) for i, (p, a) in enumerate(zip(leaving, leaving_prepared))])
        return [p for _, p in sorted(self._pairs + mine)]
