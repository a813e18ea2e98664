"""The bound pods whose ``karpenter.sh/do-not-disrupt`` is not ``"true"`` (a duration, or a value
that is ignored), kept from the Pod watch events: the pods whose protection can end on its own,
which the controller's wake-up (controller.py ``_wake``) asks for every round.

Speed machinery, not an upstream concept (upstream requeues on its 10 s poll and reads each pod
when it is a candidate's): the wake-up read every pod of the cluster each round. Checked against
the plain walk by tests/disruption/test_timeddonotdisrupt_equivalence.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy.scheduling.labels import DO_NOT_DISRUPT_ANNOTATION_KEY

if TYPE_CHECKING:  # pragma: no cover
    from karpy.api.pod import Pod
    from karpy.sim.store import ObjectStore, WatchEvent

__all__ = ["TimedDoNotDisrupt"]


def _timed(pod: Pod) -> bool:
    return bool(pod.spec.node_name) and (pod.metadata.annotations or {}).get(
        DO_NOT_DISRUPT_ANNOTATION_KEY, "true") != "true"


class TimedDoNotDisrupt:
    """The bound pods with a do-not-disrupt value other than ``"true"``, by key."""

    #: False: :meth:`pods` walks every pod of the store (the plain path the equivalence test compares)
    enabled = True

    def __init__(self, store: ObjectStore) -> None:
        self._store = store
        #: pod key -> pod; None until first asked (then taken from the store, and kept from the events on)
        self._pods: dict[str, Pod] | None = None

    def observe(self, ev: WatchEvent) -> None:
        """A Pod watch event."""
        if self._pods is None:
            return
        pod = ev.obj
        if ev.type != "DELETED" and _timed(pod):
            self._pods[pod.key] = pod
        else:
            self._pods.pop(pod.key, None)

    def pods(self) -> list[Pod]:
        """The store's bound pods whose do-not-disrupt value is not ``"true"`` (in no set order)."""
        if not self.enabled:
            return [p for p in self._store.iter("Pod") if _timed(p)]
        if self._pods is None:
            self._pods = {p.key: p for p in self._store.iter("Pod") if _timed(p)}
        return list(self._pods.values())
