"""The mocked VPC is built from what the EC2NodeClass selects (issue #11).

Shapes: the EC2NodeClass of aws/karpenter-provider-aws 1d92708 ``examples/v1/general-purpose.yaml``
with its selector terms rewritten the ways the EC2NodeClass docs allow (``subnetSelectorTerms``
by ``id`` or ``tags``; ``securityGroupSelectorTerms`` by ``id``, ``name`` or ``tags`` --
pkg/apis/v1/ec2nodeclass.go), and the ``status`` a ``kubectl get ec2nodeclass -o yaml`` shows
(``status.subnets[{id, zone, zoneID}]``, ``status.securityGroups[{id, name}]`` --
pkg/apis/v1/ec2nodeclass_status.go).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from realworld_helpers import BLUEPRINTS_CLUSTER, docs, launched, pending, scale  # noqa: E402

from awsprovider.apis.ec2nodeclass import EC2NodeClass  # noqa: E402
from awsprovider.cloudprovider import AWSCloudProvider  # noqa: E402
from awsprovider.nodeclass import resolve_nodeclass  # noqa: E402
from awsprovider.overlay import runtime_validate  # noqa: E402
from karpy.api.nodeoverlay import NodeOverlay  # noqa: E402

SUBNET_A, SUBNET_B = "subnet-09fa4a0a8f233a921", "subnet-0471ca205b8a129ae"
SG = "sg-0d5b6c3f3b9a1e2c4"


def _general(**spec: Any) -> list[dict[str, Any]]:
    """general-purpose.yaml (NodePool + EC2NodeClass "default") + inflate x2, EC2NodeClass spec patched."""
    ds = scale(docs("aws/examples/v1/general-purpose.yaml", "aws/examples/workloads/inflate.yaml"), "inflate", 2)
    nc = next(d for d in ds if d["kind"] == "EC2NodeClass")
    for key, value in spec.items():
        if key == "status":
            nc["status"] = value
        else:
            nc["spec"][key] = value
    return ds


def _subnets_of(doc: dict[str, Any]) -> set[tuple[str, str]]:
    return {(o["subnet_id"], o["zone"]) for nc in doc["nodeclaims"] for o in nc["fleet"]["overrides"]}


def test_subnets_by_id_from_a_karpy_network_manifest(run) -> None:
    network = {"apiVersion": "karpy.io/v1alpha1", "kind": "Network", "metadata": {"name": "prod"},
               "spec": {"subnets": [{"id": SUBNET_A, "zone": "us-east-1b"},
                                    {"id": SUBNET_B, "zoneID": "use1-az6", "availableIPs": 250}],
                        "securityGroups": [{"id": SG, "name": "eks-cluster-sg-prod"}]}}
    result, doc = run(_general(subnetSelectorTerms=[{"id": SUBNET_A}, {"id": SUBNET_B}],
                               securityGroupSelectorTerms=[{"id": SG}]) + [network])
    assert result.exit_code == 0, pending(doc)
    subnets = _subnets_of(doc)
    assert {s for s, _ in subnets} <= {SUBNET_A, SUBNET_B} and SUBNET_A in {s for s, _ in subnets}
    assert (SUBNET_A, "us-east-1b") in subnets
    assert launched(doc)[0]["zone"] in {z for _, z in subnets}
    assert not any("zones of subnets" in w for w in doc["warnings"])


def test_subnets_by_id_from_the_nodeclass_status_of_a_dump(run) -> None:
    subnet = "subnet-0c1d2e3f4a5b60718"  # (ids differ per test: moto's state is process-wide)
    status = {"subnets": [{"id": subnet, "zone": "us-east-1d", "zoneID": "use1-az4"}],
              "securityGroups": [{"id": "sg-0e1f2a3b4c5d60718", "name": "eks-cluster-sg-dump"}]}
    result, doc = run(_general(subnetSelectorTerms=[{"id": subnet}],
                               securityGroupSelectorTerms=[{"name": "eks-cluster-sg-dump"}], status=status))
    assert result.exit_code == 0, pending(doc)
    assert _subnets_of(doc) == {(subnet, "us-east-1d")}
    nc = launched(doc)[0]
    assert nc["zone"] == "us-east-1d" and nc["labels"]["topology.k8s.aws/zone-id"] == "use1-az4"


def test_subnets_by_id_alone_are_placed_and_the_assumption_said(run) -> None:
    a, b = "subnet-0f0e0d0c0b0a90807", "subnet-0f0e0d0c0b0a90808"
    result, doc = run(_general(subnetSelectorTerms=[{"id": a}, {"id": b}],
                               securityGroupSelectorTerms=[{"id": "sg-0f0e0d0c0b0a90807"}]))
    assert result.exit_code == 0, pending(doc)
    assert _subnets_of(doc) <= {(a, "us-east-1a"), (b, "us-east-1b")}
    assert ("EC2NodeClass default: the zones of subnets selected by id are not known (give the EC2NodeClass "
            f"status.subnets or a karpy.io Network); the mocked VPC puts {a} in us-east-1a, "
            f"{b} in us-east-1b") in doc["warnings"]


def test_security_group_by_name_and_subnets_by_tags_resolve() -> None:
    nc = EC2NodeClass.model_validate(next(d for d in _general(
        securityGroupSelectorTerms=[{"name": "eks-cluster-sg-byname"}, {"id": "sg-0a0b0c0d0e0f10203"}])
        if d["kind"] == "EC2NodeClass"))
    with AWSCloudProvider("us-east-1", "2026-07-20", nodeclasses=[nc]) as provider:
        provider.prepare([], nodeclasses_given=True)
        resolved = resolve_nodeclass(provider.ec2.client, nc)
        assert "sg-0a0b0c0d0e0f10203" in {g for g, _ in resolved.security_groups}
        assert "eks-cluster-sg-byname" in {name for _, name in resolved.security_groups}
        assert len(resolved.zones()) == 6  # tags: one subnet per zone of the region


def test_nodepool_with_a_missing_ec2nodeclass_says_not_found(run) -> None:
    """blueprints node-overlay gpu-nodepool.yaml (nodeClassRef gpu-bottlerocket) next to the cluster's
    "default" EC2NodeClass only: upstream's readiness controller says NodeClass not found."""
    result, doc = run(docs(BLUEPRINTS_CLUSTER, "blueprints/blueprints/node-overlay/gpu-nodepool.yaml",
                           "blueprints/blueprints/node-overlay/workload-gpu-slices.yaml"))
    assert result.exit_code == 3
    assert ("NodePool gpu-slices: EC2NodeClass 'gpu-bottlerocket' not found (NodeClassReady=False, "
            "NodeClassNotFound: NodeClass not found on cluster); Karpenter ignores the NodePool") in doc["warnings"]
    assert not any("filtered out all available instance types" in (m or "") for m in pending(doc).values())


