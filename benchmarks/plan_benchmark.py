"""``karpy plan`` on a 500-node / 10,000-pod cluster dump with a change that drifts every node (issue #33).

The dump is made as tests/plan/dumps.py makes its dumps: one NodePool allowing c/m/r 7th and 8th gen
4xlarge with a 10 % disruption budget, and a Deployment of 10,000 pods (750m cpu, 1Gi: 20 a node) run
through ``karpy.simulate`` on the 2026-07-20 us-east-1 prices (all 7th gen, lowest-price) and written
out in kubectl's ``List`` shape. The change narrows the NodePool to 8th gen only, so every node drifts;
``karpy.plan`` runs it to convergence (or the 6h horizon). Reports wall and CPU time of the dump, of
reading it (``load_manifests`` alone) and of the plan (which reads it too), and the plan's waves,
evictions and time to converge. Target: the plan in under a minute.

Usage: ``python benchmarks/plan_benchmark.py [--pods 10000] [--pods-per-node 20] [--until 6h]``
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "plan"))

import karpy  # noqa: E402
from dumps import EC2NODECLASS, cluster_dump, deployment, dump_text, nodepool  # noqa: E402

PRICES = "2026-07-20"


def _timed(fn):  # type: ignore[no-untyped-def]
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pods", type=int, default=10_000)
    ap.add_argument("--pods-per-node", type=int, default=20)
    ap.add_argument("--until", default="6h")
    args = ap.parse_args()
    # max_pods=None: the loader counts a dump's Deployment replicas on top of the pods it owns (20,000)
    cpu_m = 15_000 // args.pods_per_node
    design = [EC2NODECLASS, nodepool(sizes=["4xlarge"], budgets=[{"nodes": "10%"}]),
              deployment("web", args.pods, f"{cpu_m}m", "1Gi", spread=False)]
    dump, wall, cpu = _timed(lambda: cluster_dump(design, prices=PRICES))
    nodes = sum(1 for i in dump["items"] if i["kind"] == "Node")
    pods = sum(1 for i in dump["items"] if i["kind"] == "Pod")
    print(f"dump: {nodes} nodes, {pods} pods; wall {wall:.1f}s cpu {cpu:.1f}s", flush=True)
    with tempfile.TemporaryDirectory(prefix="plan-bench-") as tmp:
        path = Path(tmp) / "cluster.yaml"
        path.write_text(dump_text(dump))
        from karpy.api.loader import load_manifests

        _, wall, cpu = _timed(lambda: load_manifests([path], max_pods=None))
        print(f"read: {path.stat().st_size / 1e6:.1f} MB of YAML read in wall {wall:.1f}s cpu {cpu:.1f}s "
              "(the plan reads it again)", flush=True)
        change = nodepool(sizes=["4xlarge"], families=["c8i", "m8i", "r8i"], budgets=[{"nodes": "10%"}])
        plan, wall, cpu = _timed(lambda: karpy.plan(path, apply=[change], prices=PRICES, until=args.until,
                                                   max_pods=None))
    print(f"plan: wall {wall:.1f}s cpu {cpu:.1f}s (target < 60s); {len(plan.waves)} waves, {plan.evicted} pods "
          f"evicted, converged={plan.converged} at {plan.converged_at}s, before {len(plan.before)} nodes "
          f"${plan.cost_per_hour_before:.4f}/h, after {len(plan.after)} nodes ${plan.cost_per_hour_after:.4f}/h, "
          f"pending {len(plan.pending)}", flush=True)


if __name__ == "__main__":
    main()
