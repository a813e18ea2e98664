"""``AWSCloudProvider``: karpy's CloudProvider for AWS. Mirrors pkg/cloudprovider/cloudprovider.go
(``Create``, ``Delete``, ``GetInstanceTypes``, ``instanceToNodeClaim``) and pkg/utils/utils.go ``GetTags``.

One provider owns one mocked EC2 (moto + the fleet model, :class:`awsprovider.ec2.backend.MockedEC2`),
started once in the constructor; the instance-type catalogue is read once per provider (the
backend's catalogue cache). Every launch -- successful or not -- leaves a
:class:`~awsprovider.instance.LaunchRecord` in :attr:`AWSCloudProvider.launches` keyed by NodeClaim
name; ``provider.launches[name].fleet_block()`` is the JSON ``fleet`` block.

Instance types come from :class:`awsprovider.instancetype.InstanceTypeProvider` (upstream
``InstanceTypeProvider.List``: offerings reflect prices and the ICE cache); tests may inject an
*instance-type source* instead, a callable ``(resolved_nodeclass) -> list[InstanceType]``.
``get_instance_types`` hands out fresh objects (``list``); the launch path reads the provider's
read-only prototypes (``prototypes``), which it never mutates. NodeOverlays are applied by
:mod:`awsprovider.overlay` when present (upstream ``InstanceTypeStore.ApplyAll``).

Each provider's mocked EC2 is scoped to its own client and moto account (see
:mod:`awsprovider.ec2.backend`): providers may run side by side, in threads too; ``close()`` (or
``with``) drops its moto state.
:meth:`AWSCloudProvider.with_scenario` re-uses the running backend and its catalogue with another
price table or capacity scenario (the old provider must not be used afterwards).
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any

from awsprovider.capacityreservation import RESERVATION_CACHE_TTL, CapacityReservationProvider
from awsprovider.ec2.backend import MockedEC2
from awsprovider.ec2.capacity import CapacityModel, parse_capacity_spec
from awsprovider.interruption import InterruptionController
from awsprovider import overlay
from awsprovider.drift import is_drifted as _nodeclass_drift
from awsprovider.drift import resolved_static_hash
from awsprovider.instancecache import InstanceCache
from awsprovider.instance import (
    LAUNCH_TEMPLATE_NOT_FOUND_CODE,
    Instance,
    InstanceProvider,
    LaunchContext,
    LaunchRecord,
    PreparedLaunch,
)
from awsprovider.labels import (
    LABEL_EBS_CSI_ZONE,
    NORMALIZED_LABELS,
    LABEL_CAPACITY_RESERVATION_ID,
    LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE,
    LABEL_CAPACITY_RESERVATION_TYPE,
    LABEL_INSTANCE_TENANCY,
    LABEL_NODECLASS,
    LABEL_TOPOLOGY_ZONE_ID,
    WELL_KNOWN_LABELS,
)
from awsprovider.launchtemplate import AMI
from awsprovider.apis.ec2nodeclass import EXTRA_KINDS
from awsprovider.instancetype import InstanceTypeProvider
from awsprovider.nodeclass import (
    DEFAULT_NODECLASS_NAME,
    ResolvedNodeClass,
    default_nodeclass,
    ensure_default_network,
    ensure_network_for,
    resolve_nodeclass,
)
from awsprovider import nodeclassstatus
from awsprovider.subnets import LaunchSubnet
from awsprovider.ec2.capacityreservations import build_user_reservations
from awsprovider.ec2.network import build_user_network
from awsprovider.ec2.regions import check_region
from awsprovider.unavailableofferings import UnavailableOfferings
from karpy.cloudprovider.types import (
    MIN_VALUES_POLICY_STRICT,
    CreateError,
    InstanceType,
    InsufficientCapacityError,
    NodeClaimNotFoundError,
    NodeClassNotReadyError,
    ProviderController,
)
from karpy.options import Options
from karpy.scheduling.labels import (
    ARCHITECTURE_AMD64,
    ARCHITECTURE_ARM64,
    CAPACITY_TYPE_RESERVED,
    LABEL_ARCH,
    LABEL_CAPACITY_TYPE,
    LABEL_NODEPOOL,
    LABEL_ZONE,
    OP_IN,
)
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements
from karpy.scheduling.resources import to_quantities

__all__ = ["AWSCloudProvider", "NODECLASS_HASH_VERSION", "instance_to_nodeclaim", "parse_provider_id"]

ANNOTATION_NODECLASS_HASH = "karpenter.k8s.aws/ec2nodeclass-hash"
ANNOTATION_NODECLASS_HASH_VERSION = "karpenter.k8s.aws/ec2nodeclass-hash-version"
ANNOTATION_INSTANCE_PROFILE = "karpenter.k8s.aws/instance-profile-name"
#: pkg/apis/v1/ec2nodeclass.go EC2NodeClassHashVersion.
#: aws:pkg/apis/v1/ec2nodeclass.go EC2NodeClassHashVersion
NODECLASS_HASH_VERSION = "v6"
#: CreateFleet records the provider's mocked EC2 keeps in ``ec2.records`` (the newest): each
#: launch keeps its own on ``launches[name].fleet_record``, so a long run holds no more
FLEET_RECORDS_KEPT = 256
EKS_CLUSTER_NAME_TAG = "eks:eks-cluster-name"
#: the NodeClass this provider supports (cloudprovider.go GetSupportedNodeClasses)
NODECLASS_GROUP = "karpenter.k8s.aws"
NODECLASS_KIND = "EC2NodeClass"
#: EKS Auto Mode's built-in NodeClass group (``eks.amazonaws.com/NodeClass``): not modelled
EKS_AUTO_MODE_GROUP = "eks.amazonaws.com"
#: core pkg/controllers/nodepool/readiness/controller.go
NODECLASS_NOT_FOUND_REASON = "NodeClassNotFound"
NODECLASS_NOT_FOUND_MESSAGE = "NodeClass not found on cluster"
#: pkg/apis/v1/ec2nodeclass.go RestrictedTagPatterns.
RESTRICTED_TAG_PATTERNS = (
    re.compile(r"^kubernetes\.io/cluster/[0-9A-Za-z][A-Za-z0-9\-_]*$"),
    re.compile(r"^" + re.escape(LABEL_NODEPOOL) + r"$"),
    re.compile(r"^" + re.escape(EKS_CLUSTER_NAME_TAG) + r"$"),
    re.compile(r"^" + re.escape(LABEL_NODECLASS) + r"$"),
    re.compile(r"^karpenter\.sh/nodeclaim$"),
)
#: Stub AMIs (the AMI contents are not modelled, only the grouping by architecture).
DEFAULT_AMIS: tuple[AMI, ...] = (
    AMI("ami-0karpyamd64000000", Requirements(Requirement(LABEL_ARCH, OP_IN, [ARCHITECTURE_AMD64])), "al2023-amd64"),
    AMI("ami-0karpyarm64000000", Requirements(Requirement(LABEL_ARCH, OP_IN, [ARCHITECTURE_ARM64])), "al2023-arm64"),
)
_PROVIDER_ID = re.compile(r"(?P<provider>.*):///(?P<zone>.*)/(?P<id>.*)")
_RESERVATION_LABELS = frozenset({LABEL_CAPACITY_RESERVATION_ID, LABEL_CAPACITY_RESERVATION_TYPE,
                                 LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE})

InstanceTypeSource = Callable[[ResolvedNodeClass], Sequence[InstanceType]]


def parse_provider_id(provider_id: str) -> tuple[str, str]:
    """utils.go ParseInstanceID: ``aws:///<zone>/<id>`` -> (zone, id)."""
    m = _PROVIDER_ID.fullmatch(provider_id or "")
    if m is None:
        raise ValueError(f"parsing instance id {provider_id}")
    return m.group("zone"), m.group("id")


