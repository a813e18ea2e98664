"""A real cluster's state, read as Karpenter, the AWS provider and the kubelet read it (issue #31).

Shapes: aws-samples/karpenter-blueprints ``blueprints/stateful`` (an EBS CSI StorageClass whose
``allowedTopologies`` use ``topology.ebs.csi.aws.com/zone``, and a StatefulSet with a
volumeClaimTemplate; the README substitutes ``<<AVAILABILITY_ZONE>>>`` with ``sed``, done here on the
loaded documents) on the blueprints cluster's default NodePool and EC2NodeClass; aws/karpenter-provider-aws
1d92708 ``examples/workloads/inflate.yaml`` given the legacy selector ``beta.kubernetes.io/arch: amd64``
that older manifests still carry (coreos/flannel v0.11.0 ``Documentation/kube-flannel.yml``'s
``nodeSelector``; kubernetes/dashboard's ``recommended.yaml`` before v2).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from realworld_helpers import BLUEPRINTS_CLUSTER, docs, launched, on_demand, pending  # noqa: E402

STATEFUL = "blueprints/blueprints/stateful"


def _stateful(zone: str = "us-east-1b") -> list[dict[str, Any]]:
    documents = docs(BLUEPRINTS_CLUSTER, f"{STATEFUL}/storage.yaml", f"{STATEFUL}/workload.yaml")
    for d in documents:  # the README's sed of <<AVAILABILITY_ZONE>>>
        for term in d.get("allowedTopologies", ()):
            for expr in term["matchLabelExpressions"]:
                expr["values"] = [zone]
    return documents


def test_ebs_csi_zone_label_is_an_alias_of_the_zone(run) -> None:
    """aws pkg/operator/operator.go init(): ``topology.ebs.csi.aws.com/zone`` normalises to
    ``topology.kubernetes.io/zone``, so Karpenter launches in the class's zone (main: every pod
    pending with 'does not have known values (typo of "topology.kubernetes.io/zone"?)')."""
    result, doc = run(_stateful())
    nodes = launched(doc)
    assert nodes and {nc["zone"] for nc in nodes} == {"us-east-1b"}, pending(doc)
    assert not any("does not have known values" in (p.get("message") or "") for p in doc["pods"].values())


def test_stateful_blueprint_pods_bind_to_the_node_launched_for_them(run) -> None:
    """The node carries the EBS CSI node plugin's ``topology.ebs.csi.aws.com/zone`` label, so
    kube-scheduler's VolumeBinding finds the class's allowedTopologies satisfied and binds."""
    result, doc = run(_stateful())
    assert pending(doc) == {}
    assert {p["node"] for p in doc["pods"].values()} <= {nc["name"] for nc in launched(doc)}
    node = next(iter(result.simulation.nodes.values()))
    assert node.metadata.labels["topology.ebs.csi.aws.com/zone"] == "us-east-1b"


def test_legacy_beta_arch_selector_binds_to_the_launched_node(run) -> None:
    """Karpenter normalises ``beta.kubernetes.io/arch`` and launches; the Node carries the kubelet's
    beta twins (kubelet_node_status.go initialNode) and the cloud node controller's, so
    kube-scheduler binds the pod (main: a paid node and a pending pod)."""
    documents = docs("aws/examples/v1/general-purpose.yaml", "aws/examples/workloads/inflate.yaml")
    inflate = next(d for d in documents if d["kind"] == "Deployment")
    inflate["spec"]["template"]["spec"]["nodeSelector"] = {"beta.kubernetes.io/arch": "amd64"}
    result, doc = run(documents)
    assert pending(doc) == {}
    (nc,) = launched(doc)
    (pod,) = doc["pods"].values()
    assert pod["node"] == nc["name"] and pod["phase"] == "Running"
    labels = result.simulation.nodes[nc["name"]].metadata.labels
    for ga, beta in (("kubernetes.io/arch", "beta.kubernetes.io/arch"), ("kubernetes.io/os", "beta.kubernetes.io/os"),
                     ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"),
                     ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"),
                     ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")):
        assert labels[beta] == labels[ga], beta
    assert labels["kubernetes.io/hostname"] == nc["name"] and labels["karpenter.sh/registered"] == "true"


def _consolidation_run(run, annotations: dict[str, str] | None) -> dict[str, Any]:
    """general-purpose + inflate x10, scaled to 1 at 5m, the disruption controller on for 30m."""
    documents = docs("aws/examples/v1/general-purpose.yaml", "aws/examples/workloads/inflate.yaml")
    for d in documents:
        if d["kind"] == "Deployment":
            d["spec"]["replicas"] = 10
        if d["kind"] == "NodePool" and annotations is not None:
            d["spec"]["template"].setdefault("metadata", {})["annotations"] = annotations
    _, doc = run(documents, disruption=True, until="30m", events=["5m scale deployment/inflate 1"])
    return doc


def test_nodepool_template_do_not_disrupt_protects_its_nodes(run) -> None:
    """Karpenter docs, concepts/disruption.md "Node-Level Controls" (Example: Disable Disruption on a
    NodePool): ``spec.template.metadata.annotations: karpenter.sh/do-not-disrupt: "true"`` -- registration.go
    syncNode copies it onto the Node, where the candidate reads it (main: the nodes were consolidated)."""
    base = _consolidation_run(run, None)
    assert any(nc.get("deleted_by") for nc in base["nodeclaims"]), "the scenario consolidates without the annotation"
    doc = _consolidation_run(run, {"karpenter.sh/do-not-disrupt": "true"})
    assert [nc["name"] for nc in doc["nodeclaims"] if nc.get("deleted_by")] == []
    assert len(launched(doc)) == 1  # no replacement either (base: replaced by a smaller node)


# ---------------------------------------------------------------- NodeClaims in a cluster dump

#: data/dumps/eks-karpenter-nodes.yaml (see its header): two general-purpose m5.xlarge nodes with their
#: NodeClaims, one `web` pod each, and a node with karpenter.sh/nodepool but no NodeClaim
KARPENTER_DUMP = "dumps/eks-karpenter-nodes.yaml"
CLAIMED = ["ip-10-0-101-23.ec2.internal", "ip-10-0-102-45.ec2.internal"]
ORPHAN = "ip-10-0-103-67.ec2.internal"


def test_dumped_nodeclaims_are_tied_to_their_nodes_and_priced(run) -> None:
    """state/cluster.go ties a NodeClaim to its Node by providerID: both dumped NodeClaims are
    Karpenter's capacity, priced from their instance type, zone and capacity type (main: dropped)."""
    result, doc = run(docs(KARPENTER_DUMP, "aws/examples/v1/general-purpose.yaml"))
    assert [nc["name"] for nc in doc["nodeclaims"]] == CLAIMED
    assert {nc["price"] for nc in doc["nodeclaims"]} == {on_demand("m5.xlarge")}
    assert doc["cost_per_hour"] >= 2 * on_demand("m5.xlarge") - 1e-9
    assert {p["node"] for p in doc["pods"].values()} == set(CLAIMED)
    # listed under its Node's name (the name its pods are bound to); the NodeClaim keeps its own
    assert [r.launched.metadata.name for r in result.simulation.launches] == ["general-purpose-8xk2p",
                                                                              "general-purpose-q7wzn"]
    (warning,) = [w for w in doc["warnings"] if w.startswith(f"Node {ORPHAN} ")]
    assert "carries karpenter.sh/nodepool=general-purpose but no NodeClaim" in warning and "unmanaged" in warning


