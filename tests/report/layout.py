"""Layout checks of a rendered report in headless Chromium, over the boxes Chromium laid out.

The report forbids scripts (its CSP), so the check runs on a copy: the CSP meta tag dropped and
:data:`CHECK` appended, which measures the page after load and writes what it found into
``<body data-layout=...>``; ``--dump-dom`` returns it. What is checked:

- ``overlaps``: two text boxes that overlap (SVG text as its rotated box, via SAT on the four
  corners; HTML text as its line boxes), by more than 1.5 px;
- ``overflows``: a text box, an ``svg`` or a ``table`` not inside its card (``section``, a summary
  card, a NodeClaim card) or an SVG text not inside its ``svg``; content of a scroll box is checked
  against the scroll box instead;
- ``hidden``: a ``g.series`` of a chart none of whose points is the topmost element anywhere on it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .test_html_chromium import run_chromium

CHECK = r"""
<script>
window.addEventListener('load', function () {
  const TOL = 1.5, res = {overlaps: [], overflows: [], hidden: [], texts: 0, series: 0};
  function clipOf(el) {
    const s = el.closest('.scroll');
    return s ? s.getBoundingClientRect() : null;
  }
  function inside(b, c) {
    return b.left >= c.left - 1 && b.right <= c.right + 1 && b.top >= c.top - 1 && b.bottom <= c.bottom + 1;
  }
  function aabb(p) {
    const xs = p.map(q => q[0]), ys = p.map(q => q[1]);
    return {left: Math.min(...xs), right: Math.max(...xs), top: Math.min(...ys), bottom: Math.max(...ys)};
  }
  const boxes = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let n;
  while ((n = walker.nextNode())) {
    const text = n.textContent.trim();
    const el = n.parentElement;
    if (!text || !el || el.closest('title') || el.tagName === 'SCRIPT') continue;
    const closed = el.closest('details:not([open])');
    if (closed && !el.closest('summary')) continue;  // folded away: not on screen
    const svgText = el.closest('text');
    if (svgText) {
      if (boxes.some(b => b.el === svgText)) continue;
      const bb = svgText.getBBox(), m = svgText.getScreenCTM();
      if (!bb.width || !m) continue;
      const poly = [[bb.x, bb.y], [bb.x + bb.width, bb.y], [bb.x + bb.width, bb.y + bb.height],
                    [bb.x, bb.y + bb.height]].map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
      boxes.push({el: svgText, poly, box: aabb(poly), text: svgText.textContent.trim().slice(0, 50)});
      continue;
    }
    const r = document.createRange();
    r.selectNodeContents(n);
    for (const b of r.getClientRects()) {
      if (b.width < 1 || b.height < 1) continue;
      const poly = [[b.left, b.top], [b.right, b.top], [b.right, b.bottom], [b.left, b.bottom]];
      boxes.push({el, poly, box: aabb(poly), text: text.slice(0, 50)});
    }
  }
  // text clipped away by a scroll box is not on screen
  const shown = boxes.filter(b => { const c = clipOf(b.el); return !c || (b.box.right > c.left && b.box.left < c.right
                                                          && b.box.bottom > c.top && b.box.top < c.bottom); });
  res.texts = shown.length;
  function axes(p) {
    const out = [];
    for (let i = 0; i < p.length; i++) {
      const a = p[i], b = p[(i + 1) % p.length];
      const dx = b[0] - a[0], dy = b[1] - a[1], len = Math.hypot(dx, dy) || 1;
      out.push([-dy / len, dx / len]);
    }
    return out;
  }
  function depth(p, q) {
    let best = Infinity;
    for (const ax of axes(p).concat(axes(q))) {
      const pp = p.map(v => v[0] * ax[0] + v[1] * ax[1]), qq = q.map(v => v[0] * ax[0] + v[1] * ax[1]);
      const o = Math.min(Math.max(...pp), Math.max(...qq)) - Math.max(Math.min(...pp), Math.min(...qq));
      best = Math.min(best, o);
      if (best <= TOL) return best;
    }
    return best;
  }
  const sorted = shown.slice().sort((a, b) => a.box.top - b.box.top);
  for (let i = 0; i < sorted.length && res.overlaps.length < 20; i++) {
    for (let j = i + 1; j < sorted.length && sorted[j].box.top < sorted[i].box.bottom; j++) {
      const a = sorted[i], b = sorted[j];
      if (a.el === b.el || a.el.contains(b.el) || b.el.contains(a.el)) continue;
      if (a.box.right <= b.box.left || b.box.right <= a.box.left) continue;
      const d = depth(a.poly, b.poly);
      if (d > TOL) res.overlaps.push([a.text, b.text, Math.round(d * 10) / 10]);
    }
  }
  const cards = 'main > section, .cards > div, article.nodeclaim';
  function check(what, el, box) {
    const clip = clipOf(el);
    const card = (clip ? el.closest('.scroll') : el).closest(cards);
    if (clip) { if (!inside(clip, card.getBoundingClientRect())) res.overflows.push(['scroll box', what]); return; }
    if (card && !inside(box, card.getBoundingClientRect()) && res.overflows.length < 20) res.overflows.push([what, 'card']);
    const svg = el.closest('svg');
    if (svg && el !== svg && !inside(box, svg.getBoundingClientRect()) && res.overflows.length < 20)
      res.overflows.push([what, 'svg']);
  }
  for (const b of shown) check(b.text, b.el, b.box);
  for (const el of document.querySelectorAll('main svg, main table'))
    check(el.tagName + '#' + (el.id || ''), el, el.getBoundingClientRect());
  for (const g of document.querySelectorAll('svg g.series')) {
    res.series++;
    let seen = false;
    for (const c of g.querySelectorAll('circle')) {
      c.scrollIntoView({block: 'center'});
      const b = c.getBoundingClientRect(), cx = (b.left + b.right) / 2, cy = (b.top + b.bottom) / 2;
      const h = Math.max(0, b.width / 2 - 1);
      for (const [x, y] of [[cx, cy], [cx - h, cy], [cx + h, cy], [cx, cy - h], [cx, cy + h]]) {
        const top = document.elementFromPoint(x, y);
        if (top === c || (top && c.contains(top))) { seen = true; break; }
      }
      if (seen) break;
    }
    if (!seen) res.hidden.push([g.closest('svg').id, g.getAttribute('data-series')]);
  }
  window.scrollTo(0, 0);
  document.body.setAttribute('data-layout', JSON.stringify(res));
});
</script>
"""


def check_layout(binary: str, tmp: Path, html: str, width: int = 1400, height: int = 1200) -> dict[str, Any]:
    """Load ``html`` (a report page) at ``width`` px in Chromium and return what :data:`CHECK` found."""
    page = tmp / "layout.html"
    without_csp = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html, count=1)
    assert without_csp != html, "the report has no CSP meta tag to drop"
    page.write_text(without_csp.replace("</body>", CHECK + "</body>"), encoding="utf-8")
    dom = run_chromium(binary, tmp / "profile-layout", f"--window-size={width},{height}",
                       "--virtual-time-budget=5000", "--dump-dom", page.resolve().as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'<body[^>]*data-layout="([^"]*)"', dom.stdout)
    assert found, "the layout check did not run"
    from html import unescape

    result: dict[str, Any] = json.loads(unescape(found.group(1)))
    return result
