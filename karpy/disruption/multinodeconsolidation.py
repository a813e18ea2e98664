"""Multi-node consolidation: remove the largest prefix of candidates that one cheaper node (or
none) can replace (reason ``Underutilized``).

Mirrors pkg/controllers/disruption/multinodeconsolidation.go (ComputeCommands,
firstNConsolidationOption, filterOutSameInstanceType). The 1-minute wall-clock timeout is not
modelled: the binary search always runs to the end (deterministic, never cut short).
"""

from __future__ import annotations

from collections.abc import Sequence

from karpy.disruption.balanced import ScoreResult
from karpy.disruption.consolidation import Consolidation, remove_instance_type_options_by_price_and_min_values
from karpy.disruption.types import Candidate, Cluster, Command
from karpy.scheduling.requirements import Requirements

__all__ = ["MAX_PARALLEL", "MultiNodeConsolidation", "filter_out_same_instance_type"]

#: multinodeconsolidation.go: lo.Clamp(len(candidates), 0, 100)
MAX_PARALLEL = 100
MAX_FLOAT64 = 1.7976931348623157e308


def filter_out_same_instance_type(cmd: Command) -> bool:
    """filterOutSameInstanceType (:209-246): drop replacement options that cost as much as or more
    than the cheapest candidate type they include (``[A, A, small] -> {A, ...}`` really is "delete
    two"); False when nothing is left or minValues fails."""
    claim = cmd.replacements[0]
    prices: dict[str, float] = {}
    for c in cmd.candidates:
        if c.instance_type is None:
            continue
        reqs = Requirements.from_labels(c.labels())
        best = c.instance_type.offerings.compatible(reqs).cheapest()
        if best is None:
            continue
        name = c.instance_type.name
        prices[name] = min(prices.get(name, best.price), best.price)
    max_price = MAX_FLOAT64
    for it in claim.instance_type_options:
        if it.name in prices:
            max_price = min(max_price, prices[it.name])
    err = remove_instance_type_options_by_price_and_min_values(claim, claim.requirements, max_price)
    return err is None and bool(claim.instance_type_options)


class MultiNodeConsolidation(Consolidation):
    name = "multi-node-consolidation"

    def compute_commands(self, cluster: Cluster, budgets: dict[str, int],
                         candidates: Sequence[Candidate]) -> list[Command]:
        """multinodeconsolidation.go ComputeCommands (:56-113), up to the validation."""
        if self.is_consolidated(cluster):
            return []
        kept, constrained = self.take_within_budgets(candidates, budgets)
        cmd, per_pool = self.first_n_consolidation_option(cluster, kept, min(len(kept), MAX_PARALLEL))
        if cmd is None:
            if not constrained:
                self.mark_consolidated(cluster)
            return []
        if per_pool:
            self.evaluator.emit_multi_node_events(cluster, cmd, per_pool, True)
        return [cmd]

    def first_n_consolidation_option(self, cluster: Cluster, candidates: list[Candidate], max_n: int
                                     ) -> tuple[Command | None, dict[str, ScoreResult]]:
        """firstNConsolidationOption (:117-206): binary search on the prefix length; tries
        ``candidates[:mid + 1]`` (so with more than 100 candidates up to 101 nodes, as upstream).
        A valid batch the Balanced score rejects shrinks the window like an invalid one; when no
        batch is found, the last rejection's scores are emitted once. Returns the command and the
        per-pool scores of the kept batch."""
        if len(candidates) < 2:
            return None, {}
        lo_, hi = 1, max_n
        if len(candidates) <= hi:
            hi = len(candidates) - 1
        last: Command | None = None
        last_per_pool: dict[str, ScoreResult] = {}
        rejected: tuple[Command, dict[str, ScoreResult]] | None = None
        while lo_ <= hi:
            mid = (lo_ + hi) // 2
            batch = candidates[:mid + 1]
            cmd = self.compute_consolidation(cluster, batch)
            valid = cmd is not None and (not cmd.replacements or filter_out_same_instance_type(cmd))
            if valid:
                assert cmd is not None
                approved, per_pool = self.evaluator.approve_command(cluster, cmd)
                if not approved:
                    valid = False
                    rejected = (cmd, per_pool)
                elif per_pool:
                    last_per_pool = per_pool
            if valid:
                last = cmd
                lo_ = mid + 1
            else:
                hi = mid - 1
        if last is None and rejected is not None and rejected[1]:
            self.evaluator.emit_multi_node_events(cluster, rejected[0], rejected[1], False)
        return last, last_per_pool
