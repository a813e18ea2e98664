"""Which scheduling.k8s.io versions and pod fields the API server of each modelled Kubernetes version
serves (kube-apiserver's storage versions; ``scheduling/v1beta1`` and ``v1alpha3`` in 1.37).

v1alpha1 (the 1.35 Workload with ``spec.podGroups``, ``pod.spec.workloadRef``) was removed in 1.36,
v1alpha2 in 1.37; v1beta1 Workload/PodGroup and v1alpha3 CompositePodGroup arrived in 1.37.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["LOADER_KUBERNETES_VERSION", "admission_version", "check_served"]

#: the version ``load_manifests`` admits at unless told (the newest modelled)
LOADER_KUBERNETES_VERSION = "1.37"

_GROUP = "scheduling.k8s.io"
#: scheduling.k8s.io version -> (first served, first not served) as (major.minor) strings; None = still served
_SERVED: dict[str, tuple[str, str | None]] = {
    "v1alpha1": ("1.35", "1.36"),
    "v1alpha2": ("1.36", "1.37"),
    "v1beta1": ("1.37", None),
    "v1alpha3": ("1.37", None),
}
#: the kinds whose documents carry a pod spec, and where
_POD_SPEC_AT: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",), "Deployment": ("spec", "template", "spec"), "ReplicaSet": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"), "Job": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"), "ReplicationController": ("spec", "template", "spec"),
}


def _minor(version: str) -> int:
    return int(version.split(".")[1])


def admission_version(api_version: str, kind: str, kubernetes_version: str) -> str:
    """The Kubernetes version whose schemas admit this document: the modelled one."""
    return kubernetes_version


def check_served(api_version: str, kind: str, data: Mapping[str, Any], kubernetes_version: str) -> tuple[str, str] | None:
    """``(field, message)`` when the API server of ``kubernetes_version`` would not accept this
    document's group version or one of its removed pod fields, else None."""
    group, _, version = api_version.rpartition("/")
    if group == _GROUP and version in _SERVED and kind != "PriorityClass":
        first, gone = _SERVED[version]
        minor = _minor(kubernetes_version)
        if minor < _minor(first) or (gone is not None and minor >= _minor(gone)):
            when = (f"it was removed in Kubernetes {gone}" if gone is not None and minor >= _minor(gone)
                    else f"it is served from Kubernetes {first}")
            hint = ("; write scheduling.k8s.io/v1beta1 Workload (spec.podGroupTemplates) and PodGroup objects, "
                    "pods joining with spec.schedulingGroup.podGroupName" if version in ("v1alpha1", "v1alpha2")
                    else "")
            return "apiVersion", (f"{api_version} {kind} is not served by Kubernetes {kubernetes_version} ({when}"
                                  f"{hint}; or run with --kubernetes-version {first})")
    at = _POD_SPEC_AT.get(kind)
    if at is not None and _minor(kubernetes_version) >= 36:
        spec: Any = data
        for step in at:
            spec = spec.get(step) if isinstance(spec, Mapping) else None
        if isinstance(spec, Mapping) and "workloadRef" in spec:
            return ".".join((*at, "workloadRef")), (
                f"removed in Kubernetes 1.36 (the v1alpha1 Workload reference; Kubernetes {kubernetes_version} uses "
                "spec.schedulingGroup.podGroupName naming a scheduling.k8s.io/v1beta1 PodGroup); or run with "
                "--kubernetes-version 1.35")
    return None
