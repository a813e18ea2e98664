"""The mocked account's setup asks EC2 once for what cannot change (issue #32): the region's zones
once per client, each given EC2NodeClass's network built once -- and a NodeClass applied during a
run with a new selector still gets the network it selects."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import botocore.client
import pytest

import karpy

NODECLASS = {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
             "spec": {"amiFamily": "AL2023", "role": "KarpenterNodeRole", "amiSelectorTerms": [{"alias": "al2023@latest"}],
                      "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
                      "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}]}}
NODEPOOL = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
            "spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
                                                            "name": "default"}, "requirements": []}}}}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
              "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                           {"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}}}


@pytest.fixture
def calls() -> Iterator[Counter[str]]:
    seen: Counter[str] = Counter()
    original = botocore.client.BaseClient._make_api_call

    def counting(self: Any, operation: str, params: Any) -> Any:
        seen[operation] += 1
        return original(self, operation, params)

    botocore.client.BaseClient._make_api_call = counting  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        botocore.client.BaseClient._make_api_call = original  # type: ignore[method-assign]


def test_zones_are_asked_once_and_a_given_nodeclass_network_is_checked_once(calls: Counter[str]) -> None:
    result = karpy.simulate([NODECLASS, NODEPOOL, DEPLOYMENT], prices="2026-07-20")
    result.cloud_provider.close()
    assert result.exit_code == 0
    # was 4: the mocked EC2's start (the first in a process only), the default network, the NodeClass's twice
    assert calls["DescribeAvailabilityZones"] <= 2
    # the default network's check, the NodeClass's before its network is built, building it, and
    # the provider's resolve (was 5: ensure_network_for ran again inside the resolve)
    assert calls["DescribeSubnets"] == 4 and calls["DescribeSecurityGroups"] == 4


def test_a_nodeclass_applied_with_a_new_selector_gets_its_network() -> None:
    changed = {**NODECLASS, "spec": {**NODECLASS["spec"],
                                     "subnetSelectorTerms": [{"tags": {"team": "blue"}}],
                                     "securityGroupSelectorTerms": [{"tags": {"team": "blue"}}]}}
    result = karpy.simulate([NODECLASS, NODEPOOL, DEPLOYMENT], prices="2026-07-20", until="1h",
                            events=[{"at": "10m", "apply": changed},
                                    "20m scale deployment/web 20"])
    provider = result.cloud_provider
    provider.close()
    # resolved when the apply event ran (the run's mocked EC2 is gone now): only subnets and groups
    # built for the new selector carry team=blue
    resolved = provider.resolve_nodeclass("default")
    assert resolved is not None and resolved.nodeclass.spec.subnet_selector_terms[0].tags == {"team": "blue"}
    assert resolved.subnets and resolved.security_groups
    assert result.exit_code == 0
