"""Reserved capacity over time on real data (issue #12): us-east-1, the 2026-07-20 price table,
the AWS provider on moto. The JSON documents are checked against the schema by conftest.

* an ODCR ends (its ``endDate``, or a Scenario ``cancel_reservation``): its nodes are relabelled
  on-demand at the capacity-type controller's next minute tick and cost the on-demand price from
  then on; the reservation is billed at the on-demand rate for its active period, used or not;
* a capacity block ends: its NodeClaims are drained 40 minutes ahead and the pods replaced on
  on-demand capacity; the block's up-front fee is in the bill.
"""

from __future__ import annotations

import pytest

import karpy
from karpy.api.loader import ManifestError
from karpy.api.scenario import parse_event_line
from tests.awsprovider.test_provisioning_paths_scenarios import RESERVED_NETWORK

RID = "cr-0a1b2c3d4e5f60001"
M7I_XLARGE = 0.2016  # us-east-1 on-demand $/h, 2026-07-20 table
M7I_2XLARGE = 0.4032


def scenario(until: str, *events: str) -> str:
    body = "".join(f"\n  - {e}" for e in events)
    return f"""---
apiVersion: karpy.io/v1alpha1
kind: Scenario
metadata: {{name: reservation-ends}}
spec:
  until: {until}
  events:{body if events else " []"}
"""


def relabelled(doc: dict) -> list[tuple[float, str]]:
    return [(e["t"], e["object"]) for e in doc["timeline"] if e["kind"] == "nodeclaim.relabelled"]


def test_an_odcr_ending_turns_its_nodes_on_demand_and_the_cost_follows_on_real_prices():
    text = RESERVED_NETWORK.replace("tags: {team: web}}", "tags: {team: web}, endDate: '2026-01-01T02:00:00Z'}", 1)
    # the demotion and its cost alone: consolidation would then replace the on-demand nodes
    result = karpy.simulate(text + scenario("3h"), prices="2026-07-20", disruption=False)
    doc = result.to_document()
    assert result.exit_code == 0
    reserved_names = {e["object"].split("/", 1)[1] for e in doc["timeline"] if e["kind"] == "nodeclaim.launched"
                      and e["detail"]["capacity_type"] == "reserved"}
    assert len(reserved_names) == 3
    # the capacity-type controller demotes all three at its first tick at or after the end
    assert relabelled(doc) == [(7200.0, f"NodeClaim/{n}") for n in sorted(reserved_names, key=lambda n: [
        c["name"] for c in doc["nodeclaims"]].index(n))]
    for c in doc["nodeclaims"]:
        assert c["capacity_type"] == "on-demand"
        assert "karpenter.k8s.aws/capacity-reservation-id" not in c["labels"]
    for name in reserved_names:
        assert result.simulation.nodes[name].metadata.labels["karpenter.sh/capacity-type"] == "on-demand"
        assert doc["cost"]["by_nodeclaim"][name]["price"] == pytest.approx(M7I_XLARGE)
        # reserved for 2 h at on-demand / 10^7, then 1 h on-demand
        assert doc["cost"]["by_nodeclaim"][name]["dollars"] == pytest.approx(M7I_XLARGE, abs=1e-5)
    # the $/h steps up by the three demoted nodes' on-demand price when the reservation ends
    assert doc["cost"]["per_hour"] == [[0.0, 0.0], [11.0, M7I_2XLARGE], [7200.0, pytest.approx(M7I_2XLARGE + 3 * M7I_XLARGE)]]
    assert doc["cost_per_hour"] == pytest.approx(M7I_2XLARGE + 3 * M7I_XLARGE)
    assert doc["cost"]["node_hours"]["by_capacity_type"]["reserved"] == pytest.approx(3 * (7200 - 1) / 3600)
    # EC2 bills the 4-instance ODCR at the on-demand rate for its 2 active hours; one instance was
    # held from the start outside the run (availableCount 3), three ran in it: almost nothing unused
    bill = doc["cost"]["capacity_reservations"]
    row = bill["by_reservation"][RID]
    assert (row["billing"], row["billed_from"], row["billed_to"], row["instance_count"]) == ("on-demand-rate", 0.0, 7200.0, 4)
    assert row["dollars"] == pytest.approx(4 * M7I_XLARGE * 2) == bill["total"]
    assert row["unused_instance_hours"] == pytest.approx(3 / 3600, abs=1e-6)
    assert row["modelled"] is False
    assert doc["cost"]["total_with_reservations"] == pytest.approx(doc["cost"]["total"] + bill["total"], abs=1e-6)


def test_a_cancelled_reservation_demotes_its_nodes_at_the_next_tick_on_real_prices():
    result = karpy.simulate(RESERVED_NETWORK + scenario("2h", f"{{at: 1h, cancel_reservation: {{id: {RID}}}}}"),
                            prices="2026-07-20")
    doc = result.to_document()
    assert [(e["t"], e["kind"]) for e in doc["timeline"] if e["kind"].startswith("capacityreservation.")] == [
        (3600.0, "capacityreservation.cancelled")]
    assert [t for t, _ in relabelled(doc)] == [3600.0] * 3
    row = doc["cost"]["capacity_reservations"]["by_reservation"][RID]
    assert (row["billed_to"], row["dollars"]) == (3600.0, pytest.approx(4 * M7I_XLARGE))
    # the same run without the cancellation keeps the nodes reserved and pays for 2 h of the ODCR
    kept = karpy.simulate(RESERVED_NETWORK + scenario("2h"), prices="2026-07-20").to_document()
    assert relabelled(kept) == []
    assert kept["cost"]["capacity_reservations"]["total"] == pytest.approx(8 * M7I_XLARGE)
    assert doc["cost"]["total"] > kept["cost"]["total"]


