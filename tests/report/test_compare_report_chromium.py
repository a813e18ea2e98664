"""The compare report in headless Chromium: ``karpy compare ... --report`` on two cookbook strategies
(one NodePool allowing both generations vs weighted NodePools, 2026-07-20 us-east-1 prices) writes
the page, Chromium loads it as a user's browser would (a local file, no script, no network), and
the side-by-side SVG is read back from the DOM Chromium built and seen in a screenshot.

Skipped only when Chromium is absent and ``CI`` is unset (see test_html_chromium.find_chromium).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from karpy.cli import cli

from karpy.report.charts import color_for

from .test_html_chromium import Collect, blank_screenshot_bytes, find_chromium, png_rows, run_chromium, screenshot

COOKBOOK = Path(__file__).resolve().parents[2] / "examples" / "generation-preference"
WIDTH, HEIGHT = 1200, 1400


@pytest.fixture(scope="module")
def compare_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    binary = find_chromium()
    tmp = tmp_path_factory.mktemp("compare-report")
    page = tmp / "compare.html"
    run = CliRunner().invoke(cli, ["compare", f"one-pool={COOKBOOK / '01-one-nodepool'}",
                                   f"weighted={COOKBOOK / '02-weighted-nodepools'}",
                                   "--shared", str(COOKBOOK / "common"), "--prices", "2026-07-20",
                                   "--report", str(page)])
    assert run.exit_code == 0, run.output
    url = page.resolve().as_uri()
    dom = run_chromium(binary, tmp / "profile-dom", "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    parsed = Collect()
    parsed.feed(dom.stdout)
    return {"html": page.read_text(encoding="utf-8"), "dom": parsed,
            "png": screenshot(binary, tmp, url, WIDTH, HEIGHT, "compare"),
            "blank": blank_screenshot_bytes(binary, tmp, WIDTH, HEIGHT)}


def test_chromium_builds_the_side_by_side_svg(compare_report: dict[str, Any]) -> None:
    elements = compare_report["dom"].elements
    assert [a.get("id") for t, a in elements if t == "svg"] == ["side-by-side"]
    columns = [a["data-design"] for t, a in elements if t == "g" and a.get("class") == "design"]
    assert columns == ["one-pool", "weighted"]
    claims = [(a["data-instance-type"], a["data-generation"]) for t, a in elements
              if t == "rect" and a.get("class") == "nodeclaim"]
    assert claims == [("c7i.2xlarge", "7"), ("c8i.2xlarge", "8")]
    highlighted = {(a["data-field"], a["data-design"]) for t, a in elements if t == "td" and a.get("class") == "diff"}
    assert ("generations", "weighted") in highlighted and ("nodeclaims", "weighted") not in highlighted
    # the page needs no script: there is none, before or after Chromium parsed it
    assert not any(t == "script" for t, _ in elements)
    assert "<script" not in compare_report["html"].lower()


def test_screenshot_shows_a_rendered_page(compare_report: dict[str, Any]) -> None:
    # an empty page of the same size, measured in the same run, compresses to a few KB; the
    # table, the coloured NodeClaim boxes and their text make the picture several times larger
    assert len(compare_report["png"]) > 4 * compare_report["blank"], (len(compare_report["png"]),
                                                                     compare_report["blank"])


def test_screenshot_draws_each_generations_box_with_white_labels(compare_report: dict[str, Any]) -> None:
    """The boxes are painted in their generation's colour, and their labels in white (the page's
    chart stylesheet must not turn them dark-on-blue)."""
    rows = png_rows(compare_report["png"], 400)  # the side-by-side chart sits near the top
    for gen in ("7", "8"):
        hex_colour = color_for(gen, ["7", "8"]).lstrip("#")
        colour = tuple(int(hex_colour[i:i + 2], 16) for i in (0, 2, 4))
        # the box's rows: ~290 px of the colour each (the legend's swatch has 12)
        hits = [(x, y) for y, row in enumerate(rows) if sum(1 for px in row if px == colour) > 100
                for x, px in enumerate(row) if px == colour]
        assert len(hits) > 1000, (gen, len(hits))  # a box of ~290 x 36 px, less its text
        xs, ys = [x for x, _ in hits], [y for _, y in hits]
        inside = [rows[y][x] for y in range(min(ys), max(ys) + 1) for x in range(min(xs), max(xs) + 1)]
        assert sum(1 for px in inside if min(px) > 230) > 50, gen  # white label pixels
        assert not any(max(px) < 60 for px in inside), gen  # no dark text on the box
