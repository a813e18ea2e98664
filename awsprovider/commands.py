"""The AWS provider's ``karpy`` subcommands: ``instance-types``, ``prices`` and ``prices diff``.

karpy's CLI never imports this module: it finds the commands through the ``karpy.commands``
entry-point group (see :mod:`karpy.cli`)::

    [project.entry-points."karpy.commands"]
    instance-types = "awsprovider.commands:instance_types"
    prices = "awsprovider.commands:prices"

``karpy instance-types`` is the catalogue as Karpenter sees it: the instance types
:class:`~awsprovider.instancetype.InstanceTypeProvider` builds from the mocked EC2 catalogue
(DescribeInstanceTypes through boto3, read once per command) and a dated price table, filtered like
Karpenter filters a NodePool's candidates (nodeclaim.go ``filterInstanceTypesByRequirements``: the
type's requirements intersect, and it has an available offering compatible with the requirements),
sorted by on-demand price (stable; ties and unpriced types by name).

``karpy prices`` lists the bundled tables; ``karpy prices diff A B --nodepool FILE`` ranks the
NodePool's compatible types under both tables the way ``InstanceTypes.OrderByPrice`` does (cheapest
available compatible offering of each capacity type the pool allows; ties keep catalogue order)
and shows how the top N moved.

Price columns: ``on-demand`` is the cheapest available on-demand offering and ``spot`` the cheapest
available spot offering (with its zone), both among offerings compatible with the requirements
apart from ``karpenter.sh/capacity-type`` (that key only decides which types are listed). Spot
prices come from the spot model of :mod:`awsprovider.spotmodel` (the JSON says so).

Everything here is importable and typed: ``instance_types_document``, ``price_tables_document``
and ``price_diff_document`` return the JSON documents, the ``render_*`` functions the tables.
Bad input raises ``ValueError`` subclasses (``PricingError``, ``ManifestError``, ...); the click
commands turn them into one line on stderr and exit code 2.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from karpy.cli import OutputChoice, bad_input, parse_requirement, preload_cloud_provider
from karpy.report.table import DASH, clean, format_price, format_rows

__all__ = [
    "DEFAULT_LIMIT",
    "DEFAULT_REGION",
    "DEFAULT_TOP",
    "NodePoolInput",
    "TypeRow",
    "instance_types",
    "instance_types_document",
    "load_nodepool",
    "parse_requirements",
    "price_diff_document",
    "price_tables_document",
    "prices",
    "render_instance_types",
    "render_price_diff",
    "render_price_tables",
]

DEFAULT_REGION = "us-east-1"
#: ``karpy instance-types --limit`` default (0 = all).
DEFAULT_LIMIT = 50
#: ``karpy prices diff --top`` default.
DEFAULT_TOP = 10
SPOT_BASIS = "modelled from the EC2 Spot Instance Advisor feed (awsprovider.spotmodel)"
_GIB = float(1 << 30)
_NANO = 10**9


# ----------------------------------------------------------------------------------------- inputs

def parse_requirements(texts: Sequence[str]) -> Any:
    """``--requirement`` strings -> :class:`~karpy.scheduling.requirements.Requirements`.

    Each string is parsed by :func:`karpy.cli.parse_requirement`; its key must be a well-known
    label (core or AWS), since no instance type defines any other label. Raises ``ValueError``.
    """
    from awsprovider.labels import WELL_KNOWN_LABELS
    from karpy.scheduling.requirements import Requirements

    reqs = Requirements()
    for text in texts:
        parsed = Requirements.from_node_selector_requirements([parse_requirement(text)])
        key = next(iter(parsed))
        if key not in WELL_KNOWN_LABELS:
            close = difflib.get_close_matches(key, sorted(WELL_KNOWN_LABELS), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"requirement {text!r}: {key!r} is not an instance-type label{hint}")
        reqs.add(*parsed.values())
    return reqs


@dataclass
class NodePoolInput:
    """A NodePool file: the NodePool, its EC2NodeClass (None = the default one) and NodeOverlays."""

    path: Path
    nodepool: Any
    nodeclass: Any | None = None
    overlays: list[Any] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.nodepool.metadata.name)

    def requirements(self) -> Any:
        """The NodeClaimTemplate requirements (nodeclaimtemplate.go NewNodeClaimTemplate)."""
        from karpy.provisioning.nodeclaimtemplate import NodeClaimTemplate

        return NodeClaimTemplate(self.nodepool).requirements


def load_nodepool(path: str | Path) -> NodePoolInput:
    """Load a manifest file holding exactly one NodePool (plus optionally its EC2NodeClass and
    NodeOverlays). Raises ``ManifestError`` / ``ValueError`` naming the file."""
    from awsprovider.apis import EXTRA_KINDS, EC2NodeClass
    from karpy.api.loader import load_manifests

    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file or directory")
    loaded = load_manifests(p, extra_kinds=EXTRA_KINDS)
    pools = loaded.nodepools
    if not pools:
        raise ValueError(f"{p}: no NodePool (karpenter.sh/v1) found")
    if len(pools) > 1:
        names = ", ".join(np.metadata.name for np in pools)
        raise ValueError(f"{p}: holds {len(pools)} NodePools ({names}); pass a file with one NodePool")
    nodepool = pools[0]
    nodeclasses = {nc.metadata.name: nc for nc in loaded.extra.get("EC2NodeClass", []) if isinstance(nc, EC2NodeClass)}
    ref = nodepool.spec.template.spec.node_class_ref
    nodeclass = None
    if nodeclasses:
        ref_name = ref.name if ref is not None else None
        nodeclass = nodeclasses.get(ref_name) if ref_name else None
        if nodeclass is None:
            raise ValueError(f"{p}: NodePool {nodepool.metadata.name!r} references EC2NodeClass {ref_name!r}, "
                             f"which the file does not define (it defines {', '.join(sorted(nodeclasses))})")
    return NodePoolInput(p, nodepool, nodeclass, list(loaded.nodeoverlays))


# ------------------------------------------------------------------------------------ catalogue

@contextmanager
def _provider(region: str, pricing: Any, pool: NodePoolInput | None, cache: bool = True) -> Iterator[Any]:
    """The AWS cloud provider exactly as ``karpy simulate`` builds it for this NodePool file (its
    EC2NodeClass and network, NodeOverlays and their prices), so ``instance-types --nodepool``
    and ``prices diff --nodepool`` see the instance types ``simulate`` sees. ``cache=False``: read
    the catalogue from moto, bypassing the on-disk cache (``--no-cache``)."""
    from awsprovider.cloudprovider import AWSCloudProvider

    nodeclasses = [pool.nodeclass] if pool is not None and pool.nodeclass is not None else []
    provider = AWSCloudProvider(region, pricing, nodeclasses=nodeclasses,
                                overlays=pool.overlays if pool is not None else (), catalog_cache=cache)
    try:
        if pool is not None:
            provider.prepare([pool.nodepool], nodeclasses_given=bool(nodeclasses))
            from karpy.provisioning.provisioner import nodepool_is_ready

            if not nodepool_is_ready(pool.nodepool):
                raise ValueError(f"{pool.path}: " + "; ".join(provider.warnings))
        yield provider
    finally:
        provider.close()


def _instance_types(provider: Any, pool: NodePoolInput | None) -> list[Any]:
    """``CloudProvider.GetInstanceTypes`` of the pool (the default NodeClass without one)."""
    return list(provider.get_instance_types(pool.nodepool if pool is not None else None))


def _karpenter_compatible(its: Sequence[Any], reqs: Any) -> list[Any]:
    """nodeclaim.go filterInstanceTypesByRequirements without resources: requirements intersect
    and an available offering is compatible. Keeps the input order."""
    return [it for it in its
            if it.requirements.intersects(reqs) is None and it.offerings.available().has_compatible(reqs)]


def _with_capacity_type(reqs: Any, capacity_type: str | None) -> Any:
    """``reqs`` without the capacity-type key, plus ``capacity-type In [capacity_type]`` if given."""
    from karpy.scheduling.labels import LABEL_CAPACITY_TYPE, OP_IN
    from karpy.scheduling.requirement import Requirement
    from karpy.scheduling.requirements import Requirements

    out = Requirements(*(r for k, r in reqs.items() if k != LABEL_CAPACITY_TYPE))
    if capacity_type is not None:
        out.add(Requirement(LABEL_CAPACITY_TYPE, OP_IN, (capacity_type,)))
    return out


def _cheapest(it: Any, reqs: Any, capacity_type: str) -> Any | None:
    """The cheapest available offering of ``capacity_type`` compatible with ``reqs`` (first of ties)."""
    return it.offerings.available().compatible(_with_capacity_type(reqs, capacity_type)).cheapest()


def _label(it: Any, key: str) -> str | None:
    req = it.requirements.get(key)
    if req.complement or len(req.values) != 1:
        return None
    value: str = next(iter(req.values))
    return value


def _int_label(it: Any, key: str) -> int | None:
    value = _label(it, key)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _price(value: float | None) -> float | None:
    return None if value is None else round(float(value), 6)


@dataclass(frozen=True)
class TypeRow:
    """One instance type as listed by ``karpy instance-types``."""

    name: str
    arch: str | None
    cpu: int | None
    memory_gib: float | None
    generation: int | None
    family: str | None
    allocatable: dict[str, int]
    on_demand: float | None
    spot: float | None
    spot_zone: str | None
    labels: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (allocatable as Kubernetes quantities, prices rounded to 6 decimals)."""
        from karpy.scheduling.resources import to_quantities

        return {
            "name": self.name, "arch": self.arch, "cpu": self.cpu, "memory_gib": self.memory_gib,
            "generation": self.generation, "family": self.family,
            "allocatable": {k: str(v) for k, v in to_quantities({k: v for k, v in self.allocatable.items() if v}).items()},
            "on_demand_price": _price(self.on_demand),
            "spot_price": None if self.spot is None else {"price": _price(self.spot), "zone": self.spot_zone},
            "labels": dict(self.labels),
        }


