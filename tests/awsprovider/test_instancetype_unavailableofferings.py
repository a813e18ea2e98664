"""ICE cache semantics (pkg/cache/unavailableofferings.go) on a virtual clock, and the offering
views of the instance-type provider (pkg/providers/instancetype/suite_test.go L2255-2395)."""

from __future__ import annotations

from typing import Any

import pytest

from awsprovider.instancetype import InstanceTypeProvider, InstanceTypeSettings
from awsprovider.nodeclass import ResolvedNodeClass, ResolvedSubnet, default_nodeclass
from awsprovider.unavailableofferings import (
    UNAVAILABLE_OFFERINGS_TTL,
    UnavailableOfferings,
    offering_key,
)


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def now(self) -> float:
        return self.t


def test_ttl_is_three_minutes() -> None:
    assert UNAVAILABLE_OFFERINGS_TTL == 180.0


def test_key_format() -> None:
    # upstream: unavailableofferings.go key()
    assert offering_key("m5.large", "us-east-1a", "spot") == "spot:m5.large:us-east-1a"
    assert offering_key("m5.large", "us-east-1a", "spot", "pg-1") == "spot:m5.large:us-east-1a:pg-1"
    assert offering_key("m5.large", "us-east-1a", "spot", "pg-1", "2") == "spot:m5.large:us-east-1a:pg-1:2"


def test_mark_and_expire() -> None:
    clk = Clock()
    uo = UnavailableOfferings(clk)
    uo.mark_unavailable("m5.large", "us-east-1a", "spot")
    assert uo.is_unavailable("m5.large", "us-east-1a", [], "spot")
    assert not uo.is_unavailable("m5.large", "us-east-1a", [], "on-demand")
    assert not uo.is_unavailable("m5.large", "us-east-1b", [], "spot")
    clk.t += 180.0  # go-cache: expired only once now > expiration
    assert uo.is_unavailable("m5.large", "us-east-1a", [], "spot")
    clk.t += 0.001
    assert not uo.is_unavailable("m5.large", "us-east-1a", [], "spot")


def test_remark_extends_ttl() -> None:
    # upstream: MarkUnavailable "even if the key is already in the cache, we still need to call Set to extend"
    clk = Clock()
    uo = UnavailableOfferings(clk)
    uo.mark_unavailable("m5.large", "us-east-1a", "spot")
    clk.t += 120
    uo.mark_unavailable("m5.large", "us-east-1a", "spot")
    clk.t += 120
    assert uo.is_unavailable("m5.large", "us-east-1a", [], "spot")
    clk.t += 61
    assert not uo.is_unavailable("m5.large", "us-east-1a", [], "spot")


def test_capacity_type_mark() -> None:
    # upstream: instance suite L206 SLR error disables all spot
    clk = Clock()
    uo = UnavailableOfferings(clk)
    uo.mark_capacity_type_unavailable("spot")
    assert uo.is_unavailable("anything", "us-east-1z", [], "spot")
    assert not uo.is_unavailable("anything", "us-east-1z", [], "on-demand")
    clk.t += 181
    assert not uo.is_unavailable("anything", "us-east-1z", [], "spot")


def test_subnets_all_marked() -> None:
    # upstream: instance suite L621 table: a zone is unavailable only when every subnet is marked
    uo = UnavailableOfferings(Clock())
    uo.mark_subnet_unavailable("s1")
    assert uo.is_unavailable("m5.large", "z", ["s1"], "on-demand")
    assert not uo.is_unavailable("m5.large", "z", ["s1", "s2", "s3"], "on-demand")
    uo.mark_subnet_unavailable("s2")
    uo.mark_subnet_unavailable("s3")
    assert uo.is_unavailable("m5.large", "z", ["s1", "s2", "s3"], "on-demand")
    assert not uo.is_unavailable("m5.large", "z", [], "on-demand")  # no subnets: never via subnets


def test_seq_num() -> None:
    # upstream: SeqNum = per-type marks/evictions + capacity-type and subnet counters
    clk = Clock()
    uo = UnavailableOfferings(clk)
    assert uo.seq_num("m5.large") == 0
    uo.mark_unavailable("m5.large", "us-east-1a", "spot")
    assert uo.seq_num("m5.large") == 1
    assert uo.seq_num("m5.xlarge") == 0
    uo.mark_capacity_type_unavailable("spot")
    assert uo.seq_num("m5.xlarge") == 1
    uo.mark_subnet_unavailable("s1")
    assert uo.seq_num("m5.large") == 3
    clk.t += 181  # evictions bump again
    assert uo.seq_num("m5.large") == 6
    uo.delete("m5.large", "us-east-1a", "spot")  # nothing left to delete: no bump
    assert uo.seq_num("m5.large") == 6


def test_delete_and_flush() -> None:
    # upstream: instancetype suite "deleting the cache entry makes inf2.24xlarge launchable again"
    uo = UnavailableOfferings(Clock())
    uo.mark_unavailable("inf2.24xlarge", "us-east-1a", "on-demand")
    uo.delete("inf2.24xlarge", "us-east-1a", "on-demand")
    assert not uo.is_unavailable("inf2.24xlarge", "us-east-1a", [], "on-demand")
    uo.mark_unavailable("x", "z", "spot")
    uo.mark_capacity_type_unavailable("on-demand")
    before = uo.seq_num("x")
    uo.flush()
    assert not uo.is_unavailable("x", "z", [], "spot")
    assert not uo.is_unavailable("x", "z", [], "on-demand")
    assert uo.seq_num("x") == before  # go-cache Flush does not run the eviction callback


