"""apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet and batch/v1 Job, and their pods.

Pod naming rule (deterministic, shaped like the controllers' names):

* **ReplicaSet** ``rs``: pod ``i`` is ``<rs>-<s>`` where ``s`` is a 5-character suffix from the
  controllers' alphabet ``bcdfghjklmnpqrstvwxz2456789`` (``k8s.io/apimachinery/pkg/util/rand``).
  Instead of ``rand.String(5)`` the suffix is an affine permutation of ``i`` seeded by a stable hash of
  ``namespace/rs``, so the names are unique for ``i < 27**5`` and identical on every run.
* **Deployment** ``d``: a ReplicaSet ``<d>-<pod-template-hash>`` (the hash is FNV-32a of the
  canonical JSON of the pod template, encoded like ``rand.SafeEncodeString``: up to 10 characters),
  then that ReplicaSet's pods; pods carry the ``pod-template-hash`` label.
* **StatefulSet** ``s``: ``<s>-<ordinal>`` with ``controller-revision-hash``,
  ``statefulset.kubernetes.io/pod-name`` and ``apps.kubernetes.io/pod-index`` labels.
* **Job** ``j``: ``<j>-<s>`` (NonIndexed) or ``<j>-<index>-<s>`` (Indexed), ``min(parallelism,
  completions)`` pods (none when suspended), with the ``batch.kubernetes.io/job-name`` /
  ``controller-uid`` labels.
* **ReplicationController** (core/v1) ``rc``: like a ReplicaSet, ``<rc>-<5 chars>``; its selector is
  a plain label map (defaulting to the template labels, as the API server does).
* **CronJob** (batch/v1): loaded and validated, not run -- a run has no wall-clock schedule, so its
  Jobs are not created; the loader says so in a warning (:meth:`CronJob.not_run_warning`).
* **DaemonSet**: not expanded to N pods. :meth:`DaemonSet.template_pod` gives the one representative
  pod Karpenter uses as per-node overhead (provisioner.go getDaemonSetPods); :meth:`pod_for_node`
  gives the pod the controller would create for one node.

``pod_for(i)`` gives pod ``i`` of a workload; indices past ``replicas`` give fresh, unique names
(for replacing an evicted replica). Owner references are set as the controllers set them
(``apiVersion``, ``kind``, ``name``, ``uid``, ``controller: true``, ``blockOwnerDeletion: true``).
A workload without ``metadata.uid`` gets a deterministic one (:func:`stable_uid`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import uuid
from typing import Annotated, Any, Literal, Self

from pydantic import BeforeValidator, Field, model_validator

from karpy.api.meta import Int32, KubeModel, LabelSelector, ObjectMeta, OwnerReference, TypedObject
from karpy.api.pod import (
    Affinity,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodSpec,
)

__all__ = [
    "CronJob",
    "DaemonSet",
    "Deployment",
    "Job",
    "PodTemplateSpec",
    "ReplicaSet",
    "ReplicationController",
    "StatefulSet",
    "pod_template_hash",
    "safe_encode",
    "stable_uid",
]

#: k8s.io/apimachinery/pkg/util/rand alphanums (no vowels, no confusable characters)
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
_SUFFIX_LEN = 5
_SUFFIX_SPACE = len(ALPHANUMS) ** _SUFFIX_LEN
_UID_NAMESPACE = uuid.UUID("6f1c3a52-3d0e-4f6e-9b7a-6b61727079a1")
#: an int32 whose explicit ``null`` means the API server's default, 1 (RC ``replicas``, Job ``parallelism``)
_NullIsOne = Annotated[int, Field(ge=0, le=2**31 - 1), BeforeValidator(lambda value: 1 if value is None else value)]
#: a non-negative int32 count (one Annotated: pydantic lets Int32's own ``ge`` win over a field's ``ge=0``)
_Count = Annotated[int, Field(ge=0, le=2**31 - 1)]


def _fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def safe_encode(s: str) -> str:
    """rand.SafeEncodeString: map every byte onto the alphanums alphabet."""
    return "".join(ALPHANUMS[ord(c) % len(ALPHANUMS)] for c in s)


def stable_uid(kind: str, namespace: str, name: str) -> str:
    """A deterministic UID for an object that has none (uuid5 of kind/namespace/name)."""
    if not _FAST_UUID5:
        return str(uuid.uuid5(_UID_NAMESPACE, f"{kind}/{namespace}/{name}"))
    # str(uuid.uuid5(...)) written out (uuid.py uuid5 and UUID(version=5)): the SHA-1 of the
    # namespace and the name, version 5 and the RFC 4122 variant set, without the UUID object
    b = bytearray(hashlib.sha1(_UID_NAMESPACE_BYTES + f"{kind}/{namespace}/{name}".encode("utf-8")).digest()[:16])
    b[6] = (b[6] & 0x0F) | 0x50
    b[8] = (b[8] & 0x3F) | 0x80
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_UID_NAMESPACE_BYTES = _UID_NAMESPACE.bytes
#: performance only; the equivalence test switches it off (uuid.uuid5 itself)
_FAST_UUID5 = True


@functools.lru_cache(maxsize=4096)
def _affine(seed: str) -> tuple[int, int]:
    """``(a, b)`` of :func:`_suffix`'s permutation for ``seed`` (a pure function of the seed,
    memoised: every pod of a workload has the same seed)."""
    h = _fnv32a(seed.encode())
    # multiplier not divisible by 3 -> a bijection on Z/27^5
    a = (h % (_SUFFIX_SPACE // 3)) * 3 + 1
    b = _fnv32a(f"{seed}#".encode()) % _SUFFIX_SPACE
    return a, b


def _suffix(seed: str, index: int) -> str:
    """A 5-character suffix, unique per ``index`` for a given ``seed`` (affine permutation)."""
    a, b = _affine(seed)
    n = (a * index + b) % _SUFFIX_SPACE
    out = []
    for _ in range(_SUFFIX_LEN):
        n, r = divmod(n, len(ALPHANUMS))
        out.append(ALPHANUMS[r])
    extra = index // _SUFFIX_SPACE  # past 27^5 pods: extend, still unique
    return "".join(out) + (safe_encode(str(extra)) if extra else "")


class PodTemplateSpec(KubeModel):
    """core/v1 PodTemplateSpec."""

    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PodSpec = Field(default_factory=PodSpec)


def pod_template_hash(template: PodTemplateSpec, collision_count: int | None = None) -> str:
    """A deterministic pod-template-hash (FNV-32a of the canonical JSON of the template, encoded
    like controller.ComputeHash + rand.SafeEncodeString; not bit-identical to Go's spew-based hash)."""
    doc = json.dumps(template.model_dump(by_alias=True, mode="json", exclude_none=True), sort_keys=True,
                     separators=(",", ":"))
    data = doc.encode()
    if collision_count:
        data += str(collision_count).encode()
    return safe_encode(str(_fnv32a(data)))


class _Workload(TypedObject):
    """Shared behaviour: owner reference, the selector check, pod construction from the template and
    expansion (``pod_for(i)`` for ``i < pod_count()``)."""

    @model_validator(mode="after")
    def _selector_matches(self) -> Self:
        """The API server's "`selector` does not match template `labels`" (every workload kind with a
        ``spec.selector`` and a ``spec.template``)."""
        self._check_spec_selector()
        return self

    def _check_spec_selector(self) -> None:
        spec = getattr(self, "spec", None)
        selector, template = getattr(spec, "selector", None), getattr(spec, "template", None)
        if isinstance(selector, LabelSelector) and template is not None:
            self._check_selector(selector, template)

    def pod_count(self) -> int:
        """How many pods the controller creates at start."""
        return 0

    def pod_for(self, index: int) -> Pod:
        """Pod ``index`` of the workload, for ``0 <= index < pod_count()``. A kind that creates no pods
        at start (CronJob, DaemonSet: its pods follow nodes) has no index in range."""
        raise IndexError(f"{type(self).__name__} {self.metadata.name!r} has no pod {index} "
                         f"(it creates {self.pod_count()} at start)")

    def expand_pods(self) -> list[Pod]:
        """The pods the controller would create at start: ``pod_for(i)`` for ``i < pod_count()``."""
        return [self.pod_for(i) for i in range(self.pod_count())]

    def uid(self) -> str:
        """``metadata.uid`` or a deterministic one."""
        return self.metadata.uid or stable_uid(self.kind, self.metadata.namespace, self.metadata.name)

    def owner_reference(self) -> OwnerReference:
        """The controller reference this workload's pods (or ReplicaSets) carry."""
        return OwnerReference(api_version=self.api_version or self.API_VERSION, kind=self.kind or self.KIND,
                              name=self.metadata.name, uid=self.uid(), controller=True,
                              block_owner_deletion=True)

    def _check_selector(self, selector: LabelSelector | None, template: PodTemplateSpec) -> None:
        if selector is not None and not selector.matches(template.metadata.labels):
            raise ValueError("spec.template.metadata.labels: `selector` does not match template `labels`")

    def _new_pod(self, template: PodTemplateSpec, name: str, owner: OwnerReference,
                 extra_labels: dict[str, str] | None = None) -> Pod:
        """A pod from ``template``: its own metadata (name, uid, labels, owner) and status, and the
        template's spec object itself, shared by every pod of the template.

        not in upstream (the controllers deep-copy the template per pod); same result because no
        pod spec is mutated in place once the pod exists: every change to a pod's spec in karpy
        replaces the spec (copy-on-write: ``_revised`` when binding, :meth:`DaemonSet.pod_for_node`,
        :meth:`StatefulSet.pod_for`, ``relaxable_copy`` in provisioning), and the workload
        controllers replace a template instead of editing it (Deployment rollouts copy the model).
        The metadata's mutable parts (labels, annotations, owner references, finalizers) are fresh
        per pod. ``tests/api/test_shared_pod_templates.py`` compares the pods with deep-copied ones.
        """
        meta = template.metadata.model_copy()
        meta.name = name
        meta.generate_name = None
        meta.namespace = self.metadata.namespace
        meta.uid = stable_uid("Pod", self.metadata.namespace, name)
        meta.labels = {**meta.labels, **(extra_labels or {})}
        meta.owner_references = [owner]
        meta.annotations = dict(meta.annotations)
        meta.finalizers = list(meta.finalizers)
        return Pod(api_version="v1", kind="Pod", metadata=meta, spec=template.spec)


class _Replicated(_Workload):
    """ReplicaSet and ReplicationController: ``spec.replicas`` pods ``<name>-<5-char suffix>``."""

    def pod_for(self, index: int) -> Pod:
        """Pod ``index`` (``<name>-<5-char suffix>``)."""
        name = f"{self.metadata.name}-{_suffix(f'{self.metadata.namespace}/{self.metadata.name}', index)}"
        return self._new_pod(self.spec.template, name, self.owner_reference())  # type: ignore[attr-defined]

    def pod_count(self) -> int:
        """``spec.replicas``."""
        replicas: int = self.spec.replicas  # type: ignore[attr-defined]
        return replicas


class ReplicaSetSpec(KubeModel):
    """apps/v1 ReplicaSetSpec (``replicas`` defaults to 1)."""

    replicas: _Count = 1
    selector: LabelSelector | None = None
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)


