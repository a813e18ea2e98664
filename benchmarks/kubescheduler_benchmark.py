"""kube-scheduler model throughput, shaped like scheduler_perf's SchedulingBasic.

SchedulingBasic (test/integration/scheduler_perf/config/performance-config.yaml): 500 nodes
(node-default.yaml: 4 cpu, 32Gi, 110 pods), 500 initial pods, then 1,000 measured pods
(pod-default.yaml: 100m cpu, 500Mi memory). Reports measured pods/s.

    python benchmarks/kubescheduler_benchmark.py [--nodes 500] [--init-pods 500] [--pods 1000] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import random
import time

from karpy.api.builders import make_node, make_pod
from karpy.kubescheduler.scheduler import BOUND, KubeScheduler
from karpy.sim.clock import VirtualClock


def _node(i: int):
    return make_node(f"node-{i}", labels={"kubernetes.io/hostname": f"node-{i}"},
                     capacity={"cpu": "4", "memory": "32Gi", "pods": "110"})


def _pod(name: str):
    return make_pod(name, requests={"cpu": "100m", "memory": "500Mi"}, unschedulable=False)


def _drain(ks: KubeScheduler) -> int:
    bound = 0
    while True:
        r = ks.schedule_one()
        if r is None:
            return bound
        if r.outcome == BOUND:
            bound += 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--init-pods", type=int, default=500)
    ap.add_argument("--pods", type=int, default=1000)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()

    ks = KubeScheduler(VirtualClock(), random.Random(0))
    for i in range(args.nodes):
        ks.add_node(_node(i))
    for i in range(args.init_pods):
        ks.add_pod(_pod(f"init-{i}"))
    init_bound = _drain(ks)
    for i in range(args.pods):
        ks.add_pod(_pod(f"measured-{i}"))
    prof = cProfile.Profile() if args.profile else None
    load = os.getloadavg()[0]
    start = time.perf_counter()
    cpu_start = time.process_time()
    if prof:
        prof.enable()
    bound = _drain(ks)
    if prof:
        prof.disable()
    cpu = time.process_time() - cpu_start
    elapsed = time.perf_counter() - start
    print(f"SchedulingBasic: {args.nodes} nodes, {init_bound}/{args.init_pods} init pods bound, "
          f"{bound}/{args.pods} measured pods bound in {elapsed:.2f}s wall, {cpu:.2f}s CPU = "
          f"{bound / cpu:.0f} pods/s of CPU (load {load:.2f})")
    print(json.dumps({"benchmark": "SchedulingBasic", "nodes": args.nodes, "pods": args.pods, "bound": bound,
                      "wall_s": round(elapsed, 3), "cpu_s": round(cpu, 3),
                      "pods_per_cpu_s": round(bound / cpu, 1), "load": round(load, 2)}))
    if prof:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
