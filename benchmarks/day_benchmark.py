"""A day with Karpenter's disruption controller on (issue 32): 10 Deployments on the AWS provider, a
scale event every 10 minutes for 24 h, ``disruption=True``, the 2026-07-20 us-east-1 prices.
Targets: <= 8 s at 1,000 pods, <= 30 s at 5,000 pods on the 2-core machine (compare CPU seconds).

    PYTHONPATH=. python3 benchmarks/day_benchmark.py [PODS ...] [--json PATH] [--profile]

Prints wall and CPU seconds, provisioning passes and disruption decisions per size. ``--json PATH``
writes the document of the (single) size given, for before/after byte comparison.
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time
from typing import Any

import karpy

DEPLOYMENTS = 10
HOURS = 24
EVERY_MINUTES = 10


def manifests(pods: int) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = [
        {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
         "spec": {"template": {"spec": {
             "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
             "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In",
                               "values": ["c7i", "m7i", "r7i", "c8i", "m8i", "r8i"]}]}}}}]
    per = pods // DEPLOYMENTS
    for i in range(DEPLOYMENTS):
        docs.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"app{i}"},
                     "spec": {"replicas": per, "selector": {"matchLabels": {"app": f"app{i}"}},
                              "template": {"metadata": {"labels": {"app": f"app{i}"}},
                                           "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                                               "requests": {"cpu": f"{250 + 50 * i}m",
                                                            "memory": f"{512 + 128 * i}Mi"}}}]}}}})
    return docs


def events(pods: int) -> list[str]:
    out = []
    per = pods // DEPLOYMENTS
    for k in range(1, HOURS * 60 // EVERY_MINUTES):
        i = k % DEPLOYMENTS
        replicas = per + (per // 2 if (k // DEPLOYMENTS) % 2 == 0 else -per // 2)
        out.append(f"{k * EVERY_MINUTES}m scale deployment/app{i} {replicas}")
    return out


def run(pods: int, json_path: str | None = None) -> None:
    evs = events(pods)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    result = karpy.simulate(manifests(pods), prices="2026-07-20", until=f"{HOURS}h", events=evs, disruption=True)
    text = result.to_json()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    doc = result.to_document()
    decisions = len(doc["disruptions"])
    print(f"day with disruption: {pods} pods, {len(evs)} scale events: wall {wall:.1f} s, CPU {cpu:.1f} s; "
          f"{doc['simulation']['provisioning_passes']} passes, {decisions} disruption decisions, "
          f"{len(doc['nodeclaims'])} NodeClaims, cost ${doc['cost']['total']:.2f}", flush=True)
    if json_path:
        with open(json_path, "w") as f:
            f.write(text)


def main(argv: list[str]) -> None:
    json_path = None
    if "--json" in argv:
        i = argv.index("--json")
        json_path = argv[i + 1]
        del argv[i:i + 2]
    sizes = [int(a) for a in argv if a.isdigit()] or [1000, 5000]
    for pods in sizes:
        run(pods, json_path if len(sizes) == 1 else None)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--profile"]
    if "--profile" in sys.argv:
        cProfile.run("main(args)", "/tmp/day.prof")
        pstats.Stats("/tmp/day.prof").sort_stats("cumulative").print_stats(40)
    else:
        main(args)
