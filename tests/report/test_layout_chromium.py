"""The simulate, compare and sweep reports laid out by headless Chromium at 1,400 px (tests/report/layout.py):
no two text boxes overlap, nothing overflows its card, every design of a sweep chart is visible; plus
what each report now shows -- the Scenario's events and the disruption decisions on the time charts,
the run's warnings (per design where they differ), the price card's date and region.

Skipped only when Chromium is absent and ``CI`` is unset (see test_html_chromium.find_chromium).
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from karpy.cli import cli
from karpy.report.compare import render_compare_html
from karpy.report.html import render_html
from karpy.report.sweep import render_sweep_html

from .layout import check_layout
from .test_html_chromium import Collect, find_chromium, run_chromium, screenshot
from .test_sweep_report_chromium import ROWS, _typed

HERE = Path(__file__).parent
COOKBOOK = HERE.parents[1] / "examples" / "generation-preference"
OUTAGE = "*8i.*:*:on-demand"


def assert_clean(layout: dict[str, Any]) -> None:
    assert layout["texts"] > 20, layout
    assert layout["overlaps"] == [], layout["overlaps"]
    assert layout["overflows"] == [], layout["overflows"]
    assert layout["hidden"] == [], layout["hidden"]


@pytest.fixture(scope="module")
def outage_document() -> dict[str, Any]:
    """Strategy 03 for two hours with consolidation on, 8th gen failing for the first hour."""
    res = CliRunner().invoke(cli, ["simulate", str(COOKBOOK / "03-nodeoverlay"), str(COOKBOOK / "common"),
                                   "--prices", "2026-07-20", "--feature-gates", "NodeOverlay=true", "--disruption",
                                   "--until", "2h", "--event", f"0s capacity unavailable {OUTAGE}",
                                   "--event", f"1h capacity available {OUTAGE}", "-o", "json"])
    assert res.exit_code == 0, res.output
    document: dict[str, Any] = json.loads(res.stdout)
    assert document["disruptions"]
    return document


def test_simulate_report_marks_events_and_disruptions_on_every_time_chart(tmp_path: Path,
                                                                          outage_document: dict[str, Any]) -> None:
    binary = find_chromium()
    html = render_html(outage_document)
    page = tmp_path / "report.html"
    page.write_text(html, encoding="utf-8")
    dom = run_chromium(binary, tmp_path / "profile", "--dump-dom", page.resolve().as_uri())
    parsed = Collect()
    parsed.feed(dom.stdout)
    marks: dict[str, set[tuple[str, str]]] = {}
    svg = None
    for tag, attrs in parsed.elements:
        if tag == "svg":
            svg = attrs.get("id")
        if tag == "line" and attrs.get("class") == "event-mark":
            marks.setdefault(str(svg), set()).add((attrs["data-category"], attrs["data-t"]))
    decisions = {("disruption", f"{d['t']:g}") for d in outage_document["disruptions"]}
    capacity = {("capacity", "0"), ("capacity", "3600")}
    for chart in ("chart-gantt", "chart-pending", "chart-cost"):
        assert marks[chart] >= decisions | capacity, chart  # the shared time axis: same marks on each chart
    legend = [a["data-category"] for t, a in parsed.elements if t == "span" and a.get("class") == "event-key"]
    assert legend == ["capacity", "disruption"]
    assert_clean(check_layout(binary, tmp_path, html))
    png = screenshot(binary, tmp_path, page.resolve().as_uri(), 1400, 2400, "outage")
    assert len(png) > 60_000


def test_simulate_report_of_a_scenario_lays_out_cleanly(tmp_path: Path) -> None:
    document = json.loads((HERE / "sample_timeline_document.json").read_text(encoding="utf-8"))
    html = render_html(document)
    assert 'data-category="scale"' in html and 'data-category="capacity"' in html
    assert_clean(check_layout(find_chromium(), tmp_path, html))


def test_price_card_shows_date_and_region_with_the_provenance_a_footnote_away(tmp_path: Path) -> None:
    document = json.loads((HERE / "sample_document.json").read_text(encoding="utf-8"))
    document["warnings"] = ['NodeOverlay "cheap-gen8" ignored: the NodeOverlay feature gate is off']
    html = render_html(document)
    binary = find_chromium()
    page = tmp_path / "report.html"
    page.write_text(html, encoding="utf-8")
    parsed = Collect()
    parsed.feed(run_chromium(binary, tmp_path / "profile", "--dump-dom", page.resolve().as_uri()).stdout)
    card = next(a for t, a in parsed.elements if a.get("id") == "summary-prices")
    assert (card["data-date"], card["data-region"]) == ("2026-07-20", "us-east-1")
    assert card["title"].startswith("https://pricing.us-east-1.amazonaws.com/")
    assert any(a.get("id") == "price-provenance" for _, a in parsed.elements)
    assert any(a.get("id") == "warnings" for _, a in parsed.elements)
    assert_clean(check_layout(binary, tmp_path, html))


def test_compare_report_shows_each_designs_warnings_and_lays_out_cleanly(tmp_path: Path) -> None:
    page = tmp_path / "compare.html"
    # NodeOverlay's gate left off: the overlay design warns that its NodeOverlay is ignored, the other does not
    res = CliRunner().invoke(cli, ["compare", f"one-pool={COOKBOOK / '01-one-nodepool'}",
                                   f"overlay={COOKBOOK / '03-nodeoverlay'}", "--shared", str(COOKBOOK / "common"),
                                   "--prices", "2026-07-20", "--unavailable", OUTAGE, "-o", "json"])
    assert res.exit_code == 0, res.output
    document = json.loads(res.stdout)
    warned = {n: r.get("warnings") or [] for n, r in document["runs"].items()}
    assert not warned["one-pool"] and warned["overlay"], warned
    html = render_compare_html(document)
    page.write_text(html, encoding="utf-8")
    binary = find_chromium()
    parsed = Collect()
    parsed.feed(run_chromium(binary, tmp_path / "profile", "--dump-dom", page.resolve().as_uri()).stdout)
    lists = [a["data-design"] for t, a in parsed.elements if t == "ul" and "data-design" in a]
    assert lists == ["overlay"]
    # same outcome, but not the same run: the differences say so
    assert "overlay: same outcome; its warnings differ (Warnings per design, above)" in " ".join(
        re.sub(r"<[^>]+>", "", html).split())
    # the header says region and price date, as the simulate report; the source commit is a footnote away
    header = re.search(r"<header>.*?</header>", html, re.S)
    assert header and "us-east-1 \u00b7 prices of 2026-07-20" in header.group(0) and "commit" not in header.group(0)
    assert any(a.get("id") == "price-provenance" for _, a in parsed.elements)
    assert_clean(check_layout(binary, tmp_path, html))


def test_sweep_report_every_design_visible_and_nothing_overlaps(tmp_path: Path) -> None:
    rows = [_typed(r) for r in csv.DictReader(ROWS.open(encoding="utf-8"))]
    html = render_sweep_html(rows)
    layout = check_layout(find_chromium(), tmp_path, html)
    assert layout["series"] == 6  # six designs, all equal at 0.357 $/h before 8th gen came
    assert_clean(layout)
    # the $/h axis shows the band that matters and says where it starts; the rows table scrolls in its card
    assert 'data-y-min="0.30000"' in html and "axis starts at 0.30, not 0" in html
    assert '<div class="scroll"><table id="rows">' in html


def test_sweep_report_warnings_per_design_where_they_differ() -> None:
    rows = [{"cell": 0, "design": "a", "status": "ok", "prices": "2026-07-20", "cost_per_hour": 0.3, "warnings": None},
            {"cell": 1, "design": "b", "status": "ok", "prices": "2026-07-20", "cost_per_hour": 0.3,
             "warnings": "NodeOverlay x ignored; spot prices modelled"}]
    html = render_sweep_html(rows)
    assert "Warnings per design" in html and '<ul data-design="b"><li>NodeOverlay x ignored</li>' in html
    assert '<ul data-design="a">' not in html
    same = render_sweep_html([dict(r, warnings="spot prices modelled") for r in rows])
    assert "Warnings (every design)" in same and same.count("spot prices modelled") == 1


def test_plan_report_lays_out_cleanly(tmp_path: Path) -> None:
    """The fourth report (karpy plan --report): the bundled cluster dump with the gen-8 NodePool applied."""
    examples = HERE.parents[1] / "karpy" / "examples"
    page = tmp_path / "plan.html"
    res = CliRunner().invoke(cli, ["plan", str(examples / "cluster-dump.yaml"), "--apply",
                                   str(examples / "nodepool-gen8.yaml"), "--report", str(page)])
    assert res.exit_code == 0, res.output
    binary = find_chromium()
    layout = check_layout(binary, tmp_path, page.read_text(encoding="utf-8"))
    assert layout["texts"] > 20, layout
    assert layout["overlaps"] == [] and layout["overflows"] == [], layout
    assert len(screenshot(binary, tmp_path, page.resolve().as_uri(), 1400, 1200, "plan")) > 20_000


def test_sweep_report_with_the_cookbooks_own_design_names_lays_out_cleanly(tmp_path: Path) -> None:
    """Designs named as the cookbook table names its strategies (make_table.STRATEGIES, up to 44
    characters): the cost legend's entries ran into each other and out of the chart, the grid and share
    charts cut the names at the left edge. One name longer than a chart row is cut with an ellipsis
    and kept whole on hover."""
    titles = {"01": "01 one NodePool allowing both", "02": "02 weighted NodePools (8th gen weight 100)",
              "03": "03 NodeOverlay priceAdjustment -10% on gen 8", "04": "04 instance-generation Gte 8",
              "05": "05 preferred node affinity (pods)",
              "06": "06 minValues 6 (wrong knob), " + "a very long design name " * 5}
    rows = [_typed(r) for r in csv.DictReader(ROWS.open(encoding="utf-8"))]
    for row in rows:
        row["design"] = titles[row["design"][:2]]
    html = render_sweep_html(rows)
    layout = check_layout(find_chromium(), tmp_path, html)
    assert layout["series"] == 6
    assert_clean(layout)
    assert f"<title>{titles['06']}</title>" in html  # cut on the chart, whole on hover


def test_compare_report_of_five_long_named_designs_lays_out_cleanly(tmp_path: Path) -> None:
    """Five designs named as the cookbook names its strategies: the side-by-side chart drew them in one
    1,508 px row shrunk into the card (its text at 60 %) and their names ran into each other; now rows
    of three at full size, each name fitted to its column (whole on hover)."""
    sample = json.loads((HERE / "sample_compare_document.json").read_text(encoding="utf-8"))
    names = ["01 one NodePool allowing both", "02 weighted NodePools (8th gen weight 100)",
             "03 NodeOverlay priceAdjustment -10% on gen 8", "04 instance-generation Gte 8",
             "06 minValues 6 (wrong knob)"]
    source = ["base", "od", "base", "od", "base"]
    document = {**sample, "baseline": names[0], "designs": names,
                "runs": {n: sample["runs"][s] for n, s in zip(names, source)},
                "outcomes": {n: sample["outcomes"][s] for n, s in zip(names, source)},
                "diff": {**sample["diff"], "designs": {n: sample["diff"]["designs"]["od"]
                                                       for n, s in zip(names, source) if s == "od"}}}
    html = render_compare_html(document)
    svg = re.search(r'<svg class="chart" id="side-by-side"[^>]*width="(\d+)"', html)
    assert svg and int(svg.group(1)) <= 908  # three columns of 300 px at most
    assert_clean(check_layout(find_chromium(), tmp_path, html))
    assert "<title>03 NodeOverlay priceAdjustment -10% on gen 8</title>" in html


def test_simulate_report_groups_failed_launches_and_names_them_in_the_pending_message(tmp_path: Path) -> None:
    """Strategy 04 (instance-generation Gte 8) with 8th gen out for the first hour of two: 247 launches
    fail alike. The report drew a card per failed NodeClaim, each listing its 135 failed offerings
    (683 kB of HTML, 11,868 text boxes); they are one card as the table groups them, and a pending pod's
    message names the capacity errors as the table's does."""
    page = tmp_path / "report.html"
    res = CliRunner().invoke(cli, ["simulate", str(COOKBOOK / "04-generation-gte-8"), str(COOKBOOK / "common"),
                                   "--prices", "2026-07-20", "--until", "2h",
                                   "--event", f"0s capacity unavailable {OUTAGE}",
                                   "--event", f"1h capacity available {OUTAGE}", "--report", str(page)])
    assert res.exit_code == 0, res.output
    html = page.read_text(encoding="utf-8")
    assert len(html) < 100_000
    cards = re.findall(r'<article class="nodeclaim failed"[^>]*data-failed-launches="(\d+)"[^>]*><h4>([^<]*)<', html)
    assert cards == [("247", "247 launches failed")]
    assert "c8i/m8i/r8i \u00d7 5 zones, InsufficientInstanceCapacity (nodepool gen8-only on-demand)" in html
    assert len(re.findall(r'<article class="nodeclaim', html)) == 2  # the group and the c8i that launched at 1 h
    assert_clean(check_layout(find_chromium(), tmp_path, html))
    # the same run without time: its 6 pods stay pending, and their message says why
    res = CliRunner().invoke(cli, ["simulate", str(COOKBOOK / "04-generation-gte-8"), str(COOKBOOK / "common"),
                                   "--prices", "2026-07-20", "--unavailable", OUTAGE, "--report", str(page)])
    assert res.exit_code == 3, res.output
    messages = re.findall(r'<tr data-pod="[^"]*" data-phase="Pending">.*?<td class="msg">([^<]*)</td>',
                          page.read_text(encoding="utf-8"))
    assert len(messages) == 6 and all("(capacity errors: 13 launches failed: c8i/m8i/r8i \u00d7 5 zones, "
                                      "InsufficientInstanceCapacity" in m for m in messages), messages
