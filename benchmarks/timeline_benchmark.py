"""A 24 h scenario on the AWS provider: 1,000 pods in 10 Deployments, a scale event every 10 minutes
(143 events), the 2026-07-20 us-east-1 prices. Target: <= 30 s wall time on the 2-core machine.

    PYTHONPATH=. python3 benchmarks/timeline_benchmark.py [--profile]

Prints the wall time, NodeClaims, timeline entries and the cost integral.

Long timelines (issue #32): ``--hours 8760 --every-minutes 60`` (or ``10``) runs the bundled example
for a year with ``deployment/web`` scaled 6 <-> 9 at every event, and prints wall, CPU, peak RSS, the
longest wall-clock gap between two progress calls, and the document's size (targets: a year of
hourly events <= 10 s and <= 400 MB, of 10-minute events <= 60 s and <= 600 MB, progress at least
every 2 s).

    PYTHONPATH=. python3 benchmarks/timeline_benchmark.py --hours 8760 --every-minutes 10

Both runs keep Karpenter's disruption controller off (``disruption=False``: the targets measure the
timeline machinery; the controller's cost is benchmarks/day_benchmark.py's); ``--disruption`` turns it
on, as ``karpy.simulate`` does by default whenever time passes.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import resource
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


def main(disruption: bool = False) -> None:
    evs = events()
    start = time.perf_counter()
    result = karpy.simulate(manifests(), prices="2026-07-20", until=f"{HOURS}h", events=evs, disruption=disruption)
    doc = result.to_document()
    wall = time.perf_counter() - start
    print(f"24 h scenario: {PODS} pods, {len(evs)} scale events: wall {wall:.1f} s; "
          f"{len(doc['nodeclaims'])} NodeClaims, {len(doc['timeline'])} timeline entries, "
          f"cost ${doc['cost']['total']:.2f} over {HOURS} h, {doc['simulation']['provisioning_passes']} passes")


def long_run(hours: int, every: int, disruption: bool = False) -> None:
    """The bundled example for ``hours`` with ``deployment/web`` scaled 6 <-> 9 every ``every`` minutes."""
    from karpy.cli import bundled_example

    evs = [f"{k * every}m scale deployment/web {6 if k % 2 else 9}" for k in range(1, hours * 60 // every)]
    last = [time.perf_counter(), 0.0]

    def progress(t: float, passes: int, claims: int) -> None:
        now = time.perf_counter()
        last[1] = max(last[1], now - last[0])
        last[0] = now

    start, cpu = time.perf_counter(), time.process_time()
    result = karpy.simulate(bundled_example(), until=f"{hours}h", events=evs, progress=progress,
                            disruption=disruption)
    sim_wall = time.perf_counter() - start
    size = [0]
    result.write_json(lambda s: size.__setitem__(0, size[0] + len(s)))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sim = result.simulation
    print(f"{hours} h, a scale event every {every} min ({len(evs)} events): wall {wall:.1f} s (simulation "
          f"{sim_wall:.1f} s), CPU {cpu:.1f} s, peak RSS {rss:.0f} MB; longest progress gap {last[1]:.2f} s; "
          f"{len(sim.timeline)} timeline entries listed, {sum(getattr(sim.timeline, 'dropped', {}).values())} counted; "
          f"{len(sim.deleted_pods)} gone pods listed; {sim.provisioning_passes} passes; "
          f"document {size[0] / 1e6:.1f} MB; load {__import__('os').getloadavg()[0]:.2f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--hours", type=int, help="the long-timeline run (bundled example) over this many hours")
    ap.add_argument("--every-minutes", type=int, default=10)
    ap.add_argument("--disruption", action="store_true", help="run Karpenter's disruption controller too")
    args = ap.parse_args()
    if args.hours:
        long_run(args.hours, args.every_minutes, args.disruption)
    elif args.profile:
        cProfile.run(f"main({args.disruption})", "/tmp/timeline.prof")
        pstats.Stats("/tmp/timeline.prof").sort_stats("cumulative").print_stats(30)
    else:
        main(args.disruption)
