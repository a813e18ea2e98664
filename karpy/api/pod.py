"""core/v1 Pod and the types it embeds (k8s.io/api/core/v1 types.go, v1.34 field names).

API-server defaulting applied at validation (pkg/apis/core/v1/defaults.go):
- a container limit without a request becomes the request (``SetDefaults_ResourceRequirements``
  via ``SetDefaults_Pod``);
- ``metadata.namespace`` defaults to ``default``; ``status.phase`` to ``Pending``;
- with ``hostNetwork: true`` a container port's ``hostPort`` defaults to its ``containerPort``;
- ``Toleration.operator`` defaults to ``Equal``, ``ContainerPort.protocol`` to ``TCP``.
``spec.priority`` is *not* resolved from ``priorityClassName`` here; the scheduler model does that.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from karpy.api.meta import (
    Condition,
    HasConditions,
    Int32,
    Int64,
    KubeModel,
    LabelSelector,
    ResourceQuantities,
    TypedObject,
)

__all__ = [
    "NODE_SELECTOR_OPERATORS",
    "Affinity",
    "Container",
    "ContainerPort",
    "ContainerStatus",
    "NodeAffinity",
    "NodeSelector",
    "NodeSelectorRequirement",
    "PodSchedulingGroup",
    "NodeSelectorTerm",
    "Pod",
    "PodAffinity",
    "PodAffinityTerm",
    "PodAntiAffinity",
    "PodCondition",
    "PodLevelResources",
    "PodResourceClaim",
    "PodSchedulingGate",
    "PodSpec",
    "PodStatus",
    "PreferredSchedulingTerm",
    "ResourceClaim",
    "ResourceRequirements",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "Volume",
    "WeightedPodAffinityTerm",
    "WorkloadReference",
]

#: core operators plus Karpenter's Gte/Lte (pkg/apis/v1/nodeclaim.go NodeSelectorOpGte/Lte)
NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte")
_NUMERIC_OPERATORS = ("Gt", "Lt", "Gte", "Lte")

TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


class Taint(KubeModel):
    """core/v1 Taint."""

    key: str
    value: str = ""
    effect: TaintEffect
    time_added: str | None = None


class Toleration(KubeModel):
    """core/v1 Toleration (``operator`` defaults to ``Equal``; empty key + Exists tolerates everything)."""

    key: str = ""
    operator: Literal["Equal", "Exists"] = "Equal"
    value: str = ""
    effect: Literal["", "NoSchedule", "PreferNoSchedule", "NoExecute"] = ""
    toleration_seconds: int | None = None

    @field_validator("operator", mode="before")
    @classmethod
    def _default_operator(cls, value: Any) -> Any:
        return "Equal" if value in (None, "") else value


class NodeSelectorRequirement(KubeModel):
    """core/v1 NodeSelectorRequirement, also Karpenter's NodeSelectorRequirementWithMinValues.

    Validated as the API server / Karpenter CRD do: a known operator; ``In`` needs a value;
    ``Exists``/``DoesNotExist`` take none; ``Gt``/``Lt``/``Gte``/``Lte`` take exactly one integer.
    """

    key: str
    operator: str
    values: list[str] = Field(default_factory=list)
    min_values: int | None = None

    @field_validator("operator")
    @classmethod
    def _known_operator(cls, value: str) -> str:
        if value not in NODE_SELECTOR_OPERATORS:
            raise ValueError(f"unknown operator {value!r}; must be one of {', '.join(NODE_SELECTOR_OPERATORS)}")
        return value

    @model_validator(mode="after")
    def _values_match_operator(self) -> NodeSelectorRequirement:
        op = self.operator
        if op == "In" and not self.values:
            raise ValueError(f"requirement {self.key!r}: operator 'In' must have a value defined")
        if op in ("Exists", "DoesNotExist") and self.values:
            raise ValueError(f"requirement {self.key!r}: operator {op!r} must not have values (got {self.values})")
        if op in _NUMERIC_OPERATORS:
            if len(self.values) != 1:
                raise ValueError(f"requirement {self.key!r}: operator {op!r} must have a single integer value "
                                 f"(got {self.values})")
            try:
                int(self.values[0])
            except ValueError:
                raise ValueError(f"requirement {self.key!r}: operator {op!r} needs an integer value, "
                                 f"got {self.values[0]!r}") from None
        if self.min_values is not None:
            if not 1 <= self.min_values <= 50:
                raise ValueError(f"requirement {self.key!r}: minValues must be between 1 and 50 "
                                 f"(got {self.min_values})")
            if op == "In" and len(self.values) < self.min_values:
                raise ValueError(f"requirement {self.key!r}: requirements with 'minValues' must have at least "
                                 f"that many values specified in the 'values' field "
                                 f"({len(self.values)} < {self.min_values})")
        return self


class NodeSelectorTerm(KubeModel):
    """core/v1 NodeSelectorTerm (terms are ORed, expressions within a term ANDed)."""

    match_expressions: list[NodeSelectorRequirement] = Field(default_factory=list)
    match_fields: list[NodeSelectorRequirement] = Field(default_factory=list)


class NodeSelector(KubeModel):
    """core/v1 NodeSelector."""

    node_selector_terms: list[NodeSelectorTerm] = Field(default_factory=list)


class PreferredSchedulingTerm(KubeModel):
    """core/v1 PreferredSchedulingTerm (weight 1..100)."""

    weight: int = Field(ge=1, le=100)
    preference: NodeSelectorTerm


class NodeAffinity(KubeModel):
    """core/v1 NodeAffinity."""

    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] = Field(default_factory=list)


class PodAffinityTerm(KubeModel):
    """core/v1 PodAffinityTerm. ``label_selector``/``namespace_selector`` keep nil (``None``) apart from
    empty: a nil label selector matches no pod; a nil namespace selector with no ``namespaces`` means
    the pod's own namespace, an empty one means all namespaces."""

    label_selector: LabelSelector | None = None
    namespaces: list[str] = Field(default_factory=list)
    namespace_selector: LabelSelector | None = None
    topology_key: str = ""
    match_label_keys: list[str] = Field(default_factory=list)
    mismatch_label_keys: list[str] = Field(default_factory=list)


