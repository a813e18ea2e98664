"""The ``Balanced`` consolidation policy: a move must save enough per unit of disruption.

Mirrors pkg/controllers/disruption/balanced.go (NodePoolTotals, computeNodePoolTotals, ScoreMove,
EvaluateBalancedMove, the noop and balanced Evaluators with ApproveCommand, CanPassThreshold,
EmitMultiNodeEvents), types.go ScoreResult, apis/v1/nodepool.go BalancedK and the NodePool cost of
pkg/state/cost/cost.go (ClusterCost.GetNodepoolCost).

A move in a Balanced NodePool is approved when ``(savings / pool cost) / (disruption / pool
disruption) >= 1 / k`` with ``k = 2``: the share of the pool's cost it saves must be at least half
the share of the pool's disruption it causes. Non-Balanced pools always pass. The pool's cost is
ClusterCost's: every NodeClaim of the pool carrying the four necessary labels, priced at its
offering (falling back to the candidates' prices when that is 0); the pool's disruption is
``1 + Σ max(0, EvictionCost)`` over *every* node of the pool, candidates or not.

Upstream publishes no event for a rejection (metrics and a log line only). So that ``karpy explain``
can say why a node stayed, karpy records a ``ConsolidationScore`` entry on the candidate (single
node) or NodePool (multi-node) with upstream's score message and ``<`` in place of ``>=``; it is
karpy's rendering of the ``consolidation score`` log line, not an upstream event.
Determinism: per-pool results are evaluated in NodePool-name order (upstream: map order).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from karpy.disruption.types import PER_NODE_BASE_DISRUPTION_COST, Candidate, Cluster, Command, resolve_node_price
from karpy.scheduling.labels import LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_NODEPOOL, LABEL_ZONE
from karpy.state.cluster import StateNode
from karpy.utils import pod as podutils
from karpy.utils.disruption import eviction_cost

__all__ = [
    "BALANCED_K",
    "CONSOLIDATION_POLICY_BALANCED",
    "BalancedEvaluator",
    "Evaluator",
    "NodePoolTotals",
    "NoopEvaluator",
    "ScoreResult",
    "compute_move_disruption_cost",
    "compute_nodepool_totals",
    "evaluate_balanced_move",
    "is_balanced",
    "nodepool_cost",
    "node_disruption_cost",
    "score_move",
]

#: apis/v1/nodepool.go ConsolidationPolicyBalanced
CONSOLIDATION_POLICY_BALANCED = "Balanced"
#: apis/v1/nodepool.go BalancedK: a move passes when its score reaches 1/k
BALANCED_K = 2
#: state/cost/cost.go NecessaryLabels: a NodeClaim without them is not cost-tracked
NECESSARY_LABELS = (LABEL_INSTANCE_TYPE, LABEL_CAPACITY_TYPE, LABEL_ZONE, LABEL_NODEPOOL)
#: karpy's explain entry for a score (see the module docstring)
CONSOLIDATION_SCORE = "ConsolidationScore"
CONSOLIDATION_APPROVED = "ConsolidationApproved"


def is_balanced(nodepool: Any) -> bool:
    """nodepool.go ConsolidationPolicy.IsBalanced."""
    return bool(nodepool.spec.disruption.consolidation_policy == CONSOLIDATION_POLICY_BALANCED)


@dataclass(frozen=True)
class NodePoolTotals:
    """balanced.go NodePoolTotals."""

    total_cost: float = 0.0
    total_disruption_cost: float = 0.0


@dataclass(frozen=True)
class ScoreResult:
    """types.go ScoreResult."""

    savings_fraction: float = 0.0
    disruption_fraction: float = 0.0
    k: int = BALANCED_K

    def score(self) -> float:
        """savings / disruption; 0 for non-positive savings, +Inf for zero disruption."""
        if self.savings_fraction <= 0:
            return 0.0
        if self.disruption_fraction == 0:
            return math.inf
        return self.savings_fraction / self.disruption_fraction

    def threshold(self) -> float:
        return 1.0 / self.k

    def approved(self) -> bool:
        return self.score() >= self.threshold()

    def message(self) -> str:
        """events.go consolidationScoreMessage (``<`` when rejected, see the module docstring)."""
        op = ">=" if self.approved() else "<"
        return (f"score {self.score():.2f} {op} threshold {self.threshold():.2f} (k: {self.k}, "
                f"savings {self.savings_fraction * 100:.1f}%, disruption {self.disruption_fraction * 100:.1f}%)")


def node_disruption_cost(sn: StateNode) -> float:
    """statenode.go DisruptionCost: 1 + Σ positive EvictionCost of the node's non-DaemonSet pods."""
    return PER_NODE_BASE_DISRUPTION_COST + sum(c for p in sn.pods if not podutils.is_owned_by_daemonset(p)
                                               if (c := eviction_cost(p)) > 0)


