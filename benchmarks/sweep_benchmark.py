"""Sweep throughput: the 12-cell generation-preference cookbook matrix (6 strategies x normal /
8th-gen ICE) x every bundled us-east-1 price table, sequentially and on the local process pool.

Prints wall time and cells/s for each executor, the speed-up, and checks both gave byte-identical
rows (CSV). Cells are independent, so on N free cores the pool should approach N x; each pool
worker pays its own cold start (imports, catalogue) once, then keeps it warm for its later cells.

    python benchmarks/sweep_benchmark.py                 # all bundled us-east-1 dates (444 cells)
    python benchmarks/sweep_benchmark.py --dates 4       # the newest 4 dates only (48 cells)
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from awsprovider.pricing import list_tables
from karpy.sweeps import spec_from_options, sweep

COOKBOOK = Path(__file__).resolve().parents[1] / "examples" / "generation-preference"
STRATEGIES = ("01-one-nodepool", "02-weighted-nodepools", "03-nodeoverlay", "04-generation-gte-8",
              "05-preferred-affinity", "06-minvalues-wrong-knob")


def matrix(dates: list[str]):  # noqa: ANN201 - a SweepSpec
    designs = {s: [COOKBOOK / s] + ([] if (COOKBOOK / s / "workload.yaml").exists()
                                    else [COOKBOOK / "common" / "workload.yaml"]) for s in STRATEGIES}
    return spec_from_options(name="cookbook-benchmark", designs=designs,
                             shared=[COOKBOOK / "common" / "ec2nodeclass.yaml"], prices=dates,
                             unavailable={"normal": [], "8th-gen-ice": ["*8i.*:*:on-demand"]})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dates", type=int, default=None, help="use only the newest N bundled dates")
    ap.add_argument("--workers", type=int, default=None, help="pool size (default: CPUs available)")
    ap.add_argument("--skip-sequential", action="store_true")
    args = ap.parse_args()
    dates = [d for _, d in list_tables("us-east-1")]
    if args.dates:
        dates = dates[-args.dates:]
    spec = matrix(dates)
    cells = 12 * len(dates)
    print(f"matrix: 6 strategies x 2 capacity scenarios x {len(dates)} us-east-1 price tables = {cells} cells")
    print(f"load before: {os.getloadavg()[0]:.2f} (1-min average), CPUs available: {len(os.sched_getaffinity(0))}")
    results = {}
    runs = (["sequential"] if not args.skip_sequential else []) + ["process"]
    for executor in runs:
        start = time.perf_counter()
        rows = sweep(spec, executor=executor, workers=args.workers)
        wall = time.perf_counter() - start
        results[executor] = (wall, rows.to_csv())
        print(f"{executor:10s}: {wall:8.1f} s  {cells / wall:6.2f} cells/s  ({len(rows.errors)} failed cells), "
              f"load after: {os.getloadavg()[0]:.2f}")
    if len(results) == 2:
        (seq, seq_csv), (pool, pool_csv) = results["sequential"], results["process"]
        print(f"speed-up: {seq / pool:.2f}x; rows identical: {seq_csv == pool_csv}")
        if seq_csv != pool_csv:
            raise SystemExit("rows differ between executors")


if __name__ == "__main__":
    main()
