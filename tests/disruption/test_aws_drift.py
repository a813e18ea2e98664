"""Drift through the AWS provider (aws:pkg/cloudprovider/drift.go) triggered by an ``apply`` event,
replacements launched through CreateFleet against moto, on the real 2026-07-20 us-east-1 table."""

from __future__ import annotations

from pathlib import Path

import karpy
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COOKBOOK = ROOT / "examples" / "generation-preference"


def nodeclass(**spec_changes):
    doc = yaml.safe_load((COOKBOOK / "common" / "ec2nodeclass.yaml").read_text())
    doc["spec"].update(spec_changes)
    return doc


def run(changed):
    events = [{"at": "10m", "apply": changed}]
    return karpy.simulate([COOKBOOK / "01-one-nodepool", COOKBOOK / "common"], prices="2026-07-20",
                          disruption=True, until="30m", events=events)


# upstream: aws:pkg/cloudprovider/suite_test.go "should return drifted if the static fields of the EC2NodeClass change" (NodeClassDrift)
def test_static_field_change_drifts_and_replaces_through_createfleet():
    result = run(nodeclass(tags={"team": "b"}))
    doc = result.to_document()
    drifts = [d for d in doc["disruptions"] if d["method"] == "drift"]
    assert drifts and drifts[0]["decision"] == "replace" and drifts[0]["t"] >= 600
    old = drifts[0]["candidates"][0]
    [new] = drifts[0]["replacements"]
    claims = {nc["name"]: nc for nc in doc["nodeclaims"]}
    assert claims[old]["deleted_by"] == "drift"
    assert claims[new]["launched"] and claims[new]["fleet"]["overrides"]  # a real CreateFleet request
    reasons = result.simulation.launches[0].launched.status.conditions
    assert any(c.type == "Drifted" and c.reason == "NodeClassDrift" for c in reasons)
    running = [p for p in doc["pods"].values() if p["phase"] == "Running"]
    assert running and all(p["node"] == new for p in running)


# upstream: aws:pkg/cloudprovider/suite_test.go "should return drifted if the subnet is not valid" (SubnetDrift)
def test_subnet_selector_change_is_subnet_drift():
    result = run(nodeclass(subnetSelectorTerms=[{"tags": {"karpenter.sh/discovery": "other"}}]))
    first = result.simulation.launches[0].launched
    drifted = [c for c in first.status.conditions if c.type == "Drifted"]
    # karpy's mocked network gives the new selector its own subnets (in a VPC of their own, so the
    # security groups resolve differently too; drift.go checks security groups before subnets);
    # selector terms are not part of the static hash, so this is never NodeClassDrift
    assert drifted and drifted[0].reason in ("SecurityGroupDrift", "SubnetDrift")
    assert any(d["method"] == "drift" for d in result.to_document()["disruptions"])


def test_static_hash_ignores_selector_terms():
    from awsprovider.apis.ec2nodeclass import EC2NodeClass
    from awsprovider.drift import static_hash

    base = EC2NodeClass.model_validate(nodeclass())
    moved = EC2NodeClass.model_validate(nodeclass(subnetSelectorTerms=[{"tags": {"x": "y"}}],
                                                  securityGroupSelectorTerms=[{"tags": {"x": "y"}}]))
    tagged = EC2NodeClass.model_validate(nodeclass(tags={"team": "b"}))
    assert static_hash(base) == static_hash(moved) != static_hash(tagged)


def test_the_hash_kept_on_a_resolution_is_its_nodeclass_hash_and_goes_with_it():
    """resolved_static_hash (asked per NodeClaim per round) against static_hash of the resolution's
    EC2NodeClass: kept on the resolution, not on a copy made of it, and a changed EC2NodeClass applied
    to the provider resolves to its own hash."""
    import dataclasses

    from awsprovider.apis.ec2nodeclass import EC2NodeClass
    from awsprovider.drift import resolved_static_hash, static_hash
    from awsprovider.nodeclass import ResolvedNodeClass

    base = EC2NodeClass.model_validate(nodeclass())
    tagged = EC2NodeClass.model_validate(nodeclass(tags={"team": "b"}))
    resolved = ResolvedNodeClass(base, ())
    assert resolved_static_hash(resolved) == static_hash(base) == resolved.derived["static_hash"]
    other = dataclasses.replace(resolved, nodeclass=tagged)
    assert other.derived == {} and resolved_static_hash(other) == static_hash(tagged) != static_hash(base)
    assert resolved_static_hash(resolved) == static_hash(base)


def test_an_unchanged_default_nodeclass_does_not_drift():
    """Regression: moto's CreateFleet reports the VPC's "default" security group on the instance, not the
    launch template's; karpy's launch record is the instance's truth, so nothing drifts (it used to drift
    every node with SecurityGroupDrift, replacing them in a loop)."""
    docs = [yaml.safe_load((ROOT / "tests" / "sim" / "data" / "spot-interruption.yaml").read_text().split("---")[0])]
    docs[0]["spec"]["disruption"] = {"consolidateAfter": "Never"}
    docs.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                 "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                          "template": {"metadata": {"labels": {"app": "web"}},
                                       "spec": {"containers": [{"name": "c", "image": "x",
                                                                "resources": {"requests": {"cpu": "1"}}}]}}}})
    result = karpy.simulate(docs, prices="2026-07-20", disruption=True, until="10m")
    doc = result.to_document()
    assert doc["nodeclaims"] and all(n["launched"] for n in doc["nodeclaims"])
    assert [d for d in doc["disruptions"] if d["method"] == "drift"] == []
    assert not any(c.type == "Drifted" for rec in result.simulation.launches for c in rec.launched.status.conditions)


