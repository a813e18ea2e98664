"""A run of alike pods added in one step to the existing node or in-flight NodeClaim that took the
pod before them: the pods the plain Solve places there one by one (docs/internals/upstream-mirrors.md#podruns).

Not in upstream (scheduler.go Solve tries every pod on the existing nodes, then on the in-flight
claims in order). A pod alike the one just placed on target T at its first try (the same requests,
requirements and tolerations; no host ports, volumes or DRA; no topology group owning or selecting
either) fails on every target before T as that pod did, since none of them changed, and is tried
on T next. An existing node takes it while it has room; a claim while its instance-type filter
keeps an option. The options a total keeps shrink as the total grows, so a claim takes the longest
prefix of the run whose total keeps one: found by doubling, then bisecting, over the filter.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import TYPE_CHECKING, Any

from karpy.scheduling.requirements import Requirements
from karpy.scheduling.resources import merge

if TYPE_CHECKING:
    from karpy.api.pod import Pod
    from karpy.provisioning.existingnode import ExistingNode
    from karpy.provisioning.nodeclaim import NodeClaim
    from karpy.provisioning.poddata import PodData
    from karpy.provisioning.topology import Topology

__all__ = ["Run", "alike", "plain", "run_requirements", "total_of"]

_Options = tuple[list[Any], frozenset[int], Any]


def plain(data: PodData, topology: Topology) -> bool:
    """Whether a run may follow (or hold) the pod: nothing but its requests, requirements and
    tolerations decides where it fits."""
    return (not data.host_ports and not data.has_dra and not data.volume_requirements and not data.volumes
            and topology.inert(data.pod))


def alike(a: PodData, b: PodData) -> bool:
    """Whether every existing node and claim answers ``b`` as it answered ``a``: the same requests,
    requirements (strict ones too) and tolerations (``plain`` holds for both)."""
    if a.likeness is not None and b.likeness is not None:  # (both from one SpecMemo)
        return a.likeness == b.likeness
    if a.requests_key != b.requests_key or a.req_signature != b.req_signature:
        return False
    if a.strict_requirements is not b.strict_requirements and \
            list(a.strict_requirements.values()) != list(b.strict_requirements.values()):
        return False
    sa, sb = a.pod.spec, b.pod.spec
    return sa is sb or sa.tolerations == sb.tolerations


def run_requirements(reqs: Requirements, data: PodData,
                     allow_undefined: frozenset[str] = frozenset()) -> Requirements | None:
    """``reqs`` when CanAdd's merge of them with a pod alike the last one added (under
    ``allow_undefined``: a claim's well-known labels; an existing node's is strict) gives them
    back, by value and order; None otherwise (then no run is taken)."""
    if not data.requirements:
        return reqs
    if reqs.compatible(data.requirements, allow_undefined) is not None:
        return None
    merged = reqs.copy()
    merged.add(*data.requirements.values())
    return reqs if list(merged.items()) == list(reqs.items()) else None


def total_of(requests: dict[str, int], pod: dict[str, int], count: int) -> dict[str, int]:
    """``requests`` merged with ``pod`` ``count`` times (the same names, order and sums)."""
    return merge(requests, {name: v * count for name, v in pod.items()})


class Run:
    """The alike pods at the head of the queue (read lazily) and how many of them a target takes."""

    __slots__ = ("pods", "_more", "_data", "_first", "_topology")

    def __init__(self, upcoming: Iterator[Pod], data: dict[int, PodData], first: PodData, topology: Topology,
                 limit: int | None) -> None:
        self.pods: list[Pod] = []
        self._more = upcoming if limit is None else islice(upcoming, limit)
        self._data = data
        self._first = first
        self._topology = topology

    def _extend(self, n: int) -> int:
        """Read pods until ``n`` are known (or the run ends); how many are known."""
        pods, data, first, topology = self.pods, self._data, self._first, self._topology
        while len(pods) < n:
            p = next(self._more, None)
            if p is None:
                break
            d = data[id(p)]
            if not alike(first, d) or not plain(d, topology):
                self._more = iter(())
                break
            pods.append(p)
        return len(pods)

    def onto(self, node: ExistingNode, requirements: Requirements) -> list[Pod]:
        """The pods of the run the existing node takes, each added by ExistingNode.add while the
        node has room for it (CanAdd's only check an alike pod can fail there)."""
        requests, pods, data = self._first.requests, self.pods, self._data
        n = 0
        while self._extend(n + 1) > n and node.has_room(requests):
            node.add(pods[n], data[id(pods[n])], requirements)
            n += 1
        return pods[:n]

    def taken_by(self, claim: NodeClaim, requirements: Requirements) -> tuple[int, dict[str, int], _Options | None]:
        """(how many of the run the claim takes one after another, its requests then, its options
        then): the largest count whose total keeps an option, by doubling then bisecting."""
        requests, pod = claim.requests, self._first.requests
        first = self._first
        known: dict[int, tuple[dict[str, int], _Options]] = {}

        def keeps(count: int) -> bool:
            total = total_of(requests, pod, count)
            options = claim.options_at(requirements, first, total)
            if options is None:
                return False
            known[count] = (total, options)
            return True

        good, bad = 0, None
        n = 1
        while True:
            n = min(n, self._extend(n))
            if n <= good:
                break  # the run ended
            if not keeps(n):
                bad = n
                break
            good = n
            n *= 2
        while bad is not None and bad - good > 1:
            mid = (good + bad) // 2
            if keeps(mid):
                good = mid
            else:
                bad = mid
        if not good:
            return 0, requests, None
        total, options = known[good]
        return good, total, options

