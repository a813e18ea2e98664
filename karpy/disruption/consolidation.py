"""What Emptiness, multi- and single-node consolidation share.

Mirrors pkg/controllers/disruption/consolidation.go (ShouldDisrupt, sortCandidates,
SetNodePoolTotals and the Balanced evaluator (:mod:`karpy.disruption.balanced`), computeConsolidation, computeSpotToSpotConsolidation, markConsolidated/IsConsolidated) and
pkg/controllers/provisioning/scheduling/nodeclaim.go RemoveInstanceTypeOptionsByPriceAndMinValues.

Every ``Unconsolidatable`` text is upstream's. Determinism: candidates are pre-ordered by name
(GetCandidates) and sorted *stably* by savings ratio, descending (upstream: unstable sort.Slice);
replacement options are price-ordered stably (ties keep catalogue order).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from karpy.cloudprovider.types import InstanceTypes
from karpy.disruption.balanced import BalancedEvaluator, Evaluator, NodePoolTotals
from karpy.disruption.helpers import ERR_CANDIDATE_DELETING, simulate_scheduling
from karpy.disruption.types import Candidate, Cluster, Command, condition_true
from karpy.featuregates import SPOT_TO_SPOT_CONSOLIDATION
from karpy.scheduling.labels import (CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT, LABEL_CAPACITY_TYPE,
                                     LABEL_INSTANCE_TYPE, LABEL_ZONE, OP_IN)
from karpy.scheduling.requirement import Requirement

__all__ = [
    "COMMAND_VALIDATION_DELAY",
    "MIN_INSTANCE_TYPES_FOR_SPOT_TO_SPOT_CONSOLIDATION",
    "Consolidation",
    "remove_instance_type_options_by_price_and_min_values",
]

#: consolidation.go commandValidationDelay
COMMAND_VALIDATION_DELAY = 15.0
#: consolidation.go MinInstanceTypesForSpotToSpotConsolidation
MIN_INSTANCE_TYPES_FOR_SPOT_TO_SPOT_CONSOLIDATION = 15
#: state/cluster.go: ConsolidationState is forcibly refreshed after five minutes
CONSOLIDATION_STATE_RESET = 300.0


def remove_instance_type_options_by_price_and_min_values(claim: Any, reqs: Any, max_price: float) -> str | None:
    """nodeclaim.go RemoveInstanceTypeOptionsByPriceAndMinValues: keep the types whose worst
    launch price (available offerings) is strictly below ``max_price``; then minValues must still
    hold (whatever the MinValuesPolicy). Returns the minValues error or None; mutates ``claim``."""
    wk = claim.well_known
    claim.instance_type_options = [it for it in claim.instance_type_options
                                   if it.offerings.available().worst_launch_price(reqs, wk) < max_price]
    _, _, err = InstanceTypes(claim.instance_type_options)._satisfies_min_values(reqs)
    return err


class Consolidation:
    """consolidation.go consolidation: the per-method "consolidated" cache and the shared steps."""

    name = "consolidation"
    reason = "Underutilized"
    disruption_class = "graceful"
    validates = True

    def __init__(self) -> None:
        self.last_consolidation_state: float | None = None
        #: consolidation.go evaluator: the noop one until the controller hands over the round's totals
        self.evaluator: Evaluator = Evaluator()

    def set_nodepool_totals(self, totals: dict[str, NodePoolTotals]) -> None:
        """consolidation.go SetNodePoolTotals: Balanced scoring against this round's totals."""
        self.evaluator = BalancedEvaluator(totals)

    # -- the "recently evaluated" cache (consolidation.go:89-97) -------------------------------
    def is_consolidated(self, cluster: Cluster) -> bool:
        return self.last_consolidation_state == cluster.consolidation_state

    def mark_consolidated(self, cluster: Cluster) -> None:
        self.last_consolidation_state = cluster.consolidation_state

    # -- filter and order -----------------------------------------------------------------------
    def should_disrupt(self, c: Candidate, cluster: Cluster) -> bool:
        """consolidation.go ShouldDisrupt (:100-136)."""
        if c.owned_by_static_nodepool():
            return False
        pool = c.nodepool.metadata.name

        def unconsolidatable(msg: str) -> bool:
            cluster.publish("Unconsolidatable", f"node/{c.name}", msg)
            return False

        if c.instance_type is None:
            return unconsolidatable(f'Instance Type "{c.labels().get(LABEL_INSTANCE_TYPE, "")}" not found')
        if LABEL_CAPACITY_TYPE not in c.labels():
            return unconsolidatable(f'Node does not have label "{LABEL_CAPACITY_TYPE}"')
        if LABEL_ZONE not in c.labels():
            return unconsolidatable(f'Node does not have label "{LABEL_ZONE}"')
        if c.nodepool.spec.disruption.consolidate_after == "Never":
            return unconsolidatable(f'NodePool "{pool}" has consolidation disabled')
        if c.is_empty():
            return False
        if c.nodepool.spec.disruption.consolidation_policy == "WhenEmpty":
            return unconsolidatable(f'NodePool "{pool}" has consolidation policy WhenEmpty, but node is not empty')
        return condition_true(c.nodeclaim, "Consolidatable")

    @staticmethod
    def sort_candidates(candidates: Sequence[Candidate]) -> list[Candidate]:
        """consolidation.go sortCandidates: savings ratio, descending (stable)."""
        return sorted(candidates, key=lambda c: -c.savings_ratio())

    def take_within_budgets(self, candidates: Sequence[Candidate], budgets: dict[str, int]
                            ) -> tuple[list[Candidate], bool]:
        """The budget loop of Emptiness and multi-node consolidation (emptiness.go:70-85,
        multinodeconsolidation.go:65-77): in ratio order, skip pools at 0, take and decrement;
        also whether any candidate was skipped for its budget."""
        taken: list[Candidate] = []
        constrained = False
        for c in self.sort_candidates(candidates):
            pool = c.nodepool.metadata.name
            if budgets.get(pool, 0) == 0:
                constrained = True
                continue
            taken.append(c)
            budgets[pool] -= 1
        return taken, constrained

    # -- computeConsolidation -------------------------------------------------------------------
    def compute_consolidation(self, cluster: Cluster, candidates: Sequence[Candidate]) -> Command | None:
        """consolidation.go computeConsolidation (:159-254): a delete or one-replacement command,
        or None (with the single-candidate ``Unconsolidatable`` event upstream publishes). A
        no-command answer for an unchanged cluster is remembered (:mod:`karpy.disruption.consolidationmemo`)."""
        memo = cluster.consolidation_memo
        key = memo.key(cluster, candidates) if memo is not None else None
        if key is not None:
            assert memo is not None
            events = memo.no_command(key, candidates)
            if events is not None:
                cluster.events.extend(events)
                return None
        start = len(cluster.events)
        cmd = self._compute_consolidation(cluster, candidates)
        if key is not None:
            assert memo is not None
            if cmd is None:
                memo.remember(key, candidates, cluster.events[start:])
            else:
                memo.forget(candidates)
        return cmd

    def _compute_consolidation(self, cluster: Cluster, candidates: Sequence[Candidate]) -> Command | None:
        single = len(candidates) == 1

        def unconsolidatable(msg: str) -> None:
            if single:
                cluster.publish("Unconsolidatable", f"node/{candidates[0].name}", msg)

        results = simulate_scheduling(cluster, candidates, consolidation=True)
        if results == ERR_CANDIDATE_DELETING or isinstance(results, str):
            return None
        if not results.all_non_pending_pods_scheduled():
            msg = results.non_pending_pod_scheduling_errors()
            unconsolidatable(msg[:1].upper() + msg[1:])
            return None
        if not results.new_nodeclaims:
            return Command(list(candidates), [], results)
        if len(results.new_nodeclaims) != 1:
            unconsolidatable(f"Can't remove without creating {len(results.new_nodeclaims)} candidates")
            return None
        candidate_price = sum(c.price for c in candidates)
        all_spot = all(c.capacity_type == CAPACITY_TYPE_SPOT for c in candidates)
        claim = results.new_nodeclaims[0]
        claim.instance_type_options = list(InstanceTypes(claim.instance_type_options).order_by_price(
            claim.requirements, claim.well_known))
        if all_spot and claim.requirements.get(LABEL_CAPACITY_TYPE).has(CAPACITY_TYPE_SPOT):
            return self._spot_to_spot(cluster, candidates, results, candidate_price)
        if not self._filter_by_price(cluster, candidates, claim, candidate_price):
            return None
        ct = claim.requirements.get(LABEL_CAPACITY_TYPE)
        if ct.has(CAPACITY_TYPE_SPOT) and ct.has(CAPACITY_TYPE_ON_DEMAND):
            claim.requirements = claim.requirements.copy()
            claim.requirements.add(Requirement(LABEL_CAPACITY_TYPE, OP_IN, (CAPACITY_TYPE_SPOT,)))
        return self._candidate_events(cluster, Command(list(candidates), [claim], results))

    def _spot_to_spot(self, cluster: Cluster, candidates: Sequence[Candidate], results: Any,
                      candidate_price: float) -> Command | None:
        """consolidation.go computeSpotToSpotConsolidation (:261-343)."""
        single = len(candidates) == 1

        def unconsolidatable(msg: str) -> None:
            if single:
                cluster.publish("Unconsolidatable", f"node/{candidates[0].name}", msg)

        if not cluster.feature_gates.get(SPOT_TO_SPOT_CONSOLIDATION, False):
            unconsolidatable("SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node")
            return None
        claim = results.new_nodeclaims[0]
        claim.requirements = claim.requirements.copy()
        claim.requirements.add(Requirement(LABEL_CAPACITY_TYPE, OP_IN, (CAPACITY_TYPE_SPOT,)))
        claim.instance_type_options = list(InstanceTypes(claim.instance_type_options).compatible(
            claim.requirements, claim.well_known))
        if not self._filter_by_price(cluster, candidates, claim, candidate_price):
            return None
        if not single:
            return self._candidate_events(cluster, Command(list(candidates), [claim], results))
        n = len(claim.instance_type_options)
        if n < MIN_INSTANCE_TYPES_FOR_SPOT_TO_SPOT_CONSOLIDATION:
            unconsolidatable(f"SpotToSpotConsolidation requires {MIN_INSTANCE_TYPES_FOR_SPOT_TO_SPOT_CONSOLIDATION} "
                             f"cheaper instance type options than the current candidate to consolidate, got {n}")
            return None
        cap = MIN_INSTANCE_TYPES_FOR_SPOT_TO_SPOT_CONSOLIDATION
        if claim.requirements.has_min_values():
            needed, _, _ = InstanceTypes(claim.instance_type_options)._satisfies_min_values(claim.requirements)
            cap = max(cap, needed)
        claim.instance_type_options = claim.instance_type_options[:cap]
        return self._candidate_events(cluster, Command(list(candidates), [claim], results))

    @staticmethod
    def _filter_by_price(cluster: Cluster, candidates: Sequence[Candidate], claim: Any, candidate_price: float) -> bool:
        """The price filter with its two single-candidate ``Unconsolidatable`` texts; False when
        nothing cheaper is left."""
        err = remove_instance_type_options_by_price_and_min_values(claim, claim.requirements, candidate_price)
        msg = f"Filtering by price: {err}" if err is not None else \
            ("Can't replace with a cheaper node" if not claim.instance_type_options else None)
        if msg is None:
            return True
        if len(candidates) == 1:
            cluster.publish("Unconsolidatable", f"node/{candidates[0].name}", msg)
        return False

    @staticmethod
    def _candidate_events(cluster: Cluster, cmd: Command) -> Command:
        """Command.EmitCandidateEvents: ``ConsolidationCandidate`` on each candidate."""
        for c in cmd.candidates:
            cluster.publish("ConsolidationCandidate", f"node/{c.name}",
                            f"Consolidation candidate: {cmd.string_for_node(c)} "
                            f"(savings: ${cmd.estimated_savings():.2f})")
        return cmd
