"""Views of a comparison document (:mod:`karpy.comparison`): the ``karpy compare`` table and the
side-by-side HTML report (inline SVG, no script).

Rows are the outcome fields of :data:`OUTCOME_FIELDS` (the comparison's field list, kept beside its
renderer); a row where any design differs from the baseline is marked ``*`` in the table and
highlighted in the report, and the cells that differ carry ``class="diff"``. Deterministic: same document, same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karpy.report.charts import CHAR_W, FONT, MISSING, _label_text, color_for
from karpy.report.html import _e, page, price_footnote, warnings_section
from karpy.report.table import clean, format_rows, is_launched
from karpy.summary import generation_of, generation_sort_key

__all__ = ["DOLLARS", "OUTCOME_FIELDS", "design_warnings", "format_value", "render_compare_html",
           "render_compare_table"]

MARK = "*"
STYLE = """
td.diff{background:#fefcbf;font-weight:600}
tr.differs th{color:#975a16}
ul.changes li{margin:2px 0}
svg.chart text.on-box{fill:#fff}
""".strip()

#: outcome keys compared, in the order the table shows them: (key, label)
OUTCOME_FIELDS: tuple[tuple[str, str], ...] = (
    ("nodeclaims", "NodeClaims"),
    ("instance_types", "instance types"),
    ("generations", "generations"),
    ("capacity_types", "capacity types"),
    ("nodepools", "NodePools"),
    ("allocation_strategies", "fleet strategy"),
    ("failed_launches", "failed launches"),
    ("pending_pods", "pods pending"),
    ("cost_per_hour", "$/h"),
    ("horizon", "horizon (s)"),
    ("cost_total", "$ over horizon"),
    ("node_hours_by_generation", "node-hours by generation"),
    ("billed_total", "$ billed (modelled)"),
    ("billed_per_hour", "$/h billed (modelled)"),
    ("unused_commitment", "$ unused commitment"),
)
#: the outcome keys in dollars (5 decimals, a delta and a percentage in the diff)
DOLLARS = frozenset({"cost_per_hour", "cost_total", "billed_total", "billed_per_hour", "unused_commitment"})


def format_value(key: str, value: Any) -> str:
    """One outcome value as table text (``$/h`` with 5 decimals, ``2x m7i.large``, ``7 (2), 8 (1)``)."""
    if value is None:
        return "-"
    if key in DOLLARS:
        return f"{float(value):.5f}"
    if key == "horizon":
        return f"{float(value):g}"
    if key == "instance_types":
        return ", ".join(t if n == 1 else f"{n}x {t}" for t, n in value.items()) or "-"
    if key == "generations":
        return ", ".join(g if len(value) == 1 else f"{g} ({n})" for g, n in value.items()) or "-"
    if key == "node_hours_by_generation":
        return ", ".join(f"{g}: {h:g}" for g, h in value.items()) or "-"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "-"
    return str(value)


def _fields(document: Mapping[str, Any]) -> list[tuple[str, str]]:
    outcomes = document.get("outcomes") or {}
    return [(k, label) for k, label in OUTCOME_FIELDS if any(k in (o or {}) for o in outcomes.values())]


def _cell(key: str, value: Any) -> str:
    return clean(format_value(key, value))


def _prices_line(document: Mapping[str, Any]) -> str:
    runs = document.get("runs") or {}
    seen: list[str] = []
    for run in runs.values():
        prices = (run or {}).get("prices") or {}
        text = f"{prices.get('date') or '-'}" + (f" ({prices['source']})" if prices.get("source") else "")
        if text not in seen:
            seen.append(text)
    regions = sorted({str((run or {}).get("region")) for run in runs.values()})
    return f"region: {clean(', '.join(regions))}  prices: {clean('; '.join(seen) or '-')}"


def _html_prices(document: Mapping[str, Any]) -> tuple[str, str]:
    """The report's header line (region and price date, as the simulate report's) and the price
    provenance as a footnote, once per distinct price table, where the simulate report has it."""
    runs = [r or {} for r in (document.get("runs") or {}).values()]
    regions = list(dict.fromkeys(str(r.get("region")) for r in runs if r.get("region")))
    dates = list(dict.fromkeys(str((r.get("prices") or {}).get("date")) for r in runs
                               if (r.get("prices") or {}).get("date")))
    subtitle = " \u00b7 ".join(x for x in (", ".join(regions), f"prices of {', '.join(dates)}" if dates else "") if x)
    notes = list(dict.fromkeys(price_footnote(r.get("prices"), r.get("region")).replace("<sup>1</sup> ", "")
                               for r in runs))
    return subtitle or "-", "".join(notes)


def _differs(document: Mapping[str, Any], key: str, name: str) -> bool:
    design = ((document.get("diff") or {}).get("designs") or {}).get(name) or {}
    return key in (design.get("fields") or {})


def render_compare_table(document: Mapping[str, Any]) -> str:
    """The side-by-side table: one column per design, ``*`` on rows that differ, then each design's
    changes against the baseline."""
    names: list[str] = list(document.get("designs") or [])
    outcomes = document.get("outcomes") or {}
    diff = document.get("diff") or {}
    changed = set(diff.get("fields") or [])
    rows = []
    for key, label in _fields(document):
        rows.append((MARK if key in changed else "", label,
                     *(_cell(key, (outcomes.get(n) or {}).get(key)) for n in names)))
    out = [_prices_line(document), f"baseline: {clean(document.get('baseline'))}", ""]
    out.extend(format_rows(("", "", *(clean(n) for n in names)), rows))
    out.append("")
    ranked = document.get("ranking")
    if ranked:
        what = "the bill (modelled)" if ranked["by"] == "billed" else "list prices"
        out.append(f"ranked by {what}, {ranked['key']}: " + ", ".join(
            f"{i}. {clean(d['design'])} ${float(d['cost'] or 0):.5f}" for i, d in enumerate(ranked["designs"], 1)))
    designs = diff.get("designs") or {}
    warned = design_warnings(document)
    base_warnings = set(warned.get(names[0]) or ()) if names else set()
    if not changed and not any((d or {}).get("pods") for d in designs.values()):
        same = all(set(ws) == base_warnings for ws in warned.values())
        out.append(f"no differences: every design behaves as {clean(document.get('baseline'))}"
                   + ("" if same else " (but their warnings differ, below)"))
    for name in names[1:]:
        changes = (designs.get(name) or {}).get("changes") or []
        differ = "; its warnings differ (below)" if set(warned.get(name) or ()) != base_warnings else ""
        out.append(f"{clean(name)} vs {clean(document.get('baseline'))}: "
                   + ("; ".join(clean(c) for c in changes) if changes else "same outcome") + differ)
    out.extend(_warnings_lines(warned))
    return "\n".join(out) + "\n"


def design_warnings(document: Mapping[str, Any]) -> dict[str, list[str]]:
    """Each design's own warnings (what karpy skipped, assumed or ignored for it), in design order:
    the document's ``warnings``, else each run's."""
    names: list[str] = list(document.get("designs") or [])
    given = document.get("warnings")
    if isinstance(given, Mapping):
        return {n: [str(w) for w in given.get(n) or ()] for n in names}
    runs = document.get("runs") or {}
    return {n: [str(w) for w in (runs.get(n) or {}).get("warnings") or ()] for n in names}


def _warnings_lines(warned: Mapping[str, Sequence[str]]) -> list[str]:
    """The table's warnings: one list when every design has the same, else one per design that has
    any (as the report's ``#warnings``)."""
    lists = list(warned.values())
    if not any(lists):
        return []
    if all(w == lists[0] for w in lists):
        return ["", "warnings (every design):", *(f"  - {clean(w)}" for w in lists[0])]
    out: list[str] = []
    for name, ws in warned.items():
        if ws:
            out.extend(["", f"warnings ({clean(name)}):", *(f"  - {clean(w)}" for w in ws)])
    return out


#: designs side by side in one row of the NodeClaims chart (3 x 300 px: the report's card at full size)
PER_ROW = 3


def _column_svg(name: str, run: Mapping[str, Any], generations: Sequence[str], x0: int, col_w: int,
                box_h: int, y0: int = 0) -> list[str]:
    out = [f'<g class="design" data-design="{_e(name)}"' + (f' transform="translate(0 {y0})">' if y0 else ">"),
           _label_text(name, (col_w - 16) * CHAR_W / 7.8, x=x0, y=20, font_weight="bold")]  # bold: wider glyphs
    y = 32
    claims = [nc for nc in run.get("nodeclaims") or [] if isinstance(nc, Mapping)]
    for nc in claims:
        if not is_launched(nc):
            continue
        gen = str(generation_of(nc) or "")
        price = nc.get("price")
        label = f"{nc.get('instance_type')} \u00b7 {nc.get('capacity_type') or '-'}"
        detail = f"${float(price or 0):.5f}/h \u00b7 {len(nc.get('pods') or [])} pods \u00b7 {nc.get('nodepool')}"
        out.append(f'<rect class="nodeclaim" x="{x0}" y="{y}" width="{col_w - 12}" height="{box_h - 4}" rx="4" '
                   f'fill="{color_for(gen, list(generations)) if gen else MISSING}" '
                   f'data-instance-type="{_e(nc.get("instance_type"))}" data-generation="{_e(gen)}" '
                   f'data-price="{float(price or 0):.5f}"><title>{_e(nc.get("name"))}: {_e(label)}</title></rect>'
                   f'<text class="on-box" x="{x0 + 8}" y="{y + 16}" fill="#fff">{_e(label)}</text>'
                   f'<text class="on-box" x="{x0 + 8}" y="{y + 31}" fill="#fff" font-size="11">{_e(detail)}</text>')
        y += box_h
    failed = sum(1 for nc in claims if not is_launched(nc))
    pending = sum(1 for p in (run.get("pods") or {}).values() if (p or {}).get("phase") == "Pending")
    cost = float(run.get("cost_per_hour") or 0.0)
    out.append(f'<text x="{x0}" y="{y + 16}" data-cost="{cost:.5f}">total ${cost:.5f}/h</text>')
    if failed:
        out.append(f'<text x="{x0}" y="{y + 32}" fill="#9b2c2c">{failed} failed launch(es)</text>')
    if pending:
        out.append(f'<text x="{x0}" y="{y + 48}" fill="#c53030" data-pending="{pending}">'
                   f'{pending} pod(s) pending</text>')
    out.append("</g>")
    return out


def _side_by_side(document: Mapping[str, Any]) -> str:
    names: list[str] = list(document.get("designs") or [])
    runs = document.get("runs") or {}
    generations = sorted({str(g) for o in (document.get("outcomes") or {}).values()
                          for g in ((o or {}).get("generations") or {})}, key=generation_sort_key)
    col_w, box_h = 300, 40
    # at most PER_ROW designs side by side (what a report card holds at full size), then another row
    bands = [names[i:i + PER_ROW] for i in range(0, len(names), PER_ROW)] or [[]]
    band_h = [32 + box_h * max((sum(1 for nc in (runs.get(n) or {}).get("nodeclaims") or [] if is_launched(nc))
                                for n in band), default=0) + 70 for band in bands]
    height = sum(band_h) + (24 if generations else 0)
    width = col_w * max(min(len(names), PER_ROW), 1) + 8
    out = [f'<svg class="chart" id="side-by-side" xmlns="http://www.w3.org/2000/svg" role="img" '
           f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" {FONT}>',
           "<title>NodeClaims of each design, side by side</title>"]
    for b, band in enumerate(bands):
        for i, name in enumerate(band):
            out.extend(_column_svg(name, runs.get(name) or {}, generations, 8 + i * col_w, col_w, box_h,
                                   sum(band_h[:b])))
    for j, gen in enumerate(generations):
        lx = 8 + j * 120
        out.append(f'<rect x="{lx}" y="{height - 18}" width="12" height="12" fill="{color_for(gen, generations)}"/>'
                   f'<text x="{lx + 16}" y="{height - 8}">generation {_e(gen)}</text>')
    out.append("</svg>")
    return "".join(out)


def render_compare_html(document: Mapping[str, Any], *, title: str = "karpy comparison") -> str:
    """One self-contained page: the designs' NodeClaims side by side (SVG), the outcome table with
    differing cells highlighted, and each design's changes against the baseline."""
    names: list[str] = list(document.get("designs") or [])
    outcomes = document.get("outcomes") or {}
    changed = set((document.get("diff") or {}).get("fields") or [])
    head = "".join(f"<th>{_e(n)}</th>" for n in names)
    body_rows = []
    for key, label in _fields(document):
        cells = []
        for i, n in enumerate(names):
            cls = ' class="diff"' if i > 0 and _differs(document, key, n) else ""
            cells.append(f'<td{cls} data-field="{_e(key)}" data-design="{_e(n)}">'
                         f'{_e(_cell(key, (outcomes.get(n) or {}).get(key)))}</td>')
        tr_cls = ' class="differs"' if key in changed else ""
        body_rows.append(f"<tr{tr_cls}><th>{_e(label)}</th>{''.join(cells)}</tr>")
    designs = (document.get("diff") or {}).get("designs") or {}
    by_design = design_warnings(document)
    base_warnings = set(by_design.get(names[0]) or ()) if names else set()
    differ = "; its warnings differ (Warnings per design, above)"
    changes = "".join(
        f"<li><strong>{_e(n)}</strong>: "
        f"{_e('; '.join((designs.get(n) or {}).get('changes') or []) or 'same outcome')}"
        f"{differ if set(by_design.get(n) or ()) != base_warnings else ''}</li>"
        for n in names[1:])
    warned = warnings_section(by_design)
    subtitle, provenance = _html_prices(document)
    body = (f'<section id="side-by-side-section"><h2>NodeClaims side by side</h2>{_side_by_side(document)}'
            f'{provenance}</section>'
            f'{warned}<section id="outcomes"><h2>Outcomes</h2><table><thead><tr><th></th>{head}</tr></thead>'
            f'<tbody>{"".join(body_rows)}</tbody></table></section>'
            f'<section id="changes"><h2>Differences against {_e(document.get("baseline"))}</h2>'
            f'<ul class="changes">{changes}</ul></section>')
    return page(title, subtitle, body, style=STYLE)
