"""Tests of karpy.report.html: structure and numbers, read back with html.parser."""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from html import escape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from karpy.report import render_html
from karpy.report.html import BAR_MAX

SAMPLE = Path(__file__).parent / "sample_document.json"
VOID = {"meta", "br", "img", "link", "input", "hr", "area", "base", "col", "embed", "source", "wbr"}


def sample() -> dict[str, Any]:
    """A fresh copy of the hand-written sample document."""
    return json.loads(SAMPLE.read_text(encoding="utf-8"))


@dataclass
class El:
    """A parsed element."""

    tag: str
    attrs: dict[str, str]
    children: list[El] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(self.texts + [c.text() for c in self.children])

    def iter(self) -> list[El]:
        out = [self]
        for c in self.children:
            out.extend(c.iter())
        return out

    def find_all(self, tag: str | None = None, **attrs: str) -> list[El]:
        """Descendants (and self) with that tag and those attributes (``data_x`` means ``data-x``)."""
        want = {k.replace("_", "-"): v for k, v in attrs.items()}
        return [
            e
            for e in self.iter()
            if (tag is None or e.tag == tag) and all(e.attrs.get(k) == v for k, v in want.items())
        ]

    def by_id(self, ident: str) -> El:
        found = self.find_all(id=ident)
        assert len(found) == 1, (ident, len(found))
        return found[0]


