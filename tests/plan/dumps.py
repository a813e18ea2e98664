"""Cluster dumps for the plan tests and benchmark, in the shape ``kubectl get nodepools,ec2nodeclasses,
nodeclaims,nodes,pods,deployments,replicasets,pdb -A -o yaml`` prints them (a ``List`` with ``items``,
``status``, ``managedFields``, ``resourceVersion``, ``ownerReferences``).

A dump is made the way a real cluster came to be: the design (NodePools, EC2NodeClass, workloads) is
run through :func:`karpy.simulate` on the bundled prices, and what it ended with -- the NodeClaims tied
to their Nodes by ``status.providerID``, the pods bound by ``spec.nodeName``, each Deployment with its
ReplicaSet -- is written out as kubectl would print it.
"""

from __future__ import annotations

import copy
from typing import Any

import yaml

import karpy

__all__ = ["cluster_dump", "dump_text", "nodepool", "deployment", "EC2NODECLASS", "CRM78"]

#: a NodePool's families: compute, general, memory, 7th and 8th generation Intel
CRM78 = ["c7i", "m7i", "r7i", "c8i", "m8i", "r8i"]

EC2NODECLASS: dict[str, Any] = {
    "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
    "spec": {"role": "KarpenterNodeRole-demo", "amiSelectorTerms": [{"alias": "al2023@v20250915"}],
             "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
             "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}]},
}


def nodepool(name: str = "general", families: list[str] | None = None, budgets: list[dict[str, Any]] | None = None,
             sizes: list[str] | None = None, consolidation: str = "WhenEmptyOrUnderutilized",
             consolidate_after: str = "0s") -> dict[str, Any]:
    reqs: list[dict[str, Any]] = [
        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": list(families or CRM78)},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
    ]
    if sizes:
        reqs.append({"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": list(sizes)})
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
            "spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
                                                            "name": "default"},
                                           "requirements": reqs}},
                     "disruption": {"consolidationPolicy": consolidation, "consolidateAfter": consolidate_after,
                                    "budgets": list(budgets or [{"nodes": "20%"}])}}}


def deployment(name: str, replicas: int, cpu: str, memory: str, namespace: str = "default",
               annotations: dict[str, str] | None = None, spread: bool = True) -> dict[str, Any]:
    """A Deployment; ``spread``: one replica per node (hostname anti-affinity), so each pod is a node."""
    spec: dict[str, Any] = {"containers": [{"name": name, "image": "nginx:1.27",
                                            "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    if spread:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": name}}, "topologyKey": "kubernetes.io/hostname"}]}}
    meta: dict[str, Any] = {"labels": {"app": name}}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": meta, "spec": spec}}}


_TIME = "2026-11-01T09:00:00Z"


def _managed(manager: str) -> list[dict[str, Any]]:
    return [{"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}},
             "manager": manager, "operation": "Update", "time": _TIME}]


def _meta(obj: dict[str, Any], rv: int, manager: str) -> dict[str, Any]:
    meta = obj.setdefault("metadata", {})
    meta.setdefault("creationTimestamp", _TIME)
    meta["managedFields"] = _managed(manager)
    meta["resourceVersion"] = str(rv)
    meta.setdefault("uid", f"uid-{obj['kind'].lower()}-{meta.get('namespace', '')}-{meta['name']}")
    for key in ("generateName",):
        meta.pop(key, None)
    return obj


def _clean(d: dict[str, Any]) -> dict[str, Any]:
    meta = d.get("metadata", {})
    for key in ("ownerReferences", "finalizers", "labels", "annotations"):
        if meta.get(key) in ([], {}):
            meta.pop(key)
    if meta.get("uid") == "":
        meta.pop("uid")
    return d


