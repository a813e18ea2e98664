"""The cookbook's six strategies on a bill (issue 36): with a Compute Savings Plan, and with an EC2
Instance Savings Plan on m7i. Which generation wins on the bill, and by how much."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

import karpy

HOURS = 24
COMMITMENT = 0.2
SEVENTH = ("01-one-nodepool", "06-minvalues-wrong-knob")
EIGHTH = ("02-weighted-nodepools", "03-nodeoverlay", "04-generation-gte-8", "05-preferred-affinity")
FAMILIES = ("c7i", "m7i", "r7i", "c8i", "m8i", "r8i")


def profile(kind: str) -> dict[str, Any]:
    if kind == "compute":
        plan = {"name": "compute", "type": "Compute", "commitment": str(COMMITMENT),
                "rates": {f: "30%" for f in FAMILIES}}
    else:
        plan = {"name": "sp-m7i", "type": "EC2Instance", "family": "m7i", "commitment": str(COMMITMENT),
                "rates": {"m7i": "40%"}}
    return {"apiVersion": "karpy.io/v1alpha1", "kind": "BillingProfile", "metadata": {"name": kind},
            "spec": {"savingsPlans": [plan]}}


@pytest.fixture(scope="module")
def billed(cookbook: ModuleType) -> dict[tuple[str, str], Any]:
    out = {}
    for strategy in cookbook.STRATEGIES:
        for kind in ("compute", "ec2-m7i"):
            out[strategy, kind] = karpy.simulate([str(p) for p in cookbook.manifests_for(strategy)],
                                                 prices=cookbook.PRICES, region=cookbook.REGION,
                                                 feature_gates=cookbook.FEATURE_GATES, until=f"{HOURS}h",
                                                 billing=profile(kind))
    return out


def _types(result: Any) -> list[str]:
    return [nc.instance_type for nc in result.launched]


def test_launches_are_the_cookbook_s_and_the_bill_never_changes_them(billed: dict[tuple[str, str], Any]) -> None:
    for strategy in SEVENTH:
        assert _types(billed[strategy, "compute"]) == _types(billed[strategy, "ec2-m7i"]) == ["c7i.2xlarge"]
    for strategy in EIGHTH:
        assert _types(billed[strategy, "compute"]) == _types(billed[strategy, "ec2-m7i"]) == ["c8i.2xlarge"]


def test_compute_plan_discounts_both_generations_alike_7th_still_wins(billed: dict[tuple[str, str], Any]) -> None:
    seventh = billed["01-one-nodepool", "compute"].cost
    eighth = billed["02-weighted-nodepools", "compute"].cost
    for cost in (seventh, eighth):
        b = cost.billed
        # the plan is used up every full hour (a 2xlarge at 70% of ~$0.36-0.37/h exceeds $0.20/h)
        assert b.commitments["compute"].utilization > 0.99 and b.unused_commitment < 0.01
        # per hour: $0.20 covers 0.20 / (0.7 od) of the hour, the rest bills on demand
        od = cost.by_nodeclaim[next(iter(cost.by_nodeclaim))].price
        hours = cost.node_hours.total
        assert b.total == pytest.approx((COMMITMENT + (1 - COMMITMENT / (0.7 * od)) * od) * hours, abs=0.01)
        assert od in (0.357, 0.37484)  # c7i.2xlarge / c8i.2xlarge on the 2026-07-20 table
        assert b.total < cost.total
    # fully used, the plan saves the same COMMITMENT x (1/0.7 - 1) $/h whatever it covers: the bill
    # keeps the list gap, 7th gen wins by exactly what it wins on list
    saving = COMMITMENT * (1 / 0.7 - 1) * HOURS
    assert seventh.total - seventh.billed.total == pytest.approx(saving, abs=0.01)
    assert eighth.total - eighth.billed.total == pytest.approx(saving, abs=0.01)
    gap_bill = eighth.billed.total - seventh.billed.total
    assert gap_bill == pytest.approx(eighth.total - seventh.total, abs=0.001) and gap_bill > 0.3
    for strategy in (*SEVENTH, *EIGHTH):
        assert not [m for m in billed[strategy, "compute"].cost.billed.misalignments if m["kind"] == "cheaper-on-bill"]


def test_ec2_instance_plan_on_m7i_idles_while_karpenter_launches_c7i_or_c8i(billed: dict[tuple[str, str], Any]) -> None:
    for strategy in (*SEVENTH, *EIGHTH):
        cost = billed[strategy, "ec2-m7i"].cost
        b = cost.billed
        # nothing launched is m7i: the plan covers nothing and is paid in full
        assert b.commitments["sp-m7i"].used == 0.0 and b.unused_commitment == round(COMMITMENT * HOURS, 6)
        assert b.total == round(cost.total + COMMITMENT * HOURS, 6)
        cheaper = [m for m in b.misalignments if m["kind"] == "cheaper-on-bill"]
        if strategy in ("02-weighted-nodepools", "04-generation-gte-8", "05-preferred-affinity"):
            # the launching NodeClaim did not allow m7i (the 8th-gen pool / Gte 8 / the preferred 8th gen)
            assert cheaper == []
            continue
        [m] = cheaper
        assert m["cheaper_on_bill"]["instance_type"] == "m7i.2xlarge" and m["via"] == "sp-m7i"
        # m7i.2xlarge lists higher than what was launched, and bills 40% below its list price
        assert m["cheaper_on_bill"]["list_price"] > m["launched"]["list_price"]
        assert m["cheaper_on_bill"]["billed_per_hour"] == round(m["cheaper_on_bill"]["list_price"] * 0.6, 6)
        assert [o["spec"]["priceAdjustment"] for o in b.overlays] == ["-40%"]
    # on this bill 7th gen (c7i) still beats 8th gen (c8i) by the list gap: the plan helps neither
    gap = billed["02-weighted-nodepools", "ec2-m7i"].cost.billed.total - billed["01-one-nodepool", "ec2-m7i"].cost.billed.total
    assert gap == pytest.approx(billed["02-weighted-nodepools", "ec2-m7i"].cost.total
                                - billed["01-one-nodepool", "ec2-m7i"].cost.total, abs=1e-6)
    assert gap > 0


def test_aligning_overlay_launches_m7i_and_halves_the_bill(cookbook: ModuleType) -> None:
    """Strategy 01 under the m7i plan, re-run with the overlay cost.billed names (karpy.align_billing)."""
    aligned = karpy.align_billing([str(p) for p in cookbook.manifests_for("01-one-nodepool")],
                                  billing=profile("ec2-m7i"), prices=cookbook.PRICES, region=cookbook.REGION,
                                  feature_gates=cookbook.FEATURE_GATES, until=f"{HOURS}h")
    doc = aligned.to_document()
    assert doc["before"]["launched"] == {"c7i.2xlarge on-demand": 1}
    assert doc["after"]["launched"] == {"m7i.2xlarge on-demand": 1}
    assert doc["after"]["unused_commitment"] == 0.0 and doc["after"]["cheaper_on_bill"] == 0
    # m7i.2xlarge lists higher (the list total rises) but bills at 60% under the plan: 0.24192/h, of which
    # $0.20/h is the commitment and the rest on demand: 0.2 + (1 - 0.2 / 0.24192) * 0.4032 per hour
    assert doc["after"]["list_total"] > doc["before"]["list_total"]
    hours = aligned.after.cost.node_hours.total
    assert doc["after"]["billed_total"] == pytest.approx((0.2 + (1 - 0.2 / 0.24192) * 0.4032) * hours, abs=0.001)
    assert doc["after"]["billed_total"] < doc["before"]["billed_total"] / 2 and doc["verified"] is True
