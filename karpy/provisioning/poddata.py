"""scheduler.go PodData, with its spec-derived values computed once per pod spec object in a Solve
(SpecMemo) -- the same values as NewPodData computes for every pod, pinned by
tests/provisioning/test_poddata_equivalence.py (why: docs/internals/upstream-mirrors.md#poddata)."""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Sequence

from karpy.provisioning.queue import SortKey, sort_key
from karpy.utils import pod as podutils
from karpy.scheduling.hostports import get_host_ports
from karpy.scheduling.requirements import Requirements, has_preferred_node_affinity, pod_requirements, strict_pod_requirements
from karpy.scheduling.resources import pod_requests, requests_read_status
from karpy.scheduling.taints import tolerates

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = ["PodData", "Prepared", "SpecMemo"]

_has_dra = podutils.has_dra_requirements


@dataclass(frozen=True, slots=True)
class _SpecDerived:
    """What PodData reads from a pod's spec (and, for a resizing pod, its status): its requests,
    requirements, host ports and DRA use."""

    requests: dict[str, int]
    requests_key: tuple[tuple[str, int], ...]
    requirements: Requirements
    strict_requirements: Requirements
    req_values: tuple[Any, ...]
    host_ports: tuple[Any, ...]
    has_dra: bool
    #: whether the spec lists volumes
    has_volumes: bool
    #: no affinity and no topology spread constraint: topology.go Update builds no group for it
    topology_free: bool
    #: equal for two pods with the same requests, requirements (strict ones too) and tolerations
    #: (SpecMemo.likeness); None: not known
    likeness: int | None = None

    @staticmethod
    def of(pod: Pod, ignore_preferences: bool,
           likeness: Callable[[tuple[Any, ...]], int] | None = None) -> _SpecDerived:
        requests = pod_requests(pod)
        reqs = strict_pod_requirements(pod) if ignore_preferences else pod_requirements(pod)
        strict = strict_pod_requirements(pod) if has_preferred_node_affinity(pod) else reqs
        requests_key, values = tuple(sorted(requests.items())), tuple(reqs.values())
        like = None
        if likeness is not None:
            tolerations = tuple((t.key, t.operator, t.value, t.effect, t.toleration_seconds)
                                for t in pod.spec.tolerations or ())
            like = likeness((requests_key, values, tuple(strict.values()), tolerations))
        spec = pod.spec
        return _SpecDerived(requests, requests_key, reqs, strict, values, get_host_ports(pod), _has_dra(pod),
                            bool(spec.volumes), spec.affinity is None and not spec.topology_spread_constraints, like)


class Prepared(NamedTuple):
    """What SpecMemo.of_pod answers for a pod."""

    key: str
    derived: _SpecDerived
    #: queue.go byCPUAndMemoryDescending's key
    sort_key: SortKey
    uid: str


class SpecMemo:
    """PodData's spec-derived values per pod spec object, for one Solve or, kept by the
    Provisioner's SchedulerCache, across Solves: a pod spec is never changed in place once a Pod
    holds it (a relaxation changes a copy, which is not served from the memo) -- see
    docs/internals/upstream-mirrors.md#poddata. Holds at most :attr:`LIMIT` specs (then starts over)."""

    __slots__ = ("_by_spec", "_plain", "_by_pod", "_likeness", "_next_likeness")

    #: at most this many specs (and statuses) are kept (the memo is cleared when it is full)
    LIMIT = 1 << 15
    #: False: requests_read_status is asked for every pod (the plain path test_poddata_equivalence compares)
    trust_status = True

    def __init__(self) -> None:
        self._by_spec: dict[tuple[int, bool], tuple[Any, _SpecDerived]] = {}
        #: id(status) -> the status, for the statuses found not to hold requests
        self._plain: dict[int, Any] = {}
        #: (requests, requirements, strict requirements, tolerations) -> its likeness; a number is
        #: never given twice, also after the table starts over
        self._likeness: dict[tuple[Any, ...], int] = {}
        self._next_likeness = itertools.count()
        #: id(pod) -> (a weak reference to the pod, its metadata, spec and status,
        #: ignore_preferences, what of_pod answered); an entry goes when its pod does
        self._by_pod: dict[int, tuple[Any, Any, Any, Any, bool, Prepared]] = {}

    def prepare(self, pods: Sequence[Pod], ignore_preferences: bool) -> list[Prepared]:
        """:meth:`of_pod` of each pod, in order (read once per Solve by the Topology, the volume
        lookup and the Scheduler: each pod's memory is touched once)."""
        return [self.of_pod(p, ignore_preferences) for p in pods]

    def of_pod(self, pod: Pod, ignore_preferences: bool) -> Prepared:
        """(the pod's key, :meth:`derived`, its queue sort key, its uid), kept per pod object while it lives
        and its metadata, spec and status are the very objects seen (a Solve after another sees the
        same pods)."""
        by_pod = self._by_pod
        k = id(pod)
        hit = by_pod.get(k)
        meta, spec, status = pod.metadata, pod.spec, pod.status
        if hit is not None and hit[0]() is pod and hit[1] is meta and hit[2] is spec and hit[3] is status \
                and hit[4] is ignore_preferences:
            return hit[5]
        derived = self.derived(pod, ignore_preferences)
        answer = Prepared(pod.key, derived, sort_key(pod, derived.requests), meta.uid)
        gone = by_pod.pop  # (a cycle through the dict: the collector frees it with the memo)
        by_pod[k] = (weakref.ref(pod, lambda _: gone(k, None)), meta, spec, status, ignore_preferences, answer)
        return answer

    def likeness(self, value: tuple[Any, ...]) -> int:
        """The number standing for ``value`` (what makes two pods alike to every target)."""
        table = self._likeness
        n = table.get(value)
        if n is None:
            if len(table) >= self.LIMIT:
                table.clear()
            n = table[value] = next(self._next_likeness)
        return n

    def derived(self, pod: Pod, ignore_preferences: bool) -> _SpecDerived:
        if not self._plain_status(pod):  # a resizing pod's requests are its own
            return _SpecDerived.of(pod, ignore_preferences, self.likeness)
        spec = pod.spec
        key = (id(spec), ignore_preferences)
        hit = self._by_spec.get(key)
        if hit is not None and hit[0] is spec:
            return hit[1]
        derived = _SpecDerived.of(pod, ignore_preferences, self.likeness)
        if len(self._by_spec) >= self.LIMIT:
            self._by_spec.clear()
        self._by_spec[key] = (spec, derived)
        return derived

    def _plain_status(self, pod: Pod) -> bool:
        """``not requests_read_status(pod)``, asked once per status object: what it reads (container
        statuses, conditions) is only ever set on a new status object (karpy.sim.pods._revised)."""
        status = getattr(pod, "status", None)
        if status is None or not self.trust_status:
            return not requests_read_status(pod)
        plain = self._plain
        if plain.get(id(status)) is status:
            return True
        if requests_read_status(pod):
            return False
        if len(plain) >= self.LIMIT:
            plain.clear()
        plain[id(status)] = status
        return True


