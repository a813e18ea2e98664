"""Subnet choice for a launch and in-flight IP accounting. Mirrors pkg/providers/subnet/subnet.go
(``ZonalSubnetsForLaunch``, ``UpdateInflightIPs``, ``UpdateICEdSubnet``, ``minPods``).

The NodeClass's resolved subnets (``status.subnets``: id, zone, zone id, in the NodeClass
controller's order: available IPs descending, then id) come in as :class:`LaunchSubnet` values; this
module does not resolve selectors (that is :mod:`awsprovider.nodeclass`).

``available_ip_address_count`` on a :class:`LaunchSubnet` plays the role of upstream's
``availableIPAddressCache`` (the count from the last DescribeSubnets); ``UpdateICEdSubnet`` sets the
cached count to 0 here. The cache TTL (5 min) is not modelled: counts refresh only when the caller
registers subnets again (:meth:`SubnetTracker.set_subnets`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from karpy.api.quantity import NANO
from karpy.cloudprovider.types import InstanceType
from karpy.scheduling.labels import LABEL_CAPACITY_TYPE, LABEL_ZONE, OP_IN
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

__all__ = ["LaunchSubnet", "NO_SUBNETS_MESSAGE", "SubnetTracker", "min_pods", "min_pods_by_zone"]

NO_SUBNETS_MESSAGE = "no subnets matched selector"


@dataclass(frozen=True)
class LaunchSubnet:
    """subnet.go ``Subnet``: id, zone, zone id and the available IP count it was chosen with."""

    id: str
    zone: str
    zone_id: str = ""
    available_ip_address_count: int = 0


def min_pods(instance_types: Sequence[InstanceType], capacity_type: str, zone: str) -> int:
    """subnet.go minPods: the smallest ``pods`` capacity among types with an available offering for
    (capacity type, zone); 0 when there is none. (``lo.MinBy``: first of equal minima.)"""
    reqs = Requirements(
        Requirement(LABEL_CAPACITY_TYPE, OP_IN, [capacity_type]),
        Requirement(LABEL_ZONE, OP_IN, [zone]),
    )
    best: int | None = None
    for it in instance_types:
        if not it.has_compatible_available_offering(reqs):
            continue
        pods = it.capacity.get("pods", 0) // NANO
        if best is None or pods < best:
            best = pods
    return best or 0


def min_pods_by_zone(instance_types: Sequence[InstanceType], capacity_type: str) -> dict[str, int]:
    """:func:`min_pods` for every zone at once (one pass over the available offerings).
    Equivalent for offerings whose requirements are single-valued (capacity type, zone)."""
    out: dict[str, int] = {}
    # Offerings share a handful of requirement objects (one per capacity type x zone): read each
    # one's (capacity type, zone) once. The objects are alive for the whole call, so ids are stable.
    labels: dict[int, tuple[str, str]] = {}
    for it in instance_types:
        pods = it.capacity.get("pods", 0) // NANO
        for o in it.available_offerings:
            ct_zone = labels.get(id(o.requirements))
            if ct_zone is None:
                ct_zone = labels[id(o.requirements)] = (o.capacity_type, o.zone)
            if ct_zone[0] != capacity_type:
                continue
            z = ct_zone[1]
            cur = out.get(z)
            if cur is None or pods < cur:
                out[z] = pods
    return out


class SubnetTracker:
    """The subnet provider's launch state for one NodeClass set: cached IP counts + in-flight IPs.

    Owned by one :class:`~awsprovider.instance.InstanceProvider` (no global state).
    """

    def __init__(self) -> None:
        self.available_ips: dict[str, int] = {}
        self.inflight_ips: dict[str, int] = {}

    def set_subnets(self, subnets: Iterable[LaunchSubnet]) -> None:
        """Record DescribeSubnets' counts (the ``availableIPAddressCache``) for these subnets."""
        for s in subnets:
            self.available_ips[s.id] = int(s.available_ip_address_count)

    def zonal_subnets_for_launch(
        self, subnets: Sequence[LaunchSubnet], instance_types: Sequence[InstanceType], capacity_type: str,
        by_zone: Mapping[str, int] | None = None,
    ) -> dict[str, LaunchSubnet]:
        """subnet.go ZonalSubnetsForLaunch: per zone the subnet with the most available IPs (in-flight
        count when tracked, else the cached count; ties keep the first in status order), then
        deduct ``min_pods`` for each chosen subnet into the in-flight count. Returns zone -> subnet
        in status order of first appearance. Raises ``ValueError`` when there are no subnets.
        ``by_zone``: ``min_pods_by_zone(instance_types, capacity_type)`` when the caller already has it."""
        if not subnets:
            raise ValueError(NO_SUBNETS_MESSAGE)
        for s in subnets:
            self.available_ips.setdefault(s.id, int(s.available_ip_address_count))
        zonal: dict[str, LaunchSubnet] = {}
        for s in subnets:
            cur = zonal.get(s.zone)
            if cur is not None:
                cur_ips = self.inflight_ips.get(cur.id, cur.available_ip_address_count)
                new_ips = self.inflight_ips.get(s.id, self.available_ips.get(s.id, 0))
                if cur_ips >= new_ips:
                    continue
            zonal[s.zone] = LaunchSubnet(s.id, s.zone, s.zone_id, self.available_ips.get(s.id, 0))
        if by_zone is None:
            by_zone = min_pods_by_zone(instance_types, capacity_type)
        for s in zonal.values():
            used = by_zone.get(s.zone, 0)
            prev = self.inflight_ips.get(s.id, s.available_ip_address_count)
            self.inflight_ips[s.id] = prev - used
        return zonal

    def update_inflight_ips(
        self,
        request: Mapping[str, Any],
        response: Mapping[str, Any] | None,
        instance_types: Sequence[InstanceType],
        subnets: Iterable[LaunchSubnet],
        capacity_type: str,
        by_zone: Mapping[str, int] | None = None,
    ) -> None:
        """subnet.go UpdateInflightIPs: give back the deducted IPs of subnets that were in the request
        but not used by any launched instance (only when the cached count is unchanged).
        ``by_zone``: ``min_pods_by_zone(instance_types, capacity_type)`` when the caller already has it."""
        requested = {
            o.get("SubnetId")
            for ltc in request.get("LaunchTemplateConfigs") or []
            for o in ltc.get("Overrides") or []
            if o.get("SubnetId")
        }
        used: set[str] = set()
        if response is not None:
            for inst in response.get("Instances") or []:
                ovr = (inst.get("LaunchTemplateAndOverrides") or {}).get("Overrides") or {}
                if ovr.get("SubnetId"):
                    used.add(ovr["SubnetId"])
        give_back = requested - used
        for s in subnets:
            if s.id not in give_back or s.id not in self.available_ips:
                continue
            if s.available_ip_address_count == self.available_ips[s.id] and s.id in self.inflight_ips:
                if by_zone is None:
                    by_zone = min_pods_by_zone(instance_types, capacity_type)
                self.inflight_ips[s.id] += by_zone.get(s.zone, 0)

    def update_iced_subnet(self, subnet_id: str) -> None:
        """subnet.go UpdateICEdSubnet: cached count 0, forget in-flight tracking."""
        self.available_ips[subnet_id] = 0
        self.inflight_ips.pop(subnet_id, None)
