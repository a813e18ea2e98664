"""End-to-end simulation: N pods from an empty cluster on the fake cloud provider.

kube-scheduler model + Karpenter's provisioner + FakeCloudProvider on one virtual clock.
The pods are Karpenter's makeDiversePods mix (see scheduling_benchmark.py). Reports the virtual
time the cluster took to settle and the wall time the simulation took.

    python benchmarks/simulation_benchmark.py [--pods 5000] [--instance-types 400] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scheduling_benchmark import PodFactory  # noqa: E402

import karpy  # noqa: E402
from karpy.api.builders import make_nodepool  # noqa: E402
from karpy.cloudprovider.fake import FakeCloudProvider, instance_types  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pods", type=int, default=5000)
    ap.add_argument("--instance-types", type=int, default=400)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()

    pods = PodFactory().diverse(args.pods)
    for p in pods:  # as a user writes them: kube-scheduler sets the condition
        p.status.conditions = []
    pool = make_nodepool(limits={"cpu": "10000000", "memory": "10000000Gi"})
    provider = FakeCloudProvider(instance_types(args.instance_types))
    prof = cProfile.Profile() if args.profile else None
    start = time.perf_counter()
    if prof:
        prof.enable()
    result = karpy.simulate([pool, *pods], cloud_provider=provider, region=None)
    if prof:
        prof.disable()
    wall = time.perf_counter() - start
    doc = result.to_document()
    running = sum(1 for p in doc["pods"].values() if p["phase"] == "Running")
    sim = doc["simulation"]
    print(f"{args.pods} pods: {running} running, {len(result.pending_pods)} pending, "
          f"{len(doc['nodeclaims'])} nodeclaims; settled at virtual t={sim['virtual_seconds']:.0f}s "
          f"after {sim['provisioning_passes']} provisioning passes and {sim['scheduling_cycles']} scheduling "
          f"cycles; wall {wall:.1f}s ({running / wall:.0f} pods/s)")
    if prof:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()