def test_dumped_nodeclaims_are_consolidation_candidates(run) -> None:
    """Managed (a StateNode with a NodeClaim): consolidated onto the free capacity of the
    unmanaged node, which itself is never a candidate (main: no candidate at all)."""
    _, doc = run(docs(KARPENTER_DUMP, "aws/examples/v1/general-purpose.yaml"), disruption=True, until="30m")
    assert {nc["name"]: nc["deleted_by"] for nc in doc["nodeclaims"]} == dict.fromkeys(CLAIMED, "consolidation")
    running = [p for p in doc["pods"].values() if p["phase"] == "Running"]
    assert len(running) == 2 and {p["node"] for p in running} == {ORPHAN}
    assert all(d["method"] != "drift" for d in doc["disruptions"])  # the dump's hashes/AMI are not karpy's digits
    assert not [e for e in doc["timeline"] if e["kind"] == "nodeclaim.delete-error"]  # real instances, terminated


def test_dumped_nodeclaims_count_in_a_static_nodepools_replicas(run) -> None:
    """A static NodePool (spec.replicas: 2) whose two NodeClaims are in the dump launches nothing
    (main: two more nodes)."""
    documents = docs(KARPENTER_DUMP, "aws/examples/v1/general-purpose.yaml")
    next(d for d in documents if d["kind"] == "NodePool")["spec"]["replicas"] = 2
    _, doc = run(documents, feature_gates={"StaticCapacity": True})
    assert [nc["name"] for nc in doc["nodeclaims"]] == CLAIMED


# ------------------------------------------------------------------------------- said out loud

