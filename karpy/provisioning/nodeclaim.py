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
from bisect import bisect_left
from itertools import compress
from dataclasses import dataclass, field
from typing import Any, Sequence

from karpy.scheduling.hostports import HostPortUsage, get_host_ports
from karpy.scheduling.labels import LABEL_HOSTNAME, OP_IN
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
]

_ONE_MILLION_CPU = 1_000_000 * 1_000_000_000  # "1M" cpu in nano-units
#: bound on the memo of InstanceTypeIndex.incompatible (cleared when reached)
_MEMO_LIMIT = 1 << 14

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
    """Precomputed per-instance-type data (allocatable groups of available offerings)."""

    __slots__ = ("it", "reqs", "groups")

    def __init__(self, it: Any) -> None:
        self.it = it
        self.reqs = it.requirements
        groups: list[tuple[dict[str, int], bool, list[Any]]] = []
        for g in it.allocatable_groups():  # types.go AllocatableOfferingsList (available offerings)
            alloc = g.allocatable
            groups.append((alloc, any(v < 0 for v in alloc.values()), list(g.offerings)))
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

    __slots__ = ("candidates", "_single", "_multi", "_order")

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
        self._single = single
        self._multi = multi
        #: resource name -> (allocatable values ascending, type ids in the same order)
        self._order: dict[str, tuple[list[int], list[int]]] = {}

    def too_small(self, total: dict[str, int]) -> set[int]:
        """ids of the candidates that cannot hold ``total`` in any usable group."""
        out: set[int] = set()
        order = self._order
        for name, v in total.items():
            hit = order.get(name)
            if hit is None:
                ranked = sorted((alloc.get(name, 0), iid) for iid, alloc in self._single.items())
                hit = order[name] = ([a for a, _ in ranked], [iid for _, iid in ranked])
            k = bisect_left(hit[0], v)  # the first k types have less than v of this resource
            if k:
                out.update(hit[1][:k])
        for iid, allocs in self._multi.items():
            if not _fits_any(total, allocs):
                out.add(iid)
        return out


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
        self._incompatible: dict[tuple[Requirement, ...], frozenset[int]] = {}
        self._interned: dict[frozenset[int], frozenset[int]] = {}
        self._capacity: dict[int, _Capacity] = {}

    def register(self, instance_types: Sequence[Any]) -> None:
        new = False
        for it in instance_types:
            if id(it) in self._info:
                continue
            new = True
            info = _ITInfo(it)
            self._info[id(it)] = info
            self._it_keys.update(info.reqs.keys())
            for _, _, offs in info.groups:
                for o in offs:
                    for k in o.requirements.keys():
                        if k not in self._offering_key_set:
                            self._offering_key_set.add(k)
                            self._offering_keys.append(k)
        if new:
            self._bad.clear()
            self._offer.clear()
            self._fitting.clear()
            self._incompatible.clear()
            self._interned.clear()
            self._capacity.clear()

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
            self._bad[req] = bad
        return bad

    def incompatible(self, reqs: Requirements) -> frozenset[int] | set[int]:
        """ids of instance types failing ``it.requirements.intersects(reqs)``.

        Memoised per requirement set (the tuple of its Requirement values, which carry their
        keys): a pure function of ``reqs`` and the registered types, and Solve asks it again for
        the same claim/pod/topology combination on every in-flight claim it tries."""
        sig = tuple(dict.values(reqs))
        hit = self._incompatible.get(sig)
        if hit is None:
            if len(self._incompatible) >= _MEMO_LIMIT:
                self._incompatible.clear()
                self._interned.clear()
            hit = frozenset(self._incompatible_uncached(reqs))
            # few distinct answers for many signatures: keep one copy of each set
            hit = self._incompatible[sig] = self._interned.setdefault(hit, hit)
        return hit

    def _incompatible_uncached(self, reqs: Requirements) -> frozenset[int] | set[int]:
        acc: set[int] | frozenset[int] = frozenset()
        first = True
        it_keys = self._it_keys
        for key, req in reqs.items():
            if key not in it_keys:
                continue
            b = self._bad_for(req)
            if not b:
                continue
            if first:
                acc = b
                first = False
            else:
                acc = acc | b
        return acc

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
            cached = {}
            for iid, inf in self._info.items():
                allocs = []
                for alloc, neg, offs in inf.groups:
                    for o in offs:
                        if sub.is_compatible(o.requirements, wk):
                            allocs.append((alloc, neg))
                            break
                cached[iid] = tuple(allocs)
            self._offer[sig] = cached
        return cached

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
    )

    def __init__(self, requirements: Requirements, pod_requests: dict[str, int]) -> None:
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

    def track_daemon_overhead(self, dr: dict[str, int]) -> None:
        if not self.max_daemon_requests:
            self.min_daemon_requests = dr
            self.max_daemon_requests = dr
            return
        self.min_daemon_requests = min_resources(self.min_daemon_requests, dr)
        self.max_daemon_requests = max_resources(self.max_daemon_requests, dr)

    def resources_string(self) -> str:
        if not self.min_daemon_requests:
            return resources_string(self.pod_requests)
        mn = resources_string(merge(self.min_daemon_requests, self.pod_requests))
        mx = resources_string(merge(self.max_daemon_requests, self.pod_requests))
        if mn == mx:
            return mn
        return f"min={mn}, max={mx}"

    def __str__(self) -> str:
        tail = f", requirements={self.requirements}, resources={self.resources_string()}"
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


