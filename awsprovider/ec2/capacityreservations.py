"""EC2 capacity reservations for the mocked EC2 (moto 5.2 has none: DescribeCapacityReservations
raises NotImplementedError).

An extension of karpy's own mocked EC2 (:class:`awsprovider.ec2.backend.MockedEC2`), installed as
botocore event hooks on *that backend's client only* -- never a global patch:

``CreateCapacityReservation``, ``DescribeCapacityReservations``, ``CancelCapacityReservation``
    answered by :class:`CapacityReservationStore` at ``before-call``: the request was validated by
    botocore against EC2's service model (it runs before ``before-call``), the answer is serialised
    to EC2's XML with moto's EC2 serializer and parsed back by botocore's own EC2 parser -- so a
    caller gets exactly the shapes real EC2 gives (tests/awsprovider/test_capacity_reservations.py
    pins them).
``CreateLaunchTemplate``
    the template's ``CapacityReservationSpecification`` / ``InstanceMarketOptions`` are noted by
    name (what Karpenter's reserved launch template carries, launchtemplate/types.go).
``CreateFleet``
    a fleet whose launch templates target a reservation (``CapacityReservationPreference:
    capacity-reservations-only`` + ``CapacityReservationTarget``, or default capacity type
    ``capacity-block`` / ``reserved-capacity``) is decided by :meth:`CapacityReservationStore.allocate`:
    overrides in request order; an override launches when its template's reservation is active,
    matches the override's instance type and zone and has an available instance; otherwise it is
    reported ``ReservationCapacityExceeded`` (what Karpenter's fake EC2 returns,
    pkg/fake/ec2api.go). A launch takes one available instance; TerminateInstances gives it back.

Model (EC2 API_CapacityReservation): ``TotalInstanceCount``, ``AvailableInstanceCount``,
``InstanceMatchCriteria`` open|targeted, ``ReservationType`` default|capacity-block, ``State``,
``EndDate``, ``Interruptible``, ``OwnerId``, ``Tags``. DescribeCapacityReservations filters:
``state``, ``owner-id``, ``instance-type``, ``availability-zone``, ``instance-match-criteria``,
``reservation-type``, ``tag:<key>``, ``tag-key``; ``CapacityReservationIds`` of an unknown id ->
``InvalidCapacityReservationId.NotFound``. Pagination: ``MaxResults`` (1-1000) and ``NextToken``.
Ids: ``cr-`` + 17 hex digits from a per-store counter (deterministic).

State over virtual time (EC2 API_CapacityReservation ``State``; the store's clock): ``scheduled``
before ``StartDate`` (a future-dated reservation or a capacity block not yet delivered: not
launchable), ``active`` until ``EndDate``, then ``expired``; ``cancelled`` from a
CancelCapacityReservation (a capacity block cannot be cancelled: ``UnsupportedOperation``, EC2's
rule). An instance running in an ODCR that expires or is cancelled keeps running as an ordinary
on-demand instance: from then on :meth:`CapacityReservationStore.reservation_of` no longer names
the reservation (DescribeInstances drops its ``CapacityReservationId``), and its termination gives
nothing back. EC2 terminates the instances of a capacity block
:data:`CAPACITY_BLOCK_TERMINATION_LEAD` before the block ends (EC2 User Guide, "Monitor Capacity
Blocks using EventBridge": the warning 40 minutes before the end says termination begins in 10).

Billing (:meth:`CapacityReservationStore.bill`, EC2 User Guide "Capacity Reservation pricing and
billing"): an ODCR is charged the on-demand rate for every reserved instance for as long as it is
provisioned (``StartDate`` or creation to its end, expiry or cancellation; per second), used or
not; an instance running in it is not billed again. A capacity block is paid up front for its whole
duration: its ``UpfrontFee`` when the manifest gives one, else *modelled* at the on-demand rate
(karpy has no capacity-block price table).

Not modelled: capacity-block offerings and purchase (a block is added with
:meth:`CapacityReservationStore.add`), reservation fleets, splitting, open reservations absorbing
instances launched without a target, Savings Plans / Reserved Instance discounts on a reservation.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from karpy.api.time import EPOCH

__all__ = [
    "CAPACITY_BLOCK",
    "CAPACITY_BLOCK_TERMINATION_LEAD",
    "CapacityReservation",
    "CapacityReservationError",
    "CapacityReservationStore",
    "DEFAULT_RESERVATION_TYPE",
    "RESERVATION_CAPACITY_EXCEEDED",
    "RESERVATION_OPERATIONS",
    "reservation_target",
]

DEFAULT_RESERVATION_TYPE = "default"
CAPACITY_BLOCK = "capacity-block"
#: pkg/errors/errors.go: a reservation without available instances
RESERVATION_CAPACITY_EXCEEDED = "ReservationCapacityExceeded"
NOT_FOUND = "InvalidCapacityReservationId.NotFound"
#: the EC2 operations the store answers
RESERVATION_OPERATIONS = ("CreateCapacityReservation", "DescribeCapacityReservations", "CancelCapacityReservation")
#: EC2 API: DescribeCapacityReservations MaxResults range
MAX_RESULTS = 1000
#: EC2 begins terminating a capacity block's instances 30 minutes before its end (the EventBridge
#: "Capacity Block Expiration Warning" comes 40 minutes before the end, "terminate in 10 minutes")
CAPACITY_BLOCK_TERMINATION_LEAD = 30 * 60.0
STATE_ACTIVE = "active"
STATE_EXPIRED = "expired"
STATE_CANCELLED = "cancelled"
STATE_SCHEDULED = "scheduled"
#: virtual time 0 (``EndDate`` <-> the backend clock's seconds)
_EPOCH = EPOCH


class CapacityReservationError(Exception):
    """An EC2 error answer: ``code`` and ``message`` (botocore raises it as ClientError)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass
