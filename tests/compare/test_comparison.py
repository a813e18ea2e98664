"""karpy.compare on the generation-preference cookbook (examples/generation-preference/).

With the 2026-07-20 us-east-1 table, strategy 01 (one NodePool allowing both generations) launches
c7i.2xlarge (7th gen, lowest price) and strategy 02 (weighted NodePools) launches c8i.2xlarge: the
comparison's diff must name that generation change, and each run's document must be exactly the
document karpy.simulate gives for that design alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import karpy
from karpy.comparison import Comparison, CompareError
from karpy.report.compare import render_compare_html, render_compare_table

ROOT = Path(__file__).resolve().parents[2]
COOKBOOK = ROOT / "examples" / "generation-preference"
SHARED = [COOKBOOK / "common"]
PRICES = "2026-07-20"


@pytest.fixture(scope="module")
def comparison() -> Comparison:
    return karpy.compare({"one-pool": [COOKBOOK / "01-one-nodepool"], "weighted": [COOKBOOK / "02-weighted-nodepools"]},
                         shared=SHARED, prices=PRICES)


@pytest.fixture(scope="module")
def document(comparison: Comparison) -> dict[str, Any]:
    return comparison.to_document()


def test_diff_names_the_generation_change(document: dict[str, Any]) -> None:
    diff = document["diff"]
    assert diff["baseline"] == "one-pool"
    weighted = diff["designs"]["weighted"]
    assert weighted["fields"]["generations"] == {"one-pool": {"7": 1}, "weighted": {"8": 1}}
    assert weighted["fields"]["instance_types"] == {"one-pool": {"c7i.2xlarge": 1}, "weighted": {"c8i.2xlarge": 1}}
    assert "generation 7 -> 8" in weighted["changes"]
    assert "$/h 0.35700 -> 0.37484 (+0.01784, +5.0%)" in weighted["changes"]
    # same number of NodeClaims, same capacity type: not reported as differences
    assert "nodeclaims" not in weighted["fields"] and "capacity_types" not in weighted["fields"]
    assert diff["fields"] == ["instance_types", "generations", "nodepools", "cost_per_hour", "cost_total",
                              "node_hours_by_generation"]
    # both settle at the same virtual time, so the horizon is no difference
    assert "horizon" not in weighted["fields"]
    hours = weighted["fields"]["node_hours_by_generation"]
    assert list(hours["one-pool"]) == ["7"] and list(hours["weighted"]) == ["8"]
    # every pod moved from the c7i to the c8i node
    assert len(weighted["pods"]) == 6
    assert {tuple(v.values()) for v in weighted["pods"].values()} == {("c7i.2xlarge", "c8i.2xlarge")}


def test_each_run_is_the_document_simulate_gives(document: dict[str, Any]) -> None:
    alone = karpy.simulate([COOKBOOK / "02-weighted-nodepools", *SHARED], prices=PRICES)
    assert document["runs"]["weighted"] == json.loads(alone.to_json())
    assert document["designs"] == ["one-pool", "weighted"]
    assert document["outcomes"]["weighted"]["cost_per_hour"] == pytest.approx(0.37484)
    assert document["options"] == {"prices": PRICES}


def test_exit_code_and_json_are_deterministic(comparison: Comparison) -> None:
    assert comparison.exit_code == 0
    assert comparison.to_json() == comparison.to_json()
    again = karpy.compare({"one-pool": [COOKBOOK / "01-one-nodepool"],
                           "weighted": [COOKBOOK / "02-weighted-nodepools"]}, shared=SHARED, prices=PRICES)
    assert again.to_json() == comparison.to_json()


def test_table_marks_differing_rows_and_lists_the_changes(document: dict[str, Any]) -> None:
    text = render_compare_table(document)
    lines = text.splitlines()
    generations = next(line for line in lines if "generations" in line)
    assert generations.startswith("*") and generations.split()[-2:] == ["7", "8"]
    nodeclaims = next(line for line in lines if "NodeClaims" in line)
    assert not nodeclaims.startswith("*")
    assert "weighted vs one-pool: instance types c7i.2xlarge -> c8i.2xlarge; generation 7 -> 8" in text
    assert render_compare_table(document) == text


def test_report_puts_the_designs_side_by_side_in_svg(document: dict[str, Any]) -> None:
    page = render_compare_html(document)
    assert "<script" not in page.lower() and "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert page.count('class="design"') == 2
    assert 'data-instance-type="c7i.2xlarge" data-generation="7"' in page
    assert 'data-instance-type="c8i.2xlarge" data-generation="8"' in page
    assert '<td class="diff" data-field="generations" data-design="weighted">8</td>' in page
    assert '<td data-field="nodeclaims" data-design="weighted">1</td>' in page
    assert render_compare_html(document) == page


def test_a_design_leaving_pods_pending_gives_exit_code_3() -> None:
    # strategy 04 (instance-generation Gte 8) never falls back when 8th gen capacity fails
    comparison = karpy.compare({"one-pool": [COOKBOOK / "01-one-nodepool"], "gte8": [COOKBOOK / "04-generation-gte-8"]},
                               shared=SHARED, prices=PRICES, unavailable=["*8i.*:*:on-demand"])
    assert comparison.exit_code == 3
    fields = comparison.diff["designs"]["gte8"]["fields"]
    assert fields["pending_pods"] == {"one-pool": 0, "gte8": 6}
    assert fields["failed_launches"]["gte8"] > 0


@pytest.mark.parametrize("designs", [{}, {"only": [COOKBOOK / "01-one-nodepool"]}, {"": ["a"], "b": ["b"]}])
def test_bad_designs_raise_compare_error(designs: dict[str, Any]) -> None:
    with pytest.raises(CompareError):
        karpy.compare(designs, shared=SHARED)