def _row(it: Any, reqs: Any) -> TypeRow:
    from awsprovider import labels as L
    from karpy.scheduling.labels import CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT, LABEL_ARCH

    od = _cheapest(it, reqs, CAPACITY_TYPE_ON_DEMAND)
    spot = _cheapest(it, reqs, CAPACITY_TYPE_SPOT)
    mem = _int_label(it, L.LABEL_INSTANCE_MEMORY)
    labels = {k: v for k in sorted(it.requirements) if (v := _label(it, k)) is not None}
    return TypeRow(
        name=it.name, arch=_label(it, LABEL_ARCH), cpu=_int_label(it, L.LABEL_INSTANCE_CPU),
        memory_gib=None if mem is None else round(mem / 1024, 3),
        generation=_int_label(it, L.LABEL_INSTANCE_GENERATION), family=_label(it, L.LABEL_INSTANCE_FAMILY),
        allocatable=dict(it.allocatable()),
        on_demand=od.price if od is not None else None,
        spot=spot.price if spot is not None else None, spot_zone=spot.zone if spot is not None else None,
        labels=labels,
    )


def _requirements_doc(reqs: Any) -> list[dict[str, Any]]:
    out = []
    from karpy.report.table import natural_sorted

    for key, operator, values, min_values in reqs.node_selector_fields():
        entry: dict[str, Any] = {"key": key, "operator": operator, "values": natural_sorted(values)}
        if min_values is not None:
            entry["minValues"] = min_values
        out.append(entry)
    return out


