"""Instance types from the EC2 catalogue: requirements (labels), capacity, overhead, offerings.

Mirrors aws/karpenter-provider-aws v1.14.1 (1d927085):

* pkg/providers/instancetype/types.go -- ``NewInstanceType``, ``computeRequirements``,
  ``computeCapacity``, ``ENILimitedPods``, ``pods``, ``kubeReservedResources``,
  ``systemReservedResources``, ``evictionThreshold``;
* pkg/providers/instancetype/instancetype.go -- ``DefaultProvider.List`` (catalogue read once,
  instance types cached per NodeClass inputs, offerings injected on every call);
* pkg/providers/instancetype/offering/base_resolver.go -- on-demand and spot offerings for every
  zone of the region (``allZones``), ``Available`` = compatible with the NodeClass and not ICE'd
  and priced (or overlay-priced) and in the type's zone requirement;
* pkg/providers/instancetype/compatibility/compatibility.go -- AMI family (AL2023 excludes
  ``a1.*``) and network-interface checks;
* pkg/providers/amifamily/*.go -- family feature flags and default block devices.

Deterministic rules (Go map order): ``list`` returns types sorted by name (the catalogue order);
offerings are ordered by zone name, then capacity type (``on-demand`` before ``spot``).

* pkg/providers/instancetype/offering/reserved_capacity_resolver.go -- one ``reserved`` offering
  per NodeClass capacity reservation of the type (``status.capacityReservations``,
  :mod:`awsprovider.capacityreservation`): price = on-demand / :data:`RESERVED_PRICE_DIVISOR`
  (0 without an on-demand price), ``reservation_capacity`` = the availability cache's count,
  available iff compatible, count != 0, zone in the type's zones and not ``expiring``; the type's
  requirements gain ``reserved`` and the reservation id / type / interruptible labels (types.go
  computeRequirements). Only with the ``ReservedCapacity`` gate (on by default).

Not simulated: placement groups, zonal shift, CEL kubelet expressions (the
NodeClassCEL gate defaults off: string ``maxPods`` and non-quantity reserved values are ignored,
as upstream does with the gate off), the discovered-capacity cache, nested-virtualisation and
connection-tracking compatibility checks.

Performance: the static part of every type (requirements, capacity, overhead) is computed once per
distinct NodeClass input set and cached; offering lists are cached per type and rebuilt only when
the ICE cache changed for that type (or globally), or the overlay prices / pricing changed; and
while none of that changed, ``list`` hands out the previous call's InstanceType objects again (so
their allocatable groups, available offerings and compatibility forms stay computed).
Offering requirements are shared, immutable objects per (capacity type, zone).

Across providers in one process (a second ``karpy.simulate``, a sweep's cells): upstream builds its
instance-type cache once per process and keys entries by the inputs that change them
(instancetype.go ``List``: the NodeClass hash, the unavailable-offerings sequence number, the
pricing and capacity state). karpy's providers are per run, so :data:`SHARED_CACHE` plays that
process role: the static parts per (catalogue, region, NodeClass settings, zone info), and the
prototypes of an *empty* ICE cache per (those, price table, overlay prices). It is consulted only
when every input has a content key -- the moto catalogue (:attr:`InstanceTypeCatalog.cache_token`,
a frozen answer of moto's static data) and a pricing provider whose prices are a pure function of
bundled or given data (:attr:`PricingProvider.cache_token`: no ``update_*`` calls, the bundled spot
feed) -- and the ICE view is empty; otherwise the provider computes its own, as before. What it
shares is read-only by the same contract as within a run (callers get copies from ``list``; the
launch path copies on write), so no state passes from one run to the next: equal inputs give equal
objects, and a run whose ICE cache fills rebuilds those types in its own table.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Protocol, Sequence

from awsprovider import labels as L
from awsprovider.instancetype_bandwidth import INSTANCE_TYPE_BANDWIDTH_MEGABITS
from awsprovider.instancetype_vpclimits import VPC_LIMITS
from awsprovider.nodeclass import ResolvedNodeClass, ZoneInfo
from awsprovider.unavailableofferings import UnavailableOfferings, UnavailableView
from karpy.api.quantity import parse_nanos
from karpy.cloudprovider.types import InstanceType, InstanceTypeOverhead, InstanceTypes, Offering, Offerings
from karpy._errors import KarpyError
from karpy.scheduling.labels import (
    ARCHITECTURE_AMD64,
    CAPACITY_TYPE_ON_DEMAND,
    CAPACITY_TYPE_RESERVED,
    CAPACITY_TYPE_SPOT,
    LABEL_ARCH,
    LABEL_CAPACITY_TYPE,
    LABEL_INSTANCE_TYPE,
    LABEL_OS,
    LABEL_REGION,
    LABEL_WINDOWS_BUILD,
    LABEL_ZONE,
    OP_DOES_NOT_EXIST,
    OP_IN,
)
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

__all__ = [
    "DEFAULT_EBS_VOLUME_SIZE",
    "DEFAULT_PODS",
    "INSTANCE_TYPE_SCHEME",
    "MEMORY_AVAILABLE",
    "NODEFS_AVAILABLE",
    "RESERVED_ENIS",
    "RESERVED_PRICE_DIVISOR",
    "VM_MEMORY_OVERHEAD_PERCENT",
    "AMIFamilyFlags",
    "InstanceTypeError",
    "InstanceTypeProvider",
    "InstanceTypeSettings",
    "SHARED_CACHE",
    "SharedInstanceTypeCache",
    "ami_family_flags",
    "compute_capacity",
    "compute_overhead",
    "compute_requirements",
    "eni_limited_pods",
    "ephemeral_storage",
    "instance_type_parts",
    "is_compatible_with_nodeclass",
    "kube_reserved_cpu_millis",
    "memory_capacity",
    "new_instance_type",
    "pods",
]

NANO = 10**9
MIB = 1 << 20
GIB = 1 << 30

#: pkg/operator/options/options.go VMMemoryOverheadPercent default (a fraction)
VM_MEMORY_OVERHEAD_PERCENT = 0.075
#: offering/reserved_capacity_resolver.go: a reserved offering costs on-demand / 10 000 000 ("free",
#: but keeping the relative order for consolidation)
RESERVED_PRICE_DIVISOR = 10_000_000.0
#: pkg/operator/options/options.go ReservedENIs default
RESERVED_ENIS = 0
#: types.go pods(): pod count without ENI-limited density (Windows)
DEFAULT_PODS = 110
#: types.go memory(): Graviton CMA reservation (MiB)
ARM64_CMA_MIB = 64
#: amifamily/resolver.go DefaultEBS.VolumeSize (20Gi) in nano-units
DEFAULT_EBS_VOLUME_SIZE = 20 * GIB * NANO
#: types.go eviction signal names
MEMORY_AVAILABLE = "memory.available"
NODEFS_AVAILABLE = "nodefs.available"
#: types.go instanceTypeScheme (Python re.search gives the same groups as Go FindStringSubmatch)
INSTANCE_TYPE_SCHEME = re.compile(r"(^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\.")
#: types.go kubeReservedResources cpu bands: (start, end, fraction) in millicores
KUBE_RESERVED_CPU_BANDS: tuple[tuple[int, int, float], ...] = (
    (0, 1000, 0.06), (1000, 2000, 0.01), (2000, 4000, 0.005), (4000, 1 << 31, 0.0025),
)
KUBE_RESERVED_EPHEMERAL = 1 * GIB * NANO
EVICTION_MEMORY_DEFAULT = 100 * MIB * NANO
EVICTION_NODEFS_PERCENT = 10

_CPU = "cpu"
_MEMORY = "memory"
_EPHEMERAL = "ephemeral-storage"
_PODS = "pods"


class InstanceTypeError(KarpyError, RuntimeError):
    """instancetype.go List/Get errors (e.g. ``no subnets found``)."""


# ---------------------------------------------------------------------------------------------
# AMI families (pkg/providers/amifamily)
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AMIFamilyFlags:
    """amifamily.FeatureFlags (the three the instance-type formulas read)."""

    uses_eni_limited_memory_overhead: bool
    pods_per_core_enabled: bool
    supports_eni_limited_pod_density: bool


_DEFAULT_FLAGS = AMIFamilyFlags(True, True, True)
_BOTTLEROCKET_FLAGS = AMIFamilyFlags(False, False, True)
_WINDOWS_FLAGS = AMIFamilyFlags(False, True, False)
_WINDOWS_FAMILIES = frozenset(L.WINDOWS_BUILDS)


def _canonical_family(family: str) -> str:
    """resolver.go GetAMIFamily: unknown strings (incl. Ubuntu) resolve to AL2."""
    if family in (L.AMI_FAMILY_BOTTLEROCKET, L.AMI_FAMILY_CUSTOM, L.AMI_FAMILY_AL2023) or family in _WINDOWS_FAMILIES:
        return family
    return L.AMI_FAMILY_AL2


def ami_family_flags(family: str) -> AMIFamilyFlags:
    """DefaultFamily (AL2, AL2023, Custom) / Bottlerocket / Windows feature flags."""
    fam = _canonical_family(family)
    if fam == L.AMI_FAMILY_BOTTLEROCKET:
        return _BOTTLEROCKET_FLAGS
    if fam in _WINDOWS_FAMILIES:
        return _WINDOWS_FLAGS
    return _DEFAULT_FLAGS


def _ephemeral_device(family: str) -> str | None:
    """EphemeralBlockDevice(): AL2/AL2023 /dev/xvda, Bottlerocket /dev/xvdb, Windows /dev/sda1, Custom nil."""
    fam = _canonical_family(family)
    if fam == L.AMI_FAMILY_BOTTLEROCKET:
        return "/dev/xvdb"
    if fam in _WINDOWS_FAMILIES:
        return "/dev/sda1"
    if fam == L.AMI_FAMILY_CUSTOM:
        return None
    return "/dev/xvda"


def _default_ephemeral_size(family: str) -> int | None:
    """Size of the family's default block device for its ephemeral device (Windows 50Gi, Custom none)."""
    fam = _canonical_family(family)
    if fam == L.AMI_FAMILY_CUSTOM:
        return None
    if fam in _WINDOWS_FAMILIES:
        return 50 * GIB * NANO
    return DEFAULT_EBS_VOLUME_SIZE


