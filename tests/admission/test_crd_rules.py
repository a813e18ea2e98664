"""Every CEL rule of the shipped NodePool and EC2NodeClass CRDs: one manifest it rejects (with the
API server's error, the rule's own ``message`` at the rule's field path) and one it accepts.

The table is checked against the CRD files themselves: a rule added upstream and shipped without a
case here fails :func:`test_every_rule_has_a_failing_and_a_passing_case`.
"""

from __future__ import annotations

import re
from importlib.resources import files
from typing import Any

import pytest

from awsprovider.apis.ec2nodeclass import EC2NodeClass
from karpy.admission import KARPENTER_CRDS, load_crd
from karpy.admission.schema import Schema
from tests.admission.conftest import DELETE, errors_of, patched

NODEPOOL = {
    "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "np"},
    "spec": {"template": {"spec": {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
        "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}],
    }}},
}
# the AWS provider's ec2nodeclass_validation_cel_test.go BeforeEach
EC2NODECLASS = {
    "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "nc"},
    "spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"alias": "al2023@latest"}], "role": "role-1",
             "securityGroupSelectorTerms": [{"tags": {"*": "*"}}], "subnetSelectorTerms": [{"tags": {"*": "*"}}]},
}
REQS = "spec.template.spec.requirements"
LABELS = "spec.template.metadata.labels"
AMI = "spec.amiSelectorTerms"


def req(key: str, op: str = "In", values: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"key": key, "operator": op, **({"values": values} if values is not None else {}), **extra}


# message -> (failing patch, error field path, passing patch). The message is the rule's `message`.
NODEPOOL_RULES: dict[str, tuple[dict[str, Any], str, dict[str, Any]]] = {
    "only 'limits.nodes' is supported on static NodePools":
        ({"spec.replicas": 2, "spec.limits": {"cpu": "10"}}, "spec", {"spec.replicas": 2, "spec.limits": {"nodes": "3"}}),
    "'weight' is not supported on static NodePools":
        ({"spec.replicas": 2, "spec.weight": 10}, "spec", {"spec.weight": 10}),
    "'schedule' must be set with 'duration'":
        ({"spec.disruption.budgets": [{"nodes": "1", "schedule": "@daily"}]}, "spec.disruption.budgets",
         {"spec.disruption.budgets": [{"nodes": "1", "schedule": "@daily", "duration": "1h"}]}),
    'label domain "karpenter.sh" is restricted':
        ({LABELS: {"karpenter.sh/team": "a"}}, "spec.template.metadata.labels",
         {LABELS: {"karpenter.sh/capacity-type": "spot"}}),
    'label "karpenter.sh/nodepool" is restricted':
        ({LABELS: {"karpenter.sh/nodepool": "a"}}, "spec.template.metadata.labels", {LABELS: {"team": "a"}}),
    'label "kubernetes.io/hostname" is restricted':
        ({LABELS: {"kubernetes.io/hostname": "a"}}, "spec.template.metadata.labels",
         {LABELS: {"kubernetes.io/arch": "amd64"}}),
    "group may not be empty": ({"spec.template.spec.nodeClassRef.group": ""},
                               "spec.template.spec.nodeClassRef.group", {}),
    "kind may not be empty": ({"spec.template.spec.nodeClassRef.kind": ""}, "spec.template.spec.nodeClassRef.kind", {}),
    "name may not be empty": ({"spec.template.spec.nodeClassRef.name": ""}, "spec.template.spec.nodeClassRef.name", {}),
    "requirements with operator 'In' must have a value defined":
        ({REQS: [req("team", "In", [])]}, REQS, {REQS: [req("team", "In", ["a"])]}),
    "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value":
        ({REQS: [req("karpenter.k8s.aws/instance-generation", "Gte", ["-1"])]}, REQS,
         {REQS: [req("karpenter.k8s.aws/instance-generation", "Gte", ["7"])]}),
    "requirements with 'minValues' must have at least that many values specified in the 'values' field":
        ({REQS: [req("node.kubernetes.io/instance-type", "In", ["a"], minValues=2)]}, REQS,
         {REQS: [req("node.kubernetes.io/instance-type", "In", ["a", "b"], minValues=2)]}),
    'label domain "karpenter.sh" is restricted #requirement key':
        ({REQS: [req("karpenter.sh/team", "In", ["a"])]}, "spec.template.spec.requirements[0].key",
         {REQS: [req("karpenter.sh/capacity-type", "In", ["spot"])]}),
    'label "karpenter.sh/nodepool" is restricted #requirement key':
        ({REQS: [req("karpenter.sh/nodepool", "In", ["a"])]}, "spec.template.spec.requirements[0].key",
         {REQS: [req("team", "In", ["a"])]}),
    'label "kubernetes.io/hostname" is restricted #requirement key':
        ({REQS: [req("kubernetes.io/hostname", "In", ["a"])]}, "spec.template.spec.requirements[0].key",
         {REQS: [req("kubernetes.io/arch", "In", ["amd64"])]}),
}

