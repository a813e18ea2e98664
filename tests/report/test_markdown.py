"""``-o markdown`` (karpy.report.markdown): snapshot tests of the simulate and compare views, the
escaping of user text, and the CLI option. Refresh the snapshots with KARPY_UPDATE_SNAPSHOTS=1."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from karpy.cli import cli
from karpy.report.markdown import md, render_compare_markdown, render_markdown

HERE = Path(__file__).parent
SNAPSHOTS = HERE / "snapshots"


def load(name: str) -> dict[str, Any]:
    return json.loads((HERE / name).read_text(encoding="utf-8"))


def check_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("KARPY_UPDATE_SNAPSHOTS"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} changed; KARPY_UPDATE_SNAPSHOTS=1 to accept"


@pytest.mark.parametrize(("source", "snapshot"), [("sample_document.json", "simulate.md"),
                                                  ("sample_timeline_document.json", "simulate_timeline.md")])
def test_simulate_markdown_snapshot(source: str, snapshot: str) -> None:
    check_snapshot(snapshot, render_markdown(load(source)))


def test_compare_markdown_snapshot() -> None:
    check_snapshot("compare.md", render_compare_markdown(load("sample_compare_document.json")))


def test_user_text_cannot_break_the_table_or_inject_markup() -> None:
    doc = load("sample_document.json")
    doc["pods"]["ml/train-0"]["message"] = "a | b <script>x</script> *bold* $1 and $2\nnext"
    text = render_markdown(doc)
    row = next(line for line in text.splitlines() if line.startswith("| ml/train-0"))
    assert row.count(" | ") == 2 and not re.search(r"(?<!\\)<script>", text)
    assert "a \\| b \\<script\\>x\\</script\\>" not in row  # '>' needs no escape
    assert "a \\| b \\<script>x\\</script> \\*bold\\* \\$1 and \\$2 next" in row
    assert md("c8i.2xlarge") == "c8i.2xlarge"


def test_cli_markdown_for_simulate_and_compare(tmp_path: Path) -> None:
    pool = tmp_path / "pool.yaml"
    pool.write_text("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n"
                    "    spec:\n      nodeClassRef: {group: karpenter.test.sh, kind: TestNodeClass, name: default}\n"
                    "      requirements: []\n")
    res = CliRunner().invoke(cli, ["simulate", str(pool), "--cloud-provider", "fake", "-o", "markdown"])
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("### karpy simulate: ")
    res = CliRunner().invoke(cli, ["compare", f"a={pool}", f"b={pool}", "--cloud-provider", "fake", "-o", "markdown"])
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("### karpy compare: every design behaves as a")
    assert "| --- |" not in res.stdout and "|---|---|---|" in res.stdout
