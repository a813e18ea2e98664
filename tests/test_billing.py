"""karpy.billing: a BillingProfile applied hour by hour, on hand-computed cases (each number below
is worked out in the comment beside it), then on the bundled example."""

from __future__ import annotations

import json
from typing import Any

import pytest

from karpy.api.billing import BillingProfile, BillingProfileSpec
from karpy.billing import TablePriceBook, Usage, billed_cost, size_factor

H = 3600.0
WEEK = 168 * H
PRICES = TablePriceBook({"m7i.large": 0.1, "m7i.xlarge": 0.2, "m8i.large": 0.12, "c7i.large": 0.09},
                        {("c7i.large", "us-east-1a"): 0.03})


def spec(**fields: Any) -> BillingProfileSpec:
    return BillingProfileSpec.model_validate(fields)


def node(name: str, instance_type: str, start: float = 0.0, end: float = H, *, zone: str = "us-east-1a",
         capacity_type: str = "on-demand", price: float | None = None, vcpus: float = 2.0,
         candidates: tuple[str, ...] = (), pool: str = "general") -> Usage:
    listed = PRICES.on_demand(instance_type) if price is None else price
    assert listed is not None
    return Usage(node=name, nodepool=pool, instance_type=instance_type, zone=zone, capacity_type=capacity_type,
                 start=start, end=end, list_price=listed, family=instance_type.split(".")[0],
                 generation=instance_type[1], vcpus=vcpus, candidates=candidates,
                 capacity_candidates=("on-demand",) if candidates else ())


def test_two_nodes_one_ri_one_sp_a_week() -> None:
    # n1 m7i.large (od 0.10) under a regional m7i.large RI at 40%: 0.06/h, fully used.
    # n2 c7i.large (od 0.09) under a Compute SP of 0.05/h at 30%: SP rate 0.063/h, so 0.05/0.063 of each
    # hour is covered; the other 0.013/0.063 bills on demand less 10%: 0.081 * 0.013 / 0.063 = 0.0167142857/h.
    # A week: RI 0.06*168 = 10.08, SP 0.05*168 = 8.4, on demand 0.0167142857*168 = 2.808 -> 21.288.
    s = spec(enterpriseDiscount="10%",
             reservedInstances=[{"instanceType": "m7i.large", "count": 1, "discount": "40%"}],
             savingsPlans=[{"name": "compute", "type": "Compute", "commitment": "0.05", "rates": {"c7i": "30%"}}])
    bill = billed_cost([node("n1", "m7i.large", 0, WEEK), node("n2", "c7i.large", 0, WEEK)], WEEK, s, PRICES)
    assert bill["total"] == 21.288
    assert bill["by_pricing"] == {"reserved-instance": 10.08, "compute-savings-plan": 8.4, "on-demand": 2.808}
    assert bill["unused_commitment"] == 0.0
    assert bill["by_nodeclaim"] == {"n1": {"node_hours": 168.0, "dollars": 10.08},
                                    "n2": {"node_hours": 168.0, "dollars": 11.208}}
    assert bill["by_family"] == {"c7i": 11.208, "m7i": 10.08}
    assert bill["commitments"]["ri-m7i.large"] == {"kind": "ReservedInstance", "committed": 10.08, "used": 10.08,
                                                   "unused": 0.0, "utilization": 1.0, "covered_node_hours": 168.0}
    assert bill["commitments"]["compute"]["covered_node_hours"] == round(168 * 0.05 / 0.063, 6)
    assert bill["effective_per_hour"] == round(21.288 / 168, 6)
    assert bill["per_hour"] == [[0.0, round(21.288 / 168, 6)]]
    assert bill["modelled"] is True


def test_regional_ri_is_size_flexible_smallest_first() -> None:
    # a regional m7i.xlarge RI (8 units) at 50%: 0.10/h. Three m7i.large (4 units each) for an hour need
    # 12 units: the RI covers two, the third bills on demand 0.10. Total 0.20, nothing unused.
    s = spec(reservedInstances=[{"instanceType": "m7i.xlarge", "count": 1, "discount": "50%"}])
    bill = billed_cost([node(n, "m7i.large") for n in ("a", "b", "c")], H, s, PRICES)
    assert bill["total"] == 0.2
    assert bill["by_pricing"] == {"reserved-instance": 0.1, "on-demand": 0.1}
    assert bill["by_nodeclaim"]["a"]["dollars"] == 0.05 and bill["by_nodeclaim"]["c"]["dollars"] == 0.1
    assert size_factor("m7i.xlarge") == 8 and size_factor("m7i.large") == 4 and size_factor("m7i.metal") is None


