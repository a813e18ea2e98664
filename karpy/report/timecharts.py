"""Charts over virtual time for the HTML report (inline SVG, no script, no URL).

Three charts, drawn from the document's ``nodeclaims``, ``timeline`` and ``cost`` keys:

* ``#chart-gantt`` — one bar per launched NodeClaim from ``launched_at`` to ``deleted_at`` (or the
  horizon), coloured by instance generation; spot bars are hatched lighter (``data-capacity-type``);
* ``#chart-pending`` — pods pending (created and not yet bound) over time, a step line;
* ``#chart-cost`` — $/h over time (``cost.per_hour``), a step line.

The Scenario's events (scale, rollout, apply, delete, capacity and cancel-reservation, interrupt)
and the disruption decisions are vertical marks on the shared time axis of all three charts (``line.event-mark``,
``data-category``/``data-t``, the event on hover), coloured by category as in ``#event-legend``,
and listed in ``#event-list``.

Each bar / line carries ``data-*`` attributes with the numbers it shows, so tests and tools read
them back. A run without time-dependent events (no Scenario, nothing deleted or completed) gets no
charts, so its report stays as it was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from karpy.report.table import clock_time, has_time_events

__all__ = ["EVENT_COLOURS", "GENERATION_COLOURS", "chart_events", "gantt_label", "pending_series",
           "render_time_charts", "step_points"]

WIDTH = 900
LEFT = 170
PLOT = WIDTH - LEFT - 40
ROW = 16
LINE_HEIGHT = 160
#: bar colour per instance generation (others: grey)
GENERATION_COLOURS = {"5": "#b7791f", "6": "#805ad5", "7": "#3b6fb6", "8": "#2f855a"}
OTHER_COLOUR = "#718096"
#: event mark colour per category (the legend's order)
EVENT_COLOURS = {"scale": "#6b46c1", "rollout": "#805ad5", "apply": "#319795", "delete": "#4a5568",
                 "capacity": "#c53030", "interrupt": "#dd6b20", "disruption": "#2c5282"}
_CATEGORY = {"scale": "scale", "rollout": "rollout", "apply": "apply", "delete": "delete",
             "capacity.unavailable": "capacity", "capacity.available": "capacity", "interruption": "interrupt",
             "capacityreservation.cancelled": "capacity"}
GENERATION_LABEL = "karpenter.k8s.aws/instance-generation"


def _x(t: float, horizon: float) -> float:
    return LEFT + (PLOT * t / horizon if horizon > 0 else 0.0)


def step_points(series: Sequence[Sequence[float]], horizon: float, top: float, bottom: float, peak: float) -> list[str]:
    """The SVG polyline points of a step line: each value held until the next, the last to the horizon."""
    points: list[str] = []
    prev = None
    for t, v in series:
        y = bottom - (bottom - top) * float(v) / peak
        x = _x(float(t), horizon)
        if prev is not None:
            points.append(f"{x:.1f},{prev:.1f}")
        points.append(f"{x:.1f},{y:.1f}")
        prev = y
    if prev is not None:
        points.append(f"{_x(horizon, horizon):.1f},{prev:.1f}")
    return points


def _axis(horizon: float, top: float, bottom: float) -> str:
    ticks = []
    for i in range(5):
        t = horizon * i / 4
        x = _x(t, horizon)
        ticks.append(f'<line x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{bottom:.1f}" stroke="#e2e8f0"/>'
                     f'<text x="{x:.1f}" y="{bottom + 14:.1f}" text-anchor="middle">{clock_time(t)}</text>')
    return "".join(ticks)


def _generation(nc: Mapping[str, Any]) -> str:
    gen = (nc.get("labels") or {}).get(GENERATION_LABEL)
    if gen:
        return str(gen)
    it = str(nc.get("instance_type") or "")
    digits = "".join(c for c in it.split(".", 1)[0] if c.isdigit())
    return digits[:1] or "?"


def chart_events(document: Mapping[str, Any]) -> list[tuple[float, str, str]]:
    """``[(t, category, text)]``: the Scenario's events from the timeline (a Deployment's scale, not
    its ReplicaSet's) and the disruption decisions, in time order."""
    out: list[tuple[float, str, str]] = []
    for e in document.get("timeline") or ():
        category = _CATEGORY.get(str(e.get("kind")))
        if category is None or (category == "scale" and str(e.get("object")).startswith("ReplicaSet/")):
            continue
        detail = e.get("detail") or {}
        text = f"{e['kind']} {e.get('object')}"
        if category == "scale":
            text += f" {detail.get('previous')}\u2192{detail.get('replicas')}"
        elif category == "capacity":
            text += " " + ", ".join(map(str, detail.get("specs") or []))
        out.append((float(e["t"]), category, text))
    for d in document.get("disruptions") or ():
        if not isinstance(d, Mapping) or d.get("t") is None:
            continue
        types = ", ".join("/".join(map(str, t)) for t in d.get("replacement_instance_types") or ())
        text = (f"{d.get('method') or 'disruption'} {d.get('decision')} {', '.join(map(str, d.get('candidates') or ()))}"
                + (f" \u2192 {types}" if types else "") + (f" (failed: {d['error']})" if d.get("error") else ""))
        out.append((float(d["t"]), "disruption", text))
    return sorted(out, key=lambda x: x[0])


