"""An in-flight NodeClaim being built by the scheduler, and instance-type filtering.

Mirrors pkg/controllers/provisioning/scheduling/nodeclaim.go (NodeClaim, NewNodeClaim, CanAdd,
tryVolumeAlternative, Add, FinalizeScheduling, addDaemonRequests, InstanceTypeFilterError,
filterInstanceTypesByRequirements, compatible, fits).

Performance: the per-instance-type work of ``filterInstanceTypesByRequirements`` is served from an
``InstanceTypeIndex`` owned by one Scheduler: for every (key, Requirement) value the set of
instance types whose own requirement does not intersect it is computed once, and for every
distinct combination of the claim's offering-relevant requirements (zone, capacity type, ...)
the allocatable groups that hold a compatible available offering are computed once. The result
is exactly upstream's ``compatible`` / ``fits`` (only cached). Error strings are only built when
every candidate fails.

Issue 13 (the failure path on real catalogues): ``incompatible`` is memoised by Requirement
identity; the set algebra over long-lived id sets (a claim's options, a group's members, the
index's answers) by the identity of both operands (``meet`` / ``minus`` / ``covered``); a try on
an in-flight claim whose options all fail the requirements returns before the requests merge and
the offering lookups; the error's flags are set algebra, not a loop over the options; and the
message's parts (Requirement texts, resource lists) are memoised. Each is commented "not in
upstream; same result because ..." where it is made.

Determinism: upstream iterates daemon overhead groups in Go map order and appends survivors group
by group; we keep the claim's instance-type order (catalogue / template order) and look each type's
group up, so ``remaining`` keeps the input order (nodeclaim.go:560-600).

Reserved offerings: when the scheduler sets ``reservation_manager`` (karpy.provisioning.
reservationmanager), ``can_add`` computes offeringsToReserve and keeps them for the ``add`` that
follows (the scheduler always calls ``add`` right after a successful ``can_add`` on the same claim;
upstream returns them as CanAdd's fourth value).

Volume topology: ``pod_data.volume_requirements`` (karpy.provisioning.volumetopology) are tried in
order as upstream's CanAdd does. Out of scope: DRA device allocation.
"""

from __future__ import annotations

import json
import operator
from bisect import bisect_left
from itertools import compress, islice, repeat
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence, TypeVar

from karpy.scheduling.hostports import HostPortUsage, get_host_ports
from karpy.scheduling.labels import LABEL_HOSTNAME, OP_IN, RESTRICTED_LABELS
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements
from karpy.scheduling.resources import min_resources, max_resources, merge, to_strings
from karpy.scheduling.taints import tolerates

__all__ = [
    "DaemonOverheadGroup",
    "InstanceTypeFilterError",
    "InstanceTypeIndex",
    "NodeClaim",
    "ReservedOfferingError",
    "filter_instance_types_by_requirements",
    "resources_string",
    "topology_changes_error",
]

_ONE_MILLION_CPU = 1_000_000 * 1_000_000_000  # "1M" cpu in nano-units
#: bound on the memo of InstanceTypeIndex.incompatible (cleared when reached)
_MEMO_LIMIT = 1 << 14
#: bound on each memo of InstanceTypeIndex.meet / minus / covered (cleared when reached)
_SET_MEMO_LIMIT = 1 << 13
_NO_IDS: frozenset[int] = frozenset()

#: The error CanAdd returns when its caller said it will not read it (``need_error=False``): the
#: in-flight-claim loop of scheduler.go addToInflightNode only tests ``err == nil`` and discards
#: the per-claim errors, so their flags (a second pass over every instance type) are not built.
INSTANCE_TYPES_FILTERED_OUT = "no instance type satisfied the pod on this NodeClaim (error not built)"


def resources_string(rl: dict[str, int]) -> str:
    """pkg/utils/resources String: ``{}`` or Go's JSON of the list (sorted keys, canonical quantities)."""
    if not rl:
        return "{}"
    return json.dumps(to_strings(rl), separators=(",", ":"))


class ReservedOfferingError(str):
    """nodeclaim.go ReservedOfferingError (an error *value*: a str subclass)."""


@dataclass
class DaemonOverheadGroup:
    """scheduler.go DaemonOverheadGroup: instance types sharing the same compatible DaemonSet pods."""

    instance_types: list[Any]
    daemon_overhead: dict[str, int]
    host_port_usage: HostPortUsage = field(default_factory=HostPortUsage)
    #: id(it) of the members, for the finalize check
    ids: frozenset[int] = frozenset()

    def __post_init__(self) -> None:
        if not self.ids:
            self.ids = frozenset(id(it) for it in self.instance_types)


class _ITInfo:
    """Precomputed per-instance-type data: the allocatable groups of available offerings, each
    ``(allocatable, has a negative value, offerings, the offerings' requirement classes)``; a
    class numbers one distinct offering requirement set (by value) across the catalogue."""

    __slots__ = ("it", "reqs", "groups")

    def __init__(self, it: Any, offering_class: Any) -> None:
        self.it = it
        self.reqs = it.requirements
        groups: list[tuple[dict[str, int], bool, list[Any], tuple[int, ...]]] = []
        for g in it.allocatable_groups():  # types.go AllocatableOfferingsList (available offerings)
            alloc = g.allocatable
            offs = list(g.offerings)
            groups.append((alloc, any(v < 0 for v in alloc.values()), offs,
                           tuple(offering_class(o.requirements) for o in offs)))
        self.groups = groups


def _nin_or_dne(r: Requirement) -> bool:
    return bool(r.values) if r.complement else not r.values


