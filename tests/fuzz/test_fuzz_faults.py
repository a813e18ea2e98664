"""Fault injection (issue 35): a full disk on each output file and a damaged catalogue cache entry,
SIGINT during a process-pool sweep, the fault point drawn by hypothesis (cases: tests/fuzz/fault_cases.py;
the long run: ``python tests/fuzz/run.py --faults N``). Fixed signal cases and a lost Dask scheduler:
tests/sweeps/test_sweep_interrupt.py."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
import tempfile
from pathlib import Path
from typing import Any, TypeVar

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, example, given, settings

sys.path.insert(0, str(Path(__file__).parent))
from fault_cases import (  # noqa: E402
    DAMAGES,
    OUTPUTS,
    CacheFault,
    DiskFull,
    SignalFault,
    cache_faults,
    check_cache_fault,
    check_disk_full,
    check_signal,
    disk_full_faults,
    signal_faults,
)

_T = TypeVar("_T", bound=Callable[..., Any])
_workdir = Path(tempfile.mkdtemp(prefix="karpy-faults-"))
_runner = CliRunner()
_FAST = settings(max_examples=8, deadline=None, database=None, derandomize=True,
                 suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])


def _every(examples: Sequence[object]) -> Callable[[_T], _T]:
    """Explicit examples (each output, each damage) besides the drawn ones."""
    def wrap(test: _T) -> _T:
        for e in reversed(examples):
            test = example(e)(test)
        return test
    return wrap


@_FAST
@_every([DiskFull(c, o, 0.5, 1, b"an earlier file\n") for c, o in OUTPUTS])
@given(disk_full_faults)
def test_a_full_disk_leaves_the_target_as_it_was_and_exits_2(fault: DiskFull) -> None:
    assert check_disk_full(fault, _workdir / "disk", _runner).kind == "ok", fault


@_FAST
@_every([CacheFault(1, d, 0.5, b"\xff" * 8) for d in DAMAGES])
@given(cache_faults)
def test_a_damaged_cache_entry_gives_the_same_document_and_is_repaired(fault: CacheFault) -> None:
    outcome = check_cache_fault(fault, _workdir / "cache", _runner)
    assert outcome.kind == "ok", (outcome, fault)


@pytest.mark.skipif(sys.platform == "win32" or not Path("/proc/self").exists(), reason="POSIX signals, /proc")
@settings(max_examples=2, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.generate])
@_every([SignalFault(0.0, False, True), SignalFault(0.7, True, False)])
@given(signal_faults)
def test_sigint_during_a_sweep_stops_it_cleanly_keeping_the_finished_rows(fault: SignalFault) -> None:
    outcome = check_signal(fault, _workdir / "signal")
    assert outcome.kind == "ok", (outcome, fault)
