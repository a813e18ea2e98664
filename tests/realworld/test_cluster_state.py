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

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from realworld_helpers import BLUEPRINTS_CLUSTER, docs, launched, pending  # noqa: E402

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
