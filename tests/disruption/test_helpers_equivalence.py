"""SimulateScheduling through the provisioner's SchedulerCache (the disruption view's
``instance_types_key``) against the plain path (every candidate's scheduler built anew): the same
document on generated days with disruption on. Fails when the shortcut changes a decision."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

import karpy
import karpy.disruption.consolidation as consolidation_module
from karpy.disruption.controller import DisruptionController
from karpy.disruption.helpers import SimulationResults, simulate_scheduling
from karpy.disruption.types import Cluster


def _day(seed: int) -> tuple[list[dict[str, Any]], list[str]]:
    r = random.Random(seed)
    docs: list[dict[str, Any]] = [{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
                                   "spec": {"template": {"spec": {
                                       "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
                                                        "name": "default"},
                                       "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In",
                                                         "values": r.sample(["c7i", "m7i", "r7i", "c8i", "m8i"], 3)}]}}}}]
    deployments = r.randint(2, 4)
    for i in range(deployments):
        docs.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"app{i}"},
                     "spec": {"replicas": r.randint(3, 15), "selector": {"matchLabels": {"app": f"app{i}"}},
                              "template": {"metadata": {"labels": {"app": f"app{i}"}},
                                           "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                                               "requests": {"cpu": f"{r.choice([250, 500, 1000, 1500])}m",
                                                            "memory": f"{r.choice([256, 512, 2048])}Mi"}}}]}}}})
    # up, then down in steps (consolidation), then a little up again
    events = [f"10m scale deployment/app{i} {r.randint(15, 30)}" for i in range(deployments)]
    events += [f"{k * 10}m scale deployment/app{r.randrange(deployments)} {r.randint(0, 6)}" for k in range(4, 13)]
    events += [f"130m scale deployment/app{r.randrange(deployments)} {r.randint(5, 12)}"]
    return docs, events


def _run(docs: list[dict[str, Any]], events: list[str]) -> str:
    return karpy.simulate(docs, prices="2026-07-20", until="3h", events=events, disruption=True).to_json()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_scheduler_cache_in_simulate_scheduling_changes_no_decision(seed: int,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    docs, events = _day(seed)
    cached = _run(docs, events)
    view = DisruptionController.view

    def plain_view(self: DisruptionController) -> Cluster:
        cluster = view(self)
        cluster.instance_types_key = None  # every SimulateScheduling builds its scheduler anew
        return cluster

    monkeypatch.setattr(DisruptionController, "view", plain_view)
    plain = _run(docs, events)
    assert '"disruptions": []' not in cached  # the days do consolidate
    assert cached == plain


def _summary(r: SimulationResults | str) -> Any:
    """Everything a consolidation decision reads from a SimulateScheduling result."""
    if isinstance(r, str):
        return r
    return (sorted(r.pod_errors.items()),
            [(nc.nodepool_name, [it.name for it in nc.instance_type_options],
              [(o.zone, o.capacity_type, o.price) for it in nc.instance_type_options for o in it.offerings],
              sorted(p.key for p in nc.pods)) for nc in r.new_nodeclaims],
            sorted((en.name, sorted(p.key for p in en.pods)) for en in r.results.existing_nodes))


@pytest.mark.parametrize("seed", [4, 5])
def test_every_simulate_scheduling_call_matches_the_plain_path(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each call's result (new NodeClaims with their instance types and offerings, pod errors,
    pods on existing nodes) with the SchedulerCache equals the one built anew for the same view."""
    calls: list[bool] = []

    def both(cluster: Cluster, candidates: Any, consolidation: bool) -> SimulationResults | str:
        plain = simulate_scheduling(replace(cluster, instance_types_key=None), candidates, consolidation)
        cached = simulate_scheduling(cluster, candidates, consolidation)
        calls.append(cluster.instance_types_key is not None)
        assert _summary(cached) == _summary(plain)
        return cached

    monkeypatch.setattr(consolidation_module, "simulate_scheduling", both)
    _run(*_day(seed))
    assert len(calls) > 10 and all(calls)
