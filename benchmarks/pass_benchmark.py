"""What every provisioning pass and the report cost, in one process (issue #13).

Two measurements, each with the Provisioner's :class:`~karpy.provisioning.schedulercache.SchedulerCache`
on (as shipped) and cleared before every pass (what every pass cost before it), back to back in
the same process so that both see the same machine load:

* warm ``karpy.simulate`` of the bundled example (a process that already ran it once) -- target
  <= 0.2 s; the median of ``--repeat`` runs, and of it: building the scheduler (NewScheduler: the
  instance types per NodePool, the index, the template pre-filter, the reservation manager,
  topology), the document and its JSON text;
* ``karpy.simulate`` of ``aws_diverse(N)`` (benchmarks/workloads.py; default 1,000 pods) on the AWS
  provider: CPU per run, per pass of NewScheduler, the document, the explain block and the JSON
  text.

Figures are CPU seconds of this process (``time.process_time``), with the load average beside
them (the machine is shared). The last line is JSON.

    python benchmarks/pass_benchmark.py [--pods 1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

from workloads import aws_diverse  # noqa: E402

import karpy  # noqa: E402
from karpy.cli import bundled_example  # noqa: E402
from karpy.provisioning.provisioner import Provisioner  # noqa: E402
from karpy.result import Result  # noqa: E402

WARM_TARGET_S = 0.2


@contextmanager
def timed(spent: Counter[str], cached: bool) -> Iterator[None]:
    """Time NewScheduler, the document, the explain block and the JSON text into ``spent``;
    ``cached`` False clears the scheduler cache before every NewScheduler."""
    originals: list[tuple[Any, str, Any]] = []

    def wrap(owner: Any, name: str, label: str, before: Callable[[Any], None] | None = None) -> None:
        f = getattr(owner, name)
        originals.append((owner, name, f))

        def w(*a: Any, **k: Any) -> Any:
            if before is not None:
                before(a[0])
            t = time.process_time()
            try:
                return f(*a, **k)
            finally:
                spent[label] += time.process_time() - t
                spent[label + " calls"] += 1

        setattr(owner, name, w)

    wrap(Provisioner, "new_scheduler", "new_scheduler",
         None if cached else (lambda prov: prov.scheduler_cache.clear()))
    wrap(Result, "explain_block", "explain")
    # the document is streamed (Result.write_json): its sections are built one at a time between
    # writes, so "document" is the time spent building sections and "json text" the rest -- which
    # includes the entries of the lazy sections (nodeclaims, pods, timeline), built as written
    sections = Result.document_sections
    write_json = Result.write_json
    originals += [(Result, "document_sections", sections), (Result, "write_json", write_json)]

    def timed_sections(self: Result, streamed: bool = False) -> Iterator[tuple[str, Any]]:
        it = sections(self, streamed)
        while True:
            t = time.process_time()
            item = next(it, None)
            spent["document"] += time.process_time() - t
            if item is None:
                return
            yield item

    def timed_write(self: Result, *a: Any, **k: Any) -> None:
        before, t = spent["document"], time.process_time()
        try:
            write_json(self, *a, **k)
        finally:
            spent["json text"] += time.process_time() - t - (spent["document"] - before)

    Result.document_sections = timed_sections  # type: ignore[method-assign]
    Result.write_json = timed_write  # type: ignore[method-assign]
    try:
        yield
    finally:
        for owner, name, f in reversed(originals):
            setattr(owner, name, f)


def _run(manifests: list[Any], cached: bool) -> tuple[float, Counter[str], int]:
    spent: Counter[str] = Counter()
    with timed(spent, cached):
        t = time.process_time()
        result = karpy.simulate(manifests, region="us-east-1", prices="2026-07-20")
        result.to_json()
        cpu = time.process_time() - t
    return cpu, spent, result.simulation.provisioning_passes


def _row(name: str, runs: list[tuple[float, Counter[str], int]]) -> dict[str, Any]:
    cpu = statistics.median(r[0] for r in runs)
    mid = sorted(runs, key=lambda r: r[0])[len(runs) // 2]
    spent, passes = mid[1], mid[2]
    return {"name": name, "cpu_s": round(cpu, 4), "passes": passes,
            "new_scheduler_s": round(spent["new_scheduler"], 4),
            "new_scheduler_per_pass_s": round(spent["new_scheduler"] / max(spent["new_scheduler calls"], 1), 4),
            "document_s": round(spent["document"], 4), "explain_s": round(spent["explain"], 4),
            "json_text_s": round(spent["json text"], 4), "load": round(os.getloadavg()[0], 2)}


def _print(row: dict[str, Any], target: float | None = None) -> None:
    verdict = ""
    if target is not None:
        verdict = f"  target <= {target:g} s: {'MET' if row['cpu_s'] <= target else 'MISSED'} (CPU time)"
    print(f"{row['name']:<34} cpu {row['cpu_s']:7.3f} s  {row['passes']:3d} passes  NewScheduler "
          f"{row['new_scheduler_s']:6.3f} s ({row['new_scheduler_per_pass_s']:.4f} s/pass)  document "
          f"{row['document_s']:6.3f} s (explain {row['explain_s']:.3f})  JSON text {row['json_text_s']:.3f} s  "
          f"(load {row['load']:.2f}){verdict}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pods", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rows = []
    example = [bundled_example()]
    _run(example, True)  # warm the process: imports, the catalogue, the shared instance types
    for cached in (True, False):
        name = "warm bundled example" + ("" if cached else " (cache cleared)")
        row = _row(name, [_run(example, cached) for _ in range(max(args.repeat, 1))])
        _print(row, WARM_TARGET_S if cached else None)
        rows.append(row)
    with tempfile.TemporaryDirectory(prefix="karpy-pass-bench-") as tmp:
        path = Path(tmp) / "workload.yaml"
        path.write_text(yaml.safe_dump_all(aws_diverse(args.pods), sort_keys=False))
        for cached in (True, False):
            name = f"aws_diverse({args.pods})" + ("" if cached else " (cache cleared)")
            row = _row(name, [_run([str(path)], cached)])
            _print(row)
            rows.append(row)
    print(json.dumps({"benchmark": "pass", "warm_target_s": WARM_TARGET_S, "rows": rows}))


if __name__ == "__main__":
    main()
