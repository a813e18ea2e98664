"""DynamicResources, for a cluster without DRA drivers.

Mirrors pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go (k8s v1.35; DRA is GA
and the plugin in the default profile after InterPodAffinity): PreFilter skips a pod without
``spec.resourceClaims``; for a pod with claims, Filter asks the allocator for devices on the node,
and with no DRA driver there are no ResourceSlices, so nothing can be allocated anywhere:
``cannot allocate all claims``, UnschedulableAndUnresolvable (``statusUnschedulable``), which
also makes preemption "not helpful". Claims already allocated, ResourceSlices, DeviceClasses and
DRA extended resources are not modelled (karpy simulates no DRA driver).
"""

from __future__ import annotations

from typing import Any, Optional

from ..framework import CycleState, Plugin
from ..nodeinfo import NodeInfo
from ..podinfo import PodInfo
from ..types import Code, Status, unresolvable

__all__ = ["DynamicResources", "ERR_CANNOT_ALLOCATE"]

#: dynamicresources.go Filter: the allocator found no devices for the pod's claims on the node
ERR_CANNOT_ALLOCATE = "cannot allocate all claims"


class DynamicResources(Plugin):
    """dynamicresources: a pod with resource claims fits no node (no ResourceSlices)."""

    name = "DynamicResources"
    has_pre_filter = True
    has_filter = True

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> tuple[Status, Optional[set[str]]]:
        if not (getattr(pod.spec, "resource_claims", None) or ()):
            return Status(Code.SKIP), None
        return Status(), None

    def filter(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> Status:
        return unresolvable(ERR_CANNOT_ALLOCATE)

    def filter_signature(self, state: CycleState, pod: PodInfo) -> Any:
        return ()
