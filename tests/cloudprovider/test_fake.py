"""Tests for karpy.cloudprovider.fake: the catalogue numbers of pkg/cloudprovider/fake/instancetype.go and
cloudprovider.go (kubernetes-sigs/karpenter@2266468) and the fake Create."""

from __future__ import annotations

from typing import Any

import pytest

from karpy.api.nodeclaim import NodeClaim
from karpy.api.quantity import NANO, Quantity, parse_nanos
from karpy.cloudprovider.fake import (
    FAKE_WELL_KNOWN_LABELS,
    LABEL_RESERVATION_ID,
    FakeCloudProvider,
    default_instance_types,
    instance_types,
    instance_types_assorted,
    new_instance_type,
    price_from_resources,
)
from karpy.cloudprovider.types import (
    InstanceTypes,
    InsufficientCapacityError,
    NodeClaimNotFoundError,
    Offering,
)
from karpy.scheduling.labels import LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_ZONE
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

GI = 1 << 30

# name, cpu, memory bytes, pods, price, alloc cpu (milli), alloc mem bytes, integer label, size, arch
DEFAULT_TABLE = [
    ("default-instance-type", 4, 4 * GI, 5, 0.8294967296, 3900, 4284481536, "4", "small", "amd64"),
    ("small-instance-type", 2, 2 * GI, 5, 0.4147483648, 1900, 2136997888, "2", "small", "amd64"),
    ("gpu-vendor-instance-type", 4, 4 * GI, 5, 1.8294967296, 3900, 4284481536, "4", "small", "amd64"),
    ("gpu-vendor-b-instance-type", 4, 4 * GI, 5, 1.8294967296, 3900, 4284481536, "4", "small", "amd64"),
    ("arm-instance-type", 16, 128 * GI, 5, 15.3438953472, 15900, 137428467712, "16", "large", "arm64"),
    ("single-pod-instance-type", 4, 4 * GI, 1, 0.8294967296, 3900, 4284481536, "4", "small", "amd64"),
]


# upstream: pkg/cloudprovider/fake/cloudprovider.go GetInstanceTypes (default catalogue), reference §7.1 table
def test_default_catalogue_table() -> None:
    its = default_instance_types()
    assert [t.name for t in its] == [row[0] for row in DEFAULT_TABLE]
    for t, (name, cpu, mem, pods, price, acpu, amem, integer, size, arch) in zip(its, DEFAULT_TABLE):
        assert t.capacity["cpu"] == cpu * NANO, name
        assert t.capacity["memory"] == mem * NANO, name
        assert t.capacity["pods"] == pods * NANO, name
        assert [o.price for o in t.offerings] == [price] * 5, name
        a = t.allocatable()
        assert a["cpu"] == acpu * 1_000_000, name
        assert a["memory"] == amem * NANO, name
        assert a["pods"] == pods * NANO, name
        assert t.requirements.get("integer").sorted_values() == [integer]
        assert t.requirements.get("size").sorted_values() == [size]
        assert t.requirements.get("kubernetes.io/arch").sorted_values() == [arch]
        assert t.requirements.get(LABEL_INSTANCE_TYPE).sorted_values() == [name]
        assert t.requirements.get(LABEL_ZONE).sorted_values() == ["test-zone-1", "test-zone-2", "test-zone-3"]
        assert t.requirements.get(LABEL_CAPACITY_TYPE).sorted_values() == ["on-demand", "spot"]
    arm = its[4]
    assert arm.requirements.get("special").sorted_values() == ["optional"]
    assert arm.requirements.get("kubernetes.io/os").sorted_values() == ["darwin", "ios", "linux", "windows"]
    assert its[0].requirements.get("special").operator == "DoesNotExist"
    assert its[0].requirements.get("kubernetes.io/os").sorted_values() == ["darwin", "linux", "windows"]
    assert its[2].capacity["fake.com/vendor-a"] == 2 * NANO
    assert its[3].capacity["fake.com/vendor-b"] == 2 * NANO


def test_default_offerings_shape() -> None:
    t = new_instance_type("x")
    assert [(o.capacity_type, o.zone) for o in t.offerings] == [
        ("spot", "test-zone-1"), ("spot", "test-zone-2"),
        ("on-demand", "test-zone-1"), ("on-demand", "test-zone-2"), ("on-demand", "test-zone-3"),
    ]
    assert all(o.available for o in t.offerings)
    assert t.overhead.kube_reserved == {"cpu": parse_nanos("100m"), "memory": parse_nanos("10Mi")}
    assert t.well_known >= FAKE_WELL_KNOWN_LABELS


def test_zone_and_capacity_type_requirements_follow_available_offerings() -> None:
    t = new_instance_type("x", offerings=[
        Offering(Requirements(Requirement(LABEL_CAPACITY_TYPE, "In", ["spot"]),
                              Requirement(LABEL_ZONE, "In", ["test-zone-2"])), 1.0, available=True),
        Offering(Requirements(Requirement(LABEL_CAPACITY_TYPE, "In", ["on-demand"]),
                              Requirement(LABEL_ZONE, "In", ["test-zone-3"])), 1.0, available=False),
    ])
    assert t.requirements.get(LABEL_ZONE).sorted_values() == ["test-zone-2"]
    assert t.requirements.get(LABEL_CAPACITY_TYPE).sorted_values() == ["spot"]


