"""The volume filters of the default profile, as far as they decide placement: VolumeBinding,
VolumeZone and NodeVolumeLimits.

Mirrors pkg/scheduler/framework/plugins/volumebinding (volume_binding.go PreFilter/Filter,
binder.go GetPodVolumes / FindPodVolumes / checkBoundClaims / checkVolumeProvisions and its
ConflictReasons), volumezone/volume_zone.go and nodevolumelimits/csi.go (k8s v1.34/1.35).

Modelled: a missing claim or an unbound ``Immediate`` claim makes the pod unresolvable in
PreFilter; a bound claim's PV node affinity must match the node (missing PV: "pv(s) not exist");
an unbound ``WaitForFirstConsumer`` claim is dynamically provisioned, so the class's
``allowedTopologies`` must match the node and a ``kubernetes.io/no-provisioner`` class cannot
provision (static PV matching of unbound claims is not modelled: karpy holds no unbound PVs);
VolumeZone compares a bound PV's zone/region labels with the node's; NodeVolumeLimits counts the
CSI claims on the node against its CSINode allocatable counts. Binding itself (PreBind) is
immediate. Storage capacity (CSIStorageCapacity) is not modelled.

The plugins read the cluster's claims through ``volumes()`` -- a callable returning the
simulation's :class:`karpy.provisioning.volumetopology.VolumeTopology` (or None: no volumes, the
plugins skip).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

from ..framework import CycleState, Plugin
from ..nodeinfo import NodeInfo
from ..podinfo import PodInfo
from ..types import Code, SUCCESS_STATUS, Status, unresolvable, unschedulable
from .helpers import node_selector_matches

__all__ = ["NodeVolumeLimits", "VolumeBinding", "VolumeZone", "volume_plugins"]

#: binder.go ConflictReasons
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) had volume node affinity conflict"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
#: volume_binding.go PreFilter
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
#: volumezone ErrReasonConflict
ERR_REASON_ZONE_CONFLICT = "node(s) had no available volume zone"
#: nodevolumelimits ErrReasonMaxVolumeCountExceeded
ERR_REASON_MAX_VOLUME_COUNT = "node(s) exceed max volume count"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
_ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone",
                "topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")

VolumesFn = Callable[[], Any]


def _claims(vt: Any, pod: PodInfo) -> list[tuple[Any, Any]]:
    return [(vol, vt._claim(pod.pod, vol)) for vol in pod.spec.volumes or ()]


def _topology_terms_match(terms: Any, labels: dict[str, str]) -> bool:
    """v1helper.MatchTopologySelectorTerms: no terms matches everything; terms ORed, expressions ANDed."""
    if not terms:
        return True
    return any(all(labels.get(e.key) in set(e.values) for e in t.match_label_expressions) for t in terms)


class _VolumePlugin(Plugin):
    """The volume filters' shared state: the VolumeTopology callable."""

    def __init__(self, volumes: VolumesFn) -> None:
        self.volumes = volumes

    def _topology(self, pod: PodInfo) -> Any:
        """The VolumeTopology when the pod has volumes to check, else None (the plugin passes)."""
        vt = self.volumes()
        return vt if vt is not None and pod.spec.volumes else None

    def filter_passes_every_node(self, state: CycleState, pod: PodInfo) -> bool:
        return self._topology(pod) is None


