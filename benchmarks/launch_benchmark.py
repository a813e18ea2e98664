"""Simulated launches per second through AWSCloudProvider -> CreateFleet on moto + the fleet model.

NodeClaims are built as Karpenter core builds them: ``node.kubernetes.io/instance-type In [the
cheapest <=600 compatible candidates]`` plus ``capacity-type In [on-demand]``; the provider filters,
truncates to 60 types and sends 60 types x zones overrides. The catalogue is read once (provider
construction, excluded from the rate). Two modes: one CreateFleet per NodeClaim (``create``) and
NodeClaims launched at one virtual instant through the CreateFleet batcher (``create_many``).

    python benchmarks/launch_benchmark.py [--launches N] [--batch B]
"""

from __future__ import annotations

import argparse
import gc
import time

from awsprovider import AWSCloudProvider
from karpy.api.nodeclaim import NodeClaim
from karpy.scheduling.labels import LABEL_CAPACITY_TYPE
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements
from karpy.sim.clock import VirtualClock


def _nodeclaim(name: str, candidates: list[str]) -> NodeClaim:
    return NodeClaim.model_validate({
        "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": "default"}},
        "spec": {
            "requirements": [
                {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": candidates},
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
            ],
            "resources": {"requests": {"cpu": "1", "memory": "1Gi", "pods": "1"}},
        },
    })


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--launches", type=int, default=200)
    ap.add_argument("--batch", type=int, default=10)
    args = ap.parse_args()
    t0 = time.perf_counter()
    p = AWSCloudProvider("us-east-1", prices="2026-07-20", clock=VirtualClock())
    its = p.get_instance_types(None)
    od = Requirements(Requirement(LABEL_CAPACITY_TYPE, "In", ["on-demand"]))
    compatible = [it for it in its if it.has_compatible_available_offering(od)]
    compatible.sort(key=lambda it: it.min_compatible_price(od))
    candidates = [it.name for it in compatible[:600]]
    gc.collect()
    gc.freeze()  # the catalogue and moto's state are long-lived: keep them out of GC scans
    print(f"catalogue: {len(its)} types, {len(candidates)} candidates, setup {time.perf_counter() - t0:.2f}s")
    overrides = 0
    t = time.perf_counter()
    for i in range(args.launches):
        p.create(_nodeclaim(f"single-{i}", candidates))
        overrides += len(p.launches[f"single-{i}"].overrides())
    single = args.launches / (time.perf_counter() - t)
    print(f"create():      {single:7.1f} launches/s  ({overrides / args.launches:.0f} overrides per CreateFleet)")
    t = time.perf_counter()
    done = 0
    for b in range(args.launches // args.batch):
        out = p.create_many([_nodeclaim(f"batch-{b}-{i}", candidates) for i in range(args.batch)])
        assert not any(isinstance(o, Exception) for o in out)
        done += len(out)
    batched = done / (time.perf_counter() - t)
    print(f"create_many(): {batched:7.1f} launches/s  (batches of {args.batch}, one CreateFleet per batch)")
    p.close()


if __name__ == "__main__":
    main()
