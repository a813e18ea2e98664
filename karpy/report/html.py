"""One self-contained HTML page for a simulation document (``karpy simulate --report FILE.html``).

The page has inline CSS and inline SVG only: no JavaScript, no external URL (a Content-Security-Policy
meta tag forbids loading anything). Every piece of document text is escaped with ``html.escape``.
Elements carry stable ids and ``data-*`` attributes (costs with 5 decimals) so tests and tools can
read the numbers back. Output is deterministic: same document, byte-identical page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

from karpy.report.table import (
    prices_notes,
    format_price,
    instance_family,
    is_launched,
    pods_by_phase,
    total_cost,
)

from karpy.report.timecharts import render_time_charts

__all__ = ["render_html", "warnings_section"]

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
"""Nothing may be fetched: the page is complete as written."""

CAPACITY_ORDER = ("on-demand", "spot", "reserved")
OVERLAY_ANNOTATION = "karpenter.sh/price-overlay-applied"

# Bar chart geometry (px).
CHART_WIDTH = 640
LABEL_WIDTH = 190
BAR_MAX = 330
ROW_HEIGHT = 28
BAR_HEIGHT = 18
LABEL_CHARS = 20
MAX_CARD_PODS = 20
"""Pods listed openly per NodeClaim card; the rest sit in a <details> block (no script needed)."""

STYLE = """
*{box-sizing:border-box}
body{margin:0;background:#f4f6f8;color:#1a202c;font:14px/1.45 "DejaVu Sans","Liberation Sans",Arial,sans-serif}
header{background:#1f3a5f;color:#fff;padding:16px 28px}
header h1{margin:0;font-size:22px;font-weight:600}
header p{margin:4px 0 0;color:#cbd5e0;font-size:13px}
main{max-width:1040px;margin:0 auto;padding:8px 28px 40px}
section{background:#fff;border:1px solid #dde3ea;border-radius:6px;margin:18px 0;padding:14px 20px}
h2{margin:0 0 12px;font-size:17px;color:#1f3a5f}
h3{margin:16px 0 8px;font-size:15px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(170px,1fr));gap:10px;margin:0}
.cards div{background:#f7fafc;border:1px solid #e2e8f0;border-radius:5px;padding:8px 12px;min-width:0}
.cards dt{font-size:12px;color:#4a5568;text-transform:uppercase;letter-spacing:.04em}
.cards dd{margin:2px 0 0;font-size:16px;font-weight:600;overflow-wrap:anywhere}
.cards dd .src{display:block;font-size:11px;font-weight:400;color:#4a5568;overflow-wrap:anywhere}
#event-legend{margin:0 0 6px;font-size:13px}
.event-key{margin-left:10px;white-space:nowrap}
.event-key i{display:inline-block;width:18px;height:0;border-top:2px dashed;margin-right:4px;vertical-align:middle}
#event-list{margin:4px 0 8px;padding-left:22px;font-size:12px;columns:2;column-gap:24px}
.footnote{margin:8px 0 0;font-size:11px;color:#4a5568;overflow-wrap:anywhere}
.cards dd sup{color:#2b6cb0}
svg.chart{display:block;max-width:100%;height:auto;margin:0 0 10px}
svg.chart text{font:13px "DejaVu Sans","Liberation Sans",Arial,sans-serif;fill:#1a202c}
svg.chart .bar-nodepool rect{fill:#3b6fb6}
svg.chart .bar-family rect{fill:#2f855a}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #e2e8f0;vertical-align:top}
th{background:#edf2f7;font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.msg{overflow-wrap:anywhere}
td.pod{white-space:nowrap}
details summary{cursor:pointer;color:#2b6cb0;font-size:12px}
.meter{background:#e2e8f0;height:10px;border-radius:3px;min-width:80px}
.meter span{display:block;height:10px;background:#805ad5;border-radius:3px}
.claims{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:12px}
article.nodeclaim{border:1px solid #cbd5e0;border-left:4px solid #3b6fb6;border-radius:5px;padding:8px 12px;min-width:0}
article.nodeclaim.failed{border-left-color:#c53030;background:#fff5f5}
article.nodeclaim h4{margin:0;font-size:14px;overflow-wrap:anywhere}
article.nodeclaim .meta{margin:2px 0 6px;color:#4a5568;font-size:12px;overflow-wrap:anywhere}
article.nodeclaim ul{margin:0;padding-left:18px;font-size:13px}
article.nodeclaim li{overflow-wrap:anywhere}
.badge{display:inline-block;font-size:11px;padding:0 6px;border-radius:8px;background:#e2e8f0;color:#2d3748;margin-left:4px}
.badge.spot{background:#fefcbf;color:#744210}
.badge.err{background:#fed7d7;color:#9b2c2c}
.empty{color:#718096;font-style:italic}
""".strip()


def _e(value: Any) -> str:
    """Escape any value for HTML text or a quoted attribute; ``-`` for None."""
    return escape("-" if value is None else str(value), quote=True)


def _cost(value: float) -> str:
    return f"{value:.5f}"


def _share(part: float, total: float) -> str:
    return f"{(100.0 * part / total) if total > 0 else 0.0:.1f}%"


def _price(nodeclaim: Mapping[str, Any]) -> float:
    price = nodeclaim.get("price")
    if isinstance(price, (int, float)) and not isinstance(price, bool):
        return float(price)
    return 0.0


@dataclass
class _Group:
    """Aggregate of NodeClaims sharing a key (a NodePool, a family or an instance type)."""

    key: str
    first: int
    cost: float = 0.0
    launched: int = 0
    failed: int = 0
    pods: int = 0
    capacity: dict[str, int] = field(default_factory=dict)


def _group(nodeclaims: Sequence[Mapping[str, Any]], key_of: Any, include_failed: bool) -> list[_Group]:
    """Group NodeClaims; order by cost descending, ties in document order (stable). NodeClaims
    deleted during the run are left out: the groups price what runs at the end, as the total does."""
    groups: dict[str, _Group] = {}
    for index, nc in enumerate(nodeclaims):
        if nc.get("deleted_at") is not None:
            continue
        ok = is_launched(nc)
        if not ok and not include_failed:
            continue
        key = key_of(nc)
        if key is None:
            continue
        g = groups.setdefault(str(key), _Group(key=str(key), first=index))
        if ok:
            g.launched += 1
            g.cost += _price(nc)
            g.pods += len(nc.get("pods") or [])
            ct = str(nc.get("capacity_type") or "-")
            g.capacity[ct] = g.capacity.get(ct, 0) + 1
        else:
            g.failed += 1
    return sorted(groups.values(), key=lambda g: (-round(g.cost, 9), g.first))


def _short(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "\u2026"


def _bar_chart(groups: Sequence[_Group], kind: str, attr: str, caption: str) -> str:
    """Horizontal SVG bar chart of group costs; each bar a ``<g data-{attr} data-cost>``."""
    if not groups:
        return '<p class="empty">No launched NodeClaims.</p>'
    top = max(g.cost for g in groups)
    height = ROW_HEIGHT * len(groups) + 8
    parts = [
        f'<svg class="chart" id="chart-{kind}" width="{CHART_WIDTH}" height="{height}" '
        f'viewBox="0 0 {CHART_WIDTH} {height}" role="img" aria-label="{_e(caption)}">'
    ]
    for i, g in enumerate(groups):
        y = 4 + i * ROW_HEIGHT
        width = (BAR_MAX * g.cost / top) if top > 0 else 0.0
        bar_x = LABEL_WIDTH + 6
        text_y = y + BAR_HEIGHT / 2 + 5
        parts.append(
            f'<g class="bar bar-{kind}" data-{attr}="{_e(g.key)}" data-cost="{_cost(g.cost)}">'
            f"<title>{_e(g.key)}: ${_cost(g.cost)}/h</title>"
            f'<svg x="0" y="{y - 4}" width="{LABEL_WIDTH - 4}" height="{ROW_HEIGHT}" overflow="hidden">'
            f'<text x="0" y="{text_y - y + 4:.1f}">{_e(_short(g.key))}</text></svg>'
            f'<rect x="{bar_x}" y="{y}" width="{width:.2f}" height="{BAR_HEIGHT}" rx="2"></rect>'
            f'<text x="{bar_x + width + 6:.2f}" y="{text_y:.1f}">${_cost(g.cost)}/h</text>'
            "</g>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _capacity_text(capacity: Mapping[str, int]) -> str:
    order = [c for c in CAPACITY_ORDER if c in capacity] + sorted(
        c for c in capacity if c not in CAPACITY_ORDER
    )
    return ", ".join(f"{c} \u00d7{capacity[c]}" for c in order)


def _summary(document: Mapping[str, Any], nodeclaims: Sequence[Mapping[str, Any]]) -> str:
    prices = document.get("prices") or {}
    launched = sum(1 for nc in nodeclaims if is_launched(nc))
    failed = len(nodeclaims) - launched
    counts = {p: len(pods_by_phase(document, p)) for p in ("Running", "Pending", "Deleted")}
    total = total_cost(document)
    return (
        '<section id="summary"><h2>Summary</h2><dl class="cards">'
        f'<div><dt>Region</dt><dd id="summary-region">{_e(document.get("region"))}</dd></div>'
        f'<div><dt>Price table</dt>{price_card(prices, document.get("region"))}</div>'
        f'<div><dt>Total cost</dt><dd id="summary-total" data-cost="{_cost(total)}">${_cost(total)}/h</dd></div>'
        + _billed_card(document)
        + f'<div><dt>NodeClaims</dt><dd id="summary-nodeclaims" data-count="{len(nodeclaims)}" '
        f'data-launched="{launched}" data-failed="{failed}">{launched} launched'
        f'{f", {failed} failed" if failed else ""}</dd></div>'
        f'<div><dt>Pods</dt><dd id="summary-pods" data-running="{counts["Running"]}" '
        f'data-pending="{counts["Pending"]}" data-deleted="{counts["Deleted"]}">'
        f'{counts["Running"]} running, {counts["Pending"]} pending, {counts["Deleted"]} deleted</dd></div>'
        f"</dl>{price_footnote(prices, document.get('region'))}</section>"
    )


def price_card(prices: Any, region: Any) -> str:
    """The price-table card's value: the date and the table's region (``PROXY`` when it stands in
    for another), the provenance on hover and in the footnote (:func:`price_footnote`)."""
    prices = prices if isinstance(prices, Mapping) else {}
    date = prices.get("date")
    table_region = prices.get("region") or region
    hover = "; ".join(str(x) for x in [prices.get("source"), *prices_notes(prices, region)] if x)
    proxy = ' <span class="badge err">proxy</span>' if prices.get("proxy") else ""
    mark = "<sup>1</sup>" if hover else ""
    return (f'<dd id="summary-prices" data-date="{_e(date)}" data-region="{_e(table_region)}" title="{_e(hover)}">'
            f'{_e(date)} \u00b7 {_e(table_region)}{proxy}{mark}</dd>')


def price_footnote(prices: Any, region: Any) -> str:
    """Where the prices come from and what they assume, as a footnote under the cards."""
    prices = prices if isinstance(prices, Mapping) else {}
    parts = [f"source: {prices['source']}"] if prices.get("source") else []
    parts.extend(prices_notes(prices, region))
    if not parts:
        return ""
    return f'<p id="price-provenance" class="footnote"><sup>1</sup> Prices: {_e("; ".join(parts))}.</p>'


def _cost_section(
    section_id: str, heading: str, kind: str, attr: str, column: str, groups: Sequence[_Group], total: float,
    deleted: int = 0,
) -> str:
    rows = "".join(
        f'<tr data-{attr}="{_e(g.key)}" data-cost="{_cost(g.cost)}">'
        f"<td>{_e(g.key)}</td><td class=\"num\">{g.launched}</td>"
        + (f'<td class="num">{g.failed}</td>' if kind == "nodepool" else "")
        + f'<td class="num">{g.pods}</td><td class="num">${_cost(g.cost)}</td>'
        f'<td class="num">{_share(g.cost, total)}</td></tr>'
        for g in groups
    )
    failed_th = '<th class="num">Failed</th>' if kind == "nodepool" else ""
    table = (
        f'<table class="data" id="table-{kind}"><thead><tr><th>{_e(column)}</th>'
        f'<th class="num">NodeClaims</th>{failed_th}<th class="num">Pods</th>'
        f'<th class="num">$/h</th><th class="num">Share</th></tr></thead><tbody>{rows}</tbody></table>'
    )
    note = (f'<p class="footnote">NodeClaims running at the end of the run; the {deleted} '
            f'NodeClaim{"s" if deleted != 1 else ""} deleted during the run {"are" if deleted != 1 else "is"} left '
            "out.</p>" if deleted else "")
    return (
        f'<section id="{section_id}"><h2>{_e(heading)}</h2>'
        f"{_bar_chart([g for g in groups if g.launched], kind, attr, heading)}{table}{note}</section>"
    )


def _type_mix(nodeclaims: Sequence[Mapping[str, Any]]) -> str:
    groups = _group(nodeclaims, lambda nc: nc.get("instance_type"), include_failed=False)
    groups.sort(key=lambda g: (-g.launched, g.first))
    top = max((g.launched for g in groups), default=0)
    family_of = {
        str(nc.get("instance_type")): instance_family(nc) for nc in nodeclaims if is_launched(nc)
    }
    rows = "".join(
        f'<tr data-instance-type="{_e(g.key)}" data-count="{g.launched}" data-cost="{_cost(g.cost)}">'
        f"<td>{_e(g.key)}</td><td>{_e(family_of.get(g.key))}</td>"
        f'<td class="num">{g.launched}</td>'
        f'<td><div class="meter"><span style="width:{100.0 * g.launched / top:.1f}%"></span></div></td>'
        f"<td>{_e(_capacity_text(g.capacity))}</td>"
        f'<td class="num">${_cost(g.cost)}</td></tr>'
        for g in groups
    )
    body = (
        '<table class="data" id="table-instance-type"><thead><tr><th>Instance type</th><th>Family</th>'
        '<th class="num">Count</th><th></th><th>Capacity types</th><th class="num">$/h</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
        if groups
        else '<p class="empty">No launched NodeClaims.</p>'
    )
    return f'<section id="instance-type-mix"><h2>Instance-type mix</h2>{body}</section>'


def _claim_card(nc: Mapping[str, Any]) -> str:
    name = nc.get("name")
    if is_launched(nc):
        ct = nc.get("capacity_type")
        badges = f'<span class="badge{" spot" if ct == "spot" else ""}">{_e(ct)}</span>'
        if (nc.get("annotations") or {}).get(OVERLAY_ANNOTATION) == "true":
            badges += '<span class="badge">price overlay</span>'
        pods = nc.get("pods") or []
        items = [f'<li data-pod="{_e(p)}">{_e(p)}</li>' for p in pods]
        pod_list = f"<ul>{''.join(items[:MAX_CARD_PODS])}</ul>" if pods else '<p class="empty">no pods</p>'
        if len(items) > MAX_CARD_PODS:
            pod_list += (
                f"<details><summary>{len(items) - MAX_CARD_PODS} more pods</summary>"
                f"<ul>{''.join(items[MAX_CARD_PODS:])}</ul></details>"
            )
        return (
            f'<article class="nodeclaim" data-nodeclaim="{_e(name)}" data-nodepool="{_e(nc.get("nodepool"))}" '
            f'data-instance-type="{_e(nc.get("instance_type"))}" data-cost="{_cost(_price(nc))}" '
            f'data-pods="{len(pods)}"><h4>{_e(name)}{badges}</h4>'
            f'<p class="meta">{_e(nc.get("nodepool"))} \u00b7 {_e(nc.get("instance_type"))} \u00b7 '
            f"{_e(nc.get('zone'))} \u00b7 ${format_price(nc.get('price'))}/h \u00b7 {len(pods)} pod{'' if len(pods) == 1 else 's'}</p>"
            f"{pod_list}</article>"
        )
    fleet = nc.get("fleet") or {}
    errors = (fleet.get("errors") or []) if isinstance(fleet, Mapping) else []
    error_items = "".join(
        f'<li data-error-code="{_e(err.get("error_code"))}">{_e(err.get("error_code"))}: '
        f'{_e(err.get("instance_type"))} in {_e(err.get("zone"))}</li>'
        for err in errors
        if isinstance(err, Mapping)
    )
    return (
        f'<article class="nodeclaim failed" data-nodeclaim="{_e(name)}" data-nodepool="{_e(nc.get("nodepool"))}" '
        f'data-launched="false"><h4>{_e(name)}<span class="badge err">launch failed</span></h4>'
        f'<p class="meta">{_e(nc.get("nodepool"))} \u00b7 {_e(nc.get("capacity_type"))}</p>'
        + (f"<ul>{error_items}</ul>" if error_items else '<p class="empty">no fleet errors reported</p>')
        + "</article>"
    )


def _pod_table(table_id: str, rows: Sequence[tuple[str, Mapping[str, Any]]], phase: str,
               document: Mapping[str, Any] | None = None) -> str:
    """``document`` (pending pods): a message names the capacity errors that emptied the pod's
    candidates, as the table does (:func:`karpy.report.table.capacity_note`)."""
    from karpy.report.table import capacity_note

    body = "".join(
        f'<tr data-pod="{_e(key)}" data-phase="{_e(phase)}"><td class="pod">{_e(key)}</td>'
        f'<td>{_e(st.get("nominated_node"))}</td><td class="msg">{_e(st.get("message"))}'
        f'{_e(capacity_note(document, key, st.get("message"))) if document is not None else ""}</td></tr>'
        for key, st in rows
    )
    return (
        f'<table class="data" id="{table_id}"><thead><tr><th>Pod</th><th>Nominated node</th>'
        f"<th>Reason</th></tr></thead><tbody>{body}</tbody></table>"
    )


def _failed_group_card(line: str, claims: Sequence[Mapping[str, Any]]) -> str:
    """Launches that failed alike (same NodePool, capacity type, error codes), as the table groups them:
    one card with the grouped line, the NodeClaims folded under it."""
    head, _, rest = line.partition(": ")
    items = "".join(
        f'<li data-nodeclaim="{_e(nc.get("name"))}">{_e(nc.get("name"))}: '
        f'{len(((nc.get("fleet") or {}).get("errors") or []))} offerings failed</li>' for nc in claims)
    return (f'<article class="nodeclaim failed" data-launched="false" data-failed-launches="{len(claims)}" '
            f'data-nodepool="{_e(claims[0].get("nodepool"))}"><h4>{_e(head)}'
            f'<span class="badge err">launch failed</span></h4><p class="meta">{_e(rest)}</p><details><summary>{len(claims)} NodeClaims</summary>'
            f"<ul>{items}</ul></details></article>")


def _placement(document: Mapping[str, Any], nodeclaims: Sequence[Mapping[str, Any]]) -> str:
    from karpy.report.table import failure_groups

    # failed launches that repeat (an ICE'd generation tried again and again) are one card per group
    grouped = {id(claims[0]): (line, claims) for line, claims in
               failure_groups([nc for nc in nodeclaims if not is_launched(nc)], names=False) if len(claims) > 1}
    in_group = {id(nc) for _, claims in grouped.values() for nc in claims}
    cards = "".join(_failed_group_card(*grouped[id(nc)]) if id(nc) in grouped else _claim_card(nc)
                    for nc in nodeclaims if id(nc) in grouped or id(nc) not in in_group)
    parts = ['<section id="placement"><h2>Placement of pods</h2>']
    parts.append(f'<div class="claims">{cards}</div>' if cards else '<p class="empty">No NodeClaims.</p>')

    on_claims = {p for nc in nodeclaims for p in (nc.get("pods") or [])}
    others = [
        (key, st) for key, st in pods_by_phase(document, "Running") if key not in on_claims
    ]
    if others:
        rows = "".join(
            f'<tr data-pod="{_e(key)}" data-node="{_e(st.get("node"))}"><td class="pod">{_e(key)}</td>'
            f'<td>{_e(st.get("node"))}</td></tr>'
            for key, st in others
        )
        parts.append(
            '<h3>Pods on other nodes</h3><table class="data" id="table-other-nodes"><thead><tr>'
            f"<th>Pod</th><th>Node</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    pending = pods_by_phase(document, "Pending")
    parts.append(f'<h3 id="pending-pods">Pending pods ({len(pending)})</h3>')
    parts.append(
        _pod_table("table-pending", pending, "Pending", document) if pending else '<p class="empty">None.</p>'
    )
    deleted = pods_by_phase(document, "Deleted")
    if deleted:
        parts.append(f'<h3 id="deleted-pods">Deleted pods ({len(deleted)})</h3>')
        parts.append(_pod_table("table-deleted", deleted, "Deleted"))
    parts.append("</section>")
    return "".join(parts)


def _warnings(document: Mapping[str, Any]) -> str:
    warnings = document.get("warnings")
    if not isinstance(warnings, list) or not warnings:
        return ""
    items = "".join(f"<li>{_e(w)}</li>" for w in warnings)
    return f'<section id="warnings"><h2>Warnings</h2><ul>{items}</ul></section>'


def _billed(document: Mapping[str, Any]) -> Mapping[str, Any] | None:
    cost = document.get("cost")
    billed = cost.get("billed") if isinstance(cost, Mapping) else None
    return billed if isinstance(billed, Mapping) else None


def _billed_card(document: Mapping[str, Any]) -> str:
    """The summary card of ``cost.billed`` (a BillingProfile was given; :mod:`karpy.billing`)."""
    billed = _billed(document)
    if billed is None:
        return ""
    return (f'<div><dt>Billed (modelled)</dt><dd id="summary-billed" data-cost="{_cost(billed["total"])}">'
            f'${_cost(billed["total"])} (${_cost(billed["effective_per_hour"])}/h effective)</dd></div>')


def _billed_section(document: Mapping[str, Any]) -> str:
    """Where Karpenter's list-price choice is not the cheapest on the bill, and the overlays."""
    from karpy.report.table import render_billed

    billed = _billed(document)
    if billed is None:
        return ""
    lines = render_billed(billed)
    items = "".join(f"<li>{_e(line.strip())}</li>" for line in lines[1:])
    return (f'<section id="billed"><h2>On your bill (modelled)</h2><p>{_e(lines[0])}</p>'
            + (f"<ul>{items}</ul>" if items else "") + "</section>")


def warnings_section(by_design: Mapping[str, Sequence[str]]) -> str:
    """The compare and sweep reports' ``#warnings``: what karpy skipped, assumed or ignored; one
    list when every design has the same warnings, else one list per design (``data-design``)."""
    lists = {name: list(dict.fromkeys(ws)) for name, ws in by_design.items()}
    if not any(lists.values()):
        return ""
    values = list(lists.values())
    if all(v == values[0] for v in values):
        items = "".join(f"<li>{_e(w)}</li>" for w in values[0])
        return f'<section id="warnings"><h2>Warnings (every design)</h2><ul>{items}</ul></section>'
    blocks = "".join(f'<h3>{_e(name)}</h3><ul data-design="{_e(name)}">' + "".join(f"<li>{_e(w)}</li>" for w in ws)
                     + "</ul>" for name, ws in lists.items() if ws)
    return f'<section id="warnings"><h2>Warnings per design</h2>{blocks}</section>'


def render_html(document: dict[str, Any], *, title: str = "karpy simulation") -> str:
    """Render the document as one self-contained HTML page (inline CSS + SVG, no script, no URLs)."""
    nodeclaims: list[Mapping[str, Any]] = [
        nc for nc in document.get("nodeclaims") or [] if isinstance(nc, Mapping)
    ]
    total = total_cost(document)
    prices = document.get("prices") or {}
    subtitle = f"{document.get('region') or '-'}"
    if isinstance(prices, Mapping) and prices.get("date"):
        subtitle += f" \u00b7 prices of {prices.get('date')}"
    subtitle += f" \u00b7 ${_cost(total)}/h"
    pools = _group(nodeclaims, lambda nc: nc.get("nodepool"), include_failed=True)
    families = _group(nodeclaims, instance_family, include_failed=False)
    deleted = sum(1 for nc in nodeclaims if nc.get("deleted_at") is not None)
    body = "".join(
        [
            _summary(document, nodeclaims),
            _warnings(document),
            _billed_section(document),
            _cost_section("cost-by-nodepool", "Cost by NodePool", "nodepool", "nodepool", "NodePool", pools, total, deleted),
            _cost_section(
                "cost-by-family", "Cost by instance family", "family", "family", "Family", families, total, deleted
            ),
            _type_mix(nodeclaims),
            render_time_charts(document),
            _placement(document, nodeclaims),
        ]
    )
    return page(title, subtitle, body)


def page(title: str, subtitle: str, body: str, *, style: str = "") -> str:
    """The self-contained page around ``body`` (already-escaped HTML): CSP, inline CSS, header.
    ``style``: extra CSS appended to :data:`STYLE` (used by the compare and sweep reports)."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{STYLE}{style}</style></head>\n"
        f"<body><header><h1>{_e(title)}</h1><p>{_e(subtitle)}</p></header>\n"
        f"<main>{body}</main></body></html>\n"
    )
