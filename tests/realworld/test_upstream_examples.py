"""Upstream example repositories run end to end: launches, costs and warnings.

Sources (see realworld_helpers.py; each data file names its file and commit in its first line):
aws/karpenter-provider-aws 1d92708 ``examples/``, aws-samples/karpenter-blueprints 529b88c,
kubernetes/examples 279e8e4. Prices: the bundled us-east-1 table of 2026-07-20.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from realworld_helpers import BLUEPRINTS_CLUSTER, docs, launched, on_demand, pending, scale  # noqa: E402

NOT_ACTED_DISRUPTION = "NodePool fields not acted on (disruption is off; run with --disruption)"
BP = "blueprints/blueprints"


def _assert_cost(doc: dict) -> None:
    """The document's cost is the sum of its launched NodeClaims' prices, on-demand at table price."""
    ncs = launched(doc)
    assert doc["cost_per_hour"] == pytest.approx(sum(nc["price"] for nc in ncs), abs=1e-6)
    for nc in ncs:
        if nc["capacity_type"] == "on-demand":
            assert nc["price"] == pytest.approx(on_demand(nc["instance_type"]), abs=1e-6), nc["name"]


# --------------------------------------------------------------------- aws/karpenter-provider-aws 1d92708

def test_general_purpose_inflate_five(run) -> None:
    """examples/v1/general-purpose.yaml + examples/workloads/inflate.yaml scaled to 5."""
    result, doc = run(scale(docs("aws/examples/v1/general-purpose.yaml", "aws/examples/workloads/inflate.yaml"),
                            "inflate", 5))
    assert result.exit_code == 0
    (nc,) = launched(doc)
    assert nc["nodepool"] == "general-purpose" and nc["capacity_type"] == "on-demand"
    assert nc["labels"]["karpenter.k8s.aws/instance-category"] in ("c", "m", "r")
    assert int(nc["labels"]["karpenter.k8s.aws/instance-generation"]) > 2
    assert nc["instance_type"] == "c6a.2xlarge" and len(nc["pods"]) == 5
    _assert_cost(doc)
    assert doc["prices"]["spot"] == "modelled" and doc["prices"]["proxy"] is False


def test_spot_pool_spot_workload_is_spot_and_labelled_modelled(run) -> None:
    """examples/v1/spot.yaml + examples/workloads/spot.yaml (nodeSelector capacity-type spot) x3."""
    result, doc = run(scale(docs("aws/examples/v1/spot.yaml", "aws/examples/workloads/spot.yaml"), "spot", 3))
    assert result.exit_code == 0
    (nc,) = launched(doc)
    assert nc["capacity_type"] == "spot" and nc["fleet"]["allocation_strategy"] == "price-capacity-optimized"
    assert 0 < nc["price"] < on_demand(nc["instance_type"])
    assert doc["prices"]["spot"] == "modelled"
    _assert_cost(doc)


def test_cpu_limit_100_leaves_the_rest_pending_with_the_limit_message(run) -> None:
    """examples/v1/100-cpu-limit.yaml (limits.cpu 100) + inflate x120 (1 cpu each)."""
    result, doc = run(scale(docs("aws/examples/v1/100-cpu-limit.yaml", "aws/examples/workloads/inflate.yaml"),
                            "inflate", 120))
    assert result.exit_code == 3
    ncs = launched(doc)
    cpus = sum(int(nc["labels"]["karpenter.k8s.aws/instance-cpu"]) for nc in ncs)
    assert cpus <= 100
    waiting = pending(doc)
    assert len(waiting) == 120 - sum(len(nc["pods"]) for nc in ncs) > 0
    assert set(waiting.values()) == {"all available instance types exceed limits for nodepool (NodePool=limitcpu100)"}
    _assert_cost(doc)


def test_multiple_arch_pool_arm64_workload(run) -> None:
    """examples/v1/multiple-arch.yaml + examples/workloads/arm64.yaml x2 (nodeSelector arm64)."""
    result, doc = run(scale(docs("aws/examples/v1/multiple-arch.yaml", "aws/examples/workloads/arm64.yaml"),
                            "arm64", 2))
    assert result.exit_code == 0
    (nc,) = launched(doc)
    assert nc["labels"]["kubernetes.io/arch"] == "arm64" and len(nc["pods"]) == 2
    _assert_cost(doc)


def test_windows_2022_price_says_it_excludes_the_licence(run) -> None:
    """examples/v1/windows-2022.yaml + a Windows pod (nodeSelector kubernetes.io/os: windows)."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "iis"},
           "spec": {"nodeSelector": {"kubernetes.io/os": "windows"},
                    "containers": [{"name": "iis", "image": "mcr.microsoft.com/windows/servercore/iis",
                                    "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}}
    result, doc = run(docs("aws/examples/v1/windows-2022.yaml") + [pod])
    assert result.exit_code == 0
    (nc,) = launched(doc)
    assert nc["labels"]["kubernetes.io/os"] == "windows"
    assert nc["price"] == pytest.approx(on_demand(nc["instance_type"]))  # the Linux price, as upstream ranks
    assert doc["prices"]["operating_system"] == "Linux"
    assert any(w.startswith("1 NodeClaim runs Windows: $/h is the Linux on-demand price without the Windows "
                            "licence") and nc["name"] in w for w in doc["warnings"])


def test_min_values_family_keeps_five_families_in_the_nodeclaim(run) -> None:
    """examples/v1/min-values-family.yaml (instance-family Exists minValues 5) + inflate x3."""
    result, doc = run(scale(docs("aws/examples/v1/min-values-family.yaml", "aws/examples/workloads/inflate.yaml"),
                            "inflate", 3))
    assert result.exit_code == 0
    (nc,) = launched(doc)
    fam = next(r for r in nc["requirements"] if r["key"] == "karpenter.k8s.aws/instance-family")
    assert fam["minValues"] == 5
    types = next(r for r in nc["requirements"] if r["key"] == "node.kubernetes.io/instance-type")["values"]
    assert len({t.split(".")[0] for t in types}) >= 5
    _assert_cost(doc)


def test_zone_spread_puts_one_pod_per_zone(run) -> None:
    """examples/v1/general-purpose.yaml + examples/workloads/spread-zone.yaml x6 (maxSkew 1, zone)."""
    result, doc = run(scale(docs("aws/examples/v1/general-purpose.yaml", "aws/examples/workloads/spread-zone.yaml"),
                            "zone-spread", 6))
    assert result.exit_code == 0
    ncs = launched(doc)
    assert sorted(nc["zone"] for nc in ncs) == [f"us-east-1{z}" for z in "abcdef"]
    assert all(len(nc["pods"]) == 1 for nc in ncs)
    _assert_cost(doc)


def test_max_node_lifetime_fields_are_warned_not_dropped(run) -> None:
    """examples/v1/max-node-lifetime.yaml (expireAfter, terminationGracePeriod, disruption) + inflate x2."""
    result, doc = run(scale(docs("aws/examples/v1/max-node-lifetime.yaml", "aws/examples/workloads/inflate.yaml"),
                            "inflate", 2))
    assert result.exit_code == 0 and len(launched(doc)) == 1
    assert "NodePool fields not acted on (expiration is off; run with --disruption): " \
        "spec.template.spec.expireAfter (default)" in doc["warnings"]
    # node termination (terminationGracePeriod) runs in every run: interruptions drain through it
    assert not any("terminationGracePeriod" in w for w in doc["warnings"])
    _assert_cost(doc)


def test_max_node_lifetime_with_disruption_acts_on_every_field(run) -> None:
    """The same manifests with the disruption controller on: expireAfter, terminationGracePeriod and
    the disruption block are acted on, so no "not acted on" warning names them."""
    result, doc = run(scale(docs("aws/examples/v1/max-node-lifetime.yaml", "aws/examples/workloads/inflate.yaml"),
                            "inflate", 2), disruption=True, until="10m")
    assert result.exit_code == 0 and len(launched(doc)) == 1
    assert not any(w.startswith("NodePool fields not acted on") for w in doc["warnings"]), doc["warnings"]


# -------------------------------------------------------------- aws-samples/karpenter-blueprints 529b88c

#: NodeOverlays apply only with Karpenter's NodeOverlay feature gate on (off by default upstream)
OVERLAYS_ON = {"NodeOverlay": True}

def test_node_overlay_gpu_slices_launch_one_single_gpu_instance(run) -> None:
    """blueprints/node-overlay: gpu-nodeclass, gpu-nodepool, node-overlay-gpu-slices (nvidia.com/gpu: 4 on
    1-GPU types), workload-gpu-slices (4 pods x nvidia.com/gpu 1): one 1-GPU xlarge, not a 4-GPU 12xlarge."""
    result, doc = run(docs(*[f"{BP}/node-overlay/{f}.yaml" for f in
                             ("gpu-nodeclass", "gpu-nodepool", "node-overlay-gpu-slices", "workload-gpu-slices")]),
                      feature_gates=OVERLAYS_ON)
    assert result.exit_code == 0
    (nc,) = launched(doc)
    assert nc["labels"]["karpenter.k8s.aws/instance-gpu-count"] == "1"
    assert nc["instance_type"].endswith(".xlarge") and len(nc["pods"]) == 4
    assert not any("NodeOverlay" in w for w in doc["warnings"])  # valid upstream: nvidia.com/gpu is not restricted
    _assert_cost(doc)


def test_node_overlay_generation_penalties_pick_eighth_generation(run) -> None:
    """blueprints/node-overlay/node-overlay-generation.yaml (+45/30/15 % on gen 5/6/7) + workload-generation
    on the blueprints cluster's default NodePool: the 8th generation wins."""
    result, doc = run(docs(BLUEPRINTS_CLUSTER, f"{BP}/node-overlay/node-overlay-generation.yaml",
                           f"{BP}/node-overlay/workload-generation.yaml"), feature_gates=OVERLAYS_ON)
    assert result.exit_code == 0
    (nc,) = launched(doc)
    assert nc["labels"]["karpenter.k8s.aws/instance-generation"] == "8"
    assert nc["labels"]["kubernetes.io/arch"] == "arm64" and nc["capacity_type"] == "on-demand"
    assert nc["price"] == pytest.approx(on_demand(nc["instance_type"]))  # the real price, not the overlaid one
    assert any(w.startswith(NOT_ACTED_DISRUPTION) for w in doc["warnings"])


def test_od_spot_split_spreads_over_both_pools(run) -> None:
    """blueprints/od-spot-split/od-spot.yaml (capacity-spread 1 on-demand, 2-5 spot) + workload.yaml x10."""
    result, doc = run(docs(f"{BP}/od-spot-split/od-spot.yaml", f"{BP}/od-spot-split/workload.yaml"))
    assert result.exit_code == 0
    ncs = launched(doc)
    by_pool = {p: sum(len(nc["pods"]) for nc in ncs if nc["nodepool"] == p) for p in ("node-od", "node-spot")}
    assert by_pool == {"node-od": 2, "node-spot": 8}  # maxSkew 1 over 5 capacity-spread values
    assert {nc["capacity_type"] for nc in ncs if nc["nodepool"] == "node-spot"} == {"spot"}
    _assert_cost(doc)
    assert ("NodePool fields not acted on (disruption is off; run with --disruption): spec.disruption.consolidationPolicy "
            "(node-od, node-spot), spec.disruption.consolidateAfter (node-od, node-spot)") in doc["warnings"]


def test_od_spot_split_auto_mode_is_rejected_not_substituted(run) -> None:
    """blueprints/od-spot-split/od-spot-automode.yaml: nodeClassRef eks.amazonaws.com/NodeClass."""
    result, doc = run(docs(f"{BP}/od-spot-split/od-spot-automode.yaml", f"{BP}/od-spot-split/workload.yaml"))
    assert result.exit_code == 3 and doc["nodeclaims"] == []
    assert any(w.startswith("NodePool node-od: nodeClassRef eks.amazonaws.com/NodeClass is not supported")
               and "EKS Auto Mode" in w for w in doc["warnings"])
    assert set(pending(doc).values()) == {"no dynamic nodepools found"}  # upstream's words; the warning says why


def test_graviton_workload_on_the_blueprints_default_pool(run) -> None:
    """blueprints/graviton/workload-graviton.yaml (arm64) on cluster/terraform/karpenter.tf's default NodePool
    (instance-cpu In 4 8 16 32 48 64, spot and on-demand): one spot Graviton node."""
    result, doc = run(docs(BLUEPRINTS_CLUSTER, f"{BP}/graviton/workload-graviton.yaml"))
    assert result.exit_code == 0
    (nc,) = launched(doc)
    assert nc["labels"]["kubernetes.io/arch"] == "arm64" and nc["capacity_type"] == "spot"
    assert nc["labels"]["karpenter.k8s.aws/instance-cpu"] in ("4", "8", "16", "32", "48", "64")
    assert len(nc["pods"]) == 5 and doc["prices"]["spot"] == "modelled"
    _assert_cost(doc)


def test_static_nodepool_replicas_is_warned(run) -> None:
    """blueprints/static-nodepool/static-nodepool.yaml (spec.replicas: 1) + static-nodeclass.yaml."""
    result, doc = run(docs(f"{BP}/static-nodepool/static-nodepool.yaml", f"{BP}/static-nodepool/static-nodeclass.yaml"))
    assert result.exit_code == 0 and doc["nodeclaims"] == []
    assert ("NodePool fields not acted on (the StaticCapacity feature gate is off (Karpenter's default), so static "
            "NodePools get no nodes; pass --feature-gates StaticCapacity=true): spec.replicas (gpu-static)"
            in doc["warnings"])


def test_static_nodepool_with_the_static_capacity_gate_keeps_one_g6e(run) -> None:
    """blueprints/static-nodepool (replicas: 1, limits.nodes: 2, one type g6e.8xlarge, spot or on-demand)
    with --feature-gates StaticCapacity=true: one NodeClaim, created at t=0 with no pod asking for it,
    launched by CreateFleet as the cheapest of the allowed offerings; the replicas warning is gone."""
    result, doc = run(docs(f"{BP}/static-nodepool/static-nodepool.yaml", f"{BP}/static-nodepool/static-nodeclass.yaml"),
                      feature_gates={"StaticCapacity": True})
    assert result.exit_code == 0
    (nc,) = launched(doc)
    assert nc["nodepool"] == "gpu-static" and nc["instance_type"] == "g6e.8xlarge" and nc["pods"] == []
    assert nc["labels"]["capacity-type"] == "gpu-static" and nc["created_at"] == 0
    assert not any("spec.replicas" in w for w in doc["warnings"])
    assert [e["detail"]["nodeclaims"] for e in doc["timeline"] if e["kind"] == "static.provisioned"] == [[nc["name"]]]


def test_batch_jobs_share_one_node_with_the_deployment(run) -> None:
    """blueprints/batch-jobs/workloads-evicted.yaml (a Deployment + two Jobs, on-demand) on the default pool."""
    result, doc = run(docs(BLUEPRINTS_CLUSTER, f"{BP}/batch-jobs/workloads-evicted.yaml"))
    assert result.exit_code == 0
    ncs = launched(doc)
    assert {nc["capacity_type"] for nc in ncs} == {"on-demand"}
    pods = sorted(p for nc in ncs for p in nc["pods"])
    assert [p.split("/")[1].rsplit("-", 1)[0] for p in pods if "job" in p] == ["2-min-job", "5-min-job"]
    _assert_cost(doc)


# --------------------------------------------------------------------------- kubernetes/examples 279e8e4

def test_guestbook_go_replication_controllers_are_loaded(run) -> None:
    """web/guestbook-go: guestbook (ReplicationController x3), redis-master (Deployment x1), redis-replica
    (ReplicationController x2), guestbook-service (Service: loaded, its selector feeds default spreading)."""
    result, doc = run(docs(BLUEPRINTS_CLUSTER, *[f"k8s-examples/web/guestbook-go/{f}.yaml" for f in
                                                 ("guestbook-controller", "redis-master-controller",
                                                  "redis-replica-controller", "guestbook-service")]))
    assert result.exit_code == 0
    owners = sorted(v["owner"] for v in doc["pods"].values())
    assert owners == (["Deployment redis-master"] + ["ReplicationController guestbook"] * 3
                      + ["ReplicationController redis-replica"] * 2)
    assert not [w for w in doc["warnings"] if w.startswith("skipped")]  # v1 Service is modelled (#12)
    _assert_cost(doc)


def test_guestbook_go_evicted_replication_controller_replicas_are_recreated(run) -> None:
    """web/guestbook-go guestbook-controller.yaml (ReplicationController x3): the spot node its pods run
    on is interrupted at 5m; the RC replaces every evicted replica (upstream's replication manager is
    the ReplicaSet controller), Karpenter launches a node for them; ``scale rc/guestbook 5`` at 20m
    adds two more."""
    files = docs(BLUEPRINTS_CLUSTER, "k8s-examples/web/guestbook-go/guestbook-controller.yaml")
    _, before = run(files)
    [first] = launched(before)
    originals = sorted(before["pods"])
    result, doc = run(files, events=[f"5m interrupt node={first['name']}", "20m scale replicationcontroller/guestbook 5"],
                      until="30m")
    assert result.exit_code == 0
    pods = doc["pods"]
    assert all(pods[k]["phase"] == "Deleted" and pods[k]["node"] == first["name"] for k in originals)
    replacements = sorted(k for k in pods if k not in originals)
    assert len(replacements) == 5
    assert all(pods[k]["phase"] == "Running" and pods[k]["owner"] == "ReplicationController guestbook"
               for k in replacements)
    [gone, second] = doc["nodeclaims"]
    assert (gone["name"], gone["deleted_by"]) == (first["name"], "interruption")
    assert second["deleted_by"] is None and {pods[k]["node"] for k in replacements} == {second["name"]}
    created = [(e["t"], e["object"].removeprefix("Pod/")) for e in doc["timeline"] if e["kind"] == "pod.created"]
    assert sorted(k for t, k in created if t == 0) == originals
    recreated = sorted(k for t, k in created if 300 <= t < 1200)
    assert len(recreated) == 3 and set(recreated) < set(replacements)
    assert len([k for t, k in created if t >= 1200]) == 2
    # what runs at the end is the replacement node; each node is paid for the time it ran
    assert doc["cost_per_hour"] == pytest.approx(second["price"], abs=1e-6)
    for nc in (gone, second):
        ran = (nc["deleted_at"] or doc["cost"]["horizon"]) - nc["launched_at"]
        assert doc["cost"]["by_nodeclaim"][nc["name"]]["node_hours"] == pytest.approx(ran / 3600, abs=1e-5)


def test_guestbook_all_in_one_services_are_grouped_in_one_warning(run) -> None:
    """web/guestbook/all-in-one/guestbook-all-in-one.yaml: 3 Services and 3 Deployments."""
    result, doc = run(docs(BLUEPRINTS_CLUSTER, "k8s-examples/web/guestbook/all-in-one/guestbook-all-in-one.yaml"))
    assert result.exit_code == 0
    assert len(doc["pods"]) == 6 and len(launched(doc)) == 1
    assert [w for w in doc["warnings"] if w.startswith("skipped")] == []  # v1 Service is modelled (#12)


def test_cassandra_statefulset(run) -> None:
    """databases/cassandra: cassandra-statefulset.yaml (StatefulSet x3 + StorageClass), cassandra-service.yaml."""
    result, doc = run(docs(BLUEPRINTS_CLUSTER, "k8s-examples/databases/cassandra/cassandra-statefulset.yaml",
                           "k8s-examples/databases/cassandra/cassandra-service.yaml"))
    # StorageClass and Service are modelled since volume topology (#12): the claim templates name no
    # storage class and no class is the default, so upstream's provisioner ignores the pods
    # (provisioner.go volume validation) -- they stay pending with its message, nothing launches
    assert result.exit_code == 3
    assert sorted(doc["pods"]) == ["default/cassandra-0", "default/cassandra-1", "default/cassandra-2"]
    assert {p["message"] for p in doc["pods"].values()} == {
        f"ignoring pod, unbound pvc must define a storage class (PersistentVolumeClaim=default/"
        f"cassandra-data-cassandra-{i}, StorageClass=)" for i in range(3)}
    assert not [w for w in doc["warnings"] if w.startswith("skipped")]


# ------------------------------------------------------------------------------- explain: one truth

def test_explain_placement_agrees_with_the_pods_node(run) -> None:
    """blueprints od-spot-split (10 pods, several NodeClaims): the explain block's placement names the
    node the pod is bound to (``pods[].node``) and keeps Karpenter's plan apart."""
    from karpy.explain import explain_pod, render_explain

    result, doc = run(docs(f"{BP}/od-spot-split/od-spot.yaml", f"{BP}/od-spot-split/workload.yaml"))
    for key, entry in doc["explain"]["pods"].items():
        pl = entry["placement"]
        assert pl["bound_node"] == doc["pods"][key]["node"], key
        planned = pl.get("nodeclaim") or pl.get("planned_node")
        assert pl["as_planned"] is (planned == pl["bound_node"])
        assert "node" not in pl  # no second, disagreeing "node"
    key = next(iter(doc["explain"]["pods"]))
    text = render_explain(explain_pod(result, key))
    assert f"Pod {key}  Running  on node {doc['pods'][key]['node']}" in text
    assert "Karpenter's plan, provisioning pass" in text
    moved = {"kind": "pod", "pod": "default/a", "phase": "Running", "node": "n2",
             "placement": {"pass": 1, "time": 1.0, "passes_tried": 1, "outcome": "new-nodeclaim", "nodeclaim": "n1",
                           "bound_node": "n2", "as_planned": False}}
    assert ("  kube-scheduler bound it to node n2 instead (Karpenter plans, kube-scheduler binds)"
            in render_explain(moved).splitlines())
