"""The CreateFleet batcher on the virtual clock. Mirrors pkg/batcher/createfleet.go and the generic
pkg/batcher/batcher.go (hash-keyed buckets, idle/max timeouts, max items).

Identical requests (equal inputs: upstream's ``DefaultHasher`` hash of the input, see
:meth:`CreateFleetBatcher.add`) added within the window are sent as ONE CreateFleet with ``TotalTargetCapacity = N`` (the first input, as upstream). The
response's instance ids are dealt out one per caller in order; every caller gets the full
``Errors`` list; callers beyond the number of instances get an output with no instances (and,
when EC2 returned no errors, the synthetic ``too few instances returned`` error). An API error
goes to every caller.

Timing. A bucket closes ``IDLE_TIMEOUT`` (35 ms) after its last add or ``MAX_TIMEOUT`` (1 s) after
its first, whichever is first, or at ``MAX_ITEMS`` (1000). karpy runs synchronously, so nothing
fires by itself: the owner adds tickets at a virtual instant and calls :meth:`flush` (everything)
or :meth:`flush_due` (buckets whose deadline has passed on the clock). Buckets flush in order of
their first add.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "IDLE_TIMEOUT",
    "MAX_ITEMS",
    "MAX_TIMEOUT",
    "TOO_FEW_INSTANCES",
    "BatchTicket",
    "CreateFleetBatcher",
    "request_hash",
]

#: createfleet.go NewCreateFleetBatcher options.
IDLE_TIMEOUT = 0.035
MAX_TIMEOUT = 1.0
MAX_ITEMS = 1000
TOO_FEW_INSTANCES = "too few instances returned"


def request_hash(request: Mapping[str, Any]) -> str:
    """batcher.go DefaultHasher: a hash of the whole input (canonical JSON here)."""
    return hashlib.sha256(json.dumps(request, sort_keys=True, default=str).encode()).hexdigest()


def _shape(request: Mapping[str, Any]) -> tuple[Any, ...]:
    """A few values of a CreateFleet input, equal for equal inputs: per launch template config its
    template name, its number of overrides and its first override's instance type and subnet."""
    out: list[Any] = []
    for config in request.get("LaunchTemplateConfigs") or ():
        spec = config.get("LaunchTemplateSpecification") or {}
        overrides = config.get("Overrides") or ()
        first = overrides[0] if overrides else {}
        out.append((spec.get("LaunchTemplateName"), len(overrides), first.get("InstanceType"), first.get("SubnetId")))
    return tuple(out)


@dataclass
class BatchTicket:
    """One caller's slot: its request, and after the flush its output or error."""

    request: dict[str, Any]
    added_at: float
    output: dict[str, Any] | None = None
    error: BaseException | None = None
    done: bool = False
    batch_size: int = 0
    raw_response: dict[str, Any] | None = None

    def result(self) -> dict[str, Any]:
        """The output, or raise the batch's error (call after a flush)."""
        if not self.done:
            raise RuntimeError("CreateFleet batch not flushed yet")
        if self.error is not None:
            raise self.error
        assert self.output is not None
        return self.output


@dataclass
class _Bucket:
    key: int  # creation order
    shape: tuple[Any, ...]
    first: float
    last: float
    tickets: list[BatchTicket] = field(default_factory=list)

    def deadline(self) -> float:
        return min(self.last + IDLE_TIMEOUT, self.first + MAX_TIMEOUT)


