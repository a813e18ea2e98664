"""The instance provider's launch path. Mirrors pkg/providers/instance/instance.go (``Create``,
``filterInstanceTypes``, ``launchInstance``, ``getLaunchTemplateConfigs``, ``getOverrides``,
``updateUnavailableOfferingsCache``, ``getCapacityType``, ``getTenancyType``, ``combineFleetErrors``)
and pkg/providers/instance/types.go (``CreateFleetInputBuilder``, ``NewInstanceFromFleet``).

The request is built exactly as upstream builds it and sent through the boto3 client of the
mocked EC2 (:class:`awsprovider.ec2.backend.MockedEC2`); the provider never decides which override
launches -- the backend's fleet model does (docs/architecture.md). Every launch leaves a :class:`LaunchRecord`
(the request as sent, the response, the fleet model's decisions) for explain output.

A launch has two halves so that several NodeClaims can be launched at one virtual instant and
batched (:mod:`awsprovider.batcher`): :meth:`InstanceProvider.prepare` (filters -> truncate ->
capacity type -> subnets -> launch templates -> overrides -> request) and
:meth:`InstanceProvider.complete` (ICE cache, in-flight IPs, errors, instance).
:meth:`awsprovider.cloudprovider.AWSCloudProvider.create_many` drives both halves (and instance.go
Create's single retry on LaunchTemplateNotFound).

Determinism: ``combineFleetErrors`` joins the unique ``code: message`` strings of a Go set; karpy
sorts them. Launch-template configs are ordered as :mod:`awsprovider.launchtemplate` documents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from awsprovider.batcher import BatchTicket, CreateFleetBatcher
from awsprovider.filters import ALL_UNAVAILABLE_MESSAGE, FilterTrace, filter_instance_types
from awsprovider.labels import (
    CAPACITY_RESERVATION_TYPE_CAPACITY_BLOCK,
    LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE,
    LABEL_CAPACITY_RESERVATION_TYPE,
    LABEL_INSTANCE_TENANCY,
    TENANCY_DEDICATED,
    TENANCY_DEFAULT,
    WELL_KNOWN_LABELS,
)
from awsprovider.launchtemplate import AMI, LAUNCH_TEMPLATE_VERSION, LaunchTemplateProvider
from awsprovider.subnets import LaunchSubnet, SubnetTracker, min_pods_by_zone
from karpy.cloudprovider.types import (
    MIN_VALUES_POLICY_STRICT,
    CreateError,
    InstanceType,
    InstanceTypes,
    InsufficientCapacityError,
)
from karpy.api.quantity import parse_nanos
from karpy.scheduling.labels import (
    CAPACITY_TYPE_ON_DEMAND,
    CAPACITY_TYPE_RESERVED,
    CAPACITY_TYPE_SPOT,
    LABEL_CAPACITY_TYPE,
    OP_IN,
)
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

if TYPE_CHECKING:  # pragma: no cover
    from awsprovider.ec2.fleet import FleetDecision

__all__ = [
    "FLEET_ERROR_PREFIX",
    "INSTANCE_TYPE_FLEXIBILITY_THRESHOLD",
    "MAX_INSTANCE_TYPES",
    "PRICE_OVERLAY_APPLIED_ANNOTATION",
    "SLR_ERROR_CODE",
    "UNFULFILLABLE_CAPACITY_ERROR_CODES",
    "Instance",
    "InstanceProvider",
    "LaunchContext",
    "LaunchRecord",
    "PreparedLaunch",
    "build_create_fleet_input",
    "capacity_reservation_details",
    "combine_fleet_errors",
    "get_capacity_reservation_type",
    "get_capacity_type",
    "get_tenancy_type",
]

#: instance.go maxInstanceTypes.
MAX_INSTANCE_TYPES = 60
#: instance.go instanceTypeFlexibilityThreshold (only logged upstream).
INSTANCE_TYPE_FLEXIBILITY_THRESHOLD = 5
#: core apis/v1alpha1 PriceOverlayAppliedAnnotationKey.
PRICE_OVERLAY_APPLIED_ANNOTATION = "karpenter.sh/price-overlay-applied"
#: core apis/v1 NodeClaimMinValuesRelaxedAnnotationKey.
MIN_VALUES_RELAXED_ANNOTATION = "karpenter.sh/nodeclaim-min-values-relaxed"
#: pkg/errors/errors.go unfulfillableCapacityErrorCodes.
UNFULFILLABLE_CAPACITY_ERROR_CODES: frozenset[str] = frozenset({
    "InsufficientInstanceCapacity",
    "MaxSpotInstanceCountExceeded",
    "VcpuLimitExceeded",
    "UnfulfillableCapacity",
    "Unsupported",
    "InsufficientFreeAddressesInSubnet",
    "MaxFleetCountExceeded",
    "ReservationCapacityExceeded",
})
#: pkg/errors/errors.go ServiceLinkedRoleCreationNotPermittedErrorCode.
SLR_ERROR_CODE = "AuthFailure.ServiceLinkedRoleCreationNotPermitted"
INSUFFICIENT_FREE_ADDRESSES_CODE = "InsufficientFreeAddressesInSubnet"
LAUNCH_TEMPLATE_NOT_FOUND_CODE = "InvalidLaunchTemplateName.NotFoundException"
FLEET_ERROR_PREFIX = "with fleet error(s), "
NO_OFFERINGS_MESSAGE = "no capacity offerings are currently available given the constraints"


# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LaunchContext:
    """What ``CloudProvider.Create`` resolved from the EC2NodeClass for a launch."""

    nodeclass_name: str
    subnets: tuple[LaunchSubnet, ...]
    amis: tuple[AMI, ...]
    security_group_ids: tuple[str, ...] = ()
    context: str | None = None


@dataclass
class Instance:
    """types.go Instance as built by NewInstanceFromFleet."""

    id: str
    instance_type: str
    zone: str
    subnet_id: str
    image_id: str
    capacity_type: str
    tenancy: str
    tags: dict[str, str]
    launch_time: float
    efa_count: int = 0
    #: types.go CapacityReservationDetails of a reserved launch: (id, type, interruptible)
    capacity_reservation: tuple[str, str, bool] | None = None


@dataclass
class LaunchRecord:
    """One NodeClaim's launch, for explain output (see :meth:`fleet_block`)."""

    nodeclaim: str
    capacity_type: str = ""
    allocation_strategy: str = ""
    request: dict[str, Any] | None = None
    response: dict[str, Any] | None = None
    fleet_record: Any = None  # awsprovider.ec2.backend.FleetRecord of the (batched) CreateFleet
    batch_size: int = 0
    candidates: list[str] = field(default_factory=list)
    after_filters: list[str] = field(default_factory=list)
    truncated: list[str] = field(default_factory=list)
    filters: FilterTrace = field(default_factory=FilterTrace)
    instance: Instance | None = None
    error: str | None = None
    #: a reserved launch: {"id", "type", "interruptible", "offering_price", "on_demand_price"}
    capacity_reservation: dict[str, Any] | None = None

    @property
    def decisions(self) -> tuple[FleetDecision, ...]:
        """The fleet model's unit decisions (FleetDecision) of the CreateFleet call."""
        return tuple(self.fleet_record.decisions) if self.fleet_record is not None else ()

    def overrides(self) -> list[dict[str, Any]]:
        """The request's overrides in order: instance_type, zone, subnet_id, priority."""
        out: list[dict[str, Any]] = []
        for ltc in (self.request or {}).get("LaunchTemplateConfigs") or []:
            for o in ltc.get("Overrides") or []:
                d: dict[str, Any] = {
                    "instance_type": o.get("InstanceType"),
                    "zone": o.get("AvailabilityZone"),
                    "subnet_id": o.get("SubnetId"),
                }
                if "Priority" in o:
                    d["priority"] = o["Priority"]
                out.append(d)
        return out

    def errors(self) -> list[dict[str, Any]]:
        """The response's Errors: error_code, instance_type, zone."""
        out = []
        for e in (self.response or {}).get("Errors") or []:
            ovr = (e.get("LaunchTemplateAndOverrides") or {}).get("Overrides") or {}
            out.append({"error_code": e.get("ErrorCode"), "instance_type": ovr.get("InstanceType"),
                        "zone": ovr.get("AvailabilityZone")})
        return out

    def fleet_block(self) -> dict[str, Any]:
        """The JSON document's ``fleet`` block (docs/contract.md); a reserved launch adds
        ``capacity_reservation`` (the reservation it launched into, Karpenter's offering price --
        on-demand / 10^7 -- unrounded, and the on-demand price EC2 bills the reservation at)."""
        out: dict[str, Any] = {
            "allocation_strategy": self.allocation_strategy,
            "capacity_type": self.capacity_type,
            "overrides": self.overrides(),
            "errors": self.errors(),
        }
        if self.capacity_reservation is not None:
            out["capacity_reservation"] = dict(self.capacity_reservation)
        return out

    def explain(self, compact: bool = False) -> dict[str, Any]:
        """fleet block + the fleet model's decisions and the launch-path cuts (``compact``: each
        decision's considered overrides as their count, FleetDecision.to_dict)."""
        d = self.fleet_block()
        d["decisions"] = [x.to_dict(compact) for x in self.decisions]
        d["batch_size"] = self.batch_size
        d["filters"] = dict(self.filters.rejected)
        d["truncated_to"] = list(self.truncated)
        d["error"] = self.error
        return d


