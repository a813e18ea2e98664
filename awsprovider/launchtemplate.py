"""Launch templates for a launch. Mirrors pkg/providers/launchtemplate/launchtemplate.go (``EnsureAll``,
``ensureLaunchTemplate``, ``LaunchTemplateName``) and the grouping of pkg/providers/amifamily/resolver.go
(``Resolve``: instance types by AMI, then by ``launchTemplateParams``).

What is modelled: the *grouping* (one launch template per AMI x max-pods x kube-reserved x
system-reserved), the name ``karpenter.k8s.aws/<hash of the options>``, find-or-create in EC2
(DescribeLaunchTemplates by name, CreateLaunchTemplate on NotFound), ``$Latest``, the per-provider
cache and its invalidation (``InvalidateCache`` on LaunchTemplateNotFound). What is stubbed: the
template contents beyond ``ImageId`` and the security groups (user data, block devices, metadata
options) and EFA parameters. Reserved launches (amifamily/resolver.go ``resolveLaunchTemplates``,
launchtemplate/types.go) get one template per capacity reservation id of the group, carrying
``CapacityReservationSpecification`` (``capacity-reservations-only`` + the target) and, for
capacity blocks / interruptible reservations, ``InstanceMarketOptions``; with the
``ReservedCapacity`` gate (``LaunchModeTargeted``) every other template says
``CapacityReservationPreference: none``.

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

from awsprovider.labels import (
    CAPACITY_RESERVATION_TYPE_CAPACITY_BLOCK,
    LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE,
    LABEL_CAPACITY_RESERVATION_TYPE,
)
from karpy.api.quantity import NANO
from karpy.cloudprovider.types import InstanceType
from karpy.scheduling.labels import CAPACITY_TYPE_RESERVED, CORE_WELL_KNOWN_LABELS
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
    capacity_reservation_id: str = ""


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

    def __init__(self, client: Any, cluster_name: str = "karpy", well_known: frozenset[str] = CORE_WELL_KNOWN_LABELS,
                 launch_mode_targeted: bool = True) -> None:
        self.client = client
        #: launchtemplate/types.go LaunchMode: targeted with the ReservedCapacity gate, else open
        self.launch_mode_targeted = launch_mode_targeted
        self.cluster_name = cluster_name
        self.well_known = well_known
        self._cache: dict[str, str] = {}
        self._names: dict[tuple[Any, ...], tuple[str, dict[str, Any]]] = {}
        self._commons: dict[tuple[Any, ...], int] = {}
        self._resolved: dict[tuple[Any, ...], tuple[Any, Any, list[tuple[str, dict[str, Any], tuple[InstanceType, ...]]]]] = {}
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
        Types without a compatible AMI are left out (upstream: not mapped to any AMI).

        Memoised when ``instance_types`` and ``amis`` are tuples (the launch path passes the filter
        memo's tuple of read-only prototypes and the provider's AMI tuple): the grouping is a pure
        function of those objects and the other arguments, so an identical call reuses the
        previous groups (fresh option dicts and type lists each time, as a fresh run returns)."""
        sgs = sorted(security_group_ids)
        tag_items = sorted((tags or {}).items())
        common = (nodeclass_name, tuple(sgs), tuple(tag_items), capacity_type, tenancy)
        memo_key: tuple[Any, ...] | None = None
        if isinstance(instance_types, tuple) and isinstance(amis, tuple):
            memo_key = (id(instance_types), id(amis), common)
            hit = self._resolved.get(memo_key)
            if hit is not None and hit[0] is instance_types and hit[1] is amis:
                return [(name, dict(opts), list(its)) for name, opts, its in hit[2]]
        out = self._resolve(instance_types, amis, nodeclass_name, sgs, tag_items, common, capacity_type, tenancy)
        if memo_key is not None:
            if len(self._resolved) >= 64:  # bounded: a new prototypes tuple makes old keys dead
                self._resolved.clear()
            # keeps the tuples (and their ids) alive while the entry exists
            self._resolved[memo_key] = (instance_types, amis, [(n, dict(o), tuple(i)) for n, o, i in out])
        return out

    def _resolve(
        self, instance_types: Sequence[InstanceType], amis: Sequence[AMI], nodeclass_name: str,
        sgs: list[str], tag_items: list[tuple[str, str]], common: tuple[Any, ...], capacity_type: str,
        tenancy: str,
    ) -> list[tuple[str, dict[str, Any], list[InstanceType]]]:
        groups: dict[str, tuple[dict[str, Any], list[InstanceType]]] = {}
        # Intern ``common`` as a small int (one per distinct value, for the provider's lifetime):
        # the per-type memo keys below then hash an int instead of re-hashing the nested tuple for
        # every type; equal ``common`` values map to the same int, so the keys stay equivalent.
        common_id = self._commons.setdefault(common, len(self._commons))
        for it in instance_types:
            ami = self._ami_for(it, amis)
            if ami is None:
                continue
            max_pods = int(it.capacity.get("pods", 0)) // NANO
            kube = _resources_key(it.overhead.kube_reserved)
            system = _resources_key(it.overhead.system_reserved)
            reservation_ids: list[str] = []
            reservation_type, interruptible = "", False
            if capacity_type == CAPACITY_TYPE_RESERVED:
                for o in it.offerings:
                    if o.capacity_type != CAPACITY_TYPE_RESERVED:
                        continue
                    reservation_ids.append(o.reservation_id)
                    if not reservation_type:  # offerings are prefiltered to one reservation type
                        reservation_type = o.requirements.get(LABEL_CAPACITY_RESERVATION_TYPE).any()
                        interruptible = o.requirements.get(LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE).any() == "true"
            # resolver.go resolveLaunchTemplates: one template per reservation id ("" = none)
            for rid in reservation_ids or [""]:
                # The name is a hash of the options: memoise it by a hashable image of the same values.
                key: tuple[Any, ...] = (common_id, ami.id, max_pods, tuple(kube), tuple(system))
                if rid:
                    key += (rid, reservation_type, interruptible)
                hit = self._names.get(key)
                if hit is None:
                    options: dict[str, Any] = {
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
                    if rid:  # only reserved templates carry these (the others keep their names)
                        options.update(capacity_reservation_id=rid, capacity_reservation_type=reservation_type,
                                       capacity_reservation_interruptible=interruptible)
                    hit = self._names[key] = (launch_template_name(options), options)
                name, opts = hit
                if name not in groups:
                    groups[name] = (dict(opts), [])
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
            rid = options.get("capacity_reservation_id") or ""
            if self.launch_mode_targeted:
                data["CapacityReservationSpecification"] = (
                    {"CapacityReservationPreference": "capacity-reservations-only",
                     "CapacityReservationTarget": {"CapacityReservationId": rid}} if rid
                    else {"CapacityReservationPreference": "none"})
                if rid and options.get("capacity_reservation_type") == CAPACITY_RESERVATION_TYPE_CAPACITY_BLOCK:
                    data["InstanceMarketOptions"] = {"MarketType": "capacity-block"}
                elif rid and options.get("capacity_reservation_interruptible"):
                    data["InstanceMarketOptions"] = {"MarketType": "interruptible-capacity-reservation"}
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
            out.append(LaunchTemplate(name, lt_id, options["image_id"], tuple(its), options["max_pods"],
                                      capacity_reservation_id=options.get("capacity_reservation_id") or ""))
        return out

    def invalidate(self, name: str) -> None:
        """launchtemplate.go InvalidateCache."""
        self._cache.pop(name, None)