class TreeBuilder(HTMLParser):
    """Builds an El tree; checks that every closing tag matches the open one."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = El("#root", {})
        self.stack = [self.root]
        self.doctype: str | None = None

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        el = El(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(el)
        if tag not in VOID:
            self.stack.append(el)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].texts.append(data)


def parse(page: str) -> El:
    builder = TreeBuilder()
    builder.feed(page)
    builder.close()
    assert builder.stack == [builder.root], "unclosed elements"
    assert builder.doctype is not None and builder.doctype.lower() == "doctype html"
    return builder.root


@pytest.fixture(scope="module")
def page() -> str:
    return render_html(sample())


@pytest.fixture(scope="module")
def dom(page: str) -> El:
    return parse(page)


def test_sections_in_order(dom: El) -> None:
    ids = [s.attrs.get("id") for s in dom.find_all("section")]
    assert ids == ["summary", "cost-by-nodepool", "cost-by-family", "instance-type-mix", "placement"]
    assert dom.find_all("title")[0].text() == "karpy simulation"


def test_summary_numbers(dom: El) -> None:
    assert dom.by_id("summary-region").text() == "us-east-1"
    prices = dom.by_id("summary-prices")
    assert prices.attrs["data-date"] == "2026-07-20"
    # the card: date and region; the provenance a hover (title) or a footnote away
    assert prices.text() == "2026-07-20 \u00b7 us-east-1" + "1"
    assert prices.attrs["title"].startswith("https://pricing.us-east-1.amazonaws.com/")
    assert "Prices: source: https://pricing.us-east-1." in dom.by_id("price-provenance").text()
    total = dom.by_id("summary-total")
    assert total.attrs["data-cost"] == "0.51580"
    assert total.text() == "$0.51580/h"
    claims = dom.by_id("summary-nodeclaims").attrs
    assert (claims["data-count"], claims["data-launched"], claims["data-failed"]) == ("4", "3", "1")
    pods = dom.by_id("summary-pods")
    assert (pods.attrs["data-running"], pods.attrs["data-pending"], pods.attrs["data-deleted"]) == ("9", "2", "1")
    assert pods.text() == "9 running, 2 pending, 1 deleted"


def test_cost_by_nodepool_chart_and_table(dom: El) -> None:
    sec = dom.by_id("cost-by-nodepool")
    bars = sec.find_all("g")
    assert [(b.attrs["data-nodepool"], b.attrs["data-cost"]) for b in bars] == [
        ("general", "0.33730"),
        ("compute", "0.17850"),
    ]
    widths = [float(b.find_all("rect")[0].attrs["width"]) for b in bars]
    assert widths[0] == pytest.approx(BAR_MAX)
    assert widths[1] == pytest.approx(BAR_MAX * 0.1785 / 0.3373, abs=0.01)
    assert "$0.33730/h" in bars[0].text() and "$0.17850/h" in bars[1].text()
    rows = sec.find_all("tr", data_nodepool="general") + sec.find_all("tr", data_nodepool="compute")
    cells = [[td.text() for td in r.find_all("td")] for r in rows]
    # NodePool, NodeClaims, Failed, Pods, $/h, Share
    assert cells == [
        ["general", "2", "0", "7", "$0.33730", "65.4%"],
        ["compute", "1", "1", "1", "$0.17850", "34.6%"],
    ]


def test_cost_by_family(dom: El) -> None:
    sec = dom.by_id("cost-by-family")
    assert [(b.attrs["data-family"], b.attrs["data-cost"]) for b in sec.find_all("g")] == [
        ("c7i", "0.31420"),
        ("m7i", "0.20160"),
    ]
    rows = [[td.text() for td in r.find_all("td")] for r in sec.find_all("tr") if r.find_all("td")]
    assert rows == [["c7i", "2", "3", "$0.31420", "60.9%"], ["m7i", "1", "5", "$0.20160", "39.1%"]]


def test_family_is_derived_from_the_type_name_without_the_label() -> None:
    doc = sample()
    for nc in doc["nodeclaims"]:
        nc["labels"].pop("karpenter.k8s.aws/instance-family", None)
    doc["nodeclaims"][3]["instance_type"] = "default-instance-type"  # fake provider style
    sec = parse(render_html(doc)).by_id("cost-by-family")
    assert {b.attrs["data-family"]: b.attrs["data-cost"] for b in sec.find_all("g")} == {
        "m7i": "0.20160",
        "c7i": "0.13570",
        "default-instance-type": "0.17850",
    }


def test_instance_type_mix(dom: El) -> None:
    sec = dom.by_id("instance-type-mix")
    rows = sec.find_all("tr")[1:]
    got = [(r.attrs["data-instance-type"], r.attrs["data-count"]) for r in rows]
    assert got == [("m7i.xlarge", "1"), ("c7i.2xlarge", "1"), ("c7i.xlarge", "1")]
    assert [td.text() for td in rows[1].find_all("td")] == ["c7i.2xlarge", "c7i", "1", "", "spot \u00d71", "$0.13570"]


def test_instance_type_mix_counts_repeated_types() -> None:
    doc = sample()
    doc["nodeclaims"][1].update(instance_type="m7i.xlarge", capacity_type="on-demand")
    doc["nodeclaims"][3].update(instance_type="m7i.xlarge", capacity_type="spot")
    rows = parse(render_html(doc)).by_id("instance-type-mix").find_all("tr")[1:]
    assert [(r.attrs["data-instance-type"], r.attrs["data-count"]) for r in rows] == [("m7i.xlarge", "3")]
    assert rows[0].find_all("td")[4].text() == "on-demand \u00d72, spot \u00d71"


def test_placement_per_nodeclaim(dom: El) -> None:
    sec = dom.by_id("placement")
    cards = sec.find_all("article")
    assert [c.attrs["data-nodeclaim"] for c in cards] == [
        "general-7xk2p",
        "general-q9w3d",
        "compute-5mfr8",
        "compute-h2c6t",
    ]
    doc = sample()
    for card, nc in zip(cards, doc["nodeclaims"]):
        assert [li.attrs["data-pod"] for li in card.find_all("li") if "data-pod" in li.attrs] == nc["pods"]
    failed = cards[2]
    assert failed.attrs["data-launched"] == "false"
    errors = [li.text() for li in failed.find_all("li")]
    assert errors == [
        "InsufficientInstanceCapacity: c8i.xlarge in us-east-1a",
        "InsufficientInstanceCapacity: c8i.xlarge in us-east-1b",
    ]
    assert cards[0].attrs["data-cost"] == "0.20160"


def test_pending_deleted_and_other_nodes(dom: El) -> None:
    doc = sample()
    pending = dom.by_id("table-pending").find_all("tr", data_phase="Pending")
    assert [r.attrs["data-pod"] for r in pending] == ["batch/render-1", "ml/train-0"]
    for row in pending:
        assert row.find_all("td")[2].text() == doc["pods"][row.attrs["data-pod"]]["message"]
    deleted = dom.by_id("table-deleted").find_all("tr", data_phase="Deleted")
    assert [r.attrs["data-pod"] for r in deleted] == ["default/low-prio-0"]
    others = dom.by_id("table-other-nodes").find_all("tr")[1:]
    assert [(r.attrs["data-pod"], r.attrs["data-node"]) for r in others] == [("kube-system/coredns-0", "existing-node-1")]


def test_many_pods_fold_into_details_without_script() -> None:
    doc = sample()
    doc["nodeclaims"][0]["pods"] = [f"default/web-{i}" for i in range(25)]
    card = parse(render_html(doc)).find_all("article", data_nodeclaim="general-7xk2p")[0]
    assert len(card.find_all("li")) == 25  # every pod is in the page
    details = card.find_all("details")
    assert len(details) == 1 and len(details[0].find_all("li")) == 5
    assert details[0].find_all("summary")[0].text() == "5 more pods"


def test_self_contained_no_script_no_urls(page: str, dom: El) -> None:
    tags = {e.tag for e in dom.iter()}
    assert not tags & {"script", "link", "img", "iframe", "object", "embed", "a", "form", "base"}
    assert all(not k.startswith("on") and k not in ("src", "href", "xlink:href") for e in dom.iter() for k in e.attrs)
    source = escape(sample()["prices"]["source"], quote=True)
    assert page.count(source) == 2  # the price card's hover and its footnote
    rest = page.replace(source, "")
    assert "http://" not in rest and "https://" not in rest
    assert "url(" not in rest and "@import" not in rest
    csp = dom.find_all("meta", http_equiv="Content-Security-Policy")
    assert csp and "default-src 'none'" in csp[0].attrs["content"]
    assert len(dom.find_all("svg", **{"class": "chart"})) == 2 and len(dom.find_all("style")) == 1


def test_everything_user_supplied_is_escaped() -> None:
    doc = sample()
    evil = '"><script>alert(1)</script><img src=x onerror=alert(2)>'
    doc["nodeclaims"][0]["nodepool"] = evil
    doc["nodeclaims"][0]["pods"][0] = evil
    doc["pods"]["ml/train-0"]["message"] = evil
    doc["region"] = evil
    doc["nodeclaims"][2]["fleet"]["errors"][0]["error_code"] = evil
    page = render_html(doc, title=evil)
    assert "<script" not in page and "<img" not in page
    dom = parse(page)
    assert not {e.tag for e in dom.iter()} & {"script", "img"}
    assert dom.by_id("summary-region").text() == evil
    assert dom.find_all("title")[0].text() == evil
    assert dom.by_id("cost-by-nodepool").find_all("g", data_nodepool=evil)
    row = dom.by_id("table-pending").find_all("tr", data_pod="ml/train-0")[0]
    assert row.find_all("td")[2].text() == evil
    assert dom.find_all("li", data_pod=evil)[0].text() == evil
    assert dom.find_all("li", data_error_code=evil)


def test_deterministic_byte_identical(page: str) -> None:
    doc = sample()
    before = copy.deepcopy(doc)
    assert render_html(doc) == page
    assert render_html(json.loads(json.dumps(doc))) == page
    assert doc == before


def test_empty_document_still_renders() -> None:
    dom = parse(render_html({"region": "eu-west-1", "nodeclaims": [], "pods": {}, "cost_per_hour": 0}))
    assert dom.by_id("summary-total").attrs["data-cost"] == "0.00000"
    assert not dom.find_all("svg")
    assert dom.by_id("placement").find_all("article") == []


def test_warnings_are_shown_when_present() -> None:
    doc = sample()
    doc["warnings"] = ["NodePool \"gpu\" has no instance types"]
    items = parse(render_html(doc)).by_id("warnings").find_all("li")
    assert [i.text() for i in items] == ['NodePool "gpu" has no instance types']
    assert 'id="warnings"' not in render_html(sample())


names = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=10)


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    claims = []
    for i in range(draw(st.integers(0, 6))):
        ok = draw(st.booleans())
        claims.append(
            {
                "name": f"claim-{i}",
                "nodepool": draw(st.sampled_from(["a", "b", "<c>", "d&e"])),
                "instance_type": draw(st.sampled_from(["m7i.large", "c8i.xlarge", "fake-it-1"])) if ok else None,
                "capacity_type": draw(st.sampled_from(["on-demand", "spot"])),
                "zone": "z",
                "price": round(draw(st.floats(0, 10, allow_nan=False)), 4) if ok else 0.0,
                "labels": {},
                "pods": draw(st.lists(names, max_size=4)),
                "fleet": None,
            }
        )
    return {"region": draw(names), "nodeclaims": claims, "pods": {}}


@settings(max_examples=50, deadline=None)
@given(documents())
def test_any_document_parses_and_costs_add_up(doc: dict[str, Any]) -> None:
    dom = parse(render_html(doc))
    launched = [nc for nc in doc["nodeclaims"] if nc["instance_type"]]
    expected = sum(nc["price"] for nc in launched)
    assert float(dom.by_id("summary-total").attrs["data-cost"]) == pytest.approx(expected, abs=1e-5)
    pools = dom.by_id("cost-by-nodepool").find_all("tr")[1:]
    assert sum(float(r.attrs["data-cost"]) for r in pools) == pytest.approx(expected, abs=1e-4)
    assert {r.attrs["data-nodepool"] for r in pools} == {nc["nodepool"] for nc in doc["nodeclaims"]}
    mix = dom.by_id("instance-type-mix").find_all("tr")[1:]
    assert sum(int(r.attrs["data-count"]) for r in mix) == len(launched)
    assert re.fullmatch(r"\d+\.\d{5}", dom.by_id("summary-total").attrs["data-cost"])


def test_cost_by_nodepool_shares_add_up_after_nodes_were_deleted() -> None:
    """tests/sim/data/generation-outage.yaml (8th gen out 1h-2h, then back) with the disruption
    controller: consolidation deletes two NodeClaims. The cost sections price what runs at the end,
    as the total does (main: the deleted NodeClaims' $/h counted too, 83.3% + 52.9% = 136%)."""
    import karpy

    data = Path(__file__).parents[1] / "sim" / "data" / "generation-outage.yaml"
    result = karpy.simulate([str(data)], prices="2026-07-20", disruption=True)
    result.cloud_provider.close()
    doc = result.to_document()
    assert any(nc.get("deleted_at") is not None for nc in doc["nodeclaims"])
    dom = parse(render_html(doc))
    pools = dom.by_id("cost-by-nodepool").find_all("tr")[1:]
    assert sum(float(r.attrs["data-cost"]) for r in pools) == pytest.approx(doc["cost_per_hour"], abs=1e-4)
    shares = [float(r.find_all("td")[-1].text().rstrip("%")) for r in pools]
    assert all(s <= 100.0 for s in shares) and sum(shares) == pytest.approx(100.0, abs=0.2)
    families = dom.by_id("cost-by-family").find_all("tr")[1:]
    assert sum(float(r.attrs["data-cost"]) for r in families) == pytest.approx(doc["cost_per_hour"], abs=1e-4)
    deleted = sum(1 for nc in doc["nodeclaims"] if nc.get("deleted_at") is not None)
    assert f"the {deleted} NodeClaims deleted during the run are left out" in dom.by_id("cost-by-nodepool").text()
