"""PodInfo: what the scheduler reads from a Pod, computed once per pod object.

Mirrors pkg/scheduler/framework/types.go (PodInfo, AffinityTerm) and
staging/src/k8s.io/component-helpers/resource/helpers.go (PodRequests, with the non-zero
variant of pkg/scheduler/util/pod_resources.go). Amounts are int nano-units.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from karpy.api.quantity import parse_nanos
from karpy.scheduling.resources import requests_read_status

from .types import DEFAULT_MEMORY_REQUEST_NANOS, DEFAULT_MILLI_CPU_REQUEST_NANOS

if TYPE_CHECKING:
    from karpy.api.pod import Pod

ResourceList = dict[str, int]

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL = "ephemeral-storage"
PODS = "pods"


def _nanos(q: Any) -> int:
    n = getattr(q, "nanos", None)
    if isinstance(n, int):
        return n
    return parse_nanos(q)


def _rl(d: dict[str, Any] | None) -> ResourceList:
    return {k: _nanos(v) for k, v in (d or {}).items()}


def _add(a: ResourceList, b: ResourceList) -> None:
    for k, v in b.items():
        a[k] = a.get(k, 0) + v


def _max(a: ResourceList, b: ResourceList) -> None:
    for k, v in b.items():
        if v > a.get(k, 0):
            a[k] = v


def _container_requests(c: Any, non_zero: bool, parsed: dict[int, ResourceList] | None = None) -> ResourceList:
    """A container's requests (with ``non_zero``, 100m / 200Mi for a missing cpu / memory).
    ``parsed``: the requests already read from this pod's containers (by id), shared by the two
    aggregations of one new_pod_info (the defaults are added after the reading)."""
    if parsed is not None:
        base = parsed.get(id(c))
        if base is None:
            base = parsed[id(c)] = _container_requests(c, False)
        reqs = dict(base)
    else:
        res = getattr(c, "resources", None)
        reqs = dict(_rl(getattr(res, "requests", None) if res is not None else None))
        if not reqs and res is not None:
            # API-server defaulting: limits without requests become requests
            reqs = dict(_rl(getattr(res, "limits", None)))
    if non_zero:
        if reqs.get(CPU, 0) == 0 and CPU not in reqs:
            reqs[CPU] = DEFAULT_MILLI_CPU_REQUEST_NANOS
        if reqs.get(MEMORY, 0) == 0 and MEMORY not in reqs:
            reqs[MEMORY] = DEFAULT_MEMORY_REQUEST_NANOS
    return reqs


def compute_pod_requests(pod: Pod, non_zero: bool = False, parsed: dict[int, ResourceList] | None = None) -> ResourceList:
    """resource.PodRequests: max(sum(containers)+sidecars, each init + earlier sidecars) + overhead.

    With ``non_zero`` each container lacking a cpu/memory request counts 100m / 200Mi
    (pkg/scheduler/util GetNonzeroRequests). ``parsed``: see _container_requests."""
    spec = pod.spec
    reqs: ResourceList = {}
    for c in spec.containers or []:
        _add(reqs, _container_requests(c, non_zero, parsed))
    sidecars: ResourceList = {}
    init_max: ResourceList = {}
    for c in getattr(spec, "init_containers", None) or []:
        cr = _container_requests(c, non_zero, parsed)
        if getattr(c, "restart_policy", None) == "Always":
            _add(reqs, cr)
            _add(sidecars, cr)
            use = dict(sidecars)
        else:
            use = dict(cr)
            _add(use, sidecars)
        _max(init_max, use)
    _max(reqs, init_max)
    reqs = _pod_level_and_resize(pod, reqs, non_zero)
    _add(reqs, _rl(getattr(spec, "overhead", None)))
    return {k: v for k, v in reqs.items() if v != 0 or k in (CPU, MEMORY)}


def _pod_level_and_resize(pod: Pod, reqs: ResourceList, non_zero: bool) -> ResourceList:
    """PodRequests options the default scheduler sets (v1.34: PodLevelResources and
    InPlacePodVerticalScaling on): ``spec.resources.requests`` replace the container aggregate for
    cpu/memory/hugepages, and (for the Fit check, not the non-zero scoring requests) an in-place
    resize's allocated/actuated requests raise it -- the same computation as
    karpy.scheduling.resources.pod_requests."""
    from karpy.scheduling import resources as krs

    spec = pod.spec
    if not non_zero and krs.requests_read_status(pod):
        reqs = krs._status_aggregate(pod, reqs)
    res = getattr(spec, "resources", None)
    if res is not None and (res.requests or res.limits):
        reqs = dict(reqs)
        reqs.update(krs._pod_level_requests(spec, krs._aggregate(spec, krs._container_requests)))
    return reqs


@dataclass(frozen=True, slots=True)
class HostPortEntry:
    ip: str
    protocol: str
    port: int


@dataclass
class AffinityTerm:
    """framework.AffinityTerm: a PodAffinityTerm with its namespace set resolved."""

    namespaces: frozenset[str]
    selector: Any  # LabelSelector | None (None matches nothing)
    topology_key: str
    namespace_selector: Any = None  # LabelSelector | None
    all_namespaces: bool = False

    @property
    def signature(self) -> Any:
        """Everything ``matches`` reads from the term, as a hashable value (terms with equal
        signatures match exactly the same pods); computed once per term."""
        sig = self.__dict__.get("_signature")
        if sig is None:
            sig = (self.namespaces, self.all_namespaces, selector_signature(self.namespace_selector),
                   selector_signature(self.selector))
            self.__dict__["_signature"] = sig
        return sig

    def matches(self, pod: PodInfo, ns_labels: dict[str, dict[str, str]] | None = None) -> bool:
        if not (self.all_namespaces or pod.namespace in self.namespaces):
            if self.namespace_selector is None:
                return False
            labels = (ns_labels or {}).get(pod.namespace, {"kubernetes.io/metadata.name": pod.namespace})
            if not self.namespace_selector.matches(labels):
                return False
        if self.selector is None:
            return False
        return bool(self.selector.matches(pod.labels))


def selector_signature(sel: Any) -> Any:
    """A LabelSelector (or None) as a hashable value: two selectors with equal signatures match the
    same label sets (matchLabels compared as a set, expressions in order)."""
    if sel is None:
        return None
    return (tuple(sorted(sel.match_labels.items())),
            tuple((e.key, e.operator, tuple(e.values)) for e in sel.match_expressions))


@dataclass(slots=True)
class WeightedAffinityTerm:
    term: AffinityTerm
    weight: int


def _affinity_terms(pod_ns: str, pod_labels: dict[str, str], terms: list[Any]) -> list[AffinityTerm]:
    out = []
    for t in terms or []:
        out.append(_term(pod_ns, pod_labels, t))
    return out


def _term(pod_ns: str, pod_labels: dict[str, str], t: Any) -> AffinityTerm:
    """framework.newAffinityTerm incl. matchLabelKeys/mismatchLabelKeys merging."""
    from karpy.api.meta import LabelSelector, LabelSelectorRequirement

    ns = frozenset(getattr(t, "namespaces", None) or [])
    nsel = getattr(t, "namespace_selector", None)
    all_ns = nsel is not None and nsel.is_empty()
    if not ns and nsel is None:
        ns = frozenset([pod_ns])
    sel = getattr(t, "label_selector", None)
    mlk = getattr(t, "match_label_keys", None) or []
    mmlk = getattr(t, "mismatch_label_keys", None) or []
    if sel is not None and (mlk or mmlk):
        exprs = list(sel.match_expressions)
        for k in mlk:
            if k in pod_labels:
                exprs.append(LabelSelectorRequirement(key=k, operator="In", values=[pod_labels[k]]))
        for k in mmlk:
            if k in pod_labels:
                exprs.append(LabelSelectorRequirement(key=k, operator="NotIn", values=[pod_labels[k]]))
        sel = LabelSelector(match_labels=dict(sel.match_labels), match_expressions=exprs)
    return AffinityTerm(ns, sel, t.topology_key, None if all_ns else nsel, all_ns)


@dataclass
class PodInfo:
    """framework.PodInfo plus the derived values every plugin needs."""

    pod: Pod
    key: str
    uid: str
    name: str
    namespace: str
    labels: dict[str, str]
    priority: int
    requests: ResourceList
    non_zero_requests: ResourceList
    host_ports: list[HostPortEntry]
    required_affinity_terms: list[AffinityTerm] = field(default_factory=list)
    required_anti_affinity_terms: list[AffinityTerm] = field(default_factory=list)
    preferred_affinity_terms: list[WeightedAffinityTerm] = field(default_factory=list)
    preferred_anti_affinity_terms: list[WeightedAffinityTerm] = field(default_factory=list)
    #: values derived from this pod object alone, computed once (Filter and QueueingHint signatures)
    memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    #: whether ``requests`` read the pod's status (``requests_read_status``); True unless built by
    #: new_pod_info, which alone reads it (a PodInfo whose requests read no status may lend its
    #: derived values to the next version of its pod, see new_pod_info)
    reads_status: bool = field(default=True, repr=False, compare=False)

    @property
    def spec(self) -> Any:
        return self.pod.spec

    @property
    def node_name(self) -> str:
        return getattr(self.pod.spec, "node_name", None) or ""

    @property
    def nominated_node_name(self) -> str:
        st = getattr(self.pod, "status", None)
        return (getattr(st, "nominated_node_name", None) or "") if st is not None else ""

    @cached_property
    def terminating(self) -> bool:
        # read once: a PodInfo is built per pod object, and a pod update builds a new PodInfo
        return getattr(self.pod.metadata, "deletion_timestamp", None) is not None

    @cached_property
    def labels_key(self) -> tuple[str, frozenset[tuple[str, str]]]:
        """(namespace, labels) as a hashable value: everything an AffinityTerm / LabelSelector match
        reads from this pod (memo key for the per-cycle match caches)."""
        return self.namespace, frozenset(self.labels.items())

    @property
    def preemption_policy(self) -> str:
        return getattr(self.pod.spec, "preemption_policy", None) or "PreemptLowerPriority"

    def has_affinity(self) -> bool:
        return bool(self.required_affinity_terms or self.required_anti_affinity_terms
                    or self.preferred_affinity_terms or self.preferred_anti_affinity_terms)

    def images(self) -> list[str]:
        out = []
        for c in list(getattr(self.pod.spec, "init_containers", None) or []) + list(self.pod.spec.containers or []):
            out.append(getattr(c, "image", None) or "")
        return out


def host_ports_of(pod: Pod) -> list[HostPortEntry]:
    """schedutil.GetHostPorts-like: container ports with hostPort > 0 (protocol TCP, ip 0.0.0.0 defaults)."""
    out = []
    for c in pod.spec.containers or []:
        for p in getattr(c, "ports", None) or []:
            hp = getattr(p, "host_port", None) or 0
            if hp > 0:
                out.append(HostPortEntry(getattr(p, "host_ip", None) or "0.0.0.0",
                                         getattr(p, "protocol", None) or "TCP", hp))
    return out


def pod_priority(pod: Pod) -> int:
    """corev1helpers.PodPriority: spec.priority, nil -> 0."""
    p = getattr(pod.spec, "priority", None)
    return int(p) if p is not None else 0


_MISSING = object()


def _same_but_node_name(a: Any, b: Any) -> bool:
    """Whether two pod specs hold the very same objects in every field but ``nodeName`` (a
    binding copies the spec with only ``nodeName`` replaced; a status update keeps the spec)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    da = getattr(a, "__dict__", None)
    db = getattr(b, "__dict__", None)
    if da is None or db is None or len(da) != len(db):
        return False
    for k, v in da.items():
        if db.get(k, _MISSING) is not v and k != "node_name":
            return False
    return True


