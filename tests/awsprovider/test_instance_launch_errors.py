"""Launch-path error handling: ports of pkg/providers/instance/suite_test.go and
pkg/cloudprovider/suite_test.go cases the first launch port left out (service-linked role, subnet IP
exhaustion, in-flight IPs, LaunchTemplateNotFound), plus checks of the launch-path memos.

Errors are injected the way karpy's users inject them: capacity rules of the mocked EC2
(``TYPE:ZONE:CAPACITY-TYPE:code=...``); upstream sets the fake EC2's CreateFleet output instead."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from launch_helpers import make_it, nodeclaim, offering  # noqa: E402

from awsprovider.cloudprovider import AWSCloudProvider  # noqa: E402
from awsprovider.instance import SLR_ERROR_CODE, InstanceProvider  # noqa: E402
from awsprovider.subnets import LaunchSubnet, SubnetTracker  # noqa: E402
from awsprovider.unavailableofferings import UnavailableOfferings  # noqa: E402
from karpy.cloudprovider.types import InsufficientCapacityError  # noqa: E402
from karpy.sim.clock import VirtualClock  # noqa: E402

SPOT_OD = [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]}]
OD = [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}]
IFA = "InsufficientFreeAddressesInSubnet"


def _its(*names: str) -> list[dict[str, Any]]:
    return [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(names)}]


def _zone(zone: str) -> list[dict[str, Any]]:
    return [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]


@pytest.fixture(scope="module")
def base() -> Any:
    ref = [AWSCloudProvider("us-east-1", prices="2026-07-20", clock=VirtualClock())]
    yield ref
    ref[0].close()


def _scenario(base: list[AWSCloudProvider], unavailable: tuple[str, ...] = ()) -> AWSCloudProvider:
    p = base[0].with_scenario(prices="2026-07-20", unavailable=unavailable)
    base[0] = p
    return p


def _zone_subnets(p: AWSCloudProvider, zone: str) -> list[str]:
    nc = p.resolve_nodeclass("default")
    assert nc is not None
    return [s.id for s in nc.subnets if s.zone == zone]


# upstream: instance/suite_test.go "should return an ICE error when spot instances are used and SpotSLR can't be created" (L206)
def test_spot_slr_error_is_ice_and_disables_spot(base: list[AWSCloudProvider]) -> None:
    p = _scenario(base, (f"*:*:spot:code={SLR_ERROR_CODE}",))
    with pytest.raises(InsufficientCapacityError) as ei:
        p.create(nodeclaim("slr-1", SPOT_OD + _its("m5.large", "m5.xlarge")))
    assert p.launches["slr-1"].capacity_type == "spot"
    assert str(ei.value).startswith(f"insufficient capacity, with fleet error(s), {SLR_ERROR_CODE}: ")
    for name in ("m5.large", "m5.xlarge"):
        for zone in ("us-east-1a", "us-east-1b"):
            subnets = _zone_subnets(p, zone)
            assert p.ice_cache.is_unavailable(name, zone, subnets, "spot")
            assert not p.ice_cache.is_unavailable(name, zone, subnets, "on-demand")
    # one event per error, as upstream publishes them (its recorder de-duplicates)
    assert set(p.instances.events) == {f'Attempted to launch a spot instance but failed due to "{SLR_ERROR_CODE}"'}
    # spot is now unavailable everywhere: the next launch of the same claim goes on-demand
    created = p.create(nodeclaim("slr-2", SPOT_OD + _its("m5.large", "m5.xlarge")))
    assert p.launches["slr-2"].capacity_type == "on-demand"
    assert created.metadata.labels["karpenter.sh/capacity-type"] == "on-demand"


# upstream: instance/suite_test.go "should handle subnet IP exhaustion correctly"
#   Entry "zone unavailable when 1 subnet gets ICEd with 1 subnet in zone" (L621)
def test_subnet_ip_exhaustion_with_one_subnet_makes_the_zone_unavailable(base: list[AWSCloudProvider]) -> None:
    p = _scenario(base, (f"m5.xlarge:us-east-1a:on-demand:code={IFA}",))
    with pytest.raises(InsufficientCapacityError) as ei:
        p.create(nodeclaim("ifa-1", OD + _its("m5.xlarge") + _zone("us-east-1a")))
    assert f"{IFA}: " in str(ei.value)
    (subnet,) = _zone_subnets(p, "us-east-1a")
    assert p.ice_cache.is_subnet_unavailable(subnet)
    assert p.instances.subnets.available_ips[subnet] == 0
    for name in ("m5.large", "m5.xlarge", "c7i.large"):
        assert p.ice_cache.is_unavailable(name, "us-east-1a", [subnet], "on-demand")
        for zone in ("us-east-1b", "us-east-1c"):
            assert not p.ice_cache.is_unavailable(name, zone, _zone_subnets(p, zone), "on-demand")


def _bare_instance_provider() -> InstanceProvider:
    clock = VirtualClock()
    return InstanceProvider(SimpleNamespace(client=None, records=[]), UnavailableOfferings(clock), clock)


def _ifa_error(subnet: str, zone: str) -> dict[str, Any]:
    return {"ErrorCode": IFA, "ErrorMessage": "There are insufficient free addresses in that subnet to run instance",
            "LaunchTemplateAndOverrides": {"Overrides": {"InstanceType": "m5.xlarge", "AvailabilityZone": zone,
                                                         "SubnetId": subnet}}}


# upstream: instance/suite_test.go "should handle subnet IP exhaustion correctly" (L621), Entries
#   "zone available when only 1 subnet gets ICEd with multiple subnets in zone" and
#   "zone unavailable when all subnets in zone get ICEd"
@pytest.mark.parametrize("iced,zone_a_unavailable", [
    (["subnet-1a-1"], False),
    (["subnet-1a-1", "subnet-1a-2", "subnet-1a-3"], True),
])
def test_subnet_ip_exhaustion_with_several_subnets(iced: list[str], zone_a_unavailable: bool) -> None:
    ip = _bare_instance_provider()
    zones = {"test-zone-1a": ["subnet-1a-1", "subnet-1a-2", "subnet-1a-3"], "test-zone-1b": ["subnet-1b-1"],
             "test-zone-1c": ["subnet-1c-1"]}
    # upstream's NodeClaim allows spot, so the launch (and the offering marks) are spot; the zone's
    # on-demand availability then depends on the subnet marks alone
    ip._update_unavailable_offerings([_ifa_error(s, "test-zone-1a") for s in iced], "spot", "fleet-1")  # noqa: SLF001
    for name in ("m5.large", "m5.xlarge"):
        assert ip.unavailable.is_unavailable(name, "test-zone-1a", zones["test-zone-1a"], "on-demand") is zone_a_unavailable
        assert not ip.unavailable.is_unavailable(name, "test-zone-1b", zones["test-zone-1b"], "on-demand")
        assert not ip.unavailable.is_unavailable(name, "test-zone-1c", zones["test-zone-1c"], "on-demand")


# upstream: instance/suite_test.go "should deprioritize subnets on subsequent launches after subnet IP exhaustion" (L713)
def test_iced_subnet_is_deprioritized_on_the_next_launch() -> None:
    ip = _bare_instance_provider()
    subnets = [LaunchSubnet("subnet-1a-1", "test-zone-1a", "use1-az1", 50),
               LaunchSubnet("subnet-1a-2", "test-zone-1a", "use1-az1", 200)]  # more IPs: preferred
    its = [make_it("m5.xlarge", [offering("on-demand", "test-zone-1a", 0.192)], cpu=4)]
    first = ip.subnets.zonal_subnets_for_launch(subnets, its, "on-demand")
    assert first["test-zone-1a"].id == "subnet-1a-2"
    ip._update_unavailable_offerings([_ifa_error("subnet-1a-2", "test-zone-1a")], "on-demand", "")  # noqa: SLF001
    second = ip.subnets.zonal_subnets_for_launch(subnets, its, "on-demand")
    assert second["test-zone-1a"].id == "subnet-1a-1"


# upstream: cloudprovider/suite_test.go "should update in-flight IPs when a CreateFleet error occurs" (L1287)
def test_inflight_ips_are_given_back_when_create_fleet_fails() -> None:
    tracker = SubnetTracker()
    subnets = [LaunchSubnet("test-subnet-1", "test-zone-1a", "", 10)]
    its = [make_it("m5.large", [offering("on-demand", "test-zone-1a", 0.096)], pods=3)]
    zonal = tracker.zonal_subnets_for_launch(subnets, its, "on-demand")
    assert tracker.inflight_ips["test-subnet-1"] == 10 - 3  # min pods of the launchable types
    request = {"LaunchTemplateConfigs": [{"Overrides": [{"InstanceType": "m5.large", "SubnetId": "test-subnet-1",
                                                         "AvailabilityZone": "test-zone-1a"}]}]}
    tracker.update_inflight_ips(request, None, its, zonal.values(), "on-demand")  # the API call failed
    assert tracker.inflight_ips["test-subnet-1"] == 10


# upstream: pkg/providers/instance/instance.go Create ("retry once if launch template is not found");
# the upstream suites exercise it only through launchtemplate invalidation, so this is karpy's own case.
def test_launch_template_not_found_is_retried_once(base: list[AWSCloudProvider]) -> None:
    p = _scenario(base)
    p.create(nodeclaim("lt-1", OD + _its("m5.large")))
    name = p.launches["lt-1"].request["LaunchTemplateConfigs"][0]["LaunchTemplateSpecification"]["LaunchTemplateName"]
    p.ec2.client.delete_launch_template(LaunchTemplateName=name)  # the provider's cache is now stale
    created = p.create(nodeclaim("lt-2", OD + _its("m5.large")))
    assert created.metadata.labels["node.kubernetes.io/instance-type"] == "m5.large"
    assert p.launches["lt-2"].error is None
    failed = [r for r in p.ec2.records if r.response is None or not r.response.get("Instances")]
    assert failed, "the first CreateFleet of lt-2 should have failed with LaunchTemplateNotFound"
    names = [lt["LaunchTemplateName"] for lt in p.ec2.client.describe_launch_templates()["LaunchTemplates"]]
    assert names.count(name) == 1  # re-created by the retry


# -- the launch-path memos ------------------------------------------------------------------------
def test_filter_memo_gives_the_fresh_answer(base: list[AWSCloudProvider]) -> None:
    p = _scenario(base)
    nc = p.resolve_nodeclass("default")
    assert nc is not None
    claim = nodeclaim("memo", OD + _its("m5.large", "m5.xlarge", "c7i.large", "c8i.large", "m5.metal"),
                      requests={"cpu": "1"})
    shared = p.instance_types.prototypes(nc)
    assert p.instance_types.prototypes(nc) is shared  # nothing changed: the same tuple
    memo1 = [it.name for it in p.instances.filter_instance_types(claim, shared)]
    memo2 = [it.name for it in p.instances.filter_instance_types(claim, shared)]
    fresh = [it.name for it in p.instances.filter_instance_types(claim, p.instance_types.list(nc))]
    assert memo1 == memo2 == fresh
    assert sorted(memo1) == ["c7i.large", "c8i.large", "m5.large", "m5.xlarge"]  # metal: exotic filter
    # an ICE mark changes the prototypes, so the memo cannot answer with stale offerings
    p.ice_cache.mark_unavailable("c7i.large", "us-east-1a", "on-demand")
    assert p.instance_types.prototypes(nc) is not shared


def test_clone_matches_the_constructor_in_every_slot(base: list[AWSCloudProvider]) -> None:
    from awsprovider.instancetype import _clone
    from karpy.cloudprovider.types import InstanceType

    p = base[0]
    nc = p.resolve_nodeclass("default")
    assert nc is not None
    proto = next(it for it in p.instance_types.prototypes(nc) if it.name == "m5.large")
    built = InstanceType(proto.name, proto.requirements, list(proto.offerings), proto.capacity, proto.overhead,
                         proto.well_known)
    clone = _clone(proto)
    for slot in InstanceType.__slots__:
        if slot in ("_groups", "_available"):
            continue
        assert getattr(clone, slot) == getattr(built, slot), slot
    assert clone.offerings is not proto.offerings and clone.capacity is not proto.capacity
    assert [(g.allocatable, list(g.offerings)) for g in clone.allocatable_groups()] == \
           [(g.allocatable, list(g.offerings)) for g in built.allocatable_groups()]


def test_catalogue_memo_is_read_only(base: list[AWSCloudProvider]) -> None:
    cat = base[0].ec2.catalog
    info = cat.get("m5.large")
    assert info is not None
    with pytest.raises(TypeError):
        info["InstanceType"] = "x"  # type: ignore[index]
    with pytest.raises(TypeError):
        cat.instance_types()["m5.large"] = {}  # type: ignore[index]
    assert isinstance(info["ProcessorInfo"]["SupportedArchitectures"], tuple)
    assert isinstance(cat.offerings()["m5.large"], frozenset)


def test_min_pods_by_zone_agrees_with_min_pods() -> None:
    from awsprovider.subnets import min_pods, min_pods_by_zone

    its = [make_it("a.large", [offering("on-demand", "z1", 1.0), offering("spot", "z2", 1.0)], pods=5),
           make_it("b.large", [offering("on-demand", "z1", 1.0), offering("on-demand", "z2", 1.0, False)], pods=3),
           make_it("c.large", [offering("on-demand", "z2", 1.0)], pods=7)]
    for ct in ("on-demand", "spot"):
        by_zone = min_pods_by_zone(its, ct)
        for zone in ("z1", "z2", "z3"):
            assert by_zone.get(zone, 0) == min_pods(its, ct, zone)
