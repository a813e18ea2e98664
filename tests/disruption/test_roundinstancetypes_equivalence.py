"""The disruption round's instance types (karpy/disruption/controller.py ``share_instance_types``): the
drift check's InstanceTypeNotFound lookup through the controller's per-instant lookup (the provisioner's
SchedulerCache while the provider's key holds), and BuildNodePoolMap's maps kept while that key holds
(karpy/disruption/helpers.py build_nodepool_map ``memo``), against asking the cloud provider anew every
round: days whose instance types change under the controller (injected ICE starting and ending, a
NodeOverlay applied, a NodePool narrowed so nodes drift) compared document for document with the
sharing off. Fails when a kept map or list outlives the provider's key."""

from __future__ import annotations

from typing import Any

import pytest

import karpy
from karpy.disruption import helpers
from karpy.disruption.controller import DisruptionController

FAMILIES = ["c7i", "m7i", "r7i", "c8i", "m8i", "r8i"]


def _nodepool(families: list[str]) -> dict[str, Any]:
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
            "spec": {"template": {"spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": families},
                                 {"key": "karpenter.k8s.aws/instance-size", "operator": "In",
                                  "values": ["large", "xlarge", "2xlarge"]},
                                 {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}]}},
                     "disruption": {"budgets": [{"nodes": "50%"}]}}}


def _deployment(name: str, replicas: int, cpu: str, memory: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                                      "requests": {"cpu": cpu, "memory": memory}}}]}}}}


#: 7th gen made dearer under running 7th-gen nodes: consolidation replaces them only when the candidates'
#: prices (BuildNodePoolMap's types) are the overlaid ones
OVERLAY = {"apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay", "metadata": {"name": "gen7-dearer"},
           "spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In",
                                      "values": ["c7i", "m7i", "r7i"]}], "priceAdjustment": "+100%"}}

DAYS: dict[str, list[Any]] = {
    "ice": [{"at": "20m", "capacity": {"unavailable": ["m7i.*:*:*", "c7i.*:*:*"]}},
            {"at": "40m", "scale": {"kind": "Deployment", "name": "web", "namespace": "default", "replicas": 4}},
            {"at": "1h", "scale": {"kind": "Deployment", "name": "web", "namespace": "default", "replicas": 14}},
            {"at": "1h30m", "capacity": {"available": ["m7i.*:*:*", "c7i.*:*:*"]}},
            {"at": "2h", "scale": {"kind": "Deployment", "name": "api", "namespace": "default", "replicas": 2}}],
    "overlay": [{"at": "30m", "scale": {"kind": "Deployment", "name": "web", "namespace": "default", "replicas": 5}},
                {"at": "1h", "apply": OVERLAY}],
    "narrowed": [{"at": "30m", "apply": _nodepool(["c8i", "m8i", "r8i"])},
                 {"at": "1h30m", "scale": {"kind": "Deployment", "name": "web", "namespace": "default", "replicas": 6}}],
}


def _run(day: str) -> Any:
    return karpy.simulate([_nodepool(FAMILIES), _deployment("web", 12, "700m", "1Gi"),
                           _deployment("api", 6, "1500m", "3Gi")],
                          prices="2026-07-20", until="3h", events=DAYS[day], disruption=True,
                          feature_gates={"NodeOverlay": True})


@pytest.mark.parametrize("day", sorted(DAYS))
def test_round_instance_types_change_no_decision(day: str, monkeypatch: pytest.MonkeyPatch) -> None:
    built = []
    original = helpers.build_nodepool_map

    def counting(cluster: Any, memo: Any = None) -> Any:
        out = original(cluster, memo)
        built.append(tuple(out.values()))  # kept alive: their ids stay unique
        return out

    monkeypatch.setattr("karpy.disruption.controller.build_nodepool_map", counting)
    shared = _run(day)
    kept = [tuple(map(id, maps)) for maps in built]
    built.clear()
    monkeypatch.setattr(DisruptionController, "share_instance_types", False)
    plain = _run(day)
    assert shared.to_json() == plain.to_json()
    # the shortcut engaged: rounds reused a map, and (ICE, an overlay) a change of the provider's key made
    # a new one (a NodePool's requirements are not in the key: the provider lists its NodeClass's types)
    assert len(set(kept)) < len(kept) and len(set(kept)) >= (1 if day == "narrowed" else 2), (len(set(kept)), len(kept))
    assert len({tuple(map(id, maps)) for maps in built}) == len(built)  # the plain path builds every map anew
    decisions = shared.simulation.disruption.decisions
    assert decisions, "the day made no disruption decision: nothing was compared"
    if day == "narrowed":
        assert {d["reason"] for d in decisions} >= {"Drifted"}
    if day == "overlay":  # the overlay's replacements, priced from the map of the overlaid types
        assert any(d["t"] >= 3600 and d["decision"] == "replace" for d in decisions), decisions
