"""Builders for storage objects as pkg/test/storage.go makes them (shared by the volume tests)."""

from __future__ import annotations

from karpy.api.pod import Pod
from karpy.api.storage import PersistentVolume, PersistentVolumeClaim, StorageClass

ZONE = "topology.kubernetes.io/zone"

UNSET = object()


def storage_class(name="my-storage-class", zones=("test-zone-2", "test-zone-3"), mode="WaitForFirstConsumer",
                  provisioner="test-provisioner"):
    topo = [{"matchLabelExpressions": [{"key": ZONE, "values": list(zones)}]}] if zones else []
    return StorageClass.model_validate({"metadata": {"name": name}, "provisioner": provisioner,
                                        "volumeBindingMode": mode, "allowedTopologies": topo})


def pvc(name="my-claim", storage_class_name=UNSET, volume_name=None):
    spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    if storage_class_name is not UNSET:
        spec["storageClassName"] = storage_class_name
    ann = {}
    if volume_name:
        spec["volumeName"] = volume_name
        ann["pv.kubernetes.io/bind-completed"] = "yes"
    return PersistentVolumeClaim.model_validate({"metadata": {"name": name, "namespace": "default",
                                                              "annotations": ann}, "spec": spec})


def pv(name="my-volume", zones=(), storage_class_name="", source="csi", terms=None):
    spec = {"storageClassName": storage_class_name, "capacity": {"storage": "100Gi"}}
    if source == "csi":
        spec["csi"] = {"driver": "test.driver", "volumeHandle": "test-handle"}
    elif source == "local":
        spec["local"] = {"path": "/mnt/local-disks"}
    else:
        spec["hostPath"] = {"path": "/mnt/local-disks"}
    if terms is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": terms}}
    elif zones:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": list(zones)}]}]}}
    return PersistentVolume.model_validate({"metadata": {"name": name}, "spec": spec})


def with_volumes(pod: Pod, claims=(), ephemeral_class=UNSET) -> Pod:
    data = pod.model_dump(by_alias=True, exclude_none=True)
    vols = [{"name": f"vol-{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]
    if ephemeral_class is not UNSET:
        vols.append({"name": "eph", "ephemeral": {"volumeClaimTemplate": {
            "spec": {"storageClassName": ephemeral_class, "accessModes": ["ReadWriteOnce"]}}}})
    data["spec"]["volumes"] = vols
    return Pod.model_validate(data)
