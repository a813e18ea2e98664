"""Tests for awsprovider.ec2.backend (moto + the fleet hooks) and awsprovider.ec2.catalog."""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from awsprovider.ec2.backend import MockedEC2
from awsprovider.ec2.capacity import ICE_ERROR_CODE
from awsprovider.ec2.catalog import InstanceTypeCatalog

OD = {"c7i.large": 0.08925, "c8i.large": 0.09371, "m7i.large": 0.1008, "m8i.large": 0.10584, "r7i.large": 0.1323, "r8i.large": 0.13892}
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")


class Book:
    """In-test price book: spot = 35% of on-demand, cheaper in later zones."""

    def on_demand_price(self, instance_type: str) -> float | None:
        return OD.get(instance_type)

    def spot_price(self, instance_type: str, zone: str) -> float | None:
        od = OD.get(instance_type)
        return None if od is None else round(od * 0.35 - 0.001 * (ord(zone[-1]) - ord("a")), 6)


def launch_one(seed: int) -> list[str]:
    with MockedEC2(price_book=Book(), seed=seed) as ec2:
        ec2.create_launch_template("karpy-lt")
        subnets = ec2.default_subnets()
        out = ec2.client.create_fleet(**params(subnets, ["c7i.large"], ("us-east-1a",)))
        return [out["Instances"][0]["InstanceIds"][0], subnets["us-east-1a"]]


def test_seeded_ids_are_deterministic() -> None:
    # Runs before the module fixture starts moto (nested mocks share state, see MockedEC2).
    assert launch_one(7) == launch_one(7)
    assert launch_one(7) != launch_one(8)


def params(
    subnets: dict[str, str],
    types: list[str],
    zones: tuple[str, ...] = ZONES,
    capacity_type: str = "on-demand",
    strategy: str = "lowest-price",
    total: int = 1,
    priority: bool = True,
) -> dict[str, Any]:
    ovs = []
    for t in types:
        for z in zones:
            o: dict[str, Any] = {"InstanceType": t, "SubnetId": subnets[z], "AvailabilityZone": z, "ImageId": "ami-12c6146b"}
            if priority:
                o["Priority"] = OD[t]
            ovs.append(o)
    p: dict[str, Any] = {
        "Type": "instant",
        "TargetCapacitySpecification": {"TotalTargetCapacity": total, "DefaultTargetCapacityType": capacity_type},
        "LaunchTemplateConfigs": [{"LaunchTemplateSpecification": {"LaunchTemplateName": "karpy-lt", "Version": "$Latest"}, "Overrides": ovs}],
        "TagSpecifications": [{"ResourceType": "instance", "Tags": [{"Key": "karpenter.sh/nodepool", "Value": "default"}]}],
    }
    p["SpotOptions" if capacity_type == "spot" else "OnDemandOptions"] = {"AllocationStrategy": strategy}
    return p


@pytest.fixture(scope="module")
def backend() -> Iterator[MockedEC2]:
    with MockedEC2(price_book=Book()) as ec2:
        ec2.create_launch_template("karpy-lt")
        yield ec2


@pytest.fixture
def ec2(backend: MockedEC2) -> MockedEC2:
    backend.capacity.clear()
    backend.now = 0.0
    return backend


@pytest.fixture(scope="module")
def subnets(backend: MockedEC2) -> dict[str, str]:
    return backend.default_subnets()


def instances(ec2: MockedEC2, out: dict[str, Any]) -> list[dict[str, Any]]:
    ids = [i for e in out["Instances"] for i in e["InstanceIds"]]
    if not ids:
        return []
    return [i for r in ec2.client.describe_instances(InstanceIds=ids)["Reservations"] for i in r["Instances"]]


def all_instance_count(ec2: MockedEC2) -> int:
    return sum(len(r["Instances"]) for p in ec2.client.get_paginator("describe_instances").paginate() for r in p["Reservations"])


