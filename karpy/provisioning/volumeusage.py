"""CSI volume limits on existing nodes: how many claims of each driver a node may still attach.

Mirrors pkg/scheduling/volumeusage.go (Volumes, GetVolumes, ResolveDriver, driverFromSC,
driverFromVolume, VolumeUsage.ExceedsLimits/Add) and state/cluster.go populateVolumeLimits (a
node's limits are its CSINode's ``drivers[].allocatable.count``). Upstream checks the limits on
existing (and in-flight, registered) nodes only; new NodeClaims are not limited.

The in-tree to CSI translation (csi-translation-lib GetCSINameFromInTreeName) is modelled for the
in-tree names karpy meets on AWS: ``kubernetes.io/aws-ebs`` -> ``ebs.csi.aws.com`` (and an
``awsElasticBlockStore`` PV source). Other in-tree plugins are kept by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from karpy.api.pod import Pod
    from karpy.api.storage import PersistentVolumeClaim
    from karpy.provisioning.volumetopology import VolumeTopology

__all__ = ["IN_TREE_TO_CSI", "VolumeUsage", "pod_volumes", "resolve_driver"]

#: csi-translation-lib plugins: in-tree provisioner -> CSI driver (the AWS one)
IN_TREE_TO_CSI = {"kubernetes.io/aws-ebs": "ebs.csi.aws.com"}
AWS_EBS_DRIVER = "ebs.csi.aws.com"

Volumes = dict[str, frozenset[str]]


def resolve_driver(vt: VolumeTopology, claim: PersistentVolumeClaim) -> str:
    """ResolveDriver: the bound PV's CSI driver (or EBS for an in-tree EBS source), else the
    claim's StorageClass provisioner (translated); "" when unknown."""
    if claim.spec.volume_name:
        pv = vt.volumes.get(claim.spec.volume_name)
        if pv is None:
            return ""
        if pv.spec.csi is not None:
            return pv.spec.csi.driver
        if pv.spec.aws_elastic_block_store is not None:
            return AWS_EBS_DRIVER
        return ""
    sc_name = claim.spec.storage_class_name or ""
    sc = vt.classes.get(sc_name) if sc_name else None
    if sc is None:
        return ""
    return IN_TREE_TO_CSI.get(sc.provisioner, sc.provisioner)


def pod_volumes(vt: VolumeTopology, pod: Pod) -> Volumes:
    """GetVolumes: driver -> the ``namespace/name`` of the claims the pod mounts (missing claims
    are skipped, as upstream logs and continues)."""
    out: dict[str, set[str]] = {}
    for vol in pod.spec.volumes:
        claim, err = vt._claim(pod, vol)
        if claim is None or err is not None:
            continue
        driver = resolve_driver(vt, claim)
        if driver:
            out.setdefault(driver, set()).add(claim.key)
    return {k: frozenset(v) for k, v in out.items()}


class VolumeUsage:
    """volumeusage.go VolumeUsage for one node: limits per driver and the claims mounted."""

    __slots__ = ("limits", "volumes")

    def __init__(self, limits: dict[str, int], volumes: Volumes | None = None) -> None:
        self.limits = dict(limits)
        self.volumes: dict[str, frozenset[str]] = dict(volumes or {})

    def exceeds_limits(self, vols: Volumes) -> str | None:
        """ExceedsLimits: ``would exceed volume limit (provisioner=..., volume-count=..., volume-limit=...)``.
        Drivers are checked in sorted order (upstream ranges a map)."""
        for driver in sorted(set(self.volumes) | set(vols)):
            count = len(self.volumes.get(driver, frozenset()) | vols.get(driver, frozenset()))
            limit = self.limits.get(driver)
            if limit is not None and count > limit:
                return (f"would exceed volume limit (provisioner={driver}, volume-count={count}, "
                        f"volume-limit={limit})")
        return None

    def add(self, vols: Volumes) -> None:
        for driver, claims in vols.items():
            self.volumes[driver] = self.volumes.get(driver, frozenset()) | claims
