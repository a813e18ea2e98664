"""Reserved capacity in Solve: the reservation manager, strict reserved mode, ReservedOfferingError.

Ports of pkg/controllers/provisioning/scheduling/suite_test.go Describe("Reserved Instance Types")
(S:4676-5195) on Karpenter's fake provider, plus reservationmanager.go unit behaviour. The
BeforeEach: large (6 cpu), medium (3 cpu), small (2 cpu); medium and small each get one reserved
offering in test-zone-1 with capacity 1, id ``r-<type>``, price = PriceFromResources / 100 000.
"""

from __future__ import annotations

import pytest

from karpy.api.builders import make_nodepool, make_pod, pod_affinity_term
from karpy.cloudprovider import fake
from karpy.cloudprovider.types import Offering
from karpy.options import FeatureGates, Options
from karpy.provisioning.reservationmanager import ReservationManager
from tests.provisioning.harness import Harness
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

RID = fake.LABEL_RESERVATION_ID
CT = "karpenter.sh/capacity-type"
IT = "node.kubernetes.io/instance-type"
NP = "karpenter.sh/nodepool"
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
CT_REQ = (CT, "In", ["spot", "on-demand", "reserved"])
GI = "Gi"


def reserved_offering(it_capacity, rid: str, capacity: int = 1) -> Offering:
    return Offering(Requirements(Requirement(CT, "In", ("reserved",)), Requirement(ZONE, "In", ("test-zone-1",)),
                                 Requirement(RID, "In", (rid,))),
                    fake.price_from_resources(it_capacity) / 100_000.0, available=True,
                    reservation_capacity=capacity, reservation_id_label=RID)


def its(name: str, cpu: str, *reservations: tuple[str, int]):
    base = fake.new_instance_type(name, resources={"cpu": cpu, "memory": cpu + GI})
    extra = [reserved_offering(base.capacity, rid, cap) for rid, cap in reservations]
    return fake.new_instance_type(name, resources={"cpu": cpu, "memory": cpu + GI},
                                  offerings=[*base.offerings, *extra]) if extra else base


def catalogue(small_extra: tuple[tuple[str, int], ...] = ()):
    """The Describe's BeforeEach catalogue (small may get more reservations)."""
    return [its("large-instance-type", "6"), its("medium-instance-type", "3", ("r-medium-instance-type", 1)),
            its("small-instance-type", "2", ("r-small-instance-type", 1), *small_extra)]


def pool(name="default", **kw):
    return make_nodepool(name, requirements=[CT_REQ], **kw)


def anti(**kw):
    return make_pod(kw.pop("name"), labels={"app": "test"}, pod_anti_affinity=[pod_affinity_term({"app": "test"}, HOST)],
                    **kw)


def unbound(h, pods):
    return [p for p in pods if h.node_of(p) is None]


def bound_nodes(res, h, pods):
    return [h.node_of(p) for p in pods if p.key in res.placements]


def test_no_fallback_while_compatible_reserved_offerings_are_available():
    # upstream: S:4715 "shouldn't fallback to on-demand or spot when compatible reserved offerings are available"
    h = Harness([pool()], catalogue())
    pods = [make_pod(f"p{i}", requests={"cpu": "1800m"}) for i in range(3)]
    res = h.provision(*pods)
    [node] = bound_nodes(res, h, pods)
    labels = node.metadata.labels
    assert (labels[RID], labels[CT], labels[IT]) == ("r-small-instance-type", "reserved", "small-instance-type")
    pods = unbound(h, pods)
    res = h.provision(*pods)
    [node] = bound_nodes(res, h, pods)
    labels = node.metadata.labels
    assert (labels[RID], labels[CT], labels[IT]) == ("r-medium-instance-type", "reserved", "medium-instance-type")
    pods = unbound(h, pods)
    res = h.provision(*pods)
    [node] = bound_nodes(res, h, pods)
    labels = node.metadata.labels
    assert RID not in labels and labels[CT] != "reserved" and labels[IT] == "small-instance-type"


