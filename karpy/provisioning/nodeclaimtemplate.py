"""NodePool -> NodeClaimTemplate, and an in-flight claim -> a NodeClaim object.

Mirrors pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go (NewNodeClaimTemplate,
resolveCustomLabelsFromRequirements, ToNodeClaim, MaxInstanceTypes, schedulingSimulationKeys).

Notes:
- ``MaxInstanceTypes`` is not a global here: ``to_nodeclaim`` takes ``max_instance_types``.
- The NodePool hash annotation uses ``NodePool.hash()`` (same fields as upstream, other digits).
- Static NodePools (``spec.replicas``) are dropped before the scheduler builds templates; the
  static controllers (:mod:`karpy.static`) build theirs, and ``ToNodeClaim`` leaves their
  instance types to the cloud provider's Create (``IsStaticNodeClaim``).
- The instance-type cut uses ``InstanceTypes.order_by_price`` (a stable sort: price ties keep the
  claim's option order, i.e. catalogue order; Go: ``sort.Slice``).
- Labels from requirements use ``Requirement.any()`` (deterministic: smallest value of an ``In``).
"""

from __future__ import annotations

from typing import Any

from karpy.cloudprovider.types import InstanceTypes, OfferingCompatibility
from karpy.scheduling.labels import (
    LABEL_CAPACITY_TYPE,
    LABEL_INSTANCE_TYPE,
    LABEL_NODEPOOL,
    NODE_INITIALIZED,
    NODE_REGISTERED,
    NODEPOOL_HASH_ANNOTATION_KEY,
    NODEPOOL_HASH_VERSION_ANNOTATION_KEY,
    OP_IN,
    RESTRICTED_LABELS,
)
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

__all__ = [
    "DEFAULT_MAX_INSTANCE_TYPES",
    "NodeClaimTemplate",
    "SCHEDULING_SIMULATION_KEYS",
    "node_class_label_key",
    "to_nodeclaim",
    "PRICE_OVERLAY_APPLIED_ANNOTATION_KEY",
    "CAPACITY_OVERLAY_APPLIED_ANNOTATION_KEY",
]

#: nodeclaimtemplate.go MaxInstanceTypes
DEFAULT_MAX_INSTANCE_TYPES = 600
#: nodeclaimtemplate.go schedulingSimulationKeys
SCHEDULING_SIMULATION_KEYS = frozenset({NODE_REGISTERED, NODE_INITIALIZED})
#: pkg/apis/v1alpha1 NodeOverlay annotations
PRICE_OVERLAY_APPLIED_ANNOTATION_KEY = "karpenter.sh/price-overlay-applied"
CAPACITY_OVERLAY_APPLIED_ANNOTATION_KEY = "karpenter.sh/capacity-overlay-applied"
NODEPOOL_HASH_VERSION = "v3"


def node_class_label_key(group: str, kind: str) -> str:
    """pkg/apis/v1 NodeClassLabelKey: ``<group>/<lower(kind)>``."""
    return f"{group}/{kind.lower()}"


class NodeClaimTemplate:
    """nodeclaimtemplate.go NodeClaimTemplate (NewNodeClaimTemplate)."""

    def __init__(self, nodepool: Any) -> None:
        spec = nodepool.spec.template.spec
        meta = nodepool.spec.template.metadata
        self.nodepool = nodepool
        self.nodepool_name: str = nodepool.metadata.name
        self.nodepool_uid: str = nodepool.metadata.uid
        self.weight: int = nodepool.spec.weight or 0
        #: nodeclaimtemplate.go IsStaticNodeClaim (``spec.replicas`` set)
        self.is_static: bool = nodepool.spec.replicas is not None
        self.annotations: dict[str, str] = dict(meta.annotations or {})
        self.annotations[NODEPOOL_HASH_ANNOTATION_KEY] = nodepool.hash()
        self.annotations[NODEPOOL_HASH_VERSION_ANNOTATION_KEY] = NODEPOOL_HASH_VERSION
        self.labels: dict[str, str] = dict(meta.labels or {})
        self.labels[LABEL_NODEPOOL] = self.nodepool_name
        ref = spec.node_class_ref
        if ref is not None:
            self.labels[node_class_label_key(ref.group, ref.kind)] = ref.name
        self.taints: list[Any] = list(spec.taints or ())
        self.startup_taints: list[Any] = list(spec.startup_taints or ())
        self.node_class_ref = ref
        self.termination_grace_period = spec.termination_grace_period
        self.expire_after = spec.expire_after
        reqs = Requirements.from_node_selector_requirements(spec.requirements or (), with_min_values=True)
        reqs.add(*Requirements.from_labels(self.labels).values())
        reqs.add(Requirement(NODE_REGISTERED, OP_IN, ("true",)))
        reqs.add(Requirement(NODE_INITIALIZED, OP_IN, ("true",)))
        self.requirements: Requirements = reqs
        self.instance_type_options: list[Any] = []

    def __repr__(self) -> str:
        return f"NodeClaimTemplate({self.nodepool_name!r}, weight={self.weight})"


