"""The renderers of the plan document (:mod:`karpy.planner`): a table for one screen, markdown for a
pull request, and a self-contained HTML page (waves as bands over time, pending pods, $/h)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from karpy.report.table import clock_time

__all__ = ["render_plan_html", "render_plan_markdown", "render_plan_table"]

_MAX_WAVES = 12
_MAX_FIELDS = 8


def _dollars(v: Any) -> str:
    return "-" if v is None else f"${float(v):.4f}"


def _value(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, (dict, list)):
        import json

        return json.dumps(v, sort_keys=True, separators=(",", ":"))
    return str(v)


def _node(n: Mapping[str, Any]) -> str:
    gen = f" gen{n['generation']}" if n.get("generation") else ""
    return f"{n.get('instance_type') or '?'}{gen} {n.get('capacity_type') or '?'} {_dollars(n.get('price'))}/h"


def _nodes(ns: Sequence[Mapping[str, Any]]) -> str:
    counts: dict[str, int] = {}
    for n in ns:
        counts[_node(n)] = counts.get(_node(n), 0) + 1
    return ", ".join(f"{c}x {k}" if c > 1 else k for k, c in sorted(counts.items())) or "-"


def _change_lines(doc: Mapping[str, Any], bullet: str) -> list[str]:
    lines = []
    for c in doc["changes"]:
        head = f"{bullet}{c['kind']}/{c['name']}: {c['action']}"
        if c["action"] == "unchanged":
            lines.append(head + " (no changes)")
            continue
        lines.append(head + (" -- drifts nodes" if c.get("drifts") else " -- no drift"))
        fields = c.get("fields") or []
        for f in fields[:_MAX_FIELDS]:
            mark = f"drift: {f['drift']}" if f.get("drift") else "not a drift trigger"
            lines.append(f"    {f['path']}: {_value(f['before'])} -> {_value(f['after'])}  [{mark}]")
        if len(fields) > _MAX_FIELDS:
            lines.append(f"    ... {len(fields) - _MAX_FIELDS} more field(s) (-o json)")
    return lines


def _wave_line(w: Mapping[str, Any]) -> str:
    budget = ", ".join(f"{k}={v}" for k, v in sorted((w.get("budget") or {}).items()))
    return (f"{clock_time(float(w['t']))} {w['method']} ({w['reason'] or w['decision']}): {len(w['candidates'])} node(s) "
            f"[{_nodes(w['candidates'])}] -> [{_nodes(w['replacements'])}]; {len(w['evicted'])} pod(s) evicted"
            + (f"; budget {budget}" if budget else ""))


def _summary_lines(doc: Mapping[str, Any]) -> list[str]:
    delta = float(doc["cost_change_per_hour"])
    before = float(doc["cost_per_hour_before"])
    pct = f" ({100.0 * delta / before:+.1f} %)" if before else ""
    conv = (f"converged at {clock_time(float(doc['converged_at']))}" if doc["converged"]
            else f"NOT converged by the horizon {clock_time(float(doc['horizon']))}")
    lines = [f"$/h: {_dollars(before)} -> {_dollars(doc['cost_per_hour_after'])} ({delta:+.4f}/h{pct})",
             f"{conv}; transition: {float(doc['transition_node_hours']):.2f} node-hours, "
             f"{_dollars(doc['transition_cost'])}; {doc['evicted']} pod(s) evicted; longest pod wait "
             f"{float(doc['longest_pod_wait']):g}s" + (f" ({doc['longest_waiting_pod']})" if doc['longest_waiting_pod'] else ""),
             f"pending at the end: {len(doc['pending'])}" + (f" ({', '.join(doc['pending'][:5])})" if doc['pending'] else "")]
    return lines


def _groups_line(groups: Mapping[str, int]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in groups.items()) or "-"


def render_plan_table(doc: Mapping[str, Any]) -> str:
    """The plan on one screen."""
    if not doc["changed"]:
        return "Plan: no changes. The cluster stays as it is.\n" + "".join(f"  {a}\n" for a in doc["assumptions"])
    out = ["Plan: what the change does", "", "Changes:"]
    out += _change_lines(doc, "  ")
    waves = doc["waves"]
    out += ["", f"Disruption waves ({len(waves)}):"]
    for w in waves[:_MAX_WAVES]:
        out.append("  " + _wave_line(w))
    if len(waves) > _MAX_WAVES:
        out.append(f"  ... {len(waves) - _MAX_WAVES} more (-o json / --report)")
    if not waves:
        out.append("  none")
    if doc["blocked"]:
        out += ["", "Held back:"]
        for b in doc["blocked"][:_MAX_WAVES]:
            until = clock_time(float(b["until"])) if b["until"] is not None else "the horizon"
            out.append(f"  {b['object']}: {b['message']} ({clock_time(float(b['since']))}-{until})")
        if len(doc["blocked"]) > _MAX_WAVES:
            out.append(f"  ... {len(doc['blocked']) - _MAX_WAVES} more (-o json)")
    groups = doc["by_nodepool_generation"]
    out += ["", "End state:", f"  before: {_groups_line(groups['before'])}", f"  after:  {_groups_line(groups['after'])}"]
    out += ["  " + line for line in _summary_lines(doc)]
    for g in doc["gates"]:
        out.append(f"  gate {g['gate']}: {g['value']:g} -> {'FAILED' if g['tripped'] else 'ok'}")
    out += ["", "Assumed:"] + [f"  {a}" for a in doc["assumptions"]]
    return "\n".join(out) + "\n"


def render_plan_markdown(doc: Mapping[str, Any]) -> str:
    """The plan as markdown for a pull-request comment."""
    if not doc["changed"]:
        return "### karpy plan\n\n**No changes.** The cluster stays as it is.\n"
    out = ["### karpy plan", "", "#### Changes", ""]
    for c in doc["changes"]:
        out.append(f"- **{c['kind']}/{c['name']}**: {c['action']}" + (" — drifts nodes" if c.get("drifts") else ""))
        for f in (c.get("fields") or [])[:_MAX_FIELDS]:
            mark = f"drift: {f['drift']}" if f.get("drift") else "no drift"
            out.append(f"  - `{f['path']}`: `{_value(f['before'])}` → `{_value(f['after'])}` ({mark})")
    out += ["", "#### Disruption waves", ""]
    if doc["waves"]:
        out += ["| t | method | nodes | replaced by | evicted | budget |", "|---|---|---|---|---|---|"]
        for w in doc["waves"]:
            budget = ", ".join(f"{k}={v}" for k, v in sorted((w.get("budget") or {}).items()))
            out.append(f"| {clock_time(float(w['t']))} | {w['method']} | {_nodes(w['candidates'])} | "
                       f"{_nodes(w['replacements'])} | {len(w['evicted'])} | {budget} |")
    else:
        out.append("none")
    if doc["blocked"]:
        out += ["", "#### Held back", ""]
        for b in doc["blocked"]:
            until = clock_time(float(b["until"])) if b["until"] is not None else "the horizon"
            out.append(f"- `{b['object']}`: {b['message']} ({clock_time(float(b['since']))}–{until})")
    groups = doc["by_nodepool_generation"]
    out += ["", "#### End state", "", f"- before: {_groups_line(groups['before'])}",
            f"- after: {_groups_line(groups['after'])}"] + [f"- {line}" for line in _summary_lines(doc)]
    for g in doc["gates"]:
        out.append(f"- gate `{g['gate']}`: {g['value']:g} → {'**FAILED**' if g['tripped'] else 'ok'}")
    out += ["", "<details><summary>Assumed</summary>", ""] + [f"- {a}" for a in doc["assumptions"]] + ["", "</details>"]
    return "\n".join(out) + "\n"


def _svg_series(chart_id: str, label: str, series: Sequence[Sequence[float]], horizon: float,
                waves: Sequence[Mapping[str, Any]], colour: str, unit: str) -> str:
    from karpy.report.timecharts import LEFT, PLOT, WIDTH, step_points

    height, top, bottom = 150.0, 10.0, 130.0
    peak = max((float(v) for _, v in series), default=0.0) or 1.0

    def x(t: float) -> float:
        return LEFT + (PLOT * t / horizon if horizon > 0 else 0.0)

    bands = "".join(
        f'<rect class="wave" x="{x(float(w["t"])):.1f}" y="{top}" '
        f'width="{max(2.0, x(float(w.get("done_at") or w["t"])) - x(float(w["t"]))):.1f}" height="{bottom - top}" '
        f'fill="#bee3f8" opacity="0.6" data-t="{float(w["t"]):g}" data-method="{escape(str(w["method"]))}">'
        f'<title>{escape(_wave_line(w))}</title></rect>' for w in waves)
    points = step_points(series, horizon, top, bottom, peak)
    ticks = "".join(f'<text x="{x(horizon * i / 4):.1f}" y="{bottom + 14:.1f}" text-anchor="middle">'
                    f'{clock_time(horizon * i / 4)}</text>' for i in range(5))
    return (f'<svg id="{chart_id}" class="chart" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" '
            f'role="img" aria-label="{escape(label)}">{bands}{ticks}'
            f'<text x="{LEFT - 6}" y="{top + 10:.1f}" text-anchor="end">{escape(unit.format(peak))}</text>'
            f'<text x="{LEFT - 6}" y="{bottom:.1f}" text-anchor="end">0</text>'
            f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{" ".join(points)}"/></svg>')


def render_plan_html(doc: Mapping[str, Any]) -> str:
    """The plan as one self-contained page: the summary, the waves as bands over the pending pods and
    the $/h, the changes and waves as tables."""
    from karpy.report.html import page

    horizon = float(doc.get("converged_at") or 0.0) or float(doc["horizon"])
    horizon = max(horizon, max((float(w.get("done_at") or w["t"]) for w in doc["waves"]), default=0.0)) or 1.0
    series = doc.get("series") or {}
    summary = "".join(f"<p>{escape(line)}</p>" for line in _summary_lines(doc)) if doc["changed"] else \
        "<p>No changes. The cluster stays as it is.</p>"
    changes = "".join(f"<li>{escape(line)}</li>" for line in _change_lines(doc, ""))
    rows = "".join(f'<tr data-t="{float(w["t"]):g}"><td>{clock_time(float(w["t"]))}</td><td>{escape(w["method"])}</td>'
                   f'<td>{escape(_nodes(w["candidates"]))}</td><td>{escape(_nodes(w["replacements"]))}</td>'
                   f'<td>{len(w["evicted"])}</td></tr>' for w in doc["waves"])
    body = (f'<section id="plan-summary"><h2>Summary</h2>{summary}</section>'
            f'<section id="plan-changes"><h2>Changes</h2><ul>{changes}</ul></section>'
            f'<section id="plan-timeline"><h2>Waves over time</h2><h3>Pending pods</h3>'
            + _svg_series("chart-plan-pending", "Pending pods, waves as bands", series.get("pending") or [],
                          horizon, doc["waves"], "#c05621", "{:g} pods")
            + "<h3>Cost per hour</h3>"
            + _svg_series("chart-plan-cost", "Dollars per hour, waves as bands", series.get("cost_per_hour") or [],
                          horizon, doc["waves"], "#2b6cb0", "${:.3f}/h")
            + f'</section><section id="plan-waves"><h2>Waves</h2><table><tr><th>t</th><th>method</th><th>nodes</th>'
              f'<th>replaced by</th><th>evicted</th></tr>{rows}</table></section>')
    subtitle = f"${float(doc['cost_per_hour_before']):.4f}/h -> ${float(doc['cost_per_hour_after']):.4f}/h"
    return page("karpy plan", subtitle, body)
