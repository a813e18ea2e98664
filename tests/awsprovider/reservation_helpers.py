"""Shared set-up of the capacity reservation tests: upstream's reservations (zones test-zone-1a/1b
-> us-east-1a/1b) and an AWS provider whose default EC2NodeClass selects them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from awsprovider.apis.ec2nodeclass import CapacityReservationSelectorTerm
from awsprovider.cloudprovider import AWSCloudProvider
from awsprovider.ec2.capacityreservations import CapacityReservation
from awsprovider.nodeclass import default_nodeclass
from karpy.options import FeatureGates, Options
from karpy.sim.clock import VirtualClock

SELF_OWNER = "012345678901"
ALT_OWNER = "210987654321"
DISCOVERY_TAGS = {"karpenter.sh/discovery": "test"}
CAPACITY_BLOCK_TAGS = {"karpenter.sh/discovery": "capacity-block"}
INTERRUPTIBLE_TAGS = {"karpenter.sh/discovery": "interruptible"}


def cr(rid: str, instance_type: str = "m5.large", zone: str = "us-east-1a", available: int = 10,
       owner: str = SELF_OWNER, criteria: str = "targeted", rtype: str = "default", tags: Mapping[str, str] | None = None,
       end: float | None = None, interruptible: bool = False, state: str = "active") -> CapacityReservation:
    return CapacityReservation(rid, instance_type, zone, total_instance_count=max(available, 1),
                               available_instance_count=available, owner_id=owner, instance_match_criteria=criteria,
                               reservation_type=rtype, state=state, end_date=end, interruptible=interruptible,
                               tags=dict(tags or {}))


def reconciler_reservations() -> list[CapacityReservation]:
    """The BeforeEach of pkg/controllers/nodeclass/capacityreservation_test.go."""
    return [
        cr("cr-m5.large-1a-1"),
        cr("cr-m5.large-1a-2", tags=DISCOVERY_TAGS),
        cr("cr-p5.48xlarge-1a", "p5.48xlarge", available=2, owner=ALT_OWNER, rtype="capacity-block",
           tags=CAPACITY_BLOCK_TAGS, end=24 * 3600.0),
        cr("cr-m5.large-1b-1", zone="us-east-1b", available=15),
        cr("cr-m5.large-1b-2", zone="us-east-1b", available=15, owner=ALT_OWNER, tags=DISCOVERY_TAGS),
        cr("cr-m5.large-1a-3", available=5, criteria="open"),
        cr("cr-i-m5.large-1a-1", criteria="open", tags=INTERRUPTIBLE_TAGS, interruptible=True),
        cr("cr-nil-interruptible", available=5),
    ]


def provider(terms: Iterable[Mapping[str, Any]] = (), reservations: Iterable[CapacityReservation] = (),
             gate: bool = True, clock: VirtualClock | None = None) -> AWSCloudProvider:
    """An AWS provider (us-east-1, the 2026-07-20 prices) whose default EC2NodeClass carries
    ``capacityReservationSelectorTerms`` ``terms``; ``reservations`` exist in its mocked EC2."""
    nc = default_nodeclass()
    nc.spec.capacity_reservation_selector_terms = [CapacityReservationSelectorTerm.model_validate(t) for t in terms]
    p = AWSCloudProvider("us-east-1", prices="2026-07-20", clock=clock or VirtualClock(), nodeclasses=[nc],
                         options=Options(feature_gates=FeatureGates(reserved_capacity=gate)))
    for r in reservations:
        p.ec2.reservations.add(r)
    return p


def status_ids(p: AWSCloudProvider) -> list[str]:
    resolved = p.resolve_nodeclass("default")
    assert resolved is not None
    return [r.id for r in resolved.capacity_reservations]