EC2NODECLASS_RULES: dict[str, tuple[dict[str, Any], str, dict[str, Any]]] = {
    "must specify exactly one of ['role', 'instanceProfile']":
        ({"spec.instanceProfile": "ip"}, "spec", {"spec.role": DELETE, "spec.instanceProfile": "ip"}),
    "must specify amiFamily if amiSelectorTerms does not contain an alias":
        ({"spec.amiFamily": DELETE, AMI: [{"id": "ami-123"}]}, "spec", {AMI: [{"id": "ami-123"}]}),
    "expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']":
        ({AMI: [{"owner": "self"}]}, AMI, {AMI: [{"name": "img", "owner": "self"}]}),
    "'id' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms":
        ({AMI: [{"id": "ami-123", "name": "x"}]}, AMI, {AMI: [{"id": "ami-123"}]}),
    "'alias' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms":
        ({AMI: [{"alias": "al2023@latest", "name": "x"}]}, AMI, {AMI: [{"alias": "al2023@v20240807"}]}),
    "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms":
        ({AMI: [{"alias": "al2023@latest"}, {"name": "x"}]}, AMI, {}),
    "'alias' is improperly formatted, must match the format 'family@version'":
        ({AMI: [{"alias": "al2023"}]}, "spec.amiSelectorTerms[0].alias", {}),
    "family is not supported, must be one of the following: 'al2', 'al2023', 'bottlerocket', 'windows2019', "
    "'windows2022', 'windows2025'":
        ({"spec.amiFamily": "Custom", AMI: [{"alias": "ubuntu@latest"}]}, "spec.amiSelectorTerms[0].alias",
         {"spec.amiFamily": "Custom", AMI: [{"alias": "bottlerocket@latest"}]}),
    "windows families may only specify version 'latest'":
        ({"spec.amiFamily": "Windows2022", AMI: [{"alias": "windows2022@v1"}]}, "spec.amiSelectorTerms[0].alias",
         {"spec.amiFamily": "Windows2022", AMI: [{"alias": "windows2022@latest"}]}),
    "empty tag keys or values aren't supported #amiSelectorTerms]":
        ({"spec.amiFamily": "AL2023", AMI: [{"tags": {"a": ""}}]}, "spec.amiSelectorTerms[0].tags",
         {AMI: [{"tags": {"a": "b"}}]}),
    "must have only one blockDeviceMappings with rootVolume":
        ({"spec.blockDeviceMappings": [{"deviceName": "/dev/xvda", "rootVolume": True, "ebs": {"volumeSize": "20Gi"}},
                                       {"deviceName": "/dev/xvdb", "rootVolume": True, "ebs": {"volumeSize": "20Gi"}}]},
         "spec.blockDeviceMappings",
         {"spec.blockDeviceMappings": [{"deviceName": "/dev/xvda", "rootVolume": True, "ebs": {"volumeSize": "20Gi"}},
                                       {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "20Gi"}}]}),
    "snapshotID or volumeSize must be defined":
        ({"spec.blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"encrypted": True}}]},
         "spec.blockDeviceMappings[0].ebs",
         {"spec.blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"snapshotID": "snap-0123"}}]}),
    "snapshotID must be set when volumeInitializationRate is set":
        ({"spec.blockDeviceMappings": [{"deviceName": "/dev/xvda",
                                        "ebs": {"volumeSize": "20Gi", "volumeInitializationRate": 200}}]},
         "spec.blockDeviceMappings[0].ebs",
         {"spec.blockDeviceMappings": [{"deviceName": "/dev/xvda",
                                        "ebs": {"snapshotID": "snap-0123", "volumeInitializationRate": 200}}]}),
    "expected at least one, got none, ['tags', 'id', 'instanceMatchCriteria']":
        ({"spec.capacityReservationSelectorTerms": [{"ownerID": "012345678901"}]}, "spec.capacityReservationSelectorTerms",
         {"spec.capacityReservationSelectorTerms": [{"id": "cr-12345749"}]}),
    "'id' is mutually exclusive, cannot be set along with other fields in a capacity reservation selector term":
        ({"spec.capacityReservationSelectorTerms": [{"id": "cr-12345749", "tags": {"a": "b"}}]},
         "spec.capacityReservationSelectorTerms",
         {"spec.capacityReservationSelectorTerms": [{"tags": {"a": "b"}}]}),
    "empty tag keys or values aren't supported #capacityReservationSelectorTerms]":
        ({"spec.capacityReservationSelectorTerms": [{"tags": {"": "b"}}]},
         "spec.capacityReservationSelectorTerms[0].tags", {}),
    "at least one of tcpEstablishedTimeout, udpStreamTimeout, or udpTimeout must be set":
        ({"spec.connectionTracking": {}}, "spec.connectionTracking", {"spec.connectionTracking": {"udpTimeout": 30}}),
    "instanceProfile cannot be empty": ({"spec.role": DELETE, "spec.instanceProfile": ""}, "spec.instanceProfile", {}),
    "networkInterfaces must include a primary interface with interfaceType='interface'":
        ({"spec.networkInterfaces": [{"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "interface"}]},
         "spec.networkInterfaces",
         {"spec.networkInterfaces": [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}]}),
    "networkInterfaces must not have duplicate networkCardIndex and deviceIndex pairs, and can have at most one efa "
    "device per network card":
        ({"spec.networkInterfaces": [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
                                     {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}]},
         "spec.networkInterfaces",
         {"spec.networkInterfaces": [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
                                     {"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"}]}),
    "expected at least one, got none, ['name', 'id']":
        ({"spec.placementGroupSelector": {}}, "spec.placementGroupSelector",
         {"spec.placementGroupSelector": {"name": "pg"}}),
    "'name' and 'id' are mutually exclusive":
        ({"spec.placementGroupSelector": {"name": "pg", "id": "pg-0123"}}, "spec.placementGroupSelector",
         {"spec.placementGroupSelector": {"id": "pg-0123"}}),
    "role cannot be empty": ({"spec.role": ""}, "spec.role", {}),
    "securityGroupSelectorTerms cannot be empty":
        ({"spec.securityGroupSelectorTerms": []}, "spec.securityGroupSelectorTerms", {}),
    "expected at least one, got none, ['tags', 'id', 'name']":
        ({"spec.securityGroupSelectorTerms": [{}]}, "spec.securityGroupSelectorTerms",
         {"spec.securityGroupSelectorTerms": [{"name": "sg"}]}),
    "'id' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term":
        ({"spec.securityGroupSelectorTerms": [{"id": "sg-0123", "tags": {"a": "b"}}]}, "spec.securityGroupSelectorTerms",
         {"spec.securityGroupSelectorTerms": [{"id": "sg-0123"}]}),
    "'name' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term":
        ({"spec.securityGroupSelectorTerms": [{"name": "sg", "tags": {"a": "b"}}]}, "spec.securityGroupSelectorTerms",
         {"spec.securityGroupSelectorTerms": [{"name": "sg"}]}),
    "empty tag keys or values aren't supported #securityGroupSelectorTerms]":
        ({"spec.securityGroupSelectorTerms": [{"tags": {"a": ""}}]}, "spec.securityGroupSelectorTerms[0].tags", {}),
    "subnetSelectorTerms cannot be empty": ({"spec.subnetSelectorTerms": []}, "spec.subnetSelectorTerms", {}),
    "expected at least one, got none, ['tags', 'id']":
        ({"spec.subnetSelectorTerms": [{}]}, "spec.subnetSelectorTerms", {"spec.subnetSelectorTerms": [{"id": "subnet-0123"}]}),
    "'id' is mutually exclusive, cannot be set with a combination of other fields in a subnet selector term":
        ({"spec.subnetSelectorTerms": [{"id": "subnet-0123", "tags": {"a": "b"}}]}, "spec.subnetSelectorTerms",
         {"spec.subnetSelectorTerms": [{"tags": {"a": "b"}}]}),
    "empty tag keys or values aren't supported #subnetSelectorTerms]":
        ({"spec.subnetSelectorTerms": [{"tags": {"a": ""}}]}, "spec.subnetSelectorTerms[0].tags", {}),
    "empty tag keys aren't supported": ({"spec.tags": {"": "b"}}, "spec.tags", {"spec.tags": {"team": "b"}}),
    "tag contains a restricted tag matching eks:eks-cluster-name":
        ({"spec.tags": {"eks:eks-cluster-name": "b"}}, "spec.tags", {"spec.tags": {"eks:other": "b"}}),
    "tag contains a restricted tag matching kubernetes.io/cluster/":
        ({"spec.tags": {"kubernetes.io/cluster/x": "owned"}}, "spec.tags", {"spec.tags": {"kubernetes.io/x": "b"}}),
    "tag contains a restricted tag matching karpenter.sh/nodepool":
        ({"spec.tags": {"karpenter.sh/nodepool": "b"}}, "spec.tags", {"spec.tags": {"karpenter.sh/discovery": "b"}}),
    "tag contains a restricted tag matching karpenter.sh/nodeclaim":
        ({"spec.tags": {"karpenter.sh/nodeclaim": "b"}}, "spec.tags", {}),
    "tag contains a restricted tag matching karpenter.k8s.aws/ec2nodeclass":
        ({"spec.tags": {"karpenter.k8s.aws/ec2nodeclass": "b"}}, "spec.tags", {}),
}
for family, alias in (("AL2", "al2"), ("AL2023", "al2023"), ("Bottlerocket", "bottlerocket"),
                      ("Windows2019", "windows2019"), ("Windows2022", "windows2022"), ("Windows2025", "windows2025")):
    other = "AL2" if family != "AL2" else "AL2023"
    article = "an" if family.startswith("AL") else "a"
    EC2NODECLASS_RULES[f"if set, amiFamily must be '{family}' or 'Custom' when using {article} {family} alias"] = (
        {"spec.amiFamily": other, AMI: [{"alias": f"{alias}@latest"}]}, "spec",
        {"spec.amiFamily": "Custom", AMI: [{"alias": f"{alias}@latest"}]})

EC2NODECLASS_CRD = EC2NodeClass.CRD
assert str(EC2NODECLASS_CRD) == str(files("awsprovider") / "crds" / "karpenter.k8s.aws_ec2nodeclasses.yaml")
TABLES = [("NodePool", NODEPOOL, NODEPOOL_RULES, KARPENTER_CRDS[("karpenter.sh", "NodePool")]),
          ("EC2NodeClass", EC2NODECLASS, EC2NODECLASS_RULES, EC2NODECLASS_CRD)]
#: the model class that names the kind's CRD (the provider registers EC2NodeClass's)
CLASSES = {"NodePool": None, "EC2NodeClass": EC2NodeClass}


def _message(key: str) -> str:
    return key.split(" #")[0]


def _cases() -> list[tuple[str, dict[str, Any], str, dict[str, Any], str, dict[str, Any]]]:
    return [(kind, base, key, *case) for kind, base, table, _ in TABLES for key, case in table.items()]


@pytest.mark.parametrize(("kind", "base", "key", "fail", "where", "ok"), _cases(), ids=[f"{c[0]}: {c[2]}" for c in _cases()])
def test_rule_rejects_with_its_message_and_accepts(kind: str, base: dict[str, Any], key: str, fail: dict[str, Any],
                                                    where: str, ok: dict[str, Any]) -> None:
    message = _message(key)
    errors = errors_of(patched(base, fail), CLASSES[kind])
    # the API server's line: the rule's field path, the value (omitted for objects and lists), the message
    assert any(e.startswith(f"{where}: Invalid value: ") and e.endswith(f": {message}") for e in errors), errors
    # an empty list also fails the "!self.all(...)" mutual-exclusion rules of its node, as upstream
    assert all(e.startswith(f"{where}: ") for e in errors), errors
    assert errors_of(patched(base, ok), CLASSES[kind]) == []


def _rules(schema: Schema, path: str, seen: set[int], out: list[tuple[str, str, bool]]) -> None:
    if id(schema) in seen:
        return
    seen.add(id(schema))
    out.extend((path, r.message, r.uses_old_self) for r in schema.rules)
    for k, p in schema.properties.items():
        _rules(p, f"{path}.{k}" if path else k, seen, out)
    if schema.items is not None:
        _rules(schema.items, f"{path}[]", seen, out)
    if schema.additional is not None:
        _rules(schema.additional, f"{path}[*]", seen, out)


@pytest.mark.parametrize(("kind", "table", "source"), [(k, t, s) for k, _, t, s in TABLES], ids=["NodePool", "EC2NodeClass"])
def test_every_rule_has_a_failing_and_a_passing_case(kind: str, table: dict[str, Any], source: Any) -> None:
    crd = load_crd(source)
    found: list[tuple[str, str, bool]] = []
    for schema in crd.versions.values():
        _rules(schema, "", set(), found)
    create_rules = {(p, m) for p, m, old in found if not old}
    covered = {(re.sub(r"\[\d+\]", "[]", where), _message(k)) for k, (_, where, _) in table.items()}
    assert create_rules - covered == set(), "CRD rules without a case"
    assert covered - create_rules == set(), "cases for rules the CRD does not have"
    # transition rules (oldSelf) are never evaluated on create: documented, and asserted here
    assert all(old for _, m, old in found if "immutable" in m or "Cannot transition" in m)