def test_regional_ri_does_not_flex_across_families_or_for_windows() -> None:
    # m8i.large is another family; a Windows m7i.large only matches the exact type: both on demand.
    s = spec(reservedInstances=[{"instanceType": "m7i.xlarge", "count": 1, "discount": "50%"}])
    windows = Usage(node="w", nodepool="p", instance_type="m7i.large", zone="us-east-1a", capacity_type="on-demand",
                    start=0, end=H, list_price=0.1, windows=True)
    bill = billed_cost([node("x", "m8i.large"), windows], H, s, PRICES)
    # 0.12 + 0.10 on demand, the RI's 0.10 unused
    assert bill["total"] == 0.32 and bill["unused_commitment"] == 0.1


def test_zonal_ri_covers_3600_seconds_per_clock_hour_in_its_zone() -> None:
    # one zonal m7i.large RI at 40% (0.06/h) in us-east-1a; four m7i.large run 900 s each one after the
    # other in that zone (3600 s in all: all covered), a fifth 900 s in us-east-1b (0.10 * 0.25 = 0.025).
    s = spec(reservedInstances=[{"instanceType": "m7i.large", "zone": "us-east-1a", "count": 1, "discount": "40%"}])
    usage = [node(f"n{i}", "m7i.large", i * 900, (i + 1) * 900) for i in range(4)]
    usage.append(node("b", "m7i.large", 0, 900, zone="us-east-1b"))
    bill = billed_cost(usage, H, s, PRICES)
    assert bill["by_pricing"] == {"reserved-instance": 0.06, "on-demand": 0.025}
    assert bill["total"] == 0.085
    # a fifth in us-east-1a as well: 4500 s in the hour, 900 s above the RI bill on demand
    usage[-1] = node("b", "m7i.large", 0, 900)
    assert billed_cost(usage, H, s, PRICES)["by_pricing"] == {"reserved-instance": 0.06, "on-demand": 0.025}


def test_zonal_before_regional() -> None:
    # a zonal and a regional m7i.large RI, one node: the zonal one covers it, the regional one is unused.
    s = spec(reservedInstances=[{"instanceType": "m7i.large", "count": 1, "discount": "50%"},
                                {"instanceType": "m7i.large", "zone": "us-east-1a", "count": 1, "discount": "40%"}])
    bill = billed_cost([node("n", "m7i.large")], H, s, PRICES)
    assert bill["commitments"]["ri-m7i.large-us-east-1a"]["used"] == 0.06
    assert bill["commitments"]["ri-m7i.large"]["unused"] == 0.05
    assert bill["total"] == 0.11


def test_savings_plans_highest_discount_first_instance_before_compute() -> None:
    # EC2 Instance SP on m7i, 0.10/h: m7i.xlarge at 40% (SP rate 0.12/h) goes first and gets 0.10/0.12 = 5/6
    # of its hour. The Compute SP (0.05/h, 20% on m7i) then sees the xlarge's last 1/6 h (SP rate 0.16/h)
    # and the large's hour (0.08/h): equal discounts, the lower rate first -> the large gets 0.05/0.08 = 5/8.
    # Left on demand: large 3/8 * 0.10 = 0.0375, xlarge 1/6 * 0.20 = 0.033333. Total 0.220833.
    s = spec(savingsPlans=[
        {"name": "compute", "type": "Compute", "commitment": 0.05, "rates": {"m7i": "20%"}},
        {"name": "sp-m7i", "type": "EC2Instance", "family": "m7i", "commitment": 0.1,
         "rates": {"m7i": "30%", "m7i.xlarge": "40%"}}])
    bill = billed_cost([node("l", "m7i.large"), node("x", "m7i.xlarge")], H, s, PRICES)
    assert bill["by_pricing"] == {"ec2-instance-savings-plan": 0.1, "compute-savings-plan": 0.05,
                                  "on-demand": round(0.0375 + 0.2 / 6, 6)}
    assert bill["total"] == round(0.15 + 0.0375 + 0.2 / 6, 6)
    assert bill["commitments"]["sp-m7i"]["covered_node_hours"] == round(5 / 6, 6)
    assert bill["commitments"]["compute"]["covered_node_hours"] == 0.625


