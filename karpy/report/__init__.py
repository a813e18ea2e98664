"""Human-readable views of a simulation document (docs/contract.md).

- :func:`render_table` -- the plain-text table of ``karpy simulate -o table``.
- :func:`render_html` -- one self-contained HTML page for ``karpy simulate --report FILE.html``.

Both take the JSON document (a ``dict``, as ``result.to_json()`` parses to) and are deterministic.
"""

from karpy.report.html import render_html
from karpy.report.table import instance_family, is_launched, render_table

__all__ = ["render_table", "render_html", "instance_family", "is_launched"]