class _Capacity:
    """Which instance types of one :meth:`InstanceTypeIndex.offering_allocs` answer can hold a
    total of requests (nodeclaim.go ``fits``: some allocatable group with a compatible offering
    has room), answered with ``bisect`` and set operations instead of a loop over the catalogue.

    Valid because a type with exactly one usable group (no negative allocatable; the common case)
    is too small for a total exactly when some requested resource exceeds that group's
    allocatable, and the types too small for ``v`` of one resource are a prefix of the types
    sorted by that resource (a missing resource counts 0, as ``resources.Fits`` reads it). Types
    with several usable groups (capacity or overhead overrides) are checked group by group.
    Built lazily per resource name; lives as long as the answer it was built from."""

    __slots__ = ("candidates", "offered", "_single", "_multi", "_order", "_column")

    def __init__(self, offers: dict[int, tuple[tuple[dict[str, int], bool], ...]]) -> None:
        single: dict[int, dict[str, int]] = {}
        multi: dict[int, tuple[tuple[dict[str, int], bool], ...]] = {}
        for iid, allocs in offers.items():
            usable = [alloc for alloc, neg in allocs if not neg]
            if len(usable) == 1:
                single[iid] = usable[0]
            elif usable:
                multi[iid] = allocs
        #: ids of the types with at least one usable group holding a compatible offering
        self.candidates: frozenset[int] = frozenset(single).union(multi)
        #: ids of the types with any group holding a compatible offering (upstream's hasOffering)
        self.offered: frozenset[int] = frozenset(iid for iid, allocs in offers.items() if allocs)
        self._single = single
        self._multi = multi
        #: resource name -> (allocatable values ascending, type ids in the same order)
        self._order: dict[str, tuple[list[int], list[int]]] = {}
        #: resource name -> type id -> allocatable of that resource (single-group types)
        self._column: dict[str, dict[int, int]] = {}

    def _ranking(self, name: str) -> tuple[list[int], list[int]]:
        """The single-group types' allocatable of resource ``name`` ascending (a missing one
        counts 0), and their ids in the same order; built on first use."""
        hit = self._order.get(name)
        if hit is None:
            ranked = sorted((alloc.get(name, 0), iid) for iid, alloc in self._single.items())
            hit = self._order[name] = ([a for a, _ in ranked], [iid for _, iid in ranked])
        return hit

    def too_small(self, total: dict[str, int]) -> set[int]:
        """ids of the candidates that cannot hold ``total`` in any usable group."""
        out: set[int] = set()
        for name, v in total.items():
            hit = self._ranking(name)
            k = bisect_left(hit[0], v)  # the first k types have less than v of this resource
            if k:
                out.update(hit[1][:k])
        for iid, allocs in self._multi.items():
            if not _fits_any(total, allocs):
                out.add(iid)
        return out

    def too_small_among(self, ids: frozenset[int], total: dict[str, int]) -> set[int]:
        """``too_small(total) & ids``, testing only the types of ``ids``. Not in upstream (a
        shortcut of the shortcut above); same set because a single-group type is too small
        exactly when some resource of ``total`` exceeds its allocatable (a missing resource
        counts 0), the prefix :meth:`too_small` takes per resource, and a several-group type is
        checked by the same ``_fits_any``. Per resource it walks the shorter of the prefix and
        the given single-group types: an in-flight claim's options on a real catalogue are a few
        dozen types against hundreds too small, while on a small catalogue with many options the
        prefix is the short side."""
        out: set[int] = set()
        if not ids:
            return out
        single = self._single
        pool: list[int] | None = None
        if single:
            columns = self._column
            for name, v in total.items():
                hit = self._ranking(name)
                k = bisect_left(hit[0], v)  # the first k types have less than v of this resource
                if k <= len(ids):  # (the prefix is the shorter walk)
                    if k:
                        out.update(filter(ids.__contains__, islice(hit[1], k)))
                    continue
                if pool is None:
                    pool = list(filter(single.__contains__, ids))
                col = columns.get(name)
                if col is None:
                    col = columns[name] = {iid: alloc.get(name, 0) for iid, alloc in single.items()}
                # alloc < v: the pool's types in the prefix
                out.update(compress(pool, map(operator.gt, repeat(v), map(col.__getitem__, pool))))
        multi = self._multi
        if multi:
            for iid in (ids if len(ids) < len(multi) else multi):
                allocs = multi.get(iid)
                if allocs is not None and iid in ids and not _fits_any(total, allocs):
                    out.add(iid)
        return out


_T = TypeVar("_T")


def _memo_op(memo: dict[tuple[int, int], tuple[frozenset[int], frozenset[int], _T]], a: frozenset[int],
             b: frozenset[int], op: Callable[[frozenset[int], frozenset[int]], _T]) -> _T:
    """``op(a, b)`` memoised in ``memo`` by the identity of both operands (see
    :meth:`InstanceTypeIndex.meet`); each entry holds both, so their ids cannot be reused."""
    key = (id(a), id(b))
    hit = memo.get(key)
    if hit is not None and hit[0] is a and hit[1] is b:
        return hit[2]
    if len(memo) >= _SET_MEMO_LIMIT:
        memo.clear()
    out = op(a, b)
    memo[key] = (a, b, out)
    return out


# The answers share an operand's object (or the empty set) when equal to it -- the common
# "all of the options" / "none" answers then cost no memory in the memo.
def _and(a: frozenset[int], b: frozenset[int]) -> frozenset[int]:
    out = a & b
    if len(out) == len(a):
        return a
    if len(out) == len(b):
        return b
    return out if out else _NO_IDS


def _sub(a: frozenset[int], b: frozenset[int]) -> frozenset[int]:
    out = a - b
    if len(out) == len(a):
        return a
    return out if out else _NO_IDS


def _le(a: frozenset[int], b: frozenset[int]) -> bool:
    return a <= b