def test_ec2_instance_sp_in_another_region_covers_nothing() -> None:
    s = spec(savingsPlans=[{"name": "west", "type": "EC2Instance", "family": "m7i", "region": "us-west-2",
                            "commitment": 0.1, "rates": {"m7i": "30%"}}])
    bill = billed_cost([node("l", "m7i.large")], H, s, PRICES, region="us-east-1")
    assert bill["by_pricing"] == {"on-demand": 0.1, "unused-commitment": 0.1} and bill["total"] == 0.2


def test_unused_commitment_is_billed_and_the_last_hour_prorated() -> None:
    # no usage for 1.5 h: an SP of 1.00/h and a regional RI of 0.06/h are paid in full -> 1.59.
    s = spec(savingsPlans=[{"name": "sp", "type": "Compute", "commitment": "1", "rates": {"m7i": "10%"}}],
             reservedInstances=[{"instanceType": "m7i.large", "count": 1, "discount": "40%"}])
    bill = billed_cost([], 1.5 * H, s, PRICES)
    assert bill["total"] == 1.59 and bill["unused_commitment"] == 1.59 and bill["usage"] == 0.0
    assert bill["per_hour"] == [[0.0, 1.06]]
    assert [m["commitment"] for m in bill["misalignments"]] == ["ri-m7i.large", "sp"]


def test_spot_discount_enterprise_discount_and_node_fees() -> None:
    # spot c7i.large at 0.03 less 10% = 0.027/h; on-demand m7i.large 0.10 less 5% = 0.095/h; fees 0.01 per
    # node-hour + 0.002 per vCPU-hour (2 vCPUs) = 0.014/h per node. 2 h: 0.054 + 0.19 + 0.056 = 0.30.
    s = spec(spotDiscount="10%", enterpriseDiscount="5%",
             nodeFees=[{"name": "agent", "perNodeHour": "0.01"}, {"name": "licence", "perVCPUHour": 0.002}])
    usage = [node("s", "c7i.large", 0, 2 * H, capacity_type="spot", price=0.03), node("o", "m7i.large", 0, 2 * H)]
    bill = billed_cost(usage, 2 * H, s, PRICES)
    assert bill["by_pricing"] == {"on-demand": 0.19, "spot": 0.054, "fees": 0.056}
    assert bill["total"] == 0.3 and bill["fees"] == 0.056
    assert bill["by_capacity_type"] == {"on-demand": 0.218, "spot": 0.082}


def test_bill_uses_list_prices_not_overlay_adjusted_launch_prices() -> None:
    # a NodeOverlay made Karpenter see m7i.large at 0.05; the bill is the table's 0.10
    bill = billed_cost([node("n", "m7i.large", price=0.05)], H, spec(), PRICES)
    assert bill["total"] == 0.1


def test_misalignment_names_the_cheaper_offering_and_the_overlay() -> None:
    # Karpenter launched c7i.large (list 0.09 < m7i.large 0.10). With an EC2 Instance SP on m7i at 38% and
    # headroom, m7i.large bills 0.062/h while c7i.large bills 0.09 less 10% = 0.081/h: 0.019/h overspent.
    s = spec(enterpriseDiscount="10%",
             savingsPlans=[{"name": "sp-m7i", "type": "EC2Instance", "family": "m7i", "commitment": 1,
                            "rates": {"m7i": "38%"}}])
    bill = billed_cost([node("n", "c7i.large", 0, 10 * H, candidates=("c7i.large", "m7i.large", "m8i.large"))],
                       10 * H, s, PRICES)
    first = bill["misalignments"][0]
    assert first["kind"] == "cheaper-on-bill" and first["via"] == "sp-m7i" and first["nodeclaims"] == ["n"]
    assert first["launched"] == {"instance_type": "c7i.large", "capacity_type": "on-demand", "list_price": 0.09,
                                 "billed_per_hour": 0.081}
    assert first["cheaper_on_bill"] == {"instance_type": "m7i.large", "capacity_type": "on-demand",
                                        "list_price": 0.1, "billed_per_hour": 0.062}
    assert first["overspend"] == 0.19 and first["overlays"] == ["billing-sp-m7i-families-38"]
    assert bill["misalignments"][1]["kind"] == "unused-commitment"
    assert bill["overlays"] == [{
        "apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay", "metadata": {"name": "billing-sp-m7i-families-38"},
        "spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m7i"]},
                                  {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}],
                 "priceAdjustment": "-38%", "weight": 30}}]


