"""The store's pods bound to each node, and the unbound ones, in the store's order, kept from the
Pod watch events.

Speed machinery, not an upstream concept (kubelet and the termination controller list pods with a
``spec.nodeName`` field selector, an index in the API server): draining or deleting a node reads
its own pods instead of every pod in the cluster, which made a drift of every node quadratic; the
run loop's settle checks read the unbound pods (only they can be pending or provisionable).
Checked against the plain walk by tests/sim/test_podsbynode_equivalence.py.
"""

from __future__ import annotations

from itertools import count
from typing import TYPE_CHECKING

from karpy.sim.store import object_key

if TYPE_CHECKING:  # pragma: no cover
    from karpy.api.pod import Pod
    from karpy.sim.store import ObjectStore, WatchEvent

__all__ = ["PodsByNode"]

_StoreKey = tuple[str, str]


class PodsByNode:
    """``spec.nodeName`` (``""``: none) -> those pods by store key, in the store's order (each key's
    creation sequence orders them; an update keeps an object's place), and the pods with an
    affinity, in the store's order."""

    #: False: :meth:`on`, :meth:`unbound` and :meth:`with_affinity` walk every pod of the store (the
    #: plain path the equivalence test compares)
    enabled = True

    def __init__(self, store: ObjectStore) -> None:
        self._store = store
        self._seq = count()
        #: store key -> its creation sequence number (pods in the store only)
        self._created: dict[_StoreKey, int] = {}
        self._by_node: dict[str, dict[_StoreKey, Pod]] = {}
        #: nodes whose pods may be out of the store's order (a pod bound after a newer one): sorted when read
        self._untidy: set[str] = set()
        #: store key -> pod, the pods with ``spec.affinity``, in creation order (an affinity is set at creation)
        self._affinity: dict[_StoreKey, Pod] = {}
        self._affinity_untidy = False

    def observe(self, ev: WatchEvent) -> None:
        """A Pod watch event (the simulation's ``on_pod``)."""
        obj = ev.obj
        key = object_key(obj)
        if ev.type == "ADDED":
            self._created[key] = next(self._seq)
            self._bind(obj.spec.node_name, key, obj)
        elif ev.type == "DELETED":
            self._created.pop(key, None)
            self._unbind(obj.spec.node_name, key)
            self._affinity.pop(key, None)
            return
        else:
            before = ev.old.spec.node_name if ev.old is not None else None
            after = obj.spec.node_name
            if before != after:
                self._unbind(before, key)
                self._bind(after, key, obj)
            else:
                self._by_node[after or ""][key] = obj  # (its place kept)
        if obj.spec.affinity is not None:
            affinity = self._affinity
            if key not in affinity and affinity and self._created[key] < self._created[next(reversed(affinity))]:
                self._affinity_untidy = True
            affinity[key] = obj
        else:
            self._affinity.pop(key, None)

    def _bind(self, node: str | None, key: _StoreKey, pod: Pod) -> None:
        name = node or ""
        pods = self._by_node.get(name)
        if pods is None:
            pods = self._by_node[name] = {}
        elif self._created[key] < self._created[next(reversed(pods))]:
            self._untidy.add(name)
        pods[key] = pod

    def _unbind(self, node: str | None, key: _StoreKey) -> None:
        name = node or ""
        pods = self._by_node.get(name)
        if pods is not None:
            pods.pop(key, None)
            if not pods:
                del self._by_node[name]
                self._untidy.discard(name)

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

    def with_affinity(self) -> list[Pod]:
        """The pods with a ``spec.affinity``, in the store's order."""
        if not self.enabled:
            return [p for p in self._store.list("Pod") if p.spec.affinity is not None]
        if self._affinity_untidy:
            self._affinity = self._sorted(self._affinity)
            self._affinity_untidy = False
        return list(self._affinity.values())

    def _in_order(self, node: str) -> list[Pod]:
        pods = self._by_node.get(node)
        if not pods:
            return []
        if node in self._untidy:
            pods = self._by_node[node] = self._sorted(pods)
            self._untidy.discard(node)
        return list(pods.values())

    def _sorted(self, pods: dict[_StoreKey, Pod]) -> dict[_StoreKey, Pod]:
        created = self._created
        return dict(sorted(pods.items(), key=lambda kv: created[kv[0]]))
