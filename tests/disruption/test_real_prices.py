"""The issue's disruption scenarios on real prices: the AWS provider (CreateFleet against moto) and
the 2026-07-20 us-east-1 table, driven by Scenario events (scale, apply)."""

from __future__ import annotations

import copy
from pathlib import Path

import karpy
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMMON = ROOT / "examples" / "generation-preference" / "common"
NODEPOOL = yaml.safe_load((ROOT / "examples" / "generation-preference" / "01-one-nodepool" / "nodepool.yaml").read_text())
NODECLASS = yaml.safe_load((COMMON / "ec2nodeclass.yaml").read_text())
WORKLOAD = yaml.safe_load((COMMON / "workload.yaml").read_text())


def nodepool(**disruption):
    np = copy.deepcopy(NODEPOOL)
    np["spec"].setdefault("disruption", {}).update(disruption)
    return np


def workload(replicas=6, cpu="1", annotations=None, spread=False):
    w = copy.deepcopy(WORKLOAD)
    if spread:  # one replica per node
        w["spec"]["template"]["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    w["spec"]["replicas"] = replicas
    w["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu
    if annotations:
        w["spec"]["template"]["metadata"]["annotations"] = annotations
    return w


def run(objects, events, until="25m"):
    result = karpy.simulate([NODECLASS, *objects], prices="2026-07-20", disruption=True, until=until, events=events)
    return result, result.to_document()


SCALE_TO_1 = [{"at": "10m", "scale": {"kind": "Deployment", "name": "web", "replicas": 1}}]


def test_over_provisioned_node_after_scale_down_is_replaced_by_a_cheaper_one():
    _, doc = run([nodepool(), workload()], SCALE_TO_1)
    [rep] = [d for d in doc["disruptions"] if d["decision"] == "replace" and not d.get("error")]
    assert rep["method"] == "single-node-consolidation" and rep["t"] > 600
    claims = {nc["name"]: nc for nc in doc["nodeclaims"]}
    old, new = claims[rep["candidates"][0]], claims[rep["replacements"][0]]
    assert old["instance_type"] == "c7i.2xlarge" and old["deleted_by"] == "consolidation"
    assert new["price"] < old["price"] and new["launched"]
    running = [p for p in doc["pods"].values() if p["phase"] == "Running"]
    assert len(running) == 1 and running[0]["node"] == new["name"]


def test_empty_node_goes_after_consolidate_after():
    scale_to_0 = [{"at": "10m", "scale": {"kind": "Deployment", "name": "web", "replicas": 0}}]
    _, doc = run([nodepool(consolidateAfter="5m"), workload()], scale_to_0)
    [d] = [d for d in doc["disruptions"] if d["method"] == "emptiness"]
    assert d["t"] >= 600 + 300 + 15  # last pod event + consolidateAfter + the 15 s validation
    [nc] = [nc for nc in doc["nodeclaims"] if nc["launched"]]
    assert nc["deleted_by"] == "emptiness"


def test_zero_budget_during_a_cron_window_blocks():
    # 00:00-01:00 UTC daily no disruption (virtual time 0 is 2026-01-01T00:00Z)
    budgets = [{"nodes": "0", "schedule": "0 0 * * *", "duration": "1h"}, {"nodes": "10%"}]
    result, doc = run([nodepool(budgets=budgets), workload()], SCALE_TO_1, until="1h10m")
    moves = [d for d in doc["disruptions"] if not d.get("error")]
    # nothing moves inside the window although the node is over-sized from t=10m; right after it does
    assert moves and 3600 <= moves[0]["t"] < 3600 + 60
    events = result.simulation.disruption.node_events["nodepool/general"]
    assert ("DisruptionBlocked", "No allowed disruptions for disruption reason Underutilized due to blocking budget") \
        in events


def test_do_not_disrupt_pod_keeps_its_node():
    _, doc = run([nodepool(), workload(annotations={"karpenter.sh/do-not-disrupt": "true"})], SCALE_TO_1)
    assert [d for d in doc["disruptions"] if not d.get("error")] == []
    assert all(nc.get("deleted_by") is None for nc in doc["nodeclaims"] if nc["launched"])


def test_blocking_pdb_keeps_its_node():
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "web"}}}}
    result, doc = run([nodepool(), workload(), pdb], SCALE_TO_1)
    assert [d for d in doc["disruptions"] if not d.get("error")] == []
    [nc] = [nc for nc in doc["nodeclaims"] if nc["launched"]]
    events = result.simulation.disruption.node_events[nc["name"]]
    assert any("Pdb prevents pod evictions (PodDisruptionBudget=[default/web])" in m for _, m in events)


def test_nodepool_requirement_change_drifts_and_replaces_one_budget_at_a_time():
    # three nodes (one replica each); the NodePool then allows only 8th gen: RequirementsDrifted
    changed = copy.deepcopy(NODEPOOL)
    changed["spec"]["template"]["spec"]["requirements"][0]["values"] = ["c8i", "m8i", "r8i"]
    events = [{"at": "10m", "apply": changed}]
    result, doc = run([nodepool(), workload(replicas=3, cpu="1", spread=True)], events, until="1h")
    drifts = [d for d in doc["disruptions"] if d["method"] == "drift" and not d.get("error")]
    first = {nc["name"] for nc in doc["nodeclaims"] if nc["launched"] and nc["created_at"] < 600}
    assert len(first) == 3
    assert {c for d in drifts for c in d["candidates"]} == first
    assert all(len(d["candidates"]) == 1 and d["budget"] == {"general": 1} for d in drifts)
    # one at a time: each next drift starts only after the previous candidate was deleted
    deleted_at = {nc["name"]: nc["deleted_at"] for nc in doc["nodeclaims"]}
    for prev, nxt in zip(drifts, drifts[1:]):
        assert nxt["t"] >= deleted_at[prev["candidates"][0]]
    alive = [nc for nc in doc["nodeclaims"] if nc["launched"] and nc["deleted_at"] is None]
    assert alive and all(nc["labels"]["karpenter.k8s.aws/instance-generation"] == "8" for nc in alive)
    reasons = {c.reason for r in result.simulation.launches if r.launched is not None
               for c in r.launched.status.conditions if c.type == "Drifted"}
    assert reasons == {"RequirementsDrifted"}
