"""Ports of the offline-applicable cases of the AWS provider's interruption suite
(aws/karpenter-provider-aws pkg/controllers/interruption/suite_test.go, Describe "InterruptionHandling",
Context "Processing Messages"). SQS polling, message parsing and metrics have no offline counterpart;
the handler's decisions are what is ported: which NodeClaims are deleted, what the ICE cache and the
capacity-reservation cache learn."""

from __future__ import annotations

from types import SimpleNamespace

from awsprovider.interruption import (KIND_CAPACITY_RESERVATION_INTERRUPTION, KIND_SCHEDULED_CHANGE,
                                      KIND_SPOT_INTERRUPTION, KIND_STATE_CHANGE, InterruptionController, Message)
from awsprovider.unavailableofferings import UnavailableOfferings
from karpy.sim.clock import VirtualClock


class Cluster:
    """The cluster side: NodeClaims that exist, and the ones deleted."""

    def __init__(self, clock):
        self.clock = clock
        self.deleted: list[tuple[str, str]] = []
        self.reclaims: list[tuple[str, float]] = []
        self.timeline: list[tuple[str, str, dict]] = []

    def delete_nodeclaim(self, name, reason):
        if any(n == name for n, _ in self.deleted):
            return False
        self.deleted.append((name, reason))
        return True

    def record(self, kind, obj, **detail):
        self.timeline.append((kind, obj, detail))

    def reclaim_at(self, name, t):
        self.reclaims.append((name, t))

    def now(self):
        return self.clock.now()


def nodeclaim(i, **labels):
    return SimpleNamespace(metadata=SimpleNamespace(name=f"nc-{i}", labels={"karpenter.sh/nodepool": "default",
                                                                             **labels}),
                           status=SimpleNamespace(provider_id=f"aws:///test-zone-1a/i-{i:017x}"))


def setup():
    clock = VirtualClock()
    ice = UnavailableOfferings(clock)
    return clock, ice, InterruptionController(ice), Cluster(clock)


def iid(nc):
    return nc.status.provider_id.rsplit("/", 1)[1]


def test_should_delete_the_nodeclaim_when_receiving_a_spot_interruption_warning():
    # upstream It: "should delete the NodeClaim when receiving a spot interruption warning"
    _, _, ctrl, cluster = setup()
    nc = nodeclaim(1)
    assert ctrl.handle_message(cluster, Message(KIND_SPOT_INTERRUPTION, (iid(nc),)), [nc])
    assert cluster.deleted == [("nc-1", "interruption")]
    assert cluster.reclaims == [("nc-1", 120.0)]  # EC2 reclaims two minutes after the warning


def test_should_delete_the_nodeclaim_when_receiving_a_capacity_reservation_interruption_warning():
    # upstream It: "should delete the NodeClaim when receiving a capacity reservation interruption warning"
    _, _, ctrl, cluster = setup()
    nc = nodeclaim(2, **{"karpenter.k8s.aws/capacity-reservation-id": "cr-56fac701cc1951b03",
                         "karpenter.k8s.aws/capacity-reservation-type": "default"})
    ctrl.handle_message(cluster, Message(KIND_CAPACITY_RESERVATION_INTERRUPTION, (iid(nc),)), [nc])
    assert cluster.deleted == [("nc-2", "interruption")]


def test_should_delete_the_nodeclaim_when_receiving_a_scheduled_change_message():
    # upstream It: "should delete the NodeClaim when receiving a scheduled change message"
    _, ice, ctrl, cluster = setup()
    nc = nodeclaim(3)
    ctrl.handle_message(cluster, Message(KIND_SCHEDULED_CHANGE, (iid(nc),)), [nc])
    assert cluster.deleted == [("nc-3", "interruption")]
    assert not ice.entries() and cluster.reclaims == []  # only a spot interruption marks the ICE cache


def test_should_delete_the_nodeclaim_when_receiving_a_state_change_message():
    # upstream It: "should delete the NodeClaim when receiving a state change message"
    _, _, ctrl, cluster = setup()
    claims = [nodeclaim(10 + i) for i in range(4)]
    for nc, state in zip(claims, ["terminated", "stopped", "stopping", "shutting-down"]):
        ctrl.handle_message(cluster, Message(KIND_STATE_CHANGE, (iid(nc),), state), claims)
    assert sorted(n for n, _ in cluster.deleted) == sorted(nc.metadata.name for nc in claims)
    kinds = sorted(h[0] for h in ctrl.handled)
    assert kinds == ["instance_stopped", "instance_stopped", "instance_terminated", "instance_terminated"]


