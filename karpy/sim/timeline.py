"""The run's timeline: every event in virtual-time order, as the JSON ``timeline`` key lists it.

An entry is ``{"t": seconds, "kind": str, "object": str, "detail": {...}}``. ``object`` is
``Kind/namespace/name`` (``Kind/name`` for cluster-scoped kinds); ``detail`` holds plain JSON values
only. Entries are appended as the simulation does things, so they are in time order, and within one
instant in the order they happened (deterministic).

Kinds (stable; see docs/guides/time.md "What comes out"):

* pods: ``pod.created``, ``pod.bound``, ``pod.evicted`` (the Eviction API: preemption, a drain),
  ``pod.deleting`` (a controller's graceful deletion: a ReplicaSet or StatefulSet scale-down, a
  deleted workload), ``pod.deleted``, ``pod.completed``, ``pod.departed``;
* NodeClaims: ``nodeclaim.created``, ``nodeclaim.launched``, ``nodeclaim.launch-failed``,
  ``nodeclaim.registered``, ``nodeclaim.initialized``, ``nodeclaim.deleting``, ``nodeclaim.deleted``;
* scenario: ``scale``, ``rollout``, ``rollout.step``, ``apply``, ``delete``, ``capacity.unavailable``,
  ``capacity.available``, ``interruption``;
* static NodePools (:mod:`karpy.static.controller`): ``static.provisioned``, ``static.deprovisioned``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Timeline", "TimelineEntry"]


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    t: float
    kind: str
    object: str
    detail: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"t": self.t, "kind": self.kind, "object": self.object, "detail": dict(self.detail)}


@dataclass
class Timeline:
    """Append-only list of :class:`TimelineEntry` (the clock passes ``t``). Past ``limit`` entries
    (None: no limit) later ones are counted per kind in ``dropped``, not kept (karpy.sim.retention)."""

    entries: list[TimelineEntry] = field(default_factory=list)
    limit: int | None = None
    #: kind -> entries recorded past ``limit``
    dropped: dict[str, int] = field(default_factory=dict)

    def record(self, t: float, kind: str, obj: str, **detail: Any) -> None:
        if self.limit is not None and len(self.entries) >= self.limit:
            self.dropped[kind] = self.dropped.get(kind, 0) + 1
            return
        self.entries.append(TimelineEntry(t, kind, obj, detail))

    def of_kind(self, *kinds: str) -> list[TimelineEntry]:
        return [e for e in self.entries if e.kind in kinds]

    def __len__(self) -> int:
        return len(self.entries)
