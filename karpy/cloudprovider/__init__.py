"""The cloud-provider seam (``pkg/cloudprovider``): the ``CloudProvider`` protocol, instance types
and offerings, Karpenter's cloud-provider errors, and the registry that finds a provider by name
(entry-point group ``karpy.cloudproviders``). The in-memory test provider is the submodule
:mod:`karpy.cloudprovider.fake` (upstream ``pkg/cloudprovider/fake``). Names resolve lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._exports import lazy_exports

_TYPES = (
    "MAX_INSTANCE_TYPES", "MIN_VALUES_POLICY_BEST_EFFORT", "MIN_VALUES_POLICY_STRICT", "CloudProvider",
    "CloudProviderError", "CreateError", "InstanceType", "InstanceTypeOverhead", "InstanceTypes",
    "InsufficientCapacityError", "MinValuesError", "NodeClaimNotFoundError", "NodeClassNotReadyError", "Offering", "Offerings",
    "ProviderController", "UnevaluatedNodePoolError", "errors_as", "ignore_nodeclaim_not_found_error",
    "is_insufficient_capacity_error", "is_nodeclaim_not_found_error", "is_nodeclass_not_ready_error",
    "is_unevaluated_nodepool_error",
)
_REGISTRY = ("ENTRY_POINT_GROUP", "ProviderOptions", "UnknownCloudProviderError", "available_cloud_providers",
             "resolve_cloud_provider")
_EXPORTS = {**dict.fromkeys(_TYPES, "types"), **dict.fromkeys(_REGISTRY, "registry")}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from karpy.cloudprovider.registry import (ENTRY_POINT_GROUP, ProviderOptions, UnknownCloudProviderError,
                                              available_cloud_providers, resolve_cloud_provider)
    from karpy.cloudprovider.types import (MAX_INSTANCE_TYPES, MIN_VALUES_POLICY_BEST_EFFORT,
                                           MIN_VALUES_POLICY_STRICT, CloudProvider, CloudProviderError,
                                           CreateError, InstanceType, InstanceTypeOverhead, InstanceTypes,
                                           InsufficientCapacityError, MinValuesError, NodeClaimNotFoundError,
                                           NodeClassNotReadyError, Offering, Offerings, ProviderController,
                                           UnevaluatedNodePoolError,
                                           errors_as, ignore_nodeclaim_not_found_error,
                                           is_insufficient_capacity_error, is_nodeclaim_not_found_error,
                                           is_nodeclass_not_ready_error, is_unevaluated_nodepool_error)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
