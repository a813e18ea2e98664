"""Workload expansion: deterministic names, owner references, labels."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from karpy.api.builders import make_daemonset, make_deployment
from karpy.api.quantity import Quantity
from karpy.api.workloads import (
    ALPHANUMS,
    DaemonSet,
    Deployment,
    Job,
    ReplicaSet,
    StatefulSet,
    pod_template_hash,
    stable_uid,
)

TEMPLATE = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "500m"}}}]}}


def deployment(replicas: int = 3, **template_overrides: object) -> Deployment:
    template = {**TEMPLATE, **template_overrides}
    return Deployment.model_validate({"apiVersion": "apps/v1", "kind": "Deployment",
                                      "metadata": {"name": "web", "namespace": "prod"},
                                      "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                                               "template": template}})


def test_deployment_pods_deterministic_and_shaped_like_controller() -> None:
    pods = deployment().expand_pods()
    again = deployment().expand_pods()
    assert [p.metadata.name for p in pods] == [p.metadata.name for p in again]
    rs = deployment().replica_set()
    h = pod_template_hash(deployment().spec.template)
    assert rs.metadata.name == f"web-{h}" and 1 <= len(h) <= 10 and set(h) <= set(ALPHANUMS)
    for pod in pods:
        prefix, suffix = pod.metadata.name.rsplit("-", 1)
        assert prefix == rs.metadata.name and len(suffix) == 5 and set(suffix) <= set(ALPHANUMS)
        assert pod.metadata.namespace == "prod"
        assert pod.metadata.labels == {"app": "web", "pod-template-hash": h}
        ref = pod.metadata.owner_references[0]
        assert (ref.api_version, ref.kind, ref.name, ref.controller) == ("apps/v1", "ReplicaSet", rs.metadata.name, True)
        assert ref.uid == rs.metadata.uid
        assert pod.spec.containers[0].resources.requests["cpu"] == Quantity("500m")
        assert pod.status.phase == "Pending" and pod.status.conditions == []
    assert len({p.metadata.name for p in pods}) == 3
    assert rs.metadata.owner_references[0].kind == "Deployment"
    assert rs.metadata.owner_references[0].uid == stable_uid("Deployment", "prod", "web")


def test_template_change_changes_hash() -> None:
    other = deployment(metadata={"labels": {"app": "web", "v": "2"}})
    assert other.replica_set().metadata.name != deployment().replica_set().metadata.name


def test_pod_names_unique_at_scale_and_past_replicas() -> None:
    d = deployment(replicas=5000)
    names = [p.metadata.name for p in d.expand_pods()]
    assert len(set(names)) == 5000
    assert d.pod_for(5000).metadata.name not in set(names)


def test_pods_do_not_share_state_with_template() -> None:
    """Each pod's metadata and status are its own; the spec is the ReplicaSet template's, shared and
    read-only (changes replace it: see tests/api/test_shared_pod_templates.py), and never the
    Deployment's own template."""
    d = deployment(replicas=2)
    a, b = d.expand_pods()
    a.metadata.labels["x"] = "1"
    a.metadata.annotations["y"] = "2"
    a.status.phase = "Running"
    assert "x" not in b.metadata.labels and "x" not in d.spec.template.metadata.labels
    assert "y" not in b.metadata.annotations and b.status.phase != "Running"
    assert a.spec is b.spec and a.spec is not d.spec.template.spec
    a.spec = a.spec.model_copy(update={"node_name": "n1"})
    assert b.spec.node_name is None and d.spec.template.spec.node_name is None


def test_replicaset_direct() -> None:
    rs = ReplicaSet.model_validate({"metadata": {"name": "rs", "uid": "u-rs"},
                                    "spec": {"replicas": 2, "template": TEMPLATE}})
    pods = rs.expand_pods()
    assert all(p.metadata.name.startswith("rs-") for p in pods)
    assert pods[0].metadata.owner_references[0].uid == "u-rs"


