"""EC2NodeClass admission against the AWS provider's CRD — ported from aws/karpenter-provider-aws 1d92708
``pkg/apis/v1/ec2nodeclass_validation_cel_test.go`` (Describe "CEL/Validation"). Each case names its It;
``True`` = ``To(Succeed())``. Go's ``omitempty`` is mirrored: an empty string or map field is left out."""

from __future__ import annotations

import pytest

from awsprovider.apis.ec2nodeclass import EC2NodeClass
from tests.admission.conftest import DELETE, errors_of, patched

BASE = {
    "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "nc"},
    "spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"alias": "al2023@latest"}], "role": "role-1",
             "securityGroupSelectorTerms": [{"tags": {"*": "*"}}], "subnetSelectorTerms": [{"tags": {"*": "*"}}]},
}
FAMILIES = ("AL2", "AL2023", "Bottlerocket", "Windows2019", "Windows2022", "Windows2025")
AMI, SUBNETS, SGS, CRS = ("spec.amiSelectorTerms", "spec.subnetSelectorTerms", "spec.securityGroupSelectorTerms",
                          "spec.capacityReservationSelectorTerms")
LAST_INVALID = [{"tags": {"test": "testvalue"}}, {"tags": {"test2": "testvalue2"}}, {"tags": {"test3": "testvalue3"}},
                {"tags": {"": "testvalue4"}}]


def bdm(*devices: dict[str, object]) -> dict[str, object]:
    return {"spec.blockDeviceMappings": list(devices)}


def nic(card: int, device: int, kind: str = "interface") -> dict[str, object]:
    return {"networkCardIndex": card, "deviceIndex": device, "interfaceType": kind}