@dataclass
class PreparedLaunch:
    """The first half of a launch: the request and what the second half needs."""

    nodeclaim: Any
    capacity_type: str
    tenancy: str
    tags: dict[str, str]
    instance_types: list[InstanceType]
    zonal_subnets: dict[str, LaunchSubnet]
    request: dict[str, Any]
    record: LaunchRecord
    ticket: BatchTicket | None = None
    #: ``min_pods_by_zone(instance_types, capacity_type)`` as computed for the subnet choice; the
    #: second half reuses it (same read-only types, same capacity type: the same value).
    min_pods_by_zone: dict[str, int] | None = None


@dataclass(frozen=True)
class _FilterOutcome:
    """What filterInstanceTypes + Truncate produced for one input (see the memo in
    :meth:`InstanceProvider.filter_instance_types`): the trace, the names after the filters
    (None when a filter left nothing), the truncated types, or the error text."""

    trace: FilterTrace
    after_filters: tuple[str, ...] | None
    truncated: tuple[InstanceType, ...]
    error: str | None


# --------------------------------------------------------------------------------------------
def _annotations(nodeclaim: Any) -> Mapping[str, str]:
    return getattr(nodeclaim.metadata, "annotations", None) or {}


def get_capacity_type(reqs: Requirements, instance_types: Sequence[InstanceType],
                      well_known: frozenset[str] = WELL_KNOWN_LABELS) -> str:
    """instance.go getCapacityType: reserved > spot when allowed and any type has an available
    offering compatible with ``reqs`` + ``capacity-type In [ct]``; else on-demand."""
    for ct in (CAPACITY_TYPE_RESERVED, CAPACITY_TYPE_SPOT):
        if not reqs.get(LABEL_CAPACITY_TYPE).has(ct):
            continue
        r = reqs.copy()
        r[LABEL_CAPACITY_TYPE] = Requirement(LABEL_CAPACITY_TYPE, OP_IN, [ct])
        for it in instance_types:
            if it.has_compatible_available_offering(r, well_known):
                return ct
    return CAPACITY_TYPE_ON_DEMAND


