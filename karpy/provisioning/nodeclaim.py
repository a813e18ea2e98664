"""An in-flight NodeClaim being built by the scheduler, and instance-type filtering.

Mirrors pkg/controllers/provisioning/scheduling/nodeclaim.go (NodeClaim, NewNodeClaim, CanAdd,
tryVolumeAlternative, Add, FinalizeScheduling, addDaemonRequests, InstanceTypeFilterError,
filterInstanceTypesByRequirements, compatible, fits). The per-type tests are answered by
:mod:`~karpy.provisioning.instancetypeindex`; what differs from upstream and why the result is the
same: docs/internals/upstream-mirrors.md#nodeclaim.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import compress
from typing import TYPE_CHECKING, Any, ClassVar, Sequence

from karpy.provisioning.instancetypeindex import _MEMO_LIMIT, InstanceTypeIndex, _Capacity, error_flags, surviving_ids
from karpy.provisioning.nodeclaimtemplate import to_nodeclaim
from karpy.provisioning.requirementchanges import apply_topology_requirements, topology_changes_error
from karpy.provisioning.reservationmanager import (ReservedOfferingError, finalize_reservations,
                                                   offerings_to_reserve, release_reserved_offerings)
from karpy.scheduling.hostports import HostPortUsage
from karpy.scheduling.labels import LABEL_HOSTNAME, OP_IN, RESTRICTED_LABELS
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements
from karpy.scheduling.resources import min_resources, max_resources, merge, to_strings

if TYPE_CHECKING:
    from karpy.api.pod import Pod
    from karpy.provisioning.freshclaimfailures import FreshClaimFailures

__all__ = [
    "DaemonOverheadGroup",
    "InstanceTypeFilterError",
    "InstanceTypeIndex",
    "NodeClaim",
    "ReservedOfferingError",
    "apply_topology_requirements",
    "filter_instance_types_by_requirements",
    "resources_string",
    "topology_changes_error",
]

#: (capacity, total): every instance-type option of a claim fits ``total`` under that capacity
_FitBasis = tuple[_Capacity, dict[str, int]]

_ONE_MILLION_CPU = 1_000_000 * 1_000_000_000  # "1M" cpu in nano-units

#: CanAdd's error when the caller will not read it (``need_error=False``: addToInflightNode).
INSTANCE_TYPES_FILTERED_OUT = "no instance type satisfied the pod on this NodeClaim (error not built)"


def resources_string(rl: dict[str, int]) -> str:
    """pkg/utils/resources String: ``{}`` or Go's JSON of the list (sorted keys, canonical quantities)."""
    if not rl:
        return "{}"
    return json.dumps(to_strings(rl), separators=(",", ":"))


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
        texts sorted and joined), each Requirement's text memoised in ``_strings`` by value."""
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
    remaining, _, unsat, err, _ = _filter(index, instance_types, requirements, pod_host_ports, pod_key,
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
    fit_basis: _FitBasis | None = None,
) -> tuple[list[Any], frozenset[int], dict[str, int], InstanceTypeFilterError | str | None, _FitBasis | None]:
    """:func:`filter_instance_types_by_requirements`, also returning the ids of ``remaining``
    (``option_ids``: the ids of ``instance_types``) and, with one daemon group, ``(capacity,
    total)`` that every survivor fits (see :func:`surviving_ids`' ``fit_basis``). When every option
    survives, ``instance_types`` itself is returned; otherwise the survivors in ``instance_types`` order."""
    # per-group totals; groups whose host ports conflict with the pod are skipped
    totals: list[tuple[frozenset[int], dict[str, int]]] = []
    tracked: list[dict[str, int]] = []
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
    single_total = totals[0][1] if len(daemon_groups) == 1 and totals else None
    survivors, bad, cap = surviving_ids(index, option_ids, requirements, totals, single_total, memo_fits, fit_basis)
    remaining: list[Any]
    if not survivors:
        remaining = []
    elif len(survivors) == len(option_ids) and isinstance(instance_types, list):
        remaining = instance_types
    else:
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
        return remaining, survivors, unsat, None, None if single_total is None else (cap, single_total)
    if not need_error:
        return [], frozenset(), unsat, INSTANCE_TYPES_FILTERED_OUT, None
    err = InstanceTypeFilterError(requirements, pod_requests, index.strings)
    for t in tracked:
        err.track_daemon_overhead(t)
    (err.requirements_met, err.fits, err.has_offering, err.requirements_and_offering,
     err.fits_and_offering) = error_flags(index, option_ids, totals, bad, cap)
    # a minValues error was evaluated on the non-empty list; a relaxed one is dropped
    err.min_values_incompatible_err = mv_err
    return [], frozenset(), unsat, err, None