class InstanceTypeIndex:
    """Per-Scheduler caches making filter_instance_types_by_requirements cheap (see module doc)."""

    def __init__(self, well_known: frozenset[str]) -> None:
        self.well_known = well_known
        self._info: dict[int, _ITInfo] = {}
        self._it_keys: set[str] = set()
        self._offering_keys: list[str] = []
        self._offering_key_set: set[str] = set()
        self._bad: dict[Requirement, frozenset[int]] = {}
        self._offer: dict[tuple[Any, ...], dict[int, tuple[tuple[dict[str, int], bool], ...]]] = {}
        self._fitting: dict[tuple[int, tuple[tuple[str, int], ...]], frozenset[int]] = {}
        #: id(Requirement) -> (that Requirement, _bad_for of it): see incompatible
        self._bad_by_id: dict[int, tuple[Requirement, frozenset[int]]] = {}
        #: ids of several _bad_for answers -> their union: see incompatible
        self._unions: dict[tuple[int, ...], frozenset[int]] = {}
        self._interned: dict[frozenset[int], frozenset[int]] = {}
        #: (id(reqs), changed keys, ids of their values) -> (reqs, the values, answer): see
        #: incompatible_with
        self._with: dict[tuple[int, tuple[str, ...], tuple[int, ...]],
                         tuple[Requirements, tuple[Requirement, ...], frozenset[int]]] = {}
        self._capacity: dict[int, _Capacity] = {}
        #: Requirement (by value) or resource list (sorted items) -> its text (error messages)
        self.strings: dict[Any, str] = {}
        #: (id(a), id(b)) -> (a, b, answer) of meet / minus / covered (see _set_op)
        self._meets: dict[tuple[int, int], tuple[frozenset[int], frozenset[int], frozenset[int]]] = {}
        self._minus: dict[tuple[int, int], tuple[frozenset[int], frozenset[int], frozenset[int]]] = {}
        self._covered: dict[tuple[int, int], tuple[frozenset[int], frozenset[int], bool]] = {}
        #: id(sequence) -> (sequence, ids of its instance types): see ids_of
        self._ids_of: dict[int, tuple[Sequence[Any], frozenset[int]]] = {}
        #: offering Requirements (by value: sorted items) -> class number (see _ITInfo.groups)
        self._offer_class: dict[tuple[tuple[str, Requirement], ...], int] = {}
        self._offer_reqs: list[Requirements] = []
        #: id(offering Requirements) -> (the Requirements, class number): see _offering_class
        self._offer_class_by_id: dict[int, tuple[Requirements, int]] = {}

    def defines(self, key: str) -> bool:
        """Whether a registered type's requirements or one of its offerings' define ``key``."""
        return key in self._it_keys or key in self._offering_key_set

    def register(self, instance_types: Sequence[Any]) -> None:
        new = False
        for it in instance_types:
            if id(it) in self._info:
                continue
            new = True
            info = _ITInfo(it, self._offering_class)
            self._info[id(it)] = info
            self._it_keys.update(info.reqs.keys())
            for _, _, offs, _ in info.groups:
                for o in offs:
                    for k in o.requirements.keys():
                        if k not in self._offering_key_set:
                            self._offering_key_set.add(k)
                            self._offering_keys.append(k)
        if new:
            self._bad.clear()
            self._offer.clear()
            self._fitting.clear()
            self._bad_by_id.clear()
            self._unions.clear()
            self._interned.clear()
            self._with.clear()
            self._capacity.clear()
            self._meets.clear()
            self._minus.clear()
            self._covered.clear()

    def info(self, it: Any) -> _ITInfo:
        inf = self._info.get(id(it))
        if inf is None:
            self.register([it])
            inf = self._info[id(it)]
        return inf

    def _bad_for(self, req: Requirement) -> frozenset[int]:
        """ids of instance types whose requirement for req.key does not intersect req
        (nodeclaim.go compatible -> Requirements.Intersects for one key)."""
        bad = self._bad.get(req)
        if bad is None:
            key = req.key
            req_nd = _nin_or_dne(req)
            out = []
            for iid, inf in self._info.items():
                r = dict.get(inf.reqs, key)
                if r is None:
                    continue
                if not r.has_intersection(req) and not (req_nd and _nin_or_dne(r)):
                    out.append(iid)
            bad = frozenset(out)
            # one object per distinct answer (incompatible memoises unions by object identity)
            bad = self._bad[req] = self._interned.setdefault(bad, bad)
        return bad

    def incompatible_for(self, req: Requirement) -> frozenset[int]:
        """ids of instance types whose requirement for ``req.key`` does not intersect ``req``:
        the part of :meth:`incompatible` that one key contributes (empty for a key no type
        defines), so ``incompatible(reqs) >= incompatible_for(reqs[key])``."""
        return self._bad_for(req) if req.key in self._it_keys else _NO_IDS

    def incompatible(self, reqs: Requirements) -> frozenset[int]:
        """ids of instance types failing ``it.requirements.intersects(reqs)`` (nodeclaim.go
        ``compatible``): the union over the keys of ``reqs`` of :meth:`_bad_for` (Intersects is a
        conjunction over the keys both sides define; a key no registered type defines fails none).

        Not in upstream (which asks every type); same result because the answer is a pure
        function of the Requirement values and the registered types. Memoised per Requirement
        *object* (``_bad_by_id`` holds the object, so its id cannot be reused while cached) and per
        combination of per-key answers (``_unions``, keyed by their ids: they are interned and
        live as long as ``_bad``): a lookup hashes ints only. Solve's merged requirement sets hold
        equal but distinct Requirement objects, so a memo keyed by their values spent its time in
        ``Requirement.__eq__``."""
        return self._incompatible_items(dict.items(reqs))

    def incompatible_with(self, reqs: Requirements, changes: dict[str, Requirement] | None) -> frozenset[int]:
        """:meth:`incompatible` of ``reqs`` with the keys of ``changes`` set (what
        Topology.narrow returns), without building that Requirements.

        Not in upstream; same result because the answer is a pure function of the Requirement
        values. Memoised by the identity of ``reqs`` and of the changed values (the entry holds
        them, so their ids cannot be reused; Solve never mutates a requirement set it has handed
        out -- claims replace theirs): an in-flight try asks it of the claim's merged
        requirements (one object per claim and pod requirement set) with the topology's shared
        domain Requirements, so the pods of one Deployment ask the same question of a claim."""
        if changes:
            values = tuple(changes.values())
            key = (id(reqs), tuple(changes), tuple(map(id, values)))
        else:
            values = ()
            key = (id(reqs), (), ())
        hit = self._with.get(key)
        if hit is not None and hit[0] is reqs and all(map(operator.is_, hit[1], values)):
            return hit[2]
        if len(self._with) >= _MEMO_LIMIT:
            self._with.clear()
        if changes:
            pairs: Any = [(k, changes.get(k, r)) for k, r in dict.items(reqs)]
            pairs.extend((k, r) for k, r in changes.items() if k not in reqs)
        else:
            pairs = dict.items(reqs)
        out = self._incompatible_items(pairs)
        self._with[key] = (reqs, values, out)
        return out

    def _incompatible_items(self, items: Any) -> frozenset[int]:
        """:meth:`incompatible` over ``(key, Requirement)`` pairs (distinct keys)."""
        it_keys = self._it_keys
        by_id = self._bad_by_id
        first: frozenset[int] | None = None
        parts: list[frozenset[int]] | None = None
        for key, req in items:
            if key not in it_keys:
                continue
            hit = by_id.get(id(req))
            if hit is None or hit[0] is not req:
                if len(by_id) >= _MEMO_LIMIT:
                    by_id.clear()
                hit = by_id[id(req)] = (req, self._bad_for(req))
            b = hit[1]
            if not b:
                continue
            if first is None:
                first = b
            elif parts is None:
                parts = [first, b]
            else:
                parts.append(b)
        if parts is None:
            return _NO_IDS if first is None else first
        sig = tuple(map(id, parts))
        union = self._unions.get(sig)
        if union is None:
            if len(self._unions) >= _MEMO_LIMIT:
                self._unions.clear()
                self._interned.clear()
            union = frozenset().union(*parts)
            union = self._unions[sig] = self._interned.setdefault(union, union)
        return union

    def offering_allocs(self, reqs: Requirements) -> dict[int, tuple[tuple[dict[str, int], bool], ...]]:
        """Per instance type: the allocatable groups holding an offering compatible with ``reqs``
        (``reqs.is_compatible(offering.requirements, well_known)``, first compatible per group)."""
        sig = tuple(dict.get(reqs, k) for k in self._offering_keys)
        cached = self._offer.get(sig)
        if cached is None:
            sub = Requirements()
            for k, r in zip(self._offering_keys, sig):
                if r is not None:
                    dict.__setitem__(sub, k, r)
            wk = self.well_known
            # is_compatible once per distinct offering requirement set (a catalogue has a few
            # dozen: zone x capacity type), not once per offering; same answers (pure function)
            ok = [sub.is_compatible(o, wk) for o in self._offer_reqs]
            cached = {}
            for iid, inf in self._info.items():
                allocs = []
                for alloc, neg, _, classes in inf.groups:
                    for c in classes:
                        if ok[c]:
                            allocs.append((alloc, neg))
                            break
                cached[iid] = tuple(allocs)
            self._offer[sig] = cached
        return cached

    def _offering_class(self, reqs: Requirements) -> int:
        """The class number of an offering's requirement set (see :class:`_ITInfo`).

        Not in upstream (no classes there): looked up by the set's identity first. Same result
        because a provider hands the same Requirements object to its offerings alike in capacity
        type and zone (the AWS provider's _offering_requirements) and offerings are read-only once
        offered; the entry holds the set, so its id cannot be reused while the index lives."""
        hit = self._offer_class_by_id.get(id(reqs))
        if hit is not None and hit[0] is reqs:
            return hit[1]
        key = tuple(sorted(dict.items(reqs)))
        c = self._offer_class.get(key)
        if c is None:
            c = self._offer_class[key] = len(self._offer_reqs)
            self._offer_reqs.append(reqs)
        self._offer_class_by_id[id(reqs)] = (reqs, c)
        return c

    # -- memoised set algebra over long-lived id sets ------------------------------------------
    # Not in upstream (a loop over the types); the same answers (pure set operations). The
    # operands are sets that live as long as their owner (a claim's options, a daemon group's
    # members, the answers of incompatible / offering_allocs / capacity and of these methods):
    # Solve asks the same operation of the same two sets on every claim and pod that meet them,
    # and a set operation over a catalogue costs tens of microseconds, a lookup by identity well
    # under one. Each entry holds both operands, so their ids cannot be reused while cached.
    def meet(self, a: frozenset[int], b: frozenset[int]) -> frozenset[int]:
        """``a & b`` (memoised by the identity of both)."""
        return _memo_op(self._meets, a, b, _and)

    def minus(self, a: frozenset[int], b: frozenset[int]) -> frozenset[int]:
        """``a - b`` (memoised by the identity of both)."""
        return _memo_op(self._minus, a, b, _sub)

    def covered(self, a: frozenset[int], b: frozenset[int]) -> bool:
        """``a <= b`` (memoised by the identity of both)."""
        return _memo_op(self._covered, a, b, _le)

    def ids_of(self, instance_types: Sequence[Any]) -> frozenset[int]:
        """``frozenset(map(id, instance_types))``, memoised by the identity of the sequence (a
        template's option list is passed to every NodeClaim made from it). The caller must not
        mutate a sequence it passed (lists of options are replaced, never changed, in Solve)."""
        hit = self._ids_of.get(id(instance_types))
        if hit is not None and hit[0] is instance_types:
            return hit[1]
        if len(self._ids_of) >= _MEMO_LIMIT:
            self._ids_of.clear()
        ids = frozenset(map(id, instance_types))
        self._ids_of[id(instance_types)] = (instance_types, ids)
        return ids

    def capacity(self, offers: dict[int, tuple[tuple[dict[str, int], bool], ...]]) -> _Capacity:
        """The :class:`_Capacity` of an :meth:`offering_allocs` answer (memoised by identity, as
        :meth:`offered`)."""
        hit = self._capacity.get(id(offers))
        if hit is None:
            hit = self._capacity[id(offers)] = _Capacity(offers)
        return hit

    def fitting(
        self, offers: dict[int, tuple[tuple[dict[str, int], bool], ...]], total: dict[str, int]
    ) -> frozenset[int]:
        """ids of the instance types for which ``fits(it, total, reqs)`` holds, i.e. some
        allocatable group with a compatible offering (``offers``, from :meth:`offering_allocs`
        for ``reqs``) has room for ``total``. Memoised per (offers, total): used for claims
        without pods, whose totals (pod requests + daemon overhead) repeat across pods."""
        key = (id(offers), tuple(sorted(total.items())))
        hit = self._fitting.get(key)
        if hit is None:
            if len(self._fitting) >= 4096:
                self._fitting.clear()
            cap = self.capacity(offers)
            hit = self._fitting[key] = cap.candidates.difference(cap.too_small(total))
        return hit


