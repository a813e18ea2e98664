"""Build the mocked VPC a user describes: subnets and security groups with *their* ids.

EC2 picks resource ids; a real cluster's EC2NodeClass names them (``subnetSelectorTerms: [{id:
subnet-0a1b...}]``, ``status.subnets``). moto's ``CreateSubnet``/``CreateSecurityGroup`` take no
id, so each resource is created through boto3 as usual and then re-filed under the wanted id in
moto's own EC2 backend of this account and region (``subnets[zone][id]``, ``groups[vpc][id]``) --
the only place karpy touches moto's internals, kept in this module. Everything else (filters,
DescribeSubnets, CreateFleet with that SubnetId) then works through the public API.

:func:`build_network` creates one VPC holding the given subnets and security groups; zones are
the region's zone names (a ``zone_id`` alone is mapped through DescribeAvailabilityZones).
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

__all__ = ["SecurityGroupSpec", "SubnetSpec", "build_network", "build_user_network", "existing_ids"]

#: the subnet size when neither a CIDR nor an IP count is given (as karpy's default network)
DEFAULT_SUBNET_PREFIX = 20
#: EC2 reserves 5 addresses in every subnet
EC2_RESERVED_IPS = 5


@dataclass(frozen=True)
class SubnetSpec:
    """A subnet to create: id ('' = moto picks), zone or zone id, tags, cidr, wanted IP count."""

    zone: str = ""
    id: str = ""
    zone_id: str = ""
    tags: Mapping[str, str] = field(default_factory=dict)
    cidr: str = ""
    available_ips: int | None = None


@dataclass(frozen=True)
class SecurityGroupSpec:
    """A security group to create: id ('' = moto picks), name ('' = derived), tags."""

    id: str = ""
    name: str = ""
    tags: Mapping[str, str] = field(default_factory=dict)


def _backend(client: Any, owner_id: str) -> Any:
    from moto.ec2.models import ec2_backends

    return ec2_backends[owner_id][client.meta.region_name]


def existing_ids(client: Any) -> tuple[set[str], set[str]]:
    """(subnet ids, security group ids) that already exist."""
    subnets = {s["SubnetId"] for p in client.get_paginator("describe_subnets").paginate() for s in p["Subnets"]}
    groups = {g["GroupId"] for p in client.get_paginator("describe_security_groups").paginate()
              for g in p["SecurityGroups"]}
    return subnets, groups


def _tag_spec(kind: str, tags: Mapping[str, str]) -> list[dict[str, Any]]:
    if not tags:
        return []
    return [{"ResourceType": kind, "Tags": [{"Key": k, "Value": v} for k, v in sorted(tags.items())]}]


def _prefix_for(ips: int | None) -> int:
    if ips is None:
        return DEFAULT_SUBNET_PREFIX
    return max(16, min(28, 32 - math.ceil(math.log2(ips + EC2_RESERVED_IPS))))


def _free_vpc_cidr(client: Any) -> str:
    """``10.<n+1>.0.0/16`` for the n-th VPC (the next free one if that is taken)."""
    vpcs = [v["CidrBlock"] for p in client.get_paginator("describe_vpcs").paginate() for v in p["Vpcs"]]
    used = set(vpcs)
    for step in range(256):
        cidr = f"10.{(len(vpcs) + 1 + step) % 256}.0.0/16"
        if cidr not in used:
            return cidr
    raise ValueError("no free 10.x.0.0/16 block left for another mocked VPC")


def build_network(client: Any, subnets: Sequence[SubnetSpec], groups: Sequence[SecurityGroupSpec] = (),
                  cidr: str = "", vpc_tags: Mapping[str, str] | None = None) -> dict[str, str]:
    """Create a VPC (``cidr`` or a free 10.x.0.0/16) with ``subnets`` and ``groups``; resources
    whose id already exists are skipped. Returns subnet id -> zone of the created subnets.
    Raises ``ValueError`` for an unknown zone / zone id or a CIDR outside the VPC."""
    have_subnets, have_groups = existing_ids(client)
    todo = [s for s in subnets if not s.id or s.id not in have_subnets]
    todo_groups = [g for g in groups if not g.id or g.id not in have_groups]
    if not todo and not todo_groups:
        return {}
    azs = client.describe_availability_zones()["AvailabilityZones"]
    by_id = {z["ZoneId"]: z["ZoneName"] for z in azs}
    names = {z["ZoneName"] for z in azs}
    vpc = client.create_vpc(CidrBlock=cidr or _free_vpc_cidr(client),
                            TagSpecifications=_tag_spec("vpc", vpc_tags or {}))["Vpc"]
    backend = _backend(client, vpc["OwnerId"])
    network = ipaddress.ip_network(vpc["CidrBlock"])
    taken = [ipaddress.ip_network(s.cidr) for s in todo if s.cidr]
    created: dict[str, str] = {}
    for spec in todo:
        zone = spec.zone or by_id.get(spec.zone_id, "")
        if zone not in names:
            raise ValueError(f"subnet {spec.id or '(no id)'}: zone {spec.zone or spec.zone_id!r} is not a zone of "
                             f"{client.meta.region_name} ({', '.join(sorted(names))})")
        block = spec.cidr
        if not block:
            prefix = _prefix_for(spec.available_ips)
            block = str(next(b for b in network.subnets(new_prefix=prefix)
                             if not any(b.overlaps(t) for t in taken)))
            taken.append(ipaddress.ip_network(block))
        sid = client.create_subnet(VpcId=vpc["VpcId"], CidrBlock=block, AvailabilityZone=zone,
                                   TagSpecifications=_tag_spec("subnet", spec.tags))["Subnet"]["SubnetId"]
        if spec.id and spec.id != sid:
            subnet = backend.subnets[zone].pop(sid)
            subnet.id = spec.id
            backend.subnets[zone][spec.id] = subnet
            _move_tags(backend, sid, spec.id)
            sid = spec.id
        created[sid] = zone
    taken_names = {x["GroupName"] for p in client.get_paginator("describe_security_groups").paginate(
        Filters=[{"Name": "vpc-id", "Values": [vpc["VpcId"]]}]) for x in p["SecurityGroups"]}
    for g in todo_groups:
        name = g.name or (f"karpy-{g.id}" if g.id else "")
        if not name:  # group names are unique per VPC (a VPC id may come back in a later run)
            name = next(f"karpy-{vpc['VpcId']}-{n}" for n in range(len(taken_names) + 1)
                        if f"karpy-{vpc['VpcId']}-{n}" not in taken_names)
        taken_names.add(name)
        gid = client.create_security_group(GroupName=name, Description="karpy nodes", VpcId=vpc["VpcId"],
                                           TagSpecifications=_tag_spec("security-group", g.tags))["GroupId"]
        if g.id and g.id != gid:
            group = backend.groups[vpc["VpcId"]].pop(gid)
            group.id = group.group_id = g.id
            backend.groups[vpc["VpcId"]][g.id] = group
            _move_tags(backend, gid, g.id)
    return created


def _move_tags(backend: Any, old_id: str, new_id: str) -> None:
    """moto keeps tags by resource id (TagBackend.tags): a resource given the user's id keeps the
    tags it was created with (else a tag selector would not find a subnet the Network gave an id)."""
    tags = backend.tags.pop(old_id, None)
    if tags:
        backend.tags[new_id] = tags


def build_user_network(client: Any, network: Any) -> dict[str, str]:
    """Build a ``karpy.io/v1alpha1`` Network manifest (:class:`awsprovider.apis.network.Network`)."""
    spec = network.spec
    try:
        return build_network(
            client,
            [SubnetSpec(s.zone, s.id, s.zone_id, dict(s.tags), s.cidr, s.available_ips) for s in spec.subnets],
            [SecurityGroupSpec(g.id, g.name, dict(g.tags)) for g in spec.security_groups],
            cidr=spec.cidr)
    except ValueError as err:
        raise ValueError(f"Network {network.metadata.name}: {err}") from None
    except ClientError as err:  # what EC2 refuses in it (overlapping subnets, a block outside the VPC): bad input
        error = err.response.get("Error", {})
        raise ValueError(f"Network {network.metadata.name}: EC2 refused it: {error.get('Code', '?')}: "
                         f"{error.get('Message', err)}") from None
