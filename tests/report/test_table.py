"""Tests of karpy.report.table (the ``-o table`` view)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from karpy.report import instance_family, is_launched, render_table
from karpy.report.table import abbreviate_pods, clean, format_price

SAMPLE = Path(__file__).parent / "sample_document.json"


def sample() -> dict[str, Any]:
    """A fresh copy of the hand-written sample document."""
    return json.loads(SAMPLE.read_text(encoding="utf-8"))


def section(text: str, title: str) -> list[str]:
    """The lines of one section (from its title line up to the next blank line)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start, len(lines)) if not lines[i]), len(lines))
    return lines[start:end]


def test_nodeclaims_section_in_document_order_with_5_decimal_prices() -> None:
    out = render_table(sample())
    lines = section(out, "NODECLAIMS")
    assert lines[0] == "NODECLAIMS (3)"
    header = lines[1]
    assert header.split() == ["NAME", "NODEPOOL", "INSTANCE", "TYPE", "CAPACITY", "ZONE", "$/H", "PODS"]
    rows = lines[2:]
    assert [r.split()[0] for r in rows] == ["general-7xk2p", "general-q9w3d", "compute-h2c6t"]
    assert rows[0].split()[:6] == ["general-7xk2p", "general", "m7i.xlarge", "on-demand", "us-east-1a", "0.20160"]
    assert rows[1].split()[:6] == ["general-q9w3d", "general", "c7i.2xlarge", "spot", "us-east-1b", "0.13570"]
    assert rows[2].split()[:6] == ["compute-h2c6t", "compute", "c7i.xlarge", "on-demand", "us-east-1c", "0.17850"]


def test_columns_are_fixed_width_and_aligned() -> None:
    lines = section(render_table(sample()), "NODECLAIMS")
    header, rows = lines[1], lines[2:]
    for column in ("NODEPOOL", "INSTANCE TYPE", "CAPACITY", "ZONE", "$/H", "PODS"):
        col = header.index(column)
        for row in rows:
            assert row[col - 2 : col] == "  ", (column, row)
            assert row[col] != " ", (column, row)
    assert all(line == line.rstrip() for line in render_table(sample()).splitlines())


def test_pods_are_counted_and_abbreviated() -> None:
    rows = section(render_table(sample()), "NODECLAIMS")[2:]
    assert rows[0].endswith("5: default/web-0, default/web-1, default/web-2, +2 more")
    assert rows[1].endswith("2: default/api-0, default/api-1")
    assert rows[2].endswith("1: batch/render-0")
    assert abbreviate_pods([]) == "0"
    assert abbreviate_pods(["a", "b", "c"]) == "3: a, b, c"


def test_failed_launch_lists_each_fleet_error_when_verbose() -> None:
    out = render_table(sample(), verbose=True)
    lines = section(out, "FAILED LAUNCHES")
    assert lines[0] == "FAILED LAUNCHES (1)"
    assert [line.split() for line in lines[2:]] == [
        ["compute-5mfr8", "compute", "on-demand", "InsufficientInstanceCapacity", "c8i.xlarge", "us-east-1a"],
        ["compute-5mfr8", "compute", "on-demand", "InsufficientInstanceCapacity", "c8i.xlarge", "us-east-1b"],
    ]
    # the failed claim is not in the NodeClaims section
    assert all("compute-5mfr8" not in line for line in section(out, "NODECLAIMS"))


def test_failed_launches_are_grouped_by_nodepool_and_error() -> None:
    doc = sample()
    [failed] = [nc for nc in doc["nodeclaims"] if nc["launched"] is False]
    for i, (itype, zone) in enumerate([("m8i.xlarge", "us-east-1c"), ("r8i.xlarge", "us-east-1a")]):
        twin = copy.deepcopy(failed)
        twin["name"] = f"compute-twin{i}"
        twin["fleet"]["errors"].append({"error_code": "InsufficientInstanceCapacity", "instance_type": itype,
                                        "zone": zone})
        doc["nodeclaims"].append(twin)
    lines = section(render_table(doc), "FAILED LAUNCHES")
    assert lines == [
        "FAILED LAUNCHES (3)",
        "3 launches failed: c8i/m8i/r8i \u00d7 3 zones, InsufficientInstanceCapacity (nodepool compute on-demand; "
        "compute-5mfr8, compute-twin0, compute-twin1)",
    ]
    assert len(section(render_table(doc, verbose=True), "FAILED LAUNCHES")) == 2 + 2 + 3 + 3


def test_pending_message_names_the_capacity_errors_that_emptied_the_candidates() -> None:
    doc = sample()
    doc["pods"]["ml/train-0"]["message"] = "nodepool requirements filtered out all available instance types"
    lines = section(render_table(doc), "PENDING PODS")
    row = next(line for line in lines if line.startswith("ml/train-0"))
    assert row.endswith("filtered out all available instance types (capacity errors: 1 launch failed: "
                        "c8i \u00d7 2 zones, InsufficientInstanceCapacity (nodepool compute on-demand))")
    # a message about something else is left alone; the JSON document is unchanged
    assert next(line for line in lines if line.startswith("batch/render-1")).endswith("incoming pod.")
    assert doc["pods"]["ml/train-0"]["message"] == "nodepool requirements filtered out all available instance types"


