"""Resource lists: exact amounts as ``dict[str, int]`` of nano-units.

Mirrors ``pkg/utils/resources/resources.go`` (Merge, Subtract, Fits, MaxResources,
MinResources, RequestsForPods) and Kubernetes' ``resource.PodRequests``
(component-helpers) for how a pod's containers, init containers, sidecars and
overhead add up. Amounts are ints (see ``karpy.api.quantity``) so comparisons are
exact and cheap in the scheduler's hot loops.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from karpy.api.quantity import NANO, Quantity, parse_nanos

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
    """``resources.Merge``: the element-wise sum."""
    out: ResourceList = {}
    for rl in lists:
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


def _container_requests(container: Any) -> ResourceList:
    resources = getattr(container, "resources", None)
    if resources is None:
        return {}
    return from_quantities(getattr(resources, "requests", None))


def _max_into(dest: ResourceList, other: Mapping[str, int]) -> None:
    for name, v in other.items():
        cur = dest.get(name)
        if cur is None or v > cur:
            dest[name] = v


def pod_requests(pod: Any) -> ResourceList:
    """A pod's effective requests, plus ``pods: 1`` as Karpenter's ``RequestsForPods`` adds.

    ``resource.PodRequests``: app containers summed; each restartable init container
    (sidecar, ``restartPolicy: Always``) adds to that sum and to every later init
    container; the result is the max of the app sum and each init container's own need;
    then pod overhead is added. Requests only (the API models default requests from limits).
    Not modelled: pod-level ``spec.resources`` and in-place resize status.
    """
    spec = pod.spec
    reqs: ResourceList = {}
    for c in spec.containers:
        merge_into(reqs, _container_requests(c))
    sidecars: ResourceList = {}
    init_max: ResourceList = {}
    for c in spec.init_containers or ():
        creqs = _container_requests(c)
        if getattr(c, "restart_policy", None) == "Always":
            merge_into(reqs, creqs)
            merge_into(sidecars, creqs)
            need = dict(sidecars)
        else:
            need = merge(creqs, sidecars)
        _max_into(init_max, need)
    _max_into(reqs, init_max)
    overhead = getattr(spec, "overhead", None)
    if overhead:
        merge_into(reqs, from_quantities(overhead))
    reqs[PODS] = reqs.get(PODS, 0) + NANO
    return reqs


def requests_for_pods(pods: Iterable[Any]) -> ResourceList:
    """``resources.RequestsForPods``: the sum of each pod's requests (each with ``pods: 1``)."""
    out: ResourceList = {}
    for pod in pods:
        merge_into(out, pod_requests(pod))
    return out
