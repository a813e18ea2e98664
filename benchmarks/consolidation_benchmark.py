"""Consolidation over 1,000 nodes / 10,000 pods after a 50 % scale-down.

1,000 managed, initialized, consolidatable on-demand nodes of ``fake-it-7`` (8 cpu, 80 pods) from
Karpenter's ``fake.InstanceTypes(400)`` catalogue (the one its scheduling benchmark uses), each with
10 pods of 700m cpu (10,000 pods); then every other pod goes (a 50 % scale-down: 5,000 pods left,
each node 44 % used). Budgets are the default 10 %. Each round runs the
disruption methods in upstream order (Emptiness, Drift, multi-node, single-node consolidation)
with the real 15 s validation re-simulation, as :mod:`karpy.disruption.controller` does, and then
applies the command the way the cluster would end up: candidates removed, their pods bound where
the simulation put them (existing nodes, or a new node of the replacement's cheapest option).
Nothing is cut short: the multi-node binary search and the single-node loop run to their end
(upstream bounds them with 1 min / 3 min timeouts).

Reports wall time per round, the decisions and the node count; the target is the first round
(the one the issue measures) in <= 60 s.

Usage: ``python benchmarks/consolidation_benchmark.py [--nodes 1000] [--pods-per-node 10]
[--rounds 3] [--profile]``
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from karpy.cloudprovider import fake  # noqa: E402
from karpy.cloudprovider.fake import FakeCloudProvider  # noqa: E402
from karpy.disruption.budgets import build_disruption_budget_mapping  # noqa: E402
from karpy.disruption.drift import Drift  # noqa: E402
from karpy.disruption.emptiness import Emptiness  # noqa: E402
from karpy.disruption.helpers import build_nodepool_map, get_candidates  # noqa: E402
from karpy.disruption.multinodeconsolidation import MultiNodeConsolidation  # noqa: E402
from karpy.disruption.singlenodeconsolidation import SingleNodeConsolidation  # noqa: E402
from tests.disruption.harness import Env  # noqa: E402
from karpy.disruption.validation import ValidationError, validate_consolidation, validate_emptiness  # noqa: E402


def build(nodes: int, pods_per_node: int) -> Env:
    env = Env(FakeCloudProvider(fake.instance_types(400)))
    for i in range(nodes):
        name = f"node-{i:04d}"
        env.node(name, instance_type="fake-it-7")
        for j in range(pods_per_node):
            if j % 2 == 0:  # the other half was scaled away
                env.pod(f"p-{i:04d}-{j:02d}", name, cpu="700m")
    return env


def apply(env: Env, cmd) -> None:
    """The cluster after the command: candidates gone, pods where the simulation put them."""
    gone = {c.name for c in cmd.candidates}
    placed: dict[str, str] = {}
    results = cmd.results.results if cmd.results is not None else None
    if results is not None:
        for en in results.existing_nodes:
            for p in en.pods:
                placed[p.key] = en.name
        for i, claim in enumerate(results.new_nodeclaims):
            name = f"repl-{len(env.nodes):05d}-{i}"
            env.node(name, instance_type=claim.instance_type_options[0].name)
            for p in claim.pods:
                placed[p.key] = name
    env.nodes = [n for n in env.nodes if n.metadata.name not in gone]
    env.claims = [c for c in env.claims if c.metadata.name not in gone]
    for p in env.pods:
        if p.key in placed:
            p.spec.node_name = placed[p.key]
    env.pods = [p for p in env.pods if p.spec.node_name not in gone]


def one_round(env: Env, methods) -> tuple[str, object | None]:
    for m in methods:
        cl = env.cluster()
        cands = get_candidates(cl, lambda c, m=m, cl=cl: m.should_disrupt(c, cl), m.disruption_class,
                               build_nodepool_map(cl))
        if not cands:
            continue
        budgets = build_disruption_budget_mapping(cl.state.nodes, cl.nodepools.values(), cl.now, m.reason)
        cmds = [c for c in m.compute_commands(cl, budgets, cands) if c.decision() != "no-op"]
        if not cmds:
            continue
        cmd = cmds[0]
        if getattr(m, "validates", False):
            env.now += 15
            try:
                cmd = (validate_emptiness if m.name == "emptiness" else validate_consolidation)(m, env.cluster(), cmd)
            except ValidationError:
                continue
        return m.name, cmd
    return "none", None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods-per-node", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    env = build(args.nodes, args.pods_per_node)
    print(f"{len(env.nodes)} nodes, {len(env.pods)} pods after the 50 % scale-down "
          f"({args.nodes * args.pods_per_node} before)")
    methods = [Emptiness(), Drift(), MultiNodeConsolidation(), SingleNodeConsolidation()]
    prof = cProfile.Profile() if args.profile else None
    total = 0.0
    for r in range(args.rounds):
        if prof:
            prof.enable()
        t0 = time.perf_counter()
        name, cmd = one_round(env, methods)
        dt = time.perf_counter() - t0
        if prof:
            prof.disable()
        total += dt
        if cmd is None:
            print(f"round {r + 1}: no decision ({dt:.1f} s)")
            break
        print(f"round {r + 1}: {name} {cmd.decision()} {len(cmd.candidates)} node(s) -> "
              f"{len(cmd.replacements)} replacement(s), savings ${cmd.estimated_savings():.2f}/h in {dt:.1f} s")
        apply(env, cmd)
        env.now += 10
    print(f"total {total:.1f} s, {len(env.nodes)} nodes left")
    if prof:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