# ---------------------------------------------------------------------------------------------
# NodeClass-derived settings (the resolver's CacheKey inputs)
# ---------------------------------------------------------------------------------------------
def _static_quantities(values: Mapping[str, str] | None) -> tuple[tuple[str, int], ...]:
    """Keep entries that parse as quantities (types.go resolveResourceExpressions, CEL gate off)."""
    out: list[tuple[str, int]] = []
    for k in sorted(values or {}):
        try:
            out.append((k, parse_nanos(values[k])))  # type: ignore[index]
        except (ValueError, TypeError):
            continue
    return tuple(out)


@dataclass(frozen=True)
class InstanceTypeSettings:
    """The NodeClass inputs of ``NewInstanceType`` (hashable: the static instance-type cache key).

    ``block_device_mappings``: ``(device_name, volume_size_nanos | None, root_volume)``;
    ``network_interfaces``: ``(network_card_index, device_index, interface_type)`` or None (unset);
    ``eviction_hard`` keeps raw strings (percentages are resolved per type).
    """

    ami_family: str = L.AMI_FAMILY_AL2023
    max_pods: int | None = None
    pods_per_core: int | None = None
    kube_reserved: tuple[tuple[str, int], ...] = ()
    system_reserved: tuple[tuple[str, int], ...] = ()
    eviction_hard: tuple[tuple[str, str], ...] | None = None
    block_device_mappings: tuple[tuple[str | None, int | None, bool], ...] = ()
    instance_store_policy: str | None = None
    network_interfaces: tuple[tuple[int, int, str], ...] | None = None
    reserved_enis: int = RESERVED_ENIS
    vm_memory_overhead_percent: float = VM_MEMORY_OVERHEAD_PERCENT

    @classmethod
    def from_nodeclass(cls, nodeclass: Any, reserved_enis: int = RESERVED_ENIS,
                       vm_memory_overhead_percent: float = VM_MEMORY_OVERHEAD_PERCENT) -> InstanceTypeSettings:
        """From an :class:`~awsprovider.apis.ec2nodeclass.EC2NodeClass` or a :class:`ResolvedNodeClass`."""
        nc = nodeclass.nodeclass if isinstance(nodeclass, ResolvedNodeClass) else nodeclass
        spec = nc.spec
        kubelet = spec.kubelet
        bdms = tuple(
            (b.device_name, b.ebs.volume_size.nanos if b.ebs is not None and b.ebs.volume_size is not None else None,
             bool(b.root_volume))
            for b in spec.block_device_mappings
        )
        nics = None
        if spec.network_interfaces is not None:
            nics = tuple((n.network_card_index, n.device_index, n.interface_type) for n in spec.network_interfaces)
        return cls(
            ami_family=nc.ami_family(),
            max_pods=kubelet.static_max_pods(),
            pods_per_core=kubelet.pods_per_core,
            kube_reserved=_static_quantities(kubelet.kube_reserved),
            system_reserved=_static_quantities(kubelet.system_reserved),
            eviction_hard=None if kubelet.eviction_hard is None else tuple(sorted(kubelet.eviction_hard.items())),
            block_device_mappings=bdms,
            instance_store_policy=spec.instance_store_policy,
            network_interfaces=nics,
            reserved_enis=reserved_enis,
            vm_memory_overhead_percent=vm_memory_overhead_percent,
        )


# ---------------------------------------------------------------------------------------------
# Requirements (types.go computeRequirements)
# ---------------------------------------------------------------------------------------------
def instance_type_parts(name: str) -> tuple[str, str] | None:
    """``(category, generation)`` from types.go instanceTypeScheme, or None when it does not match.
    ``m5.large`` -> (m, 5); ``c7i-flex.large`` -> (c, 7); ``u-6tb1.metal`` -> (u, 1)."""
    m = INSTANCE_TYPE_SCHEME.search(name)
    if m is None:
        return None
    return m.group(1), m.group(3)


def _lower_kebab(s: str | None) -> str:
    """types.go lowerKabobCase."""
    return (s or "").replace(" ", "-").lower()