def get_tenancy_type(reqs: Requirements) -> str:
    """instance.go getTenancyType: default if allowed, else dedicated if allowed, else default."""
    req = reqs.get(LABEL_INSTANCE_TENANCY)
    for t in (TENANCY_DEFAULT, TENANCY_DEDICATED):
        if req.has(t):
            return t
    return TENANCY_DEFAULT


def get_capacity_reservation_type(instance_types: Sequence[InstanceType]) -> tuple[str, bool] | None:
    """instance.go getCapacityReservationType / getCapacityReservationInterruptible: the type and
    interruptibility of the first offering carrying the reservation-type label (None: none)."""
    for it in instance_types:
        for o in it.offerings:
            if o.requirements.has(LABEL_CAPACITY_RESERVATION_TYPE):
                rtype = o.requirements.get(LABEL_CAPACITY_RESERVATION_TYPE).any()
                interruptible = (o.requirements.has(LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE)
                                 and o.requirements.get(LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE).any() == "true")
                return rtype, interruptible
    return None


def capacity_reservation_details(instance_type: str, zone: str,
                                 instance_types: Sequence[InstanceType]) -> tuple[str, str, bool] | None:
    """instance.go getCapacityReservationDetailsForInstance: (id, type, interruptible) of the type's
    reserved offering in ``zone`` (the filters left one per zone); None when there is none
    (upstream panics: an invariant of the caller)."""
    for it in instance_types:
        if it.name != instance_type:
            continue
        for o in it.offerings:
            if o.capacity_type != CAPACITY_TYPE_RESERVED or o.zone != zone:
                continue
            rtype = o.requirements.get(LABEL_CAPACITY_RESERVATION_TYPE).any()
            interruptible = o.requirements.get(LABEL_CAPACITY_RESERVATION_INTERRUPTIBLE).any() == "true"
            return o.reservation_id, rtype, interruptible
    return None