def test_with_resources_zero_values_get_defaults_and_large_threshold() -> None:
    t = new_instance_type("x", resources={"cpu": "0", "memory": "9Gi"})
    assert t.capacity["cpu"] == 4 * NANO and t.capacity["pods"] == 5 * NANO
    assert t.requirements.get("size").sorted_values() == ["small"]  # cpu must be > 4
    big = new_instance_type("y", resources={"cpu": "5", "memory": "9Gi"})
    assert big.requirements.get("size").sorted_values() == ["large"]
    edge = new_instance_type("z", resources={"cpu": "5", "memory": "8Gi"})
    assert edge.requirements.get("size").sorted_values() == ["small"]


def test_price_from_resources() -> None:
    assert price_from_resources({"cpu": 4 * NANO, "memory": 4 * GI * NANO}) == 0.8294967296
    assert price_from_resources({"cpu": 4 * NANO, "memory": 4 * GI * NANO, "fake.com/vendor-a": 2 * NANO,
                                 "pods": 5 * NANO}) == 1.8294967296
    assert price_from_resources({"pods": 110 * NANO}) == 0.0


# upstream: pkg/cloudprovider/fake/instancetype.go InstanceTypes(total)
def test_instance_types_n() -> None:
    its = instance_types(6)
    assert [t.name for t in its] == [f"fake-it-{i}" for i in range(6)]
    for i, t in enumerate(its):
        assert t.capacity == {"cpu": (i + 1) * NANO, "memory": 2 * (i + 1) * GI * NANO, "pods": 10 * (i + 1) * NANO}
        assert t.offerings[0].price == pytest.approx((i + 1) * 0.3147483648, rel=1e-12)
        assert len(t.offerings) == 5
    assert [t.requirements.get("size").any() for t in its] == ["small"] * 4 + ["large"] * 2


# upstream: pkg/cloudprovider/fake/instancetype.go InstanceTypesAssorted
def test_instance_types_assorted() -> None:
    its = instance_types_assorted()
    assert len(its) == 1344
    assert len({t.name for t in its}) == 1344
    assert its[0].name == "1-cpu-1-mem-amd64-linux-test-zone-1-spot"
    assert its[1].name == "1-cpu-1-mem-arm64-linux-test-zone-1-spot"
    assert its[2].name == "1-cpu-1-mem-amd64-windows-test-zone-1-spot"
    assert its[4].name == "1-cpu-1-mem-amd64-linux-test-zone-1-on-demand"
    assert its[8].name == "1-cpu-1-mem-amd64-linux-test-zone-2-spot"
    assert its[-1].name == "64-cpu-128-mem-arm64-windows-test-zone-3-on-demand"
    assert all(len(t.offerings) == 1 for t in its)
    assert min(t.offerings[0].price for t in its) == 0.2073741824
    t = its[-1]
    assert (t.offerings[0].capacity_type, t.offerings[0].zone) == ("on-demand", "test-zone-3")
    assert t.requirements.get(LABEL_ZONE).sorted_values() == ["test-zone-3"]
    assert t.requirements.get("kubernetes.io/os").sorted_values() == ["windows"]
    assert t.capacity["pods"] == 5 * NANO


# ------------------------------------------------------------------------------------------
# FakeCloudProvider
# ------------------------------------------------------------------------------------------
def nodeclaim(requirements: list[dict[str, Any]] | None = None, requests: dict[str, str] | None = None,
              labels: dict[str, str] | None = None) -> NodeClaim:
    return NodeClaim.model_validate({
        "metadata": {"name": "nc", "labels": labels or {"karpenter.sh/nodepool": "default"}},
        "spec": {"requirements": requirements or [], "resources": {"requests": requests or {}}},
    })


def test_create_picks_cheapest_fitting_type_and_zone1_spot() -> None:
    cp = FakeCloudProvider()
    created = cp.create(nodeclaim(requests={"cpu": "1"}))
    assert created.metadata.labels[LABEL_INSTANCE_TYPE] == "small-instance-type"
    assert created.metadata.labels[LABEL_CAPACITY_TYPE] == "spot"
    assert created.metadata.labels[LABEL_ZONE] == "test-zone-1"
    assert created.metadata.labels["size"] == "small"
    assert created.metadata.labels["integer"] == "2"
    assert created.metadata.labels["kubernetes.io/os"] == "darwin"  # any(): smallest of the In values
    assert "special" not in created.metadata.labels
    assert created.metadata.labels["karpenter.sh/nodepool"] == "default"
    assert created.status.provider_id.startswith("fake:///")
    assert created.status.allocatable["cpu"] == Quantity("1900m")
    assert created.status.capacity["memory"] == Quantity("2Gi")
    assert cp.create_calls == [cp.create_calls[0]] and len(cp.created_nodeclaims) == 1


