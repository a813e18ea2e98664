"""AWS well-known labels, resource names and AMI-family names.

Mirrors pkg/apis/v1/labels.go of the AWS provider (v1.14.1, 1d927085). Upstream inserts these
labels into core's global ``v1.WellKnownLabels`` at init time; karpy has no global registry, so
the provider exposes :data:`AWS_WELL_KNOWN_LABELS` through ``well_known_labels()`` and callers use
``CORE_WELL_KNOWN_LABELS | AWS_WELL_KNOWN_LABELS`` (:data:`WELL_KNOWN_LABELS`).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from karpy.scheduling.labels import (
    ARCHITECTURE_AMD64,
    ARCHITECTURE_ARM64,
    CORE_WELL_KNOWN_LABELS,
    LABEL_WINDOWS_BUILD,
    LABEL_ZONE,
)

__all__ = [
    "CAPACITY_RESERVATION_TYPE_CAPACITY_BLOCK",
    "CAPACITY_RESERVATION_TYPE_DEFAULT",
    "GROUP",
    "AWS_WELL_KNOWN_LABELS",
    "WELL_KNOWN_LABELS",
    "AWS_RESTRICTED_LABEL_DOMAINS",
    "AWS_TO_KUBE_ARCHITECTURES",
    "AWS_WELL_KNOWN_RESOURCES",
    "CORE_WELL_KNOWN_RESOURCES",
    "WELL_KNOWN_EXOTIC_RESOURCES",
    "WELL_KNOWN_VALUES_FOR_REQUIREMENTS",
    "AMI_FAMILIES",
    "LABEL_EBS_CSI_ZONE",
    "NORMALIZED_LABELS",
]

#: pkg/apis/apis.go Group
GROUP = "karpenter.k8s.aws"

LABEL_CAPACITY_RESERVATION_ID = GROUP + "/capacity-reservation-id"
LABEL_CAPACITY_RESERVATION_TYPE = GROUP + "/capacity-reservation-type"
LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE = GROUP + "/capacity-reservation-interruptible"
#: ec2nodeclass_status.go CapacityReservationType values
CAPACITY_RESERVATION_TYPE_DEFAULT = "default"
CAPACITY_RESERVATION_TYPE_CAPACITY_BLOCK = "capacity-block"
LABEL_INSTANCE_HYPERVISOR = GROUP + "/instance-hypervisor"
LABEL_INSTANCE_ENCRYPTION_IN_TRANSIT_SUPPORTED = GROUP + "/instance-encryption-in-transit-supported"
LABEL_INSTANCE_NITRO_ENCLAVES_SUPPORTED = GROUP + "/nitro-sandbox"
LABEL_INSTANCE_CATEGORY = GROUP + "/instance-category"
LABEL_INSTANCE_CAPABILITY_FLEX = GROUP + "/instance-capability-flex"
LABEL_INSTANCE_FAMILY = GROUP + "/instance-family"
LABEL_INSTANCE_GENERATION = GROUP + "/instance-generation"
LABEL_INSTANCE_LOCAL_NVME = GROUP + "/instance-local-nvme"
LABEL_INSTANCE_SIZE = GROUP + "/instance-size"
LABEL_INSTANCE_CPU = GROUP + "/instance-cpu"
LABEL_INSTANCE_CPU_MANUFACTURER = GROUP + "/instance-cpu-manufacturer"
LABEL_INSTANCE_CPU_SUSTAINED_CLOCK_SPEED_MHZ = GROUP + "/instance-cpu-sustained-clock-speed-mhz"
LABEL_INSTANCE_MEMORY = GROUP + "/instance-memory"
LABEL_INSTANCE_EBS_BANDWIDTH = GROUP + "/instance-ebs-bandwidth"
LABEL_INSTANCE_NETWORK_BANDWIDTH = GROUP + "/instance-network-bandwidth"
LABEL_INSTANCE_GPU_NAME = GROUP + "/instance-gpu-name"
LABEL_INSTANCE_GPU_MANUFACTURER = GROUP + "/instance-gpu-manufacturer"
LABEL_INSTANCE_GPU_COUNT = GROUP + "/instance-gpu-count"
LABEL_INSTANCE_GPU_MEMORY = GROUP + "/instance-gpu-memory"
LABEL_INSTANCE_ACCELERATOR_NAME = GROUP + "/instance-accelerator-name"
LABEL_INSTANCE_ACCELERATOR_MANUFACTURER = GROUP + "/instance-accelerator-manufacturer"
LABEL_INSTANCE_ACCELERATOR_COUNT = GROUP + "/instance-accelerator-count"
LABEL_NODECLASS = GROUP + "/ec2nodeclass"
LABEL_INSTANCE_TENANCY = GROUP + "/instance-tenancy"
LABEL_PLACEMENT_GROUP_ID = GROUP + "/placement-group-id"
LABEL_PLACEMENT_GROUP_PARTITION = GROUP + "/placement-group-partition"
LABEL_TOPOLOGY_ZONE_ID = "topology.k8s.aws/zone-id"

#: the EBS CSI driver's topology key (its StorageClasses' allowedTopologies, its PVs' nodeAffinity,
#: the label its node plugin puts on every node)
LABEL_EBS_CSI_ZONE = "topology.ebs.csi.aws.com/zone"
#: pkg/operator/operator.go init(): the alias the provider adds to core's v1.NormalizedLabels
NORMALIZED_LABELS: Mapping[str, str] = MappingProxyType({LABEL_EBS_CSI_ZONE: LABEL_ZONE})

#: upstream sets ``cloudprovider.ReservationIDLabel = LabelCapacityReservationID``
RESERVATION_ID_LABEL = LABEL_CAPACITY_RESERVATION_ID

ANNOTATION_EC2NODECLASS_HASH = GROUP + "/ec2nodeclass-hash"
ANNOTATION_EC2NODECLASS_HASH_VERSION = GROUP + "/ec2nodeclass-hash-version"
ANNOTATION_INSTANCE_PROFILE = GROUP + "/instance-profile-name"

# Resources (labels.go)
RESOURCE_NVIDIA_GPU = "nvidia.com/gpu"
RESOURCE_AMD_GPU = "amd.com/gpu"
RESOURCE_AWS_NEURON = "aws.amazon.com/neuron"
RESOURCE_AWS_NEURON_CORE = "aws.amazon.com/neuroncore"
RESOURCE_HABANA_GAUDI = "habana.ai/gaudi"
RESOURCE_AWS_POD_ENI = "vpc.amazonaws.com/pod-eni"
RESOURCE_PRIVATE_IPV4_ADDRESS = "vpc.amazonaws.com/PrivateIPv4Address"
RESOURCE_EFA = "vpc.amazonaws.com/efa"
RESOURCE_NITRO_SANDBOX = "eks.amazonaws.com/nitro-sandbox"

# AMI families (labels.go)
AMI_FAMILY_BOTTLEROCKET = "Bottlerocket"
AMI_FAMILY_AL2 = "AL2"
AMI_FAMILY_AL2023 = "AL2023"
AMI_FAMILY_UBUNTU = "Ubuntu"
AMI_FAMILY_WINDOWS2019 = "Windows2019"
AMI_FAMILY_WINDOWS2022 = "Windows2022"
AMI_FAMILY_WINDOWS2025 = "Windows2025"
AMI_FAMILY_CUSTOM = "Custom"
#: the CRD enum of spec.amiFamily
AMI_FAMILIES: tuple[str, ...] = (
    AMI_FAMILY_AL2, AMI_FAMILY_AL2023, AMI_FAMILY_BOTTLEROCKET, AMI_FAMILY_CUSTOM,
    AMI_FAMILY_WINDOWS2019, AMI_FAMILY_WINDOWS2022, AMI_FAMILY_WINDOWS2025,
)
WINDOWS_BUILDS: Mapping[str, str] = MappingProxyType({
    AMI_FAMILY_WINDOWS2019: "10.0.17763",
    AMI_FAMILY_WINDOWS2022: "10.0.20348",
    AMI_FAMILY_WINDOWS2025: "10.0.26100",
})

TENANCY_DEFAULT = "default"
TENANCY_DEDICATED = "dedicated"

#: labels.go init(): the labels inserted into v1.WellKnownLabels
AWS_WELL_KNOWN_LABELS: frozenset[str] = frozenset({
    LABEL_CAPACITY_RESERVATION_ID,
    LABEL_CAPACITY_RESERVATION_TYPE,
    LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE,
    LABEL_INSTANCE_HYPERVISOR,
    LABEL_INSTANCE_ENCRYPTION_IN_TRANSIT_SUPPORTED,
    LABEL_INSTANCE_NITRO_ENCLAVES_SUPPORTED,
    LABEL_INSTANCE_CATEGORY,
    LABEL_INSTANCE_CAPABILITY_FLEX,
    LABEL_INSTANCE_FAMILY,
    LABEL_INSTANCE_GENERATION,
    LABEL_INSTANCE_SIZE,
    LABEL_INSTANCE_LOCAL_NVME,
    LABEL_INSTANCE_CPU,
    LABEL_INSTANCE_CPU_MANUFACTURER,
    LABEL_INSTANCE_CPU_SUSTAINED_CLOCK_SPEED_MHZ,
    LABEL_INSTANCE_MEMORY,
    LABEL_INSTANCE_EBS_BANDWIDTH,
    LABEL_INSTANCE_NETWORK_BANDWIDTH,
    LABEL_INSTANCE_GPU_NAME,
    LABEL_INSTANCE_GPU_MANUFACTURER,
    LABEL_INSTANCE_GPU_COUNT,
    LABEL_INSTANCE_GPU_MEMORY,
    LABEL_INSTANCE_ACCELERATOR_NAME,
    LABEL_INSTANCE_ACCELERATOR_MANUFACTURER,
    LABEL_INSTANCE_ACCELERATOR_COUNT,
    LABEL_TOPOLOGY_ZONE_ID,
    LABEL_INSTANCE_TENANCY,
    LABEL_WINDOWS_BUILD,
    LABEL_PLACEMENT_GROUP_ID,
    LABEL_PLACEMENT_GROUP_PARTITION,
})

#: core's WellKnownLabels after the AWS provider's init()
WELL_KNOWN_LABELS: frozenset[str] = CORE_WELL_KNOWN_LABELS | AWS_WELL_KNOWN_LABELS

#: labels.go RestrictedLabelDomains (added to core's karpenter.sh)
AWS_RESTRICTED_LABEL_DOMAINS: frozenset[str] = frozenset({GROUP})

#: labels.go WellKnownValuesForRequirements addition
WELL_KNOWN_VALUES_FOR_REQUIREMENTS: Mapping[str, frozenset[str]] = MappingProxyType({
    LABEL_INSTANCE_TENANCY: frozenset({TENANCY_DEDICATED, TENANCY_DEFAULT}),
})

#: labels.go AWSToKubeArchitectures
AWS_TO_KUBE_ARCHITECTURES: Mapping[str, str] = MappingProxyType({
    "x86_64": ARCHITECTURE_AMD64,
    ARCHITECTURE_ARM64: ARCHITECTURE_ARM64,
})

#: core's ``v1.WellKnownResources`` as the AWS provider's labels.go init() extends it (pod-eni,
#: neuron, neuroncore, gaudi, efa -- *not* nvidia.com/gpu or amd.com/gpu): what NodeOverlay
#: RuntimeValidate restricts (v1alpha1/nodeoverlay_validation.go validateCapacity), so a GPU
#: time-slicing overlay of ``nvidia.com/gpu`` is valid upstream.
CORE_WELL_KNOWN_RESOURCES: frozenset[str] = frozenset({
    "cpu", "memory", "ephemeral-storage", "pods", RESOURCE_AWS_POD_ENI, RESOURCE_AWS_NEURON,
    RESOURCE_AWS_NEURON_CORE, RESOURCE_HABANA_GAUDI, RESOURCE_EFA,
})

#: labels.go WellKnownResources (the AWS provider's own set)
AWS_WELL_KNOWN_RESOURCES: frozenset[str] = frozenset({
    "cpu", "memory", "ephemeral-storage", "pods", RESOURCE_AWS_POD_ENI, RESOURCE_NVIDIA_GPU,
    RESOURCE_AMD_GPU, RESOURCE_AWS_NEURON, RESOURCE_AWS_NEURON_CORE, RESOURCE_HABANA_GAUDI, RESOURCE_EFA,
})

#: labels.go WellKnownExoticResources
WELL_KNOWN_EXOTIC_RESOURCES: frozenset[str] = frozenset({
    RESOURCE_NVIDIA_GPU, RESOURCE_AMD_GPU, RESOURCE_AWS_NEURON, RESOURCE_AWS_NEURON_CORE, RESOURCE_HABANA_GAUDI,
})
