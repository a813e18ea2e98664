"""Volume topology: where a pod's PersistentVolumeClaims let it run, and which claims Karpenter
refuses to provision for.

Mirrors pkg/controllers/provisioning/scheduling/volumetopology.go (GetRequirements,
mergeVolumeRequirementAlternatives, getStorageClassRequirements, getPersistentVolumeRequirements,
ValidatePersistentVolumeClaims, validateVolume) and pkg/utils/volume GetPersistentVolumeClaim.

* A claim bound to a PersistentVolume (``spec.volumeName``) contributes the PV's
  ``nodeAffinity.required`` terms as alternatives (OR); ``kubernetes.io/hostname`` is dropped from
  local / hostPath volumes (a term left empty then allows any node).
* An unbound claim contributes its StorageClass's ``allowedTopologies`` terms (``In``).
* The alternatives of several volumes are combined: the compatible cross products, else all of
  them (upstream keeps incompatible combinations so the NodeClaim reports the conflict).
* Validation (provisioner.go Validate): a missing claim, a claim being deleted or ``Lost``, a bound
  claim whose PV is missing or being deleted or which lacks ``pv.kubernetes.io/bind-completed``,
  an unbound claim without a StorageClass, or whose class is missing or ``Immediate``, makes the
  pod ``ignoring pod, <err>``.

Claims come from the manifests, from StatefulSet ``volumeClaimTemplates`` (``<template>-<pod>``,
created unbound like the StatefulSet controller does) and from generic ephemeral volumes
(``<pod>-<volume>``); a template without ``storageClassName`` gets the default StorageClass
(DefaultStorageClass admission). ``UnsupportedProvisioners`` / ``UnsupportedTopologyKeys`` are empty
upstream and are not modelled. CSI driver resolution for volume limits lives in
:mod:`karpy.provisioning.volumeusage` when present.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from karpy.api.pod import Pod, Volume
from karpy.api.storage import (ANN_BIND_COMPLETED, VOLUME_BINDING_IMMEDIATE, PersistentVolume,
                               PersistentVolumeClaim, StorageClass, default_storage_class)
from karpy.scheduling.labels import LABEL_HOSTNAME, OP_IN
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

__all__ = ["VolumeTopology", "claim_name_of"]


def claim_name_of(pod: Pod, volume: Volume) -> str | None:
    """pkg/utils/volume GetPersistentVolumeClaim's claim name (ephemeral: ``<pod>-<volume>``)."""
    if volume.persistent_volume_claim is not None:
        return volume.persistent_volume_claim.claim_name
    if volume.ephemeral is not None:
        return f"{pod.metadata.name}-{volume.name}"
    return None


def _wrap(msg: str, *pairs: tuple[str, str]) -> str:
    """operatorpkg serrors.Wrap text: ``msg (k=v, k=v)``."""
    return f"{msg} ({', '.join(f'{k}={v}' for k, v in pairs)})" if pairs else msg


def _merge(existing: Requirements | None, vol: Requirements) -> Requirements:
    merged = Requirements()
    if existing is not None:
        merged.add(*existing.values())
    merged.add(*vol.values())
    return merged


def _compatible(existing: Requirements | None, vol: Requirements | None) -> bool:
    return existing is None or vol is None or existing.intersects(vol) is None


def merge_alternatives(alternatives: list[Requirements | None],
                       vol_alts: list[Requirements]) -> list[Requirements | None]:
    """mergeVolumeRequirementAlternatives: the compatible cross product, else every combination."""
    merged: list[Requirements | None] = [_merge(a, v) for a in alternatives for v in vol_alts if _compatible(a, v)]
    return merged or [_merge(a, v) for a in alternatives for v in vol_alts]


