"""Tests for awsprovider.ec2.capacity (injected capacity errors)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from awsprovider.ec2.capacity import (
    ICE_ERROR_CODE,
    CapacityModel,
    CapacitySpecError,
    ice_message,
    parse_capacity_spec,
)


def test_parse_basic_spec() -> None:
    rule = parse_capacity_spec("c8i.*:*:on-demand")
    assert (rule.type_glob, rule.zone_glob, rule.capacity_type) == ("c8i.*", "*", "on-demand")
    assert rule.after is None and rule.fail is None
    assert rule.start == -math.inf and rule.end == math.inf
    assert rule.error_code == ICE_ERROR_CODE
    assert str(rule) == "c8i.*:*:on-demand"


def test_parse_options() -> None:
    rule = parse_capacity_spec("m8i.large:us-east-1b:spot:after=3:from=60:until=240:code=VcpuLimitExceeded")
    assert rule.after == 3 and rule.start == 60.0 and rule.end == 240.0
    assert rule.error_code == "VcpuLimitExceeded"


@pytest.mark.parametrize(
    "spec, fragment",
    [
        ("c8i.*:*", "expected TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE"),
        ("c8i.*:*:ondemand", "is not one of"),
        (":*:spot", "must not be empty"),
        ("c8i.*:*:spot:after=x", "not an integer"),
        ("c8i.*:*:spot:after=-1", "must be >= 0"),
        ("c8i.*:*:spot:bogus=1", "unknown field"),
        ("c8i.*:*:spot:after=1:fail=1", "mutually exclusive"),
        ("c8i.*:*:spot:from=10:until=5", "greater than"),
        ("c8i.*:*:spot:after=1:after=2", "given twice"),
        ("c8i.*:*:spot:from=nan", "not a number"),
    ],
)
def test_parse_errors_name_the_problem(spec: str, fragment: str) -> None:
    with pytest.raises(CapacitySpecError) as exc:
        parse_capacity_spec(spec)
    assert fragment in str(exc.value)
    assert repr(spec) in str(exc.value) or "expected" in str(exc.value)


def test_glob_matching_and_capacity_type() -> None:
    rule = parse_capacity_spec("c8i.*:us-east-1[ab]:on-demand")
    assert rule.matches("c8i.large", "us-east-1a", "on-demand")
    assert rule.matches("c8i.48xlarge", "us-east-1b", "on-demand")
    assert not rule.matches("c8i.large", "us-east-1c", "on-demand")
    assert not rule.matches("c8i.large", "us-east-1a", "spot")
    assert not rule.matches("c7i.large", "us-east-1a", "on-demand")
    assert not rule.matches("c8i-flex.large", "us-east-1a", "on-demand")
    assert parse_capacity_spec("*:*:*").matches("x", "y", "reserved")


def test_always_failing_rule() -> None:
    model = CapacityModel.from_specs(["c8i.*:*:on-demand"])
    assert model.try_launch("c8i.large", "us-east-1a", "on-demand", 0.0) == ICE_ERROR_CODE
    assert model.try_launch("c8i.large", "us-east-1a", "spot", 0.0) is None
    assert model.try_launch("c7i.large", "us-east-1a", "on-demand", 0.0) is None
    assert model.launches == {("c8i.large", "us-east-1a", "spot"): 1, ("c7i.large", "us-east-1a", "on-demand"): 1}


def test_after_counts_launches_per_pool() -> None:
    model = CapacityModel.from_specs(["c8i.*:*:on-demand:after=2"])
    results = [model.try_launch("c8i.large", "us-east-1a", "on-demand", 0.0) for _ in range(4)]
    assert results == [None, None, ICE_ERROR_CODE, ICE_ERROR_CODE]
    # A different pool of the same rule has its own count.
    assert model.try_launch("c8i.large", "us-east-1b", "on-demand", 0.0) is None
    assert model.launches[("c8i.large", "us-east-1a", "on-demand")] == 2
    assert model.attempts[("c8i.large", "us-east-1a", "on-demand")] == 4


def test_fail_counts_attempts_then_succeeds() -> None:
    model = CapacityModel.from_specs(["m8i.large:us-east-1a:spot:fail=2"])
    results = [model.try_launch("m8i.large", "us-east-1a", "spot", 0.0) for _ in range(4)]
    assert results == [ICE_ERROR_CODE, ICE_ERROR_CODE, None, None]


def test_time_window_is_half_open_and_uses_given_now() -> None:
    model = CapacityModel.from_specs(["r8i.*:*:*:from=60:until=240"])
    assert model.check("r8i.large", "z", "spot", 59.9) is None
    assert model.check("r8i.large", "z", "spot", 60.0) == ICE_ERROR_CODE
    assert model.check("r8i.large", "z", "spot", 239.9) == ICE_ERROR_CODE
    assert model.check("r8i.large", "z", "spot", 240.0) is None


def test_check_has_no_side_effects_and_clear_resets() -> None:
    model = CapacityModel()
    model.add("c7i.large:*:on-demand:after=1")
    assert model.check("c7i.large", "a", "on-demand", 0) is None
    assert model.attempts == {} and model.launches == {}
    assert model.try_launch("c7i.large", "a", "on-demand", 0) is None
    assert model.check("c7i.large", "a", "on-demand", 0) == ICE_ERROR_CODE
    model.clear()
    assert model.rules == [] and model.launches == {}
    assert model.check("c7i.large", "a", "on-demand", 0) is None


def test_first_matching_rule_decides_code() -> None:
    model = CapacityModel.from_specs(["c7i.*:*:*:code=VcpuLimitExceeded", "*:*:*"])
    assert model.check("c7i.large", "a", "spot", 0) == "VcpuLimitExceeded"
    assert model.check("m7i.large", "a", "spot", 0) == ICE_ERROR_CODE


def test_ice_messages() -> None:
    assert "sufficient c7i.large capacity" in ice_message("c7i.large", "us-east-1a", "on-demand")
    assert "(us-east-1a)" in ice_message("c7i.large", "us-east-1a", "on-demand")
    assert "Spot capacity" in ice_message("c7i.large", "us-east-1a", "spot")


@given(after=st.integers(min_value=0, max_value=20), tries=st.integers(min_value=0, max_value=40))
def test_after_never_exceeds_budget(after: int, tries: int) -> None:
    model = CapacityModel.from_specs([f"t:*:on-demand:after={after}"])
    ok = sum(model.try_launch("t", "z", "on-demand", 0.0) is None for _ in range(tries))
    assert ok == min(after, tries)


@given(fail=st.integers(min_value=0, max_value=20), tries=st.integers(min_value=0, max_value=40))
def test_fail_first_n(fail: int, tries: int) -> None:
    model = CapacityModel.from_specs([f"t:*:spot:fail={fail}"])
    results = [model.try_launch("t", "z", "spot", 0.0) for _ in range(tries)]
    assert all(r == ICE_ERROR_CODE for r in results[:fail])
    assert all(r is None for r in results[fail:])