def test_lowest_price_launches_cheapest_not_first(ec2: MockedEC2, subnets: dict[str, str]) -> None:
    p = params(subnets, ["m8i.large", "c8i.large", "c7i.large"])
    before = copy.deepcopy(p)
    out = ec2.client.create_fleet(**p)
    (inst,) = instances(ec2, out)
    assert inst["InstanceType"] == "c7i.large"
    assert inst["Placement"]["AvailabilityZone"] == "us-east-1a"
    assert inst["SubnetId"] == subnets["us-east-1a"]
    assert {t["Key"]: t["Value"] for t in inst["Tags"]} == {"karpenter.sh/nodepool": "default"}
    assert out["Instances"][0]["LaunchTemplateAndOverrides"]["Overrides"]["InstanceType"] == "c7i.large"
    assert "Errors" not in out or out["Errors"] == []
    assert p == before  # the caller's request is not modified
    rec = ec2.records[-1]
    assert rec.request == before
    assert len(rec.sent["LaunchTemplateConfigs"][0]["Overrides"]) == 1  # type: ignore[index]
    assert rec.modelled and rec.decisions[0].chosen is not None
    assert rec.decisions[0].reason.startswith("lowest-price: c7i.large at $0.08925 in us-east-1a is the cheapest of 9 launchable overrides")
    assert rec.response is not None and rec.response["Instances"][0]["InstanceIds"] == out["Instances"][0]["InstanceIds"]


def test_prioritized(ec2: MockedEC2, subnets: dict[str, str]) -> None:
    p = params(subnets, ["c7i.large", "r8i.large"], ("us-east-1b",), strategy="prioritized")
    p["LaunchTemplateConfigs"][0]["Overrides"][1]["Priority"] = 0.0
    (inst,) = instances(ec2, ec2.client.create_fleet(**p))
    assert inst["InstanceType"] == "r8i.large"


def test_spot_pco_uses_zone_prices(ec2: MockedEC2, subnets: dict[str, str]) -> None:
    out = ec2.client.create_fleet(**params(subnets, ["m8i.large", "c7i.large"], capacity_type="spot", strategy="price-capacity-optimized"))
    (inst,) = instances(ec2, out)
    assert (inst["InstanceType"], inst["Placement"]["AvailabilityZone"]) == ("c7i.large", "us-east-1c")
    assert out["Instances"][0]["Lifecycle"] == "spot"
    assert ec2.records[-1].decisions[0].capacity_type == "spot"


def test_ice_fallback_returns_instance_and_errors(ec2: MockedEC2, subnets: dict[str, str]) -> None:
    ec2.add_unavailable("c7i.*:*:on-demand")
    out = ec2.client.create_fleet(**params(subnets, ["c7i.large", "c8i.large"]))
    (inst,) = instances(ec2, out)
    assert (inst["InstanceType"], inst["Placement"]["AvailabilityZone"]) == ("c8i.large", "us-east-1a")
    assert [e["ErrorCode"] for e in out["Errors"]] == [ICE_ERROR_CODE] * 3
    assert [e["LaunchTemplateAndOverrides"]["Overrides"]["AvailabilityZone"] for e in out["Errors"]] == list(ZONES)
    assert all(e["Lifecycle"] == "on-demand" for e in out["Errors"])
    assert ec2.records[-1].response["Errors"] == out["Errors"]  # type: ignore[index]


def test_all_iced_short_circuits_without_launching(ec2: MockedEC2, subnets: dict[str, str]) -> None:
    ec2.add_unavailable("*:*:on-demand")
    n = all_instance_count(ec2)
    out = ec2.client.create_fleet(**params(subnets, ["c7i.large", "c8i.large"]))
    assert out["Instances"] == []
    assert len(out["Errors"]) == 6
    assert out["FleetId"].startswith("fleet-")
    assert all_instance_count(ec2) == n
    assert ec2.records[-1].decisions[0].chosen is None


def test_not_offered_type_gets_unsupported(ec2: MockedEC2, subnets: dict[str, str]) -> None:
    offered = ec2.catalog.offerings()
    assert "us-east-1e" not in offered["c7i.large"] and "us-east-1a" in offered["c7i.large"]  # moto 5.2.1 data
    p = params(subnets | {"us-east-1e": ec2.default_subnets()["us-east-1e"]}, ["c7i.large"], ("us-east-1e", "us-east-1a"))
    out = ec2.client.create_fleet(**p)
    (inst,) = instances(ec2, out)
    assert inst["Placement"]["AvailabilityZone"] == "us-east-1a"
    (err,) = out["Errors"]
    assert err["ErrorCode"] == "Unsupported"
    assert err["LaunchTemplateAndOverrides"]["Overrides"]["AvailabilityZone"] == "us-east-1e"
    assert "is not supported in your requested Availability Zone (us-east-1e)" in err["ErrorMessage"]
    only_e = params(subnets | {"us-east-1e": ec2.default_subnets()["us-east-1e"]}, ["c7i.large"], ("us-east-1e",))
    out = ec2.client.create_fleet(**only_e)
    assert out["Instances"] == [] and [e["ErrorCode"] for e in out["Errors"]] == ["Unsupported"]


