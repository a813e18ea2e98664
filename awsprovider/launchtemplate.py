"""Launch templates for a launch. Mirrors pkg/providers/launchtemplate/launchtemplate.go (``EnsureAll``,
``ensureLaunchTemplate``, ``LaunchTemplateName``) and the grouping of pkg/providers/amifamily/resolver.go
(``Resolve``: instance types by AMI, then by ``launchTemplateParams``).

What is modelled: the *grouping* (one launch template per AMI x max-pods x kube-reserved x
system-reserved), the name ``karpenter.k8s.aws/<hash of the options>``, find-or-create in EC2
(DescribeLaunchTemplates by name, CreateLaunchTemplate on NotFound), ``$Latest``, the per-provider
cache and its invalidation (``InvalidateCache`` on LaunchTemplateNotFound). What is stubbed: the
template contents beyond ``ImageId`` and the security groups (user data, block devices, metadata
options), EFA/reservation parameters (karpy models no EFA launches or capacity reservations).

Determinism. Upstream iterates Go maps (AMI -> types, params -> types), so the order of launch
template configs is random. karpy orders groups by the first appearance of their instance types in
the (price-ordered) list it is given, and types inside a group keep that order. The hash is
SHA-256 over a canonical JSON of the options (upstream: hashstructure's uint64), printed as an
unsigned decimal like upstream's ``fmt.Sprint(uint64)``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from karpy.api.quantity import NANO
from karpy.cloudprovider.types import InstanceType
from karpy.scheduling.labels import CORE_WELL_KNOWN_LABELS
from karpy.scheduling.requirements import Requirements

__all__ = [
    "LAUNCH_TEMPLATE_NAME_PREFIX",
    "LAUNCH_TEMPLATE_VERSION",
    "AMI",
    "LaunchTemplate",
    "LaunchTemplateProvider",
    "launch_template_name",
]

#: launchtemplate.go LaunchTemplateName: ``fmt.Sprintf("%s/%d", v1.Group, hash)``.
LAUNCH_TEMPLATE_NAME_PREFIX = "karpenter.k8s.aws/"
#: instance.go getLaunchTemplateConfigs: ``Version: "$Latest"``.
LAUNCH_TEMPLATE_VERSION = "$Latest"


@dataclass(frozen=True)
class AMI:
    """An ``EC2NodeClass.status.amis`` entry: id and the requirements an instance type must meet."""

    id: str
    requirements: Requirements = field(default_factory=Requirements)
    name: str = ""


@dataclass(frozen=True)
class LaunchTemplate:
    """One resolved launch template: name, id in EC2, AMI and the instance types it serves."""

    name: str
    id: str
    image_id: str
    instance_types: tuple[InstanceType, ...]
    max_pods: int
    zone: str = ""


def launch_template_name(options: Mapping[str, Any]) -> str:
    """``karpenter.k8s.aws/<uint64 hash of the options>`` (canonical JSON, SHA-256, first 8 bytes)."""
    blob = json.dumps(options, sort_keys=True, separators=(",", ":"), default=str).encode()
    return f"{LAUNCH_TEMPLATE_NAME_PREFIX}{int.from_bytes(hashlib.sha256(blob).digest()[:8], 'big')}"


def _resources_key(rl: Mapping[str, int]) -> list[tuple[str, int]]:
    return sorted((k, int(v)) for k, v in rl.items() if v)


class LaunchTemplateProvider:
    """Finds or creates launch templates in (mocked) EC2 and caches them by name.

    ``client`` is a boto3 EC2 client (the mocked backend's). ``cluster_name`` and
    ``security_group_ids`` go into the template options (and so into the hash).
    """

    def __init__(self, client: Any, cluster_name: str = "karpy", well_known: frozenset[str] = CORE_WELL_KNOWN_LABELS) -> None:
        self.client = client
        self.cluster_name = cluster_name
        self.well_known = well_known
        self._cache: dict[str, str] = {}
        self._names: dict[tuple[Any, ...], tuple[str, dict[str, Any]]] = {}
        self.created: list[str] = []

    # -- grouping (amifamily/resolver.go Resolve) ------------------------------------------
    def _ami_for(self, it: InstanceType, amis: Sequence[AMI]) -> AMI | None:
        """ami.go MapToInstanceTypes: the first AMI whose requirements are compatible with the type."""
        for ami in amis:
            if it.requirements.is_compatible(ami.requirements, self.well_known):
                return ami
        return None

    def resolve(
        self, instance_types: Sequence[InstanceType], amis: Sequence[AMI], nodeclass_name: str = "default",
        security_group_ids: Sequence[str] = (), tags: Mapping[str, str] | None = None,
        capacity_type: str = "on-demand", tenancy: str = "default",
    ) -> list[tuple[str, dict[str, Any], list[InstanceType]]]:
        """Group the types into (name, options, types) in first-appearance order (see module doc).
        Types without a compatible AMI are left out (upstream: not mapped to any AMI)."""
        groups: dict[str, tuple[dict[str, Any], list[InstanceType]]] = {}
        sgs = sorted(security_group_ids)
        tag_items = sorted((tags or {}).items())
        common = (nodeclass_name, tuple(sgs), tuple(tag_items), capacity_type, tenancy)
        for it in instance_types:
            ami = self._ami_for(it, amis)
            if ami is None:
                continue
            max_pods = int(it.capacity.get("pods", 0)) // NANO
            kube = _resources_key(it.overhead.kube_reserved)
            system = _resources_key(it.overhead.system_reserved)
            # The name is a hash of the options: memoise it by a hashable image of the same values.
            key = (common, ami.id, max_pods, tuple(kube), tuple(system))
            hit = self._names.get(key)
            if hit is None:
                options = {
                    "cluster": self.cluster_name,
                    "nodeclass": nodeclass_name,
                    "image_id": ami.id,
                    "max_pods": max_pods,
                    "kube_reserved": kube,
                    "system_reserved": system,
                    "security_groups": sgs,
                    "tags": tag_items,
                    "capacity_type": capacity_type,
                    "tenancy": tenancy,
                }
                hit = self._names[key] = (launch_template_name(options), options)
            name, options = hit
            if name not in groups:
                groups[name] = (dict(options), [])
            groups[name][1].append(it)
        return [(name, opts, its) for name, (opts, its) in groups.items()]

    # -- EC2 (launchtemplate.go ensureLaunchTemplate) --------------------------------------
    def ensure(self, name: str, options: Mapping[str, Any], tags: Mapping[str, str] | None = None) -> str:
        """Find the template by name (cache, then DescribeLaunchTemplates) or create it; returns its id."""
        cached = self._cache.get(name)
        if cached is not None:
            return cached
        from botocore.exceptions import ClientError

        try:
            out = self.client.describe_launch_templates(LaunchTemplateNames=[name])
            lt_id = str(out["LaunchTemplates"][0]["LaunchTemplateId"])
        except (ClientError, IndexError, KeyError):
            data: dict[str, Any] = {"ImageId": options["image_id"]}
            if options.get("security_groups"):
                data["SecurityGroupIds"] = list(options["security_groups"])
            kwargs: dict[str, Any] = {"LaunchTemplateName": name, "LaunchTemplateData": data}
            tag_list = [{"Key": k, "Value": v} for k, v in sorted((tags or {}).items())]
            if tag_list:
                kwargs["TagSpecifications"] = [{"ResourceType": "launch-template", "Tags": tag_list}]
            lt_id = str(self.client.create_launch_template(**kwargs)["LaunchTemplate"]["LaunchTemplateId"])
            self.created.append(name)
        self._cache[name] = lt_id
        return lt_id

    def ensure_all(
        self, instance_types: Sequence[InstanceType], amis: Sequence[AMI], nodeclass_name: str = "default",
        security_group_ids: Sequence[str] = (), tags: Mapping[str, str] | None = None,
        capacity_type: str = "on-demand", tenancy: str = "default",
    ) -> list[LaunchTemplate]:
        """launchtemplate.go EnsureAll: one launch template per group, created on first use."""
        out: list[LaunchTemplate] = []
        for name, options, its in self.resolve(
            instance_types, amis, nodeclass_name, security_group_ids, tags, capacity_type, tenancy
        ):
            lt_id = self.ensure(name, options, tags)
            out.append(LaunchTemplate(name, lt_id, options["image_id"], tuple(its), options["max_pods"]))
        return out

    def invalidate(self, name: str) -> None:
        """launchtemplate.go InvalidateCache."""
        self._cache.pop(name, None)