def test_idle_ri_for_m8i_while_karpenter_launches_m7i() -> None:
    # a regional m8i.large RI at 40% (0.072/h) sits idle; Karpenter launched m7i.large (list 0.10 < 0.12).
    # On the bill m8i.large costs the RI rate 0.072 < 0.10: cheaper-on-bill via the RI, 0.028/h overspent,
    # and the RI's 0.072/h unused.
    s = spec(reservedInstances=[{"name": "ri-m8i", "instanceType": "m8i.large", "count": 1, "discount": "40%"}])
    bill = billed_cost([node("n", "m7i.large", 0, 2 * H, candidates=("m7i.large", "m8i.large"))], 2 * H, s, PRICES)
    cheaper, idle = bill["misalignments"]
    assert cheaper["via"] == "ri-m8i" and cheaper["cheaper_on_bill"]["instance_type"] == "m8i.large"
    assert cheaper["cheaper_on_bill"]["billed_per_hour"] == 0.072 and cheaper["overspend"] == 0.056
    assert idle == {"kind": "unused-commitment", "commitment": "ri-m8i", "commitment_kind": "ReservedInstance",
                    "unused": 0.144, "utilization": 0.0, "via": "ri-m8i", "overlays": ["billing-ri-m8i"]}
    assert cheaper["overlays"] == ["billing-ri-m8i"]
    assert bill["total"] == 0.344
    assert [o["metadata"]["name"] for o in bill["overlays"]] == ["billing-ri-m8i"]
    assert bill["overlays"][0]["spec"]["weight"] == 40


def test_spot_chosen_while_sp_covered_on_demand_bills_less() -> None:
    # spot c7i.large at 0.03 (list) while an EC2 Instance SP on m7i at 75% has headroom: on demand
    # m7i.large lists 0.10 but bills 0.025 < 0.03.
    s = spec(savingsPlans=[{"name": "deep", "type": "EC2Instance", "family": "m7i", "commitment": 1,
                            "rates": {"m7i": "75%"}}])
    spot = Usage(node="s", nodepool="p", instance_type="c7i.large", zone="us-east-1a", capacity_type="spot",
                 start=0, end=H, list_price=0.03, candidates=("c7i.large", "m7i.large"),
                 capacity_candidates=("spot", "on-demand"))
    [cheaper, _] = billed_cost([spot], H, s, PRICES)["misalignments"]
    assert cheaper["launched"] == {"instance_type": "c7i.large", "capacity_type": "spot", "list_price": 0.03,
                                   "billed_per_hour": 0.03}
    assert cheaper["cheaper_on_bill"] == {"instance_type": "m7i.large", "capacity_type": "on-demand",
                                          "list_price": 0.1, "billed_per_hour": 0.025}


def test_no_misalignment_when_the_commitment_has_no_headroom() -> None:
    # the same SP at 0.062/h is used up by an m7i.large already running: c7i.large is the cheapest on the bill.
    s = spec(enterpriseDiscount="10%",
             savingsPlans=[{"name": "sp-m7i", "type": "EC2Instance", "family": "m7i", "commitment": 0.062,
                            "rates": {"m7i": "38%"}}])
    usage = [node("m", "m7i.large"), node("n", "c7i.large", candidates=("c7i.large", "m7i.large"))]
    bill = billed_cost(usage, H, s, PRICES)
    assert bill["misalignments"] == [] and bill["overlays"] == []
    assert bill["total"] == round(0.062 + 0.081, 6)


def test_profile_object_and_name() -> None:
    profile = BillingProfile.model_validate({"metadata": {"name": "acme"}, "spec": {"enterpriseDiscount": "10%"}})
    bill = billed_cost([node("n", "m7i.large")], H, profile, PRICES)
    assert bill["profile"] == "acme" and bill["total"] == 0.09


# -- the bundled example on the AWS provider --------------------------------------------------------

@pytest.fixture(scope="module")
def example() -> str:
    from karpy.cli import bundled_example

    return str(bundled_example())


SP_M8I = """
apiVersion: karpy.io/v1alpha1
kind: BillingProfile
metadata: {name: sp-m8i}
spec:
  savingsPlans:
  - name: sp-m8i
    type: EC2Instance
    family: m8i
    commitment: "1.00"
    rates: {m8i: "45%"}
"""


