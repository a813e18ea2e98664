"""Workloads for the end-to-end benchmarks, shaped as users write them (plain manifest dicts).

``aws_diverse(n, seed)``: two NodePools on the AWS provider and Deployments of 1-200 replicas
totalling ``n`` pods, in Karpenter's ``makeDiversePods`` proportions (scheduling_benchmark_test.go):
one fifth each generic, zonal topology spread, hostname topology spread, zonal self-affinity and
hostname anti-affinity. Requests are drawn from makeDiversePods' cpu/memory lists. Deterministic:
``random.Random(seed)`` decides replica counts, requests and label values.

The pools: ``general`` (c/m/r 7i and 8i families, on-demand, weight 10) and ``flex`` (any
current-generation amd64 type, spot or on-demand), one shared EC2NodeClass -- so the zonal pods meet
zones (us-east-1e) where few types are offered, the path the issue's profile found.
"""

from __future__ import annotations

import random
from typing import Any

__all__ = ["aws_diverse", "KINDS"]

CPUS = ["100m", "250m", "500m", "1", "1500m"]
MEMS = ["100Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi"]
LABEL_VALUES = ["a", "b", "c", "d", "e", "f", "g"]
KINDS = ("generic", "zone-spread", "host-spread", "zone-affinity", "host-anti-affinity")
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _pools() -> list[dict[str, Any]]:
    ref = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}
    general = {
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "general"},
        "spec": {"weight": 10, "limits": {"cpu": "100000"}, "template": {"spec": {"nodeClassRef": ref, "requirements": [
            {"key": "karpenter.k8s.aws/instance-family", "operator": "In",
             "values": ["c7i", "m7i", "r7i", "c8i", "m8i", "r8i"]},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
            {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}}}}
    flex = {
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "flex"},
        "spec": {"limits": {"cpu": "100000"}, "template": {"spec": {"nodeClassRef": ref, "requirements": [
            {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m", "r"]},
            {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["5"]},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]},
            {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}}}}
    nodeclass = {
        "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
        "spec": {"amiFamily": "AL2023", "role": "KarpenterNodeRole", "amiSelectorTerms": [{"alias": "al2023@latest"}],
                 "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "bench"}}],
                 "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "bench"}}]}}
    return [general, flex, nodeclass]


def _deployment(name: str, replicas: int, kind: str, r: random.Random) -> dict[str, Any]:
    labels = {"app": name}
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "public.ecr.aws/nginx/nginx:1.27", "resources": {
        "requests": {"cpu": CPUS[r.randrange(len(CPUS))], "memory": MEMS[r.randrange(len(MEMS))]}}}]}
    if kind in ("zone-spread", "host-spread"):
        labels["my-label"] = LABEL_VALUES[r.randrange(len(LABEL_VALUES))]
        spec["topologySpreadConstraints"] = [{
            "maxSkew": 1, "topologyKey": ZONE if kind == "zone-spread" else HOST,
            "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": name}}}]
    elif kind == "zone-affinity":
        spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": name}}, "topologyKey": ZONE}]}}
    elif kind == "host-anti-affinity":
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": name}}, "topologyKey": HOST}]}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": labels}, "spec": spec}}}


def aws_diverse(n: int, seed: int = 42) -> list[dict[str, Any]]:
    """Two NodePools, one EC2NodeClass and Deployments totalling ``n`` pods (see module doc)."""
    r = random.Random(seed)
    docs = _pools()
    share = [n // 5] * 5
    share[0] += n - sum(share)
    for kind, total in zip(KINDS, share):
        i = 0
        while total > 0:
            replicas = min(total, r.randint(1, 200))
            docs.append(_deployment(f"{kind}-{i}", replicas, kind, r))
            total -= replicas
            i += 1
    return docs