class WeightedPodAffinityTerm(KubeModel):
    """core/v1 WeightedPodAffinityTerm (weight 1..100)."""

    weight: int = Field(ge=1, le=100)
    pod_affinity_term: PodAffinityTerm


class PodAffinity(KubeModel):
    """core/v1 PodAffinity."""

    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] = Field(default_factory=list)
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] = Field(default_factory=list)


class PodAntiAffinity(PodAffinity):
    """core/v1 PodAntiAffinity (same shape as PodAffinity)."""


class Affinity(KubeModel):
    """core/v1 Affinity."""

    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAntiAffinity | None = None


class TopologySpreadConstraint(KubeModel):
    """core/v1 TopologySpreadConstraint (policies ``None`` = unset, which the scheduler treats as
    nodeAffinityPolicy Honor / nodeTaintsPolicy Ignore)."""

    max_skew: int = Field(ge=1)
    topology_key: str
    when_unsatisfiable: Literal["DoNotSchedule", "ScheduleAnyway"]
    label_selector: LabelSelector | None = None
    min_domains: int | None = Field(default=None, ge=1)
    node_affinity_policy: Literal["Honor", "Ignore"] | None = None
    node_taints_policy: Literal["Honor", "Ignore"] | None = None
    match_label_keys: list[str] = Field(default_factory=list)


class ResourceClaim(KubeModel):
    """core/v1 ResourceClaim: a container's use of one of the pod's ``spec.resourceClaims`` (DRA)."""

    name: str
    request: str | None = None


