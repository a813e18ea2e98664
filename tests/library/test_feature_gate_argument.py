"""``karpy.simulate(feature_gates=...)`` takes a mapping or the ``--feature-gates`` text, and anything
else is a FeatureGateError naming the argument (it was a ValueError from ``dict()`` about "update
sequence elements")."""

from __future__ import annotations

from typing import Any

import pytest

import karpy
from karpy.cli import bundled_example
from karpy.errors import FeatureGateError


NODEPOOL = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
            "spec": {"template": {"spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In",
                                  "values": ["c7i", "c8i"]}]}}}}
OVERLAY = {"apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay", "metadata": {"name": "prefer-c8i"},
           "spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In",
                                      "values": ["c8i"]}], "priceAdjustment": "-50%"}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
       "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}


def test_the_option_text_and_the_mapping_give_the_same_run() -> None:
    manifests = [NODEPOOL, OVERLAY, POD]
    text = karpy.simulate(manifests, feature_gates="NodeOverlay=true, SpotToSpotConsolidation=false")
    mapping = karpy.simulate(manifests, feature_gates={"NodeOverlay": True, "SpotToSpotConsolidation": False})
    assert text.to_json() == mapping.to_json()
    # the gate took effect: without it the NodeOverlay is ignored, with a warning, and 7th gen wins
    off = karpy.simulate(manifests)
    assert any("NodeOverlay" in w for w in off.warnings) and not any("NodeOverlay" in w for w in text.warnings)
    assert [r.instance_type.split(".")[0] for r in text.simulation.launches] == ["c8i"]
    assert [r.instance_type.split(".")[0] for r in off.simulation.launches] == ["c7i"]


@pytest.mark.parametrize(("value", "message"), [
    (5, "feature_gates must be a mapping of gate name to bool or 'K=V,...' text (got int: 5)"),
    (["NodeOverlay"], "feature_gates must be a mapping of gate name to bool or 'K=V,...' text (got list: ['NodeOverlay'])"),
    ("NodeOverlay", "missing bool value for NodeOverlay"),
    ("NodeOverlay=maybe", 'invalid value of NodeOverlay=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax'),
])
def test_anything_else_names_the_argument(value: Any, message: str) -> None:
    with pytest.raises(FeatureGateError) as err:
        karpy.simulate(bundled_example(), feature_gates=value)
    assert str(err.value) == message
