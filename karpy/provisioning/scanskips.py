"""Finds the first target of scheduler.go addToExistingNode / addToInflightNode whose CanAdd succeeds
while skipping targets on which CanAdd is known to fail -- the same target as upstream's first-fit,
pinned by tests/provisioning/test_scanskips_equivalence.py (why each skip is exact:
docs/internals/upstream-mirrors.md#scanskips)."""

from __future__ import annotations

from bisect import bisect_left, insort
from itertools import compress, count, repeat
from operator import attrgetter, not_, or_
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from karpy.provisioning.existingnode import ExistingNode
from karpy.provisioning.instancetypeindex import InstanceTypeIndex
from karpy.provisioning.nodeclaim import NodeClaim
from karpy.provisioning.poddata import PodData
from karpy.provisioning.topology import TopologyError
from karpy.provisioning.topologynodefilter import ZERO_NODE_FILTER
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements
from karpy.scheduling.resources import fits

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = ["Scans"]

_RequestsKey = tuple[tuple[str, int], ...]


class Scans:
    """The per-Solve memos of the two first-fit scans (built by Scheduler.solve)."""

    def __init__(self, existing_nodes: Sequence[ExistingNode], index: InstanceTypeIndex, topology: Any) -> None:
        self.existing_nodes = existing_nodes
        self.index = index
        self.topology = topology
        #: requests (PodData.requests_key) -> the existing nodes, in order, that may still have room
        self.with_room: dict[_RequestsKey, list[ExistingNode]] = {}
        #: topology key -> target -> the target's requirement for the key by value (_miss_key)
        self.key_values = _KeyValuesByKey()
        #: in-flight claim -> ids of its instance-type options
        self.option_ids = _OptionIds()
        #: set of incompatible type ids -> option ids -> covered (_OptionMisses.skips' memo)
        self.covers = _CoversByBad()
        #: existing node -> its index in ``existing_nodes`` (the order of every with-room list)
        self.position: dict[ExistingNode, int] = {en: i for i, en in enumerate(existing_nodes)}
        #: requests -> topology key -> the domains of that request value's with-room list
        self.domains: dict[_RequestsKey, dict[str, _Domains]] = {}
        #: what the existing-node scan of the current add found, read by its in-flight scan
        self._occupied: list[set[str]] | None = None

    def forget(self, target: Any) -> None:
        """Drop what the memos hold for ``target``, whose requirements and options Add just
        replaced; an existing node whose value for a key changed moves to its new domain."""
        for key, by_target in self.key_values.items():
            old = by_target.get(target, _ABSENT)
            if old is _ABSENT:
                continue
            new = by_target[target] = _miss_key(dict.get(target.requirements, key))
            if new == old or target not in self.position:
                continue
            pos = self.position[target]
            for doms in self.domains.values():
                d = doms.get(key)
                if d is None:
                    continue
                positions = d.by_value.get(old)
                if positions is None:
                    continue
                p = bisect_left(positions, pos)
                if p < len(positions) and positions[p] == pos:
                    del positions[p]
                    insort(d.by_value.setdefault(new, []), pos)
        self.option_ids.pop(target, None)

    def drop(self, rk: _RequestsKey, nodes: list[ExistingNode], i: int) -> None:
        """Remove ``nodes[i]`` (no room for the requests ``rk``; ExistingNode.has_room stays False
        once False) from the request value's list and its _Domains."""
        en = nodes.pop(i)
        doms = self.domains.get(rk)
        if doms:
            pos = self.position[en]
            for key, d in doms.items():
                if d.nodes is nodes:
                    d.by_value[self.key_values[key][en]].remove(pos)

    def domains_of(self, rk: _RequestsKey, key: str, nodes: list[ExistingNode]) -> _Domains:
        """The _Domains of ``nodes`` (the list of ``rk``) for ``key``, built on first use."""
        doms = self.domains.setdefault(rk, {})
        d = doms.get(key)
        if d is None or d.nodes is not nodes:
            kv = self.key_values[key]
            position = self.position
            by_value: dict[Any, list[int]] = {}
            for en in nodes:
                by_value.setdefault(kv[en], []).append(position[en])
            d = doms[key] = _Domains(nodes, by_value)
        return d

    def first_existing_node(self, pod: Pod, data: PodData) -> tuple[ExistingNode, Requirements] | None:
        """addToExistingNode's lowest-index node whose CanAdd succeeds, with CanAdd's requirements:
        target by target until the first miss, then by domain (:meth:`_by_domain`)."""
        rk = data.requests_key
        nodes = self.with_room.get(rk)
        if nodes is None:
            nodes = self.with_room[rk] = list(self.existing_nodes)
        requests = data.requests
        occupied = self._occupied = self.topology.hostname_blocked(pod) if nodes else None
        blocked = _union(occupied) if occupied is not None else None
        misses = _TopologyMisses(data)
        i = 0
        while i < len(nodes) and not misses.keys:
            if blocked is not None:
                i = _next_open([map(blocked.__contains__, map(_HOSTNAME, nodes[i:]))], i, len(nodes))
                if i == len(nodes):
                    break
            en = nodes[i]
            if not fits(requests, en.remaining_resources):  # ExistingNode.has_room, inlined
                self.drop(rk, nodes, i)
                continue
            reqs, err = en.can_add(pod, data)
            if err is None:
                assert reqs is not None  # can_add returns the requirements whenever there is no error
                return en, reqs
            misses.note(err, en.requirements)
            i += 1
        if i < len(nodes):  # (misses noted: the rest of the list by domain)
            return self._by_domain(pod, data, nodes, i, blocked, misses)
        return None

    def _by_domain(self, pod: Pod, data: PodData, nodes: list[ExistingNode], i: int, blocked: set[str] | None,
                   misses: _TopologyMisses) -> tuple[ExistingNode, Requirements] | None:
        """:meth:`first_existing_node` from ``nodes[i]`` on, visiting only the nodes in the domains
        of the first missed key not missed, in list order."""
        rk = data.requests_key
        requests = data.requests
        values = self.key_values
        key0, missed0 = next(iter(misses.keys.items()))
        by_value = self.domains_of(rk, key0, nodes).by_value
        existing = self.existing_nodes
        g = self.position[nodes[i]]
        while True:
            best = _END
            for v, positions in by_value.items():
                if v in missed0:
                    continue
                p = bisect_left(positions, g)
                if p < len(positions) and positions[p] < best:
                    best = positions[p]
            if best == _END:
                return None
            g = best + 1
            en = existing[best]
            if blocked is not None and en.hostname in blocked:
                continue
            if len(misses.keys) > 1 and any(values[k][en] in m for k, m in misses.keys.items() if k != key0):
                continue
            if not fits(requests, en.remaining_resources):
                self.drop(rk, nodes, nodes.index(en))
                continue
            reqs, err = en.can_add(pod, data)
            if err is None:
                assert reqs is not None
                return en, reqs
            misses.note(err, en.requirements)

    def first_inflight_claim(self, claims: list[NodeClaim], hostnames: set[str], pod: Pod,
                             data: PodData) -> tuple[int, NodeClaim, Requirements, list[Any]] | None:
        """addToInflightNode's lowest-index claim whose CanAdd succeeds (errors discarded), with
        its index and CanAdd's requirements and instance types; ``hostnames``: the claims'.
        Skips claims whose hostname the pod's topologies block and claims sharing a failed
        domain (:class:`_TopologyMisses`) or failed merged requirements (:class:`_OptionMisses`)."""
        occupied, self._occupied = self._occupied, None
        if not claims:
            return None
        if occupied is None:  # (else the same answer: the node scan recorded nothing)
            occupied = self.topology.hostname_blocked(pod)
        free: set[str] | None = None
        if occupied:
            free = hostnames.difference(*occupied)
            if not free:
                return None
        misses = _TopologyMisses(data)
        options: _OptionMisses | None = None
        n = len(claims)
        i = 0
        while i < n:
            if free is not None or misses.keys or (options is not None and options.bad):
                u = claims[i:]
                skips = misses.skips(self.key_values, u)
                if options is not None and options.bad:
                    skips.extend(options.skips(self.key_values, self.option_ids, u, self.covers))
                if free is not None:
                    skips.append(map(not_, map(free.__contains__, map(_HOSTNAME, u))))
                i = _next_open(skips, i, n)
                if i == n:
                    break
            nc = claims[i]
            creqs, its, cerr = nc.can_add(pod, data, False, need_error=False)  # errors discarded
            if cerr is None:
                assert creqs is not None and its is not None  # can_add returns both whenever there is no error
                return i, nc, creqs, its
            merged = nc.filtered_requirements
            if merged is not None:  # no option compatible with the merged requirements
                nc.filtered_requirements = None
                if options is None:
                    options = _OptionMisses.for_pod(self.index, self.topology, pod, data)
                if options is not None:
                    options.note(nc, merged)
            else:
                misses.note(cerr, nc.requirements)
            i += 1
        return None


