"""Tests for karpy.cloudprovider.types (ports of pkg/cloudprovider/suite_test.go and the
OrderByPrice / SatisfiesMinValues / Truncate behaviour of pkg/cloudprovider/types.go)."""

from __future__ import annotations

import math

import pytest

from karpy.api.quantity import parse_nanos
from karpy.cloudprovider.types import (
    MAX_FLOAT64,
    MAX_INSTANCE_TYPES,
    MIN_VALUES_POLICY_BEST_EFFORT,
    CloudProvider,
    CreateError,
    InstanceType,
    InstanceTypeOverhead,
    InstanceTypes,
    InsufficientCapacityError,
    MinValuesError,
    NodeClaimNotFoundError,
    NodeClassNotReadyError,
    Offering,
    Offerings,
    UnevaluatedNodePoolError,
    adjusted_price,
    errors_as,
    ignore_nodeclaim_not_found_error,
    is_insufficient_capacity_error,
    is_nodeclaim_not_found_error,
    is_nodeclass_not_ready_error,
    is_unevaluated_nodepool_error,
)
from karpy.cloudprovider.fake import FakeCloudProvider
from karpy.errors import KarpyError
from karpy.scheduling.labels import CORE_WELL_KNOWN_LABELS, LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_ZONE
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements


def rl(**kw: str) -> dict[str, int]:
    return {k.replace("_", "-"): parse_nanos(v) for k, v in kw.items()}


def off(ct: str, zone: str, price: float, available: bool = True, **extra: str) -> Offering:
    reqs = Requirements(Requirement(LABEL_CAPACITY_TYPE, "In", [ct]), Requirement(LABEL_ZONE, "In", [zone]))
    for k, v in extra.items():
        reqs.add(Requirement(k, "In", [v]))
    return Offering(reqs, price, available)


def it(name: str, *offerings: Offering, extra: dict[str, list[str]] | None = None) -> InstanceType:
    reqs = Requirements(Requirement(LABEL_INSTANCE_TYPE, "In", [name]))
    for k, vs in (extra or {}).items():
        reqs.add(Requirement(k, "In", vs))
    return InstanceType(name, reqs, Offerings(offerings), rl(cpu="4", memory="4Gi", pods="5"))


# ------------------------------------------------------------------------------------------
# errors
# ------------------------------------------------------------------------------------------
class BaseError(Exception):
    pass


# upstream: pkg/cloudprovider/suite_test.go "should support unwrapping for NodeClaimNotFound"
def test_unwrap_nodeclaim_not_found() -> None:
    err = NodeClaimNotFoundError(BaseError("boom"))
    assert isinstance(errors_as(err, BaseError), BaseError)
    assert str(err) == "nodeclaim not found, boom"
    assert is_nodeclaim_not_found_error(err)
    assert ignore_nodeclaim_not_found_error(err) is None
    other = BaseError("x")
    assert ignore_nodeclaim_not_found_error(other) is other


# upstream: pkg/cloudprovider/suite_test.go "should support unwrapping for InsufficientCapacity"
def test_unwrap_insufficient_capacity() -> None:
    err = InsufficientCapacityError(BaseError("no room"))
    assert isinstance(errors_as(err, BaseError), BaseError)
    assert str(err) == "insufficient capacity, no room"
    assert is_insufficient_capacity_error(err)
    assert not is_nodeclaim_not_found_error(err)


# upstream: pkg/cloudprovider/suite_test.go "should support unwrapping for NodeClassNotReady"
def test_unwrap_nodeclass_not_ready() -> None:
    err = NodeClassNotReadyError(BaseError("later"))
    assert isinstance(errors_as(err, BaseError), BaseError)
    assert str(err) == "NodeClassRef not ready, later"
    assert is_nodeclass_not_ready_error(err)


# upstream: pkg/cloudprovider/suite_test.go "should support unwrapping for CreateError"
def test_unwrap_create_error() -> None:
    err = CreateError(BaseError("bad"), "", "")
    assert isinstance(errors_as(err, BaseError), BaseError)
    assert str(err) == "creating nodeclaim, bad"


def test_wrapped_chain_and_unevaluated_nodepool() -> None:
    inner = InsufficientCapacityError("all offerings exhausted")
    outer = CreateError(inner, "LaunchFailed", "m")
    assert is_insufficient_capacity_error(outer)
    assert str(outer) == "creating nodeclaim, insufficient capacity, all offerings exhausted"
    err = UnevaluatedNodePoolError("default")
    assert str(err) == 'nodepool "default" is awaiting evaluation'
    assert is_unevaluated_nodepool_error(err)
    assert not is_unevaluated_nodepool_error(outer)
    assert not is_insufficient_capacity_error(None)