def nodepool_cost(cluster: Cluster, nodepool: Any) -> float:
    """cost.go GetNodepoolCost: Σ offering price of the pool's NodeClaims that carry every
    NecessaryLabel (their instance type looked up in the pool's instance types; unknown → 0)."""
    name = nodepool.metadata.name
    by_name: dict[str, Any] | None = None
    total = 0.0
    for sn in cluster.state.nodes:
        claim = sn.nodeclaim
        labels = (claim.metadata.labels or {}) if claim is not None else {}
        if labels.get(LABEL_NODEPOOL) != name or any(k not in labels for k in NECESSARY_LABELS):
            continue
        if by_name is None:
            by_name = {it.name: it for it in cluster.instance_types(nodepool)}
        total += resolve_node_price(sn, by_name.get(labels[LABEL_INSTANCE_TYPE]))
    return total


def compute_nodepool_totals(cluster: Cluster, all_candidates: Sequence[Candidate],
                            all_nodes: Iterable[StateNode], cluster_cost: bool = True) -> dict[str, NodePoolTotals]:
    """balanced.go computeNodePoolTotals: totals for each pool that has a candidate. The cost is
    the cluster's pool cost when positive (``cluster_cost``), else Σ candidate prices; the
    disruption sums every node of the pool (candidates by their RescheduleDisruptionCost)."""
    by_name = {c.name: c for c in all_candidates}
    fallback: dict[str, float] = {}
    pools: dict[str, Any] = {}
    for c in all_candidates:
        pool = c.nodepool.metadata.name
        pools.setdefault(pool, c.nodepool)
        fallback[pool] = fallback.get(pool, 0.0) + c.price
    disruption: dict[str, float] = {}
    for sn in all_nodes:
        pool = sn.labels().get(LABEL_NODEPOOL)
        if pool is None:
            continue
        cand = by_name.get(sn.name)
        disruption[pool] = disruption.get(pool, 0.0) + (cand.reschedule_disruption_cost if cand is not None
                                                        else node_disruption_cost(sn))
    out = {}
    for pool in sorted(pools):
        total = fallback[pool]
        if cluster_cost:
            cc = nodepool_cost(cluster, pools[pool])
            if cc > 0:
                total = cc
        out[pool] = NodePoolTotals(total, disruption.get(pool, 0.0))
    return out


def score_move(savings: float, disruption_cost: float, totals: NodePoolTotals, k: int = BALANCED_K) -> ScoreResult:
    """balanced.go ScoreMove; zero totals give a zero (rejected) score."""
    if totals.total_cost <= 0 or totals.total_disruption_cost <= 0:
        return ScoreResult(k=k)
    return ScoreResult(savings / totals.total_cost, disruption_cost / totals.total_disruption_cost, k)


def compute_move_disruption_cost(candidates: Sequence[Candidate]) -> float:
    """balanced.go ComputeMoveDisruptionCost."""
    return sum(c.reschedule_disruption_cost for c in candidates)