def test_should_handle_multiple_messages_that_cause_nodeclaim_deletion():
    # upstream DescribeTable: "should handle multiple messages that cause nodeClaim deletion"
    # (Entry "with spot interruption messages", Entry "with capacity reservation interruption messages")
    for kind in (KIND_SPOT_INTERRUPTION, KIND_CAPACITY_RESERVATION_INTERRUPTION):
        _, _, ctrl, cluster = setup()
        claims = [nodeclaim(100 + i) for i in range(100)]
        for nc in claims:
            ctrl.handle_message(cluster, Message(kind, (iid(nc),)), claims)
        assert len(cluster.deleted) == 100


def test_should_delete_a_state_change_message_when_the_state_isnt_in_accepted_states():
    # upstream It: "should delete a state change message when the state isn't in accepted states"
    _, _, ctrl, cluster = setup()
    nc = nodeclaim(4)
    assert not ctrl.handle_message(cluster, Message(KIND_STATE_CHANGE, (iid(nc),), "creating"), [nc])
    assert cluster.deleted == []  # ExpectExists(nodeClaim)


def test_should_mark_the_ice_cache_for_the_offering_when_getting_a_spot_interruption_warning():
    # upstream It: "should mark the ICE cache for the offering when getting a spot interruption warning"
    clock, ice, ctrl, cluster = setup()
    nc = nodeclaim(5, **{"topology.kubernetes.io/zone": "coretest-zone-1a",
                         "node.kubernetes.io/instance-type": "t3.large", "karpenter.sh/capacity-type": "spot"})
    ctrl.handle_message(cluster, Message(KIND_SPOT_INTERRUPTION, (iid(nc),)), [nc])
    assert cluster.deleted == [("nc-5", "interruption")]
    assert ice.is_unavailable("t3.large", "coretest-zone-1a", [], "spot")
    assert not ice.is_unavailable("t3.large", "coretest-zone-1a", [], "on-demand")
    clock.advance(181)  # the cache's 3-minute TTL
    assert not ice.is_unavailable("t3.large", "coretest-zone-1a", [], "spot")


def test_should_mark_the_capacity_reservation_as_unavailable_when_getting_an_interruption_warning():
    # upstream It: "should mark the capacity reservation as unavailable when getting an interruption warning"
    _, _, ctrl, cluster = setup()
    nc = nodeclaim(6, **{"karpenter.k8s.aws/capacity-reservation-id": "cr-56fac701cc1951b03"})
    ctrl.handle_message(cluster, Message(KIND_CAPACITY_RESERVATION_INTERRUPTION, (iid(nc),)), [nc])
    assert ctrl.unavailable_reservations == {"cr-56fac701cc1951b03"}


def test_a_message_for_an_unknown_instance_deletes_nothing():
    # utils.go handleMessage: no NodeClaim with that instance ID -> nothing found, nothing deleted
    _, _, ctrl, cluster = setup()
    assert not ctrl.handle_message(cluster, Message(KIND_SPOT_INTERRUPTION, ("i-0000000000000dead",)), [nodeclaim(7)])
    assert cluster.deleted == []


def test_a_nodeclaim_already_deleting_is_not_deleted_twice():
    # utils.go deleteNodeClaim: a NodeClaim with a deletionTimestamp is left alone
    _, _, ctrl, cluster = setup()
    nc = nodeclaim(8)
    ctrl.handle_message(cluster, Message(KIND_SPOT_INTERRUPTION, (iid(nc),)), [nc])
    ctrl.handle_message(cluster, Message(KIND_SPOT_INTERRUPTION, (iid(nc),)), [nc])
    assert cluster.deleted == [("nc-8", "interruption")]


def test_a_capacity_reservation_interruption_zeroes_the_provider_availability_cache():
    # upstream It: "should mark the capacity reservation as unavailable when getting an interruption
    # warning" (SetAvailableInstanceCount 10 -> GetAvailableInstanceCount 0), on the AWS provider's
    # own capacity reservation provider; EC2 terminates the instance two minutes after the warning
    from tests.awsprovider.reservation_helpers import cr, provider

    p = provider([{"id": "cr-56fac701cc1951b03"}], [cr("cr-56fac701cc1951b03", interruptible=True)])
    try:
        p.capacity_reservations.set_available_instance_count("cr-56fac701cc1951b03", 10)
        nc = nodeclaim(8, **{"karpenter.k8s.aws/capacity-reservation-id": "cr-56fac701cc1951b03"})
        cluster = Cluster(p.clock)
        p.interruption.handle_message(cluster, Message(KIND_CAPACITY_RESERVATION_INTERRUPTION, (iid(nc),)), [nc])
        assert p.capacity_reservations.get_available_instance_count("cr-56fac701cc1951b03") == 0
        assert cluster.deleted == [("nc-8", "interruption")] and cluster.reclaims == [("nc-8", 120.0)]
    finally:
        p.close()
