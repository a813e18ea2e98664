"""Ports of pkg/apis/v1/nodepool_budgets_test.go (GetAllowedDisruptionsByReason,
AllowedDisruptions, IsActive) and of helpers.go BuildDisruptionBudgetMapping rules."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from karpy.api.nodepool import Budget
from karpy.api.builders import make_nodepool
from karpy.disruption.budgets import (MAX_INT32, BudgetError, allowed_disruptions, allowed_disruptions_by_reason,
                                      budget_is_active)
from karpy.sim.clock import EPOCH

REASONS = ("Empty", "Underutilized", "Drifted")


def at(*args, tz=timezone.utc) -> float:
    return (datetime(*args, tzinfo=tz) - EPOCH).total_seconds()


NOW = at(2000, 6, 15, 12, 30, 30)


def budgets():
    every = dict(schedule="* * * * *", duration="1h")
    return [Budget(nodes="10", **every), Budget(nodes="100", **every), Budget(nodes="100%", **every),
            Budget(reasons=["Drifted", "Underutilized"], nodes="15", **every),
            Budget(reasons=["Drifted"], nodes="5", **every),
            Budget(reasons=["Underutilized", "Drifted", "Empty"], nodes="0", schedule="@weekly", duration="1h")]


def pool(bs):
    np = make_nodepool()
    np.spec.disruption.budgets = bs
    return np


# upstream: nodepool_budgets_test.go "should return 0 for all reasons if a budget is active for all reasons"
def test_zero_for_all_reasons_when_an_all_reason_budget_is_active():
    bs = budgets()
    bs[5] = Budget(reasons=bs[5].reasons, nodes="0", schedule="* * * * *", duration="1h")
    for r in REASONS:
        assert allowed_disruptions_by_reason(pool(bs), NOW, 100, r) == (0, [])


# upstream: nodepool_budgets_test.go "should return MaxInt32 for all reasons when there are no active budgets"
def test_max_int32_without_active_budgets():
    bs = [b.model_copy(update={"schedule": "@yearly", "duration": "1h"}) for b in budgets()]
    for r in REASONS:
        assert allowed_disruptions_by_reason(pool(bs), NOW, 100, r) == (MAX_INT32, [])


# upstream: nodepool_budgets_test.go "should ignore reason-defined budgets when inactive"
def test_inactive_reason_budgets_ignored():
    bs = budgets()
    bs[3] = bs[3].model_copy(update={"schedule": "@yearly"})
    bs[4] = bs[4].model_copy(update={"schedule": "@yearly"})
    for r in REASONS:
        assert allowed_disruptions_by_reason(pool(bs), NOW, 100, r)[0] == 10


# upstream: nodepool_budgets_test.go "should return the budget for all disruption reasons when undefined"
def test_budget_without_reasons_applies_to_all():
    for r in REASONS:
        assert allowed_disruptions_by_reason(pool(budgets()[:1]), NOW, 100, r)[0] == 10


# upstream: nodepool_budgets_test.go "should get the minimum budget for each reason"
def test_minimum_budget_per_reason():
    bs = budgets() + [Budget(schedule="* * * * *", nodes="4", duration="1h", reasons=["Empty"])]
    assert allowed_disruptions_by_reason(pool(bs), NOW, 100, "Empty")[0] == 4
    assert allowed_disruptions_by_reason(pool(bs), NOW, 100, "Drifted")[0] == 5
    assert allowed_disruptions_by_reason(pool(bs), NOW, 100, "Underutilized")[0] == 10


# upstream: nodepool_budgets_test.go "should return zero values if a schedule is invalid"
def test_invalid_schedule_errors():
    b = budgets()[0].model_copy(update={"schedule": "@wrongly"})
    with pytest.raises(BudgetError):
        allowed_disruptions(b, NOW, 100)
    # MustGetAllowedDisruptions: one invalid budget fails every reason closed
    from karpy.disruption.budgets import must_get_allowed_disruptions

    assert must_get_allowed_disruptions(pool([b, Budget(nodes="50%")]), NOW, 100, "Empty") == 0


# upstream: nodepool_budgets_test.go "should return zero values if a nodes value is invalid"
def test_invalid_nodes_value_rejected_at_load():
    # the NodePool CRD's pattern on budgets[].nodes rejects it at admission, as the API server does
    from karpy.api.loader import ManifestError, load_manifests

    text = ("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: np}\nspec:\n"
            "  disruption:\n    budgets: [{nodes: 1000a%}]\n  template:\n    spec:\n"
            "      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n"
            "      requirements: []\n")
    with pytest.raises(ManifestError, match=r"spec\.disruption\.budgets\[0\]\.nodes"):
        load_manifests(text)


# upstream: nodepool_budgets_test.go "should return MaxInt32 when a budget is inactive"
def test_inactive_budget_is_unbounded():
    assert allowed_disruptions(budgets()[0].model_copy(update={"schedule": "@yearly"}), NOW, 100) == MAX_INT32


# upstream: nodepool_budgets_test.go "should return the int value when a budget is active"
# upstream: nodepool_budgets_test.go "should return the string value when a budget is active"
def test_active_values():
    assert allowed_disruptions(budgets()[0], NOW, 100) == 10
    assert allowed_disruptions(budgets()[2], NOW, 100) == 100


@pytest.mark.parametrize("nodes,num,expected", [("10%", 1, 1), ("10%", 0, 0), ("5%", 10, 1), ("30%", 10, 3),
                                                ("33%", 10, 4), ("3", 1, 3)])
def test_percent_rounds_up_count_as_is(nodes, num, expected):
    # intstr.GetScaledValueFromIntOrPercent(roundUp=true); a count may exceed the node count
    assert allowed_disruptions(Budget(nodes=nodes), NOW, num) == expected


# upstream: nodepool_budgets_test.go "should always consider a schedule and time in UTC"
def test_schedule_in_utc():
    now = at(2000, 5, 31, 0, 0, 0, tz=timezone(timedelta(hours=1)))
    assert not budget_is_active(Budget(nodes="10", schedule="@daily", duration="30m"), now)


# upstream: nodepool_budgets_test.go "should return that a schedule is active when schedule and duration are nil"
# upstream: nodepool_budgets_test.go "should return that a schedule is active"
# upstream: nodepool_budgets_test.go "should return that a schedule is inactive"
def test_active_inactive():
    assert budget_is_active(Budget(nodes="10"), NOW)
    assert budget_is_active(budgets()[0], NOW)
    assert not budget_is_active(budgets()[0].model_copy(update={"schedule": "@yearly"}), NOW)


# upstream: nodepool_budgets_test.go "should return that a schedule is active when the schedule hit is in the middle of the duration"
def test_active_mid_duration():
    assert budget_is_active(Budget(nodes="10", schedule="@yearly", duration="24h"), at(1000, 1, 1, 12, 0, 0))


# upstream: nodepool_budgets_test.go "should return that a schedule is active when the duration is longer than the recurrence"
def test_duration_longer_than_recurrence():
    assert budget_is_active(Budget(nodes="10", schedule="@daily", duration="48h"), at(2024, 1, 7, 0, 0, 0))


# upstream: nodepool_budgets_test.go "should return that a schedule is inactive when the schedule hit is after the duration"
def test_inactive_after_duration():
    assert not budget_is_active(Budget(nodes="10", schedule="30 6 * * SUN", duration="6h"), at(2024, 1, 7, 0, 0, 0))


# upstream: nodepool_budgets_test.go "should return an error indicating why the cron fails to parse"
def test_cron_error_message():
    with pytest.raises(BudgetError, match=r"beginning of range \(2\) beyond end of range \(1\)"):
        budget_is_active(Budget(nodes="10", schedule="0 0 * * tue-mon", duration="6h"), at(2024, 1, 7, 0, 0, 0))
