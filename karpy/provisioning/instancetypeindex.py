"""Answers nodeclaim.go's per-type tests (compatible, fits, hasOffering) as memoised set algebra over
instance-type ids -- the same survivors and error flags as upstream's loop, pinned by
tests/provisioning/test_instancetypeindex_equivalence.py (why each memo is exact:
docs/internals/upstream-mirrors.md#instancetypeindex)."""

from __future__ import annotations

import operator
from bisect import bisect_left
from itertools import compress, islice, repeat
from typing import Any, Callable, ClassVar, Sequence, TypeVar

from karpy.provisioning.requirementchanges import nin_or_dne as _nin_or_dne
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

__all__ = ["InstanceTypeIndex", "error_flags", "surviving_ids"]

#: bound on the memo of InstanceTypeIndex.incompatible (cleared when reached)
_MEMO_LIMIT = 1 << 14
#: bound on each memo of InstanceTypeIndex.meet / minus / covered (cleared when reached)
_SET_MEMO_LIMIT = 1 << 13
_NO_IDS: frozenset[int] = frozenset()

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


class _Capacity:
    """Which types of one :meth:`InstanceTypeIndex.offering_allocs` answer can hold a total
    (nodeclaim.go ``fits``), by ``bisect`` over per-resource rankings (docs/internals/upstream-mirrors.md#capacity)."""

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

    def too_small_among(self, ids: frozenset[int], total: dict[str, int],
                        floor: dict[str, int] | None = None) -> set[int]:
        """``too_small(total) & ids``, walking per resource the shorter of the prefix and ``ids``.
        ``floor``: a total every single-group type of ``ids`` is known to hold (a claim's options
        after its last Add), so per resource only the types ranked from ``floor``'s value on can
        be too small: the prefix walk starts there."""
        out: set[int] = set()
        if not ids:
            return out
        single = self._single
        pool: list[int] | None = None
        if single:
            columns = self._column
            n = len(ids)
            for name, v in total.items():
                f = floor.get(name) if floor is not None else None
                if f is not None and f >= v:
                    continue  # the ids hold f, so v: none is too small (a resource the new pod does not ask for)
                hit = self._ranking(name)
                k = bisect_left(hit[0], v)  # the first k types have less than v of this resource
                lo = 0
                if f is not None and k:  # the ids hold f: none ranks before the first with f or more
                    lo = bisect_left(hit[0], f, 0, k)
                if k - lo <= n:  # (the prefix is the shorter walk)
                    if k > lo:
                        out.update(filter(ids.__contains__, islice(hit[1], lo, k)))
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


# (an answer equal to an operand is that operand's object: the memo then holds no new set)
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
    """Per-Scheduler caches making filter_instance_types_by_requirements cheap."""

    #: serve offering_allocs and incompatible by the identity of the requirement set before its
    #: value (the same answers, pinned by tests/provisioning/test_fitfloor_equivalence.py)
    reqs_by_identity: ClassVar[bool] = True

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
        #: the last requirement set asked of offering_allocs / incompatible, with the answer: a
        #: claim's requirement set is asked again for every pod until an Add changes it
        #: (requirement sets are never mutated once built, as incompatible_with assumes)
        self._last_offer: tuple[Requirements, dict[int, tuple[tuple[dict[str, int], bool], ...]]] | None = None
        self._last_bad: tuple[Requirements, frozenset[int]] | None = None
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

    #: False: the identity-keyed memos are kept from one Scheduler to the next (bounded only by
    #: their limits; the plain path tests/provisioning/test_instancetypeindex_passes.py compares against)
    forget_between_schedulers: ClassVar[bool] = True

    def begin_scheduler(self) -> None:
        """A new Scheduler takes the index (the SchedulerCache's): forget the memos keyed by the
        identity of one Solve's objects -- its claims' requirement sets and option lists, their id
        sets --, which a later Solve never asks again; each entry holds its key alive, so a long run
        would otherwise keep up to ``_MEMO_LIMIT`` of them (the answers are the same either way)."""
        if not self.forget_between_schedulers:
            return
        for memo in (self._bad_by_id, self._with, self._ids_of, self._meets, self._minus, self._covered):
            memo.clear()
        self._last_offer = None
        self._last_bad = None

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
            self._last_offer = None
            self._last_bad = None
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
        """ids of the types failing ``it.requirements.intersects(reqs)`` (nodeclaim.go
        ``compatible``): the union of :meth:`_bad_for` over the keys, memoised by identity."""
        if self.reqs_by_identity:  # (a claim's requirement set is asked again for every pod)
            last = self._last_bad
            if last is not None and last[0] is reqs:
                return last[1]
            out = self._incompatible_items(dict.items(reqs))
            self._last_bad = (reqs, out)
            return out
        return self._incompatible_items(dict.items(reqs))

    def incompatible_with(self, reqs: Requirements, changes: dict[str, Requirement] | None) -> frozenset[int]:
        """:meth:`incompatible` of ``reqs`` with the keys of ``changes`` set (Topology.narrow's
        answer), without building that Requirements; memoised by identity."""
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
        if self.reqs_by_identity:
            last = self._last_offer
            if last is not None and last[0] is reqs:
                return last[1]
        sig = tuple([dict.get(reqs, k) for k in self._offering_keys])
        cached = self._offer.get(sig)
        if cached is None:
            sub = Requirements()
            for k, r in zip(self._offering_keys, sig):
                if r is not None:
                    dict.__setitem__(sub, k, r)
            wk = self.well_known
            # is_compatible once per offering requirement class, not once per offering
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
        self._last_offer = (reqs, cached)
        return cached

    def _offering_class(self, reqs: Requirements) -> int:
        """The class number of an offering's requirement set (see :class:`_ITInfo`), looked up
        by the set's identity first."""
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

    # -- set algebra over long-lived id sets, memoised by the identity of both operands ---------
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