def _event_marks(events: Sequence[tuple[float, str, str]], horizon: float, top: float, bottom: float) -> str:
    return "".join(
        f'<line class="event-mark" x1="{_x(t, horizon):.1f}" y1="{top:.1f}" x2="{_x(t, horizon):.1f}" '
        f'y2="{bottom:.1f}" stroke="{EVENT_COLOURS[c]}" stroke-width="1.5" stroke-dasharray="4 3" '
        f'data-category="{c}" data-t="{t:g}"><title>{clock_time(t)} {escape(text)}</title></line>'
        for t, c, text in events)


def _event_legend(events: Sequence[tuple[float, str, str]]) -> str:
    """The legend (the categories present) and the list of events, time first."""
    if not events:
        return ""
    present = [c for c in EVENT_COLOURS if any(c == e[1] for e in events)]
    legend = "".join(f'<span class="event-key" data-category="{c}"><i style="border-color:{EVENT_COLOURS[c]}">'
                     f'</i>{c}</span>' for c in present)
    items = "".join(f'<li data-category="{c}" data-t="{t:g}"><b style="color:{EVENT_COLOURS[c]}">{clock_time(t)}</b> '
                    f'{escape(text)}</li>' for t, c, text in events[:40])
    more = f"<li>... {len(events) - 40} more</li>" if len(events) > 40 else ""
    return (f'<p id="event-legend">Dashed lines mark, on every chart: {legend}</p>'
            f'<details><summary>{len(events)} events</summary><ol id="event-list">{items}{more}</ol></details>')


#: characters of a Gantt row label that fit left of the plot (13 px DejaVu Sans, about 7.8 px each)
LABEL_CHARS = 20