def test_fake_satisfies_protocol() -> None:
    assert isinstance(FakeCloudProvider(), CloudProvider)


# ------------------------------------------------------------------------------------------
# allocatable
# ------------------------------------------------------------------------------------------
HUGE_CAPACITY = dict(cpu="5", memory="20Gi", ephemeral_storage="100Gi", pods="57")


# upstream: pkg/cloudprovider/suite_test.go "should reserve additional capacity memory for when HugePages is defined resources"
def test_hugepages_reduce_memory() -> None:
    cap = rl(**HUGE_CAPACITY)
    cap["hugepages-2Mi"] = parse_nanos("5Gi")
    cap["hugepages-1Gi"] = parse_nanos("10Gi")
    t = InstanceType("x", Requirements(), Offerings(), cap,
                     InstanceTypeOverhead(kube_reserved=rl(cpu="125m", memory="1Gi")))
    a = t.allocatable()
    assert a["memory"] == parse_nanos("4Gi")
    assert a["cpu"] == parse_nanos("4875m")
    assert a["ephemeral-storage"] == parse_nanos("100Gi")
    assert a["pods"] == parse_nanos("57")


# upstream: pkg/cloudprovider/suite_test.go "should set memory to zero for when HugePages use all the memory on the instance type"
def test_hugepages_clamp_memory_at_zero() -> None:
    cap = rl(**HUGE_CAPACITY)
    cap["hugepages-2Mi"] = parse_nanos("50Gi")
    cap["hugepages-1Gi"] = parse_nanos("10Gi")
    t = InstanceType("x", Requirements(), Offerings(), cap,
                     InstanceTypeOverhead(kube_reserved=rl(cpu="125m", memory="1Gi")))
    assert t.allocatable()["memory"] == 0
    assert t.allocatable()["cpu"] == parse_nanos("4875m")


def test_allocatable_subtracts_all_overheads_only_for_capacity_keys() -> None:
    # types.go computeAllocatable: Subtract(capacity, KubeReserved+SystemReserved+EvictionThreshold)
    t = InstanceType("x", Requirements(), Offerings(), rl(cpu="4", memory="16Gi"),
                     InstanceTypeOverhead(kube_reserved=rl(cpu="100m", memory="1Gi"),
                                          system_reserved=rl(cpu="100m", memory="100Mi", ephemeral_storage="1Gi"),
                                          eviction_threshold=rl(memory="100Mi")))
    a = t.allocatable()
    assert a == {"cpu": parse_nanos("3800m"), "memory": parse_nanos("16Gi") - parse_nanos("1224Mi")}
    assert t.allocatable() is a  # cached


# upstream: pkg/cloudprovider/suite_test.go "should compute a single allocatable when no offerings have overrides"
def test_single_allocatable_group_without_overrides() -> None:
    t = InstanceType("x", Requirements(), Offerings([Offering(Requirements(), 0.0, True),
                                                     Offering(Requirements(), 0.0, True)]),
                     rl(cpu="4", memory="16Gi", pods="110"),
                     InstanceTypeOverhead(kube_reserved=rl(cpu="100m", memory="1Gi")))
    groups = t.allocatable_groups()
    assert len(groups) == 1
    assert groups[0].allocatable["cpu"] == parse_nanos("3900m")
    assert groups[0].allocatable["memory"] == parse_nanos("15Gi")
    assert len(groups[0].offerings) == 2


# upstream: pkg/cloudprovider/suite_test.go "should compute multiple allocatables when offerings have overrides"
def test_multiple_allocatable_groups_with_overrides() -> None:
    ext = "test.com/extended-slots"

    def override() -> Offering:
        return Offering(Requirements(), 0.0, True, capacity_override={ext: parse_nanos("12")},
                        overhead_override=InstanceTypeOverhead(system_reserved=rl(memory="3Gi")))

    unavailable = Offering(Requirements(), 0.0, False, capacity_override={ext: parse_nanos("99")})
    t = InstanceType("x", Requirements(),
                     Offerings([Offering(Requirements(), 0.0, True), Offering(Requirements(), 0.0, True),
                                override(), override(), unavailable]),
                     rl(cpu="4", memory="16Gi", pods="110"),
                     InstanceTypeOverhead(kube_reserved=rl(cpu="100m", memory="1Gi")))
    groups = t.allocatable_groups()
    assert len(groups) == 2  # the unavailable override offering forms no group
    assert groups[0].allocatable["cpu"] == parse_nanos("3900m")
    assert groups[0].allocatable["memory"] == parse_nanos("15Gi")
    assert groups[0].allocatable.get(ext, 0) == 0
    assert len(groups[0].offerings) == 2
    assert groups[1].allocatable["cpu"] == parse_nanos("3900m")
    assert groups[1].allocatable["memory"] == parse_nanos("13Gi")
    assert groups[1].allocatable[ext] == parse_nanos("12")
    assert len(groups[1].offerings) == 2
    assert t.allocatable() is groups[0].allocatable


