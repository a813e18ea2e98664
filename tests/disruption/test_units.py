"""Ports of the table-driven and pure parts of the disruption suites."""

from __future__ import annotations

import pytest

from karpy.api.builders import make_pod
from karpy.api.meta import OwnerReference
from karpy.disruption.queue import retry_duration
from karpy.termination.terminator import group_pods_by_priority
from karpy.utils.disruption import eviction_cost


# upstream: queue_test.go DescribeTable "should calculate correct timeout based on queue length"
@pytest.mark.parametrize("n,seconds", [(100, 600), (4000, 600), (10000, 800), (40000, 3200), (80000, 3600),
                                       (100000, 3600)])
def test_retry_duration(n, seconds):
    assert retry_duration(n) == pytest.approx(seconds)


# pkg/utils/disruption EvictionCost: the formula, its clamp and an unparsable deletion cost (karpy values table)
@pytest.mark.parametrize("annotations,priority,expected", [
    ({}, None, 1.0),
    ({"controller.kubernetes.io/pod-deletion-cost": "134217728"}, None, 2.0),
    ({"controller.kubernetes.io/pod-deletion-cost": "-134217728"}, None, 0.0),
    ({"controller.kubernetes.io/pod-deletion-cost": "not-a-number"}, None, 1.0),
    ({}, 33554432, 2.0),
    ({}, -2147483648, -10.0),  # clamped
    ({"controller.kubernetes.io/pod-deletion-cost": "2147483647"}, 1000000000, 10.0),
])
def test_eviction_cost(annotations, priority, expected):
    assert eviction_cost(make_pod("p", annotations=annotations, priority=priority)) == pytest.approx(expected)


def test_drain_tiers_critical_and_daemonset_last():
    # terminator.go groupPodsByPriority
    ds = OwnerReference(api_version="apps/v1", kind="DaemonSet", name="d", uid="u")
    plain = make_pod("plain")
    dspod = make_pod("ds", owner_references=[ds])
    crit = make_pod("crit", priority_class_name="system-cluster-critical")
    critds = make_pod("critds", priority_class_name="system-node-critical", owner_references=[ds])
    tiers = group_pods_by_priority([critds, crit, dspod, plain])
    assert [[p.metadata.name for p in t] for t in tiers] == [["plain"], ["ds"], ["crit"], ["critds"]]


DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
STANDARD_POD_COST = 1.0


def _cost(deletion_cost: str | None = None, priority: int | None = None) -> float:
    ann = {DELETION_COST: deletion_cost} if deletion_cost is not None else {}
    return eviction_cost(make_pod("p", annotations=ann, priority=priority))


# upstream: suite_test.go Pod Eviction Cost "should have a standard disruptionCost for a pod with no priority or disruptionCost specified"
def test_standard_eviction_cost():
    assert _cost() == STANDARD_POD_COST


# upstream: suite_test.go Pod Eviction Cost "should have a higher disruptionCost for a pod with a positive deletion disruptionCost"
# upstream: suite_test.go Pod Eviction Cost "should have a lower disruptionCost for a pod with a positive deletion disruptionCost"
def test_eviction_cost_follows_the_deletion_cost_sign():
    assert _cost("100") > STANDARD_POD_COST
    assert _cost("-100") < STANDARD_POD_COST  # upstream's It text says "positive"; its pod has -100


# upstream: suite_test.go Pod Eviction Cost "should have higher costs for higher deletion costs"
def test_eviction_cost_is_monotonic_in_deletion_cost():
    assert _cost("101") > _cost("100") > _cost("99")


# upstream: suite_test.go Pod Eviction Cost "should have a higher disruptionCost for a pod with a higher priority"
# upstream: suite_test.go Pod Eviction Cost "should have a lower disruptionCost for a pod with a lower priority"
def test_eviction_cost_follows_priority():
    assert _cost(priority=1) > STANDARD_POD_COST
    assert _cost(priority=-1) < STANDARD_POD_COST
