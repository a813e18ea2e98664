"""The document's typed results and its published JSON Schema (issue #17).

- the shipped schema file is what :mod:`karpy.document`'s types generate, is valid draft 2020-12,
  and its fingerprint is pinned per ``SCHEMA_VERSION`` (a schema change needs a version change);
- the suite-wide hook of tests/conftest.py really validates: a broken document fails, a Result
  whose document breaks the schema fails at ``to_document``;
- every key real documents carry (launches, a failed launch, pending pods, disruption) is one the
  schema names -- the published schema admits unknown keys, this test does not;
- ``Result.nodeclaims`` / ``pods`` / ``cost`` / ``launched`` are the frozen records the document
  is built from; ``repr`` is one line; ``karpy schema`` prints the shipped file.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner

import karpy
from karpy.document import Cost, NodeClaimResult, PodResult
from karpy.result import Result
from karpy.schemas import SCHEMA_VERSION, generate, schema, schema_text

#: sha256 of the canonical schema (sorted keys, no whitespace) per released version. A schema
#: change without a version change fails here: bump SCHEMA_VERSION in karpy/schemas (MINOR when
#: keys were only added, MAJOR when one was removed or changed meaning), run
#: ``python -m karpy.schemas``, and add the new fingerprint (never edit an old one).
FINGERPRINTS = {
    "1.0": "7868950615f3069e4c7bbbd944c6ba02d0cfcbc6777db17a8be1e124a662f084",
    "1.1": "73c88b8fe40e17ac3711f67da3d20f5f02600fb90803d35f8d922e0116051bfa",
    "1.2": "b6a43c8edb40355d3f9a54e0dd5e62bf0ace92e747032ef4be10b353f3eb54e8",
    "1.3": "ef4932c17988e411375d281384c80f336315dd34ed48c5ffd97d84e9f6b9b3b5",
}


def _fingerprint(s: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(s, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


# -- documents to check ----------------------------------------------------------------------------

OD = [("karpenter.sh/capacity-type", "In", ["on-demand"])]


@pytest.fixture(scope="module")
def disruption_result() -> Result:
    """Fake provider: a Deployment scaled down at 5m (emptiness deletes nodes), a pod no type fits
    (pending), with the disruption controller on."""
    from karpy.api.builders import make_deployment, make_nodepool, make_pod

    return karpy.simulate([make_nodepool(requirements=OD), make_deployment("web", replicas=8, requests={"cpu": "1"}),
                           make_pod("huge", unschedulable=False, requests={"cpu": "5000"})],
                          cloud_provider="fake", region=None, disruption=True, until="15m",
                          events=["5m scale Deployment/web 1"])


@pytest.fixture(scope="module")
def aws_result() -> Result:
    """The bundled example on the AWS provider, m7i.2xlarge (its pick) unavailable in two zones: the
    fleet block carries EC2's errors and the NodeClaim launches elsewhere."""
    from karpy.cli import bundled_example

    return karpy.simulate([str(bundled_example())], region="us-east-1", prices="2026-07-20",
                          unavailable=["m7i.2xlarge:us-east-1a:on-demand", "m7i.2xlarge:us-east-1b:on-demand"])


@pytest.fixture(scope="module")
def failed_result() -> Result:
    """The bundled example with no capacity at all: every launch fails, every pod is pending."""
    from karpy.cli import bundled_example

    return karpy.simulate([str(bundled_example())], region="us-east-1", prices="2026-07-20", unavailable=["*:*:*"])


@pytest.fixture(scope="module")
def billed_result() -> Result:
    """The bundled example for 3 h under a BillingProfile (an EC2 Instance SP on m8i, an idle RI, a
    node fee): ``cost.billed`` with a misalignment, an unused commitment and an aligning overlay."""
    from karpy.cli import bundled_example

    profile = {"apiVersion": "karpy.io/v1alpha1", "kind": "BillingProfile", "metadata": {"name": "acme"},
               "spec": {"enterpriseDiscount": "10%",
                        "savingsPlans": [{"name": "sp-m8i", "type": "EC2Instance", "family": "m8i",
                                          "commitment": "0.5", "rates": {"m8i": "45%"}}],
                        "reservedInstances": [{"instanceType": "r8i.large", "count": 1, "discount": "40%"}],
                        "nodeFees": [{"name": "agent", "perVCPUHour": "0.001"}]}}
    return karpy.simulate([str(bundled_example())], region="us-east-1", prices="2026-07-20", until="3h",
                          billing=profile)


def _closed(node: Any) -> Any:
    """The schema with ``additionalProperties: false`` on every object that names its properties."""
    if isinstance(node, dict):
        out = {k: _closed(v) for k, v in node.items()}
        if "properties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out
    if isinstance(node, list):
        return [_closed(v) for v in node]
    return node


# -- the schema ------------------------------------------------------------------------------------

