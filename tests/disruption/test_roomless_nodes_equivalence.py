"""The nodes a disruption simulation leaves out for want of room (karpy.provisioning.existingnodememo:
a node fitting none of the simulated pods' requests is not one of the scheduler's existing nodes, its
hostname still registered) against every node kept: the same result at every SimulateScheduling
call of generated days -- DaemonSets on some nodes only, NodePool limits, PDBs, do-not-disrupt and
consolidateAfter (tests/disruption/test_simulationshare_equivalence's days) -- and the same day and
plan documents. Fails when leaving a node out changes a placement, an error or a decision."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import karpy
import karpy.disruption.consolidation as consolidation_module
import karpy.disruption.drift as drift_module
from karpy.disruption.consolidationmemo import ConsolidationMemo
from karpy.disruption.helpers import SimulationResults, simulate_scheduling
from karpy.disruption.types import Cluster
from karpy.provisioning.existingnodememo import ExistingNodeMemo
from karpy.scheduling.resources import fits, pod_requests
from tests.disruption.test_simulationshare_equivalence import _day, _run, _summary

sys.path.insert(0, str(Path(__file__).parents[1] / "plan"))
from dumps import EC2NODECLASS, cluster_dump, deployment, dump_text, nodepool  # noqa: E402


def _placed(r: SimulationResults | str) -> Any:
    """What disruption reads of a result: the errors, the new NodeClaims, the nodes given pods."""
    return _summary(r, given_pods_only=True)


def _hostname_day(seed: int) -> tuple[list[dict[str, Any]], list[str]]:
    """A day with pods spread over hostnames and kept apart by hostname (the topology's hostname
    domains, which a node left out still registers)."""
    docs, events = _day(seed)
    shapes: list[tuple[str, dict[str, Any]]] = [
        ("spread", {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                                   "whenUnsatisfiable": "DoNotSchedule",
                                                   "labelSelector": {"matchLabels": {"app": "spread"}}}]}),
        # (spread over the nodes of two families: the others' hostnames are registered by the existing nodes)
        ("picky-spread", {"topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": "picky-spread"}}}],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In",
                                       "values": ["c7i", "m7i"]}]}]}}}}),
        ("apart", {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "apart"}}}]}}}),
    ]
    for name, extra in shapes:
        docs.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
                     "spec": {"replicas": 4, "selector": {"matchLabels": {"app": name}},
                              "template": {"metadata": {"labels": {"app": name}},
                                           "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                                               "requests": {"cpu": "300m", "memory": "256Mi"}}}], **extra}}}})
    return docs, events


@pytest.mark.parametrize("seed,hostnames", [(1, False), (2, False), (4, False), (3, True), (5, True)])
def test_every_simulation_places_as_with_every_node(seed: int, hostnames: bool,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    left_out: list[int] = []

    def both(cluster: Cluster, candidates: Any, consolidation: bool) -> SimulationResults | str:
        kept = simulate_scheduling(cluster, candidates, consolidation)
        with monkeypatch.context() as m:
            m.setattr(ExistingNodeMemo, "roomless_left_out", False)
            every = simulate_scheduling(replace(cluster, simulation_share=None), candidates, consolidation)
        assert _placed(kept) == _placed(every)
        if isinstance(kept, SimulationResults) and isinstance(every, SimulationResults):
            names = {en.name for en in kept.results.existing_nodes}
            requests = [pod_requests(p) for p in kept.pods.values()]
            out = [en for en in every.results.existing_nodes if en.name not in names]
            for en in out:  # a node left out took no pod with every node kept, and had no room for one
                assert not en.pods
                assert not any(fits(q, en.remaining_resources) for q in requests)
            left_out.append(len(out))
        return kept

    monkeypatch.setattr(consolidation_module, "simulate_scheduling", both)
    monkeypatch.setattr(drift_module, "simulate_scheduling", both)
    monkeypatch.setattr(ConsolidationMemo, "no_command", lambda self, key, candidates: None)
    _run(*(_hostname_day(seed) if hostnames else _day(seed)))
    assert len(left_out) > 10 and sum(left_out) > 0  # nodes were left out


@pytest.mark.parametrize("seed,hostnames,tables", [(1, False, 8), (6, False, 8), (3, True, 8), (2, False, 1)])
def test_a_day_is_the_same_with_every_node_kept(seed: int, hostnames: bool, tables: int,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """(``tables``: request sets per look answered from a table; past them every node is kept)"""
    docs, events = _hostname_day(seed) if hostnames else _day(seed)
    monkeypatch.setattr(ExistingNodeMemo, "ROOM_TABLES", tables)
    kept = _run(docs, events)
    monkeypatch.setattr(ExistingNodeMemo, "roomless_left_out", False)
    assert kept == _run(docs, events)
    assert '"disruptions": []' not in kept


def test_a_drift_plan_is_the_same_with_every_node_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A packed cluster narrowed to 8th gen (every node drifts, 20 % budget): most nodes are full."""
    dump = tmp_path / "cluster.yaml"
    design = [EC2NODECLASS, nodepool(sizes=["xlarge", "2xlarge"], budgets=[{"nodes": "20%"}]),
              deployment("web", 40, "1500m", "2Gi", spread=False)]
    dump.write_text(dump_text(cluster_dump(design, prices="2026-07-20")))
    change = nodepool(sizes=["xlarge", "2xlarge"], families=["c8i", "m8i", "r8i"], budgets=[{"nodes": "20%"}])
    counted: list[int] = []
    for name in ("has_room", "has_room_available"):
        def counting(self: ExistingNodeMemo, node: Any, requests: Any, asked: Any = getattr(ExistingNodeMemo, name)
                     ) -> bool:
            room: bool = asked(self, node, requests)
            counted.append(0 if room else 1)
            return room

        monkeypatch.setattr(ExistingNodeMemo, name, counting)
    kept = karpy.plan(dump, apply=[change], prices="2026-07-20", until="2h").to_json()
    assert sum(counted) > 0  # nodes were left out
    monkeypatch.setattr(ExistingNodeMemo, "roomless_left_out", False)
    assert kept == karpy.plan(dump, apply=[change], prices="2026-07-20", until="2h").to_json()
    assert '"waves": []' not in kept
