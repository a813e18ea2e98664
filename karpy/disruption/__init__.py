"""Karpenter's disruption controller (upstream pkg/controllers/disruption): one module per
method — :mod:`.emptiness`, :mod:`.staticdrift`, :mod:`.drift`, :mod:`.multinodeconsolidation`,
:mod:`.singlenodeconsolidation` — with the shared :mod:`.consolidation`, :mod:`.balanced` (the
Balanced policy's scoring), :mod:`.budgets`,
:mod:`.types` (candidates, commands), :mod:`.helpers` (SimulateScheduling), :mod:`.validation`,
:mod:`.queue` (orchestration) and :mod:`.controller` (the 10 s loop on the virtual clock)."""

from karpy.disruption.balanced import BALANCED_K, NodePoolTotals, ScoreResult, score_move
from karpy.disruption.budgets import (REASON_DRIFTED, REASON_EMPTY, REASON_UNDERUTILIZED,
                                      build_disruption_budget_mapping)
from karpy.disruption.controller import DisruptionController
from karpy.disruption.drift import Drift
from karpy.disruption.emptiness import Emptiness
from karpy.disruption.multinodeconsolidation import MultiNodeConsolidation
from karpy.disruption.singlenodeconsolidation import SingleNodeConsolidation
from karpy.disruption.staticdrift import StaticDrift
from karpy.disruption.types import Candidate, Cluster, Command

__all__ = ["BALANCED_K", "NodePoolTotals", "ScoreResult", "score_move", "Candidate", "Cluster", "Command", "DisruptionController", "Drift", "Emptiness", "MultiNodeConsolidation",
           "REASON_DRIFTED", "REASON_EMPTY", "REASON_UNDERUTILIZED", "SingleNodeConsolidation", "StaticDrift",
           "build_disruption_budget_mapping"]