def test_shipped_schema_is_what_the_types_generate() -> None:
    assert schema() == generate(), "karpy/schemas/document.schema.json is stale: run python -m karpy.schemas"


def test_schema_is_valid_draft_2020_12_and_carries_its_version() -> None:
    import jsonschema

    s = schema()
    jsonschema.Draft202012Validator.check_schema(s)
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert s["version"] == SCHEMA_VERSION and s["$id"].endswith(f"/{SCHEMA_VERSION}/document.schema.json")
    assert karpy.schema() == s


def test_schema_change_needs_a_version_change() -> None:
    assert FINGERPRINTS.get(SCHEMA_VERSION) == _fingerprint(schema()), (
        f"the schema changed but SCHEMA_VERSION is still {SCHEMA_VERSION}: bump it and add the fingerprint "
        f"{_fingerprint(schema())} to FINGERPRINTS")


def test_schema_names_the_contract_keys() -> None:
    s = schema()
    top = s["properties"]
    for key in ("region", "prices", "nodeclaims", "pods", "cost_per_hour", "simulation", "warnings", "timeline",
                "cost", "disruptions", "disruption_timeline", "explain", "nodeclasses", "nodepools"):
        assert key in top, key
    assert set(s["required"]) == set(top) - {"disruptions", "disruption_timeline", "nodeclasses", "nodepools"}
    claim = s["$defs"]["NodeClaimResult"]["properties"]
    assert list(claim) == [f.name for f in dataclasses.fields(NodeClaimResult)]
    assert claim["capacity_type"]["anyOf"][0]["enum"] == ["on-demand", "spot", "reserved"]
    # tolerant: more keys may be added (docs/contract.md, "Compatibility"), so no object forbids unknown keys
    assert '"additionalProperties": false' not in schema_text()


def test_karpy_schema_command_prints_the_shipped_file() -> None:
    from karpy.cli import cli

    out = CliRunner().invoke(cli, ["schema"])
    assert out.exit_code == 0
    assert out.output == schema_text()
    assert json.loads(out.output)["version"] == SCHEMA_VERSION


# -- the hook really validates ---------------------------------------------------------------------

def test_suite_hook_wraps_to_document() -> None:
    # the hook wraps the sections every document is built from: to_document, to_json, write_json
    assert getattr(Result.document_sections, "__validated__", False)


def test_a_result_whose_document_breaks_the_schema_fails_at_to_json(
        disruption_result: Result, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Result, "cost_per_hour", property(lambda self: "free"))
    with pytest.raises(AssertionError, match=r"\$\.cost_per_hour: 'free' is not of type 'number'"):
        disruption_result.to_json()


@pytest.mark.parametrize("breakage", [
    "price-as-text", "unknown-phase", "no-region", "launched-as-text", "per-hour-triple", "timeline-no-kind",
    "disruption-savings-null", "cost-missing-total", "billed-total-as-text", "billed-misalignment-kind",
])
def test_a_broken_document_fails_validation(disruption_result: Result, billed_result: Result, breakage: str,
                                            validate_document: Callable[[Any], None]) -> None:
    source = billed_result if breakage.startswith("billed") else disruption_result
    doc = copy.deepcopy(source.to_document())
    validate_document(doc)  # the real one passes
    if breakage == "price-as-text":
        doc["nodeclaims"][0]["price"] = "cheap"
    elif breakage == "unknown-phase":
        doc["pods"][next(iter(doc["pods"]))]["phase"] = "Sleeping"
    elif breakage == "no-region":
        del doc["region"]
    elif breakage == "launched-as-text":
        doc["nodeclaims"][0]["launched"] = "yes"
    elif breakage == "per-hour-triple":
        doc["cost"]["per_hour"][0] = [0.0, 0.0, 0.0]
    elif breakage == "timeline-no-kind":
        del doc["timeline"][0]["kind"]
    elif breakage == "disruption-savings-null":
        doc["disruptions"][0]["savings_per_hour"] = None
    elif breakage == "cost-missing-total":
        del doc["cost"]["total"]
    elif breakage == "billed-total-as-text":
        doc["cost"]["billed"]["total"] = "less"
    elif breakage == "billed-misalignment-kind":
        doc["cost"]["billed"]["misalignments"][0]["kind"] = "bad-luck"
    with pytest.raises(AssertionError, match="does not match karpy's JSON Schema"):
        validate_document(doc)


def test_a_result_whose_document_breaks_the_schema_fails_at_to_document(
        disruption_result: Result, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Result, "cost_per_hour", property(lambda self: "free"))
    with pytest.raises(AssertionError, match=r"\$\.cost_per_hour: 'free' is not of type 'number'"):
        disruption_result.to_document()