@dataclass
class VolumeTopology:
    """The cluster's claims, volumes and classes, and the two questions Karpenter asks of them."""

    claims: dict[str, PersistentVolumeClaim] = field(default_factory=dict)  # "ns/name"
    volumes: dict[str, PersistentVolume] = field(default_factory=dict)
    classes: dict[str, StorageClass] = field(default_factory=dict)
    default_class: StorageClass | None = None
    #: CSINode by node name (volume limits: karpy.provisioning.volumeusage)
    csi_nodes: dict[str, Any] = field(default_factory=dict)
    #: StatefulSets by (namespace, name): claims of replicas created later come from their templates
    stateful_sets: dict[tuple[str, str], Any] = field(default_factory=dict)

    @classmethod
    def from_objects(cls, claims: Iterable[PersistentVolumeClaim] = (), volumes: Iterable[PersistentVolume] = (),
                     classes: Iterable[StorageClass] = (), pods: Sequence[Pod] = (),
                     stateful_sets: Sequence[Any] = (), csi_nodes: Iterable[Any] = ()) -> VolumeTopology:
        """Index the objects; add the claims StatefulSet templates and ephemeral volumes imply
        (unbound, class defaulted) unless the manifests already hold them."""
        classes = list(classes)
        vt = cls({c.key: c for c in claims}, {v.metadata.name: v for v in volumes},
                 {c.metadata.name: c for c in classes})
        vt.default_class = default_storage_class(classes)
        vt.csi_nodes = {c.metadata.name: c for c in csi_nodes}
        vt.stateful_sets = {(s.metadata.namespace or "default", s.metadata.name): s for s in stateful_sets}
        for sts in stateful_sets:
            for i in range(sts.spec.replicas):
                for claim in sts.claims_for(i):
                    vt._implied(claim)
        for pod in pods:
            for vol in pod.spec.volumes:
                vt._claim(pod, vol)
        return vt

    def _implied(self, claim: PersistentVolumeClaim) -> None:
        if claim.key in self.claims:
            return
        default = self.default_class
        if claim.spec.storage_class_name is None and default is not None:
            claim = claim.model_copy(update={"spec": claim.spec.model_copy(
                update={"storage_class_name": default.metadata.name})})
        self.claims[claim.key] = claim

    def volume_limits(self, node_name: str) -> dict[str, int]:
        """state/cluster.go populateVolumeLimits: driver -> allocatable count from the node's CSINode."""
        csi = self.csi_nodes.get(node_name)
        if csi is None:
            return {}
        return {d.name: d.count for d in csi.spec.drivers if d.count is not None}

    # -- lookups ------------------------------------------------------------------------------
    def _claim(self, pod: Pod, volume: Volume) -> tuple[PersistentVolumeClaim | None, str | None]:
        name = claim_name_of(pod, volume)
        if name is None:
            return None, None
        claim = self.claims.get(f"{pod.metadata.namespace}/{name}")
        if claim is None and volume.ephemeral is not None and volume.ephemeral.volume_claim_template is not None:
            # the ephemeral volume controller creates <pod>-<volume> from the template
            tmpl = volume.ephemeral.volume_claim_template
            self._implied(PersistentVolumeClaim.model_validate({
                "metadata": {**(tmpl.get("metadata") or {}), "name": name, "namespace": pod.metadata.namespace},
                "spec": tmpl.get("spec") or {}}))
            claim = self.claims.get(f"{pod.metadata.namespace}/{name}")
        if claim is None and volume.persistent_volume_claim is not None:
            claim = self._statefulset_claim(pod, name)
        if claim is None:
            return None, _wrap(f'getting persistent volume claim, persistentvolumeclaims "{name}" not found',
                               ("PersistentVolumeClaim", name))
        return claim, None

    def _statefulset_claim(self, pod: Pod, name: str) -> PersistentVolumeClaim | None:
        """The claim the StatefulSet controller creates for a replica (``<template>-<pod>``)."""
        for ref in pod.metadata.owner_references or ():
            if ref.kind != "StatefulSet" or not ref.controller:
                continue
            sts = self.stateful_sets.get((pod.metadata.namespace or "default", ref.name))
            for tmpl in (sts.spec.volume_claim_templates if sts is not None else ()):
                tname = (tmpl.get("metadata") or {}).get("name", "")
                if f"{tname}-{pod.metadata.name}" == name:
                    self._implied(PersistentVolumeClaim.model_validate({
                        "metadata": {**(tmpl.get("metadata") or {}), "name": name, "namespace": pod.metadata.namespace},
                        "spec": dict(tmpl.get("spec") or {})}))
                    return self.claims.get(f"{pod.metadata.namespace}/{name}")
        return None

    # -- GetRequirements ----------------------------------------------------------------------
    def requirements(self, pod: Pod) -> tuple[list[Requirements | None] | None, str | None]:
        """GetRequirements: the pod's volume alternatives (None when its volumes constrain nothing)
        or an error (the pod is then left out of scheduling, as upstream logs and skips it)."""
        alternatives: list[Requirements | None] = [None]
        for vol in pod.spec.volumes:
            vol_alts, err = self._volume_requirements(pod, vol)
            if err is not None:
                return None, err
            if vol_alts:
                alternatives = merge_alternatives(alternatives, vol_alts)
        if len(alternatives) == 1 and alternatives[0] is None:
            return None, None
        return alternatives, None

    def _volume_requirements(self, pod: Pod, volume: Any) -> tuple[list[Requirements], str | None]:
        claim, err = self._claim(pod, volume)
        if err is not None:
            return [], f"discovering persistent volume claim, {err}"
        if claim is None:
            return [], None
        if claim.spec.volume_name:
            pv = self.volumes.get(claim.spec.volume_name)
            if pv is None:
                return [], ("getting existing requirements, "
                            + _wrap(f'getting persistent volume, persistentvolumes "{claim.spec.volume_name}" not found',
                                    ("PersistentVolume", claim.spec.volume_name)))
            return self._pv_requirements(pv), None
        if claim.spec.storage_class_name:
            sc = self.classes.get(claim.spec.storage_class_name)
            if sc is None:
                name = claim.spec.storage_class_name
                return [], _wrap(f'getting storage class, storageclasses.storage.k8s.io "{name}" not found',
                                 ("StorageClass", name))
            return self._class_requirements(sc), None
        return [], None

    @staticmethod
    def _class_requirements(sc: StorageClass) -> list[Requirements]:
        out = []
        for term in sc.allowed_topologies:
            reqs = [Requirement(e.key, OP_IN, tuple(e.values)) for e in term.match_label_expressions]
            if reqs:
                out.append(Requirements(*reqs))
        return out

    @staticmethod
    def _pv_requirements(pv: PersistentVolume) -> list[Requirements]:
        na = pv.spec.node_affinity
        if na is None or na.required is None:
            return []
        out = []
        local = pv.spec.local is not None or pv.spec.host_path is not None
        for term in na.required.node_selector_terms:
            exprs = list(term.match_expressions or ())
            if local:
                kept = [e for e in exprs if e.key != LABEL_HOSTNAME]
                if exprs and not kept:
                    out.append(Requirements())
                    continue
                exprs = kept
            if exprs:
                out.append(Requirements.from_node_selector_requirements(exprs, with_min_values=False))
        return out

    # -- ValidatePersistentVolumeClaims -------------------------------------------------------
    def validate(self, pod: Pod) -> str | None:
        """ValidatePersistentVolumeClaims: the first invalid claim's error, or None."""
        for vol in pod.spec.volumes:
            claim, err = self._claim(pod, vol)
            if err is not None:
                return err
            if claim is None:
                continue
            pvc_ref = ("PersistentVolumeClaim", claim.key)
            if claim.metadata.deletion_timestamp is not None:
                return _wrap("persistentvolumeclaim is being deleted", pvc_ref)
            if claim.status.phase == "Lost":
                return _wrap("persistentvolumeclaim bound to non-existent persistentvolume", pvc_ref,
                             ("PersistentVolume", claim.spec.volume_name or ""))
            sc_name = claim.spec.storage_class_name or ""
            if claim.spec.volume_name:
                pv = self.volumes.get(claim.spec.volume_name)
                if pv is None or pv.metadata.deletion_timestamp is not None:
                    why = (f'persistentvolumes "{claim.spec.volume_name}" not found' if pv is None
                           else "persistentvolume is being deleted")
                    return _wrap(f"failed to validate pvc, {why}", pvc_ref,
                                 ("PersistentVolume", claim.spec.volume_name), ("StorageClass", sc_name))
                if ANN_BIND_COMPLETED not in (claim.metadata.annotations or {}):
                    return _wrap("pvc is considered unbound because it does not contain annotation",
                                 ("annotation", ANN_BIND_COMPLETED), ("PersistentVolumeClaim", claim.metadata.name),
                                 ("PersistentVolume", claim.spec.volume_name))
            else:
                if not sc_name:
                    return _wrap("unbound pvc must define a storage class", pvc_ref, ("StorageClass", sc_name))
                sc = self.classes.get(sc_name)
                if sc is None:
                    return _wrap("failed to validate pvc, failed to get storage class, "
                                 f'storageclasses.storage.k8s.io "{sc_name}" not found', pvc_ref, ("StorageClass", sc_name))
                if sc.volume_binding_mode == VOLUME_BINDING_IMMEDIATE:
                    return _wrap("failed to validate pvc, pvc with immediate volume binding mode must be bound",
                                 pvc_ref, ("StorageClass", sc_name))
        return None