def _fit(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[:LABEL_CHARS - 1] + "\u2026"


def gantt_label(name: str, instance_type: str) -> str:
    """A Gantt row's label within :data:`LABEL_CHARS`: the instance type whole (m7i.2xlarge vs
    m7i.4xlarge is what the row tells), the NodeClaim name cut from the left to keep its suffix."""
    full = f"{name} {instance_type}"
    room = LABEL_CHARS - len(instance_type) - 2  # a space and the ellipsis
    if len(full) <= LABEL_CHARS or room < 5:
        return _fit(full)
    return f"\u2026{name[-room:]} {instance_type}"


def _gantt(nodeclaims: Sequence[Mapping[str, Any]], horizon: float,
           events: Sequence[tuple[float, str, str]] = ()) -> str:
    launched = [nc for nc in nodeclaims if nc.get("launched") and nc.get("launched_at") is not None]
    height = 30 + ROW * max(len(launched), 1) + 20
    rows = []
    for i, nc in enumerate(launched):
        start = float(nc["launched_at"])
        end = float(nc["deleted_at"]) if nc.get("deleted_at") is not None else horizon
        gen = _generation(nc)
        colour = GENERATION_COLOURS.get(gen, OTHER_COLOUR)
        spot = nc.get("capacity_type") == "spot"
        y = 10 + i * ROW
        x0, x1 = _x(start, horizon), _x(max(end, start), horizon)
        label = f"{nc.get('name')} {nc.get('instance_type')}"
        rows.append(
            f'<g class="gantt-bar" data-nodeclaim="{escape(str(nc.get("name")))}" data-start="{start:g}" '
            f'data-end="{end:g}" data-generation="{escape(gen)}" '
            f'data-capacity-type="{escape(str(nc.get("capacity_type")))}">'
            f'<text x="{LEFT - 6}" y="{y + 11}" text-anchor="end">'
            f'{escape(gantt_label(str(nc.get("name")), str(nc.get("instance_type"))))}'
            f'<title>{escape(label)}</title></text>'
            f'<rect x="{x0:.1f}" y="{y + 2}" width="{max(x1 - x0, 1.0):.1f}" height="{ROW - 4}" fill="{colour}"'
            + (' fill-opacity="0.5" stroke="' + colour + '" stroke-dasharray="3 2"' if spot else "")
            + "/></g>")
    legend = " ".join(f'<tspan fill="{c}">&#9632; gen {g}</tspan>' for g, c in GENERATION_COLOURS.items())
    bottom = 10 + ROW * max(len(launched), 1)
    return (f'<svg id="chart-gantt" class="chart" viewBox="0 0 {WIDTH} {height + 14}" width="{WIDTH}" '
            f'height="{height + 14}" role="img" aria-label="NodeClaims over time">'
            f'{_axis(horizon, 6, bottom)}{"".join(rows)}{_event_marks(events, horizon, 6, bottom)}'
            f'<text x="{LEFT}" y="{height + 10}">{legend} (spot: lighter, dashed)</text></svg>')


def pending_series(timeline: Sequence[Mapping[str, Any]]) -> list[tuple[float, int]]:
    """``[(t, pending pods)]``: a pod is pending from ``pod.created`` (not on a node) until it is
    bound or leaves."""
    unbound: set[str] = set()
    series: list[tuple[float, int]] = [(0.0, 0)]
    for e in timeline:
        obj, kind = str(e.get("object")), e.get("kind")
        if not obj.startswith("Pod/"):
            continue
        before = len(unbound)
        if kind == "pod.created" and not (e.get("detail") or {}).get("node"):
            unbound.add(obj)
        elif kind in ("pod.bound", "pod.deleted", "pod.departed", "pod.completed"):
            unbound.discard(obj)
        if len(unbound) != before:
            t = float(e["t"])
            if series[-1][0] == t:
                series[-1] = (t, len(unbound))
            else:
                series.append((t, len(unbound)))
    return series


def _step_chart(chart_id: str, label: str, series: Sequence[tuple[float, float]], horizon: float,
                unit: str, colour: str, events: Sequence[tuple[float, str, str]] = ()) -> str:
    top, bottom = 10.0, LINE_HEIGHT - 10.0
    peak = max((v for _, v in series), default=0.0) or 1.0
    points = step_points(series, horizon, top, bottom, peak)
    marks = "".join(f'<circle class="step" cx="{_x(t, horizon):.1f}" '
                    f'cy="{bottom - (bottom - top) * v / peak:.1f}" r="1.5" fill="{colour}" data-t="{t:g}" '
                    f'data-value="{v:g}"/>' for t, v in series)
    return (f'<svg id="{chart_id}" class="chart" viewBox="0 0 {WIDTH} {LINE_HEIGHT + 10}" width="{WIDTH}" '
            f'height="{LINE_HEIGHT + 10}" role="img" aria-label="{escape(label)}">'
            f'{_axis(horizon, top, bottom)}{_event_marks(events, horizon, top, bottom)}'
            f'<text x="{LEFT - 6}" y="{top + 10:.1f}" text-anchor="end">{escape(unit.format(peak))}</text>'
            f'<text x="{LEFT - 6}" y="{bottom:.1f}" text-anchor="end">0</text>'
            f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{" ".join(points)}"/>{marks}</svg>')


def render_time_charts(document: Mapping[str, Any]) -> str:
    """The ``#over-time`` section (empty string for a run without time-dependent events)."""
    if not has_time_events(document):
        return ""
    cost = document.get("cost") or {}
    horizon = float(cost.get("horizon") or (document.get("simulation") or {}).get("virtual_seconds") or 0.0)
    nodeclaims = [nc for nc in document.get("nodeclaims") or [] if isinstance(nc, Mapping)]
    pending = pending_series(document.get("timeline") or [])
    per_hour = [(float(t), float(v)) for t, v in cost.get("per_hour") or []]
    events = chart_events(document)
    return ('<section id="over-time"><h2>Over time</h2>'
            f'{_event_legend(events)}'
            f'<h3 id="over-time-nodes">NodeClaims ({clock_time(0)}-{clock_time(horizon)})</h3>'
            f'{_gantt(nodeclaims, horizon, events)}'
            f'<h3 id="over-time-pending">Pending pods</h3>'
            f'{_step_chart("chart-pending", "Pending pods over time", pending, horizon, "{:g} pods", "#c05621", events)}'
            f'<h3 id="over-time-cost">Cost per hour (total ${float(cost.get("total") or 0.0):.5f} over the run)</h3>'
            f'{_step_chart("chart-cost", "Dollars per hour over time", per_hour, horizon, "${:.3f}/h", "#2b6cb0", events)}'
            '</section>')
