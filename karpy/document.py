"""The JSON document's types: the frozen records :class:`karpy.Result` hands a library caller, the
typed shapes of the document's other blocks, and (through :mod:`karpy.schema`) its JSON Schema.

One source of truth: ``Result.to_document()`` builds ``nodeclaims[]``, ``pods{}`` and ``cost`` from
:class:`NodeClaimResult`, :class:`PodResult` and :class:`Cost` (``to_dict()``: one document key per
field, in field order), and :func:`karpy.schema.generate` derives the schema from the same classes
and from :class:`Document`, the TypedDict of the whole document. So adding a key to a NodeClaim or
pod entry is adding one field here; adding a top-level key is one line in :class:`Document`.

Tolerance: every object in the schema admits keys it does not name (the contract says "more keys
may be added"); the keys it names are typed, and required where the document always has them.
Blocks other modules build (``prices`` from the provider, ``fleet`` from the AWS provider,
``timeline[].detail``, ``disruptions[]`` from the disruption controller, ``explain``) are typed at
the keys that exist today.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ConfigDict, with_config
from typing_extensions import NotRequired, TypedDict

__all__ = [
    "BilledCost", "BilledNodeClaimCost", "CommitmentCost", "ConditionDocument", "Cost", "DisruptionDocument",
    "Document", "ExplainDocument", "ExplainNodeClaimDocument", "ExplainPodDocument", "FleetDocument",
    "FleetErrorDocument", "FleetOverrideDocument", "MisalignmentDocument", "NodeClaimCost", "NodeClaimResult",
    "NodeClassStatusDocument", "NodeHours", "NodePoolStatusDocument", "PodResult", "PricesDocument",
    "RequirementDocument", "ReservationCost", "ReservationCosts", "SimulationDocument", "TimelineEntryDocument",
]

_CONFIG = ConfigDict(use_attribute_docstrings=True)

CapacityType = Literal["on-demand", "spot", "reserved"]
PodPhase = Literal["Running", "Pending", "Deleted", "Succeeded", "Failed"]


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any) -> Any:
    """``value`` as JSON data: a record becomes its ``to_dict()``, tuples become lists, mappings
    dicts (copies, so a caller's edit of the document never reaches a record). Exact-type checks
    first: documents hold hundreds of thousands of scalars."""
    t = type(value)
    if t in _SCALARS:
        return value
    if t is dict:
        return {k: v if type(v) in _SCALARS else _plain(v) for k, v in value.items()}
    if t is tuple or t is list:
        return [v if type(v) in _SCALARS else _plain(v) for v in value]
    if isinstance(value, _Record):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


class _Record:
    """``to_dict()`` for the frozen records: one key per field, in field order."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        out = {}
        for name in self.__dataclass_fields__:  # type: ignore[attr-defined]
            v = getattr(self, name)
            out[name] = v if type(v) in _SCALARS else _plain(v)
        return out


# -- nodeclaims[] -----------------------------------------------------------------------------------

@with_config(_CONFIG)
class RequirementDocument(TypedDict):
    """One requirement of the NodeClaim spec as created (``nodeclaims[].requirements[]``)."""

    key: str
    operator: str
    values: list[str]
    minValues: NotRequired[int]
    """Present only when the requirement sets minValues."""


@with_config(_CONFIG)
class FleetOverrideDocument(TypedDict):
    """One CreateFleet override as sent, in order."""

    instance_type: str
    zone: str
    subnet_id: str
    priority: NotRequired[float]
    """The override's priority (prioritized allocation: the offering's price)."""


@with_config(_CONFIG)
class FleetErrorDocument(TypedDict):
    """One error CreateFleet returned."""

    error_code: str
    instance_type: str
    zone: str


@with_config(_CONFIG)
class FleetDocument(TypedDict):
    """The CreateFleet request the provider sent for a NodeClaim and the errors EC2 returned
    (``nodeclaims[].fleet``; null when no CreateFleet was sent, e.g. on the fake provider)."""

    allocation_strategy: str
    capacity_type: str
    overrides: list[FleetOverrideDocument]
    errors: list[FleetErrorDocument]


@with_config(_CONFIG)
@dataclass(frozen=True, slots=True)
class NodeClaimResult(_Record):
    """One NodeClaim Karpenter created, and what the cloud provider made of it (the document's
    ``nodeclaims[]`` entry; ``Result.nodeclaims``). A failed launch has ``launched`` false,
    ``instance_type`` / ``capacity_type`` / ``zone`` / ``price`` null and ``error`` saying why."""

    name: str
    nodepool: str
    instance_type: str | None
    """The launched instance type; null when the launch failed."""
    capacity_type: CapacityType | None
    zone: str | None
    price: float | None
    """$/h of the launched offering (6 decimals), as the price table (or the spot model) gives it."""
    labels: Mapping[str, str] = field(repr=False)
    """Node labels of the launched NodeClaim, sorted by key (empty when the launch failed)."""
    annotations: Mapping[str, str] = field(repr=False)
    pods: tuple[str, ...] = field(repr=False)
    """``namespace/name`` of the pods bound to its node at the end of the run, sorted."""
    requirements: tuple[RequirementDocument, ...] = field(repr=False)
    """The NodeClaim spec's requirements as created."""
    fleet: FleetDocument | None = field(repr=False)
    launched: bool
    error: str | None
    """The cloud provider's error when the launch failed (the upstream message text)."""
    created_at: float
    """Virtual seconds from the start of the run."""
    registered_at: float | None
    launched_at: float | None
    deleted_at: float | None
    deleted_by: str | None
    """Why it was deleted: a disruption method, ``interruption``, ``nodepool-deleted``, ..."""


# -- pods{} -----------------------------------------------------------------------------------------

@with_config(_CONFIG)
@dataclass(frozen=True, slots=True)
class PodResult(_Record):
    """How one pod ended the run (the document's ``pods[key]``; ``Result.pods``)."""

    phase: PodPhase
    """Running (bound), Pending, Deleted (preempted, no controller recreates it), or a terminal
    input pod's Succeeded / Failed."""
    node: str | None
    nominated_node: str | None
    message: str | None
    """Why a pending pod is pending (kube-scheduler's / Karpenter's words); null otherwise."""
    owner: str | None
    """The pod's controller, ``"Deployment web"``, ``"StatefulSet db"``, ...; null for a bare pod."""


# -- cost -------------------------------------------------------------------------------------------

@with_config(_CONFIG)
@dataclass(frozen=True, slots=True)
class NodeClaimCost(_Record):
    """One launched NodeClaim's share of the cost integral."""

    node_hours: float
    dollars: float
    price: float


@with_config(_CONFIG)
@dataclass(frozen=True, slots=True)
class NodeHours(_Record):
    """Node-hours of the run, in total and grouped as the dollars are."""

    total: float
    by_nodepool: Mapping[str, float]
    by_family: Mapping[str, float]
    by_generation: Mapping[str, float]
    by_capacity_type: Mapping[str, float]


@with_config(_CONFIG)
@dataclass(frozen=True, slots=True)
class ReservationCost(_Record):
    """What one capacity reservation costs over the run (``cost.capacity_reservations.by_reservation``).
    The AWS provider: an ODCR (``billing: on-demand-rate``) is billed the on-demand rate for every
    reserved instance while provisioned, used or not; a capacity block (``billing: upfront``) is
    paid up front for its whole duration (``modelled`` true when no ``upfrontFee`` was given and the
    on-demand rate stands in)."""

    instance_type: str
    zone: str
    reservation_type: str
    instance_count: int
    billing: str
    billed_from: float
    """Virtual seconds: the start of the billed period (a block: its start)."""
    billed_to: float
    billed_hours: float
    """Hours billed per reserved instance (a block: its whole duration)."""
    hourly_price: float
    """The on-demand $/h of one instance (the ODCR rate; a block's stand-in rate when modelled)."""
    instance_hours: float
    """Reserved instance-hours within the run."""
    used_instance_hours: float
    """Instance-hours instances ran in the reservation within the run."""
    unused_instance_hours: float
    dollars: float
    unused_dollars: float
    """The share of ``dollars`` no instance used (a block: of the whole fee)."""
    modelled: bool


@with_config(_CONFIG)
@dataclass(frozen=True, slots=True)
class ReservationCosts(_Record):
    """The capacity reservations' bill over the run (``cost.capacity_reservations``)."""

    total: float
    unused: float
    """Dollars paid for reserved capacity no instance used."""
    by_reservation: Mapping[str, ReservationCost]


@with_config(_CONFIG)
@dataclass(frozen=True, slots=True)
class CommitmentCost(_Record):
    """One Reserved Instance or Savings Plan over the run (``cost.billed.commitments``; modelled)."""

    kind: Literal["ReservedInstance", "EC2InstanceSavingsPlan", "ComputeSavingsPlan"]
    committed: float
    """Dollars the commitment costs over the run, used or not (its $/h x hours; an RI: count x
    on-demand price x (1 - discount))."""
    used: float
    """Dollars of it that covered usage."""
    unused: float
    utilization: float
    """``used / committed``."""
    covered_node_hours: float


@with_config(_CONFIG)
@dataclass(frozen=True, slots=True)
class BilledNodeClaimCost(_Record):
    """One launched NodeClaim on the bill (usage and fees; unused commitment is not attributed)."""

    node_hours: float
    dollars: float


@with_config(_CONFIG)
class MisalignmentDocument(TypedDict):
    """Where Karpenter's list-price choice is not the cheapest on the bill (``cost.billed.misalignments``):
    ``kind`` ``cheaper-on-bill`` (a NodePool's launches and the offering they allowed that bills lower)
    or ``unused-commitment`` (a Reserved Instance or Savings Plan left partly unused)."""

    kind: Literal["cheaper-on-bill", "unused-commitment"]
    via: str
    """What makes it cheaper on the bill: a commitment's name, ``enterprise-discount`` or ``spot-discount``
    (the overlay in ``cost.billed.overlays`` that teaches Karpenter the same is named after it)."""
    nodepool: NotRequired[str]
    nodeclaims: NotRequired[list[str]]
    launched: NotRequired[dict[str, Any]]
    """``instance_type``, ``capacity_type``, ``list_price``, ``billed_per_hour`` (what it billed)."""
    cheaper_on_bill: NotRequired[dict[str, Any]]
    """``instance_type``, ``capacity_type``, ``list_price``, ``billed_per_hour`` (what it would bill)."""
    node_hours: NotRequired[float]
    overspend: NotRequired[float]
    """Dollars the launched offering billed above the cheaper one over those node-hours (modelled:
    a commitment's headroom is shared by every entry that names it)."""
    overlays: list[str]
    """Names of the ``cost.billed.overlays`` that teach Karpenter this entry's discount."""
    commitment: NotRequired[str]
    commitment_kind: NotRequired[str]
    unused: NotRequired[float]
    utilization: NotRequired[float]


@with_config(_CONFIG)
@dataclass(frozen=True, slots=True)
class BilledCost(_Record):
    """The run on the account's bill (``cost.billed``; present when a BillingProfile was given):
    :func:`karpy.billing.billed_cost` says how AWS's order is modelled. Every number is modelled."""

    modelled: bool
    profile: str
    """The BillingProfile's name."""
    total: float
    """``usage + fees + unused_commitment``."""
    usage: float
    fees: float
    unused_commitment: float
    effective_per_hour: float
    """``total`` over the horizon, in $/h."""
    by_nodepool: Mapping[str, float]
    by_family: Mapping[str, float]
    by_generation: Mapping[str, float]
    by_capacity_type: Mapping[str, float]
    by_pricing: Mapping[str, float]
    """Dollars by how they were billed: reserved-instance, ec2-instance-savings-plan,
    compute-savings-plan, on-demand, spot, capacity-reservation, fees, unused-commitment."""
    commitments: Mapping[str, CommitmentCost]
    by_nodeclaim: Mapping[str, BilledNodeClaimCost]
    per_hour: tuple[tuple[float, float], ...]
    """The bill's $/h per clock hour ``[[t, $/h], ...]`` (a point where it changes)."""
    notes: tuple[str, ...]
    misalignments: tuple[MisalignmentDocument, ...]
    overlays: tuple[dict[str, Any], ...]
    """NodeOverlay manifests (``karpenter.sh/v1alpha1``, ``priceAdjustment``) that teach Karpenter's
    ranking the discounts the misalignments name."""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BilledCost:
        d = dict(data)
        d["commitments"] = {k: CommitmentCost(**v) for k, v in d["commitments"].items()}
        d["by_nodeclaim"] = {k: BilledNodeClaimCost(**v) for k, v in d["by_nodeclaim"].items()}
        d["per_hour"] = tuple((t, v) for t, v in d["per_hour"])
        for key in ("notes", "misalignments", "overlays"):
            d[key] = tuple(d[key])
        return cls(**d)


@with_config(_CONFIG)
@dataclass(frozen=True, slots=True)
class Cost(_Record):
    """The cost integral of the run (the document's ``cost``; ``Result.cost``;
    :func:`karpy.cost.cost_integral` says how it is computed). Dollars, 6 decimals."""

    total: float
    by_nodepool: Mapping[str, float]
    by_family: Mapping[str, float]
    by_generation: Mapping[str, float]
    by_capacity_type: Mapping[str, float]
    node_hours: NodeHours
    by_nodeclaim: Mapping[str, NodeClaimCost]
    per_hour: tuple[tuple[float, float], ...]
    """The $/h step series ``[[t, $/h], ...]``: a point at 0 and one at every change."""
    horizon: float
    """The virtual second the integral runs to (the scenario's ``until`` or the end of the run)."""
    capacity_reservations: ReservationCosts | None = None
    """What the cloud provider bills for its capacity reservations over the run, used or not
    (present only when the provider has reservations; :func:`karpy.cost.cost_integral`)."""
    total_with_reservations: float | None = None
    """``total`` plus the reservations' dollars (present with ``capacity_reservations``)."""
    billed: BilledCost | None = None
    """The run on the account's bill under a BillingProfile (present only when one was given; modelled)."""

    def to_dict(self) -> dict[str, Any]:
        out = _Record.to_dict(self)
        for key in ("capacity_reservations", "total_with_reservations", "billed"):
            if out.get(key) is None:
                out.pop(key, None)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Cost:
        """The record of a ``cost_integral`` dict (a key this class does not name is a TypeError:
        add the field here, and the schema follows)."""
        d = dict(data)
        d["node_hours"] = NodeHours(**d["node_hours"])
        d["by_nodeclaim"] = {k: NodeClaimCost(**v) for k, v in d["by_nodeclaim"].items()}
        d["per_hour"] = tuple((t, v) for t, v in d["per_hour"])
        if d.get("capacity_reservations") is not None:
            block = dict(d["capacity_reservations"])
            block["by_reservation"] = {k: ReservationCost(**v) for k, v in block["by_reservation"].items()}
            d["capacity_reservations"] = ReservationCosts(**block)
        if d.get("billed") is not None:
            d["billed"] = BilledCost.from_dict(d["billed"])
        return cls(**d)

    def __call__(self) -> dict[str, Any]:
        """Deprecated: ``Result.cost`` was a method returning the dict; it is now this record.
        ``result.cost()`` still returns the dict (``result.cost.to_dict()``), with a warning."""
        warnings.warn("Result.cost is a property now (a karpy.document.Cost); call result.cost.to_dict() "
                      "for the dict", DeprecationWarning, stacklevel=2)
        return self.to_dict()


# -- the other blocks -------------------------------------------------------------------------------

@with_config(_CONFIG)
class PricesDocument(TypedDict):
    """Which price table the run used (``prices``)."""

    date: str | None
    """The table's date (null for a provider without tables, e.g. the fake one)."""
    source: str
    """Where the table's prices come from, and what is modelled."""
    requested_date: NotRequired[str]
    """Only when no table had the asked date: the date asked for (``date`` is the newest before it)."""
    region: NotRequired[str]
    """The table's region."""
    proxy: NotRequired[bool]
    """True when another region's table stands in (``--price-region``)."""
    spot: NotRequired[Literal["modelled", "measured", "on-demand"]]
    """How spot prices were obtained: modelled (advisor savings + per-zone offset), measured, or
    priced as on-demand."""
    operating_system: NotRequired[str]
    """The OS the table prices (``"Linux"``; Windows is reported without its licence)."""


@with_config(_CONFIG)
class SimulationDocument(TypedDict):
    """Counters of the run (``simulation``)."""

    virtual_seconds: float
    provisioning_passes: int
    scheduling_cycles: int
    kubernetes_version: str
    """The modelled kube-scheduler / API server version (``--kubernetes-version``)."""


@with_config(_CONFIG)
class ConditionDocument(TypedDict):
    """A status condition (operatorpkg status.Condition; :mod:`karpy.api.conditionset`)."""

    type: str
    status: Literal["True", "False", "Unknown"]
    reason: str
    message: str
    last_transition_time: str | None
    """RFC 3339; virtual time 0 is 2026-01-01T00:00:00Z (a dump's own time while the status held)."""


@with_config(_CONFIG)
class NodeClassStatusDocument(TypedDict):
    """A NodeClass's status as the provider's nodeclass controller left it (``nodeclasses[name]``)."""

    kind: str
    """The NodeClass kind, e.g. ``EC2NodeClass``."""
    subnets: list[dict[str, str]]
    """``status.subnets``: ``id``, ``zone``, ``zone_id``."""
    security_groups: list[dict[str, str]]
    """``status.securityGroups``: ``id``, ``name``."""
    conditions: list[ConditionDocument]
    """``status.conditions``: SubnetsReady, SecurityGroupsReady, AMIsReady, ..., Ready last."""


@with_config(_CONFIG)
class NodePoolStatusDocument(TypedDict):
    """A NodePool's status at the end of the run (``nodepools[name]``)."""

    conditions: list[ConditionDocument]
    """ValidationSucceeded, NodeClassReady and the root Ready (empty when no controller wrote them)."""


@with_config(_CONFIG)
class TimelineEntryDocument(TypedDict):
    """One event of the run, in virtual-time order (``timeline[]``, ``disruption_timeline[]``);
    :mod:`karpy.sim.timeline` lists the kinds and their ``detail`` keys."""

    t: float
    kind: str
    object: str
    detail: dict[str, Any]


@with_config(_CONFIG)
class DisruptionDocument(TypedDict):
    """One decision of Karpenter's disruption controller (``disruptions[]``)."""

    t: float
    method: str
    """The disruption method: emptiness, drift, expiration, single/multi-node consolidation, ..."""
    reason: str
    decision: str
    """delete or replace."""
    candidates: list[str]
    replacements: list[str]
    replacement_instance_types: list[list[str]]
    """Per replacement, its first 10 instance-type options."""
    savings_per_hour: float
    budget: dict[str, int]
    """Per NodePool of the candidates, the disruptions its budgets still allowed."""
    validated: bool | None
    error: NotRequired[str]
    """Why the command could not start."""


#: The decision trace of one NodeClaim (``explain.nodeclaims[name]``; :mod:`karpy.explain`).
#: (Functional form: one key is ``pass``.)
ExplainNodeClaimDocument = TypedDict("ExplainNodeClaimDocument", {
    "nodepool": str,
    "weight": NotRequired[int],
    "pass": int,
    "pods": list[str],
    "funnel": NotRequired[dict[str, Any]],
    "price_order": NotRequired[dict[str, Any]],
    "max_instance_types_cut": NotRequired[dict[str, Any] | None],
    "in_nodeclaim": NotRequired[int | None],
    "min_values": NotRequired[dict[str, Any] | None],
    "launch": NotRequired[dict[str, Any] | None],
    "launch_note": NotRequired[str],
    "fallback": NotRequired[dict[str, Any]],
    "fallback_for": NotRequired[list[str]],
})


@with_config(_CONFIG)
class ExplainPodDocument(TypedDict):
    """The decision trace of one pod (``explain.pods[key]``; :mod:`karpy.explain`)."""

    condition: str | None
    """kube-scheduler's PodScheduled=False message (its reason when there is no message)."""
    placement: dict[str, Any] | None
    """What Karpenter's last deciding provisioning pass did with the pod (null: never tried)."""
    nodepools: NotRequired[list[dict[str, Any]]]
    relaxations: NotRequired[list[Any]]
    rounds: NotRequired[list[dict[str, Any]]]
    nodeclaims: list[str]
    gang: NotRequired[str]
    """A pending member of a Kubernetes 1.37 gang: what Karpenter (no gang awareness) did with it."""


@with_config(_CONFIG)
class ExplainDocument(TypedDict):
    """Why each NodeClaim and pod came out as it did (``explain``)."""

    scope: str
    """``"all"``, or which entries a large run keeps (pending pods and failed NodeClaims)."""
    nodeclaims: dict[str, ExplainNodeClaimDocument]
    pods: dict[str, ExplainPodDocument]


@with_config(_CONFIG)
class Document(TypedDict):
    """The document ``karpy simulate -o json`` prints and ``Result.to_json()`` returns."""

    region: str | None
    prices: PricesDocument
    nodeclaims: list[NodeClaimResult]
    """Every NodeClaim created, in creation order, including failed launches."""
    pods: dict[str, PodResult]
    """Every pod by ``namespace/name``, sorted by key."""
    cost_per_hour: float
    """$/h of what is running at the end of the run."""
    simulation: SimulationDocument
    warnings: list[str]
    """What the run did not model or skipped (also printed on stderr)."""
    timeline: list[TimelineEntryDocument]
    cost: Cost
    nodeclasses: NotRequired[dict[str, NodeClassStatusDocument]]
    """Present when the cloud provider reports NodeClass statuses (AWS: every EC2NodeClass the run
    resolved, by name, with its status conditions)."""
    nodepools: NotRequired[dict[str, NodePoolStatusDocument]]
    """Present with ``nodeclasses``: every NodePool by name with its status conditions at the end."""
    disruptions: NotRequired[list[DisruptionDocument]]
    """Present when the disruption controller ran."""
    disruption_timeline: NotRequired[list[TimelineEntryDocument]]
    """Present when the disruption controller ran: its own steps, in order."""
    explain: ExplainDocument
