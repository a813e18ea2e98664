"""Gang-scheduling groups.

Two APIs are modelled:

* **Coscheduling** (kubernetes-sigs/scheduler-plugins): ``scheduling.x-k8s.io/v1alpha1`` ``PodGroup``
  with ``spec.minMember``, ``minResources``, ``scheduleTimeoutSeconds``. A pod joins the group named
  by its label ``scheduling.x-k8s.io/pod-group`` (current plugins) or, for older manifests,
  ``pod-group.scheduling.sigs.k8s.io``; the first wins when both are set.
* **Kubernetes 1.37** (GenericWorkload beta): ``scheduling.k8s.io/v1beta1`` ``Workload`` (a template
  holder: ``podGroupTemplates`` / ``compositePodGroupTemplates``) and ``PodGroup`` (one gang:
  ``schedulingPolicy``, ``priority``, ``disruptionMode``, ``schedulingConstraints.topology``...),
  ``v1alpha3`` ``CompositePodGroup``; a pod joins with ``spec.schedulingGroup.podGroupName``
  (:func:`scheduling_group_of`).
* **KEP-4671 workload-aware scheduling** (k8s 1.35 alpha, removed in 1.36): ``scheduling.k8s.io/v1alpha1`` ``Workload``
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
    "POD_GROUP_INITIALLY_SCHEDULED",
    "PREEMPT_LOWER_PRIORITY",
    "PREEMPT_NEVER",
    "REASON_SCHEDULED",
    "REASON_SCHEDULER_ERROR",
    "REASON_UNSCHEDULABLE",
    "CompositeGangSchedulingPolicy",
    "CompositePodGroup",
    "CompositePodGroupSpec",
    "CompositePodGroupTemplate",
    "CompositeSchedulingPolicy",
    "DisruptionMode",
    "GangSchedulingPolicy",
    "PodGroupStatus",
    "PodGroupTemplate",
    "SchedulingConstraints",
    "SchedulingPodGroup",
    "SchedulingPodGroupSpec",
    "SchedulingPodGroupV1Alpha3",
    "SchedulingPolicy",
    "SchedulingWorkload",
    "SchedulingWorkloadSpec",
    "SchedulingWorkloadV1Alpha3",
    "TopologyConstraint",
    "WorkloadReference",
    "group_reference_errors",
    "scheduling_group_of",
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


# -- Kubernetes 1.37: scheduling.k8s.io/v1beta1 Workload and PodGroup, v1alpha3 CompositePodGroup ------

#: PodGroup condition type and reasons (scheduling/v1beta1/types.go)
POD_GROUP_INITIALLY_SCHEDULED = "PodGroupInitiallyScheduled"
POD_GROUP_DISRUPTION_TARGET = "DisruptionTarget"
REASON_SCHEDULED = "Scheduled"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
PREEMPT_NEVER = "Never"
#: types.go WorkloadMaxPodGroupTemplates, WorkloadMaxTreeDepth
WORKLOAD_MAX_POD_GROUP_TEMPLATES = 8
WORKLOAD_MAX_TREE_DEPTH = 4


class GangSchedulingPolicy(KubeModel):
    """scheduling/v1beta1 GangSchedulingPolicy: ``minCount`` pods must be placed together (mutable)."""

    min_count: int = Field(ge=1)


class SchedulingPolicy(KubeModel):
    """scheduling/v1beta1 PodGroupSchedulingPolicy: exactly one of ``basic`` / ``gang``."""

    basic: dict[str, Any] | None = None
    gang: GangSchedulingPolicy | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> SchedulingPolicy:
        if (self.basic is None) == (self.gang is None):
            raise ValueError("exactly one of 'basic' or 'gang' must be set")
        return self


class CompositeGangSchedulingPolicy(KubeModel):
    """scheduling CompositeGangSchedulingPolicy: ``minGroupCount`` child groups must be placed."""

    min_group_count: int = Field(ge=1)


class CompositeSchedulingPolicy(KubeModel):
    """scheduling CompositePodGroupSchedulingPolicy: exactly one of ``basic`` / ``gang``."""

    basic: dict[str, Any] | None = None
    gang: CompositeGangSchedulingPolicy | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> CompositeSchedulingPolicy:
        if (self.basic is None) == (self.gang is None):
            raise ValueError("exactly one of 'basic' or 'gang' must be set")
        return self


class TopologyConstraint(KubeModel):
    """scheduling/v1beta1 TopologyConstraint: all pods colocated in one domain of ``key``."""

    key: str


class SchedulingConstraints(KubeModel):
    """scheduling/v1beta1 PodGroupSchedulingConstraints (TopologyAwareWorkloadScheduling; one constraint)."""

    topology: list[TopologyConstraint] = Field(default_factory=list)


class DisruptionMode(KubeModel):
    """scheduling/v1beta1 DisruptionMode: ``single{}`` (default) or ``all{}``."""

    single: dict[str, Any] | None = None
    all: dict[str, Any] | None = None

    @property
    def is_all(self) -> bool:
        return self.all is not None


class WorkloadReference(KubeModel):
    """scheduling/v1beta1 WorkloadReference: the Workload template a PodGroup was made from."""

    workload_name: str
    template_name: str


class _GroupFields(KubeModel):
    """The fields a PodGroupTemplate, a PodGroup spec and a CompositePodGroup spec share."""

    scheduling_constraints: SchedulingConstraints | None = None
    disruption_mode: DisruptionMode | None = None
    priority_class_name: str | None = None
    priority: int | None = None
    preemption_policy: str | None = None


class PodGroupTemplate(_GroupFields):
    """scheduling/v1beta1 PodGroupTemplate (a Workload's template for PodGroup objects)."""

    name: str
    scheduling_policy: SchedulingPolicy
    resource_claims: list[dict[str, Any]] = Field(default_factory=list)


class CompositePodGroupTemplate(_GroupFields):
    """scheduling/v1beta1 CompositePodGroupTemplate (CompositePodGroup gate): a template node of the
    workload tree holding child pod group or composite templates."""

    name: str
    scheduling_policy: CompositeSchedulingPolicy
    pod_group_templates: list[PodGroupTemplate] = Field(default_factory=list)
    composite_pod_group_templates: list[CompositePodGroupTemplate] = Field(default_factory=list)


class SchedulingWorkloadSpec(KubeModel):
    """scheduling/v1beta1 WorkloadSpec: exactly one of the two template lists."""

    controller_ref: dict[str, Any] | None = None
    pod_group_templates: list[PodGroupTemplate] = Field(default_factory=list)
    composite_pod_group_templates: list[CompositePodGroupTemplate] = Field(default_factory=list)


class SchedulingWorkload(TypedObject):
    """scheduling.k8s.io/v1beta1 Workload (k8s 1.37): a template holder; the scheduler schedules
    the PodGroup objects made from it, not the Workload."""

    API_VERSION = "scheduling.k8s.io/v1beta1"
    KIND = "Workload"

    spec: SchedulingWorkloadSpec = Field(default_factory=SchedulingWorkloadSpec)

    def template(self, name: str) -> PodGroupTemplate | CompositePodGroupTemplate | None:
        """The template called ``name`` anywhere in the tree."""
        todo: list[Any] = [*self.spec.pod_group_templates, *self.spec.composite_pod_group_templates]
        while todo:
            t = todo.pop(0)
            if t.name == name:
                return t  # type: ignore[no-any-return]
            if isinstance(t, CompositePodGroupTemplate):
                todo.extend([*t.pod_group_templates, *t.composite_pod_group_templates])
        return None


class SchedulingPodGroupSpec(_GroupFields):
    """scheduling/v1beta1 PodGroupSpec."""

    parent_composite_pod_group_name: str | None = None
    workload_ref: WorkloadReference | None = None
    scheduling_policy: SchedulingPolicy
    resource_claims: list[dict[str, Any]] = Field(default_factory=list)


class PodGroupStatus(KubeModel):
    """scheduling/v1beta1 PodGroupStatus."""

    conditions: list[dict[str, Any]] = Field(default_factory=list)


class SchedulingPodGroup(TypedObject):
    """scheduling.k8s.io/v1beta1 PodGroup (k8s 1.37): one gang; pods join with
    ``spec.schedulingGroup.podGroupName``."""

    API_VERSION = "scheduling.k8s.io/v1beta1"
    KIND = "PodGroup"

    spec: SchedulingPodGroupSpec
    status: PodGroupStatus = Field(default_factory=PodGroupStatus)

    @property
    def min_count(self) -> int | None:
        """The gang's minCount; None for a basic policy."""
        gang = self.spec.scheduling_policy.gang
        return None if gang is None else gang.min_count


class CompositePodGroupSpec(_GroupFields):
    """scheduling/v1alpha3 CompositePodGroupSpec."""

    parent_composite_pod_group_name: str | None = None
    workload_ref: WorkloadReference
    scheduling_policy: CompositeSchedulingPolicy


class CompositePodGroup(TypedObject):
    """scheduling.k8s.io/v1alpha3 CompositePodGroup (CompositePodGroup gate): an inner node of a
    workload's group tree; ``minGroupCount`` children must be placed."""

    API_VERSION = "scheduling.k8s.io/v1alpha3"
    KIND = "CompositePodGroup"

    spec: CompositePodGroupSpec
    status: PodGroupStatus = Field(default_factory=PodGroupStatus)


class SchedulingWorkloadV1Alpha3(SchedulingWorkload):
    """scheduling.k8s.io/v1alpha3 Workload (same shape as v1beta1 in 1.37)."""

    API_VERSION = "scheduling.k8s.io/v1alpha3"


class SchedulingPodGroupV1Alpha3(SchedulingPodGroup):
    """scheduling.k8s.io/v1alpha3 PodGroup (same shape as v1beta1 in 1.37)."""

    API_VERSION = "scheduling.k8s.io/v1alpha3"


def scheduling_group_of(pod: Pod) -> str | None:
    """``namespace/name`` of the v1beta1 PodGroup ``pod`` joins (``spec.schedulingGroup``), or None."""
    sg = pod.spec.scheduling_group
    if sg is None or not sg.pod_group_name:
        return None
    return f"{pod.metadata.namespace}/{sg.pod_group_name}"


def group_reference_errors(workloads: list[SchedulingWorkload], pod_groups: list[SchedulingPodGroup],
                           composites: list[CompositePodGroup]) -> list[tuple[Any, str, str]]:
    """``(object, field path, message)`` for each 1.37 group reference karpy refuses as bad input: a
    ``workloadRef`` naming a Workload or template the manifests do not define, and a cycle in the
    ``parentCompositePodGroupName`` chain (upstream's workload forest finds no root for it)."""
    out: list[tuple[Any, str, str]] = []
    by_name = {(w.metadata.namespace, w.metadata.name): w for w in workloads}
    groups: list[SchedulingPodGroup | CompositePodGroup] = [*pod_groups, *composites]
    for obj in groups:
        ref = obj.spec.workload_ref
        if ref is None:
            continue
        w = by_name.get((obj.metadata.namespace, ref.workload_name))
        if w is None:
            out.append((obj, "spec.workloadRef.workloadName",
                        f'no scheduling.k8s.io/v1beta1 Workload "{ref.workload_name}" in namespace '
                        f'"{obj.metadata.namespace}" in the manifests'))
        elif w.template(ref.template_name) is None:
            out.append((obj, "spec.workloadRef.templateName",
                        f'Workload "{ref.workload_name}" has no template "{ref.template_name}"'))
    parents = {(c.metadata.namespace, c.metadata.name): c.spec.parent_composite_pod_group_name for c in composites}
    for c in composites:
        ns, seen, name = c.metadata.namespace, [c.metadata.name], c.spec.parent_composite_pod_group_name
        while name is not None and len(seen) <= len(parents):
            if name in seen:
                chain = " -> ".join([*seen[seen.index(name):], name])
                out.append((c, "spec.parentCompositePodGroupName", f"CompositePodGroup cycle: {chain}"))
                break
            seen.append(name)
            name = parents.get((ns, name))
    return out
