"""Launch-path behaviour through AWSCloudProvider on moto with a hand-built catalogue.

Ports of pkg/providers/instance/suite_test.go and pkg/cloudprovider/suite_test.go cases (upstream
asserts the CreateFleet *input*; so do these, plus what the fleet model picked)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from launch_helpers import make_it, nodeclaim, offering  # noqa: E402

from awsprovider.cloudprovider import AWSCloudProvider  # noqa: E402
from karpy.cloudprovider.types import CreateError, InsufficientCapacityError, NodeClaimNotFoundError  # noqa: E402
from karpy.sim.clock import VirtualClock  # noqa: E402

ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
PRICES = {"m5.large": 0.096, "m5.xlarge": 0.192, "c5.large": 0.085, "m5.metal": 4.608}


def _catalogue(provider_ref: list[AWSCloudProvider]) -> Any:
    """An InstanceTypeProvider.List stand-in: fresh types per call, ICE cache applied."""

    def source(_nodeclass: Any) -> list[Any]:
        p = provider_ref[0]
        out = []
        for name, price in PRICES.items():
            ofs = []
            for z in ZONES:
                for ct, pr in (("spot", price), ("on-demand", price)):  # no spot data: spot = OD price
                    ofs.append(offering(ct, z, pr, not p.ice_cache.is_unavailable(name, z, (), ct)))
            out.append(make_it(name, ofs, cpu=2 if "large" == name.split(".")[1] else 4))
        return out

    return source


@pytest.fixture(scope="module")
def base() -> Any:
    ref: list[AWSCloudProvider] = []
    p = AWSCloudProvider("us-east-1", prices=None, clock=VirtualClock(), instance_type_source=_catalogue(ref))
    ref.append(p)
    yield ref
    p.close()


@pytest.fixture()
def provider(base: list[AWSCloudProvider]) -> AWSCloudProvider:
    return _scenario(base)


def _scenario(base: list[AWSCloudProvider], unavailable: tuple[str, ...] = ()) -> AWSCloudProvider:
    p = base[0].with_scenario(unavailable=unavailable)
    base[0] = p
    return p


OD = [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}]
SPOT = [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]


def _its(*names: str) -> list[dict[str, Any]]:
    return [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(names)}]


# upstream: cloudprovider/suite_test.go "should launch instances across all subnets ... Priority = price" (L1245)
def test_overrides_are_type_times_zone_with_price_priority(provider: AWSCloudProvider) -> None:
    created = provider.create(nodeclaim("nc-a", OD + _its("m5.large")))
    fleet = provider.launches["nc-a"].fleet_block()
    assert fleet["allocation_strategy"] == "lowest-price"
    assert fleet["capacity_type"] == "on-demand"
    assert [(o["instance_type"], o["zone"], o["priority"]) for o in fleet["overrides"]] == [
        ("m5.large", z, 0.096) for z in ZONES
    ]
    assert len({o["subnet_id"] for o in fleet["overrides"]}) == 3
    assert created.metadata.labels["node.kubernetes.io/instance-type"] == "m5.large"
    req = provider.launches["nc-a"].request
    assert req["Type"] == "instant"
    assert req["TargetCapacitySpecification"] == {"DefaultTargetCapacityType": "on-demand", "TotalTargetCapacity": 1}
    assert [t["ResourceType"] for t in req["TagSpecifications"]] == ["instance", "volume", "fleet"]
    assert req["LaunchTemplateConfigs"][0]["LaunchTemplateSpecification"]["Version"] == "$Latest"
    assert req["LaunchTemplateConfigs"][0]["LaunchTemplateSpecification"]["LaunchTemplateName"].startswith("karpenter.k8s.aws/")


# upstream: instance/suite_test.go L795/819/842/866 allocation strategy with/without price-overlay-applied
@pytest.mark.parametrize("reqs,annotated,expected", [
    (OD, True, ("OnDemandOptions", "prioritized")),
    (OD, False, ("OnDemandOptions", "lowest-price")),
    (SPOT, True, ("SpotOptions", "capacity-optimized-prioritized")),
    (SPOT, False, ("SpotOptions", "price-capacity-optimized")),
])
def test_allocation_strategy_flips_on_overlay_annotation(provider: AWSCloudProvider, reqs: Any, annotated: bool,
                                                         expected: tuple[str, str]) -> None:
    ann = {"karpenter.sh/price-overlay-applied": "true"} if annotated else {}
    provider.create(nodeclaim("nc-s", reqs, annotations=ann))
    req = provider.launches["nc-s"].request
    assert req[expected[0]] == {"AllocationStrategy": expected[1]}
    other = "SpotOptions" if expected[0] == "OnDemandOptions" else "OnDemandOptions"
    assert other not in req


def test_lowest_price_launches_cheapest_override_and_nodeclaim_is_hydrated(provider: AWSCloudProvider) -> None:
    created = provider.create(nodeclaim("nc-c", OD))
    rec = provider.launches["nc-c"]
    # the request lists every generic type (metal removed by the exotic filter), cheapest first
    assert [o["instance_type"] for o in rec.overrides()][::3] == ["c5.large", "m5.large", "m5.xlarge"]
    assert rec.decisions[0].chosen.instance_type == "c5.large"
    labels = created.metadata.labels
    assert labels["karpenter.sh/capacity-type"] == "on-demand"
    assert labels["karpenter.k8s.aws/instance-tenancy"] == "default"
    assert labels["karpenter.sh/nodepool"] == "default"
    zone = labels["topology.kubernetes.io/zone"]
    assert labels["topology.k8s.aws/zone-id"].startswith("use1-az")
    assert created.status.provider_id.startswith(f"aws:///{zone}/i-")
    assert created.status.image_id
    assert sorted(k for k in created.metadata.annotations if k.startswith("karpenter.k8s.aws/")) == [
        "karpenter.k8s.aws/ec2nodeclass-hash", "karpenter.k8s.aws/ec2nodeclass-hash-version",
        "karpenter.k8s.aws/instance-profile-name"]
    assert provider.launch_price("nc-c") == pytest.approx(0.085)


# upstream: instance/suite_test.go L157 "should return an ICE error when all attempted instance types return an ICE error"
def test_ice_marks_cache_and_next_launch_falls_back_to_on_demand(base: list[AWSCloudProvider]) -> None:
    p = _scenario(base, ("m5.xlarge:us-east-1a:*", "m5.xlarge:us-east-1b:*", "m5.xlarge:us-east-1c:*"))
    with pytest.raises(InsufficientCapacityError) as ei:
        p.create(nodeclaim("nc-i", _its("m5.xlarge")))
    assert str(ei.value).startswith("insufficient capacity, with fleet error(s), InsufficientInstanceCapacity")
    assert p.launches["nc-i"].capacity_type == "spot"
    assert all(p.ice_cache.is_unavailable("m5.xlarge", z, (), "spot") for z in ZONES)
    assert not p.ice_cache.is_unavailable("m5.xlarge", "us-east-1a", (), "on-demand")
    with pytest.raises(InsufficientCapacityError):
        p.create(nodeclaim("nc-i2", _its("m5.xlarge")))
    assert p.launches["nc-i2"].capacity_type == "on-demand"
    assert [e["error_code"] for e in p.launches["nc-i2"].fleet_block()["errors"]] == ["InsufficientInstanceCapacity"] * 3
    assert p.ice_cache.is_unavailable("m5.xlarge", "us-east-1a", (), "on-demand")
    with pytest.raises(InsufficientCapacityError) as ei:
        p.create(nodeclaim("nc-i3", _its("m5.xlarge")))
    assert str(ei.value) == "insufficient capacity, all requested instance types were unavailable during launch"


def test_partial_ice_launches_next_override_and_reports_errors(base: list[AWSCloudProvider]) -> None:
    p = _scenario(base, ("c5.large:*:on-demand",))
    created = p.create(nodeclaim("nc-p", OD))
    assert created.metadata.labels["node.kubernetes.io/instance-type"] == "m5.large"
    errs = p.launches["nc-p"].fleet_block()["errors"]
    assert {(e["instance_type"], e["error_code"]) for e in errs} == {("c5.large", "InsufficientInstanceCapacity")}
    assert p.ice_cache.is_unavailable("c5.large", "us-east-1a", (), "on-demand")


# upstream: instance/suite_test.go L137 minValues truncation error
def test_min_values_truncation_error(provider: AWSCloudProvider) -> None:
    reqs = [{"key": "topology.kubernetes.io/zone", "operator": "Exists", "minValues": 50}]
    with pytest.raises(InsufficientCapacityError) as ei:
        provider.create(nodeclaim("nc-m", reqs))
    assert "truncating instance types based on the passed-in requirements, validating minValues, " \
           "minValues requirement is not met for label(s)" in str(ei.value)


# upstream: cloudprovider/suite_test.go L267 unknown instance type -> ICE
def test_no_compatible_type_is_ice(provider: AWSCloudProvider) -> None:
    with pytest.raises(InsufficientCapacityError, match="all requested instance types were unavailable during launch"):
        provider.create(nodeclaim("nc-u", _its("test-instance-type")))


def test_delete_terminates_and_then_not_found(provider: AWSCloudProvider) -> None:
    created = provider.create(nodeclaim("nc-d", OD))
    provider.delete(created)
    with pytest.raises(NodeClaimNotFoundError):
        provider.delete(created)


def test_batched_identical_launches_share_one_create_fleet(provider: AWSCloudProvider) -> None:
    calls = provider.instances.batcher.calls
    out = provider.create_many([nodeclaim(f"nc-b{i}", OD + _its("m5.large")) for i in range(3)])
    assert all(not isinstance(o, Exception) for o in out)
    assert provider.instances.batcher.calls == calls + 1
    assert len({o.status.provider_id for o in out}) == 3
    assert provider.launches["nc-b0"].fleet_record is provider.launches["nc-b2"].fleet_record
    assert provider.launches["nc-b0"].fleet_record.request["TargetCapacitySpecification"]["TotalTargetCapacity"] == 3
    assert provider.launches["nc-b1"].batch_size == 3


def test_launch_templates_cached_and_reused(provider: AWSCloudProvider) -> None:
    provider.create(nodeclaim("nc-l1", OD + _its("m5.large")))
    provider.create(nodeclaim("nc-l2", OD + _its("m5.large")))
    n1 = provider.launches["nc-l1"].request["LaunchTemplateConfigs"][0]["LaunchTemplateSpecification"]["LaunchTemplateName"]
    n2 = provider.launches["nc-l2"].request["LaunchTemplateConfigs"][0]["LaunchTemplateSpecification"]["LaunchTemplateName"]
    assert n1 == n2
    names = [lt["LaunchTemplateName"] for lt in provider.ec2.client.describe_launch_templates()["LaunchTemplates"]]
    assert names.count(n1) == 1


def test_non_ice_fleet_error_is_create_error() -> None:
    from awsprovider.instance import combine_fleet_errors

    err = combine_fleet_errors([{"ErrorCode": "RequestLimitExceeded", "ErrorMessage": "slow down"}])
    assert isinstance(err, CreateError)
    ice = combine_fleet_errors([])
    assert isinstance(ice, InsufficientCapacityError)
