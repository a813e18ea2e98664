"""Upstream's capacity-reservation controllers acting over virtual time (issue #12), on the AWS
provider against the mocked EC2, us-east-1 and the 2026-07-20 price table:

* pkg/controllers/capacityreservation/capacitytype (controller.go, suite_test.go): a reserved
  NodeClaim whose instance left its reservation (the ODCR expired or was cancelled) is demoted to
  on-demand, its reservation labels removed, on the NodeClaim and its Node;
* pkg/controllers/capacityreservation/expiration (controller.go, suite_test.go): the NodeClaims of a
  capacity block are deleted 40 minutes before the block ends; standard reservations never.

Each test runs karpy's real Simulation with the AWS provider the manifests build (the controllers
are the provider's, handed to the timeline through ``controllers(cluster)``).
"""

from __future__ import annotations

from typing import Any

import pytest

from awsprovider.cloudprovider import AWSCloudProvider
from awsprovider.controllers.capacitytype import CONTROLLER_NAME as CAPACITY_TYPE, CapacityTypeController
from awsprovider.controllers.expiration import DELETED_BY
from awsprovider.capacityreservation import CAPACITY_RESERVATION_EXPIRATION_PERIOD
from karpy.api.loader import load_manifests
from karpy.cloudprovider.registry import ProviderOptions
from karpy.sim.clock import VirtualClock
from karpy.sim.simulation import Simulation, SimulationOptions
from karpy.simulator import new_simulation
from tests.awsprovider.test_provisioning_paths_scenarios import RESERVED_NODECLASS as NODECLASS
from tests.manifests import nodepool_yaml

CT = "karpenter.sh/capacity-type"
RID = "karpenter.k8s.aws/capacity-reservation-id"
RTYPE = "karpenter.k8s.aws/capacity-reservation-type"


def network(*reservations: str) -> str:
    lines = "\n".join(f"  - {r}" for r in reservations)
    return f"""
apiVersion: karpy.io/v1alpha1
kind: Network
metadata: {{name: prod}}
spec:
  subnets:
  - {{zone: us-east-1a, tags: {{karpenter.sh/discovery: prod}}}}
  - {{zone: us-east-1b, tags: {{karpenter.sh/discovery: prod}}}}
  securityGroups:
  - {{tags: {{karpenter.sh/discovery: prod}}}}
  capacityReservations:
{lines}
---""" + NODECLASS + "---\n" + nodepool_yaml(
        "{key: karpenter.sh/capacity-type, operator: In, values: [reserved, on-demand]}",
        "{key: karpenter.k8s.aws/instance-family, operator: In, values: [m7i]}")


def pinned(name: str, instance_type: str, grace: int = 30) -> str:
    return f"""---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      terminationGracePeriodSeconds: {grace}
      nodeSelector: {{node.kubernetes.io/instance-type: {instance_type}}}
      containers: [{{name: app, image: nginx, resources: {{requests: {{cpu: "1", memory: 2Gi}}}}}}]
"""


ODCR = "{id: cr-0a1b2c3d4e5f60001, instanceType: m7i.xlarge, zone: us-east-1a, instanceCount: 2, " \
       "instanceMatchCriteria: targeted, tags: {team: web}, endDate: '2026-01-01T01:00:00Z'}"


def run(made: list[AWSCloudProvider], text: str, until: float, **options: Any) -> tuple[Simulation, AWSCloudProvider]:
    clock = VirtualClock()
    loaded = load_manifests(text, extra_kinds=AWSCloudProvider.EXTRA_KINDS)
    p = AWSCloudProvider.from_options(ProviderOptions(region="us-east-1", prices="2026-07-20", clock=clock,
                                                      manifests=loaded))
    made.append(p)
    # the capacity-type controllers alone, as their upstream suites run them (no consolidation moving the nodes)
    options.setdefault("disruption", False)
    sim = new_simulation(loaded, p, SimulationOptions(until=until, **options), clock=clock)
    sim.run()
    return sim, p


