"""YAML manifests shared by the test modules (one copy each; import ``from tests.manifests``)."""

from __future__ import annotations

__all__ = ["DEFAULT_NODEPOOL", "nodepool_yaml"]


def nodepool_yaml(*requirements: str, name: str = "default", nodeclass: str = "default") -> str:
    """A ``karpenter.sh/v1`` NodePool referencing EC2NodeClass ``nodeclass``; each requirement is
    a YAML flow mapping, e.g. ``"{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}"``.
    Ends with a newline, no document separator."""
    head = ("apiVersion: karpenter.sh/v1\nkind: NodePool\n"
            f"metadata: {{name: {name}}}\nspec:\n  template:\n    spec:\n"
            f"      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: {nodeclass}}}\n")
    if not requirements:
        return head + "      requirements: []\n"
    return head + "      requirements:\n" + "".join(f"      - {r}\n" for r in requirements)


#: the NodePool most manifests in the tests carry: ``default``, no requirements
DEFAULT_NODEPOOL = nodepool_yaml()
