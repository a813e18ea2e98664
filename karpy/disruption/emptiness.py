"""Emptiness: delete empty, consolidatable nodes (reason ``Empty``).

Mirrors pkg/controllers/disruption/emptiness.go (ShouldDisrupt, ComputeCommands). Runs for every
consolidation policy; no simulation; one delete command with every node the budgets allow, then
the lenient 15 s validation (validation.go EmptinessValidator).
"""

from __future__ import annotations

from collections.abc import Sequence

from karpy.disruption.budgets import REASON_EMPTY
from karpy.disruption.consolidation import Consolidation
from karpy.disruption.types import Candidate, Cluster, Command, condition_true

__all__ = ["Emptiness"]


class Emptiness(Consolidation):
    name = "emptiness"
    reason = REASON_EMPTY

    def should_disrupt(self, c: Candidate, cluster: Cluster) -> bool:
        """emptiness.go ShouldDisrupt (:42-59)."""
        if c.owned_by_static_nodepool():
            return False
        if c.nodepool.spec.disruption.consolidate_after == "Never":
            cluster.publish("Unconsolidatable", f"node/{c.name}",
                            f'NodePool "{c.nodepool.metadata.name}" has consolidation disabled')
            return False
        return c.is_empty() and condition_true(c.nodeclaim, "Consolidatable")

    def compute_commands(self, cluster: Cluster, budgets: dict[str, int],
                         candidates: Sequence[Candidate]) -> list[Command]:
        """emptiness.go ComputeCommands (:64-110), up to the validation the controller runs."""
        if self.is_consolidated(cluster):
            return []
        taken, constrained = self.take_within_budgets(candidates, budgets)
        if not taken:
            if not constrained:
                self.mark_consolidated(cluster)
            return []
        return [Command(taken)]
