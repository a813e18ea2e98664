"""The EC2NodeClass's capacity reservations, resolved against the mocked EC2.

Ports of pkg/controllers/nodeclass/capacityreservation_test.go Describe("NodeClass Capacity
Reservation Reconciler") and pkg/providers/capacityreservation/suite_test.go Describe("Capacity
Reservation Provider") on karpy's AWS provider (us-east-1; upstream's test-zone-1a/1b are
us-east-1a/1b). The reconciler's status-condition count case ("should update status condition on
nodeClass as Ready") is not ported: karpy does not model EC2NodeClass status conditions.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import botocore.session
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reservation_helpers import (  # noqa: E402
    CAPACITY_BLOCK_TAGS,
    DISCOVERY_TAGS,
    INTERRUPTIBLE_TAGS,
    SELF_OWNER,
    cr,
    provider,
    reconciler_reservations,
    status_ids,
)

from awsprovider.capacityreservation import ResolvedCapacityReservation  # noqa: E402
from karpy.sim.clock import VirtualClock  # noqa: E402

HOUR = 3600.0


def _states() -> list[str]:
    model = botocore.session.get_session().get_service_model("ec2")
    return list(model.shape_for("CapacityReservationState").enum)


@pytest.fixture
def reconcile() -> Iterator[Any]:
    made: list[Any] = []

    def run(*terms: dict[str, Any], reservations: Any = None, clock: VirtualClock | None = None) -> Any:
        p = provider(terms, reconciler_reservations() if reservations is None else reservations, clock=clock)
        made.append(p)
        return p

    yield run
    for p in made:
        p.close()


def test_nil_interruptible(reconcile: Any) -> None:
    # upstream: capacityreservation_test.go "should handle capacity reservations with nil Interruptible field"
    p = reconcile({"id": "cr-nil-interruptible"})
    [r] = p.resolve_nodeclass("default").capacity_reservations
    assert (r.id, r.interruptible) == ("cr-nil-interruptible", False)


def test_resolve_by_id(reconcile: Any) -> None:
    # upstream: capacityreservation_test.go "should resolve capacity reservations by ID"
    p = reconcile({"id": "cr-m5.large-1a-1"})
    assert p.resolve_nodeclass("default").capacity_reservations == (ResolvedCapacityReservation(
        id="cr-m5.large-1a-1", instance_type="m5.large", availability_zone="us-east-1a", owner_id=SELF_OWNER,
        instance_match_criteria="targeted", reservation_type="default", state="active", end_time=None),)


def test_resolve_by_tags(reconcile: Any) -> None:
    # upstream: capacityreservation_test.go "should resolve capacity reservations by tags"
    assert status_ids(reconcile({"tags": DISCOVERY_TAGS})) == ["cr-m5.large-1a-2", "cr-m5.large-1b-2"]


def test_resolve_by_tags_and_owner(reconcile: Any) -> None:
    # upstream: capacityreservation_test.go "should resolve capacity reservations by tags + owner"
    assert status_ids(reconcile({"tags": DISCOVERY_TAGS, "ownerID": SELF_OWNER})) == ["cr-m5.large-1a-2"]


def test_resolve_by_instance_match_criteria_open(reconcile: Any) -> None:
    # upstream: capacityreservation_test.go "should resolve capacity reservations by instance match criteria 'open'"
    p = reconcile({"instanceMatchCriteria": "open"})
    assert status_ids(p) == ["cr-i-m5.large-1a-1", "cr-m5.large-1a-3"]
    assert {r.instance_match_criteria for r in p.resolve_nodeclass("default").capacity_reservations} == {"open"}


def test_resolve_by_instance_match_criteria_targeted(reconcile: Any) -> None:
    # upstream: capacityreservation_test.go "should resolve capacity reservations by instance match criteria 'targeted'"
    p = reconcile({"instanceMatchCriteria": "targeted"})
    assert status_ids(p) == ["cr-m5.large-1a-1", "cr-m5.large-1a-2", "cr-m5.large-1b-1", "cr-m5.large-1b-2",
                             "cr-nil-interruptible", "cr-p5.48xlarge-1a"]
    assert {r.instance_match_criteria for r in p.resolve_nodeclass("default").capacity_reservations} == {"targeted"}


def test_resolve_by_instance_match_criteria_with_tags(reconcile: Any) -> None:
    # upstream: capacityreservation_test.go "should resolve capacity reservations by instance match criteria with tags"
    assert status_ids(reconcile({"instanceMatchCriteria": "targeted", "tags": DISCOVERY_TAGS})) == [
        "cr-m5.large-1a-2", "cr-m5.large-1b-2"]


def test_resolve_by_instance_match_criteria_with_tags_and_owner(reconcile: Any) -> None:
    # upstream: capacityreservation_test.go "should resolve capacity reservations by instance match criteria with tags and owner"
    p = reconcile({"instanceMatchCriteria": "targeted", "tags": DISCOVERY_TAGS, "ownerID": SELF_OWNER})
    [r] = p.resolve_nodeclass("default").capacity_reservations
    assert (r.id, r.instance_match_criteria, r.owner_id) == ("cr-m5.large-1a-2", "targeted", SELF_OWNER)


def test_exclude_expired(reconcile: Any) -> None:
    # upstream: capacityreservation_test.go "should exclude expired capacity reservations"
    clock = VirtualClock()
    rs = reconciler_reservations()
    rs[0].end_date = HOUR
    p = reconcile({"id": "cr-m5.large-1a-1"}, reservations=rs, clock=clock)
    assert status_ids(p) == ["cr-m5.large-1a-1"]
    clock.advance(2 * HOUR)
    assert status_ids(p) == []


@pytest.mark.parametrize("state", [s for s in _states() if s != "active"])
def test_exclude_non_active(reconcile: Any, state: str) -> None:
    # upstream: capacityreservation_test.go DescribeTable "should exclude non-active capacity reservations"
    rs = reconciler_reservations()
    rs[0].state = state
    assert status_ids(reconcile({"id": "cr-m5.large-1a-1"}, reservations=rs)) == []


def test_discover_capacity_blocks(reconcile: Any) -> None:
    # upstream: capacityreservation_test.go "should discover capacity block reservations"
    [r] = reconcile({"tags": CAPACITY_BLOCK_TAGS}).resolve_nodeclass("default").capacity_reservations
    assert (r.id, r.reservation_type, r.state) == ("cr-p5.48xlarge-1a", "capacity-block", "active")


def test_capacity_blocks_expire_40_minutes_before_their_end(reconcile: Any) -> None:
    # upstream: capacityreservation_test.go "should mark capacity blocks as expiring 40 minutes prior to their endDate"
    rs = reconciler_reservations()
    for r in rs:
        if r.reservation_type == "capacity-block":
            r.end_date = 40 * 60.0
    [r] = reconcile({"tags": CAPACITY_BLOCK_TAGS}, reservations=rs).resolve_nodeclass("default").capacity_reservations
    assert (r.id, r.reservation_type, r.state) == ("cr-p5.48xlarge-1a", "capacity-block", "expiring")


def test_default_reservations_do_not_expire_early(reconcile: Any) -> None:
    # upstream: capacityreservation_test.go "shouldn't mark default capacity reservations as expiring 40 minutes prior to their endDate"
    rs = reconciler_reservations()
    for r in rs:
        r.end_date = 40 * 60.0
    found = reconcile({"tags": DISCOVERY_TAGS}, reservations=rs).resolve_nodeclass("default").capacity_reservations
    assert len(found) == 2
    assert {(r.reservation_type, r.state) for r in found} == {("default", "active")}


def test_discover_interruptible(reconcile: Any) -> None:
    # upstream: capacityreservation_test.go "should discover interruptible reservations"
    [r] = reconcile({"tags": INTERRUPTIBLE_TAGS}).resolve_nodeclass("default").capacity_reservations
    assert (r.id, r.interruptible, r.state) == ("cr-i-m5.large-1a-1", True, "active")


def test_gate_off_resolves_no_reservations(reconcile: Any) -> None:
    # upstream: nodeclass/controller.go skips the CapacityReservation reconciler without the ReservedCapacity gate
    p = provider([{"tags": DISCOVERY_TAGS}], reconciler_reservations(), gate=False)
    try:
        assert status_ids(p) == []
    finally:
        p.close()


def test_unknown_id_resolves_none(reconcile: Any) -> None:
    # provider.go List: an id query answered NotFound yields no reservation (not an error)
    assert status_ids(reconcile({"id": "cr-0123456789"})) == []


def test_reservations_are_relisted_after_a_minute(reconcile: Any) -> None:
    # provider.go List caches a query for DefaultTTL (1 min); the nodeclass controller requeues every minute
    clock = VirtualClock()
    p = reconcile({"tags": DISCOVERY_TAGS}, clock=clock)
    assert status_ids(p) == ["cr-m5.large-1a-2", "cr-m5.large-1b-2"]
    p.ec2.reservations.add(cr("cr-new", tags=DISCOVERY_TAGS))
    clock.advance(59)
    assert status_ids(p) == ["cr-m5.large-1a-2", "cr-m5.large-1b-2"]
    clock.advance(1)
    assert status_ids(p) == ["cr-m5.large-1a-2", "cr-m5.large-1b-2", "cr-new"]


# -- pkg/providers/capacityreservation/suite_test.go Context("Availability Cache") ----------------
def _two() -> list[Any]:
    return [cr("cr-m5.large-1a-1", available=10, tags=DISCOVERY_TAGS),
            cr("cr-m5.large-1a-2", available=15, tags=DISCOVERY_TAGS)]


def test_list_syncs_the_availability_cache(reconcile: Any) -> None:
    # upstream: capacityreservation/suite_test.go "should sync availability cache when listing reservations"
    p = reconcile(reservations=_two())
    listed = p.capacity_reservations.list([_term(tags=DISCOVERY_TAGS)])
    assert len(listed) == 2
    assert p.capacity_reservations.get_available_instance_count("cr-m5.large-1a-1") == 10
    assert p.capacity_reservations.get_available_instance_count("cr-m5.large-1a-2") == 15


def test_mark_launched_decrements(reconcile: Any) -> None:
    # upstream: capacityreservation/suite_test.go "should decrement availability when reservation is marked as launched"
    cache = reconcile(reservations=[]).capacity_reservations
    cache.set_available_instance_count("cr-test", 5)
    cache.mark_launched("cr-test-2")
    assert cache.get_available_instance_count("cr-test") == 5
    cache.mark_launched("cr-test")
    assert cache.get_available_instance_count("cr-test") == 4


def test_mark_terminated_increments(reconcile: Any) -> None:
    # upstream: capacityreservation/suite_test.go "should increment availability when reservation is marked as terminated"
    cache = reconcile(reservations=[]).capacity_reservations
    cache.set_available_instance_count("cr-test", 5)
    cache.mark_terminated("cr-test-2")
    assert cache.get_available_instance_count("cr-test") == 5
    cache.mark_terminated("cr-test")
    assert cache.get_available_instance_count("cr-test") == 6


def _term(**kw: Any) -> Any:
    from awsprovider.apis.ec2nodeclass import CapacityReservationSelectorTerm

    return CapacityReservationSelectorTerm.model_validate(kw)


def test_a_dumped_status_reservation_missing_from_ec2_is_said() -> None:
    # karpy reads reservations from the mocked EC2 (a Network defines them), never from a dumped
    # status (no instance counts): an entry the selector does not find is a warning, not silence
    import karpy

    text = """
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: prod}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: prod}}]
  capacityReservationSelectorTerms: [{id: cr-0123456789abcdef0}]
status:
  capacityReservations:
  - {id: cr-0123456789abcdef0, availabilityZone: us-east-1a, instanceType: m7i.large, ownerID: "012345678901",
     instanceMatchCriteria: targeted, reservationType: default, state: active}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]}
"""
    result = karpy.simulate(text, prices="2026-07-20")
    assert any("status.capacityReservations cr-0123456789abcdef0 are not in the mocked EC2" in w for w in result.warnings)
    assert all(c["capacity_type"] != "reserved" for c in result.to_document()["nodeclaims"])
