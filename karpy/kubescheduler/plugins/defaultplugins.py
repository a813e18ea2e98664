"""The default profile: pkg/scheduler/apis/config/v1/default_plugins.go (order and weights)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from karpy.kubescheduler.plugins.basic import (ImageLocality, NodeAffinity, NodeName, NodePorts, NodeUnschedulable,
                                               SchedulingGates, TaintToleration)
from karpy.kubescheduler.plugins.dynamicresources import DynamicResources
from karpy.kubescheduler.plugins.interpodaffinity import InterPodAffinity
from karpy.kubescheduler.plugins.noderesources import BalancedAllocation, NodeResourcesFit, ScoringStrategy
from karpy.kubescheduler.plugins.podtopologyspread import PodTopologySpread

__all__ = ["DEFAULT_WEIGHTS", "default_plugins"]

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
