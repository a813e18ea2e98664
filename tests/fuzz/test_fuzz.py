"""The loader and CLI under fuzzing (issue #15): >= 2,000 generated cases per run, each one
accepted (exit 0/3 with a JSON document) or a clean error (exit 2, one line naming the file), never a
crash, a traceback, a hang or a changed input file, and never accepted when it carries input the API
server would refuse (issue 35's oracle). Cases: tests/fuzz/fuzz_cases.py; the long run:
``python tests/fuzz/run.py --cases 20000``."""

from __future__ import annotations

import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).parent))
from fuzz_cases import Case, cases, check  # noqa: E402

CI_CASES = 2000
_seen: Counter[str] = Counter()
_workdir = Path(tempfile.mkdtemp(prefix="karpy-fuzz-"))
_runner = CliRunner()


@settings(max_examples=CI_CASES, deadline=None, database=None, derandomize=False,
          suppress_health_check=list(HealthCheck))
@given(cases())
def test_every_case_is_accepted_or_a_clean_error(case: Case) -> None:
    outcome = check(case, _workdir, _runner)
    _seen[outcome.kind] += 1
    _seen["must reject"] += case.must_reject is not None
    # "wrongly accepted": input the API server would refuse (issue 35's oracle) was accepted
    assert outcome.kind in ("accepted", "clean error"), (outcome, case)


def test_the_fuzz_run_exercised_both_sides() -> None:
    """The property above really ran its cases, and generated both valid and invalid input."""
    assert sum(_seen.values()) - _seen["must reject"] >= CI_CASES
    assert _seen["accepted"] >= CI_CASES // 20 and _seen["clean error"] >= CI_CASES // 4, _seen
    assert _seen["must reject"] >= CI_CASES // 20, _seen  # the oracle's classes were generated


def test_the_hang_limit_counts_cpu_time_and_still_catches_a_blocked_case() -> None:
    """A case spinning on the CPU is stopped by the CPU-time limit; one blocked without spending CPU
    (a sleep standing in for a deadlock) by the wall limit; both are classified as a hang."""
    from fuzz_cases import WALL_TIMEOUT_FACTOR, _deadline, _Hang

    start = time.monotonic()
    with pytest.raises(_Hang):
        with _deadline(0.2):
            while True:
                pass
    with pytest.raises(_Hang):
        with _deadline(0.2):
            time.sleep(30)
    assert time.monotonic() - start < 30  # the sleep was cut short by the wall limit
    assert WALL_TIMEOUT_FACTOR > 1
