"""Resolve an EC2NodeClass against (mocked) EC2 through boto3: subnets, security groups, zone info.

Mirrors the status the AWS provider's nodeclass controller computes:

* subnets (pkg/providers/subnet/subnet.go ``List`` + pkg/controllers/nodeclass/subnet.go): one
  ``DescribeSubnets`` per selector term (``id`` -> ``subnet-id`` filter; tag ``"*"`` ->
  ``tag-key`` filter, else ``tag:<key>``), union by id, sorted by AvailableIpAddressCount desc then
  SubnetId asc;
* security groups (pkg/providers/securitygroup): ``id`` -> ``group-id``, ``name`` -> ``group-name``,
  tags as above; sorted by id;
* ``ZoneInfo`` (ec2nodeclass_status.go): status subnets grouped by zone id. Go returns the groups
  in map order; karpy keeps the first-seen order of the sorted subnet list (deterministic rule),
  and the subnet ids inside a group keep the status order.

When the user gives no EC2NodeClass, :func:`default_nodeclass` and :func:`ensure_default_network`
create one: a VPC (10.0.0.0/16) with one /20 subnet per zone of the region and a security group,
all tagged :data:`DEFAULT_DISCOVERY_TAG`, selected by tag.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from awsprovider.apis.ec2nodeclass import EC2NodeClass, SecurityGroupSelectorTerm, SubnetSelectorTerm
from karpy._errors import KarpyError

__all__ = [
    "DEFAULT_DISCOVERY_TAG",
    "ensure_network_for",
    "DEFAULT_NODECLASS_NAME",
    "NodeClassError",
    "ResolvedNodeClass",
    "ResolvedSubnet",
    "ZoneInfo",
    "default_nodeclass",
    "ensure_default_network",
    "resolve_nodeclass",
    "security_group_filters",
    "subnet_filters",
]

DEFAULT_NODECLASS_NAME = "default"
#: the tag on the default network's subnets and security group (what the default NodeClass selects)
DEFAULT_DISCOVERY_TAG: tuple[str, str] = ("karpenter.sh/discovery", "karpy")
_DEFAULT_CIDR = "10.0.0.0/16"
_DEFAULT_SUBNET_PREFIX = 20


class NodeClassError(KarpyError, ValueError):
    """The NodeClass cannot be resolved (e.g. no subnet matches its selector terms)."""


@dataclass(frozen=True)
class ResolvedSubnet:
    """A status subnet: id, zone, zone id and the available IP count seen at resolution."""

    id: str
    zone: str
    zone_id: str
    available_ip_address_count: int = 0


@dataclass(frozen=True)
class ZoneInfo:
    """ec2nodeclass_status.go ZoneInfo."""

    zone: str
    zone_id: str
    subnet_ids: tuple[str, ...]


@dataclass(frozen=True)
class ResolvedNodeClass:
    """An EC2NodeClass with its resolved status (what ``nodeClass.Status`` holds upstream)."""

    nodeclass: EC2NodeClass
    subnets: tuple[ResolvedSubnet, ...]
    security_groups: tuple[tuple[str, str], ...] = ()
    #: status.capacityReservations (awsprovider.capacityreservation; empty with the ReservedCapacity gate off)
    capacity_reservations: tuple[Any, ...] = ()
    #: virtual time the reservations were listed at (they are re-listed after a minute)
    reservations_listed_at: float = 0.0
    #: status.conditions (:mod:`awsprovider.nodeclassstatus`), computed when it was resolved
    conditions: tuple[Any, ...] = ()
    _zone_info: tuple[ZoneInfo, ...] = field(default=(), repr=False, compare=False)
    #: what is derived from this resolution alone, kept with it (its static hash, its instance-type
    #: settings; a resolution is made anew when its NodeClass changes)
    derived: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        groups: dict[str, list[ResolvedSubnet]] = {}
        for s in self.subnets:
            groups.setdefault(s.zone_id, []).append(s)
        info = tuple(ZoneInfo(g[0].zone, zid, tuple(s.id for s in g)) for zid, g in groups.items())
        object.__setattr__(self, "_zone_info", info)

    @property
    def name(self) -> str:
        return self.nodeclass.metadata.name

    def zone_info(self) -> tuple[ZoneInfo, ...]:
        """ec2nodeclass_status.go ZoneInfo (see module doc for the order)."""
        return self._zone_info

    def zones(self) -> frozenset[str]:
        """The NodeClass zones (zone names of its subnets)."""
        return frozenset(z.zone for z in self._zone_info)

    def ready(self) -> Any | None:
        """The root ``Ready`` condition of :attr:`conditions` (None before they are computed)."""
        return next((c for c in self.conditions if c.type == "Ready"), None)

    def ami_family(self) -> str:
        return self.nodeclass.ami_family()

    def capacity_reservations_for(self, instance_type: str) -> tuple[Any, ...]:
        """The status reservations of ``instance_type`` (types.go: ``cr.InstanceType == name``)."""
        return tuple(r for r in self.capacity_reservations if r.instance_type == instance_type)

    def zone_id(self, zone: str) -> str | None:
        """The zone id of ``zone`` among the NodeClass subnets."""
        for z in self._zone_info:
            if z.zone == zone:
                return z.zone_id
        return None


def _tag_filters(tags: Mapping[str, str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for key in sorted(tags):
        value = tags[key]
        if value == "*":
            out.append({"Name": "tag-key", "Values": [key]})
        else:
            out.append({"Name": f"tag:{key}", "Values": [value]})
    return out


def subnet_filters(term: SubnetSelectorTerm) -> list[dict[str, Any]]:
    """subnet.go getFilterSets: the DescribeSubnets filters of one term."""
    if term.id:
        return [{"Name": "subnet-id", "Values": [term.id]}]
    return _tag_filters(term.tags)


def security_group_filters(term: SecurityGroupSelectorTerm) -> list[dict[str, Any]]:
    """securitygroup.go getFilterSets: the DescribeSecurityGroups filters of one term."""
    if term.id:
        return [{"Name": "group-id", "Values": [term.id]}]
    if term.name:
        return [{"Name": "group-name", "Values": [term.name]}]
    return _tag_filters(term.tags)


def _describe_all(client: Any, op: str, key: str, filters: list[dict[str, Any]]) -> list[dict[str, Any]]:
    paginator = client.get_paginator(op)
    out: list[dict[str, Any]] = []
    for page in paginator.paginate(Filters=filters):
        out.extend(page.get(key, []))
    return out


def resolve_nodeclass(client: Any, nodeclass: EC2NodeClass) -> ResolvedNodeClass:
    """Resolve subnets and security groups of ``nodeclass`` with the boto3 EC2 ``client``."""
    found: dict[str, dict[str, Any]] = {}
    for term in nodeclass.spec.subnet_selector_terms:
        filters = subnet_filters(term)
        if not filters:
            continue
        for s in _describe_all(client, "describe_subnets", "Subnets", filters):
            found[s["SubnetId"]] = s
    subnets = sorted(
        (ResolvedSubnet(s["SubnetId"], s["AvailabilityZone"], s.get("AvailabilityZoneId", ""),
                        int(s.get("AvailableIpAddressCount", 0))) for s in found.values()),
        key=lambda s: (-s.available_ip_address_count, s.id),
    )
    groups: dict[str, str] = {}
    for sg_term in nodeclass.spec.security_group_selector_terms:
        filters = security_group_filters(sg_term)
        if not filters:
            continue
        for g in _describe_all(client, "describe_security_groups", "SecurityGroups", filters):
            groups[g["GroupId"]] = g.get("GroupName", "")
    return ResolvedNodeClass(nodeclass, tuple(subnets), tuple(sorted(groups.items())))


def default_nodeclass(name: str = DEFAULT_NODECLASS_NAME) -> EC2NodeClass:
    """The EC2NodeClass karpy uses when the manifests have none: AL2023, the default network's
    subnets and security group (selected by :data:`DEFAULT_DISCOVERY_TAG`)."""
    key, value = DEFAULT_DISCOVERY_TAG
    return EC2NodeClass.model_validate({
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": name},
        "spec": {
            "amiFamily": "AL2023",
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "role": "KarpenterNodeRole-karpy",
            "subnetSelectorTerms": [{"tags": {key: value}}],
            "securityGroupSelectorTerms": [{"tags": {key: value}}],
        },
    })


def _create_network(client: Any, subnet_tags: Mapping[str, str], sg_tags: Mapping[str, str],
                    cidr: str, zones: Iterable[str] | None) -> dict[str, str]:
    """A VPC with one subnet per zone (tagged ``subnet_tags``) and one security group
    (tagged ``sg_tags``): zone -> subnet id."""
    if zones is None:
        azs = client.describe_availability_zones()["AvailabilityZones"]
        zones = sorted(z["ZoneName"] for z in azs if z.get("ZoneType", "availability-zone") == "availability-zone")

    def spec(kind: str, tags: Mapping[str, str]) -> list[dict[str, Any]]:
        return [{"ResourceType": kind, "Tags": [{"Key": k, "Value": v} for k, v in sorted(tags.items())]}]

    vpc_id = client.create_vpc(CidrBlock=cidr, TagSpecifications=spec("vpc", subnet_tags))["Vpc"]["VpcId"]
    blocks = ipaddress.ip_network(cidr).subnets(new_prefix=_DEFAULT_SUBNET_PREFIX)
    out: dict[str, str] = {}
    for zone in zones:
        out[zone] = client.create_subnet(VpcId=vpc_id, CidrBlock=str(next(blocks)), AvailabilityZone=zone,
                                         TagSpecifications=spec("subnet", subnet_tags))["Subnet"]["SubnetId"]
    client.create_security_group(GroupName=f"karpy-{vpc_id}", Description="karpy nodes", VpcId=vpc_id,
                                 TagSpecifications=spec("security-group", sg_tags))
    return out


def ensure_default_network(client: Any, zones: Iterable[str] | None = None) -> dict[str, str]:
    """Create (once) the default network: zone -> subnet id. Idempotent: an existing network tagged
    :data:`DEFAULT_DISCOVERY_TAG` is returned as is."""
    key, value = DEFAULT_DISCOVERY_TAG
    existing = _describe_all(client, "describe_subnets", "Subnets", [{"Name": f"tag:{key}", "Values": [value]}])
    if existing:
        return {s["AvailabilityZone"]: s["SubnetId"]
                for s in sorted(existing, key=lambda s: (s["AvailabilityZone"], s["SubnetId"]))}
    return _create_network(client, {key: value}, {key: value}, _DEFAULT_CIDR, zones)


def _concrete_tags(tags: Mapping[str, str]) -> dict[str, str]:
    """Tags that satisfy a selector term (``*`` = any value: use the key itself as the value)."""
    return {k: (k if v == "*" else v) for k, v in tags.items()}


def ensure_network_for(client: Any, nodeclass: EC2NodeClass, zones: Iterable[str] | None = None,
                       warnings: list[str] | None = None, *, given_subnets: bool = False,
                       given_security_groups: bool = False) -> bool:
    """Make the mocked VPC hold what ``nodeclass`` selects, as the user's real VPC would.

    The mocked EC2 starts empty, so a user's EC2NodeClass selects nothing until its network
    exists (a ``karpy.io`` Network manifest, :mod:`awsprovider.apis.network`, says what exists and
    is built first). When the NodeClass still selects no subnet (or no security group):

    * its ``status.subnets`` / ``status.securityGroups`` (a ``kubectl get -o yaml`` dump) are
      created with their ids, zones and names, carrying the tags of the first tag term;
    * else subnet terms by ``id`` are created with that id -- its zone is not known, so the ids
      are spread over the region's zones in sorted order and ``warnings`` says so -- and the
      first tag term gets one subnet per zone carrying its tags (``*`` = the key as value);
    * security-group terms by ``id`` / ``name`` are created with that id / name, the first tag
      term (or the subnet tags) gives a security group carrying its tags.

    ``given_subnets`` / ``given_security_groups``: a karpy.io Network defines the VPC's subnets /
    security groups. Then they are what exists and nothing is created for that kind: a NodeClass
    that selects none of them stays unresolved (its ``SubnetsReady`` / ``SecurityGroupsReady``
    condition is False, :mod:`awsprovider.nodeclassstatus`), as against a real VPC.

    Returns True when something was created.
    """
    from awsprovider.ec2.network import SecurityGroupSpec, SubnetSpec, build_network

    resolved = resolve_nodeclass(client, nodeclass)
    if (resolved.subnets or given_subnets) and (resolved.security_groups or given_security_groups):
        return False
    spec, status = nodeclass.spec, nodeclass.status
    tag_terms = [t for t in spec.subnet_selector_terms if t.tags and not t.id]
    sg_tag_terms = [t for t in spec.security_group_selector_terms if t.tags and not t.id and not t.name]
    subnet_tags = _concrete_tags(tag_terms[0].tags) if tag_terms else {}
    sg_tags = _concrete_tags(sg_tag_terms[0].tags) if sg_tag_terms else subnet_tags
    subnets: list[SubnetSpec] = []
    if not resolved.subnets and not given_subnets:
        if status.subnets:
            subnets = [SubnetSpec(s.zone, s.id, s.zone_id, subnet_tags) for s in status.subnets]
        else:
            if zones is None:
                azs = client.describe_availability_zones()["AvailabilityZones"]
                zones = sorted(z["ZoneName"] for z in azs if z.get("ZoneType", "availability-zone") == "availability-zone")
            zone_list = list(zones)
            ids = [t.id for t in spec.subnet_selector_terms if t.id]
            for i, sid in enumerate(ids):
                subnets.append(SubnetSpec(zone_list[i % len(zone_list)], sid))
            if ids and warnings is not None:
                placed = ", ".join(f"{s.id} in {s.zone}" for s in subnets)
                warnings.append(f"EC2NodeClass {nodeclass.metadata.name}: the zones of subnets selected by id are "
                                f"not known (give the EC2NodeClass status.subnets or a karpy.io Network); the mocked "
                                f"VPC puts {placed}")
            if tag_terms:
                subnets.extend(SubnetSpec(z, tags=subnet_tags) for z in zone_list)
    groups: list[SecurityGroupSpec] = []
    if not resolved.security_groups and not given_security_groups:
        if status.security_groups:
            groups = [SecurityGroupSpec(g.id, g.name, sg_tags) for g in status.security_groups]
        else:
            groups = [SecurityGroupSpec(t.id, t.name, _concrete_tags(t.tags))
                      for t in spec.security_group_selector_terms if t.id or t.name]
            if sg_tag_terms or (subnets and not groups):
                groups.append(SecurityGroupSpec(tags=sg_tags))
    if not subnets and not groups:
        return False
    build_network(client, subnets, groups, vpc_tags=subnet_tags)
    return True