def _go_round(x: float) -> int:
    """Go math.Round: half away from zero."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def _architecture(info: Mapping[str, Any]) -> str:
    """types.go getArchitecture."""
    archs = (info.get("ProcessorInfo") or {}).get("SupportedArchitectures") or []
    for a in archs:
        k = L.AWS_TO_KUBE_ARCHITECTURES.get(a)
        if k is not None:
            return k
    return "[" + " ".join(archs) + "]"


def _dne(key: str) -> Requirement:
    return Requirement(key, OP_DOES_NOT_EXIST)


def _in(key: str, *values: str) -> Requirement:
    return Requirement(key, OP_IN, values)


def _local_nvme(info: Mapping[str, Any]) -> str | None:
    """types.go computeRequirements: the local NVMe label's value (GB), when the type has NVMe storage."""
    storage = info.get("InstanceStorageInfo")
    if storage is None or storage.get("NvmeSupport") == "unsupported" or storage.get("TotalSizeInGB") is None:
        return None
    return str(storage["TotalSizeInGB"])


def _ebs_bandwidth(info: Mapping[str, Any]) -> str | None:
    """types.go computeRequirements: the EBS bandwidth label's value, for EBS-optimized-by-default types."""
    ebs = info.get("EbsInfo") or {}
    if ebs.get("EbsOptimizedInfo") is None or ebs.get("EbsOptimizedSupport") != "default":
        return None
    return str(ebs["EbsOptimizedInfo"].get("MaximumBandwidthInMbps", 0))


def _accelerator(info: Mapping[str, Any]) -> tuple[str | None, str | None, str | None]:
    """types.go computeRequirements: the accelerator name, manufacturer and count labels' values (one
    inference accelerator, or one Neuron device type, which wins)."""
    out: tuple[str | None, str | None, str | None] = (None, None, None)
    neuron = info.get("NeuronInfo")
    inference = (info.get("InferenceAcceleratorInfo") or {}).get("Accelerators") or []
    if len(inference) == 1 and neuron is None:
        a = inference[0]
        out = _lower_kebab(a.get("Name")), _lower_kebab(a.get("Manufacturer")), str(a.get("Count", 0))
    devices = (neuron or {}).get("NeuronDevices") or []
    if neuron is not None and len(devices) == 1:
        d = devices[0]
        out = _lower_kebab(d.get("Name")), "aws", str(d.get("Count", 0))
    return out


def _reservation_requirements(capacity_reservations: Sequence[Any]) -> list[Requirement]:
    """types.go computeRequirements: the capacity-reservation labels (DoesNotExist without reservations)."""
    if not capacity_reservations:
        return [_dne(L.LABEL_CAPACITY_RESERVATION_ID), _dne(L.LABEL_CAPACITY_RESERVATION_TYPE),
                _dne(L.LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE)]
    return [Requirement(L.LABEL_CAPACITY_RESERVATION_ID, OP_IN, [r.id for r in capacity_reservations]),
            Requirement(L.LABEL_CAPACITY_RESERVATION_TYPE, OP_IN, [r.reservation_type for r in capacity_reservations]),
            Requirement(L.LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE, OP_IN,
                        ["true" if r.interruptible else "false" for r in capacity_reservations])]


def compute_requirements(info: Mapping[str, Any], region: str, offering_zones: Iterable[str],
                         zone_info: Sequence[ZoneInfo], ami_family: str,
                         capacity_reservations: Sequence[Any] = ()) -> Requirements:
    """types.go computeRequirements. ``capacity_reservations``: the NodeClass status reservations
    of this type (``reserved`` and the reservation labels; none: the labels are DoesNotExist)."""
    name: str = info["InstanceType"]
    family = _canonical_family(ami_family)
    is_windows = family in _WINDOWS_FAMILIES
    capacity_types = [uc for uc in info.get("SupportedUsageClasses") or []
                      if uc in (CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT)]
    if capacity_reservations:
        capacity_types.append(CAPACITY_TYPE_RESERVED)
    nc_zones = {z.zone for z in zone_info}
    available_zones = sorted(set(offering_zones) & nc_zones)
    arch = _architecture(info)
    os_values: tuple[str, ...] = (("windows",) if arch == ARCHITECTURE_AMD64 else ()) if is_windows else ("linux",)
    network = info.get("NetworkInfo") or {}
    processor = info.get("ProcessorInfo")
    dne = _dne

    category, generation = instance_type_parts(name) or (None, None)
    type_parts = name.split(".")
    family_label, size = type_parts if len(type_parts) == 2 else (None, None)
    nvme = _local_nvme(info)
    bandwidth = INSTANCE_TYPE_BANDWIDTH_MEGABITS.get(name)
    gpus = (info.get("GpuInfo") or {}).get("Gpus") or []
    gpu = gpus[0] if len(gpus) == 1 else None
    accel_name, accel_manu, accel_count = _accelerator(info)
    ebs_bw = _ebs_bandwidth(info)

    def opt(key: str, value: str | None) -> Requirement:
        return dne(key) if value is None else _in(key, value)

    reqs = [
        _in(LABEL_INSTANCE_TYPE, name),
        _in(LABEL_ARCH, arch),
        Requirement(LABEL_OS, OP_IN, os_values),
        Requirement(LABEL_ZONE, OP_IN, available_zones),
        _in(LABEL_REGION, region),
        _in(LABEL_WINDOWS_BUILD, L.WINDOWS_BUILDS[family]) if is_windows else dne(LABEL_WINDOWS_BUILD),
        Requirement(LABEL_CAPACITY_TYPE, OP_IN, capacity_types),
        _in(L.LABEL_INSTANCE_CPU, str((info.get("VCpuInfo") or {}).get("DefaultVCpus", 0))),
        opt(L.LABEL_INSTANCE_CPU_MANUFACTURER,
            None if processor is None else _lower_kebab(processor.get("Manufacturer"))),
        opt(L.LABEL_INSTANCE_CPU_SUSTAINED_CLOCK_SPEED_MHZ,
            None if processor is None else str(_go_round(float(processor.get("SustainedClockSpeedInGhz") or 0.0) * 1000))),
        _in(L.LABEL_INSTANCE_MEMORY, str((info.get("MemoryInfo") or {}).get("SizeInMiB", 0))),
        opt(L.LABEL_INSTANCE_EBS_BANDWIDTH, ebs_bw),
        opt(L.LABEL_INSTANCE_NETWORK_BANDWIDTH, None if bandwidth is None else str(bandwidth)),
        opt(L.LABEL_INSTANCE_CATEGORY, category),
        _in(L.LABEL_INSTANCE_CAPABILITY_FLEX, "true" if "-flex" in type_parts[0] else "false"),
        opt(L.LABEL_INSTANCE_FAMILY, family_label),
        opt(L.LABEL_INSTANCE_GENERATION, generation),
        opt(L.LABEL_INSTANCE_LOCAL_NVME, nvme),
        opt(L.LABEL_INSTANCE_SIZE, size),
        opt(L.LABEL_INSTANCE_GPU_NAME, None if gpu is None else _lower_kebab(gpu.get("Name"))),
        opt(L.LABEL_INSTANCE_GPU_MANUFACTURER, None if gpu is None else _lower_kebab(gpu.get("Manufacturer"))),
        opt(L.LABEL_INSTANCE_GPU_COUNT, None if gpu is None else str(gpu.get("Count", 0))),
        opt(L.LABEL_INSTANCE_GPU_MEMORY, None if gpu is None else str((gpu.get("MemoryInfo") or {}).get("SizeInMiB", 0))),
        opt(L.LABEL_INSTANCE_ACCELERATOR_NAME, accel_name),
        opt(L.LABEL_INSTANCE_ACCELERATOR_MANUFACTURER, accel_manu),
        opt(L.LABEL_INSTANCE_ACCELERATOR_COUNT, accel_count),
        _in(L.LABEL_INSTANCE_HYPERVISOR, info.get("Hypervisor") or ""),
        _in(L.LABEL_INSTANCE_ENCRYPTION_IN_TRANSIT_SUPPORTED,
            "true" if network.get("EncryptionInTransitSupported") else "false"),
        _in(L.LABEL_INSTANCE_NITRO_ENCLAVES_SUPPORTED,
            "true" if info.get("NitroEnclavesSupport") == "supported" else "false"),
        _in(L.LABEL_INSTANCE_TENANCY, L.TENANCY_DEFAULT, L.TENANCY_DEDICATED),
    ]
    zone_ids = [z.zone_id for z in zone_info if z.zone in set(available_zones)]
    if zone_ids:
        reqs.append(Requirement(L.LABEL_TOPOLOGY_ZONE_ID, OP_IN, zone_ids))
    reqs.extend(_reservation_requirements(capacity_reservations))
    out = Requirements()
    for r in reqs:
        dict.__setitem__(out, r.key, r)
    return out


