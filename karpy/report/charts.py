"""Inline SVG charts for the compare and sweep reports (no script, no external resource).

Every label is escaped; geometry is computed with fixed rounding, so the same data gives the same
bytes. Each chart is a ``<svg class="chart" id=...>`` element whose marks carry ``data-*``
attributes (the numbers, 5 decimals) for tests and tools to read back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from html import escape

__all__ = ["PALETTE", "color_for", "line_chart", "stacked_share_bars", "grid_chart"]

#: colours for series / generations, in order (colour-blind-friendly Okabe-Ito, then greys)
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000",
           "#7f7f7f", "#bcbcbc")
MISSING = "#f2f2f2"
"""Fill of a cell with no value (a failed cell, or nothing launched)."""

FONT = 'font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="12"'


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def color_for(key: str, keys: Sequence[str]) -> str:
    """The palette colour of ``key`` by its position in ``keys`` (cycling)."""
    return PALETTE[keys.index(key) % len(PALETTE)] if key in keys else PALETTE[-1]


def _f(x: float) -> str:
    return f"{x:.1f}"


#: width of one character of :data:`FONT` (12 px DejaVu Sans), a little over its average, for layout
CHAR_W = 7.2


def _fit_text(label: str, px: float) -> str:
    """``label`` cut with an ellipsis to about ``px`` pixels (the caller keeps the whole in a ``<title>``)."""
    room = max(int(px / CHAR_W), 4)
    return label if len(label) <= room else label[:room - 1] + "\u2026"


def _label_text(label: str, px: float, **attrs: object) -> str:
    """A ``<text>`` of ``label`` fitted to ``px`` pixels, the whole label on hover when cut."""
    shown = _fit_text(label, px)
    extra = "".join(f' {k.replace("_", "-")}="{_e(v)}"' for k, v in attrs.items())
    title = f"<title>{_e(label)}</title>" if shown != label else ""
    return f"<text{extra}>{_e(shown)}{title}</text>"


def _label_width(labels: Sequence[str], cap: int) -> int:
    """The row-label column: as wide as the longest label (at least 120 px, at most ``cap``)."""
    return min(cap, max(120, int(max((len(str(x)) for x in labels), default=0) * CHAR_W) + 16))


def _legend(keys: Sequence[str], x0: int, baseline: int, label: str) -> str:
    """One row of colour swatches, ``label key`` each, 110 px apart."""
    return "".join(f'<rect x="{x0 + j * 110}" y="{baseline - 10}" width="12" height="12" '
                   f'fill="{color_for(key, list(keys))}"/><text x="{x0 + j * 110 + 16}" y="{baseline}">'
                   f'{_e(label)} {_e(key)}</text>' for j, key in enumerate(keys))


def _nice_step(raw: float) -> float:
    """The smallest step of 1, 2, 2.5 or 5 times a power of ten that is at least ``raw``."""
    import math

    raw = max(raw, 1e-9)
    base = 10 ** math.floor(math.log10(raw))
    return float(next(base * m for m in (1, 2, 2.5, 5, 10) if base * m >= raw * (1 - 1e-9)))


def y_axis(values: Sequence[float]) -> tuple[float, float, float]:
    """``(y_min, y_max, step)`` of a $/h axis with round ticks (``step`` 1, 2, 2.5 or 5 times a power of
    ten, 3 to 7 ticks): from 0, unless the values sit in a narrow band far from it (the spread under half
    the highest value, all of them equal included); then the band that matters, padded by a step."""
    import math

    hi = max(values, default=0.0) or 1.0
    lo = min(values, default=0.0)
    if lo > 0 and hi - lo < 0.5 * hi:
        span = (hi - lo) or 0.1 * hi
        step = _nice_step(span / 4)
        y_min = max(0.0, math.floor((lo - 0.15 * span) / step + 1e-9) * step)
    else:
        y_min, step = 0.0, _nice_step(hi / 4)
    y_max = math.ceil((hi + 0.05 * (hi - y_min)) / step - 1e-9) * step
    y_max = max(y_max, y_min + 2 * step)  # at least three ticks, a flat line off the top edge
    return round(y_min, 12), round(y_max, 12), step


def _decimals(step: float) -> int:
    """Decimals that tell ticks ``step`` apart (0.05 -> 2, 0.0025 -> 4), at least 2 for dollars."""
    import math

    d = max(0, -math.floor(math.log10(step) + 1e-9))
    return max(2, d + (1 if round(step / 10 ** -d, 6) not in (1, 2, 5) else 0))


def _equal_point_offsets(n: int, series: Sequence[tuple[str, Sequence[float | None]]],
                         y: Callable[[float], float], slot: float) -> dict[tuple[int, int], tuple[float, float]]:
    """(x index, series index) -> (sideways offset, ring radius): points of equal value (the same
    pixel row) at one x are offset sideways and drawn as concentric rings, the first the widest."""
    offset: dict[tuple[int, int], tuple[float, float]] = {}
    for i in range(n):
        rows: dict[int, list[int]] = {}
        for k, (_, vs) in enumerate(series):
            v = vs[i] if i < len(vs) else None
            if v is not None:
                rows.setdefault(round(y(v) / 4), []).append(k)
        for ks in rows.values():
            m = len(ks)
            gap = min(7.0, 0.8 * slot / m) if m > 1 else 0.0
            for rank, k in enumerate(ks):
                offset[i, k] = ((rank - (m - 1) / 2) * gap, 3.0 + 2.0 * (m - 1 - rank))
    return offset


_DASHES = ("", ' stroke-dasharray="6 3"', ' stroke-dasharray="2 3"', ' stroke-dasharray="8 3 2 3"')


def _series_svg(k: int, name: str, vs: Sequence[float | None], color: str, x_labels: Sequence[str],
                x: Callable[[int], float], y: Callable[[float], float],
                offset: Mapping[tuple[int, int], tuple[float, float]]) -> list[str]:
    """One series' ``<g>``: a polyline per run of values (a gap at None), then a point per value."""
    run: list[str] = []
    runs: list[list[str]] = []
    for i, v in enumerate(vs):
        if v is None:
            if run:
                runs.append(run)
            run = []
            continue
        run.append(f"{_f(x(i) + offset[i, k][0])},{_f(y(v))}")
    if run:
        runs.append(run)
    out = [f'<g class="series" data-series="{_e(name)}">']
    for r in runs:
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="2"{_DASHES[k % len(_DASHES)]} '
                   f'points="{" ".join(r)}"/>')
    for i, v in enumerate(vs):
        if v is not None:
            dx, radius = offset[i, k]
            out.append(f'<circle cx="{_f(x(i) + dx)}" cy="{_f(y(v))}" r="{radius:g}" fill="{color}" '
                       f'stroke="#fff" stroke-width="1" data-x="{_e(x_labels[i])}" data-value="{v:.5f}">'
                       f'<title>{_e(name)} {_e(x_labels[i])}: {v:.5f}</title></circle>')
    out.append("</g>")
    return out


