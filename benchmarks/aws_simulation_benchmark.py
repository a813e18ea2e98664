"""End to end on the AWS provider, as a user runs it: ``python -m karpy simulate DIR -o json``.

The workload is benchmarks/workloads.py ``aws_diverse(N)`` (two NodePools, one EC2NodeClass,
Deployments of 1-200 replicas in makeDiversePods' proportions: generic, zonal spread, hostname
spread, zonal self-affinity, hostname anti-affinity), written as YAML to a temporary directory. Each
size runs in a fresh process (the on-disk catalogue cache warm, as on a user's machine after the
first run; ``--no-cache`` to measure without it) with bytecode caching on, as after ``pip install``
(``cli_benchmark.child_env``: this project's machines set ``PYTHONDONTWRITEBYTECODE``, which would
make every child compile karpy again). Reported per size: wall, CPU (user+sys of the
child), peak RSS, pods/s and the document's counts, each target beside its figure; then the scaling
exponent of CPU time between the smallest and largest size >= 1,000 (least-squares slope of
log CPU over log N) and one JSON line.

    python benchmarks/aws_simulation_benchmark.py [--sizes 1000,2000,5000,10000,20000] [--no-cache]

The 50,000-pod run of issue 32 (targets: <= 60 s wall, <= 1 GB peak RSS, CPU growing at most as
N^1.1 from 20,000 to 50,000, printed as "growth 20000 -> 50000"):

    python benchmarks/aws_simulation_benchmark.py --sizes 20000,50000
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cli_benchmark import child_env  # noqa: E402
from workloads import aws_diverse  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: pods -> (wall seconds) targets of issue 13
WALL_TARGETS = {5000: 10.0, 20000: 60.0, 50000: 60.0}
RSS_TARGET_MB = 1024
EXPONENT_TARGET = 1.2
#: issue 32: CPU growth from 20,000 to 50,000 pods at most N^1.1
GROWTH_TARGET = 1.1


def _load() -> str:
    return os.getloadavg()[0].__format__(".2f")


def run_one(n: int, no_cache: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"karpy-bench-{n}-") as tmp:
        path = Path(tmp) / "workload.yaml"
        path.write_text(yaml.safe_dump_all(aws_diverse(n), sort_keys=False))
        # past the CLI's default bound on created pods (10,000) the run raises it, as a user would
        cmd = [sys.executable, "-m", "karpy", "simulate", str(path), "-o", "json", "--max-pods", str(max(n, 10_000))] \
            + (["--no-cache"] if no_cache else [])
        env = child_env()  # karpy on the path, bytecode caching on (as after pip install)
        load = _load()
        start = time.perf_counter()
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=ROOT)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            wall = time.perf_counter() - start
            out.seek(0)
            text = out.read()
            if proc.returncode not in (0, 3) or not text:
                err.seek(0)
                last = err.read().decode(errors="replace").strip().splitlines()[-1:]
                sys.exit(f"{n} pods: karpy exited {proc.returncode}: {' '.join(last)}")
            doc = json.loads(text)
    running = sum(1 for p in doc["pods"].values() if p["phase"] == "Running")
    return {"pods": n, "wall_s": round(wall, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "rss_mb": round(usage.ru_maxrss / 1024), "exit": proc.returncode, "running": running,
            "nodeclaims": len(doc["nodeclaims"]), "passes": doc["simulation"]["provisioning_passes"],
            "cycles": doc["simulation"]["scheduling_cycles"], "load": load}


def exponent(rows: list[dict], key: str) -> float | None:
    pts = [(math.log(r["pods"]), math.log(r[key])) for r in rows if r["pods"] >= 1000 and r[key] > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,2000,5000,10000,20000")
    ap.add_argument("--no-cache", action="store_true")
    args = ap.parse_args()
    rows = []
    for n in [int(x) for x in args.sizes.split(",") if x]:
        r = run_one(n, args.no_cache)
        rows.append(r)
        target = WALL_TARGETS.get(n)
        verdict = "" if target is None else f"  target wall <= {target:g} s: {'MET' if r['wall_s'] <= target else 'MISSED'}"
        if n in (20000, 50000):
            verdict += f"; RSS <= {RSS_TARGET_MB} MB: {'MET' if r['rss_mb'] <= RSS_TARGET_MB else 'MISSED'}"
        print(f"{n:>6} pods: wall {r['wall_s']:7.2f} s  cpu {r['cpu_s']:7.2f} s  rss {r['rss_mb']:5d} MB  "
              f"{n / r['wall_s']:6.0f} pods/s  running {r['running']}, {r['nodeclaims']} nodeclaims, "
              f"{r['passes']} passes, {r['cycles']} cycles, exit {r['exit']}  (load {r['load']}){verdict}", flush=True)
    exp_cpu, exp_wall = exponent(rows, "cpu_s"), exponent(rows, "wall_s")
    if exp_cpu is not None:
        print(f"scaling exponent (CPU time, {rows[0]['pods']}..{rows[-1]['pods']} pods): {exp_cpu:.2f}  "
              f"(wall: {exp_wall:.2f})  target <= {EXPONENT_TARGET}: {'MET' if exp_cpu <= EXPONENT_TARGET else 'MISSED'}")
    by_size = {r["pods"]: r for r in rows}
    if 20000 in by_size and 50000 in by_size:
        growth = math.log(by_size[50000]["cpu_s"] / by_size[20000]["cpu_s"]) / math.log(50000 / 20000)
        print(f"growth 20000 -> 50000 pods (CPU): N^{growth:.2f}  target <= N^{GROWTH_TARGET}: "
              f"{'MET' if growth <= GROWTH_TARGET else 'MISSED'}")
    print(json.dumps({"benchmark": "aws_simulation", "rows": rows, "exponent_cpu": exp_cpu, "exponent_wall": exp_wall,
                      "targets": {"wall_s": WALL_TARGETS, "rss_mb": RSS_TARGET_MB, "exponent": EXPONENT_TARGET}}))


if __name__ == "__main__":
    main()
