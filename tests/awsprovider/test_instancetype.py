"""Instance types from moto's us-east-1 catalogue: labels, capacity, overhead, offerings.

Cases ported from aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/suite_test.go
(named per test) plus karpy-specific checks (real price table, caching).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from awsprovider import labels as L
from awsprovider.apis.ec2nodeclass import EC2NodeClass
from awsprovider.ec2.backend import MockedEC2
from awsprovider.instancetype import (
    InstanceTypeError,
    InstanceTypeProvider,
    InstanceTypeSettings,
    compute_capacity,
    compute_overhead,
    compute_requirements,
    eni_limited_pods,
    instance_type_parts,
    kube_reserved_cpu_millis,
    memory_capacity,
)
from awsprovider.nodeclass import ResolvedNodeClass, ResolvedSubnet, ZoneInfo, default_nodeclass
from awsprovider.pricing import PricingProvider
from awsprovider.unavailableofferings import UnavailableOfferings
from karpy.api.quantity import parse_nanos
from karpy.scheduling.labels import LABEL_OS, LABEL_WINDOWS_BUILD, LABEL_ZONE, OP_IN
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

N = 10**9
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
ZONE_IDS = {"us-east-1a": "use1-az6", "us-east-1b": "use1-az1", "us-east-1c": "use1-az2"}


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t


@pytest.fixture(scope="module")
def catalog() -> Iterator[tuple[dict[str, Any], dict[str, frozenset[str]]]]:
    with MockedEC2(region="us-east-1") as ec2:
        yield dict(ec2.catalog.instance_types()), dict(ec2.catalog.offerings())


@pytest.fixture(scope="module")
def pricing() -> PricingProvider:
    return PricingProvider("us-east-1", "2026-07-20", spot_mode="on-demand")


def nodeclass(spec: dict[str, Any] | None = None, zones: tuple[str, ...] = ZONES) -> ResolvedNodeClass:
    base = default_nodeclass()
    if spec:
        data = base.model_dump(by_alias=True, exclude_none=True)
        data["spec"].update(spec)
        base = EC2NodeClass.model_validate(data)
    subnets = tuple(ResolvedSubnet(f"subnet-{z[-1]}", z, ZONE_IDS[z], 4091) for z in zones)
    return ResolvedNodeClass(base, subnets)


def settings(spec: dict[str, Any] | None = None, reserved_enis: int = 0) -> InstanceTypeSettings:
    return InstanceTypeSettings.from_nodeclass(nodeclass(spec), reserved_enis=reserved_enis)


def mi(n: int) -> int:
    return n * (1 << 20) * N


@pytest.fixture()
def provider(catalog: Any, pricing: PricingProvider) -> InstanceTypeProvider:
    types, offerings = catalog
    return InstanceTypeProvider.from_data("us-east-1", types, offerings, pricing, UnavailableOfferings(Clock()))


def by_name(its: Any) -> dict[str, Any]:
    return {it.name: it for it in its}


# -- generation regex -------------------------------------------------------------------------
@pytest.mark.parametrize("name,expected", [
    ("m5.large", ("m", "5")),
    ("c7i-flex.large", ("c", "7")),
    ("u-6tb1.metal", ("u", "1")),
    ("p6-b200.48xlarge", ("p", "6")),
    ("inf2.xlarge", ("inf", "2")),
    ("x2iedn.xlarge", ("x", "2")),
    ("c8i.large", ("c", "8")),
])
def test_instance_type_scheme(name: str, expected: tuple[str, str]) -> None:
    # upstream: types.go instanceTypeScheme (category = group 1, generation = group 3)
    assert instance_type_parts(name) == expected


def test_flex_and_family_labels(catalog: Any) -> None:
    types, offerings = catalog
    zi = nodeclass().zone_info()
    reqs = compute_requirements(types["c7i-flex.large"], "us-east-1", offerings["c7i-flex.large"], zi, "AL2023")
    assert reqs.get(L.LABEL_INSTANCE_CAPABILITY_FLEX).values == {"true"}
    assert reqs.get(L.LABEL_INSTANCE_FAMILY).values == {"c7i-flex"}
    assert reqs.get(L.LABEL_INSTANCE_GENERATION).values == {"7"}
    reqs = compute_requirements(types["p6-b200.48xlarge"], "us-east-1", offerings["p6-b200.48xlarge"], zi, "AL2023")
    assert reqs.get(L.LABEL_INSTANCE_CATEGORY).values == {"p"}
    assert reqs.get(L.LABEL_INSTANCE_GENERATION).values == {"6"}
    assert reqs.get(L.LABEL_INSTANCE_CAPABILITY_FLEX).values == {"false"}
    # p6-b200 is offered only in us-east-1c in moto: zone requirement = offering zones ∩ NodeClass zones
    assert reqs.get(LABEL_ZONE).values == {"us-east-1c"}
    assert reqs.get(L.LABEL_TOPOLOGY_ZONE_ID).values == {"use1-az2"}


# -- labels (suite_test.go L223-416) -----------------------------------------------------------
def test_g4dn_labels(provider: InstanceTypeProvider) -> None:
    # upstream: suite_test.go "should support individual instance type labels" (g4dn.8xlarge)
    it = by_name(provider.list(nodeclass()))["g4dn.8xlarge"]
    expected = {
        L.LABEL_INSTANCE_CATEGORY: "g", L.LABEL_INSTANCE_GENERATION: "4", L.LABEL_INSTANCE_FAMILY: "g4dn",
        L.LABEL_INSTANCE_SIZE: "8xlarge", L.LABEL_INSTANCE_CPU: "32", L.LABEL_INSTANCE_MEMORY: "131072",
        L.LABEL_INSTANCE_EBS_BANDWIDTH: "9500", L.LABEL_INSTANCE_NETWORK_BANDWIDTH: "50000",
        L.LABEL_INSTANCE_GPU_NAME: "t4", L.LABEL_INSTANCE_GPU_MANUFACTURER: "nvidia",
        L.LABEL_INSTANCE_GPU_COUNT: "1", L.LABEL_INSTANCE_GPU_MEMORY: "16384",
        L.LABEL_INSTANCE_LOCAL_NVME: "900", L.LABEL_INSTANCE_HYPERVISOR: "nitro",
        L.LABEL_INSTANCE_ENCRYPTION_IN_TRANSIT_SUPPORTED: "true", L.LABEL_INSTANCE_CPU_MANUFACTURER: "intel",
        L.LABEL_INSTANCE_CPU_SUSTAINED_CLOCK_SPEED_MHZ: "2500", "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux", "topology.kubernetes.io/region": "us-east-1",
        "node.kubernetes.io/instance-type": "g4dn.8xlarge",
    }
    for key, value in expected.items():
        assert it.requirements.get(key).values == {value}, key
    assert it.capacity["nvidia.com/gpu"] == 1 * N
    # every AWS well-known label is defined on the type (possibly DoesNotExist)
    missing = L.AWS_WELL_KNOWN_LABELS - set(it.requirements) - {L.LABEL_PLACEMENT_GROUP_ID, L.LABEL_PLACEMENT_GROUP_PARTITION}
    assert not missing


def test_inf2_labels(provider: InstanceTypeProvider) -> None:
    # upstream: suite_test.go "should support individual instance type labels" (inf2.xlarge)
    it = by_name(provider.list(nodeclass()))["inf2.xlarge"]
    expected = {
        L.LABEL_INSTANCE_ACCELERATOR_NAME: "inferentia2", L.LABEL_INSTANCE_ACCELERATOR_MANUFACTURER: "aws",
        L.LABEL_INSTANCE_ACCELERATOR_COUNT: "1", L.LABEL_INSTANCE_CPU: "4", L.LABEL_INSTANCE_MEMORY: "16384",
        L.LABEL_INSTANCE_EBS_BANDWIDTH: "10000", L.LABEL_INSTANCE_NETWORK_BANDWIDTH: "2083",
        L.LABEL_INSTANCE_CPU_MANUFACTURER: "amd", L.LABEL_INSTANCE_CPU_SUSTAINED_CLOCK_SPEED_MHZ: "3600",
    }
    for key, value in expected.items():
        assert it.requirements.get(key).values == {value}, key
    assert it.requirements.get(L.LABEL_INSTANCE_GPU_NAME).operator == "DoesNotExist"
    assert it.capacity["aws.amazon.com/neuron"] == 1 * N
    assert it.capacity["aws.amazon.com/neuroncore"] == 2 * N


def test_m5_large_has_no_local_nvme_and_network_bandwidth(provider: InstanceTypeProvider) -> None:
    it = by_name(provider.list(nodeclass()))["m5.large"]
    assert it.requirements.get(L.LABEL_INSTANCE_LOCAL_NVME).operator == "DoesNotExist"
    assert it.requirements.get(L.LABEL_INSTANCE_NETWORK_BANDWIDTH).values == {"750"}
    assert it.requirements.get(L.LABEL_CAPACITY_RESERVATION_ID).operator == "DoesNotExist"
    assert it.requirements.get(L.LABEL_INSTANCE_TENANCY).values == {"default", "dedicated"}


# -- capacity and allocatable ------------------------------------------------------------------
def test_m5_large_allocatable(provider: InstanceTypeProvider) -> None:
    # upstream: suite_test.go L1992 "should not set allocatable above the kubelet's" (m5.large <= 7220184Ki/1930m)
    it = by_name(provider.list(nodeclass()))["m5.large"]
    alloc = it.allocatable()
    assert alloc["cpu"] == parse_nanos("1930m")
    assert alloc["memory"] == mi(6903)
    assert alloc["memory"] <= parse_nanos("7220184Ki")
    assert it.capacity["memory"] == mi(7577)
    assert alloc["ephemeral-storage"] == parse_nanos("17Gi")
    assert it.capacity["vpc.amazonaws.com/pod-eni"] == 9 * N


@pytest.mark.parametrize("name,cpu_limit,mem_limit", [
    ("t4g.small", "1930m", "1408312Ki"), ("t4g.medium", None, "3377496Ki"), ("t4g.xlarge", "3920m", "15136012Ki"),
])
def test_allocatable_not_above_kubelet(provider: InstanceTypeProvider, name: str, cpu_limit: str | None,
                                       mem_limit: str) -> None:
    # upstream: suite_test.go L1992 table
    it = by_name(provider.list(nodeclass()))[name]
    assert it.allocatable()["memory"] <= parse_nanos(mem_limit)
    if cpu_limit:
        assert it.allocatable()["cpu"] <= parse_nanos(cpu_limit)


def test_arm64_memory_cma(catalog: Any) -> None:
    # upstream: types.go memory() Graviton -64MiB; c6g.large 4096MiB -> 4032 - ceil(302.4) = 3729Mi
    types, _ = catalog
    assert memory_capacity(types["c6g.large"]) == mi(3729)
    assert memory_capacity(types["m5.large"]) == mi(8192 - 615)


@pytest.mark.parametrize("name,pods", [("t3.large", 35), ("m5.large", 29), ("m5.xlarge", 58), ("m6idn.32xlarge", 394)])
def test_eni_limited_pods(provider: InstanceTypeProvider, name: str, pods: int) -> None:
    # upstream: suite_test.go L1610 "should set max pods to ENI-limited" (t3.large 35, m6idn.32xlarge 394)
    it = by_name(provider.list(nodeclass()))[name]
    assert it.capacity["pods"] == pods * N


def test_eni_limited_pods_uses_default_card(catalog: Any) -> None:
    # m6idn.32xlarge: 2 cards × 8 ENIs; the default card only counts (not 782 pods)
    types, _ = catalog
    assert eni_limited_pods(types["m6idn.32xlarge"]) == 394
    assert eni_limited_pods(types["t3.large"], reserved_enis=1000000) == 0  # upstream: suite_test.go L1814
    assert eni_limited_pods(types["t3.large"], network_interfaces=[(0, 1, "efa-only")]) == 24


@pytest.mark.parametrize("vcpus,millis", [(1, 60), (2, 70), (4, 80), (8, 90), (16, 110), (32, 150), (48, 190),
                                          (64, 230), (96, 310), (192, 550)])
def test_kube_reserved_cpu(vcpus: int, millis: int) -> None:
    # upstream: types.go kubeReservedResources cpu bands
    assert kube_reserved_cpu_millis(vcpus) == millis


def test_m5_xlarge_default_overhead(provider: InstanceTypeProvider) -> None:
    # upstream: suite_test.go L1144-1167 "should use defaults when no kubelet is specified" (m5.xlarge)
    it = by_name(provider.list(nodeclass()))["m5.xlarge"]
    assert it.overhead.kube_reserved == {"cpu": parse_nanos("80m"), "memory": mi(893), "ephemeral-storage": parse_nanos("1Gi")}
    assert it.overhead.system_reserved == {}
    assert it.overhead.eviction_threshold["memory"] == mi(100)
    # default ephemeral eviction ≈ 2Gi (10 % of 20Gi, ceil)
    assert it.overhead.eviction_threshold["ephemeral-storage"] == parse_nanos("2Gi")


def test_system_and_kube_reserved_overrides(catalog: Any) -> None:
    # upstream: suite_test.go L1088-1200 "should override system reserved" / "should override kube reserved"
    types, _ = catalog
    s = settings({"kubelet": {"systemReserved": {"cpu": "2", "memory": "20Gi", "ephemeral-storage": "10Gi"},
                              "kubeReserved": {"cpu": "2", "memory": "10Gi", "ephemeral-storage": "2Gi"}}})
    ovh = compute_overhead(types["m5.xlarge"], s)
    assert ovh.system_reserved == {"cpu": 2 * N, "memory": parse_nanos("20Gi"), "ephemeral-storage": parse_nanos("10Gi")}
    assert ovh.kube_reserved == {"cpu": 2 * N, "memory": parse_nanos("10Gi"), "ephemeral-storage": parse_nanos("2Gi")}


@pytest.mark.parametrize("spec,key,expected", [
    ({"evictionHard": {"memory.available": "500Mi"}}, "memory", mi(500)),
    ({"evictionHard": {"memory.available": "100%"}}, "memory", 0),
    ({"evictionSoft": {"memory.available": "1Gi"}}, "memory", mi(100)),
    ({"evictionHard": {"nodefs.available": "100%"}}, "ephemeral-storage", 0),
])
def test_eviction_threshold(catalog: Any, spec: dict[str, Any], key: str, expected: int) -> None:
    # upstream: suite_test.go L1200-1600 eviction threshold cases (m5.xlarge)
    types, _ = catalog
    ovh = compute_overhead(types["m5.xlarge"], settings({"kubelet": spec}))
    assert ovh.eviction_threshold[key] == expected


def test_eviction_percentage(catalog: Any) -> None:
    # upstream: suite_test.go "should take the eviction threshold as a percentage of capacity" (10%)
    types, _ = catalog
    info = types["m5.xlarge"]
    ovh = compute_overhead(info, settings({"kubelet": {"evictionHard": {"memory.available": "10%"}}}))
    cap = memory_capacity(info)
    assert ovh.eviction_threshold["memory"] == -(-(cap // N) // 10) * N


def test_bottlerocket_eviction_hard(catalog: Any) -> None:
    # upstream: suite_test.go "should use the evictionHard value for Bottlerocket"
    types, _ = catalog
    ovh = compute_overhead(types["m5.xlarge"], settings({"amiFamily": "Bottlerocket", "amiSelectorTerms": [{"alias": "bottlerocket@latest"}],
                                                          "kubelet": {"evictionHard": {"memory.available": "1Gi"}}}))
    assert ovh.eviction_threshold["memory"] == parse_nanos("1Gi")


def test_max_pods_override(provider: InstanceTypeProvider) -> None:
    # upstream: suite_test.go "should set pods equal to maxPods when set" (maxPods 10 everywhere)
    its = provider.list(nodeclass({"kubelet": {"maxPods": 10}}))
    assert {it.capacity["pods"] for it in its} == {10 * N}


@pytest.mark.parametrize("family,alias,memory", [
    ("AL2", "al2@latest", 640), ("AL2023", "al2023@latest", 640), ("Custom", None, 640),
    ("Bottlerocket", "bottlerocket@latest", 365), ("Windows2022", "windows2022@latest", 365),
])
def test_kube_reserved_memory_with_max_pods(catalog: Any, family: str, alias: str | None, memory: int) -> None:
    # upstream: suite_test.go L1700 "should reserve ENI-limited memory for AL2/AL2023/Custom even with maxPods"
    types, _ = catalog
    terms = [{"alias": alias}] if alias else [{"id": "ami-123"}]
    s = settings({"amiFamily": family, "amiSelectorTerms": terms, "kubelet": {"maxPods": 10}})
    assert compute_overhead(types["t3.large"], s).kube_reserved["memory"] == mi(memory)
    assert compute_capacity(types["t3.large"], s)["pods"] == 10 * N


@pytest.mark.parametrize("family,alias,pods,memory", [
    ("AL2", "al2@latest", 24, 640), ("AL2023", "al2023@latest", 24, 640), ("Bottlerocket", "bottlerocket@latest", 24, 519),
    ("Custom", None, 24, 640), ("Windows2022", "windows2022@latest", 110, 1465),
])
def test_reserved_enis(catalog: Any, family: str, alias: str | None, pods: int, memory: int) -> None:
    # upstream: suite_test.go L1750 "--reserved-enis=1" table (t3.large)
    types, _ = catalog
    terms = [{"alias": alias}] if alias else [{"id": "ami-123"}]
    s = settings({"amiFamily": family, "amiSelectorTerms": terms}, reserved_enis=1)
    assert compute_capacity(types["t3.large"], s)["pods"] == pods * N
    assert compute_overhead(types["t3.large"], s).kube_reserved["memory"] == mi(memory)


def test_pods_per_core(catalog: Any) -> None:
    # upstream: suite_test.go "should take the minimum of pods-per-core and ENI-limited pods"; Bottlerocket ignores it
    types, _ = catalog
    assert compute_capacity(types["m5.xlarge"], settings({"kubelet": {"podsPerCore": 4}}))["pods"] == 16 * N
    assert compute_capacity(types["m5.xlarge"], settings({"kubelet": {"podsPerCore": 100}}))["pods"] == 58 * N
    br = settings({"amiFamily": "Bottlerocket", "amiSelectorTerms": [{"alias": "bottlerocket@latest"}],
                   "kubelet": {"podsPerCore": 4}})
    assert compute_capacity(types["m5.xlarge"], br)["pods"] == 58 * N


def test_ephemeral_storage_sources(catalog: Any) -> None:
    # upstream: types.go ephemeralStorage: root volume, family device, Custom last BDM, RAID0, defaults
    types, _ = catalog
    m5 = types["m5.large"]
    assert compute_capacity(m5, settings())["ephemeral-storage"] == parse_nanos("20Gi")
    s = settings({"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "100Gi"}}]})
    assert compute_capacity(m5, s)["ephemeral-storage"] == parse_nanos("100Gi")
    s = settings({"blockDeviceMappings": [{"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "50Gi"}},
                                          {"deviceName": "/dev/xvdc", "ebs": {"volumeSize": "70Gi"}, "rootVolume": True}]})
    assert compute_capacity(m5, s)["ephemeral-storage"] == parse_nanos("70Gi")
    s = settings({"amiFamily": "Bottlerocket", "amiSelectorTerms": [{"alias": "bottlerocket@latest"}],
                  "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "4Gi"}},
                                          {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "60Gi"}}]})
    assert compute_capacity(m5, s)["ephemeral-storage"] == parse_nanos("60Gi")
    s = settings({"amiFamily": "Custom", "amiSelectorTerms": [{"id": "ami-1"}],
                  "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "30Gi"}},
                                          {"deviceName": "/dev/xvdz", "ebs": {"volumeSize": "40Gi"}}]})
    assert compute_capacity(m5, s)["ephemeral-storage"] == parse_nanos("40Gi")
    s = settings({"instanceStorePolicy": "RAID0"})
    assert compute_capacity(types["m6idn.32xlarge"], s)["ephemeral-storage"] == parse_nanos("7600G")
    assert compute_capacity(m5, s)["ephemeral-storage"] == parse_nanos("20Gi")
    w = settings({"amiFamily": "Windows2022", "amiSelectorTerms": [{"alias": "windows2022@latest"}]})
    assert compute_capacity(m5, w)["ephemeral-storage"] == parse_nanos("50Gi")


def test_windows_instance_type(provider: InstanceTypeProvider) -> None:
    # upstream: types.go getOS / windows-build / PrivateIPv4Address; Windows pods default 110
    its = by_name(provider.list(nodeclass({"amiFamily": "Windows2022", "amiSelectorTerms": [{"alias": "windows2022@latest"}]})))
    m5 = its["m5.large"]
    assert m5.requirements.get(LABEL_OS).values == {"windows"}
    assert m5.requirements.get(LABEL_WINDOWS_BUILD).values == {"10.0.20348"}
    assert m5.capacity["vpc.amazonaws.com/PrivateIPv4Address"] == 9 * N
    assert m5.capacity["pods"] == 110 * N
    arm = its["c6g.large"]
    assert arm.requirements.get(LABEL_OS).values == set()
    assert "vpc.amazonaws.com/PrivateIPv4Address" not in arm.capacity


# -- offerings ---------------------------------------------------------------------------------
def test_offerings_every_region_zone_and_capacity_type(provider: InstanceTypeProvider) -> None:
    # upstream: suite_test.go L2616 "should not contain duplicate offerings" + base_resolver allZones
    its = provider.list(nodeclass())
    zones = provider.all_zones()
    assert zones == tuple(f"us-east-1{c}" for c in "abcdef")
    for it in its:
        keys = [(o.zone, o.capacity_type) for o in it.offerings]
        assert len(keys) == len(set(keys))
        cts = sorted(it.requirements.get("karpenter.sh/capacity-type").values)
        assert len(keys) == len(zones) * len(cts)


def test_m5_large_available_offerings(provider: InstanceTypeProvider) -> None:
    # upstream: suite_test.go L2303 m5.large has 6 available offerings (3 NodeClass zones × 2 cts)
    m5 = by_name(provider.list(nodeclass()))["m5.large"]
    avail = {(o.zone, o.capacity_type) for o in m5.offerings if o.available}
    assert avail == {(z, ct) for z in ZONES for ct in ("on-demand", "spot")}
    od = [o for o in m5.offerings if o.capacity_type == "on-demand"]
    assert {o.price for o in od} == {0.096}
    # zone-id only on offerings in NodeClass zones
    o_d = next(o for o in m5.offerings if o.zone == "us-east-1d")
    assert not o_d.requirements.has(L.LABEL_TOPOLOGY_ZONE_ID)
    o_a = next(o for o in m5.offerings if o.zone == "us-east-1a")
    assert o_a.requirements.get(L.LABEL_TOPOLOGY_ZONE_ID).values == {"use1-az6"}


def test_zone_not_offered_is_unavailable(provider: InstanceTypeProvider) -> None:
    # p6-b200.48xlarge is offered only in 1c: its 1a/1b offerings exist but are unavailable
    it = by_name(provider.list(nodeclass()))["p6-b200.48xlarge"]
    assert {o.zone for o in it.offerings if o.available} <= {"us-east-1c"}
    assert len(it.offerings) == 12


def test_unpriced_type_is_unavailable_unless_overlay_priced(provider: InstanceTypeProvider, pricing: PricingProvider) -> None:
    # upstream: suite_test.go L3337-3404 preview type without prices; overlay price makes it available
    unpriced = [n for n in provider.names() if pricing.on_demand_price(n) is None]
    assert unpriced, "moto's catalogue has types missing from the price table"
    name = unpriced[0]
    it = by_name(provider.list(nodeclass()))[name]
    assert not any(o.available for o in it.offerings)
    it = by_name(provider.list(nodeclass(), overlay_prices={name: 98.32}))[name]
    avail = [o for o in it.offerings if o.available]
    if provider.offering_zones(name) & set(ZONES):
        assert avail and {o.price for o in avail} == {98.32}


def test_al2023_excludes_a1(provider: InstanceTypeProvider) -> None:
    # upstream: compatibility.go amiFamilyCompatibility (a1.* not supported on AL2023)
    a1 = [n for n in provider.names() if n.startswith("a1.")]
    assert a1
    its = by_name(provider.list(nodeclass()))
    assert not any(o.available for o in its[a1[0]].offerings)
    its = by_name(provider.list(nodeclass({"amiFamily": "AL2", "amiSelectorTerms": [{"alias": "al2@latest"}]})))
    assert any(o.available for o in its[a1[0]].offerings)


def test_no_subnets_error(provider: InstanceTypeProvider) -> None:
    # upstream: instancetype.go List "no subnets found"
    with pytest.raises(InstanceTypeError, match="no subnets found"):
        provider.list(ResolvedNodeClass(default_nodeclass(), ()))


def test_real_prices_generation_labels(provider: InstanceTypeProvider) -> None:
    # the 2026-07-20 us-east-1 table: c7i.large 0.08925, c8i.large 0.09371; generations 7 and 8
    its = by_name(provider.list(nodeclass()))
    reqs = Requirements(Requirement("karpenter.sh/capacity-type", OP_IN, ["on-demand"]))
    c7, c8 = its["c7i.large"], its["c8i.large"]
    assert c7.min_compatible_price(reqs) == pytest.approx(0.08925)
    assert c8.min_compatible_price(reqs) == pytest.approx(0.09371)
    assert c7.requirements.get(L.LABEL_INSTANCE_GENERATION).values == {"7"}
    assert c8.requirements.get(L.LABEL_INSTANCE_GENERATION).values == {"8"}
    assert c7.requirements.get(L.LABEL_INSTANCE_NETWORK_BANDWIDTH).values == {"781"}
    assert c8.requirements.get(L.LABEL_INSTANCE_NETWORK_BANDWIDTH).values == {"937"}


def test_list_returns_fresh_objects_and_caches_static_parts(provider: InstanceTypeProvider) -> None:
    nc = nodeclass()
    a = by_name(provider.list(nc))
    b = by_name(provider.list(nc))
    assert a["m5.large"] is not b["m5.large"]
    assert a["m5.large"].requirements is b["m5.large"].requirements
    assert list(a["m5.large"].offerings) == list(b["m5.large"].offerings)  # cached offering objects
    assert a["m5.large"].offerings is not b["m5.large"].offerings
    b["m5.large"].offerings.clear()  # a caller's mutation does not leak into the next call
    assert len(by_name(provider.list(nc))["m5.large"].offerings) == 12
    # different kubelet settings give different static parts
    c = by_name(provider.list(nodeclass({"kubelet": {"maxPods": 5}})))
    assert c["m5.large"].capacity["pods"] == 5 * N and a["m5.large"].capacity["pods"] == 29 * N


def test_zone_info_groups(catalog: Any) -> None:
    nc = nodeclass()
    assert nc.zone_info()[0] == ZoneInfo("us-east-1a", "use1-az6", ("subnet-a",))


def test_settings_kept_with_the_resolution_are_the_resolutions_own(provider: InstanceTypeProvider) -> None:
    """settings_for (asked per NodeClaim per round by the drift check's AMI lookup) kept on the
    ResolvedNodeClass: equal to InstanceTypeSettings.from_nodeclass, asked again under the provider's
    other reserved ENIs, and not carried to another resolution (a changed NodeClass)."""
    import dataclasses

    base = nodeclass()
    first = provider.settings_for(base)
    assert first == InstanceTypeSettings.from_nodeclass(base) and provider.settings_for(base) is first
    provider.reserved_enis = 1
    assert provider.settings_for(base) == InstanceTypeSettings.from_nodeclass(base, reserved_enis=1) != first
    changed = dataclasses.replace(base, nodeclass=nodeclass({"kubelet": {"maxPods": 7}}).nodeclass)
    assert provider.settings_for(changed) == InstanceTypeSettings.from_nodeclass(changed, reserved_enis=1)
    assert provider.settings_for(changed).max_pods == 7 != provider.settings_for(base).max_pods
