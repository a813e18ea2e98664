"""A failed SimulateScheduling answered again within one look (karpy.disruption.helpers.SimulationShare
``failed``): while a drift waits for its replacements to initialize, drift simulates each drifted node
and fails (its pods would land on an uninitialized replacement), then single-node consolidation
simulates the same nodes on the same look; with no node under consolidateAfter the two simulations
read the same inputs. Checked against the plain path (every simulation run) on plans that drift every
node -- with consolidateAfter 0s and 2m (nodes gated, so the answers must not be shared) -- and at
every reuse against the simulation it replaces. Fails when a reuse changes a decision or an event."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import karpy
import karpy.disruption.consolidation as consolidation_module
import karpy.disruption.drift as drift_module
from karpy.disruption.helpers import SimulationResults, SimulationShare, simulate_scheduling
from karpy.disruption.types import Cluster

sys.path.insert(0, str(Path(__file__).parents[1] / "plan"))
from dumps import EC2NODECLASS, cluster_dump, deployment, dump_text, nodepool  # noqa: E402

PRICES = "2026-07-20"
SIZES = ["xlarge", "2xlarge"]
GEN8 = ["c8i", "m8i", "r8i"]


def _dump(tmp: Path, consolidate_after: str, extra: tuple[dict[str, Any], ...] = ()) -> Path:
    design = [EC2NODECLASS, nodepool(sizes=SIZES, budgets=[{"nodes": "25%"}], consolidate_after=consolidate_after),
              deployment("web", 12, "3", "4Gi"), deployment("api", 10, "1500m", "10Gi"), *extra]
    path = tmp / f"cluster-{consolidate_after}.yaml"
    path.write_text(dump_text(cluster_dump(design, prices=PRICES)))
    return path


def _plan(dump: Path, consolidate_after: str) -> tuple[str, str]:
    change = nodepool(sizes=SIZES, families=GEN8, budgets=[{"nodes": "25%"}], consolidate_after=consolidate_after)
    p = karpy.plan(dump, apply=[change], prices=PRICES, until="2h")
    assert p.result is not None
    return p.to_json(), p.result.to_json()


@pytest.mark.parametrize("consolidate_after", ["0s", "2m"])
def test_reusing_failed_simulations_changes_no_decision(consolidate_after: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    dump = _dump(tmp_path, consolidate_after)
    reused = _plan(dump, consolidate_after)
    monkeypatch.setattr(SimulationShare, "reuse_failed", False)
    plain = _plan(dump, consolidate_after)
    assert '"method": "drift"' in reused[0]  # the plan drifts
    assert reused == plain


def _summary(r: SimulationResults | str) -> Any:
    if isinstance(r, str):
        return r
    return (sorted(r.pod_errors.items()), r.all_non_pending_pods_scheduled(), r.non_pending_pod_scheduling_errors(),
            [(nc.nodepool_name, [it.name for it in nc.instance_type_options], sorted(p.key for p in nc.pods))
             for nc in r.new_nodeclaims],
            [(en.name, type(en).__name__, [p.key for p in en.pods]) for en in r.results.existing_nodes])


@pytest.mark.parametrize("consolidate_after", ["0s", "2m"])
def test_every_reused_answer_is_the_simulation_it_replaces(consolidate_after: str, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """(With 2m, replacements are under consolidateAfter when consolidation looks: a drift answer, with
    no node gated, must not stand for a consolidation simulation that gates them.)"""
    reuses: list[bool] = []
    held_apart: list[str] = []

    def checked(cluster: Cluster, candidates: Any, consolidation: bool) -> SimulationResults | str:
        share = SimulationShare.of(cluster)
        before = dict(share.failed) if share is not None else {}
        names = tuple(sorted(c.name for c in candidates))
        got = simulate_scheduling(cluster, candidates, consolidation)
        if any(got is r for r in before.values()):
            with monkeypatch.context() as m:
                m.setattr(SimulationShare, "reuse_failed", False)
                fresh = simulate_scheduling(cluster, candidates, consolidation)
            assert fresh is not got and _summary(fresh) == _summary(got)
            reuses.append(consolidation)
        elif consolidation and (names, frozenset()) in before:
            held_apart.append(names[0])  # drift's answer, not taken: this simulation gates nodes
        return got

    monkeypatch.setattr(consolidation_module, "simulate_scheduling", checked)
    monkeypatch.setattr(drift_module, "simulate_scheduling", checked)
    _plan(_dump(tmp_path, consolidate_after), consolidate_after)
    assert all(reuses)  # only consolidation takes an answer (drift's, of the same look)
    # 0s: no node is ever gated, so single-node consolidation takes drift's failed answers; 2m: the
    # replacements are gated when consolidation looks, so it never does
    assert (len(reuses) > 0, len(held_apart) > 0) == ((True, False) if consolidate_after == "0s" else (False, True))  # single-node consolidation took drift's failed answers