class InstanceTypeFilterError:
    """nodeclaim.go InstanceTypeFilterError; ``str(err)`` renders upstream's message (:488-538)."""

    __slots__ = (
        "requirements_met",
        "fits",
        "has_offering",
        "requirements_and_fits",
        "requirements_and_offering",
        "fits_and_offering",
        "min_values_incompatible_err",
        "requirements",
        "pod_requests",
        "min_daemon_requests",
        "max_daemon_requests",
        "_strings",
    )

    def __init__(self, requirements: Requirements, pod_requests: dict[str, int],
                 strings: dict[Any, str] | None = None) -> None:
        """``strings``: a memo of the message's parts (``InstanceTypeIndex.strings``; see
        :meth:`__str__`), or None to format every part."""
        self.requirements_met = False
        self.fits = False
        self.has_offering = False
        self.requirements_and_fits = False
        self.requirements_and_offering = False
        self.fits_and_offering = False
        self.min_values_incompatible_err: str | None = None
        self.requirements = requirements
        self.pod_requests = pod_requests
        self.min_daemon_requests: dict[str, int] = {}
        self.max_daemon_requests: dict[str, int] = {}
        self._strings = strings

    def track_daemon_overhead(self, dr: dict[str, int]) -> None:
        if not self.max_daemon_requests:
            self.min_daemon_requests = dr
            self.max_daemon_requests = dr
            return
        self.min_daemon_requests = min_resources(self.min_daemon_requests, dr)
        self.max_daemon_requests = max_resources(self.max_daemon_requests, dr)

    def resources_string(self) -> str:
        text = resources_string if self._strings is None else self._resources_text
        if not self.min_daemon_requests:
            return text(self.pod_requests)
        mn = text(merge(self.min_daemon_requests, self.pod_requests))
        mx = text(merge(self.max_daemon_requests, self.pod_requests))
        if mn == mx:
            return mn
        return f"min={mn}, max={mx}"

    def _resources_text(self, rl: dict[str, int]) -> str:
        """:func:`resources_string`, memoised in ``_strings`` by the list's sorted items."""
        memo = self._strings
        assert memo is not None
        key = tuple(sorted(rl.items()))
        hit = memo.get(key)
        if hit is None:
            if len(memo) >= _MEMO_LIMIT:
                memo.clear()
            hit = memo[key] = resources_string(rl)
        return hit

    def _requirements_text(self) -> str:
        """``str(self.requirements)`` (Requirements.__str__: hostname dropped, the requirements'
        texts sorted and joined), each Requirement's text memoised in ``_strings`` by value.

        Not in upstream (Go formats on every Error() call); the same text because a
        Requirement's text is a function of its value. Scheduler.addToNewNodeClaim formats one
        message per template a pod fails, and a Requirement holding a NodePool's instance-type
        names sorts hundreds of values for each."""
        memo = self._strings
        if memo is None:
            return str(self.requirements)
        parts = []
        for r in dict.values(self.requirements):
            if r.key in RESTRICTED_LABELS:
                continue
            text = memo.get(r)
            if text is None:
                if len(memo) >= _MEMO_LIMIT:
                    memo.clear()
                text = memo[r] = str(r)
            parts.append(text)
        parts.sort()
        return ", ".join(parts)

    def __str__(self) -> str:
        tail = f", requirements={self._requirements_text()}, resources={self.resources_string()}"
        if self.min_values_incompatible_err is not None:
            return self.min_values_incompatible_err + tail
        r, f, o = self.requirements_met, self.fits, self.has_offering
        if not r and not f and not o:
            return "no instance type met the scheduling requirements or had enough resources or had a required offering" + tail
        if not r and not f:
            return "no instance type met the scheduling requirements or had enough resources" + tail
        if not r and not o:
            return "no instance type met the scheduling requirements or had a required offering" + tail
        if not f and not o:
            return "no instance type had enough resources or had a required offering" + tail
        if not r:
            return "no instance type met all requirements" + tail
        if not f:
            msg = "no instance type has enough resources" + tail
            if self.pod_requests.get("cpu", 0) >= _ONE_MILLION_CPU:
                msg += " (CPU request >= 1 Million, m vs M typo?)"
            return msg
        if not o:
            return "no instance type has the required offering" + tail
        if self.requirements_and_fits:
            return "no instance type which met the scheduling requirements and had enough resources, had a required offering" + tail
        if self.fits_and_offering:
            return "no instance type which had enough resources and the required offering met the scheduling requirements" + tail
        if self.requirements_and_offering:
            return "no instance type which met the scheduling requirements and the required offering had the required resources" + tail
        return "no instance type met the requirements/resources/offering tuple" + tail

    __repr__ = __str__


