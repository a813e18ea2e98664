"""Time: scenarios that unfold (issue #9). Scale, Jobs, capacity outages, spot interruptions,
rollouts, the cost integral and the timeline, on the fake provider (fast) and on the AWS provider
(mocked EC2) where capacity and interruptions matter."""

from __future__ import annotations

from pathlib import Path

import pytest

import karpy
from karpy.api.builders import make_deployment, make_nodepool, make_pod
from karpy.api.loader import ManifestError
from karpy.cloudprovider.fake import FakeCloudProvider
from karpy.cost import cost_integral
from karpy.sim.simulation import LaunchRecord

DATA = Path(__file__).parent / "data"


def fake(*objects, **kwargs):
    return karpy.simulate(list(objects), cloud_provider=FakeCloudProvider(), region=None, **kwargs)


def aws(manifests, **kwargs):
    """A run on the AWS provider; its mocked EC2 is stopped afterwards (the records stay readable)."""
    result = karpy.simulate(manifests, prices="2026-07-20", **kwargs)
    result.cloud_provider.close()
    return result


def pending(name, **kw):
    return make_pod(name, unschedulable=False, **kw)


def web(replicas=10, cpu="1", **kw):
    return make_deployment("web", replicas=replicas, requests={"cpu": cpu}, **kw)


def live_claims(doc):
    return [n for n in doc["nodeclaims"] if n["launched"] and n["deleted_at"] is None]


# -- scale --------------------------------------------------------------------------------------------
def test_scale_10_100_10_nodes_follow_up_and_stay_without_disruption():
    result = fake(make_nodepool(), web(10), until="3h", disruption=False, events=[
        "30m scale deployment/web 100", "1h30m scale deployment/web 10"])
    doc = result.to_document()
    assert result.exit_code == 0
    assert any(w.startswith("disruption is off (--no-disruption") for w in doc["warnings"])
    running = [k for k, p in doc["pods"].items() if p["phase"] == "Running"]
    assert len(running) == 10
    deleted = [k for k, p in doc["pods"].items() if p["phase"] == "Deleted"]
    assert len(deleted) == 90
    launched_before = [n for n in doc["nodeclaims"] if n["launched"] and n["launched_at"] < 1800]
    launched_after = [n for n in doc["nodeclaims"] if n["launched"] and 1800 <= n["launched_at"] < 5400]
    assert launched_before and launched_after, "the node count follows the scale-up"
    # scale-down: the disruption controller is off, so every node stays and keeps costing money to the horizon
    assert all(n["deleted_at"] is None and n["deleted_by"] is None for n in doc["nodeclaims"])
    assert doc["cost"]["per_hour"][-1][1] == doc["cost_per_hour"]
    assert doc["cost"]["per_hour"][-1][0] < 5400  # nothing changed the $/h after the scale-down
    # a scale-down deletes (graceful deletion), it does not evict (issue #31)
    assert not [e for e in doc["timeline"] if e["kind"] == "pod.evicted"]
    deletions = [e for e in doc["timeline"] if e["kind"] == "pod.deleting"]
    assert len(deletions) == 90 and {e["detail"]["reason"] for e in deletions} == {"scale-down"}
    assert all(e["t"] == 5400 for e in deletions)


def test_scale_10_100_10_by_default_consolidation_removes_the_nodes_the_scale_down_emptied():
    # issue 31: time passes, so Karpenter's disruption controller runs, as in production
    result = fake(make_nodepool(), web(10), until="3h", events=[
        "30m scale deployment/web 100", "1h30m scale deployment/web 10"])
    doc = result.to_document()
    assert result.exit_code == 0 and doc["disruptions"]
    assert not any(w.startswith("disruption is off") for w in doc["warnings"])
    gone = [n for n in doc["nodeclaims"] if n["deleted_at"] is not None]
    assert gone and all(n["deleted_at"] >= 5400 and n["deleted_by"] in ("emptiness", "consolidation") for n in gone)
    assert doc["cost"]["per_hour"][-1][0] >= 5400  # the $/h fell after the scale-down
    assert len([k for k, p in doc["pods"].items() if p["phase"] == "Running"]) == 10