# -- AMIDrift from the EC2NodeClass's status.amis; CapacityReservationDrift and PlacementGroupDrift ------------

def _amis(*pairs):
    return [{"id": ami, "name": ami, "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": [arch]}]}
            for ami, arch in pairs]


# upstream: aws:pkg/cloudprovider/suite_test.go "should return drifted if the AMI is not valid" (AMIDrift: the
# selector now resolves to other AMIs, so the node's image is no longer the one its instance type maps to)
# and "should not return drifted if the NodeClaim is valid" (the replacement, on the new AMI)
def test_ami_no_longer_selected_is_ami_drift_and_replacements_use_the_new_ami():
    old = nodeclass()
    old["status"] = {"amis": _amis(("ami-0aaaaaaaaaaaaaaa1", "amd64"), ("ami-0aaaaaaaaaaaaaaa2", "arm64"))}
    new = nodeclass(amiSelectorTerms=[{"id": "ami-0bbbbbbbbbbbbbbb1"}, {"id": "ami-0bbbbbbbbbbbbbbb2"}])
    new["status"] = {"amis": _amis(("ami-0bbbbbbbbbbbbbbb1", "amd64"), ("ami-0bbbbbbbbbbbbbbb2", "arm64"))}
    result = karpy.simulate([COOKBOOK / "01-one-nodepool", COOKBOOK / "common" / "workload.yaml", old],
                            prices="2026-07-20", disruption=True, until="30m", events=[{"at": "10m", "apply": new}])
    first = result.simulation.launches[0].launched
    assert first.status.image_id.startswith("ami-0aaaaaaaaaaaaaaa")  # launched with the status AMI
    drifted = [c for c in first.status.conditions if c.type == "Drifted"]
    assert drifted and drifted[0].reason == "AMIDrift"
    doc = result.to_document()
    drifts = [d for d in doc["disruptions"] if d["method"] == "drift"]
    assert drifts and drifts[0]["t"] >= 600
    new_claim = next(r.launched for r in result.simulation.launches if r.name in drifts[0]["replacements"])
    assert new_claim.status.image_id.startswith("ami-0bbbbbbbbbbbbbbb")
    assert not any(c.type == "Drifted" for c in new_claim.status.conditions)  # no drift loop


class _Provider:
    def expected_ami(self, nodeclaim):
        return None


def _drift(nodeclaim_labels=None, instance=None, nodeclass_attrs=None):
    from types import SimpleNamespace

    from awsprovider.drift import is_drifted

    nc = SimpleNamespace(metadata=SimpleNamespace(annotations={}, labels=dict(nodeclaim_labels or {})),
                         status=SimpleNamespace(image_id="ami-1"))
    rnc = SimpleNamespace(security_groups=(("sg-1", "default"),), subnets=(SimpleNamespace(id="subnet-1"),),
                          nodeclass=SimpleNamespace(status=SimpleNamespace()), **(nodeclass_attrs or {}))
    inst = {"SecurityGroups": [{"GroupId": "sg-1"}], "SubnetId": "subnet-1", **(instance or {})}
    return is_drifted(_Provider(), nc, rnc, inst, "h", "v", "v1")


# upstream: aws:pkg/cloudprovider/suite_test.go "should dynamically drift nodeclaims for capacity reservations" and
# "should not drift when capacity reservation falls back to on-demand" (drift.go isCapacityReservationDrifted)
def test_capacity_reservation_no_longer_selected_is_capacity_reservation_drift():
    assert _drift(instance={"CapacityReservationId": "cr-1"}, nodeclass_attrs={"capacity_reservations": ["cr-2"]}) \
        == "CapacityReservationDrift"
    assert _drift(instance={"CapacityReservationId": "cr-1"}, nodeclass_attrs={"capacity_reservations": ["cr-1"]}) \
        is None
    assert _drift(nodeclass_attrs={"capacity_reservations": []}) is None  # not launched into a reservation


# aws:pkg/cloudprovider/drift.go isPlacementGroupDrifted ("placementGroupSelector was added, removed, or changed";
# the provider's suite has no It for it at 1d92708)
def test_placement_group_label_against_the_nodeclass_placement_group():
    label = {"karpenter.k8s.aws/placement-group-id": "pg-1"}
    assert _drift(nodeclaim_labels=label) == "PlacementGroupDrift"  # selector removed
    assert _drift(nodeclass_attrs={"placement_group_id": "pg-1"}) == "PlacementGroupDrift"  # selector added
    assert _drift(nodeclaim_labels=label, nodeclass_attrs={"placement_group_id": "pg-1"}) is None
    assert _drift() is None


# upstream: aws:pkg/cloudprovider/suite_test.go "should return drifted if there are multiple drift reasons"
# (drift.go isNodeClassDrifted: security groups, then subnets, then capacity reservations, then placement)
def test_aws_drift_reason_order():
    both = _drift(nodeclaim_labels={"karpenter.k8s.aws/placement-group-id": "pg-1"},
                  instance={"SubnetId": "subnet-9", "CapacityReservationId": "cr-1"})
    assert both == "SubnetDrift"
    assert _drift(nodeclaim_labels={"karpenter.k8s.aws/placement-group-id": "pg-1"},
                  instance={"CapacityReservationId": "cr-1"}) == "CapacityReservationDrift"