class ReplicaSet(_Replicated):
    """apps/v1 ReplicaSet."""

    API_VERSION = "apps/v1"
    KIND = "ReplicaSet"

    spec: ReplicaSetSpec = Field(default_factory=ReplicaSetSpec)


class ReplicationControllerSpec(KubeModel):
    """core/v1 ReplicationControllerSpec (``replicas`` defaults to 1; ``selector`` is a label map)."""

    replicas: _NullIsOne = 1
    selector: dict[str, str] | None = None
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)


class ReplicationController(_Replicated):
    """core/v1 ReplicationController: pods named and owned as a ReplicaSet's are."""

    API_VERSION = "v1"
    KIND = "ReplicationController"

    spec: ReplicationControllerSpec = Field(default_factory=ReplicationControllerSpec)

    def _check_spec_selector(self) -> None:
        if self.spec.selector:
            self._check_selector(LabelSelector(match_labels=dict(self.spec.selector)), self.spec.template)
        else:
            # pkg/apis/core/v1/defaults.go SetDefaults_ReplicationController: an empty selector
            # defaults to the template's labels
            self.spec.selector = dict(self.spec.template.metadata.labels) or None


class DeploymentSpec(KubeModel):
    """apps/v1 DeploymentSpec (``replicas`` defaults to 1)."""

    replicas: _Count = 1
    selector: LabelSelector | None = None
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)
    strategy: dict[str, Any] | None = None
    paused: bool = False