def test_capacity_overlay_recomputes_allocatable() -> None:
    t = it("a", off("spot", "z1", 1.0))
    before = t.allocatable()["memory"]
    t.apply_capacity_overlay(rl(memory="8Gi"))
    assert t.is_capacity_overlay_applied()
    assert t.allocatable()["memory"] == parse_nanos("8Gi") != before


# ------------------------------------------------------------------------------------------
# AdjustedPrice
# ------------------------------------------------------------------------------------------
# upstream: pkg/cloudprovider/suite_test.go "should adjust price based overlay values" (DescribeTable)
@pytest.mark.parametrize(
    ("adjustment", "base", "expected"),
    [
        ("-10%", 10.0, 9.0),
        ("+10%", 10.0, 11.0),
        ("-50%", 10.0, 5.0),
        ("+100%", 10.0, 20.0),
        ("-100%", 10.0, 0.0),
        ("-200%", 10.0, 0.0),
        ("-25%", 1.5, 1.125),
        ("+0", 10.0, 10.0),
        ("+5", 10.0, 15.0),
        ("-2.5", 10.0, 7.5),
        ("-10", 10.0, 0.0),
        ("-15", 10.0, 0.0),
        ("+0.75", 1.25, 2.0),
        ("+100", 0.001, 100.001),
        ("+0.0001", 0.0001, 0.0002),
    ],
)
def test_adjusted_price_table(adjustment: str, base: float, expected: float) -> None:
    assert adjusted_price(base, adjustment) == expected


# upstream: pkg/cloudprovider/suite_test.go "should override price"
def test_adjusted_price_override() -> None:
    assert adjusted_price(82781.0, "80.0") == 80


# upstream: pkg/cloudprovider/suite_test.go "should provide the same if price or priceAdjustment is not provided"
def test_adjusted_price_empty() -> None:
    assert adjusted_price(82781.0, "") == 82781


def test_apply_price_overlay_marks_offering() -> None:
    o = off("spot", "z1", 2.0)
    t = it("a", o, off("on-demand", "z1", 3.0))
    assert not t.is_pricing_overlay_applied()
    o.apply_price_overlay("-50%")
    assert o.price == 1.0 and o.is_price_overlaid()
    assert t.is_pricing_overlay_applied()
    assert t.offering_price("z1", "spot") == (1.0, True)
    assert t.offering_price("z9", "spot") == (0.0, False)


# ------------------------------------------------------------------------------------------
# Offerings
# ------------------------------------------------------------------------------------------
def test_offering_accessors() -> None:
    o = off("spot", "test-zone-1", 1.0)
    assert (o.capacity_type, o.zone, o.reservation_id) == ("spot", "test-zone-1", "")
    r = Offering(Requirements(Requirement(LABEL_CAPACITY_TYPE, "In", ["reserved"]),
                              Requirement(LABEL_ZONE, "In", ["z"]),
                              Requirement("karpenter.test.sh/reservation-id", "In", ["r-1"])),
                 1.0, reservation_capacity=2, reservation_id_label="karpenter.test.sh/reservation-id")
    assert r.reservation_id == "r-1"


def test_offerings_helpers() -> None:
    ofs = Offerings([off("spot", "z1", 2.0), off("spot", "z2", 1.0, available=False),
                     off("on-demand", "z1", 3.0), off("on-demand", "z2", 3.0)])
    assert [o.zone for o in ofs.available()] == ["z1", "z1", "z2"]
    spot = Requirements(Requirement(LABEL_CAPACITY_TYPE, "In", ["spot"]))
    assert [o.zone for o in ofs.compatible(spot)] == ["z1", "z2"]
    assert ofs.has_compatible(spot)
    assert not ofs.has_compatible(Requirements(Requirement(LABEL_CAPACITY_TYPE, "In", ["reserved"])))
    assert ofs.cheapest() is ofs[1]
    # lo.MaxBy keeps the first of equally expensive offerings
    assert ofs.most_expensive() is ofs[2]
    assert Offerings().cheapest() is None and Offerings().most_expensive() is None