class CreateFleetBatcher:
    """Batches CreateFleet calls; ``create_fleet`` is the EC2 call (e.g. ``client.create_fleet``)."""

    def __init__(self, create_fleet: Callable[..., Mapping[str, Any]], clock: Any | None = None) -> None:
        self._create_fleet = create_fleet
        self._clock = clock
        self._buckets: dict[int, _Bucket] = {}
        self._by_shape: dict[tuple[Any, ...], list[_Bucket]] = {}
        self._serial = 0
        self.calls = 0

    def _now(self) -> float:
        return float(self._clock.now()) if self._clock is not None else 0.0

    def add(self, request: Mapping[str, Any]) -> BatchTicket:
        """createfleet.go CreateFleet (the Add half). Rejects TotalTargetCapacity != 1 like upstream."""
        tcs = request.get("TargetCapacitySpecification") or {}
        total = tcs.get("TotalTargetCapacity")
        if total is not None and total != 1:
            raise ValueError(f"expected to receive a single instance only (instance-count={total})")
        now = self._now()
        # The bucket of an equal request (upstream: of an equal DefaultHasher hash). Not in
        # upstream's form, same buckets: the pending requests are compared by value (``==``,
        # walked in C and stopping at the first difference) among those of the same _shape, in
        # place of a canonical-JSON digest of each ~300-override input (0.1 s of a 5,000-pod run);
        # for these inputs (dicts and lists of str, int and float, each field always of one type)
        # equal values are exactly the inputs with equal canonical JSON texts.
        shape = _shape(request)
        alike = self._by_shape.get(shape)
        bucket = None
        for b in alike or ():
            if b.tickets[0].request == request:
                bucket = b
                break
        if bucket is None:
            self._serial += 1
            bucket = self._buckets[self._serial] = _Bucket(self._serial, shape, now, now)
            if alike is None:
                alike = self._by_shape[shape] = []
            alike.append(bucket)
        bucket.last = now
        ticket = BatchTicket(dict(request), now)  # requests are built fresh per launch: no copy
        bucket.tickets.append(ticket)
        if len(bucket.tickets) >= MAX_ITEMS:
            self._run(self._pop(bucket.key))
        return ticket

    def _pop(self, key: int) -> _Bucket:
        """Take a pending bucket out (to run it)."""
        bucket = self._buckets.pop(key)
        alike = [b for b in self._by_shape[bucket.shape] if b is not bucket]
        if alike:
            self._by_shape[bucket.shape] = alike
        else:
            del self._by_shape[bucket.shape]
        return bucket

    def pending(self) -> int:
        """Number of tickets waiting for a flush."""
        return sum(len(b.tickets) for b in self._buckets.values())

    def next_deadline(self) -> float | None:
        """The earliest virtual time a bucket is due (None when empty)."""
        return min((b.deadline() for b in self._buckets.values()), default=None)

    def flush_due(self, now: float | None = None) -> None:
        """Execute the buckets whose deadline is <= now."""
        t = self._now() if now is None else now
        for key in [k for k, b in sorted(self._buckets.items(), key=lambda kv: kv[1].first) if b.deadline() <= t]:
            self._run(self._pop(key))

    def flush(self) -> None:
        """Execute every pending bucket now (in order of first add)."""
        for key in [k for k, _ in sorted(self._buckets.items(), key=lambda kv: kv[1].first)]:
            self._run(self._pop(key))

    def _run(self, bucket: _Bucket) -> None:
        """createfleet.go execCreateFleetBatch."""
        tickets = bucket.tickets
        n = len(tickets)
        request = dict(tickets[0].request)
        request["TargetCapacitySpecification"] = {**request["TargetCapacitySpecification"], "TotalTargetCapacity": n}
        self.calls += 1
        try:
            output = dict(self._create_fleet(**request))
        except Exception as err:  # noqa: BLE001 - every caller receives the API error
            for t in tickets:
                t.error, t.done, t.batch_size = err, True, n
            return
        output.pop("ResponseMetadata", None)
        errors = list(output.get("Errors") or [])
        idx = 0
        for reservation in output.get("Instances") or []:
            for instance_id in reservation.get("InstanceIds") or []:
                if idx >= n:
                    break  # "received more instances than requested, ignoring instance"
                one = {k: v for k, v in reservation.items() if k != "InstanceIds"}
                one["InstanceIds"] = [instance_id]
                t = tickets[idx]
                t.output = {"FleetId": output.get("FleetId"), "Errors": errors, "Instances": [one]}
                idx += 1
        if idx < n:
            if not errors:
                errors = [{"ErrorCode": TOO_FEW_INSTANCES, "ErrorMessage": TOO_FEW_INSTANCES}]
            for t in tickets[idx:]:
                t.output = {"Errors": errors, "Instances": []}
        for t in tickets:
            t.done, t.batch_size, t.raw_response = True, n, output