def test_reservations_shared_across_nodepools():
    # upstream: S:4776 "should correctly track reservations shared across nodepools"
    h = Harness([pool("np-1"), pool("np-2")], catalogue())
    pods = [anti(name=f"p{i}", node_requirements=[(IT, "In", ["small-instance-type"]), (NP, "In", [f"np-{i + 1}"])])
            for i in range(2)]
    res = h.provision(*pods)
    [node] = bound_nodes(res, h, pods)
    assert (node.metadata.labels[RID], node.metadata.labels[CT]) == ("r-small-instance-type", "reserved")
    left = unbound(h, pods)
    assert res.results.reserved_offering_errors().keys() == {left[0].key}
    res = h.provision(*left)
    [node] = bound_nodes(res, h, left)
    assert RID not in node.metadata.labels and node.metadata.labels[CT] != "reserved"
    assert node.metadata.labels[IT] == "small-instance-type"


def test_distinct_reservations_for_the_same_instance_pool_in_two_nodepools():
    # upstream: S:4834 "should correctly track reservations for multiple nodepools with distinct reservations for the same instance pool"
    cp = fake.FakeCloudProvider(catalogue())
    cp.instance_types_for_nodepool["np-2"] = [its("small-instance-type", "2", ("r-distinct", 1))]
    h = Harness([pool("np-1"), pool("np-2")], cloud_provider=cp)
    pods = [anti(name=f"p{i}", node_requirements=[(IT, "In", ["small-instance-type"]), (NP, "In", [f"np-{i + 1}"])])
            for i in range(2)]
    res = h.provision(*pods)
    nodes = bound_nodes(res, h, pods)
    assert len(nodes) == 2
    assert all(n.metadata.labels[CT] == "reserved" and n.metadata.labels[IT] == "small-instance-type" for n in nodes)
    assert nodes[0].metadata.labels[RID] != nodes[1].metadata.labels[RID]


def test_multiple_reservations_for_the_same_instance_pool():
    # upstream: S:4906 "should correctly track multiple reservations for the same instance pool"
    h = Harness([pool()], catalogue(small_extra=(("r-small-instance-type-2", 2),)))
    pods = [anti(name=f"p{i}", node_requirements=[(IT, "In", ["small-instance-type"])]) for i in range(4)]
    res = h.provision(*pods)
    nodes = bound_nodes(res, h, pods)
    assert len(nodes) == 2 and all(n.metadata.labels[CT] == "reserved" and RID in n.metadata.labels for n in nodes)
    pods = unbound(h, pods)
    res = h.provision(*pods)
    [node] = bound_nodes(res, h, pods)
    assert node.metadata.labels[CT] == "reserved" and RID in node.metadata.labels
    pods = unbound(h, pods)
    res = h.provision(*pods)
    [node] = bound_nodes(res, h, pods)
    assert RID not in node.metadata.labels and node.metadata.labels[CT] != "reserved"
    assert node.metadata.labels[IT] == "small-instance-type"


def test_no_fallback_to_a_lower_weight_nodepool_while_a_reservation_is_available():
    # upstream: S:4976 "shouldn't fallback to a lower weight NodePool if a reserved offering is available"
    cp = fake.FakeCloudProvider(catalogue())
    cp.instance_types_for_nodepool["np-fallback"] = [its("small-instance-type", "2", ("r-fallback", 1))]
    h = Harness([pool("np-primary", weight=100), pool("np-fallback", weight=50)], cloud_provider=cp)
    pods = [anti(name=f"p{i}", node_requirements=[(IT, "In", ["small-instance-type"])]) for i in range(2)]
    res = h.provision(*pods)
    [node] = bound_nodes(res, h, pods)
    assert node.metadata.labels[CT] == "reserved" and node.metadata.labels[NP] == "np-primary"
    pods = unbound(h, pods)
    res = h.provision(*pods)
    [node] = bound_nodes(res, h, pods)
    assert RID not in node.metadata.labels and node.metadata.labels[CT] != "reserved"
    assert node.metadata.labels[NP] == "np-primary"


