"""Static NodePools end to end on the AWS provider (CreateFleet against moto) with the real
2026-07-20 us-east-1 price table: StaticCapacity on, a pool of 3 m7i.xlarge, a template change that
StaticDrift replaces one budget at a time, and ``scale`` events up and down."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

import karpy
from karpy.api.loader import ManifestError
from karpy.api.scenario import parse_event_line

ROOT = Path(__file__).resolve().parents[2]
NODECLASS = yaml.safe_load((ROOT / "examples" / "generation-preference" / "common" / "ec2nodeclass.yaml").read_text())
M7I_XLARGE_ON_DEMAND = 0.2016  # pricing_data us-east-1 2026-07-20, m7i.xlarge Linux on-demand
GATE = {"StaticCapacity": True}

STATIC = {
    "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "static"},
    "spec": {"replicas": 3, "template": {"metadata": {"labels": {"team": "a"}}, "spec": {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": NODECLASS["metadata"]["name"]},
        "requirements": [
            {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m7i"]},
            {"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": ["xlarge"]},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}]}}},
}


def static(replicas=3, team="a"):
    np = copy.deepcopy(STATIC)
    np["spec"]["replicas"] = replicas
    np["spec"]["template"]["metadata"]["labels"]["team"] = team
    return np


def run(objects, events=(), until="3h", gates=GATE, disruption=True):
    result = karpy.simulate([NODECLASS, *objects], prices="2026-07-20", disruption=disruption, until=until,
                            events=list(events), feature_gates=gates)
    return result, result.to_document()


def live(doc, t):
    return sorted(n["name"] for n in doc["nodeclaims"]
                  if n["instance_type"] and n["created_at"] <= t and (n["deleted_at"] is None or n["deleted_at"] > t))


def test_static_pool_is_kept_at_replicas_drifts_and_scales():
    events = [{"at": "10m", "apply": static(team="b")},
              {"at": "1h", "scale": {"kind": "NodePool", "name": "static", "replicas": 5}},
              {"at": "2h", "scale": {"kind": "NodePool", "name": "static", "replicas": 2}}]
    result, doc = run([static()], events)
    ncs = {n["name"]: n for n in doc["nodeclaims"]}
    first = [n for n in ncs.values() if n["created_at"] == 0]
    # three NodeClaims at t=0 with no pod asking, the cheapest allowed offering at its table price
    assert len(first) == 3 and all(n["instance_type"] == "m7i.xlarge" and n["pods"] == [] for n in first)
    assert all(n["price"] == pytest.approx(M7I_XLARGE_ON_DEMAND) for n in first)
    assert not any("spec.replicas" in w for w in doc["warnings"])
    # the template change drifts them; StaticDrift replaces one per round (default budget 10% -> 1)
    drift = [d for d in doc["disruptions"] if d["method"] == "static-drift"]
    assert [d["candidates"] for d in drift] == [[n["name"]] for n in sorted(first, key=lambda n: n["name"])]
    assert all(d["decision"] == "replace" and len(d["replacements"]) == 1 and d["budget"] == {"static": 1}
               for d in drift)
    assert all(ncs[n["name"]]["deleted_by"] == "drift" for n in first)
    for d in drift:
        (r,) = d["replacements"]
        assert ncs[r]["labels"]["team"] == "b" and ncs[r]["instance_type"] == "m7i.xlarge"
    # never more than one node beyond replicas while drifting; three after the drift settles
    assert all(len(live(doc, t)) <= 4 for t in range(600, 3600, 5))
    assert len(live(doc, 3599)) == 3
    # scale up at 1h: two more; scale down at 2h: three deleted as overprovisioned
    up = [n for n in ncs.values() if n["created_at"] == 3600]
    assert len(up) == 2 and len(live(doc, 3700)) == 5
    down = sorted(n["name"] for n in ncs.values() if n["deleted_by"] == "overprovisioned")
    assert len(down) == 3 and all(ncs[n]["deleted_at"] >= 7200 for n in down)
    assert len(live(doc, 10800 - 1)) == 2
    kinds = [(e["kind"], e["object"], e["detail"].get("replicas")) for e in doc["timeline"]
             if e["kind"] in ("static.provisioned", "static.deprovisioned", "scale")]
    assert kinds == [("static.provisioned", "NodePool/static", 3), ("scale", "NodePool/static", 5),
                     ("static.provisioned", "NodePool/static", 5), ("scale", "NodePool/static", 2),
                     ("static.deprovisioned", "NodePool/static", 2)]
    assert result.simulation.launches and result.cloud_provider is not None


def test_gate_off_static_pool_gets_no_nodes_and_a_warning():
    """Upstream registers the static controllers only with StaticCapacity on; the dynamic provisioner
    skips static pools either way, so a pod that only the static pool could take stays pending."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}
    _, doc = run([static(), pod], until=None, gates={}, disruption=False)
    assert doc["nodeclaims"] == []
    assert any("StaticCapacity feature gate is off" in w and "spec.replicas (static)" in w for w in doc["warnings"])
    assert doc["pods"]["default/p"]["phase"] == "Pending"
    assert doc["pods"]["default/p"]["message"] == "no dynamic nodepools found"


