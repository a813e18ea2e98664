"""Karpenter's scheduling benchmark in karpy.

Reproduces pkg/controllers/provisioning/scheduling/scheduling_benchmark_test.go: one NodePool
(limits cpu 10,000,000 / memory 10,000,000Gi, no requirements), ``fake.instance_types(400)``, no
state nodes, no daemonsets; ``makeDiversePods(N)`` (1/5 each: generic, zonal TSC, hostname TSC,
zonal self-affinity, hostname anti-affinity; remainder generic) and ``makePreferencePods(4000)``
solved with Respect / Ignore preferences. Reports pods/s of ``Scheduler.solve`` (the topology and
scheduler construction are set up before timing, as upstream's ``b.ResetTimer``) and the node count.

Randomness: upstream draws from Go's ``rand.New(rand.NewSource(42))``; Python's ``random.Random(42)``
produces a different sequence, so the random labels / requests differ. The generic and
anti-affinity node counts do not depend on them (N/5 anti-affinity pods => N/5 nodes), but the
packing of the TSC / self-affinity pods does depend on the random labels.

Second benchmark (issue 13): the same ``makeDiversePods(N)`` solved against the **real us-east-1
catalogue** -- ``AWSCloudProvider("us-east-1", prices="2026-07-20").get_instance_types(pool)`` for one
unconstrained NodePool without limits on the default EC2NodeClass (1,246 types, six zones, several of which offer
few types) -- so the zonal spread / self-affinity pods meet zones where most types are not offered
and the hostname anti-affinity pods try every in-flight NodeClaim: Solve's failure path.

Each line prints pods/s on wall time and on CPU time (``time.process_time``; the machine is shared,
so CPU time is the steadier figure), the node count, and the target where issue 13 sets one
(Scheduling5000 on the fake catalogue >= 3,000 pods/s; on the real catalogue >= 2,000 pods/s);
the last line is JSON.

Usage: ``python benchmarks/scheduling_benchmark.py [--sizes 1,50,...] [--aws-sizes 1000,5000] [--profile]``
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from karpy.api.builders import make_nodepool, make_pod, pod_affinity_term, topology_spread  # noqa: E402
from karpy.cloudprovider import fake  # noqa: E402
from karpy.provisioning.scheduler import Scheduler  # noqa: E402
from karpy.provisioning.topology import Topology  # noqa: E402
from karpy.scheduling.labels import CORE_WELL_KNOWN_LABELS, LABEL_HOSTNAME, LABEL_ZONE  # noqa: E402
from karpy.state.cluster import ClusterState  # noqa: E402

LABEL_VALUES = ["a", "b", "c", "d", "e", "f", "g"]
CPUS = [100, 250, 500, 1000, 1500]
MEMS = [100, 256, 512, 1024, 2048, 4096]


class PodFactory:
    """makeDiversePods / makePreferencePods with a seeded RNG (see module doc)."""

    def __init__(self, seed: int = 42) -> None:
        self.r = random.Random(seed)
        self.n = 0

    def _name(self) -> str:
        self.n += 1
        return f"pod-{self.n:06d}"

    def _requests(self) -> dict[str, str]:
        return {"cpu": f"{CPUS[self.r.randrange(len(CPUS))]}m", "memory": f"{MEMS[self.r.randrange(len(MEMS))]}Mi"}

    def _label(self) -> str:
        return LABEL_VALUES[self.r.randrange(len(LABEL_VALUES))]

    def generic(self, count: int) -> list:
        out = []
        for _ in range(count):
            labels = {"my-label": self._label()}
            name = self._name()
            out.append(make_pod(name, labels=labels, uid=name, requests=self._requests()))
        return out

    def topology_spread(self, count: int, key: str) -> list:
        out = []
        for _ in range(count):
            labels = {"my-label": self._label()}
            sel = {"my-label": self._label()}
            name = self._name()
            out.append(make_pod(name, labels=labels, uid=name, requests=self._requests(),
                                topology_spread_constraints=[topology_spread(key, sel, max_skew=1)]))
        return out

    def affinity(self, count: int, key: str) -> list:
        out = []
        for _ in range(count):
            labels = {"my-affininity": self._label()}
            name = self._name()
            out.append(make_pod(name, labels=labels, uid=name, requests=self._requests(),
                                pod_affinity=[pod_affinity_term(labels, key)]))
        return out

    def anti_affinity(self, count: int, key: str) -> list:
        out = []
        labels = {"app": "nginx"}
        for _ in range(count):
            name = self._name()
            out.append(make_pod(name, labels=labels, uid=name, requests=self._requests(),
                                pod_anti_affinity=[pod_affinity_term(labels, key)]))
        return out

    def diverse(self, count: int) -> list:
        n = count // 5
        pods = self.generic(n)
        pods += self.topology_spread(n, LABEL_ZONE)
        pods += self.topology_spread(n, LABEL_HOSTNAME)
        pods += self.affinity(n, LABEL_ZONE)
        pods += self.anti_affinity(n, LABEL_HOSTNAME)
        pods += self.generic(count - len(pods))
        return pods

    def preference(self, count: int) -> list:
        out = []
        labels = {"app": "nginx"}
        reqs = self._requests()  # test.Pods(count, opts): one set of random requests for all
        for _ in range(count):
            name = self._name()
            out.append(make_pod(
                name, labels=labels, uid=name, requests=reqs,
                node_preferences=[(LABEL_ZONE, "In", ["test-zone-1"])],
                pod_anti_affinity_preferences=[(10, pod_affinity_term(labels, LABEL_ZONE)),
                                               (1, pod_affinity_term(labels, LABEL_HOSTNAME))]))
        return out


#: (benchmark name prefix, pods) -> pods/s target of issue 13
TARGETS = {("Scheduling", 5000): 3000.0, ("AWSScheduling", 5000): 2000.0}


def aws_catalogue() -> tuple:
    """(NodePool, the real us-east-1 instance types for it, well-known labels)."""
    from awsprovider import AWSCloudProvider

    provider = AWSCloudProvider("us-east-1", prices="2026-07-20")
    # no limits: with the real catalogue upstream's limit bookkeeping subtracts each claim's largest
    # option (u-*tb1.metal, 24 TiB), which would exhaust the fake benchmark's 10,000,000Gi in ~400 claims
    nodepool = make_nodepool("default", limits=None,
                             node_class_ref={"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"})
    return nodepool, provider.get_instance_types(nodepool), CORE_WELL_KNOWN_LABELS | provider.well_known_labels()


def setup(pods: list, preference_policy: str = "Respect", catalogue: tuple | None = None) -> Scheduler:
    if catalogue is not None:
        nodepool, its, well_known = catalogue
    else:
        nodepool = make_nodepool("default", limits={"cpu": "10000000", "memory": "10000000Gi"})
        its = fake.instance_types(400)
        well_known = CORE_WELL_KNOWN_LABELS | fake.FakeCloudProvider().well_known_labels()
    cluster = ClusterState()
    topology = Topology(cluster, [], [nodepool], {"default": its}, pods, preference_policy, well_known)
    return Scheduler([nodepool], cluster, [], topology, {"default": its}, [],
                     well_known=well_known, preference_policy=preference_policy)


ROWS: list[dict] = []


def run(name: str, pods: list, preference_policy: str = "Respect", profile: bool = False,
        catalogue: tuple | None = None, target: float | None = None) -> tuple[float, int]:
    scheduler = setup(pods, preference_policy, catalogue)
    prof = cProfile.Profile() if profile else None
    load = os.getloadavg()[0]
    start = time.perf_counter()
    cpu_start = time.process_time()
    if prof:
        prof.enable()
    results = scheduler.solve(pods)
    if prof:
        prof.disable()
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    if results.pod_errors:
        print(f"{name}: {len(results.pod_errors)} pods failed, e.g. {next(iter(results.pod_errors.items()))}")
    nodes = len(results.new_nodeclaims)
    scheduled = sum(len(nc.pods) for nc in results.new_nodeclaims)
    pps = len(pods) / elapsed if elapsed > 0 else float("inf")
    cpu_pps = len(pods) / cpu if cpu > 0 else float("inf")
    verdict = "" if target is None else f"  target >= {target:,.0f} pods/s: {'MET' if max(pps, cpu_pps) >= target else 'MISSED'}"
    print(f"{name:<28} pods={len(pods):>6} scheduled={scheduled:>6} nodes={nodes:>5} "
          f"time={elapsed:8.3f}s  {pps:9.1f} pods/s  (cpu {cpu:.3f}s = {cpu_pps:.1f} pods/s, load {load:.1f}){verdict}",
          flush=True)
    ROWS.append({"name": name, "pods": len(pods), "scheduled": scheduled, "nodes": nodes, "wall_s": round(elapsed, 4),
                 "cpu_s": round(cpu, 4), "pods_per_s": round(pps, 1), "pods_per_cpu_s": round(cpu_pps, 1),
                 "target": target, "load": round(load, 2)})
    if prof:
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    return pps, nodes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1,50,100,500,1000,2000,5000")
    ap.add_argument("--preferences", type=int, default=4000)
    ap.add_argument("--aws-sizes", default="1000,5000", help="sizes on the real us-east-1 catalogue ('' = none)")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    for n in [int(x) for x in args.sizes.split(",") if x]:
        run(f"Scheduling{n}", PodFactory(42).diverse(n), profile=args.profile and n == max(
            int(x) for x in args.sizes.split(",")), target=TARGETS.get(("Scheduling", n)))
    if args.preferences:
        run(f"RespectPreferences({args.preferences})", PodFactory(42).preference(args.preferences), "Respect")
        run(f"IgnorePreferences({args.preferences})", PodFactory(42).preference(args.preferences), "Ignore")
    aws_sizes = [int(x) for x in args.aws_sizes.split(",") if x]
    if aws_sizes:
        catalogue = aws_catalogue()
        for n in aws_sizes:
            run(f"AWSScheduling{n}", PodFactory(42).diverse(n), catalogue=catalogue,
                target=TARGETS.get(("AWSScheduling", n)), profile=args.profile and n == max(aws_sizes))
    print(json.dumps({"benchmark": "scheduling", "rows": ROWS}))


if __name__ == "__main__":
    main()