class PodData:
    """scheduler.go PodData (+ host ports and a per-target toleration cache)."""

    __slots__ = ("pod", "key", "requests", "requirements", "strict_requirements", "host_ports", "has_dra", "_tol",
                 "req_signature", "volume_requirements", "volumes", "requests_key", "sort_key", "likeness",
                 "has_volumes")

    def __init__(self, pod: Pod, ignore_preferences: bool, interned: dict[tuple[Any, ...], int] | None = None,
                 specs: SpecMemo | None = None, prepared: Prepared | None = None) -> None:
        """``specs``: what was derived from pod specs earlier in the Solve (see SpecMemo);
        ``prepared``: what ``specs.of_pod`` answered for the pod."""
        self.pod = pod
        key: str
        #: queue.go byCPUAndMemoryDescending's key
        self.sort_key: SortKey
        if prepared is not None:
            key, derived, self.sort_key, _ = prepared
        elif specs is not None:
            key, derived, self.sort_key, _ = specs.of_pod(pod, ignore_preferences)
        else:
            key = pod.key
            derived = _SpecDerived.of(pod, ignore_preferences)
            self.sort_key = sort_key(pod, derived.requests)
        self.key: str = key
        self.requests: dict[str, int] = derived.requests
        #: the requests by value (scanskips.Scans keeps the existing nodes with room per value)
        self.requests_key: tuple[tuple[str, int], ...] = derived.requests_key
        reqs = derived.requirements
        self.requirements: Requirements = reqs
        self.strict_requirements: Requirements = derived.strict_requirements
        # an int standing for the requirement set's value (interned per Scheduler)
        sig = derived.req_values
        if interned is None:
            self.req_signature: Any = sig
        else:
            self.req_signature = interned.setdefault(sig, len(interned))
        self.host_ports = derived.host_ports
        self.has_dra = derived.has_dra
        self.has_volumes = derived.has_volumes
        #: SpecMemo's likeness of the pod (None without a memo)
        self.likeness: int | None = derived.likeness
        self._tol: dict[int, str | None] = {}
        #: volume topology alternatives (PodData.VolumeRequirements; set by the scheduler)
        self.volume_requirements: list[Any] | None = None
        #: CSI driver -> claims the pod mounts (volumeusage.GetVolumes; set by the scheduler)
        self.volumes: dict[str, Any] | None = None

    def relaxed(self, pod: Pod) -> PodData:
        """The data of ``pod``, a relaxed copy of this pod whose node selector and node affinity
        are unchanged: everything is shared except the toleration cache (a relaxation may have
        added a PreferNoSchedule toleration)."""
        out = PodData.__new__(PodData)
        out.pod = pod
        out.key = self.key
        out.sort_key = self.sort_key
        out.requests = self.requests
        out.requests_key = self.requests_key
        out.requirements = self.requirements
        out.strict_requirements = self.strict_requirements
        out.req_signature = self.req_signature
        out.host_ports = self.host_ports
        out.has_dra = self.has_dra
        out.has_volumes = self.has_volumes
        out.likeness = None  # (the relaxation may have added a toleration)
        out.volume_requirements = self.volume_requirements
        out.volumes = self.volumes
        out._tol = {}
        return out

    def tolerates(self, template: Any) -> str | None:
        """``Taints(template.taints).ToleratesPod(pod)``, cached per template."""
        return self.tolerates_taints(template, template.taints)

    def tolerates_taints(self, holder: Any, taints: Sequence[Any]) -> str | None:
        k = id(holder)
        tol = self._tol
        if k in tol:
            return tol[k]
        r = tolerates(taints, self.pod.spec.tolerations) if taints else None
        tol[k] = r
        return r
