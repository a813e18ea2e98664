"""Resource lists: exact amounts as ``dict[str, int]`` of nano-units.

Mirrors ``pkg/utils/resources/resources.go`` (Merge, Subtract, Fits, MaxResources,
MinResources, RequestsForPods) and Kubernetes' ``resource.PodRequests``
(component-helpers) for how a pod's containers, init containers, sidecars and
overhead add up. Amounts are ints (see ``karpy.api.quantity``) so comparisons are
exact and cheap in the scheduler's hot loops.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from karpy.api.quantity import NANO, Quantity, parse_nanos

if TYPE_CHECKING:  # pragma: no cover
    from karpy.api.pod import Container, Pod, PodSpec

__all__ = [
    "CPU",
    "MEMORY",
    "PODS",
    "EPHEMERAL_STORAGE",
    "ResourceList",
    "exceeds",
    "fits",
    "from_quantities",
    "is_zero",
    "max_resources",
    "merge",
    "merge_into",
    "min_resources",
    "pod_requests",
    "requests_for_pods",
    "requests_read_status",
    "subtract",
    "to_quantities",
    "to_strings",
]

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"
EPHEMERAL_STORAGE = "ephemeral-storage"

ResourceList = dict[str, int]

_BINARY_RESOURCES = frozenset({MEMORY, EPHEMERAL_STORAGE})


def from_quantities(quantities: Mapping[str, Any] | None) -> ResourceList:
    """Convert ``{name: Quantity | str | number}`` into nano-units."""
    if not quantities:
        return {}
    return {name: parse_nanos(q) for name, q in quantities.items()}


def to_quantities(resources: Mapping[str, int]) -> dict[str, Quantity]:
    """Convert nano-units back to ``Quantity`` (binary format for memory and storage)."""
    return {
        name: Quantity.from_nanos(v, "BinarySI" if name in _BINARY_RESOURCES or name.startswith("hugepages-")
                                  else "DecimalSI")
        for name, v in resources.items()
    }


def to_strings(resources: Mapping[str, int]) -> dict[str, str]:
    """Resource list as sorted ``{name: "canonical quantity"}`` (for reports and messages)."""
    return {name: str(q) for name, q in sorted(to_quantities(resources).items())}


def merge(*lists: Mapping[str, int]) -> ResourceList:
    """``resources.Merge``: the element-wise sum (the first list's names first, in its order)."""
    if not lists:
        return {}
    out: ResourceList = dict(lists[0])
    for rl in lists[1:]:
        for name, v in rl.items():
            out[name] = out.get(name, 0) + v
    return out


def merge_into(dest: ResourceList, *lists: Mapping[str, int]) -> ResourceList:
    """``resources.MergeInto``: add ``lists`` into ``dest`` in place and return it."""
    for rl in lists:
        for name, v in rl.items():
            dest[name] = dest.get(name, 0) + v
    return dest


def subtract(lhs: Mapping[str, int], rhs: Mapping[str, int]) -> ResourceList:
    """``resources.Subtract``: ``lhs - rhs`` for the keys of ``lhs`` only."""
    return {name: v - rhs.get(name, 0) for name, v in lhs.items()}


def max_resources(*lists: Mapping[str, int]) -> ResourceList:
    """``resources.MaxResources``: the element-wise maximum over the union of keys."""
    out: ResourceList = {}
    for rl in lists:
        for name, v in rl.items():
            cur = out.get(name)
            if cur is None or v > cur:
                out[name] = v
    return out


def min_resources(*lists: Mapping[str, int]) -> ResourceList:
    """``resources.MinResources``: element-wise minimum, keeping only keys present in every list."""
    if not lists:
        return {}
    keys = set(lists[0])
    for rl in lists[1:]:
        keys &= rl.keys()
    return {name: min(rl[name] for rl in lists) for name in lists[0] if name in keys}


def fits(candidate: Mapping[str, int], total: Mapping[str, int]) -> bool:
    """``resources.Fits``: every candidate amount ≤ the total's (missing = 0); no negative totals."""
    for v in total.values():
        if v < 0:
            return False
    for name, v in candidate.items():
        if v > total.get(name, 0):
            return False
    return True


def exceeds(usage: Mapping[str, int], limits: Mapping[str, int]) -> list[str]:
    """Names of limited resources whose usage is strictly greater than the limit.

    ``NodePool.Spec.Limits.ExceededBy`` (pkg/apis/v1/nodepool.go) errors iff ``usage > limit``.
    """
    return [name for name, limit in limits.items() if usage.get(name, 0) > limit]


def is_zero(resources: Mapping[str, int]) -> bool:
    return all(v == 0 for v in resources.values())


def _container_requests(container: Container) -> ResourceList:
    resources = getattr(container, "resources", None)
    if resources is None:
        return {}
    return from_quantities(getattr(resources, "requests", None))


def _max_into(dest: ResourceList, other: Mapping[str, int]) -> None:
    for name, v in other.items():
        cur = dest.get(name)
        if cur is None or v > cur:
            dest[name] = v


#: component-helpers resource.IsSupportedPodLevelResource: cpu, memory and hugepages-*
_POD_LEVEL_RESOURCES = frozenset({CPU, MEMORY})
#: core/v1 PodResizePending condition; reason Infeasible
POD_RESIZE_PENDING = "PodResizePending"
REASON_INFEASIBLE = "Infeasible"


def _pod_level(name: str) -> bool:
    return name in _POD_LEVEL_RESOURCES or name.startswith("hugepages-")


def _aggregate(spec: PodSpec, per_container: Callable[[Container], ResourceList]) -> ResourceList:
    """component-helpers aggregateContainerResourcesByFn: app containers summed; each restartable
    init container (sidecar, ``restartPolicy: Always``) adds to that sum and to every later init
    container; the result is the max of the app sum and each init container's own need."""
    reqs: ResourceList = {}
    for c in spec.containers:
        merge_into(reqs, per_container(c))
    sidecars: ResourceList = {}
    init_max: ResourceList = {}
    for c in spec.init_containers or ():
        creqs = per_container(c)
        if getattr(c, "restart_policy", None) == "Always":
            merge_into(reqs, creqs)
            merge_into(sidecars, creqs)
            need = dict(sidecars)
        else:
            need = merge(creqs, sidecars)
        _max_into(init_max, need)
    _max_into(reqs, init_max)
    return reqs


def _status_aggregate(pod: Pod, spec_reqs: ResourceList) -> ResourceList:
    """AggregateContainerRequests with UseStatusResources (InPlacePodVerticalScaling):
    max(spec, actuated, allocated) per resource -- or max(actuated, allocated) when the resize is
    Infeasible -- with allocated = status.allocatedResources (else spec unless infeasible) and
    actuated = status.resources.requests (else allocated, else spec unless infeasible)."""
    status = pod.status
    by_name = {cs.name: cs for cs in (*status.init_container_statuses, *status.container_statuses)}
    infeasible = any(c.type == POD_RESIZE_PENDING and c.reason == REASON_INFEASIBLE for c in status.conditions or ())

    def allocated(c: Container) -> ResourceList:
        cs = by_name.get(c.name)
        if cs is not None and cs.allocated_resources is not None:
            return from_quantities(cs.allocated_resources)
        return {} if infeasible else _container_requests(c)

    def actuated(c: Container) -> ResourceList:
        cs = by_name.get(c.name)
        if cs is not None and cs.resources is not None and cs.resources.requests:
            return from_quantities(cs.resources.requests)
        if cs is not None and cs.allocated_resources is not None:
            return from_quantities(cs.allocated_resources)
        return {} if infeasible else _container_requests(c)

    out: ResourceList = {} if infeasible else dict(spec_reqs)
    _max_into(out, _aggregate(pod.spec, actuated))
    _max_into(out, _aggregate(pod.spec, allocated))
    return out


def _pod_level_requests(spec: PodSpec, container_reqs: Mapping[str, int]) -> ResourceList:
    """``spec.resources.requests`` after the API server's defaultPodRequests (pkg/apis/core/v1/
    defaults.go): with pod-level limits set, a missing supported request defaults to the
    containers' aggregate for it (cpu/memory: overcommit allowed), else to the pod-level limit."""
    res = spec.resources
    assert res is not None, "callers test spec.resources first"
    reqs = from_quantities(res.requests)
    if res.limits:
        for name, v in container_reqs.items():
            if name not in reqs and name in _POD_LEVEL_RESOURCES:
                reqs[name] = v
        for name, v in from_quantities(res.limits).items():
            if name not in reqs and _pod_level(name):
                reqs[name] = v
    return {k: v for k, v in reqs.items() if _pod_level(k)}


_CONDITION_TYPE = attrgetter("type")


def requests_read_status(pod: Pod) -> bool:
    """Whether a pod's requests depend on its status, not on its spec alone: container statuses
    (an in-place resize's allocated or actuated resources) or a PodResizePending condition."""
    status = getattr(pod, "status", None)
    # (the condition types compared in C: this runs for every pod of every Solve, most of them
    # pending with a PodScheduled condition)
    return status is not None and bool(status.container_statuses or status.init_container_statuses
                                       or POD_RESIZE_PENDING in map(_CONDITION_TYPE, status.conditions or ()))


def pod_requests(pod: Pod) -> ResourceList:
    """A pod's effective requests, plus ``pods: 1`` as Karpenter's ``RequestsForPods`` adds.

    Karpenter's ``resources.Ceiling`` = component-helpers ``resource.PodRequests`` with
    ``UseStatusResources``: the container aggregate (sidecar-aware, see ``_aggregate``), raised to
    what an in-place resize holds (``status.containerStatuses[].allocatedResources`` /
    ``.resources``); pod-level ``spec.resources.requests`` (cpu, memory, hugepages) replace the
    aggregate for those resources; then pod overhead is added. Requests only (the API models
    default container requests from limits).
    """
    spec = pod.spec
    reqs = _aggregate(spec, _container_requests)
    if requests_read_status(pod):
        reqs = _status_aggregate(pod, reqs)
    res = getattr(spec, "resources", None)
    if res is not None and (res.requests or res.limits):
        container_reqs = _aggregate(spec, _container_requests)
        reqs.update(_pod_level_requests(spec, container_reqs))
    overhead = getattr(spec, "overhead", None)
    if overhead:
        merge_into(reqs, from_quantities(overhead))
    reqs[PODS] = reqs.get(PODS, 0) + NANO
    return reqs


def requests_for_pods(pods: Iterable[Pod]) -> ResourceList:
    """``resources.RequestsForPods``: the sum of each pod's requests (each with ``pods: 1``)."""
    out: ResourceList = {}
    for pod in pods:
        merge_into(out, pod_requests(pod))
    return out