def test_statefulset_ordinals() -> None:
    sts = StatefulSet.model_validate({"metadata": {"name": "db"}, "spec": {
        "replicas": 3, "serviceName": "db", "template": TEMPLATE}})
    pods = sts.expand_pods()
    assert [p.metadata.name for p in pods] == ["db-0", "db-1", "db-2"]
    assert pods[1].metadata.labels["statefulset.kubernetes.io/pod-name"] == "db-1"
    assert pods[1].metadata.labels["apps.kubernetes.io/pod-index"] == "1"
    assert pods[0].metadata.labels["controller-revision-hash"].startswith("db-")
    assert pods[0].metadata.owner_references[0].kind == "StatefulSet"
    start = StatefulSet.model_validate({"metadata": {"name": "db"}, "spec": {
        "replicas": 2, "ordinals": {"start": 5}, "template": TEMPLATE}})
    assert [p.metadata.name for p in start.expand_pods()] == ["db-5", "db-6"]


@pytest.mark.parametrize(("spec", "count"), [
    ({}, 1), ({"parallelism": 4}, 4), ({"parallelism": 4, "completions": 2}, 2),
    ({"parallelism": 3, "suspend": True}, 0), ({"parallelism": 0}, 0),
])
def test_job_pod_count(spec: dict, count: int) -> None:
    job = Job.model_validate({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"},
                              "spec": {**spec, "template": TEMPLATE}})
    pods = job.expand_pods()
    assert len(pods) == count
    for pod in pods:
        assert pod.metadata.name.startswith("pi-")
        assert pod.metadata.labels["batch.kubernetes.io/job-name"] == "pi"
        assert pod.metadata.owner_references[0].kind == "Job"
        assert pod.metadata.owner_references[0].api_version == "batch/v1"


def test_indexed_job_names() -> None:
    job = Job.model_validate({"metadata": {"name": "pi"}, "spec": {
        "parallelism": 2, "completions": 5, "completionMode": "Indexed", "template": TEMPLATE}})
    pods = job.expand_pods()
    assert [p.metadata.name.rsplit("-", 1)[0] for p in pods] == ["pi-0", "pi-1"]
    assert pods[1].metadata.annotations["batch.kubernetes.io/job-completion-index"] == "1"


def test_daemonset_template_pod_and_per_node_pod() -> None:
    ds = DaemonSet.model_validate({"metadata": {"name": "agent", "namespace": "kube-system"},
                                   "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}})
    pod = ds.template_pod()
    assert pod.key == "kube-system/agent"
    assert pod.spec.containers[0].resources.requests["cpu"] == Quantity("500m")  # limits -> requests
    ref = pod.metadata.owner_references[0]
    assert (ref.api_version, ref.kind, ref.controller) == ("apps/v1", "DaemonSet", True)
    node_pod = ds.pod_for_node("node-a")
    term = node_pod.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution \
        .node_selector_terms[0]
    assert term.match_fields[0].key == "metadata.name" and term.match_fields[0].values == ["node-a"]
    assert ds.pod_for_node("node-b").metadata.name != node_pod.metadata.name


def test_selector_must_match_template() -> None:
    with pytest.raises(ValidationError, match="does not match template"):
        Deployment.model_validate({"metadata": {"name": "d"}, "spec": {
            "selector": {"matchLabels": {"app": "other"}}, "template": TEMPLATE}})


def test_zero_replicas_and_builders() -> None:
    assert deployment(replicas=0).expand_pods() == []
    d = make_deployment("api", 2, requests={"cpu": "1"})
    assert [p.metadata.labels["app"] for p in d.expand_pods()] == ["api", "api"]
    assert d.expand_pods()[0].spec.containers[0].resources.requests["cpu"] == Quantity(1)
    assert make_daemonset("ds", requests={"memory": "64Mi"}).template_pod().metadata.owner_references[0].name == "ds"
