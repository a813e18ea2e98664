"""Sweep throughput: the 12-cell generation-preference cookbook matrix (6 strategies x normal /
8th-gen ICE) x every bundled us-east-1 price table, sequentially and on the local process pool.

Prints wall time and cells/s for each executor, the speed-up, and checks both gave byte-identical
rows (CSV). Cells are independent, so on N free cores the pool should approach N x; each pool
worker pays its own cold start (imports, catalogue) once, then keeps it warm for its later cells.

    python benchmarks/sweep_benchmark.py                 # all bundled us-east-1 dates (444 cells)
    python benchmarks/sweep_benchmark.py --dates 4       # the newest 4 dates only (48 cells)
    python benchmarks/sweep_benchmark.py --rows /tmp/b   # also keep the rows: /tmp/b.sequential.csv ...
    python benchmarks/sweep_benchmark.py --executors process   # the pool only (then compare saved rows)

CPU time counts this process and the pool's workers (``RUSAGE_CHILDREN``, once they have exited):
on a loaded machine wall time measures the neighbours, CPU time measures karpy.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path

from awsprovider.pricing import list_tables
from karpy.sweeps import spec_from_options, sweep
from karpy.sweeps.spec import SweepSpec

COOKBOOK = Path(__file__).resolve().parents[1] / "examples" / "generation-preference"
STRATEGIES = ("01-one-nodepool", "02-weighted-nodepools", "03-nodeoverlay", "04-generation-gte-8",
              "05-preferred-affinity", "06-minvalues-wrong-knob")


def matrix(dates: list[str]) -> SweepSpec:
    designs = {s: [COOKBOOK / s] + ([] if (COOKBOOK / s / "workload.yaml").exists()
                                    else [COOKBOOK / "common" / "workload.yaml"]) for s in STRATEGIES}
    return spec_from_options(name="cookbook-benchmark", designs=designs,
                             shared=[COOKBOOK / "common" / "ec2nodeclass.yaml"], prices=dates,
                             unavailable={"normal": [], "8th-gen-ice": ["*8i.*:*:on-demand"]},
                             feature_gates={"NodeOverlay": True})  # strategy 03's overlay needs the gate


def _cpu_seconds() -> float:
    """User + system CPU of this process and of its finished children (the pool's workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dates", type=int, default=None, help="use only the newest N bundled dates")
    ap.add_argument("--workers", type=int, default=None, help="pool size (default: CPUs available)")
    ap.add_argument("--skip-sequential", action="store_true")
    ap.add_argument("--executors", default="sequential,process",
                    help="which executors to time, in this order (comma-separated; default: %(default)s)")
    ap.add_argument("--rows", metavar="PREFIX", help="also write each executor's rows to PREFIX.EXECUTOR.csv")
    args = ap.parse_args()
    dates = [d for _, d in list_tables("us-east-1")]
    if args.dates:
        dates = dates[-args.dates:]
    spec = matrix(dates)
    cells = 12 * len(dates)
    print(f"matrix: 6 strategies x 2 capacity scenarios x {len(dates)} us-east-1 price tables = {cells} cells")
    print(f"load before: {os.getloadavg()[0]:.2f} (1-min average), CPUs available: {len(os.sched_getaffinity(0))}",
          flush=True)
    results = {}
    runs = [e for e in args.executors.split(",") if e and not (e == "sequential" and args.skip_sequential)]
    for executor in runs:
        start, cpu = time.perf_counter(), _cpu_seconds()
        rows = sweep(spec, executor=executor, workers=args.workers, progress=True)  # the bar: stderr
        wall, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
        results[executor] = (wall, rows.to_csv())
        print(f"{executor:10s}: {wall:8.1f} s wall, {cpu:8.1f} s CPU ({cpu / cells:.2f} s/cell), "
              f"{cells / wall:6.2f} cells/s  ({len(rows.errors)} failed cells), load after: {os.getloadavg()[0]:.2f}",
              flush=True)
        if args.rows:
            Path(f"{args.rows}.{executor}.csv").write_text(rows.to_csv(), encoding="utf-8")
    if {"sequential", "process"} <= set(results):
        (seq, seq_csv), (pool, pool_csv) = results["sequential"], results["process"]
        print(f"speed-up: {seq / pool:.2f}x; rows identical: {seq_csv == pool_csv}")
        if seq_csv != pool_csv:
            raise SystemExit("rows differ between executors")


if __name__ == "__main__":
    main()
