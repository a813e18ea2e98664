"""Tests for awsprovider.ec2.fleet (the pure CreateFleet allocation model)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from awsprovider.ec2.capacity import ICE_ERROR_CODE, CapacityModel
from awsprovider.ec2.fleet import (
    UNSUPPORTED_ERROR_CODE,
    FleetAllocator,
    PriceBook,
    StaticPriceBook,
    is_modelled_request,
)

ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
OD = {"c7i.large": 0.08925, "c8i.large": 0.09371, "m7i.large": 0.1008, "m8i.large": 0.10584, "r8i.large": 0.13}


class Book:
    """A minimal in-test PriceBook: spot = 30% of on-demand, minus 1 mil per zone letter."""

    def __init__(self, scores: dict[tuple[str, str], float] | None = None) -> None:
        self.scores = scores

    def on_demand_price(self, instance_type: str) -> float | None:
        return OD.get(instance_type)

    def spot_price(self, instance_type: str, zone: str) -> float | None:
        od = OD.get(instance_type)
        return None if od is None else round(od * 0.3 - 0.001 * (ord(zone[-1]) - ord("a")), 6)

    def capacity_score(self, instance_type: str, zone: str) -> float:
        return 1.0 if self.scores is None else self.scores.get((instance_type, zone), 0.0)


ALL_OFFERED = {t: frozenset(ZONES) for t in OD}


def request(
    overrides: list[tuple[str, str] | tuple[str, str, float]],
    capacity_type: str = "on-demand",
    strategy: str | None = "lowest-price",
    total: int = 1,
) -> dict[str, Any]:
    ovs = []
    for o in overrides:
        d: dict[str, Any] = {"InstanceType": o[0], "SubnetId": f"subnet-{o[1][-1]}", "AvailabilityZone": o[1], "ImageId": "ami-1"}
        if len(o) == 3:
            d["Priority"] = o[2]
        ovs.append(d)
    params: dict[str, Any] = {
        "Type": "instant",
        "TargetCapacitySpecification": {"TotalTargetCapacity": total, "DefaultTargetCapacityType": capacity_type},
        "LaunchTemplateConfigs": [{"LaunchTemplateSpecification": {"LaunchTemplateName": "lt", "Version": "$Latest"}, "Overrides": ovs}],
    }
    if strategy is not None:
        params["SpotOptions" if capacity_type == "spot" else "OnDemandOptions"] = {"AllocationStrategy": strategy}
    return params


def cross(types: list[str], zones: tuple[str, ...] = ZONES) -> list[tuple[str, str]]:
    return [(t, z) for t in types for z in zones]


def test_in_test_book_satisfies_protocol() -> None:
    assert isinstance(Book(), PriceBook)
    assert isinstance(StaticPriceBook(), PriceBook)


def test_lowest_price_picks_cheapest_and_explains() -> None:
    alloc = FleetAllocator(Book(), ALL_OFFERED)
    params = request(cross(["m8i.large", "c8i.large", "c7i.large"]))
    (d,) = alloc.allocate(params)
    assert d.chosen is not None
    assert (d.chosen.instance_type, d.chosen.zone, d.chosen.subnet_id) == ("c7i.large", "us-east-1a", "subnet-a")
    assert d.chosen.price == pytest.approx(0.08925)
    assert d.errors == ()
    assert d.reason.startswith("lowest-price: c7i.large at $0.08925 in us-east-1a is the cheapest of 9 launchable overrides")
    assert "tie broken by request order" in d.reason  # 3 zones share the price
    assert [o.instance_type for o in d.overrides_considered][:3] == ["m8i.large"] * 3


def test_lowest_price_ignores_priority_and_request_order() -> None:
    alloc = FleetAllocator(Book(), ALL_OFFERED)
    (d,) = alloc.allocate(request([("m8i.large", "us-east-1a", 0.0), ("c8i.large", "us-east-1b", 5.0)]))
    assert d.chosen is not None and d.chosen.instance_type == "c8i.large"


def test_lowest_price_tie_goes_to_request_order() -> None:
    alloc = FleetAllocator(Book(), ALL_OFFERED)
    (d,) = alloc.allocate(request([("c7i.large", "us-east-1c"), ("c7i.large", "us-east-1a")]))
    assert d.chosen is not None and d.chosen.zone == "us-east-1c"


def test_unknown_price_sorts_last() -> None:
    offered = dict(ALL_OFFERED, **{"zz9.mega": frozenset(ZONES)})
    alloc = FleetAllocator(Book(), offered)
    (d,) = alloc.allocate(request([("zz9.mega", "us-east-1a"), ("r8i.large", "us-east-1a")]))
    assert d.chosen is not None and d.chosen.instance_type == "r8i.large"


def test_prioritized_lowest_priority_wins_over_price() -> None:
    alloc = FleetAllocator(Book(), ALL_OFFERED)
    params = request([("c7i.large", "us-east-1a", 2.0), ("m8i.large", "us-east-1a", 0.5), ("c8i.large", "us-east-1a", 1.0)], strategy="prioritized")
    (d,) = alloc.allocate(params)
    assert d.chosen is not None and d.chosen.instance_type == "m8i.large"
    assert d.chosen.priority == 0.5
    assert d.reason.startswith("prioritized: m8i.large in us-east-1a has the lowest Priority 0.5 of 3 launchable overrides")


def test_prioritized_ties_break_by_price_then_order_and_missing_priority_is_last() -> None:
    alloc = FleetAllocator(Book(), ALL_OFFERED)
    params = request(
        [("c7i.large", "us-east-1a"), ("m8i.large", "us-east-1a", 1.0), ("c8i.large", "us-east-1a", 1.0), ("c8i.large", "us-east-1b", 1.0)],
        strategy="prioritized",
    )
    (d,) = alloc.allocate(params)
    assert d.chosen is not None
    assert (d.chosen.instance_type, d.chosen.zone) == ("c8i.large", "us-east-1a")
    assert "3 share that Priority" in d.reason


def test_not_offered_in_zone_is_unsupported() -> None:
    offered = {"c7i.large": frozenset({"us-east-1b"}), "c8i.large": frozenset(ZONES)}
    alloc = FleetAllocator(Book(), offered)
    (d,) = alloc.allocate(request([("c7i.large", "us-east-1a"), ("c8i.large", "us-east-1a")]))
    assert d.chosen is not None and d.chosen.instance_type == "c8i.large"
    assert len(d.errors) == 1
    err = d.errors[0]
    assert err["ErrorCode"] == UNSUPPORTED_ERROR_CODE
    assert err["Lifecycle"] == "on-demand"
    assert err["LaunchTemplateAndOverrides"]["Overrides"]["InstanceType"] == "c7i.large"
    assert "(c7i.large) is not supported in your requested Availability Zone (us-east-1a)" in err["ErrorMessage"]
    assert "us-east-1b" in err["ErrorMessage"]
    assert [o.offered for o in d.overrides_considered] == [False, True]


def test_no_offerings_skips_the_check() -> None:
    alloc = FleetAllocator(Book(), offerings=None)
    (d,) = alloc.allocate(request([("c7i.large", "us-east-9z")]))
    assert d.chosen is not None and d.errors == ()


def test_ice_falls_back_and_reports_error_in_ec2_shape() -> None:
    cap = CapacityModel.from_specs(["c7i.*:us-east-1a:on-demand"])
    alloc = FleetAllocator(Book(), ALL_OFFERED, cap)
    params = request(cross(["c7i.large", "c8i.large"], ("us-east-1a",)))
    (d,) = alloc.allocate(params)
    assert d.chosen is not None and d.chosen.instance_type == "c8i.large"
    assert len(d.errors) == 1
    err = d.errors[0]
    assert set(err) == {"LaunchTemplateAndOverrides", "Lifecycle", "ErrorCode", "ErrorMessage"}
    assert err["ErrorCode"] == ICE_ERROR_CODE
    assert err["LaunchTemplateAndOverrides"]["LaunchTemplateSpecification"] == {"LaunchTemplateName": "lt", "Version": "$Latest"}
    assert err["LaunchTemplateAndOverrides"]["Overrides"] == params["LaunchTemplateConfigs"][0]["Overrides"][0]
    assert "tried first and failed: c7i.large/us-east-1a InsufficientInstanceCapacity" in d.reason


def test_untried_iced_pool_is_not_reported() -> None:
    cap = CapacityModel.from_specs(["m8i.*:*:on-demand"])
    alloc = FleetAllocator(Book(), ALL_OFFERED, cap)
    (d,) = alloc.allocate(request([("c7i.large", "us-east-1a"), ("m8i.large", "us-east-1a")]))
    assert d.chosen is not None and d.chosen.instance_type == "c7i.large"
    assert d.errors == ()
    assert cap.attempts == {("c7i.large", "us-east-1a", "on-demand"): 1}


def test_all_fail_gives_no_instance_and_one_error_per_pool() -> None:
    cap = CapacityModel.from_specs(["*:*:on-demand"])
    alloc = FleetAllocator(Book(), ALL_OFFERED, cap)
    (d,) = alloc.allocate(request(cross(["c7i.large", "c8i.large"])))
    assert d.chosen is None
    assert len(d.errors) == 6
    assert {(e["LaunchTemplateAndOverrides"]["Overrides"]["InstanceType"], e["LaunchTemplateAndOverrides"]["Overrides"]["AvailabilityZone"]) for e in d.errors} == set(cross(["c7i.large", "c8i.large"]))
    assert d.reason == "lowest-price: no override launched: all 6 overrides failed (InsufficientInstanceCapacity x6)"


def test_spot_capacity_type_key_is_the_requests() -> None:
    cap = CapacityModel.from_specs(["c7i.*:*:on-demand"])
    alloc = FleetAllocator(Book(), ALL_OFFERED, cap)
    (d,) = alloc.allocate(request([("c7i.large", "us-east-1a")], capacity_type="spot"))
    assert d.chosen is not None and d.capacity_type == "spot"


def test_spot_lowest_price_uses_zone_price() -> None:
    alloc = FleetAllocator(Book(), ALL_OFFERED)
    (d,) = alloc.allocate(request(cross(["c7i.large"]), capacity_type="spot", strategy="lowest-price"))
    assert d.chosen is not None and d.chosen.zone == "us-east-1c"
    assert d.chosen.price == pytest.approx(0.08925 * 0.3 - 0.002)


def test_pco_without_depth_data_is_lowest_price() -> None:
    class NoDepth:
        def on_demand_price(self, t: str) -> float | None:
            return OD.get(t)

        def spot_price(self, t: str, z: str) -> float | None:
            return Book().spot_price(t, z)

    alloc = FleetAllocator(NoDepth(), ALL_OFFERED)
    (d,) = alloc.allocate(request(cross(["m8i.large", "c7i.large"]), capacity_type="spot", strategy="price-capacity-optimized"))
    assert d.chosen is not None and (d.chosen.instance_type, d.chosen.zone) == ("c7i.large", "us-east-1c")
    assert "cheapest of the 6 deepest pools" in d.reason


def test_pco_prefers_deep_pools_over_a_cheaper_shallow_one() -> None:
    scores = {("c7i.large", z): 0.1 for z in ZONES} | {("m8i.large", z): 5.0 for z in ZONES} | {("c8i.large", z): 4.0 for z in ZONES}
    alloc = FleetAllocator(Book(scores), ALL_OFFERED, pco_depth_fraction=0.5)
    (d,) = alloc.allocate(request(cross(["m8i.large", "c8i.large", "c7i.large"]), capacity_type="spot", strategy="price-capacity-optimized"))
    # top half of 9 pools = 5 ranks -> threshold 4.0 -> m8i and c8i pools; cheapest c8i in 1c.
    assert d.chosen is not None and (d.chosen.instance_type, d.chosen.zone) == ("c8i.large", "us-east-1c")
    assert d.reason.startswith("price-capacity-optimized: c8i.large at $")
    assert "6 deepest pools (capacity score >= 4)" in d.reason


def test_capacity_optimized_picks_deepest() -> None:
    scores = {("c7i.large", "us-east-1a"): 1.0, ("m8i.large", "us-east-1b"): 9.0}
    alloc = FleetAllocator(Book(scores), ALL_OFFERED)
    (d,) = alloc.allocate(request([("c7i.large", "us-east-1a"), ("m8i.large", "us-east-1b")], capacity_type="spot", strategy="capacity-optimized"))
    assert d.chosen is not None and d.chosen.instance_type == "m8i.large"


def test_cop_priority_among_deep_pools_only() -> None:
    scores = {("c7i.large", "us-east-1a"): 1.0, ("m8i.large", "us-east-1a"): 10.0, ("c8i.large", "us-east-1a"): 8.0}
    alloc = FleetAllocator(Book(scores), ALL_OFFERED)
    params = request(
        [("c7i.large", "us-east-1a", 0.0), ("m8i.large", "us-east-1a", 2.0), ("c8i.large", "us-east-1a", 1.0)],
        capacity_type="spot",
        strategy="capacity-optimized-prioritized",
    )
    (d,) = alloc.allocate(params)
    assert d.chosen is not None and d.chosen.instance_type == "c8i.large"
    assert "lowest Priority 1 among the 2 pools with capacity score >= 5" in d.reason


def test_cop_without_depth_is_prioritized() -> None:
    alloc = FleetAllocator(StaticPriceBook(on_demand=OD), ALL_OFFERED)
    params = request([("c7i.large", "us-east-1a", 3.0), ("m8i.large", "us-east-1a", 2.0)], capacity_type="spot", strategy="capacity-optimized-prioritized")
    (d,) = alloc.allocate(params)
    assert d.chosen is not None and d.chosen.instance_type == "m8i.large"


def test_unmodelled_strategy_is_lowest_price_and_said() -> None:
    alloc = FleetAllocator(Book(), ALL_OFFERED)
    (d,) = alloc.allocate(request([("m8i.large", "us-east-1a"), ("c7i.large", "us-east-1a")], capacity_type="spot", strategy="diversified"))
    assert d.chosen is not None and d.chosen.instance_type == "c7i.large"
    assert "'diversified' is not modelled" in d.reason


def test_default_strategy_is_lowest_price() -> None:
    alloc = FleetAllocator(Book(), ALL_OFFERED)
    (d,) = alloc.allocate(request([("m8i.large", "us-east-1a", 0.0), ("c7i.large", "us-east-1a", 1.0)], strategy=None))
    assert d.allocation_strategy == "lowest-price"
    assert d.chosen is not None and d.chosen.instance_type == "c7i.large"


def test_multiple_units_reevaluate_capacity() -> None:
    cap = CapacityModel.from_specs(["c7i.large:*:on-demand:after=1"])
    alloc = FleetAllocator(Book(), ALL_OFFERED, cap)
    ds = alloc.allocate(request([("c7i.large", "us-east-1a"), ("c8i.large", "us-east-1a")], total=3))
    assert [d.chosen.instance_type if d.chosen else None for d in ds] == ["c7i.large", "c8i.large", "c8i.large"]
    assert ds[0].errors == () and len(ds[1].errors) == 1


def test_multiple_units_stop_after_first_empty_unit() -> None:
    cap = CapacityModel.from_specs(["*:*:on-demand:after=1"])
    alloc = FleetAllocator(Book(), ALL_OFFERED, cap)
    ds = alloc.allocate(request([("c7i.large", "us-east-1a")], total=5))
    assert len(ds) == 2
    assert ds[0].chosen is not None and ds[1].chosen is None


def test_zone_from_subnet_when_no_availability_zone() -> None:
    params = request([("c7i.large", "us-east-1a")])
    del params["LaunchTemplateConfigs"][0]["Overrides"][0]["AvailabilityZone"]
    offered = {"c7i.large": frozenset({"us-east-1b"})}
    alloc = FleetAllocator(Book(), offered, zone_of_subnet=lambda s: "us-east-1b" if s == "subnet-a" else None)
    (d,) = alloc.allocate(params)
    assert d.chosen is not None and d.chosen.zone == "us-east-1b"


def test_allocation_does_not_mutate_the_request() -> None:
    cap = CapacityModel.from_specs(["c7i.*:*:*"])
    params = request(cross(["c7i.large", "c8i.large"]))
    before = copy.deepcopy(params)
    FleetAllocator(Book(), ALL_OFFERED, cap).allocate(params)
    assert params == before


def test_multiple_launch_template_configs_keep_request_order() -> None:
    params = request([("c8i.large", "us-east-1a")])
    params["LaunchTemplateConfigs"].append(
        {"LaunchTemplateSpecification": {"LaunchTemplateName": "lt2", "Version": "$Latest"}, "Overrides": [{"InstanceType": "c7i.large", "AvailabilityZone": "us-east-1a", "SubnetId": "subnet-a"}]}
    )
    (d,) = FleetAllocator(Book(), ALL_OFFERED, CapacityModel.from_specs(["c8i.*:*:*"])).allocate(params)
    assert d.chosen is not None and (d.chosen.config_index, d.chosen.override_index) == (1, 1)
    (d2,) = FleetAllocator(Book(), ALL_OFFERED, CapacityModel.from_specs(["c7i.*:*:*"])).allocate(params)
    assert d2.errors[0]["LaunchTemplateAndOverrides"]["LaunchTemplateSpecification"]["LaunchTemplateName"] == "lt2"


def test_is_modelled_request() -> None:
    base = request([("c7i.large", "us-east-1a")])
    assert is_modelled_request(base)
    assert not is_modelled_request(base | {"DryRun": True})
    assert not is_modelled_request(base | {"Type": "maintain"})
    cb = copy.deepcopy(base)
    cb["TargetCapacitySpecification"]["DefaultTargetCapacityType"] = "capacity-block"
    assert not is_modelled_request(cb)
    abs_ = copy.deepcopy(base)
    abs_["LaunchTemplateConfigs"][0]["Overrides"] = [{"InstanceRequirements": {}}]
    assert not is_modelled_request(abs_)


def test_decision_to_dict() -> None:
    cap = CapacityModel.from_specs(["c7i.*:*:*"])
    (d,) = FleetAllocator(Book(), ALL_OFFERED, cap).allocate(request([("c7i.large", "us-east-1a", 0.08925), ("c8i.large", "us-east-1a", 0.09371)]))
    doc = d.to_dict()
    assert doc["chosen"]["instance_type"] == "c8i.large"
    assert doc["errors"] == [{"error_code": ICE_ERROR_CODE, "instance_type": "c7i.large", "zone": "us-east-1a"}]
    assert [o["priority"] for o in doc["overrides_considered"]] == [0.08925, 0.09371]


def test_bad_tuning_is_rejected() -> None:
    with pytest.raises(ValueError):
        FleetAllocator(Book(), pco_depth_fraction=0.0)
    with pytest.raises(ValueError):
        FleetAllocator(Book(), cop_min_relative_depth=1.5)


pools = st.lists(
    st.tuples(st.sampled_from(sorted(OD)), st.sampled_from(ZONES), st.booleans()),
    min_size=1,
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(pools=pools, capacity_type=st.sampled_from(["on-demand", "spot"]))
def test_property_lowest_price_is_min_over_launchable(pools: list[tuple[str, str, bool]], capacity_type: str) -> None:
    ice = sorted({f"{t}:{z}:*" for t, z, iced in pools if iced})
    cap = CapacityModel.from_specs(ice)
    book = Book()
    params = request([(t, z) for t, z, _ in pools], capacity_type=capacity_type)
    (d,) = FleetAllocator(book, ALL_OFFERED, cap).allocate(params)
    iced = {(t, z) for t, z, i in pools if i}
    ok = [(t, z) for t, z, _ in pools if (t, z) not in iced]

    def price(t: str, z: str) -> float:
        p = book.spot_price(t, z) if capacity_type == "spot" else book.on_demand_price(t)
        assert p is not None
        return p

    if not ok:
        assert d.chosen is None
        assert {(e["LaunchTemplateAndOverrides"]["Overrides"]["InstanceType"], e["LaunchTemplateAndOverrides"]["Overrides"]["AvailabilityZone"]) for e in d.errors} == iced
    else:
        assert d.chosen is not None
        assert (d.chosen.instance_type, d.chosen.zone) not in iced
        assert price(d.chosen.instance_type, d.chosen.zone) == min(price(t, z) for t, z in ok)
        # Every reported error is an ICE'd pool at most as cheap as the winner (it was tried first).
        for e in d.errors:
            o = e["LaunchTemplateAndOverrides"]["Overrides"]
            assert (o["InstanceType"], o["AvailabilityZone"]) in iced
            assert price(o["InstanceType"], o["AvailabilityZone"]) <= price(d.chosen.instance_type, d.chosen.zone)
