"""Karpenter's disruption controller (upstream pkg/controllers/disruption): one module per
method — :mod:`.emptiness`, :mod:`.staticdrift`, :mod:`.drift`, :mod:`.multinodeconsolidation`,
:mod:`.singlenodeconsolidation` — with the shared :mod:`.consolidation`, :mod:`.balanced` (the
Balanced policy's scoring), :mod:`.budgets`,
:mod:`.types` (candidates, commands), :mod:`.helpers` (SimulateScheduling), :mod:`.validation`,
:mod:`.queue` (orchestration) and :mod:`.controller` (the 10 s loop on the virtual clock). Names
resolve lazily (the methods load the provisioning engine and the API models)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._exports import lazy_exports

_EXPORTS = {
    **dict.fromkeys(("BALANCED_K", "NodePoolTotals", "ScoreResult", "score_move"), "balanced"),
    **dict.fromkeys(("REASON_DRIFTED", "REASON_EMPTY", "REASON_UNDERUTILIZED", "build_disruption_budget_mapping"), "budgets"),
    "DisruptionController": "controller",
    "Drift": "drift",
    "Emptiness": "emptiness",
    "MultiNodeConsolidation": "multinodeconsolidation",
    "SingleNodeConsolidation": "singlenodeconsolidation",
    "StaticDrift": "staticdrift",
    **dict.fromkeys(("Candidate", "Cluster", "Command"), "types"),
}

__all__ = [
    "BALANCED_K", "Candidate", "Cluster", "Command", "DisruptionController", "Drift", "Emptiness",
    "MultiNodeConsolidation", "NodePoolTotals", "REASON_DRIFTED", "REASON_EMPTY", "REASON_UNDERUTILIZED",
    "ScoreResult", "SingleNodeConsolidation", "StaticDrift", "build_disruption_budget_mapping", "score_move",
]

if TYPE_CHECKING:  # pragma: no cover
    from karpy.disruption.balanced import BALANCED_K, NodePoolTotals, ScoreResult, score_move
    from karpy.disruption.budgets import REASON_DRIFTED, REASON_EMPTY, REASON_UNDERUTILIZED, build_disruption_budget_mapping
    from karpy.disruption.controller import DisruptionController
    from karpy.disruption.drift import Drift
    from karpy.disruption.emptiness import Emptiness
    from karpy.disruption.multinodeconsolidation import MultiNodeConsolidation
    from karpy.disruption.singlenodeconsolidation import SingleNodeConsolidation
    from karpy.disruption.staticdrift import StaticDrift
    from karpy.disruption.types import Candidate, Cluster, Command

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
