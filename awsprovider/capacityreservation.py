"""Capacity reservations of an EC2NodeClass. Mirrors pkg/providers/capacityreservation (``Query``,
``QueriesFromSelectorTerms``, ``DescribeCapacityReservationsInput``, ``DefaultProvider.List`` and its
availability cache) and pkg/controllers/nodeclass/capacityreservation.go with
pkg/apis/v1/ec2nodeclass_status.go ``CapacityReservationFromEC2`` (the status entries).

The reservations are listed through the boto3 EC2 client (karpy's mocked EC2 answers
DescribeCapacityReservations, :mod:`awsprovider.ec2.capacityreservations`). The availability
cache holds, per reservation id, the available instance count seen at the last list, minus the
launches Karpenter made since (``MarkLaunched``), plus its terminations (``MarkTerminated``), zeroed
by a ``ReservationCapacityExceeded`` launch (``MarkUnavailable``). A query's result is cached for
:data:`RESERVATION_CACHE_TTL` (upstream ``DefaultTTL``, with the nodeclass controller's one-minute
requeue): a list after that re-reads EC2 and re-syncs the counts. The availability cache's 24 h TTL
(``CapacityReservationAvailabilityTTL``) is not modelled (entries never expire within a run).

Deterministic rules: Go hashes a query for its cache key; karpy keys on the query's fields. Tag
filters are emitted in sorted key order (Go: map order).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from karpy.api.time import EPOCH

__all__ = [
    "CAPACITY_RESERVATION_EXPIRATION_PERIOD",
    "CAPACITY_RESERVATION_POLL_PERIOD",
    "CapacityReservationProvider",
    "Query",
    "RESERVATION_CACHE_TTL",
    "ResolvedCapacityReservation",
    "capacity_reservation_from_ec2",
    "queries_from_selector_terms",
]

#: pkg/cache/cache.go DefaultTTL (the reservation query cache)
RESERVATION_CACHE_TTL = 60.0
#: pkg/controllers/nodeclass/capacityreservation.go capacityReservationPollPeriod
CAPACITY_RESERVATION_POLL_PERIOD = 60.0
#: ec2nodeclass_status.go CapacityReservationFromEC2 ``capacityReservationExpirationPeriod``: a capacity
#: block is ``expiring`` (and its NodeClaims deleted, awsprovider.controllers.expiration) 40 min before its end
CAPACITY_RESERVATION_EXPIRATION_PERIOD = 40 * 60.0
#: types.go DescribeCapacityReservationsInput: MaxResults is capped at 1000
DESCRIBE_MAX_RESULTS = 1000
STATE_ACTIVE = "active"
STATE_EXPIRING = "expiring"
RESERVATION_TYPES = ("default", "capacity-block")
INSTANCE_MATCH_CRITERIA = ("open", "targeted")


@dataclass(frozen=True)
class Query:
    """types.go Query: by ``id``, or by owner + tags + instance match criteria."""

    id: str = ""
    owner_id: str = ""
    tags: tuple[tuple[str, str], ...] = ()
    instance_match_criteria: str = ""

    def describe_input(self) -> dict[str, Any]:
        """types.go DescribeCapacityReservationsInput."""
        filters: list[dict[str, Any]] = [{"Name": "state", "Values": [STATE_ACTIVE]}]
        if self.id:
            # MaxResults can't be used when listing a capacity reservation by id
            return {"Filters": filters, "CapacityReservationIds": [self.id]}
        if self.owner_id:
            filters.append({"Name": "owner-id", "Values": [self.owner_id]})
        for key, value in self.tags:
            if value == "*":
                filters.append({"Name": "tag-key", "Values": [key]})
            else:
                filters.append({"Name": f"tag:{key}", "Values": [value]})
        if self.instance_match_criteria:
            filters.append({"Name": "instance-match-criteria", "Values": [self.instance_match_criteria]})
        return {"Filters": filters, "MaxResults": DESCRIBE_MAX_RESULTS}


def queries_from_selector_terms(terms: Iterable[Any]) -> list[Query]:
    """types.go QueriesFromSelectorTerms: an ``id`` term gives an id query; ``tags`` or
    ``instanceMatchCriteria`` give an owner/tags/criteria query (a term may give both)."""
    out: list[Query] = []
    for term in terms:
        if term.id:
            out.append(Query(id=term.id))
        if term.tags or term.instance_match_criteria:
            out.append(Query(owner_id=term.owner_id, tags=tuple(sorted(term.tags.items())),
                             instance_match_criteria=term.instance_match_criteria))
    return out


@dataclass(frozen=True)
class ResolvedCapacityReservation:
    """ec2nodeclass_status.go CapacityReservation (``status.capacityReservations[]``)."""

    id: str
    instance_type: str
    availability_zone: str
    owner_id: str
    instance_match_criteria: str
    reservation_type: str = "default"
    state: str = STATE_ACTIVE
    end_time: float | None = None  # virtual seconds
    interruptible: bool = False

    def to_status(self) -> dict[str, Any]:
        """The status entry as ``kubectl get ec2nodeclass -o yaml`` prints it."""
        out: dict[str, Any] = {"availabilityZone": self.availability_zone, "id": self.id,
                               "instanceMatchCriteria": self.instance_match_criteria,
                               "instanceType": self.instance_type, "ownerID": self.owner_id,
                               "reservationType": self.reservation_type, "state": self.state}
        if self.end_time is not None:
            out["endTime"] = _timestamp(self.end_time).strftime("%Y-%m-%dT%H:%M:%SZ")
        if self.interruptible:
            out["interruptible"] = True
        return out


def _seconds(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return float((value - EPOCH).total_seconds())
    return float(value)


def _timestamp(seconds: float) -> datetime:
    from datetime import timedelta

    return EPOCH + timedelta(seconds=seconds)


def capacity_reservation_from_ec2(now: float, cr: Mapping[str, Any]) -> ResolvedCapacityReservation:
    """ec2nodeclass_status.go CapacityReservationFromEC2 (``ValueError`` for an unsupported
    instance match criteria or reservation type). A capacity block is ``expiring`` from 40 minutes
    before its end date; every other reservation is ``active``."""
    rid = str(cr["CapacityReservationId"])
    criteria = str(cr.get("InstanceMatchCriteria") or "")
    if criteria not in INSTANCE_MATCH_CRITERIA:
        raise ValueError(f"received capacity reservation with unsupported instance match criteria from ec2 "
                         f"(capacity-reservation={rid}, instance-match-criteria={criteria})")
    rtype = str(cr.get("ReservationType") or "default")
    if rtype not in RESERVATION_TYPES:
        raise ValueError(f"received capacity reservation with unsupported reservation type from ec2 "
                         f"(reservation-type={rtype}, capacity-reservation={rid})")
    end = _seconds(cr.get("EndDate"))
    expiring = rtype == "capacity-block" and end is not None and not now < end - CAPACITY_RESERVATION_EXPIRATION_PERIOD
    return ResolvedCapacityReservation(
        id=rid, instance_type=str(cr["InstanceType"]), availability_zone=str(cr["AvailabilityZone"]),
        owner_id=str(cr["OwnerId"]), instance_match_criteria=criteria, reservation_type=rtype,
        state=STATE_EXPIRING if expiring else STATE_ACTIVE, end_time=end,
        interruptible=bool(cr.get("Interruptible") or False))


class CapacityReservationProvider:
    """capacityreservation.DefaultProvider: ``list`` (cached queries, availability sync) and the
    availability cache. ``clock`` gives virtual seconds."""

    def __init__(self, client: Any, clock: Callable[[], float]) -> None:
        self.client = client
        self.clock = clock
        self._queries: dict[Query, tuple[float, list[dict[str, Any]]]] = {}
        #: reservation id -> (available count, sync time)
        self._availability: dict[str, list[float]] = {}
        self.errors: list[str] = []

    # -- List --------------------------------------------------------------------------------------
    def list(self, terms: Iterable[Any]) -> list[dict[str, Any]]:
        """provider.go List: DescribeCapacityReservations per uncached query (NotFound for an id
        query = none), union by id, reservations whose EndDate has passed dropped."""
        from botocore.exceptions import ClientError

        now = self.clock()
        found: list[dict[str, Any]] = []
        for q in queries_from_selector_terms(terms):
            hit = self._queries.get(q)
            if hit is not None and now - hit[0] < RESERVATION_CACHE_TTL:
                found.extend(hit[1])
                continue
            rows: list[dict[str, Any]] = []
            try:
                for page in self.client.get_paginator("describe_capacity_reservations").paginate(**q.describe_input()):
                    rows.extend(page.get("CapacityReservations") or [])
            except ClientError as e:
                if "NotFound" not in str(e.response.get("Error", {}).get("Code", "")):
                    raise
            self._sync(rows, now)
            self._queries[q] = (now, rows)
            found.extend(rows)
        seen: set[str] = set()
        out = []
        for r in found:
            rid = str(r["CapacityReservationId"])
            if rid in seen:
                continue
            seen.add(rid)
            end = _seconds(r.get("EndDate"))
            if end is None or end > now:
                out.append(r)
        return out

    def resolve(self, terms: Sequence[Any]) -> tuple[ResolvedCapacityReservation, ...]:
        """nodeclass/capacityreservation.go Reconcile: the status entries, sorted by id (entries
        that fail CapacityReservationFromEC2 are left out and noted in ``errors``)."""
        now = self.clock()
        out = []
        for r in sorted(self.list(terms), key=lambda r: str(r["CapacityReservationId"])):
            try:
                out.append(capacity_reservation_from_ec2(now, r))
            except ValueError as e:
                self.errors.append(str(e))
        return tuple(out)

    # -- availability cache (types.go availabilityCache) -------------------------------------------
    def _sync(self, rows: Sequence[Mapping[str, Any]], now: float) -> None:
        for r in rows:
            self._availability[str(r["CapacityReservationId"])] = [int(r.get("AvailableInstanceCount") or 0), now]

    def get_available_instance_count(self, reservation_id: str) -> int:
        """GetAvailableInstanceCount (0 for an unknown id)."""
        entry = self._availability.get(reservation_id)
        return int(entry[0]) if entry is not None else 0

    def set_available_instance_count(self, reservation_id: str, count: int) -> None:
        """SetAvailableInstanceCount."""
        self._availability[reservation_id] = [count, self.clock()]

    def mark_launched(self, reservation_id: str) -> None:
        """MarkLaunched: one fewer available, unless the last sync is newer than the launch."""
        entry = self._availability.get(reservation_id)
        if entry is None or entry[1] > self.clock():
            return
        if entry[0] != 0:
            entry[0] -= 1

    def mark_terminated(self, reservation_id: str) -> None:
        """MarkTerminated: one more available."""
        entry = self._availability.get(reservation_id)
        if entry is not None:
            entry[0] += 1

    def mark_unavailable(self, *reservation_ids: str) -> None:
        """MarkUnavailable: no capacity left (a ReservationCapacityExceeded launch)."""
        for rid in reservation_ids:
            entry = self._availability.get(rid)
            if entry is not None:
                entry[0] = 0

    def version(self) -> tuple[tuple[str, int], ...]:
        """The available counts, for cache keys of offerings that embed them."""
        return tuple(sorted((k, int(v[0])) for k, v in self._availability.items()))