def _requests_and_ports(pod: Pod) -> tuple[ResourceList, ResourceList, list[HostPortEntry]]:
    """(requests, non-zero requests, host ports) of ``pod``."""
    parsed: dict[int, ResourceList] = {}  # each container's requests read once for both aggregations
    return (compute_pod_requests(pod, parsed=parsed), compute_pod_requests(pod, non_zero=True, parsed=parsed),
            host_ports_of(pod))


class SpecRequests:
    """new_pod_info's requests, non-zero requests and host ports per pod spec object (what
    compute_pod_requests and host_ports_of read of a pod whose requests read no status: its spec
    alone). Not in upstream (NewPodInfo computes them per pod); the same values because the pods
    of a template share its spec object, which is never changed in place once a pod holds it
    (karpy.api.workloads._Workload._new_pod), and the values are never mutated once built (a
    pod's next version shares them already, see new_pod_info's ``prev``). Holds at most
    :attr:`LIMIT` specs (then starts over). Pinned by tests/kubescheduler/test_podinfo_equivalence.py."""

    __slots__ = ("_by_spec",)

    LIMIT = 1 << 14
    #: False: every PodInfo computes its own (the plain path the equivalence test compares)
    enabled = True

    def __init__(self) -> None:
        self._by_spec: dict[int, tuple[Any, tuple[ResourceList, ResourceList, list[HostPortEntry]]]] = {}

    def of(self, pod: Pod) -> tuple[ResourceList, ResourceList, list[HostPortEntry]]:
        """(requests, non-zero requests, host ports) of ``pod``, whose requests read no status."""
        spec = pod.spec
        hit = self._by_spec.get(id(spec)) if self.enabled else None
        if hit is not None and hit[0] is spec:
            return hit[1]
        value = _requests_and_ports(pod)
        if self.enabled:
            if len(self._by_spec) >= self.LIMIT:
                self._by_spec.clear()
            self._by_spec[id(spec)] = (spec, value)
        return value