def _fits_any(total: dict[str, int], allocs: tuple[tuple[dict[str, int], bool], ...]) -> bool:
    for alloc, neg in allocs:
        if neg:
            continue
        ok = True
        for name, v in total.items():
            if v > alloc.get(name, 0):
                ok = False
                break
        if ok:
            return True
    return False


def filter_instance_types_by_requirements(
    index: InstanceTypeIndex,
    instance_types: Sequence[Any],
    requirements: Requirements,
    pod_host_ports: Sequence[Any],
    pod_key: str,
    pod_requests: dict[str, int],
    daemon_groups: Sequence[DaemonOverheadGroup],
    total_requests: dict[str, int],
    relax_min_values: bool,
    satisfies_min_values: Any,
    memo_fits: bool = False,
    option_ids: frozenset[int] | None = None,
) -> tuple[list[Any], dict[str, int], InstanceTypeFilterError | str | None]:
    """nodeclaim.go filterInstanceTypesByRequirements (:541-618).

    Returns ``(remaining, unsatisfiable_keys, error)``. ``satisfies_min_values(its, reqs)`` is
    ``InstanceTypes._satisfies_min_values`` (the tuple form). Remaining keeps ``instance_types`` order (see module doc).
    ``memo_fits``: serve the per-type ``fits`` from :meth:`InstanceTypeIndex.fitting` (same result;
    worth it when ``total_requests`` recurs, e.g. for a NodeClaim that has no pods yet).
    ``option_ids``: the ids of ``instance_types``, given by a caller that will not read the error
    (see :data:`INSTANCE_TYPES_FILTERED_OUT`): when no option survives, the error is not built.
    The same ``remaining`` results either way.
    """
    need_error = option_ids is None
    if option_ids is None:
        option_ids = frozenset(map(id, instance_types))
    remaining, _, unsat, err = _filter(index, instance_types, requirements, pod_host_ports, pod_key,
                                       pod_requests, daemon_groups, total_requests, relax_min_values,
                                       satisfies_min_values, memo_fits, option_ids, need_error)
    return remaining, unsat, err


def _filter(
    index: InstanceTypeIndex,
    instance_types: Sequence[Any],
    requirements: Requirements,
    pod_host_ports: Sequence[Any],
    pod_key: str,
    pod_requests: dict[str, int],
    daemon_groups: Sequence[DaemonOverheadGroup],
    total_requests: dict[str, int],
    relax_min_values: bool,
    satisfies_min_values: Any,
    memo_fits: bool,
    option_ids: frozenset[int],
    need_error: bool,
) -> tuple[list[Any], frozenset[int], dict[str, int], InstanceTypeFilterError | str | None]:
    """:func:`filter_instance_types_by_requirements`, also returning the ids of ``remaining``;
    ``option_ids`` are the ids of ``instance_types`` (a set that lives as long as the list: the
    set algebra is memoised by identity, see :meth:`InstanceTypeIndex.meet`), ``need_error``
    False returns :data:`INSTANCE_TYPES_FILTERED_OUT` instead of building the error.

    The survivors are computed as sets of type ids, not type by type: the options, minus the
    types whose requirements do not intersect (:meth:`InstanceTypeIndex.incompatible`), minus
    those without a usable group holding a compatible offering, minus those too small for their
    daemon group's total (:meth:`_Capacity.too_small`); ``compatible && fits && hasOffering`` of
    upstream's loop, as set algebra. When every option survives, ``instance_types`` itself is
    returned (a NodeClaim's options then stay the same list object); otherwise the survivors in
    ``instance_types`` order."""
    # per-group totals; groups whose host ports conflict with the pod are skipped
    totals: list[tuple[frozenset[int], dict[str, int]]] = []
    tracked: list[dict[str, int]] = []
    single_total: dict[str, int] | None = None
    for g in daemon_groups:
        if pod_host_ports and g.host_port_usage.conflicts(pod_key, pod_host_ports) is not None:
            continue
        if g.daemon_overhead:
            tracked.append(g.daemon_overhead)
            t = merge(total_requests, g.daemon_overhead)
        else:
            t = total_requests
        if g.ids:
            totals.append((g.ids, t))
    if len(daemon_groups) == 1 and totals:
        single_total = totals[0][1]

    bad = index.incompatible(requirements)
    offers = index.offering_allocs(requirements)
    cap = index.capacity(offers)
    live = index.meet(option_ids, cap.candidates)
    if bad:
        live = index.minus(live, bad)
    survivors: frozenset[int]
    if not live:
        survivors = live
    elif single_total is not None:
        # one daemon group (the common case): it holds every type of the template
        if memo_fits:
            survivors = index.meet(live, index.fitting(offers, single_total))
        else:
            survivors = live.difference(cap.too_small_among(live, single_total))
    else:
        # daemon groups partition the template's types (buildDaemonOverheadGroups); a type in no
        # group left (host-port conflict) does not survive
        found: set[int] = set()
        for ids, t in totals:
            part = index.meet(live, ids)
            if part:
                found.update(part.difference(cap.too_small_among(part, t)))
        survivors = frozenset(found)
    remaining: list[Any]
    if not survivors:
        remaining = []
    elif len(survivors) == len(option_ids) and isinstance(instance_types, list):
        remaining = instance_types
    else:
        # compress/map: the per-type membership test runs in C (this runs on most successful adds)
        remaining = list(compress(instance_types, map(survivors.__contains__, map(id, instance_types))))

    unsat: dict[str, int] = {}
    mv_err: str | None = None
    if remaining and requirements.has_min_values():
        _, unsat_keys, mv_err = satisfies_min_values(remaining, requirements)
        unsat = dict(unsat_keys or {})
        if mv_err is not None:
            if not relax_min_values:
                remaining = []
            else:
                mv_err = None
    if remaining:
        return remaining, survivors, unsat, None
    if not need_error:
        return [], frozenset(), unsat, INSTANCE_TYPES_FILTERED_OUT

    # the error: upstream's flags (any type compatible / fitting / with an offering, and the
    # pairs), computed as set algebra over the options instead of upstream's loop over them.
    # Not in upstream; the same flags because each is an "any type such that" and the groups
    # partition the template's types (each type is judged against its own group's total), so
    # they are answered group by group: ``part`` the options in the group, ``rest`` those
    # compatible, ``offered`` those with a compatible offering, ``fitting`` those fits() accepts
    # (a usable group with a compatible offering has room; :meth:`_Capacity.too_small` is the
    # complement). fits() reports itFits only with hasOffering, so upstream's
    # requirementsAndFits (compatible, fits, no offering) never holds and ``fitting`` are all
    # offered.
    err = InstanceTypeFilterError(requirements, pod_requests, index.strings)
    for t in tracked:
        err.track_daemon_overhead(t)
    for ids, t in totals:
        part = index.meet(option_ids, ids)
        if not part:
            continue
        rest = index.minus(part, bad)
        offered = index.meet(part, cap.offered)
        usable = index.meet(part, cap.candidates)
        fitting = usable.difference(cap.too_small_among(usable, t)) if usable else usable
        err.requirements_met = err.requirements_met or bool(rest)
        err.fits = err.fits or bool(fitting)
        err.has_offering = err.has_offering or bool(offered)
        if not err.requirements_and_offering and rest and offered:
            err.requirements_and_offering = not index.meet(rest, offered).issubset(fitting)
        err.fits_and_offering = err.fits_and_offering or not fitting.isdisjoint(bad)
    # upstream evaluated minValues above on the non-empty list (SatisfiesMinValues of an empty
    # list reports no error); a relaxed minValues error is dropped.
    err.min_values_incompatible_err = mv_err
    return [], frozenset(), unsat, err