class CapacityReservation:
    """One capacity reservation (EC2 API_CapacityReservation, the fields karpy models)."""

    id: str
    instance_type: str
    availability_zone: str
    total_instance_count: int
    available_instance_count: int
    owner_id: str
    instance_match_criteria: str = "targeted"
    reservation_type: str = DEFAULT_RESERVATION_TYPE
    state: str = "active"
    end_date: float | None = None  # virtual seconds (the backend's clock; 0 = karpy.api.time.EPOCH)
    interruptible: bool = False
    tags: dict[str, str] = field(default_factory=dict)
    zone_id: str = ""
    instances: list[str] = field(default_factory=list)
    #: virtual seconds the reservation becomes active (None: from the start / its creation)
    start_date: float | None = None
    #: when CancelCapacityReservation cancelled it (virtual seconds)
    cancelled_at: float | None = None
    #: a capacity block's up-front price in $ (None: modelled at the on-demand rate)
    upfront_fee: float | None = None
    #: every instance that ran in it: [instance id, from, to (None: still in it)]
    usage: list[list[Any]] = field(default_factory=list)

    def state_at(self, now: float) -> str:
        """The EC2 state at ``now``: ``cancelled`` once cancelled, ``scheduled`` before
        ``start_date``, ``expired`` from ``end_date``, else the stored state."""
        if self.state != STATE_ACTIVE:
            return self.state
        if self.start_date is not None and now < self.start_date:
            return STATE_SCHEDULED
        if self.end_date is not None and now >= self.end_date:
            return STATE_EXPIRED
        return self.state

    def ended_at(self) -> float | None:
        """When it stopped being provisioned (expiry or cancellation), None while open-ended."""
        ends = [t for t in (self.end_date, self.cancelled_at) if t is not None]
        return min(ends) if ends else None

    def to_api(self, now: float) -> dict[str, Any]:
        """The DescribeCapacityReservations item."""
        out: dict[str, Any] = {
            "CapacityReservationId": self.id,
            "OwnerId": self.owner_id,
            "CapacityReservationArn": f"arn:aws:ec2:{self.availability_zone[:-1]}:{self.owner_id}:"
                                      f"capacity-reservation/{self.id}",
            "InstanceType": self.instance_type,
            "InstancePlatform": "Linux/UNIX",
            "AvailabilityZone": self.availability_zone,
            "Tenancy": "default",
            "TotalInstanceCount": self.total_instance_count,
            "AvailableInstanceCount": self.available_instance_count,
            "State": self.state_at(now),
            "EndDateType": "unlimited" if self.end_date is None else "limited",
            "InstanceMatchCriteria": self.instance_match_criteria,
            "Tags": [{"Key": k, "Value": v} for k, v in sorted(self.tags.items())],
            "ReservationType": self.reservation_type,
            "Interruptible": self.interruptible,
        }
        if self.zone_id:
            out["AvailabilityZoneId"] = self.zone_id
        if self.start_date is not None:
            out["StartDate"] = _EPOCH + _dt.timedelta(seconds=self.start_date)
        if self.end_date is not None:
            out["EndDate"] = _EPOCH + _dt.timedelta(seconds=self.end_date)
        return out