def test_no_compatible_instance_types_event_is_a_warning(run) -> None:
    """aws examples/v1/general-purpose.yaml asking for ``instance-generation Gt 20``: upstream skips
    the NodePool with a NoCompatibleInstanceTypes Warning event; karpy says it in ``warnings`` (and
    so on stderr), not only in explain output (main: a pending pod and no word)."""
    documents = docs("aws/examples/v1/general-purpose.yaml", "aws/examples/workloads/inflate.yaml")
    pool = next(d for d in documents if d["kind"] == "NodePool")
    for r in pool["spec"]["template"]["spec"]["requirements"]:
        if r["key"] == "karpenter.k8s.aws/instance-generation":
            r["values"] = ["20"]
    _, doc = run(documents)
    (warning,) = [w for w in doc["warnings"] if "NoCompatibleInstanceTypes" in w]
    assert warning.startswith('NodePool "general-purpose": NoCompatibleInstanceTypes: NodePool requirements '
                              "filtered out all compatible available instance types (")
    # the reason lists the NodePool's requirements, not the registered/initialized keys upstream adds to
    # the template only for DaemonSet simulation (nodeclaimtemplate.go schedulingSimulationKeys)
    assert "karpenter.k8s.aws/instance-generation Exists >=21" in warning and "karpenter.sh/nodepool In" in warning
    assert "karpenter.sh/initialized" not in warning and "karpenter.sh/registered" not in warning


def test_table_lists_deleted_nodeclaims_apart_and_a_scale_down_deletes() -> None:
    """``karpy simulate general-purpose.yaml inflate.yaml --disruption --event '5m scale ... 10'
    --event '15m scale ... 1'``: the NodeClaims consolidation deleted are listed apart with when
    and by what (main: beside the live ones, as if still running), and the scale-down's pods are
    deleted, not evicted, in the timeline (the ReplicaSet controller deletes; nothing evicts)."""
    from click.testing import CliRunner

    from karpy.cli import cli
    from realworld_helpers import DATA, PRICES

    res = CliRunner().invoke(cli, ["simulate", str(DATA / "aws/examples/v1/general-purpose.yaml"),
                                   str(DATA / "aws/examples/workloads/inflate.yaml"), "--prices", PRICES,
                                   "--disruption", "--until", "30m", "--event", "5m scale deployment/inflate 10",
                                   "--event", "15m scale deployment/inflate 1"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    live = lines[lines.index("NODECLAIMS (1)") + 2]
    assert "inflate" in live
    start = next(i for i, line in enumerate(lines) if line.startswith("DELETED NODECLAIMS ("))
    assert lines[start + 1].split()[-2:] == ["DELETED", "BY"]
    rows = lines[start + 2:lines.index("", start)]
    assert rows and all(r.split()[-1] == "consolidation" and r.split()[-2].count(":") == 2 for r in rows)
    scale_down = next(line for line in lines if "scale Deployment/default/inflate 10->1" in line)
    # 9 replicas deleted by the scale-down; the 1 eviction is consolidation draining the node
    assert "1 evicted, 9 deleted" in scale_down, scale_down


# ------------------------------------------------------------------- consolidation after a change

def test_nodepool_change_re_triggers_consolidation_at_once(run) -> None:
    """state/informer/nodepool.go: a changed NodePool marks the cluster unconsolidated. aws
    examples/v1/general-purpose.yaml re-applied at 10m allowing spot: the on-demand node is replaced
    by a spot one right after the 15 s validation (main: at the next 5-minute forced refresh, 665 s)."""
    documents = docs("aws/examples/v1/general-purpose.yaml", "aws/examples/workloads/inflate.yaml")
    pool = copy.deepcopy(next(d for d in documents if d["kind"] == "NodePool"))
    for r in pool["spec"]["template"]["spec"]["requirements"]:
        if r["key"] == "karpenter.sh/capacity-type":
            r["values"] = ["spot", "on-demand"]
    _, doc = run(documents, disruption=True, until="40m", events=[{"at": "10m", "apply": [pool]}])
    (replace,) = [d for d in doc["disruptions"] if d["decision"] == "replace"]
    assert replace["t"] == 615.0 and replace["validated"] is True


def test_nodeoverlay_change_re_triggers_consolidation_at_once(run) -> None:
    """nodeoverlay/controller.go: applied NodeOverlays mark the cluster unconsolidated.
    aws-samples/karpenter-blueprints 529b88c node-overlay-generation.yaml applied at 10m (the
    NodeOverlay gate on): the 6th-generation node is replaced by an 8th-generation one at 615 s
    (main: 665 s)."""
    bp = "blueprints/blueprints/node-overlay"
    _, doc = run(docs(BLUEPRINTS_CLUSTER, f"{bp}/workload-generation.yaml"), disruption=True, until="40m",
                 feature_gates={"NodeOverlay": True},
                 events=[{"at": "10m", "apply": docs(f"{bp}/node-overlay-generation.yaml")}])
    (replace,) = [d for d in doc["disruptions"] if d["decision"] == "replace"]
    assert replace["t"] == 615.0
    assert [nc["labels"]["karpenter.k8s.aws/instance-generation"] for nc in launched(doc)] == ["6", "8"]
