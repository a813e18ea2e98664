"""Object metadata, owner references, label selectors and conditions (k8s.io/apimachinery meta/v1).

Every karpy API model derives from :class:`KubeModel`: camelCase aliases (``alias_generator=to_camel``),
``populate_by_name=True`` so snake_case works too, unknown fields ignored (``extra="ignore"``), mutable.
A YAML ``null`` for a list/map field reads as empty, as the Go decoder does.
"""

from __future__ import annotations

import types
import typing
from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from karpy.api.quantity import Quantity

__all__ = [
    "Condition",
    "Int32",
    "Int64",
    "KubeModel",
    "LabelSelector",
    "LabelSelectorRequirement",
    "NonNegativeQuantity",
    "ResourceQuantities",
    "ObjectMeta",
    "OwnerReference",
    "TypedObject",
]

LABEL_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def _non_negative(value: Quantity) -> Quantity:
    if value.nanos < 0:
        raise ValueError(f"must be greater than or equal to 0 (got {value})")
    return value


#: a Quantity that must be >= 0 (requests, limits, capacity, overhead, limits of a NodePool)
NonNegativeQuantity = Annotated[Quantity, AfterValidator(_non_negative)]
#: Go's int32 / int64 as the API types declare them (replicas, priority, ...): an out-of-range value
#: is rejected like the API server's decoder does, instead of overflowing (or running forever) later
Int32 = Annotated[int, Field(ge=-(2**31), le=2**31 - 1)]
Int64 = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]
#: a resource list as the API models hold it: resource name -> non-negative Quantity
ResourceQuantities = dict[str, NonNegativeQuantity]


def _container_default(annotation: Any) -> Any:
    """``[]``/``{}`` for a non-optional list/dict or nested-model (struct) annotation, else ``None``
    (no substitution)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return None  # Optional[...]: None is meaningful (nil vs empty)
    if origin is list or annotation is list:
        return []
    if origin is dict or annotation is dict:
        return {}
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {}  # a null struct decodes to its zero value, as Go's does
    return None


def _empty_containers(cls: type[BaseModel]) -> dict[str, type]:
    """Field name and alias -> ``list``/``dict`` for the class's non-optional container fields."""
    out: dict[str, type] = {}
    for name, field in cls.model_fields.items():
        default = _container_default(field.annotation)
        if default is not None:
            out[name] = type(default)
            if field.alias:
                out[field.alias] = type(default)
    return out


class KubeModel(BaseModel):
    """Base of all karpy API models (camelCase aliases, unknown fields ignored, mutable)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="ignore",
        arbitrary_types_allowed=True,
        protected_namespaces=(),
    )

    #: field name/alias -> empty container type, computed once per class (not global state)
    EMPTY_CONTAINERS: ClassVar[dict[str, type]] = {}

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls.EMPTY_CONTAINERS = _empty_containers(cls)

    @model_validator(mode="before")
    @classmethod
    def _null_is_empty(cls, data: Any) -> Any:
        """A YAML ``null`` for a list, map or struct field means empty (Go decodes it to a nil
        slice/map or a zero struct); ``Optional`` fields keep ``None``."""
        if isinstance(data, dict) and None in data.values():
            empties = cls.EMPTY_CONTAINERS
            data = {k: (empties[k]() if v is None and k in empties else v) for k, v in data.items()}
        return data

    def to_dict(self) -> dict[str, Any]:
        """The object as a camelCase dict (as it would be written in YAML), ``None`` fields omitted."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class OwnerReference(KubeModel):
    """metav1.OwnerReference."""

    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(KubeModel):
    """metav1.ObjectMeta (the fields karpy uses). ``namespace`` defaults to ``"default"``."""

    name: str = ""
    generate_name: str | None = None
    namespace: str = "default"
    uid: str = ""
    resource_version: str | None = None
    generation: int | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    creation_timestamp: datetime | None = None
    deletion_timestamp: datetime | None = None
    owner_references: list[OwnerReference] = Field(default_factory=list)
    finalizers: list[str] = Field(default_factory=list)

    @field_validator("namespace", mode="before")
    @classmethod
    def _default_namespace(cls, value: Any) -> Any:
        return "default" if value in (None, "") else value

    def controller_ref(self) -> OwnerReference | None:
        """The owner reference with ``controller: true`` (metav1.GetControllerOf)."""
        for ref in self.owner_references:
            if ref.controller:
                return ref
        return None


class LabelSelectorRequirement(KubeModel):
    """metav1.LabelSelectorRequirement."""

    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: list[str] = Field(default_factory=list)

    def matches(self, labels: dict[str, str]) -> bool:
        """Mirrors k8s.io/apimachinery/pkg/labels selector.go (Requirement.Matches)."""
        if self.operator == "In":
            return self.key in labels and labels[self.key] in self.values
        if self.operator == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if self.operator == "Exists":
            return self.key in labels
        return self.key not in labels


class LabelSelector(KubeModel):
    """metav1.LabelSelector. An empty selector matches everything; a *nil* selector (``None`` where a
    selector is optional) matches nothing — callers keep that distinction by holding ``None``."""

    match_labels: dict[str, str] = Field(default_factory=dict)
    match_expressions: list[LabelSelectorRequirement] = Field(default_factory=list)

    def matches(self, labels: dict[str, str] | None) -> bool:
        """True if every matchLabels entry and every expression match ``labels``."""
        labels = labels or {}
        for key, value in self.match_labels.items():
            if labels.get(key) != value:
                return False
        return all(expr.matches(labels) for expr in self.match_expressions)

    def is_empty(self) -> bool:
        """An empty selector (matches every object)."""
        return not self.match_labels and not self.match_expressions


class Condition(KubeModel):
    """A status condition (metav1.Condition / operatorpkg status.Condition / core NodeCondition)."""

    type: str
    status: str = "Unknown"
    reason: str | None = None
    message: str | None = None
    last_transition_time: datetime | None = None
    last_heartbeat_time: datetime | None = None
    observed_generation: int | None = None


class HasConditions:
    """``condition(type)`` for status models with a ``conditions`` list."""

    conditions: list[Any]

    def condition(self, type_: str) -> Any | None:
        """The condition of the given type, if present."""
        for cond in self.conditions:
            if cond.type == type_:
                return cond
        return None


class TypedObject(KubeModel):
    """A top-level object: ``apiVersion``, ``kind``, ``metadata``. Subclasses fix ``API_VERSION``/``KIND``."""

    API_VERSION: ClassVar[str] = ""
    KIND: ClassVar[str] = ""
    #: cluster-scoped kinds (Node, NodePool, ...) are keyed by name alone
    CLUSTER_SCOPED: ClassVar[bool] = False

    api_version: str = ""
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)

    def model_post_init(self, __context: Any) -> None:
        if not self.api_version:
            self.api_version = self.API_VERSION
        if not self.kind:
            self.kind = self.KIND

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def key(self) -> str:
        """``namespace/name``, or ``name`` for cluster-scoped kinds."""
        if self.CLUSTER_SCOPED:
            return self.metadata.name
        return f"{self.metadata.namespace}/{self.metadata.name}"