def test_multi_unit_splits_across_pools(ec2: MockedEC2, subnets: dict[str, str]) -> None:
    ec2.add_unavailable("c7i.large:us-east-1a:on-demand:after=1")
    out = ec2.client.create_fleet(**params(subnets, ["c7i.large", "c8i.large"], ("us-east-1a",), total=3))
    got = sorted(i["InstanceType"] for i in instances(ec2, out))
    assert got == ["c7i.large", "c8i.large", "c8i.large"]
    assert [e["ErrorCode"] for e in out["Errors"]] == [ICE_ERROR_CODE]  # de-duplicated across units
    assert len(ec2.records[-1].decisions) == 3
    assert ec2.records[-1].sent["TargetCapacitySpecification"]["TotalTargetCapacity"] == 1  # type: ignore[index]


def test_dry_run_passes_through(ec2: MockedEC2, subnets: dict[str, str]) -> None:
    with pytest.raises(ClientError) as exc:
        ec2.client.create_fleet(**params(subnets, ["c7i.large"]), DryRun=True)
    assert exc.value.response["Error"]["Code"] == "DryRunOperation"
    assert not ec2.records[-1].modelled


def test_virtual_time_window(ec2: MockedEC2, subnets: dict[str, str]) -> None:
    ec2.add_unavailable("c7i.*:*:on-demand:from=100:until=200")
    p = params(subnets, ["c7i.large", "c8i.large"], ("us-east-1a",))
    ec2.now = 150.0
    assert ec2.client.create_fleet(**p)["Instances"][0]["InstanceType"] == "c8i.large"
    assert ec2.records[-1].now == 150.0
    ec2.now = 200.0
    assert ec2.client.create_fleet(**p)["Instances"][0]["InstanceType"] == "c7i.large"


def test_clock_callable_wins_over_now(subnets: dict[str, str], backend: MockedEC2) -> None:
    backend.capacity.clear()
    backend.clock = lambda: 42.0
    try:
        backend.client.create_fleet(**params(subnets, ["c7i.large"], ("us-east-1a",)))
        assert backend.records[-1].now == 42.0
    finally:
        backend.clock = None


def test_decisions_property_flattens_records(ec2: MockedEC2) -> None:
    assert len(ec2.decisions) == sum(len(r.decisions) for r in ec2.records)
    assert all(d.reason for d in ec2.decisions)


def test_catalog_reads_once_and_filters(ec2: MockedEC2) -> None:
    cat = ec2.catalog
    types = cat.instance_types()
    pages = cat.describe_instance_types_pages
    assert cat.instance_types() is types and cat.describe_instance_types_pages == pages
    assert list(types) == sorted(types)
    assert "c8i.large" in types and types["c8i.large"]["VCpuInfo"]["DefaultVCpus"] == 2
    assert all("hvm" in t["SupportedVirtualizationTypes"] for t in types.values())
    off = cat.offerings()
    assert cat.offerings() is off
    assert "us-east-1a" in off["c8i.large"]
    assert cat.zones()[:3] == list(ZONES)
    assert cat.get("nope.large") is None


def test_catalog_is_per_instance(ec2: MockedEC2) -> None:
    other = InstanceTypeCatalog(ec2.client)
    assert other.describe_instance_types_pages == 0
    assert other.offerings() == ec2.catalog.offerings()


