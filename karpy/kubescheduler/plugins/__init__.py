"""Default kube-scheduler plugins and the default profile.

Mirrors pkg/scheduler/apis/config/v1/default_plugins.go (order and weights)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from .dynamicresources import DynamicResources
from .basic import (ImageLocality, NodeAffinity, NodeName, NodePorts, NodeUnschedulable, SchedulingGates,
                    TaintToleration, priority_sort_less)
from .interpodaffinity import InterPodAffinity
from .noderesources import BalancedAllocation, NodeResourcesFit, ScoringStrategy
from .podtopologyspread import PodTopologySpread

DEFAULT_WEIGHTS = {
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "PodTopologySpread": 2,
    "InterPodAffinity": 2,
    "NodeResourcesFit": 1,
    "NodeResourcesBalancedAllocation": 1,
    "ImageLocality": 1,
}


def default_plugins(scoring_strategy: Optional[ScoringStrategy] = None, taint_message_style: str = "1.35",
                    default_spread_selector: Optional[Callable[[Any], Any]] = None) -> list[Any]:
    """The default profile in MultiPoint order (volume plugins omitted: karpy models no volumes)."""
    return [
        SchedulingGates(),
        NodeUnschedulable(),
        NodeName(),
        TaintToleration(taint_message_style),
        NodeAffinity(),
        NodePorts(),
        NodeResourcesFit(scoring_strategy),
        PodTopologySpread(default_selector=default_spread_selector),
        InterPodAffinity(),
        DynamicResources(),
        BalancedAllocation(),
        ImageLocality(),
    ]


__all__ = [
    "DEFAULT_WEIGHTS", "BalancedAllocation", "DynamicResources", "ImageLocality", "InterPodAffinity", "NodeAffinity", "NodeName",
    "NodePorts", "NodeResourcesFit", "NodeUnschedulable", "PodTopologySpread", "SchedulingGates", "ScoringStrategy",
    "TaintToleration", "default_plugins", "priority_sort_less",
]
