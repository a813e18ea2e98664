"""What the SimulateScheduling calls of one look share (karpy.disruption.helpers.SimulationShare: the
nodes split into deleting and active ones, the deleting nodes' pods, the consolidateAfter gating;
karpy.provisioning.existingnodememo: each node's ExistingNode built once and copied; the consolidation
memo's look part of the fingerprint; the methods of a round that find no command looking at one
cluster) against the plain path (everything derived per call): the same
document on generated days with disruption on -- DaemonSets that fit some nodes only, NodePool limits,
PodDisruptionBudgets, do-not-disrupt durations and consolidateAfter windows included -- and the same
result at every call. Fails when a shortcut changes a decision, an event or a simulation."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

import karpy
import karpy.disruption.consolidation as consolidation_module
import karpy.disruption.drift as drift_module
from karpy.disruption.controller import DisruptionController
from karpy.disruption.consolidationmemo import ConsolidationMemo, fingerprint
from karpy.disruption.helpers import SimulationResults, SimulationShare, simulate_scheduling
from karpy.disruption.types import Cluster
from karpy.provisioning.existingnodememo import ExistingNodeMemo
from tests.disruption.test_consolidationmemo_equivalence import _day as _memo_day


def _daemonset(name: str, cpu: str, affinity: dict[str, Any] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {
        "cpu": cpu, "memory": "128Mi"}}}]}
    if affinity is not None:
        spec["affinity"] = affinity
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": "kube-system"},
            "spec": {"selector": {"matchLabels": {"ds": name}},
                     "template": {"metadata": {"labels": {"ds": name}}, "spec": spec}}}


def _day(seed: int) -> tuple[list[dict[str, Any]], list[str]]:
    docs, events = _memo_day(seed)
    r = random.Random(seed * 7919)
    # small nodes: many of them, so each look simulates many candidates onto many nodes
    docs[0]["spec"]["template"]["spec"]["requirements"].append(
        {"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": ["large", "xlarge"]})
    # one DaemonSet on every node, one only on some instance families (isDaemonPodCompatibleWithNode
    # differs by node), one asking for a label no node has (fits none)
    docs.append(_daemonset("agent", r.choice(["100m", "250m"]), None))
    docs.append(_daemonset("picky", "200m", {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In",
                                                     "values": r.sample(["c7i", "m7i", "r7i", "c8i", "m8i"], 2)}]}]}}}))
    docs.append(_daemonset("nowhere", "100m", {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "example.com/none", "operator": "Exists"}]}]}}}))
    if r.random() < 0.5:  # NodePool limits: calculateExistingNodeClaims subtracts each node's capacity
        docs[0]["spec"]["limits"] = {"cpu": str(r.choice([64, 200]))}
    return docs, events


def _run(docs: list[dict[str, Any]], events: list[str]) -> str:
    return karpy.simulate(docs, prices="2026-07-20", until="3h", events=events, disruption=True).to_json()


def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SimulationShare, "enabled", False)
    monkeypatch.setattr(ExistingNodeMemo, "enabled", False)
    monkeypatch.setattr(ConsolidationMemo, "share_look", False)
    monkeypatch.setattr(DisruptionController, "share_look", False)


@pytest.mark.parametrize("seed", [1, 2, 4, 5, 6, 7])
def test_simulation_share_changes_no_decision(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    docs, events = _day(seed)
    shared = _run(docs, events)
    _plain(monkeypatch)
    plain = _run(docs, events)
    assert '"disruptions": []' not in shared  # the days do disrupt
    assert shared == plain


def _summary(r: SimulationResults | str, given_pods_only: bool = False) -> Any:
    """Everything a disruption decision reads from a SimulateScheduling result, and what the
    existing nodes (``given_pods_only``: those given pods) were left with."""
    if isinstance(r, str):
        return r
    return (sorted(r.pod_errors.items()),
            [(nc.nodepool_name, [it.name for it in nc.instance_type_options], sorted(p.key for p in nc.pods))
             for nc in r.new_nodeclaims],
            [(en.name, type(en).__name__, [p.key for p in en.pods], sorted(en.remaining_resources.items()))
             for en in r.results.existing_nodes if en.pods or not given_pods_only])


@pytest.mark.parametrize("seed", [1, 2, 4])
def test_every_simulate_scheduling_call_matches_the_plain_path(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each call through the look's share equals the same call derived anew (drift and consolidation),
    and the memo's key equals the fingerprint derived for the candidates alone. (Every node is an
    existing node here, so each one's state is compared; the nodes left out for want of room have
    their own test: test_roomless_nodes_equivalence.)"""
    monkeypatch.setattr(ExistingNodeMemo, "roomless_left_out", False)
    calls: list[bool] = []

    def both(cluster: Cluster, candidates: Any, consolidation: bool) -> SimulationResults | str:
        shared = simulate_scheduling(cluster, candidates, consolidation)
        with monkeypatch.context() as m:
            _plain(m)
            plain = simulate_scheduling(replace(cluster, simulation_share=None), candidates, consolidation)
        assert _summary(shared) == _summary(plain)
        calls.append(cluster.simulation_share is not None)
        return shared

    key = ConsolidationMemo.key

    def checked_key(self: ConsolidationMemo, cluster: Cluster, candidates: Any) -> Any:
        got = key(self, cluster, candidates)
        assert got == fingerprint(cluster, candidates)
        return got

    monkeypatch.setattr(consolidation_module, "simulate_scheduling", both)
    monkeypatch.setattr(drift_module, "simulate_scheduling", both)
    monkeypatch.setattr(ConsolidationMemo, "key", checked_key)
    # every candidate set simulated (the memo's answers are checked by its own test)
    monkeypatch.setattr(ConsolidationMemo, "no_command", lambda self, key, candidates: None)
    _run(*_day(seed))
    assert len(calls) > 10 and all(calls)


def test_a_fresh_existing_node_copies_what_add_changes_before_changing_it() -> None:
    """ExistingNode.fresh shares its prototype's remaining resources and host-port usage until add:
    adding pods to one copy leaves the prototype, and the copies made from it, as built."""
    from karpy.api.builders import make_node, make_pod
    from karpy.provisioning.existingnode import ExistingNode
    from karpy.provisioning.poddata import PodData
    from karpy.provisioning.topology import Topology
    from karpy.state.cluster import ClusterState
    from karpy.api.builders import make_nodepool
    from karpy.cloudprovider.fake import default_instance_types

    node = make_node("n1", capacity={"cpu": "4", "memory": "8Gi", "pods": "10"})
    sn = ClusterState.from_objects([node]).nodes[0]
    topo = Topology(ClusterState(), [], [make_nodepool("default")], {"default": default_instance_types()}, [])
    proto = ExistingNode(sn, topo, [], {})
    built = (dict(proto.remaining_resources), dict(proto.host_port_usage._reserved))
    first, second = proto.fresh(topo), proto.fresh(topo)
    pod = make_pod("p", requests={"cpu": "1"}, host_ports=[8080])
    first.add(pod, PodData(pod, False), first.requirements)
    assert first.remaining_resources["cpu"] == built[0]["cpu"] - 1_000_000_000
    assert list(first.host_port_usage._reserved) == ["default/p"]
    for en in (proto, second, proto.fresh(topo)):
        assert (en.remaining_resources, en.host_port_usage._reserved) == built
