"""Contract tests: every moto (5.2.x) behaviour the mocked EC2 relies on, against plain moto.

If one of these fails after a moto upgrade, the fleet hooks in awsprovider/ec2/backend.py (which
rely on "given one override, moto launches exactly it") must be revisited.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any
from unittest import mock

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from awsprovider.ec2.catalog import INSTANCE_TYPE_FILTERS

REGION = "us-east-1"


@pytest.fixture(scope="module")
def ec2() -> Iterator[Any]:
    with mock.patch.dict(os.environ, {"MOTO_EC2_LOAD_DEFAULT_AMIS": "false"}), mock_aws():
        client = boto3.session.Session(
            region_name=REGION, aws_access_key_id="testing", aws_secret_access_key="testing"
        ).client("ec2")
        client.create_launch_template(LaunchTemplateName="contract", LaunchTemplateData={"ImageId": "ami-12c6146b"})
        yield client


@pytest.fixture(scope="module")
def subnets(ec2: Any) -> dict[str, str]:
    rows = ec2.describe_subnets(Filters=[{"Name": "default-for-az", "Values": ["true"]}])["Subnets"]
    return {s["AvailabilityZone"]: s["SubnetId"] for s in rows}


@pytest.fixture(scope="module")
def instance_types(ec2: Any) -> dict[str, Any]:
    pages = list(ec2.get_paginator("describe_instance_types").paginate(Filters=[dict(f) for f in INSTANCE_TYPE_FILTERS], MaxResults=100))
    return {"pages": len(pages), "types": {t["InstanceType"]: t for p in pages for t in p["InstanceTypes"]}}


def fleet(overrides: list[dict[str, Any]], capacity_type: str = "on-demand", total: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "Type": "instant",
        "TargetCapacitySpecification": {"TotalTargetCapacity": total, "DefaultTargetCapacityType": capacity_type},
        "LaunchTemplateConfigs": [{"LaunchTemplateSpecification": {"LaunchTemplateName": "contract", "Version": "$Latest"}, "Overrides": overrides}],
        **extra,
    }


def describe(ec2: Any, ids: list[str]) -> list[dict[str, Any]]:
    return [i for r in ec2.describe_instances(InstanceIds=ids)["Reservations"] for i in r["Instances"]]


def test_single_override_is_launched_in_its_subnet_and_zone(ec2: Any, subnets: dict[str, str]) -> None:
    ovr = {"InstanceType": "m8i.xlarge", "SubnetId": subnets["us-east-1c"], "AvailabilityZone": "us-east-1c", "ImageId": "ami-12c6146b", "Priority": 0.2}
    out = ec2.create_fleet(**fleet([ovr]))
    (entry,) = out["Instances"]
    assert entry["InstanceType"] == "m8i.xlarge"
    (inst,) = describe(ec2, entry["InstanceIds"])
    assert inst["InstanceType"] == "m8i.xlarge"
    assert inst["SubnetId"] == subnets["us-east-1c"]
    assert inst["Placement"]["AvailabilityZone"] == "us-east-1c"
    assert inst["ImageId"] == "ami-12c6146b"


def test_launch_template_and_overrides_echoed(ec2: Any, subnets: dict[str, str]) -> None:
    ovr = {"InstanceType": "c8i.large", "SubnetId": subnets["us-east-1a"], "AvailabilityZone": "us-east-1a", "Priority": 0.09371}
    out = ec2.create_fleet(**fleet([ovr]))
    lto = out["Instances"][0]["LaunchTemplateAndOverrides"]
    assert lto["Overrides"] == ovr
    assert lto["LaunchTemplateSpecification"]["LaunchTemplateName"] == "contract"
    assert lto["LaunchTemplateSpecification"]["LaunchTemplateId"].startswith("lt-")
    assert out["Instances"][0]["Lifecycle"] == "on-demand"
    assert "Errors" not in out or out["Errors"] == []  # moto never reports errors itself


def test_moto_ignores_strategy_and_launches_first_override(ec2: Any, subnets: dict[str, str]) -> None:
    """Why the fleet model exists: moto picks the first override whatever the strategy says."""
    ovrs = [
        {"InstanceType": "m8i.24xlarge", "SubnetId": subnets["us-east-1a"], "AvailabilityZone": "us-east-1a", "Priority": 5.0},
        {"InstanceType": "c8i.large", "SubnetId": subnets["us-east-1a"], "AvailabilityZone": "us-east-1a", "Priority": 1.0},
    ]
    out = ec2.create_fleet(**fleet(ovrs, OnDemandOptions={"AllocationStrategy": "lowest-price"}))
    assert out["Instances"][0]["InstanceType"] == "m8i.24xlarge"


def test_instance_tags_applied(ec2: Any, subnets: dict[str, str]) -> None:
    tags = [{"Key": "karpenter.sh/nodepool", "Value": "default"}, {"Key": "Name", "Value": "n1"}]
    out = ec2.create_fleet(
        **fleet(
            [{"InstanceType": "c7i.large", "SubnetId": subnets["us-east-1b"], "AvailabilityZone": "us-east-1b"}],
            TagSpecifications=[{"ResourceType": "instance", "Tags": tags}, {"ResourceType": "fleet", "Tags": tags}],
        )
    )
    (inst,) = describe(ec2, out["Instances"][0]["InstanceIds"])
    assert {t["Key"]: t["Value"] for t in inst["Tags"]} == {"karpenter.sh/nodepool": "default", "Name": "n1"}


def test_dry_run_raises_dry_run_operation(ec2: Any, subnets: dict[str, str]) -> None:
    with pytest.raises(ClientError) as exc:
        ec2.create_fleet(**fleet([{"InstanceType": "c7i.large", "SubnetId": subnets["us-east-1a"]}], DryRun=True))
    assert exc.value.response["Error"]["Code"] == "DryRunOperation"


def test_total_target_capacity_launches_n_of_the_single_override(ec2: Any, subnets: dict[str, str]) -> None:
    out = ec2.create_fleet(**fleet([{"InstanceType": "r8i.large", "SubnetId": subnets["us-east-1d"], "AvailabilityZone": "us-east-1d"}], total=3))
    ids = [i for e in out["Instances"] for i in e["InstanceIds"]]
    assert len(ids) == 3
    assert {i["InstanceType"] for i in describe(ec2, ids)} == {"r8i.large"}


def test_spot_fleet_instance_lifecycle(ec2: Any, subnets: dict[str, str]) -> None:
    out = ec2.create_fleet(
        **fleet([{"InstanceType": "c7i.large", "SubnetId": subnets["us-east-1a"], "AvailabilityZone": "us-east-1a"}], capacity_type="spot",
                SpotOptions={"AllocationStrategy": "price-capacity-optimized"})
    )
    assert out["Instances"][0]["Lifecycle"] == "spot"
    (inst,) = describe(ec2, out["Instances"][0]["InstanceIds"])
    assert inst["InstanceLifecycle"] == "spot"


def test_describe_instance_types_filters_pagination_and_fields(instance_types: dict[str, Any]) -> None:
    types = instance_types["types"]
    assert instance_types["pages"] >= 1  # moto returns one page; the paginator must still work
    assert len(types) > 1000
    for info in types.values():
        assert "hvm" in info["SupportedVirtualizationTypes"]
        assert set(info["ProcessorInfo"]["SupportedArchitectures"]) & {"x86_64", "arm64"}
    c7i = types["c7i.large"]
    assert c7i["VCpuInfo"]["DefaultVCpus"] == 2
    assert c7i["MemoryInfo"]["SizeInMiB"] == 4096
    assert c7i["NetworkInfo"]["MaximumNetworkInterfaces"] >= 2
    assert c7i["NetworkInfo"]["Ipv4AddressesPerInterface"] >= 10
    assert c7i["ProcessorInfo"]["SupportedArchitectures"] == ["x86_64"]
    assert c7i["Hypervisor"] == "nitro"
    assert "EbsInfo" in c7i
    assert "GpuInfo" in types["g6e.xlarge"] and types["g6e.xlarge"]["GpuInfo"]["Gpus"][0]["Count"] >= 1
    assert "InstanceStorageInfo" in types["m7gd.large"]
    assert types["m8g.large"]["ProcessorInfo"]["SupportedArchitectures"] == ["arm64"]


def test_generation_families_present_in_us_east_1(instance_types: dict[str, Any]) -> None:
    types = instance_types["types"]
    for family in ("c7i", "c8i", "m7i", "m8i", "r7i", "r8i"):
        assert f"{family}.large" in types, family
        assert sum(1 for t in types if t.startswith(f"{family}.")) >= 10, family


def test_describe_instance_type_offerings_by_zone(ec2: Any) -> None:
    rows = [r for p in ec2.get_paginator("describe_instance_type_offerings").paginate(LocationType="availability-zone", MaxResults=1000) for r in p["InstanceTypeOfferings"]]
    assert all(r["LocationType"] == "availability-zone" for r in rows)
    zones = {r["Location"] for r in rows}
    assert {"us-east-1a", "us-east-1b", "us-east-1c"} <= zones
    c8i = {r["Location"] for r in rows if r["InstanceType"] == "c8i.large"}
    assert "us-east-1a" in c8i and c8i < zones  # offered in some zones, not all


def test_create_launch_template_and_latest_resolution(ec2: Any) -> None:
    lt = ec2.create_launch_template(
        LaunchTemplateName="contract-2",
        LaunchTemplateData={"ImageId": "ami-12c6146b", "UserData": "ZWNobw=="},
        TagSpecifications=[{"ResourceType": "launch-template", "Tags": [{"Key": "karpenter.k8s.aws/cluster", "Value": "c"}]}],
    )["LaunchTemplate"]
    assert lt["LaunchTemplateName"] == "contract-2" and lt["LatestVersionNumber"] == 1
    found = ec2.describe_launch_templates(Filters=[{"Name": "tag-key", "Values": ["karpenter.k8s.aws/cluster"]}])["LaunchTemplates"]
    assert [t["LaunchTemplateName"] for t in found] == ["contract-2"]
    with pytest.raises(ClientError) as exc:
        ec2.describe_launch_templates(LaunchTemplateNames=["missing"])
    assert "NotFound" in exc.value.response["Error"]["Code"]


def test_default_network_has_one_default_subnet_per_zone(ec2: Any, subnets: dict[str, str]) -> None:
    zones = sorted(z["ZoneName"] for z in ec2.describe_availability_zones()["AvailabilityZones"])
    assert sorted(subnets) == zones


# -- the private moto surface the scoped backend (awsprovider/ec2/backend.py) relies on ---------

def test_moto_stubber_is_a_builtin_before_send_handler_and_answers_only_when_mocking() -> None:
    from botocore.handlers import BUILTIN_HANDLERS
    from moto.core.models import MockAWS, botocore_stubber

    assert ("before-send", botocore_stubber) in BUILTIN_HANDLERS
    assert botocore_stubber.enabled == (MockAWS._nested_count > 0)


def test_account_header_routes_a_request_to_that_account() -> None:
    from moto.core.base_backend import BackendDict, backend_lock
    from moto.ec2.models import ec2_backends

    from awsprovider.ec2.backend import MockedEC2

    with MockedEC2() as ec2:
        account = ec2.account_id
        vpcs = {v["VpcId"] for v in ec2.client.describe_vpcs()["Vpcs"]}
        # the default VPC moto created lives in karpy's account, not in moto's default one
        assert vpcs == set(ec2_backends[account][REGION].vpcs)
        assert any(account in b for b in BackendDict._instances)
    assert backend_lock is not None and account not in ec2_backends


def test_ami_backend_loads_defaults_through_load_amis() -> None:
    from moto.ec2.models import EC2Backend
    from moto.ec2.models.amis import AmiBackend

    assert "_load_amis" in AmiBackend.__dict__ and issubclass(EC2Backend, AmiBackend)


def test_ec2_urls_dispatch_to_ec2_response() -> None:
    from moto.ec2.responses import EC2Response
    from moto.ec2.urls import url_paths

    assert list(url_paths.values()) == [EC2Response.dispatch]


def test_the_process_wide_places_that_hold_a_backends_objects() -> None:
    """What _empty_account_backend empties (awsprovider/ec2/backend.py): moto's per-class
    instance trackers listed in model_data, the lru_cache of AccountSpecificBackend's regions and
    the cache of a subnet's IP iterator (keyed by the subnet)."""
    from moto.core.base_backend import AccountSpecificBackend, InstanceTrackerMeta
    from moto.core.model_instances import model_data
    from moto.ec2.models.subnets import Subnet
    from moto.ec2.models.vpcs import VPC

    assert isinstance(VPC, InstanceTrackerMeta) and isinstance(VPC.instances_tracked, list)
    assert model_data["ec2"]["VPC"] is VPC
    assert hasattr(AccountSpecificBackend._generate_regions, "cache_info")
    assert hasattr(Subnet._base_avail_ip_iterator, "cache_info")


