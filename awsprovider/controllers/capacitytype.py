"""The capacity-reservation capacity-type controller. Mirrors
pkg/controllers/capacityreservation/capacitytype/controller.go (``Reconcile``, ``syncCapacityType``).

Every :data:`RECONCILE_PERIOD` (upstream ``RequeueAfter: time.Minute``) it lists the provider's
instances (upstream ``cp.List``; here the mocked EC2's record of which reservation each instance
runs in, which is what DescribeInstances' ``CapacityReservationId`` says) and, for each NodeClaim
that is not deleting and is labelled ``karpenter.sh/capacity-type: reserved`` while its instance
is now on-demand (its reservation expired or was cancelled) -- or whose registered Node still is
reserved after the NodeClaim was demoted -- patches the NodeClaim and its registered Node: ``capacity-type`` becomes ``on-demand`` and the ReservedCapacityLabels
(``karpenter.k8s.aws/capacity-reservation-id`` and ``-type``, apis/v1/doc.go) are removed. Only
reserved -> on-demand is synced (upstream: promotion is not supported). karpy also moves the node's
$/h to the on-demand price from that instant (EC2 bills the instance at the on-demand rate once it
runs outside a reservation), so the cost integral follows.

Deterministic rule: NodeClaims are visited in creation order (Go: the list order of the API server).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from karpy.scheduling.labels import (CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_RESERVED, CAPACITY_TYPE_SPOT,
                                     LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE)

__all__ = ["CONTROLLER_NAME", "CapacityTypeController", "RECONCILE_PERIOD", "ReservationCluster"]

#: controller.go Name()
CONTROLLER_NAME = "capacityreservation.capacitytype"
#: controller.go Reconcile: RequeueAfter time.Minute (both capacity-reservation controllers)
RECONCILE_PERIOD = 60.0


class ReservationCluster(Protocol):
    """What the capacity-reservation controllers need from the cluster (karpy's Simulation)."""

    def now(self) -> float: ...
    def live_nodeclaims(self) -> list[Any]: ...
    def node_labels(self, name: str) -> Mapping[str, str] | None: ...
    def relabel_nodeclaim(self, name: str, labels: Mapping[str, str], remove: Iterable[str] = (),
                          price: float | None = None) -> bool: ...
    def delete_nodeclaim(self, name: str, reason: str) -> bool: ...
    def reclaim_at(self, name: str, t: float) -> None: ...
    def record(self, kind: str, obj: str, **detail: Any) -> None: ...


def instance_id_of(nodeclaim: Any) -> str | None:
    """The EC2 instance id of ``aws:///<zone>/<id>``."""
    pid = getattr(getattr(nodeclaim, "status", None), "provider_id", None) or ""
    return pid.rsplit("/", 1)[-1] if pid.startswith("aws:///") else None


@dataclass
class CapacityTypeController:
    """capacitytype.Controller over the mocked EC2's reservation store.

    ``reservation_of(instance_id)``: the reservation the instance runs in now (None: on-demand);
    ``on_demand_price(instance_type)``: $/h; ``reserved_labels``: cloudprovider.ReservedCapacityLabels;
    ``next_transition(now)``: the next reservation state change (the controller asks to run then)."""

    cluster: ReservationCluster
    reservation_of: Callable[[str], str | None]
    on_demand_price: Callable[[str], float | None]
    reserved_labels: frozenset[str]
    next_transition: Callable[[float], float | None]

    def reconcile(self, now: float) -> float | None:
        """Reconcile: demote every reserved NodeClaim whose instance left its reservation. Returns
        when to run next without a change (the next reservation transition while reserved
        NodeClaims exist)."""
        reserved_left = False
        for nc in self.cluster.live_nodeclaims():
            labels = nc.metadata.labels or {}
            capacity_type = labels.get(LABEL_CAPACITY_TYPE)
            iid = instance_id_of(nc)
            if capacity_type == CAPACITY_TYPE_SPOT or iid is None:
                continue  # the cloud provider's capacity type is spot: nothing to sync
            if self.reservation_of(iid) is not None:
                reserved_left = reserved_left or capacity_type == CAPACITY_TYPE_RESERVED
                continue
            node = self.cluster.node_labels(nc.metadata.name)
            if capacity_type == CAPACITY_TYPE_RESERVED or (node or {}).get(LABEL_CAPACITY_TYPE) == CAPACITY_TYPE_RESERVED:
                self.sync_capacity_type(nc)
        return self.next_transition(now) if reserved_left else None

    def sync_capacity_type(self, nodeclaim: Any) -> bool:
        """syncCapacityType for an instance that is on-demand now."""
        labels = nodeclaim.metadata.labels or {}
        price = self.on_demand_price(labels.get(LABEL_INSTANCE_TYPE, ""))
        return self.cluster.relabel_nodeclaim(nodeclaim.metadata.name, {LABEL_CAPACITY_TYPE: CAPACITY_TYPE_ON_DEMAND},
                                              remove=sorted(self.reserved_labels), price=price)
