"""Karpenter's fake catalogue and fake cloud provider.

Mirrors pkg/cloudprovider/fake/instancetype.go (NewInstanceType, InstanceTypes,
InstanceTypesAssorted, PriceFromResources) and pkg/cloudprovider/fake/cloudprovider.go
(CloudProvider: Create, Get, List, Delete, GetInstanceTypes and the default six instance types).

Upstream's ``init()`` functions insert ``size``, ``special``, ``integer`` and
``karpenter.test.sh/reservation-id`` into the global ``v1.WellKnownLabels``; karpy has no global
registry, so they are :data:`FAKE_WELL_KNOWN_LABELS` (returned by
:meth:`FakeCloudProvider.well_known_labels`) and every fake instance type carries
``CORE_WELL_KNOWN_LABELS | FAKE_WELL_KNOWN_LABELS`` as its ``well_known`` set.

Deterministic rules (Go is random or map-ordered here):
- ``PriceFromResources`` sums cpu, then memory, then the GPU resources in sorted name order
  (Go iterates the map; float addition order can change the last digit of a 3-term sum).
- ``Create`` sorts candidates with a stable sort (Go ``sort.Slice``), and a multi-valued ``In``
  requirement's label is ``Requirement.any()`` (the smallest value; Go: ``Values()[0]``).
- Provider ids are ``fake:///`` + a 17-digit per-provider counter (Go: 17 random alphanumerics).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from karpy.api.quantity import NANO, Quantity, parse_nanos
from karpy.cloudprovider.types import (
    UnavailableSpecError,
    InstanceType,
    InstanceTypeOverhead,
    InsufficientCapacityError,
    NodeClaimNotFoundError,
    Offering,
    Offerings,
)
from karpy.scheduling.labels import (
    ARCHITECTURE_AMD64,
    ARCHITECTURE_ARM64,
    CAPACITY_TYPE_ON_DEMAND,
    CAPACITY_TYPE_RESERVED,
    CAPACITY_TYPE_SPOT,
    CORE_WELL_KNOWN_LABELS,
    LABEL_ARCH,
    LABEL_CAPACITY_TYPE,
    LABEL_INSTANCE_TYPE,
    LABEL_NODEPOOL,
    LABEL_OS,
    LABEL_ZONE,
    OP_DOES_NOT_EXIST,
    OP_IN,
)
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements
from karpy.scheduling.resources import fits, from_quantities, to_quantities

if TYPE_CHECKING:  # pragma: no cover
    from karpy.api.nodeclaim import NodeClaim

__all__ = [
    "EXOTIC_INSTANCE_LABEL_KEY",
    "FAKE_WELL_KNOWN_LABELS",
    "FAKE_ALL_WELL_KNOWN_LABELS",
    "INTEGER_INSTANCE_LABEL_KEY",
    "LABEL_INSTANCE_SIZE",
    "LABEL_RESERVATION_ID",
    "RESOURCE_GPU_VENDOR_A",
    "RESOURCE_GPU_VENDOR_B",
    "FakeCloudProvider",
    "default_instance_types",
    "instance_types",
    "instance_types_assorted",
    "new_instance_type",
    "price_from_resources",
]

LABEL_INSTANCE_SIZE = "size"
EXOTIC_INSTANCE_LABEL_KEY = "special"
INTEGER_INSTANCE_LABEL_KEY = "integer"
RESOURCE_GPU_VENDOR_A = "fake.com/vendor-a"
RESOURCE_GPU_VENDOR_B = "fake.com/vendor-b"
#: pkg/test/v1alpha1/labels.go LabelReservationID (the fake's cloudprovider.ReservationIDLabel)
LABEL_RESERVATION_ID = "karpenter.test.sh/reservation-id"

#: The labels the fake's init() functions add to v1.WellKnownLabels.
FAKE_WELL_KNOWN_LABELS: frozenset[str] = frozenset(
    {LABEL_INSTANCE_SIZE, EXOTIC_INSTANCE_LABEL_KEY, INTEGER_INSTANCE_LABEL_KEY, LABEL_RESERVATION_ID}
)
#: v1.WellKnownLabels as seen by tests that import the fake.
FAKE_ALL_WELL_KNOWN_LABELS: frozenset[str] = CORE_WELL_KNOWN_LABELS | FAKE_WELL_KNOWN_LABELS

_CPU = "cpu"
_MEMORY = "memory"
_PODS = "pods"
_GPU_RESOURCES = (RESOURCE_GPU_VENDOR_A, RESOURCE_GPU_VENDOR_B)
_FOUR_CPU = 4 * NANO
_EIGHT_GI = 8 * (1 << 30) * NANO


def price_from_resources(resources: Mapping[str, int]) -> float:
    """Mirrors fake.PriceFromResources on a nano-unit list: 0.1/cpu + 0.1/GB of memory + 1.0 per GPU
    resource present (pods unpriced). Summed cpu, memory, then GPUs (sorted) - see module doc."""
    price = 0.0
    cpu = resources.get(_CPU)
    if cpu is not None:
        price += 0.1 * (cpu / NANO)
    mem = resources.get(_MEMORY)
    if mem is not None:
        price += 0.1 * (mem / NANO) / 1e9
    for name in sorted(resources):
        if name in _GPU_RESOURCES:
            price += 1.0
    return price


def _offering(capacity_type: str, zone: str, price: float) -> Offering:
    return Offering(
        Requirements(Requirement(LABEL_CAPACITY_TYPE, OP_IN, (capacity_type,)), Requirement(LABEL_ZONE, OP_IN, (zone,))),
        price,
        available=True,
        reservation_id_label=LABEL_RESERVATION_ID,
    )


def _default_offerings(price: float) -> list[Offering]:
    """The five default offerings of NewInstanceType (zone-3 is on-demand only)."""
    return [
        _offering(CAPACITY_TYPE_SPOT, "test-zone-1", price),
        _offering(CAPACITY_TYPE_SPOT, "test-zone-2", price),
        _offering(CAPACITY_TYPE_ON_DEMAND, "test-zone-1", price),
        _offering(CAPACITY_TYPE_ON_DEMAND, "test-zone-2", price),
        _offering(CAPACITY_TYPE_ON_DEMAND, "test-zone-3", price),
    ]


def _insert(req: Requirement, value: str) -> Requirement:
    """Go's Requirement.Insert on a concrete requirement (values ∪ {value}), kept immutable."""
    if req.complement:  # pragma: no cover - the fake only inserts into DoesNotExist/In requirements
        return Requirement._make(req.key, True, req.values - {value}, req.gte, req.lte, req.min_values)
    return Requirement._make(req.key, False, req.values | {value}, None, None, req.min_values)