def cluster_dump(design: list[dict[str, Any]], *, prices: str | None = None,
                 extra: list[dict[str, Any]] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    """Run ``design`` and return the ``List`` a ``kubectl get ... -o yaml`` of the cluster prints;
    ``extra`` objects (PDBs, ...) are added as they are, with kubectl's metadata."""
    result = karpy.simulate(copy.deepcopy(design), prices=prices)
    assert result.exit_code == 0, "the design must place every pod"
    sim = result.simulation
    items: list[dict[str, Any]] = []
    rv = 1000
    for obj in design:
        if obj["kind"] in ("NodePool", "EC2NodeClass", "NodeOverlay", "PodDisruptionBudget"):
            rv += 1
            items.append(_meta(copy.deepcopy(obj), rv, "kubectl-client-side-apply"))
    for obj in extra:
        rv += 1
        items.append(_meta(copy.deepcopy(obj), rv, "kubectl-client-side-apply"))
    for rec in sorted(sim.launches, key=lambda r: r.name):
        if rec.launched is None or rec.deleted:
            continue
        claim = _clean(rec.launched.model_dump(by_alias=True, exclude_none=True, mode="json"))
        claim["metadata"].pop("namespace", None)
        node = _clean(sim.nodes[rec.node_name].model_dump(by_alias=True, exclude_none=True, mode="json"))
        node["metadata"].pop("namespace", None)
        claim["status"] = {"providerID": node["spec"]["providerID"], "nodeName": node["metadata"]["name"],
                           "imageID": "ami-0123456789abcdef0",
                           "conditions": [{"type": t, "status": "True", "reason": t, "message": "",
                                           "lastTransitionTime": _TIME}
                                          for t in ("Launched", "Registered", "Initialized", "Ready")]}
        rv += 2
        items.append(_meta(claim, rv, "karpenter"))
        node["metadata"]["ownerReferences"] = [{"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
                                                "name": claim["metadata"]["name"], "uid": claim["metadata"]["uid"],
                                                "blockOwnerDeletion": True}]
        items.append(_meta(node, rv + 1, "kubelet"))
    replica_sets: dict[str, dict[str, Any]] = {}
    for key in sorted(sim.pods):
        pod = sim.pods[key]
        d = _clean(pod.model_dump(by_alias=True, exclude_none=True, mode="json"))
        d["status"] = {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}],
                       "startTime": _TIME}
        rv += 1
        items.append(_meta(d, rv, "kube-controller-manager"))
        for ref in d["metadata"].get("ownerReferences", ()):
            if ref["kind"] == "ReplicaSet":
                replica_sets.setdefault(f"{d['metadata']['namespace']}/{ref['name']}",
                                        {"uid": ref["uid"], "labels": d["metadata"].get("labels", {}), "count": 0})
                replica_sets[f"{d['metadata']['namespace']}/{ref['name']}"]["count"] += 1
    for obj in design:
        if obj["kind"] != "Deployment":
            continue
        dep = copy.deepcopy(obj)
        ns = dep["metadata"].setdefault("namespace", "default")
        rv += 1
        dep["status"] = {"replicas": dep["spec"]["replicas"], "readyReplicas": dep["spec"]["replicas"],
                         "availableReplicas": dep["spec"]["replicas"], "observedGeneration": 1}
        items.append(_meta(dep, rv, "kubectl-client-side-apply"))
        for rs_key, rs in sorted(replica_sets.items()):
            ns_rs, rs_name = rs_key.split("/")
            if ns_rs != ns or not rs_name.startswith(dep["metadata"]["name"] + "-"):
                continue
            template = copy.deepcopy(dep["spec"]["template"])
            template["metadata"]["labels"] = dict(rs["labels"])
            rv += 1
            items.append(_meta({
                "apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": {"name": rs_name, "namespace": ns, "uid": rs["uid"], "labels": dict(rs["labels"]),
                             "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                                  "name": dep["metadata"]["name"], "uid": dep["metadata"]["uid"],
                                                  "controller": True, "blockOwnerDeletion": True}]},
                "spec": {"replicas": dep["spec"]["replicas"],
                         "selector": {"matchLabels": dict(rs["labels"])}, "template": template},
                "status": {"replicas": rs["count"], "readyReplicas": rs["count"]}}, rv, "kube-controller-manager"))
    return {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}


def dump_text(dump: dict[str, Any]) -> str:
    return yaml.safe_dump(dump, sort_keys=True)
