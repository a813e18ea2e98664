"""karpenter.k8s.aws/v1 EC2NodeClass (pkg/apis/v1/ec2nodeclass.go, ec2nodeclass_status.go,
kubeletconfiguration.go).

camelCase aliases (explicit where Go's json tag is not ``to_camel`` of the field, e.g.
``associatePublicIPAddress``, ``kmsKeyID``), unknown fields ignored. Manifests are admitted against
the provider's CRD (:attr:`EC2NodeClass.CRD`, checked by :mod:`karpy.admission`: enums, patterns,
``role`` xor ``instanceProfile``, the alias rules, the CRD defaults); the model checks none of it again.

karpy extension: ``amiFamily`` resolves to AL2023 when neither ``spec.amiFamily`` nor an alias
term is given and ``amiSelectorTerms`` is empty (upstream requires amiSelectorTerms; karpy lets a
user omit them and uses the AL2023 default).
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any, ClassVar

from pydantic import Field, field_validator

from awsprovider.apis.ec2text import Ec2Text
from awsprovider.labels import AMI_FAMILY_AL2023, AMI_FAMILY_CUSTOM
from karpy.api.meta import Condition, KubeModel, TypedObject
from karpy.api.pod import NodeSelectorRequirement
from karpy.api.quantity import Quantity

__all__ = [
    "AMISelectorTerm",
    "BlockDevice",
    "BlockDeviceMapping",
    "CapacityReservationSelectorTerm",
    "EC2NodeClass",
    "EC2NodeClassSpec",
    "EC2NodeClassStatus",
    "EXTRA_KINDS",
    "KubeletConfiguration",
    "MetadataOptions",
    "NetworkInterface",
    "SecurityGroupSelectorTerm",
    "StatusCapacityReservation",
    "StatusSubnet",
    "SubnetSelectorTerm",
]

_ALIAS_FAMILIES = ("AL2", "AL2023", "Bottlerocket", "Windows2019", "Windows2022", "Windows2025")


class SubnetSelectorTerm(KubeModel):
    """SubnetSelectorTerm: ``tags`` (value ``*`` = any value) and/or ``id``."""

    tags: dict[Ec2Text, Ec2Text] = Field(default_factory=dict)
    id: Ec2Text = ""


class SecurityGroupSelectorTerm(KubeModel):
    """SecurityGroupSelectorTerm: ``tags``, ``id`` or ``name``."""

    tags: dict[Ec2Text, Ec2Text] = Field(default_factory=dict)
    id: Ec2Text = ""
    name: Ec2Text = ""


class CapacityReservationSelectorTerm(KubeModel):
    """CapacityReservationSelectorTerm: ``id``, or ``tags`` / ``instanceMatchCriteria`` with an
    optional ``ownerID`` (the CRD checks the rules; resolved by :mod:`awsprovider.capacityreservation`)."""

    tags: dict[Ec2Text, Ec2Text] = Field(default_factory=dict)
    id: Ec2Text = ""
    owner_id: Ec2Text = Field(default="", alias="ownerID")
    instance_match_criteria: Ec2Text = ""


class AMISelectorTerm(KubeModel):
    """AMISelectorTerm: ``alias`` (``al2023@latest``), ``tags``, ``id``, ``name``, ``owner``, ``ssmParameter``."""

    alias: Ec2Text = ""
    tags: dict[Ec2Text, Ec2Text] = Field(default_factory=dict)
    id: Ec2Text = ""
    name: Ec2Text = ""
    owner: Ec2Text = ""
    ssm_parameter: Ec2Text = ""


class MetadataOptions(KubeModel):
    """MetadataOptions with the CRD defaults."""

    http_endpoint: str | None = "enabled"
    http_protocol_ipv6: str | None = Field(default="disabled", alias="httpProtocolIPv6")
    http_put_response_hop_limit: int | None = 1
    http_tokens: str | None = "required"


class BlockDevice(KubeModel):
    """BlockDevice (EBS)."""

    delete_on_termination: bool | None = None
    encrypted: bool | None = None
    iops: int | None = None
    kms_key_id: Ec2Text | None = Field(default=None, alias="kmsKeyID")
    snapshot_id: Ec2Text | None = Field(default=None, alias="snapshotID")
    throughput: int | None = None
    volume_initialization_rate: int | None = None
    volume_size: Quantity | None = None
    volume_type: Ec2Text | None = None


class BlockDeviceMapping(KubeModel):
    """BlockDeviceMapping."""

    device_name: Ec2Text | None = None
    ebs: BlockDevice | None = None
    root_volume: bool = False


class NetworkInterface(KubeModel):
    """NetworkInterface (``interfaceType`` interface | efa-only)."""

    network_card_index: int = 0
    device_index: int = 0
    interface_type: str = "interface"


class KubeletConfiguration(KubeModel):
    """KubeletConfiguration (kubeletconfiguration.go ParsedKubeletConfig fields).

    ``maxPods`` is IntOrString upstream; a string is a CEL expression honoured only with the
    NodeClassCEL gate (default off) and is therefore ignored by the instance-type resolver, as are
    kube/systemReserved values that do not parse as quantities.
    """

    cluster_dns: list[str] = Field(default_factory=list, alias="clusterDNS")
    max_pods: int | str | None = None
    pods_per_core: int | None = None
    system_reserved: dict[str, str] = Field(default_factory=dict)
    kube_reserved: dict[str, str] = Field(default_factory=dict)
    eviction_hard: dict[str, str] | None = None
    eviction_soft: dict[str, str] | None = None
    eviction_soft_grace_period: dict[str, str] = Field(default_factory=dict)
    eviction_max_pod_grace_period: int | None = None
    image_gc_high_threshold_percent: int | None = Field(default=None, alias="imageGCHighThresholdPercent")
    image_gc_low_threshold_percent: int | None = Field(default=None, alias="imageGCLowThresholdPercent")
    cpu_cfs_quota: bool | None = Field(default=None, alias="cpuCFSQuota")

    @field_validator("system_reserved", "kube_reserved", "eviction_soft_grace_period", mode="before")
    @classmethod
    def _stringify(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: (v if isinstance(v, str) else str(v)) for k, v in value.items()}
        return value

    @field_validator("max_pods")
    @classmethod
    def _max_pods(cls, value: int | str | None) -> int | str | None:
        if isinstance(value, int) and value < 0:
            raise ValueError(f"must be greater than or equal to 0 (got {value})")
        return value

    def static_max_pods(self) -> int | None:
        """``maxPods`` when it is an integer (CEL strings are ignored with the gate off)."""
        return self.max_pods if isinstance(self.max_pods, int) and not isinstance(self.max_pods, bool) else None


class StatusSubnet(KubeModel):
    """Status Subnet: ``id``, ``zone``, ``zoneID``."""

    id: str
    zone: str
    zone_id: str = Field(default="", alias="zoneID")


class StatusSecurityGroup(KubeModel):
    """Status SecurityGroup."""

    id: str
    name: str = ""


class StatusCapacityReservation(KubeModel):
    """Status CapacityReservation (ec2nodeclass_status.go), as a ``kubectl get -o yaml`` dump
    carries it. karpy resolves reservations from the mocked EC2, not from this status (it has no
    instance counts); a dump's entries are reported when the selector finds none of them."""

    id: str
    instance_type: str = ""
    availability_zone: str = ""
    owner_id: str = Field(default="", alias="ownerID")
    instance_match_criteria: str = ""
    reservation_type: str = "default"
    state: str = "active"
    interruptible: bool = False