def test_worst_launch_price_precedence() -> None:
    # types.go WorstLaunchPrice: reserved, then spot, then on-demand; most expensive in that class
    ofs = Offerings([off("spot", "z1", 2.0), off("spot", "z2", 2.5), off("on-demand", "z1", 9.0)])
    assert ofs.worst_launch_price(Requirements()) == 2.5
    od = Requirements(Requirement(LABEL_CAPACITY_TYPE, "In", ["on-demand"]))
    assert ofs.worst_launch_price(od) == 9.0
    assert ofs.worst_launch_price(Requirements(Requirement(LABEL_ZONE, "In", ["z3"]))) == MAX_FLOAT64


def test_offering_compatibility_custom_and_well_known_keys() -> None:
    o = off("spot", "z1", 1.0, **{"example.com/custom": "a"})
    # an undefined custom key with In is denied; an undefined well-known key is allowed
    assert not o.is_compatible(Requirements())
    assert o.is_compatible(Requirements(), CORE_WELL_KNOWN_LABELS | {"example.com/custom"})
    assert o.is_compatible(Requirements(Requirement("example.com/custom", "In", ["a", "b"])))
    assert not o.is_compatible(Requirements(Requirement("example.com/custom", "NotIn", ["a"])))
    # DoesNotExist offering requirement: fine when undefined or NotIn/DoesNotExist, not with In/Exists
    dne = Offering(Requirements(Requirement(LABEL_ZONE, "In", ["z1"]), Requirement("example.com/r", "DoesNotExist")), 1.0)
    assert dne.is_compatible(Requirements())
    assert dne.is_compatible(Requirements(Requirement("example.com/r", "NotIn", ["x"])))
    assert dne.is_compatible(Requirements(Requirement("example.com/r", "DoesNotExist")))
    assert not dne.is_compatible(Requirements(Requirement("example.com/r", "Exists")))
    assert not dne.is_compatible(Requirements(Requirement("example.com/r", "In", ["x"])))


# ------------------------------------------------------------------------------------------
# InstanceTypes
# ------------------------------------------------------------------------------------------
def test_order_by_price_uses_compatible_available_offerings() -> None:
    # upstream: instance_selection_test.go "should schedule on an instance with enough resources" family /
    # types.go OrderByPrice: the spot price is ignored for an on-demand-only claim
    a = it("a", off("spot", "z1", 0.1), off("on-demand", "z1", 5.0))
    b = it("b", off("spot", "z1", 1.0), off("on-demand", "z1", 2.0))
    c = it("c", off("on-demand", "z1", 0.01, available=False))
    its = InstanceTypes([c, a, b])
    assert [t.name for t in its.order_by_price(Requirements())] == ["a", "b", "c"]
    od = Requirements(Requirement(LABEL_CAPACITY_TYPE, "In", ["on-demand"]))
    ordered = its.order_by_price(od)
    assert ordered is its  # sorts in place, like upstream
    assert [t.name for t in ordered] == ["b", "a", "c"]
    assert c.min_compatible_price(od) == MAX_FLOAT64


def test_order_by_price_is_stable_on_ties() -> None:
    its = InstanceTypes([it(n, off("spot", "z1", 1.0)) for n in "qwertyuiopasdfgh"])
    names = [t.name for t in its]
    assert [t.name for t in its.order_by_price(Requirements())] == names


def test_compatible_filters_on_available_offerings() -> None:
    a = it("a", off("spot", "z1", 1.0, available=False), off("on-demand", "z2", 1.0))
    b = it("b", off("spot", "z1", 1.0))
    spot = Requirements(Requirement(LABEL_CAPACITY_TYPE, "In", ["spot"]))
    assert [t.name for t in InstanceTypes([a, b]).compatible(spot)] == ["b"]
    assert [t.name for t in InstanceTypes([a, b]).compatible(Requirements())] == ["a", "b"]


FAMILY = "karpenter.kwok.sh/instance-family"


def fam(name: str, family: str) -> InstanceType:
    return it(name, off("spot", "z1", 1.0), extra={FAMILY: [family]})


def mv_reqs(it_names: list[str], it_min: int, families: list[str], fam_min: int) -> Requirements:
    return Requirements(Requirement(LABEL_INSTANCE_TYPE, "In", it_names, min_values=it_min),
                        Requirement(FAMILY, "In", families, min_values=fam_min))


