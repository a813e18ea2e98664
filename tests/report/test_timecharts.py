"""The report's charts over time (Gantt, pending pods, $/h): inline SVG, numbers readable back,
absent for a run without time-dependent events; checked in headless Chromium (DOM and screenshot)
in test_html_chromium.py (the browser checks live there, beside the other report's)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from karpy.report import render_html
from karpy.report.timecharts import pending_series, render_time_charts


HERE = Path(__file__).parent
TIMELINE_DOC = HERE / "sample_timeline_document.json"  # generation-outage scenario (tests/sim/data)
PLAIN_DOC = HERE / "sample_document.json"


def doc():
    return json.loads(TIMELINE_DOC.read_text(encoding="utf-8"))


def test_no_charts_without_time_events():
    plain = json.loads(PLAIN_DOC.read_text(encoding="utf-8"))
    assert render_time_charts(plain) == ""
    assert 'id="over-time"' not in render_html(plain)


def test_gantt_bars_follow_the_nodeclaims():
    d = doc()
    page = render_html(d)
    bars = {m["data-nodeclaim"]: m for m in (dict(re.findall(r'(data-[a-z-]+)="([^"]*)"', g))
                                             for g in re.findall(r'<g class="gantt-bar"[^>]*>', page))}
    launched = {n["name"]: n for n in d["nodeclaims"] if n["launched"]}
    assert set(bars) == set(launched)
    for name, a in bars.items():
        assert float(a["data-start"]) == launched[name]["launched_at"]
        assert float(a["data-end"]) == (launched[name]["deleted_at"] or d["cost"]["horizon"])
        assert a["data-generation"] == launched[name]["labels"]["karpenter.k8s.aws/instance-generation"]
    assert {a["data-generation"] for a in bars.values()} == {"7", "8"}
    assert "<script" not in page and "http" not in page.split("</style>", 1)[1].replace("http-equiv", "")


def test_pending_and_cost_series():
    d = doc()
    series = pending_series(d["timeline"])
    assert series[0] == (0.0, 4) and max(v for _, v in series) >= 16 and series[-1][1] == 0
    cost_svg = render_time_charts(d).split('id="chart-cost"', 1)[1]
    cost_points = [(float(t), float(v)) for t, v in re.findall(r'data-t="([^"]*)" data-value="([^"]*)"', cost_svg)]
    assert [(t, v) for t, v in d["cost"]["per_hour"]] == cost_points




def test_a_cancelled_reservation_is_marked_on_every_time_chart():
    """A Scenario's ``cancel_reservation`` (its ODCR's nodes turn on-demand, the $/h steps up) is marked
    on the shared time axis as a capacity event, like ``capacity unavailable``."""
    import karpy
    from karpy.report.html import render_html
    from tests.awsprovider.test_capacity_reservation_timeline import RESERVED_NETWORK, RID, scenario

    doc = karpy.simulate(RESERVED_NETWORK + scenario("2h", f"{{at: 1h, cancel_reservation: {{id: {RID}}}}}"),
                         prices="2026-07-20").to_document()
    html = render_html(doc)
    for chart in ("chart-gantt", "chart-pending", "chart-cost"):
        svg = html.split(f'id="{chart}"', 1)[1].split("</svg>", 1)[0]
        assert 'class="event-mark"' in svg and 'data-category="capacity" data-t="3600"' in svg, chart
    assert f"capacityreservation.cancelled CapacityReservation/{RID}" in html


def test_gantt_labels_keep_the_instance_type_whole():
    """The bundled example scaled up: two NodeClaims of nodepool general, m7i.2xlarge and m7i.4xlarge;
    their Gantt rows read "general-shtrx m7i.2…" and "general-7djlf m7i.4…" (the size cut off)."""
    import karpy
    from karpy.report.html import render_html

    example = Path(karpy.__file__).parent / "examples" / "generation-preference.yaml"
    doc = karpy.simulate([example], prices="2026-07-20", until="2h",
                         events=["30m scale deployment/web 20"]).to_document()
    gantt = render_html(doc).split('id="chart-gantt"', 1)[1].split("</svg>", 1)[0]
    labels = re.findall(r'text-anchor="end">([^<]*)<title>([^<]*)</title>', gantt)
    assert len(labels) == 2
    for shown, full in labels:
        name, itype = full.split(" ")
        assert shown.endswith(" " + itype) and len(shown) <= 20 and name.endswith(shown.split(" ")[0].lstrip("\u2026"))
    assert {full.split(" ")[1] for _, full in labels} == {"m7i.2xlarge", "m7i.4xlarge"}