class NodeClaim:
    """An in-flight NodeClaim (nodeclaim.go NodeClaim). Built by the Scheduler from a template."""

    #: filter a claim's options with the total they fit after the last Add as the floor of the
    #: fits test (_FitBasis; the same survivors, pinned by test_instancetypeindex_equivalence)
    fit_floor: ClassVar[bool] = True

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
        "_fit_basis",
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
        self.pods: list[Pod] = []
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
        #: the merged requirements (before topology, and the keys Topology.narrow changed) of the
        #: last can_add that found no option compatible; read and cleared by scanskips.Scans
        self.filtered_requirements: tuple[Requirements, dict[str, Requirement] | None] | None = None
        #: pod requirements (by value) -> (claim reqs ∩ pod reqs, error); reset when requirements change
        self._merge_cache: dict[Any, tuple[Requirements, str | None]] = {}
        #: reserved capacity (set by the scheduler; see reservationmanager)
        self.reservation_manager: Any = None
        self.reserved_offering_mode: Any = None
        self.reserved_offerings: list[Any] = []
        self._to_reserve: list[Any] = []
        #: (instance_type_options, their ids): see _options (a template's list has its ids memoised)
        self._option_ids: tuple[list[Any], frozenset[int]] | None = (
            self.instance_type_options, index.ids_of(instance_types))
        #: (the list the last can_add returned, its ids): adopted by add when it takes that list
        self._pending_ids: tuple[list[Any], frozenset[int], _FitBasis | None] | None = None
        #: (capacity, total) every instance-type option fits (from the can_add whose list add
        #: took): the floor of the next filter's fits test (surviving_ids' fit_basis)
        self._fit_basis: _FitBasis | None = None
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
        self._fit_basis = None
        self.fresh_failures = None

    def can_add(
        self, pod: Pod, pod_data: Any, relax_min_values: bool, need_error: bool = True
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
        self, pod: Pod, pod_data: Any, reqs: Requirements, relax_min_values: bool, need_error: bool = True
    ) -> tuple[Requirements | None, list[Any] | None, str | InstanceTypeFilterError | None]:
        """nodeclaim.go tryVolumeAlternative: topology (last), then instance-type filtering and
        offerings to reserve, on the claim's requirements merged with one volume alternative."""
        wk = self.well_known
        # AddRequirements + Compatible + Add as the keys they change (Topology.narrow, requirementchanges)
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
            # no option compatible: none would survive the filter (docs/internals/upstream-mirrors.md#nodeclaim)
            self._pending_ids = None
            self.filtered_requirements = (reqs, changes)  # read (and cleared) by scanskips.Scans
            return None, None, INSTANCE_TYPES_FILTERED_OUT
        if changes:
            reqs = reqs.copy()
            dict.update(reqs, changes)
        requests = merge(self.requests, pod_data.requests)
        remaining, remaining_ids, unsat, ferr, basis = _filter(
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
            self._fit_basis if self.fit_floor else None,
        )
        self._pending_ids = (remaining, remaining_ids, basis)
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
            ofs, rerr = offerings_to_reserve(self, remaining, reqs, wk)
            if rerr is not None:
                return None, None, rerr
            self._to_reserve = ofs
        return reqs, remaining, None

    def options_within(self, ids: frozenset[int]) -> bool:
        """True when every instance-type option's id is in ``ids`` (scanskips' skip)."""
        return self._index.covered(self._options(), ids)

    def _options(self) -> frozenset[int]:
        """ids of ``instance_type_options`` (recomputed whenever that list object is replaced)."""
        cached = self._option_ids
        options = self.instance_type_options
        if cached is None or cached[0] is not options:
            cached = self._option_ids = (options, frozenset(map(id, options)))
        return cached[1]

    def add(self, pod: Pod, pod_data: Any, requirements: Requirements, instance_types: list[Any]) -> None:
        """nodeclaim.go Add (:247-282)."""
        self.pods.append(pod)
        self.instance_type_options = instance_types
        pending = self._pending_ids
        if pending is not None and pending[0] is instance_types:
            self._option_ids = (instance_types, pending[1])
            self._fit_basis = pending[2]
        else:
            self._fit_basis = None
        self._pending_ids = None
        self.requests = merge(self.requests, pod_data.requests)
        self.requirements = requirements
        self._merge_cache = {}
        self.topology.register(LABEL_HOSTNAME, self.hostname)
        self.topology.record(pod, self.taints, requirements, self.well_known)
        if self.reservation_manager is not None:
            self.reservation_manager.reserve(self.hostname, self._to_reserve)
            release_reserved_offerings(self, self.reserved_offerings, self._to_reserve)
            self.reserved_offerings, self._to_reserve = self._to_reserve, []
        if pod_data.host_ports:
            for g in self.daemon_groups:
                g.host_port_usage.add(pod_data.key, pod_data.host_ports)

    def options_at(self, requirements: Requirements, pod_data: Any,
                   total: dict[str, int]) -> tuple[list[Any], frozenset[int], _FitBasis | None] | None:
        """The options tryVolumeAlternative's filter keeps for a pod whose merged requirements
        are ``requirements`` (no topology change, no host ports) when the claim's requests would
        be ``total``: (remaining, their ids, fit basis), or None when none is kept
        (karpy.provisioning.podruns asks it for a run of alike pods)."""
        remaining, ids, _, err, basis = _filter(
            self._index, self.instance_type_options, requirements, (), pod_data.key, pod_data.requests,
            self.daemon_groups, total, False, self._satisfies_min_values, not self.pods, self._options(),
            False, self._fit_basis if self.fit_floor else None)
        return None if err is not None else (remaining, ids, basis)

    def add_run(self, pods: Sequence[Pod], requirements: Requirements, total: dict[str, int],
                options: tuple[list[Any], frozenset[int], _FitBasis | None]) -> None:
        """:meth:`add` of alike pods one after another, each with ``requirements``, ending at
        ``total`` with ``options`` (:meth:`options_at` of that total): no host ports, no reserved
        offerings (karpy.provisioning.podruns)."""
        self.pods.extend(pods)
        self.instance_type_options, ids, self._fit_basis = options
        self._option_ids = (options[0], ids)
        self._pending_ids = None
        self.requests = total
        self.requirements = requirements
        self._merge_cache = {}
        topology, taints, wk = self.topology, self.taints, self.well_known
        topology.register(LABEL_HOSTNAME, self.hostname)
        for pod in pods:
            topology.record(pod, taints, requirements, wk)

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
            finalize_reservations(self)
        self.add_daemon_requests()

    def to_nodeclaim(self, max_instance_types: int) -> Any:
        """nodeclaimtemplate.go ToNodeClaim for this claim (see nodeclaimtemplate.to_nodeclaim)."""
        return to_nodeclaim(self, max_instance_types)
