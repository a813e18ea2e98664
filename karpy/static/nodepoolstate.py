"""Per-NodePool NodeClaim counts and node-count reservations of static NodePools.

Mirrors pkg/controllers/state/statenodepool.go (NodePoolState: MarkNodeClaimActive,
MarkNodeClaimDeleting, MarkNodeClaimPendingDisruption, Cleanup, GetNodeCount, ReserveNodeCount,
ReleaseNodeCount, UpdateNodeClaim). Upstream's informers keep it current; the simulation
re-derives the three sets from its NodeClaims before each read (:func:`observe`), and keeps the
reservations, which only live between a reservation and the CreateNodeClaims that releases it.
karpy is single-threaded, so the compare-and-swap loop is a plain update.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["ACTIVE", "DELETING", "MAX_INT64", "NodeClaimState", "NodePoolState", "PENDING_DISRUPTION"]

#: math.MaxInt64: the node limit of a static NodePool without ``limits.nodes``
MAX_INT64 = 2**63 - 1
ACTIVE = "active"
DELETING = "deleting"
PENDING_DISRUPTION = "pending-disruption"


@dataclass
class NodeClaimState:
    """statenodepool.go NodeClaimState: NodeClaim names by state."""

    active: set[str] = field(default_factory=set)
    pending_disruption: set[str] = field(default_factory=set)
    deleting: set[str] = field(default_factory=set)


class NodePoolState:
    """statenodepool.go NodePoolState."""

    def __init__(self) -> None:
        self._claims: dict[str, NodeClaimState] = {}
        self._pool_of: dict[str, str] = {}
        self._reserved: dict[str, int] = {}

    def _entry(self, nodepool: str) -> NodeClaimState:
        self._reserved.setdefault(nodepool, 0)
        return self._claims.setdefault(nodepool, NodeClaimState())

    def set_nodeclaim_mapping(self, nodepool: str, nodeclaim: str) -> None:
        if nodepool and nodeclaim:
            self._entry(nodepool)
            self._pool_of[nodeclaim] = nodepool

    def mark_active(self, nodepool: str, nodeclaim: str) -> None:
        st = self._entry(nodepool)
        st.pending_disruption.discard(nodeclaim)
        st.deleting.discard(nodeclaim)
        st.active.add(nodeclaim)

    def mark_deleting(self, nodepool: str, nodeclaim: str) -> None:
        st = self._entry(nodepool)
        st.pending_disruption.discard(nodeclaim)
        st.active.discard(nodeclaim)
        st.deleting.add(nodeclaim)

    def mark_pending_disruption(self, nodepool: str, nodeclaim: str) -> None:
        st = self._entry(nodepool)
        st.active.discard(nodeclaim)
        st.deleting.discard(nodeclaim)
        st.pending_disruption.add(nodeclaim)

    def update_nodeclaim(self, nodepool: str, nodeclaim: str, marked_for_deletion: bool) -> None:
        """UpdateNodeClaim: track the NodeClaim as deleting or active."""
        if not nodepool:
            return
        self.set_nodeclaim_mapping(nodepool, nodeclaim)
        (self.mark_deleting if marked_for_deletion else self.mark_active)(nodepool, nodeclaim)

    def cleanup(self, nodeclaim: str) -> None:
        """Cleanup: forget a deleted NodeClaim; a pool with no active or deleting NodeClaim left
        loses its entry and its reservation."""
        pool = self._pool_of.pop(nodeclaim, "")
        st = self._claims.get(pool)
        if st is None:
            return
        st.deleting.discard(nodeclaim)
        st.active.discard(nodeclaim)
        st.pending_disruption.discard(nodeclaim)
        if not st.active and not st.deleting:
            del self._claims[pool]
            self._reserved.pop(pool, None)

    def get_node_count(self, nodepool: str) -> tuple[int, int, int]:
        """GetNodeCount: (active, deleting, pending disruption)."""
        st = self._claims.get(nodepool)
        if st is None:
            return 0, 0, 0
        return len(st.active), len(st.deleting), len(st.pending_disruption)

    def reserve_node_count(self, nodepool: str, limit: int, wanted: int) -> int:
        """ReserveNodeCount: grant up to ``wanted`` so that active + deleting + pending + reserved
        stays within ``limit``; 0 when the limit is already passed."""
        self._entry(nodepool)
        active, deleting, pending = self.get_node_count(nodepool)
        remaining = limit - (active + deleting + pending) - self._reserved[nodepool]
        if remaining < 0:
            return 0
        granted = min(wanted, remaining)
        self._reserved[nodepool] += granted
        return granted

    def release_node_count(self, nodepool: str, count: int) -> None:
        """ReleaseNodeCount (never below zero)."""
        if nodepool in self._reserved:
            self._reserved[nodepool] = max(0, self._reserved[nodepool] - count)

    def reserved(self, nodepool: str) -> int:
        return self._reserved.get(nodepool, 0)

    def observe(self, claims: Iterable[tuple[str, str, str | None]]) -> None:
        """Re-derive the sets from ``(nodepool, nodeclaim, state)`` of every NodeClaim that exists
        (state :data:`ACTIVE`, :data:`DELETING` or :data:`PENDING_DISRUPTION`); NodeClaims no
        longer listed are cleaned up (upstream: the NodeClaim informer's updates and deletes)."""
        seen: set[str] = set()
        for pool, name, state in claims:
            if not pool or state is None:
                continue
            seen.add(name)
            self.set_nodeclaim_mapping(pool, name)
            if state == DELETING:
                self.mark_deleting(pool, name)
            elif state == PENDING_DISRUPTION:
                self.mark_pending_disruption(pool, name)
            else:
                self.mark_active(pool, name)
        for name in [n for n in self._pool_of if n not in seen]:
            self.cleanup(name)
