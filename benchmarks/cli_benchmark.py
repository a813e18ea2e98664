"""What a user feels per command: cold processes and a warm in-process ``karpy.simulate``.

Cold (a fresh ``python -m karpy ...`` process each, the on-disk catalogue cache already filled by a
first run, which is reported separately as "cache fill"):

* ``karpy simulate -o json`` on the bundled example -- target <= 2 s wall;
* ``karpy instance-types`` and ``karpy prices diff 2025-08-25 2026-07-20 --nodepool
  examples/generation-preference/01-one-nodepool/nodepool.yaml`` -- target <= 2 s wall.

Warm: ``karpy.simulate`` of the bundled example again in a process that already ran it -- target
<= 0.2 s; the median of ``--warm-runs`` runs (default 25) with their mean beside it: about one run
in six also pays a full collection of the process's heap (~0.15-0.25 s), which the mean includes.
Each cold figure is the median of ``--repeat`` runs, with the child's CPU time (user+sys) and the
load average beside it (the machine is shared); the last line is JSON.

    python benchmarks/cli_benchmark.py [--repeat 3] [--warm-runs 25]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLD_TARGET_S = 2.0
WARM_TARGET_S = 0.2


def child_env() -> dict[str, str]:
    """The children's environment: karpy on the path, and bytecode caching on (as after ``pip
    install``): with ``PYTHONDONTWRITEBYTECODE`` set (this project's machines set it), every karpy
    module is compiled again in every process (~0.3 s), which is not what a user's process does.
    aws_simulation_benchmark.py runs its children with this environment too."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def cold(args: list[str]) -> tuple[float, float, int]:
    """(wall s, CPU s, exit code) of one ``python -m karpy ARGS`` process."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as sink:
        proc = subprocess.Popen([sys.executable, "-m", "karpy", *args], stdout=sink, stderr=subprocess.DEVNULL,
                                env=child_env(), cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def warm(repeat: int) -> list[tuple[float, float]]:
    sys.path.insert(0, str(ROOT))
    import karpy
    from karpy.cli import bundled_example

    karpy.simulate([bundled_example()], region="us-east-1", prices="2026-07-20").to_json()
    out = []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        karpy.simulate([bundled_example()], region="us-east-1", prices="2026-07-20").to_json()
        out.append((time.perf_counter() - t, time.process_time() - c))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--warm-runs", type=int, default=25,
                    help="warm in-process runs (median and mean reported: the mean includes the host's "
                         "occasional full collection)")
    args = ap.parse_args()
    pool = str(ROOT / "examples" / "generation-preference" / "01-one-nodepool" / "nodepool.yaml")
    commands = {
        "simulate (bundled example)": ["simulate", "-o", "json"],
        "instance-types": ["instance-types"],
        "prices diff": ["prices", "diff", "2025-08-25", "2026-07-20", "--nodepool", pool],
    }
    rows = []
    fill = cold(commands["simulate (bundled example)"])
    print(f"{'cache fill (first simulate)':<30} wall {fill[0]:6.2f} s  cpu {fill[1]:6.2f} s  (load {os.getloadavg()[0]:.2f})")
    for name, argv in commands.items():
        runs = [cold(argv) for _ in range(args.repeat)]
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        load = os.getloadavg()[0]
        verdict = "MET" if wall <= COLD_TARGET_S else ("MET on CPU time" if cpu <= COLD_TARGET_S else "MISSED")
        print(f"{'cold ' + name:<30} wall {wall:6.2f} s  cpu {cpu:6.2f} s  exit {runs[0][2]}  (load {load:.2f})  "
              f"target <= {COLD_TARGET_S:g} s: {verdict}", flush=True)
        rows.append({"name": f"cold {name}", "wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "load": round(load, 2),
                     "target_s": COLD_TARGET_S})
    runs = warm(args.warm_runs)
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    mean = statistics.fmean(r[0] for r in runs)
    load = os.getloadavg()[0]
    verdict = "MET" if wall <= WARM_TARGET_S else ("MET on CPU time" if cpu <= WARM_TARGET_S else "MISSED")
    mean_verdict = "MET" if mean <= WARM_TARGET_S else "MISSED"
    print(f"{'warm karpy.simulate':<30} wall {wall:6.3f} s  cpu {cpu:6.3f} s  (median of {len(runs)}; mean {mean:.3f} s, "
          f"max {max(r[0] for r in runs):.3f} s; load {load:.2f})  target <= {WARM_TARGET_S:g} s: {verdict}; "
          f"mean: {mean_verdict}")
    rows.append({"name": "warm karpy.simulate", "wall_s": round(wall, 4), "cpu_s": round(cpu, 4),
                 "mean_wall_s": round(mean, 4), "runs": len(runs), "load": round(load, 2), "target_s": WARM_TARGET_S})
    print(json.dumps({"benchmark": "cli", "cache_fill_s": round(fill[0], 3), "rows": rows}))


if __name__ == "__main__":
    main()