def test_pods_run_on_static_nodes():
    """kube-scheduler binds pending pods to the static nodes once they initialize; Karpenter creates
    nothing for them (the static nodes are existing capacity)."""
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
             "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}
            for i in range(3)]
    _, doc = run([static(replicas=2), *pods], until=None, disruption=False)
    assert len(doc["nodeclaims"]) == 2
    nodes = {n["name"] for n in doc["nodeclaims"]}
    assert all(doc["pods"][f"default/p{i}"]["node"] in nodes for i in range(3))


def test_an_interrupted_static_node_is_replaced():
    result, doc = run([static(replicas=2)], until="1h", disruption=False)
    victim = sorted(n["name"] for n in doc["nodeclaims"])[0]
    _, doc = run([static(replicas=2)], [{"at": "10m", "interrupt": {"node": victim}}], until="1h", disruption=False)
    ncs = {n["name"]: n for n in doc["nodeclaims"]}
    assert ncs[victim]["deleted_by"] == "interruption"
    assert len(ncs) == 3 and len(live(doc, 3599)) == 2
    (new,) = [n for n in ncs.values() if n["created_at"] > 0]
    (deleting,) = [e["t"] for e in doc["timeline"] if e["kind"] == "nodeclaim.deleting" and e["object"] == f"NodeClaim/{victim}"]
    assert new["created_at"] == deleting  # the deletion starts, the static provisioner replaces it at once


def test_node_limit_caps_the_static_pool():
    np = static(replicas=5)
    np["spec"]["limits"] = {"nodes": "3"}
    _, doc = run([np], until=None, disruption=False)
    assert len(doc["nodeclaims"]) == 3


def test_scaling_a_dynamic_nodepool_is_bad_input():
    dynamic = static()
    del dynamic["spec"]["replicas"]
    with pytest.raises(ManifestError, match="Cannot transition NodePool between static"):
        run([dynamic], [{"at": "1m", "scale": {"kind": "NodePool", "name": "static", "replicas": 2}}])


def test_applying_a_dynamic_version_of_a_static_nodepool_is_bad_input():
    dynamic = static()
    del dynamic["spec"]["replicas"]
    with pytest.raises(ManifestError, match="Cannot transition NodePool between static"):
        run([static()], [{"at": "1m", "apply": dynamic}])


def test_event_line_scales_a_nodepool():
    assert parse_event_line("1h scale nodepool/static 5") == {
        "at": "1h", "scale": {"kind": "NodePool", "name": "static", "namespace": "default", "replicas": 5}}


