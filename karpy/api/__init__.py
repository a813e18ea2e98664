"""The Kubernetes and Karpenter objects karpy reads, and the loader that reads them.

Pydantic v2 models whose attributes are the snake_case of the Kubernetes field names (so real
YAML loads as is), :func:`load_manifests` (files, directories, ``-`` or dicts -> :class:`Manifests`,
bad input -> :class:`ManifestError` naming file, document and field path), exact Kubernetes
quantities, karpy's ``Scenario`` kind, and builders for tests. Names resolve lazily: importing
one model does not load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._exports import lazy_exports

_EXPORTS = {
    # loading
    "ManifestError": "loader", "Manifests": "loader", "load_manifests": "loader",
    # quantities
    "NANO": "quantity", "Quantity": "quantity", "QuantityError": "quantity",
    "format_nanos": "quantity", "parse_nanos": "quantity",
    # metadata
    "ConditionSet": "conditionset",
    "Condition": "meta", "LabelSelector": "meta", "LabelSelectorRequirement": "meta",
    "ObjectMeta": "meta", "OwnerReference": "meta",
    # Pod
    "NODE_SELECTOR_OPERATORS": "pod", "Affinity": "pod", "Container": "pod", "ContainerPort": "pod",
    "NodeAffinity": "pod", "NodeSelector": "pod", "NodeSelectorRequirement": "pod",
    "NodeSelectorTerm": "pod", "Pod": "pod", "PodAffinity": "pod", "PodAffinityTerm": "pod",
    "PodAntiAffinity": "pod", "PodCondition": "pod", "PodSchedulingGate": "pod", "PodSpec": "pod",
    "PodStatus": "pod", "PreferredSchedulingTerm": "pod", "ResourceRequirements": "pod",
    "Taint": "pod", "Toleration": "pod", "TopologySpreadConstraint": "pod",
    "WeightedPodAffinityTerm": "pod",
    # Node
    "Node": "node", "NodeCondition": "node", "NodeSpec": "node", "NodeStatus": "node",
    # Karpenter kinds
    "Budget": "nodepool", "Disruption": "nodepool", "KarpenterRequirement": "nodepool",
    "NodeClaimTemplate": "nodepool", "NodeClaimTemplateSpec": "nodepool",
    "NodeClassReference": "nodepool", "NodePool": "nodepool", "NodePoolSpec": "nodepool",
    "NodePoolStatus": "nodepool",
    "NodeClaim": "nodeclaim", "NodeClaimSpec": "nodeclaim", "NodeClaimStatus": "nodeclaim",
    "NodeOverlay": "nodeoverlay", "NodeOverlaySpec": "nodeoverlay",
    # other Kubernetes kinds
    "PriorityClass": "priorityclass", "PodDisruptionBudget": "poddisruptionbudget",
    "PodGroup": "podgroup", "Workload": "podgroup",
    # Kubernetes 1.37 scheduling.k8s.io/v1beta1 Workload / PodGroup, v1alpha3 CompositePodGroup
    "SchedulingWorkload": "podgroup", "SchedulingPodGroup": "podgroup", "CompositePodGroup": "podgroup",
    "DaemonSet": "workloads", "Deployment": "workloads", "Job": "workloads",
    "ReplicaSet": "workloads", "StatefulSet": "workloads",
    # karpy.io/v1alpha1 Scenario
    "Scenario": "scenario", "ScenarioEvent": "scenario", "parse_event_line": "scenario",
    # karpy.io/v1alpha1 BillingProfile (karpy.billing)
    "BillingProfile": "billing",
    # builders (tests, benchmarks, embedding tools)
    "make_daemonset": "builders", "make_deployment": "builders", "make_node": "builders",
    "make_nodeoverlay": "builders", "make_nodepool": "builders", "make_pod": "builders",
    "make_pods": "builders", "make_priority_class": "builders", "pod_affinity_term": "builders",
    "requirement": "builders", "topology_spread": "builders",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from karpy.api.billing import BillingProfile
    from karpy.api.builders import (make_daemonset, make_deployment, make_node, make_nodeoverlay, make_nodepool,
                                    make_pod, make_pods, make_priority_class, pod_affinity_term, requirement,
                                    topology_spread)
    from karpy.api.loader import ManifestError, Manifests, load_manifests
    from karpy.api.conditionset import ConditionSet
    from karpy.api.meta import Condition, LabelSelector, LabelSelectorRequirement, ObjectMeta, OwnerReference
    from karpy.api.node import Node, NodeCondition, NodeSpec, NodeStatus
    from karpy.api.nodeclaim import NodeClaim, NodeClaimSpec, NodeClaimStatus
    from karpy.api.nodeoverlay import NodeOverlay, NodeOverlaySpec
    from karpy.api.nodepool import (Budget, Disruption, KarpenterRequirement, NodeClaimTemplate,
                                    NodeClaimTemplateSpec, NodeClassReference, NodePool, NodePoolSpec,
                                    NodePoolStatus)
    from karpy.api.pod import (NODE_SELECTOR_OPERATORS, Affinity, Container, ContainerPort, NodeAffinity,
                               NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod, PodAffinity,
                               PodAffinityTerm, PodAntiAffinity, PodCondition, PodSchedulingGate, PodSpec,
                               PodStatus, PreferredSchedulingTerm, ResourceRequirements, Taint, Toleration,
                               TopologySpreadConstraint, WeightedPodAffinityTerm)
    from karpy.api.poddisruptionbudget import PodDisruptionBudget
    from karpy.api.podgroup import CompositePodGroup, PodGroup, SchedulingPodGroup, SchedulingWorkload, Workload
    from karpy.api.priorityclass import PriorityClass
    from karpy.api.quantity import NANO, Quantity, QuantityError, format_nanos, parse_nanos
    from karpy.api.scenario import Scenario, ScenarioEvent, parse_event_line
    from karpy.api.workloads import DaemonSet, Deployment, Job, ReplicaSet, StatefulSet

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