def _prices_meta(pricing: Any) -> dict[str, Any]:
    meta = {"date": pricing.date, "source": pricing.source, "currency": pricing.currency, "spot": SPOT_BASIS}
    requested = pricing.prices_metadata().get("requested_date")
    if requested:
        meta["requested_date"] = requested  # no table of that date: this is the newest before it
    return meta


# ------------------------------------------------------------------------------ instance-types

def instance_types_document(region: str = DEFAULT_REGION, prices: str | None = None,
                            requirements: Sequence[str] = (), nodepool: str | Path | None = None,
                            limit: int = DEFAULT_LIMIT, cache: bool = True) -> dict[str, Any]:
    """The ``karpy instance-types -o json`` document (``cache=False``: ``--no-cache``).

    ``requirements``: ``'KEY OP VALUES'`` strings, added to the NodePool's requirements when
    ``nodepool`` (a manifest file with one NodePool) is given. ``limit`` 0 = every matching type.
    """
    from awsprovider.pricing import PricingProvider

    user_reqs = parse_requirements(requirements)
    pool = load_nodepool(nodepool) if nodepool is not None else None
    reqs = pool.requirements() if pool is not None else user_reqs.copy()
    if pool is not None:
        reqs.add(*user_reqs.values())
    if limit < 0:
        raise ValueError(f"--limit must be 0 (all) or positive, got {limit}")
    pricing = PricingProvider(region, prices)
    with _provider(region, pricing, pool, cache) as provider:
        its = _instance_types(provider, pool)
        total = len(its)
        rows = [_row(it, reqs) for it in _karpenter_compatible(its, reqs)]
    rows.sort(key=lambda r: (r.on_demand is None, r.on_demand or 0.0, r.name))
    shown = rows[:limit] if limit else rows
    return {
        "region": region,
        "prices": _prices_meta(pricing),
        "nodepool": pool.name if pool is not None else None,
        "requirements": _requirements_doc(reqs),
        "catalogue": total,
        "matching": len(rows),
        "shown": len(shown),
        "instance_types": [r.to_dict() for r in shown],
    }