class StatusAMI(KubeModel):
    """Status AMI (ec2nodeclass_status.go AMI): ``id``, ``name``, ``deprecated`` and the
    requirements an instance type must meet to use it."""

    id: str
    name: str = ""
    deprecated: bool = False
    requirements: list[NodeSelectorRequirement] = Field(default_factory=list)


class EC2NodeClassStatus(KubeModel):
    """EC2NodeClassStatus (the parts karpy resolves). ``amis``, when given (a ``kubectl get -o
    yaml`` dump, or an ``apply`` event with the AMIs the selector now resolves to), are the AMIs
    the NodeClass launches with and drift is checked against; else karpy's stub AMIs."""

    subnets: list[StatusSubnet] = Field(default_factory=list)
    capacity_reservations: list[StatusCapacityReservation] = Field(default_factory=list)
    security_groups: list[StatusSecurityGroup] = Field(default_factory=list)
    amis: list[StatusAMI] = Field(default_factory=list)
    instance_profile: str = ""
    conditions: list[Condition] = Field(default_factory=list)


class EC2NodeClassSpec(KubeModel):
    """EC2NodeClassSpec."""

    subnet_selector_terms: list[SubnetSelectorTerm] = Field(default_factory=list)
    security_group_selector_terms: list[SecurityGroupSelectorTerm] = Field(default_factory=list)
    capacity_reservation_selector_terms: list[CapacityReservationSelectorTerm] = Field(default_factory=list)
    associate_public_ip_address: bool | None = Field(default=None, alias="associatePublicIPAddress")
    ip_prefix_count: int | None = Field(default=None, alias="ipPrefixCount")
    ami_selector_terms: list[AMISelectorTerm] = Field(default_factory=list, alias="amiSelectorTerms")
    ami_family: str | None = None
    user_data: str | None = None
    role: Ec2Text | None = None
    instance_profile: Ec2Text | None = None
    tags: dict[Ec2Text, Ec2Text] = Field(default_factory=dict)
    kubelet: KubeletConfiguration = Field(default_factory=KubeletConfiguration)
    block_device_mappings: list[BlockDeviceMapping] = Field(default_factory=list)
    instance_store_policy: str | None = None
    network_interfaces: list[NetworkInterface] | None = None
    detailed_monitoring: bool | None = None
    metadata_options: MetadataOptions = Field(default_factory=MetadataOptions)
    context: Ec2Text | None = None