def test_scale_down_ranking_doubled_up_first_then_most_recently_ready():
    # replica_set.go getPodsToDelete + controller_utils.go ActivePodsWithRanks: pods on a node with
    # more related pods go first ("doubled up"); among those the most recently ready (log2 buckets
    # of the time since ready: ~60 s vs ~620 s differ) goes first
    result = fake(make_nodepool(), web(2), until="2h", disruption=False, events=["10m scale deployment/web 4",
                                                                                 "11m scale deployment/web 2"])
    tl = result.to_document()["timeline"]
    node_of = {e["object"]: e["detail"]["node"] for e in tl if e["kind"] == "pod.bound"}
    crowded = max(set(node_of.values()), key=list(node_of.values()).count)
    evicted = [e["object"] for e in tl if e["kind"] == "pod.deleting"]
    assert len(evicted) == 2 and {node_of[p] for p in evicted} == {crowded}
    late_on_crowded = [e["object"] for e in tl if e["kind"] == "pod.created" and e["t"] >= 600
                       and node_of[e["object"]] == crowded]
    assert late_on_crowded and set(late_on_crowded) <= set(evicted)


def test_scale_down_ranking_inside_one_log2_bucket_falls_back_to_uid():
    # ~3000 s and ~3560 s since ready share bucket 41 (log2 of nanoseconds): upstream compares UIDs
    result = fake(make_nodepool(), web(2), until="2h", events=["10m scale deployment/web 4",
                                                               "1h scale deployment/web 2"])
    pods = {p.key: p for p in [*result.simulation.pods.values(), *result.simulation.deleted_pods.values()]}
    tl = result.to_document()["timeline"]
    evicted = {e["object"].removeprefix("Pod/") for e in tl if e["kind"] == "pod.deleting"}
    ranked = sorted(pods, key=lambda k: pods[k].metadata.uid)
    assert evicted == set(ranked[:2])


def test_scale_unknown_kind_and_replicas_are_bad_input():
    # an --event line is named as written, a dict by its index in events= (not "<events>: events[0]")
    with pytest.raises(ManifestError) as err:
        fake(make_nodepool(), web(1), until="1h", events=["10m scale deployment/nope 3"])
    assert str(err.value) == "--event '10m scale deployment/nope 3': scale.name: unknown Deployment \"nope\""
    with pytest.raises(ManifestError) as err:
        fake(make_nodepool(), web(1), until="1h", events=["1m scale deployment/web 2", {"at": "10m", "scale": {
            "kind": "Deployment", "name": "web", "replicas": -1}}])
    assert str(err.value) == "events[1]: scale.replicas: must be greater than or equal to 0 (got -1)"
    with pytest.raises(ManifestError) as err:
        fake(make_nodepool(), web(1), until="1h", events=[{"at": "10m", "scale": {
            "kind": "Deployment", "name": "gone", "replicas": 1}}])
    assert str(err.value) == 'events[0]: scale.name: unknown Deployment "gone"'


# -- Jobs, run-for, depart-after ------------------------------------------------------------------
def test_job_completes_after_run_for_with_parallelism_and_completions():
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "batch"},
           "spec": {"parallelism": 2, "completions": 5, "template": {
               "metadata": {"annotations": {"karpy.io/run-for": "20m"}},
               "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x",
                                                                  "resources": {"requests": {"cpu": "1"}}}]}}}}
    result = fake(make_nodepool(), job, until="3h")
    doc = result.to_document()
    succeeded = sorted(k for k, p in doc["pods"].items() if p["phase"] == "Succeeded")
    assert len(succeeded) == 5 and not [p for p in doc["pods"].values() if p["phase"] == "Running"]
    done = [e for e in doc["timeline"] if e["kind"] == "job.complete"]
    assert len(done) == 1 and done[0]["detail"] == {"succeeded": 5}
    # two at a time: completions at ~20m, ~40m and ~60m
    completions = sorted(e["t"] for e in doc["timeline"] if e["kind"] == "pod.completed")
    assert completions[0] >= 1200 and completions[-1] >= 3 * 1200
    assert result.exit_code == 0


