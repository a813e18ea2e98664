"""karpy.simulate with the AWS provider found through the entry point, on the bundled example."""

from __future__ import annotations

import json

import pytest

import karpy
from karpy.cli import bundled_example


@pytest.fixture(scope="module")
def example_result():
    return karpy.simulate([bundled_example()], region="us-east-1", prices="2026-07-20")


def test_bundled_example_launches_seventh_generation_with_eighth_in_the_request(example_result):
    doc = example_result.to_document()
    assert doc["prices"]["date"] == "2026-07-20"
    assert example_result.exit_code == 0
    [claim] = doc["nodeclaims"]
    assert claim["labels"]["karpenter.k8s.aws/instance-generation"] == "7"
    candidates = next(r["values"] for r in claim["requirements"] if r["key"] == "node.kubernetes.io/instance-type")
    assert any(t.startswith(("c8i.", "m8i.", "r8i.")) for t in candidates)
    fleet = claim["fleet"]
    assert fleet["allocation_strategy"] == "lowest-price"
    assert any(o["instance_type"].startswith(("c8i.", "m8i.", "r8i.")) for o in fleet["overrides"])
    # every override's priority is its offering price; the launched one is the cheapest that fits
    assert claim["price"] == min(o["priority"] for o in fleet["overrides"] if o["instance_type"] == claim["instance_type"])
    assert sorted(p.split("/")[1].rsplit("-", 2)[0] for p in claim["pods"]) == ["cache"] * 2 + ["web"] * 6


def test_the_document_is_json_and_names_the_price_source(example_result):
    doc = json.loads(example_result.to_json())
    assert "zz_generated.pricing_aws.go" in doc["prices"]["source"]
    assert doc["cost_per_hour"] == doc["nodeclaims"][0]["price"]
