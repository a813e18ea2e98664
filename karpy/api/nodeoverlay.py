"""karpenter.sh/v1alpha1 NodeOverlay (pkg/apis/v1alpha1/nodeoverlay.go).

CRD validation reproduced: requirement rules (In/NotIn need a value, numeric operators a single
non-negative integer), ``priceAdjustment``/``price`` patterns, not both set, ``capacity`` may only
add extended resources, weight 1..10000.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, Field, field_validator, model_validator

from karpy.api.meta import KubeModel, ResourceQuantities, TypedObject
from karpy.api.nodepool import KarpenterRequirement
from karpy.api.pod import NodeSelectorRequirement

__all__ = ["NodeOverlay", "NodeOverlaySpec"]

_PRICE_ADJUSTMENT_RE = re.compile(r"^(([+-]{1}(\d*\.?\d+))|(\+{1}\d*\.?\d+%)|(^(-\d{1,2}(\.\d+)?%)$)|(-100%))$")
_PRICE_RE = re.compile(r"^\d+(\.\d+)?$")
_RESTRICTED_CAPACITY = ("cpu", "memory", "ephemeral-storage", "pods")


def _not_in_needs_value(req: NodeSelectorRequirement) -> NodeSelectorRequirement:
    if req.operator == "NotIn" and not req.values:
        raise ValueError(f"requirement {req.key!r}: requirements with operator 'NotIn' must have a value defined")
    return req


OverlayRequirement = Annotated[KarpenterRequirement, AfterValidator(_not_in_needs_value)]


class NodeOverlaySpec(KubeModel):
    """karpenter.sh/v1alpha1 NodeOverlaySpec (``weight`` ``None`` counts as 0)."""

    requirements: Annotated[list[OverlayRequirement], Field(max_length=100)] = Field(default_factory=list)
    price_adjustment: str | None = None
    price: str | None = None
    capacity: ResourceQuantities = Field(default_factory=dict)
    weight: int | None = Field(default=None, ge=1, le=10000)

    @field_validator("price_adjustment", mode="before")
    @classmethod
    def _price_adjustment(cls, value: Any) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            raise ValueError(f"must be a string such as \"-0.5\" or \"+10%\" — quote it (got {value!r})")
        if isinstance(value, str) and not _PRICE_ADJUSTMENT_RE.match(value):
            raise ValueError(f"invalid priceAdjustment {value!r}: use a signed amount (\"+0.5\", \"-0.1\") "
                             f"or a percentage (\"+10%\", \"-15%\")")
        return value

    @field_validator("price", mode="before")
    @classmethod
    def _price(cls, value: Any) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            raise ValueError(f"must be a string such as \"0.25\" — quote it (got {value!r})")
        if isinstance(value, str) and not _PRICE_RE.match(value):
            raise ValueError(f"invalid price {value!r}: use a non-negative decimal such as \"0.25\"")
        return value

    @field_validator("capacity")
    @classmethod
    def _extended_only(cls, value: dict[str, Any]) -> dict[str, Any]:
        restricted = sorted(set(value) & set(_RESTRICTED_CAPACITY))
        if restricted:
            raise ValueError(f"invalid resource restricted: {', '.join(restricted)} "
                             f"(capacity may only add extended resources)")
        return value

    @model_validator(mode="after")
    def _price_xor_adjustment(self) -> NodeOverlaySpec:
        if self.price is not None and self.price_adjustment is not None:
            raise ValueError("cannot set both 'price' and 'priceAdjustment'")
        return self


class NodeOverlay(TypedObject):
    """karpenter.sh/v1alpha1 NodeOverlay (cluster-scoped: ``key`` is the name)."""

    API_VERSION = "karpenter.sh/v1alpha1"
    KIND = "NodeOverlay"
    CLUSTER_SCOPED = True

    spec: NodeOverlaySpec = Field(default_factory=NodeOverlaySpec)


    @property
    def weight(self) -> int:
        return self.spec.weight or 0
