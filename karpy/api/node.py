"""core/v1 Node (labels live in ``metadata.labels``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from karpy.api.meta import Condition, HasConditions, KubeModel, ResourceQuantities, TypedObject
from karpy.api.pod import Taint

__all__ = ["Node", "NodeCondition", "NodeSpec", "NodeStatus"]


class NodeSpec(KubeModel):
    """core/v1 NodeSpec."""

    taints: list[Taint] = Field(default_factory=list)
    unschedulable: bool = False
    provider_id: str | None = Field(default=None, alias="providerID")
    pod_cidr: str | None = Field(default=None, alias="podCIDR")


class NodeCondition(Condition):
    """core/v1 NodeCondition."""


class NodeStatus(HasConditions, KubeModel):
    """core/v1 NodeStatus. If ``allocatable`` is absent it is taken to equal ``capacity``
    (what a kubelet with no reservations reports) — a convenience for hand-written nodes."""

    capacity: ResourceQuantities = Field(default_factory=dict)
    allocatable: ResourceQuantities = Field(default_factory=dict)
    conditions: list[NodeCondition] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _allocatable_from_capacity(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("capacity") and not data.get("allocatable"):
            data = {**data, "allocatable": data["capacity"]}
        return data



class Node(TypedObject):
    """core/v1 Node (cluster-scoped: ``key`` is the name)."""

    API_VERSION = "v1"
    KIND = "Node"
    CLUSTER_SCOPED = True

    spec: NodeSpec = Field(default_factory=NodeSpec)
    status: NodeStatus = Field(default_factory=NodeStatus)


    @property
    def labels(self) -> dict[str, str]:
        return self.metadata.labels
