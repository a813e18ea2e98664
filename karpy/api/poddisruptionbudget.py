"""policy/v1 PodDisruptionBudget."""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic import Field, field_validator, model_validator

from karpy.api.meta import KubeModel, LabelSelector, TypedObject

__all__ = ["IntOrPercent", "PodDisruptionBudget", "PodDisruptionBudgetSpec", "scaled_value"]

IntOrPercent = int | str
_PERCENT_RE = re.compile(r"^[0-9]+%$")


def scaled_value(value: IntOrPercent, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent: an int as is, ``"N%"`` of ``total`` rounded up or down."""
    if isinstance(value, int):
        return value
    pct = int(value[:-1])
    scaled = pct * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def _check_int_or_percent(value: Any) -> Any:
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        if isinstance(value, int) and value < 0:
            raise ValueError(f"must be greater than or equal to 0 (got {value})")
        return value
    if isinstance(value, str):
        if _PERCENT_RE.match(value):
            return value
        if value.isdigit():
            return int(value)
    raise ValueError(f"must be an integer or a percentage such as \"50%\" (got {value!r})")


class PodDisruptionBudgetSpec(KubeModel):
    """policy/v1 PodDisruptionBudgetSpec (``selector`` ``None`` selects no pods in policy/v1;
    an empty selector selects every pod in the namespace)."""

    min_available: IntOrPercent | None = None
    max_unavailable: IntOrPercent | None = None
    selector: LabelSelector | None = None
    unhealthy_pod_eviction_policy: str | None = None

    @field_validator("min_available", "max_unavailable", mode="before")
    @classmethod
    def _int_or_percent(cls, value: Any) -> Any:
        return _check_int_or_percent(value)

    @model_validator(mode="after")
    def _one_of(self) -> PodDisruptionBudgetSpec:
        if self.min_available is not None and self.max_unavailable is not None:
            raise ValueError("minAvailable and maxUnavailable cannot be both set")
        return self


class PodDisruptionBudget(TypedObject):
    """policy/v1 PodDisruptionBudget."""

    API_VERSION = "policy/v1"
    KIND = "PodDisruptionBudget"

    spec: PodDisruptionBudgetSpec = Field(default_factory=PodDisruptionBudgetSpec)

    def selects(self, namespace: str, labels: dict[str, str]) -> bool:
        """True if this PDB covers a pod with ``labels`` in ``namespace``."""
        if namespace != self.metadata.namespace or self.spec.selector is None:
            return False
        return self.spec.selector.matches(labels)
