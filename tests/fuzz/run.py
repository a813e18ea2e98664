"""The long fuzz run of the loader and CLI (issue #15): the cases of ``fuzz_cases.py``, many more of
them than CI runs, each checked against the contract; prints crashes and hangs as they are found and
ends with one summary line::

    python tests/fuzz/run.py --cases 20000 [--seed N]
    20000 cases, 12345 clean errors, 7655 accepted, 0 crashes, 0 hangs, 0 wrongly accepted (of 3456 the API server would refuse)

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
from fuzz_cases import Case, cases, check  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20000, help="how many cases to run (default 20000)")
    parser.add_argument("--seed", type=int, default=None, help="hypothesis seed (default: random)")
    args = parser.parse_args(argv)
    counts: Counter[str] = Counter()
    refusable = [0]  # cases the oracle says the API server would refuse
    workdir = Path(tempfile.mkdtemp(prefix="karpy-fuzz-"))
    runner = CliRunner()
    start = time.monotonic()

    @settings(max_examples=args.cases, deadline=None, database=None, derandomize=False,
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
    one()
    total = sum(counts.values())
    print(f"{total} cases, {counts['clean error']} clean errors, {counts['accepted']} accepted, "
          f"{counts['crash']} crashes, {counts['hang']} hangs, {counts['wrongly accepted']} wrongly accepted "
          f"(of {refusable[0]} the API server would refuse) ({time.monotonic() - start:.0f}s)")
    return 1 if counts["crash"] or counts["hang"] or counts["wrongly accepted"] else 0


if __name__ == "__main__":
    sys.exit(main())
