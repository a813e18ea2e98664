"""Fixtures of the sweep tests: Sweep files over the generation-preference cookbook."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COOKBOOK = ROOT / "examples" / "generation-preference"


@pytest.fixture
def sweep_file(tmp_path: Path) -> Callable[[str], Path]:
    """``sweep_file(spec_yaml)`` -> path of a Sweep file whose relative paths are the cookbook's."""

    def write(spec: str, name: str = "sweep.yaml") -> Path:
        text = ("apiVersion: karpy.io/v1alpha1\nkind: Sweep\nmetadata:\n  name: test\nspec:\n"
                + "".join(f"  {line}\n" for line in spec.strip("\n").splitlines()))
        path = COOKBOOK / name if name.startswith("/") else tmp_path / name
        path.write_text(text.replace("@", str(COOKBOOK) + "/"), encoding="utf-8")
        return path

    return write