# ---------------------------------------------------------------------------------------------
# Capacity (types.go computeCapacity)
# ---------------------------------------------------------------------------------------------
def memory_capacity(info: Mapping[str, Any], vm_memory_overhead_percent: float = VM_MEMORY_OVERHEAD_PERCENT) -> int:
    """types.go memory(): MiB (−64 MiB if the first architecture is arm64) minus
    ceil(bytes × overhead / 2^20) MiB; in nano-units."""
    size = int((info.get("MemoryInfo") or {}).get("SizeInMiB", 0))
    archs = (info.get("ProcessorInfo") or {}).get("SupportedArchitectures") or []
    if archs and archs[0] == "arm64":
        size -= ARM64_CMA_MIB
    overhead_mib = int(math.ceil(float(size * MIB) * vm_memory_overhead_percent / 1024 / 1024))
    return (size - overhead_mib) * MIB * NANO


def ephemeral_storage(info: Mapping[str, Any], settings: InstanceTypeSettings) -> int:
    """types.go ephemeralStorage (nano-units)."""
    if settings.instance_store_policy == "RAID0":
        storage = info.get("InstanceStorageInfo")
        if storage is not None and storage.get("TotalSizeInGB") is not None:
            return int(storage["TotalSizeInGB"]) * 10**9 * NANO
    bdms = settings.block_device_mappings
    family = _canonical_family(settings.ami_family)
    if bdms:
        for device, size, root in bdms:
            if root:
                if size is not None:
                    return size
                break
        if family == L.AMI_FAMILY_CUSTOM:
            last = bdms[-1][1]
            return last if last is not None else DEFAULT_EBS_VOLUME_SIZE
        eph = _ephemeral_device(family)
        for device, size, _ in bdms:
            if device == eph:
                if size is not None:
                    return size
                break
    default = _default_ephemeral_size(family)
    return default if default is not None else DEFAULT_EBS_VOLUME_SIZE


def eni_limited_pods(info: Mapping[str, Any], reserved_enis: int = RESERVED_ENIS,
                     network_interfaces: Sequence[tuple[int, int, str]] | None = None) -> int:
    """types.go ENILimitedPods: usable ENIs of the *default network card* × (IPv4 per ENI − 1) + 2;
    usable = max(ENIs − reserved − efa-only NICs on card 0, 0); 0 usable -> 0 pods."""
    network = info.get("NetworkInfo") or {}
    cards = network.get("NetworkCards") or []
    idx = int(network.get("DefaultNetworkCardIndex") or 0)
    enis = int(cards[idx].get("MaximumNetworkInterfaces", 0)) if idx < len(cards) else 0
    efa_only = sum(1 for card, _, kind in (network_interfaces or ()) if card == 0 and kind == "efa-only")
    usable = max(enis - reserved_enis - efa_only, 0)
    if usable == 0:
        return 0
    return usable * (int(network.get("Ipv4AddressesPerInterface", 0)) - 1) + 2


def pods(info: Mapping[str, Any], settings: InstanceTypeSettings) -> int:
    """types.go pods(): maxPods, else ENI-limited (families with that density), else 110; then
    min(podsPerCore × vCPUs, count) when podsPerCore > 0 and the family enables it."""
    flags = ami_family_flags(settings.ami_family)
    if settings.max_pods is not None:
        count = settings.max_pods
    elif flags.supports_eni_limited_pod_density:
        count = eni_limited_pods(info, settings.reserved_enis, settings.network_interfaces)
    else:
        count = DEFAULT_PODS
    ppc = settings.pods_per_core or 0
    if ppc > 0 and flags.pods_per_core_enabled:
        count = min(ppc * int((info.get("VCpuInfo") or {}).get("DefaultVCpus", 0)), count)
    return count


def _gpu_count(info: Mapping[str, Any], manufacturer: str) -> int:
    return sum(int(g.get("Count", 0)) for g in (info.get("GpuInfo") or {}).get("Gpus") or []
               if g.get("Manufacturer") == manufacturer)


def _efas(info: Mapping[str, Any], network_interfaces: Sequence[tuple[int, int, str]] | None) -> int:
    """types.go efas: NodeClass efa-only NIC count when NICs are set, else MaximumEfaInterfaces."""
    if network_interfaces is not None:
        return sum(1 for _, _, kind in network_interfaces if kind == "efa-only")
    efa = (info.get("NetworkInfo") or {}).get("EfaInfo") or {}
    return int(efa.get("MaximumEfaInterfaces") or 0)


def compute_capacity(info: Mapping[str, Any], settings: InstanceTypeSettings) -> dict[str, int]:
    """types.go computeCapacity (+ NewInstanceType's Windows PrivateIPv4Address); nano-units."""
    name = info["InstanceType"]
    vcpus = int((info.get("VCpuInfo") or {}).get("DefaultVCpus", 0))
    limits = VPC_LIMITS.get(name)
    pod_eni = limits[2] if limits is not None and limits[1] else 0
    neuron = info.get("NeuronInfo")
    devices = (neuron or {}).get("NeuronDevices") or []
    neuron_devices = sum(int(d.get("Count", 0)) for d in devices)
    neuron_cores = 0
    if neuron is not None and devices:
        neuron_cores = int(devices[0].get("Count", 0)) * int((devices[0].get("CoreInfo") or {}).get("Count", 0))
    capacity = {
        _CPU: vcpus * NANO,
        _MEMORY: memory_capacity(info, settings.vm_memory_overhead_percent),
        _EPHEMERAL: ephemeral_storage(info, settings),
        _PODS: pods(info, settings) * NANO,
        L.RESOURCE_AWS_POD_ENI: pod_eni * NANO,
        L.RESOURCE_NVIDIA_GPU: _gpu_count(info, "NVIDIA") * NANO,
        L.RESOURCE_AMD_GPU: _gpu_count(info, "AMD") * NANO,
        L.RESOURCE_AWS_NEURON: neuron_devices * NANO,
        L.RESOURCE_AWS_NEURON_CORE: neuron_cores * NANO,
        L.RESOURCE_HABANA_GAUDI: _gpu_count(info, "Habana") * NANO,
        L.RESOURCE_EFA: _efas(info, settings.network_interfaces) * NANO,
    }
    # NewInstanceType: requirements compatible with os=windows <=> Windows family on amd64
    if _canonical_family(settings.ami_family) in _WINDOWS_FAMILIES and _architecture(info) == ARCHITECTURE_AMD64:
        capacity[L.RESOURCE_PRIVATE_IPV4_ADDRESS] = ((limits[0] - 1) if limits is not None else 0) * NANO
    return capacity