def test_a_not_ready_static_pool_gets_no_nodes_and_a_warning():
    """static/provisioning controller.go: nothing while the NodePool's root condition is not True;
    karpy says so as it does for a dynamic pool that is not ready."""
    np = static(replicas=2)
    np["status"] = {"conditions": [{"type": "Ready", "status": "False", "reason": "NodeClassNotReady",
                                    "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    _, doc = run([np], until=None, disruption=False)
    assert doc["nodeclaims"] == []
    assert 'NodePool "static" is not ready and was ignored (its Ready condition is not True)' in doc["warnings"]


def test_cli_gate_and_scale_event(tmp_path):
    """karpy simulate --feature-gates StaticCapacity=true --event '20m scale nodepool/static 1' -o json."""
    import json

    from click.testing import CliRunner

    from karpy.cli import cli

    path = tmp_path / "static.yaml"
    path.write_text(yaml.safe_dump_all([NODECLASS, static(replicas=2)]))
    result = CliRunner().invoke(cli, ["simulate", str(path), "--prices", "2026-07-20", "--feature-gates",
                                      "StaticCapacity=true", "--until", "1h", "--event", "20m scale nodepool/static 1",
                                      "-o", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert len(doc["nodeclaims"]) == 2
    assert [n["deleted_by"] for n in doc["nodeclaims"]].count("overprovisioned") == 1
    assert "spec.replicas" not in result.stderr


def test_expired_static_nodes_are_replaced():
    """expireAfter deletes a static NodeClaim (forcefully, not budgeted); the static provisioning
    controller replaces it at the instant its deletion starts."""
    np = static(replicas=2)
    np["spec"]["template"]["spec"]["expireAfter"] = "30m"
    _, doc = run([np], until="50m")
    ncs = doc["nodeclaims"]
    first = [n for n in ncs if n["created_at"] == 0]
    assert len(first) == 2 and all(n["deleted_by"] == "expiration" for n in first)
    starts = sorted(e["t"] for e in doc["timeline"] if e["kind"] == "nodeclaim.deleting"
                    and e["object"] in {f"NodeClaim/{n['name']}" for n in first})
    assert sorted(n["created_at"] for n in ncs if n["created_at"] > 0) == starts
    assert all(t >= 1800 for t in starts) and len(live(doc, 2999)) == 2


def test_a_failed_static_launch_is_retried_when_capacity_comes_back():
    """An outage of the pool's only offering: the launches fail (insufficient capacity) and are
    retried at the provider's next capacity change, not at the same instant forever."""
    result = karpy.simulate([NODECLASS, static(replicas=2)], prices="2026-07-20", until="30m", feature_gates=GATE,
                            unavailable=["m7i.xlarge:*:on-demand:until=600"])
    doc = result.to_document()
    failed = [n for n in doc["nodeclaims"] if n["instance_type"] is None]
    ok = [n for n in doc["nodeclaims"] if n["instance_type"] == "m7i.xlarge"]
    assert failed and all(n["error"] for n in failed)
    assert len(ok) == 2 and all(n["created_at"] >= 600 for n in ok)
    assert len(doc["nodeclaims"]) < 20  # a handful of retries, not a loop


# -- the run's bound on a static NodePool's nodes (an absurd replicas was an endless 11 GB run) ------

def _bounded(objects, events=(), gates=GATE, max_pods=10):
    return karpy.simulate([NODECLASS, *objects], prices="2026-07-20", until="1h", events=list(events),
                          feature_gates=gates, max_pods=max_pods)


def test_replicas_past_the_bound_are_bad_input_naming_the_nodepool():
    with pytest.raises(ManifestError) as err:
        _bounded([static(replicas=11)])
    assert str(err.value) == ('<dict 2>: document 1 (NodePool "static"): spec.replicas: 11 static NodeClaims '
                              '(spec.replicas, within limits.nodes) '
                              "are more than karpy's limit of 10 per run (--max-pods bounds a static NodePool's nodes "
                              "as it bounds pods); raise it with --max-pods (library: max_pods=)")


def test_limits_nodes_caps_the_count_and_the_gate_off_acts_on_nothing():
    capped = static(replicas=1_000_000)
    capped["spec"]["limits"] = {"nodes": "3"}
    doc = _bounded([capped]).to_document()
    assert len([n for n in doc["nodeclaims"] if n["nodepool"] == "static"]) == 3  # upstream's node limit
    off = _bounded([static(replicas=1_000_000)], gates={})
    assert off.to_document()["nodeclaims"] == []
    assert any("spec.replicas" in w and "StaticCapacity" in w for w in off.warnings)


def test_a_scale_or_apply_event_past_the_bound_names_the_event():
    with pytest.raises(ManifestError) as err:
        _bounded([static(replicas=2)], ["10m scale nodepool/static 50"])
    assert str(err.value).startswith("--event '10m scale nodepool/static 50': scale.replicas: 50 static NodeClaims")
    with pytest.raises(ManifestError) as err:
        _bounded([static(replicas=2)], [{"at": "10m", "apply": static(replicas=40)}])
    assert str(err.value).startswith('events[0]: apply: NodePool "static": 40 static NodeClaims')
    assert len(_bounded([static(replicas=2)], ["10m scale nodepool/static 10"]).to_document()["nodeclaims"]) == 10


def test_the_cli_says_a_million_replicas_in_one_line_at_once(tmp_path):
    from click.testing import CliRunner

    from karpy.cli import cli

    path = tmp_path / "pool.yaml"
    path.write_text(yaml.safe_dump_all([NODECLASS, static(replicas=1_000_000)]))
    res = CliRunner().invoke(cli, ["simulate", str(path), "--feature-gates", "StaticCapacity=true"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    (line,) = [ln for ln in res.output.splitlines() if ln.startswith("karpy:")]
    assert line.startswith(f'karpy: {path}: document 2 (NodePool "static"): spec.replicas: 1,000,000 static NodeClaims')