def test_pending_pods_with_their_message() -> None:
    doc = sample()
    lines = section(render_table(doc), "PENDING PODS")
    assert lines[0] == "PENDING PODS (2)"
    assert lines[1].split() == ["POD", "NOMINATED", "MESSAGE"]
    assert lines[2].startswith("batch/render-1")
    assert lines[2].endswith(doc["pods"]["batch/render-1"]["message"])
    assert lines[3].startswith("ml/train-0")
    assert lines[3].endswith(doc["pods"]["ml/train-0"]["message"])
    # running and deleted pods are not listed as pending
    assert not any("low-prio-0" in line or "coredns" in line for line in lines)


def test_total_is_the_last_line() -> None:
    out = render_table(sample())
    assert out.endswith("\n")
    assert out.splitlines()[-1] == "total: $0.51580/h"
    assert out.splitlines()[0].startswith("region: us-east-1  prices: 2026-07-20 (")


def test_total_falls_back_to_the_sum_of_launched_prices() -> None:
    doc = sample()
    del doc["cost_per_hour"]
    doc["nodeclaims"][2]["price"] = 9.0  # failed launch: never counted
    assert render_table(doc).splitlines()[-1] == "total: $0.51580/h"


def test_empty_document() -> None:
    out = render_table({"region": "us-west-2", "nodeclaims": [], "pods": {}, "cost_per_hour": 0.0})
    assert out.splitlines() == ["region: us-west-2", "", "NODECLAIMS (0)", "(none)", "", "total: $0.00000/h"]


def test_no_control_characters_reach_the_terminal() -> None:
    doc = sample()
    doc["pods"]["ml/train-0"]["message"] = "\x1b[31mred\x1b[0m\nsecond line\tend"
    doc["nodeclaims"][0]["nodepool"] = "gen\x07eral"
    out = render_table(doc)
    assert "\x1b" not in out and "\x07" not in out and "\t" not in out
    assert "\\x1b[31mred\\x1b[0m second line end" in out
    assert "gen\\x07eral" in out
    assert clean(None) == "-" and clean("  a \n b ") == "a b"


def test_deterministic_and_does_not_modify_the_document() -> None:
    doc = sample()
    before = copy.deepcopy(doc)
    first = render_table(doc)
    assert render_table(json.loads(json.dumps(doc))) == first
    assert doc == before


def test_launched_and_family_helpers() -> None:
    doc = sample()
    assert [is_launched(nc) for nc in doc["nodeclaims"]] == [True, True, False, True]
    nc = dict(doc["nodeclaims"][0], launched=False)
    assert not is_launched(nc)  # an explicit launched=false wins over the instance type
    assert instance_family(doc["nodeclaims"][0]) == "m7i"
    assert instance_family({"instance_type": "c8i.large", "labels": {}}) == "c8i"
    assert instance_family({"instance_type": "default-instance-type"}) == "default-instance-type"
    assert instance_family({"instance_type": None}) is None
    assert format_price(0.1) == "0.10000" and format_price(None) == "-"


names = st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=12)


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    """Random contract-shaped documents, launched and failed claims mixed."""
    claims = []
    for i in range(draw(st.integers(0, 5))):
        ok = draw(st.booleans())
        claims.append(
            {
                "name": f"claim-{i}",
                "nodepool": draw(names),
                "instance_type": draw(names) if ok else None,
                "capacity_type": draw(st.sampled_from(["on-demand", "spot", "reserved"])),
                "zone": draw(st.none() | names),
                "price": draw(st.floats(0, 100, allow_nan=False)) if ok else 0.0,
                "labels": {},
                "pods": draw(st.lists(names, max_size=6)),
                "fleet": {"errors": [] if ok else [{"error_code": "ICE", "instance_type": "x", "zone": "z"}]},
            }
        )
    pods = {
        f"ns/p{i}": {"phase": draw(st.sampled_from(["Running", "Pending", "Deleted"])), "message": draw(st.none() | names)}
        for i in range(draw(st.integers(0, 5)))
    }
    return {"region": draw(names), "nodeclaims": claims, "pods": pods}


@settings(max_examples=60, deadline=None)
@given(documents())
def test_any_document_renders_every_claim_and_the_summed_total(doc: dict[str, Any]) -> None:
    out = render_table(doc)
    lines = out.splitlines()
    expected = sum(nc["price"] for nc in doc["nodeclaims"] if nc["instance_type"] is not None)
    assert lines[-1] == f"total: ${expected:.5f}/h"
    verbose = render_table(doc, verbose=True).splitlines()
    for nc in doc["nodeclaims"]:
        assert any(line.startswith(nc["name"] + " ") for line in verbose)
        if nc["instance_type"] is not None:
            assert any(line.startswith(nc["name"] + " ") for line in lines)
    failed = sum(nc["instance_type"] is None for nc in doc["nodeclaims"])
    if failed:
        assert f"FAILED LAUNCHES ({failed})" in lines and any(" failed: " in line for line in lines)
    pending = [k for k, v in doc["pods"].items() if v["phase"] == "Pending"]
    assert sum(1 for line in lines if line.startswith("ns/p")) == len(pending)
    assert render_table(doc) == out