def to_nodeclaim(claim: Any, max_instance_types: int = DEFAULT_MAX_INSTANCE_TYPES,
                 well_known: frozenset[str] | None = None) -> Any:
    """nodeclaimtemplate.go ToNodeClaim for an in-flight claim (karpy.provisioning.nodeclaim.NodeClaim).

    Orders the claim's options by price, keeps ``max_instance_types``, adds
    ``instance-type In [...]`` (keeping the existing minValues), re-derives the capacity-type
    requirement from the kept types' available compatible offerings, sets the overlay annotations,
    resolves custom labels, and drops the registered/initialized simulation keys. Mutates the
    claim's requirements/labels/annotations like upstream.
    """
    from karpy.api.nodeclaim import NodeClaim as NodeClaimModel

    wk = well_known if well_known is not None else claim.well_known
    reqs: Requirements = claim.requirements.copy()
    annotations = dict(claim.annotations)
    if not claim.template.is_static:  # a static NodeClaim's types are resolved by Create
        ordered = InstanceTypes(claim.instance_type_options).order_by_price(reqs, wk)
        its = list(ordered[:max_instance_types])
        existing_mv = reqs.get(LABEL_INSTANCE_TYPE).min_values
        reqs.add(Requirement(LABEL_INSTANCE_TYPE, OP_IN, [it.name for it in its], existing_mv))
        capacity_types: list[str] = []
        compatible = OfferingCompatibility(reqs)  # reqs is not changed in this loop
        for it in its:
            for o in it.offerings:
                if o.available and compatible(o, wk):
                    ct = o.capacity_type
                    if ct not in capacity_types:
                        capacity_types.append(ct)
        if capacity_types:
            reqs.add(Requirement(LABEL_CAPACITY_TYPE, OP_IN, capacity_types))
        if any(it.is_pricing_overlay_applied() for it in its):
            annotations[PRICE_OVERLAY_APPLIED_ANNOTATION_KEY] = "true"
        if any(it.is_capacity_overlay_applied() for it in its):
            annotations[CAPACITY_OVERLAY_APPLIED_ANNOTATION_KEY] = "true"
    labels = dict(claim.labels)
    for key, r in reqs.items():
        if key in wk or key in RESTRICTED_LABELS or key in SCHEDULING_SIMULATION_KEYS:
            continue
        v = r.any()
        if v != "":
            labels[key] = v
    claim.requirements = reqs
    claim.labels = labels
    claim.annotations = annotations
    spec_reqs = [
        {"key": k, "operator": op, "values": list(vals), **({"minValues": mv} if mv is not None else {})}
        for (k, op, vals, mv) in reqs.node_selector_fields()
        if k not in SCHEDULING_SIMULATION_KEYS
    ]
    template = claim.template
    ref = template.node_class_ref
    body: dict[str, Any] = {
        "metadata": {
            "generateName": f"{template.nodepool_name}-",
            "annotations": annotations,
            "labels": labels,
            "ownerReferences": [
                {
                    "apiVersion": "karpenter.sh/v1",
                    "kind": "NodePool",
                    "name": template.nodepool_name,
                    "uid": template.nodepool_uid,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "taints": [t.model_dump(by_alias=True, exclude_none=True) for t in template.taints],
            "startupTaints": [t.model_dump(by_alias=True, exclude_none=True) for t in template.startup_taints],
            "requirements": spec_reqs,
            "resources": {"requests": {k: v for k, v in _to_quantities(claim.requests).items()}},
            "terminationGracePeriod": template.termination_grace_period,
            "expireAfter": template.expire_after,
        },
    }
    if ref is not None:
        body["spec"]["nodeClassRef"] = {"group": ref.group, "kind": ref.kind, "name": ref.name}
    return NodeClaimModel.model_validate(body)


def _to_quantities(rl: dict[str, int]) -> dict[str, Any]:
    from karpy.scheduling.resources import to_quantities

    return to_quantities(rl)
