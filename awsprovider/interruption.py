"""The AWS interruption controller, offline. Mirrors pkg/controllers/interruption (controller.go,
utils.go ``handleMessage`` / ``handleNodeClaim`` / ``markUnavailableOfferings`` / ``actionForMessage``).

Upstream polls an SQS queue for EventBridge messages; karpy has no queue — a Scenario ``interrupt``
event hands the controller a message directly. What the handler does is upstream's:

1. the message's EC2 instance IDs are mapped to NodeClaims (upstream: the ``status.instanceID``
   field index; here the provider ID ``aws:///<zone>/<id>``);
2. a spot interruption marks ``(instance type, zone, spot)`` unavailable in the ICE cache
   (reason ``spot_interrupted``, the cache's 3-minute TTL);
3. the action: ``CordonAndDrain`` (spot interruption, scheduled change, state change to
   stopping/stopped/shutting-down/terminated, capacity-reservation interruption) deletes the
   NodeClaim if it is not already deleting — Karpenter's termination then taints, drains and
   deletes the instance; ``ForcefulTermination`` (instance/system status failures) is not offered
   offline; ``NoAction`` (rebalance recommendation, unknown state) only records the message.

The 2-minute spot warning is EC2's notice, not a Karpenter timer: EC2 reclaims the instance
:data:`SPOT_INTERRUPTION_WARNING_SECONDS` after the warning whatever the drain's progress, which
the cluster models with ``reclaim_at``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from karpy.scheduling.labels import LABEL_INSTANCE_TYPE, LABEL_ZONE

__all__ = [
    "ACTION_CORDON_AND_DRAIN", "ACTION_NO_ACTION", "InterruptionCluster", "InterruptionController",
    "KIND_CAPACITY_RESERVATION_INTERRUPTION", "KIND_REBALANCE_RECOMMENDATION", "KIND_SCHEDULED_CHANGE",
    "KIND_SPOT_INTERRUPTION", "KIND_STATE_CHANGE", "Message", "SPOT_INTERRUPTION_WARNING_SECONDS",
    "action_for_message",
]

#: messages/types.go kinds (the nodeclaims_disrupted_total reason label)
KIND_SPOT_INTERRUPTION = "spot_interrupted"
KIND_REBALANCE_RECOMMENDATION = "rebalance_recommendation"
KIND_SCHEDULED_CHANGE = "scheduled_change"
KIND_STATE_CHANGE = "state_change"
KIND_INSTANCE_STOPPED = "instance_stopped"
KIND_INSTANCE_TERMINATED = "instance_terminated"
KIND_CAPACITY_RESERVATION_INTERRUPTION = "capacity_reservation_interrupted"
KIND_NO_OP = "no_op"
ACTION_CORDON_AND_DRAIN = "CordonAndDrain"
ACTION_NO_ACTION = "NoAction"
#: EC2 Spot: the interruption notice comes two minutes before the instance is reclaimed
SPOT_INTERRUPTION_WARNING_SECONDS = 120.0
#: statechange/parser.go accepted states -> kind (model.go Kind)
_STATE_KINDS = {"stopping": KIND_INSTANCE_STOPPED, "stopped": KIND_INSTANCE_STOPPED,
                "shutting-down": KIND_INSTANCE_TERMINATED, "terminated": KIND_INSTANCE_TERMINATED}
_CORDON_AND_DRAIN = frozenset({KIND_SCHEDULED_CHANGE, KIND_SPOT_INTERRUPTION, KIND_INSTANCE_STOPPED,
                               KIND_INSTANCE_TERMINATED, KIND_CAPACITY_RESERVATION_INTERRUPTION})
#: label of a NodeClaim launched into a capacity reservation (v1.LabelCapacityReservationID)
LABEL_CAPACITY_RESERVATION_ID = "karpenter.k8s.aws/capacity-reservation-id"
#: the ``deleted_by`` reason karpy records for an interruption
DELETED_BY = "interruption"


@dataclass(frozen=True)
class Message:
    """One parsed interruption message: its kind and the EC2 instance IDs it names. A state
    change carries the instance ``state``; other states than the accepted ones are a no-op."""

    kind: str
    instance_ids: tuple[str, ...]
    state: str | None = None

    @property
    def effective_kind(self) -> str:
        if self.kind == KIND_STATE_CHANGE:
            return _STATE_KINDS.get(self.state or "", KIND_NO_OP)
        return self.kind


def action_for_message(msg: Message) -> str:
    """utils.go actionForMessage (the offline subset)."""
    return ACTION_CORDON_AND_DRAIN if msg.effective_kind in _CORDON_AND_DRAIN else ACTION_NO_ACTION


class InterruptionCluster(Protocol):
    """What the controller needs from the cluster (karpy's Simulation provides it)."""

    def delete_nodeclaim(self, name: str, reason: str) -> bool: ...
    def record(self, kind: str, obj: str, **detail: Any) -> None: ...
    def reclaim_at(self, name: str, t: float) -> None: ...
    def now(self) -> float: ...


def instance_id_of(nodeclaim: Any) -> str | None:
    pid = getattr(getattr(nodeclaim, "status", None), "provider_id", None) or ""
    return pid.rsplit("/", 1)[-1] if pid.startswith("aws:///") else None


@dataclass
class InterruptionController:
    """InterruptionHandler on karpy's cluster and the provider's ICE cache."""

    unavailable_offerings: Any
    #: capacity reservations marked unavailable (capacityreservation.Provider.MarkUnavailable)
    unavailable_reservations: set[str] = field(default_factory=set)
    #: the capacity reservation provider (its availability cache is zeroed for an interrupted
    #: reservation, utils.go markUnavailableOfferings); None: only ``unavailable_reservations``
    capacity_reservations: Any = None
    #: every message handled: (kind, instance id, nodeclaim name or None, action)
    handled: list[tuple[str, str, str | None, str]] = field(default_factory=list)

    def handle_message(self, cluster: InterruptionCluster, msg: Message, nodeclaims: Iterable[Any]) -> bool:
        """utils.go handleMessage: act on every NodeClaim the message names. True when at least
        one matching NodeClaim was found."""
        if msg.effective_kind == KIND_NO_OP:
            return False
        by_instance: dict[str, list[Any]] = {}
        for nc in nodeclaims:
            iid = instance_id_of(nc)
            if iid:
                by_instance.setdefault(iid, []).append(nc)
        found = False
        for iid in msg.instance_ids:
            claims = by_instance.get(iid, [])
            if not claims:
                self.handled.append((msg.effective_kind, iid, None, ACTION_NO_ACTION))
                continue
            found = True
            for nc in claims:
                self.handle_nodeclaim(cluster, msg, nc, iid)
        return found

    def handle_nodeclaim(self, cluster: InterruptionCluster, msg: Message, nodeclaim: Any, instance_id: str) -> None:
        """utils.go handleNodeClaim: notify, mark unavailable offerings, act."""
        action = action_for_message(msg)
        name = nodeclaim.metadata.name
        kind = msg.effective_kind
        self.handled.append((kind, instance_id, name, action))
        labels = nodeclaim.metadata.labels or {}
        cluster.record("interruption", f"NodeClaim/{name}", message=kind, action=action, instance_id=instance_id,
                       instance_type=labels.get(LABEL_INSTANCE_TYPE), zone=labels.get(LABEL_ZONE))
        self.mark_unavailable_offerings(msg, nodeclaim)
        if action == ACTION_CORDON_AND_DRAIN:
            cluster.delete_nodeclaim(name, DELETED_BY)
            if kind in (KIND_SPOT_INTERRUPTION, KIND_CAPACITY_RESERVATION_INTERRUPTION):
                # EC2 reclaims a spot instance, and an interruptible reservation's instance, two
                # minutes after the notice
                cluster.reclaim_at(name, cluster.now() + SPOT_INTERRUPTION_WARNING_SECONDS)

    def mark_unavailable_offerings(self, msg: Message, nodeclaim: Any) -> None:
        """utils.go markUnavailableOfferings."""
        labels = nodeclaim.metadata.labels or {}
        if msg.effective_kind == KIND_SPOT_INTERRUPTION and self.unavailable_offerings is not None:
            zone, itype = labels.get(LABEL_ZONE, ""), labels.get(LABEL_INSTANCE_TYPE, "")
            if zone and itype:
                self.unavailable_offerings.mark_unavailable(itype, zone, "spot", {"reason": KIND_SPOT_INTERRUPTION})
        if msg.effective_kind == KIND_CAPACITY_RESERVATION_INTERRUPTION:
            rid = labels.get(LABEL_CAPACITY_RESERVATION_ID, "")
            if rid:
                self.unavailable_reservations.add(rid)
                if self.capacity_reservations is not None:
                    self.capacity_reservations.mark_unavailable(rid)

    def capacity_reservation_interruption(self, cluster: InterruptionCluster, nodeclaims: Sequence[Any]) -> bool:
        """An "EC2 Capacity Reservation Instance Interruption Warning" for each of ``nodeclaims``
        (messages/capacityreservationinterruption; the Scenario ``interrupt: {capacity_reservation}``)."""
        ids = tuple(i for i in (instance_id_of(nc) for nc in nodeclaims) if i)
        return self.handle_message(cluster, Message(KIND_CAPACITY_RESERVATION_INTERRUPTION, ids), nodeclaims)

    def spot_interruption(self, cluster: InterruptionCluster, nodeclaims: Sequence[Any]) -> bool:
        """A spot interruption warning for each of ``nodeclaims`` (the Scenario ``interrupt`` event)."""
        ids = tuple(i for i in (instance_id_of(nc) for nc in nodeclaims) if i)
        return self.handle_message(cluster, Message(KIND_SPOT_INTERRUPTION, ids), nodeclaims)