def _group_totals(totals: Sequence[tuple[frozenset[int], dict[str, int]]]) -> dict[int, dict[str, int]]:
    out: dict[int, dict[str, int]] = {}
    for ids, t in totals:
        for iid in ids:
            out[iid] = t
    return out


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
    remaining, _, unsat, err = _filter(index, instance_types, requirements, pod_host_ports, pod_key,
                                       pod_requests, daemon_groups, total_requests, relax_min_values,
                                       satisfies_min_values, memo_fits, option_ids)
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
    option_ids: frozenset[int] | None,
) -> tuple[list[Any], frozenset[int], dict[str, int], InstanceTypeFilterError | str | None]:
    """:func:`filter_instance_types_by_requirements`, also returning the ids of ``remaining``.

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
    fast = option_ids is not None
    if option_ids is None:
        option_ids = frozenset(map(id, instance_types))
    live = option_ids.intersection(cap.candidates)
    if bad:
        live = live.difference(bad)
    survivors: frozenset[int]
    if not live:
        survivors = live
    elif single_total is not None:
        # one daemon group (the common case): it holds every type of the template
        if memo_fits:
            survivors = live.intersection(index.fitting(offers, single_total))
        else:
            survivors = live.difference(cap.too_small(single_total))
    else:
        # daemon groups partition the template's types (buildDaemonOverheadGroups); a type in no
        # group left (host-port conflict) does not survive
        found: set[int] = set()
        for ids, t in totals:
            part = live.intersection(ids)
            if part:
                found.update(part.difference(cap.too_small(t)))
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
    if fast:
        return [], frozenset(), unsat, INSTANCE_TYPES_FILTERED_OUT

    # slow path: compute upstream's flags for the error message
    group_total = _group_totals(totals)
    err = InstanceTypeFilterError(requirements, pod_requests)
    for t in tracked:
        err.track_daemon_overhead(t)
    for it in instance_types:
        iid = id(it)
        if iid not in group_total:
            continue
        total = group_total[iid]
        c = iid not in bad
        allocs = offers.get(iid) or ()
        o = bool(allocs)
        f = o and _fits_any(total, allocs)
        err.requirements_met = err.requirements_met or c
        err.fits = err.fits or f
        err.has_offering = err.has_offering or o
        err.requirements_and_fits = err.requirements_and_fits or (c and f and not o)
        err.requirements_and_offering = err.requirements_and_offering or (c and o and not f)
        err.fits_and_offering = err.fits_and_offering or (f and o and not c)
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
    checked, and the result of the Add is the topology requirements themselves."""
    changed: Requirements | None = None
    for k, r in topo_reqs.items():
        if dict.get(reqs, k) is not r:
            if changed is None:
                changed = Requirements()
            dict.__setitem__(changed, k, r)
    if changed is None:
        return reqs, None
    e = reqs.compatible(changed, allow_undefined)
    if e is not None:
        return reqs, e
    return topo_reqs, None


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
        #: pod requirements (by value) -> (claim reqs ∩ pod reqs, error); reset when requirements change
        self._merge_cache: dict[Any, tuple[Requirements, str | None]] = {}
        #: reserved capacity (set by the scheduler; see module doc and reservationmanager)
        self.reservation_manager: Any = None
        self.reserved_offering_mode: Any = None
        self.reserved_offerings: list[Any] = []
        self._to_reserve: list[Any] = []
        #: (instance_type_options, their ids): see _options
        self._option_ids: tuple[list[Any], frozenset[int]] | None = None
        #: (the list the last can_add returned, its ids): adopted by add when it takes that list
        self._pending_ids: tuple[list[Any], frozenset[int]] | None = None

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

    def can_add(
        self, pod: Any, pod_data: Any, relax_min_values: bool, need_error: bool = True
    ) -> tuple[Requirements | None, list[Any] | None, str | InstanceTypeFilterError | None]:
        """nodeclaim.go CanAdd + tryVolumeAlternative (:124-242): taints, requirements, topology
        (last), then instance-type filtering. Returns (requirements, instance types, error).
        ``need_error=False``: the caller only tests the error for None, so a failed instance-type
        filter returns :data:`INSTANCE_TYPES_FILTERED_OUT` instead of building upstream's flags."""
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
        topo_reqs, e = self.topology.add_requirements(pod, self.taints, pod_data.strict_requirements, reqs, wk)
        if e is not None:
            return None, None, e
        reqs, e = apply_topology_requirements(reqs, topo_reqs, wk)
        if e is not None:
            return None, None, e
        requests = merge(self.requests, pod_data.requests)
        remaining, remaining_ids, unsat, ferr = _filter(
            self._index,
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
            None if need_error else self._options(),
        )
        self._pending_ids = (remaining, remaining_ids)
        if relax_min_values and unsat:
            reqs = reqs.copy()  # never mutate shared / memoised requirement sets
            for key, mv in unsat.items():
                r = reqs.get(key)
                dict.__setitem__(reqs, key, Requirement._make(r.key, r.complement, r.values, r.gte, r.lte, mv))
        if ferr is not None:
            return None, None, ferr
        if self.reservation_manager is not None:
            from karpy.provisioning.reservationmanager import offerings_to_reserve

            ofs, rerr = offerings_to_reserve(self, remaining, reqs, wk)
            if rerr is not None:
                return None, None, rerr
            self._to_reserve = ofs
        return reqs, remaining, None

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