def _nonzero(rl: Mapping[str, int]) -> dict[str, Any]:
    return to_quantities({k: v for k, v in rl.items() if v})


_STR_ONLY = frozenset({str})


def _deep_copy_nodeclaim(nodeclaim: Any) -> Any:
    """``nodeclaim.model_copy(deep=True)``, faster. Most of a deep copy's time goes into walking
    the requirement value lists element by element (core hands over up to 600 instance-type
    names). Their elements are ``str`` (immutable), so a shallow ``list(values)`` is already a
    deep copy of such a list; seeding ``deepcopy``'s memo with those copies makes it use them
    instead of walking the lists. Everything else is deep-copied exactly as before, and a list
    holding anything but ``str`` is left to ``deepcopy`` (no seeding)."""
    memo: dict[int, Any] = {}
    spec = getattr(nodeclaim, "spec", None)
    for req in getattr(spec, "requirements", None) or ():
        values = getattr(req, "values", None)
        if type(values) is list and set(map(type, values)) <= _STR_ONLY:
            memo[id(values)] = list(values)
    if not memo:
        return nodeclaim.model_copy(deep=True)
    # The originals stay alive for the whole call (``nodeclaim`` holds them), so their ids cannot
    # be reused by objects deepcopy creates meanwhile.
    return copy.deepcopy(nodeclaim, memo)


def instance_to_nodeclaim(instance: Instance, it: InstanceType | None, nodeclass: ResolvedNodeClass,
                          nodeclaim: Any) -> Any:
    """cloudprovider.go instanceToNodeClaim, merged into a copy of the requesting NodeClaim the way
    core's launch does (``lo.Assign(nodeClaim.Labels, created.Labels)``: the provider's labels win).

    Labels: every single-valued instance-type requirement (no reservation labels), zone, zone id
    (from the NodeClass subnet of that zone), capacity type, tenancy, the reservation id / type /
    interruptible of a reserved launch, nodepool (from the tags).
    """
    labels: dict[str, str] = {}
    if it is not None:
        for key, req in it.requirements.items():
            if key in _RESERVATION_LABELS or req.complement or len(req.values) != 1:
                continue
            labels[key] = next(iter(req.values))
    labels[LABEL_ZONE] = instance.zone
    zone_id = nodeclass.zone_id(instance.zone)
    if zone_id:
        labels[LABEL_TOPOLOGY_ZONE_ID] = zone_id
    labels[LABEL_CAPACITY_TYPE] = instance.capacity_type
    labels[LABEL_INSTANCE_TENANCY] = instance.tenancy
    if instance.capacity_type == CAPACITY_TYPE_RESERVED and instance.capacity_reservation is not None:
        rid, rtype, interruptible = instance.capacity_reservation
        labels[LABEL_CAPACITY_RESERVATION_ID] = rid
        labels[LABEL_CAPACITY_RESERVATION_TYPE] = rtype
        labels[LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE] = "true" if interruptible else "false"
    if instance.tags.get(LABEL_NODEPOOL):
        labels[LABEL_NODEPOOL] = instance.tags[LABEL_NODEPOOL]
    created = _deep_copy_nodeclaim(nodeclaim)
    created.metadata.labels = {**(nodeclaim.metadata.labels or {}), **labels}
    created.metadata.annotations = {
        **(nodeclaim.metadata.annotations or {}),
        ANNOTATION_NODECLASS_HASH: resolved_static_hash(nodeclass),
        ANNOTATION_NODECLASS_HASH_VERSION: NODECLASS_HASH_VERSION,
        ANNOTATION_INSTANCE_PROFILE: nodeclass.nodeclass.status.instance_profile or "",
    }
    if it is not None:
        created.status.capacity = _nonzero(it.capacity)
        created.status.allocatable = _nonzero(it.allocatable())
    created.status.provider_id = f"aws:///{instance.zone}/{instance.id}"
    created.status.image_id = instance.image_id
    return created


def tag_error(nodeclass: Any) -> str | None:
    """utils.go GetTags' error for ``spec.tags`` keys matching RestrictedTagPatterns (None when
    every key is allowed): the nodeclass validation reconciler's ``TagValidationFailed`` message
    and Create's NodeClassNotReady error."""
    bad = sorted(k for k in (nodeclass.spec.tags or {}) if any(p.match(k) for p in RESTRICTED_TAG_PATTERNS))
    if not bad:
        return None
    return "tags failed validation requirements (tags=" + ", ".join(f'"{k}"' for k in bad) + ")"


def _nodeclass_name_of(obj: Any) -> str:
    ref = None
    spec = getattr(obj, "spec", None)
    if spec is not None:
        ref = getattr(spec, "node_class_ref", None)
        if ref is None:  # (a NodePool's is in its template; a NodeClaim's spec has no template)
            template = getattr(spec, "template", None)
            if template is not None:
                ref = getattr(getattr(template, "spec", None), "node_class_ref", None)
    name = getattr(ref, "name", None) if ref is not None else None
    return name or DEFAULT_NODECLASS_NAME


