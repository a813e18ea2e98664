"""Cluster dumps shaped as ``kubectl get -o yaml`` prints them: existing capacity is used.

``data/dumps/eks-system-node.yaml`` is a ``kubectl get pods,nodes,deployments,replicasets,
daemonsets -A -o yaml`` List written for these tests in kubectl's shape (managedFields, status,
resourceVersion, ownerReferences, ``node.kubernetes.io/*`` and ``eks.amazonaws.com/*`` labels): one
m5.2xlarge (7910m allocatable) holding a fluent-bit DaemonSet pod (1500m), three running ``web``
pods (1 cpu each), a finished and a failed Job pod (4 cpu each, still bound to the node, as
kubectl shows them until the Job is cleaned up), and two pending ``web`` pods that fit.

Issue #11 "existing capacity in a dump is not used" -- the root causes, each checked here:
the terminal pods were counted (8 cpu that do not exist), the DaemonSet got a second pod on the
node next to its own, and the Deployment *and* its ReplicaSet were expanded again next to the pods
they already own -- each alone is enough to overflow the node and launch capacity.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
from realworld_helpers import DATA, docs, launched, pending  # noqa: E402

from karpy.api.loader import load_manifests  # noqa: E402

DUMP = "dumps/eks-system-node.yaml"
NODE = "ip-10-0-12-34.ec2.internal"
#: the general-purpose NodePool of aws/karpenter-provider-aws 1d92708 examples/v1
POOL = "aws/examples/v1/general-purpose.yaml"


def test_pending_pods_fit_the_existing_node_and_nothing_launches(run) -> None:
    result, doc = run(docs(DUMP, POOL))
    assert result.exit_code == 0, pending(doc)
    assert launched(doc) == [] and doc["nodeclaims"] == []
    pods = doc["pods"]
    for name in ("web-7d4b9c8f6d-p5n6w", "web-7d4b9c8f6d-z7hcv"):
        assert pods[f"default/{name}"]["phase"] == "Running" and pods[f"default/{name}"]["node"] == NODE


def test_terminal_pods_are_reported_and_hold_no_capacity(run) -> None:
    result, doc = run(docs(DUMP, POOL))
    pods = doc["pods"]
    assert pods["default/report-28815840-6wq8z"]["phase"] == "Succeeded"
    assert pods["default/report-28815840-hx2lm"]["phase"] == "Failed"
    assert pods["default/report-28815840-6wq8z"]["message"] == "terminal pod: not scheduled, holds no capacity"
    assert ("ignored 2 terminal pods (status.phase Succeeded/Failed holds no capacity; kube-scheduler and "
            "Karpenter skip them): default/report-28815840-6wq8z (Succeeded), default/report-28815840-hx2lm (Failed)"
            ) in doc["warnings"]
    assert sorted(result.simulation.pods) == sorted(k for k, v in pods.items() if v["phase"] == "Running")


def test_daemonset_pod_in_the_dump_is_that_daemonsets_pod(run) -> None:
    result, doc = run(docs(DUMP, POOL))
    on_node = [k for k, v in doc["pods"].items() if k.startswith("logging/") and v["node"] == NODE]
    assert on_node == ["logging/fluent-bit-7xk2p"]  # recognised by ownerReferences, not joined by a second


def test_deployment_and_replicaset_in_the_dump_are_not_expanded_again() -> None:
    m = load_manifests(DATA / DUMP)
    assert [d.metadata.name for d in m.deployments] == ["web"] and len(m.replica_sets) == 1
    assert m.workload_pods() == []  # 5 replicas, 5 pods given (3 running, 2 pending)
    scaled = yaml.safe_load((DATA / DUMP).read_text())
    for item in scaled["items"]:
        if item["kind"] == "ReplicaSet":
            item["spec"]["replicas"] = 7
    extra = load_manifests(scaled).workload_pods()
    assert len(extra) == 2 and all(p.metadata.owner_references[0].name == "web-7d4b9c8f6d" for p in extra)


def test_the_same_dump_without_the_node_launches_for_what_was_on_it(run) -> None:
    """Control: with the node gone, the five web pods need capacity -- the fit above is the node's."""
    items = [d for d in copy.deepcopy(docs(DUMP))[0]["items"]
             if d["kind"] != "Node" and d["metadata"]["name"] != "fluent-bit-7xk2p"]  # (pinned to the node)
    for d in items:
        if d["kind"] == "Pod":
            d["spec"].pop("nodeName", None)
            if d["status"]["phase"] == "Running":
                d["status"] = {"phase": "Pending"}
    result, doc = run([{"apiVersion": "v1", "kind": "List", "items": items}, *docs(POOL)])
    assert result.exit_code == 0
    assert sum(len(nc["pods"]) for nc in launched(doc)) == 5 + 1  # web pods + fluent-bit on the new node


def test_max_pods_counts_a_dumps_pods_once_not_per_owner() -> None:
    """The dump holds 6 live pods (5 web, 1 fluent-bit; the 2 finished Job pods hold nothing); its
    Deployment and ReplicaSet declare the same 5 web pods. The bound counts pods alive at once, as
    the controllers do: 6, not 18 (a 10,000-pod dump was refused as 20,000)."""
    assert len(load_manifests(DATA / DUMP, max_pods=6).pods) == 6
    try:
        load_manifests(DATA / DUMP, max_pods=5)
    except Exception as e:  # ManifestError names the count
        assert "create 6 pods" in str(e), str(e)
    else:
        raise AssertionError("max_pods=5 accepted a dump of 6 pods")
    # the same objects in reverse order (pods before their owners) count the same
    items = yaml.safe_load((DATA / DUMP).read_text())
    items["items"].reverse()
    assert len(load_manifests(items, max_pods=6).pods) == 6
    scaled = copy.deepcopy(items)
    for item in scaled["items"]:
        if item["kind"] == "ReplicaSet":
            item["spec"]["replicas"] = 7  # two more web pods to create: 8 alive at once
    load_manifests(scaled, max_pods=8)
    try:
        load_manifests(scaled, max_pods=7)
    except Exception as e:
        assert "create 8 pods" in str(e), str(e)
    else:
        raise AssertionError("max_pods=7 accepted 8 pods")