def test_bundled_example_bill_differs_from_list_and_overlays_realign_it(example: str) -> None:
    import karpy

    run = karpy.simulate([example], prices="2026-07-20", until="24h", billing=SP_M8I)
    launched = [nc.instance_type for nc in run.launched]
    assert launched == ["m7i.2xlarge"]  # Karpenter ranks by list: 7th generation
    cost = run.cost
    assert cost.billed is not None
    od = {"m7i.2xlarge": 0.4032, "m8i.2xlarge": 0.42336}  # the 2026-07-20 us-east-1 table
    hours = cost.node_hours.total
    # the m7i node bills its list price (no discount covers it) and the SP is paid, unused: 24 h x 1.00
    assert cost.billed.usage == round(od["m7i.2xlarge"] * hours, 6) == cost.total
    assert cost.billed.unused_commitment == 24.0
    assert cost.billed.total == round(cost.total + 24.0, 6)
    mis = [m for m in cost.billed.misalignments if m["kind"] == "cheaper-on-bill"]
    assert len(mis) == 1 and mis[0]["cheaper_on_bill"]["instance_type"] == "m8i.2xlarge"
    assert mis[0]["cheaper_on_bill"]["billed_per_hour"] == round(od["m8i.2xlarge"] * 0.55, 6)
    overlays = list(cost.billed.overlays)
    assert [o["spec"]["priceAdjustment"] for o in overlays] == ["-45%"]
    # verified by re-running with the overlays: Karpenter now launches m8i and the bill drops
    again = karpy.simulate([example, *overlays], prices="2026-07-20", until="24h", billing=SP_M8I,
                           feature_gates={"NodeOverlay": True})
    assert [nc.instance_type for nc in again.launched] == ["m8i.2xlarge"]
    rebilled = again.cost.billed
    assert rebilled is not None and rebilled.total < cost.billed.total
    assert not [m for m in rebilled.misalignments if m["kind"] == "cheaper-on-bill"]
    assert rebilled.by_pricing["ec2-instance-savings-plan"] > 0


def test_billing_from_the_manifests_and_determinism(example: str, tmp_path: Any) -> None:
    import karpy

    path = tmp_path / "billing.yaml"
    path.write_text(SP_M8I)
    a = karpy.simulate([example, str(path)], prices="2026-07-20", until="2h").to_json()
    b = karpy.simulate([example], prices="2026-07-20", until="2h", billing=str(path)).to_json()
    assert a == b and '"billed"' in a
    plain = karpy.simulate([example], prices="2026-07-20", until="2h")
    assert plain.cost.billed is None and '"billed"' not in plain.to_json()


def test_table_shows_the_bill_beside_list_prices(example: str) -> None:
    import karpy
    from karpy.report.table import render_table

    run = karpy.simulate([example], prices="2026-07-20", until="2h", billing=SP_M8I)
    text = render_table(run.to_document())
    billed = run.cost.billed
    assert billed is not None
    assert (f"billed (modelled, BillingProfile sp-m8i): ${billed.total:.5f} = "
            f"${billed.effective_per_hour:.5f}/h effective; unused commitment $2.00000") in text
    assert ("  not cheapest on the bill: general launched 1 x m7i.2xlarge on-demand ($0.40320/h billed); "
            "m8i.2xlarge on-demand lists higher but bills $0.23285/h via sp-m8i") in text
    assert "  NodeOverlays that teach Karpenter the bill: billing-sp-m8i-families-45 (-45%)" in text
    assert "billed" not in render_table(karpy.simulate([example], prices="2026-07-20").to_document())


def test_html_report_shows_the_bill(example: str) -> None:
    import karpy
    from karpy.report.html import render_html

    run = karpy.simulate([example], prices="2026-07-20", until="2h", billing=SP_M8I)
    page = render_html(run.to_document())
    billed = run.cost.billed
    assert billed is not None
    assert f'<dd id="summary-billed" data-cost="{billed.total:.5f}">' in page
    assert '<section id="billed"><h2>On your bill (modelled)</h2>' in page
    assert "<li>not cheapest on the bill: general launched 1 x m7i.2xlarge on-demand" in page
    plain = render_html(karpy.simulate([example], prices="2026-07-20").to_document())
    assert 'id="summary-billed"' not in plain and 'id="billed"' not in plain


