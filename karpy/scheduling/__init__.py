"""Karpenter's scheduling algebra (``pkg/scheduling``): requirements, labels, taints, resources,
host ports. Names resolve lazily: importing one module does not load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._exports import lazy_exports

_LABELS = (
    "ARCHITECTURE_AMD64", "ARCHITECTURE_ARM64", "CAPACITY_TYPE_ON_DEMAND", "CAPACITY_TYPE_RESERVED",
    "CAPACITY_TYPE_SPOT", "CORE_WELL_KNOWN_LABELS", "DO_NOT_DISRUPT_ANNOTATION_KEY", "LABEL_ARCH",
    "LABEL_CAPACITY_TYPE", "LABEL_HOSTNAME", "LABEL_INSTANCE_TYPE", "LABEL_NODEPOOL", "LABEL_OS",
    "LABEL_REGION", "LABEL_WINDOWS_BUILD", "LABEL_ZONE", "NODE_INITIALIZED", "NODE_REGISTERED",
    "OP_DOES_NOT_EXIST", "OP_EXISTS", "OP_GT", "OP_GTE", "OP_IN", "OP_LT", "OP_LTE", "OP_NOT_IN",
    "RESTRICTED_LABEL_DOMAINS", "RESTRICTED_LABELS", "normalize_key", "validate_requirement",
)
_RESOURCES = (
    "ResourceList", "exceeds", "fits", "from_quantities", "max_resources", "merge", "min_resources",
    "pod_requests", "requests_for_pods", "subtract", "to_quantities",
)
_EXPORTS = {
    "Requirement": "requirement",
    "Requirements": "requirements", "pod_requirements": "requirements",
    "strict_pod_requirements": "requirements",
    **dict.fromkeys(_LABELS, "labels"),
    **dict.fromkeys(_RESOURCES, "resources"),
    "KNOWN_EPHEMERAL_TAINTS": "taints", "is_known_ephemeral_taint": "taints",
    "toleration_tolerates_taint": "taints", "tolerates": "taints",
    "HostPort": "hostports", "HostPortUsage": "hostports", "get_host_ports": "hostports",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from karpy.scheduling.hostports import HostPort, HostPortUsage, get_host_ports
    from karpy.scheduling.labels import (ARCHITECTURE_AMD64, ARCHITECTURE_ARM64, CAPACITY_TYPE_ON_DEMAND,
                                         CAPACITY_TYPE_RESERVED, CAPACITY_TYPE_SPOT, CORE_WELL_KNOWN_LABELS,
                                         DO_NOT_DISRUPT_ANNOTATION_KEY, LABEL_ARCH, LABEL_CAPACITY_TYPE,
                                         LABEL_HOSTNAME, LABEL_INSTANCE_TYPE, LABEL_NODEPOOL, LABEL_OS,
                                         LABEL_REGION, LABEL_WINDOWS_BUILD, LABEL_ZONE, NODE_INITIALIZED,
                                         NODE_REGISTERED, OP_DOES_NOT_EXIST, OP_EXISTS, OP_GT, OP_GTE, OP_IN,
                                         OP_LT, OP_LTE, OP_NOT_IN, RESTRICTED_LABEL_DOMAINS, RESTRICTED_LABELS,
                                         normalize_key, validate_requirement)
    from karpy.scheduling.requirement import Requirement
    from karpy.scheduling.requirements import Requirements, pod_requirements, strict_pod_requirements
    from karpy.scheduling.resources import (ResourceList, exceeds, fits, from_quantities, max_resources, merge,
                                            min_resources, pod_requests, requests_for_pods, subtract,
                                            to_quantities)
    from karpy.scheduling.taints import (KNOWN_EPHEMERAL_TAINTS, is_known_ephemeral_taint,
                                         toleration_tolerates_taint, tolerates)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