def test_create_network_one_subnet_per_zone(ec2: MockedEC2) -> None:
    net = ec2.create_network("10.20.0.0/16", zones=["us-east-1a", "us-east-1b"], tags={"karpenter.sh/discovery": "c1"})
    assert sorted(net.subnets) == ["us-east-1a", "us-east-1b"]
    found = ec2.client.describe_subnets(Filters=[{"Name": "tag:karpenter.sh/discovery", "Values": ["c1"]}])["Subnets"]
    assert {s["SubnetId"]: s["AvailabilityZone"] for s in found} == {v: k for k, v in net.subnets.items()}
    assert all(s["VpcId"] == net.vpc_id for s in found)
    assert ec2.zone_of_subnet(net.subnets["us-east-1b"]) == "us-east-1b"
    assert ec2.zone_of_subnet("subnet-doesnotexist") is None
    assert net.security_group_id and net.security_group_id.startswith("sg-")


def test_default_subnets_one_per_zone(ec2: MockedEC2, subnets: dict[str, str]) -> None:
    assert list(subnets) == sorted(subnets)
    assert len(set(subnets.values())) == len(subnets) == 6


def test_default_amis_not_loaded(ec2: MockedEC2) -> None:
    # load_default_amis=False: the region's backend is created without moto's default images.
    imgs = ec2.client.describe_images(Owners=["amazon"])["Images"]
    assert len(imgs) < 100


