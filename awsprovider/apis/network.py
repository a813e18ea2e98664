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

Every subnet needs a ``zone`` (or ``zoneID``); ``id`` is optional (moto picks one); ``cidr`` is
optional (consecutive blocks of the VPC, sized for ``availableIPs`` when given, else /20). The
status of an ``EC2NodeClass`` (``status.subnets``: id, zone, zoneID; ``status.securityGroups``:
id, name), as ``kubectl get ec2nodeclass -o yaml`` prints it, is read the same way
(:mod:`awsprovider.nodeclass`).
"""

from __future__ import annotations

from pydantic import Field, model_validator

from karpy.api.meta import KubeModel, TypedObject

__all__ = ["Network", "NetworkSecurityGroup", "NetworkSpec", "NetworkSubnet"]


class NetworkSubnet(KubeModel):
    """One subnet: ``id`` (optional), ``zone`` or ``zoneID``, ``tags``, ``cidr``, ``availableIPs``."""

    id: str = ""
    zone: str = ""
    zone_id: str = Field(default="", alias="zoneID")
    tags: dict[str, str] = Field(default_factory=dict)
    cidr: str = ""
    available_ips: int | None = Field(default=None, alias="availableIPs", ge=1)

    @model_validator(mode="after")
    def _zone(self) -> NetworkSubnet:
        if not self.zone and not self.zone_id:
            raise ValueError("a subnet needs a zone (or zoneID)")
        return self


class NetworkSecurityGroup(KubeModel):
    """One security group: ``id`` (optional), ``name`` (optional), ``tags``."""

    id: str = ""
    name: str = ""
    tags: dict[str, str] = Field(default_factory=dict)


class NetworkSpec(KubeModel):
    cidr: str = ""
    subnets: list[NetworkSubnet] = Field(default_factory=list)
    security_groups: list[NetworkSecurityGroup] = Field(default_factory=list)


class Network(TypedObject):
    """karpy.io/v1alpha1 Network (cluster-scoped)."""

    API_VERSION = "karpy.io/v1alpha1"
    KIND = "Network"
    CLUSTER_SCOPED = True

    spec: NetworkSpec = Field(default_factory=NetworkSpec)
