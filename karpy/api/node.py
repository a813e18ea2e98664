"""core/v1 Node (labels live in ``metadata.labels``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from karpy.api.meta import Condition, KubeModel, ResourceQuantities, TypedObject
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


class NodeStatus(KubeModel):
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

    def condition(self, type_: str) -> NodeCondition | None:
        """The condition of the given type, if present."""
        for cond in self.conditions:
            if cond.type == type_:
                return cond
        return None


class Node(TypedObject):
    """core/v1 Node (cluster-scoped: ``key`` is the name)."""

    API_VERSION = "v1"
    KIND = "Node"

    spec: NodeSpec = Field(default_factory=NodeSpec)
    status: NodeStatus = Field(default_factory=NodeStatus)

    @field_validator("spec", "status", mode="before")
    @classmethod
    def _null_struct(cls, value: Any) -> Any:
        return {} if value is None else value

    @property
    def key(self) -> str:
        return self.metadata.name

    @property
    def labels(self) -> dict[str, str]:
        return self.metadata.labels