class Deployment(_Workload):
    """apps/v1 Deployment; expands through a ReplicaSet ``<name>-<pod-template-hash>``."""

    API_VERSION = "apps/v1"
    KIND = "Deployment"

    spec: DeploymentSpec = Field(default_factory=DeploymentSpec)

    def replica_set(self) -> ReplicaSet:
        """The ReplicaSet the Deployment controller would create for the current template."""
        h = pod_template_hash(self.spec.template)
        template = self.spec.template.model_copy(deep=True)
        template.metadata.labels = {**template.metadata.labels, "pod-template-hash": h}
        selector = (self.spec.selector.model_copy(deep=True) if self.spec.selector is not None
                    else LabelSelector(match_labels=dict(self.spec.template.metadata.labels)))
        selector.match_labels = {**selector.match_labels, "pod-template-hash": h}
        name = f"{self.metadata.name}-{h}"
        meta = ObjectMeta(name=name, namespace=self.metadata.namespace,
                          uid=stable_uid("ReplicaSet", self.metadata.namespace, name),
                          labels=dict(template.metadata.labels), owner_references=[self.owner_reference()])
        return ReplicaSet(metadata=meta, spec=ReplicaSetSpec(replicas=self.spec.replicas, selector=selector,
                                                             template=template))

    def pod_for(self, index: int) -> Pod:
        """Pod ``index`` of the current ReplicaSet."""
        return self.replica_set().pod_for(index)

    def pod_count(self) -> int:
        """``spec.replicas``."""
        return self.spec.replicas

    def expand_pods(self) -> list[Pod]:
        """The Deployment's pods (owned by its ReplicaSet, built once)."""
        return self.replica_set().expand_pods()