def _gib(quantity: str | None) -> str:
    from karpy.api.quantity import parse_nanos

    if quantity is None:
        return DASH
    return f"{parse_nanos(quantity) / _NANO / _GIB:.2f}"


def _head(document: dict[str, Any]) -> str:
    p = document.get("prices") or {}
    return f"region: {clean(document.get('region'))}  prices: {clean(p.get('date'))} ({clean(p.get('source'))})"


def render_instance_types(document: dict[str, Any]) -> str:
    """The ``-o table`` view of :func:`instance_types_document`."""
    out = [_head(document)]
    if document.get("nodepool"):
        out.append(f"nodepool: {clean(document['nodepool'])}")
    reqs = document.get("requirements") or []
    if reqs:
        out.append("requirements: " + "; ".join(
            clean(" ".join([r["key"], r["operator"], ",".join(r["values"])]).strip()) for r in reqs))
    out.append(f"{document['matching']} of {document['catalogue']} instance types match; "
               f"showing {document['shown']}, by on-demand price")
    out.append("")
    rows = []
    for t in document["instance_types"]:
        alloc = t.get("allocatable") or {}
        spot = t.get("spot_price")
        rows.append((
            clean(t["name"]), clean(t.get("arch")), clean(t.get("cpu")),
            DASH if t.get("memory_gib") is None else f"{t['memory_gib']:g}",
            clean(alloc.get("cpu")), _gib(alloc.get("memory")), clean(alloc.get("pods")),
            format_price(t.get("on_demand_price")),
            DASH if not spot else f"{format_price(spot['price'])} ({clean(spot['zone'])})",
            clean(t.get("generation")),
        ))
    if rows:
        out.extend(format_rows(("TYPE", "ARCH", "CPU", "MEM GIB", "ALLOC CPU", "ALLOC MEM GIB", "ALLOC PODS",
                                "ON-DEMAND $/H", "SPOT $/H (ZONE)", "GEN"), rows))
    else:
        out.append("(no instance type matches)")
    out.append(f"spot prices: {document['prices'].get('spot')}")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------------- prices