class AWSCloudProvider:
    """karpy's CloudProvider for AWS (see the module docstring).

    ``prices``: a table date, a path or None (newest table) -- :class:`awsprovider.pricing.PricingProvider`.
    ``unavailable``: capacity specs ``TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE`` for the mocked EC2.
    ``nodeclasses``: EC2NodeClass objects (a default one is used when none is given / referenced).
    ``overlays``: NodeOverlay objects (applied by :mod:`awsprovider.overlay` when available).
    ``catalog_cache``: False reads the catalogue from moto even when the on-disk cache
    (:mod:`awsprovider.ec2.catalogcache`) holds it.
    """

    def __init__(
        self,
        region: str = "us-east-1",
        prices: Any = None,
        clock: Any = None,
        unavailable: Iterable[str] = (),
        nodeclasses: Iterable[Any] = (),
        overlays: Iterable[Any] = (),
        *,
        instance_type_source: InstanceTypeSource | None = None,
        min_values_policy: str = MIN_VALUES_POLICY_STRICT,
        options: Options | None = None,
        cluster_name: str = "karpy",
        amis: Sequence[AMI] = DEFAULT_AMIS,
        catalog_cache: bool = True,
        price_region: str | None = None,
        networks: Iterable[Any] = (),
        _ec2: MockedEC2 | None = None,
    ) -> None:
        from awsprovider.pricing import PricingProvider

        if clock is None:
            from karpy.sim.clock import VirtualClock

            clock = VirtualClock()
        self.region = region
        self.clock = clock
        self.cluster_name = cluster_name
        #: Karpenter's operator options (karpy.options); when given, its min-values policy wins
        self.options = options or Options(min_values_policy=min_values_policy)
        min_values_policy = self.min_values_policy = self.options.min_values_policy
        self.amis = tuple(amis)
        self.price_region = price_region
        self.pricing = prices if isinstance(prices, PricingProvider) else PricingProvider(
            region, prices, table_region=price_region)
        self.unavailable_specs = tuple(unavailable)
        #: what the provider did not model or assumed (``karpy.simulate`` reports them)
        self.warnings: list[str] = []
        self.networks = list(networks)
        self.ec2 = self._mocked_ec2(_ec2, catalog_cache)
        self.ice_cache = UnavailableOfferings(clock)
        self.interruption = InterruptionController(self.ice_cache)
        #: the ReservedCapacity feature gate (karpy.featuregates; on by default as upstream)
        self.reserved_capacity = self.options.feature_gates.reserved_capacity
        self.capacity_reservations = CapacityReservationProvider(self.ec2.client, clock.now)
        self.interruption.capacity_reservations = self.capacity_reservations
        self.instance_types = InstanceTypeProvider(region, self.ec2.catalog, self.pricing, self.ice_cache,
                                                   capacity_reservations=self.capacity_reservations,
                                                   reserved_capacity=self.reserved_capacity)
        self.instances = InstanceProvider(self.ec2, self.ice_cache, clock, well_known=WELL_KNOWN_LABELS,
                                          min_values_policy=min_values_policy, cluster_name=cluster_name,
                                          capacity_reservations=self.capacity_reservations,
                                          reserved_capacity=self.reserved_capacity)
        self.nodeclasses: dict[str, Any] = {nc.metadata.name: nc for nc in nodeclasses}
        self.overlays = list(overlays)
        self._overlay_prices = overlay.overlay_prices(self.overlays) if self.overlays else {}
        self._resolved: dict[str, ResolvedNodeClass] = {}
        self._source = instance_type_source
        self.launches: dict[str, LaunchRecord] = {}
        self._by_provider_id: dict[str, str] = {}
        self._nodepools: dict[str, Any] = {}
        self._index_of: tuple[InstanceType, ...] | None = None
        self._index: dict[str, InstanceType] = {}
        self._launch_security_groups: dict[str, tuple[str, ...]] = {}
        #: instance.go instanceCache: IsDrifted's DescribeInstances entries (awsprovider.instancecache)
        self.instance_cache = InstanceCache(self._describe_instance)
        #: provider ids of the input's NodeClaims (adopt_nodeclaim): real instances, not in the mock
        self._adopted: set[str] = set()
        self._status_amis: dict[int, tuple[Any, tuple[AMI, ...]]] = {}
        #: (alias family, pinned version) -> its stand-in AMIs (_alias_amis)
        self._pinned_alias_amis: dict[tuple[str, str], tuple[AMI, ...]] = {}
        #: NodeClass name -> its status.conditions as last reconciled (awsprovider.nodeclassstatus)
        self._conditions: dict[str, list[Any]] = {}

    def _mocked_ec2(self, ec2: MockedEC2 | None, catalog_cache: bool) -> MockedEC2:
        """A started mocked EC2 with the default and the manifests' networks, or ``ec2`` (a sweep's
        reused backend) set to this run's prices, capacity scenario and reservations."""
        if ec2 is not None:
            ec2.set_scenario(self.pricing, CapacityModel.from_specs(list(self.unavailable_specs)))
            ec2.reservations.restore()  # a new run: the reservations as the manifests define them
            return ec2
        check_region(self.region)
        ec2 = MockedEC2(self.region, price_book=self.pricing, unavailable=self.unavailable_specs, clock=self.clock.now,
                        records_limit=FLEET_RECORDS_KEPT)
        ec2.start()
        try:
            if not catalog_cache:  # --no-cache: read the catalogue from moto, not the on-disk cache
                ec2.catalog.disk_cache = None
            ensure_default_network(ec2.client)
            for net in self.networks:
                build_user_network(ec2.client, net)
                build_user_reservations(ec2.reservations, net)
        except BaseException:
            ec2.stop()  # a Network EC2 refuses: the backend's moto account is released, not leaked
            raise
        return ec2

    #: manifest kinds this provider adds to karpy's loader
    EXTRA_KINDS = EXTRA_KINDS
    #: operator.go init(): the EBS CSI zone alias added to core's NormalizedLabels at start-up
    #: (karpy.cloudprovider.registry.register_provider)
    NORMALIZED_LABELS = NORMALIZED_LABELS
    #: apis/v1/doc.go cloudprovider.ReservedCapacityLabels (InstanceTypeNotFound drift of a reserved node)
    reserved_capacity_labels = frozenset({LABEL_CAPACITY_RESERVATION_ID, LABEL_CAPACITY_RESERVATION_TYPE})

    @classmethod
    def preload(cls) -> None:
        """Import what the first provider of a process imports on first use -- moto's EC2 models
        and request dispatcher (:func:`awsprovider.ec2.backend.preload_moto`) -- so the ``karpy``
        CLI can freeze them out of the collector's generations before it runs
        (:func:`karpy.cli.preload_cloud_provider`). Idempotent and thread-safe; changes no state."""
        from awsprovider.ec2.backend import preload_moto

        preload_moto()

    @classmethod
    def from_options(cls, options: Any) -> AWSCloudProvider:
        """Factory for simulations (``karpy.cloudproviders`` entry point ``aws``): the region and
        price table (``price_region``: another region's table as a proxy), injected capacity
        errors, and the manifests' EC2NodeClasses, NodeOverlays and ``karpy.io`` Networks.
        ``options.extra["catalog_cache"] = False`` bypasses the on-disk catalogue cache. The
        manifests' NodePools are checked against the NodeClasses (:meth:`check_nodepools`)."""
        manifests = options.manifests
        extra = (getattr(manifests, "extra", None) or {}) if manifests else {}
        nodeclasses = list(extra.get("EC2NodeClass", ()))
        overlays = list(getattr(manifests, "nodeoverlays", ())) if manifests else []
        provider = cls(options.region or "us-east-1", options.prices, options.clock, tuple(options.unavailable),
                       nodeclasses, overlays, price_region=getattr(options, "price_region", None),
                       networks=list(extra.get("Network", ())), options=getattr(options, "options", None),
                       catalog_cache=bool((getattr(options, "extra", None) or {}).get("catalog_cache", True)))
        provider.warnings.extend(provider.pricing_warnings())
        try:
            provider.prepare(list(manifests.nodepools) if manifests is not None else [], bool(nodeclasses))
        except BaseException:
            provider.close()
            raise
        return provider

    def prepare(self, nodepools: Sequence[Any], nodeclasses_given: bool = True) -> None:
        """What a run does before it asks for instance types (``simulate`` and the
        ``instance-types`` / ``prices diff`` commands alike): check the NodePools against the
        NodeClasses, build the network each given NodeClass selects (and list its capacity
        reservations), note rejected overlays."""
        self.check_nodepools(nodepools, nodeclasses_given=nodeclasses_given)
        given_subnets, given_groups = self._network_defines()
        for nc in list(self.nodeclasses.values()):
            ensure_network_for(self.ec2.client, nc, warnings=self.warnings, given_subnets=given_subnets,
                               given_security_groups=given_groups)
            # resolves now: the reservations' warnings and a NodeClass that is not Ready are said
            resolved = self.resolve_nodeclass(nc.metadata.name)
            note = nodeclassstatus.describe(nc.metadata.name, resolved.conditions) if resolved is not None else None
            if note is not None and note not in self.warnings:
                self.warnings.append(note)
        self.warnings.extend(self.overlay_warnings(nodepools))

    def _network_defines(self) -> tuple[bool, bool]:
        """Whether the manifests' karpy.io Networks define the VPC's subnets / security groups
        (then they are all that exists: :func:`awsprovider.nodeclass.ensure_network_for`)."""
        return (any(n.spec.subnets for n in self.networks), any(n.spec.security_groups for n in self.networks))

    def pricing_warnings(self) -> list[str]:
        """The price table stands in for something else: another region's (``price_region``) or
        another date's (no table had the asked date)."""
        meta = self.pricing.prices_metadata()
        out = []
        if meta.get("proxy"):
            out.append(f"PROXY prices: the {meta['region']} table ({meta['date']}) prices this {self.region} run "
                       f"(--price-region); real {self.region} prices differ")
        if meta.get("requested_date"):
            out.append(f"no {meta['region']} price table dated {meta['requested_date']}: using {meta['date']}, "
                       "the newest on or before it")
        return out

    def manifest_warnings(self) -> list[str]:
        """What the provider skipped, assumed or rejected in the manifests (``karpy.simulate`` adds
        them to the run's warnings): NodePools it ignores, subnet zones it assumed, NodeOverlays
        that failed validation."""
        return list(self.warnings)

    def check_nodepools(self, nodepools: Sequence[Any], nodeclasses_given: bool = True) -> None:
        """Stand-in for core's NodePool readiness controller and ``nodepoolutils.ListManaged``,
        which read the NodeClass through the kube client:

        * a NodePool of EKS Auto Mode (``nodeClassRef`` ``eks.amazonaws.com/NodeClass``) is not
          managed by this provider: upstream's provisioner never lists it (ListManaged). karpy
          marks it not ready (so the provisioner ignores it) and warns -- it is never given a
          substitute NodeClass. (Other groups, e.g. ``karpy.testing``'s Karpenter test NodeClass
          ``karpenter.test.sh/TestNodeClass``, keep karpy's documented default EC2NodeClass;)
        * a NodePool referencing an EC2NodeClass the manifests do not define (when they define
          some) gets ``NodeClassReady=False`` reason ``NodeClassNotFound`` "NodeClass not found on
          cluster" and ``Ready=False`` (readiness/controller.go), and a warning. When the manifests
          define no EC2NodeClass at all, every reference gets karpy's default one (documented).
        """
        from karpy.api.meta import Condition

        for np in nodepools:
            ref = np.spec.template.spec.node_class_ref
            if ref is None:
                continue
            name = np.metadata.name
            if ref.group == EKS_AUTO_MODE_GROUP:
                reason, message = "UnsupportedNodeClass", (
                    f"nodeClassRef {ref.group}/{ref.kind} is not supported by the AWS provider "
                    f"(it supports {NODECLASS_GROUP}/{NODECLASS_KIND})")
                self.warnings.append(f"NodePool {name}: {message} (EKS Auto Mode: karpy models self-managed "
                                     "Karpenter's AWS provider, not Auto Mode's built-in NodeClass); Karpenter "
                                     "ignores the NodePool")
            elif (ref.group, ref.kind) != (NODECLASS_GROUP, NODECLASS_KIND):
                continue  # e.g. karpy.testing's karpenter.test.sh/TestNodeClass: the default EC2NodeClass
            elif nodeclasses_given and ref.name not in self.nodeclasses:
                reason, message = NODECLASS_NOT_FOUND_REASON, NODECLASS_NOT_FOUND_MESSAGE
                self.warnings.append(f"NodePool {name}: EC2NodeClass {ref.name!r} not found "
                                     f"(NodeClassReady=False, {reason}: {message}); Karpenter ignores the NodePool")
            else:
                if not nodeclasses_given and ref.name not in self.nodeclasses:
                    self.nodeclasses[ref.name] = default_nodeclass(ref.name)
                continue
            np.status.conditions = [c for c in np.status.conditions if c.type not in ("Ready", "NodeClassReady")] + [
                Condition(type="NodeClassReady", status="False", reason=reason, message=message),
                Condition(type="Ready", status="False", reason="NodeClassReady", message=message)]

    def overlay_warnings(self, nodepools: Sequence[Any]) -> list[str]:
        """One warning per NodeOverlay that failed validation (its ValidationSucceeded condition):
        Karpenter does not apply it."""
        if not self.overlays:
            return []
        out = []
        for ov in overlay.order_by_weight(self.overlays):
            err = overlay.runtime_validate(ov)
            if err is not None:
                out.append(f"NodeOverlay {ov.metadata.name}: rejected (ValidationSucceeded=False, RuntimeValidation: "
                           f"{err}); Karpenter does not apply it")
        return out

    @classmethod
    def price_dates(cls, region: str) -> list[str]:
        """Dates of the bundled price tables of ``region``, oldest first (``prices: all`` in a
        ``karpy sweep``); empty for a region without tables."""
        from awsprovider.pricing import list_tables

        return [date for _, date in list_tables(region)]

    def prices_metadata(self) -> dict[str, Any]:
        """``{"date", "source"}`` of the price table, for the JSON document."""
        return self.pricing.prices_metadata()

    def explain_launch(self, nodeclaim_name: str, *, compact: bool = False) -> dict[str, Any] | None:
        """The launch path of a NodeClaim for explain output: what each filter rejected, the
        types kept by the cut to 60 (in price order), the CreateFleet request (strategy,
        overrides with priorities), the mocked EC2's decisions (what it picked and why) and the
        errors. None when the provider never launched that NodeClaim. ``compact`` (the JSON
        document's explain block): each decision's considered overrides as their count."""
        rec = self.launches.get(nodeclaim_name)
        return rec.explain(compact) if rec is not None else None

    def release_launch(self, nodeclaim_name: str) -> None:
        """Let go of a gone NodeClaim's launch record (karpy.sim.retention: a long run keeps the
        launch detail of its first gone NodeClaims only); explain_launch and fleet_record then
        answer None for it."""
        self.launches.pop(nodeclaim_name, None)

    def fleet_record(self, nodeclaim_name: str) -> dict[str, Any] | None:
        """The JSON ``fleet`` block of a NodeClaim's launch: the CreateFleet request as sent and the
        errors EC2 returned (None when no CreateFleet was sent for it)."""
        rec = self.launches.get(nodeclaim_name)
        return rec.fleet_block() if rec is not None else None

    # -- protocol -------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """cloudprovider.go Name."""
        return "aws"

    def well_known_labels(self) -> frozenset[str]:
        """Core well-known labels plus the AWS ones (labels.go init)."""
        return WELL_KNOWN_LABELS

    def node_labels(self, nodeclaim: Any) -> dict[str, str]:
        """What the cloud side puts on the instance's Node beyond the kubelet's labels
        (karpy.nodeclaim.registration): the EBS CSI node plugin's topology key, registered on every
        node (aws-ebs-csi-driver pkg/driver/node.go NodeGetInfo, ``topology.ebs.csi.aws.com/zone``)."""
        zone = (nodeclaim.metadata.labels or {}).get(LABEL_ZONE)
        return {LABEL_EBS_CSI_ZONE: zone} if zone else {}

    def close(self) -> None:
        """Stop the mocked EC2."""
        self.ec2.stop()

    def __enter__(self) -> AWSCloudProvider:
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def with_scenario(self, prices: Any = None, unavailable: Iterable[str] = (),
                      overlays: Iterable[Any] | None = None) -> AWSCloudProvider:
        """A provider on the same running backend (catalogue read once) with another price table and
        capacity scenario, a fresh ICE cache and no launch records. ``self`` must not be used after."""
        return AWSCloudProvider(
            self.region, prices, self.clock, unavailable, self.nodeclasses.values(),
            self.overlays if overlays is None else overlays,
            instance_type_source=self._source, min_values_policy=self.min_values_policy,
            cluster_name=self.cluster_name, amis=self.amis, price_region=self.price_region, _ec2=self.ec2,
            options=self.options, networks=self.networks,
        )

    # -- nodeclasses ---------------------------------------------------------------------------
    def resolve_nodeclass(self, name: str) -> ResolvedNodeClass | None:
        """The NodeClass with its resolved subnets/security groups (cached); None when unknown."""
        hit = self._resolved.get(name)
        if hit is not None:
            if (hit.nodeclass.spec.capacity_reservation_selector_terms and self.reserved_capacity
                    and float(self.clock.now()) - hit.reservations_listed_at >= RESERVATION_CACHE_TTL):
                hit = self._resolved[name] = self._with_reservations(hit)
            return hit
        nc = self.nodeclasses.get(name)
        if nc is None:
            if name != DEFAULT_NODECLASS_NAME:
                return None
            nc = default_nodeclass(name)
            self.nodeclasses[name] = nc
        given_subnets, given_groups = self._network_defines()
        ensure_network_for(self.ec2.client, nc, given_subnets=given_subnets, given_security_groups=given_groups)
        resolved = self._with_reservations(resolve_nodeclass(self.ec2.client, nc))
        resolved = dataclasses.replace(resolved, conditions=tuple(self._reconcile_conditions(resolved)))
        self._resolved[name] = resolved
        return resolved

    def _reconcile_conditions(self, resolved: ResolvedNodeClass) -> list[Any]:
        """nodeclass/controller.go Reconcile (:mod:`awsprovider.nodeclassstatus`) over what was
        resolved now, from the conditions last reconciled (at first: the manifest's
        ``status.conditions``, e.g. a ``kubectl get -o yaml`` dump's)."""
        nc = resolved.nodeclass
        conditions = nodeclassstatus.reconcile_conditions(
            nc, subnets=resolved.subnets, security_groups=resolved.security_groups, amis=self.amis_for(resolved),
            tag_error=tag_error(nc), reserved_capacity=self.reserved_capacity, now=float(self.clock.now()),
            previous=self._conditions.get(nc.metadata.name))
        self._conditions[nc.metadata.name] = conditions
        return conditions

    def nodeclass_readiness(self, nodepool: Any) -> Any | None:
        """What core's NodePool readiness controller reads of the NodePool's EC2NodeClass
        (readiness/controller.go; :func:`karpy.provisioning.nodepoolvalidation.reconcile_status`):
        its ``Ready`` condition, ``NODECLASS_NOT_FOUND`` when the cluster has no such EC2NodeClass,
        None for a NodePool whose NodeClass is not an EC2NodeClass (upstream ignores it; karpy's
        earlier rules apply: check_nodepools, karpy's default EC2NodeClass)."""
        from karpy.api.meta import Condition
        from karpy.provisioning.nodepoolvalidation import NODECLASS_NOT_FOUND

        ref = nodepool.spec.template.spec.node_class_ref
        if ref is None or (ref.group, ref.kind) != (NODECLASS_GROUP, NODECLASS_KIND):
            return None
        resolved = self.resolve_nodeclass(ref.name)
        if resolved is None:
            return NODECLASS_NOT_FOUND
        return resolved.ready() or Condition(type="Ready", status="Unknown")

    def nodeclass_statuses(self) -> dict[str, Any]:
        """The JSON document's ``nodeclasses``: each EC2NodeClass resolved in the run, by name,
        with its status as last reconciled (subnets, security groups, conditions)."""
        from karpy.api.conditionset import condition_document

        out: dict[str, Any] = {}
        for name in sorted(self._resolved):
            r = self._resolved[name]
            out[name] = {
                "kind": NODECLASS_KIND,
                "subnets": [{"id": s.id, "zone": s.zone, "zone_id": s.zone_id} for s in r.subnets],
                "security_groups": [{"id": gid, "name": gname} for gid, gname in r.security_groups],
                "conditions": [condition_document(c) for c in r.conditions],
            }
        return out

    def _with_reservations(self, resolved: ResolvedNodeClass) -> ResolvedNodeClass:
        """The NodeClass's ``status.capacityReservations`` (nodeclass/capacityreservation.go, which
        runs only with the ReservedCapacity gate), listed now. A ``kubectl get -o yaml`` status
        whose reservations the selector does not find is reported (karpy lists reservations from
        the mocked EC2, where a karpy.io Network defines them)."""
        nc = resolved.nodeclass
        terms = nc.spec.capacity_reservation_selector_terms
        if not terms or not self.reserved_capacity:
            return resolved
        reservations = self.capacity_reservations.resolve(terms)
        found = {r.id for r in reservations}
        missing = [r.id for r in nc.status.capacity_reservations if r.id not in found]
        note = (f"EC2NodeClass {nc.metadata.name}: status.capacityReservations {', '.join(missing)} are not in the "
                "mocked EC2 (define them in a karpy.io/v1alpha1 Network spec.capacityReservations); Karpenter "
                "would not launch into them")
        if missing and note not in self.warnings:
            self.warnings.append(note)
        for err in self.capacity_reservations.errors:
            if err not in self.warnings:
                self.warnings.append(f"EC2NodeClass {nc.metadata.name}: {err}")
        return dataclasses.replace(resolved, capacity_reservations=reservations,
                                   reservations_listed_at=float(self.clock.now()))

    # -- instance types ------------------------------------------------------------------------
    def _nodepool(self, name: str) -> Any:
        """The NodePool overlays are evaluated for: the one ``get_instance_types`` last saw, else
        (a NodeClaim created without its NodePool ever being listed, e.g. a direct ``create``) a
        NodePool with that name and no template labels -- the only NodePool fields overlay
        evaluation reads (upstream's store would answer UnevaluatedNodePoolError instead)."""
        nodepool = self._nodepools.get(name)
        if nodepool is None:
            from karpy.api.nodepool import NodePool

            nodepool = NodePool.model_validate({"metadata": {"name": name}, "spec": {"template": {"spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": DEFAULT_NODECLASS_NAME},
                "requirements": []}}}})
        return nodepool

    def _types_for(self, nodeclass: ResolvedNodeClass, nodepool_name: str,
                   *, read_only: bool = False) -> Sequence[InstanceType]:
        """The NodeClass's instance types, overlaid for the NodePool. ``read_only``: the launch
        path's view -- the provider's prototypes (no copies; the same tuple while nothing changed,
        which lets the launch filters memoise) instead of fresh objects."""
        its: Sequence[InstanceType]
        if self._source is not None:
            its = list(self._source(nodeclass))
        elif read_only:
            its = self.instance_types.prototypes(nodeclass, overlay_prices=self._overlay_prices)
        else:
            its = self.instance_types.list(nodeclass, overlay_prices=self._overlay_prices)
        if self.overlays and nodepool_name:
            its = overlay.apply_overlays(self._nodepool(nodepool_name), its, self.overlays)
        return its

    def get_instance_types(self, nodepool: Any) -> list[InstanceType]:
        """cloudprovider.go GetInstanceTypes: every type of the NodePool's NodeClass (overlaid)."""
        name = _nodeclass_name_of(nodepool)
        nodeclass = self.resolve_nodeclass(name)
        if nodeclass is None:
            return []
        np_name = getattr(getattr(nodepool, "metadata", None), "name", "") or ""
        if np_name:
            self._nodepools[np_name] = nodepool
        return list(self._types_for(nodeclass, np_name))

    def instance_types_key(self, nodepool: Any) -> tuple[Any, ...] | None:
        """A content key of what ``get_instance_types(nodepool)`` returns now (the optional
        CloudProvider method karpy.provisioning.schedulercache keys its cache by): equal between
        two calls exactly when the types would be equal. Upstream's provider caches ``List`` by
        the NodeClass, the unavailable-offerings sequence numbers and the reservation state
        (instancetype.go cacheKey / InjectOfferings); here the provider's prototype tuple stands
        for all of them (it is the same object while none changed: the NodeClass's settings and
        subnets, its reservations and their available counts, the ICE cache, prices and overlay
        prices), then what overlays are evaluated against: the NodeOverlays and the NodePool's
        template (by value, as JSON: the key is hashable and an object changed in place changes it). None for an injected instance-type source (no key) or an unknown
        NodeClass."""
        if self._source is not None:
            return None
        nodeclass = self.resolve_nodeclass(_nodeclass_name_of(nodepool))
        if nodeclass is None:
            return None
        np_name = getattr(getattr(nodepool, "metadata", None), "name", "") or ""
        if np_name:
            self._nodepools[np_name] = nodepool
        prototypes = self.instance_types.prototypes(nodeclass, overlay_prices=self._overlay_prices)
        overlays: tuple[Any, ...] = ()
        if self.overlays and np_name:
            overlays = (tuple(o.model_dump_json() for o in self.overlays), np_name,
                        nodepool.spec.template.model_dump_json())
        return (prototypes, overlays)

    # -- create ----------------------------------------------------------------------------------
    def _tags(self, nodeclass: ResolvedNodeClass, nodeclaim: Any) -> dict[str, str]:
        """utils.go GetTags (restricted user tags -> NodeClassNotReady, like upstream)."""
        user = dict(nodeclass.nodeclass.spec.tags or {})
        err = tag_error(nodeclass.nodeclass)
        if err is not None:
            raise NodeClassNotReadyError(err)
        static = {
            f"kubernetes.io/cluster/{self.cluster_name}": "owned",
            LABEL_NODEPOOL: (nodeclaim.metadata.labels or {}).get(LABEL_NODEPOOL, ""),
            EKS_CLUSTER_NAME_TAG: self.cluster_name,
            LABEL_NODECLASS: nodeclass.name,
        }
        return {**user, **static}

    def _context(self, nodeclass: ResolvedNodeClass) -> LaunchContext:
        return LaunchContext(
            nodeclass_name=nodeclass.name,
            subnets=tuple(LaunchSubnet(s.id, s.zone, s.zone_id, s.available_ip_address_count) for s in nodeclass.subnets),
            amis=self.amis_for(nodeclass),
            security_group_ids=tuple(g for g, _ in nodeclass.security_groups),
            context=nodeclass.nodeclass.spec.context,
        )

    def _prepare(self, nodeclaim: Any) -> tuple[PreparedLaunch, ResolvedNodeClass, Sequence[InstanceType]]:
        name = nodeclaim.metadata.name
        record = LaunchRecord(name)
        self.launches[name] = record
        nc_name = _nodeclass_name_of(nodeclaim)
        nodeclass = self.resolve_nodeclass(nc_name)
        if nodeclass is None:
            err = InsufficientCapacityError(f'resolving nodeclass, ec2nodeclasses.karpenter.k8s.aws "{nc_name}" not found')
            record.error = str(err)
            raise err
        ready = nodeclass.ready()
        if ready is not None and ready.status == "False":  # cloudprovider.go Create
            not_ready = NodeClassNotReadyError(ready.message or "")
            record.error = str(not_ready)
            raise not_ready
        if ready is not None and ready.status != "True":
            unknown = CreateError(f"resolving nodeclass readiness, nodeclass is in Ready=Unknown, {ready.message or ''}",
                                  "NodeClassReadinessUnknown", "NodeClass is in Ready=Unknown")
            record.error = str(unknown)
            raise unknown
        tags = self._tags(nodeclass, nodeclaim)
        its = self._types_for(nodeclass, (nodeclaim.metadata.labels or {}).get(LABEL_NODEPOOL, ""), read_only=True)
        ctx = self._context(nodeclass)
        # the security groups the launch template carries (moto's CreateFleet does not put them on
        # the instance; drift compares against them, see is_drifted)
        self._launch_security_groups[name] = ctx.security_group_ids
        try:
            prepared = self.instances.prepare(ctx, nodeclaim, tags, its)
        except Exception as e:
            rec = getattr(e, "launch_record", None)
            record.error = str(e)
            if rec is not None:
                self.launches[name] = rec
            raise
        self.launches[name] = prepared.record
        return prepared, nodeclass, its

    def _type_named(self, its: Sequence[InstanceType], name: str) -> InstanceType | None:
        """The first type of ``its`` named ``name`` (None if absent). For the prototypes tuple --
        the same immutable tuple object on every launch while no offering changed -- a name index
        built once per tuple replaces a scan of the whole catalogue per launch (``setdefault``
        keeps the first of equal names, as the scan did). Other sequences are scanned."""
        if not isinstance(its, tuple):
            return next((t for t in its if t.name == name), None)
        if self._index_of is not its:
            index: dict[str, InstanceType] = {}
            for t in its:
                index.setdefault(t.name, t)
            self._index_of, self._index = its, index  # keeps the tuple (and its id) alive
        return self._index.get(name)

    def _finish(self, prepared: PreparedLaunch, nodeclass: ResolvedNodeClass, its: Sequence[InstanceType]) -> Any:
        instance = self.instances.complete(prepared)
        if instance.capacity_type == CAPACITY_TYPE_RESERVED and instance.capacity_reservation is not None:
            rid, rtype, interruptible = instance.capacity_reservation
            self.capacity_reservations.mark_launched(rid)  # cloudprovider.go Create
            prepared.record.capacity_reservation = {
                "id": rid, "type": rtype, "interruptible": interruptible,
                "offering_price": self.launch_price(prepared.record.nodeclaim),
                "on_demand_price": self.pricing.on_demand_price(instance.instance_type)}
        it = self._type_named(its, instance.instance_type)
        created = instance_to_nodeclaim(instance, it, nodeclass, prepared.nodeclaim)
        self._by_provider_id[created.status.provider_id] = instance.id
        return created

    def create(self, nodeclaim: Any) -> Any:
        """cloudprovider.go Create: launch one NodeClaim (its CreateFleet is flushed immediately)."""
        (out,) = self.create_many([nodeclaim])
        if isinstance(out, Exception):
            raise out
        return out

    def create_many(self, nodeclaims: Sequence[Any]) -> list[Any]:
        """Launch several NodeClaims at one virtual instant: every request is prepared, identical
        requests are merged by the CreateFleet batcher into one call, then each result is handled.
        Returns, per NodeClaim, the launched NodeClaim or the exception it raised.

        instance.go Create retries a launch once when CreateFleet answers LaunchTemplateNotFound
        (the failed launch invalidated the cached template, so the retry re-creates it); the
        retries of one round are batched together again."""
        results: list[Any] = [None] * len(nodeclaims)
        pending = list(range(len(nodeclaims)))
        for attempt in (0, 1):
            staged: dict[int, tuple[PreparedLaunch, ResolvedNodeClass, Sequence[InstanceType]]] = {}
            for i in pending:
                try:
                    staged[i] = self._prepare(nodeclaims[i])
                    self.instances.submit(staged[i][0])
                except Exception as e:  # noqa: BLE001 - returned per NodeClaim
                    staged.pop(i, None)
                    results[i] = e
            self.instances.batcher.flush()
            pending = []
            for i, s in staged.items():
                try:
                    results[i] = self._finish(*s)
                except CreateError as e:
                    if attempt == 0 and e.condition_reason == LAUNCH_TEMPLATE_NOT_FOUND_CODE:
                        pending.append(i)
                    else:
                        results[i] = e
                except Exception as e:  # noqa: BLE001
                    results[i] = e
            if not pending:
                break
        return results

    def launch_price(self, nodeclaim_name: str) -> float | None:
        """$/h of the launched offering (the fleet model's chosen override price)."""
        rec = self.launches.get(nodeclaim_name)
        if rec is None or rec.instance is None:
            return None
        for d in rec.decisions:
            if d.chosen is not None and d.chosen.instance_type == rec.instance.instance_type and d.chosen.zone == rec.instance.zone:
                return d.chosen.price
        if rec.capacity_type == "spot":
            return self.pricing.spot_price(rec.instance.instance_type, rec.instance.zone)
        return self.pricing.on_demand_price(rec.instance.instance_type)

    # -- time: capacity changes, interruptions, objects applied during a run ---------------------
    @staticmethod
    def check_capacity_spec(spec: str) -> None:
        """Raise ``ValueError`` (CapacitySpecError) for a malformed capacity spec."""
        parse_capacity_spec(spec)

    def capacity_event(self, unavailable: Sequence[str] = (), available: Sequence[str] = ()) -> None:
        """A Scenario ``capacity`` event now: each ``unavailable`` spec starts an injected capacity
        error (its window begins now); each ``available`` spec ends every active rule written the
        same way (e.g. one started by ``--unavailable`` or an earlier event)."""
        now = float(self.clock.now())
        model = self.ec2.capacity
        for spec in available:
            wanted = parse_capacity_spec(spec)
            model.rules = [dataclasses.replace(r, end=min(r.end, now))
                           if (r.type_glob, r.zone_glob, r.capacity_type) == (wanted.type_glob, wanted.zone_glob,
                                                                             wanted.capacity_type) and r.end > now
                           else r for r in model.rules]
        for spec in unavailable:
            rule = parse_capacity_spec(spec)
            if rule.start < now:
                rule = dataclasses.replace(rule, start=now)
            model.add(rule)
        self.ec2.set_scenario(capacity=model)

    def next_capacity_change(self, now: float) -> float | None:
        """The next virtual time after ``now`` at which an offering may become launchable again: an
        ICE-cache entry expires (the cache treats an entry as gone once ``now > expiration``, so
        the next whole second after it) for an offering no injected rule fails for good then (a
        ``fail=N`` rule fails it only until retried N times), or an
        injected capacity window opens or closes. None when nothing will change (a permanent
        ``--unavailable`` rule: the run settles as before)."""
        times: list[float] = []
        snap_now = float(now)
        capacity = self.ec2.capacity
        for key, exp in self.ice_cache._offerings.items.items():
            if exp < snap_now:
                continue
            t = math.floor(exp) + 1.0
            capacity_type, instance_type, zone = (key.split(":") + ["", ""])[:3]
            # an offering an injected rule still fails for good at expiry would only fail again: no
            # change; a fail=N rule's failure is transient (each retry counts toward success), so its
            # expiry is when Karpenter's 10 s re-queue of the pending pods tries it again
            if not capacity.fails_for_good(instance_type, zone, capacity_type, t):
                times.append(t)
        for cache in (self.ice_cache._capacity_types, self.ice_cache._subnets):
            for exp in cache.items.values():
                if exp >= snap_now:
                    times.append(math.floor(exp) + 1.0)
        for rule in self.ec2.capacity.rules:
            for t in (rule.start, rule.end):
                if not math.isinf(t) and t > snap_now:
                    times.append(float(t))
        return min(times) if times else None

    def controllers(self, cluster: Any) -> list[ProviderController]:
        """The provider's controllers that act over time (karpy's simulation runs them): upstream's
        capacity-reservation ``capacitytype`` and ``expiration`` controllers
        (:mod:`awsprovider.controllers`), when the ReservedCapacity gate is on and the account has
        capacity reservations (otherwise they could never act, and are not run)."""
        from awsprovider.controllers.capacitytype import CONTROLLER_NAME as CAPACITY_TYPE, RECONCILE_PERIOD, \
            CapacityTypeController
        from awsprovider.controllers.expiration import CONTROLLER_NAME as EXPIRATION, ExpirationController

        store = self.ec2.reservations
        if not self.reserved_capacity or not store.reservations:
            return []
        capacity_type = CapacityTypeController(cluster, store.reservation_of, self.pricing.on_demand_price,
                                               self.reserved_capacity_labels, store.next_transition)
        expiration = ExpirationController(cluster, self.capacity_reservations.list, store.capacity_block_instances)
        return [ProviderController(CAPACITY_TYPE, RECONCILE_PERIOD, capacity_type.reconcile),
                ProviderController(EXPIRATION, RECONCILE_PERIOD, expiration.reconcile)]

    def check_capacity_reservation(self, reservation_id: str, action: str = "cancel") -> None:
        """Raise ``ValueError`` unless ``reservation_id`` is a reservation of the mocked account
        that EC2 can ``cancel`` (not a capacity block) or ``interrupt`` (an interruptible one)."""
        store = self.ec2.reservations
        if reservation_id not in store.reservations:
            known = ", ".join(sorted(store.reservations)) or "none (declare them in a Network's spec.capacityReservations)"
            raise ValueError(f"unknown capacity reservation {reservation_id!r} (known: {known})")
        if action == "interrupt":
            if not store.reservations[reservation_id].interruptible:
                raise ValueError(f"capacity reservation {reservation_id} is not interruptible (only an interruptible "
                                 "reservation's capacity is reclaimed with an interruption warning)")
            return
        if store.reservations[reservation_id].reservation_type == "capacity-block":
            raise ValueError(f"capacity reservation {reservation_id} is a Capacity Block, which EC2 cannot cancel")

    def cancel_capacity_reservation(self, reservation_id: str) -> None:
        """A Scenario ``cancel_reservation`` event: CancelCapacityReservation through boto3 against
        the mocked EC2 (its instances run on as on-demand; the capacity-type controller then demotes
        their NodeClaims). Raises ``ValueError`` with EC2's message when EC2 refuses (a capacity
        block cannot be cancelled)."""
        from botocore.exceptions import ClientError

        try:
            self.ec2.client.cancel_capacity_reservation(CapacityReservationId=reservation_id)
        except ClientError as e:
            raise ValueError(str(e.response.get("Error", {}).get("Message") or e)) from None

    def interrupt_reservation(self, cluster: Any, reservation_id: str) -> bool:
        """The owner of interruptible reservation ``reservation_id`` reclaims its capacity: EC2 sends
        each instance running in it an interruption warning (the interruption controller's
        capacity-reservation message: the reservation is marked unavailable, the NodeClaims are
        deleted) and terminates it two minutes later; the reservation shrinks by those instances."""
        store = self.ec2.reservations
        instances = set(store.reclaim(reservation_id))
        claims = [nc for nc in cluster.live_nodeclaims()
                  if (nc.status.provider_id or "").rsplit("/", 1)[-1] in instances]
        return self.interruption.capacity_reservation_interruption(cluster, claims)

    def reservation_costs(self, start: float, end: float) -> list[dict[str, Any]]:
        """What EC2 bills for the account's capacity reservations over ``[start, end]`` virtual
        seconds (:meth:`awsprovider.ec2.capacityreservations.CapacityReservationStore.bill`), at the
        run's on-demand prices."""
        return self.ec2.reservations.bill(start, end, self.pricing.on_demand_price)

    def interrupt(self, cluster: Any, nodeclaims: Sequence[Any]) -> bool:
        """A spot interruption warning for ``nodeclaims`` (:mod:`awsprovider.interruption`)."""
        return self.interruption.spot_interruption(cluster, nodeclaims)

    def apply(self, obj: Any) -> None:
        """An EC2NodeClass or NodeOverlay applied during a run replaces the one of that name (an
        EC2NodeClass is resolved and its status conditions reconciled at once)."""
        kind = getattr(obj, "kind", None) or type(obj).__name__
        name = obj.metadata.name
        if kind == "EC2NodeClass":
            self.nodeclasses[name] = obj
            self._resolved.pop(name, None)
            self.resolve_nodeclass(name)  # the nodeclass controller reconciles the update now
        elif kind == "NodeOverlay":
            self.overlays = [o for o in self.overlays if o.metadata.name != name] + [obj]
        else:
            raise ValueError(f"the AWS provider does not take {kind} objects at run time")

    def delete_object(self, kind: str, name: str) -> None:
        """A NodeOverlay deleted during a run stops applying (an EC2NodeClass is kept: upstream its
        deletion waits for its NodeClaims)."""
        if kind == "NodeOverlay":
            self.overlays = [o for o in self.overlays if o.metadata.name != name]

    # -- drift ------------------------------------------------------------------------------------
    def is_drifted(self, nodeclaim: Any) -> str | None:
        """cloudprovider.go IsDrifted: the EC2NodeClass drift reason of a launched NodeClaim
        (:mod:`awsprovider.drift`), None when not drifted or its NodeClass is unknown."""
        nodeclass = self.resolve_nodeclass(_nodeclass_name_of(nodeclaim))
        if nodeclass is None:
            return None
        instance = None
        try:
            _, instance_id = parse_provider_id(nodeclaim.status.provider_id or "")
            entry = self.instance_cache.get(instance_id)
            instance = dict(entry) if entry is not None else None
            launch_sgs = self._launch_security_groups.get(nodeclaim.metadata.name)
            if instance is not None and (launch_sgs or not instance.get("SecurityGroups")):
                # an EC2 instance keeps its launch template's security groups; moto's CreateFleet
                # reports the VPC's "default" group (or none) instead, so karpy's record of what
                # the launch asked for is the instance's truth
                instance["SecurityGroups"] = [{"GroupId": g} for g in launch_sgs or ()]
            rid = self.ec2.reservations.reservation_of(instance_id) if self.reserved_capacity else None
            if instance is not None and rid:  # types.go NewInstance: reserved iff the gate and a reservation id
                instance["CapacityReservationId"] = rid
        except Exception:  # noqa: BLE001 - an unknown instance cannot be checked (upstream: error, requeue)
            instance = None
        return _nodeclass_drift(self, nodeclaim, nodeclass, instance, ANNOTATION_NODECLASS_HASH,
                                ANNOTATION_NODECLASS_HASH_VERSION, NODECLASS_HASH_VERSION)

    def _describe_instance(self, instance_id: str) -> list[Mapping[str, Any]]:
        res = self.ec2.client.describe_instances(InstanceIds=[instance_id])
        return [i for r in res.get("Reservations", []) for i in r.get("Instances", [])]

    def amis_for(self, nodeclass: ResolvedNodeClass) -> tuple[AMI, ...]:
        """``nodeClass.Status.AMIs``: the EC2NodeClass's ``status.amis`` when it gives them (in their
        order, deprecated ones last, as the AMI provider sorts them), else karpy's stub AMIs (one tuple per NodeClass
        object, so the launch-template memo keeps hitting)."""
        status = nodeclass.nodeclass.status.amis
        if not status:
            return self._alias_amis(nodeclass.nodeclass)
        key = id(nodeclass.nodeclass)
        hit = self._status_amis.get(key)
        if hit is None or hit[0] is not nodeclass.nodeclass:
            # ami.go compareAMI: non-deprecated AMIs first (stable: otherwise the status order)
            amis = tuple(AMI(a.id, Requirements.from_node_selector_requirements(a.requirements), a.name)
                         for a in sorted(status, key=lambda a: a.deprecated))
            hit = self._status_amis[key] = (nodeclass.nodeclass, amis)
        return hit[1]

    def _alias_amis(self, nodeclass: Any) -> tuple[AMI, ...]:
        """The stub AMIs; for an alias pinned to a version (``al2023@v20240807``), stand-ins named by
        that version, so a version change resolves to other AMIs and drifts (ami.go: the alias is an
        SSM parameter per version, which karpy cannot read offline); said once per alias."""
        alias = nodeclass.alias()
        if alias is None or alias[1] == "latest" or not self.amis:
            return self.amis
        family, version = alias
        hit = self._pinned_alias_amis.get(alias)
        if hit is None:
            amis = tuple(AMI(f"ami-0{hashlib.sha256(f'{family}@{version}/{a.id}'.encode()).hexdigest()[:16]}",
                             a.requirements, f"{family.lower()}@{version}-{a.name}") for a in self.amis)
            hit = self._pinned_alias_amis[alias] = amis
            note = (f"EC2NodeClass {nodeclass.metadata.name}: alias {family.lower()}@{version}: its AMIs are karpy's "
                    f"stand-ins for that version ({', '.join(a.id for a in amis)}; the SSM parameter is not read "
                    "offline) -- a different version drifts nodes as new AMIs would, @latest never does")
            if note not in self.warnings:
                self.warnings.append(note)
        return hit

    def expected_ami(self, nodeclaim: Any) -> str | None:
        """ami.go MapToInstanceTypes for the NodeClaim's instance type: the first compatible AMI."""
        name = (nodeclaim.metadata.labels or {}).get("node.kubernetes.io/instance-type", "")
        nodeclass = self.resolve_nodeclass(_nodeclass_name_of(nodeclaim))
        if nodeclass is None:
            return None
        # the prototypes (read-only, name-indexed): a clone shares its prototype's requirements
        it = self._type_named(self._types_for(nodeclass, (nodeclaim.metadata.labels or {}).get(
            "karpenter.sh/nodepool", ""), read_only=True), name)
        if it is None:
            return None
        for ami in self.amis_for(nodeclass):
            if it.requirements.is_compatible(ami.requirements, WELL_KNOWN_LABELS):
                return ami.id
        return None

    def adopt_nodeclaim(self, nodeclaim: Any) -> Any:
        """A NodeClaim of the input (karpy.sim.existing), stamped as this provider stamps its own
        launches: karpy's EC2NodeClass hash digits and mocked AMI ids are not upstream's, so the
        dump's ``ec2nodeclass-hash`` and ``status.imageID`` cannot be compared with them; the claim
        gets the input EC2NodeClass's hash, the AMI it resolves for the instance type and the mocked
        account's zone id (a drift the node really has cannot be read from a dump). Returns a copy."""
        adopted = _deep_copy_nodeclaim(nodeclaim)
        nodeclass = self.resolve_nodeclass(_nodeclass_name_of(adopted))
        if nodeclass is not None:
            # the zone -> zone-id mapping is per AWS account; the mocked account's is the one its
            # offerings carry (else every node of a dump is InstanceTypeNotFound-drifted)
            labels = adopted.metadata.labels or {}
            zone_id = nodeclass.zone_id(labels.get(LABEL_ZONE, ""))
            if zone_id and LABEL_TOPOLOGY_ZONE_ID in labels:
                adopted.metadata.labels = {**labels, LABEL_TOPOLOGY_ZONE_ID: zone_id}
            adopted.metadata.annotations = {**(adopted.metadata.annotations or {}),
                                            ANNOTATION_NODECLASS_HASH: resolved_static_hash(nodeclass),
                                            ANNOTATION_NODECLASS_HASH_VERSION: NODECLASS_HASH_VERSION}
        ami = self.expected_ami(adopted)
        if ami is not None:
            adopted.status.image_id = ami
        if adopted.status.provider_id:
            self._adopted.add(adopted.status.provider_id)
        return adopted

    # -- delete ----------------------------------------------------------------------------------
    def delete(self, nodeclaim: Any) -> None:
        """cloudprovider.go Delete: terminate the instance in moto; NodeClaimNotFoundError if gone."""
        from botocore.exceptions import ClientError

        pid = nodeclaim.status.provider_id or ""
        if pid in self._adopted:  # an instance of the input's cluster: terminated (not in the mock)
            self._adopted.discard(pid)
            return
        try:
            _, instance_id = parse_provider_id(pid)
        except ValueError as e:
            raise NodeClaimNotFoundError(f"getting instance ID, {e}") from e
        try:
            res = self.ec2.client.describe_instances(InstanceIds=[instance_id])
        except ClientError as e:
            raise NodeClaimNotFoundError(f"instance not found (id={instance_id})") from e
        states = [i["State"]["Name"] for r in res.get("Reservations", []) for i in r.get("Instances", [])]
        if not states or all(s in ("shutting-down", "terminated") for s in states):
            # cloudprovider.go Delete: a reserved instance that is gone gives its reservation back
            rid = (nodeclaim.metadata.labels or {}).get(LABEL_CAPACITY_RESERVATION_ID, "")
            if rid:
                self.capacity_reservations.mark_terminated(rid)
            raise NodeClaimNotFoundError(f"instance terminated (id={instance_id})")
        self.ec2.client.terminate_instances(InstanceIds=[instance_id])
        self.instance_cache.delete(instance_id)