def build_create_fleet_input(
    capacity_type: str, tags: Mapping[str, str], launch_template_configs: list[dict[str, Any]],
    overlay: bool = False, context: str | None = None,
    reservation: tuple[str, bool] | None = None,
) -> dict[str, Any]:
    """types.go CreateFleetInputBuilder.Build. ``reservation``: (reservation type, interruptible)
    of a reserved launch -- default target capacity ``capacity-block`` for capacity blocks,
    ``reserved-capacity`` (+ ReservedCapacityOptions) for interruptible reservations, else
    ``on-demand``; OnDemandOptions for every launch but a capacity block."""
    if capacity_type not in (CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT, CAPACITY_TYPE_RESERVED):
        raise ValueError(f'invalid capacity type "{capacity_type}" provided to create fleet input')
    block = interruptible = False
    if capacity_type == CAPACITY_TYPE_RESERVED:
        if reservation is None:
            raise ValueError(f"{LABEL_CAPACITY_RESERVATION_TYPE} label isn't set for instance types in reserved launch")
        block = reservation[0] == CAPACITY_RESERVATION_TYPE_CAPACITY_BLOCK
        interruptible = reservation[1]
    dtct = capacity_type
    if capacity_type == CAPACITY_TYPE_RESERVED:
        dtct = "capacity-block" if block else "reserved-capacity" if interruptible else CAPACITY_TYPE_ON_DEMAND
    tag_list = [{"Key": k, "Value": v} for k, v in sorted(tags.items())]  # utils.EC2MergeTags (sorted)
    req: dict[str, Any] = {"Type": "instant"}
    if context is not None:
        req["Context"] = context
    req["LaunchTemplateConfigs"] = launch_template_configs
    req["TargetCapacitySpecification"] = {"DefaultTargetCapacityType": dtct, "TotalTargetCapacity": 1}
    req["TagSpecifications"] = [
        {"ResourceType": rt, "Tags": [dict(t) for t in tag_list]} for rt in ("instance", "volume", "fleet")
    ]
    if capacity_type == CAPACITY_TYPE_SPOT:
        req["SpotOptions"] = {"AllocationStrategy": "capacity-optimized-prioritized" if overlay else "price-capacity-optimized"}
    elif interruptible:
        req["ReservedCapacityOptions"] = {"ReservationTypes": ["interruptible-capacity-reservation"]}
    elif not block:
        req["OnDemandOptions"] = {"AllocationStrategy": "prioritized" if overlay else "lowest-price"}
    return req


def _error_code(e: Mapping[str, Any]) -> str:
    return str(e.get("ErrorCode") or "")


def combine_fleet_errors(errors: Sequence[Mapping[str, Any]]) -> Exception:
    """instance.go combineFleetErrors: InsufficientCapacityError when every error is ICE or SLR
    (vacuously for none), else CreateError. Unique ``code: message`` strings, sorted, ``"; "``-joined
    (multierr). With no errors Go formats ``%w`` of nil as ``%!w(<nil>)``; karpy keeps that text."""
    unique = sorted({f"{_error_code(e)}: {e.get('ErrorMessage') or ''}" for e in errors})
    text = "; ".join(unique) if unique else "%!w(<nil>)"
    ice = sum(1 for e in errors if _error_code(e) in UNFULFILLABLE_CAPACITY_ERROR_CODES or _error_code(e) == SLR_ERROR_CODE)
    if ice == len(errors):
        return InsufficientCapacityError(FLEET_ERROR_PREFIX + text)
    codes = sorted({_error_code(e) for e in errors if _error_code(e)})
    reason = codes[0] if len(codes) == 1 else "LaunchFailed"
    return CreateError(text, reason, text)