class StatefulSetSpec(KubeModel):
    """apps/v1 StatefulSetSpec (``replicas`` defaults to 1)."""

    replicas: _Count = 1
    selector: LabelSelector | None = None
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)
    service_name: str | None = None
    pod_management_policy: Literal["OrderedReady", "Parallel"] = "OrderedReady"
    ordinals: dict[str, int] | None = None
    #: PersistentVolumeClaim templates (raw claim documents; see StatefulSet.claims_for)
    volume_claim_templates: list[dict[str, Any]] = Field(default_factory=list)


class StatefulSet(_Workload):
    """apps/v1 StatefulSet; pods ``<name>-<ordinal>`` (``spec.ordinals.start`` honoured)."""

    API_VERSION = "apps/v1"
    KIND = "StatefulSet"

    spec: StatefulSetSpec = Field(default_factory=StatefulSetSpec)

    def revision(self) -> str:
        """The ``controller-revision-hash`` label value (``<name>-<hash>``)."""
        return f"{self.metadata.name}-{pod_template_hash(self.spec.template)}"

    def pod_for(self, index: int) -> Pod:
        """The pod with ordinal ``start + index``."""
        ordinal = (self.spec.ordinals or {}).get("start", 0) + index
        name = f"{self.metadata.name}-{ordinal}"
        pod = self._new_pod(self.spec.template, name, self.owner_reference(), {
            "controller-revision-hash": self.revision(),
            "statefulset.kubernetes.io/pod-name": name,
            "apps.kubernetes.io/pod-index": str(ordinal),
        })
        if self.spec.volume_claim_templates:
            # statefulset controller updateStorage: one volume per template, claim <template>-<pod>
            from karpy.api.pod import Volume

            names = {t.get("metadata", {}).get("name", "") for t in self.spec.volume_claim_templates}
            volumes = [v for v in pod.spec.volumes if v.name not in names] + [
                Volume.model_validate({"name": n, "persistentVolumeClaim": {"claimName": f"{n}-{name}"}})
                for n in (t.get("metadata", {}).get("name", "") for t in self.spec.volume_claim_templates)]
            pod.spec = pod.spec.model_copy(update={"volumes": volumes})  # the template's spec is shared
        return pod

    def claims_for(self, index: int) -> list[Any]:
        """The PersistentVolumeClaims the StatefulSet controller creates for pod ``index``
        (``<template>-<pod>``, unbound, labelled with the selector's labels as upstream)."""
        from karpy.api.storage import PersistentVolumeClaim

        ordinal = (self.spec.ordinals or {}).get("start", 0) + index
        pod_name = f"{self.metadata.name}-{ordinal}"
        out = []
        for t in self.spec.volume_claim_templates:
            meta = dict(t.get("metadata") or {})
            meta["name"] = f"{meta.get('name', '')}-{pod_name}"
            meta["namespace"] = self.metadata.namespace
            out.append(PersistentVolumeClaim.model_validate({"metadata": meta, "spec": dict(t.get("spec") or {})}))
        return out

    def pod_count(self) -> int:
        """``spec.replicas`` (expanded in ordinal order)."""
        return self.spec.replicas


class JobSpec(KubeModel):
    """batch/v1 JobSpec (``parallelism`` defaults to 1)."""

    parallelism: _NullIsOne = 1
    completions: _Count | None = None
    completion_mode: Literal["NonIndexed", "Indexed"] = "NonIndexed"
    suspend: bool = False
    backoff_limit: int | None = 6
    selector: LabelSelector | None = None
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)