class PodResourceClaim(KubeModel):
    """core/v1 PodResourceClaim: a DRA claim the pod references (by name or through a template)."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class ResourceRequirements(KubeModel):
    """core/v1 ResourceRequirements; a limit without a request is copied into requests
    (API-server defaulting), and a request above its limit is rejected as the API server does."""

    requests: ResourceQuantities = Field(default_factory=dict)
    limits: ResourceQuantities = Field(default_factory=dict)
    #: DRA claims the container consumes (KEP-4381)
    claims: list[ResourceClaim] = Field(default_factory=list)

    @model_validator(mode="after")
    def _default_requests_from_limits(self) -> ResourceRequirements:
        for name, limit in self.limits.items():
            request = self.requests.get(name)
            if request is None:
                self.requests[name] = limit
            elif request > limit:
                raise ValueError(f"requests.{name}: {request} must be less than or equal to {name} limit of {limit}")
        return self


class PodLevelResources(KubeModel):
    """core/v1 ResourceRequirements at ``spec.resources`` (KEP-2837 PodLevelResources). No
    limit-to-request copy here: the API server defaults pod-level requests from the containers'
    aggregate first (``karpy.scheduling.resources.pod_requests`` applies that defaulting)."""

    requests: ResourceQuantities = Field(default_factory=dict)
    limits: ResourceQuantities = Field(default_factory=dict)


class ContainerStatusResources(KubeModel):
    requests: ResourceQuantities = Field(default_factory=dict)
    limits: ResourceQuantities = Field(default_factory=dict)


class ContainerStatus(KubeModel):
    """core/v1 ContainerStatus: the fields in-place resize (InPlacePodVerticalScaling) reports."""

    name: str = ""
    allocated_resources: ResourceQuantities | None = None
    resources: ContainerStatusResources | None = None


class ContainerPort(KubeModel):
    """core/v1 ContainerPort (``protocol`` defaults to TCP)."""

    name: str | None = None
    container_port: int = Field(ge=1, le=65535)
    host_port: int | None = Field(default=None, ge=0, le=65535)
    host_ip: str | None = Field(default=None, alias="hostIP")
    protocol: Literal["TCP", "UDP", "SCTP"] = "TCP"

    @field_validator("protocol", mode="before")
    @classmethod
    def _default_protocol(cls, value: Any) -> Any:
        return "TCP" if value in (None, "") else value


class Container(KubeModel):
    """core/v1 Container (the scheduling-relevant fields)."""

    name: str = ""
    image: str | None = None
    resources: ResourceRequirements = Field(default_factory=ResourceRequirements)
    ports: list[ContainerPort] = Field(default_factory=list)
    restart_policy: str | None = None



class PersistentVolumeClaimVolumeSource(KubeModel):
    claim_name: str
    read_only: bool = False


class EphemeralVolumeSource(KubeModel):
    """core/v1 EphemeralVolumeSource: the claim is ``<pod>-<volume>``, created from the template."""

    volume_claim_template: dict[str, Any] | None = None


class Volume(KubeModel):
    """core/v1 Volume: the claim-backed sources (other sources do not constrain placement;
    karpy.api.storage holds the claim and volume kinds)."""

    name: str
    persistent_volume_claim: PersistentVolumeClaimVolumeSource | None = None
    ephemeral: EphemeralVolumeSource | None = None


class PodSchedulingGate(KubeModel):
    """core/v1 PodSchedulingGate."""

    name: str


class WorkloadReference(KubeModel):
    """core/v1 WorkloadReference (KEP-4671, k8s 1.35 alpha): the pod's gang in a
    ``scheduling.k8s.io/v1alpha1`` Workload."""

    name: str
    pod_group: str
    pod_group_replica_key: str | None = None


class PodSchedulingGroup(KubeModel):
    """core/v1 PodSchedulingGroup (k8s 1.36+, GenericWorkload): the standalone
    ``scheduling.k8s.io/v1beta1`` PodGroup the pod belongs to (immutable; it may not exist yet)."""

    pod_group_name: str | None = None


class PodSpec(KubeModel):
    """core/v1 PodSpec (the scheduling-relevant fields)."""

    containers: list[Container] = Field(default_factory=list)
    init_containers: list[Container] = Field(default_factory=list)
    overhead: ResourceQuantities = Field(default_factory=dict)
    node_selector: dict[str, str] = Field(default_factory=dict)
    affinity: Affinity | None = None
    tolerations: list[Toleration] = Field(default_factory=list)
    topology_spread_constraints: list[TopologySpreadConstraint] = Field(default_factory=list)
    priority_class_name: str | None = None
    priority: Int32 | None = None
    preemption_policy: Literal["PreemptLowerPriority", "Never"] | None = None
    scheduling_gates: list[PodSchedulingGate] = Field(default_factory=list)
    node_name: str | None = None
    scheduler_name: str = "default-scheduler"
    termination_grace_period_seconds: Int64 | None = 30
    runtime_class_name: str | None = None
    host_network: bool = False
    restart_policy: str = "Always"
    workload_ref: WorkloadReference | None = None
    scheduling_group: PodSchedulingGroup | None = None
    #: DRA: ResourceClaims the pod references (KEP-4381)
    resource_claims: list[PodResourceClaim] = Field(default_factory=list)
    volumes: list[Volume] = Field(default_factory=list)
    #: pod-level requests/limits (PodLevelResources, beta in k8s 1.34)
    resources: PodLevelResources | None = None

    @field_validator("scheduler_name", mode="before")
    @classmethod
    def _default_scheduler(cls, value: Any) -> Any:
        return "default-scheduler" if value in (None, "") else value

    @field_validator("node_name", "priority_class_name", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return None if value == "" else value

    @model_validator(mode="after")
    def _host_network_ports(self) -> PodSpec:
        if self.host_network:
            for container in (*self.init_containers, *self.containers):
                for port in container.ports:
                    if port.host_port is None:
                        port.host_port = port.container_port
        return self


class PodCondition(Condition):
    """core/v1 PodCondition."""

    last_probe_time: Any = None


class PodStatus(HasConditions, KubeModel):
    """core/v1 PodStatus (``phase`` defaults to Pending, as the API server sets on create)."""

    phase: Literal["Pending", "Running", "Succeeded", "Failed", "Unknown"] = "Pending"
    conditions: list[PodCondition] = Field(default_factory=list)
    nominated_node_name: str | None = None
    start_time: Any = None
    container_statuses: list[ContainerStatus] = Field(default_factory=list)
    init_container_statuses: list[ContainerStatus] = Field(default_factory=list)

    @field_validator("phase", mode="before")
    @classmethod
    def _default_phase(cls, value: Any) -> Any:
        return "Pending" if value in (None, "") else value

    @field_validator("nominated_node_name", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return None if value == "" else value



class Pod(TypedObject):
    """core/v1 Pod. ``pod.key`` is ``"namespace/name"``."""

    API_VERSION = "v1"
    KIND = "Pod"

    spec: PodSpec = Field(default_factory=PodSpec)
    status: PodStatus = Field(default_factory=PodStatus)

