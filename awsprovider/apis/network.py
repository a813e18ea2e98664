"""``karpy.io/v1alpha1`` **Network**: the subnets and security groups that exist in the user's VPC.

The mocked EC2 starts empty; an EC2NodeClass selects subnets and security groups by id, by tags or
(security groups) by name, and those only match what exists. A Network manifest says what exists,
so a NodeClass written for a real cluster selects the same subnets -- with the same ids, zones and
tags -- in the mocked VPC::

    apiVersion: karpy.io/v1alpha1
    kind: Network
    metadata: {name: prod-vpc}
    spec:
      cidr: 10.20.0.0/16                      # optional (default: a free 10.x.0.0/16)
      subnets:
        - {id: subnet-0a1b2c3d4e5f60001, zone: us-east-1a, tags: {karpenter.sh/discovery: prod}}
        - {id: subnet-0a1b2c3d4e5f60002, zone: us-east-1b, availableIPs: 250}
      securityGroups:
        - {id: sg-0a1b2c3d4e5f60001, name: eks-cluster-sg-prod, tags: {karpenter.sh/discovery: prod}}
      capacityReservations:                   # EC2 capacity reservations of the account (ODCRs, blocks)
        - {id: cr-0a1b2c3d4e5f60001, instanceType: m7i.xlarge, zone: us-east-1a, instanceCount: 4,
           availableCount: 3, instanceMatchCriteria: targeted, tags: {karpenter.sh/discovery: prod}}
        - {instanceType: p5.48xlarge, zone: us-east-1b, instanceCount: 2, reservationType: capacity-block,
           endTime: "2026-01-02T00:00:00Z"}

Every subnet needs a ``zone`` (or ``zoneID``); ``id`` is optional (moto picks one); ``cidr`` is
optional (consecutive blocks of the VPC, sized for ``availableIPs`` when given, else /20). The
status of an ``EC2NodeClass`` (``status.subnets``: id, zone, zoneID; ``status.securityGroups``:
id, name), as ``kubectl get ec2nodeclass -o yaml`` prints it, is read the same way
(:mod:`awsprovider.nodeclass`).

A capacity reservation (:class:`NetworkCapacityReservation`) needs ``instanceType``, ``zone`` (or
``zoneID``) and ``instanceCount`` (EC2's TotalInstanceCount); ``availableCount`` (default: all)
is how many are free at the start; ``id`` (``cr-`` + lowercase hex/letters, default: the mocked
EC2 picks one), ``ownerID`` (default: the mocked account), ``instanceMatchCriteria`` (``open``,
the EC2 default, or ``targeted``), ``reservationType`` (``default`` or ``capacity-block``),
``interruptible``, ``tags``, ``startDate`` and ``endDate`` (RFC 3339; virtual time 0 is 2026-01-01T00:00:00Z;
``endTime`` is accepted for ``endDate``) and a capacity block's ``upfrontFee``
as EC2 describes them. An EC2NodeClass selects them with ``capacityReservationSelectorTerms``.
"""

from __future__ import annotations

import ipaddress
from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from awsprovider.apis.ec2text import Ec2Text
from karpy.api.meta import KubeModel, TypedObject

__all__ = ["Network", "NetworkCapacityReservation", "NetworkSecurityGroup", "NetworkSpec", "NetworkSubnet"]


def _cidr_block(value: str) -> str:
    """EC2's rule for a VPC's or a subnet's IPv4 CIDR block: a network address with a /16 to /28
    netmask (CreateVpc / CreateSubnet ``CidrBlock``: InvalidParameterValue, InvalidVpc.Range)."""
    if not value:
        return value
    try:
        block = ipaddress.IPv4Network(value)
    except ValueError as err:
        raise ValueError(f"not an IPv4 CIDR block such as 10.0.0.0/16 ({err})") from None
    if not 16 <= block.prefixlen <= 28:
        raise ValueError(f"/{block.prefixlen}: EC2 allows a block size between a /16 and a /28 netmask")
    return value


#: an IPv4 CIDR block EC2 accepts for a VPC or a subnet ("" = karpy picks one)
CidrBlock = Annotated[str, AfterValidator(_cidr_block)]


