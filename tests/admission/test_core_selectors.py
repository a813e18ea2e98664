"""Core kinds' selectors as the API server validates them (issue #31): kubernetes
pkg/apis/core/validation ValidateNodeSelector / ValidateNodeSelectorRequirement /
ValidatePreferredSchedulingTerms / ValidateLabels, and apimachinery's ValidateLabelSelector.

Shapes: a pod whose node affinity copies a NodePool requirement of the Karpenter docs
(concepts/nodepools.md, ``karpenter.k8s.aws/instance-generation`` ``Gt 2``; since Karpenter v1.4 a
NodePool may also say ``Gte``, a pod may not) and aws/karpenter-provider-aws 1d92708
``examples/workloads/inflate.yaml``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from karpy.api.loader import ManifestError, load_manifests

sys.path.insert(0, str(Path(__file__).parents[1] / "realworld"))
from realworld_helpers import docs  # noqa: E402

from tests.admission.conftest import errors_of  # noqa: E402

AFFINITY = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"


def _pod(operator: str, values: list[str]) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}],
                     "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                         "nodeSelectorTerms": [{"matchExpressions": [
                             {"key": "karpenter.k8s.aws/instance-generation", "operator": operator,
                              "values": values}]}]}}}}}


def test_gte_in_a_pods_node_affinity_is_rejected_naming_the_field() -> None:
    assert errors_of(_pod("Gte", ["3"])) == [
        f'{AFFINITY}.matchExpressions[0].operator: Invalid value: "Gte": not a valid selector operator']
    assert errors_of(_pod("Gt", ["2"])) == []
    assert errors_of(_pod("Gt", ["2", "3"])) == [
        f"{AFFINITY}.matchExpressions[0].values: Required value: must be specified single value when "
        "`operator` is 'Lt' or 'Gt'"]


def test_loading_the_pod_fails_as_kubectl_apply_does() -> None:
    with pytest.raises(ManifestError, match=r'operator: Invalid value: "Gte": not a valid selector operator'):
        load_manifests(yaml.safe_dump(_pod("Gte", ["3"])))


def test_workload_selectors_and_node_selectors_are_validated() -> None:
    (deployment,) = [d for d in docs("aws/examples/workloads/inflate.yaml") if d["kind"] == "Deployment"]
    deployment["spec"]["selector"] = {"matchLabels": {"app": "inflate"},
                                      "matchExpressions": [{"key": "tier", "operator": "Exists", "values": ["x"]}]}
    deployment["spec"]["template"]["spec"]["nodeSelector"] = {"kubernetes.io/arch": "amd64 "}
    deployment["spec"]["template"]["spec"]["affinity"] = {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "topologyKey": "kubernetes.io/hostname",
            "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Equals", "values": ["inflate"]}]}}]}}
    errs = errors_of(deployment)
    assert ("spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is "
            "'Exists' or 'DoesNotExist'") in errs
    assert any(e.startswith('spec.template.spec.nodeSelector: Invalid value: "amd64 "') for e in errs), errs
    assert ("spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
            '.labelSelector.matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator'
            ) in errs