def test_depart_after_deletes_a_bare_pod():
    pod = pending("visitor", requests={"cpu": "1"})
    pod.metadata.annotations["karpy.io/depart-after"] = "10m"
    doc = fake(make_nodepool(), pod, until="1h").to_document()
    assert doc["pods"]["default/visitor"]["phase"] == "Deleted"
    assert [e["t"] for e in doc["timeline"] if e["kind"] == "pod.departed"] == [600.0]


def test_arrive_after_beyond_the_settling_point_is_processed():
    # hostile-input case moved to #9: a late pod must not vanish from `pods`
    pod = pending("late", requests={"cpu": "1"})
    pod.metadata.annotations["karpy.io/arrive-after"] = "2h"
    result = fake(make_nodepool(), pod)
    assert result.to_document()["pods"]["default/late"]["phase"] == "Running"
    cut = fake(make_nodepool(), pending("late2", requests={"cpu": "1"}, annotations={"karpy.io/arrive-after": "2h"}),
               until="1h").to_document()["pods"]["default/late2"]
    assert cut["phase"] == "Pending" and "not arrived" in cut["message"]


# -- rollout ----------------------------------------------------------------------------------------
def test_rollout_with_max_surge_25_percent():
    d = web(8)
    d.spec.strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}}
    # the Deployment controller's own bounds: consolidation's evictions would be Karpenter's, not its
    result = fake(make_nodepool(), d, until="2h", disruption=False, events=["30m rollout deployment/web"])
    doc = result.to_document()
    tl = doc["timeline"]
    assert [e["kind"] for e in tl if e["kind"].startswith("rollout")] == ["rollout", "rollout.complete"]
    # never more than replicas + maxSurge (8 + 2) pods of the Deployment at once; with
    # maxUnavailable 0 never fewer than 8 available (bound, not terminating)
    alive: set[str] = set()
    available: set[str] = set()
    peak, low = 0, 99
    for e in tl:
        if not e["object"].startswith("Pod/default/web-"):
            continue
        if e["kind"] == "pod.created":
            alive.add(e["object"])
        elif e["kind"] == "pod.bound":
            available.add(e["object"])
        elif e["kind"] in ("pod.evicted", "pod.deleting"):
            available.discard(e["object"])
        elif e["kind"] == "pod.deleted":
            alive.discard(e["object"])
        if e["t"] >= 1800:
            peak, low = max(peak, len(alive)), min(low, len(available))
    assert peak == 10
    assert low == 8
    running = [k for k, p in doc["pods"].items() if p["phase"] == "Running"]
    assert len(running) == 8
    new_rs = next(e["detail"]["replica_set"] for e in tl if e["kind"] == "rollout")
    assert all(k.startswith(f"default/{new_rs}-") for k in running)


# -- cost ---------------------------------------------------------------------------------------------
def _record(name, pool, price, start, end, itype, ctype="on-demand"):
    rec = LaunchRecord(name=name, nodepool=pool, created_at=start, requested=None, launched=object(),
                       instance_type=itype, capacity_type=ctype, price=price)
    rec.deleted_at = end
    rec.deleted = end is not None
    return rec


