"""NewExistingNode's answers for the state nodes of one cluster snapshot, shared by the schedulers
built on it.

Disruption's SimulateScheduling (helpers.go) builds a scheduler per candidate (provisioner.go
NewScheduler), each making an ExistingNode of every other node (scheduler.go
calculateExistingNodeClaims: the DaemonSets that fit it, its remaining resources, its label
requirements). Not in upstream: on one snapshot those are the same for every candidate, so each
node's is built once (a *prototype*, no pod added) and copied per scheduler
(:meth:`ExistingNode.fresh`). Sound because an ExistingNode is a function of its StateNode (fixed
in a snapshot), of the scheduler's DaemonSet pod copies as the template checks left them (the
memo's key: their full serialisation), and of ``Requirements.from_labels``; the NodePool-limit
capacity is the StateNode's. The DaemonSet pods of the snapshot (provisioner.go getDaemonSetPods)
are taken once too (the scheduler copies them before editing). Checked against the plain path by
tests/disruption/test_simulationshare_equivalence.py.

A node with no room for any of a simulation's pods (``resources.Fits`` of each distinct request
against its remaining resources) is left out of that scheduler's existing nodes (only its hostname
is registered with the topology, as its copy would): a Solve's remaining resources only shrink, so
CanAdd fails on it for every pod at the resource check and the scan passes it by; disruption reads
a simulation's existing nodes only for the pods on them. In a packed cluster most nodes are full:
the copies and the scans of the 10,000-pod plan's simulations were over all of them. A node whose
Available fits none is left out before its prototype is built
(:meth:`ExistingNodeMemo.has_room_available`). Checked by
tests/disruption/test_roomless_nodes_equivalence.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from karpy.provisioning.existingnode import ExistingNode
from karpy.scheduling.resources import fits
from karpy.state.cluster import ClusterState, StateNode

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = ["ExistingNodeMemo", "NO_TOPOLOGY"]


class _NoTopology:
    """A prototype registers with no topology (each copy registers with its scheduler's)."""

    @staticmethod
    def register(topology_key: str, domain: str) -> None:
        return None


#: what a prototype is built with
NO_TOPOLOGY = _NoTopology()


class ExistingNodeMemo:
    """Per DaemonSet-pod state: StateNode -> its prototype ExistingNode; and the snapshot's DaemonSet pods."""

    #: False: the schedulers build every ExistingNode themselves (the plain path the equivalence test compares)
    enabled = True
    #: False: every node is a scheduler's existing node, room or not (the plain path)
    roomless_left_out = True

    def __init__(self, cluster: ClusterState) -> None:
        self.cluster = cluster
        self._daemonsets: tuple[list[Any], list[Pod]] | None = None
        self._prototypes: dict[tuple[str, ...], dict[int, tuple[StateNode, ExistingNode]]] = {}
        self._capacity: dict[int, tuple[StateNode, dict[str, int]]] = {}
        #: (id of a prototype, requests key) -> whether the prototype fits those requests
        self._room: dict[tuple[int, Any], bool] = {}
        #: (id of a StateNode, requests key) -> (the StateNode, whether its Available fits those requests)
        self._room_available: dict[tuple[int, Any], tuple[StateNode, bool]] = {}
        self._available: dict[int, tuple[StateNode, dict[str, int]]] = {}
        #: (id of a prototypes dict, requests keys) -> :meth:`room_table`'s table (the dicts live in _prototypes)
        self._tables: dict[tuple[int, frozenset[Any]], dict[int, tuple[StateNode, ExistingNode | None, str]]] = {}

    def daemonset_pods(self, daemonsets: Sequence[Any], cluster: ClusterState,
                       build: Callable[[Sequence[Any], ClusterState], list[Pod]]) -> list[Pod]:
        """provisioner.go getDaemonSetPods for this snapshot (``build`` is the provisioner's), once
        per DaemonSet list (the same objects)."""
        held = self._daemonsets
        if (held is not None and cluster is self.cluster and len(held[0]) == len(daemonsets)
                and all(a is b for a, b in zip(held[0], daemonsets))):
            return held[1]
        pods = build(daemonsets, cluster)
        if cluster is self.cluster:
            self._daemonsets = (list(daemonsets), pods)
        return pods

    def prototypes_for(self, daemonset_pods: Sequence[Pod]) -> dict[int, tuple[StateNode, ExistingNode]]:
        """The prototypes under these DaemonSet pod copies (StateNode id -> (StateNode, prototype));
        the scheduler adds what it builds (with :data:`NO_TOPOLOGY`)."""
        key = tuple(p.model_dump_json() for p in daemonset_pods)
        protos = self._prototypes.get(key)
        if protos is None:
            protos = self._prototypes[key] = {}
        return protos

    #: request sets per snapshot answered from a table; past it (a consolidation trying many candidate
    #: sets of many pod shapes, each simulation its own set) every node is kept, as the plain path does
    ROOM_TABLES = 8

    def room_table(self, protos: dict[int, tuple[StateNode, ExistingNode]], requests: Mapping[Any, Any]
                   ) -> dict[int, tuple[StateNode, ExistingNode | None, str]] | None:
        """The schedulers' answers for these prototypes (:meth:`prototypes_for`) and requests keys:
        id(StateNode) -> (it, its prototype or None when it has room for none of them, its hostname);
        None past :data:`ROOM_TABLES` sets (then every node is copied)."""
        key = (id(protos), frozenset(requests))
        table = self._tables.get(key)
        if table is None:
            if len(self._tables) >= self.ROOM_TABLES:
                return None
            table = self._tables[key] = {}
        return table

    def has_room(self, proto: ExistingNode, requests: Mapping[Any, Mapping[str, int]]) -> bool:
        """Whether ``proto`` (held by this memo, so its id is not reused) fits any of ``requests``
        (requests key -> requests), as ExistingNode.has_room of a fresh copy answers."""
        known = self._room
        for rk, req in requests.items():
            k = (id(proto), rk)
            room = known.get(k)
            if room is None:
                room = known[k] = fits(req, proto.remaining_resources)
            if room:
                return True
        return False

    def has_room_available(self, sn: StateNode, requests: Mapping[Any, Mapping[str, int]]) -> bool:
        """Whether StateNode.Available fits any of ``requests``: False implies :meth:`has_room` of its
        prototype is False (its remaining resources are the available ones less a non-negative
        DaemonSet remainder, on the same keys), so a full node's prototype need not be built."""
        known = self._room_available
        for rk, req in requests.items():
            hit = known.get((id(sn), rk))
            if hit is None or hit[0] is not sn:
                hit = known[(id(sn), rk)] = (sn, fits(req, self.available(sn)))
            if hit[1]:
                return True
        return False

    def available(self, sn: StateNode) -> dict[str, int]:
        """StateNode.Available (read only by the caller), once per node of the snapshot."""
        hit = self._available.get(id(sn))
        if hit is None or hit[0] is not sn:
            hit = self._available[id(sn)] = (sn, sn.available())
        return hit[1]

    def capacity(self, sn: StateNode) -> dict[str, int]:
        """StateNode.Capacity (read only by the caller)."""
        hit = self._capacity.get(id(sn))
        if hit is None or hit[0] is not sn:
            hit = self._capacity[id(sn)] = (sn, sn.capacity())
        return hit[1]

