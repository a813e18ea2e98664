"""The cloud-provider seam (``pkg/cloudprovider``): the ``CloudProvider`` protocol, instance types
and offerings, Karpenter's cloud-provider errors, and the registry that finds a provider by name
(entry-point group ``karpy.cloudproviders``). The in-memory test provider is the submodule
:mod:`karpy.cloudprovider.fake` (upstream ``pkg/cloudprovider/fake``).
"""

from __future__ import annotations

from karpy.cloudprovider.registry import (ENTRY_POINT_GROUP, ProviderOptions, UnknownCloudProviderError,
                                          available_cloud_providers, resolve_cloud_provider)
from karpy.cloudprovider.types import (MAX_INSTANCE_TYPES, MIN_VALUES_POLICY_BEST_EFFORT, MIN_VALUES_POLICY_STRICT,
                                       CloudProvider, CloudProviderError, CreateError, InstanceType,
                                       InstanceTypeOverhead, InstanceTypes, InsufficientCapacityError, MinValuesError,
                                       NodeClaimNotFoundError, NodeClassNotReadyError, Offering, Offerings,
                                       ProviderController, UnevaluatedNodePoolError, errors_as,
                                       ignore_nodeclaim_not_found_error, is_insufficient_capacity_error,
                                       is_nodeclaim_not_found_error, is_nodeclass_not_ready_error,
                                       is_unevaluated_nodepool_error)

__all__ = [
    "ENTRY_POINT_GROUP", "MAX_INSTANCE_TYPES", "MIN_VALUES_POLICY_BEST_EFFORT", "MIN_VALUES_POLICY_STRICT",
    "CloudProvider", "CloudProviderError", "CreateError", "InstanceType", "InstanceTypeOverhead", "InstanceTypes",
    "InsufficientCapacityError", "MinValuesError", "NodeClaimNotFoundError", "NodeClassNotReadyError", "Offering",
    "Offerings", "ProviderController", "ProviderOptions", "UnevaluatedNodePoolError", "UnknownCloudProviderError",
    "available_cloud_providers", "errors_as", "ignore_nodeclaim_not_found_error", "is_insufficient_capacity_error",
    "is_nodeclaim_not_found_error", "is_nodeclass_not_ready_error", "is_unevaluated_nodepool_error",
    "resolve_cloud_provider",
]
