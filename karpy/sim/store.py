"""An in-memory object store with watch events, standing in for the API server.

Objects are keyed by (kind, namespace, name). Every create, update and delete is
delivered synchronously, in order, to the watchers of that kind — the way informers
feed kube-scheduler's event handlers and Karpenter's controllers. Listing returns
objects in creation order, so everything downstream is deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["ObjectStore", "WatchEvent", "object_key"]

EventType = Literal["ADDED", "MODIFIED", "DELETED"]


@dataclass(frozen=True, slots=True)
class WatchEvent:
    type: EventType
    kind: str
    obj: Any
    old: Any = None


Watcher = Callable[[WatchEvent], None]


def object_key(obj: Any) -> tuple[str, str]:
    """(namespace, name); cluster-scoped kinds (``CLUSTER_SCOPED`` models) have no namespace."""
    meta = obj.metadata
    if getattr(obj, "CLUSTER_SCOPED", False):
        return ("", meta.name)
    return (getattr(meta, "namespace", None) or "", meta.name)


class ObjectStore:
    """Objects by kind, in creation order, with synchronous watch callbacks."""

    def __init__(self) -> None:
        self._objects: dict[str, dict[tuple[str, str], Any]] = {}
        self._watchers: dict[str, list[Watcher]] = {}
        self._resource_version = 0
        self._cluster_scoped: set[str] = set()

    def watch(self, kind: str, watcher: Watcher) -> None:
        self._watchers.setdefault(kind, []).append(watcher)

    def _emit(self, event: WatchEvent) -> None:
        for w in list(self._watchers.get(event.kind, ())):
            w(event)

    def create(self, kind: str, obj: Any) -> Any:
        bucket = self._objects.setdefault(kind, {})
        key = object_key(obj)
        if getattr(obj, "CLUSTER_SCOPED", False):
            self._cluster_scoped.add(kind)
        if key in bucket:
            raise KeyError(f"{kind} {'/'.join(k for k in key if k)} already exists")
        self._resource_version += 1
        bucket[key] = obj
        self._emit(WatchEvent("ADDED", kind, obj))
        return obj

    def update(self, kind: str, obj: Any, old: Any = None) -> Any:
        bucket = self._objects.setdefault(kind, {})
        key = object_key(obj)
        if key not in bucket:
            raise KeyError(f"{kind} {'/'.join(k for k in key if k)} not found")
        self._resource_version += 1
        previous = bucket[key]
        bucket[key] = obj
        self._emit(WatchEvent("MODIFIED", kind, obj, old if old is not None else previous))
        return obj

    def delete(self, kind: str, obj: Any) -> Any:
        bucket = self._objects.get(kind, {})
        removed = bucket.pop(object_key(obj), None)
        if removed is None:
            raise KeyError(f"{kind} {obj.metadata.name} not found")
        self._resource_version += 1
        self._emit(WatchEvent("DELETED", kind, removed))
        return removed

    def get(self, kind: str, name: str, namespace: str = "") -> Any | None:
        if kind in self._cluster_scoped:
            namespace = ""
        return self._objects.get(kind, {}).get((namespace, name))

    def getter(self, kind: str) -> Callable[[tuple[str, str]], Any | None]:
        """``get`` of the objects of ``kind`` by (namespace, name) key, valid until the next
        create of the kind's first object (for a loop of look-ups)."""
        bucket: dict[tuple[str, str], Any] = self._objects.get(kind, {})
        return bucket.get

    def get_all(self, kind: str, keys: Iterable[tuple[str, str]]) -> list[Any]:
        """The objects of ``kind`` at the given (namespace, name) keys that exist, in the keys'
        order (a namespaced kind's key; :meth:`get` for one object)."""
        bucket = self._objects.get(kind, {})
        return [obj for obj in map(bucket.get, keys) if obj is not None]

    def list(self, kind: str) -> list[Any]:
        return list(self._objects.get(kind, {}).values())

    def iter(self, kind: str) -> Iterator[Any]:
        return iter(list(self._objects.get(kind, {}).values()))

    def count(self, kind: str) -> int:
        return len(self._objects.get(kind, {}))

    @property
    def resource_version(self) -> int:
        return self._resource_version
