"""Same input, byte-identical JSON (issue #15): across PYTHONHASHSEED values (separate processes),
across the order the files are given in, and for a directory versus its files listed one by one."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import karpy

ROOT = Path(__file__).resolve().parents[2]
MIXED = Path(__file__).parent / "data" / "mixed"  # NodePools, a spread Deployment, a Job and a Pod
FILES = sorted(MIXED.glob("*.yaml"))


def cli_json(args: list[str], hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "karpy", "simulate", *args, "-o", "json"], env=env,
                         capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode in (0, 3), out.stderr
    return out.stdout


def test_hash_seeds_and_file_orders_give_one_document(validate_document: Any) -> None:
    in_process = karpy.simulate(str(MIXED)).to_json()
    assert '"nodepool": "general"' in in_process  # a real run, not an empty document
    a = cli_json([str(MIXED)], "0")
    validate_document(json.loads(a))  # a subprocess's document is not seen by conftest's to_document hook
    b = cli_json([str(f) for f in reversed(FILES)], "4242")
    assert a == b == in_process


def test_every_file_order_and_the_directory_give_one_document() -> None:
    directory = karpy.simulate(str(MIXED)).to_json()
    for order in itertools.permutations(FILES):
        assert karpy.simulate([str(f) for f in order]).to_json() == directory, order
