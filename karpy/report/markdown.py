"""Markdown views (``-o markdown``) of a simulation document and of a comparison document, for a
pull-request comment: a one-line headline, the tables GitHub renders, warnings, and the rest
folded in ``<details>``. Deterministic; user text is escaped so it cannot break the table or
inject markup.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karpy.report.table import (
    capacity_note,
    clean,
    format_price,
    group_pending,
    is_launched,
    pods_by_phase,
    prices_notes,
    render_time,
    summarize_failures,
    total_cost,
)

__all__ = ["render_compare_markdown", "render_markdown"]

_SPECIAL = "\\`*_[]<|#$"


def md(value: Any) -> str:
    """One table cell or inline text: :func:`clean`, then Markdown's special characters escaped."""
    return "".join("\\" + ch if ch in _SPECIAL else ch for ch in clean(value))


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    """A GitHub table; ``right``: the columns aligned right (numbers)."""
    align = ["---:" if i in right else "---" for i in range(len(header))]
    return ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|",
            *("| " + " | ".join(row) + " |" for row in rows)]


def _prices(document: Mapping[str, Any]) -> str:
    prices = document.get("prices") or {}
    text = f"region {md(document.get('region'))}, prices {md(prices.get('date'))}"
    notes = prices_notes(prices, document.get("region"))
    return text + ("; " + "; ".join(md(n) for n in notes) if notes else "")


def _warnings(warnings: Any, label: str = "") -> list[str]:
    if not isinstance(warnings, list) or not warnings:
        return []
    return ["", f"**Warnings{label}**", "", *(f"- {md(w)}" for w in warnings)]


def render_markdown(document: Mapping[str, Any]) -> str:
    """``karpy simulate -o markdown``: headline, NodeClaims table, failed launches grouped, pending
    pods, warnings, and (time runs) the timeline in ``<details>``."""
    nodeclaims = list(document.get("nodeclaims") or [])
    launched = [nc for nc in nodeclaims if is_launched(nc)]
    failed = [nc for nc in nodeclaims if not is_launched(nc)]
    pending = pods_by_phase(document, "Pending")
    outcome = f"{len(pending)} pods pending" if pending else "every pod placed"
    out = [f"### karpy simulate: {len(launched)} NodeClaim{'s' if len(launched) != 1 else ''}, "
           f"\\${total_cost(document):.5f}/h, {outcome}", "", _prices(document), ""]
    if launched:
        out.extend(md_table(("NodeClaim", "NodePool", "instance type", "capacity", "zone", "\\$/h", "pods"), [
            (md(nc.get("name")), md(nc.get("nodepool")), md(nc.get("instance_type")), md(nc.get("capacity_type")),
             md(nc.get("zone")), format_price(nc.get("price")), str(len(nc.get("pods") or [])))
            for nc in launched], right=(5, 6)))
    else:
        out.append("No NodeClaim launched.")
    if failed:
        out.extend(["", f"**Failed launches ({len(failed)})**", ""])
        out.extend(f"- {md(line)}" for line in summarize_failures(failed))
    if pending:
        noted = [(key, {**st, "message": f"{st.get('message') or '-'}{capacity_note(document, key, st.get('message'))}"})
                 for key, st in pending]
        out.extend(["", f"**Pending pods ({len(pending)})**", ""])
        out.extend(md_table(("pod", "nominated", "message"),
                            [tuple(md(c) for c in row) for row in group_pending(noted)]))
    out.extend(_warnings(document.get("warnings")))
    time = render_time(document)
    if time:
        out.extend(["", "<details><summary>Timeline and cost over time</summary>", "", "```text",
                    *(line for line in time if line), "```", "", "</details>"])
    out.extend(["", f"**Total: \\${total_cost(document):.5f}/h**"])
    return "\n".join(out) + "\n"


def render_compare_markdown(document: Mapping[str, Any]) -> str:
    """``karpy compare -o markdown``: headline, the side-by-side table (rows that differ in bold),
    each design's changes against the baseline, and the warnings of each design."""
    from karpy.report.compare import _cell, _fields, _prices_line, design_warnings

    names: list[str] = list(document.get("designs") or [])
    outcomes = document.get("outcomes") or {}
    diff = document.get("diff") or {}
    changed = set(diff.get("fields") or [])
    baseline = document.get("baseline")
    designs = diff.get("designs") or {}
    differing = [n for n in names[1:] if (designs.get(n) or {}).get("changes")]
    who = ", ".join(md(n) for n in differing) if len(differing) <= 3 else f"{len(differing)} designs"
    headline = (f"{who} differ{'s' if len(differing) == 1 else ''} from {md(baseline)}" if differing
                else f"every design behaves as {md(baseline)}")
    out = [f"### karpy compare: {headline}", "", md(_prices_line(document)), ""]
    rows = []
    for key, label in _fields(document):
        cells = [_cell(key, (outcomes.get(n) or {}).get(key)) for n in names]
        if key in changed:
            rows.append((f"**{md(label)}**", *(f"**{md(c)}**" for c in cells)))
        else:
            rows.append((md(label), *(md(c) for c in cells)))
    out.extend(md_table(("", *(f"{md(n)}{' (baseline)' if n == baseline else ''}" for n in names)), rows))
    out.append("")
    warned = design_warnings(document)
    for name in names[1:]:
        changes = (designs.get(name) or {}).get("changes") or []
        same = set(warned.get(name) or ()) == set(warned.get(names[0]) or ())
        differ = "" if same else "; its warnings differ (below)"
        out.append(f"- **{md(name)}** vs {md(baseline)}: " + ("; ".join(md(c) for c in changes) if changes
                                                              else "same outcome") + differ)
    if any(warned.values()):
        same = all(w == warned[names[0]] for w in warned.values())
        if same:
            out.extend(_warnings(warned[names[0]], " (every design)"))
        else:
            for n in names:
                out.extend(_warnings(warned[n], f" ({md(n)})"))
    return "\n".join(out) + "\n"
