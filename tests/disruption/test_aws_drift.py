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
