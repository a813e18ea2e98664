"""Gang scheduling cost (issue 34): 2,000 pods, 50 gangs of 32 (v1.37 PodGroups, GenericWorkload on)
plus 400 ordinary pods, against the same 2,000 pods without groups, end to end on the AWS provider.

Each variant runs ``karpy.simulate`` in this process, back to back (the first run of each is a warm-up
unless --no-warmup); prints wall and CPU seconds, NodeClaims, bound pods and the cost per hour.

    PYTHONPATH=. python benchmarks/gang_benchmark.py [--gangs 50] [--size 32] [--singles 400] [--runs 2]
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import karpy

_POOL = """apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m5, c5, r5]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: KarpenterNodeRole
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
"""
_GROUP = """---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {{name: gang-{g}, namespace: default}}
spec:
  schedulingPolicy: {{gang: {{minCount: {n}}}}}
"""
_POD = """---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
{group}  containers: [{{name: c, image: worker, resources: {{requests: {{cpu: "{cpu}", memory: {mem}}}}}}}]
"""


def manifests(gangs: int, size: int, singles: int, grouped: bool) -> str:
    """The workload: gang g's members ask 1–4 vCPU (by g), the singles 500m; ``grouped`` adds the
    PodGroups and each member's spec.schedulingGroup."""
    out = [_POOL]
    for g in range(gangs):
        if grouped:
            out.append(_GROUP.format(g=g, n=size))
        ref = f"  schedulingGroup: {{podGroupName: gang-{g}}}\n" if grouped else ""
        cpu = 1 + g % 4
        out += [_POD.format(name=f"gang-{g}-{i}", group=ref, cpu=cpu, mem=f"{2 * cpu}Gi") for i in range(size)]
    out += [_POD.format(name=f"single-{i}", group="", cpu="500m", mem="1Gi") for i in range(singles)]
    return "".join(out)


def run(text: str, gates: dict[str, bool]) -> dict[str, Any]:
    c0, w0 = time.process_time(), time.perf_counter()
    doc: dict[str, Any] = karpy.simulate(text, prices="2026-07-20", feature_gates=gates).to_document()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    bound = sum(1 for p in doc["pods"].values() if p.get("node"))
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "nodeclaims": len(doc["nodeclaims"]),
            "bound": bound, "pods": len(doc["pods"]), "cost_per_hour": doc["cost_per_hour"],
            "warnings": len(doc.get("warnings", []))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gangs", type=int, default=50)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--singles", type=int, default=400)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--no-warmup", action="store_true")
    args = ap.parse_args()
    variants = {"gangs": (manifests(args.gangs, args.size, args.singles, True), {"GenericWorkload": True}),
                "no groups": (manifests(args.gangs, args.size, args.singles, False), {})}
    if not args.no_warmup:
        for text, gates in variants.values():
            run(text, gates)
    for r in range(args.runs):
        for name, (text, gates) in variants.items():
            print(json.dumps({"variant": name, "run": r + 1, **run(text, gates)}), flush=True)


if __name__ == "__main__":
    main()
