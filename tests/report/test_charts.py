"""The sweep report's cost chart reads at a glance: its $/h axis has round, distinct ticks over the
band that matters (issue 37: ticks 0.320/0.385/0.450/0.514/0.579, and a flat line of three equal
designs labelled 0.357/0.356/0.356/0.355/0.354)."""

from __future__ import annotations

import re

import pytest

from karpy.report.charts import line_chart

DATES = ["2025-10-20", "2025-12-08", "2026-07-20"]


def _ticks(svg: str) -> list[str]:
    return re.findall(r'<text class="y-tick"[^>]*>([^<]*)</text>', svg)


@pytest.mark.parametrize("series,expected", [
    # the cookbook outage sweep: every design at c7i.2xlarge's $0.357/h
    ([("01", [0.357] * 3), ("02", [0.357] * 3), ("05", [0.357] * 3)], ["0.35", "0.36", "0.37"]),
    # normal capacity: 7th gen against the 5 % dearer 8th gen
    ([("01", [0.357] * 3), ("02", [0.37484] * 3)],
     ["0.350", "0.355", "0.360", "0.365", "0.370", "0.375", "0.380"]),
    # the 2023-2026 sweep: r8i.2xlarge at $0.55568/h once
    ([("01", [0.357] * 3), ("02", [0.357, 0.55568, 0.37484])],
     ["0.30", "0.35", "0.40", "0.45", "0.50", "0.55", "0.60"]),
    # a wide spread: the axis starts at 0
    ([("a", [0.1, 0.3, 0.55])], ["0.00", "0.20", "0.40", "0.60"]),
])
def test_cost_axis_has_round_distinct_ticks_over_the_band_that_matters(series: list[tuple[str, list[float]]],
                                                                        expected: list[str]) -> None:
    svg = line_chart("c", "cost", DATES, series)
    ticks = _ticks(svg)
    assert ticks == expected
    assert len(set(ticks)) == len(ticks)
    values = [v for _, vs in series for v in vs]
    assert float(ticks[0]) <= min(values) and max(values) <= float(ticks[-1])
    if float(ticks[0]) > 0:
        assert f"axis starts at {ticks[0]}, not 0" in svg
    else:
        assert "axis starts at" not in svg