def _dedupe(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def new_instance_type(
    name: str,
    *,
    resources: Mapping[str, str | int | float | Quantity] | None = None,
    offerings: Sequence[Offering] | None = None,
    architecture: str = "",
    operating_systems: Iterable[str] | None = None,
    requirements: Iterable[Requirement] | None = None,
) -> InstanceType:
    """Mirrors fake.NewInstanceType. Keyword options mirror WithResources (quantities, e.g. ``"4Gi"`` or
    ``4``; replaces the map, then cpu 4 / memory 4Gi / pods 5 fill zero-or-missing entries),
    WithOfferings, WithArchitecture (default amd64), WithOperatingSystems (default linux, windows,
    darwin) and WithRequirements (added with intersection before the size label is set)."""
    res: dict[str, int] = {k: parse_nanos(v) for k, v in (resources or {}).items()}
    if not res.get(_CPU):
        res[_CPU] = 4 * NANO
    if not res.get(_MEMORY):
        res[_MEMORY] = 4 * (1 << 30) * NANO
    if not res.get(_PODS):
        res[_PODS] = 5 * NANO
    ofs = list(offerings) if offerings else _default_offerings(price_from_resources(res))
    arch = architecture or ARCHITECTURE_AMD64
    oses = sorted(set(operating_systems or ())) or sorted({"linux", "windows", "darwin"})
    available = [o for o in ofs if o.available]
    cpu_value = -(-res[_CPU] // NANO)  # Quantity.Value(): rounds up
    reqs = Requirements(
        Requirement(LABEL_INSTANCE_TYPE, OP_IN, (name,)),
        Requirement(LABEL_ARCH, OP_IN, (arch,)),
        Requirement(LABEL_OS, OP_IN, oses),
        Requirement(LABEL_ZONE, OP_IN, _dedupe(o.requirements.get(LABEL_ZONE).any() for o in available)),
        Requirement(LABEL_CAPACITY_TYPE, OP_IN, _dedupe(o.requirements.get(LABEL_CAPACITY_TYPE).any() for o in available)),
        Requirement(LABEL_INSTANCE_SIZE, OP_DOES_NOT_EXIST),
        Requirement(EXOTIC_INSTANCE_LABEL_KEY, OP_DOES_NOT_EXIST),
        Requirement(INTEGER_INSTANCE_LABEL_KEY, OP_IN, (str(cpu_value),)),
    )
    for r in requirements or ():
        reqs.add(r)
    if res[_CPU] > _FOUR_CPU and res[_MEMORY] > _EIGHT_GI:
        reqs[LABEL_INSTANCE_SIZE] = _insert(reqs.get(LABEL_INSTANCE_SIZE), "large")
        reqs[EXOTIC_INSTANCE_LABEL_KEY] = _insert(reqs.get(EXOTIC_INSTANCE_LABEL_KEY), "optional")
    else:
        reqs[LABEL_INSTANCE_SIZE] = _insert(reqs.get(LABEL_INSTANCE_SIZE), "small")
    return InstanceType(
        name=name,
        requirements=reqs,
        offerings=Offerings(ofs),
        capacity=res,
        overhead=InstanceTypeOverhead(kube_reserved={_CPU: 100 * 1_000_000, _MEMORY: 10 * (1 << 20) * NANO}),
        well_known=FAKE_ALL_WELL_KNOWN_LABELS,
    )


def default_instance_types() -> list[InstanceType]:
    """The six instance types fake.CloudProvider.GetInstanceTypes returns when none are set, in
    upstream order (the order decides price ties)."""
    return [
        new_instance_type("default-instance-type"),
        new_instance_type("small-instance-type", resources={_CPU: "2", _MEMORY: "2Gi"}),
        new_instance_type("gpu-vendor-instance-type", resources={RESOURCE_GPU_VENDOR_A: "2"}),
        new_instance_type("gpu-vendor-b-instance-type", resources={RESOURCE_GPU_VENDOR_B: "2"}),
        new_instance_type(
            "arm-instance-type",
            architecture=ARCHITECTURE_ARM64,
            operating_systems=("ios", "linux", "windows", "darwin"),
            resources={_CPU: "16", _MEMORY: "128Gi"},
        ),
        new_instance_type("single-pod-instance-type", resources={_PODS: "1"}),
    ]


def instance_types(total: int) -> list[InstanceType]:
    """Mirrors fake.InstanceTypes: ``fake-it-<i>`` with i+1 cpu, 2(i+1)Gi memory, 10(i+1) pods."""
    return [
        new_instance_type(
            f"fake-it-{i}",
            resources={_CPU: str(i + 1), _MEMORY: f"{(i + 1) * 2}Gi", _PODS: str((i + 1) * 10)},
        )
        for i in range(total)
    ]


def instance_types_assorted() -> list[InstanceType]:
    """Mirrors fake.InstanceTypesAssorted: 1344 types, one offering each, named
    ``<cpu>-cpu-<mem>-mem-<arch>-<os>-<zone>-<capacity type>`` (loop order cpu, mem, zone, ct, os, arch)."""
    out: list[InstanceType] = []
    for cpu in (1, 2, 4, 8, 16, 32, 64):
        for mem in (1, 2, 4, 8, 16, 32, 64, 128):
            for zone in ("test-zone-1", "test-zone-2", "test-zone-3"):
                for ct in (CAPACITY_TYPE_SPOT, CAPACITY_TYPE_ON_DEMAND):
                    for os_ in ("linux", "windows"):
                        for arch in (ARCHITECTURE_AMD64, ARCHITECTURE_ARM64):
                            res = {_CPU: str(cpu), _MEMORY: f"{mem}Gi"}
                            price = price_from_resources({k: parse_nanos(v) for k, v in res.items()})
                            out.append(new_instance_type(
                                f"{cpu}-cpu-{mem}-mem-{arch}-{os_}-{zone}-{ct}",
                                architecture=arch,
                                operating_systems=(os_,),
                                resources=res,
                                offerings=[_offering(ct, zone, price)],
                            ))
    return out


def _nonzero_quantities(rl: Mapping[str, int]) -> dict[str, Quantity]:
    return to_quantities({k: v for k, v in rl.items() if v != 0})


class FakeCloudProvider:
    """Mirrors fake.CloudProvider (test double): records calls, launches the cheapest fitting type."""

    def __init__(self, instance_types: Sequence[InstanceType] | None = None) -> None:
        self.instance_types: list[InstanceType] | None = list(instance_types) if instance_types is not None else None
        self.instance_types_for_nodepool: dict[str, list[InstanceType]] = {}
        self.errors_for_nodepool: dict[str, BaseException] = {}
        self.create_calls: list[NodeClaim] = []
        self.allowed_create_calls: int = sys.maxsize
        self.next_create_err: BaseException | None = None
        self.next_get_err: BaseException | None = None
        self.next_delete_err: BaseException | None = None
        self.delete_calls: list[NodeClaim] = []
        self.get_calls: list[str] = []
        self.created_nodeclaims: dict[str, NodeClaim] = {}
        self._seq = 0

    @classmethod
    def from_options(cls, options: Any) -> FakeCloudProvider:
        """Factory for simulations (``karpy.cloudproviders`` entry point ``fake``).

        The catalogue is Karpenter's default six types, or ``options.extra["instance_types"]``
        (a list of InstanceTypes, or an int ``n`` for :func:`instance_types`). Injected capacity
        errors (``TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE``) mark the matching offerings unavailable for the
        whole run: the fake has no fleet, so nothing is launched from them.
        """
        from fnmatch import fnmatchcase

        extra = getattr(options, "extra", None) or {}
        chosen = extra.get("instance_types")
        its = instance_types(chosen) if isinstance(chosen, int) else list(chosen or default_instance_types())
        for spec in getattr(options, "unavailable", ()) or ():
            parts = spec.split(":")
            if len(parts) != 3:
                raise UnavailableSpecError(spec, "expected TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE")
            type_glob, zone_glob, ct = parts
            for it in its:
                if not fnmatchcase(it.name, type_glob):
                    continue
                for o in it.offerings:
                    if fnmatchcase(o.zone, zone_glob) and (ct in ("*", "") or o.capacity_type == ct):
                        o.available = False
                it.refresh_availability()
        return cls(its)

    @property
    def name(self) -> str:
        """Mirrors CloudProvider.Name."""
        return "fake"

    def well_known_labels(self) -> frozenset[str]:
        """The labels the fake registers as well known (its init() functions)."""
        return FAKE_WELL_KNOWN_LABELS

    def reset(self) -> None:
        """Mirrors CloudProvider.Reset (the parts karpy models)."""
        self.__init__()  # type: ignore[misc]

    def get_instance_types(self, nodepool: Any) -> list[InstanceType]:
        """Mirrors CloudProvider.GetInstanceTypes: per-NodePool errors / overrides, then the configured
        types, else a fresh copy of :func:`default_instance_types`."""
        np_name = _name_of(nodepool)
        if np_name is not None:
            err = self.errors_for_nodepool.get(np_name)
            if err is not None:
                raise err
            its = self.instance_types_for_nodepool.get(np_name)
            if its is not None:
                return its
        if self.instance_types is not None:
            return self.instance_types
        return default_instance_types()

    def create(self, nodeclaim: NodeClaim) -> NodeClaim:
        """Mirrors CloudProvider.Create: keep catalogue-order types whose requirements are compatible with
        the NodeClaim's, that have an available compatible offering and whose allocatable fits the
        requests; stable-sort by cheapest such offering; take the first. Labels: ``any()`` of every ``In``
        requirement of the type, then the chosen offering's requirements (first compatible reserved
        offering, decrementing its capacity, else the first compatible available one), then the
        NodeClaim's labels. Upstream panics when nothing qualifies; karpy raises
        InsufficientCapacityError."""
        if self.next_create_err is not None:
            err, self.next_create_err = self.next_create_err, None
            raise err
        self.create_calls.append(nodeclaim)
        if len(self.create_calls) > self.allowed_create_calls:
            raise RuntimeError("erroring as number of AllowedCreateCalls has been exceeded")
        reqs = Requirements.from_node_selector_requirements(nodeclaim.spec.requirements)
        requests = from_quantities(nodeclaim.spec.resources.requests)
        wk = FAKE_ALL_WELL_KNOWN_LABELS
        labels_in = dict(nodeclaim.metadata.labels or {})
        candidates = [
            it for it in self._instance_types_named(labels_in.get(LABEL_NODEPOOL, ""))
            if reqs.is_compatible(it.requirements, wk)
            and it.has_compatible_available_offering(reqs, wk)
            and fits(requests, it.allocatable())
        ]
        if not candidates:
            raise InsufficientCapacityError("no instance type satisfied the nodeclaim's requirements and requests")
        prices = {id(it): it.min_compatible_price(reqs, wk) for it in candidates}
        candidates.sort(key=lambda it: prices[id(it)])
        it = candidates[0]
        labels: dict[str, str] = {}
        for key, req in it.requirements.items():
            if req.operator == OP_IN:
                labels[key] = req.any()
        offerings = it.available_offerings.compatible(reqs, wk)
        offering: Offering | None = None
        for o in offerings:
            if o.capacity_type == CAPACITY_TYPE_RESERVED:
                o.reservation_capacity -= 1
                if o.reservation_capacity == 0:
                    o.available = False
                    it.refresh_availability()
                offering = o
                break
        if offering is None:
            offering = offerings[0]
        for key, req in offering.requirements.items():
            labels[key] = req.any()
        labels.update(labels_in)

        self._seq += 1
        created = nodeclaim.model_copy(deep=True)
        created.metadata.labels = labels
        created.status.provider_id = f"fake:///{self._seq:017d}"
        created.status.capacity = _nonzero_quantities(it.capacity)
        created.status.allocatable = _nonzero_quantities(it.allocatable())
        self.created_nodeclaims[created.status.provider_id] = created
        return created

    def _instance_types_named(self, nodepool_name: str) -> list[InstanceType]:
        return self.get_instance_types(_NamedNodePool(nodepool_name))

    def get(self, provider_id: str) -> NodeClaim:
        """Mirrors CloudProvider.Get."""
        if self.next_get_err is not None:
            err, self.next_get_err = self.next_get_err, None
            raise err
        self.get_calls.append(provider_id)
        nc = self.created_nodeclaims.get(provider_id)
        if nc is not None:
            return nc.model_copy(deep=True)
        raise NodeClaimNotFoundError(f"no nodeclaim exists with id (id={provider_id})")

    def list(self) -> list[NodeClaim]:
        """Mirrors CloudProvider.List (in creation order)."""
        return [nc.model_copy(deep=True) for nc in self.created_nodeclaims.values()]

    def delete(self, nodeclaim: NodeClaim) -> None:
        """Mirrors CloudProvider.Delete."""
        if self.next_delete_err is not None:
            err, self.next_delete_err = self.next_delete_err, None
            raise err
        self.delete_calls.append(nodeclaim)
        pid = nodeclaim.status.provider_id or ""
        if pid in self.created_nodeclaims:
            del self.created_nodeclaims[pid]
            return
        raise NodeClaimNotFoundError(f"no nodeclaim exists with provider id (provider-id={pid})")


class _NamedNodePool:
    """The bare ``&v1.NodePool{ObjectMeta: {Name: ...}}`` fake Create builds from the nodepool label."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def _name_of(nodepool: Any) -> str | None:
    if nodepool is None:
        return None
    if isinstance(nodepool, str):
        return nodepool
    if isinstance(nodepool, _NamedNodePool):
        return nodepool.name
    meta = getattr(nodepool, "metadata", None)
    return getattr(meta, "name", None) if meta is not None else getattr(nodepool, "name", None)