def pool_disruption_cost(cmd: Command, pool: str) -> float:
    """types.go Command.PoolDisruptionCost (computed from the candidates)."""
    return sum(c.reschedule_disruption_cost for c in cmd.candidates if c.nodepool.metadata.name == pool)


def evaluate_balanced_move(cmd: Command, totals: dict[str, NodePoolTotals]) -> tuple[bool, dict[str, ScoreResult]]:
    """balanced.go EvaluateBalancedMove: every Balanced pool of the move must approve (a
    cross-pool move splits the net savings by each pool's share of the source cost)."""
    if not cmd.candidates:
        return False, {}
    by_pool: dict[str, list[Candidate]] = {}
    for c in cmd.candidates:
        by_pool.setdefault(c.nodepool.metadata.name, []).append(c)
    savings = cmd.estimated_savings()
    source = cmd.source_cost()
    approved = True
    per_pool: dict[str, ScoreResult] = {}
    for pool in sorted(by_pool):
        cands = by_pool[pool]
        if not is_balanced(cands[0].nodepool):
            continue
        pool_savings = savings
        if source > 0 and len(by_pool) > 1:
            pool_savings = savings * (sum(c.price for c in cands) / source)
        result = score_move(pool_savings, pool_disruption_cost(cmd, pool), totals.get(pool, NodePoolTotals()))
        per_pool[pool] = result
        approved = approved and result.approved()
    return approved, per_pool


class Evaluator:
    """balanced.go Evaluator; this base is the noopEvaluator (always approves)."""

    def approve_command(self, cluster: Cluster, cmd: Command) -> tuple[bool, dict[str, ScoreResult]]:
        return True, {}

    def can_pass_threshold(self, c: Candidate) -> bool:
        return True

    def emit_multi_node_events(self, cluster: Cluster, cmd: Command, per_pool: dict[str, ScoreResult],
                               approved: bool) -> None:
        return None


NoopEvaluator = Evaluator


class BalancedEvaluator(Evaluator):
    """balanced.go balancedEvaluator over one round's NodePool totals."""

    def __init__(self, totals: dict[str, NodePoolTotals]) -> None:
        self.totals = dict(totals)

    def approve_command(self, cluster: Cluster, cmd: Command) -> tuple[bool, dict[str, ScoreResult]]:
        """ApproveCommand: a single-candidate move of a Balanced pool gets ``ConsolidationApproved``
        (karpy also records the rejected score, see the module docstring)."""
        approved, per_pool = evaluate_balanced_move(cmd, self.totals)
        if len(cmd.candidates) == 1:
            c = cmd.candidates[0]
            result = per_pool.get(c.nodepool.metadata.name)
            if result is not None:
                cluster.publish(CONSOLIDATION_APPROVED if result.approved() else CONSOLIDATION_SCORE,
                                f"node/{c.name}", result.message())
        return approved, per_pool

    def emit_multi_node_events(self, cluster: Cluster, cmd: Command, per_pool: dict[str, ScoreResult],
                               approved: bool) -> None:
        """EmitMultiNodeEvents: ``ConsolidationApproved`` on each approving NodePool."""
        for pool in sorted(per_pool):
            result = per_pool[pool]
            cluster.publish(CONSOLIDATION_APPROVED if result.approved() else CONSOLIDATION_SCORE,
                            f"nodepool/{pool}", result.message())

    def can_pass_threshold(self, c: Candidate) -> bool:
        """CanPassThreshold: the candidate's best case (a full delete) must pass; non-Balanced
        pools, pools without totals and zero-cost pools always pass."""
        if not is_balanced(c.nodepool):
            return True
        totals = self.totals.get(c.nodepool.metadata.name)
        if totals is None or totals.total_cost <= 0:
            return True
        return score_move(c.price, c.reschedule_disruption_cost, totals).approved()