def test_create_respects_requirements_and_requests() -> None:
    cp = FakeCloudProvider()
    created = cp.create(nodeclaim(
        requirements=[{"key": LABEL_CAPACITY_TYPE, "operator": "In", "values": ["on-demand"]},
                      {"key": LABEL_ZONE, "operator": "In", "values": ["test-zone-3"]}],
        requests={"cpu": "3"}))
    # default-instance-type and single-pod-instance-type tie at 0.8294967296: catalogue order wins
    assert created.metadata.labels[LABEL_INSTANCE_TYPE] == "default-instance-type"
    assert created.metadata.labels[LABEL_ZONE] == "test-zone-3"
    assert created.metadata.labels[LABEL_CAPACITY_TYPE] == "on-demand"
    arm = cp.create(nodeclaim(requirements=[{"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}]))
    assert arm.metadata.labels[LABEL_INSTANCE_TYPE] == "arm-instance-type"
    assert arm.metadata.labels["special"] == "optional"
    gpu = cp.create(nodeclaim(requests={"fake.com/vendor-b": "1"}))
    assert gpu.metadata.labels[LABEL_INSTANCE_TYPE] == "gpu-vendor-b-instance-type"


def test_create_nodeclaim_labels_override_and_no_candidate() -> None:
    cp = FakeCloudProvider()
    created = cp.create(nodeclaim(labels={"karpenter.sh/nodepool": "default", "size": "custom"}))
    assert created.metadata.labels["size"] == "custom"
    with pytest.raises(InsufficientCapacityError):
        cp.create(nodeclaim(requests={"cpu": "100"}))


def test_create_prefers_reserved_offering_and_decrements_capacity() -> None:
    reserved = Offering(Requirements(Requirement(LABEL_CAPACITY_TYPE, "In", ["reserved"]),
                                     Requirement(LABEL_ZONE, "In", ["test-zone-2"]),
                                     Requirement(LABEL_RESERVATION_ID, "In", ["r-1"])),
                        5.0, available=True, reservation_capacity=1, reservation_id_label=LABEL_RESERVATION_ID)
    spot = Offering(Requirements(Requirement(LABEL_CAPACITY_TYPE, "In", ["spot"]),
                                 Requirement(LABEL_ZONE, "In", ["test-zone-1"])), 1.0)
    t = new_instance_type("r", offerings=[spot, reserved])
    cp = FakeCloudProvider([t])
    created = cp.create(nodeclaim())
    assert created.metadata.labels[LABEL_CAPACITY_TYPE] == "reserved"
    assert created.metadata.labels[LABEL_RESERVATION_ID] == "r-1"
    assert reserved.reservation_capacity == 0 and not reserved.available
    again = cp.create(nodeclaim())
    assert again.metadata.labels[LABEL_CAPACITY_TYPE] == "spot"


def test_get_list_delete_and_errors() -> None:
    cp = FakeCloudProvider()
    created = cp.create(nodeclaim())
    pid = created.status.provider_id
    assert cp.get(pid).metadata.labels == created.metadata.labels
    assert [n.status.provider_id for n in cp.list()] == [pid]
    cp.delete(created)
    with pytest.raises(NodeClaimNotFoundError) as e:
        cp.delete(created)
    assert str(e.value) == f"nodeclaim not found, no nodeclaim exists with provider id (provider-id={pid})"
    with pytest.raises(NodeClaimNotFoundError, match=r"no nodeclaim exists with id \(id=nope\)"):
        cp.get("nope")
    cp.next_create_err = InsufficientCapacityError("boom")
    with pytest.raises(InsufficientCapacityError):
        cp.create(nodeclaim())
    assert cp.create(nodeclaim()) is not None  # the injected error is consumed
    cp.allowed_create_calls = 0
    with pytest.raises(RuntimeError, match="AllowedCreateCalls"):
        cp.create(nodeclaim())


def test_get_instance_types_per_nodepool() -> None:
    small = instance_types(2)
    cp = FakeCloudProvider()
    assert [t.name for t in cp.get_instance_types(None)][0] == "default-instance-type"
    cp.instance_types_for_nodepool["gpu"] = small
    assert cp.get_instance_types("gpu") is small
    cp.errors_for_nodepool["broken"] = RuntimeError("nope")
    with pytest.raises(RuntimeError):
        cp.get_instance_types("broken")
    created = cp.create(nodeclaim(labels={"karpenter.sh/nodepool": "gpu"}))
    assert created.metadata.labels[LABEL_INSTANCE_TYPE] == "fake-it-0"
    assert cp.name == "fake" and cp.well_known_labels() == FAKE_WELL_KNOWN_LABELS


def test_fake_catalogue_order_by_price_default() -> None:
    its = InstanceTypes(default_instance_types())
    assert [t.name for t in its.order_by_price(Requirements())] == [
        "small-instance-type", "default-instance-type", "single-pod-instance-type",
        "gpu-vendor-instance-type", "gpu-vendor-b-instance-type", "arm-instance-type",
    ]