def test_cost_integral_by_hand_two_nodes():
    # node a: $0.50/h from 0 s to 3600 s (deleted) = $0.50; node b: $1.20/h from 1800 s to the
    # 7200 s horizon = 1.5 h = $1.80; total $2.30
    a = _record("a", "np1", 0.5, 0.0, 3600.0, "c7i.large")
    b = _record("b", "np2", 1.2, 1800.0, None, "c8i.xlarge", "spot")
    failed = LaunchRecord(name="f", nodepool="np1", created_at=10.0, requested=None)
    cost = cost_integral([a, b, failed], 7200.0)
    assert cost["total"] == pytest.approx(2.3)
    assert cost["by_nodepool"] == {"np1": 0.5, "np2": 1.8}
    assert cost["by_family"] == {"c7i": 0.5, "c8i": 1.8}
    assert cost["by_generation"] == {"7": 0.5, "8": 1.8}
    assert cost["by_capacity_type"] == {"on-demand": 0.5, "spot": 1.8}
    assert cost["node_hours"]["total"] == pytest.approx(2.5)
    assert cost["by_nodeclaim"]["b"] == {"node_hours": 1.5, "dollars": 1.8, "price": 1.2}
    assert "f" not in cost["by_nodeclaim"]
    assert cost["per_hour"] == [[0.0, 0.5], [1800.0, 1.7], [3600.0, 1.2]]


def test_cost_of_a_run_matches_the_nodeclaims():
    doc = fake(make_nodepool(), web(10), until="2h", events=["1h scale deployment/web 30"]).to_document()
    by_hand = sum(n["price"] * (7200 - n["launched_at"]) / 3600 for n in doc["nodeclaims"] if n["launched"])
    assert doc["cost"]["total"] == pytest.approx(by_hand, abs=1e-5)
    assert doc["cost"]["horizon"] == 7200.0


def test_byte_identical_json_on_reruns_with_events():
    def once():
        return fake(make_nodepool(), web(5), until="2h", events=[
            "10m scale deployment/web 25", "40m rollout deployment/web", "1h scale deployment/web 3"]).to_json()
    assert once() == once()


# -- AWS provider: capacity outage and spot interruption ----------------------------------------------
@pytest.fixture(scope="module")
def outage():
    return aws(DATA / "generation-outage.yaml")


def test_8th_gen_outage_1h_to_2h_falls_back_to_7th_gen_then_8th_again(outage):
    doc = outage.to_document()
    launched = [n for n in doc["nodeclaims"] if n["launched"]]
    gen = {n["name"]: n["labels"]["karpenter.k8s.aws/instance-generation"] for n in launched}
    before = [n for n in launched if n["launched_at"] < 3600]
    during = [n for n in launched if 3600 <= n["launched_at"] < 7200]
    after = [n for n in launched if n["launched_at"] >= 7200]
    assert before and during and after
    assert {gen[n["name"]] for n in before} == {"8"}
    assert {gen[n["name"]] for n in during} == {"7"}
    assert {gen[n["name"]] for n in after} == {"8"}
    failed = [n for n in doc["nodeclaims"] if not n["launched"]]
    assert failed and all(3600 <= n["created_at"] < 7200 for n in failed)
    kinds = [e["kind"] for e in doc["timeline"] if e["kind"].startswith("capacity")]
    assert kinds == ["capacity.unavailable", "capacity.available"]
    assert set(doc["cost"]["by_generation"]) == {"7", "8"}
    assert outage.exit_code == 0


@pytest.fixture(scope="module")
def interrupted():
    node = aws(DATA / "spot-interruption.yaml").to_document()["nodeclaims"][0]
    return node, aws(DATA / "spot-interruption.yaml", until="1h", events=[f"30m interrupt node={node['name']}"])