def _union(sets: list[set[str]]) -> set[str] | None:
    """The union of ``sets`` (the one set itself when there is one; None when there is none)."""
    if not sets:
        return None
    if len(sets) == 1:
        return sets[0]
    return set().union(*sets)


class _TopologyMisses:
    """The targets' requirements on whose topology domains AddRequirements failed in one scan: a
    later target with an equal requirement for the key is skipped (docs/internals/upstream-mirrors.md#scanskips)."""

    __slots__ = ("keys", "_uid", "_exact")

    def __init__(self, data: PodData) -> None:
        #: topology key -> the target requirements (values) on which a group of that key failed
        self.keys: dict[str, set[Any]] = {}
        self._uid: str = data.pod.metadata.uid
        self._exact = not data.volume_requirements

    def note(self, err: Any, requirements: Requirements) -> None:
        if not self._exact or not isinstance(err, TopologyError):
            return
        tg = err.topology
        if tg.node_filter is not ZERO_NODE_FILTER and not tg.is_owned_by(self._uid):
            return
        self.keys.setdefault(tg.key, set()).add(_miss_key(dict.get(requirements, tg.key)))

    def missed(self, requirements: Requirements) -> bool:
        """Whether a target with these requirements is skipped (the per-target form of skips)."""
        for key, values in self.keys.items():
            if _miss_key(dict.get(requirements, key)) in values:
                return True
        return False

    def skips(self, values: _KeyValuesByKey, targets: list[Any]) -> list[Iterator[bool]]:
        """Per noted key, a lazy stream over ``targets``: whether :meth:`missed` holds for the
        target's requirements (``values[key]`` holds them by value; computed in C)."""
        return [map(missed.__contains__, map(values[key].__getitem__, targets))
                for key, missed in self.keys.items()]


