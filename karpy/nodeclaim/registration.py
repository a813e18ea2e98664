"""A launched NodeClaim's Node as it joins the cluster: what the kubelet and the cloud side put on
it, then Karpenter's registration sync.

Mirrors kubernetes pkg/kubelet/kubelet_node_status.go ``initialNode`` (``kubernetes.io/hostname``,
``kubernetes.io/os|arch`` and their ``beta.kubernetes.io/*`` twins), k8s.io/cloud-provider
controllers/node/node_controller.go ``getNodeModifiersFromCloudProvider`` (instance type, zone and
region, each with its beta / ``failure-domain.beta`` twin), the cloud provider's own node labels
(its optional ``node_labels(nodeclaim)``: the AWS provider's EBS CSI topology label, which the CSI
node plugin registers on every node), and core pkg/controllers/nodeclaim/lifecycle/registration.go
``syncNode``: the NodeClaim's labels and annotations assigned over the Node's, its taints and
startup taints merged, ``karpenter.sh/registered=true``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from karpy.scheduling.labels import (LABEL_ARCH, LABEL_ARCH_BETA, LABEL_FAILURE_DOMAIN_BETA_REGION,
                                     LABEL_FAILURE_DOMAIN_BETA_ZONE, LABEL_HOSTNAME, LABEL_INSTANCE_TYPE,
                                     LABEL_INSTANCE_TYPE_BETA, LABEL_OS, LABEL_OS_BETA, LABEL_REGION, LABEL_ZONE,
                                     NODE_REGISTERED)

__all__ = ["KUBELET_LABEL_TWINS", "node_annotations", "node_labels"]

#: the GA label -> its legacy twin, both set by the kubelet (os, arch) and the cloud node controller
#: (instance type, zone, region) on every node (kubelet_node_status.go, node_controller.go)
KUBELET_LABEL_TWINS: Mapping[str, str] = {
    LABEL_OS: LABEL_OS_BETA,
    LABEL_ARCH: LABEL_ARCH_BETA,
    LABEL_INSTANCE_TYPE: LABEL_INSTANCE_TYPE_BETA,
    LABEL_ZONE: LABEL_FAILURE_DOMAIN_BETA_ZONE,
    LABEL_REGION: LABEL_FAILURE_DOMAIN_BETA_REGION,
}


def node_labels(nodeclaim: Any, hostname: str, cloud_provider: Any = None) -> dict[str, str]:
    """The labels of the Node ``nodeclaim`` registers as ``hostname``: the kubelet's and the cloud
    node controller's (from the values the instance really has, the NodeClaim's resolved labels),
    the cloud provider's ``node_labels(nodeclaim)``, then registration.go syncNode's
    ``lo.Assign(node.Labels, nodeClaim.Labels, {registered: "true"})``."""
    claim: Mapping[str, str] = nodeclaim.metadata.labels or {}
    labels: dict[str, str] = {LABEL_HOSTNAME: hostname}
    for ga, beta in KUBELET_LABEL_TWINS.items():
        value = claim.get(ga)
        if value is not None:
            labels[ga] = labels[beta] = value
    provided = getattr(cloud_provider, "node_labels", None)
    if provided is not None:
        labels.update(provided(nodeclaim))
    labels.update(claim)
    labels[NODE_REGISTERED] = "true"
    return labels


def node_annotations(nodeclaim: Any) -> dict[str, str]:
    """registration.go syncNode: ``lo.Assign(node.Annotations, nodeClaim.Annotations)`` (a NodePool
    template's ``karpenter.sh/do-not-disrupt`` reaches the Node, where disruption reads it)."""
    return dict(nodeclaim.metadata.annotations or {})