CASES: list[tuple[str, dict[str, object], bool]] = [
    ("should succeed if just specifying role", {}, True),
    ("should succeed if just specifying instance profile",
     {"spec.instanceProfile": "test-instance-profile", "spec.role": DELETE}, True),
    ("should fail if specifying both instance profile and role", {"spec.instanceProfile": "test-instance-profile"},
     False),
    ("should fail if not specifying one of instance profile and role", {"spec.role": DELETE}, False),
    ("should succeed if user data is empty", {}, True),
    # Context("AMIFamily")
    *[(f"should succeed with valid families [{f}]", {AMI: [{"id": "ami-0123456789abcdef"}], "spec.amiFamily": f}, True)
      for f in (*FAMILIES, "Custom")],
    ("should fail with the ubuntu family", {AMI: [{"id": "ami-0123456789abcdef"}], "spec.amiFamily": "Ubuntu"}, False),
    *[(f"should succeed when the amiFamily matches amiSelectorTerms[].alias [{f}]",
       {AMI: [{"alias": f"{f.lower()}@latest"}], "spec.amiFamily": f}, True) for f in FAMILIES],
    *[(f"should succeed when the amiFamily is custom with amiSelectorTerms[].alias [{f}]",
       {AMI: [{"alias": f"{f.lower()}@latest"}], "spec.amiFamily": "Custom"}, True) for f in FAMILIES],
    *[(f"should fail when then amiFamily does not match amiSelectorTerms[].alias [{f} / {g}]",
       {AMI: [{"alias": f"{g.lower()}@latest"}], "spec.amiFamily": f}, False)
      for f in FAMILIES for g in FAMILIES if f != g],
    ("should fail when neither amiFamily nor an alias are specified",
     {AMI: [{"id": "ami-01234567890abcdef"}], "spec.amiFamily": DELETE}, False),
    # Context("Tags")
    ("should succeed when tags are empty", {"spec.tags": {}}, True),
    ("should succeed if tags aren't in restricted tag keys",
     {"spec.tags": {"karpenter.sh/custom-key": "value", "karpenter.sh/managed": "true", "kubernetes.io/role/key": "value"}},
     True),
    *[(f"should fail if tags contain a restricted domain key [{k}]", {"spec.tags": {k: "value"}}, False)
      for k in ("karpenter.sh/nodepool", "kubernetes.io/cluster/test", "eks:eks-cluster-name",
                "karpenter.k8s.aws/ec2nodeclass", "karpenter.sh/nodeclaim")],
    # Context("SubnetSelectorTerms") and Context("SecurityGroupSelectorTerms")
    *[case for path, ids in ((SUBNETS, "subnet-12345749"), (SGS, "sg-12345749")) for case in [
        (f"should succeed with a valid selector on tags [{path}]", {path: [{"tags": {"test": "testvalue"}}]}, True),
        (f"should succeed with a valid selector on id [{path}]", {path: [{"id": ids}]}, True),
        (f"should fail when selector terms is set to nil [{path}]", {path: DELETE}, False),
        (f"should fail when no selector terms exist [{path}]", {path: []}, False),
        (f"should fail when a selector term has no values [{path}]", {path: [{}]}, False),
        (f"should fail when a selector term has no tag map values [{path}]", {path: [{}]}, False),
        (f"should fail when a selector term has a tag map key that is empty [{path}]", {path: [{"tags": {"test": ""}}]},
         False),
        (f"should fail when a selector term has a tag map value that is empty [{path}]",
         {path: [{"tags": {"": "testvalue"}}]}, False),
        (f"should fail when the last selector is invalid [{path}]", {path: LAST_INVALID}, False),
        (f"should fail when specifying id with tags [{path}]", {path: [{"id": ids, "tags": {"test": "testvalue"}}]},
         False),
    ]],
    ("should succeed with a valid security group selector on name", {SGS: [{"name": "testname"}]}, True),
    ("should fail when specifying id with name", {SGS: [{"id": "sg-12345749", "name": "testname"}]}, False),
    ("should fail when specifying name with tags", {SGS: [{"name": "testname", "tags": {"test": "testvalue"}}]}, False),
    # Context("CapacityReservationSelectorTerms")
    ("should succeed with a valid capacity reservation selector on tags", {CRS: [{"tags": {"test": "testvalue"}}]}, True),
    ("should succeed with a valid capacity reservation selector on id", {CRS: [{"id": "cr-12345749"}]}, True),
    ("should succeed for a valid ownerID", {CRS: [{"ownerID": "012345678901", "tags": {"test": "testvalue"}}]}, True),
    ("should fail with a capacity reservation selector on a malformed id", {CRS: [{"id": "r-12345749"}]}, False),
    ("should succeed when capacity group selector terms is set to nil", {CRS: DELETE}, True),
    ("should fail when a capacity reservation selector term has no values", {CRS: [{}]}, False),
    ("should fail when a capacity reservation selector term has a tag map key that is empty",
     {CRS: [{"tags": {"test": ""}}]}, False),
    ("should fail when a capacity reservation selector term has a tag map value that is empty",
     {CRS: [{"tags": {"": "testvalue"}}]}, False),
    ("should fail when the last capacity reservation selector is invalid", {CRS: LAST_INVALID}, False),
    ("should fail when specifying id with tags in a single term",
     {CRS: [{"id": "cr-12345749", "tags": {"test": "testvalue"}}]}, False),
    ("should fail when specifying id with ownerID in a single term",
     {CRS: [{"ownerID": "012345678901", "id": "cr-12345749"}]}, False),
    ("should fail when the ownerID is malformed", {CRS: [{"ownerID": "01234567890", "tags": {"test": "testvalue"}}]},
     False),
    ("should fail when the ownerID is set by itself", {CRS: [{"ownerID": "012345678901"}]}, False),
    ("should succeed with a valid instanceMatchCriteria 'open'", {CRS: [{"instanceMatchCriteria": "open"}]}, True),
    ("should succeed with a valid instanceMatchCriteria 'targeted'", {CRS: [{"instanceMatchCriteria": "targeted"}]},
     True),
    ("should succeed with instanceMatchCriteria combined with tags",
     {CRS: [{"instanceMatchCriteria": "open", "tags": {"test": "testvalue"}}]}, True),
    ("should succeed with instanceMatchCriteria combined with ownerID and tags",
     {CRS: [{"instanceMatchCriteria": "targeted", "ownerID": "012345678901", "tags": {"test": "testvalue"}}]}, True),
    ("should fail with invalid instanceMatchCriteria value", {CRS: [{"instanceMatchCriteria": "invalid"}]}, False),
    ("should fail when specifying id with instanceMatchCriteria",
     {CRS: [{"id": "cr-12345749", "instanceMatchCriteria": "open"}]}, False),
    # Context("AMISelectorTerms") (the alias-free terms need an amiFamily: the base sets AL2023)
    ("should succeed with a valid ami selector on alias", {AMI: [{"alias": "al2023@latest"}]}, True),
    ("should succeed with a valid ami selector on tags", {AMI: [{"tags": {"test": "testvalue"}}]}, True),
    ("should succeed with a valid ami selector on id", {AMI: [{"id": "ami-12345749"}]}, True),
    ("should succeed with a valid ami selector on name", {AMI: [{"name": "testname"}]}, True),
    ("should succeed with a valid ami selector on name and owner", {AMI: [{"name": "testname", "owner": "testowner"}]},
     True),
    ("should succeed when an ami selector term has an owner key with tags",
     {AMI: [{"owner": "testowner", "tags": {"test": "testvalue"}}]}, True),
    ("should fail when a ami selector term has no values", {AMI: [{}]}, False),
    ("should fail when a ami selector term has a tag map key that is empty", {AMI: [{"tags": {"test": ""}}]}, False),
    ("should fail when a ami selector term has a tag map value that is empty", {AMI: [{"tags": {"": "testvalue"}}]},
     False),
    ("should fail when the last ami selector is invalid", {AMI: LAST_INVALID}, False),
    ("should fail when specifying alias with other terms", {AMI: [{"alias": "al2023@latest"}, {"id": "ami-1234"}]},
     False),
    ("should fail for an alias with an invalid family", {AMI: [{"alias": "ubuntu@latest"}]}, False),
    *[(f"windows families may only use version latest [{f}]",
       {AMI: [{"alias": f"{f.lower()}@v1.0.0"}], "spec.amiFamily": DELETE}, False)
      for f in ("Windows2019", "Windows2022", "Windows2025")],
    # Context("MetadataOptions")
    ("should succeed for valid inputs [metadataOptions]", {"spec.metadataOptions": {
        "httpEndpoint": "disabled", "httpProtocolIPv6": "enabled", "httpPutResponseHopLimit": 34,
        "httpTokens": "optional"}}, True),
    ("should fail for invalid for HTTPEndpoint", {"spec.metadataOptions": {"httpEndpoint": "test"}}, False),
    ("should fail for invalid for HTTPProtocolIPv6", {"spec.metadataOptions": {"httpProtocolIPv6": "test"}}, False),
    ("should fail for invalid for HTTPPutResponseHopLimit", {"spec.metadataOptions": {"httpPutResponseHopLimit": -5}},
     False),
    ("should fail for invalid for HTTPTokens", {"spec.metadataOptions": {"httpTokens": "test"}}, False),
    # Context("BlockDeviceMappings") — resource.NewScaledQuantity(500, Giga) marshals as "500G"
    ("should succeed if more than one root volume is specified",
     bdm({"deviceName": "map-device-1", "ebs": {"volumeSize": "500G"}, "rootVolume": True},
         {"deviceName": "map-device-2", "ebs": {"volumeSize": "50T"}}), True),
    ("should succeed for valid VolumeSize in G", bdm({"deviceName": "map-device-1", "ebs": {"volumeSize": "58G"}}),
     True),
    ("should succeed for valid VolumeSize in T", bdm({"deviceName": "map-device-1", "ebs": {"volumeSize": "45T"}}),
     True),
    ("should fail if more than one root volume is specified",
     bdm({"deviceName": "map-device-1", "ebs": {"volumeSize": "50Gi"}, "rootVolume": True},
         {"deviceName": "map-device-2", "ebs": {"volumeSize": "50Gi"}, "rootVolume": True}), False),
    ("should fail VolumeSize is less then 1Gi/1G", bdm({"deviceName": "map-device-1", "ebs": {"volumeSize": "1M"}}),
     False),
    ("should fail VolumeSize is greater then 64T", bdm({"deviceName": "map-device-1", "ebs": {"volumeSize": "100T"}}),
     False),
    ("should fail for VolumeSize that do not parse into quantity values",
     bdm({"deviceName": "map-device-1", "ebs": {"volumeSize": "BAD"}}), False),
    ("should fail if VolumeInitializationRate set but SnapshotID not specified",
     bdm({"deviceName": "map-device-1", "ebs": {"volumeSize": "0", "volumeInitializationRate": 100}}), False),
    ("should fail if VolumeInitializationRate too low",
     bdm({"deviceName": "map-device-1", "ebs": {"snapshotID": "snap-0123456789", "volumeInitializationRate": 99}}),
     False),
    ("should fail if VolumeInitializationRate too high",
     bdm({"deviceName": "map-device-1", "ebs": {"snapshotID": "snap-0123456789", "volumeInitializationRate": 888}}),
     False),
    # Context("NetworkInterfaces")
    ("should succeed with valid multiple network interfaces",
     {"spec.networkInterfaces": [nic(0, 0), nic(1, 0, "efa-only"), nic(2, 0, "efa-only")]}, True),
    ("should succeed when network interfaces is empty", {"spec.networkInterfaces": []}, True),
    ("should fail with an invalid interface type", {"spec.networkInterfaces": [nic(0, 0, "invalid")]}, False),
    ("should fail with a negative NetworkCardIndex", {"spec.networkInterfaces": [nic(0, 0), nic(-1, 0)]}, False),
    ("should fail with a negative DeviceIndex", {"spec.networkInterfaces": [nic(0, 0), nic(0, -1)]}, False),
    ("should fail with duplicate Network Interface and Device Index fields",
     {"spec.networkInterfaces": [nic(0, 0), nic(0, 0)]}, False),
    ("should fail with no primary network interface", {"spec.networkInterfaces": [nic(1, 0)]}, False),
    ("should fail when primary network interface is not ENA", {"spec.networkInterfaces": [nic(0, 0, "efa-only")]},
     False),
    ("should fail when multiple EFA devices on one network card",
     {"spec.networkInterfaces": [nic(0, 0), nic(1, 0, "efa-only"), nic(1, 1, "efa-only")]}, False),
    # Context("ConnectionTracking")
    ("should fail when connectionTracking is specified with no fields set", {"spec.connectionTracking": {}}, False),
    ("should succeed with valid tcpEstablishedTimeout", {"spec.connectionTracking": {"tcpEstablishedTimeout": 3600}},
     True),
    ("should succeed with valid udpStreamTimeout", {"spec.connectionTracking": {"udpStreamTimeout": 120}}, True),
    ("should succeed with valid udpTimeout", {"spec.connectionTracking": {"udpTimeout": 45}}, True),
    ("should succeed with all valid connection tracking settings", {"spec.connectionTracking": {
        "tcpEstablishedTimeout": 3600, "udpStreamTimeout": 120, "udpTimeout": 45}}, True),
    *[(f"should fail when {field} is {side} ({limit}s)", {"spec.connectionTracking": {field: value}}, False)
      for field, side, limit, value in (
          ("tcpEstablishedTimeout", "below minimum", 60, 59), ("tcpEstablishedTimeout", "above maximum", 432000, 432001),
          ("udpStreamTimeout", "below minimum", 60, 59), ("udpStreamTimeout", "above maximum", 180, 181),
          ("udpTimeout", "below minimum", 30, 29), ("udpTimeout", "above maximum", 60, 61))],
    # Context("Role Immutability")
    ("should fail if role is not defined", {"spec.role": DELETE}, False),
]


@pytest.mark.parametrize(("it", "patch", "ok"), CASES, ids=[c[0] for c in CASES])
def test_upstream_cel_validation(it: str, patch: dict[str, object], ok: bool) -> None:
    errors = errors_of(patched(BASE, patch), EC2NodeClass)
    assert (errors == []) is ok, errors