def test_what_forget_gives_back_to_a_subnet(ec2: Any, subnets: dict[str, str]) -> None:
    """awsprovider.ec2.retention.forget gives a forgotten instance's addresses back as moto's own
    ``Instance.__del__`` does: ``instance._private_ips`` (its addresses), ``backend.get_subnet`` and
    ``Subnet.del_subnet_ip`` (the subnet's table ``_subnet_ips`` holds the instance until then)."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.ec2.models import ec2_backends

    ovr = {"InstanceType": "m5.large", "SubnetId": subnets["us-east-1a"], "AvailabilityZone": "us-east-1a"}
    (iid,) = ec2.create_fleet(**fleet([ovr]))["Instances"][0]["InstanceIds"]
    backend = ec2_backends[DEFAULT_ACCOUNT_ID][REGION]
    (instance,) = [i for r in backend.reservations.values() for i in r.instances if i.id == iid]
    subnet = backend.get_subnet(instance.subnet_id)
    (address,) = instance._private_ips
    assert subnet._subnet_ips[address] is instance
    subnet.del_subnet_ip(address)
    assert address not in subnet._subnet_ips
    ec2.terminate_instances(InstanceIds=[iid])


def test_botocores_handler_trie_the_client_pool_reads() -> None:
    """awsprovider.ec2.backend._handler_table walks a client's ``meta.events._emitter``:
    ``_handlers._root`` (nodes of ``chunk``/``children``/``values``, values a NodeList of
    first/middle/last) and ``_unique_id_handlers`` ({id: {"handler", "count"?}}). A registered
    handler must show in the table and an unregistered one leave it as it was."""
    from awsprovider.ec2.backend import _handler_table

    client = boto3.session.Session(region_name=REGION, aws_access_key_id="testing",
                                   aws_secret_access_key="testing").client("ec2")
    emitter = client.meta.events._emitter
    assert set(emitter._handlers._root) == {"chunk", "children", "values"}
    built = _handler_table(client)
    assert built[0]  # botocore's own per-client handlers are in it

    def hook(**_: Any) -> None:
        return None

    for kwargs in ({}, {"unique_id": "karpy-contract"}):
        client.meta.events.register_first("before-call.ec2.DescribeVpcs", hook, **kwargs)
        assert _handler_table(client) != built
        client.meta.events.unregister("before-call.ec2.DescribeVpcs", hook, **kwargs)
        assert _handler_table(client) == built