# --------------------------------------------------------------------------------------------
class InstanceProvider:
    """Launches instances through the mocked EC2 client. One per :class:`AWSCloudProvider`.

    ``ec2`` is a started :class:`~awsprovider.ec2.backend.MockedEC2` (its ``client`` and
    ``records``); ``unavailable`` the ICE cache (:class:`~awsprovider.unavailableofferings.UnavailableOfferings`).
    """

    def __init__(
        self,
        ec2: Any,
        unavailable: Any,
        clock: Any,
        *,
        well_known: frozenset[str] = WELL_KNOWN_LABELS,
        min_values_policy: str = MIN_VALUES_POLICY_STRICT,
        cluster_name: str = "karpy",
        capacity_reservations: Any = None,
        reserved_capacity: bool = True,
    ) -> None:
        self.ec2 = ec2
        #: the capacity reservation provider's availability cache (MarkUnavailable on reserved ICE)
        self.capacity_reservations = capacity_reservations
        self.unavailable = unavailable
        self.clock = clock
        self.well_known = well_known
        self.min_values_policy = min_values_policy
        self.launch_templates = LaunchTemplateProvider(ec2.client, cluster_name, well_known,
                                                       launch_mode_targeted=reserved_capacity)
        self.subnets = SubnetTracker()
        self.batcher = CreateFleetBatcher(self._create_fleet, clock)
        self.events: list[str] = []
        self._memo_types: tuple[InstanceType, ...] | None = None
        self._memo: dict[tuple[Any, ...], _FilterOutcome] = {}
        self._last_truncated: tuple[InstanceType, ...] | None = None
        self._min_pods_memo: dict[tuple[int, str], tuple[tuple[InstanceType, ...], dict[str, int]]] = {}
        self._names_for: tuple[InstanceType, ...] | None = None
        self._names: tuple[str, ...] = ()

    def _now(self) -> float:
        return float(self.clock.now()) if self.clock is not None else 0.0

    def _create_fleet(self, **request: Any) -> dict[str, Any]:
        out = dict(self.ec2.client.create_fleet(**request))
        out["_karpy_record"] = self.ec2.records[-1] if self.ec2.records else None
        return out

    # -- first half ---------------------------------------------------------------------------
    def filter_instance_types(self, nodeclaim: Any, instance_types: Sequence[InstanceType],
                              record: LaunchRecord | None = None) -> list[InstanceType]:
        """instance.go filterInstanceTypes: the six filters, then Truncate(60) (minValues errors
        as upstream).

        Memoised for the launch path: when ``instance_types`` is the *same tuple* as the previous
        call (``InstanceTypeProvider.prototypes`` returns one immutable tuple of read-only types
        until some type's offerings change), the outcome for equal NodeClaim requirements and
        requests is reused. The filters and the truncation are pure functions of those inputs
        (the filters copy on write, ``truncate`` sorts its own list), so the reused outcome is
        the one a fresh run would compute. Lists are never memoised (they may be mutated).
        """
        reqs = Requirements.from_node_selector_requirements(nodeclaim.spec.requirements)
        requests = {k: parse_nanos(v) if not isinstance(v, int) else v
                    for k, v in (nodeclaim.spec.resources.requests or {}).items()}
        outcome: _FilterOutcome | None = None
        key: tuple[Any, ...] = ()
        if isinstance(instance_types, tuple):
            if instance_types is not self._memo_types:
                self._memo_types = instance_types  # also keeps the tuple (and its id) alive
                self._memo.clear()
                self._min_pods_memo.clear()
            key = (tuple(reqs.values()), tuple(sorted(requests.items())))
            outcome = self._memo.get(key)
        if outcome is None:
            outcome = self._filter_and_truncate(reqs, requests, instance_types)
            if key:
                self._memo[key] = outcome
        # The memoised truncated tuple (None for lists): the same tuple object for equal inputs
        # while the prototypes are unchanged, so ``prepare`` can memoise per-launch work on it.
        self._last_truncated = outcome.truncated if key else None
        if record is not None:
            record.filters = FilterTrace({k: list(v) for k, v in outcome.trace.rejected.items()},
                                         outcome.trace.emptied_by)
            if outcome.after_filters is not None:
                record.after_filters = list(outcome.after_filters)
        if outcome.error is not None:
            raise InsufficientCapacityError(outcome.error)
        return list(outcome.truncated)

    def _filter_and_truncate(self, reqs: Requirements, requests: Mapping[str, int],
                             instance_types: Sequence[InstanceType]) -> _FilterOutcome:
        trace = FilterTrace()
        its = filter_instance_types(instance_types, reqs, requests, self.well_known, trace)
        if its is None:
            return _FilterOutcome(trace, None, (), ALL_UNAVAILABLE_MESSAGE)
        after = tuple(it.name for it in its)
        truncated, err = InstanceTypes(its)._truncate(reqs, MAX_INSTANCE_TYPES, self.min_values_policy, self.well_known)
        if err is not None:
            return _FilterOutcome(trace, after, (), f"truncating instance types based on the passed-in requirements, {err}")
        return _FilterOutcome(trace, after, tuple(truncated), None)

    def _min_pods_by_zone(self, its: list[InstanceType], capacity_type: str,
                          shared: tuple[InstanceType, ...] | None) -> dict[str, int]:
        """``min_pods_by_zone(its, capacity_type)``, memoised when ``shared`` -- the filter memo's
        truncated tuple that ``its`` is a list copy of -- is given: the value is a pure function
        of those types' capacity and available offerings, which the read-only prototypes never
        change. Cleared with the filter memo; callers get a fresh dict."""
        if shared is None:
            return min_pods_by_zone(its, capacity_type)
        key = (id(shared), capacity_type)
        hit = self._min_pods_memo.get(key)
        if hit is None or hit[0] is not shared:
            hit = self._min_pods_memo[key] = (shared, min_pods_by_zone(shared, capacity_type))  # keeps ``shared`` alive
        return dict(hit[1])

    def _names_of(self, instance_types: Sequence[InstanceType]) -> list[str]:
        """``[it.name for it in instance_types]``. For a tuple (the prototypes: the same immutable
        tuple of read-only types on every launch until an offering changes) the names are read
        once per tuple and each call returns a fresh list of them (callers may keep or edit it)."""
        if not isinstance(instance_types, tuple):
            return [it.name for it in instance_types]
        if self._names_for is not instance_types:
            self._names_for = instance_types  # keeps the tuple (and its id) alive
            self._names = tuple(it.name for it in instance_types)
        return list(self._names)

    def prepare(self, ctx: LaunchContext, nodeclaim: Any, tags: Mapping[str, str],
                instance_types: Sequence[InstanceType]) -> PreparedLaunch:
        """Create's first half: everything up to the CreateFleet request. Raises like upstream."""
        record = LaunchRecord(nodeclaim.metadata.name)
        record.candidates = self._names_of(instance_types)
        try:
            its = self.filter_instance_types(nodeclaim, instance_types, record)
            shared = self._last_truncated  # the tuple ``its`` copies, when memoised (else None)
            record.truncated = [it.name for it in its]
            reqs = Requirements.from_node_selector_requirements(nodeclaim.spec.requirements)
            capacity_type = get_capacity_type(reqs, its, self.well_known)
            tenancy = get_tenancy_type(reqs)
            record.capacity_type = capacity_type
            by_zone = self._min_pods_by_zone(its, capacity_type, shared) if ctx.subnets else None
            try:
                zonal = self.subnets.zonal_subnets_for_launch(ctx.subnets, its, capacity_type, by_zone)
            except ValueError as e:
                raise CreateError(f"getting subnets, {e}", "SubnetResolutionFailed", "Error getting subnets") from e
            configs = self._launch_template_configs(ctx, reqs, its, zonal, capacity_type, dict(tags), tenancy, shared)
            overlay = PRICE_OVERLAY_APPLIED_ANNOTATION in _annotations(nodeclaim)
            context = ctx.context if ctx.context is not None and _annotations(nodeclaim).get(MIN_VALUES_RELAXED_ANNOTATION) != "true" else None
            reservation = get_capacity_reservation_type(its) if capacity_type == CAPACITY_TYPE_RESERVED else None
            request = build_create_fleet_input(capacity_type, tags, configs, overlay, context, reservation)
        except Exception as e:
            record.error = str(e)
            raise
        record.request = request
        opts = request.get("SpotOptions") or request.get("OnDemandOptions") or {}
        record.allocation_strategy = str(opts.get("AllocationStrategy", ""))
        return PreparedLaunch(nodeclaim, capacity_type, tenancy, dict(tags), its, zonal, request, record,
                              min_pods_by_zone=by_zone)

    def _launch_template_configs(
        self, ctx: LaunchContext, reqs: Requirements, its: list[InstanceType], zonal: dict[str, LaunchSubnet],
        capacity_type: str, tags: dict[str, str], tenancy: str,
        shared: tuple[InstanceType, ...] | None = None,
    ) -> list[dict[str, Any]]:
        """instance.go getLaunchTemplateConfigs + getOverrides. ``shared``: the filter memo's tuple
        that ``its`` is a list copy of (same types, same order), which lets the launch template
        grouping memoise (see LaunchTemplateProvider.resolve)."""
        try:
            lts = self.launch_templates.ensure_all(
                shared if shared is not None else its, ctx.amis, ctx.nodeclass_name, ctx.security_group_ids, tags, capacity_type, tenancy
            )
        except Exception as e:  # noqa: BLE001
            raise CreateError(f"getting launch template configs, getting launch templates, {e}",
                              "LaunchTemplateResolutionFailed", f"Error getting launch template configs: {e}") from e
        r = reqs.copy()
        r[LABEL_CAPACITY_TYPE] = Requirement(LABEL_CAPACITY_TYPE, OP_IN, [capacity_type])
        configs: list[dict[str, Any]] = []
        # One verdict table for all the templates: a verdict depends only on the offering's
        # requirements object, ``r`` and the well-known labels, which are the same for every
        # template of this launch (the requirement objects stay alive with ``its``).
        verdicts: dict[int, str | None] = {}
        for lt in lts:
            overrides = self._overrides(lt.instance_types, zonal, r, lt.image_id, verdicts, lt.capacity_reservation_id)
            if overrides:
                configs.append({
                    "LaunchTemplateSpecification": {"LaunchTemplateName": lt.name, "Version": LAUNCH_TEMPLATE_VERSION},
                    "Overrides": overrides,
                })
        if not configs:
            raise CreateError(f"getting launch template configs, {NO_OFFERINGS_MESSAGE}", "LaunchTemplateResolutionFailed",
                              f"Error getting launch template configs: {NO_OFFERINGS_MESSAGE}")
        return configs

    def _overrides(self, its: Sequence[InstanceType], zonal: Mapping[str, LaunchSubnet], reqs: Requirements,
                   image_id: str, verdicts: dict[int, str | None] | None = None,
                   capacity_reservation_id: str = "") -> list[dict[str, Any]]:
        """instance.go getOverrides: type x available compatible offering, dedup (type, zone), the
        zone's subnet, Priority = offering price (possibly overlaid). A reserved launch template
        takes only the offering of its reservation (``reservation-id In [id]``)."""
        seen: set[tuple[str, str]] = set()
        out: list[dict[str, Any]] = []
        # Offering requirement objects are shared (one per capacity type x zone): evaluate each
        # one's compatibility and zone once per call (ids are stable while ``its`` is alive).
        # ``verdicts`` may be shared by calls with the same ``reqs`` (see _launch_template_configs).
        if verdicts is None:
            verdicts = {}
        for it in its:
            for o in it.available_offerings:
                rid = id(o.requirements)
                if rid in verdicts:
                    zone = verdicts[rid]
                else:
                    zone = verdicts[rid] = o.zone if o.is_compatible(reqs, self.well_known) else None
                if zone is None:
                    continue
                if capacity_reservation_id and o.reservation_id != capacity_reservation_id:
                    continue
                key = (it.name, zone)
                if key in seen:
                    continue
                seen.add(key)
                subnet = zonal.get(zone)
                if subnet is None:
                    continue
                out.append({
                    "InstanceType": it.name,
                    "SubnetId": subnet.id,
                    "ImageId": image_id,
                    "AvailabilityZone": subnet.zone,
                    "Priority": float(o.price),
                })
        return out

    # -- second half --------------------------------------------------------------------------
    def submit(self, prepared: PreparedLaunch) -> BatchTicket:
        """Queue the request in the CreateFleet batcher (flush to send)."""
        prepared.ticket = self.batcher.add(prepared.request)
        return prepared.ticket

    def complete(self, prepared: PreparedLaunch) -> Instance:
        """Create's second half: handle the (flushed) CreateFleet result."""
        record = prepared.record
        ticket = prepared.ticket
        assert ticket is not None and ticket.done, "submit and flush before complete"
        raw = ticket.raw_response or {}
        record.fleet_record = raw.get("_karpy_record")
        record.batch_size = ticket.batch_size
        if ticket.error is not None:
            self.subnets.update_inflight_ips(prepared.request, None, prepared.instance_types,
                                             prepared.zonal_subnets.values(), prepared.capacity_type,
                                             prepared.min_pods_by_zone)
            err = ticket.error
            code = getattr(err, "response", {}).get("Error", {}).get("Code", "") if hasattr(err, "response") else ""
            if code == LAUNCH_TEMPLATE_NOT_FOUND_CODE:
                for ltc in prepared.request["LaunchTemplateConfigs"]:
                    self.launch_templates.invalidate(ltc["LaunchTemplateSpecification"]["LaunchTemplateName"])
            e = CreateError(f"creating fleet request, {err}", code or "LaunchFailed", f"Error creating fleet request: {err}")
            record.error = str(e)
            raise e
        out = ticket.output or {}
        record.response = {k: v for k, v in out.items()}
        self.subnets.update_inflight_ips(prepared.request, out, prepared.instance_types,
                                         prepared.zonal_subnets.values(), prepared.capacity_type,
                                         prepared.min_pods_by_zone)
        errors = list(out.get("Errors") or [])
        self._update_unavailable_offerings(errors, prepared.capacity_type, str(out.get("FleetId") or ""),
                                           prepared.instance_types)
        instances = out.get("Instances") or []
        if not instances or not instances[0].get("InstanceIds"):
            fleet_error = combine_fleet_errors(errors)
            record.error = str(fleet_error)
            raise fleet_error
        inst = instances[0]
        ovr = (inst.get("LaunchTemplateAndOverrides") or {}).get("Overrides") or {}
        instance = Instance(
            id=inst["InstanceIds"][0],
            instance_type=str(inst.get("InstanceType") or ovr.get("InstanceType")),
            zone=str(ovr.get("AvailabilityZone") or ""),
            subnet_id=str(ovr.get("SubnetId") or ""),
            image_id=str(ovr.get("ImageId") or ""),
            capacity_type=prepared.capacity_type,
            tenancy=prepared.tenancy,
            tags=dict(prepared.tags),
            launch_time=self._now(),
        )
        if prepared.capacity_type == CAPACITY_TYPE_RESERVED:
            instance.capacity_reservation = capacity_reservation_details(
                instance.instance_type, instance.zone, prepared.instance_types)
        record.instance = instance
        return instance

    def _update_unavailable_offerings(self, errors: Sequence[Mapping[str, Any]], capacity_type: str, fleet_id: str,
                                      instance_types: Sequence[InstanceType] = ()) -> None:
        """instance.go updateUnavailableOfferingsCache (no placement groups): a reserved launch's
        unfulfillable-capacity errors mark their reservations unavailable (count 0)."""
        for e in errors:
            ovr = (e.get("LaunchTemplateAndOverrides") or {}).get("Overrides") or {}
            subnet = ovr.get("SubnetId") or ""
            if _error_code(e) == INSUFFICIENT_FREE_ADDRESSES_CODE and subnet:
                self.unavailable.mark_subnet_unavailable(subnet)
                self.subnets.update_iced_subnet(subnet)
        if capacity_type == CAPACITY_TYPE_RESERVED:
            ids = []
            for e in errors:
                if _error_code(e) not in UNFULFILLABLE_CAPACITY_ERROR_CODES:
                    continue
                ovr = (e.get("LaunchTemplateAndOverrides") or {}).get("Overrides") or {}
                details = capacity_reservation_details(str(ovr.get("InstanceType")),
                                                       str(ovr.get("AvailabilityZone") or ""), instance_types)
                if details is not None:
                    ids.append(details[0])
            if ids and self.capacity_reservations is not None:
                self.capacity_reservations.mark_unavailable(*ids)
            return
        for e in errors:
            code = _error_code(e)
            ovr = (e.get("LaunchTemplateAndOverrides") or {}).get("Overrides") or {}
            if code in UNFULFILLABLE_CAPACITY_ERROR_CODES:
                reason = {"reason": code}
                if fleet_id:
                    reason["fleet-id"] = fleet_id
                self.unavailable.mark_unavailable(str(ovr.get("InstanceType")), str(ovr.get("AvailabilityZone") or ""),
                                                  capacity_type, reason)
            if code == SLR_ERROR_CODE:
                self.unavailable.mark_capacity_type_unavailable(CAPACITY_TYPE_SPOT)
                self.events.append(f'Attempted to launch a spot instance but failed due to "{SLR_ERROR_CODE}"')
