"""Reserved launches on karpy's AWS provider: offerings, launch templates, CreateFleet, labels,
the availability cache.

Ports of the AWS provider's capacity reservation cases:
pkg/providers/instance/suite_test.go (ReservationCapacityExceeded, RequestLimitExceeded),
pkg/cloudprovider/suite_test.go Context("Capacity Reservations"),
pkg/providers/launchtemplate/suite_test.go (one template per reservation, market types, the
capacity reservation specification per gate) and pkg/providers/instancetype/suite_test.go
Context("Capacity Blocks"). Upstream's test-zone-1a/1b are us-east-1a/1b; NodeClaims are created
directly through the provider, as instance/suite_test.go does (core's provisioning of reserved
offerings is ported in tests/provisioning/test_reserved_capacity.py).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from launch_helpers import nodeclaim  # noqa: E402
from reservation_helpers import SELF_OWNER, cr, provider  # noqa: E402

from awsprovider.instancetype import RESERVED_PRICE_DIVISOR  # noqa: E402
from awsprovider.labels import (  # noqa: E402
    LABEL_CAPACITY_RESERVATION_ID,
    LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE,
    LABEL_CAPACITY_RESERVATION_TYPE,
)
from karpy.cloudprovider.types import CreateError, InsufficientCapacityError, NodeClaimNotFoundError  # noqa: E402

CT = "karpenter.sh/capacity-type"
RESERVED = [{"key": CT, "operator": "In", "values": ["reserved"]}]


def _provider(made: list[Any], *reservations: Any, gate: bool = True) -> Any:
    p = provider([{"tags": {"karpy/reserved": "yes"}}],
                 [r for r in reservations if r.tags.setdefault("karpy/reserved", "yes")], gate=gate)
    made.append(p)
    return p


def _it(p: Any, name: str) -> Any:
    nodeclass = p.resolve_nodeclass("default")
    return next(it for it in p.instance_types.list(nodeclass) if it.name == name)


def _launch_templates(p: Any) -> dict[str, dict[str, Any]]:
    out = {}
    for page in p.ec2.client.get_paginator("describe_launch_templates").paginate():
        for lt in page["LaunchTemplates"]:
            name = lt["LaunchTemplateName"]
            ver = p.ec2.client.describe_launch_template_versions(LaunchTemplateName=name)["LaunchTemplateVersions"][0]
            out[name] = ver["LaunchTemplateData"]
    return out


# -- pkg/providers/instance/suite_test.go ------------------------------------------------------
def test_reservation_capacity_exceeded_is_ice_and_marks_the_reservation_unavailable(made: list[Any]) -> None:
    # upstream: instance/suite_test.go "should return an ICE error when all attempted instance types return a ReservedCapacityReservation error"
    p = _provider(made, cr("cr-m5.large-1a-1", available=0))
    p.resolve_nodeclass("default")
    p.capacity_reservations.set_available_instance_count("cr-m5.large-1a-1", 1)  # Karpenter believes one is free
    with pytest.raises(InsufficientCapacityError):
        p.create(nodeclaim(requirements=RESERVED))
    assert p.launches["nc-1"].errors() == [{"error_code": "ReservationCapacityExceeded", "instance_type": "m5.large",
                                            "zone": "us-east-1a"}]
    assert p.capacity_reservations.get_available_instance_count("cr-m5.large-1a-1") == 0


def test_request_limit_exceeded_does_not_mark_the_reservation_unavailable(made: list[Any]) -> None:
    # upstream: instance/suite_test.go "should not mark capacity reservations unavailable for RequestLimitExceeded CreateFleet errors"
    from botocore.awsrequest import AWSResponse

    p = _provider(made, cr("cr-m5.large-1a-1", available=1))
    p.resolve_nodeclass("default")

    def throttle(**_: Any) -> Any:
        return (AWSResponse("https://ec2.us-east-1.amazonaws.com/", 503, {}, None),
                {"Error": {"Code": "RequestLimitExceeded", "Message": "Request limit exceeded."}})

    p.ec2.client.meta.events.register_last("before-call.ec2.CreateFleet", throttle)
    with pytest.raises(CreateError) as err:
        p.create(nodeclaim(requirements=RESERVED))
    assert not isinstance(err.value, InsufficientCapacityError)
    assert p.capacity_reservations.get_available_instance_count("cr-m5.large-1a-1") == 1


# -- pkg/cloudprovider/suite_test.go Context("Capacity Reservations") ---------------------------
def _cloudprovider_reservations() -> list[Any]:
    return [cr(f"cr-m5.large-1a-{t}-{str(i).lower()}", rtype=t, interruptible=i)
            for t in ("default", "capacity-block") for i in (True, False) if not (i and t == "capacity-block")]


def test_marks_capacity_reservations_launched(made: list[Any]) -> None:
    # upstream: cloudprovider/suite_test.go "should mark capacity reservations as launched"
    p = _provider(made, *_cloudprovider_reservations())
    created = p.create(nodeclaim(requirements=RESERVED))
    rid = created.metadata.labels[LABEL_CAPACITY_RESERVATION_ID]
    assert p.capacity_reservations.get_available_instance_count(rid) == 9
    assert created.metadata.labels[CT] == "reserved"


def test_marks_capacity_reservations_terminated(made: list[Any]) -> None:
    # upstream: cloudprovider/suite_test.go "should mark capacity reservations as terminated"
    p = _provider(made, *_cloudprovider_reservations())
    created = p.create(nodeclaim(requirements=RESERVED))
    rid = created.metadata.labels[LABEL_CAPACITY_RESERVATION_ID]
    p.delete(created)  # the instance still exists: no NotFound, availability unchanged
    assert p.capacity_reservations.get_available_instance_count(rid) == 9
    with pytest.raises(NodeClaimNotFoundError):
        p.delete(created)
    assert p.capacity_reservations.get_available_instance_count(rid) == 10
    [r] = p.ec2.client.describe_capacity_reservations(CapacityReservationIds=[rid])["CapacityReservations"]
    assert r["AvailableInstanceCount"] == 10  # EC2 gave the capacity back at termination


@pytest.mark.parametrize("rtype,interruptible", [("default", False), ("default", True), ("capacity-block", False)],
                         ids=["when the capacity reservation type is default non-interruptible",
                              "when the capacity reservation type is default interruptible",
                              "when the capacity reservation type is capacity-block"])
def test_includes_capacity_reservation_labels(made: list[Any], rtype: str, interruptible: bool) -> None:
    # upstream: cloudprovider/suite_test.go DescribeTable "should include capacity reservation labels"
    p = _provider(made, *_cloudprovider_reservations())
    flag = "true" if interruptible else "false"
    created = p.create(nodeclaim(requirements=RESERVED + [
        {"key": LABEL_CAPACITY_RESERVATION_TYPE, "operator": "In", "values": [rtype]},
        {"key": LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE, "operator": "In", "values": [flag]}]))
    labels = created.metadata.labels
    assert labels[CT] == "reserved"
    assert labels[LABEL_CAPACITY_RESERVATION_ID] == f"cr-m5.large-1a-{rtype}-{flag}"
    assert (labels[LABEL_CAPACITY_RESERVATION_TYPE], labels[LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE]) == (rtype, flag)
    request = p.launches["nc-1"].request
    expected = {"default": "reserved-capacity" if interruptible else "on-demand"}.get(rtype, "capacity-block")
    assert request["TargetCapacitySpecification"]["DefaultTargetCapacityType"] == expected  # types.go Build
    assert ("OnDemandOptions" in request) == (rtype == "default" and not interruptible)
    assert ("ReservedCapacityOptions" in request) == interruptible


# -- pkg/providers/launchtemplate/suite_test.go ------------------------------------------------
def test_one_launch_template_per_capacity_reservation(made: list[Any]) -> None:
    # upstream: launchtemplate/suite_test.go "should generate a unique launch template per capacity reservation"
    p = _provider(made, cr("cr-m5.large-1a-1", available=10), cr("cr-m5.large-1a-2", available=15),
                  cr("cr-m5.large-1b-1", zone="us-east-1b", available=10),
                  cr("cr-m5.xlarge-1b-1", "m5.xlarge", zone="us-east-1b", available=15))
    p.create(nodeclaim(requirements=RESERVED))
    lts = {k: v for k, v in _launch_templates(p).items()
           if v.get("CapacityReservationSpecification", {}).get("CapacityReservationTarget")}
    targets = {v["CapacityReservationSpecification"]["CapacityReservationTarget"]["CapacityReservationId"]: k
               for k, v in lts.items()}
    # not the m5.large 1a-1 offering: the zonal offering with the highest capacity is selected
    assert sorted(targets) == ["cr-m5.large-1a-2", "cr-m5.large-1b-1", "cr-m5.xlarge-1b-1"]
    assert {v["CapacityReservationSpecification"]["CapacityReservationPreference"] for v in lts.values()} == {
        "capacity-reservations-only"}
    request = p.launches["nc-1"].request
    assert len(request["LaunchTemplateConfigs"]) == 3
    where = {"cr-m5.large-1a-2": ("m5.large", "us-east-1a"), "cr-m5.large-1b-1": ("m5.large", "us-east-1b"),
             "cr-m5.xlarge-1b-1": ("m5.xlarge", "us-east-1b")}
    by_name = {name: rid for rid, name in targets.items()}
    for ltc in request["LaunchTemplateConfigs"]:
        [o] = ltc["Overrides"]
        rid = by_name[ltc["LaunchTemplateSpecification"]["LaunchTemplateName"]]
        assert (o["InstanceType"], o["AvailabilityZone"]) == where[rid]


@pytest.mark.parametrize("rtype,interruptible,market", [("default", True, "interruptible-capacity-reservation"),
                                                         ("capacity-block", False, "capacity-block")],
                         ids=["with default interruptible reservation type", "with capacity block reservation type"])
def test_market_type_for_reserved_capacity(made: list[Any], rtype: str, interruptible: bool, market: str) -> None:
    # upstream: launchtemplate/suite_test.go DescribeTable "should correctly assign the market type for reserved capacity"
    p = _provider(made, cr("cr-m5.large-1a-1", rtype=rtype, interruptible=interruptible, end=86400.0))
    p.create(nodeclaim(requirements=RESERVED))
    [data] = [v for v in _launch_templates(p).values() if "InstanceMarketOptions" in v]
    assert data["InstanceMarketOptions"]["MarketType"] == market


@pytest.mark.parametrize("enabled", [True, False], ids=["enabled", "disabled"])
def test_capacity_reservation_specification_follows_the_gate(made: list[Any], enabled: bool) -> None:
    # upstream: launchtemplate/suite_test.go DescribeTable "should set the capacity reservation specification according to the capacity reservation feature flag"
    p = _provider(made, gate=enabled)
    p.create(nodeclaim(requirements=[{"key": CT, "operator": "In", "values": ["on-demand"]}]))
    specs = [v.get("CapacityReservationSpecification") for v in _launch_templates(p).values()]
    assert specs and all(s == ({"CapacityReservationPreference": "none"} if enabled else None) for s in specs)


# -- pkg/providers/instancetype/suite_test.go Context("Capacity Blocks") + the resolver ---------
@pytest.mark.parametrize("end,available", [(86400.0, True), (40 * 60.0, False)],
                         ids=["when the capacity block is active", "when the capacity block is expiring"])
def test_offering_for_a_capacity_block(made: list[Any], end: float, available: bool) -> None:
    # upstream: instancetype/suite_test.go DescribeTable "should create an offering for a capacity block"
    p = _provider(made, cr("cr-123", "c6g.large", available=1, rtype="capacity-block", end=end, owner=SELF_OWNER))
    [o] = [o for o in _it(p, "c6g.large").offerings if o.capacity_type == "reserved"]
    assert o.zone == "us-east-1a"
    assert o.requirements.get(LABEL_CAPACITY_RESERVATION_TYPE).any() == "capacity-block"
    assert o.requirements.get(LABEL_CAPACITY_RESERVATION_ID).any() == "cr-123"
    assert (o.available, o.reservation_capacity) == (available, 1)


def test_reserved_offering_price_and_type_requirements(made: list[Any]) -> None:
    # offering/reserved_capacity_resolver.go (price = OD / 10 000 000) and types.go computeRequirements
    p = _provider(made, cr("cr-a", "m7i.large", available=3), cr("cr-b", "m7i.large", zone="us-east-1b", available=0))
    it = _it(p, "m7i.large")
    reserved = {o.reservation_id: o for o in it.offerings if o.capacity_type == "reserved"}
    od = p.pricing.on_demand_price("m7i.large")
    assert od is not None and reserved["cr-a"].price == pytest.approx(od / RESERVED_PRICE_DIVISOR)
    assert (reserved["cr-a"].available, reserved["cr-a"].reservation_capacity) == (True, 3)
    assert (reserved["cr-b"].available, reserved["cr-b"].reservation_capacity) == (False, 0)
    assert it.requirements.get(CT).has("reserved")
    assert sorted(it.requirements.get(LABEL_CAPACITY_RESERVATION_ID).values) == ["cr-a", "cr-b"]
    other = _it(p, "m7i.xlarge")
    assert not other.requirements.get(CT).has("reserved")
    assert other.requirements.get(LABEL_CAPACITY_RESERVATION_ID).operator == "DoesNotExist"


def test_gate_off_gives_no_reserved_offerings(made: list[Any]) -> None:
    # reserved_capacity_resolver.go: nothing without the ReservedCapacity gate
    p = _provider(made, cr("cr-a", "m7i.large", available=3), gate=False)
    it = _it(p, "m7i.large")
    assert [o for o in it.offerings if o.capacity_type == "reserved"] == []
    assert not it.requirements.get(CT).has("reserved")


# -- pkg/cloudprovider/suite_test.go drift ------------------------------------------------------
def test_drifts_nodeclaims_whose_capacity_reservation_left_the_nodeclass(made: list[Any]) -> None:
    # upstream: cloudprovider/suite_test.go "should dynamically drift nodeclaims for capacity reservations"
    from karpy.sim.clock import VirtualClock

    from awsprovider.apis.ec2nodeclass import CapacityReservationSelectorTerm

    clock = VirtualClock()
    p = provider([{"id": "cr-foo"}], [cr("cr-foo", available=2), cr("cr-bar", available=2)], clock=clock)
    made.append(p)
    created = p.create(nodeclaim(requirements=RESERVED))
    assert p.is_drifted(created) is None
    # the instance still runs in cr-foo, which the NodeClass no longer selects (upstream sets the
    # instance's CapacityReservationId to one outside the NodeClass status; a cancelled reservation
    # would release the instance instead -- the capacity-type controller's case)
    nc = p.nodeclasses["default"].model_copy(deep=True)
    nc.spec.capacity_reservation_selector_terms = [CapacityReservationSelectorTerm.model_validate({"id": "cr-bar"})]
    p.apply(nc)
    clock.advance(60)  # the nodeclass controller re-lists reservations every minute
    assert p.ec2.reservations.reservation_of(created.status.provider_id.rsplit("/", 1)[-1]) == "cr-foo"
    assert p.is_drifted(created) == "CapacityReservationDrift"


def test_no_drift_for_an_on_demand_instance_when_reservations_change(made: list[Any]) -> None:
    # upstream: cloudprovider/suite_test.go "should not drift when capacity reservation falls back to on-demand"
    from karpy.sim.clock import VirtualClock

    clock = VirtualClock()
    p = provider([{"id": "cr-foo"}], [cr("cr-foo", available=1)], clock=clock)
    made.append(p)
    created = p.create(nodeclaim(requirements=[{"key": CT, "operator": "In", "values": ["on-demand"]}]))
    assert created.metadata.labels[CT] == "on-demand"
    p.ec2.client.cancel_capacity_reservation(CapacityReservationId="cr-foo")
    clock.advance(60)
    assert p.resolve_nodeclass("default").capacity_reservations == ()
    assert p.is_drifted(created) is None
