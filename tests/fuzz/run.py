"""The long fuzz run of the loader and CLI (issue #15): the cases of ``fuzz_cases.py``, many more of
them than CI runs, each checked against the contract; prints crashes and hangs as they are found and
ends with one summary line::

    python tests/fuzz/run.py --cases 20000 [--seed N]
    20000 cases, 12345 clean errors, 7655 accepted, 0 crashes, 0 hangs, 0 wrongly accepted (of 3456 the API server would refuse)

``--faults N`` also runs N fault-injection cases (``fault_cases.py``: a full disk on each output file,
a damaged catalogue cache entry, SIGINT during a process-pool sweep) and prints a second summary line (``--cases 0`` for those alone)::

    python tests/fuzz/run.py --cases 0 --faults 200
    200 fault cases, 0 target destroyed, 0 temp left, 0 crashes

Exit status 1 when any case crashed, hung, or was accepted though the API server would refuse it
(the oracle of ``fuzz_cases._oracle``). ``--seed`` makes a run repeatable (default: random).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, seed, settings

sys.path.insert(0, str(Path(__file__).parent))
from fault_cases import (CacheFault, DiskFull, SignalFault, cache_faults, check_cache_fault,  # noqa: E402
                         check_disk_full, check_signal, disk_full_faults, signal_faults)
from fuzz_cases import Case, cases, check  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20000, help="how many cases to run (default 20000)")
    parser.add_argument("--seed", type=int, default=None, help="hypothesis seed (default: random)")
    parser.add_argument("--faults", type=int, default=0, help="also run this many fault-injection cases")
    args = parser.parse_args(argv)
    counts: Counter[str] = Counter()
    refusable = [0]  # cases the oracle says the API server would refuse
    workdir = Path(tempfile.mkdtemp(prefix="karpy-fuzz-"))
    runner = CliRunner()
    start = time.monotonic()

    @settings(max_examples=max(args.cases, 1), deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate])
    @given(cases())
    def one(case: Case) -> None:
        outcome = check(case, workdir, runner)
        counts[outcome.kind] += 1
        if case.must_reject is not None:
            refusable[0] += 1
        if outcome.kind in ("crash", "hang", "wrongly accepted"):
            print(f"{outcome.kind}: {outcome.detail}\n  options {case.options} notes {case.notes}\n"
                  f"  files {{{', '.join(f'{k!r}: {v[:300]!r}' for k, v in case.files.items())}}}", flush=True)
        done = sum(counts.values())
        if done % 1000 == 0:
            print(f"... {done} cases in {time.monotonic() - start:.0f}s", file=sys.stderr, flush=True)

    if args.seed is not None:
        one = seed(args.seed)(one)
    if args.cases > 0:
        one()
    failed = _faults(args.faults, args.seed, workdir, runner) if args.faults > 0 else False
    if args.cases <= 0:
        return 1 if failed else 0
    total = sum(counts.values())
    print(f"{total} cases, {counts['clean error']} clean errors, {counts['accepted']} accepted, "
          f"{counts['crash']} crashes, {counts['hang']} hangs, {counts['wrongly accepted']} wrongly accepted "
          f"(of {refusable[0]} the API server would refuse) ({time.monotonic() - start:.0f}s)")
    return 1 if failed or counts["crash"] or counts["hang"] or counts["wrongly accepted"] else 0


def _faults(n: int, seed_value: int | None, workdir: Path, runner: CliRunner) -> bool:
    """Run ``n`` fault cases, print failures and the summary line; whether any failed."""
    counts: Counter[str] = Counter()

    @settings(max_examples=n, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate])
    @given(st.one_of(disk_full_faults, cache_faults, signal_faults))
    def one(fault: DiskFull | CacheFault | SignalFault) -> None:
        if isinstance(fault, DiskFull):
            outcome = check_disk_full(fault, workdir / "faults-disk", runner)
        elif isinstance(fault, SignalFault):
            outcome = check_signal(fault, workdir / "faults-signal")
        else:
            outcome = check_cache_fault(fault, workdir / "faults-cache", runner)
        counts[outcome.kind] += 1
        if outcome.kind != "ok":
            print(f"{outcome.kind}: {outcome.detail}\n  {fault}", flush=True)

    if seed_value is not None:
        one = seed(seed_value)(one)
    one()
    print(f"{sum(counts.values())} fault cases, {counts['target destroyed']} target destroyed, "
          f"{counts['temp left']} temp left, {counts['crash']} crashes")
    return sum(counts.values()) != counts["ok"]


if __name__ == "__main__":
    sys.exit(main())
