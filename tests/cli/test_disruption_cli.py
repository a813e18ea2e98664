"""CLI: --disruption, --feature-gates and ``karpy explain --disruption --nodeclaim``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COOKBOOK = ROOT / "examples" / "generation-preference"
ARGS = [str(COOKBOOK / "01-one-nodepool"), str(COOKBOOK / "common"), "--prices", "2026-07-20", "--until", "30m",
        "--event", "10m scale deployment/web 1"]


@pytest.fixture(scope="module")
def disrupted(invoke):
    """One ``simulate --disruption -o json`` run, shared by the tests of this module."""
    result = invoke("simulate", *ARGS, "--disruption", "-o", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_simulate_disruption_json_has_the_decisions_and_deleted_by(disrupted):
    doc = disrupted
    [rep] = [d for d in doc["disruptions"] if d["decision"] == "replace"]
    assert set(rep) >= {"t", "method", "reason", "candidates", "replacements", "savings_per_hour", "budget",
                        "validated"}
    assert rep["method"] == "single-node-consolidation" and rep["validated"] is True
    deleted = {nc["name"]: nc["deleted_by"] for nc in doc["nodeclaims"]}
    assert deleted[rep["candidates"][0]] == "consolidation"
    kinds = {e["kind"] for e in doc["timeline"]}
    assert {"disruption.taint", "disruption.evict", "disruption.terminated"} <= kinds


def test_no_disruption_has_no_disruptions_key_and_says_so(invoke):
    result = invoke("simulate", *ARGS, "--no-disruption", "-o", "json")
    doc = json.loads(result.stdout)
    assert "disruptions" not in doc
    assert any(w.startswith("disruption is off (--no-disruption") for w in doc["warnings"])
    assert "disruption is off (--no-disruption" in result.stderr


def test_time_passing_runs_the_disruption_controller_by_default(invoke, disrupted):
    # issue 31: production always runs it; --disruption stays accepted and means the same here
    doc = json.loads(invoke("simulate", *ARGS, "-o", "json").stdout)
    assert doc == disrupted


def test_a_run_that_only_settles_keeps_disruption_off_without_a_warning(invoke):
    settle = [a for a in ARGS if a not in ("--until", "30m", "--event", "10m scale deployment/web 1")]
    doc = json.loads(invoke("simulate", *settle, "-o", "json").stdout)
    assert "disruptions" not in doc and not any("disruption is off (--no" in w for w in doc["warnings"])


def test_explain_nodeclaim_says_why_it_was_consolidated(invoke, disrupted):
    [rep] = [d for d in disrupted["disruptions"] if d["decision"] == "replace"]
    old = rep["candidates"][0]
    trace = json.loads(invoke("explain", *ARGS, "--disruption", "--nodeclaim", old, "-o", "json").stdout)
    block = trace["disruption"]
    assert block["deleted_by"] == "consolidation"
    assert [d["method"] for d in block["decisions"]] == ["single-node-consolidation"]
    assert block["conditions"]["Consolidatable"]["status"] == "True"


def test_explain_text_renders_the_disruption_block():
    from karpy.disruption.explain import render_disruption

    lines: list[str] = []
    render_disruption({"deleted_by": "consolidation", "deleted_at": 650.0,
                       "conditions": {"Drifted": {"status": "True", "reason": "NodePoolDrifted"}},
                       "decisions": [{"t": 615.0, "method": "single-node-consolidation", "decision": "replace",
                                      "candidates": ["a"], "replacements": ["b"], "savings_per_hour": 0.2,
                                      "budget": {"p": 1}, "validated": True}],
                       "events": [{"t": 600.0, "event": "Unconsolidatable",
                                   "message": "Can't replace with a cheaper node"}]}, lines)
    text = "\n".join(lines)
    assert "deleted by consolidation at t=650.0s" in text
    assert "condition Drifted=True (NodePoolDrifted)" in text
    assert "t=615s single-node-consolidation: replace ['a'] -> ['b']" in text
    assert "Unconsolidatable: Can't replace with a cheaper node" in text


def test_bad_feature_gate_is_bad_input(invoke):
    for value in ("NoSuchGate=true", "SpotToSpotConsolidation=maybe", "SpotToSpotConsolidation"):
        result = invoke("simulate", *ARGS, "--feature-gates", value)
        assert result.exit_code == 2, (value, result.stdout)
        assert "Traceback" not in result.output
    assert "unrecognized feature gate: NoSuchGate" in invoke("simulate", *ARGS, "--feature-gates",
                                                              "NoSuchGate=true").output


def test_node_overlay_ignored_with_a_warning_while_its_gate_is_off(invoke):
    args = [str(COOKBOOK / "03-nodeoverlay"), str(COOKBOOK / "common"), "--prices", "2026-07-20", "-o", "json"]
    doc = json.loads(invoke("simulate", *args).stdout)
    assert any("NodeOverlay feature gate is off" in w for w in doc["warnings"])
    assert doc["nodeclaims"][0]["instance_type"] == "c7i.2xlarge"  # no overlay: lowest price wins
    doc = json.loads(invoke("simulate", *args, "--feature-gates", "NodeOverlay=true").stdout)
    assert not any("NodeOverlay feature gate" in w for w in doc["warnings"])
    assert doc["nodeclaims"][0]["instance_type"] == "c8i.2xlarge"
