"""core/v1 PersistentVolume and PersistentVolumeClaim, storage.k8s.io/v1 StorageClass and CSINode
(the fields that decide where a pod can run), and the pod ``spec.volumes`` entries that point at
claims. k8s.io/api/core/v1 and storage/v1 types.go, v1.34 field names.

API-server defaulting: ``StorageClass.volumeBindingMode`` defaults to ``Immediate``
(pkg/apis/storage/v1/defaults.go), ``reclaimPolicy`` to ``Delete``; a PVC's ``status.phase`` to
``Pending``. The default StorageClass is the one annotated
``storageclass.kubernetes.io/is-default-class: "true"`` (the DefaultStorageClass admission plugin
fills ``storageClassName`` of claims created without one; with several, the newest wins).
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import Field, field_validator

from karpy.api.meta import KubeModel, ResourceQuantities, TypedObject
from karpy.api.pod import NodeSelector, Volume

__all__ = [
    "ANN_BIND_COMPLETED",
    "ANN_DEFAULT_STORAGE_CLASS",
    "CSINode",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "PersistentVolumeClaimSpec",
    "StorageClass",
    "TopologySelectorTerm",
    "Volume",
    "VOLUME_BINDING_IMMEDIATE",
    "VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER",
    "default_storage_class",
]

#: k8s.io/component-helpers/storage/volume AnnBindCompleted
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
#: storage/v1 IsDefaultStorageClassAnnotation
ANN_DEFAULT_STORAGE_CLASS = "storageclass.kubernetes.io/is-default-class"
VOLUME_BINDING_IMMEDIATE: Final = "Immediate"
VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER: Final = "WaitForFirstConsumer"


class PersistentVolumeClaimSpec(KubeModel):
    storage_class_name: str | None = None
    volume_name: str | None = None
    access_modes: list[str] = Field(default_factory=list)
    resources: dict[str, Any] = Field(default_factory=dict)

    @field_validator("volume_name", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return None if value == "" else value


class PersistentVolumeClaimStatus(KubeModel):
    phase: Literal["Pending", "Bound", "Lost"] = "Pending"

    @field_validator("phase", mode="before")
    @classmethod
    def _default_phase(cls, value: Any) -> Any:
        return "Pending" if value in (None, "") else value


class PersistentVolumeClaim(TypedObject):
    """core/v1 PersistentVolumeClaim."""

    API_VERSION = "v1"
    KIND = "PersistentVolumeClaim"

    spec: PersistentVolumeClaimSpec = Field(default_factory=PersistentVolumeClaimSpec)
    status: PersistentVolumeClaimStatus = Field(default_factory=PersistentVolumeClaimStatus)


class VolumeNodeAffinity(KubeModel):
    required: NodeSelector | None = None


class CSIPersistentVolumeSource(KubeModel):
    driver: str
    volume_handle: str = ""


class PersistentVolumeSpec(KubeModel):
    node_affinity: VolumeNodeAffinity | None = None
    storage_class_name: str | None = None
    csi: CSIPersistentVolumeSource | None = None
    local: dict[str, Any] | None = None
    host_path: dict[str, Any] | None = None
    aws_elastic_block_store: dict[str, Any] | None = Field(default=None, alias="awsElasticBlockStore")
    claim_ref: dict[str, Any] | None = None
    capacity: ResourceQuantities = Field(default_factory=dict)


class PersistentVolume(TypedObject):
    """core/v1 PersistentVolume (cluster-scoped)."""

    API_VERSION = "v1"
    KIND = "PersistentVolume"
    CLUSTER_SCOPED = True

    spec: PersistentVolumeSpec = Field(default_factory=PersistentVolumeSpec)


class TopologySelectorLabelRequirement(KubeModel):
    key: str
    values: list[str] = Field(default_factory=list)


class TopologySelectorTerm(KubeModel):
    match_label_expressions: list[TopologySelectorLabelRequirement] = Field(default_factory=list)


class StorageClass(TypedObject):
    """storage.k8s.io/v1 StorageClass (cluster-scoped; ``volumeBindingMode`` defaults to Immediate)."""

    API_VERSION = "storage.k8s.io/v1"
    KIND = "StorageClass"
    CLUSTER_SCOPED = True

    provisioner: str = ""
    parameters: dict[str, str] = Field(default_factory=dict)
    volume_binding_mode: Literal["Immediate", "WaitForFirstConsumer"] = VOLUME_BINDING_IMMEDIATE
    allowed_topologies: list[TopologySelectorTerm] = Field(default_factory=list)

    @field_validator("volume_binding_mode", mode="before")
    @classmethod
    def _default_binding(cls, value: Any) -> Any:
        return VOLUME_BINDING_IMMEDIATE if value in (None, "") else value


class CSINodeDriver(KubeModel):
    name: str
    node_id: str = Field(default="", alias="nodeID")
    allocatable: dict[str, Any] | None = None

    @property
    def count(self) -> int | None:
        """``allocatable.count``: the most volumes of this driver the node can attach."""
        return None if not self.allocatable or self.allocatable.get("count") is None else int(self.allocatable["count"])


class CSINodeSpec(KubeModel):
    drivers: list[CSINodeDriver] = Field(default_factory=list)


class CSINode(TypedObject):
    """storage.k8s.io/v1 CSINode (cluster-scoped; named after its Node)."""

    API_VERSION = "storage.k8s.io/v1"
    KIND = "CSINode"
    CLUSTER_SCOPED = True

    spec: CSINodeSpec = Field(default_factory=CSINodeSpec)


def default_storage_class(classes: list[StorageClass]) -> StorageClass | None:
    """The default StorageClass (see module doc): the newest one annotated as default
    (storage/util GetDefaultClass); without timestamps, or on ties, the last in input order."""
    out = None
    for sc in classes:
        if (sc.metadata.annotations or {}).get(ANN_DEFAULT_STORAGE_CLASS) != "true":
            continue
        if out is None or out.metadata.creation_timestamp is None or sc.metadata.creation_timestamp is None \
                or sc.metadata.creation_timestamp >= out.metadata.creation_timestamp:
            out = sc
    return out