class Job(_Workload):
    """batch/v1 Job; ``min(parallelism, completions)`` active pods at start."""

    API_VERSION = "batch/v1"
    KIND = "Job"

    spec: JobSpec = Field(default_factory=JobSpec)

    def active_pods(self) -> int:
        """How many pods the Job controller starts with (0 when suspended): ``min(parallelism,
        completions)``."""
        if self.spec.suspend:
            return 0
        if self.spec.completions is None:
            return self.spec.parallelism
        return min(self.spec.parallelism, self.spec.completions)

    def pod_for(self, index: int) -> Pod:
        """Pod ``index`` (for Indexed jobs, completion index ``index``)."""
        uid = self.uid()
        labels = {
            "batch.kubernetes.io/controller-uid": uid,
            "batch.kubernetes.io/job-name": self.metadata.name,
            "controller-uid": uid,
            "job-name": self.metadata.name,
        }
        base = self.metadata.name
        if self.spec.completion_mode == "Indexed":
            labels["batch.kubernetes.io/job-completion-index"] = str(index)
            base = f"{base}-{index}"
        name = f"{base}-{_suffix(f'{self.metadata.namespace}/{self.metadata.name}', index)}"
        pod = self._new_pod(self.spec.template, name, self.owner_reference(), labels)
        if self.spec.completion_mode == "Indexed":
            pod.metadata.annotations["batch.kubernetes.io/job-completion-index"] = str(index)
        return pod

    def pod_count(self) -> int:
        """:meth:`active_pods`."""
        return self.active_pods()


class JobTemplateSpec(KubeModel):
    """batch/v1 JobTemplateSpec."""

    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: JobSpec = Field(default_factory=JobSpec)


class CronJobSpec(KubeModel):
    """batch/v1 CronJobSpec (the fields karpy reads)."""

    schedule: str
    suspend: bool = False
    job_template: JobTemplateSpec = Field(default_factory=JobTemplateSpec)


class CronJob(_Workload):
    """batch/v1 CronJob: validated (its job template is a Job spec) but not run -- see the module doc."""

    API_VERSION = "batch/v1"
    KIND = "CronJob"

    spec: CronJobSpec

    def not_run_warning(self) -> str:
        """The loader's warning for this CronJob."""
        state = "suspended" if self.spec.suspend else f"schedule {self.spec.schedule!r}"
        return (f"CronJob {self.metadata.namespace}/{self.metadata.name} ({state}): not run -- a run has no "
                "wall-clock schedule, so its Jobs' pods are not created; give a Job for the capacity one run needs")


class DaemonSetSpec(KubeModel):
    """apps/v1 DaemonSetSpec."""

    selector: LabelSelector | None = None
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)


class DaemonSet(_Workload):
    """apps/v1 DaemonSet: per-node overhead, not N pods."""

    API_VERSION = "apps/v1"
    KIND = "DaemonSet"

    spec: DaemonSetSpec = Field(default_factory=DaemonSetSpec)

    def template_pod(self) -> Pod:
        """The representative pod Karpenter builds from the template (provisioner.go getDaemonSetPods;
        container limits already defaulted into requests). Named ``<ds>`` and owned by the DaemonSet."""
        return self._new_pod(self.spec.template, self.metadata.name, self.owner_reference())

    def pod_for_node(self, node_name: str) -> Pod:
        """The pod the DaemonSet controller creates for ``node_name``: required node affinity
        ``matchFields metadata.name In [node]`` replaces the template's required node affinity."""
        name = f"{self.metadata.name}-{_suffix(f'{self.metadata.namespace}/{self.metadata.name}/{node_name}', 0)}"
        pod = self._new_pod(self.spec.template, name, self.owner_reference())
        # copy-on-write: the template's spec, affinity and node affinity are shared (_new_pod)
        spec = pod.spec
        affinity = spec.affinity.model_copy() if spec.affinity is not None else Affinity()
        node_affinity = (affinity.node_affinity.model_copy() if affinity.node_affinity is not None
                         else NodeAffinity())
        node_affinity.required_during_scheduling_ignored_during_execution = NodeSelector(node_selector_terms=[
            NodeSelectorTerm(match_fields=[NodeSelectorRequirement(key="metadata.name", operator="In",
                                                                   values=[node_name])])])
        affinity.node_affinity = node_affinity
        pod.spec = spec.model_copy(update={"affinity": affinity})
        return pod
