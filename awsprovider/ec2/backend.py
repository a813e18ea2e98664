"""The mocked EC2: moto stores the state, karpy's fleet model decides CreateFleet.

Design (reference/peers-and-moto.md A.3, "allocate on the client, let moto store the state"): moto's
CreateFleet always launches the *first* override and never returns ``Errors``. :class:`MockedEC2`
owns a ``moto.mock_aws`` context, a boto3 EC2 client with dummy credentials, and three botocore
event hooks on *that client only* (public botocore API, no moto patching):

``provide-client-params.ec2.CreateFleet``
    runs :class:`~awsprovider.ec2.fleet.FleetAllocator` on the request as the caller built it and
    rewrites it to the single chosen override (moto launches exactly what it is given: the
    contract tests pin this). ``TotalTargetCapacity = N`` is allocated unit by unit; units that
    landed on the first chosen override go in the rewritten request, other overrides are launched
    by extra CreateFleet calls (hooks bypassed) whose instances are merged into the response.
``before-call.ec2.CreateFleet``
    when no unit launched, answers without calling moto: ``{"FleetId", "Instances": [], "Errors"}``.
``after-call.ec2.CreateFleet``
    appends the model's ``Errors`` (partial success is reported like EC2 does) and records the
    response.

Requests the model does not decide (``DryRun``, non-instant fleets, ``capacity-block`` /
``reserved-capacity`` default capacity types, attribute-based overrides) pass through to moto
untouched (and are recorded with no decisions). ``OnDemandTargetCapacity``/``SpotTargetCapacity``
are dropped from rewritten requests: every unit uses ``DefaultTargetCapacityType`` (Karpenter never
sets them). Capacity counters are consumed when the model decides, before moto launches.

Determinism: moto's id generator is seeded at :meth:`MockedEC2.start` with the public
``moto.moto_api._internal.mock_random.seed(seed)`` (the recorder docs' API; it is moto's own
process-wide generator, so the same start sequence gives the same ids). Catalogue reads leave the
generator untouched (they may be answered by the process memo without any moto call, see
:mod:`awsprovider.ec2.catalog`), so ids never depend on what ran earlier in the process. Fleet ids of short-circuited
requests come from a per-backend counter. ``now`` (virtual seconds) comes from ``clock`` or the
``now`` attribute, never the wall clock.

moto's state is process-wide: run one :class:`MockedEC2` at a time per process (a second one
started while the first is active shares its state, as nested ``mock_aws`` contexts do).

Speed: ``MOTO_EC2_LOAD_DEFAULT_AMIS`` is set to ``false`` (unless ``load_default_amis=True``) only
while the mock starts and the region's EC2 backend is created (moto reads it then), and restored
afterwards; this saves ~250 ms per start.
"""

from __future__ import annotations

import copy
import ipaddress
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from awsprovider.ec2.capacity import CapacityModel, CapacityRule
from awsprovider.ec2.catalog import InstanceTypeCatalog
from awsprovider.ec2.fleet import (
    DEFAULT_COP_MIN_RELATIVE_DEPTH,
    DEFAULT_PCO_DEPTH_FRACTION,
    FleetAllocator,
    FleetDecision,
    PriceBook,
    StaticPriceBook,
    is_modelled_request,
)

__all__ = ["DUMMY_CREDENTIALS", "FleetRecord", "MockedEC2", "Network"]

DUMMY_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "aws_session_token": "testing"}
_CONTEXT_KEY = "karpy_fleet"
_AMIS_ENV = "MOTO_EC2_LOAD_DEFAULT_AMIS"


@dataclass
class FleetRecord:
    """One CreateFleet call: the request as the caller sent it, what moto was sent, the decisions
    (one per unit; empty when the request was passed through), and the response returned."""

    request: dict[str, Any]
    sent: dict[str, Any] | None = None
    decisions: tuple[FleetDecision, ...] = ()
    response: dict[str, Any] | None = None
    now: float = 0.0

    @property
    def modelled(self) -> bool:
        """Whether the fleet model decided this request."""
        return bool(self.decisions)


@dataclass(frozen=True)
class Network:
    """A VPC with one subnet per zone (zone -> subnet id) and a security group."""

    vpc_id: str
    subnets: dict[str, str]
    security_group_id: str | None = None


@dataclass
class _Pending:
    record: FleetRecord
    errors: list[dict[str, Any]] = field(default_factory=list)
    all_failed: bool = False
    extra_requests: list[dict[str, Any]] = field(default_factory=list)


