"""The store's pods bound to each node, and the unbound ones, in the store's order, kept from the
Pod watch events.

Speed machinery, not an upstream concept (kubelet and the termination controller list pods with a
``spec.nodeName`` field selector, an index in the API server): draining or deleting a node reads
its own pods instead of every pod in the cluster, which made a drift of every node quadratic; the
run loop's settle checks read the unbound pods (only they can be pending or provisionable).
Checked against the plain walk by tests/sim/test_podsbynode_equivalence.py.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import count
from typing import TYPE_CHECKING, Any

from karpy.sim.store import object_key

if TYPE_CHECKING:  # pragma: no cover
    from karpy.api.pod import Pod
    from karpy.sim.store import ObjectStore, WatchEvent

__all__ = ["PodsByNode"]

_StoreKey = tuple[str, str]


class PodsByNode:
    """``spec.nodeName`` (``""``: none) -> the store keys of those pods, each with its creation
    sequence (the store lists objects in creation order; an update keeps an object's place)."""

    #: False: :meth:`on` walks every pod of the store (the plain path the equivalence test compares)
    enabled = True

    def __init__(self, store: ObjectStore) -> None:
        self._store = store
        self._seq = count()
        #: store key -> its creation sequence number (pods in the store only)
        self._created: dict[_StoreKey, int] = {}
        self._by_node: dict[str, set[_StoreKey]] = {}

    def observe(self, ev: WatchEvent) -> None:
        """A Pod watch event (the simulation's ``on_pod``)."""
        key = object_key(ev.obj)
        if ev.type == "ADDED":
            self._created[key] = next(self._seq)
            self._bind(ev.obj.spec.node_name, key)
        elif ev.type == "DELETED":
            self._created.pop(key, None)
            self._unbind(ev.obj.spec.node_name, key)
        else:
            before = ev.old.spec.node_name if ev.old is not None else None
            after = ev.obj.spec.node_name
            if before != after:
                self._unbind(before, key)
                self._bind(after, key)

    def _bind(self, node: str | None, key: _StoreKey) -> None:
        self._by_node.setdefault(node or "", set()).add(key)

    def _unbind(self, node: str | None, key: _StoreKey) -> None:
        keys = self._by_node.get(node or "")
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self._by_node[node or ""]

    def on(self, node: str) -> list[Pod]:
        """The pods whose ``spec.nodeName`` is ``node``, in the store's order."""
        if not node:
            return []
        if not self.enabled:
            return [p for p in self._store.list("Pod") if p.spec.node_name == node]
        return self._in_order(node)

    def unbound(self) -> list[Pod]:
        """The pods without a ``spec.nodeName``, in the store's order."""
        if not self.enabled:
            return [p for p in self._store.list("Pod") if not p.spec.node_name]
        return self._in_order("")

    def _in_order(self, node: str) -> list[Pod]:
        keys = self._by_node.get(node)
        if not keys:
            return []
        get: Callable[[_StoreKey], Any] = self._store.getter("Pod")
        return [get(k) for k in sorted(keys, key=self._created.__getitem__)]
