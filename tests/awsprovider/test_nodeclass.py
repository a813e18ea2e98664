"""EC2NodeClass model (pkg/apis/v1/ec2nodeclass.go) and its resolution against moto via boto3."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from awsprovider.apis.ec2nodeclass import EXTRA_KINDS, EC2NodeClass
from awsprovider.ec2.backend import MockedEC2
from awsprovider.nodeclass import (
    DEFAULT_DISCOVERY_TAG,
    ZoneInfo,
    default_nodeclass,
    ensure_default_network,
    resolve_nodeclass,
    subnet_filters,
)
from karpy.admission import AdmissionError, admit
from karpy.api.loader import load_manifests

YAML = """
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiSelectorTerms:
    - alias: bottlerocket@latest
  role: KarpenterNodeRole
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: my-cluster
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: my-cluster
  associatePublicIPAddress: false
  kubelet:
    maxPods: 20
    podsPerCore: 2
    kubeReserved:
      cpu: 100m
    evictionHard:
      memory.available: 5%
  blockDeviceMappings:
    - deviceName: /dev/xvdb
      ebs:
        volumeSize: 100Gi
        kmsKeyID: abc
  metadataOptions:
    httpTokens: optional
  unknownField: ignored
"""


def test_loader_reads_ec2nodeclass() -> None:
    m = load_manifests(YAML, extra_kinds=EXTRA_KINDS)
    (nc,) = m.by_kind("EC2NodeClass")
    assert isinstance(nc, EC2NodeClass)
    assert nc.ami_family() == "Bottlerocket"
    assert nc.spec.kubelet.max_pods == 20 and nc.spec.kubelet.pods_per_core == 2
    assert nc.spec.kubelet.eviction_hard == {"memory.available": "5%"}
    assert nc.spec.block_device_mappings[0].ebs.kms_key_id == "abc"
    assert str(nc.spec.block_device_mappings[0].ebs.volume_size) == "100Gi"
    assert nc.spec.associate_public_ip_address is False
    assert nc.spec.metadata_options.http_tokens == "optional"
    assert nc.spec.metadata_options.http_put_response_hop_limit == 1  # CRD default


@pytest.mark.parametrize("spec,family", [
    ({"amiFamily": "AL2", "amiSelectorTerms": [{"id": "ami-1"}]}, "AL2"),
    ({"amiSelectorTerms": [{"alias": "al2023@v20240807"}]}, "AL2023"),
    ({"amiSelectorTerms": [{"alias": "windows2022@latest"}]}, "Windows2022"),
    ({"amiSelectorTerms": [{"id": "ami-1"}]}, "Custom"),
    ({}, "AL2023"),
])
def test_ami_family(spec: dict[str, Any], family: str) -> None:
    # upstream: ec2nodeclass.go AMIFamily (+ karpy's AL2023 default without amiSelectorTerms)
    assert EC2NodeClass.model_validate({"spec": spec}).ami_family() == family


VALID_SPEC = {"amiSelectorTerms": [{"alias": "al2023@latest"}], "role": "r",
              "subnetSelectorTerms": [{"tags": {"a": "b"}}], "securityGroupSelectorTerms": [{"tags": {"a": "b"}}]}


@pytest.mark.parametrize(("spec", "message"), [
    ({"amiFamily": "Ubuntu"}, 'spec.amiFamily: Unsupported value: "Ubuntu": supported values: "AL2", "AL2023"'),
    ({"instanceProfile": "p"}, "spec: Invalid value: must specify exactly one of ['role', 'instanceProfile']"),
    ({"amiSelectorTerms": [{"alias": "al2023"}]},
     "spec.amiSelectorTerms[0].alias: Invalid value: \"al2023\": 'alias' is improperly formatted"),
    ({"amiSelectorTerms": [{"alias": "centos@latest"}]},
     'spec.amiSelectorTerms[0].alias: Invalid value: "centos@latest": family is not supported'),
    ({"amiSelectorTerms": [{"alias": "al2023@latest"}, {"id": "ami-1"}]},
     "spec.amiSelectorTerms: Invalid value: 'alias' is mutually exclusive, cannot be set with a combination of "
     "other amiSelectorTerms"),
    ({"instanceStorePolicy": "RAID1"}, 'spec.instanceStorePolicy: Unsupported value: "RAID1": supported values: "RAID0"'),
    ({"networkInterfaces": [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "bogus"}]},
     'spec.networkInterfaces[0].interfaceType: Unsupported value: "bogus"'),
])
def test_invalid_specs(spec: dict[str, Any], message: str) -> None:
    # the provider's CRD (EC2NodeClass.CRD), checked by karpy's admission with the API server's messages
    manifest = {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "nc"},
                "spec": {**VALID_SPEC, **spec}}
    with pytest.raises(AdmissionError) as info:
        admit(manifest, EC2NodeClass)
    assert any(str(e).startswith(message) for e in info.value.errors), info.value.errors
    admit({**manifest, "spec": VALID_SPEC}, EC2NodeClass)


def test_subnet_filters() -> None:
    # upstream: subnet.go getFilterSets ("*" -> tag-key)
    nc = EC2NodeClass.model_validate({"spec": {"subnetSelectorTerms": [{"tags": {"a": "*", "b": "x"}}, {"id": "subnet-1"}]}})
    assert subnet_filters(nc.spec.subnet_selector_terms[0]) == [
        {"Name": "tag-key", "Values": ["a"]}, {"Name": "tag:b", "Values": ["x"]}]
    assert subnet_filters(nc.spec.subnet_selector_terms[1]) == [{"Name": "subnet-id", "Values": ["subnet-1"]}]


@pytest.fixture(scope="module")
def ec2() -> Iterator[MockedEC2]:
    with MockedEC2(region="us-east-1") as backend:
        yield backend


def test_default_network_and_nodeclass(ec2: MockedEC2) -> None:
    subnets = ensure_default_network(ec2.client)
    assert sorted(subnets) == [f"us-east-1{c}" for c in "abcdef"]
    assert ensure_default_network(ec2.client) == subnets  # idempotent
    resolved = resolve_nodeclass(ec2.client, default_nodeclass())
    assert resolved.zones() == frozenset(subnets)
    assert len(resolved.security_groups) == 1
    zi = {z.zone: z for z in resolved.zone_info()}
    assert zi["us-east-1a"] == ZoneInfo("us-east-1a", "use1-az6", (subnets["us-east-1a"],))
    assert zi["us-east-1f"].zone_id == "use1-az5"
    assert resolved.ami_family() == "AL2023"


def test_subnets_sorted_by_free_ips_then_id(ec2: MockedEC2) -> None:
    # upstream: nodeclass/subnet.go sort (AvailableIpAddressCount desc, SubnetId asc); ZoneInfo groups by zone id
    c = ec2.client
    vpc = c.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    tag = [{"ResourceType": "subnet", "Tags": [{"Key": "team", "Value": "x"}]}]
    small = c.create_subnet(VpcId=vpc, CidrBlock="10.9.1.0/26", AvailabilityZone="us-east-1a", TagSpecifications=tag)["Subnet"]["SubnetId"]
    big = c.create_subnet(VpcId=vpc, CidrBlock="10.9.2.0/24", AvailabilityZone="us-east-1a", TagSpecifications=tag)["Subnet"]["SubnetId"]
    other = c.create_subnet(VpcId=vpc, CidrBlock="10.9.3.0/24", AvailabilityZone="us-east-1b")["Subnet"]["SubnetId"]
    nc = EC2NodeClass.model_validate({"metadata": {"name": "x"}, "spec": {
        "subnetSelectorTerms": [{"tags": {"team": "x"}}, {"id": other}]}})
    r = resolve_nodeclass(c, nc)
    assert [s.id for s in r.subnets][:2] == sorted([big, other]) and r.subnets[-1].id == small
    zi = {z.zone: z for z in r.zone_info()}
    assert zi["us-east-1a"].subnet_ids == (big, small)
    assert zi["us-east-1b"].subnet_ids == (other,)
    assert r.zone_id("us-east-1b") == "use1-az1"


def test_no_matching_subnets(ec2: MockedEC2) -> None:
    nc = EC2NodeClass.model_validate({"spec": {"subnetSelectorTerms": [{"tags": {"nope": "nope"}}]}})
    assert resolve_nodeclass(ec2.client, nc).zone_info() == ()


def test_default_tag() -> None:
    assert DEFAULT_DISCOVERY_TAG == ("karpenter.sh/discovery", "karpy")
    nc = default_nodeclass()
    assert nc.spec.subnet_selector_terms[0].tags == {"karpenter.sh/discovery": "karpy"}