class _OptionMisses:
    """The merged requirements on which no instance-type option survived in one in-flight scan: a
    later claim with an equal requirement for the key whose options all lie in the noted set is
    skipped (docs/internals/upstream-mirrors.md#scanskips)."""

    __slots__ = ("keys", "bad", "_index")

    def __init__(self, index: InstanceTypeIndex, keys: list[str]) -> None:
        self._index = index
        self.keys = keys
        #: topology key -> the claim requirement (by value) -> ids of the incompatible types
        self.bad: dict[str, dict[Any, frozenset[int]]] = {}

    @classmethod
    def for_pod(cls, index: InstanceTypeIndex, topology: Any, pod: Pod, data: PodData) -> _OptionMisses | None:
        """The notes for one scan of ``pod`` (None when the conditions above do not hold)."""
        if data.volume_requirements:
            return None
        keys = topology.evaluated_keys(pod)
        if keys is None:
            return None
        return cls(index, sorted(keys))

    def note(self, nc: NodeClaim, merged: tuple[Requirements, dict[str, Requirement] | None]) -> None:
        """Note ``nc``'s failure; ``merged`` is NodeClaim.filtered_requirements: the requirements
        before topology and the keys the topology narrowed (those win)."""
        reqs, changes = merged
        for key in self.keys:
            r = changes.get(key) if changes and key in changes else dict.get(reqs, key)
            if r is None:
                continue
            bad = self._index.incompatible_for(r)
            if bad:
                self.bad.setdefault(key, {})[_miss_key(dict.get(nc.requirements, key))] = bad

    def missed(self, nc: NodeClaim) -> bool:
        """Whether ``nc`` is skipped (the per-claim form of skips)."""
        reqs = nc.requirements
        for key, by_value in self.bad.items():
            bad = by_value.get(_miss_key(dict.get(reqs, key)))
            if bad is not None and nc.options_within(bad):
                return True
        return False

    def skips(self, values: _KeyValuesByKey, option_ids: _OptionIds, claims: list[Any],
              covers: _CoversByBad | None = None) -> list[Iterator[bool]]:
        """Per noted key, a lazy stream over ``claims``: whether :meth:`missed` holds for the claim
        (computed in C). A claim always has an option (CanAdd fails with none left), so the
        empty set standing for "nothing noted" never covers a claim's options, as ``None`` does
        not in :meth:`missed`. ``covers``: the memo of the ``issuperset`` tests (a fresh one when
        not given; see :class:`_CoversByBad`)."""
        if covers is None:
            covers = _CoversByBad()
        none = covers[_NO_IDS]
        return [map(dict.__getitem__,
                    map({v: covers[bad] for v, bad in by_value.items()}.get, map(values[key].__getitem__, claims),
                        repeat(none)),
                    map(option_ids.__getitem__, claims))
                for key, by_value in self.bad.items()]


