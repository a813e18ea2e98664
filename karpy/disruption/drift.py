"""Drift: replace nodes whose NodeClaim is ``Drifted`` (reason ``Drifted``), one per round.

Mirrors pkg/controllers/disruption/drift.go (ShouldDisrupt, ComputeCommands): no price check, no
validation, no consolidateAfter; empty nodes first, then by the Drifted transition time
(deterministic tie-break: node name); a node whose pods would not all schedule is skipped with a
``DisruptionBlocked`` event and the next one is tried.
"""

from __future__ import annotations

from collections.abc import Sequence

from karpy.disruption.budgets import REASON_DRIFTED
from karpy.disruption.helpers import simulate_scheduling
from karpy.disruption.types import EVENTUAL, Candidate, Cluster, Command, condition, condition_true
from karpy.utils.duration import to_seconds

__all__ = ["Drift"]


class Drift:
    name = "drift"
    reason = REASON_DRIFTED
    disruption_class = EVENTUAL
    validates = False

    def should_disrupt(self, c: Candidate, cluster: Cluster) -> bool:
        """drift.go ShouldDisrupt: not static and Drifted=True."""
        return not c.owned_by_static_nodepool() and condition_true(c.nodeclaim, "Drifted")

    @staticmethod
    def _drifted_at(c: Candidate) -> float:
        cond = condition(c.nodeclaim, "Drifted")
        return (to_seconds(cond.last_transition_time) if cond is not None else None) or 0.0

    def compute_commands(self, cluster: Cluster, budgets: dict[str, int],
                         candidates: Sequence[Candidate]) -> list[Command]:
        ordered = sorted(candidates, key=lambda c: (self._drifted_at(c), c.name))
        ordered = [c for c in ordered if not c.reschedulable_pods] + [c for c in ordered if c.reschedulable_pods]
        for c in ordered:
            if budgets.get(c.nodepool.metadata.name, 0) == 0:
                continue
            results = simulate_scheduling(cluster, [c], consolidation=False)
            if isinstance(results, str):
                continue
            if not results.all_non_pending_pods_scheduled():
                msg = results.non_pending_pod_scheduling_errors()
                cluster.publish("DisruptionBlocked", f"node/{c.name}", msg[:1].upper() + msg[1:])
                continue
            return [Command([c], list(results.new_nodeclaims), results)]
        return []