def test_align_billing_verifies_the_overlays_by_re_running(example: str) -> None:
    import karpy

    aligned = karpy.align_billing([example], billing=SP_M8I, prices="2026-07-20", until="24h")
    doc = aligned.to_document()
    assert doc["before"]["launched"] == {"m7i.2xlarge on-demand": 1}
    assert doc["after"]["launched"] == {"m8i.2xlarge on-demand": 1}
    assert doc["before"]["cheaper_on_bill"] == 1 and doc["after"]["cheaper_on_bill"] == 0
    # the m8i node now uses the plan: 0.42336 x 0.55 = 0.232848/h of the $1/h commitment
    assert doc["after"]["billed_total"] == 24.0 and doc["before"]["billed_total"] > 24.0 + 9.0
    assert doc["saving"] == round(doc["before"]["billed_total"] - 24.0, 6) and doc["verified"] is True
    assert [o["metadata"]["name"] for o in doc["overlays"]] == ["billing-sp-m8i-families-45"]


def test_align_billing_needs_a_profile(example: str) -> None:
    import karpy
    from karpy.alignment import BillingAlignmentError

    with pytest.raises(BillingAlignmentError, match="needs a karpy.io/v1alpha1 BillingProfile"):
        karpy.align_billing([example], prices="2026-07-20")


def test_explain_names_the_bill(example: str, tmp_path: Any) -> None:
    from click.testing import CliRunner

    from karpy.cli import cli

    path = tmp_path / "billing.yaml"
    path.write_text(SP_M8I)
    args = ["explain", example, str(path), "--prices", "2026-07-20", "--until", "2h"]
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0, out.output
    assert "billed (modelled, BillingProfile sp-m8i): $" in out.output
    assert "  unused commitment: sp-m8i $2.00000 (0.0% used)" in out.output
    name = karpy_names(out.output)
    one = CliRunner().invoke(cli, [*args, "--nodeclaim", name])
    assert one.exit_code == 0 and "general launched 1 x m7i.2xlarge on-demand" in one.output
    assert "unused commitment: sp-m8i" not in one.output
    plain = CliRunner().invoke(cli, ["explain", example, "--prices", "2026-07-20"])
    assert plain.exit_code == 0 and "billed (modelled" not in plain.output


def karpy_names(text: str) -> str:
    """The first NodeClaim name ``general-xxxxx`` in explain's text."""
    import re

    match = re.search(r"\bgeneral-[a-z0-9]{5}\b", text)
    assert match is not None, text
    return match.group(0)


def test_overlay_names_are_valid_object_names_and_admitted() -> None:
    # a plan named as users name them in spreadsheets still gives an admissible NodeOverlay
    from karpy.api.loader import load_manifests

    s = spec(enterpriseDiscount="10%",
             savingsPlans=[{"name": "SP_M7i (3yr)", "type": "EC2Instance", "family": "m7i", "commitment": 1,
                            "rates": {"m7i": "37.5%", "m7i.large": "36%"}}])
    bill = billed_cost([node("n", "c7i.large", candidates=("c7i.large", "m7i.large", "m7i.xlarge"))], H, s, PRICES)
    names = [o["metadata"]["name"] for o in bill["overlays"]]
    assert names == ["billing-sp-m7i-3yr-families-37-5", "billing-sp-m7i-3yr-types-36"]
    assert [o["spec"]["priceAdjustment"] for o in bill["overlays"]] == ["-37.5%", "-36%"]
    assert [o["spec"]["weight"] for o in bill["overlays"]] == [30, 31]
    loaded = load_manifests(bill["overlays"])
    assert [o.metadata.name for o in loaded.nodeoverlays] == names


# -- the CLI checks the aligning overlays by re-running, as karpy.align_billing does ----------------

def _cli(*args: str, input: str | None = None) -> Any:
    from click.testing import CliRunner

    from karpy.cli import cli

    return CliRunner().invoke(cli, list(args), input=input)


