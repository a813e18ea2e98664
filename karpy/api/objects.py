"""The kind registry: which ``(apiVersion, kind)`` karpy models, and with which class."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from pydantic import BaseModel

from karpy.api.billing import BillingProfile
from karpy.api.node import Node
from karpy.api.nodeclaim import NodeClaim
from karpy.api.nodeoverlay import NodeOverlay
from karpy.api.nodepool import NodePool
from karpy.api.pod import Pod
from karpy.api.poddisruptionbudget import PodDisruptionBudget
from karpy.api.podgroup import (CompositePodGroup, PodGroup, SchedulingPodGroup, SchedulingPodGroupV1Alpha3,
                                SchedulingWorkload, SchedulingWorkloadV1Alpha3, Workload)
from karpy.api.priorityclass import PriorityClass
from karpy.api.scenario import Scenario
from karpy.api.service import Service
from karpy.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
from karpy.api.workloads import CronJob, DaemonSet, Deployment, Job, ReplicaSet, ReplicationController, StatefulSet

__all__ = ["KINDS", "group_of", "lookup", "supported_versions"]

#: (apiVersion, kind) -> model class, for every kind karpy reads
KINDS: Mapping[tuple[str, str], type[BaseModel]] = MappingProxyType({
    (cls.API_VERSION, cls.KIND): cls
    for cls in (Pod, Node, NodePool, NodeClaim, NodeOverlay, PriorityClass, PodDisruptionBudget, PodGroup,
                Workload, Deployment, ReplicaSet, StatefulSet, Job, DaemonSet, Scenario,
                PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode, Service, ReplicationController,
                CronJob, BillingProfile, SchedulingWorkload, SchedulingPodGroup, CompositePodGroup,
                SchedulingWorkloadV1Alpha3, SchedulingPodGroupV1Alpha3)
})


def group_of(api_version: str) -> str:
    """The API group of an apiVersion (``"apps/v1"`` -> ``"apps"``, ``"v1"`` -> ``""``)."""
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def lookup(api_version: str, kind: str,
           extra_kinds: Mapping[tuple[str, str], type[BaseModel]] | None = None) -> type[BaseModel] | None:
    """The model class for ``apiVersion``/``kind``: the built-ins, then ``extra_kinds`` keyed by
    ``(group, kind)`` or ``(apiVersion, kind)``."""
    cls = KINDS.get((api_version, kind))
    if cls is not None:
        return cls
    if extra_kinds:
        return extra_kinds.get((group_of(api_version), kind)) or extra_kinds.get((api_version, kind))
    return None


def supported_versions(api_version: str, kind: str) -> list[str]:
    """The apiVersions karpy reads for a known group/kind (empty if the group/kind is unknown)."""
    group = group_of(api_version)
    return sorted(v for (v, k) in KINDS if k == kind and group_of(v) == group)
