"""The HTML report of a sweep (``karpy sweep --report FILE.html``): inline SVG charts, no script.

- *Cost by price date per design*: one line per design over the price tables, one chart per
  combination of the other axes (capacity scenario, workload, timeline scenario, policies). A gap
  is a cell that failed or left pods pending (its $/h is not the price of running the workload).
- *Generation by price date*: a grid, one row per design (and other axes), one column per table,
  coloured by the generation launched (``7+8`` when mixed).
- *Generation share per scenario*: NodeClaims by generation over all price tables, one bar per
  design and capacity scenario.
- The rows themselves (failed cells with their error).

Input: the rows (dicts with :data:`karpy.sweeps.rows.FIXED_COLUMNS` and ``nodes_gen<N>``).
Deterministic: same rows, same bytes. :func:`sweep_charts` gives the charts alone (name -> SVG).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karpy.report.charts import grid_chart, line_chart, stacked_share_bars
from karpy.report.html import _e, page, warnings_section
from karpy.summary import generation_sort_key

__all__ = ["rank_key", "render_sweep_html", "render_sweep_table", "sweep_charts"]

OTHER_AXES = ("workload", "scenario", "capacity", "preference_policy", "min_values_policy")
TABLE_COLUMNS = ("cell", "design", "workload", "scenario", "capacity", "preference_policy", "min_values_policy",
                 "prices", "instance_types", "generations", "nodeclaims", "failed_launches", "pending_pods",
                 "cost_per_hour", "cost_total", "billing", "billed_total", "billed_per_hour", "unused_commitment",
                 "status", "error")
#: dollar columns (5 decimals, right-aligned); the bill's are modelled (karpy.billing) and say so
DOLLAR_COLUMNS = ("cost_per_hour", "cost_total", "billed_total", "billed_per_hour", "unused_commitment")
MODELLED_COLUMNS = ("billed_total", "billed_per_hour", "unused_commitment")
STYLE = """
td.err{color:#9b2c2c}
tr.pending td{background:#fff5f5}
section.charts svg{margin-bottom:18px}
.scroll{overflow:auto;max-height:520px;max-width:100%}
.scroll table{width:auto;min-width:100%}
.scroll td,.scroll th{white-space:nowrap}
.scroll th{position:sticky;top:0}
""".strip()


def _varying(rows: Sequence[Mapping[str, Any]], axes: Sequence[str]) -> list[str]:
    return [a for a in axes if len({r.get(a) for r in rows}) > 1]


def _label(row: Mapping[str, Any], axes: Sequence[str]) -> str:
    return " \u00b7 ".join(str(row.get(a) or "-") for a in axes) or "all cells"


def _generations(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    gens = {c[len("nodes_gen"):] for r in rows for c in r if c.startswith("nodes_gen")}
    return sorted(gens, key=generation_sort_key)


def _price_label(row: Mapping[str, Any]) -> str:
    return str(row.get("prices_date") or row.get("prices") or "newest")


def _usable(row: Mapping[str, Any]) -> bool:
    return row.get("status") == "ok" and not row.get("pending_pods")


def sweep_charts(rows: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The report's charts, ``{chart id: SVG}``, in page order."""
    designs = list(dict.fromkeys(str(r["design"]) for r in rows))
    dates = sorted(dict.fromkeys(_price_label(r) for r in rows))
    others = _varying(rows, OTHER_AXES)
    gens = _generations(rows)
    charts: dict[str, str] = {}
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        groups.setdefault(_label(r, others), []).append(r)
    for n, (label, members) in enumerate(groups.items()):
        by = {(str(r["design"]), _price_label(r)): r for r in members}
        series = [(d, [float(by[d, x]["cost_per_hour"]) if (d, x) in by and _usable(by[d, x]) else None
                       for x in dates]) for d in designs]
        caption = "Cost by price date per design ($/h)" + (f" \u2014 {label}" if others else "")
        charts[f"cost-by-date-{n}"] = line_chart(f"cost-by-date-{n}", caption, dates, series)
    row_axes = ["design", *others]
    row_labels = list(dict.fromkeys(_label(r, row_axes) for r in rows))
    cells: dict[tuple[str, str], tuple[str, str]] = {}
    for r in rows:
        launched = [g for g in gens if (r.get(f"nodes_gen{g}") or 0) > 0]
        key = "+".join(launched) if r.get("status") == "ok" else ""
        text = (f"{r.get('instance_types') or 'nothing launched'}; ${float(r.get('cost_per_hour') or 0):.5f}/h; "
                f"{r.get('pending_pods')} pending" if r.get("status") == "ok" else f"error: {r.get('error')}")
        cells[_label(r, row_axes), _price_label(r)] = (text, key)
    keys = sorted({k for _, k in cells.values() if k}, key=lambda k: [generation_sort_key(p) for p in k.split("+")])
    charts["generation-by-date"] = grid_chart("generation-by-date", "Generation launched, by price date", row_labels,
                                              dates, cells, keys)
    share_axes = ["design", *[a for a in others if a != "prices"]]
    shares: dict[str, dict[str, float]] = {}
    for r in rows:
        bucket = shares.setdefault(_label(r, share_axes), {})
        for g in gens:
            bucket[g] = bucket.get(g, 0.0) + float(r.get(f"nodes_gen{g}") or 0)
    charts["generation-share"] = stacked_share_bars(
        "generation-share", "Generation share of launched NodeClaims, over all price tables",
        list(shares.items()), gens)
    return charts


def _table(rows: Sequence[Mapping[str, Any]]) -> str:
    shown = [c for c in TABLE_COLUMNS if any(r.get(c) not in (None, "") for r in rows) or c in ("cell", "design")]
    numeric = ("cell", *DOLLAR_COLUMNS)
    head = "".join(f'<th{" class=num" if c in numeric else ""}>{_e(c + " (modelled)" if c in MODELLED_COLUMNS else c)}</th>'
                   for c in shown)
    body = []
    for r in rows:
        cls = ' class="pending"' if r.get("pending_pods") else ""
        tds = []
        for c in shown:
            v = r.get(c)
            text = f"{float(v):.5f}" if c in DOLLAR_COLUMNS and v is not None else ("" if v is None else v)
            klass = ' class="num"' if c in numeric else ' class="err"' if c == "error" else ""
            tds.append(f"<td{klass}>{_e(text)}</td>")
        body.append(f'<tr{cls} data-cell="{_e(r.get("cell"))}">{"".join(tds)}</tr>')
    return f'<table id="rows"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _warnings_by_design(rows: Sequence[Mapping[str, Any]], warnings: Sequence[str]) -> dict[str, list[str]]:
    """Each design's warnings from its rows' ``warnings`` column (``; ``-joined); without any, the
    sweep's ``warnings`` stand for every design. Then what is modelled about its prices (the
    ``prices_notes`` column: modelled spot prices, a proxy region), as ``prices: ...``."""
    designs = list(dict.fromkeys(str(r.get("design")) for r in rows)) or ["every design"]
    out: dict[str, list[str]] = {d: [] for d in designs}
    for r in rows:
        _extend_unique(out[str(r.get("design"))], r.get("warnings"))
    if not any(out.values()):
        out = {d: list(warnings) for d in designs}
    for r in rows:
        _extend_unique(out[str(r.get("design"))], r.get("prices_notes"), prefix="prices: ")
    return out


def _extend_unique(into: list[str], raw: Any, prefix: str = "") -> None:
    """``into`` gains the items of a ``; ``-joined row value (or a list) it does not hold yet."""
    items = raw if isinstance(raw, list) else [w for w in str(raw or "").split("; ") if w]
    into.extend(w for w in (prefix + i for i in items) if w not in into)


def render_sweep_html(rows: Sequence[Mapping[str, Any]], *, title: str = "karpy sweep",
                      warnings: Sequence[str] = ()) -> str:
    """One self-contained page: the charts, warnings, and the rows."""
    failed = sum(1 for r in rows if r.get("status") != "ok")
    pending = sum(1 for r in rows if r.get("pending_pods"))
    designs = len({r.get("design") for r in rows})
    dates = len({_price_label(r) for r in rows})
    subtitle = (f"{len(rows)} cells: {designs} design(s) x {dates} price table(s)"
                f"{f', {failed} failed' if failed else ''}{f', {pending} with pods pending' if pending else ''}")
    charts = "".join(sweep_charts(rows).values()) if rows else '<p class="empty">no cells</p>'
    warn = warnings_section(_warnings_by_design(rows, warnings))
    body = (f'<section class="charts" id="charts"><h2>Charts</h2>{charts}'
            '<p>Gaps in a cost line: the cell failed or left pods pending. Designs with equal costs are drawn '
            'side by side, as concentric rings.</p></section>'
            f'{warn}<section id="rows-section"><h2>Rows</h2><div class="scroll">{_table(rows)}</div>'
            f'{_billed_note(rows)}</section>')
    return page(title, subtitle, body, style=STYLE)


def _billed_note(rows: Sequence[Mapping[str, Any]]) -> str:
    """What the bill's columns are, under the rows of a sweep with BillingProfiles."""
    if not any(r.get("billed_total") is not None for r in rows):
        return ""
    return ('<p id="billed-note" class="footnote">billed_total, billed_per_hour and unused_commitment are '
            "modelled: each cell's BillingProfile applied to its node-hours in AWS's documented order (Reserved "
            "Instances, EC2 Instance Savings Plans, Compute Savings Plans, then on demand; karpy.billing), beside "
            "the list prices Karpenter ranks by (cost_per_hour, cost_total).</p>")


def rank_key(by: str, rows: Sequence[Mapping[str, Any]]) -> str:
    """The row column ``--rank-by`` sorts on: ``billed_total`` (the bill), else ``cost_total`` when
    every row has it, else ``cost_per_hour``."""
    if by == "billed":
        return "billed_total"
    return "cost_total" if all(r.get("cost_total") is not None for r in rows) else "cost_per_hour"


def render_sweep_table(rows: Sequence[Mapping[str, Any]], rank_by: str | None = None) -> str:
    """The plain-text view of ``karpy sweep -o table``: one line per cell, varying axes only; a
    ``BILLED $`` column when some cell has a bill (:mod:`karpy.billing`); then each design's own
    warnings. ``rank_by`` (``list`` /
    ``billed``): the cells cheapest first (cells without the value, and failed cells, last)."""
    from karpy.report.table import clean, format_rows

    axes = [a for a in ("design", "billing", *OTHER_AXES) if a == "design" or len({r.get(a) for r in rows}) > 1]
    billed = any(r.get("billed_total") is not None for r in rows)
    header = ("CELL", *(a.upper().replace("_", " ") for a in axes), "PRICES", "LAUNCHED", "GEN", "$/H",
              *(("BILLED $ (MODELLED)",) if billed else ()), "PENDING", "FAILED LAUNCHES", "STATUS")
    if rank_by is not None:
        key = rank_key(rank_by, rows)
        rows = sorted(rows, key=lambda r: (r.get(key) is None or r.get("status") != "ok", float(r.get(key) or 0.0)))
    body = []
    for r in rows:
        ok = r.get("status") == "ok"
        bill = r.get("billed_total")
        body.append((str(r.get("cell")), *(clean(r.get(a)) for a in axes), clean(_price_label(r)),
                     clean(r.get("instance_types") or "-") if ok else "-", clean(r.get("generations") or "-"),
                     f"{float(r.get('cost_per_hour') or 0):.5f}" if ok else "-",
                     *((f"{float(bill):.5f}" if ok and bill is not None else "-",) if billed else ()),
                     clean(r.get("pending_pods")), clean(r.get("failed_launches")),
                     "ok" if ok else clean(f"error: {r.get('error')}")))
    return "\n".join([*format_rows(header, body), *_warnings_lines(rows)]) + "\n"


def _warnings_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The table's warnings, from the rows' own (as the report's ``#warnings``): one list when every
    design has the same, else one per design that has any."""
    from karpy.report.table import clean

    warned = _warnings_by_design(rows, ())
    lists = list(warned.values())
    if not any(lists):
        return []
    if all(w == lists[0] for w in lists):
        return ["", "WARNINGS (every design)", *(f"  - {clean(w)}" for w in lists[0])]
    out: list[str] = []
    for name, ws in warned.items():
        if ws:
            out.extend(["", f"WARNINGS ({clean(name)})", *(f"  - {clean(w)}" for w in ws)])
    return out
