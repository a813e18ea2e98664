"""scheduling.k8s.io/v1 PriorityClass."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from karpy.api.meta import TypedObject

__all__ = ["PriorityClass", "SYSTEM_CLUSTER_CRITICAL", "SYSTEM_NODE_CRITICAL", "SYSTEM_PRIORITY_CLASS_NAMES"]

#: HighestUserDefinablePriority (pkg/apis/scheduling/types.go); system classes go above it
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
#: the PriorityClasses every cluster has (pkg/apis/scheduling/types.go SystemClusterCritical, ...)
SYSTEM_CLUSTER_CRITICAL = "system-cluster-critical"
SYSTEM_NODE_CRITICAL = "system-node-critical"
SYSTEM_PRIORITY_CLASS_NAMES = frozenset({SYSTEM_CLUSTER_CRITICAL, SYSTEM_NODE_CRITICAL})


class PriorityClass(TypedObject):
    """scheduling.k8s.io/v1 PriorityClass (``preemptionPolicy`` defaults to PreemptLowerPriority)."""

    API_VERSION = "scheduling.k8s.io/v1"
    KIND = "PriorityClass"
    CLUSTER_SCOPED = True

    value: int = Field(ge=-(2**31), le=2_000_001_000)
    global_default: bool = False
    preemption_policy: Literal["PreemptLowerPriority", "Never"] = "PreemptLowerPriority"
    description: str = ""