# upstream: pkg/cloudprovider/types.go SatisfiesMinValues doc comment (PASSES / FAILS examples)
def test_satisfies_min_values_doc_examples() -> None:
    names = ["c4.large", "c4.xlarge", "c5.large", "c5.xlarge", "m4.large", "m4.xlarge"]
    reqs = mv_reqs(names, 3, ["c4", "c5", "m4"], 3)
    ok = InstanceTypes([fam("c4.large", "c4"), fam("c5.xlarge", "c5"), fam("m4.2xlarge", "m4")])
    assert ok.satisfies_min_values(reqs) == 3
    bad = InstanceTypes([fam("c4.large", "c4"), fam("c4.xlarge", "c4"), fam("c5.2xlarge", "c5")])
    with pytest.raises(MinValuesError) as info:
        bad.satisfies_min_values(reqs)
    assert info.value.min_needed == 3
    assert info.value.unsatisfied == {FAMILY: 2}
    assert str(info.value) == f"minValues requirement is not met for label(s) (label(s)=[{FAMILY}])"
    # the hot path's tuple form says the same, as a value
    assert bad._satisfies_min_values(reqs) == (3, {FAMILY: 2}, str(info.value))


def test_satisfies_min_values_returns_first_satisfying_prefix_and_sorted_keys() -> None:
    its = InstanceTypes([fam("a", "x"), fam("b", "x"), fam("c", "y"), fam("d", "z")])
    assert its.satisfies_min_values(mv_reqs(["a"], 2, ["x"], 2)) == 3
    assert its.satisfies_min_values(Requirements()) == 0
    with pytest.raises(MinValuesError) as info:
        its.satisfies_min_values(mv_reqs(["a"], 5, ["x"], 5))
    assert (info.value.min_needed, info.value.unsatisfied) == (4, {LABEL_INSTANCE_TYPE: 4, FAMILY: 3})
    assert str(info.value) == ("minValues requirement is not met for label(s) "
                               f"(label(s)=[{FAMILY} {LABEL_INSTANCE_TYPE}])")
    assert InstanceTypes().satisfies_min_values(mv_reqs(["a"], 1, ["x"], 1)) == 0


def test_satisfies_min_values_counts_instance_type_values_not_claim_values() -> None:
    # karpenter#2999: the IT's own zone values count even if the claim narrowed the zone
    t = InstanceType("a", Requirements(Requirement(LABEL_ZONE, "In", ["z1", "z2", "z3"])),
                     Offerings(), rl(cpu="1"))
    reqs = Requirements(Requirement(LABEL_ZONE, "In", ["z1"], min_values=2))
    assert InstanceTypes([t]).satisfies_min_values(reqs) == 1


def test_truncate_orders_and_cuts() -> None:
    its = InstanceTypes([it(f"t{i}", off("spot", "z1", float(10 - i))) for i in range(10)])
    out = its.truncate(Requirements(), 3)
    assert [t.name for t in out] == ["t9", "t8", "t7"]
    assert MAX_INSTANCE_TYPES == 600


def test_truncate_min_values_error_and_best_effort() -> None:
    # cheapest three share one family; minValues 2 on the family needs the 4th
    its = InstanceTypes([
        it("p", off("spot", "z1", 4.0), extra={FAMILY: ["y"]}),
        it("a", off("spot", "z1", 1.0), extra={FAMILY: ["x"]}),
        it("b", off("spot", "z1", 2.0), extra={FAMILY: ["x"]}),
        it("c", off("spot", "z1", 3.0), extra={FAMILY: ["x"]}),
    ])
    reqs = Requirements(Requirement(FAMILY, "In", ["x", "y"], min_values=2))
    with pytest.raises(MinValuesError) as info:
        its.truncate(reqs, 3)
    err = info.value
    assert str(err) == f"validating minValues, minValues requirement is not met for label(s) (label(s)=[{FAMILY}])"
    assert err.instance_types is its and [t.name for t in its] == ["a", "b", "c", "p"]
    assert isinstance(err, KarpyError) and isinstance(err, ValueError)
    assert its._truncate(reqs, 3) == (its, str(err))  # the hot path's value form
    out2 = its.truncate(reqs, 3, MIN_VALUES_POLICY_BEST_EFFORT)
    assert [t.name for t in out2] == ["a", "b", "c"]
    assert len(its.truncate(reqs, 4)) == 4


def test_max_float_is_go_max() -> None:
    assert MAX_FLOAT64 == 1.7976931348623157e308 and not math.isinf(MAX_FLOAT64)
