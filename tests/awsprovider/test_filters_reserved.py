"""Ports of pkg/providers/instance/filter/filter_test.go Context("CapacityReservationTypeFilter"),
Context("CapacityBlockFilter") and Context("ReservedOfferingFilter"). Upstream's offerings without
a zone get ``zone-1a`` here (karpy's hand-built instance types derive their zone label from them)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from launch_helpers import make_it  # noqa: E402

from awsprovider.filters import (  # noqa: E402
    capacity_block_filter,
    capacity_reservation_type_filter,
    reserved_offering_filter,
)
from awsprovider.labels import (  # noqa: E402
    LABEL_CAPACITY_RESERVATION_ID,
    LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE,
    LABEL_CAPACITY_RESERVATION_TYPE,
)
from karpy.cloudprovider.types import Offering  # noqa: E402
from karpy.scheduling.labels import LABEL_CAPACITY_TYPE, LABEL_ZONE, OP_EXISTS, OP_IN, OP_NOT_IN  # noqa: E402
from karpy.scheduling.requirement import Requirement  # noqa: E402
from karpy.scheduling.requirements import Requirements  # noqa: E402

TYPES = [("default", False), ("capacity-block", False), ("default", True)]


def off(ct: str, available: bool = True, price: float = 0.0, rtype: str | None = None, interruptible: bool | None = None,
        zone: str = "zone-1a", rid: str | None = None, capacity: int = 0) -> Offering:
    reqs = Requirements(Requirement(LABEL_CAPACITY_TYPE, OP_IN, [ct]), Requirement(LABEL_ZONE, OP_IN, [zone]))
    if rtype is not None:
        reqs.add(Requirement(LABEL_CAPACITY_RESERVATION_TYPE, OP_IN, [rtype]))
    if interruptible is not None:
        reqs.add(Requirement(LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE, OP_IN, ["true" if interruptible else "false"]))
    if rid is not None:
        reqs.add(Requirement(LABEL_CAPACITY_RESERVATION_ID, OP_IN, [rid]))
    return Offering(reqs, price, available, reservation_capacity=capacity, reservation_id_label=LABEL_CAPACITY_RESERVATION_ID)


def it(name: str, *offerings: Offering):  # type: ignore[no-untyped-def]
    return make_it(name, list(offerings), size="large")


def names(its) -> set[str]:  # type: ignore[no-untyped-def]
    return {i.name for i in its}


def reserved(*extra: Requirement) -> Requirements:
    return Requirements(Requirement(LABEL_CAPACITY_TYPE, OP_IN, ["reserved"]), *extra)


def exists() -> Requirements:
    return Requirements(Requirement(LABEL_CAPACITY_TYPE, OP_EXISTS))


def not_reserved() -> Requirements:
    return Requirements(Requirement(LABEL_CAPACITY_TYPE, OP_NOT_IN, ["reserved"]))


# -- CapacityReservationTypeFilter ---------------------------------------------------------------
@pytest.mark.parametrize("sel_type,sel_int", TYPES, ids=["when the type is default", "when the type is capacity-block",
                                                        "when the type is default interruptible"])
def test_prioritizes_the_reservation_type_with_the_cheapest_offering(sel_type: str, sel_int: bool) -> None:
    # upstream: filter_test.go DescribeTable "should prioritize the capacity reservation type with the cheapest offering"
    keep = [it(f"cheap-{sel_type}-{sel_int}", off("reserved", True, 5.0, sel_type, sel_int)),
            it(f"expensive-{sel_type}-{sel_int}", off("reserved", True, 10.0, sel_type, sel_int))]
    reject = [it(f"expensive-{t}-{i}", off("reserved", True, 10.0, t, i),
                 # cheaper, but unavailable and incompatible respectively
                 off("reserved", False, 1.0, t, i), off("reserved", True, 1.0, t, i, zone="zone-1b"))
              for t, i in TYPES if (t, i) != (sel_type, sel_int)]
    kept, rejected = capacity_reservation_type_filter(reserved(Requirement(LABEL_ZONE, OP_IN, ["zone-1a"])))(keep + reject)
    assert names(kept) == names(keep) and names(rejected) == names(reject)


@pytest.mark.parametrize("sel,rej", [(TYPES[0], TYPES[1]), (TYPES[1], TYPES[2]), (TYPES[0], TYPES[2])],
                         ids=["when the two capacity reservations are default and capacity-block",
                              "when the two capacity reservations are capacity-block and interruptible default",
                              "when the two capacity reservations are default and interruptible default"])
def test_breaks_ties_by_priority(sel: tuple[str, bool], rej: tuple[str, bool]) -> None:
    # upstream: filter_test.go DescribeTable "should break ties by priority"
    a, b = it(f"{sel[0]}-{sel[1]}", off("reserved", True, 5.0, *sel)), it(f"{rej[0]}-{rej[1]}", off("reserved", True, 5.0, *rej))
    kept, rejected = capacity_reservation_type_filter(reserved())([a, b])
    assert names(kept) == {a.name} and names(rejected) == {b.name}


@pytest.mark.parametrize("sel_type,sel_int", [TYPES[0], TYPES[2], TYPES[1]],
                         ids=["when the type is default", "when the type is default interruptible",
                              "when the type is capacity-block"])
def test_removes_offerings_of_other_reservation_types(sel_type: str, sel_int: bool) -> None:
    # upstream: filter_test.go DescribeTable "should remove offerings which aren't the selected capacity reservation type"
    pin = it("pin-instance", off("reserved", True, 1.0, sel_type, sel_int))
    other = it("filter-instance", *(off("reserved", True, 5.0, t, i) for t, i in TYPES))
    kept, rejected = capacity_reservation_type_filter(reserved())([pin, other])
    assert names(kept) == {"pin-instance", "filter-instance"} and rejected == []
    for k in kept:
        [o] = k.offerings
        assert o.capacity_type == "reserved"
        assert o.requirements.get(LABEL_CAPACITY_RESERVATION_TYPE).any() == sel_type
        assert o.requirements.get(LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE).any() == ("true" if sel_int else "false")


def test_type_filter_is_a_noop_when_reserved_is_not_allowed() -> None:
    # upstream: filter_test.go "should not filter instance types when the nodeclaim is not compatible with capacity type reserved"
    its = [it(f"{t}-instance", off("on-demand"), off("reserved", True, 1.0, t)) for t in ("default", "capacity-block")]
    kept, rejected = capacity_reservation_type_filter(not_reserved())(its)
    assert names(kept) == names(its) and rejected == []


# -- CapacityBlockFilter ---------------------------------------------------------------------------
def test_selects_the_type_with_the_cheapest_capacity_block_offering() -> None:
    # upstream: filter_test.go "should select the instance type with the cheapest capacity-block offering"
    kept, rejected = capacity_block_filter(exists())([
        it("cheap-instance", off("reserved", True, 1.0, "capacity-block"), off("reserved", True, 10.0, "capacity-block")),
        it("expensive-instance", off("reserved", True, 2.0, "capacity-block"), off("reserved", True, 10.0, "capacity-block"))])
    assert names(kept) == {"cheap-instance"} and names(rejected) == {"expensive-instance"}
    assert len(kept[0].offerings) == 1


@pytest.mark.parametrize("expected,offerings", [
    ("cheapest", [off("reserved", True, 1.0, "capacity-block", rid="cheapest"),
                  off("reserved", True, 2.0, "capacity-block", rid="expensive")]),
    ("cheapest-available", [off("reserved", False, 1.0, "capacity-block", rid="cheapest"),
                            off("reserved", True, 1.5, "capacity-block", rid="cheapest-available"),
                            off("reserved", True, 2.0, "capacity-block", rid="expensive")]),
    ("cheapest-compatible", [off("reserved", True, 1.0, "capacity-block", zone="forbidden-zone", rid="cheapest"),
                             off("reserved", True, 1.5, "capacity-block", rid="cheapest-compatible"),
                             off("reserved", True, 2.0, "capacity-block", rid="expensive")]),
], ids=["should select the cheapest offering", "should not select unavailable offerings",
        "should not select incompatible offerings"])
def test_capacity_block_offering_selection(expected: str, offerings: list[Offering]) -> None:
    # upstream: filter_test.go DescribeTable "OfferingSelection"
    reqs = Requirements(Requirement(LABEL_CAPACITY_TYPE, OP_EXISTS), Requirement(LABEL_ZONE, OP_NOT_IN, ["forbidden-zone"]))
    kept, _ = capacity_block_filter(reqs)([it("instance", *offerings)])
    [o] = kept[0].offerings
    assert o.reservation_id == expected


def test_capacity_block_filter_ignores_default_reservations() -> None:
    # upstream: filter_test.go DescribeTable "shouldn't filter instance types when the capacity reservation type is not capacity-block" ("default")
    its = [it("cheap-instance", off("reserved", True, 1.0, "default"), off("reserved", True, 10.0, "default")),
           it("expensive-instance", off("reserved", True, 2.0, "default"), off("reserved", True, 10.0, "default"))]
    kept, rejected = capacity_block_filter(exists())(its)
    assert names(kept) == names(its) and rejected == [] and all(len(k.offerings) == 2 for k in kept)


def test_capacity_block_filter_is_a_noop_when_reserved_is_not_allowed() -> None:
    # upstream: filter_test.go "shouldn't filter instance types when the requirements aren't compatible with capacity type reserved"
    its = [it("cheap-instance", off("reserved", True, 1.0, "capacity-block"), off("on-demand", True, 1.0, "capacity-block")),
           it("expensive-instance", off("reserved", True, 2.0, "capacity-block"), off("on-demand", True, 2.0, "capacity-block"))]
    kept, rejected = capacity_block_filter(not_reserved())(its)
    assert names(kept) == names(its) and rejected == [] and all(len(k.offerings) == 2 for k in kept)


# -- ReservedOfferingFilter ------------------------------------------------------------------------
def test_reserved_offering_filter_noop_without_available_reserved_offerings() -> None:
    # upstream: filter_test.go "shouldn't filter instance types if there are no available reserved offerings"
    its = [it("non-reserved-instance", off("on-demand"), off("spot")),
           it("reserved-instance", off("on-demand"), off("spot"), off("reserved", False))]
    kept, rejected = reserved_offering_filter(exists())(its)
    assert names(kept) == names(its) and rejected == []


def test_one_reserved_offering_per_instance_pool() -> None:
    # upstream: filter_test.go "should only include one reserved offering per instance pool"
    kept, rejected = reserved_offering_filter(exists())([
        it("non-reserved-instance", off("on-demand"), off("spot")),
        it("reserved-instance-a", off("on-demand"), off("spot"),
           off("reserved", zone="1", rid="kept", capacity=5), off("reserved", zone="2", rid="kept", capacity=6),
           off("reserved", zone="2", rid="rejected", capacity=5)),
        # the offering with less capacity is kept: the one with more is unavailable
        it("reserved-instance-b", off("on-demand"), off("spot"),
           off("reserved", zone="1", rid="kept", capacity=1), off("reserved", False, zone="1", rid="rejected", capacity=2)),
    ])
    assert names(kept) == {"reserved-instance-a", "reserved-instance-b"} and names(rejected) == {"non-reserved-instance"}
    assert len(kept[0].offerings) == 2
    assert {o.reservation_id for k in kept for o in k.offerings} == {"kept"}


def test_reserved_offering_filter_is_a_noop_when_reserved_is_not_allowed() -> None:
    # upstream: filter_test.go "shouldn't filter instance types if the requirements are not compatible with reserved offerings"
    its = [it("non-reserved-instance", off("on-demand"), off("spot")),
           it("reserved-instance", off("on-demand"), off("spot"), off("reserved", zone="1"))]
    kept, rejected = reserved_offering_filter(not_reserved())(its)
    assert names(kept) == names(its) and rejected == []
    assert sorted(len(k.offerings) for k in kept) == [2, 3]