def new_pod_info(pod: Pod, prev: PodInfo | None = None, specs: SpecRequests | None = None) -> PodInfo:
    """framework.NewPodInfo.

    ``prev``: the PodInfo of the previous version of this pod, when the caller has one. Not in
    upstream (a pod update builds its PodInfo from scratch); same result because the derived
    values are taken from ``prev`` only when every input they are computed from is the same in
    both versions: the same metadata object (namespace, name, uid, labels), a spec holding the
    same objects in every field but ``nodeName``, which none of them reads (affinity terms,
    requests, host ports), and requests that read no status in either version
    (``requests_read_status``: an in-place resize's container statuses or a PodResizePending
    condition) -- pods are copy-on-write here (an update replaces the objects it changes, never
    mutates them in place), and the derived values are never mutated once built, so they are
    shared; ``pod``, the priority and a fresh ``memo`` are this version's own. Skips two request
    aggregations and the affinity terms per status or binding update (11,621 updates of the
    5,000-pod benchmark). ``specs``: the requests and host ports of a new pod whose requests read
    no status, kept per spec object (:class:`SpecRequests`)."""
    reads_status = requests_read_status(pod)
    if (prev is not None and not reads_status and not prev.reads_status and prev.pod.metadata is pod.metadata
            and _same_but_node_name(prev.pod.spec, pod.spec)):
        return PodInfo(
            pod=pod,
            key=prev.key,
            uid=prev.uid,
            name=prev.name,
            namespace=prev.namespace,
            labels=prev.labels,
            priority=pod_priority(pod),
            requests=prev.requests,
            non_zero_requests=prev.non_zero_requests,
            host_ports=prev.host_ports,
            required_affinity_terms=prev.required_affinity_terms,
            required_anti_affinity_terms=prev.required_anti_affinity_terms,
            preferred_affinity_terms=prev.preferred_affinity_terms,
            preferred_anti_affinity_terms=prev.preferred_anti_affinity_terms,
            reads_status=False,
        )
    md = pod.metadata
    ns = getattr(md, "namespace", None) or "default"
    labels = dict(getattr(md, "labels", None) or {})
    aff = getattr(pod.spec, "affinity", None)
    pa = getattr(aff, "pod_affinity", None) if aff is not None else None
    paa = getattr(aff, "pod_anti_affinity", None) if aff is not None else None
    req_aff = _affinity_terms(ns, labels, getattr(pa, "required_during_scheduling_ignored_during_execution", None) or []) if pa else []
    req_anti = _affinity_terms(ns, labels, getattr(paa, "required_during_scheduling_ignored_during_execution", None) or []) if paa else []
    pref_aff = [WeightedAffinityTerm(_term(ns, labels, w.pod_affinity_term), w.weight)
                for w in (getattr(pa, "preferred_during_scheduling_ignored_during_execution", None) or [])] if pa else []
    pref_anti = [WeightedAffinityTerm(_term(ns, labels, w.pod_affinity_term), w.weight)
                 for w in (getattr(paa, "preferred_during_scheduling_ignored_during_execution", None) or [])] if paa else []
    if specs is None or reads_status:
        requests, non_zero, host_ports = _requests_and_ports(pod)
    else:
        requests, non_zero, host_ports = specs.of(pod)
    return PodInfo(
        pod=pod,
        key=f"{ns}/{md.name}",
        uid=getattr(md, "uid", None) or f"{ns}/{md.name}",
        name=md.name,
        namespace=ns,
        labels=labels,
        priority=pod_priority(pod),
        requests=requests,
        non_zero_requests=non_zero,
        host_ports=host_ports,
        required_affinity_terms=req_aff,
        required_anti_affinity_terms=req_anti,
        preferred_affinity_terms=pref_aff,
        preferred_anti_affinity_terms=pref_anti,
        reads_status=reads_status,
    )