def apply_topology_requirements(
    reqs: Requirements, topo_reqs: Requirements, allow_undefined: frozenset[str]
) -> tuple[Requirements, str | None]:
    """``reqs.Compatible(topoReqs)`` then ``reqs.Add(topoReqs...)`` (nodeclaim.go:199-206,
    existingnode.go:140-155), exploiting that Topology.add_requirements returns a copy of ``reqs``
    narrowed by intersection: unchanged keys are trivially compatible, so only changed keys are
    checked (:func:`topology_changes_error`), and the result of the Add is the topology
    requirements themselves."""
    changes = {k: r for k, r in dict.items(topo_reqs) if dict.get(reqs, k) is not r}
    if not changes:
        return reqs, None
    e = topology_changes_error(reqs, changes, allow_undefined)
    if e is not None:
        return reqs, e
    return topo_reqs, None


def topology_changes_error(
    reqs: Requirements, changes: dict[str, Requirement], allow_undefined: frozenset[str]
) -> str | None:
    """``reqs.Compatible(topoReqs)`` (nodeclaim.go:199-202) where ``topoReqs`` is ``reqs`` with
    the keys of ``changes`` set (Topology.narrow): unchanged keys are trivially compatible.

    The changed keys are first checked one by one without building a Requirements
    (``Compatible`` is a per-key conjunction: a key ``reqs`` lacks must be allowed undefined or
    NotIn/DoesNotExist, a key both define must intersect or be NotIn/DoesNotExist on both
    sides); only a failure builds ``Requirements.compatible``'s error message (which reports
    the first undefined key in sorted order, then the failing keys sorted: the order of
    ``changes`` does not matter)."""
    for k, r in changes.items():
        old = dict.get(reqs, k)
        if old is None:
            if k in allow_undefined or _nin_or_dne(r):
                continue
        elif old.has_intersection(r) or (_nin_or_dne(r) and _nin_or_dne(old)):
            continue
        break
    else:
        return None
    changed = Requirements()
    dict.update(changed, changes)
    return reqs.compatible(changed, allow_undefined)


class FreshClaimFailures:
    """The instance-type filter failures of fresh NodeClaims in one Solve, as error texts.

    Not in upstream (addToNewNodeClaim builds a NodeClaim per template and filters the template's
    instance types for every pod it tries, formatting the error of each template that fails).
    Same result because a fresh claim's filter outcome, past Topology.AddRequirements and the
    compatibility test (which still run on every try), is a pure function of the key: the template
    (its requirements, taints and daemon overhead groups), its instance-type options (the set of
    their ids, by identity: ``InstanceTypeIndex.ids_of`` hands out one set per options list, and
    the entry holds it; the index holds the types, so the ids stand for the same types), the pod's requirement set (``PodData.req_signature``: its
    Requirement values), its requests, the keys Topology.narrow changed (their Requirement
    values) and relaxMinValues. The claim's requirements are the template's, ``hostname In [h]``
    and the pod's; a claim has no pods, no requests and no host-port usage but its daemon groups'.
    The hostname ``h`` is the only part that differs between two tries, and it cannot change the
    outcome when no instance type or offering defines the hostname label (compatible() and the
    offering test look only at keys the types define), the template and the pod do not constrain
    it and the topology did not narrow it: then ``h`` meets no other requirement and the error
    text drops it (Requirements.String omits restricted labels). Only tries with no host ports,
    no volume topology alternatives and no reservation manager are memoised (those inputs are not
    in the key); success is never memoised (it records state). The memo lives for one Scheduler.
    """

    __slots__ = ("_entries", "_merged")

    #: the hostname of :meth:`answer`'s stand-in claim requirements (never a claim's: those are
    #: ``hostname-placeholder-NNNN``; and never read, see :meth:`answer`)
    STAND_IN_HOSTNAME = "fresh-claim-stand-in"

    def __init__(self) -> None:
        self._entries: dict[tuple[Any, ...], tuple[Any, frozenset[int], str]] = {}
        #: (id(template), pod requirement set) -> (template, the stand-in merged requirements, or
        #: None when the pod's requirements are incompatible with the template's)
        self._merged: dict[tuple[int, Any], tuple[Any, Requirements | None]] = {}

    def answer(self, template: Any, instance_types: Sequence[Any], pod: Any, pod_data: Any, topology: Any,
               index: InstanceTypeIndex, relax_min_values: bool) -> str | None:
        """The error text of a fresh claim's try, when memoised, without building the claim.

        Runs what a fresh claim's CanAdd runs before the filter -- the taint check, the merge with
        the pod's requirements, Topology.AddRequirements and the compatibility test -- on stand-in
        claim requirements (the template's, ``hostname In [STAND_IN_HOSTNAME]``, the pod's: the
        same steps as NodeClaim() and CanAdd), then looks the key of :meth:`key` up. Same result
        as the claim's try because, besides the conditions of :meth:`key`, no group the pod's
        AddRequirements evaluates has the hostname key (``Topology.evaluated_keys``; AddRequirements
        reads the node requirements only at the keys of the groups it evaluates, and evaluates
        every owned group and the zero-filter inverse groups selecting the pod), so it answers the
        same for the stand-in and for the claim; a memoised failure passed those steps (they run
        before the filter) with the same inputs. None when anything differs (no key, a step fails
        or no entry): the caller builds the claim and tries it."""
        if not self._memoisable(template, index, pod_data):
            return None
        keys = topology.evaluated_keys(pod)
        if keys is None or LABEL_HOSTNAME in keys:
            return None
        if pod_data.tolerates(template) is not None:
            return None
        mkey = (id(template), pod_data.req_signature)
        hit = self._merged.get(mkey)
        if hit is None or hit[0] is not template:
            wk = index.well_known
            reqs = template.requirements.copy()
            reqs.add(Requirement(LABEL_HOSTNAME, OP_IN, (self.STAND_IN_HOSTNAME,)))
            merged: Requirements | None = reqs
            if pod_data.requirements:
                if reqs.compatible(pod_data.requirements, wk) is not None:
                    merged = None
                else:
                    merged = reqs.copy()
                    merged.add(*pod_data.requirements.values())
            hit = self._merged[mkey] = (template, merged)
        merged = hit[1]
        if merged is None:
            return None
        wk = index.well_known
        changes, e = topology.narrow(pod, template.taints, pod_data.strict_requirements, merged, wk)
        if e is not None or (changes and LABEL_HOSTNAME in changes):
            return None
        if changes and topology_changes_error(merged, changes, wk) is not None:
            return None
        options = index.ids_of(instance_types)
        entry = self._entries.get(self._key(template, options, pod_data, changes, relax_min_values))
        if entry is None or entry[0] is not template or entry[1] is not options:
            return None
        return entry[2]

    @staticmethod
    def _memoisable(template: Any, index: InstanceTypeIndex, pod_data: Any) -> bool:
        """Whether a try of ``pod_data`` on a fresh claim of ``template`` may be memoised: no host
        ports, no volume topology alternatives, and nothing (the pod, the template, a type or an
        offering) that defines or constrains the hostname label."""
        return not (pod_data.host_ports or pod_data.volume_requirements or LABEL_HOSTNAME in pod_data.requirements
                    or LABEL_HOSTNAME in template.requirements or index.defines(LABEL_HOSTNAME))

    @staticmethod
    def _key(template: Any, options: frozenset[int], pod_data: Any, changes: dict[str, Requirement] | None,
             relax_min_values: bool) -> tuple[Any, ...]:
        return (id(template), id(options), pod_data.req_signature, tuple(changes.items()) if changes else (),
                pod_data.requests_key, relax_min_values)

    @classmethod
    def key(cls, claim: NodeClaim, pod_data: Any, changes: dict[str, Requirement] | None,
            relax_min_values: bool) -> tuple[Any, ...] | None:
        """The memo key of this try, or None when the try is not memoised."""
        if claim.pods or claim.reservation_manager is not None or (changes and LABEL_HOSTNAME in changes) \
                or not cls._memoisable(claim.template, claim._index, pod_data):
            return None
        return cls._key(claim.template, claim._options(), pod_data, changes, relax_min_values)

    def get(self, key: tuple[Any, ...], claim: NodeClaim) -> str | None:
        hit = self._entries.get(key)
        if hit is None or hit[0] is not claim.template or hit[1] is not claim._options():
            return None
        return hit[2]

    def put(self, key: tuple[Any, ...], claim: NodeClaim, err: Any) -> str:
        text = str(err)
        self._entries[key] = (claim.template, claim._options(), text)
        return text


