"""The universe of domains of one topology key, with the taint sets each domain comes with.

Mirrors pkg/controllers/provisioning/scheduling/topologydomaingroup.go (TopologyDomainGroup).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from karpy.scheduling.taints import tolerates

__all__ = ["TopologyDomainGroup", "NODE_INCLUSION_POLICY_HONOR", "NODE_INCLUSION_POLICY_IGNORE"]

NODE_INCLUSION_POLICY_HONOR = "Honor"
NODE_INCLUSION_POLICY_IGNORE = "Ignore"


class TopologyDomainGroup:
    """domain -> list of taint sets (topologydomaingroup.go TopologyDomainGroup).

    A domain offered by a NodePool without taints is stored with the single empty taint set, which
    supersedes every other set (``Insert``). Domains keep insertion order; callers that must pick a
    domain sort names themselves.
    """

    __slots__ = ("_domains",)

    def __init__(self) -> None:
        self._domains: dict[str, list[tuple[Any, ...]]] = {}

    def insert(self, domain: str, taints: Sequence[Any] = ()) -> None:
        """Mirrors topologydomaingroup.go Insert.

        Deviation (performance only): an identical taint set already recorded is not appended
        again (upstream appends one copy per instance type; the membership test is the same).
        """
        taint_set = tuple(taints)
        existing = self._domains.get(domain)
        if existing is None or not taint_set:
            self._domains[domain] = [taint_set]
            return
        if not existing[0]:
            return  # the empty taint set is already tracked: every pod is eligible
        if taint_set not in existing:
            existing.append(taint_set)

    def domains(self) -> list[str]:
        """All domain names (insertion order)."""
        return list(self._domains)

    def taint_sets(self, domain: str) -> list[tuple[Any, ...]]:
        """The taint sets recorded for ``domain`` (empty list when unknown)."""
        return list(self._domains.get(domain, ()))

    def __contains__(self, domain: object) -> bool:
        return domain in self._domains

    def __len__(self) -> int:
        return len(self._domains)

    def for_each_domain(self, tolerations: Sequence[Any], taint_policy: str, fn: Callable[[str], None]) -> None:
        """Mirrors topologydomaingroup.go ForEachDomain.

        Only ``Ignore`` skips the taint check: the zero-value policy ``""`` of affinity groups is
        treated like ``Honor`` exactly as upstream (its comparison is ``== Ignore``).
        """
        for domain, taint_groups in self._domains.items():
            if taint_policy == NODE_INCLUSION_POLICY_IGNORE:
                fn(domain)
                continue
            for taints in taint_groups:
                if not taints or tolerates(taints, tolerations) is None:
                    fn(domain)
                    break

    def tolerated_domains(self, tolerations: Sequence[Any], taint_policy: str) -> list[str]:
        """The domains :meth:`for_each_domain` would visit."""
        out: list[str] = []
        self.for_each_domain(tolerations, taint_policy, out.append)
        return out

    @classmethod
    def of(cls, items: Iterable[tuple[str, Sequence[Any]]]) -> TopologyDomainGroup:
        """Build from ``(domain, taints)`` pairs (test helper)."""
        g = cls()
        for domain, taints in items:
            g.insert(domain, taints)
        return g