def line_chart(chart_id: str, caption: str, x_labels: Sequence[str],
               series: Sequence[tuple[str, Sequence[float | None]]], *, y_label: str = "$/h",
               width: int = 900, height: int = 320) -> str:
    """One polyline per series over the categorical ``x_labels`` (a gap where a value is None), a
    point per value, a legend below the rotated x labels. Series equal at a point stay visible: their
    points are offset sideways and drawn as concentric rings (the first series the widest), their
    lines dashed differently. The y axis starts at 0 unless the values sit in a narrow band far from
    it; then it starts below the lowest value and the chart says where (``data-y-min``)."""
    left, right, top = 64, 16, 28
    n = max(len(x_labels), 1)
    step = max(1, (n + 23) // 24)
    longest = max((len(str(lab)) for lab in x_labels), default=0)
    labels_h = int(12 + longest * 7 * 0.72) + 8  # rotated -45 degrees, about 7 px per character
    plot_w = width - left - right
    # legend: up to three columns, as many as the longest name allows; a name longer than a row is cut
    longest_name = max((len(name) for name, _ in series), default=0)
    legend_cols = max(1, min(3, int(plot_w // (longest_name * CHAR_W + 32))))
    legend_rows = -(-len(series) // legend_cols)
    values = [v for _, vs in series for v in vs if v is not None]
    y_min, y_max, y_step = y_axis(values)
    places = _decimals(y_step)
    if y_min > 0:
        top += 16
    plot_h = height - top - 48
    total_h = top + plot_h + labels_h + 18 * legend_rows + 6
    slot = plot_w / n

    def x(i: int) -> float:
        return left + slot * (i + 0.5)

    def y(v: float) -> float:
        return top + plot_h - plot_h * (v - y_min) / ((y_max - y_min) or 1.0)

    names = [name for name, _ in series]
    offset = _equal_point_offsets(len(x_labels), series, y, slot)

    y_note = (f'<text class="axis-note" x="{left}" y="34" data-y-min="{y_min:.5f}">{_e(y_label)} axis starts at '
              f'{y_min:.{places}f}, not 0</text>') if y_min > 0 else ""
    out = [f'<svg class="chart" id="{_e(chart_id)}" xmlns="http://www.w3.org/2000/svg" role="img" '
           f'viewBox="0 0 {width} {total_h}" width="{width}" height="{total_h}" {FONT} '
           f'data-y-min="{y_min:.5f}">',
           f'<title>{_e(caption)}</title>',
           f'<text x="{left}" y="16" font-weight="bold">{_e(caption)}</text>', y_note]
    for k in range(round((y_max - y_min) / y_step) + 1):
        tick = y_min + y_step * k
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{_f(y(tick))}" y2="{_f(y(tick))}" stroke="#e2e8f0"/>')
        out.append(f'<text class="y-tick" x="{left - 6}" y="{_f(y(tick) + 4)}" text-anchor="end">'
                   f'{tick:.{places}f}</text>')
    out.append(f'<text x="14" y="{_f(top + plot_h / 2)}" transform="rotate(-90 14 {_f(top + plot_h / 2)})" '
               f'text-anchor="middle">{_e(y_label)}</text>')
    for i, label in enumerate(x_labels):
        if i % step == 0:
            out.append(f'<text x="{_f(x(i))}" y="{top + plot_h + 12}" text-anchor="end" '
                       f'transform="rotate(-45 {_f(x(i))} {top + plot_h + 12})">{_e(label)}</text>')
    for k, (name, vs) in enumerate(series):
        out.extend(_series_svg(k, name, vs, color_for(name, names), x_labels, x, y, offset))
    legend_y = top + plot_h + labels_h
    for j, name in enumerate(names):
        col_w = plot_w / legend_cols
        lx, ly = left + (j % legend_cols) * col_w, legend_y + 12 + 18 * (j // legend_cols)
        out.append(f'<rect x="{_f(lx)}" y="{_f(ly - 10)}" width="12" height="12" fill="{color_for(name, names)}"/>'
                   + _label_text(name, col_w - 24, x=_f(lx + 16), y=_f(ly)))
    out.append("</svg>")
    return "".join(out)


def stacked_share_bars(chart_id: str, caption: str, rows: Sequence[tuple[str, Mapping[str, float]]],
                       segments: Sequence[str], *, segment_label: str = "generation", width: int = 900) -> str:
    """One horizontal 100 % bar per row, split into ``segments`` by share (a row of zeros is grey)."""
    label_w = _label_width([label for label, _ in rows], width // 2)
    bar_w, row_h = width - label_w - 24, 24
    height = 40 + row_h * len(rows) + 24
    out = [f'<svg class="chart" id="{_e(chart_id)}" xmlns="http://www.w3.org/2000/svg" role="img" '
           f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" {FONT}>',
           f'<title>{_e(caption)}</title>', f'<text x="4" y="16" font-weight="bold">{_e(caption)}</text>']
    for r, (label, shares) in enumerate(rows):
        y0 = 32 + r * row_h
        out.append(_label_text(label, label_w - 12, x=label_w - 8, y=y0 + 15, text_anchor="end"))
        total = sum(shares.values())
        if total <= 0:
            out.append(f'<rect x="{label_w}" y="{y0 + 3}" width="{bar_w}" height="{row_h - 6}" fill="{MISSING}"/>'
                       f'<text x="{label_w + 6}" y="{y0 + 15}">nothing launched</text>')
            continue
        x0 = float(label_w)
        for seg in segments:
            part = shares.get(seg, 0.0)
            if part <= 0:
                continue
            w = bar_w * part / total
            out.append(f'<rect x="{_f(x0)}" y="{y0 + 3}" width="{_f(w)}" height="{row_h - 6}" '
                       f'fill="{color_for(seg, list(segments))}" data-row="{_e(label)}" data-segment="{_e(seg)}" '
                       f'data-share="{part / total:.5f}"><title>{_e(label)}: {_e(segment_label)} {_e(seg)} '
                       f'{100 * part / total:.1f}%</title></rect>')
            if w > 28:
                out.append(f'<text x="{_f(x0 + w / 2)}" y="{y0 + 15}" text-anchor="middle" fill="#fff">'
                           f'{_e(seg)}</text>')
            x0 += w
    out.append(_legend(segments, label_w, height - 8, segment_label))
    out.append("</svg>")
    return "".join(out)


def grid_chart(chart_id: str, caption: str, row_labels: Sequence[str], col_labels: Sequence[str],
               cells: Mapping[tuple[str, str], tuple[str, str]], keys: Sequence[str], *,
               key_label: str = "generation") -> str:
    """A heat grid: ``cells[(row, col)] = (text, key)``; the key picks the colour (absent: grey)."""
    label_w = _label_width(row_labels, 420)
    cell_w, cell_h, head_h = max(14, min(40, 560 // max(len(col_labels), 1))), 22, 84
    width = max(label_w + cell_w * len(col_labels) + 60, label_w + 110 * len(keys)) + 16  # + the last rotated label
    height = head_h + cell_h * len(row_labels) + 30
    out = [f'<svg class="chart" id="{_e(chart_id)}" xmlns="http://www.w3.org/2000/svg" role="img" '
           f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" {FONT}>',
           f'<title>{_e(caption)}</title>', f'<text x="4" y="16" font-weight="bold">{_e(caption)}</text>']
    every = -(-20 // cell_w)  # rotated labels need about 20 px apart not to touch
    for c, col in enumerate(col_labels):
        if c % every:
            continue
        cx = label_w + c * cell_w + cell_w / 2
        out.append(f'<text x="{_f(cx)}" y="{head_h - 6}" transform="rotate(-60 {_f(cx)} {head_h - 6})">'
                   f'{_e(col)}</text>')
    for r, row in enumerate(row_labels):
        y0 = head_h + r * cell_h
        out.append(_label_text(row, label_w - 12, x=label_w - 8, y=y0 + 15, text_anchor="end"))
        for c, col in enumerate(col_labels):
            text, key = cells.get((row, col), ("", ""))
            fill = color_for(key, list(keys)) if key else MISSING
            x0 = label_w + c * cell_w
            out.append(f'<rect x="{x0}" y="{y0}" width="{cell_w - 1}" height="{cell_h - 1}" fill="{fill}" '
                       f'data-row="{_e(row)}" data-col="{_e(col)}" data-key="{_e(key)}">'
                       f'<title>{_e(row)} @ {_e(col)}: {_e(text or "-")}</title></rect>')
    out.append(_legend(keys, label_w, height - 8, key_label))
    out.append("</svg>")
    return "".join(out)
