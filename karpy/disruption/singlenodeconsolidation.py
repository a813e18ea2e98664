"""Single-node consolidation: delete or replace one node with a cheaper one (reason
``Underutilized``).

Mirrors pkg/controllers/disruption/singlenodeconsolidation.go (ComputeCommands,
SortCandidates, shuffleCandidates). The 3-minute timeout runs on the injected clock, which only
moves at the validation wait, so it never fires in virtual time and is not modelled; every
previously seen pool is therefore "seen" and pools interleave in name order.
"""

from __future__ import annotations

from collections.abc import Sequence

from karpy.disruption.consolidation import Consolidation
from karpy.disruption.types import Candidate, Cluster, Command

__all__ = ["SingleNodeConsolidation", "shuffle_candidates"]


def shuffle_candidates(candidates: Sequence[Candidate]) -> list[Candidate]:
    """shuffleCandidates (:146-172): round-robin over NodePools (name order; upstream: the
    previously unseen pools first, both in map order), keeping each pool's ratio order."""
    by_pool: dict[str, list[Candidate]] = {}
    for c in candidates:
        by_pool.setdefault(c.nodepool.metadata.name, []).append(c)
    pools = sorted(by_pool)
    out: list[Candidate] = []
    depth = max((len(v) for v in by_pool.values()), default=0)
    for i in range(depth):
        for p in pools:
            if i < len(by_pool[p]):
                out.append(by_pool[p][i])
    return out


class SingleNodeConsolidation(Consolidation):
    name = "single-node-consolidation"

    def compute_commands(self, cluster: Cluster, budgets: dict[str, int],
                         candidates: Sequence[Candidate]) -> list[Command]:
        """singlenodeconsolidation.go ComputeCommands (:55-118), up to the validation: the first
        candidate (ratio order, pools interleaved) with a delete or cheaper replace that its pool's
        Balanced score approves (CanPassThreshold first, ApproveCommand after)."""
        if self.is_consolidated(cluster):
            return []
        constrained = False
        for c in shuffle_candidates(self.sort_candidates(candidates)):
            if budgets.get(c.nodepool.metadata.name, 0) == 0:
                constrained = True
                continue
            # a delete is the best case: if even that cannot pass the Balanced threshold, skip
            if not self.evaluator.can_pass_threshold(c):
                continue
            cmd = self.compute_consolidation(cluster, [c])
            if cmd is None:
                continue
            # Balanced pools may reject the move; other policies pass through
            approved, _ = self.evaluator.approve_command(cluster, cmd)
            if not approved:
                continue
            return [cmd]
        if not constrained:
            self.mark_consolidated(cluster)
        return []