def test_callable_clock() -> None:
    t = [0.0]
    uo = UnavailableOfferings(lambda: t[0])
    uo.mark_unavailable("a", "z", "spot")
    t[0] = 500
    assert not uo.is_unavailable("a", "z", [], "spot")


# -- provider views (suite_test.go L2255-2395) -------------------------------------------------
def _info(name: str, enis: int = 3, ips: int = 10) -> dict[str, Any]:
    return {
        "InstanceType": name, "SupportedUsageClasses": ["on-demand", "spot"], "Hypervisor": "nitro",
        "VCpuInfo": {"DefaultVCpus": 2}, "MemoryInfo": {"SizeInMiB": 8192},
        "ProcessorInfo": {"SupportedArchitectures": ["x86_64"], "Manufacturer": "Intel", "SustainedClockSpeedInGhz": 3.1},
        "NetworkInfo": {"DefaultNetworkCardIndex": 0, "NetworkCards": [{"NetworkCardIndex": 0, "MaximumNetworkInterfaces": enis}],
                        "Ipv4AddressesPerInterface": ips},
    }


class Prices:
    def on_demand_price(self, t: str) -> float | None:
        return {"m5.large": 0.096, "m5.xlarge": 0.192}.get(t)

    def spot_price(self, t: str, zone: str) -> float | None:
        return self.on_demand_price(t)


ZONES = ("test-zone-1a", "test-zone-1b", "test-zone-1c")


@pytest.fixture()
def setup() -> tuple[InstanceTypeProvider, UnavailableOfferings, ResolvedNodeClass, Clock]:
    clk = Clock()
    uo = UnavailableOfferings(clk)
    types = {n: _info(n) for n in ("m5.large", "m5.xlarge")}
    offerings = {n: set(ZONES) for n in types}
    p = InstanceTypeProvider.from_data("us-west-2", types, offerings, Prices(), uo)
    subnets = tuple(ResolvedSubnet(f"subnet-test{i + 1}", z, f"tstz1-1{z[-1]}", 100) for i, z in enumerate(ZONES))
    return p, uo, ResolvedNodeClass(default_nodeclass(), subnets), clk


def _avail(p: InstanceTypeProvider, nc: ResolvedNodeClass, name: str, uo: UnavailableOfferings | None = None) -> set[tuple[str, str]]:
    it = next(i for i in p.list(nc, uo) if i.name == name)
    return {(o.zone, o.capacity_type) for o in it.offerings if o.available}


def test_ice_everywhere_still_listed(setup: Any) -> None:
    # upstream: suite_test.go "should not remove instance types when all offerings are ICE'd"
    p, uo, nc, _ = setup
    for z in ZONES:
        for ct in ("spot", "on-demand"):
            uo.mark_unavailable("m5.xlarge", z, ct)
    its = {i.name: i for i in p.list(nc)}
    assert "m5.xlarge" in its and not any(o.available for o in its["m5.xlarge"].offerings)
    assert len(its["m5.xlarge"].offerings) == 6


def test_marking_reduces_available_offerings(setup: Any) -> None:
    # upstream: suite_test.go L2303 m5.large 6 -> spot 1a marked -> 5 -> OD 1b,1c marked -> 3
    p, uo, nc, clk = setup
    assert len(_avail(p, nc, "m5.large")) == 6
    uo.mark_unavailable("m5.large", "test-zone-1a", "spot")
    assert len(_avail(p, nc, "m5.large")) == 5
    uo.mark_unavailable("m5.large", "test-zone-1b", "on-demand")
    uo.mark_unavailable("m5.large", "test-zone-1c", "on-demand")
    assert len(_avail(p, nc, "m5.large")) == 3
    assert len(_avail(p, nc, "m5.xlarge")) == 6
    clk.t += 181  # entries expire: the provider's cached offerings are re-evaluated
    assert len(_avail(p, nc, "m5.large")) == 6


def test_capacity_type_unavailable_view(setup: Any) -> None:
    # upstream: suite_test.go "MarkCapacityTypeUnavailable(spot)" -> only OD available anywhere
    p, uo, nc, _ = setup
    uo.mark_capacity_type_unavailable("spot")
    for name in ("m5.large", "m5.xlarge"):
        assert {ct for _, ct in _avail(p, nc, name)} == {"on-demand"}


def test_subnet_marks_view(setup: Any) -> None:
    # upstream: suite_test.go "marking all subnets of 1a" -> available zones {1b, 1c}
    p, uo, nc, _ = setup
    uo.mark_subnet_unavailable("subnet-test1")
    assert {z for z, _ in _avail(p, nc, "m5.large")} == {"test-zone-1b", "test-zone-1c"}


def test_cache_object_passed_per_call(setup: Any) -> None:
    # offerings are evaluated against the cache object passed in
    p, uo, nc, clk = setup
    other = UnavailableOfferings(clk)
    other.mark_unavailable("m5.large", "test-zone-1a", "on-demand")
    assert len(_avail(p, nc, "m5.large", other)) == 5
    assert len(_avail(p, nc, "m5.large")) == 6


def test_settings_defaults() -> None:
    s = InstanceTypeSettings()
    assert s.ami_family == "AL2023" and s.reserved_enis == 0