# ----------------------------------------------------------------------------------- NodeOverlay

def _overlay(capacity: dict[str, Any]) -> NodeOverlay:
    """Shape: blueprints/node-overlay/node-overlay-gpu-slices.yaml gpu-slices-1gpu."""
    return NodeOverlay.model_validate({
        "apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay", "metadata": {"name": "gpu-slices-1gpu"},
        "spec": {"weight": 10, "capacity": capacity, "requirements": [
            {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "In", "values": ["1"]}]}})


@pytest.mark.parametrize("resource,restricted", [
    ("nvidia.com/gpu", False), ("amd.com/gpu", False),          # not in core's WellKnownResources
    ("vpc.amazonaws.com/pod-eni", True), ("aws.amazon.com/neuron", True), ("vpc.amazonaws.com/efa", True),
])  # (cpu, memory, ephemeral-storage, pods are already rejected by the CRD's own rule at load)
def test_overlay_capacity_checked_against_core_well_known_resources(resource: str, restricted: bool) -> None:
    # core pkg/apis/v1alpha1/nodeoverlay_validation.go validateCapacity + the AWS provider's labels.go init()
    err = runtime_validate(_overlay({resource: 4}))
    assert (err == f"invalid capacity: {resource} in resource, restricted") if restricted else err is None


def test_rejected_overlay_is_a_warning(run) -> None:
    ds = docs(*[f"blueprints/blueprints/node-overlay/{f}.yaml" for f in
                ("gpu-nodeclass", "gpu-nodepool", "node-overlay-gpu-slices", "workload-gpu-slices")])
    bad = copy.deepcopy(next(d for d in ds if d.get("kind") == "NodeOverlay"))
    bad["metadata"]["name"] = "pod-eni-slices"
    bad["spec"]["capacity"] = {"vpc.amazonaws.com/pod-eni": 4}
    result, doc = run(ds + [bad], feature_gates={"NodeOverlay": True})  # overlays need the gate
    assert ("NodeOverlay pod-eni-slices: rejected (ValidationSucceeded=False, RuntimeValidation: invalid capacity: "
            "vpc.amazonaws.com/pod-eni in resource, restricted); Karpenter does not apply it") in doc["warnings"]