def price_tables_document(region: str | None = None) -> dict[str, Any]:
    """The ``karpy prices -o json`` document: per region that can be simulated (sorted), its
    tables newest first, the default (newest) marked, with each table's source and number of
    priced types; ``price_region_only``: regions whose tables can only be a ``--price-region``
    proxy (the mocked EC2 has no offerings there), with their dates."""
    from awsprovider.ec2.regions import simulated_regions
    from awsprovider.pricing import list_tables, load_table

    if region is not None:
        load_table(region)  # PricingError naming the available regions
    by_region: dict[str, list[str]] = {}
    for r, d in list_tables(region):
        by_region.setdefault(r, []).append(d)
    regions = []
    # a region is listed only when it can be simulated end to end; other regions' tables can only
    # price a simulated region as a proxy (--price-region), and are listed apart
    proxy_only = {r: sorted(by_region.pop(r), reverse=True) for r in sorted(by_region) if r not in simulated_regions()}
    for r in sorted(by_region):
        dates = sorted(by_region[r], reverse=True)
        tables = []
        for d in dates:
            t = load_table(r, d)
            tables.append({"date": d, "default": d == dates[0], "types": len(t.prices), "source": t.source})
        regions.append({"region": r, "default": dates[0], "tables": tables})
    return {"regions": regions,
            "price_region_only": [{"region": r, "dates": dates} for r, dates in proxy_only.items()]}


def render_price_tables(document: dict[str, Any]) -> str:
    """The ``-o table`` view of :func:`price_tables_document`."""
    rows = [(clean(r["region"]), clean(t["date"]), "*" if t["default"] else "", str(t["types"]), clean(t["source"]))
            for r in document["regions"] for t in r["tables"]]
    out = format_rows(("REGION", "DATE", "DEFAULT", "TYPES", "SOURCE"), rows)
    out.append("* = the default table of the region (the newest)")
    for entry in document.get("price_region_only") or ():
        out.append(f"{clean(entry['region'])}: {len(entry['dates'])} tables usable only as --price-region "
                   f"(the mocked EC2 cannot simulate that region)")
    return "\n".join(out) + "\n"


def _ranking(its: Sequence[Any], reqs: Any, capacity_type: str) -> list[tuple[str, float]]:
    """OrderByPrice for one capacity type: (type, cheapest compatible available price), ascending,
    stable (catalogue = name order on ties); types without such an offering are left out."""
    ranked = []
    ct_reqs = _with_capacity_type(reqs, capacity_type)
    for it in its:
        best = it.offerings.available().compatible(ct_reqs).cheapest()
        if best is not None:
            ranked.append((it.name, best.price))
    ranked.sort(key=lambda x: x[1])
    return ranked


def _change(before: int | None, after: int | None, top: int) -> str:
    in_before = before is not None and before <= top
    in_after = after is not None and after <= top
    if in_after and not in_before:
        return "entered"
    if in_before and not in_after:
        return "left"
    if before is None or after is None or before == after:
        return ""
    return f"up {before - after}" if after < before else f"down {after - before}"


def _diff_section(capacity_type: str, before: list[tuple[str, float]], after: list[tuple[str, float]],
                  top: int) -> dict[str, Any]:
    rank_b = {n: (i + 1, p) for i, (n, p) in enumerate(before)}
    rank_a = {n: (i + 1, p) for i, (n, p) in enumerate(after)}
    top_b = [n for n, _ in before[:top]]
    top_a = [n for n, _ in after[:top]]
    names = top_a + [n for n in top_b if n not in set(top_a)]
    rows = []
    for n in names:
        b = rank_b.get(n)
        a = rank_a.get(n)
        delta = None if a is None or b is None else round(a[1] - b[1], 6)
        pct = None if delta is None or not b else round(delta / b[1] * 100, 2)
        rows.append({
            "instance_type": n,
            "before": None if b is None else {"rank": b[0], "price": _price(b[1])},
            "after": None if a is None else {"rank": a[0], "price": _price(a[1])},
            "delta": delta, "delta_percent": pct,
            "change": _change(b[0] if b else None, a[0] if a else None, top),
        })
    return {
        "capacity_type": capacity_type,
        "compatible": {"before": len(before), "after": len(after)},
        "entered": [n for n in top_a if n not in set(top_b)],
        "left": [n for n in top_b if n not in set(top_a)],
        "rows": rows,
    }