def _to_seconds(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        return float((value - _EPOCH).total_seconds())
    raise CapacityReservationError("InvalidParameterValue", f"invalid EndDate {value!r}")


def reservation_target(launch_template_data: Mapping[str, Any]) -> tuple[str, str] | None:
    """(reservation id, market type) a launch template targets, or None: Karpenter's reserved
    templates set ``CapacityReservationPreference: capacity-reservations-only`` and a
    ``CapacityReservationTarget`` (launchtemplate/types.go)."""
    spec = launch_template_data.get("CapacityReservationSpecification") or {}
    target = spec.get("CapacityReservationTarget") or {}
    rid = target.get("CapacityReservationId")
    if spec.get("CapacityReservationPreference") != "capacity-reservations-only" or not rid:
        return None
    market = (launch_template_data.get("InstanceMarketOptions") or {}).get("MarketType") or ""
    return str(rid), str(market)


class CapacityReservationStore:
    """The reservations of one mocked EC2 account and region.

    ``owner_id`` is the account new reservations belong to; ``clock`` gives virtual seconds
    (``EndDate`` is compared with it); ``zone_ids`` maps zone names to zone ids.
    """

    def __init__(self, owner_id: str, clock: Callable[[], float] = lambda: 0.0,
                 zone_ids: Mapping[str, str] | None = None) -> None:
        self.owner_id = owner_id
        self.clock = clock
        self.zone_ids = dict(zone_ids or {})
        self.reservations: dict[str, CapacityReservation] = {}
        self._counter = 0
        self._instance_reservation: dict[str, str] = {}
        self._initial: dict[str, CapacityReservation] = {}

    # -- management ------------------------------------------------------------------------------
    def next_id(self) -> str:
        self._counter += 1
        return f"cr-{self._counter:017x}"

    def add(self, reservation: CapacityReservation) -> CapacityReservation:
        """Add a reservation as given (any id, owner, type -- capacity blocks included)."""
        if reservation.id in self.reservations:
            raise CapacityReservationError("InvalidParameterValue", f"capacity reservation {reservation.id} exists")
        if not reservation.zone_id:
            reservation = replace(reservation, zone_id=self.zone_ids.get(reservation.availability_zone, ""))
        self.reservations[reservation.id] = reservation
        self._initial[reservation.id] = replace(reservation, tags=dict(reservation.tags), instances=[], usage=[])
        return reservation

    def restore(self) -> None:
        """Every reservation as it was added (available counts, states; no instances in them):
        a backend re-used for another run (``AWSCloudProvider.with_scenario``) starts afresh."""
        self.reservations = {rid: replace(r, tags=dict(r.tags), instances=[], usage=[])
                             for rid, r in self._initial.items()}
        self._instance_reservation.clear()

    def get(self, reservation_id: str) -> CapacityReservation | None:
        return self.reservations.get(reservation_id)

    # -- API -------------------------------------------------------------------------------------
    def call(self, operation: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Answer one API operation (see the module doc) with EC2's output dict."""
        if operation == "CreateCapacityReservation":
            return self.create_capacity_reservation(params)
        if operation == "DescribeCapacityReservations":
            return self.describe_capacity_reservations(params)
        if operation == "CancelCapacityReservation":
            return self.cancel_capacity_reservation(params)
        raise CapacityReservationError("InvalidAction", f"{operation} is not modelled")

    def create_capacity_reservation(self, params: Mapping[str, Any]) -> dict[str, Any]:
        zone = str(params.get("AvailabilityZone") or "")
        if not zone and params.get("AvailabilityZoneId"):
            zone = next((z for z, zid in self.zone_ids.items() if zid == params["AvailabilityZoneId"]), "")
        if self.zone_ids and zone not in self.zone_ids:
            raise CapacityReservationError("InvalidParameterValue", f"Invalid availability zone: [{zone}]")
        count = int(params["InstanceCount"])
        if count < 1:
            raise CapacityReservationError("InvalidParameterValue", "InstanceCount must be at least 1")
        tags: dict[str, str] = {}
        for spec in params.get("TagSpecifications") or []:
            if spec.get("ResourceType") == "capacity-reservation":
                tags.update({t["Key"]: t["Value"] for t in spec.get("Tags") or []})
        r = self.add(CapacityReservation(
            id=self.next_id(), instance_type=str(params["InstanceType"]), availability_zone=zone,
            total_instance_count=count, available_instance_count=count, owner_id=self.owner_id,
            instance_match_criteria=str(params.get("InstanceMatchCriteria") or "open"),
            end_date=_to_seconds(params.get("EndDate")) if params.get("EndDateType") == "limited" else None,
            start_date=_to_seconds(params.get("StartDate")), tags=tags))
        return {"CapacityReservation": r.to_api(self.clock())}

    def cancel_capacity_reservation(self, params: Mapping[str, Any]) -> dict[str, Any]:
        r = self.reservations.get(str(params["CapacityReservationId"]))
        if r is None:
            raise CapacityReservationError(NOT_FOUND, f"The capacity reservation ID '{params['CapacityReservationId']}' "
                                                      "does not exist")
        if r.reservation_type == CAPACITY_BLOCK:
            raise CapacityReservationError("UnsupportedOperation",
                                           f"The capacity reservation {r.id} is a Capacity Block and cannot be cancelled")
        now = self.clock()
        if r.state_at(now) in (STATE_ACTIVE, STATE_SCHEDULED):
            r.state = STATE_CANCELLED
            r.cancelled_at = now
        return {"Return": True}

    def _matches(self, r: CapacityReservation, filters: Sequence[Mapping[str, Any]], now: float) -> bool:
        for f in filters:
            name, values = str(f.get("Name")), {str(v) for v in f.get("Values") or []}
            if name == "state":
                got: set[str] = {r.state_at(now)}
            elif name == "owner-id":
                got = {r.owner_id}
            elif name == "instance-type":
                got = {r.instance_type}
            elif name == "availability-zone":
                got = {r.availability_zone}
            elif name == "instance-match-criteria":
                got = {r.instance_match_criteria}
            elif name == "reservation-type":
                got = {r.reservation_type}
            elif name == "tag-key":
                got = set(r.tags)
            elif name.startswith("tag:"):
                key = name[4:]
                got = {r.tags[key]} if key in r.tags else set()
            else:
                raise CapacityReservationError("InvalidParameterValue", f"The filter '{name}' is invalid")
            if not got & values:
                return False
        return True

    def describe_capacity_reservations(self, params: Mapping[str, Any]) -> dict[str, Any]:
        now = self.clock()
        ids = [str(i) for i in params.get("CapacityReservationIds") or []]
        if ids:
            missing = [i for i in ids if i not in self.reservations]
            if missing:
                raise CapacityReservationError(NOT_FOUND, f"The capacity reservation ID '{missing[0]}' does not exist")
            rows = [self.reservations[i] for i in ids]
        else:
            rows = [self.reservations[i] for i in sorted(self.reservations)]
        rows = [r for r in rows if self._matches(r, params.get("Filters") or [], now)]
        start = int(params.get("NextToken") or 0)
        size = int(params.get("MaxResults") or MAX_RESULTS)
        if not 1 <= size <= MAX_RESULTS:
            raise CapacityReservationError("InvalidParameterValue", f"MaxResults must be between 1 and {MAX_RESULTS}")
        page = rows[start:start + size]
        out: dict[str, Any] = {"CapacityReservations": [r.to_api(now) for r in page]}
        if start + size < len(rows):
            out["NextToken"] = str(start + size)
        return out

    # -- launches --------------------------------------------------------------------------------
    def launchable(self, reservation_id: str, instance_type: str, zone: str, now: float) -> str | None:
        """None when one instance of ``instance_type`` in ``zone`` can launch into the reservation,
        else the error code."""
        r = self.reservations.get(reservation_id)
        if (r is None or r.state_at(now) != "active" or r.instance_type != instance_type
                or r.availability_zone != zone or r.available_instance_count <= 0):
            return RESERVATION_CAPACITY_EXCEEDED
        return None

    def take(self, reservation_id: str) -> None:
        """One instance launched into the reservation."""
        self.reservations[reservation_id].available_instance_count -= 1

    def bind(self, instance_ids: Iterable[str], reservation_id: str) -> None:
        """Record which reservation the launched instances run in."""
        r = self.reservations[reservation_id]
        now = self.clock()
        for i in instance_ids:
            self._instance_reservation[i] = reservation_id
            r.instances.append(i)
            r.usage.append([i, now, None])

    def reservation_of(self, instance_id: str) -> str | None:
        """The reservation the instance runs in now (DescribeInstances ``CapacityReservationId``):
        None once that reservation expired or was cancelled -- the instance runs on as on-demand."""
        rid = self._instance_reservation.get(instance_id)
        if rid is None:
            return None
        r = self.reservations.get(rid)
        if r is None or r.state_at(self.clock()) in (STATE_EXPIRED, STATE_CANCELLED):
            return None
        return rid

    def release(self, instance_ids: Iterable[str]) -> None:
        """Terminated instances give their reservation's capacity back (nothing to give back to a
        reservation that has ended)."""
        now = self.clock()
        for i in instance_ids:
            rid = self._instance_reservation.pop(i, None)
            if rid is None:
                continue
            r = self.reservations[rid]
            for entry in r.usage:
                if entry[0] == i and entry[2] is None:
                    entry[2] = now
            if r.state_at(now) not in (STATE_EXPIRED, STATE_CANCELLED):
                r.available_instance_count = min(r.available_instance_count + 1, r.total_instance_count)
            if i in r.instances:
                r.instances.remove(i)

    def reclaim(self, reservation_id: str) -> list[str]:
        """The owner of an interruptible reservation takes its capacity back: the instances running
        in it leave it (EC2 terminates them after the interruption warning) and its total count
        shrinks by them. Returns their ids."""
        r = self.reservations[reservation_id]
        now = self.clock()
        taken = list(r.instances)
        for i in taken:
            self._instance_reservation.pop(i, None)
            for entry in r.usage:
                if entry[0] == i and entry[2] is None:
                    entry[2] = now
        r.instances = []
        r.total_instance_count = max(r.available_instance_count, r.total_instance_count - len(taken))
        return taken

    def capacity_block_instances(self) -> list[tuple[str, str, float]]:
        """(instance id, reservation id, termination time) of every instance running in a capacity
        block: EC2 terminates them :data:`CAPACITY_BLOCK_TERMINATION_LEAD` before the block ends."""
        out: list[tuple[str, str, float]] = []
        for rid in sorted(self.reservations):
            r = self.reservations[rid]
            if r.reservation_type == CAPACITY_BLOCK and r.end_date is not None:
                out.extend((i, rid, r.end_date - CAPACITY_BLOCK_TERMINATION_LEAD) for i in r.instances)
        return out

    def next_transition(self, now: float) -> float | None:
        """The next virtual time after ``now`` at which a reservation changes state (starts,
        expires), or None."""
        times = [t for r in self.reservations.values() if r.state == STATE_ACTIVE
                 for t in (r.start_date, r.end_date) if t is not None and t > now]
        return min(times) if times else None

    # -- billing ---------------------------------------------------------------------------------
    def bill(self, start: float, end: float, on_demand_price: Callable[[str], float | None]) -> list[dict[str, Any]]:
        """What EC2 bills for each reservation over ``[start, end]`` virtual seconds, sorted by id (see
        the module doc): ``billed_hours`` (per reserved instance), ``hourly_price`` (the on-demand
        rate), ``instance_hours`` reserved, ``used_instance_hours`` (instances running in it),
        ``unused_instance_hours``, ``dollars``, ``unused_dollars`` (the unused share; instances that held
        the reservation from the start, outside the run -- ``TotalInstanceCount`` minus the
        ``AvailableInstanceCount`` it was added with -- count as used; for a capacity
        block the up-front fee times its unused share) and ``modelled`` (True for a capacity block
        without an ``UpfrontFee``: priced at the on-demand rate)."""
        out = []
        for rid in sorted(self.reservations):
            r = self.reservations[rid]
            rate = on_demand_price(r.instance_type)
            rate = float(rate) if rate is not None else 0.0
            opened = r.start_date if r.start_date is not None else start
            closed = r.ended_at()
            block = r.reservation_type == CAPACITY_BLOCK
            # a capacity block is paid for its whole duration; an ODCR while provisioned in the window
            lo = max(opened, start)
            hi = min(closed if closed is not None else end, end)
            window_hours = max(0.0, hi - lo) / 3600.0
            initial = self._initial.get(rid)
            # instances outside karpy's run hold what was not available at the start (availableCount)
            outside = (initial.total_instance_count - initial.available_instance_count) if initial is not None else 0
            used = window_hours * max(0, outside)
            for _, a, b in r.usage:
                a, b = max(float(a), lo), min(float(b) if b is not None else hi, hi)
                if b > a:
                    used += (b - a) / 3600.0
            reserved = window_hours * r.total_instance_count
            unused = max(0.0, reserved - used)
            modelled = False
            if block:
                duration = max(0.0, (r.end_date if r.end_date is not None else end) - opened) / 3600.0
                if r.upfront_fee is not None:
                    dollars = float(r.upfront_fee)
                else:
                    dollars = rate * duration * r.total_instance_count
                    modelled = True
                block_hours = duration * r.total_instance_count
                # the unused share of the block's time inside the window (the rest is paid, unused or not)
                unused_dollars = dollars * (unused + max(0.0, block_hours - reserved)) / block_hours \
                    if block_hours > 0 else 0.0
                billed_hours = duration
            else:
                dollars = rate * reserved
                unused_dollars = rate * unused
                billed_hours = window_hours
            out.append({
                "id": rid, "instance_type": r.instance_type, "zone": r.availability_zone,
                "reservation_type": r.reservation_type, "instance_count": r.total_instance_count,
                "billing": "upfront" if block else "on-demand-rate",
                "billed_from": lo if not block else opened, "billed_to": hi if not block else
                (r.end_date if r.end_date is not None else end),
                "billed_hours": billed_hours, "hourly_price": rate, "instance_hours": reserved,
                "used_instance_hours": used, "unused_instance_hours": unused,
                "dollars": dollars, "unused_dollars": unused_dollars, "modelled": modelled,
            })
        return out


def allocate_reserved(params: Mapping[str, Any], considered: Sequence[Any],
                      targets: Sequence[tuple[str, str] | None], store: CapacityReservationStore,
                      now: float) -> list[Any]:
    """The fleet decisions of a reserved CreateFleet (one per unit of ``TotalTargetCapacity``).

    ``considered``: the request's overrides as :meth:`FleetAllocator.overrides` reads them;
    ``targets``: per launch template config, the reservation its template targets (or None). Each
    unit launches into the first override (request order) whose reservation can take it; the
    overrides that could not are reported ``ReservationCapacityExceeded``. The chosen price is the
    override's ``Priority`` -- Karpenter sets it to the reserved offering's price (on-demand / 10^7,
    offering/reserved_capacity_resolver.go), which is what karpy reports for a reserved launch.
    Stops after the first unit that launches nothing, as an instant fleet does."""
    from awsprovider.ec2.fleet import FleetAllocator, FleetChoice, FleetDecision

    capacity_type = str(params["TargetCapacitySpecification"]["DefaultTargetCapacityType"])
    total = int(params["TargetCapacitySpecification"].get("TotalTargetCapacity") or 0)
    decisions: list[Any] = []
    for _ in range(max(total, 0)):
        errors: list[dict[str, Any]] = []
        chosen = None
        why = ""
        for o in considered:
            target = targets[o.config_index] if o.config_index < len(targets) else None
            rid = target[0] if target is not None else ""
            code = store.launchable(rid, o.instance_type, o.zone, now) if rid else RESERVATION_CAPACITY_EXCEEDED
            if code is None:
                r = store.reservations[rid]
                store.take(rid)
                chosen = FleetChoice(o.instance_type, o.zone, o.subnet_id, o.priority, o.priority, o.index,
                                     o.config_index)
                why = (f"reserved: {o.instance_type} in {o.zone} launched into capacity reservation {rid} "
                       f"({r.reservation_type}; {r.available_instance_count} of {r.total_instance_count} "
                       f"left available)")
                break
            errors.append(FleetAllocator._error(
                params, o, code, f"Insufficient capacity in capacity reservation {rid or '(none)'}", "on-demand"))
        if chosen is None:
            why = f"reserved: no override launched: all {len(considered)} overrides failed ({RESERVATION_CAPACITY_EXCEEDED})"
        decisions.append(FleetDecision("reserved", capacity_type, tuple(considered), chosen, tuple(errors), why))
        if chosen is None:
            break
    return decisions


def build_user_reservations(store: CapacityReservationStore, network: Any) -> list[CapacityReservation]:
    """Add the ``spec.capacityReservations`` of a ``karpy.io/v1alpha1`` Network manifest
    (:class:`awsprovider.apis.network.NetworkCapacityReservation`) to ``store``."""
    out: list[CapacityReservation] = []
    name = network.metadata.name
    for i, spec in enumerate(network.spec.capacity_reservations):
        zone = spec.zone
        if not zone:
            zone = next((z for z, zid in store.zone_ids.items() if zid == spec.zone_id), "")
        where = f"Network {name}: spec.capacityReservations[{i}]"
        if store.zone_ids and zone not in store.zone_ids:
            raise ValueError(f"{where}: unknown zone {spec.zone or spec.zone_id!r} "
                             f"(zones: {', '.join(sorted(store.zone_ids))})")
        if spec.id and spec.id in store.reservations:
            raise ValueError(f"{where}: capacity reservation {spec.id} is defined twice")
        available = spec.instance_count if spec.available_count is None else spec.available_count
        out.append(store.add(CapacityReservation(
            id=spec.id or store.next_id(), instance_type=spec.instance_type, availability_zone=zone,
            total_instance_count=spec.instance_count, available_instance_count=available,
            owner_id=spec.owner_id or store.owner_id, instance_match_criteria=spec.instance_match_criteria,
            reservation_type=spec.reservation_type, end_date=_to_seconds(spec.end_date),
            start_date=_to_seconds(spec.start_date), upfront_fee=spec.upfront_fee,
            interruptible=spec.interruptible, tags=dict(spec.tags))))
    return out