def test_a_capacity_block_ending_drains_its_nodes_ahead_and_replaces_them_on_real_prices():
    text = RESERVED_NETWORK.replace(
        "instanceCount: 4, availableCount: 3,\n     instanceMatchCriteria: targeted,",
        "instanceCount: 2, reservationType: capacity-block, upfrontFee: 25.0,\n"
        "     startDate: '2026-01-01T00:00:00Z', endDate: '2026-01-01T02:00:00Z', instanceMatchCriteria: targeted,"
    ).replace("replicas: 5", "replicas: 2")
    result = karpy.simulate(text + scenario("3h"), prices="2026-07-20")
    doc = result.to_document()
    assert result.exit_code == 0
    blocks = [c for c in doc["nodeclaims"] if c["capacity_type"] == "reserved"]
    assert len(blocks) == 2
    for c in blocks:  # 40 minutes before the block's end (upstream's capacityReservationExpirationPeriod)
        assert (c["deleted_at"] is not None, c["deleted_by"]) == (True, "capacity-block-expiration")
        assert [e["t"] for e in doc["timeline"] if e["kind"] == "nodeclaim.deleting"
                and e["object"] == f"NodeClaim/{c['name']}"] == [7200.0 - 2400.0]
    replacements = [c for c in doc["nodeclaims"] if c["created_at"] > 4800.0]
    assert replacements and {c["capacity_type"] for c in replacements} == {"on-demand"}
    assert sum(len(c["pods"]) for c in replacements) == 2
    row = doc["cost"]["capacity_reservations"]["by_reservation"][RID]
    assert (row["billing"], row["dollars"], row["modelled"], row["billed_hours"]) == ("upfront", 25.0, False, 2.0)
    # the block's last 40 minutes (and what was launched late) went unused
    assert row["unused_dollars"] == pytest.approx(25.0 * row["unused_instance_hours"] / 4.0)
    assert row["unused_instance_hours"] == pytest.approx(2 * (7200 - 4835 + 1) / 3600, abs=1e-3)


def test_cancel_reservation_events_are_checked_before_the_run():
    with pytest.raises(ManifestError, match=r"spec\.events\[0\]\.cancel_reservation\.id.*unknown capacity reservation"):
        karpy.simulate(RESERVED_NETWORK + scenario("2h", "{at: 1h, cancel_reservation: {id: cr-0000000000000beef}}"),
                       prices="2026-07-20")
    block = RESERVED_NETWORK.replace("instanceCount: 4, availableCount: 3,",
                                     "instanceCount: 1, reservationType: capacity-block, endDate: '2026-01-02T00:00:00Z',")
    with pytest.raises(ManifestError, match="Capacity Block, which EC2 cannot cancel"):
        karpy.simulate(block + scenario("2h", f"{{at: 1h, cancel_reservation: {{id: {RID}}}}}"), prices="2026-07-20")
    assert parse_event_line(f"90m cancel-reservation {RID}") == {"at": "90m", "cancel_reservation": {"id": RID}}
    with pytest.raises(ValueError, match="expected 'AT cancel-reservation ID'"):
        parse_event_line("90m cancel-reservation")


def test_an_interruptible_reservation_reclaimed_by_its_owner_interrupts_its_nodes_on_real_prices():
    # upstream: interruption/suite_test.go "should delete the NodeClaim when receiving a capacity
    # reservation interruption warning" and "should mark the capacity reservation as unavailable when
    # getting an interruption warning", driven by a Scenario event; EC2 terminates the instances two
    # minutes after the warning (EC2 User Guide, interruptible Capacity Reservations)
    text = RESERVED_NETWORK.replace("instanceMatchCriteria: targeted, tags: {team: web}}",
                                    "instanceMatchCriteria: targeted, interruptible: true, tags: {team: web}}", 1)
    result = karpy.simulate(text + scenario("2h", f"{{at: 1h, interrupt: {{capacity_reservation: {RID}}}}}"),
                            prices="2026-07-20")
    doc = result.to_document()
    interrupted = [c for c in doc["nodeclaims"] if c["deleted_by"] == "interruption"]
    assert len(interrupted) == 3
    assert all(c["labels"]["karpenter.k8s.aws/capacity-reservation-interruptible"] == "true" for c in interrupted)
    kinds = {(e["t"], e["detail"]["message"]) for e in doc["timeline"] if e["kind"] == "interruption"}
    assert kinds == {(3600.0, "capacity_reservation_interrupted")}
    assert all(c["deleted_at"] <= 3600.0 + 120.0 for c in interrupted)
    # the pods are replaced on on-demand capacity: the reservation is marked unavailable and shrunk
    replacements = [c for c in doc["nodeclaims"] if c["created_at"] > 3600.0]
    assert replacements and {c["capacity_type"] for c in replacements} == {"on-demand"}
    assert result.exit_code == 0


def test_interrupting_a_reservation_that_is_not_interruptible_is_a_bad_event():
    with pytest.raises(ManifestError, match=r"interrupt\.capacity_reservation: capacity reservation .* is not interruptible"):
        karpy.simulate(RESERVED_NETWORK + scenario("2h", f"{{at: 1h, interrupt: {{capacity_reservation: {RID}}}}}"),
                       prices="2026-07-20")
    assert parse_event_line(f"1h interrupt capacity_reservation={RID}") == {
        "at": "1h", "interrupt": {"capacity_reservation": RID}}
