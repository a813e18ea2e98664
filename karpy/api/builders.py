"""Convenient constructors for tests (modelled on Karpenter's ``pkg/test`` helpers).

``make_pod`` builds a *pending, unschedulable* pod by default (``PodScheduled=False,
reason=Unschedulable``, like ``test.UnschedulablePod``), so Karpenter sees it as provisionable.
Requirement arguments accept ``NodeSelectorRequirement`` objects, dicts (camelCase or snake_case) or
tuples ``(key, operator, [values])`` / ``(key, operator, [values], min_values)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from karpy.api.meta import LabelSelector, ObjectMeta, OwnerReference
from karpy.api.node import Node, NodeCondition, NodeSpec, NodeStatus
from karpy.api.nodeoverlay import NodeOverlay
from karpy.api.nodepool import NodePool
from karpy.api.pod import (
    Affinity,
    Container,
    ContainerPort,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodAntiAffinity,
    PodCondition,
    PodSchedulingGate,
    PodSpec,
    PodStatus,
    PreferredSchedulingTerm,
    ResourceRequirements,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from karpy.api.priorityclass import PriorityClass
from karpy.api.workloads import DaemonSet, Deployment, PodTemplateSpec
from karpy.api.quantity import Quantity

__all__ = [
    "DEFAULT_NODE_CLASS_REF",
    "make_daemonset",
    "make_deployment",
    "make_node",
    "make_nodeoverlay",
    "make_nodepool",
    "make_pod",
    "make_pods",
    "make_priority_class",
    "pod_affinity_term",
    "requirement",
    "topology_spread",
]

#: Karpenter's test NodeClass reference (pkg/test/nodeclass.go: karpenter.test.sh TestNodeClass)
DEFAULT_NODE_CLASS_REF: Mapping[str, str] = {"group": "karpenter.test.sh", "kind": "TestNodeClass", "name": "default"}

RequirementLike = NodeSelectorRequirement | Mapping[str, Any] | Sequence[Any]


def requirement(req: RequirementLike) -> NodeSelectorRequirement:
    """A NodeSelectorRequirement from an object, a dict or a ``(key, op, values[, min_values])`` tuple."""
    if isinstance(req, NodeSelectorRequirement):
        return req.model_copy(deep=True)
    if isinstance(req, Mapping):
        return NodeSelectorRequirement.model_validate(dict(req))
    key, op, *rest = req
    values = list(rest[0]) if rest else []
    min_values = rest[1] if len(rest) > 1 else None
    return NodeSelectorRequirement(key=key, operator=op, values=values, min_values=min_values)


def _quantities(res: Mapping[str, Any] | None) -> dict[str, Quantity]:
    return {k: Quantity(v) for k, v in (res or {}).items()}


def _taint(t: Taint | Mapping[str, Any] | Sequence[str]) -> Taint:
    if isinstance(t, Taint):
        return t.model_copy()
    if isinstance(t, Mapping):
        return Taint.model_validate(dict(t))
    key, value, effect = t
    return Taint(key=key, value=value, effect=effect)


def _toleration(t: Toleration | Mapping[str, Any]) -> Toleration:
    return t.model_copy() if isinstance(t, Toleration) else Toleration.model_validate(dict(t))


def pod_affinity_term(labels: Mapping[str, str] | LabelSelector | None = None, topology_key: str = "kubernetes.io/hostname",
                      *, namespaces: Iterable[str] = (), namespace_selector: LabelSelector | None = None,
                      match_label_keys: Iterable[str] = ()) -> PodAffinityTerm:
    """A PodAffinityTerm selecting pods with ``labels`` (matchLabels) over ``topology_key``."""
    selector = labels if isinstance(labels, LabelSelector) else (
        LabelSelector(match_labels=dict(labels)) if labels is not None else None)
    return PodAffinityTerm(label_selector=selector, topology_key=topology_key, namespaces=list(namespaces),
                           namespace_selector=namespace_selector, match_label_keys=list(match_label_keys))


def _term(t: PodAffinityTerm | Mapping[str, Any]) -> PodAffinityTerm:
    return t.model_copy(deep=True) if isinstance(t, PodAffinityTerm) else PodAffinityTerm.model_validate(dict(t))


def _weighted(t: WeightedPodAffinityTerm | PodAffinityTerm | Mapping[str, Any] | tuple[int, Any]) -> WeightedPodAffinityTerm:
    if isinstance(t, WeightedPodAffinityTerm):
        return t.model_copy(deep=True)
    if isinstance(t, PodAffinityTerm):
        return WeightedPodAffinityTerm(weight=1, pod_affinity_term=t.model_copy(deep=True))
    if isinstance(t, tuple):
        return WeightedPodAffinityTerm(weight=t[0], pod_affinity_term=_term(t[1]))
    return WeightedPodAffinityTerm.model_validate(dict(t))


def topology_spread(topology_key: str, labels: Mapping[str, str] | None = None, max_skew: int = 1,
                    when_unsatisfiable: str = "DoNotSchedule", **kwargs: Any) -> TopologySpreadConstraint:
    """A TopologySpreadConstraint over pods with ``labels`` (extra fields as snake_case kwargs)."""
    return TopologySpreadConstraint.model_validate({
        "max_skew": max_skew, "topology_key": topology_key, "when_unsatisfiable": when_unsatisfiable,
        "label_selector": LabelSelector(match_labels=dict(labels)) if labels is not None else None, **kwargs})


def make_pod(name: str = "pod", namespace: str = "default", *,
             labels: Mapping[str, str] | None = None, annotations: Mapping[str, str] | None = None,
             uid: str | None = None,
             requests: Mapping[str, Any] | None = None, limits: Mapping[str, Any] | None = None,
             init_containers: Sequence[Mapping[str, Any]] = (), overhead: Mapping[str, Any] | None = None,
             node_selector: Mapping[str, str] | None = None,
             node_requirements: Sequence[RequirementLike] | None = None,
             node_preferences: Sequence[RequirementLike] | None = None,
             pod_affinity: Sequence[PodAffinityTerm | Mapping[str, Any]] | None = None,
             pod_affinity_preferences: Sequence[Any] | None = None,
             pod_anti_affinity: Sequence[PodAffinityTerm | Mapping[str, Any]] | None = None,
             pod_anti_affinity_preferences: Sequence[Any] | None = None,
             topology_spread_constraints: Sequence[TopologySpreadConstraint | Mapping[str, Any]] = (),
             tolerations: Sequence[Toleration | Mapping[str, Any]] = (),
             host_ports: Sequence[int] = (),
             priority: int | None = None, priority_class_name: str | None = None,
             preemption_policy: str | None = None,
             scheduling_gates: Sequence[str] = (),
             owner_references: Sequence[OwnerReference | Mapping[str, Any]] = (),
             node_name: str | None = None, nominated_node_name: str | None = None,
             unschedulable: bool = True, phase: str = "Pending",
             creation_timestamp: Any = None, scheduler_name: str | None = None) -> Pod:
    """A pod with one container. ``requests``/``limits`` like ``{"cpu": "1", "memory": "1Gi"}``;
    ``node_requirements`` become one required node-affinity term, ``node_preferences`` one preferred
    term of weight 1 (as pkg/test/pods.go buildNodeAffinity); ``pod_affinity_preferences`` items may be
    ``(weight, term)`` tuples or bare terms (weight 1). ``init_containers`` items are
    ``{"requests": {...}, "limits": {...}, "restart_policy": "Always"}``."""
    affinity = Affinity()
    if node_requirements is not None or node_preferences is not None:
        affinity.node_affinity = NodeAffinity(
            required_during_scheduling_ignored_during_execution=NodeSelector(node_selector_terms=[
                NodeSelectorTerm(match_expressions=[requirement(r) for r in node_requirements])])
            if node_requirements is not None else None,
            preferred_during_scheduling_ignored_during_execution=[PreferredSchedulingTerm(
                weight=1, preference=NodeSelectorTerm(match_expressions=[requirement(r) for r in node_preferences]))]
            if node_preferences is not None else [])
    if pod_affinity is not None or pod_affinity_preferences is not None:
        affinity.pod_affinity = PodAffinity(
            required_during_scheduling_ignored_during_execution=[_term(t) for t in pod_affinity or ()],
            preferred_during_scheduling_ignored_during_execution=[_weighted(t) for t in pod_affinity_preferences or ()])
    if pod_anti_affinity is not None or pod_anti_affinity_preferences is not None:
        affinity.pod_anti_affinity = PodAntiAffinity(
            required_during_scheduling_ignored_during_execution=[_term(t) for t in pod_anti_affinity or ()],
            preferred_during_scheduling_ignored_during_execution=[
                _weighted(t) for t in pod_anti_affinity_preferences or ()])
    has_affinity = affinity.node_affinity or affinity.pod_affinity or affinity.pod_anti_affinity
    container = Container(
        name="container", image="public.ecr.aws/eks-distro/kubernetes/pause:3.2",
        resources=ResourceRequirements(requests=_quantities(requests), limits=_quantities(limits)),
        ports=[ContainerPort(container_port=80, host_port=p, protocol="TCP") for p in host_ports])
    inits = [Container(name=f"init-{i}", resources=ResourceRequirements(
        requests=_quantities(c.get("requests")), limits=_quantities(c.get("limits"))),
        restart_policy=c.get("restart_policy")) for i, c in enumerate(init_containers)]
    conditions = [PodCondition(type="PodScheduled", status="False", reason="Unschedulable")] if unschedulable else []
    return Pod(
        metadata=ObjectMeta(
            name=name, namespace=namespace, uid=uid or f"{namespace}/{name}",
            labels=dict(labels or {}), annotations=dict(annotations or {}), creation_timestamp=creation_timestamp,
            owner_references=[r if isinstance(r, OwnerReference) else OwnerReference.model_validate(dict(r))
                              for r in owner_references]),
        spec=PodSpec(
            containers=[container], init_containers=inits, overhead=_quantities(overhead),
            node_selector=dict(node_selector or {}), affinity=affinity if has_affinity else None,
            tolerations=[_toleration(t) for t in tolerations],
            topology_spread_constraints=[t.model_copy(deep=True) if isinstance(t, TopologySpreadConstraint)
                                         else TopologySpreadConstraint.model_validate(dict(t))
                                         for t in topology_spread_constraints],
            priority=priority, priority_class_name=priority_class_name, preemption_policy=preemption_policy,
            scheduling_gates=[PodSchedulingGate(name=g) for g in scheduling_gates],
            node_name=node_name, scheduler_name=scheduler_name or "default-scheduler"),
        status=PodStatus(phase=phase, conditions=conditions, nominated_node_name=nominated_node_name),
    )


def make_pods(count: int, prefix: str = "pod", **kwargs: Any) -> list[Pod]:
    """``count`` identical pods named ``<prefix>-0`` ... (same kwargs as :func:`make_pod`)."""
    return [make_pod(f"{prefix}-{i}", **kwargs) for i in range(count)]


def make_node(name: str = "node", *, labels: Mapping[str, str] | None = None,
              taints: Sequence[Taint | Mapping[str, Any] | Sequence[str]] = (),
              capacity: Mapping[str, Any] | None = None, allocatable: Mapping[str, Any] | None = None,
              unschedulable: bool = False, ready: bool = True, provider_id: str | None = None,
              annotations: Mapping[str, str] | None = None) -> Node:
    """A Node; ``allocatable`` defaults to ``capacity``; ``labels`` gets ``kubernetes.io/hostname``."""
    cap = _quantities(capacity)
    return Node(
        metadata=ObjectMeta(name=name, uid=f"node/{name}",
                            labels={"kubernetes.io/hostname": name, **(labels or {})},
                            annotations=dict(annotations or {})),
        spec=NodeSpec(taints=[_taint(t) for t in taints], unschedulable=unschedulable, provider_id=provider_id),
        status=NodeStatus(capacity=cap, allocatable=_quantities(allocatable) if allocatable is not None else dict(cap),
                          conditions=[NodeCondition(type="Ready", status="True" if ready else "False")]),
    )


def make_nodepool(name: str = "default", *, requirements: Sequence[RequirementLike] = (),
                  taints: Sequence[Taint | Mapping[str, Any] | Sequence[str]] = (),
                  startup_taints: Sequence[Taint | Mapping[str, Any] | Sequence[str]] = (),
                  limits: Mapping[str, Any] | None = None, weight: int | None = None,
                  labels: Mapping[str, str] | None = None, annotations: Mapping[str, str] | None = None,
                  node_class_ref: Mapping[str, str] | None = None, expire_after: str | None = "720h",
                  termination_grace_period: str | None = None, replicas: int | None = None,
                  disruption: Mapping[str, Any] | None = None) -> NodePool:
    """A NodePool (``limits`` ``None`` = unlimited; nodeClassRef defaults to Karpenter's test class)."""
    return NodePool.model_validate({
        "metadata": {"name": name, "uid": f"nodepool/{name}"},
        "spec": {
            "template": {
                "metadata": {"labels": dict(labels or {}), "annotations": dict(annotations or {})},
                "spec": {
                    "requirements": [requirement(r) for r in requirements],
                    "taints": [_taint(t) for t in taints],
                    "startupTaints": [_taint(t) for t in startup_taints],
                    "nodeClassRef": dict(node_class_ref or DEFAULT_NODE_CLASS_REF),
                    "expireAfter": expire_after,
                    "terminationGracePeriod": termination_grace_period,
                },
            },
            "disruption": dict(disruption or {}),
            "limits": _quantities(limits) if limits is not None else None,
            "weight": weight,
            "replicas": replicas,
        },
    })


def make_nodeoverlay(name: str, *, requirements: Sequence[RequirementLike] = (), price: str | None = None,
                     price_adjustment: str | None = None, capacity: Mapping[str, Any] | None = None,
                     weight: int | None = None) -> NodeOverlay:
    """A NodeOverlay."""
    return NodeOverlay.model_validate({"metadata": {"name": name}, "spec": {
        "requirements": [requirement(r) for r in requirements], "price": price,
        "priceAdjustment": price_adjustment, "capacity": _quantities(capacity), "weight": weight}})


def make_priority_class(name: str, value: int, *, global_default: bool = False,
                        preemption_policy: str = "PreemptLowerPriority") -> PriorityClass:
    """A PriorityClass."""
    return PriorityClass(metadata=ObjectMeta(name=name), value=value, global_default=global_default,
                         preemption_policy=preemption_policy)


def _template(labels: Mapping[str, str], **pod_kwargs: Any) -> PodTemplateSpec:
    pod = make_pod("template", labels=labels, unschedulable=False, **pod_kwargs)
    meta = ObjectMeta(labels=dict(labels), annotations=dict(pod.metadata.annotations))
    return PodTemplateSpec(metadata=meta, spec=pod.spec)


def make_deployment(name: str, replicas: int = 1, namespace: str = "default", *,
                    labels: Mapping[str, str] | None = None, **pod_kwargs: Any) -> Deployment:
    """A Deployment whose template is ``make_pod(**pod_kwargs)``; selector = ``labels`` (default ``app=<name>``)."""
    labels = dict(labels or {"app": name})
    return Deployment.model_validate({
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": replicas, "selector": LabelSelector(match_labels=labels),
                 "template": _template(labels, **pod_kwargs)}})


def make_daemonset(name: str, namespace: str = "default", *, labels: Mapping[str, str] | None = None,
                   **pod_kwargs: Any) -> DaemonSet:
    """A DaemonSet whose template is ``make_pod(**pod_kwargs)``."""
    labels = dict(labels or {"app": name})
    return DaemonSet.model_validate({
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": LabelSelector(match_labels=labels), "template": _template(labels, **pod_kwargs)}})