def launched(sim: Simulation) -> list[Any]:
    return [r for r in sim.launches if r.launched is not None]


def node_labels(sim: Simulation, name: str) -> dict[str, str]:
    node = sim.store.get("Node", name)
    assert node is not None
    return dict(node.metadata.labels or {})


# -- capacitytype/suite_test.go ----------------------------------------------------------------------

def test_demotes_nodeclaims_and_nodes_from_reserved_to_on_demand(made: list[AWSCloudProvider]) -> None:
    # upstream: capacitytype/suite_test.go "should demote nodeclaims and nodes from reserved to on-demand"
    text = network(ODCR) + pinned("web", "m7i.xlarge")
    sim, _ = run(made, text, until=1800)
    [rec] = launched(sim)
    # the backing instance is still under the capacity reservation: nothing is demoted
    for labels in (rec.launched.metadata.labels, node_labels(sim, rec.name)):
        assert (labels[CT], labels[RID], labels[RTYPE]) == ("reserved", "cr-0a1b2c3d4e5f60001", "default")

    sim, _ = run(made, text, until=7200)
    [rec] = launched(sim)
    # the reservation expired at 1h: the instance is no longer in it, so the NodeClaim and its Node
    # become on-demand and lose the reservation labels (at the controller's first minute tick)
    for labels in (rec.launched.metadata.labels, node_labels(sim, rec.name)):
        assert labels[CT] == "on-demand" and RID not in labels and RTYPE not in labels
    [entry] = [e for e in sim.timeline.entries if e.kind == "nodeclaim.relabelled"]
    assert entry.t == 3600.0
    assert (rec.capacity_type, rec.price) == ("on-demand", pytest.approx(0.2016))


def test_demotes_nodes_even_if_their_nodeclaim_was_demoted_previously(made: list[AWSCloudProvider]) -> None:
    # upstream: capacitytype/suite_test.go "should demote nodes from reserved to on-demand even if
    # their nodeclaim was demoted previously"
    sim, p = run(made, network(ODCR) + pinned("web", "m7i.xlarge"), until=1800)
    [rec] = launched(sim)
    p.ec2.client.cancel_capacity_reservation(CapacityReservationId="cr-0a1b2c3d4e5f60001")
    labels = dict(rec.launched.metadata.labels)
    labels[CT] = "on-demand"
    for key in (RID, RTYPE):
        labels.pop(key)
    rec.launched.metadata.labels = labels  # the NodeClaim was demoted before; its Node was not
    assert node_labels(sim, rec.name)[CT] == "reserved"
    [controller] = [c for c in p.controllers(sim) if c.name == CAPACITY_TYPE]
    controller.reconcile(sim.clock.now())
    node = node_labels(sim, rec.name)
    assert node[CT] == "on-demand" and RID not in node and RTYPE not in node


def test_leaves_spot_and_still_reserved_nodeclaims_alone(made: list[AWSCloudProvider]) -> None:
    # controller.go syncCapacityType: only a NodeClaim whose instance is on-demand now is synced
    sim, p = run(made, network(ODCR) + pinned("web", "m7i.xlarge"), until=1800)
    [rec] = launched(sim)
    ct = CapacityTypeController(sim, p.ec2.reservations.reservation_of, p.pricing.on_demand_price,
                                p.reserved_capacity_labels, p.ec2.reservations.next_transition)
    # still reserved: asks to run again when the reservation ends
    assert ct.reconcile(sim.clock.now()) == 3600.0
    assert rec.launched.metadata.labels[CT] == "reserved"
    rec.launched.metadata.labels = {**rec.launched.metadata.labels, CT: "spot"}
    p.ec2.client.cancel_capacity_reservation(CapacityReservationId="cr-0a1b2c3d4e5f60001")
    assert ct.reconcile(sim.clock.now()) is None
    assert rec.launched.metadata.labels[CT] == "spot"


# -- expiration/suite_test.go ------------------------------------------------------------------------

