"""core/v1 Service: only ``spec.selector`` matters to karpy (kube-scheduler's DefaultSelector
merges the selectors of the Services that select a pod into its default spreading selector)."""

from __future__ import annotations

from pydantic import Field

from karpy.api.meta import KubeModel, TypedObject

__all__ = ["Service", "ServiceSpec"]


class ServiceSpec(KubeModel):
    #: None = the Service selects nothing (a selector-less Service); {} selects every pod
    selector: dict[str, str] | None = None
    type: str | None = None


class Service(TypedObject):
    """core/v1 Service."""

    API_VERSION = "v1"
    KIND = "Service"

    spec: ServiceSpec = Field(default_factory=ServiceSpec)
