"""Contract tests of the capacity reservation extension of karpy's mocked EC2
(:mod:`awsprovider.ec2.capacityreservations`): moto 5.2 has no capacity reservation API, karpy's
backend answers it on its own client only, in the shapes botocore's EC2 service model gives (the
request is validated by botocore, the answer is parsed by botocore's EC2 parser from EC2 XML).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator
from typing import Any
from unittest import mock

import boto3
import botocore.session
import pytest
from botocore.exceptions import ClientError, ParamValidationError
from moto import mock_aws

from awsprovider.ec2.backend import MockedEC2
from awsprovider.ec2.capacityreservations import CapacityReservation
from karpy.sim.clock import EPOCH

REGION = "us-east-1"
SHAPES = botocore.session.get_session().get_service_model("ec2")


@pytest.fixture
def ec2() -> Iterator[MockedEC2]:
    with MockedEC2(REGION) as backend:
        yield backend


def _create(client: Any, count: int = 2, zone: str = "us-east-1a", **extra: Any) -> dict[str, Any]:
    return dict(client.create_capacity_reservation(InstanceType="m5.large", InstancePlatform="Linux/UNIX",
                                                   AvailabilityZone=zone, InstanceCount=count, **extra)["CapacityReservation"])


def _members(shape_name: str) -> set[str]:
    return set(SHAPES.shape_for(shape_name).members)


def test_plain_moto_has_no_capacity_reservation_api() -> None:
    # why the extension exists: if moto gains DescribeCapacityReservations, revisit it
    with mock.patch.dict(os.environ, {"MOTO_EC2_LOAD_DEFAULT_AMIS": "false"}), mock_aws():
        client = boto3.session.Session(region_name=REGION, aws_access_key_id="t", aws_secret_access_key="t").client("ec2")
        with pytest.raises(Exception):  # noqa: B017 - moto raises NotImplementedError (500 in server mode)
            client.describe_capacity_reservations()


def test_create_and_describe_give_the_service_model_shapes(ec2: MockedEC2) -> None:
    made = _create(ec2.client, TagSpecifications=[{"ResourceType": "capacity-reservation",
                                                   "Tags": [{"Key": "team", "Value": "ml"}]}],
                   InstanceMatchCriteria="targeted")
    assert set(made) <= _members("CapacityReservation")
    assert made["CapacityReservationId"].startswith("cr-")
    [got] = ec2.client.describe_capacity_reservations()["CapacityReservations"]
    assert got == made
    assert (got["TotalInstanceCount"], got["AvailableInstanceCount"], got["State"], got["InstanceMatchCriteria"],
            got["ReservationType"], got["OwnerId"], got["Tags"]) == (2, 2, "active", "targeted", "default",
                                                                      ec2.account_id, [{"Key": "team", "Value": "ml"}])
    assert isinstance(got["TotalInstanceCount"], int) and isinstance(got["Interruptible"], bool)


def test_end_date_is_a_timestamp_on_the_virtual_clock(ec2: MockedEC2) -> None:
    ec2.reservations.add(CapacityReservation("cr-block1", "p5.48xlarge", "us-east-1a", 2, 2, "012345678901",
                                             reservation_type="capacity-block", end_date=3600.0))
    [got] = ec2.client.describe_capacity_reservations()["CapacityReservations"]
    assert got["EndDate"] == EPOCH + dt.timedelta(hours=1)
    assert (got["ReservationType"], got["EndDateType"]) == ("capacity-block", "limited")
    ec2.now = 3600.0
    [got] = ec2.client.describe_capacity_reservations()["CapacityReservations"]
    assert got["State"] == "expired"


def test_filters_and_unknown_ids(ec2: MockedEC2) -> None:
    a = _create(ec2.client, TagSpecifications=[{"ResourceType": "capacity-reservation",
                                                "Tags": [{"Key": "team", "Value": "ml"}]}])["CapacityReservationId"]
    b = _create(ec2.client, zone="us-east-1b", InstanceMatchCriteria="targeted")["CapacityReservationId"]

    def ids(**kw: Any) -> list[str]:
        return [r["CapacityReservationId"] for r in ec2.client.describe_capacity_reservations(**kw)["CapacityReservations"]]

    assert ids(Filters=[{"Name": "tag:team", "Values": ["ml"]}]) == [a]
    assert ids(Filters=[{"Name": "tag-key", "Values": ["team"]}]) == [a]
    assert ids(Filters=[{"Name": "instance-match-criteria", "Values": ["targeted"]}]) == [b]
    assert ids(Filters=[{"Name": "availability-zone", "Values": ["us-east-1b"]}, {"Name": "state", "Values": ["active"]}]) == [b]
    assert ids(Filters=[{"Name": "owner-id", "Values": ["999999999999"]}]) == []
    assert ids(CapacityReservationIds=[b]) == [b]
    with pytest.raises(ClientError) as err:
        ec2.client.describe_capacity_reservations(CapacityReservationIds=["cr-0123"])
    assert err.value.response["Error"]["Code"] == "InvalidCapacityReservationId.NotFound"
    ec2.client.cancel_capacity_reservation(CapacityReservationId=a)
    assert ids(Filters=[{"Name": "state", "Values": ["active"]}]) == [b]


def test_paginates_with_max_results(ec2: MockedEC2) -> None:
    for _ in range(3):
        _create(ec2.client)
    first = ec2.client.describe_capacity_reservations(MaxResults=2)
    assert len(first["CapacityReservations"]) == 2 and first["NextToken"]
    pages = list(ec2.client.get_paginator("describe_capacity_reservations").paginate(PaginationConfig={"PageSize": 2}))
    assert [len(p["CapacityReservations"]) for p in pages] == [2, 1]


def test_botocore_validates_the_request(ec2: MockedEC2) -> None:
    with pytest.raises(ParamValidationError):
        ec2.client.create_capacity_reservation(InstancePlatform="Linux/UNIX", InstanceCount=1)  # no InstanceType
    with pytest.raises(ParamValidationError):
        ec2.client.describe_capacity_reservations(MaxResults="ten")


def test_reservations_are_scoped_to_the_backend(ec2: MockedEC2) -> None:
    _create(ec2.client)
    with MockedEC2(REGION) as other:
        assert other.client.describe_capacity_reservations()["CapacityReservations"] == []
    assert len(ec2.client.describe_capacity_reservations()["CapacityReservations"]) == 1


def _reserved_fleet(ec2: MockedEC2, rid: str, lt: str, capacity_type: str = "on-demand", total: int = 1,
                    market: str | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"CapacityReservationSpecification": {
        "CapacityReservationPreference": "capacity-reservations-only",
        "CapacityReservationTarget": {"CapacityReservationId": rid}}}
    if market:
        data["InstanceMarketOptions"] = {"MarketType": market}
    ec2.create_launch_template(lt, **data)
    subnet = ec2.default_subnets()["us-east-1a"]
    return dict(ec2.client.create_fleet(
        Type="instant",
        TargetCapacitySpecification={"TotalTargetCapacity": total, "DefaultTargetCapacityType": capacity_type},
        LaunchTemplateConfigs=[{"LaunchTemplateSpecification": {"LaunchTemplateName": lt, "Version": "$Latest"},
                                "Overrides": [{"InstanceType": "m5.large", "SubnetId": subnet,
                                               "AvailabilityZone": "us-east-1a", "Priority": 1e-8}]}]))


def _available(ec2: MockedEC2, rid: str) -> int:
    [r] = ec2.client.describe_capacity_reservations(CapacityReservationIds=[rid])["CapacityReservations"]
    return int(r["AvailableInstanceCount"])


def test_fleet_launches_into_the_reservation_until_it_is_exhausted(ec2: MockedEC2) -> None:
    rid = _create(ec2.client, count=2)["CapacityReservationId"]
    out = _reserved_fleet(ec2, rid, "reserved-a", total=2)
    launched = [i for inst in out["Instances"] for i in inst["InstanceIds"]]
    assert len(launched) == 2 and not out.get("Errors")
    assert _available(ec2, rid) == 0
    assert ec2.records[-1].decisions[0].reason.startswith(f"reserved: m5.large in us-east-1a launched into capacity reservation {rid}")
    out = _reserved_fleet(ec2, rid, "reserved-b")
    assert out["Instances"] == []
    assert [e["ErrorCode"] for e in out["Errors"]] == ["ReservationCapacityExceeded"]
    ec2.client.terminate_instances(InstanceIds=launched[:1])
    assert _available(ec2, rid) == 1


def test_capacity_block_fleet_launches_although_moto_would_not(ec2: MockedEC2) -> None:
    ec2.reservations.add(CapacityReservation("cr-block1", "m5.large", "us-east-1a", 1, 1, "012345678901",
                                             reservation_type="capacity-block", end_date=86400.0))
    out = _reserved_fleet(ec2, "cr-block1", "block", capacity_type="capacity-block", market="capacity-block")
    assert len(out["Instances"]) == 1 and len(out["Instances"][0]["InstanceIds"]) == 1
    assert ec2.records[-1].sent["TargetCapacitySpecification"]["DefaultTargetCapacityType"] == "on-demand"
    assert _available(ec2, "cr-block1") == 0


def test_restore_gives_a_reused_backend_its_reservations_as_added(ec2: MockedEC2) -> None:
    # AWSCloudProvider.with_scenario re-uses a running backend for another run
    rid = _create(ec2.client, count=1)["CapacityReservationId"]
    _reserved_fleet(ec2, rid, "reserved-r")
    assert _available(ec2, rid) == 0
    ec2.reservations.restore()
    assert _available(ec2, rid) == 1


def test_error_text_is_escaped(ec2: MockedEC2) -> None:
    with pytest.raises(ClientError) as err:
        ec2.client.describe_capacity_reservations(CapacityReservationIds=["cr-<&>"])
    assert err.value.response["Error"]["Message"] == "The capacity reservation ID 'cr-<&>' does not exist"


# -- state over virtual time, cancellation, billing (issue #12) ---------------------------------------

def _state(ec2: MockedEC2, rid: str) -> str:
    [got] = ec2.client.describe_capacity_reservations(CapacityReservationIds=[rid])["CapacityReservations"]
    return str(got["State"])


def test_a_future_dated_reservation_is_scheduled_until_its_start_date(ec2: MockedEC2) -> None:
    got = _create(ec2.client, count=1, StartDate=EPOCH + dt.timedelta(hours=1),
                  EndDateType="limited", EndDate=EPOCH + dt.timedelta(hours=3))
    rid = got["CapacityReservationId"]
    assert (got["State"], got["StartDate"]) == ("scheduled", EPOCH + dt.timedelta(hours=1))
    active = ec2.client.describe_capacity_reservations(Filters=[{"Name": "state", "Values": ["active"]}])
    assert active["CapacityReservations"] == []  # Karpenter lists state=active only: not offered yet
    assert ec2.reservations.launchable(rid, "m5.large", "us-east-1a", 0.0) == "ReservationCapacityExceeded"
    ec2.now = 3600.0
    assert _state(ec2, rid) == "active"
    assert ec2.reservations.next_transition(3600.0) == 3 * 3600.0
    ec2.now = 3 * 3600.0
    assert _state(ec2, rid) == "expired"
    assert ec2.reservations.next_transition(3 * 3600.0) is None


def test_cancel_ends_an_odcr_and_its_instances_run_on_as_on_demand(ec2: MockedEC2) -> None:
    rid = _create(ec2.client, count=2)["CapacityReservationId"]
    out = _reserved_fleet(ec2, rid, "reserved-c", total=1)
    [iid] = [i for inst in out["Instances"] for i in inst["InstanceIds"]]
    assert ec2.reservations.reservation_of(iid) == rid
    ec2.now = 600.0
    assert ec2.client.cancel_capacity_reservation(CapacityReservationId=rid)["Return"] is True
    assert _state(ec2, rid) == "cancelled"
    assert ec2.reservations.reservation_of(iid) is None  # DescribeInstances: no CapacityReservationId now
    ec2.client.terminate_instances(InstanceIds=[iid])
    assert _available(ec2, rid) == 1  # nothing given back to a cancelled reservation
    with pytest.raises(ClientError, match="InvalidCapacityReservationId.NotFound"):
        ec2.client.cancel_capacity_reservation(CapacityReservationId="cr-0000000000000dead")


def test_an_expired_odcr_releases_its_instances(ec2: MockedEC2) -> None:
    rid = _create(ec2.client, count=1, EndDateType="limited", EndDate=EPOCH + dt.timedelta(hours=1))["CapacityReservationId"]
    out = _reserved_fleet(ec2, rid, "reserved-e", total=1)
    [iid] = [i for inst in out["Instances"] for i in inst["InstanceIds"]]
    ec2.now = 3599.0
    assert ec2.reservations.reservation_of(iid) == rid
    ec2.now = 3600.0
    assert ec2.reservations.reservation_of(iid) is None


def test_a_capacity_block_cannot_be_cancelled_and_ec2_terminates_it_30_minutes_before_its_end(ec2: MockedEC2) -> None:
    ec2.reservations.add(CapacityReservation("cr-block2", "m5.large", "us-east-1a", 1, 1, "012345678901",
                                             reservation_type="capacity-block", end_date=7200.0))
    with pytest.raises(ClientError, match="UnsupportedOperation"):
        ec2.client.cancel_capacity_reservation(CapacityReservationId="cr-block2")
    out = _reserved_fleet(ec2, "cr-block2", "block2", capacity_type="capacity-block", market="capacity-block")
    [iid] = [i for inst in out["Instances"] for i in inst["InstanceIds"]]
    # EC2 User Guide, "Monitor Capacity Blocks using EventBridge": warning 40 min before the end,
    # instances begin to terminate 10 minutes later
    assert ec2.reservations.capacity_block_instances() == [(iid, "cr-block2", 7200.0 - 1800.0)]


def test_bill_charges_an_odcr_at_the_on_demand_rate_used_or_not(ec2: MockedEC2) -> None:
    # EC2 User Guide, "Capacity Reservation pricing and billing": a reservation for 20 m4.large,
    # 15 running -> 15 active instances and 5 unused instances billed; an instance in it is not
    # billed again (Karpenter prices it at on-demand / 10^7)
    ec2.reservations.add(CapacityReservation("cr-docs", "m4.large", "us-east-1a", 20, 20, "012345678901"))
    ec2.reservations.bind([f"i-{n:017x}" for n in range(15)], "cr-docs")
    [row] = ec2.reservations.bill(0.0, 5 * 3600.0, lambda t: 0.10)
    assert (row["billing"], row["billed_hours"], row["instance_hours"]) == ("on-demand-rate", 5.0, 100.0)
    assert row["used_instance_hours"] == pytest.approx(75.0) and row["unused_instance_hours"] == pytest.approx(25.0)
    assert row["dollars"] == pytest.approx(10.0) and row["unused_dollars"] == pytest.approx(2.5)
    assert row["modelled"] is False


def test_bill_counts_what_was_not_available_at_the_start_as_used(ec2: MockedEC2) -> None:
    ec2.reservations.add(CapacityReservation("cr-held", "m4.large", "us-east-1a", 4, 3, "012345678901"))
    [row] = ec2.reservations.bill(0.0, 3600.0, lambda t: 0.10)
    assert (row["used_instance_hours"], row["unused_instance_hours"]) == (1.0, 3.0)


def test_bill_of_a_cancelled_odcr_stops_at_the_cancellation(ec2: MockedEC2) -> None:
    rid = _create(ec2.client, count=2)["CapacityReservationId"]
    ec2.now = 1800.0
    ec2.client.cancel_capacity_reservation(CapacityReservationId=rid)
    [row] = ec2.reservations.bill(0.0, 7200.0, lambda t: 1.0)
    assert (row["billed_from"], row["billed_to"], row["dollars"]) == (0.0, 1800.0, 1.0)


def test_bill_of_a_capacity_block_is_its_upfront_fee_or_modelled_at_on_demand(ec2: MockedEC2) -> None:
    ec2.reservations.add(CapacityReservation("cr-fee", "m5.large", "us-east-1a", 2, 2, "012345678901",
                                             reservation_type="capacity-block", start_date=0.0, end_date=4 * 3600.0,
                                             upfront_fee=31.0))
    ec2.reservations.add(CapacityReservation("cr-nofee", "m5.large", "us-east-1a", 1, 1, "012345678901",
                                             reservation_type="capacity-block", start_date=0.0, end_date=2 * 3600.0))
    fee, nofee = ec2.reservations.bill(0.0, 3600.0, lambda t: 0.5)
    # paid up front for the whole block, whatever the run's length; nothing ran in them
    assert (fee["billing"], fee["dollars"], fee["unused_dollars"], fee["modelled"]) == ("upfront", 31.0, 31.0, False)
    assert (nofee["dollars"], nofee["modelled"], nofee["billed_hours"]) == (1.0, True, 2.0)


def test_reclaim_shrinks_an_interruptible_reservation_by_its_instances(ec2: MockedEC2) -> None:
    rid = _create(ec2.client, count=3)["CapacityReservationId"]
    out = _reserved_fleet(ec2, rid, "reserved-i", total=2)
    ids = [i for inst in out["Instances"] for i in inst["InstanceIds"]]
    assert sorted(ec2.reservations.reclaim(rid)) == sorted(ids)
    assert ec2.reservations.reservations[rid].total_instance_count == 1
    ec2.client.terminate_instances(InstanceIds=ids)
    assert _available(ec2, rid) == 1  # the reclaimed capacity does not come back