def test_spot_interruption_ice_caches_the_offering_and_replaces_elsewhere(interrupted):
    node, result = interrupted
    doc = result.to_document()
    victim = next(n for n in doc["nodeclaims"] if n["name"] == node["name"])
    assert victim["deleted_by"] == "interruption"
    assert 1800 <= victim["deleted_at"] <= 1800 + 120
    handled = result.cloud_provider.interruption.handled
    assert [(h[0], h[2], h[3]) for h in handled] == [("spot_interrupted", node["name"], "CordonAndDrain")]
    # the ICE entry lived 3 minutes from the warning (it has expired by the end of the run)
    assert not result.cloud_provider.ice_cache.entries()
    replacements = [n for n in doc["nodeclaims"] if n["launched"] and n["launched_at"] >= 1800]
    assert replacements
    assert all((n["instance_type"], n["zone"]) != (node["instance_type"], node["zone"]) for n in replacements)
    assert all(p["phase"] == "Running" for p in doc["pods"].values() if p["phase"] != "Deleted")
    kinds = [e["kind"] for e in doc["timeline"] if e["object"] == f"NodeClaim/{node['name']}"]
    assert kinds[-3:] == ["interruption", "nodeclaim.deleting", "nodeclaim.deleted"]
    assert result.exit_code == 0


def _interrupt_with_pdb(max_unavailable, **kwargs):
    import yaml

    docs = list(yaml.safe_load_all((DATA / "spot-interruption.yaml").read_text()))
    if kwargs.get("disruption"):  # keep consolidation from replacing the node before the interruption
        docs[0]["spec"]["disruption"] = {"consolidateAfter": "Never"}
    docs.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web"},
                 "spec": {"maxUnavailable": max_unavailable, "selector": {"matchLabels": {"app": "web"}}}})
    node = aws(docs).to_document()["nodeclaims"][0]
    # the interruption's drain alone (consolidation would move the PDB'd pods first)
    kwargs.setdefault("disruption", False)
    return node, aws(docs, until="1h", events=[f"30m interrupt node={node['name']}"], **kwargs)


def _evictions(doc, node):
    return [e for e in doc["timeline"] if e["kind"] == "pod.evicted" and e["detail"].get("node") == node]


# upstream: interruption deletes the NodeClaim and the termination controller drains it like any other
# (node/termination/terminator/eviction.go: the Eviction API refuses what a PDB does not allow)
def test_interruption_drain_respects_a_blocking_pdb_until_the_spot_reclaim():
    node, result = _interrupt_with_pdb(0)
    doc = result.to_document()
    kinds = [e["kind"] for e in doc["timeline"] if e["object"] in (node["name"], f"NodeClaim/{node['name']}")]
    assert "termination.drain-blocked" in kinds and "nodeclaim.reclaimed" in kinds
    assert _evictions(doc, node["name"]) == []  # no eviction passes a maxUnavailable: 0 PDB
    victim = next(n for n in doc["nodeclaims"] if n["name"] == node["name"])
    assert victim["deleted_by"] == "interruption" and victim["deleted_at"] == 1800 + 120  # EC2 took it back


def test_interruption_drain_evicts_one_pod_at_a_time_under_max_unavailable_1():
    node, result = _interrupt_with_pdb(1)
    doc = result.to_document()
    evicted = _evictions(doc, node["name"])
    assert evicted and evicted[0]["t"] == 1800
    assert len([e for e in evicted if e["t"] == 1800]) == 1  # the simple drain evicted all three at once
    assert all(p["phase"] == "Running" for p in doc["pods"].values() if p["phase"] != "Deleted")


def test_interruption_drain_steps_are_in_the_disruption_timeline_with_disruption_on():
    node, result = _interrupt_with_pdb(1, disruption=True)
    doc = result.to_document()
    steps = [e["kind"] for e in doc["disruption_timeline"] if e["object"] == node["name"]]
    assert steps[:2] == ["delete", "taint"] and "terminated" in steps
    victim = next(n for n in doc["nodeclaims"] if n["name"] == node["name"])
    assert victim["deleted_by"] == "interruption"


def test_unavailable_until_120_waits_for_capacity_instead_of_stopping_at_61s():
    # hostile-input case moved to #9: every launch ICEs until 120 s; the ICE cache holds the
    # offerings for 3 minutes more; the run continues until pods can schedule
    result = aws([make_nodepool(), *[pending(f"p{i}", requests={"cpu": "1"}) for i in range(3)]],
                 unavailable=["*:*:*:until=120"])
    doc = result.to_document()
    assert result.exit_code == 0
    assert doc["simulation"]["virtual_seconds"] > 120
    assert any(n["launched"] and n["launched_at"] >= 120 for n in doc["nodeclaims"])