def test_simulate_cli_verifies_the_overlays_it_names(example: str, tmp_path: Any) -> None:
    """``karpy simulate example.yaml billing.yaml --until 24h``: the overlays line is followed by
    the re-run's verdict, what launched and both bills (main: the overlays listed, never checked);
    the HTML report and markdown say the same; the JSON document stays as karpy.simulate makes it."""
    import karpy

    path = tmp_path / "billing.yaml"
    path.write_text(SP_M8I)
    args = ("simulate", example, str(path), "--prices", "2026-07-20", "--until", "24h")
    out = _cli(*args)
    assert out.exit_code == 0, out.output
    aligned = karpy.align_billing([example], billing=SP_M8I, prices="2026-07-20", until="24h").to_document()
    before, after = aligned["before"], aligned["after"]
    line = ("  verified by re-running with them (NodeOverlay gate on): launches 1 x m8i.2xlarge on-demand "
            f"(was 1 x m7i.2xlarge on-demand); billed (modelled) ${after['billed_per_hour']:.5f}/h effective "
            f"(was ${before['billed_per_hour']:.5f}/h), list ${after['cost_per_hour']:.5f}/h "
            f"(was ${before['cost_per_hour']:.5f}/h); saves ${aligned['saving']:.5f} over the run")
    lines = out.stdout.splitlines()
    overlays = next(i for i, x in enumerate(lines) if x.startswith("  NodeOverlays that teach Karpenter the bill:"))
    assert lines[overlays + 1] == line
    assert after["billed_per_hour"] == 1.0 and before["cost_per_hour"] == 0.4032 and after["cost_per_hour"] == 0.42336
    report = tmp_path / "report.html"
    md = _cli(*args, "-o", "markdown", "--report", str(report))
    assert line.strip() in md.stdout and "billed (modelled, BillingProfile sp-m8i)" in md.stdout
    page = report.read_text(encoding="utf-8")
    assert "verified by re-running with them (NodeOverlay gate on): launches 1 x m8i.2xlarge on-demand" in page
    doc = json.loads(_cli(*args, "-o", "json").stdout)
    assert "alignment" not in doc["cost"]["billed"] and doc["cost"]["billed"]["modelled"] is True


def test_overlays_from_standard_input_are_said_not_verified(example: str) -> None:
    """Manifests read from standard input cannot be read again: the line says the overlays were not
    verified and why, instead of passing them off as checked."""
    from pathlib import Path

    text = Path(example).read_text(encoding="utf-8") + "\n---\n" + SP_M8I
    out = _cli("simulate", "-", "--prices", "2026-07-20", "--until", "2h", input=text)
    assert out.exit_code == 0, out.output
    assert ("  NOT verified (not re-run: the manifests came from standard input and cannot be re-read)"
            in out.stdout.splitlines())


def test_explain_json_carries_the_bill_and_the_overlays_check(example: str, tmp_path: Any) -> None:
    """``karpy explain -o json``: ``cost.billed`` as the document's (schema 1.2's BilledCost) and
    ``billing_alignment``, the re-run (main: the JSON trace had no bill); for ``--nodeclaim``, the
    misalignments naming it. The text says the verdict under the overlays."""
    import jsonschema

    from karpy.schemas import schema

    path = tmp_path / "billing.yaml"
    path.write_text(SP_M8I)
    args = ("explain", example, str(path), "--prices", "2026-07-20", "--until", "24h")
    out = _cli(*args, "-o", "json")
    assert out.exit_code == 0, out.output
    trace = json.loads(out.stdout)
    full = schema()
    jsonschema.validate(trace["cost"]["billed"], {"$schema": full["$schema"], "$defs": full["$defs"],
                                                  "$ref": "#/$defs/BilledCost"})
    assert trace["cost"]["billed"]["modelled"] is True and trace["cost"]["billed"]["profile"] == "sp-m8i"
    assert trace["billing_alignment"]["verified"] is True
    assert trace["billing_alignment"]["after"]["launched"] == {"m8i.2xlarge on-demand": 1}
    name = next(iter(trace["nodeclaims"]))
    one = json.loads(_cli(*args, "-o", "json", "--nodeclaim", name).stdout)
    assert [m["kind"] for m in one["cost"]["billed"]["misalignments"]] == ["cheaper-on-bill"]
    assert one["billing_alignment"]["verified"] is True
    text = _cli(*args)
    assert "  verified by re-running with them (NodeOverlay gate on): launches 1 x m8i.2xlarge" in text.stdout
    pod = json.loads(_cli(*args, "-o", "json", "--pod", next(iter(json.loads(
        _cli("simulate", example, "--prices", "2026-07-20", "-o", "json").stdout)["pods"]))).stdout)
    assert "cost" not in pod  # as the text: a pod's explanation has no bill