def block(rid: str, instance_type: str, end: str, extra: str = "") -> str:
    return (f"{{id: {rid}, instanceType: {instance_type}, zone: us-east-1a, instanceCount: 1, "
            f"reservationType: capacity-block, instanceMatchCriteria: targeted, tags: {{team: web}}, "
            f"startDate: '2026-01-01T00:00:00Z', endDate: '{end}'{extra}}}")


def test_deletes_nodeclaims_of_expiring_capacity_block_reservations(made: list[AWSCloudProvider]) -> None:
    # upstream: expiration/suite_test.go "should delete nodeclaims associated with expiring
    # capacity-block reservations" (one block ending 39 minutes after the check, one 60+ minutes)
    text = (network(block("cr-0000000000000e001", "m7i.xlarge", "2026-01-01T01:19:00Z"),
                    block("cr-0000000000000a001", "m7i.2xlarge", "2026-01-01T02:00:00Z"))
            + pinned("a", "m7i.xlarge") + pinned("b", "m7i.2xlarge"))
    sim, _ = run(made, text, until=2400)
    by_reservation = {r.launched.metadata.labels.get(RID): r for r in launched(sim) if r.capacity_type == "reserved"}
    expiring, active = by_reservation["cr-0000000000000e001"], by_reservation["cr-0000000000000a001"]
    assert CAPACITY_RESERVATION_EXPIRATION_PERIOD == 40 * 60.0
    # 4740 s (01:19) - 40 min = 2340 s, a controller tick
    assert (expiring.deleting_at, expiring.deleted_by) == (2340.0, DELETED_BY)
    assert active.deleting_at is None and not active.deleted
    # the pod is replaced elsewhere: the expiring block is no longer offered, so on-demand
    replacement = [r for r in launched(sim) if r.created_at > 2340.0]
    assert [(r.instance_type, r.capacity_type) for r in replacement] == [("m7i.xlarge", "on-demand")]


def test_does_not_delete_nodeclaims_of_standard_reservations_in_the_window(made: list[AWSCloudProvider]) -> None:
    # upstream: expiration/suite_test.go "should not delete nodeclaims associated with standard
    # capacity reservations within the capacity block expiration window"
    odcr = ("{id: cr-0000000000000d001, instanceType: m7i.xlarge, zone: us-east-1a, instanceCount: 1, "
            "instanceMatchCriteria: targeted, tags: {team: web}, endDate: '2026-01-01T01:19:00Z'}")
    interruptible = ("{id: cr-0000000000000d002, instanceType: m7i.2xlarge, zone: us-east-1a, instanceCount: 1, "
                     "instanceMatchCriteria: targeted, interruptible: true, tags: {team: web}, "
                     "endDate: '2026-01-01T01:19:00Z'}")
    sim, _ = run(made, network(odcr, interruptible) + pinned("a", "m7i.xlarge") + pinned("b", "m7i.2xlarge"),
                 until=2700)
    reserved = [r for r in launched(sim) if r.capacity_type == "reserved"]
    assert len(reserved) == 2
    assert all(r.deleting_at is None for r in reserved)


def test_ec2_terminates_a_capacity_block_instance_30_minutes_before_the_end_drained_or_not(
        made: list[AWSCloudProvider]) -> None:
    # a PDB blocks the drain: EC2 reclaims the block's instance at its end - 30 min anyway (EC2 User
    # Guide, "Monitor Capacity Blocks using EventBridge")
    text = (network(block("cr-0000000000000e002", "m7i.xlarge", "2026-01-01T01:19:00Z")) + pinned("a", "m7i.xlarge")
            + "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: a}\n"
              "spec: {minAvailable: 1, selector: {matchLabels: {app: a}}}\n")
    sim, _ = run(made, text, until=3600)
    [rec] = [r for r in launched(sim) if r.capacity_type == "reserved"]
    assert rec.deleting_at == 2340.0
    assert rec.deleted_at == 4740.0 - 1800.0
    assert [e.t for e in sim.timeline.entries if e.kind == "nodeclaim.reclaimed"] == [2940.0]
