"""``karpy sweep SWEEP.yaml``: stdout table / csv / jsonl, the row files, the HTML report with SVG
charts, the progress bar on stderr, exit codes, and bad input as one line with exit 2."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

ROOT = Path(__file__).resolve().parents[2]
COOKBOOK = ROOT / "examples" / "generation-preference"
Invoke = Callable[..., Result]

SWEEP = f"""apiVersion: karpy.io/v1alpha1
kind: Sweep
metadata:
  name: cli
spec:
  designs:
    one-pool: [{COOKBOOK}/01-one-nodepool, {COOKBOOK}/common/workload.yaml]
    gte8: [{COOKBOOK}/04-generation-gte-8, {COOKBOOK}/common/workload.yaml]
  shared: [{COOKBOOK}/common/ec2nodeclass.yaml]
  prices: [2026-07-20]
"""


def test_sweep_writes_rows_report_and_charts(invoke: Invoke, tmp_path: Path) -> None:
    path = tmp_path / "sweep.yaml"
    path.write_text(SWEEP, encoding="utf-8")
    out = {k: tmp_path / f"rows.{k}" for k in ("csv", "jsonl", "parquet")}
    report, charts = tmp_path / "report.html", tmp_path / "charts"
    result = invoke("sweep", str(path), "--executor", "sequential", "--csv", str(out["csv"]), "--jsonl",
                    str(out["jsonl"]), "--parquet", str(out["parquet"]), "--report", str(report),
                    "--charts", str(charts))
    assert result.exit_code == 0, result.output
    table = result.stdout.splitlines()
    assert table[0].split()[:3] == ["CELL", "DESIGN", "PRICES"]
    assert table[1].split()[:5] == ["0", "one-pool", "2026-07-20", "c7i.2xlarge", "7"]
    assert table[2].split()[:5] == ["1", "gte8", "2026-07-20", "c8i.2xlarge", "8"]
    assert "karpy sweep: [########################] 2/2 cells" in result.stderr
    rows = list(csv.DictReader(io.StringIO(out["csv"].read_text(encoding="utf-8"))))
    assert [(r["design"], r["instance_types"], r["nodes_gen7"], r["nodes_gen8"]) for r in rows] == [
        ("one-pool", "c7i.2xlarge", "1", "0"), ("gte8", "c8i.2xlarge", "0", "1")]
    assert [json.loads(line)["cost_per_hour"] for line in out["jsonl"].read_text().splitlines()] == [0.357, 0.37484]
    pq = pytest.importorskip("pyarrow.parquet")
    assert pq.read_table(out["parquet"]).column("design").to_pylist() == ["one-pool", "gte8"]
    page = report.read_text(encoding="utf-8")
    assert "<script" not in page and page.count("<svg") == 3
    assert 'id="cost-by-date-0"' in page and 'id="generation-by-date"' in page and 'id="generation-share"' in page
    assert 'data-row="gte8" data-col="2026-07-20" data-key="8"' in page
    assert sorted(p.name for p in charts.iterdir()) == ["cost-by-date-0.svg", "generation-by-date.svg",
                                                       "generation-share.svg"]
    # -o csv prints the same rows on stdout
    again = invoke("sweep", str(path), "--executor", "sequential", "-o", "csv", "-q")
    assert again.stdout == out["csv"].read_text(encoding="utf-8") and again.stderr == ""


def test_sweep_bad_input_is_one_line_and_exit_2(invoke: Invoke, tmp_path: Path) -> None:
    path = tmp_path / "sweep.yaml"
    cases = [
        (None, ["sweep", str(tmp_path / "missing.yaml")], "no such file"),
        (SWEEP.replace("prices: [2026-07-20]", "prices: [2026-07-21]"), ["sweep", str(path)],
         "spec.prices[0]: no us-east-1 price table dated 2026-07-21"),
        (SWEEP.replace("  designs:", "  design:"), ["sweep", str(path)], "spec.design: unknown field"),
        (SWEEP, ["sweep", str(path), "--executor", "dask"], "--scheduler"),
    ]
    for text, args, message in cases:
        if text is not None:
            path.write_text(text, encoding="utf-8")
        result = invoke(*args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_sweep_shows_each_designs_own_warnings_in_the_table_and_json(invoke: Invoke, tmp_path: Path) -> None:
    """The cookbook's NodeOverlay design without ``featureGates: {NodeOverlay: true}``: its overlay is
    ignored and it launches as the one-NodePool design; the table names the warning under that
    design (main: one line per cell and no word of it), the JSON rows carry each cell's own."""
    path = tmp_path / "sweep.yaml"
    path.write_text(SWEEP.replace(f"gte8: [{COOKBOOK}/04-generation-gte-8",
                                  f"overlay: [{COOKBOOK}/03-nodeoverlay"), encoding="utf-8")
    result = invoke("sweep", str(path), "--executor", "sequential", "-q")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    start = lines.index("WARNINGS (overlay)")
    assert lines[start + 1].startswith("  - ignored 1 NodeOverlay(s)") and "feature gate is off" in lines[start + 1]
    assert not any("NodeOverlay" in line for line in lines[:start])
    rows = [json.loads(line) for line in invoke("sweep", str(path), "--executor", "sequential", "-q",
                                                  "-o", "jsonl").stdout.splitlines()]
    own = {r["design"]: r["warnings"] or "" for r in rows}
    assert "NodeOverlay" in own["overlay"] and "NodeOverlay" not in own["one-pool"]