class EC2NodeClass(TypedObject):
    """karpenter.k8s.aws/v1 EC2NodeClass (cluster-scoped: ``key`` is the name)."""

    API_VERSION = "karpenter.k8s.aws/v1"
    KIND = "EC2NodeClass"
    CLUSTER_SCOPED = True
    #: the provider's CRD (aws/karpenter-provider-aws 1d92708), which karpy's admission checks manifests against
    CRD: ClassVar[Traversable] = files("awsprovider") / "crds" / "karpenter.k8s.aws_ec2nodeclasses.yaml"

    spec: EC2NodeClassSpec = Field(default_factory=EC2NodeClassSpec)
    status: EC2NodeClassStatus = Field(default_factory=EC2NodeClassStatus)



    def alias(self) -> tuple[str, str] | None:
        """ec2nodeclass.go Alias: ``(family, version)`` of the first alias term, or None."""
        for term in self.spec.ami_selector_terms:
            if term.alias:
                fam, version = term.alias.split("@")
                for f in _ALIAS_FAMILIES:
                    if f.lower() == fam:
                        return f, version
        return None

    def ami_family(self) -> str:
        """ec2nodeclass.go AMIFamily (+ the karpy AL2023 default, see module doc)."""
        if self.spec.ami_family is not None:
            return self.spec.ami_family
        alias = self.alias()
        if alias is not None:
            return alias[0]
        if not self.spec.ami_selector_terms:
            return AMI_FAMILY_AL2023
        return AMI_FAMILY_CUSTOM


#: for ``karpy.api.loader.load_manifests(..., extra_kinds=EXTRA_KINDS)``
def _extra_kinds() -> dict[tuple[str, str], type[TypedObject]]:
    from awsprovider.apis.network import Network

    return {("karpenter.k8s.aws", "EC2NodeClass"): EC2NodeClass, ("karpy.io", "Network"): Network}


EXTRA_KINDS: dict[tuple[str, str], type[TypedObject]] = _extra_kinds()
