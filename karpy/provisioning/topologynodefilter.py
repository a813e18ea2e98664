"""Which nodes take part in a topology spread constraint (nodeAffinityPolicy / nodeTaintsPolicy).

Mirrors pkg/controllers/provisioning/scheduling/topologynodefilter.go (TopologyNodeFilter).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from karpy.provisioning.topologydomaingroup import NODE_INCLUSION_POLICY_HONOR, NODE_INCLUSION_POLICY_IGNORE
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements
from karpy.scheduling.taints import tolerates

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = ["TopologyNodeFilter", "ZERO_NODE_FILTER", "make_topology_node_filter"]

_EMPTY: frozenset[str] = frozenset()


def _req_signature(r: Requirement) -> tuple[Any, ...]:
    return (r.key, r.complement, r.values, r.gte, r.lte, r.min_values)


def _toleration_signature(t: Any) -> tuple[Any, ...]:
    return (t.key, t.operator, t.value, t.effect, getattr(t, "toleration_seconds", None))


class TopologyNodeFilter:
    """Mirrors topologynodefilter.go TopologyNodeFilter.

    ``requirements`` are ORed alternatives (nodeSelector AND one required node-affinity term). The
    zero value (no requirements, empty policies) passes every node; it is the filter of affinity and
    anti-affinity groups. ``hash_key`` stands in for upstream's hashstructure of the struct
    (slices compared as sets).
    """

    __slots__ = ("requirements", "taint_policy", "affinity_policy", "tolerations", "hash_key", "_trivial")

    def __init__(
        self,
        requirements: Sequence[Requirements] = (),
        taint_policy: str = "",
        affinity_policy: str = "",
        tolerations: Sequence[Any] = (),
    ) -> None:
        self.requirements: tuple[Requirements, ...] = tuple(requirements)
        self.taint_policy = taint_policy
        self.affinity_policy = affinity_policy
        self.tolerations: tuple[Any, ...] = tuple(tolerations)
        self.hash_key: tuple[Any, ...] = (
            frozenset(frozenset(_req_signature(r) for r in reqs.values()) for reqs in self.requirements),
            taint_policy,
            affinity_policy,
            frozenset(_toleration_signature(t) for t in self.tolerations),
        )
        # an empty alternative is compatible with every node: the affinity check always passes
        self._trivial = not self.requirements or any(len(r) == 0 for r in self.requirements)

    def matches(self, taints: Sequence[Any], requirements: Requirements, allow_undefined: frozenset[str] = _EMPTY) -> bool:
        """Mirrors topologynodefilter.go Matches."""
        if self.affinity_policy == NODE_INCLUSION_POLICY_HONOR and not self.matches_requirements(
            requirements, allow_undefined
        ):
            return False
        if self.taint_policy == NODE_INCLUSION_POLICY_HONOR and taints:
            if tolerates(taints, self.tolerations) is not None:
                return False
        return True

    def matches_requirements(self, requirements: Requirements, allow_undefined: frozenset[str] = _EMPTY) -> bool:
        """Mirrors topologynodefilter.go matchesRequirements (ORed alternatives, node reqs first)."""
        if self._trivial or self.affinity_policy == NODE_INCLUSION_POLICY_IGNORE:
            return True
        for req in self.requirements:
            if requirements.compatible(req, allow_undefined) is None:
                return True
        return False

    def __repr__(self) -> str:
        return (
            f"TopologyNodeFilter(requirements={[str(r) for r in self.requirements]}, "
            f"taint_policy={self.taint_policy!r}, affinity_policy={self.affinity_policy!r})"
        )


#: the zero value: used by pod affinity / anti-affinity groups (always matches)
ZERO_NODE_FILTER = TopologyNodeFilter()


def make_topology_node_filter(pod: Pod, taint_policy: str, affinity_policy: str) -> TopologyNodeFilter:
    """Mirrors topologynodefilter.go MakeTopologyNodeFilter."""
    node_selector = Requirements.from_labels(pod.spec.node_selector)
    affinity = pod.spec.affinity
    node_affinity = affinity.node_affinity if affinity is not None else None
    required = (
        node_affinity.required_during_scheduling_ignored_during_execution if node_affinity is not None else None
    )
    tolerations = pod.spec.tolerations or ()
    if required is None:
        return TopologyNodeFilter([node_selector], taint_policy, affinity_policy, tolerations)
    alternatives: list[Requirements] = []
    for term in required.node_selector_terms:
        reqs = Requirements()
        reqs.add(*node_selector.values())
        # NewNodeSelectorRequirements: minValues ignored
        reqs.add(*Requirements.from_node_selector_requirements(term.match_expressions, with_min_values=False).values())
        alternatives.append(reqs)
    return TopologyNodeFilter(alternatives, taint_policy, affinity_policy, tolerations)
