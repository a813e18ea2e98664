"""``karpy compare``: table, -o json, --report, exit codes 0 / 3 / 2 (as ``karpy simulate``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import Result

ROOT = Path(__file__).resolve().parents[2]
COOKBOOK = ROOT / "examples" / "generation-preference"
Invoke = Callable[..., Result]


def _designs(*names: str) -> list[str]:
    return [str(COOKBOOK / n) for n in names]


def test_compare_json_holds_each_run_and_the_diff(invoke: Invoke, tmp_path: Path) -> None:
    report = tmp_path / "compare.html"
    result = invoke("compare", *_designs("01-one-nodepool", "02-weighted-nodepools"), "--shared",
                    str(COOKBOOK / "common"), "--prices", "2026-07-20", "-o", "json", "--report", str(report))
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["kind"] == "Comparison" and doc["designs"] == ["01-one-nodepool", "02-weighted-nodepools"]
    assert set(doc["runs"]) == {"01-one-nodepool", "02-weighted-nodepools"}
    assert doc["runs"]["01-one-nodepool"]["nodeclaims"][0]["instance_type"] == "c7i.2xlarge"
    assert "generation 7 -> 8" in doc["diff"]["designs"]["02-weighted-nodepools"]["changes"]
    page = report.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and 'id="side-by-side"' in page


def test_compare_table_with_named_designs_exits_3_when_a_design_leaves_pods_pending(invoke: Invoke) -> None:
    result = invoke("compare", f"both={COOKBOOK / '01-one-nodepool'}", f"gte8={COOKBOOK / '04-generation-gte-8'}",
                    "--shared", str(COOKBOOK / "common"), "--unavailable", "*8i.*:*:on-demand")
    assert result.exit_code == 3, result.output
    lines = result.stdout.splitlines()
    assert lines[3].split() == ["both", "gte8"]
    pending = next(line for line in lines if "pods pending" in line)
    assert pending.startswith("*") and pending.split()[-2:] == ["0", "6"]


def test_compare_bad_input_is_one_line_and_exit_2(invoke: Invoke, tmp_path: Path) -> None:
    cases = [
        (["compare", str(tmp_path / "missing"), *_designs("01-one-nodepool")], "no such file or directory"),
        (["compare", *_designs("01-one-nodepool", "01-one-nodepool")], "given twice"),
        (["compare", *_designs("01-one-nodepool")], "at least two designs"),
        (["compare", *_designs("01-one-nodepool", "02-weighted-nodepools"), "--shared", str(COOKBOOK / "common"),
          "--prices", "1999-01-01"], "1999-01-01"),
    ]
    for args, message in cases:
        result = invoke(*args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "Traceback" not in result.output


def test_compare_feature_gates_reach_every_design(invoke: Invoke) -> None:
    """``--feature-gates NodeOverlay=true`` (what the NodeOverlay warning tells users to pass) is
    parsed as ``karpy simulate`` parses it (main: the raw string reached compare() and crashed).
    aws-samples/karpenter-blueprints 529b88c node-overlay: overlays pick the 8th generation."""
    data = ROOT / "tests" / "realworld" / "data" / "blueprints"
    overlay = data / "blueprints" / "node-overlay"
    cluster = data / "cluster" / "terraform" / "karpenter-default.yaml"
    result = invoke("compare", f"plain={cluster}", f"overlay={cluster},{overlay / 'node-overlay-generation.yaml'}",
                    "--shared", str(overlay / "workload-generation.yaml"), "--prices", "2026-07-20",
                    "--feature-gates", "NodeOverlay=true", "-o", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    (nc,) = doc["runs"]["overlay"]["nodeclaims"]
    assert nc["labels"]["karpenter.k8s.aws/instance-generation"] == "8"
    assert not any("NodeOverlay" in w for w in doc["runs"]["overlay"].get("warnings") or ())
    bad = invoke("compare", f"plain={cluster}", f"again={cluster}", "--feature-gates", "NodeOverlay=maybe")
    assert bad.exit_code == 2 and 'invalid value of NodeOverlay=maybe' in bad.output


def test_compare_shows_each_designs_own_warnings_in_the_table_and_json(invoke: Invoke) -> None:
    """karpenter-blueprints node-overlay without the NodeOverlay gate: the overlay is ignored, so
    both designs launch the same; the overlay design's warning says why, in the table and in the
    JSON's ``warnings`` by design (main: the table read "same outcome" and nothing more)."""
    data = ROOT / "tests" / "realworld" / "data" / "blueprints"
    overlay = data / "blueprints" / "node-overlay"
    cluster = data / "cluster" / "terraform" / "karpenter-default.yaml"
    args = ["compare", f"plain={cluster}", f"overlay={cluster},{overlay / 'node-overlay-generation.yaml'}",
            "--shared", str(overlay / "workload-generation.yaml"), "--prices", "2026-07-20"]
    table = invoke(*args)
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    assert "overlay vs plain: same outcome; its warnings differ (below)" in lines
    start = lines.index("warnings (overlay):")
    assert any("NodeOverlay" in line for line in lines[start + 1:]) and lines[start + 1].startswith("  - ")
    assert "no differences: every design behaves as plain (but their warnings differ, below)" in lines
    plain = lines.index("warnings (plain):")
    assert plain < start and not any("NodeOverlay" in line for line in lines[plain:start])
    doc = json.loads(invoke(*args, "-o", "json").stdout)
    assert list(doc["warnings"]) == ["plain", "overlay"]
    assert doc["warnings"]["overlay"] == doc["runs"]["overlay"]["warnings"]
    assert any("NodeOverlay" in w for w in doc["warnings"]["overlay"])
    assert not any("NodeOverlay" in w for w in doc["warnings"]["plain"])
