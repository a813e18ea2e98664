"""The ``karpy`` process tunes CPython's cyclic GC (issue #13); the library never touches it."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

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


_PRELOAD_PROBE = r"""
import gc, json, sys
import karpy.cli
counts = {}
def cli():
    counts["before"] = gc.get_freeze_count()
    counts["moto_before"] = "moto.ec2.models" in sys.modules
    karpy.cli.preload_cloud_provider("aws")
    counts["after"] = gc.get_freeze_count()
    counts["moto_after"] = all(m in sys.modules for m in ("moto.ec2.models", "moto.ec2.responses"))
    counts["threshold"] = list(gc.get_threshold())
    print(json.dumps(counts))
karpy.cli.cli = cli
karpy.cli.main()
"""


def test_the_karpy_process_freezes_what_the_provider_preloads() -> None:
    """A scenario command's provider imports (the AWS provider: moto's EC2 models) are frozen out
    of the collector's generations as main's own imports are, instead of being rescanned by every
    full collection of the run (issue #13: ~0.4 s CPU of the bundled example's cold process)."""
    import json

    out = subprocess.run([sys.executable, "-c", _PRELOAD_PROBE], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT))).stdout
    counts = json.loads(out.strip().splitlines()[-1])
    assert counts["moto_before"] is False and counts["moto_after"] is True
    # moto's EC2 models are tens of thousands of tracked objects, now in the permanent generation
    assert counts["after"] > counts["before"] + 10_000
    assert counts["threshold"] == list(CLI_GC_THRESHOLDS)


def test_preload_outside_the_karpy_process_leaves_gc_alone() -> None:
    """Under click's CliRunner (or a host calling ``cli`` itself) tune_gc never ran: preloading
    imports, it does not freeze or retune the host's collector."""
    from karpy.cli import preload_cloud_provider

    before = gc.get_threshold(), gc.isenabled(), gc.get_freeze_count()
    preload_cloud_provider("aws")
    preload_cloud_provider("no-such-provider")  # the command reports an unknown name, not this
    assert (gc.get_threshold(), gc.isenabled(), gc.get_freeze_count()) == before
    assert "moto.ec2.models" in sys.modules


def test_preload_calls_the_providers_hook_only_when_it_has_one(monkeypatch: pytest.MonkeyPatch) -> None:
    import karpy.cloudprovider.registry as registry
    from karpy.cli import preload_cloud_provider

    calls: list[str] = []

    class WithHook:
        @classmethod
        def preload(cls) -> None:
            calls.append("preloaded")

    class WithoutHook:
        pass

    providers = {"with": WithHook, "without": WithoutHook}
    monkeypatch.setattr(registry, "resolve_cloud_provider", lambda name: providers[name])
    preload_cloud_provider("with")
    preload_cloud_provider("without")
    assert calls == ["preloaded"]
