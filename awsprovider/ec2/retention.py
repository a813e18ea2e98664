"""What EC2 forgets: a terminated instance stays visible to DescribeInstances for about an hour after
it terminated, then it is gone (EC2 User Guide, "Terminate Amazon EC2 instances": "terminated
instances remain visible in the console for a short while"; DescribeInstances then answers
``InvalidInstanceID.NotFound``), and with it its tags, its network interfaces (their private
addresses return to the subnet) and, once it has no instance left, the instant fleet that launched it.

moto keeps every terminated instance for the life of its backend and walks (and copies) all of
them on every DescribeInstances, so a long run with churn grew slower and larger with its history
(a year of hourly scale events with the disruption controller on: over half an hour, 1.5 GB).
:class:`TerminatedInstances` holds the terminations on the virtual clock and :func:`forget` drops
the ones older than :data:`TERMINATED_VISIBLE_FOR` from moto's backend, so the mocked EC2 costs the
live cluster. The hour is modelled (EC2 gives no exact figure); EC2 frees a terminated instance's
addresses when its network interface is deleted, karpy when it forgets the instance, an hour later.
moto gives a subnet's addresses back only in ``Instance.__del__``, which never runs while the
subnet's own address table holds the instance, so without :func:`forget` a subnet ran out of
addresses after its size in launches (a /20: about 4,000; a year of hourly churn got there).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

__all__ = ["TERMINATED_VISIBLE_FOR", "TERMINATING", "TerminatedInstances", "forget"]

#: seconds a terminated instance stays in DescribeInstances (modelled: EC2 says about an hour)
TERMINATED_VISIBLE_FOR = 3600.0
#: the states of an instance TerminateInstances ended (EC2 answers shutting-down first)
TERMINATING = ("shutting-down", "terminated")


class TerminatedInstances:
    """Terminated instance ids in termination order, each with its virtual termination time."""

    def __init__(self) -> None:
        self._queue: deque[tuple[float, str]] = deque()

    def __len__(self) -> int:
        return len(self._queue)

    def terminated(self, instance_ids: Iterable[str], now: float) -> None:
        self._queue.extend((now, str(i)) for i in instance_ids)

    def due(self, now: float) -> set[str]:
        """The ids terminated at least :data:`TERMINATED_VISIBLE_FOR` before ``now`` (taken out)."""
        out: set[str] = set()
        q = self._queue
        while q and q[0][0] + TERMINATED_VISIBLE_FOR <= now:
            out.add(q.popleft()[1])
        return out


def forget(backend: Any, instance_ids: set[str]) -> int:
    """Drop the terminated instances ``instance_ids`` from moto's EC2 region ``backend``: from their
    reservations (an emptied reservation goes too), with their tags and network interfaces, and each
    fleet left without instances; also from moto's per-class tracking lists. A running instance is
    never dropped. Returns how many instances were dropped."""
    gone: list[Any] = []
    for rid, reservation in list(backend.reservations.items()):
        drop = [i for i in reservation.instances if i.id in instance_ids and _terminated(i)]
        if not drop:
            continue
        gone += drop
        dropped_ids = {id(d) for d in drop}
        keep = [i for i in reservation.instances if id(i) not in dropped_ids]
        if keep:
            reservation.instances = keep
        else:
            del backend.reservations[rid]
    if not gone:
        return 0
    dropped: list[Any] = list(gone)
    ids = {i.id for i in gone}
    for instance in gone:
        _release_addresses(backend, instance)
    for eni_id, eni in list(getattr(backend, "enis", {}).items()):
        if getattr(getattr(eni, "instance", None), "id", None) in ids:
            del backend.enis[eni_id]
            backend.tags.pop(eni_id, None)
            for address in getattr(eni, "private_ip_addresses", None) or ():
                _free(getattr(eni, "subnet", None), address.get("PrivateIpAddress"))
            dropped.append(eni)
    fleets = getattr(backend, "fleets", {})
    for fleet_id in {getattr(i, "_fleet_id", None) for i in gone} - {None}:
        fleet = fleets.get(fleet_id)
        if fleet is not None and not _live_requests(fleet, ids):
            del fleets[fleet_id]
            backend.tags.pop(fleet_id, None)
            dropped.append(fleet)
    for instance_id in ids:
        backend.tags.pop(instance_id, None)
    _untrack(dropped)
    return len(gone)


def _release_addresses(backend: Any, instance: Any) -> None:
    """The instance's private addresses back to its subnet (what moto's ``Instance.__del__`` does)."""
    try:
        subnet = backend.get_subnet(instance.subnet_id)
    except Exception:  # noqa: BLE001 - a subnet deleted meanwhile: nothing to give back
        return
    for address in getattr(instance, "_private_ips", None) or ():
        _free(subnet, address)


def _free(subnet: Any, address: Any) -> None:
    if subnet is not None and address:
        subnet.del_subnet_ip(str(address))


def _terminated(instance: Any) -> bool:
    state = getattr(instance, "_state", None)
    return getattr(state, "name", None) in TERMINATING


def _live_requests(fleet: Any, forgotten: set[str]) -> bool:
    """The fleet still holds an instance that is not being forgotten."""
    for req in [*getattr(fleet, "spot_requests", ()), *getattr(fleet, "on_demand_instances", ())]:
        instance = req.get("instance") if isinstance(req, dict) else getattr(req, "instance", None)
        if instance is not None and getattr(instance, "id", None) not in forgotten:
            return True
    return False


def _untrack(objects: list[Any]) -> None:
    """Take ``objects`` out of moto's InstanceTrackerMeta lists (every model object, per class)."""
    by_class: dict[type, set[int]] = {}
    for obj in objects:
        by_class.setdefault(type(obj), set()).add(id(obj))
    for cls, obj_ids in by_class.items():
        for klass in cls.__mro__:
            tracked = klass.__dict__.get("instances_tracked")
            if isinstance(tracked, list) and tracked:
                tracked[:] = [o for o in tracked if id(o) not in obj_ids]
