"""Gang-scheduling groups.

Two APIs are modelled:

* **Coscheduling** (kubernetes-sigs/scheduler-plugins): ``scheduling.x-k8s.io/v1alpha1`` ``PodGroup``
  with ``spec.minMember``, ``minResources``, ``scheduleTimeoutSeconds``. A pod joins the group named
  by its label ``scheduling.x-k8s.io/pod-group`` (current plugins) or, for older manifests,
  ``pod-group.scheduling.sigs.k8s.io``; the first wins when both are set.
* **KEP-4671 workload-aware scheduling** (k8s 1.35 alpha): ``scheduling.k8s.io/v1alpha1`` ``Workload``
  with ``spec.podGroups[]{name, policy: basic{} | gang{minCount}}``. A pod joins through
  ``spec.workloadRef{name, podGroup, podGroupReplicaKey}``; each replica key is its own gang.

:func:`pod_group_of` gives one uniform answer for both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import Field, field_validator, model_validator

from karpy.api.meta import KubeModel, OwnerReference, ResourceQuantities, TypedObject
from karpy.api.pod import Pod

__all__ = [
    "POD_GROUP_LABEL",
    "POD_GROUP_LABEL_LEGACY",
    "GangPolicy",
    "GroupRef",
    "PodGroup",
    "PodGroupPolicy",
    "PodGroupSpec",
    "Workload",
    "WorkloadPodGroup",
    "WorkloadSpec",
    "pod_group_of",
]

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
POD_GROUP_LABEL_LEGACY = "pod-group.scheduling.sigs.k8s.io"


class PodGroupSpec(KubeModel):
    """scheduling.x-k8s.io/v1alpha1 PodGroupSpec."""

    min_member: int = Field(default=0, ge=0)
    min_resources: ResourceQuantities = Field(default_factory=dict)
    schedule_timeout_seconds: int | None = None


class PodGroup(TypedObject):
    """scheduling.x-k8s.io/v1alpha1 PodGroup (coscheduling plugin)."""

    API_VERSION = "scheduling.x-k8s.io/v1alpha1"
    KIND = "PodGroup"

    spec: PodGroupSpec = Field(default_factory=PodGroupSpec)



class GangPolicy(KubeModel):
    """scheduling.k8s.io/v1alpha1 GangSchedulingPolicy."""

    min_count: int = Field(ge=1)


class PodGroupPolicy(KubeModel):
    """scheduling.k8s.io/v1alpha1 PodGroupPolicy: exactly one of ``basic`` / ``gang``."""

    basic: dict[str, Any] | None = None
    gang: GangPolicy | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> PodGroupPolicy:
        if (self.basic is None) == (self.gang is None):
            raise ValueError("exactly one of 'basic' or 'gang' must be set")
        return self


class WorkloadPodGroup(KubeModel):
    """scheduling.k8s.io/v1alpha1 PodGroup entry of a Workload."""

    name: str
    policy: PodGroupPolicy


class WorkloadSpec(KubeModel):
    """scheduling.k8s.io/v1alpha1 WorkloadSpec."""

    controller_ref: OwnerReference | None = None
    pod_groups: list[WorkloadPodGroup] = Field(default_factory=list)


class Workload(TypedObject):
    """scheduling.k8s.io/v1alpha1 Workload (KEP-4671)."""

    API_VERSION = "scheduling.k8s.io/v1alpha1"
    KIND = "Workload"

    spec: WorkloadSpec = Field(default_factory=WorkloadSpec)

    def group(self, name: str) -> WorkloadPodGroup | None:
        """The pod group entry called ``name``."""
        for pg in self.spec.pod_groups:
            if pg.name == name:
                return pg
        return None


@dataclass(frozen=True)
class GroupRef:
    """Which gang a pod belongs to: ``kind`` is ``"PodGroup"`` (coscheduling) or ``"Workload"``;
    ``key`` identifies one gang (``ns/name`` or ``ns/workload/podGroup[/replicaKey]``)."""

    kind: str
    namespace: str
    name: str
    pod_group: str | None = None
    replica_key: str | None = None

    @property
    def key(self) -> str:
        parts = [self.namespace, self.name]
        if self.pod_group is not None:
            parts.append(self.pod_group)
        if self.replica_key:
            parts.append(self.replica_key)
        return "/".join(parts)


def pod_group_of(pod: Pod) -> GroupRef | None:
    """The gang ``pod`` belongs to, or ``None``: ``spec.workloadRef`` first, then the coscheduling
    labels (``scheduling.x-k8s.io/pod-group``, then ``pod-group.scheduling.sigs.k8s.io``)."""
    ns = pod.metadata.namespace
    ref = pod.spec.workload_ref
    if ref is not None:
        return GroupRef("Workload", ns, ref.name, ref.pod_group, ref.pod_group_replica_key)
    labels = pod.metadata.labels
    name = labels.get(POD_GROUP_LABEL) or labels.get(POD_GROUP_LABEL_LEGACY)
    if name:
        return GroupRef("PodGroup", ns, name)
    return None
