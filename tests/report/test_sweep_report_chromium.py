"""The sweep report in headless Chromium: the committed cookbook sweep rows
(examples/generation-preference/sweep/rows.csv, 6 strategies x 37 us-east-1 tables) rendered by
karpy.report.sweep, loaded as a browser loads it, and its SVG marks read back from the DOM; and
the committed report.html that ``karpy sweep --report`` wrote beside them, screenshotted."""

from __future__ import annotations

import csv
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from karpy.report.sweep import render_sweep_html, sweep_charts

from .test_html_chromium import blank_screenshot_bytes, find_chromium, run_chromium, screenshot

SWEEP_DIR = Path(__file__).resolve().parents[2] / "examples" / "generation-preference" / "sweep"
ROWS = SWEEP_DIR / "rows.csv"
REPORT = SWEEP_DIR / "report.html"
INTS = {"cell", "nodeclaims", "failed_launches", "pending_pods"}
FLOATS = {"cost_per_hour", "last_launch_at", "horizon", "cost_total"}


def _typed(row: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in row.items():
        if v == "":
            out[k] = None
        elif k in INTS or k.startswith("nodes_gen"):
            out[k] = int(v)
        elif k in FLOATS or k.startswith("node_hours_gen"):
            out[k] = float(v)
        else:
            out[k] = v
    return out


class Marks(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))


def test_cookbook_sweep_report_renders_its_charts(tmp_path: Path) -> None:
    binary = find_chromium()
    rows = [_typed(r) for r in csv.DictReader(ROWS.open(encoding="utf-8"))]
    assert len(rows) == 222
    page = tmp_path / "sweep.html"
    page.write_text(render_sweep_html(rows), encoding="utf-8")
    dom = run_chromium(binary, tmp_path / "profile", "--dump-dom", page.resolve().as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    marks = Marks()
    marks.feed(dom.stdout)
    svgs = [a["id"] for t, a in marks.elements if t == "svg"]
    assert svgs == ["cost-by-date-0", "generation-by-date", "generation-share"]
    points = {(a["data-x"], a["data-value"]) for t, a in marks.elements if t == "circle"}
    assert ("2023-09-18", "0.35700") in points and ("2025-08-25", "0.55568") in points
    grid = {(a["data-row"], a["data-col"]): a["data-key"] for t, a in marks.elements
            if t == "rect" and "data-col" in a}
    assert len(grid) == 6 * 37
    assert {grid["01 one NodePool allowing both", d] for d in {c for _, c in grid}} == {"7"}
    assert grid["04 instance-generation Gte 8", "2024-03-04"] == ""  # nothing launched: grey
    assert grid["02 weighted NodePools", "2026-07-20"] == "8"
    assert not any(t == "script" for t, _ in marks.elements)


def test_committed_sweep_report_renders_without_script(tmp_path: Path) -> None:
    """The report file the cookbook guide's command wrote: its charts are the ones its rows give (so the
    committed report is not older than the committed rows), and Chromium draws it."""
    binary = find_chromium()
    html = REPORT.read_text(encoding="utf-8")
    rows = [_typed(r) for r in csv.DictReader(ROWS.open(encoding="utf-8"))]
    for chart_id, svg in sweep_charts(rows).items():
        assert svg in html, f"{REPORT.name}: chart {chart_id} differs from what rows.csv gives"
    # the whole page, rows table and per-design warnings included, is what the command renders from these rows
    assert any(r["warnings"] for r in rows)  # designs 02, 04, 06: a NodePool with no compatible type
    assert render_sweep_html(rows, title="karpy sweep: generation-preference") == html
    assert "<script" not in html.lower()
    url = REPORT.resolve().as_uri()
    dom = run_chromium(binary, tmp_path / "profile", "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    marks = Marks()
    marks.feed(dom.stdout)
    assert [a["id"] for t, a in marks.elements if t == "svg"] == ["cost-by-date-0", "generation-by-date",
                                                                   "generation-share"]
    assert sum(1 for t, a in marks.elements if t == "tr") > len(rows)  # the rows table, under the charts
    png = screenshot(binary, tmp_path, url, 1200, 1600, "sweep")
    blank = blank_screenshot_bytes(binary, tmp_path, 1200, 1600)
    assert len(png) > 4 * blank, (len(png), blank)


@pytest.mark.parametrize("name", ["cost-by-date-0.svg", "generation-by-date.svg", "generation-share.svg"])
def test_committed_chart_files_are_the_rows_charts(name: str) -> None:
    """docs/guides/cookbook.md shows these files: they are what the committed rows draw (no browser needed)."""
    charts = sweep_charts([_typed(r) for r in csv.DictReader(ROWS.open(encoding="utf-8"))])
    assert (SWEEP_DIR / name).read_text(encoding="utf-8") == charts[Path(name).stem] + "\n"