# -- karpy.testing over time ---------------------------------------------------------------------------
def test_testing_assertions_over_time(outage):
    from karpy.testing import (assert_cost_over, assert_generation_share, assert_no_pending_longer_than,
                               pending_durations)

    total = outage.to_document()["cost"]["total"]
    assert_cost_over(outage, at_most=total + 0.01)
    with pytest.raises(AssertionError, match="more than"):
        assert_cost_over(outage, at_most=total / 2)
    share8 = outage.to_document()["cost"]["node_hours"]["by_generation"]["8"] / \
        outage.to_document()["cost"]["node_hours"]["total"]
    assert 0 < share8 < 1
    assert_generation_share(outage, generation="8", at_least=share8 - 0.01)
    with pytest.raises(AssertionError, match="generation 8 has"):
        assert_generation_share(outage, generation="8", at_least=0.99)
    waits = pending_durations(outage)
    assert max(waits.values()) > 60  # during the outage pods waited for the 7th-gen fallback
    assert_no_pending_longer_than(outage, max(waits.values()))
    with pytest.raises(AssertionError, match="pending longer than 60s"):
        assert_no_pending_longer_than(outage, "1m")


# -- StatefulSet, apply, delete ---------------------------------------------------------------------
def statefulset(replicas):
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "db"}},
                     "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [
                         {"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}}}


def test_statefulset_scales_down_from_the_highest_ordinal():
    doc = fake(make_nodepool(), statefulset(5), until="1h", events=["20m scale statefulset/db 2"]).to_document()
    running = sorted(k for k, p in doc["pods"].items() if p["phase"] == "Running")
    assert running == ["default/db-0", "default/db-1"]
    deleted = [e["object"] for e in doc["timeline"] if e["kind"] == "pod.deleting"]
    assert deleted == ["Pod/default/db-4", "Pod/default/db-3", "Pod/default/db-2"]


def test_apply_a_deployment_and_a_nodepool_then_delete_the_nodepool():
    extra = make_deployment("api", replicas=3, requests={"cpu": "1"}).model_dump(by_alias=True, mode="json",
                                                                                exclude_none=True)
    pool2 = make_nodepool("second").model_dump(by_alias=True, mode="json", exclude_none=True)
    result = fake(make_nodepool(), web(2), until="2h", events=[
        {"at": "10m", "apply": [extra, pool2]}, "1h delete nodepool/default"])
    doc = result.to_document()
    api = [k for k in doc["pods"] if k.startswith("default/api-")]
    assert len(api) >= 3
    deleted = [n for n in doc["nodeclaims"] if n["deleted_by"] == "nodepool-deleted"]
    assert deleted and all(n["nodepool"] == "default" and n["deleted_at"] >= 3600 for n in deleted)
    # the pods come back on the second NodePool
    assert all(p["phase"] in ("Running", "Deleted") for p in doc["pods"].values())
    live = [n for n in doc["nodeclaims"] if n["launched"] and n["deleted_at"] is None]
    assert live and {n["nodepool"] for n in live} == {"second"}
    assert result.exit_code == 0


def test_interrupt_by_instance_type_and_zone_on_a_provider_without_interruptions_is_bad_input():
    with pytest.raises(ManifestError, match="does not model interruptions"):
        fake(make_nodepool(), web(1), until="1h", events=["10m interrupt instance_type=x zone=y"])
    with pytest.raises(ManifestError, match="does not model injected capacity changes"):
        fake(make_nodepool(), web(1), until="1h", events=["10m capacity unavailable *:*:*"])


def test_fenceposts():
    from karpy.sim.deployment import resolve_fenceposts

    # deployment/util ResolveFenceposts: surge rounds up, unavailable rounds down, both 0 -> 1
    assert resolve_fenceposts(None, 10) == (3, 2)
    assert resolve_fenceposts({"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}}, 8) == (2, 0)
    assert resolve_fenceposts({"rollingUpdate": {"maxSurge": 0, "maxUnavailable": "10%"}}, 5) == (0, 1)
    assert resolve_fenceposts({"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}}, 5) == (1, 1)


# -- the hooks the disruption controller builds on ------------------------------------------------
def _simulation(*objects, **options):
    from karpy.api.loader import load_manifests
    from karpy.sim.simulation import SimulationOptions
    from karpy.simulator import new_simulation

    return new_simulation(load_manifests(list(objects)), FakeCloudProvider(), SimulationOptions(**options))


def test_periodic_controller_runs_on_changes_and_can_delete_a_nodeclaim():
    sim = _simulation(make_nodepool(), web(3))
    calls: list[float] = []

    deleted: list[str] = []

    def reconcile(now: float) -> None:
        calls.append(now)
        if now >= 600 and not deleted:  # delete the first NodeClaim once (not its replacements)
            for rec in sim.launches:
                if rec.launched is not None and rec.deleting_at is None:
                    deleted.append(rec.name)
                    sim.delete_nodeclaim(rec.name, "test-method")

    ctrl = sim.add_controller("disruption", 10.0, reconcile)
    sim.wake_controller(ctrl, 600.0)
    result = sim.run()
    # ticks on the 10 s grid; skipped while nothing changed, except the requested wake-up at 600 s
    assert calls and all(t % 10 == 0 for t in calls) and 600.0 in calls
    assert len([t for t in calls if 100 < t < 600]) == 0
    first = result.launches[0]
    assert first.deleted_by == "test-method" and first.deleting_at == 600.0 and first.deleted_at >= 605.0
    kinds = [e.kind for e in result.timeline.entries if e.object == f"NodeClaim/{first.name}"]
    assert kinds[-2:] == ["nodeclaim.deleting", "nodeclaim.deleted"]
    # the drained pods came back pending and were placed on a replacement
    assert all(p.spec.node_name and p.spec.node_name != first.name for p in result.pods.values())


def test_reruns_are_byte_identical_across_hash_seeds(tmp_path):
    import os
    import subprocess
    import sys

    script = tmp_path / "run.py"
    script.write_text(
        "import sys, karpy\n"
        "from karpy.api.builders import make_deployment, make_nodepool\n"
        "from karpy.cloudprovider.fake import FakeCloudProvider\n"
        "r = karpy.simulate([make_nodepool(), make_deployment('web', replicas=6, requests={'cpu': '1'})],\n"
        "                   cloud_provider=FakeCloudProvider(), region=None, until='2h',\n"
        "                   events=['10m scale deployment/web 30', '30m rollout deployment/web', '1h scale deployment/web 2'])\n"
        "sys.stdout.write(r.to_json())\n")
    outs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(Path(karpy.__file__).parent.parent)}
        outs.add(subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                                check=True).stdout)
    assert len(outs) == 1


def test_interrupt_by_instance_type_and_zone_hits_the_spot_nodes_of_that_offering(interrupted):
    node, _ = interrupted
    result = aws(DATA / "spot-interruption.yaml", until="1h", events=[
        {"at": "20m", "interrupt": {"instance_type": node["instance_type"], "zone": node["zone"]}}])
    doc = result.to_document()
    hit = [n for n in doc["nodeclaims"] if n["deleted_by"] == "interruption"]
    assert [n["name"] for n in hit] == [node["name"]]
    assert [e["detail"]["message"] for e in doc["timeline"] if e["kind"] == "interruption"] == ["spot_interrupted"]


def test_a_permanent_unavailable_rule_still_settles():
    # nothing will change: the ICE-cache expiry of an offering a rule still fails is no wake-up
    result = aws(DATA / "spot-interruption.yaml", unavailable=["*:*:*"])
    assert result.exit_code == 3
    assert result.to_document()["simulation"]["virtual_seconds"] < 180
