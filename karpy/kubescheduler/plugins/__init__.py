"""Default kube-scheduler plugins (pkg/scheduler/framework/plugins) and the default profile
(:mod:`.defaultplugins`). Names resolve lazily (the plugins load the API models)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._exports import lazy_exports

_EXPORTS = {
    **dict.fromkeys(("ImageLocality", "NodeAffinity", "NodeName", "NodePorts", "NodeUnschedulable", "SchedulingGates",
                     "TaintToleration", "priority_sort_less"), "basic"),
    **dict.fromkeys(("DEFAULT_WEIGHTS", "default_plugins"), "defaultplugins"),
    "DynamicResources": "dynamicresources",
    "InterPodAffinity": "interpodaffinity",
    **dict.fromkeys(("BalancedAllocation", "NodeResourcesFit", "ScoringStrategy"), "noderesources"),
    "PodTopologySpread": "podtopologyspread",
}

__all__ = [
    "BalancedAllocation", "DEFAULT_WEIGHTS", "DynamicResources", "ImageLocality", "InterPodAffinity", "NodeAffinity",
    "NodeName", "NodePorts", "NodeResourcesFit", "NodeUnschedulable", "PodTopologySpread", "SchedulingGates",
    "ScoringStrategy", "TaintToleration", "default_plugins", "priority_sort_less",
]

if TYPE_CHECKING:  # pragma: no cover
    from karpy.kubescheduler.plugins.basic import (ImageLocality, NodeAffinity, NodeName, NodePorts, NodeUnschedulable,
                                                   SchedulingGates, TaintToleration, priority_sort_less)
    from karpy.kubescheduler.plugins.defaultplugins import DEFAULT_WEIGHTS, default_plugins
    from karpy.kubescheduler.plugins.interpodaffinity import InterPodAffinity
    from karpy.kubescheduler.plugins.noderesources import BalancedAllocation, NodeResourcesFit, ScoringStrategy
    from karpy.kubescheduler.plugins.podtopologyspread import PodTopologySpread

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
