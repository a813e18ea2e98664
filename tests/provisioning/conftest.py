"""Shared fixtures for provisioning tests (see tests.provisioning.harness for the harness API)."""

from __future__ import annotations

import pytest

from karpy.api.builders import make_nodepool


@pytest.fixture
def sched_nodepool():
    """sched/suite_test.go:133-152 default NodePool: capacity-type In [spot, on-demand, reserved]."""
    return make_nodepool("default", requirements=[("karpenter.sh/capacity-type", "In", ["spot", "on-demand", "reserved"])])