def price_diff_document(date1: str, date2: str, nodepool: str | Path, region: str = DEFAULT_REGION,
                        top: int = DEFAULT_TOP, cache: bool = True) -> dict[str, Any]:
    """The ``karpy prices diff -o json`` document (``cache=False``: ``--no-cache``): the NodePool's ``top`` cheapest compatible types
    under ``date1`` ("before") and ``date2`` ("after") per capacity type the pool allows
    (on-demand, then spot), with ranks, prices, deltas and the types that entered/left the top."""
    from awsprovider.pricing import PricingProvider
    from karpy.scheduling.labels import CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT, LABEL_CAPACITY_TYPE

    if top < 1:
        raise ValueError(f"--top must be positive, got {top}")
    before_p = PricingProvider(region, date1)
    after_p = PricingProvider(region, date2)
    pool = load_nodepool(nodepool)
    reqs = pool.requirements()
    allowed = reqs.get(LABEL_CAPACITY_TYPE)
    cts = [ct for ct in (CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT) if allowed.has(ct)]
    if not cts:
        raise ValueError(f"{pool.path}: NodePool {pool.name!r} allows neither on-demand nor spot capacity")
    with _provider(region, before_p, pool, cache) as provider:
        before_its = _karpenter_compatible(_instance_types(provider, pool), reqs)
        after_its = _karpenter_compatible(_instance_types(provider.with_scenario(after_p), pool), reqs)
        sections = [_diff_section(ct, _ranking(before_its, reqs, ct), _ranking(after_its, reqs, ct), top)
                    for ct in cts]
    return {
        "region": region,
        "nodepool": pool.name,
        "requirements": _requirements_doc(reqs),
        "top": top,
        "before": _prices_meta(before_p),
        "after": _prices_meta(after_p),
        "capacity_types": sections,
    }


def _signed(value: float | None, fmt: str) -> str:
    return DASH if value is None else format(value, "+" + fmt)


def render_price_diff(document: dict[str, Any]) -> str:
    """The ``-o table`` view of :func:`price_diff_document`."""
    b, a = document["before"], document["after"]
    def said(meta: dict[str, Any]) -> str:
        asked = meta.get("requested_date")
        return f"  [no table dated {clean(asked)}: the newest before it]" if asked else ""

    out = [f"region: {clean(document['region'])}  nodepool: {clean(document['nodepool'])}  top {document['top']}",
           f"A = {clean(b['date'])} ({clean(b['source'])}){said(b)}",
           f"B = {clean(a['date'])} ({clean(a['source'])}){said(a)}"]
    for sec in document["capacity_types"]:
        comp = sec["compatible"]
        out.append("")
        out.append(f"{sec['capacity_type'].upper()} (compatible types: A {comp['before']}, B {comp['after']})")
        rows = []
        for r in sec["rows"]:
            rb, ra = r["before"] or {}, r["after"] or {}
            rows.append((
                clean(r["instance_type"]),
                clean(rb.get("rank")), format_price(rb.get("price")),
                clean(ra.get("rank")), format_price(ra.get("price")),
                _signed(r["delta"], ".5f"), DASH if r["delta_percent"] is None else f"{r['delta_percent']:+.2f}%",
                r["change"],
            ))
        if rows:
            out.extend(format_rows(("TYPE", "#A", "$/H A", "#B", "$/H B", "DELTA $/H", "DELTA %", "CHANGE"), rows))
        else:
            out.append("(no compatible instance type)")
        out.append(f"entered top {document['top']}: {', '.join(sec['entered']) or 'none'}; "
                   f"left: {', '.join(sec['left']) or 'none'}")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------------- click

def _input_errors() -> tuple[type[BaseException], ...]:
    from awsprovider.instancetype import InstanceTypeError

    return (ValueError, FileNotFoundError, InstanceTypeError)


