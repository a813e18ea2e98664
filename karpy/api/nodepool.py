"""karpenter.sh/v1 NodePool — the whole v1 schema (pkg/apis/v1/nodepool.go, nodepool_status.go).

Manifests are admitted against the upstream CRD before they get here (:mod:`karpy.admission`:
patterns, enums, ranges, the CEL rules, and the CRD defaults ``disruption.consolidateAfter: 0s``,
``consolidationPolicy: WhenEmptyOrUnderutilized``, ``budgets: [{nodes: 10%}]``,
``template.spec.expireAfter: 720h``). The model keeps the same defaults for objects built in
Python and checks nothing the CRD checks.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field, PrivateAttr, field_validator, model_validator

from karpy.api.meta import Condition, KubeModel, ResourceQuantities, TypedObject
from karpy.api.pod import NodeSelectorRequirement, Taint

__all__ = [
    "UNMODELLED_NODEPOOL_FIELDS",
    "UNMODELLED_NODEPOOL_FIELDS_WITH_DISRUPTION",
    "unmodelled_field_warnings",
    "written_fields",
    "Budget",
    "Disruption",
    "NodeClaimTemplate",
    "NodeClaimTemplateSpec",
    "NodeClassReference",
    "NodePool",
    "NodePoolSpec",
    "NodePoolStatus",
    "KarpenterRequirement",
    "KarpenterRequirements",
    "NodeSelectorRequirementWithMinValues",
    "TemplateMeta",
    "parse_duration",
]

_DURATION_PART_RE = re.compile(r"([0-9]+)(h|m|s)")
_UNIT_SECONDS = {"h": 3600, "m": 60, "s": 1}


@functools.lru_cache(maxsize=256)
def parse_duration(value: str | None) -> int | None:
    """Seconds in a CRD duration (``"720h"``, ``"1h30m"``); ``None`` for ``"Never"``/``None``."""
    if value is None or value == "Never":
        return None
    return sum(int(n) * _UNIT_SECONDS[u] for n, u in _DURATION_PART_RE.findall(value))


#: Karpenter's NodeSelectorRequirementWithMinValues is the shared requirement model
NodeSelectorRequirementWithMinValues = NodeSelectorRequirement


class NodeClassReference(KubeModel):
    """karpenter.sh/v1 NodeClassReference (group, kind, name all required and non-empty)."""

    group: str
    kind: str
    name: str


class TemplateMeta(KubeModel):
    """karpenter.sh/v1 ObjectMeta of a NodeClaimTemplate (labels and annotations only)."""

    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)


#: a NodePool/NodeClaim requirement (the CRD's rules on it are admission's)
KarpenterRequirement = NodeSelectorRequirementWithMinValues
#: a NodePool/NodeClaim requirement list
KarpenterRequirements = list[KarpenterRequirement]


class NodeClaimShape(KubeModel):
    """The fields a NodePool's template spec and a NodeClaim's spec share (taints, requirements,
    lifetimes)."""

    taints: list[Taint] = Field(default_factory=list)
    startup_taints: list[Taint] = Field(default_factory=list)
    requirements: KarpenterRequirements = Field(default_factory=list)
    termination_grace_period: str | None = None
    expire_after: str | None = "720h"

    @property
    def expire_after_seconds(self) -> int | None:
        """``expireAfter`` in seconds; ``None`` = Never."""
        return parse_duration(self.expire_after)


class NodeClaimTemplateSpec(NodeClaimShape):
    """karpenter.sh/v1 NodeClaimTemplateSpec."""

    node_class_ref: NodeClassReference


class NodeClaimTemplate(KubeModel):
    """karpenter.sh/v1 NodeClaimTemplate."""

    metadata: TemplateMeta = Field(default_factory=TemplateMeta)
    spec: NodeClaimTemplateSpec


class Budget(KubeModel):
    """karpenter.sh/v1 Budget (``nodes`` is a count or a percentage, default ``10%``)."""

    reasons: list[str] | None = None
    nodes: str = "10%"
    schedule: str | None = None
    duration: str | None = None


class Disruption(KubeModel):
    """karpenter.sh/v1 Disruption."""

    consolidate_after: str = "0s"
    consolidation_policy: str = "WhenEmptyOrUnderutilized"
    budgets: list[Budget] = Field(default_factory=lambda: [Budget()])


class NodePoolSpec(KubeModel):
    """karpenter.sh/v1 NodePoolSpec. ``limits`` ``None`` = unlimited; ``weight`` ``None`` counts as 0."""

    template: NodeClaimTemplate
    disruption: Disruption = Field(default_factory=Disruption)
    limits: ResourceQuantities | None = None
    weight: int | None = None
    replicas: int | None = None


class NodePoolStatus(KubeModel):
    """karpenter.sh/v1 NodePoolStatus."""

    resources: ResourceQuantities = Field(default_factory=dict)
    nodes: int | None = None
    conditions: list[Condition] = Field(default_factory=list)


class NodePool(TypedObject):
    """karpenter.sh/v1 NodePool (cluster-scoped: ``key`` is the name)."""

    API_VERSION = "karpenter.sh/v1"
    KIND = "NodePool"
    CLUSTER_SCOPED = True

    spec: NodePoolSpec
    status: NodePoolStatus = Field(default_factory=NodePoolStatus)
    #: the :data:`UNMODELLED_NODEPOOL_FIELDS` the manifest wrote (set by the loader, which sees the
    #: document before admission defaults it); None = not known, ``model_fields_set`` is used
    _written: frozenset[str] | None = PrivateAttr(default=None)


    @property
    def weight(self) -> int:
        """``spec.weight`` with nil as 0 (pkg/utils/nodepool OrderByWeight)."""
        return self.spec.weight or 0

    @property
    def requirements(self) -> list[NodeSelectorRequirement]:
        return self.spec.template.spec.requirements

    def hash(self) -> str:
        """``NodePool.Hash()``: a stable hash of ``spec.template`` for ``karpenter.sh/nodepool-hash``.

        Upstream hashes the template with hashstructure (slices as sets, zero values ignored,
        ``requirements`` tagged ``hash:"ignore"``). karpy hashes the same fields — the template
        without its requirements, list order ignored, empty values dropped — with SHA-256 into a
        decimal uint64. Equal templates give equal hashes; the digits differ from Go's.
        """
        import hashlib
        import json

        def canonical(value: Any) -> Any:
            if isinstance(value, dict):
                return {k: canonical(v) for k, v in sorted(value.items()) if v not in (None, "", [], {}, 0, False)}
            if isinstance(value, list):
                return sorted((canonical(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
            return value

        template = self.spec.template.model_dump(mode="json", by_alias=True)
        template.get("spec", {}).pop("requirements", None)
        digest = hashlib.sha256(json.dumps(canonical(template), sort_keys=True).encode()).digest()
        return str(int.from_bytes(digest[:8], "big"))

    def is_static(self) -> bool:
        """A static NodePool (``spec.replicas`` set; pkg/utils/nodepool IsStatic) is not used for
        dynamic provisioning; the static controllers (karpy.static) keep its node count."""
        return self.spec.replicas is not None

    def static_node_count(self, replicas: int | None = None) -> int | None:
        """The NodeClaims the static controllers keep for ``replicas`` (default ``spec.replicas``):
        at most ``limits.nodes`` (Quantity.Value(), rounded up; karpy.static.provisioning node_limit).
        None for a dynamic NodePool."""
        from karpy.api.quantity import parse_nanos

        replicas = self.spec.replicas if replicas is None else replicas
        if replicas is None:
            return None
        limit = (self.spec.limits or {}).get("nodes")
        return int(replicas) if limit is None else min(int(replicas), -(-parse_nanos(limit) // 10**9))


#: why ``spec.replicas`` is not acted on while the StaticCapacity gate is off: upstream registers
#: the static controllers only with the gate on, and the dynamic provisioner skips static pools
#: either way, so such a NodePool gets no nodes (karpy.static)
STATIC_CAPACITY_OFF = ("the StaticCapacity feature gate is off (Karpenter's default), so static NodePools get no "
                       "nodes; pass --feature-gates StaticCapacity=true")
#: NodePool fields a run without the disruption controller does not act on, with why -- each one
#: a separate entry so it can be dropped on its own. Keys are field paths as written in YAML; a
#: field is reported only when the manifest sets it. (terminationGracePeriod is acted on in every
#: run: interruptions and NodePool deletions drain through karpy.termination.controller.)
UNMODELLED_NODEPOOL_FIELDS: Mapping[str, str] = {
    "spec.disruption.consolidationPolicy": "disruption is off; run with --disruption",
    "spec.disruption.consolidateAfter": "disruption is off; run with --disruption",
    "spec.disruption.budgets": "disruption is off; run with --disruption",
    "spec.template.spec.expireAfter": "expiration is off; run with --disruption",
    "spec.replicas": STATIC_CAPACITY_OFF,
}
#: What is still not acted on when the disruption controller runs (``--disruption``).
UNMODELLED_NODEPOOL_FIELDS_WITH_DISRUPTION: Mapping[str, str] = {
    "spec.replicas": STATIC_CAPACITY_OFF,
}


def written_fields(data: Any, paths: Iterable[str] = UNMODELLED_NODEPOOL_FIELDS) -> frozenset[str]:
    """The dotted ``paths`` present in a raw manifest mapping (before any defaulting)."""
    found = set()
    for path in paths:
        cur = data
        for part in path.split("."):
            cur = cur.get(part) if isinstance(cur, Mapping) else None
            if cur is None:
                break
        if cur is not None:
            found.add(path)
    return frozenset(found)


def _set_fields(model: Any, path: str) -> bool:
    """Whether the dotted YAML ``path`` was set in the manifest (pydantic ``model_fields_set``)."""
    cur = model
    field = None
    for part in path.split("."):
        if cur is None or not isinstance(cur, BaseModel):
            return False
        name = next((n for n, f in type(cur).model_fields.items() if (f.alias or n) == part or n == part), None)
        if name is None or name not in cur.model_fields_set:
            return False
        field = type(cur).model_fields[name]
        cur = getattr(cur, name)
    # a model built in code sets fields to their defaults explicitly: only a real value counts
    return cur is not None and (field is None or field.is_required() or cur != field.get_default(call_default_factory=True))


def unmodelled_field_warnings(nodepools: Iterable[Any], fields: Mapping[str, str] | None = None, *,
                              disruption: bool = False, static_capacity: bool = False) -> list[str]:
    """One warning per reason of ``fields`` (default: :data:`UNMODELLED_NODEPOOL_FIELDS`, or
    :data:`UNMODELLED_NODEPOOL_FIELDS_WITH_DISRUPTION` when the disruption controller runs; with
    ``static_capacity`` -- the StaticCapacity gate on -- ``spec.replicas`` is acted on and left
    out), naming each field some NodePool sets and the NodePools: ``NodePool fields not acted on
    (disruption is off; run with --disruption): spec.disruption.consolidationPolicy (a, b),
    spec.disruption.budgets (a)``."""
    if fields is None:
        fields = UNMODELLED_NODEPOOL_FIELDS_WITH_DISRUPTION if disruption else UNMODELLED_NODEPOOL_FIELDS
    if static_capacity:
        fields = {k: v for k, v in fields.items() if k != "spec.replicas"}
    pools = list(nodepools)
    by_reason: dict[str, list[str]] = {}
    for path, why in fields.items():
        names = [np.metadata.name for np in pools
                 if (path in np._written if np._written is not None else _set_fields(np, path))]
        if names:
            by_reason.setdefault(why, []).append(f"{path} ({', '.join(names)})")
    return [f"NodePool fields not acted on ({why}): {', '.join(items)}" for why, items in by_reason.items()]
