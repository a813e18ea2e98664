"""Ports of pkg/providers/instance/filter/filter_test.go and the filter order of instance.go."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from launch_helpers import make_it, offering

from awsprovider.filters import (
    FilterTrace,
    capacity_reservation_type_filter,
    compatible_available_filter,
    exotic_instance_filter,
    filter_instance_types,
    spot_offering_filter,
)
from karpy.api.quantity import NANO
from karpy.scheduling.labels import LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_ZONE, OP_EXISTS, OP_IN
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

Z = "test-zone-1a"


def _exists() -> Requirements:
    return Requirements(Requirement(LABEL_CAPACITY_TYPE, OP_EXISTS))


# upstream: filter_test.go SpotOfferingFilter "should filter out spot offerings more expensive than the cheapest on-demand offering"
def test_spot_offering_filter_keeps_cheaper_spot_and_counts_offerings() -> None:
    od = make_it("od.large", [offering("on-demand", Z, 5.0), offering("on-demand", "z2", 10.0)])
    spot = make_it("spot.large", [offering("spot", Z, 1.0), offering("spot", "z2", 2.0)])
    mixed = make_it("mixed.large", [offering("spot", Z, 1.0), offering("spot", "z2", 10.0)])
    kept, rejected = spot_offering_filter(_exists())([od, spot, mixed])
    assert [it.name for it in kept] == ["od.large", "spot.large", "mixed.large"]
    assert [len(it.offerings) for it in kept] == [2, 2, 1]
    assert rejected == []


# upstream: filter_test.go SpotOfferingFilter "should reject instance types with only expensive spot offerings"
def test_spot_offering_filter_rejects_type_left_without_offerings() -> None:
    od = make_it("od.large", [offering("on-demand", Z, 5.0)])
    spot = make_it("spot.large", [offering("spot", Z, 10.0), offering("spot", "z2", 15.0)])
    kept, rejected = spot_offering_filter(_exists())([od, spot])
    assert [it.name for it in kept] == ["od.large"]
    assert [it.name for it in rejected] == ["spot.large"]


# upstream: filter_test.go SpotOfferingFilter "should not filter when there are no on-demand offerings" /
# "should not filter when the requirements only allow spot" / "should not filter with minValues"
def test_spot_offering_filter_noops() -> None:
    spot = make_it("spot.large", [offering("spot", Z, 10.0)])
    assert spot_offering_filter(_exists())([spot]) == ([spot], [])
    od = make_it("od.large", [offering("on-demand", Z, 5.0)])
    only_spot = Requirements(Requirement(LABEL_CAPACITY_TYPE, OP_IN, ["spot"]))
    assert spot_offering_filter(only_spot)([od, spot])[0] == [od, spot]
    mv = Requirements(Requirement(LABEL_CAPACITY_TYPE, OP_EXISTS), Requirement(LABEL_INSTANCE_TYPE, OP_EXISTS, min_values=1))
    assert spot_offering_filter(mv)([od, spot])[0] == [od, spot]


def test_spot_offering_filter_equal_price_is_kept() -> None:
    od = make_it("od.large", [offering("on-demand", Z, 5.0)])
    spot = make_it("spot.large", [offering("spot", Z, 5.0)])
    kept, _ = spot_offering_filter(_exists())([od, spot])
    assert [it.name for it in kept] == ["od.large", "spot.large"]


# upstream: filter_test.go ExoticInstanceTypeFilter "should filter metal / gpu instance types" and
# "should not filter if all instance types are exotic" and "should not filter with minValues"
def test_exotic_instance_filter() -> None:
    generic = make_it("m5.large", [offering("on-demand", Z, 1.0)])
    metal = make_it("m5.metal", [offering("on-demand", Z, 1.0)])
    gpu = make_it("g4dn.8xlarge", [offering("on-demand", Z, 1.0)], extra={"nvidia.com/gpu": 1})
    kept, rejected = exotic_instance_filter(Requirements())([generic, metal, gpu])
    assert [it.name for it in kept] == ["m5.large"]
    assert {it.name for it in rejected} == {"m5.metal", "g4dn.8xlarge"}
    assert exotic_instance_filter(Requirements())([metal, gpu])[0] == [metal, gpu]
    mv = Requirements(Requirement(LABEL_INSTANCE_TYPE, OP_EXISTS, min_values=2))
    assert exotic_instance_filter(mv)([generic, metal])[0] == [generic, metal]


def test_compatible_available_filter_checks_requests_and_availability() -> None:
    small = make_it("a.small", [offering("on-demand", Z, 1.0)], cpu=1)
    big = make_it("a.big", [offering("on-demand", Z, 2.0)], cpu=8)
    gone = make_it("a.gone", [offering("on-demand", Z, 0.5, available=False)], cpu=8)
    other_zone = make_it("a.z2", [offering("on-demand", "z2", 0.5)], cpu=8)
    reqs = Requirements(Requirement(LABEL_ZONE, OP_IN, [Z]))
    kept, rejected = compatible_available_filter(reqs, {"cpu": 2 * NANO})([small, big, gone, other_zone])
    assert [it.name for it in kept] == ["a.big"]
    assert {it.name for it in rejected} == {"a.small", "a.gone", "a.z2"}


def test_reserved_filters_are_noops_without_reserved_offerings() -> None:
    its = [make_it("m5.large", [offering("on-demand", Z, 1.0)])]
    assert capacity_reservation_type_filter(Requirements())(its) == (its, [])


def test_filter_instance_types_copies_before_mutating_and_traces() -> None:
    od = make_it("od.large", [offering("on-demand", Z, 5.0)])
    spot = make_it("spot.large", [offering("spot", Z, 10.0), offering("on-demand", Z, 20.0)])
    trace = FilterTrace()
    out = filter_instance_types([od, spot], _exists(), {}, trace=trace)
    assert out is not None
    kept_spot = next(it for it in out if it.name == "spot.large")
    assert len(kept_spot.offerings) == 1  # the expensive spot offering was dropped on the copy
    assert len(spot.offerings) == 2  # the shared instance type is untouched
    assert trace.rejected == {}


def test_filter_instance_types_none_when_emptied() -> None:
    gone = make_it("a.gone", [offering("on-demand", Z, 0.5, available=False)])
    trace = FilterTrace()
    assert filter_instance_types([gone], Requirements(), {}, trace=trace) is None
    assert trace.emptied_by == "compatible-available-filter"
