"""scheduler.go PodData, with its spec-derived values computed once per pod spec object in a Solve
(SpecMemo) -- the same values as NewPodData computes for every pod, pinned by
tests/provisioning/test_poddata_equivalence.py (why: docs/internals/upstream-mirrors.md#poddata)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from karpy.utils import pod as podutils
from karpy.scheduling.hostports import get_host_ports
from karpy.scheduling.requirements import Requirements, has_preferred_node_affinity, pod_requirements, strict_pod_requirements
from karpy.scheduling.resources import pod_requests, requests_read_status
from karpy.scheduling.taints import tolerates

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = ["PodData", "SpecMemo"]

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

    @staticmethod
    def of(pod: Pod, ignore_preferences: bool) -> _SpecDerived:
        requests = pod_requests(pod)
        reqs = strict_pod_requirements(pod) if ignore_preferences else pod_requirements(pod)
        strict = strict_pod_requirements(pod) if has_preferred_node_affinity(pod) else reqs
        return _SpecDerived(requests, tuple(sorted(requests.items())), reqs, strict, tuple(reqs.values()),
                            get_host_ports(pod), _has_dra(pod))


class SpecMemo:
    """PodData's spec-derived values per pod spec object, for one Solve or, kept by the
    Provisioner's SchedulerCache, across Solves: a pod spec is never changed in place once a Pod
    holds it (a relaxation changes a copy, which is not served from the memo) -- see
    docs/internals/upstream-mirrors.md#poddata. Holds at most :attr:`LIMIT` specs (then starts over)."""

    __slots__ = ("_by_spec", "_plain")

    #: at most this many specs (and statuses) are kept (the memo is cleared when it is full)
    LIMIT = 1 << 15
    #: False: requests_read_status is asked for every pod (the plain path test_poddata_equivalence compares)
    trust_status = True

    def __init__(self) -> None:
        self._by_spec: dict[tuple[int, bool], tuple[Any, _SpecDerived]] = {}
        #: id(status) -> the status, for the statuses found not to hold requests
        self._plain: dict[int, Any] = {}

    def derived(self, pod: Pod, ignore_preferences: bool) -> _SpecDerived:
        if not self._plain_status(pod):  # a resizing pod's requests are its own
            return _SpecDerived.of(pod, ignore_preferences)
        spec = pod.spec
        key = (id(spec), ignore_preferences)
        hit = self._by_spec.get(key)
        if hit is not None and hit[0] is spec:
            return hit[1]
        derived = _SpecDerived.of(pod, ignore_preferences)
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
                 "req_signature", "volume_requirements", "volumes", "requests_key")

    def __init__(self, pod: Pod, ignore_preferences: bool, interned: dict[tuple[Any, ...], int] | None = None,
                 specs: SpecMemo | None = None) -> None:
        """``specs``: what was derived from pod specs earlier in the Solve (see SpecMemo)."""
        self.pod = pod
        self.key: str = pod.key
        derived = (specs.derived(pod, ignore_preferences) if specs is not None
                   else _SpecDerived.of(pod, ignore_preferences))
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
        out.requests = self.requests
        out.requests_key = self.requests_key
        out.requirements = self.requirements
        out.strict_requirements = self.strict_requirements
        out.req_signature = self.req_signature
        out.host_ports = self.host_ports
        out.has_dra = self.has_dra
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
