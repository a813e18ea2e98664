"""A 24 h scenario on the AWS provider: 1,000 pods in 10 Deployments, a scale event every 10 minutes
(143 events), the 2026-07-20 us-east-1 prices. Target: <= 30 s wall time on the 2-core machine.

    PYTHONPATH=. python3 benchmarks/timeline_benchmark.py [--profile]

Prints the wall time, NodeClaims, timeline entries and the cost integral.
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time

import karpy

DEPLOYMENTS = 10
PODS = 1000
HOURS = 24
EVERY_MINUTES = 10


def manifests() -> list[dict]:
    docs: list[dict] = [{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
                         "spec": {"template": {"spec": {
                             "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                             "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In",
                                               "values": ["c7i", "m7i", "r7i", "c8i", "m8i", "r8i"]}]}}}}]
    per = PODS // DEPLOYMENTS
    for i in range(DEPLOYMENTS):
        docs.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"app{i}"},
                     "spec": {"replicas": per, "selector": {"matchLabels": {"app": f"app{i}"}},
                              "template": {"metadata": {"labels": {"app": f"app{i}"}},
                                           "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                                               "requests": {"cpu": f"{250 + 50 * i}m",
                                                            "memory": f"{512 + 128 * i}Mi"}}}]}}}})
    return docs


def events() -> list[str]:
    out = []
    per = PODS // DEPLOYMENTS
    for k in range(1, HOURS * 60 // EVERY_MINUTES):
        i = k % DEPLOYMENTS
        replicas = per + (per // 2 if (k // DEPLOYMENTS) % 2 == 0 else -per // 2)
        out.append(f"{k * EVERY_MINUTES}m scale deployment/app{i} {replicas}")
    return out


def main() -> None:
    evs = events()
    start = time.perf_counter()
    result = karpy.simulate(manifests(), prices="2026-07-20", until=f"{HOURS}h", events=evs)
    doc = result.to_document()
    wall = time.perf_counter() - start
    print(f"24 h scenario: {PODS} pods, {len(evs)} scale events: wall {wall:.1f} s; "
          f"{len(doc['nodeclaims'])} NodeClaims, {len(doc['timeline'])} timeline entries, "
          f"cost ${doc['cost']['total']:.2f} over {HOURS} h, {doc['simulation']['provisioning_passes']} passes")


if __name__ == "__main__":
    if "--profile" in sys.argv:
        cProfile.run("main()", "/tmp/timeline.prof")
        pstats.Stats("/tmp/timeline.prof").sort_stats("cumulative").print_stats(30)
    else:
        main()