def test_start_never_touches_the_environment(ec2: MockedEC2, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOTO_EC2_LOAD_DEFAULT_AMIS", "sentinel")
    before = dict(os.environ)
    second = MockedEC2(seed=None).start()  # a second backend beside the module's: its own account
    try:
        assert dict(os.environ) == before
        assert second.account_id != ec2.account_id
        with pytest.raises(RuntimeError):
            second.start()
    finally:
        second.stop()
    assert dict(os.environ) == before


def test_default_amis_loaded_on_request() -> None:
    with MockedEC2(load_default_amis=True) as ec2:
        assert len(ec2.client.describe_images(Owners=["amazon"])["Images"]) >= 100


def test_client_before_start_raises() -> None:
    ec2 = MockedEC2()
    with pytest.raises(RuntimeError):
        _ = ec2.client


_COLD_IMPORT = r"""
import json, sys
import botocore.loaders, botocore.session
parsed = []
original_load = botocore.loaders.JSONFileLoader.load_file
def counting(self, file_path):  # this probe is the test's own, in its own process
    found = original_load(self, file_path)
    if found is not None and file_path.endswith(("ec2/2016-11-15/service-2", "/endpoints")):
        parsed.append(file_path.rsplit("/", 1)[-1])
    return found
botocore.loaders.JSONFileLoader.load_file = counting
from awsprovider.ec2.backend import MockedEC2, _shared_loader
assert "moto.ec2.models" not in sys.modules
with MockedEC2() as ec2:
    ec2.client.describe_availability_zones()
    during = botocore.session.create_loader is botocore.loaders.create_loader
host_session = botocore.session.Session()
print(json.dumps({
    "parsed": sorted(parsed),
    "create_loader_restored": botocore.session.create_loader is botocore.loaders.create_loader and during,
    "host_loader_is_own": host_session.get_component("data_loader") is not _shared_loader(None),
}))
"""


def test_cold_import_parses_the_ec2_model_once_and_leaves_botocore_as_it_was() -> None:
    """moto's import-time botocore sessions (three in RegionsAndZonesBackend, one for an account's
    regions) and karpy's client share one loader while moto's EC2 imports: in a fresh process the
    EC2 service model and endpoints.json are each parsed once by botocore's loader (they were
    parsed five and four times), the model once more by moto's own loader. Afterwards ``botocore.session.create_loader`` is botocore's own again and a
    host session builds its own loader."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])))
    out = subprocess.run([sys.executable, "-c", _COLD_IMPORT], env=env, capture_output=True, text=True, timeout=300,
                         check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    # botocore's loader (moto's import-time sessions, moto's region session, karpy's client) once
    # each, plus moto's own loader's copy of the EC2 model (its request parser and serialiser)
    assert result["parsed"] == ["endpoints", "service-2", "service-2"]
    assert result["create_loader_restored"] is True
    assert result["host_loader_is_own"] is True


_PRELOAD = r"""
import json, os, sys
import boto3, botocore.loaders, botocore.session
env = dict(os.environ)
from awsprovider.cloudprovider import AWSCloudProvider
from awsprovider.ec2 import backend
AWSCloudProvider.preload()
AWSCloudProvider.preload()  # idempotent
from moto.ec2.models import ec2_backends
print(json.dumps({
    "imported": all(m in sys.modules for m in ("moto.ec2.models", "moto.ec2.responses", "werkzeug.exceptions")),
    "create_loader_restored": botocore.session.create_loader is botocore.loaders.create_loader,
    "environ_unchanged": dict(os.environ) == env,
    "default_session": boto3.DEFAULT_SESSION is None,
    "accounts_claimed": sorted(backend._claimed_accounts),
    "moto_accounts": sorted(ec2_backends.keys()),
}))
"""


def test_preload_imports_moto_and_changes_nothing_else() -> None:
    """``AWSCloudProvider.preload`` (the CLI's hook, :func:`karpy.cli.preload_cloud_provider`)
    imports what a backend's first request imports and starts nothing: no account claimed, no moto
    EC2 state, botocore's ``create_loader`` botocore's own again, ``os.environ`` and boto3's
    default session untouched."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])))
    out = subprocess.run([sys.executable, "-c", _PRELOAD], env=env, capture_output=True, text=True, timeout=300,
                         check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {
        "imported": True, "create_loader_restored": True, "environ_unchanged": True, "default_session": True,
        "accounts_claimed": [], "moto_accounts": [],
    }


def test_a_stopped_backend_leaves_none_of_its_state_alive() -> None:
    """moto keeps objects of every backend in process-wide places: the lru_cache of
    AccountSpecificBackend._generate_regions (keyed by an account's backends), the unbounded cache
    of Subnet._base_avail_ip_iterator (keyed by every subnet that handed out an IP), and each
    backend class's instances_tracked / VPCBackend.vpc_refs. After stop() the region backend, its
    VPCs and launch templates are garbage: a host running many simulations does not keep them."""
    import gc
    import weakref

    from moto.ec2.models import ec2_backends

    refs = []
    # another backend running throughout (moto resets its trackers only when none is)
    with MockedEC2(seed=None) as other:
        other.default_subnets()
        for seed in (1, 2):  # the second backend reuses the account the first released
            with MockedEC2(price_book=Book(), seed=seed) as ec2:
                ec2.create_launch_template("karpy-lt")
                subnets = ec2.default_subnets()
                ec2.client.create_fleet(**params(subnets, ["c7i.large"], ("us-east-1a",)))
                region_backend = ec2_backends[ec2.account_id][ec2.region]
                refs += [weakref.ref(region_backend)] + [weakref.ref(v) for v in region_backend.vpcs.values()] \
                    + [weakref.ref(t) for t in region_backend.launch_templates.values()]
                del region_backend
        gc.collect()
        assert other.client.describe_subnets()["Subnets"]  # the running backend keeps its state
        assert len(refs) > 3 and [type(r()).__name__ for r in refs if r() is not None] == []  # none alive


# -- the pool of idle private clients (awsprovider.ec2.backend._ClientPool) ---------------------
def _launch_answers(seed: int) -> tuple[Any, list[Any]]:
    """The client a backend used and what it answered for one launch sequence."""
    with MockedEC2(price_book=Book(), seed=seed) as ec2:
        ec2.create_launch_template("karpy-lt")
        subnets = ec2.default_subnets()
        fleet = ec2.client.create_fleet(**params(subnets, ["c7i.large", "c8i.large"], ("us-east-1a", "us-east-1b")))
        fleet.pop("ResponseMetadata", None)
        described = ec2.client.describe_instances()["Reservations"]
        for r in described:
            for i in r["Instances"]:
                i.pop("LaunchTime", None)  # moto stamps the wall clock (the EBS AttachTime too)
                for mapping in i.get("BlockDeviceMappings", []):
                    mapping.get("Ebs", {}).pop("AttachTime", None)
                for eni in i.get("NetworkInterfaces", []):  # (moto 5.2.3 stamps the ENI attachment too)
                    eni.get("Attachment", {}).pop("AttachTime", None)
        return ec2.client, [subnets, fleet, described, ec2.records[-1].decisions[0].reason]


def test_a_stopped_backends_client_serves_the_next_backend_with_the_same_answers() -> None:
    from awsprovider.ec2.backend import _CLIENTS

    _CLIENTS.clear()
    fresh_client, fresh = _launch_answers(5)
    pooled_client, pooled = _launch_answers(5)
    assert pooled_client is fresh_client  # handed back at stop, taken again at start
    assert pooled == fresh
    _CLIENTS.clear()
    rebuilt_client, rebuilt = _launch_answers(5)
    assert rebuilt_client is not fresh_client and rebuilt == fresh


def test_an_idle_client_keeps_nothing_of_its_backend() -> None:
    """stop() takes every hook off the client before pooling it: the backend (and through its
    bound-method hooks, its records and fleet model) is garbage once the caller drops it."""
    import gc
    import weakref

    from awsprovider.ec2.backend import _CLIENTS

    _CLIENTS.clear()
    with MockedEC2(price_book=Book(), seed=3) as ec2:
        ec2.default_subnets()
        client = ec2.client
        hooked = {e: len(list(client.meta.events._emitter._handlers.prefix_search(e)))
                  for e, _ in ec2._hooks()}
    ref = weakref.ref(ec2)
    del ec2
    gc.collect()
    assert ref() is None
    after = {e: len(list(client.meta.events._emitter._handlers.prefix_search(e))) for e in hooked}
    assert all(after[e] < hooked[e] for e in hooked), (hooked, after)


def test_clients_are_pooled_by_the_hosts_aws_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from awsprovider.ec2.backend import _CLIENTS

    _CLIENTS.clear()
    with MockedEC2(seed=None) as first:
        first_client = first.client
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "7")
    with MockedEC2(seed=None) as second:  # a fresh client reads the changed setting: so does this one
        assert second.client is not first_client
        assert second.client.meta.config.retries["total_max_attempts"] == 7
    monkeypatch.delenv("AWS_MAX_ATTEMPTS")
    with MockedEC2(seed=None) as third, MockedEC2(seed=None) as fourth:
        assert third.client is first_client  # the key of the unchanged environment again
        assert fourth.client is not first_client  # one client serves one backend at a time


def test_a_client_with_a_callers_hook_left_on_is_not_handed_to_the_next_backend() -> None:
    """Callers may hook ec2.client themselves (tests/awsprovider/test_capacity_reservation_launch.py
    throttles CreateFleet); such a client is dropped at stop, so the next backend never runs the
    hook. A hook the caller took off again leaves the client poolable."""
    from awsprovider.ec2.backend import _CLIENTS

    _CLIENTS.clear()
    calls: list[str] = []

    def spy(**_: Any) -> None:
        calls.append("spy")

    with MockedEC2(seed=None) as hooked:
        hooked_client = hooked.client
        hooked_client.meta.events.register("before-call.ec2.DescribeVpcs", spy)
        hooked_client.describe_vpcs()
    assert calls == ["spy"]
    with MockedEC2(seed=None) as after:
        assert after.client is not hooked_client
        after.client.describe_vpcs()
        after.client.meta.events.register("before-call.ec2.DescribeVpcs", spy, unique_id="karpy-test")
        after.client.meta.events.unregister("before-call.ec2.DescribeVpcs", unique_id="karpy-test")
        tidy_client = after.client
    assert calls == ["spy"]
    with MockedEC2(seed=None) as again:
        assert again.client is tidy_client



def test_records_limit_keeps_the_newest_records(ec2: MockedEC2, subnets: dict[str, str]) -> None:
    """MockedEC2(records_limit=N): ``records`` keeps the newest N CreateFleet records (a long run's
    provider kept every one to the end); None keeps them all; below 1 is refused."""
    with pytest.raises(ValueError, match="records_limit"):
        MockedEC2(records_limit=0)
    ec2.records_limit = 2
    try:
        sent = []
        for it in ("m8i.large", "c8i.large", "c7i.large"):
            (inst,) = instances(ec2, ec2.client.create_fleet(**params(subnets, [it], ("us-east-1a",))))
            sent.append(inst["InstanceType"])
        assert sent == ["m8i.large", "c8i.large", "c7i.large"]
        assert [r.request["LaunchTemplateConfigs"][0]["Overrides"][0]["InstanceType"] for r in ec2.records] \
            == ["c8i.large", "c7i.large"]
        assert len(ec2.decisions) == 2
    finally:
        ec2.records_limit = None