class _KeyValues(dict[Any, Any]):
    """target (an ExistingNode or in-flight NodeClaim, by identity) -> ``_miss_key`` of its
    requirement for one topology key, computed on first use. Valid while the target's
    requirements object is unchanged: Scans.forget recomputes the entry when Add replaces it."""

    __slots__ = ("key",)

    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key

    def __missing__(self, target: Any) -> Any:
        v = self[target] = _miss_key(dict.get(target.requirements, self.key))
        return v


class _KeyValuesByKey(dict[str, _KeyValues]):
    """topology key -> its :class:`_KeyValues` (made on first use)."""

    __slots__ = ()

    def __missing__(self, key: str) -> _KeyValues:
        v = self[key] = _KeyValues(key)
        return v


class _OptionIds(dict[Any, frozenset[int]]):
    """in-flight claim -> ids of its instance-type options (NodeClaim.options_within compares
    the same set), computed on first use; dropped by Scans.forget when Add replaces them.
    Equal sets are one object (interned here), so the memo of :class:`_CoversByBad` finds them by
    identity (an equal but distinct key would cost a full set comparison per lookup)."""

    __slots__ = ("_interned",)

    def __init__(self) -> None:
        super().__init__()
        self._interned: dict[frozenset[int], frozenset[int]] = {}

    def __missing__(self, nc: Any) -> frozenset[int]:
        ids = frozenset(map(id, nc.instance_type_options))
        ids = self[nc] = self._interned.setdefault(ids, ids)
        return ids


class _Covers(dict[frozenset[int], bool]):
    """option ids -> ``bad.issuperset(ids)`` for one set ``bad`` (:class:`_CoversByBad`)."""

    __slots__ = ("bad",)

    def __init__(self, bad: frozenset[int]) -> None:
        super().__init__()
        self.bad = bad

    def __missing__(self, ids: frozenset[int]) -> bool:
        v = self[ids] = self.bad.issuperset(ids)
        return v


class _CoversByBad(dict[frozenset[int], _Covers]):
    """set of incompatible type ids -> its :class:`_Covers` (made on first use); per Solve."""

    __slots__ = ()

    def __missing__(self, bad: frozenset[int]) -> _Covers:
        v = self[bad] = _Covers(bad)
        return v


class _Domains:
    """The nodes of one with-room list (``nodes``, by identity) by their requirement for one
    topology key: value (_miss_key) -> the nodes' positions in ``existing_nodes``, ascending; kept
    equal to the list by Scans.drop and Scans.forget."""

    __slots__ = ("nodes", "by_value")

    def __init__(self, nodes: list[ExistingNode], by_value: dict[Any, list[int]]) -> None:
        self.nodes = nodes
        self.by_value = by_value


_HOSTNAME = attrgetter("hostname")
_END = 1 << 62
_ABSENT = object()
_NO_IDS: frozenset[int] = frozenset()


def _next_open(skips: list[Iterator[bool]], start: int, end: int) -> int:
    """The first index from ``start`` whose target no stream in ``skips`` (aligned with the
    targets from ``start`` on) skips, in one C-level walk; ``end`` when there is none."""
    if not skips:
        return start
    skip = skips[0]
    for other in skips[1:]:
        skip = map(or_, skip, other)
    return next(compress(count(start), map(not_, skip)), end)


def _miss_key(r: Requirement | None) -> Any:
    """A requirement by value, cheap to compare: a plain ``In`` (the labels of a node) by its
    value set (compared in C), anything else as itself (None: the key is undefined)."""
    if r is not None and not r.complement and r.gte is None and r.lte is None and r.min_values is None:
        return r.values
    return r
