#!/usr/bin/env python3
"""Run every generation-preference strategy with normal capacity and with 8th-gen on-demand capacity
failing, and print the markdown table (strategy x capacity x outcome x $/h) of docs/guides/cookbook.md.

    python examples/generation-preference/make_table.py            # us-east-1, prices 2026-07-20

The regression tests in ``tests/cookbook/`` assert the same outcomes with ``karpy.testing``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from karpy.testing import Scenario, summarize

HERE = Path(__file__).resolve().parent
COMMON = HERE / "common"
#: injected capacity error: every 8th-gen Intel type (c8i/m8i/r8i ...), every zone, on-demand
EIGHTH_GEN_FAILING = "*8i.*:*:on-demand"
REGION = "us-east-1"
PRICES = "2026-07-20"

#: folder -> short description (the table's first column)
STRATEGIES: dict[str, str] = {
    "01-one-nodepool": "one NodePool allowing both",
    "02-weighted-nodepools": "weighted NodePools (8th gen weight 100)",
    "03-nodeoverlay": "NodeOverlay priceAdjustment -10% on gen 8",
    "04-generation-gte-8": "instance-generation Gte 8",
    "05-preferred-affinity": "preferred node affinity (pods)",
    "06-minvalues-wrong-knob": "minValues 6 (wrong knob)",
}
CAPACITIES: dict[str, tuple[str, ...]] = {"normal": (), "8th gen ICE": (EIGHTH_GEN_FAILING,)}
#: Karpenter's NodeOverlay feature gate is off by default; strategy 03 needs it
#: (CLI: ``--feature-gates NodeOverlay=true``)
FEATURE_GATES = {"NodeOverlay": True}


def manifests_for(strategy: str) -> list[Path]:
    """The manifests of one strategy: its folder plus the shared EC2NodeClass and, unless the folder
    brings its own workload (05 does), the shared workload."""
    folder = HERE / strategy
    common = [COMMON / "ec2nodeclass.yaml"]
    if not (folder / "workload.yaml").exists():
        common.append(COMMON / "workload.yaml")
    return [folder, *common]


def scenario(strategy: str, capacity: str = "normal", *, region: str = REGION, prices: str = PRICES) -> Scenario:
    """The Scenario of one table cell."""
    return Scenario.of(manifests_for(strategy), region=region, prices=prices, unavailable=CAPACITIES[capacity],
                       feature_gates=FEATURE_GATES)


#: the second half of the story: two hours with Karpenter's disruption controller on; the "8th gen
#: ICE" row then has 8th-gen on-demand capacity failing for the first hour only
HORIZON = "2h"
OUTAGE_EVENTS = [{"at": "0s", "capacity": {"unavailable": [EIGHTH_GEN_FAILING]}},
                 {"at": "1h", "capacity": {"available": [EIGHTH_GEN_FAILING]}}]


def consolidation_run(strategy: str, capacity: str = "normal", *, region: str = REGION,
                      prices: str = PRICES) -> Any:
    """One strategy run for two hours with consolidation on (the outage only in the first hour)."""
    import karpy

    return karpy.simulate(manifests_for(strategy), region=region, prices=prices, feature_gates=FEATURE_GATES,
                          disruption=True, until=HORIZON,
                          events=OUTAGE_EVENTS if capacity != "normal" else [])


def consolidation_summary(result: Any) -> dict[str, Any]:
    """Which generation runs at the end of the two hours, the node-hours per generation, and the
    consolidation replacements that went through (and those whose launch failed)."""
    doc = result.to_document()
    alive = [nc for nc in doc["nodeclaims"] if nc["launched"] and nc.get("deleted_at") is None]
    gens = sorted({(nc["labels"] or {}).get("karpenter.k8s.aws/instance-generation", "?") for nc in alive})
    hours = doc.get("cost", {}).get("node_hours", {}).get("by_generation", {})
    decisions = doc.get("disruptions", [])
    done = [d for d in decisions if d["decision"] == "replace" and not d.get("error")]
    failed = [d for d in decisions if d["decision"] == "replace" and d.get("error")]
    return {"generations_at_end": gens, "instance_types_at_end": sorted(nc["instance_type"] for nc in alive),
            "node_hours": {g: round(h, 2) for g, h in sorted(hours.items())},
            "replacements": len(done), "failed_replacements": len(failed),
            "first_replacement_at": done[0]["t"] if done else None}


def _at(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:g} s"


def table(region: str = REGION, prices: str = PRICES) -> str:
    """Run every strategy x capacity and return the markdown table."""
    lines = [f"Prices: {region} on-demand, table {prices}. Workload: 6 pods x (1 cpu, 2Gi), amd64. "
             f"\"8th gen ICE\" = `--unavailable '{EIGHTH_GEN_FAILING}'`.",
             "",
             f"2 h with consolidation: `--until {HORIZON}` (the disruption controller runs whenever time passes); the 8th gen ICE row then has the outage "
             "for the first hour only (capacity events at 0 s and 1 h).",
             "",
             "| strategy | capacity | launched | generation | fleet strategy | failed launches | launched at | $/h "
             "| pending pods | 2 h: generation at end | 2 h: node-hours gen 7 / gen 8 | 2 h: consolidations (failed) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for strategy, title in STRATEGIES.items():
        for capacity in CAPACITIES:
            s = summarize(scenario(strategy, capacity, region=region, prices=prices).run())
            launched = ", ".join(s.instance_types) or "-"
            c = consolidation_summary(consolidation_run(strategy, capacity, region=region, prices=prices))
            hours = f"{c['node_hours'].get('7', 0.0):.2f} / {c['node_hours'].get('8', 0.0):.2f}"
            lines.append(f"| {strategy[:2]} {title} | {capacity} | {launched} | {', '.join(s.generations) or '-'} "
                         f"| {', '.join(s.allocation_strategies) or '-'} | {s.failed_launches} | {_at(s.last_launch_at)} "
                         f"| {s.cost_per_hour:.5f} | {s.pending} | {', '.join(c['generations_at_end']) or '-'} "
                         f"| {hours} | {c['replacements']} ({c['failed_replacements']}) |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--region", default=REGION)
    parser.add_argument("--prices", default=PRICES)
    args = parser.parse_args()
    print(table(args.region, args.prices))


if __name__ == "__main__":
    main()