def _emit(document: dict[str, Any], output: str, render: Any) -> None:
    if output == "json":
        click.echo(json.dumps(document, indent=2))
    else:
        click.echo(render(document), nl=False)


_OUTPUT = click.option("-o", "--output", type=OutputChoice(["table", "json"]), default="table", show_default=True)
_NO_CACHE = click.option("--no-cache", is_flag=True, default=False,
                         help="Read the instance-type catalogue from moto, not the on-disk cache "
                              "(also: KARPY_NO_CACHE=1).")


@click.command("instance-types")
@click.option("--region", default=DEFAULT_REGION, show_default=True, help="AWS region of the catalogue and prices.")
@click.option("--prices", default=None, metavar="DATE|FILE",
              help="Price table date (e.g. 2026-07-20) or a JSON/CSV table file; default: newest for the region.")
@click.option("--requirement", "requirements", multiple=True, metavar="'KEY OP [VALUES]'",
              help="Filter like a NodePool requirement, e.g. 'karpenter.k8s.aws/instance-generation Gte 8' "
                   "(repeatable; operators In NotIn Exists DoesNotExist Gt Lt Gte Lte).")
@click.option("--nodepool", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A manifest file with one NodePool: use its requirements (and EC2NodeClass, NodeOverlays).")
@click.option("--limit", type=click.IntRange(min=0), default=DEFAULT_LIMIT, show_default=True,
              help="Show at most N types (0 = all).")
@_OUTPUT
@_NO_CACHE
def instance_types(region: str, prices: str | None, requirements: tuple[str, ...], nodepool: Path | None,
                   limit: int, output: str, no_cache: bool = False) -> None:
    """The instance-type catalogue as Karpenter sees it: labels, allocatable, on-demand and spot prices.

    Exit codes: 0 listed; 2 bad input (one line on stderr).
    """
    preload_cloud_provider("aws")
    try:
        document = instance_types_document(region, prices, requirements, nodepool, limit, cache=not no_cache)
    except _input_errors() as err:
        bad_input(str(err))
    _emit(document, output, render_instance_types)


@click.group("prices", invoke_without_command=True)
@click.option("--region", default=None, help="Only this region's tables.")
@_OUTPUT
@click.pass_context
def prices(ctx: click.Context, region: str | None, output: str) -> None:
    """The bundled price tables (newest first per region; * = default), or 'prices diff'.

    Exit codes: 0 listed; 2 bad input (one line on stderr).
    """
    if ctx.invoked_subcommand is not None:
        ctx.obj = {"region": region}  # `karpy prices --region R diff ...` means R for the diff too
        return
    try:
        document = price_tables_document(region)
    except _input_errors() as err:
        bad_input(str(err))
    _emit(document, output, render_price_tables)


@prices.command("diff")
@click.argument("date1", metavar="DATE1")
@click.argument("date2", metavar="DATE2")
@click.option("--nodepool", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="A manifest file with one NodePool (and optionally its EC2NodeClass, NodeOverlays).")
@click.option("--region", default=None, help=f"AWS region of both tables  [default: {DEFAULT_REGION}]")
@click.option("--top", type=click.IntRange(min=1), default=DEFAULT_TOP, show_default=True,
              help="How many of the cheapest types to compare.")
@_OUTPUT
@_NO_CACHE
@click.pass_context
def prices_diff(ctx: click.Context, date1: str, date2: str, nodepool: Path, region: str | None, top: int,
                output: str, no_cache: bool = False) -> None:
    """How a NodePool's cheapest instance types moved between price tables DATE1 and DATE2 (dates or files).

    Exit codes: 0 compared; 2 bad input (one line on stderr).
    """
    region = region or (ctx.obj or {}).get("region") or DEFAULT_REGION
    preload_cloud_provider("aws")
    try:
        document = price_diff_document(date1, date2, nodepool, region, top, cache=not no_cache)
    except _input_errors() as err:
        bad_input(str(err))
    _emit(document, output, render_price_diff)
