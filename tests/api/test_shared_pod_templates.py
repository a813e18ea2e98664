"""Pods built from a workload template share the template's spec (``_Workload._new_pod``).

not in upstream (the controllers deep-copy the template per pod); these tests compare every
workload kind's pods with the plain computation -- the deep-copying ``_new_pod`` karpy had before --
and check that building per-node / per-ordinal variants leaves the shared template untouched.
"""

from __future__ import annotations

from typing import Any

import pytest

from karpy.api.meta import OwnerReference
from karpy.api.pod import Pod
from karpy.api.workloads import DaemonSet, Deployment, Job, PodTemplateSpec, ReplicaSet, StatefulSet, stable_uid
from karpy.api.workloads import _Workload

SPEC = {
    "containers": [{"name": "c", "resources": {"limits": {"cpu": "500m"}, "requests": {"memory": "1Gi"}}}],
    "tolerations": [{"key": "k", "operator": "Exists"}],
    "volumes": [{"name": "data", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "cfg"}}],
    "affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchExpressions": [{"key": "x", "operator": "Exists"}]}}]},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "w"}}}]}},
    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                   "labelSelector": {"matchLabels": {"app": "w"}}}],
}
TEMPLATE = {"metadata": {"labels": {"app": "w"}, "annotations": {"a": "1"}, "finalizers": ["f"]}, "spec": SPEC}


def _deep_new_pod(self: _Workload, template: PodTemplateSpec, name: str, owner: OwnerReference,
                  extra_labels: dict[str, str] | None = None) -> Pod:
    """The plain computation: karpy's _new_pod before the templates were shared."""
    meta = template.metadata.model_copy(deep=True)
    meta.name = name
    meta.generate_name = None
    meta.namespace = self.metadata.namespace
    meta.uid = stable_uid("Pod", self.metadata.namespace, name)
    meta.labels = {**meta.labels, **(extra_labels or {})}
    meta.owner_references = [owner]
    return Pod(api_version="v1", kind="Pod", metadata=meta, spec=template.spec.model_copy(deep=True))


def _workloads() -> list[Any]:
    sel = {"matchLabels": {"app": "w"}}
    return [
        Deployment.model_validate({"metadata": {"name": "d", "namespace": "ns"},
                                   "spec": {"replicas": 4, "selector": sel, "template": TEMPLATE}}),
        ReplicaSet.model_validate({"metadata": {"name": "rs", "uid": "u"},
                                   "spec": {"replicas": 3, "selector": sel, "template": TEMPLATE}}),
        StatefulSet.model_validate({"metadata": {"name": "db"}, "spec": {
            "replicas": 3, "selector": sel, "template": TEMPLATE,
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {}}]}}),
        Job.model_validate({"metadata": {"name": "j"}, "spec": {
            "parallelism": 3, "completions": 5, "completionMode": "Indexed", "template": TEMPLATE}}),
        Job.model_validate({"metadata": {"name": "k"}, "spec": {"parallelism": 2, "template": TEMPLATE}}),
    ]


def _dump(pods: list[Pod]) -> list[dict[str, Any]]:
    return [p.model_dump(mode="json", by_alias=True) for p in pods]


@pytest.mark.parametrize("index", range(5))
def test_pods_equal_deep_copied_ones(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = _workloads()[index]
    plain = _workloads()[index]
    template_before = shared.spec.template.model_dump(mode="json", by_alias=True)
    got = shared.expand_pods() + [shared.pod_for(shared.pod_count() + 1)]
    monkeypatch.setattr(_Workload, "_new_pod", _deep_new_pod)
    want = plain.expand_pods() + [plain.pod_for(plain.pod_count() + 1)]
    assert _dump(got) == _dump(want)
    assert shared.spec.template.model_dump(mode="json", by_alias=True) == template_before


def test_daemonset_per_node_pods_equal_deep_copied_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    def ds() -> DaemonSet:
        return DaemonSet.model_validate({"metadata": {"name": "agent", "namespace": "kube-system"},
                                         "spec": {"selector": {"matchLabels": {"app": "w"}}, "template": TEMPLATE}})

    shared, plain = ds(), ds()
    before = shared.spec.template.model_dump(mode="json", by_alias=True)
    got = [shared.template_pod(), shared.pod_for_node("n1"), shared.pod_for_node("n2"), shared.template_pod()]
    assert shared.spec.template.model_dump(mode="json", by_alias=True) == before
    monkeypatch.setattr(_Workload, "_new_pod", _deep_new_pod)
    want = [plain.template_pod(), plain.pod_for_node("n1"), plain.pod_for_node("n2"), plain.template_pod()]
    assert _dump(got) == _dump(want)
    # without any affinity in the template as well
    bare = DaemonSet.model_validate({"metadata": {"name": "b"}, "spec": {"template": {"spec": {"containers": []}}}})
    pod = bare.pod_for_node("n1")
    assert bare.spec.template.spec.affinity is None and pod.spec.affinity is not None


def test_pods_of_one_template_have_private_metadata() -> None:
    job = _workloads()[3]
    a, b = job.expand_pods()[:2]
    assert a.spec is b.spec
    assert a.metadata.annotations is not b.metadata.annotations
    assert a.metadata.labels is not b.metadata.labels
    assert a.metadata.finalizers is not b.metadata.finalizers
    assert a.metadata.owner_references is not b.metadata.owner_references
    assert a.status is not b.status
