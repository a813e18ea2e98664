"""The capacity-reservation expiration controller. Mirrors
pkg/controllers/capacityreservation/expiration/controller.go (``Reconcile``).

Every minute it lists, by id, the reservations of the managed NodeClaims labelled
``karpenter.k8s.aws/capacity-reservation-id`` (the capacity reservation provider's ``List``, cached
as upstream), reads each as ``CapacityReservationFromEC2`` does, and deletes every NodeClaim whose
reservation is ``expiring``: a capacity block from :data:`CAPACITY_RESERVATION_EXPIRATION_PERIOD`
(40 minutes) before its end -- 10 minutes before EC2 begins reclaiming the instances. Standard
reservations (interruptible or not) are never expiring. The deletion is Karpenter's termination
(taint, four-tier drain, instance deleted); the pods' controllers recreate them and Karpenter
provisions their replacements elsewhere.

karpy also models EC2's side: the block's instances are terminated
:data:`awsprovider.ec2.capacityreservations.CAPACITY_BLOCK_TERMINATION_LEAD` (30 minutes) before its
end whatever the drain's progress (``cluster.reclaim_at``).

Deterministic rule: NodeClaims are deleted in creation order (upstream: ParallelizeUntil, 10 workers).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from awsprovider.apis.ec2nodeclass import CapacityReservationSelectorTerm
from awsprovider.capacityreservation import (CAPACITY_RESERVATION_EXPIRATION_PERIOD, STATE_EXPIRING,
                                             capacity_reservation_from_ec2)
from awsprovider.controllers.capacitytype import ReservationCluster
from awsprovider.labels import LABEL_CAPACITY_RESERVATION_ID

__all__ = ["CAPACITY_RESERVATION_EXPIRATION_PERIOD", "CONTROLLER_NAME", "DELETED_BY", "ExpirationController"]

#: controller.go Name()
CONTROLLER_NAME = "capacityreservation.expiration"
#: ``deleted_by`` of a NodeClaim deleted ahead of its capacity block's end (upstream logs
#: "initiating delete for capacity block expiration")
DELETED_BY = "capacity-block-expiration"


@dataclass
class ExpirationController:
    """expiration.Controller. ``list_reservations(terms)``: the capacity reservation provider's
    List; ``ec2_terminations()``: (instance id, reservation id, termination time) of the
    instances EC2 will terminate (capacity blocks)."""

    cluster: ReservationCluster
    list_reservations: Callable[[Sequence[Any]], list[dict[str, Any]]]
    ec2_terminations: Callable[[], list[tuple[str, str, float]]]
    _reclaims: set[str] = field(default_factory=set)

    def reconcile(self, now: float) -> float | None:
        """Reconcile: delete the NodeClaims of expiring reservations. Returns the next instant a
        listed reservation becomes expiring (None: none will)."""
        from awsprovider.controllers.capacitytype import instance_id_of

        claims = self.cluster.live_nodeclaims()
        ids = sorted({rid for nc in claims if (rid := (nc.metadata.labels or {}).get(LABEL_CAPACITY_RESERVATION_ID))})
        expiring: set[str] = set()
        wake: list[float] = []
        if ids:
            rows = self.list_reservations([CapacityReservationSelectorTerm(id=i) for i in ids])
            for row in rows:
                try:
                    cr = capacity_reservation_from_ec2(now, row)
                except ValueError:
                    continue  # upstream logs "failed to parse capacity reservation"
                if cr.state == STATE_EXPIRING:
                    expiring.add(cr.id)
                elif cr.reservation_type == "capacity-block" and cr.end_time is not None:
                    wake.append(cr.end_time - CAPACITY_RESERVATION_EXPIRATION_PERIOD)
        for nc in claims:
            rid = (nc.metadata.labels or {}).get(LABEL_CAPACITY_RESERVATION_ID)
            if rid in expiring:
                self.cluster.record("capacityreservation.expiration", f"NodeClaim/{nc.metadata.name}",
                                    capacity_reservation_id=rid,
                                    message="initiating delete for capacity block expiration")
                self.cluster.delete_nodeclaim(nc.metadata.name, DELETED_BY)
        # EC2: the block's instances are terminated 30 minutes before its end, drained or not
        by_instance = {instance_id_of(nc): nc.metadata.name for nc in claims}
        for iid, _, t in self.ec2_terminations():
            name = by_instance.get(iid)
            if name is not None and name not in self._reclaims:
                self._reclaims.add(name)
                self.cluster.reclaim_at(name, max(t, now))
        return min(wake) if wake else None
