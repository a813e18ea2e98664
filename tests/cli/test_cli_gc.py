"""The ``karpy`` process tunes CPython's cyclic GC (issue #13); the library never touches it."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import karpy
from karpy.cli import CLI_GC_THRESHOLDS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "karpy" / "examples" / "generation-preference.yaml")


def test_the_karpy_process_runs_with_the_cli_thresholds() -> None:
    code = ("import gc, sys\n"
            "import karpy.cli\n"
            "karpy.cli.cli = lambda: print(gc.get_threshold(), gc.get_freeze_count() > 0)\n"
            "karpy.cli.main()\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT))).stdout
    assert out.strip() == f"{CLI_GC_THRESHOLDS} True"


def test_the_library_leaves_the_hosts_gc_as_it_found_it() -> None:
    before = gc.get_threshold(), gc.isenabled(), gc.get_freeze_count()
    karpy.simulate(EXAMPLE)
    assert (gc.get_threshold(), gc.isenabled(), gc.get_freeze_count()) == before