@pytest.mark.parametrize("which", ["disruption_result", "aws_result", "failed_result", "billed_result"])
def test_every_key_of_real_documents_is_named_by_the_schema(which: str, request: pytest.FixtureRequest) -> None:
    import jsonschema

    result: Result = request.getfixturevalue(which)
    doc = result.to_document()
    if which == "disruption_result":
        assert doc["disruptions"] and any(nc["deleted_by"] for nc in doc["nodeclaims"])
        assert any(p["phase"] == "Pending" for p in doc["pods"].values())
    elif which == "aws_result":
        assert any(nc["fleet"]["errors"] for nc in doc["nodeclaims"])
    elif which == "billed_result":
        billed = doc["cost"]["billed"]
        assert {m["kind"] for m in billed["misalignments"]} == {"cheaper-on-bill", "unused-commitment"}
        assert billed["overlays"] and billed["fees"] > 0 and billed["commitments"]["ri-r8i.large"]["used"] == 0.0
    else:
        assert not any(nc["launched"] for nc in doc["nodeclaims"]) and doc["explain"]["nodeclaims"]
    errors = list(jsonschema.Draft202012Validator(_closed(schema())).iter_errors(doc))
    assert not errors, ("keys the schema does not name (add them to karpy/document.py): "
                        + "; ".join(f"{e.json_path}: {e.message[:120]}" for e in errors[:5]))


# -- typed results ---------------------------------------------------------------------------------

def test_nodeclaims_and_pods_are_the_frozen_records_of_the_document(disruption_result: Result) -> None:
    r = disruption_result
    doc = r.to_document()
    assert all(isinstance(nc, NodeClaimResult) for nc in r.nodeclaims)
    assert [nc.to_dict() for nc in r.nodeclaims] == doc["nodeclaims"]
    assert {k: p.to_dict() for k, p in r.pods.items()} == doc["pods"]
    assert all(isinstance(p, PodResult) for p in r.pods.values())
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.nodeclaims[0].price = 0.0  # type: ignore[misc]
    deleted = [nc for nc in r.nodeclaims if nc.deleted_at is not None]
    assert deleted and {nc.deleted_by for nc in deleted} <= {"emptiness", "consolidation"}
    assert all(nc.launched_at is not None for nc in r.nodeclaims)
    assert r.pods["default/huge"].phase == "Pending" and "no instance type" in (r.pods["default/huge"].message or "")


def test_launched_is_the_typed_summary_of_successful_launches(aws_result: Result, failed_result: Result) -> None:
    r = aws_result
    assert r.launched and all(isinstance(nc, NodeClaimResult) and nc.launched for nc in r.launched)
    assert [nc.name for nc in r.launched] == [rec.name for rec in r.launches if rec.launched is not None]
    assert failed_result.nodeclaims and failed_result.launched == ()
    assert all(nc.instance_type is None and nc.price is None and nc.error for nc in failed_result.nodeclaims)
    assert all(p.phase == "Pending" and p.message for p in failed_result.pods.values())
    launched = r.launched[0]
    assert launched.labels["node.kubernetes.io/instance-type"] == launched.instance_type
    assert launched.fleet is not None and launched.fleet["overrides"]
    assert list(launched.pods) == r.pods_on(launched.name)


def test_cost_is_a_record_and_the_old_call_still_works(disruption_result: Result) -> None:
    r = disruption_result
    cost = r.cost
    assert isinstance(cost, Cost) and cost.to_dict() == r.to_document()["cost"]
    assert cost.total == pytest.approx(sum(c.dollars for c in cost.by_nodeclaim.values()), abs=1e-5)
    assert cost.per_hour[0] == (0.0, 0.0) and cost.horizon == 900.0
    with pytest.warns(DeprecationWarning, match="Result.cost is a property"):
        assert r.cost() == cost.to_dict()


def test_cost_from_an_unknown_key_says_to_add_the_field() -> None:
    with pytest.raises(TypeError, match="by_reservation"):
        Cost.from_dict({"total": 0.0, "by_nodepool": {}, "by_family": {}, "by_generation": {}, "by_capacity_type": {},
                        "node_hours": {"total": 0.0, "by_nodepool": {}, "by_family": {}, "by_generation": {},
                                       "by_capacity_type": {}},
                        "by_nodeclaim": {}, "per_hour": [[0.0, 0.0]], "horizon": 1.0, "by_reservation": {}})


def test_repr_is_one_short_line(aws_result: Result, disruption_result: Result) -> None:
    for r in (aws_result, disruption_result):
        text = repr(r)
        assert "\n" not in text and len(text) < 200, text
        assert text.startswith("<Result ") and f"exit_code={r.exit_code}" in text
    assert repr(aws_result).startswith("<Result region='us-east-1' prices='2026-07-20' nodeclaims=")
    n = len(disruption_result.to_document()["pods"])
    assert f"pods={n} (1 pending)" in repr(disruption_result)


def test_warnings_is_a_list_of_strings(aws_result: Result) -> None:
    assert isinstance(aws_result.warnings, list) and all(isinstance(w, str) for w in aws_result.warnings)
    assert aws_result.to_document()["warnings"] == aws_result.warnings