def test_preferences_are_not_relaxed_on_a_reserved_offering_error():
    # upstream: S:5059 "shouldn't relax preferences when a pod fails to schedule due to a reserved offering error"
    h = Harness([pool("np-1"), pool("np-2")], catalogue())
    pods = [anti(name=f"p{i}", node_preferences=[(NP, "In", ["np-1"])],
                 node_requirements=[(IT, "In", ["small-instance-type"])]) for i in range(2)]
    res = h.provision(*pods)
    [node] = bound_nodes(res, h, pods)
    assert node.metadata.labels[CT] == "reserved" and node.metadata.labels[NP] == "np-1"
    pods = unbound(h, pods)
    res = h.provision(*pods)
    [node] = bound_nodes(res, h, pods)
    assert RID not in node.metadata.labels and node.metadata.labels[NP] == "np-1"


def test_multiple_pods_on_one_reserved_node():
    # upstream: S:5142 "should handle multiple pods on reserved nodes"
    h = Harness([pool("np-1")], catalogue())
    reqs = [(IT, "In", ["small-instance-type"]), (NP, "In", ["np-1"]), (CT, "In", ["reserved"]),
            (ZONE, "In", ["test-zone-1"])]
    pods = [make_pod(f"p{i}", labels={"app": "test"}, node_requirements=reqs,
                     pod_affinity=[pod_affinity_term({"app": "test"}, ZONE)]) for i in range(2)]
    res = h.provision(*pods)
    nodes = bound_nodes(res, h, pods)
    assert len(nodes) == 2 and nodes[0].metadata.name == nodes[1].metadata.name
    assert nodes[0].metadata.labels[RID] == "r-small-instance-type"


def test_nodeclaim_requirements_pin_the_reservation_ids():
    # upstream: nodeclaim.go FinalizeScheduling: capacity-type In [reserved] and reservation-id In [held ids]
    h = Harness([pool()], catalogue())
    res = h.provision(make_pod("p", requests={"cpu": "1800m"}))
    [model] = res.requested
    by_key = {r.key: r for r in model.spec.requirements}
    assert by_key[CT].values == ["reserved"]
    assert sorted(by_key[RID].values) == ["r-medium-instance-type", "r-small-instance-type"]


def test_reserved_capacity_feature_gate_off_falls_back():
    # upstream: nodeclaim.go offeringsToReserve returns nothing when FeatureGates.ReservedCapacity is false
    h = Harness([pool()], catalogue())
    h.provisioner.options = Options(feature_gates=FeatureGates(reserved_capacity=False))
    pods = [make_pod(f"p{i}", requests={"cpu": "1800m"}) for i in range(3)]
    res = h.provision(*pods)
    assert len(res.placements) == 3 and res.results.reserved_offering_errors() == {}


def test_reservation_manager_units():
    # upstream: reservationmanager.go NewReservationManager (least capacity per id), CanReserve/Reserve
    # idempotent per hostname, Release gives the unit back, over-reserving panics
    a = its("small-instance-type", "2", ("r-1", 2))
    b = its("small-instance-type", "2", ("r-1", 1))
    rm = ReservationManager({"np-1": [a], "np-2": [b]})
    o = next(o for o in a.offerings if o.capacity_type == "reserved")
    assert rm.remaining_capacity(o) == 1
    assert rm.can_reserve("h1", o)
    rm.reserve("h1", [o])
    rm.reserve("h1", [o])
    assert rm.remaining_capacity(o) == 0 and rm.has_reservation("h1", o)
    assert rm.can_reserve("h1", o) and not rm.can_reserve("h2", o)
    with pytest.raises(RuntimeError, match="over-reserve"):
        rm.reserve("h2", [o])
    rm.release("h1", [o])
    assert rm.remaining_capacity(o) == 0  # h2's failed reserve already took the last unit (upstream panics first)
