"""karpenter.sh/v1 NodeClaim (pkg/apis/v1/nodeclaim.go, nodeclaim_status.go)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from karpy.api.meta import Condition, HasConditions, KubeModel, ResourceQuantities, TypedObject
from karpy.api.nodepool import NodeClaimShape, NodeClassReference

__all__ = ["NodeClaim", "NodeClaimResources", "NodeClaimSpec", "NodeClaimStatus"]


class NodeClaimResources(KubeModel):
    """karpenter.sh/v1 ResourceRequirements (requests only)."""

    requests: ResourceQuantities = Field(default_factory=dict)


class NodeClaimSpec(NodeClaimShape):
    """karpenter.sh/v1 NodeClaimSpec."""

    resources: NodeClaimResources = Field(default_factory=NodeClaimResources)
    node_class_ref: NodeClassReference | None = None



class NodeClaimStatus(HasConditions, KubeModel):
    """karpenter.sh/v1 NodeClaimStatus."""

    node_name: str | None = None
    provider_id: str | None = Field(default=None, alias="providerID")
    image_id: str | None = Field(default=None, alias="imageID")
    capacity: ResourceQuantities = Field(default_factory=dict)
    allocatable: ResourceQuantities = Field(default_factory=dict)
    conditions: list[Condition] = Field(default_factory=list)
    #: status.lastPodEventTime (pkg/controllers/nodeclaim/podevents): restarts consolidateAfter
    last_pod_event_time: Any = None



class NodeClaim(TypedObject):
    """karpenter.sh/v1 NodeClaim (cluster-scoped: ``key`` is the name)."""

    API_VERSION = "karpenter.sh/v1"
    KIND = "NodeClaim"
    CLUSTER_SCOPED = True

    spec: NodeClaimSpec = Field(default_factory=NodeClaimSpec)
    status: NodeClaimStatus = Field(default_factory=NodeClaimStatus)