# ---------------------------------------------------------------------------------------------
# Overhead (types.go kubeReservedResources / systemReservedResources / evictionThreshold)
# ---------------------------------------------------------------------------------------------
def kube_reserved_cpu_millis(vcpus: int) -> int:
    """types.go kubeReservedResources cpu: 6 % / 1 % / 0.5 % / 0.25 % bands, each truncated."""
    cpu = vcpus * 1000
    total = 0
    for start, end, pct in KUBE_RESERVED_CPU_BANDS:
        if cpu >= start:
            r = float(end - start) if cpu >= end else float(cpu - start)
            total += int(r * pct)
    return total


def _eviction_signal(capacity_nanos: int, value: str) -> int:
    """types.go computeEvictionSignal (+ mustParsePercentage: 100% means 0)."""
    if value.endswith("%"):
        p = float(value.strip("%"))
        if p == 100:
            p = 0.0
        return int(math.ceil(float(capacity_nanos / NANO) / 100 * p)) * NANO
    return parse_nanos(value)


def compute_overhead(info: Mapping[str, Any], settings: InstanceTypeSettings,
                     capacity: Mapping[str, int] | None = None) -> InstanceTypeOverhead:
    """NewInstanceType's Overhead: kubeReserved (memory 11 × pods + 255 Mi with ENI-limited pods and
    0 reserved ENIs for families using ENI-limited memory overhead, else the effective pods; cpu
    bands; ephemeral 1Gi; user keys override), systemReserved (user only), eviction threshold
    (memory 100Mi, nodefs 10 %, evictionHard memory.available / nodefs.available override)."""
    flags = ami_family_flags(settings.ami_family)
    vcpus = int((info.get("VCpuInfo") or {}).get("DefaultVCpus", 0))
    if flags.uses_eni_limited_memory_overhead:
        reserved_pods = eni_limited_pods(info, 0, settings.network_interfaces)
    else:
        reserved_pods = pods(info, settings)
    kube: dict[str, int] = {
        _MEMORY: (11 * reserved_pods + 255) * MIB * NANO,
        _EPHEMERAL: KUBE_RESERVED_EPHEMERAL,
        _CPU: kube_reserved_cpu_millis(vcpus) * 10**6,
    }
    kube.update(settings.kube_reserved)
    system = dict(settings.system_reserved)
    memory = capacity[_MEMORY] if capacity is not None else memory_capacity(info, settings.vm_memory_overhead_percent)
    storage = capacity[_EPHEMERAL] if capacity is not None else ephemeral_storage(info, settings)
    storage_value = -(-storage // NANO)  # Quantity.Value() rounds up
    eviction = {
        _MEMORY: EVICTION_MEMORY_DEFAULT,
        _EPHEMERAL: int(math.ceil(float(storage_value) / 100 * EVICTION_NODEFS_PERCENT)) * NANO,
    }
    if settings.eviction_hard is not None:
        hard = dict(settings.eviction_hard)
        if MEMORY_AVAILABLE in hard:
            eviction[_MEMORY] = _eviction_signal(memory, hard[MEMORY_AVAILABLE])
        if NODEFS_AVAILABLE in hard:
            eviction[_EPHEMERAL] = _eviction_signal(storage, hard[NODEFS_AVAILABLE])
    return InstanceTypeOverhead(kube, system, eviction)


def new_instance_type(info: Mapping[str, Any], region: str, offering_zones: Iterable[str],
                      zone_info: Sequence[ZoneInfo], settings: InstanceTypeSettings,
                      offerings: Iterable[Offering] = (),
                      well_known: frozenset[str] = L.WELL_KNOWN_LABELS) -> InstanceType:
    """types.go NewInstanceType (offerings injected separately, as upstream)."""
    capacity = compute_capacity(info, settings)
    return InstanceType(
        info["InstanceType"],
        compute_requirements(info, region, offering_zones, zone_info, settings.ami_family),
        Offerings(offerings),
        capacity,
        compute_overhead(info, settings, capacity),
        well_known,
    )


# ---------------------------------------------------------------------------------------------
# NodeClass compatibility (compatibility/compatibility.go)
# ---------------------------------------------------------------------------------------------
def is_compatible_with_nodeclass(info: Mapping[str, Any], settings: InstanceTypeSettings) -> bool:
    """compatibility.go IsCompatibleWithNodeClass: network-interface checks (1)-(3), (5) and the AMI
    family check (AL2023 excludes ``a1.*``). Secondary-IP, nested-virtualisation, placement-group
    and connection-tracking checks are not modelled."""
    if settings.ami_family == L.AMI_FAMILY_AL2023 and info["InstanceType"].startswith("a1."):
        return False
    nics = settings.network_interfaces
    if nics is None:
        return True
    network = info.get("NetworkInfo") or {}
    cards = network.get("NetworkCards") or []
    if not cards or network.get("EnaSupport") == "unsupported":
        return False
    for card_index, device_index, _ in nics:
        if len(cards) <= card_index:
            return False
        card = next((c for c in cards if int(c.get("NetworkCardIndex", 0)) == card_index), None)
        if card is None or int(card.get("MaximumNetworkInterfaces", 0)) <= device_index:
            return False
    efa_only = sum(1 for _, _, kind in nics if kind == "efa-only")
    if efa_only:
        max_efa = (network.get("EfaInfo") or {}).get("MaximumEfaInterfaces")
        if max_efa is None or efa_only > int(max_efa):
            return False
    return True


# ---------------------------------------------------------------------------------------------
# The provider
# ---------------------------------------------------------------------------------------------
class CatalogSource(Protocol):
    """What the provider reads the catalogue from (``awsprovider.ec2.catalog.InstanceTypeCatalog``)."""

    def instance_types(self) -> Mapping[str, Mapping[str, Any]]: ...

    def offerings(self) -> Mapping[str, Iterable[str]]: ...


class PriceSource(Protocol):
    """``awsprovider.pricing.PricingProvider``'s lookups."""

    def on_demand_price(self, instance_type: str) -> float | None: ...

    def spot_price(self, instance_type: str, zone: str) -> float | None: ...


class _StaticCatalog:
    def __init__(self, types: Mapping[str, Mapping[str, Any]], offerings: Mapping[str, Iterable[str]]) -> None:
        self._types = {k: types[k] for k in sorted(types)}
        self._offerings = {k: frozenset(offerings[k]) for k in sorted(offerings)}

    def instance_types(self) -> Mapping[str, Mapping[str, Any]]:
        return self._types

    def offerings(self) -> Mapping[str, Iterable[str]]:
        return self._offerings


@dataclass
class _Static:
    """One type's NodeClass-dependent static part."""

    requirements: Requirements
    capacity: dict[str, int]
    overhead: InstanceTypeOverhead
    zones: frozenset[str]
    compatible: bool
    capacity_types: tuple[str, ...]


def _clone(proto: InstanceType) -> InstanceType:
    """A fresh InstanceType equal to what ``InstanceType(name, requirements, offerings, capacity,
    overhead, well_known)`` builds from ``proto``'s parts (own offerings list and capacity dict;
    shared requirements, overhead and Offering objects), except that the allocatable groups
    ``proto`` computed are carried over instead of being recomputed: they are a pure function of
    the offerings, capacity and overhead the clone starts with (upstream computes them once per
    type too, sync.Once). tests/awsprovider/test_instancetype.py checks every slot against the
    constructor, so a new InstanceType slot cannot be missed silently.
    """
    wk = proto.well_known
    c = InstanceType.__new__(InstanceType)
    c.name = proto.name
    c.requirements = proto.requirements
    c.offerings = Offerings(proto.offerings, wk)
    c.capacity = dict(proto.capacity)
    c.overhead = proto.overhead
    c.well_known = wk
    c.capacity_overlay_applied = proto.capacity_overlay_applied
    c._groups = proto.allocatable_groups()  # noqa: SLF001 - see the docstring
    c._available = None  # noqa: SLF001 - computed from the clone's own offerings list on demand
    return c


class _Prototypes:
    """One input set's prototypes: type name -> (ICE stamp, InstanceType), and all of them in
    catalogue order (rebuilt only when one changed)."""

    __slots__ = ("by_name", "all", "stamp")

    def __init__(self) -> None:
        self.by_name: dict[str, tuple[tuple[int, int, tuple[int, ...]], InstanceType]] = {}
        self.all: tuple[InstanceType, ...] | None = None
        #: the ICE view's (global version, per-type versions) when ``all`` was last validated
        #: ... and the reserved offerings' available counts per type
        self.stamp: tuple[int, dict[str, int], dict[str, tuple[int, ...]]] | None = None


class SharedInstanceTypeCache:
    """The process-wide memo of static parts and empty-ICE prototypes (see the module doc).

    Two bounded LRU tables (``size`` entries each) under one lock; values are never mutated after
    they are stored. :meth:`clear` empties both (tests; a host that wants the memory back)."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._static: OrderedDict[tuple[Any, ...], dict[str, _Static]] = OrderedDict()
        self._prototypes: OrderedDict[tuple[Any, ...], tuple[InstanceType, ...]] = OrderedDict()
        self.hits = 0

    def _get(self, table: OrderedDict[tuple[Any, ...], Any], key: tuple[Any, ...]) -> Any:
        with self._lock:
            value = table.get(key)
            if value is not None:
                table.move_to_end(key)
                self.hits += 1
            return value

    def _put(self, table: OrderedDict[tuple[Any, ...], Any], key: tuple[Any, ...], value: Any) -> Any:
        with self._lock:
            value = table.setdefault(key, value)  # a concurrent builder's equal value wins
            table.move_to_end(key)
            while len(table) > self.size:
                table.popitem(last=False)
            return value

    def static(self, key: tuple[Any, ...]) -> dict[str, _Static] | None:
        return self._get(self._static, key)  # type: ignore[no-any-return]

    def put_static(self, key: tuple[Any, ...], value: dict[str, _Static]) -> dict[str, _Static]:
        return self._put(self._static, key, value)  # type: ignore[no-any-return]

    def prototypes(self, key: tuple[Any, ...]) -> tuple[InstanceType, ...] | None:
        return self._get(self._prototypes, key)  # type: ignore[no-any-return]

    def put_prototypes(self, key: tuple[Any, ...], value: tuple[InstanceType, ...]) -> tuple[InstanceType, ...]:
        return self._put(self._prototypes, key, value)  # type: ignore[no-any-return]

    def clear(self) -> None:
        with self._lock:
            self._static.clear()
            self._prototypes.clear()
            self.hits = 0


#: the process-wide instance-type memo (module doc, "Across providers")
SHARED_CACHE = SharedInstanceTypeCache()


def _view_is_empty(view: UnavailableView | None) -> bool:
    """Whether an ICE view marks nothing unavailable (its offerings equal those of no view)."""
    return view is None or not (view.offerings or view.capacity_types or view.subnets)


class InstanceTypeProvider:
    """Mirrors instancetype.go DefaultProvider + offering.DefaultProvider (base resolver).

    Build once per simulation::

        provider = InstanceTypeProvider("us-east-1", mocked_ec2.catalog, PricingProvider("us-east-1"),
                                        UnavailableOfferings(clock))
        its = provider.list(resolve_nodeclass(client, nodeclass))   # InstanceTypes, sorted by name

    The catalogue is read once (first ``list``). ``list`` returns fresh :class:`InstanceType`
    objects every call (callers may reorder or filter them) whose static parts are cached, and whose
    offerings reflect the ICE cache passed in (default: the provider's) and the prices at the call.
    Price updates through the pricing provider's
    ``update_*`` methods are picked up by its ``version``; other price changes need
    :meth:`invalidate_offerings`.
    """

    def __init__(self, region: str, catalog: CatalogSource, pricing: PriceSource,
                 unavailable: UnavailableOfferings | None = None, *,
                 reserved_enis: int = RESERVED_ENIS,
                 vm_memory_overhead_percent: float = VM_MEMORY_OVERHEAD_PERCENT,
                 well_known: frozenset[str] = L.WELL_KNOWN_LABELS,
                 capacity_reservations: Any = None, reserved_capacity: bool = True,
                 shared: SharedInstanceTypeCache | None = SHARED_CACHE) -> None:
        self.region = region
        #: the availability cache (awsprovider.capacityreservation.CapacityReservationProvider) or None
        self.capacity_reservations = capacity_reservations
        #: the ReservedCapacity feature gate (reserved_capacity_resolver.go)
        self.reserved_capacity = reserved_capacity
        #: the process-wide memo consulted when the inputs have content keys (None: never)
        self.shared = shared
        self._catalog = catalog
        self.pricing = pricing
        self.unavailable = unavailable
        self.reserved_enis = reserved_enis
        self.vm_memory_overhead_percent = vm_memory_overhead_percent
        self.well_known = well_known
        self._types: Mapping[str, Mapping[str, Any]] | None = None
        self._type_zones: dict[str, frozenset[str]] = {}
        self._all_zones: tuple[str, ...] = ()
        self._static: dict[tuple[Any, ...], dict[str, _Static]] = {}
        self._offering_cache: dict[tuple[Any, ...], _Prototypes] = {}
        self._offering_reqs: dict[tuple[str, str, str | None], Requirements] = {}
        self._pricing_generation = 0

    @classmethod
    def from_data(cls, region: str, types: Mapping[str, Mapping[str, Any]], offerings: Mapping[str, Iterable[str]],
                  pricing: PriceSource, unavailable: UnavailableOfferings | None = None,
                  **kwargs: Any) -> InstanceTypeProvider:
        """A provider over plain dicts (DescribeInstanceTypes entries by name, type -> zones)."""
        return cls(region, _StaticCatalog(types, offerings), pricing, unavailable, **kwargs)

    # -- catalogue ------------------------------------------------------------------------------
    def _load(self) -> Mapping[str, Mapping[str, Any]]:
        if self._types is None:
            raw = self._catalog.instance_types()
            self._types = {k: raw[k] for k in sorted(raw)}
            offerings = self._catalog.offerings()
            self._type_zones = {k: frozenset(v) for k, v in offerings.items()}
            self._all_zones = tuple(sorted({z for zs in self._type_zones.values() for z in zs}))
        return self._types

    def info(self, name: str) -> Mapping[str, Any] | None:
        """The DescribeInstanceTypes entry of ``name``."""
        return self._load().get(name)

    def names(self) -> list[str]:
        """Every catalogue type name, sorted."""
        return list(self._load())

    def all_zones(self) -> tuple[str, ...]:
        """instancetype.go allZones: every zone any type is offered in (sorted)."""
        self._load()
        return self._all_zones

    def offering_zones(self, name: str) -> frozenset[str]:
        """The zones DescribeInstanceTypeOfferings lists for ``name``."""
        self._load()
        return self._type_zones.get(name, frozenset())

    def eni_limits(self, name: str) -> tuple[int, int] | None:
        """instancetype.go ENILimits: (default-card ENIs, IPv4 per ENI)."""
        info = self.info(name)
        if info is None:
            return None
        network = info.get("NetworkInfo") or {}
        cards = network.get("NetworkCards") or []
        idx = int(network.get("DefaultNetworkCardIndex") or 0)
        enis = int(cards[idx].get("MaximumNetworkInterfaces", 0)) if idx < len(cards) else 0
        return enis, int(network.get("Ipv4AddressesPerInterface", 0))

    def invalidate_offerings(self) -> None:
        """Drop cached offerings (call after updating prices by other means than the pricing
        provider's ``update_*`` methods, which bump its ``version``)."""
        self._offering_cache.clear()
        self._pricing_generation += 1

    def _pricing_version(self) -> int:
        # PricingProvider.version changes on every price update; plain price sources (test
        # stubs, static books) have no version and never change.
        return int(getattr(self.pricing, "version", 0))

    # -- static part ----------------------------------------------------------------------------
    def settings_for(self, nodeclass: ResolvedNodeClass) -> InstanceTypeSettings:
        """The NodeClass inputs of the instance-type formulas (kept with the resolution)."""
        key = ("settings", self.reserved_enis, self.vm_memory_overhead_percent)
        derived: dict[Any, Any] | None = getattr(nodeclass, "derived", None)
        held = derived.get(key) if derived is not None else None
        if held is None:
            held = InstanceTypeSettings.from_nodeclass(nodeclass, self.reserved_enis, self.vm_memory_overhead_percent)
            if derived is not None:
                derived[key] = held
        settings: InstanceTypeSettings = held
        return settings

    def _shared_static_key(self, settings: InstanceTypeSettings, zone_info: tuple[ZoneInfo, ...],
                           reservations: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
        """The process-wide key of a static table, or None when the catalogue has no content key."""
        token = getattr(self._catalog, "cache_token", None)
        if self.shared is None or token is None:
            return None
        return (token, self.region, settings, zone_info, reservations)

    def _static_for(self, settings: InstanceTypeSettings, zone_info: tuple[ZoneInfo, ...],
                    reservations: tuple[Any, ...] = ()) -> dict[str, _Static]:
        key = (settings, zone_info, reservations)
        cached = self._static.get(key)
        if cached is None:
            shared_key = self._shared_static_key(settings, zone_info, reservations)
            if shared_key is not None and self.shared is not None:
                cached = self.shared.static(shared_key)
                if cached is not None:
                    self._static[key] = cached
                    return cached
            types = self._load()
            cached = {}
            for name, info in types.items():
                zones = self._type_zones.get(name, frozenset())
                capacity = compute_capacity(info, settings)
                own = tuple(r for r in reservations if r.instance_type == name)
                reqs = compute_requirements(info, self.region, zones, zone_info, settings.ami_family, own)
                cts = tuple(sorted(v for v in reqs.get(LABEL_CAPACITY_TYPE).values if v != CAPACITY_TYPE_RESERVED))
                cached[name] = _Static(reqs, capacity, compute_overhead(info, settings, capacity),
                                       frozenset(reqs.get(LABEL_ZONE).values),
                                       is_compatible_with_nodeclass(info, settings), cts)
            if shared_key is not None and self.shared is not None:
                cached = self.shared.put_static(shared_key, cached)
            self._static[key] = cached
        return cached

    # -- offerings (offering/base_resolver.go) --------------------------------------------------
    def _offering_requirements(self, capacity_type: str, zone: str, zone_id: str | None) -> Requirements:
        key = (capacity_type, zone, zone_id)
        reqs = self._offering_reqs.get(key)
        if reqs is None:
            reqs = Requirements(
                _in(LABEL_CAPACITY_TYPE, capacity_type),
                _in(LABEL_ZONE, zone),
                _dne(L.LABEL_CAPACITY_RESERVATION_ID),
                _dne(L.LABEL_CAPACITY_RESERVATION_TYPE),
                _dne(L.LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE),
            )
            if zone_id is not None:
                reqs.add(_in(L.LABEL_TOPOLOGY_ZONE_ID, zone_id))
            self._offering_reqs[key] = reqs
        return reqs

    def _resolve_offerings(self, name: str, static: _Static, zone_info: tuple[ZoneInfo, ...],
                           unavailable: UnavailableView | None,
                           overlay_prices: Mapping[str, float],
                           reservations: tuple[Any, ...] = ()) -> list[Offering]:
        by_zone = {z.zone: z for z in zone_info}
        out: list[Offering] = []
        pricing = self.pricing
        for zone in self._all_zones:
            zi = by_zone.get(zone)
            subnet_ids = zi.subnet_ids if zi is not None else ()
            for ct in static.capacity_types:
                is_unavailable = (unavailable is not None
                                  and unavailable.is_unavailable(name, zone, subnet_ids, ct))
                price = pricing.on_demand_price(name) if ct == CAPACITY_TYPE_ON_DEMAND else pricing.spot_price(name, zone)
                if price is None:
                    price = overlay_prices.get(name)
                has_price = price is not None
                out.append(Offering(
                    self._offering_requirements(ct, zone, zi.zone_id if zi is not None else None),
                    float(price) if price is not None else 0.0,
                    static.compatible and not is_unavailable and has_price and zone in static.zones,
                ))
        if self.reserved_capacity and reservations:
            out.extend(self._reserved_offerings(name, static, zone_info, reservations))
        return out

    def _reserved_offerings(self, name: str, static: _Static, zone_info: tuple[ZoneInfo, ...],
                            reservations: tuple[Any, ...]) -> list[Offering]:
        """reserved_capacity_resolver.go ResolveOfferings: one offering per reservation of the type."""
        by_zone = {z.zone: z for z in zone_info}
        od = self.pricing.on_demand_price(name)
        price = od / RESERVED_PRICE_DIVISOR if od is not None else 0.0
        cache = self.capacity_reservations
        out: list[Offering] = []
        for r in reservations:
            if r.instance_type != name:
                continue
            zi = by_zone.get(r.availability_zone)
            count = cache.get_available_instance_count(r.id) if cache is not None else 0
            reqs = Requirements(
                _in(LABEL_CAPACITY_TYPE, CAPACITY_TYPE_RESERVED),
                _in(LABEL_ZONE, r.availability_zone),
                _in(L.LABEL_CAPACITY_RESERVATION_ID, r.id),
                _in(L.LABEL_CAPACITY_RESERVATION_TYPE, r.reservation_type),
                _in(L.LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE, "true" if r.interruptible else "false"),
            )
            if zi is not None:
                reqs.add(_in(L.LABEL_TOPOLOGY_ZONE_ID, zi.zone_id))
            out.append(Offering(
                reqs, price,
                static.compatible and count != 0 and r.availability_zone in static.zones and r.state != "expiring",
                reservation_capacity=count, reservation_id_label=L.LABEL_CAPACITY_RESERVATION_ID))
        return out

    # -- List -----------------------------------------------------------------------------------
    def list(self, nodeclass: ResolvedNodeClass, unavailable: UnavailableOfferings | None = None,
             overlay_prices: Mapping[str, float] | None = None) -> InstanceTypes:
        """instancetype.go List: every catalogue type (sorted by name) with offerings injected.

        ``unavailable``: the ICE cache to evaluate offerings against (default: the provider's).
        ``overlay_prices``: type -> price for types without any price (offering.go GetOverlayPrice;
        see :func:`awsprovider.overlay.overlay_prices`).
        Raises :class:`InstanceTypeError` ``no instance types found`` / ``no instance types
        offerings found`` / ``no subnets found``.
        """
        return InstanceTypes(_clone(it) for it in self.prototypes(nodeclass, unavailable, overlay_prices))

    def prototypes(self, nodeclass: ResolvedNodeClass, unavailable: UnavailableOfferings | None = None,
                   overlay_prices: Mapping[str, float] | None = None) -> tuple[InstanceType, ...]:
        """:meth:`list` without the copies: the provider's own InstanceType objects, which callers
        must treat as read-only (the launch path does: its filters copy on write). The same tuple
        object comes back while no type's offerings changed (same inputs, same ICE cache state),
        so work derived from it can be memoised by identity (see
        :meth:`awsprovider.instance.InstanceProvider.filter_instance_types`)."""
        types = self._load()
        if not types:
            raise InstanceTypeError("no instance types found")
        if not self._type_zones:
            raise InstanceTypeError("no instance types offerings found")
        zone_info = nodeclass.zone_info()
        if not zone_info:
            raise InstanceTypeError("no subnets found")
        settings = self.settings_for(nodeclass)
        reservations = tuple(nodeclass.capacity_reservations) if self.reserved_capacity else ()
        statics = self._static_for(settings, zone_info, reservations)
        uo = unavailable if unavailable is not None else self.unavailable
        prices = dict(overlay_prices or {})
        prices_key = tuple(sorted(prices.items()))
        view = uo.snapshot() if uo is not None else None
        gv = view.global_version if view is not None else 0
        tv = view.type_versions if view is not None else {}
        # The full settings (not only the ones offerings depend on): a prototype also carries the
        # settings-dependent capacity and overhead.
        # the reserved offerings' available counts, per type (part of each type's stamp)
        cr = self.capacity_reservations
        avail: dict[str, tuple[int, ...]] = {}
        for r in reservations:
            avail[r.instance_type] = avail.get(r.instance_type, ()) + (
                cr.get_available_instance_count(r.id) if cr is not None else 0,)
        base_key = (settings, zone_info, prices_key, reservations,
                    id(uo), self._pricing_generation, self._pricing_version())
        cached = self._offering_cache.get(base_key)  # hashed once per call, not once per type
        if cached is None:
            cached = self._offering_cache[base_key] = _Prototypes()
        # Fast path: the ICE view is unchanged since ``all`` was last validated for these inputs.
        # Every name's stamp below is (gv, tv.get(name, 0)), and each entry of ``by_name`` was
        # set to exactly that stamp at that time; with equal gv and tv every entry still matches,
        # the loop would rebuild nothing and return ``all`` -- so return it without the loop.
        if (cached.all is not None and cached.stamp is not None and cached.stamp[0] == gv and cached.stamp[1] == tv
                and cached.stamp[2] == avail):
            return cached.all
        by_name = cached.by_name
        wk = self.well_known
        shared_key: tuple[Any, ...] | None = None
        if cached.all is None and _view_is_empty(view) and not avail:  # reserved counts change per launch
            shared_key = self._shared_prototypes_key(settings, zone_info, prices_key)
            shared = self.shared.prototypes(shared_key) if shared_key is not None and self.shared is not None else None
            if shared is not None:
                for proto in shared:
                    by_name[proto.name] = ((gv, tv.get(proto.name, 0), ()), proto)
                cached.all = shared
                cached.stamp = (gv, dict(tv), avail)
                return shared
        changed = cached.all is None
        for name, static in statics.items():
            stamp = (gv, tv.get(name, 0), avail.get(name, ()))
            hit = by_name.get(name)
            if hit is None or hit[0] != stamp:
                proto = InstanceType(name, static.requirements,
                                     Offerings(self._resolve_offerings(name, static, zone_info, view, prices,
                                                                       reservations)),
                                     static.capacity, static.overhead, wk)
                by_name[name] = (stamp, proto)
                changed = True
        if changed:
            cached.all = tuple(by_name[name][1] for name in statics)
            if shared_key is not None and self.shared is not None:
                cached.all = self.shared.put_prototypes(shared_key, cached.all)
                for proto in cached.all:
                    by_name[proto.name] = ((gv, tv.get(proto.name, 0), avail.get(proto.name, ())), proto)
        cached.stamp = (gv, dict(tv), avail)
        assert cached.all is not None
        return cached.all

    def _shared_prototypes_key(self, settings: InstanceTypeSettings, zone_info: tuple[ZoneInfo, ...],
                               prices_key: tuple[tuple[str, float], ...]) -> tuple[Any, ...] | None:
        """The process-wide key of an empty-ICE prototype table: the static key, the pricing's
        content key, the overlay prices and the well-known labels (None when one has no key, or
        after :meth:`invalidate_offerings`, which says prices changed by other means)."""
        static_key = self._shared_static_key(settings, zone_info)
        pricing = getattr(self.pricing, "cache_token", None)
        if static_key is None or pricing is None or self._pricing_generation:
            return None
        return (static_key, pricing, prices_key, self.well_known)

    def get(self, nodeclass: ResolvedNodeClass, name: str, unavailable: UnavailableOfferings | None = None,
            overlay_prices: Mapping[str, float] | None = None) -> InstanceType:
        """instancetype.go Get: one type with offerings injected."""
        if name not in self._load():
            raise InstanceTypeError(f"instance type {name} not found in cache")
        for it in self.list(nodeclass, unavailable, overlay_prices):
            if it.name == name:
                return it
        raise InstanceTypeError(f"instance type {name} not found in cache")  # pragma: no cover