def surviving_ids(index: InstanceTypeIndex, option_ids: frozenset[int], requirements: Requirements,
                  totals: list[tuple[frozenset[int], dict[str, int]]], single_total: dict[str, int] | None,
                  memo_fits: bool, fit_basis: tuple[_Capacity, dict[str, int]] | None = None,
                  ) -> tuple[frozenset[int], frozenset[int], _Capacity]:
    """ids of the options meeting ``compatible && fits && hasOffering`` (nodeclaim.go
    filterInstanceTypesByRequirements), each judged against its daemon group's total; also the
    incompatible ids and the capacity (for :func:`error_flags`). ``fit_basis``: ``(capacity,
    total)`` such that every option fits ``total`` under that capacity (a claim's options after
    its last Add): with the same capacity, ``too_small_among`` takes ``total`` as its floor."""
    bad = index.incompatible(requirements)
    offers = index.offering_allocs(requirements)
    cap = index.capacity(offers)
    live = index.meet(option_ids, cap.candidates)
    if bad:
        live = index.minus(live, bad)
    if not live:
        return live, bad, cap
    if single_total is not None:  # one daemon group: it holds every type of the template
        if memo_fits:
            return index.meet(live, index.fitting(offers, single_total)), bad, cap
        floor = fit_basis[1] if fit_basis is not None and fit_basis[0] is cap else None
        small = cap.too_small_among(live, single_total, floor)
        return (live.difference(small) if small else live), bad, cap
    # the groups partition the template's types; a type in no group left (host ports) fails
    found: set[int] = set()
    for ids, t in totals:
        part = index.meet(live, ids)
        if part:
            found.update(part.difference(cap.too_small_among(part, t)))
    return frozenset(found), bad, cap


def error_flags(index: InstanceTypeIndex, option_ids: frozenset[int],
                totals: list[tuple[frozenset[int], dict[str, int]]], bad: frozenset[int],
                cap: _Capacity) -> tuple[bool, bool, bool, bool, bool]:
    """InstanceTypeFilterError's ``(requirements_met, fits, has_offering,
    requirements_and_offering, fits_and_offering)`` (nodeclaim.go's loop over the options), group
    by group as set algebra (docs/internals/upstream-mirrors.md#error-flags)."""
    met = fit = has_offering = req_and_offering = fits_and_offering = False
    for ids, t in totals:
        part = index.meet(option_ids, ids)
        if not part:
            continue
        rest = index.minus(part, bad)
        offered = index.meet(part, cap.offered)
        usable = index.meet(part, cap.candidates)
        fitting = usable.difference(cap.too_small_among(usable, t)) if usable else usable
        met = met or bool(rest)
        fit = fit or bool(fitting)
        has_offering = has_offering or bool(offered)
        if not req_and_offering and rest and offered:
            req_and_offering = not index.meet(rest, offered).issubset(fitting)
        fits_and_offering = fits_and_offering or not fitting.isdisjoint(bad)
    return met, fit, has_offering, req_and_offering, fits_and_offering
