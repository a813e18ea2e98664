"""The candidate sets computeConsolidation found no command for, while the cluster is unchanged.

The controller looks again whenever the cluster's consolidation state moves, and at least every five
minutes (state/cluster.go ConsolidationState). When only time moved, each candidate's scheduling
simulation is the one already run: :class:`ConsolidationMemo` keeps, per candidate set, the
fingerprint of everything computeConsolidation read (the store's resource version -- pods, nodes,
NodePools, DaemonSets, PDBs --, the candidates' prices, the pods the simulation would move after
the instant's PodDisruptionBudget and do-not-disrupt checks, the nodes deleting or under
consolidateAfter now, each node's initialization, and the cloud provider's key of every NodePool's
instance types) when it found no command, with the ``Unconsolidatable`` events it published. The
same fingerprint gets the same answer and the same events, without the simulation. A command is
never remembered (its replacement is launched). Checked against the plain path by
tests/disruption/test_consolidationmemo_equivalence.py.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from karpy.scheduling.labels import LABEL_NODEPOOL

if TYPE_CHECKING:  # pragma: no cover
    from karpy.disruption.types import Candidate, Cluster

__all__ = ["ConsolidationMemo", "fingerprint", "look_fingerprint"]


def fingerprint(cluster: Cluster, candidates: Sequence[Candidate]) -> tuple[Hashable, ...] | None:
    """What computeConsolidation of ``candidates`` reads from this look, or None when it cannot be
    told (no store version, or a NodePool's instance types without a provider key)."""
    look = look_fingerprint(cluster)
    return None if look is None else _with_candidates(cluster, candidates, look)


def look_fingerprint(cluster: Cluster) -> tuple[Hashable, ...] | None:
    """The part of :func:`fingerprint` every candidate set of the look shares (its nodes and the
    instance types' keys), or None when it cannot be told."""
    from karpy.disruption.helpers import is_under_consolidate_after

    if cluster.version is None or cluster.instance_types_key is None:
        return None
    types_keys = []
    for name in sorted(cluster.nodepools):
        key = cluster.instance_types_key(cluster.nodepools[name])
        if key is None:
            return None
        types_keys.append((name, key))
    now = cluster.now
    movable = cluster.currently_reschedulable
    nodes = []
    for sn in sorted(cluster.state.nodes, key=lambda n: n.name):
        deleting = sn.marked_for_deletion()
        pool = cluster.nodepools.get(sn.labels().get(LABEL_NODEPOOL, ""))
        gated = sn.managed() and is_under_consolidate_after(pool, sn.nodeclaim, now)
        moved = tuple(p.key for p in sn.pods if movable(p)) if deleting else ()
        nodes.append((sn.name, deleting, gated, sn.initialized(), moved))
    return (tuple(nodes), tuple(types_keys))


def _with_candidates(cluster: Cluster, candidates: Sequence[Candidate], look: tuple[Hashable, ...],
                     parts: dict[int, tuple[Candidate, Hashable]] | None = None) -> tuple[Hashable, ...]:
    """The fingerprint from its look part; ``parts``: each candidate's part, kept for the look."""
    if parts is None:
        cands = tuple(map(partial(_candidate_part, cluster), candidates))
    else:
        out = []
        for c in candidates:
            hit = parts.get(id(c))
            if hit is None or hit[0] is not c:
                hit = parts[id(c)] = (c, _candidate_part(cluster, c))
            out.append(hit[1])
        cands = tuple(out)
    return (cluster.version, cands, *look)


def _candidate_part(cluster: Cluster, c: Candidate) -> Hashable:
    return (c.name, c.price, c.capacity_type, c.zone, tuple(k for k, _ in cluster.movable_keyed(c)))


class ConsolidationMemo:
    """Per candidate set (names): the fingerprint of its last no-command computation and its events."""

    #: False: never remembered (the plain path the equivalence test compares against)
    enabled = True
    #: False: the look's part of the fingerprint, and each candidate's, are derived for every candidate
    #: set, not once per look (a look is not edited while its methods compute; the equivalence test
    #: compares both)
    share_look = True

    def __init__(self) -> None:
        self._version: int | None = None
        self._entries: dict[tuple[str, ...], tuple[tuple[Hashable, ...], tuple[tuple[str, str, str], ...]]] = {}
        self._look: tuple[Cluster, tuple[Hashable, ...] | None] | None = None
        #: the look's candidates' parts of the fingerprint (a Candidate is made per look)
        self._parts: dict[int, tuple[Candidate, Hashable]] = {}

    def key(self, cluster: Cluster, candidates: Sequence[Candidate]) -> tuple[Hashable, ...] | None:
        if not self.enabled:
            return None
        held = self._look
        if held is None or held[0] is not cluster or not self.share_look:
            held = self._look = (cluster, look_fingerprint(cluster))
            self._parts = {}
        fp = None if held[1] is None else _with_candidates(cluster, candidates, held[1],
                                                           self._parts if self.share_look else None)
        if fp is not None and cluster.version != self._version:
            self._version = cluster.version  # an older version never matches again
            self._entries = {}
        return fp

    def no_command(self, key: tuple[Hashable, ...], candidates: Sequence[Candidate]
                   ) -> tuple[tuple[str, str, str], ...] | None:
        """The events of the remembered no-command answer for this fingerprint, or None."""
        hit = self._entries.get(tuple(c.name for c in candidates))
        if hit is not None and hit[0] == key:
            return hit[1]
        return None

    def remember(self, key: tuple[Hashable, ...], candidates: Sequence[Candidate],
                 events: Sequence[tuple[str, str, str]]) -> None:
        self._entries[tuple(c.name for c in candidates)] = (key, tuple(events))

    def forget(self, candidates: Sequence[Candidate]) -> None:
        self._entries.pop(tuple(c.name for c in candidates), None)