class NetworkSubnet(KubeModel):
    """One subnet: ``id`` (optional), ``zone`` or ``zoneID``, ``tags``, ``cidr``, ``availableIPs``."""

    id: Ec2Text = ""
    zone: str = ""
    zone_id: str = Field(default="", alias="zoneID")
    tags: dict[Ec2Text, Ec2Text] = Field(default_factory=dict)
    cidr: CidrBlock = ""
    available_ips: int | None = Field(default=None, alias="availableIPs", ge=1)

    @model_validator(mode="after")
    def _zone(self) -> NetworkSubnet:
        if not self.zone and not self.zone_id:
            raise ValueError("a subnet needs a zone (or zoneID)")
        return self


class NetworkSecurityGroup(KubeModel):
    """One security group: ``id`` (optional), ``name`` (optional), ``tags``."""

    id: Ec2Text = ""
    name: Ec2Text = ""
    tags: dict[Ec2Text, Ec2Text] = Field(default_factory=dict)


class NetworkCapacityReservation(KubeModel):
    """One EC2 capacity reservation (see the module doc)."""

    id: str = Field(default="", pattern=r"^(cr-[0-9a-z]+)?$")
    instance_type: str = Field(min_length=1)
    zone: str = ""
    zone_id: str = Field(default="", alias="zoneID")
    instance_count: int = Field(ge=1)
    available_count: int | None = Field(default=None, ge=0)
    owner_id: str = Field(default="", alias="ownerID", pattern=r"^([0-9]{12})?$")
    instance_match_criteria: Literal["open", "targeted"] = "open"
    reservation_type: Literal["default", "capacity-block"] = "default"
    interruptible: bool = False
    tags: dict[Ec2Text, Ec2Text] = Field(default_factory=dict)
    #: EC2 ``StartDate`` / ``EndDate`` (virtual time 0 is karpy.api.time.EPOCH); ``endTime`` is
    #: the earlier spelling (the EC2NodeClass status's name) and means ``endDate``
    start_date: datetime | None = None
    end_date: datetime | None = None
    end_time: datetime | None = None
    #: a capacity block's up-front price in $ (EC2 CapacityBlockOffering ``UpfrontFee``); without
    #: it the block is billed at the on-demand rate for its duration (modelled)
    upfront_fee: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _check(self) -> NetworkCapacityReservation:
        if not self.zone and not self.zone_id:
            raise ValueError("a capacity reservation needs a zone (or zoneID)")
        if self.available_count is not None and self.available_count > self.instance_count:
            raise ValueError(f"availableCount {self.available_count} exceeds instanceCount {self.instance_count}")
        if self.end_time is not None:
            if self.end_date is not None and self.end_date != self.end_time:
                raise ValueError("endTime and endDate disagree (endTime is the older name of endDate: give one)")
            self.end_date = self.end_time
        if self.start_date is not None and self.end_date is not None and not self.start_date < self.end_date:
            raise ValueError("startDate must be before endDate")
        if self.upfront_fee is not None and self.reservation_type != "capacity-block":
            raise ValueError("upfrontFee is the price of a capacity block (reservationType: capacity-block); an "
                             "ODCR is billed at the on-demand rate")
        return self


class NetworkSpec(KubeModel):
    cidr: CidrBlock = ""
    subnets: list[NetworkSubnet] = Field(default_factory=list)
    security_groups: list[NetworkSecurityGroup] = Field(default_factory=list)
    capacity_reservations: list[NetworkCapacityReservation] = Field(default_factory=list)

    @model_validator(mode="after")
    def _subnets_in_vpc(self) -> NetworkSpec:
        # CreateSubnet: a subnet's block lies inside its VPC's (InvalidSubnet.Range)
        if self.cidr:
            vpc = ipaddress.IPv4Network(self.cidr)
            for i, subnet in enumerate(self.subnets):
                if subnet.cidr and not ipaddress.IPv4Network(subnet.cidr).subnet_of(vpc):
                    raise ValueError(f"subnets[{i}].cidr {subnet.cidr} is not inside the VPC's cidr {self.cidr}")
        return self


class Network(TypedObject):
    """karpy.io/v1alpha1 Network (cluster-scoped)."""

    API_VERSION = "karpy.io/v1alpha1"
    KIND = "Network"
    CLUSTER_SCOPED = True

    spec: NetworkSpec = Field(default_factory=NetworkSpec)
