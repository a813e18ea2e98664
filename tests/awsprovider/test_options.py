"""The operator options object reaches the AWS provider (issue #12: BestEffort lost on AWS).

Upstream reads ``options.FromContext(ctx).MinValuesPolicy`` in core's ``InstanceTypes.Truncate``,
which the provider's launch path calls for its 60-type cut (provider pkg/providers/instance/
instance.go filterInstanceTypes -> core pkg/cloudprovider/types.go Truncate): under BestEffort the
cut list is not re-checked against minValues.
"""

from __future__ import annotations

import pytest

import karpy
from awsprovider.cloudprovider import AWSCloudProvider
from karpy.cloudprovider.registry import ProviderOptions
from karpy.options import FeatureGates, Options
from karpy.sim.clock import VirtualClock
from karpy.sim.simulation import SimulationOptions
from tests.manifests import nodepool_yaml

ARM_50_FAMILIES = nodepool_yaml("{key: karpenter.k8s.aws/instance-family, operator: Exists, minValues: 50}",
                                "{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}",
                                "{key: kubernetes.io/arch, operator: In, values: [arm64]}") + """---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: "16", memory: 32Gi}}}]
"""


def test_from_options_hands_the_min_values_policy_to_the_launch_path():
    opts = Options(min_values_policy="BestEffort")
    p = AWSCloudProvider.from_options(ProviderOptions(region="us-east-1", prices="2026-07-20", clock=VirtualClock(),
                                                      options=opts))
    try:
        assert p.options is opts
        assert p.instances.min_values_policy == "BestEffort"
    finally:
        p.close()


def test_best_effort_on_real_prices_launches_where_strict_cannot():
    # 50 arm64 families exist only beyond the 60 cheapest types: Solve relaxes minValues
    # (BestEffort), and the provider's 60 cut must not re-check it (upstream types.go Truncate).
    opts = SimulationOptions(time_limit=120)
    best = karpy.simulate(ARM_50_FAMILIES, prices="2026-07-20", min_values_policy="BestEffort", options=opts)
    doc = best.to_document()
    assert best.exit_code == 0
    [claim] = doc["nodeclaims"]
    assert claim["instance_type"] is not None and claim["labels"]["kubernetes.io/arch"] == "arm64"
    assert claim["annotations"]["karpenter.sh/nodeclaim-min-values-relaxed"] == "true"
    strict = karpy.simulate(ARM_50_FAMILIES, prices="2026-07-20", min_values_policy="Strict", options=opts)
    assert strict.exit_code == 3
    assert all(c["instance_type"] is None for c in strict.to_document()["nodeclaims"])


def test_options_validate_policies_and_parse_feature_gates():
    with pytest.raises(ValueError, match="min_values_policy"):
        Options(min_values_policy="Loose")
    assert FeatureGates().reserved_capacity is True  # options.go default ReservedCapacity=true
    gates = FeatureGates.parse("ReservedCapacity=false,NodeOverlay=true")
    assert (gates.reserved_capacity, gates.node_overlay, gates.node_repair) == (False, True, False)
    with pytest.raises(ValueError, match="unrecognized feature gate: Reserved"):
        FeatureGates.parse("Reserved=true")
