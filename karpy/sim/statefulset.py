"""The StatefulSet controller: ordinals ``0..replicas-1``, the highest ordinal removed first.

Mirrors kubernetes ``pkg/controller/statefulset/stateful_set_control.go`` (``updateStatefulSet``:
missing ordinals are created, ordinals ``>= replicas`` are condemned and deleted highest first).
Deterministic simplification: ``OrderedReady`` is treated like ``Parallel`` (every missing pod is
created at once and every condemned pod deleted at once) — at load karpy already creates all
replicas together. A replaced pod keeps its name (``<set>-<ordinal>``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from karpy.sim.replicaset import ControllerHost, ManagedWorkload, find_by_key

__all__ = ["ManagedStatefulSet", "StatefulSetController"]


@dataclass
class ManagedStatefulSet(ManagedWorkload):
    pass


@dataclass
class StatefulSetController:
    host: ControllerHost
    sets: dict[str, ManagedStatefulSet] = field(default_factory=dict)  # by uid

    def add(self, model: Any) -> ManagedStatefulSet:
        s = ManagedStatefulSet(model)
        self.sets[s.uid] = s
        return s

    def get(self, key: str) -> ManagedStatefulSet | None:
        return find_by_key(self.sets, key)

    def scale(self, s: ManagedStatefulSet, replicas: int) -> None:
        self.host.record("scale", s.object, replicas=replicas, previous=s.model.spec.replicas)
        s.model.spec.replicas = replicas
        self.sync(s)

    def sync(self, s: ManagedStatefulSet) -> None:
        pods = self.host.owned_pods(s.uid)
        present = {p.metadata.name for p in pods}
        start = (s.model.spec.ordinals or {}).get("start", 0)
        for i in range(s.model.spec.replicas):
            pod = s.model.pod_for(i)
            if pod.metadata.name not in present:
                self.host.create_controller_pod(pod)
        condemned = []
        for p in pods:
            if not self.host.counts_as_active(p):
                continue
            try:
                ordinal = int(p.metadata.name.rsplit("-", 1)[1])
            except (IndexError, ValueError):
                continue
            if ordinal - start >= s.model.spec.replicas:
                condemned.append((ordinal, p))
        for _, p in sorted(condemned, key=lambda x: -x[0]):
            self.host.delete_controller_pod(p.key, "scale-down")
