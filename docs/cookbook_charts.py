"""mkdocs hook: the cookbook sweep's committed charts (examples/generation-preference/sweep/*.svg)
served under ``guides/cookbook/`` so docs/guides/cookbook.md shows the very files the tests pin
(tests/report/test_sweep_report_chromium.py), not copies that could drift."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

CHARTS = Path(__file__).resolve().parents[1] / "examples" / "generation-preference" / "sweep"
NAMES = ("cost-by-date-0.svg", "generation-by-date.svg", "generation-share.svg")


def on_files(files: Files, config: Any) -> Files:
    for name in NAMES:
        files.append(File.generated(config, f"guides/cookbook/{name}", abs_src_path=str(CHARTS / name)))
    return files
