"""A disruption simulation whose failure is certain before its Solve ends.

Not in upstream (helpers.go SimulateScheduling solves every pod). Disruption reads a failed
simulation only through its non-pending pods' errors (AllNonPendingPodsScheduled, then
NonPendingPodSchedulingErrors' message), and Solve never moves a pod it placed. So once every
non-pending pod is placed, and one of them (not a deleting node's) is on a node still
initializing -- "would schedule against uninitialized nodeclaim", the error that fails most of a
drift's simulations while its replacements start -- the errors are known: exactly those
placements, unless a new NodeClaim holding a non-pending pod has minValues (TruncateInstanceTypes
may still fail it as pending pods join it). The pending pods still queued cannot change them, and
are not solved. Checked against the plain path by tests/disruption/test_certainfailure_equivalence.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from karpy.provisioning.scheduler import Scheduler
from karpy.utils import pod as podutils

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = ["CertainFailure"]


class CertainFailure:
    """``Scheduler.solve``'s ``placed``: True when the simulation has failed for certain."""

    __slots__ = ("_waiting", "_non_pending", "_counted", "_scheduler")

    #: False: every simulation solves every pod (the plain path the equivalence test compares)
    enabled = True

    def __init__(self, non_pending: Iterable[str], deleting_keys: frozenset[str], scheduler: Scheduler) -> None:
        """``non_pending``: the keys of the simulation's non-pending pods; ``scheduler``: the one solving it."""
        self._waiting = set(non_pending)
        self._non_pending = frozenset(self._waiting)
        #: the non-pending pods whose placement on an uninitialized node is an error
        self._counted = self._non_pending - deleting_keys
        self._scheduler = scheduler

    @classmethod
    def of(cls, pods: Mapping[str, Pod], pending_ids: frozenset[int], deleting_keys: frozenset[str],
           scheduler: Scheduler) -> CertainFailure | None:
        """The watch of a simulation of ``pods`` (key -> pod) whose pending ones (AllNonPendingPodsScheduled
        skips them) are those of ``pending_ids`` or provisionable; None when switched off or no
        existing node is uninitialized (then the rule never holds)."""
        existing = scheduler.existing_nodes  # (sortExistingNodes: the uninitialized ones last)
        if not cls.enabled or not existing or existing[-1].initialized():
            return None
        return cls([k for k, p in pods.items() if id(p) not in pending_ids and not podutils.is_provisionable(p)],
                   deleting_keys, scheduler)

    def __call__(self, key: str) -> bool:
        waiting = self._waiting
        if key not in waiting:
            return False
        waiting.discard(key)
        return not waiting and self._on_uninitialized() and not self._min_values_held()

    def _on_uninitialized(self) -> bool:
        """Whether a non-pending pod, not a deleting node's, is on an uninitialized node."""
        counted = self._counted
        return any(p.key in counted for en in self._scheduler.existing_nodes if not en.initialized() for p in en.pods)

    def _min_values_held(self) -> bool:
        """Whether a new NodeClaim with minValues holds a non-pending pod."""
        non_pending = self._non_pending
        return any(nc.requirements.has_min_values() and any(p.key in non_pending for p in nc.pods)
                   for nc in self._scheduler.new_nodeclaims)