def _dedupe_errors(decisions: Iterable[FleetDecision]) -> list[dict[str, Any]]:
    seen: set[tuple[Any, ...]] = set()
    out: list[dict[str, Any]] = []
    for d in decisions:
        for e in d.errors:
            o = e["LaunchTemplateAndOverrides"]["Overrides"]
            key = (e["ErrorCode"], o.get("InstanceType"), o.get("AvailabilityZone"), o.get("SubnetId"), e["Lifecycle"])
            if key not in seen:
                seen.add(key)
                out.append(e)
    return out


class MockedEC2:
    """moto-backed EC2 with the fleet model installed on its boto3 client.

    Use as a context manager (or :meth:`start`/:meth:`stop`)::

        with MockedEC2(region="us-east-1", price_book=book, unavailable=["c8i.*:*:on-demand"]) as ec2:
            lt = ec2.create_launch_template("karpy-default", image_id="ami-12c6146b")
            subnets = ec2.default_subnets()
            out = ec2.client.create_fleet(**params)      # exactly what Karpenter sends
            ec2.records[-1].decisions[0].reason
    """

    def __init__(
        self,
        region: str = "us-east-1",
        price_book: PriceBook | None = None,
        capacity: CapacityModel | None = None,
        *,
        unavailable: Iterable[str] = (),
        offerings: Mapping[str, Iterable[str]] | None = None,
        seed: int | None = 0,
        load_default_amis: bool = False,
        clock: Callable[[], float] | None = None,
        pco_depth_fraction: float = DEFAULT_PCO_DEPTH_FRACTION,
        cop_min_relative_depth: float = DEFAULT_COP_MIN_RELATIVE_DEPTH,
    ) -> None:
        self.region = region
        self.price_book: PriceBook = price_book if price_book is not None else StaticPriceBook()
        self.capacity = capacity if capacity is not None else CapacityModel()
        for spec in unavailable:
            self.capacity.add(spec)
        self._offerings_override = (
            None if offerings is None else {k: frozenset(v) for k, v in offerings.items()}
        )
        self.seed = seed
        self.load_default_amis = load_default_amis
        self.clock = clock
        self.now: float = 0.0
        self.pco_depth_fraction = pco_depth_fraction
        self.cop_min_relative_depth = cop_min_relative_depth
        self.records: list[FleetRecord] = []
        self._mock: Any = None
        self._client: Any = None
        self._catalog: InstanceTypeCatalog | None = None
        self._allocator: FleetAllocator | None = None
        self._subnet_zones: dict[str, str | None] = {}
        self._bypass = False
        self._fleet_counter = 0

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> MockedEC2:
        """Start moto, create the client, install the hooks, create the region's EC2 state."""
        if self._mock is not None:
            raise RuntimeError("MockedEC2 already started")
        import boto3
        from moto import mock_aws
        from moto.moto_api._internal import mock_random

        prev = os.environ.get(_AMIS_ENV)
        os.environ[_AMIS_ENV] = "true" if self.load_default_amis else "false"
        mock = mock_aws()
        try:
            mock.start()
            self._mock = mock
            if self.seed is not None:
                mock_random.seed(self.seed)
            session = boto3.session.Session(region_name=self.region, **DUMMY_CREDENTIALS)
            self._client = session.client("ec2", region_name=self.region)
            self._install_hooks()
            # First call creates moto's EC2 backend for the region (AMIs load now).
            self._client.describe_availability_zones()
        except BaseException:
            if self._mock is not None:
                self._mock.stop()
                self._mock = None
            raise
        finally:
            if prev is None:
                os.environ.pop(_AMIS_ENV, None)
            else:
                os.environ[_AMIS_ENV] = prev
        return self

    def stop(self) -> None:
        """Stop moto (drops its state). The records stay readable."""
        if self._mock is not None:
            self._mock.stop()
            self._mock = None
        self._client = None
        self._catalog = None
        self._allocator = None
        self._subnet_zones.clear()

    def __enter__(self) -> MockedEC2:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # -- accessors -----------------------------------------------------------------------------
    @property
    def client(self) -> Any:
        """The boto3 EC2 client with the fleet model installed."""
        if self._client is None:
            raise RuntimeError("MockedEC2 is not started")
        return self._client

    @property
    def catalog(self) -> InstanceTypeCatalog:
        """The instance-type catalogue read through this backend's client (cached; the parsed,
        read-only answer is shared process-wide per region and moto version, see
        :mod:`awsprovider.ec2.catalog`)."""
        if self._catalog is None:
            self._catalog = InstanceTypeCatalog.for_moto(self.client, self.region)
        return self._catalog

    @property
    def allocator(self) -> FleetAllocator:
        """The fleet model (offerings from the catalogue unless given at construction)."""
        if self._allocator is None:
            offerings = self._offerings_override if self._offerings_override is not None else self.catalog.offerings()
            self._allocator = FleetAllocator(
                self.price_book,
                offerings=offerings,
                capacity=self.capacity,
                zone_of_subnet=self.zone_of_subnet,
                pco_depth_fraction=self.pco_depth_fraction,
                cop_min_relative_depth=self.cop_min_relative_depth,
            )
        return self._allocator

    @property
    def decisions(self) -> list[FleetDecision]:
        """Every unit decision so far, in order."""
        return [d for r in self.records for d in r.decisions]

    def current_time(self) -> float:
        """Virtual now: ``clock()`` when given, else the ``now`` attribute."""
        return float(self.clock()) if self.clock is not None else self.now

    def set_scenario(self, price_book: PriceBook | None = None, capacity: CapacityModel | None = None) -> None:
        """Re-price and/or replace the capacity model of a running backend (moto state, catalogue
        and records are kept); the fleet model is rebuilt on the next CreateFleet. ``None`` keeps
        the current one."""
        if price_book is not None:
            self.price_book = price_book
        if capacity is not None:
            self.capacity = capacity
        self._allocator = None

    def add_unavailable(self, spec: str | CapacityRule) -> CapacityRule:
        """Inject a capacity error rule (``TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE[:key=value...]``)."""
        return self.capacity.add(spec)

    def zone_of_subnet(self, subnet_id: str) -> str | None:
        """The zone of a subnet (cached; ``None`` when moto does not know it)."""
        if subnet_id not in self._subnet_zones:
            from botocore.exceptions import ClientError

            try:
                subnets = self.client.describe_subnets(SubnetIds=[subnet_id])["Subnets"]
                self._subnet_zones[subnet_id] = subnets[0]["AvailabilityZone"] if subnets else None
            except ClientError:
                self._subnet_zones[subnet_id] = None
        return self._subnet_zones[subnet_id]

    # -- network / launch template helpers -------------------------------------------------
    def default_subnets(self) -> dict[str, str]:
        """moto's default VPC subnets: zone -> subnet id (one per zone), sorted by zone."""
        subnets = self.client.describe_subnets(Filters=[{"Name": "default-for-az", "Values": ["true"]}])["Subnets"]
        out = {s["AvailabilityZone"]: s["SubnetId"] for s in sorted(subnets, key=lambda s: s["AvailabilityZone"])}
        self._subnet_zones.update(dict((v, k) for k, v in out.items()))
        return out

    def create_network(
        self,
        cidr: str = "10.0.0.0/16",
        zones: Iterable[str] | None = None,
        tags: Mapping[str, str] | None = None,
        subnet_prefix: int = 20,
    ) -> Network:
        """Create a VPC with one subnet per zone (all region zones by default) and a security group,
        all tagged with ``tags`` (what EC2NodeClass selector terms match)."""
        tag_list = [{"Key": k, "Value": v} for k, v in (tags or {}).items()]

        def spec(kind: str) -> list[dict[str, Any]]:
            return [{"ResourceType": kind, "Tags": tag_list}] if tag_list else []

        if zones is None:
            azs = self.client.describe_availability_zones()["AvailabilityZones"]
            zones = sorted(z["ZoneName"] for z in azs)
        zones = list(zones)
        net = ipaddress.ip_network(cidr)
        blocks = net.subnets(new_prefix=subnet_prefix)
        vpc_id = self.client.create_vpc(CidrBlock=cidr, TagSpecifications=spec("vpc"))["Vpc"]["VpcId"]
        subnets: dict[str, str] = {}
        for zone in zones:
            block = next(blocks)
            sid = self.client.create_subnet(
                VpcId=vpc_id, CidrBlock=str(block), AvailabilityZone=zone, TagSpecifications=spec("subnet")
            )["Subnet"]["SubnetId"]
            subnets[zone] = sid
            self._subnet_zones[sid] = zone
        sg = self.client.create_security_group(
            GroupName=f"karpy-{vpc_id}", Description="karpy nodes", VpcId=vpc_id,
            TagSpecifications=spec("security-group"),
        )["GroupId"]
        return Network(vpc_id, subnets, sg)

    def create_launch_template(
        self, name: str, image_id: str = "ami-12c6146b", tags: Mapping[str, str] | None = None, **data: Any
    ) -> str:
        """Create a launch template (``LaunchTemplateData`` = ImageId + ``data``); returns its id."""
        kwargs: dict[str, Any] = {"LaunchTemplateName": name, "LaunchTemplateData": {"ImageId": image_id, **data}}
        if tags:
            kwargs["TagSpecifications"] = [
                {"ResourceType": "launch-template", "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}
            ]
        return str(self.client.create_launch_template(**kwargs)["LaunchTemplate"]["LaunchTemplateId"])

    def create_fleet(self, **params: Any) -> dict[str, Any]:
        """``client.create_fleet(**params)`` (convenience)."""
        return dict(self.client.create_fleet(**params))

    # -- hooks ---------------------------------------------------------------------------------
    def _install_hooks(self) -> None:
        ev = self._client.meta.events
        ev.register("provide-client-params.ec2.CreateFleet", self._on_provide_params)
        ev.register("before-call.ec2.CreateFleet", self._on_before_call)
        ev.register("after-call.ec2.CreateFleet", self._on_after_call)

    def _next_fleet_id(self) -> str:
        self._fleet_counter += 1
        return f"fleet-00000000-0000-4000-8000-{self._fleet_counter:012x}"

    def _on_provide_params(self, params: dict[str, Any], context: dict[str, Any], **_: Any) -> dict[str, Any] | None:
        if self._bypass:
            return None
        now = self.current_time()
        # No deep copy: nothing here or in botocore mutates the nested request (the hooks build a
        # new request instead of editing ``params``; botocore only adds top-level keys such as
        # ``ClientToken`` to its own dict, and the top level is copied). The record therefore
        # shares the caller's nested structures: a caller must not edit a request after sending
        # it (karpy builds every request fresh).
        record = FleetRecord(request=dict(params), now=now)
        self.records.append(record)
        pending = _Pending(record)
        context[_CONTEXT_KEY] = pending
        if not is_modelled_request(params):
            record.sent = record.request
            return None
        decisions = self.allocator.allocate(params, now)
        record.decisions = tuple(decisions)
        pending.errors = _dedupe_errors(decisions)
        groups: dict[int, int] = {}
        for d in decisions:
            if d.chosen is not None:
                groups[d.chosen.override_index] = groups.get(d.chosen.override_index, 0) + 1
        if not groups:
            pending.all_failed = True
            return None
        flat = [(ltc, ovr) for ltc in params["LaunchTemplateConfigs"] for ovr in (ltc.get("Overrides") or [])]
        requests: list[dict[str, Any]] = []
        for index, count in groups.items():
            ltc, ovr = flat[index]
            new = {k: v for k, v in params.items() if k not in ("LaunchTemplateConfigs", "TargetCapacitySpecification")}
            # Shallow copies suffice: the specification and the override are flat maps of scalars
            # in every request the model decides, and moto does not edit what it is sent.
            new["LaunchTemplateConfigs"] = [
                {"LaunchTemplateSpecification": dict(ltc["LaunchTemplateSpecification"]), "Overrides": [dict(ovr)]}
            ]
            tcs = {k: v for k, v in params["TargetCapacitySpecification"].items()
                   if k not in ("OnDemandTargetCapacity", "SpotTargetCapacity")}
            tcs["TotalTargetCapacity"] = count
            new["TargetCapacitySpecification"] = tcs
            requests.append(new)
        record.sent = requests[0]
        pending.extra_requests = requests[1:]
        return requests[0]

    def _on_before_call(self, context: dict[str, Any], **_: Any) -> Any:
        pending: _Pending | None = context.get(_CONTEXT_KEY)
        if pending is None or not pending.all_failed:
            return None
        from botocore.awsrequest import AWSResponse

        parsed = {
            "FleetId": self._next_fleet_id(),
            "Instances": [],
            "Errors": copy.deepcopy(pending.errors),
            "ResponseMetadata": {"HTTPStatusCode": 200, "HTTPHeaders": {}, "RetryAttempts": 0},
        }
        return AWSResponse(f"https://ec2.{self.region}.amazonaws.com/", 200, {}, None), parsed

    def _on_after_call(self, http_response: Any, parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        pending: _Pending | None = context.get(_CONTEXT_KEY)
        if pending is None:
            return
        ok = getattr(http_response, "status_code", 200) < 300 and "Error" not in parsed
        if ok and not pending.all_failed:
            for extra in pending.extra_requests:
                self._bypass = True
                try:
                    more = self._client.create_fleet(**extra)
                finally:
                    self._bypass = False
                parsed.setdefault("Instances", []).extend(more.get("Instances", []))
            if pending.errors:
                parsed.setdefault("Errors", []).extend(copy.deepcopy(pending.errors))
        pending.record.response = copy.deepcopy({k: v for k, v in parsed.items() if k != "ResponseMetadata"})
