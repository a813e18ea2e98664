"""EC2 forgets a terminated instance about an hour after it terminated (awsprovider/ec2/retention.py):
before the hour DescribeInstances shows it terminated, after it answers InvalidInstanceID.NotFound,
and moto's backend no longer holds it, its network interfaces, its tags or its emptied fleet -- while
a running instance, and one terminated later, stay. End to end, a long run with churn keeps moto's
backend at the live cluster and its document is the one of the walk over every instance."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from awsprovider.ec2.backend import MockedEC2
from awsprovider.ec2.retention import TERMINATED_VISIBLE_FOR

REGION = "us-east-1"


@pytest.fixture
def ec2() -> Iterator[tuple[MockedEC2, list[float]]]:
    now = [0.0]
    with MockedEC2(REGION, clock=lambda: now[0]) as backend:
        backend.create_launch_template("retention")
        yield backend, now


def _launch(ec2: MockedEC2) -> str:
    subnet = ec2.default_subnets()["us-east-1a"]
    out = ec2.client.create_fleet(
        Type="instant", TargetCapacitySpecification={"TotalTargetCapacity": 1, "DefaultTargetCapacityType": "on-demand"},
        LaunchTemplateConfigs=[{"LaunchTemplateSpecification": {"LaunchTemplateName": "retention", "Version": "$Latest"},
                                "Overrides": [{"InstanceType": "m5.large", "SubnetId": subnet,
                                               "AvailabilityZone": "us-east-1a"}]}])
    (instance_id,) = [i for inst in out["Instances"] for i in inst["InstanceIds"]]
    ec2.client.create_tags(Resources=[instance_id], Tags=[{"Key": "karpenter.sh/nodepool", "Value": "default"}])
    return str(instance_id)


def _state(ec2: MockedEC2, instance_id: str) -> str:
    try:
        res = ec2.client.describe_instances(InstanceIds=[instance_id])["Reservations"]
    except ClientError as err:
        return str(err.response["Error"]["Code"])
    return str(res[0]["Instances"][0]["State"]["Name"])


def _moto(ec2: MockedEC2) -> Any:
    from moto.ec2.models import ec2_backends

    return ec2_backends[ec2.account_id][REGION]


def test_a_terminated_instance_is_described_for_an_hour_then_forgotten(ec2: tuple[MockedEC2, list[float]]) -> None:
    backend, now = ec2
    early, late, running = _launch(backend), _launch(backend), _launch(backend)
    backend.client.terminate_instances(InstanceIds=[early])
    now[0] = 600.0
    backend.client.terminate_instances(InstanceIds=[late])
    now[0] = TERMINATED_VISIBLE_FOR - 1
    assert [_state(backend, i) for i in (early, late, running)] == ["terminated", "terminated", "running"]
    moto = _moto(backend)
    held = {i.id for r in moto.reservations.values() for i in r.instances}
    assert held == {early, late, running} and len(moto.fleets) == 3
    now[0] = TERMINATED_VISIBLE_FOR
    assert [_state(backend, i) for i in (early, late, running)] == ["InvalidInstanceID.NotFound", "terminated", "running"]
    held = {i.id for r in moto.reservations.values() for i in r.instances}
    assert held == {late, running} and len(moto.fleets) == 2
    assert early not in moto.tags and running in moto.tags
    assert not [e for e in moto.enis.values() if getattr(getattr(e, "instance", None), "id", None) == early]
    now[0] = 600.0 + TERMINATED_VISIBLE_FOR
    assert [_state(backend, i) for i in (late, running)] == ["InvalidInstanceID.NotFound", "running"]
    described = [i["InstanceId"] for r in backend.client.describe_instances()["Reservations"] for i in r["Instances"]]
    assert described == [running]


def test_a_long_run_keeps_the_backend_at_the_live_cluster() -> None:
    import karpy
    from karpy.cli import bundled_example

    seen: list[tuple[int, int]] = []

    def progress(t: float, passes: int, claims: int) -> None:
        from moto.ec2.models import ec2_backends

        for regions in list(ec2_backends.values()):
            for be in list(regions.values()):
                if getattr(be, "reservations", None):
                    seen.append((len(be.reservations), claims))

    events = [f"{k * 60}m scale deployment/web {6 if k % 2 else 9}" for k in range(1, 48)]
    result = karpy.simulate(bundled_example(), until="48h", events=events, progress=progress)
    launched = len(result.simulation.launches)
    assert launched >= 20, launched  # the churn: a node launched and consolidated away most hours
    # the run's instances, less those terminated over an hour ago: a handful, not every launch
    assert max(r for r, _ in seen[len(seen) // 2:]) <= 4, seen[-5:]


def test_a_forgotten_instance_gives_its_address_back_to_the_subnet(ec2: tuple[MockedEC2, list[float]]) -> None:
    """A /28 has 11 usable addresses: 30 launches, each terminated and forgotten an hour later, all
    succeed and the subnet ends with its 11 addresses free. moto frees an address only in
    Instance.__del__, which never ran (the subnet's own table holds the instance): a subnet ran out
    after its size in launches -- a year of hourly churn then failed every launch."""
    backend, now = ec2
    vpc = backend.client.create_vpc(CidrBlock="10.77.0.0/24")["Vpc"]["VpcId"]
    subnet = backend.client.create_subnet(VpcId=vpc, CidrBlock="10.77.0.0/28", AvailabilityZone="us-east-1a")
    subnet_id = subnet["Subnet"]["SubnetId"]
    assert subnet["Subnet"]["AvailableIpAddressCount"] == 11
    for k in range(30):
        out = backend.client.create_fleet(
            Type="instant",
            TargetCapacitySpecification={"TotalTargetCapacity": 1, "DefaultTargetCapacityType": "on-demand"},
            LaunchTemplateConfigs=[{"LaunchTemplateSpecification": {"LaunchTemplateName": "retention",
                                                                    "Version": "$Latest"},
                                    "Overrides": [{"InstanceType": "m5.large", "SubnetId": subnet_id,
                                                   "AvailabilityZone": "us-east-1a"}]}])
        ids = [i for inst in out["Instances"] for i in inst["InstanceIds"]]
        assert len(ids) == 1 and not out.get("Errors"), (k, out.get("Errors"))
        backend.client.terminate_instances(InstanceIds=ids)
        now[0] += TERMINATED_VISIBLE_FOR  # forgotten at the next request
        assert _state(backend, ids[0]) == "InvalidInstanceID.NotFound"
    (described,) = backend.client.describe_subnets(SubnetIds=[subnet_id])["Subnets"]
    assert described["AvailableIpAddressCount"] == 11
    assert not _moto(backend).get_subnet(subnet_id)._subnet_ips  # no address held for a forgotten instance