class VolumeBinding(_VolumePlugin):
    """volumebinding: PreFilter (missing / unbound Immediate claims) and Filter (FindPodVolumes)."""

    name = "VolumeBinding"
    has_pre_filter = True
    has_filter = True
    _KEY = "PreFilterVolumeBinding"

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> tuple[Status, Optional[set[str]]]:
        vt = self._topology(pod)
        if vt is None:
            return Status(Code.SKIP), None
        bound, delayed = [], []
        for vol, (claim, err) in _claims(vt, pod):
            if err is not None:
                name = vol.persistent_volume_claim.claim_name if vol.persistent_volume_claim else f"{pod.name}-{vol.name}"
                return unresolvable(f'persistentvolumeclaim "{name}" not found'), None
            if claim is None:
                continue
            if claim.spec.volume_name:
                bound.append(claim)
                continue
            sc = vt.classes.get(claim.spec.storage_class_name or "")
            if sc is not None and sc.volume_binding_mode == "WaitForFirstConsumer":
                delayed.append((claim, sc))
            else:
                return unresolvable(ERR_UNBOUND_IMMEDIATE), None
        if not bound and not delayed:
            return Status(Code.SKIP), None
        state.data[self._KEY] = (bound, delayed)
        return Status(), None

    def filter(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> Status:
        pre = state.data.get(self._KEY)
        if pre is None:
            return SUCCESS_STATUS
        vt = self.volumes()
        bound, delayed = pre
        node = ni.node
        labels = node.metadata.labels or {}
        reasons: list[str] = []
        node_ok, pv_found = True, True
        for claim in bound:  # checkBoundClaims
            pv = vt.volumes.get(claim.spec.volume_name)
            if pv is None:
                pv_found = False
                break
            na = pv.spec.node_affinity
            if na is not None and na.required is not None and \
                    not node_selector_matches(na.required, node.metadata.name, labels):
                node_ok = False
                break
        unbound_ok = True
        for _claim, sc in delayed:  # checkVolumeProvisions
            if sc.provisioner == NO_PROVISIONER or not _topology_terms_match(sc.allowed_topologies, labels):
                unbound_ok = False
                break
        if not node_ok:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not pv_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return unresolvable(*reasons) if reasons else SUCCESS_STATUS


class VolumeZone(_VolumePlugin):
    """volumezone: a bound PV's zone / region labels must match the node's (a label with several
    values separated by ``__`` allows any of them)."""

    name = "VolumeZone"
    has_filter = True

    def filter(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> Status:
        vt = self._topology(pod)
        if vt is None:
            return SUCCESS_STATUS
        labels = ni.node.metadata.labels or {}
        for _vol, (claim, _err) in _claims(vt, pod):
            if claim is None or not claim.spec.volume_name:
                continue
            pv = vt.volumes.get(claim.spec.volume_name)
            if pv is None:
                continue
            for key in _ZONE_LABELS:
                value = (pv.metadata.labels or {}).get(key)
                if value is None:
                    continue
                node_value = labels.get(key)
                if node_value is None or node_value not in set(value.split("__")):
                    return unresolvable(ERR_REASON_ZONE_CONFLICT)
        return SUCCESS_STATUS


class NodeVolumeLimits(_VolumePlugin):
    """nodevolumelimits (CSI): the distinct CSI claims on the node plus the pod's new ones, per
    driver, within the node's CSINode ``allocatable.count``."""

    name = "NodeVolumeLimits"
    has_filter = True

    def filter(self, state: CycleState, pod: PodInfo, ni: NodeInfo) -> Status:
        vt = self._topology(pod)
        if vt is None:
            return SUCCESS_STATUS
        limits = vt.volume_limits(ni.node.metadata.name)
        if not limits:
            return SUCCESS_STATUS
        from karpy.provisioning.volumeusage import pod_volumes

        new = pod_volumes(vt, pod.pod)
        if not new:
            return SUCCESS_STATUS
        used: dict[str, set[str]] = {}
        for p in ni.pods:
            for driver, claims in pod_volumes(vt, p.pod).items():
                used.setdefault(driver, set()).update(claims)
        for driver, claims in new.items():
            limit = limits.get(driver)
            if limit is not None and len(used.get(driver, set()) | claims) > limit:
                return unschedulable(ERR_REASON_MAX_VOLUME_COUNT)
        return SUCCESS_STATUS


def volume_plugins(volumes: VolumesFn) -> list[Plugin]:
    """The default profile's volume filters in MultiPoint order (default_plugins.go:
    NodeVolumeLimits, VolumeBinding, VolumeZone after NodeResourcesFit)."""
    return [NodeVolumeLimits(volumes), VolumeBinding(volumes), VolumeZone(volumes)]
