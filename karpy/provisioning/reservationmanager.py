"""Reserved-capacity bookkeeping for one Solve: which in-flight NodeClaim holds which reservation.

Mirrors pkg/controllers/provisioning/scheduling/reservationmanager.go (ReservationManager) and the
reserved-offering half of nodeclaim.go (offeringsToReserve, releaseReservedOfferings,
FinalizeScheduling's reservation requirements) and scheduler.go's ReservedOfferingMode.

Reservations are pessimistic, as upstream: a NodeClaim reserves one unit of *every* compatible
available reserved offering it could launch into (it does not know which one the cloud provider
will pick), so a pod that could only use already-held reservations waits for the next pass.
``ReservedOfferingMode.STRICT`` (the provisioner's ``DisableReservedCapacityFallback``) fails a
pod with :class:`ReservedOfferingError` instead of letting it fall
back to on-demand/spot or a lower-weight NodePool while compatible reservations exist.
Over-reserving raises ``RuntimeError`` (upstream panics: a scheduler bug).

Determinism: reservation ids per hostname are kept in insertion order (upstream: a set).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from karpy.scheduling.labels import CAPACITY_TYPE_RESERVED, LABEL_CAPACITY_TYPE, OP_IN
from karpy.scheduling.requirement import Requirement

__all__ = [
    "ERR_RESERVATIONS_REMOVED",
    "ERR_RESERVED_UNAVAILABLE",
    "ReservationManager",
    "ReservedOfferingError",
    "ReservedOfferingMode",
    "finalize_reservations",
    "offerings_to_reserve",
    "release_reserved_offerings",
    "reserved_capacity",
]

ERR_RESERVED_UNAVAILABLE = ("one or more instance types with compatible reserved offerings are available, "
                            "but could not be reserved")
ERR_RESERVATIONS_REMOVED = ("satisfying updated nodeclaim constraints would remove all compatible reserved "
                            "offering options")


class ReservedOfferingMode(enum.Enum):
    """scheduler.go ReservedOfferingMode (the scheduler default is FALLBACK; the provisioner uses STRICT)."""

    FALLBACK = 0
    STRICT = 1


def reserved_capacity(instance_types: Mapping[str, Sequence[Any]]) -> dict[str, int]:
    """NewReservationManager's starting capacity: reservation id -> the least
    ``reservation_capacity`` of its offerings over every NodePool's instance types."""
    capacity: dict[str, int] = {}
    for its in instance_types.values():
        for it in its:
            for o in it.offerings:
                if o.capacity_type != CAPACITY_TYPE_RESERVED:
                    continue
                rid = o.reservation_id
                current = capacity.get(rid)
                if current is None or current > o.reservation_capacity:
                    capacity[rid] = o.reservation_capacity
    return capacity


class ReservationManager:
    """reservationmanager.go ReservationManager: remaining capacity per reservation id and the
    reservation ids each in-flight hostname holds."""

    def __init__(self, instance_types: Mapping[str, Sequence[Any]], *,
                 capacity: dict[str, int] | None = None) -> None:
        """NewReservationManager: the least capacity seen per reservation id across all NodePools'
        instance types (several pools may reference the same reservation). ``capacity``: that
        map, already computed (:func:`reserved_capacity`) for the same types; the manager owns it."""
        self.capacity: dict[str, int] = capacity if capacity is not None else reserved_capacity(instance_types)
        self.reservations: dict[str, dict[str, None]] = {}

    def can_reserve(self, hostname: str, offering: Any) -> bool:
        """CanReserve (idempotent: a hostname already holding the reservation can)."""
        rid = offering.reservation_id
        if rid in self.reservations.get(hostname, ()):
            return True
        if rid not in self.capacity:
            raise RuntimeError(f"attempted to reserve non-existent offering with reservation id {rid!r}")
        return self.capacity[rid] != 0

    def reserve(self, hostname: str, offerings: Iterable[Any]) -> None:
        """Reserve (idempotent per hostname and reservation id)."""
        for o in offerings:
            rid = o.reservation_id
            held = self.reservations.get(hostname)
            if held is not None and rid in held:
                continue
            self.capacity[rid] = self.capacity.get(rid, 0) - 1
            if self.capacity[rid] < 0:
                raise RuntimeError(f"attempted to over-reserve an offering with reservation id {rid!r}")
            self.reservations.setdefault(hostname, {})[rid] = None

    def release(self, hostname: str, offerings: Iterable[Any]) -> None:
        """Release: give back the units this hostname holds for these offerings."""
        held = self.reservations.get(hostname)
        if held is None:
            return
        for o in offerings:
            rid = o.reservation_id
            if rid in held:
                del held[rid]
                self.capacity[rid] += 1

    def has_reservation(self, hostname: str, offering: Any) -> bool:
        """HasReservation."""
        return offering.reservation_id in self.reservations.get(hostname, ())

    def remaining_capacity(self, offering: Any) -> int:
        """RemainingCapacity."""
        return self.capacity.get(offering.reservation_id, 0)


class ReservedOfferingError(str):
    """nodeclaim.go ReservedOfferingError (an error *value*: a str subclass)."""


def offerings_to_reserve(claim: Any, instance_types: Sequence[Any], requirements: Any,
                         well_known: frozenset[str]) -> tuple[list[Any], str | None]:
    """nodeclaim.go offeringsToReserve: the compatible available reserved offerings the claim can
    reserve, or a ReservedOfferingError in strict mode (see module doc). ``claim`` carries
    ``hostname``, ``reservation_manager``, ``reserved_offering_mode`` and ``reserved_offerings``."""
    manager: ReservationManager = claim.reservation_manager
    has_compatible = False
    reserved: list[Any] = []
    for it in instance_types:
        for o in it.offerings:
            if o.capacity_type != CAPACITY_TYPE_RESERVED or not o.available:
                continue
            if not requirements.is_compatible(o.requirements, well_known):
                continue
            has_compatible = True
            if manager.can_reserve(claim.hostname, o):
                reserved.append(o)
    if claim.reserved_offering_mode is ReservedOfferingMode.STRICT:
        if has_compatible and not reserved:
            return [], ReservedOfferingError(ERR_RESERVED_UNAVAILABLE)
        if claim.reserved_offerings and not reserved:
            return [], ReservedOfferingError(ERR_RESERVATIONS_REMOVED)
    return reserved, None


def release_reserved_offerings(claim: Any, current: Sequence[Any], updated: Sequence[Any]) -> None:
    """nodeclaim.go releaseReservedOfferings: release what ``current`` holds and ``updated`` drops."""
    keep = {o.reservation_id for o in updated}
    claim.reservation_manager.release(claim.hostname, [o for o in current if o.reservation_id not in keep])


def finalize_reservations(claim: Any) -> None:
    """nodeclaim.go FinalizeScheduling: a claim holding reservations is tightened to
    ``capacity-type In [reserved]`` and ``<reservation-id label> In [ids]`` (so two reserved
    offerings of one type never over-launch into one reservation)."""
    offerings = claim.reserved_offerings
    if not offerings:
        return
    label = offerings[0].reservation_id_label
    reqs = claim.requirements.copy()
    reqs[LABEL_CAPACITY_TYPE] = Requirement(LABEL_CAPACITY_TYPE, OP_IN, (CAPACITY_TYPE_RESERVED,))
    ids = list(dict.fromkeys(o.reservation_id for o in offerings))
    if label:
        reqs.add(Requirement(label, OP_IN, tuple(ids)))
    claim.requirements = reqs