class NodeClaim:
    """An in-flight NodeClaim (nodeclaim.go NodeClaim). Built by the Scheduler from a template."""

    __slots__ = (
        "template",
        "nodepool_name",
        "requirements",
        "instance_type_options",
        "requests",
        "pods",
        "hostname",
        "annotations",
        "labels",
        "taints",
        "topology",
        "daemon_groups",
        "_index",
        "_satisfies_min_values",
        "well_known",
        "seq",
        "_merge_cache",
        "reservation_manager",
        "reserved_offering_mode",
        "reserved_offerings",
        "_to_reserve",
        "_option_ids",
        "_pending_ids",
        "filtered_requirements",
        "fresh_failures",
    )

    def __init__(
        self,
        template: Any,
        topology: Any,
        daemon_groups: Sequence[DaemonOverheadGroup],
        instance_types: Sequence[Any],
        hostname: str,
        index: InstanceTypeIndex,
        satisfies_min_values: Any,
    ) -> None:
        self.template = template
        self.nodepool_name: str = template.nodepool_name
        reqs = template.requirements.copy()
        reqs.add(Requirement(LABEL_HOSTNAME, OP_IN, (hostname,)))
        self.requirements: Requirements = reqs
        self.instance_type_options: list[Any] = list(instance_types)
        self.requests: dict[str, int] = {}
        self.pods: list[Any] = []
        self.hostname = hostname
        self.annotations: dict[str, str] = dict(template.annotations)
        self.labels: dict[str, str] = dict(template.labels)
        self.taints: list[Any] = template.taints
        self.topology = topology
        # own copy of each group's host-port usage (NewNodeClaim)
        self.daemon_groups = [
            DaemonOverheadGroup(g.instance_types, g.daemon_overhead, g.host_port_usage.copy(), g.ids)
            for g in daemon_groups
        ]
        self._index = index
        self._satisfies_min_values = satisfies_min_values
        self.well_known = index.well_known
        self.seq = 0
        #: the merged requirements of the last can_add that ended with no option compatible
        #: (INSTANCE_TYPES_FILTERED_OUT from the covered test; Scheduler._add reads and clears it),
        #: as the requirements before topology and the keys Topology.narrow changed (the
        #: requirement set with them applied is never built on that path)
        self.filtered_requirements: tuple[Requirements, dict[str, Requirement] | None] | None = None
        #: pod requirements (by value) -> (claim reqs ∩ pod reqs, error); reset when requirements change
        self._merge_cache: dict[Any, tuple[Requirements, str | None]] = {}
        #: reserved capacity (set by the scheduler; see module doc and reservationmanager)
        self.reservation_manager: Any = None
        self.reserved_offering_mode: Any = None
        self.reserved_offerings: list[Any] = []
        self._to_reserve: list[Any] = []
        #: (instance_type_options, their ids): see _options (a template's list has its ids memoised)
        self._option_ids: tuple[list[Any], frozenset[int]] | None = (
            self.instance_type_options, index.ids_of(instance_types))
        #: (the list the last can_add returned, its ids): adopted by add when it takes that list
        self._pending_ids: tuple[list[Any], frozenset[int]] | None = None
        #: the Scheduler's memo of fresh claims' filter failures (see :class:`FreshClaimFailures`);
        #: set by Scheduler.addToNewNodeClaim on the claims it builds, None elsewhere
        self.fresh_failures: FreshClaimFailures | None = None

    def __repr__(self) -> str:
        return f"NodeClaim({self.nodepool_name!r}, {self.hostname!r}, pods={len(self.pods)})"

    def release_solve_state(self) -> None:
        """Let go of what only Solve reads once the claim is launched -- the pass's topology, the
        instance-type index, the merge memo, the reservation manager, the option-id caches. The
        run keeps the claim for explain output only (``LaunchRecord.scheduling``: pods, hostname,
        requirements, template, options, daemon groups, well_known); holding the rest kept every
        pass's Topology and memos alive to the end of the run (issue #13: a third of the objects
        left at the end of a 2,000-pod run). ``can_add`` / ``add`` must not be called after."""
        self.topology = None
        del self._index
        self._satisfies_min_values = None
        self._merge_cache = {}
        self.reservation_manager = None
        self._option_ids = None
        self._pending_ids = None
        self.fresh_failures = None

    def can_add(
        self, pod: Any, pod_data: Any, relax_min_values: bool, need_error: bool = True
    ) -> tuple[Requirements | None, list[Any] | None, str | InstanceTypeFilterError | None]:
        """nodeclaim.go CanAdd + tryVolumeAlternative (:124-242): taints, requirements, topology
        (last), then instance-type filtering. Returns (requirements, instance types, error).
        ``need_error=False``: the caller only tests the error for None, so a failed instance-type
        filter returns :data:`INSTANCE_TYPES_FILTERED_OUT` instead of building upstream's flags."""
        self.filtered_requirements = None
        err = pod_data.tolerates(self.template)
        if err is not None:
            return None, None, err
        wk = self.well_known
        reqs = self.requirements
        if pod_data.requirements:
            # memoised per distinct pod requirement set (pure function of both inputs)
            sig = pod_data.req_signature
            hit = self._merge_cache.get(sig)
            if hit is None:
                e = reqs.compatible(pod_data.requirements, wk)
                if e is not None:
                    hit = (reqs, "incompatible requirements, " + e)
                else:
                    merged = reqs.copy()
                    merged.add(*pod_data.requirements.values())
                    hit = (merged, None)
                self._merge_cache[sig] = hit
            if hit[1] is not None:
                return None, None, hit[1]
            reqs = hit[0]
        alternatives = pod_data.volume_requirements
        if not alternatives:
            return self._try_volume_alternative(pod, pod_data, reqs, relax_min_values, need_error)
        # CanAdd: try each volume topology alternative in order; the last error wins
        last: Any = None
        for vol in alternatives:
            if vol is None:
                merged = reqs
            else:
                e = reqs.compatible(vol, wk)
                if e is not None:
                    last = "incompatible volume requirements, " + e
                    continue
                merged = reqs.copy()
                merged.add(*vol.values())
            out = self._try_volume_alternative(pod, pod_data, merged, relax_min_values, need_error)
            if out[2] is None:
                return out
            last = out[2]
        return None, None, last

    def _try_volume_alternative(
        self, pod: Any, pod_data: Any, reqs: Requirements, relax_min_values: bool, need_error: bool = True
    ) -> tuple[Requirements | None, list[Any] | None, str | InstanceTypeFilterError | None]:
        """nodeclaim.go tryVolumeAlternative: topology (last), then instance-type filtering and
        offerings to reserve, on the claim's requirements merged with one volume alternative."""
        wk = self.well_known
        # Topology.AddRequirements + Compatible + Add, as the keys they change (same result:
        # see Topology.narrow and topology_changes_error); the new requirement set is only
        # built once the try gets past the compatibility test below.
        changes, e = self.topology.narrow(pod, self.taints, pod_data.strict_requirements, reqs, wk)
        if e is not None:
            return None, None, e
        if changes:
            e = topology_changes_error(reqs, changes, wk)
            if e is not None:
                return None, None, e
        index = self._index
        options = self._options()
        fresh = self.fresh_failures
        fkey: tuple[Any, ...] | None = None
        if fresh is not None and need_error:
            fkey = fresh.key(self, pod_data, changes, relax_min_values)
            if fkey is not None:
                hit = fresh.get(fkey, self)
                if hit is not None:
                    self._pending_ids = None
                    return None, None, hit
        if not need_error and index.covered(options, index.incompatible_with(reqs, changes)):
            # Not in upstream (filterInstanceTypesByRequirements checks every type); the same
            # result because compatible() is one of the three conditions a remaining type must
            # meet, so when no option's requirements intersect ``reqs`` none remains -- and the
            # caller discards the error. The set test skips the requests merge and the offering
            # lookups of the filter (most in-flight tries on a real catalogue end here).
            self._pending_ids = None
            self.filtered_requirements = (reqs, changes)  # read (and cleared) by Scheduler._add
            return None, None, INSTANCE_TYPES_FILTERED_OUT
        if changes:
            reqs = reqs.copy()
            dict.update(reqs, changes)
        requests = merge(self.requests, pod_data.requests)
        remaining, remaining_ids, unsat, ferr = _filter(
            index,
            self.instance_type_options,
            reqs,
            pod_data.host_ports,
            pod_data.key,
            pod_data.requests,
            self.daemon_groups,
            requests,
            relax_min_values,
            self._satisfies_min_values,
            not self.pods,
            options,
            need_error,
        )
        self._pending_ids = (remaining, remaining_ids)
        if relax_min_values and unsat:
            reqs = reqs.copy()  # never mutate shared / memoised requirement sets
            for key, mv in unsat.items():
                r = reqs.get(key)
                dict.__setitem__(reqs, key, Requirement._make(r.key, r.complement, r.values, r.gte, r.lte, mv))
        if ferr is not None:
            if fkey is not None:
                assert fresh is not None
                return None, None, fresh.put(fkey, self, ferr)
            return None, None, ferr
        if self.reservation_manager is not None:
            from karpy.provisioning.reservationmanager import offerings_to_reserve

            ofs, rerr = offerings_to_reserve(self, remaining, reqs, wk)
            if rerr is not None:
                return None, None, rerr
            self._to_reserve = ofs
        return reqs, remaining, None

    def options_within(self, ids: frozenset[int]) -> bool:
        """True when every instance-type option's id is in ``ids`` (Scheduler._add's skip)."""
        return self._index.covered(self._options(), ids)

    def _options(self) -> frozenset[int]:
        """ids of ``instance_type_options`` (recomputed whenever that list object is replaced)."""
        cached = self._option_ids
        options = self.instance_type_options
        if cached is None or cached[0] is not options:
            cached = self._option_ids = (options, frozenset(map(id, options)))
        return cached[1]

    def add(self, pod: Any, pod_data: Any, requirements: Requirements, instance_types: list[Any]) -> None:
        """nodeclaim.go Add (:247-282)."""
        self.pods.append(pod)
        self.instance_type_options = instance_types
        pending = self._pending_ids
        if pending is not None and pending[0] is instance_types:
            self._option_ids = pending
        self._pending_ids = None
        self.requests = merge(self.requests, pod_data.requests)
        self.requirements = requirements
        self._merge_cache = {}
        self.topology.register(LABEL_HOSTNAME, self.hostname)
        self.topology.record(pod, self.taints, requirements, self.well_known)
        if self.reservation_manager is not None:
            from karpy.provisioning.reservationmanager import release_reserved_offerings

            self.reservation_manager.reserve(self.hostname, self._to_reserve)
            release_reserved_offerings(self, self.reserved_offerings, self._to_reserve)
            self.reserved_offerings, self._to_reserve = self._to_reserve, []
        if pod_data.host_ports:
            for g in self.daemon_groups:
                g.host_port_usage.add(pod_data.key, pod_data.host_ports)

    def add_daemon_requests(self) -> None:
        """nodeclaim.go addDaemonRequests: add the element-wise minimum overhead of the groups that
        still contain a remaining instance type."""
        if not any(g.daemon_overhead for g in self.daemon_groups):
            return  # every overhead is empty: the minimum is empty whichever groups remain
        remaining = {id(it) for it in self.instance_type_options}
        min_overhead: dict[str, int] = {}
        for g in self.daemon_groups:
            if not any(i in remaining for i in g.ids):
                continue
            if not min_overhead:
                min_overhead = g.daemon_overhead
            else:
                min_overhead = min_resources(min_overhead, g.daemon_overhead)
        if min_overhead:
            self.requests = merge(self.requests, min_overhead)

    def finalize_scheduling(self) -> None:
        """nodeclaim.go FinalizeScheduling: drop the hostname placeholder, add min daemon overhead."""
        if LABEL_HOSTNAME in self.requirements:
            self.requirements = self.requirements.copy()
            del self.requirements[LABEL_HOSTNAME]
        if self.reserved_offerings:
            from karpy.provisioning.reservationmanager import finalize_reservations

            finalize_reservations(self)
        self.add_daemon_requests()

    def to_nodeclaim(self, max_instance_types: int) -> Any:
        """nodeclaimtemplate.go ToNodeClaim for this claim (see nodeclaimtemplate.to_nodeclaim)."""
        from karpy.provisioning.nodeclaimtemplate import to_nodeclaim

        return to_nodeclaim(self, max_instance_types)
