"""Price tables and the pricing provider. Mirrors pkg/providers/pricing/pricing.go.

* ``PriceTable`` / ``list_tables`` / ``load_table`` / ``load_table_from_path``: the real, dated
  on-demand tables bundled in ``pricing_data/aws-ondemand-prices`` (read through
  importlib.resources, so they work from an installed wheel) and user tables (JSON or CSV).
* ``PricingProvider``: upstream's ``Provider`` interface (``OnDemandPrice``, ``SpotPrice``,
  ``InstanceTypes``) over one table plus the spot model of :mod:`awsprovider.spotmodel`.
* ``fetch_on_demand_prices`` / ``fetch_spot_prices``: the refresh path against the real AWS
  Pricing API and EC2 (boto3 clients passed in; nothing runs at import time, no wall clock).

Differences from upstream, on purpose: a region without a bundled table is an error (upstream
``Reset`` silently falls back to the us-east-1 table; pass ``table_region="us-east-1"`` to do
that explicitly), and spot prices are modelled instead of fetched (see ``spotmodel``).

Missing prices: ``on_demand_price``/``spot_price`` return ``None`` (Go's ``(0, false)``). The
offering resolver (offering/base_resolver.go ``ResolveOfferings``) does not drop such an
offering: it still creates it, with price 0 and ``Available = false`` (``hasPrice`` is one of the
availability conjuncts), unless a NodeOverlay supplies a price for the type. A type without an
on-demand price therefore has no launchable on-demand offering, and (model mode) no spot
price either.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import json
import math
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Literal, Mapping, Sequence

from awsprovider.spotmodel import (
    DEFAULT_INTERRUPTION_BUCKET,
    PricingError,
    SpotAdvisorFeed,
    SpotModel,
    SpotQuote,
    bundled_spot_advisor,
)
from karpy._errors import UnknownPriceTable

__all__ = [
    "PricingError",
    "UnknownPriceTable",
    "PriceTable",
    "PricingProvider",
    "ON_DEMAND_RESOURCE_DIR",
    "SPOT_PRODUCT_DESCRIPTIONS",
    "GET_PRODUCTS_PAGE_SIZE",
    "SPOT_PRICE_HISTORY_PAGE_SIZE",
    "partition_currency",
    "list_tables",
    "load_table",
    "load_table_from_path",
    "resolve_table",
    "write_table",
    "write_spot_prices",
    "pricing_api_region",
    "on_demand_filters",
    "parse_price_list",
    "fetch_on_demand_prices",
    "fetch_on_demand_table",
    "fetch_spot_prices",
]

#: Package-data folder (inside ``pricing_data``) of the on-demand tables and their index.json.
ON_DEMAND_RESOURCE_DIR = "aws-ondemand-prices"
#: pricing.go ``UpdateSpotPricing`` ProductDescriptions.
SPOT_PRODUCT_DESCRIPTIONS = ("Linux/UNIX", "Linux/UNIX (Amazon VPC)")
#: pricing.go ``fetchOnDemandPricing`` MaxResults.
GET_PRODUCTS_PAGE_SIZE = 100
#: pricing.go ``UpdateSpotPricing`` MaxResults.
SPOT_PRICE_HISTORY_PAGE_SIZE = 2000

_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TYPE_RE = re.compile(r"^[a-z0-9][a-z0-9-]*\.[a-z0-9][a-z0-9-]*$")
_CSV_META_RE = re.compile(r"^#\s*([A-Za-z_]+)\s*:\s*(.*?)\s*$")
_META_KEYS = ("region", "date", "source", "currency")


def partition_currency(region: str) -> str:
    """``CNY`` for China regions, else ``USD`` (pricing.go ``onDemandPage``)."""
    return "CNY" if region.startswith("cn-") else "USD"


@dataclass(frozen=True)
class PriceTable:
    """One dated on-demand price table: ``prices`` maps instance type -> price per hour."""

    region: str
    date: str
    source: str
    currency: str
    capacity_type: str
    prices: Mapping[str, float]
    generated_at: str | None = None
    operating_system: str = "Linux"
    unit: str = "hour"
    origin: str = ""
    notes: tuple[str, ...] = field(default=())
    #: the date the user asked for when no table had it (this table is the newest before it)
    requested_date: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.prices, MappingProxyType):
            object.__setattr__(self, "prices", MappingProxyType(dict(self.prices)))

    def price(self, instance_type: str) -> float | None:
        """The price of ``instance_type`` or ``None``."""
        return self.prices.get(instance_type)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document ``write_table`` writes (same schema as the bundled tables)."""
        doc: dict[str, Any] = {
            "region": self.region,
            "date": self.date,
            "generated_at": self.generated_at,
            "currency": self.currency,
            "unit": self.unit,
            "capacity_type": self.capacity_type,
            "operating_system": self.operating_system,
            "source": self.source,
            "prices": {k: self.prices[k] for k in sorted(self.prices)},
        }
        if doc["generated_at"] is None:
            del doc["generated_at"]
        return doc


# ----------------------------------------------------------------------------- bundled tables

def _table_dir() -> Any:
    return resources.files("pricing_data").joinpath(ON_DEMAND_RESOURCE_DIR)


def _read_index() -> list[dict[str, Any]]:
    return list(json.loads(_table_dir().joinpath("index.json").read_text(encoding="utf-8")))


def _index_by_region() -> dict[str, dict[str, str]]:
    """region -> {date -> file}; the date is ``generated_at[:10]``."""
    out: dict[str, dict[str, str]] = {}
    for entry in _read_index():
        out.setdefault(str(entry["region"]), {})[str(entry["generated_at"])[:10]] = str(entry["file"])
    return out


def list_tables(region: str | None = None) -> list[tuple[str, str]]:
    """The bundled tables as ``(region, date)``, sorted; only ``region``'s when given."""
    idx = _index_by_region()
    return sorted((r, d) for r, dates in idx.items() if region is None or r == region for d in dates)


def _check_date(date: str, where: str) -> str:
    if not isinstance(date, str) or not _DATE_RE.match(date):
        raise PricingError(f"{where}: invalid date {date!r}, expected YYYY-MM-DD")
    try:
        _dt.date.fromisoformat(date)
    except ValueError as exc:
        raise PricingError(f"{where}: invalid date {date!r}: {exc}") from exc
    return date


def load_table(region: str, date: str | None = None) -> PriceTable:
    """The bundled table for ``region`` dated ``date`` (the newest when ``None``). When no table
    has exactly that date, the newest table dated on or before it is used and its
    ``requested_date`` says what was asked for (prices are published as of a date and hold until
    the next table); an error only when every table is newer.

    Raises ``UnknownPriceTable`` (a ``PricingError``) naming the available regions / dates; never
    falls back to another region (upstream ``Reset`` would use us-east-1 — see the module docstring).
    """
    idx = _index_by_region()
    dates = idx.get(region)
    if not dates:
        raise UnknownPriceTable(
            f"no price tables for region {region!r}; available regions: {', '.join(sorted(idx))}"
        )
    if date is None:
        date = max(dates)
    else:
        _check_date(date, f"price date for region {region!r}")
    requested: str | None = None
    if date is not None and date not in dates:
        before = [d for d in dates if d <= date]
        if not before:
            raise UnknownPriceTable(
                f"no {region} price table dated {date} or earlier; the oldest is {min(dates)} "
                f"(available dates: {', '.join(sorted(dates))})"
            )
        requested, date = date, max(before)
    fname = dates[date]
    text = _table_dir().joinpath(fname).read_text(encoding="utf-8")
    origin = f"pricing_data/{ON_DEMAND_RESOURCE_DIR}/{fname}"
    table = _table_from_doc(json.loads(text), origin=origin, bundled=True)
    if requested is not None:
        from dataclasses import replace

        table = replace(table, requested_date=requested)
    return table


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool):
        raise PricingError(f"{where}: price must be a positive number, got {value!r}")
    try:
        price = float(value)
    except (TypeError, ValueError):
        raise PricingError(f"{where}: price must be a positive number, got {value!r}") from None
    if not math.isfinite(price) or price <= 0:
        raise PricingError(f"{where}: price must be a positive number, got {value!r}")
    return price


def _check_type(name: Any, where: str) -> str:
    if not isinstance(name, str) or not _TYPE_RE.match(name):
        raise PricingError(f"{where}: invalid instance type {name!r}, expected e.g. 'c7i.large'")
    return name


def _table_from_doc(doc: Any, *, origin: str, bundled: bool = False,
                    region: str | None = None) -> PriceTable:
    """Validate a JSON table document (bundled schema, see pricing_data/README.md)."""
    if not isinstance(doc, dict):
        raise PricingError(f"{origin}: a price table must be a JSON object")
    notes: list[str] = []
    tregion = doc.get("region", region)
    if not isinstance(tregion, str) or not tregion:
        raise PricingError(f"{origin}: field 'region' is missing or not a string")
    generated_at = doc.get("generated_at")
    if generated_at is not None and not isinstance(generated_at, str):
        raise PricingError(f"{origin}: field 'generated_at' must be a string")
    date = doc.get("date") or (generated_at[:10] if generated_at else None)
    if date is None:
        raise PricingError(f"{origin}: field 'date' (or 'generated_at') is missing")
    _check_date(date, f"{origin}: field 'date'")
    capacity_type = doc.get("capacity_type", "on-demand")
    if capacity_type != "on-demand":
        raise PricingError(f"{origin}: field 'capacity_type' must be 'on-demand', got {capacity_type!r}")
    currency = doc.get("currency", partition_currency(tregion))
    if not isinstance(currency, str) or not currency:
        raise PricingError(f"{origin}: field 'currency' must be a string")
    if bundled and currency != partition_currency(tregion):
        # The static CN table is generated from pricePerUnit["CNY"] (pricing.go onDemandPage)
        # although the exported file says USD.
        notes.append(f"currency corrected from {currency} to {partition_currency(tregion)} "
                     f"(pricing.go reads pricePerUnit[{partition_currency(tregion)}] for this partition)")
        currency = partition_currency(tregion)
    source = doc.get("source", origin)
    if not isinstance(source, str):
        raise PricingError(f"{origin}: field 'source' must be a string")
    raw = doc.get("prices")
    if not isinstance(raw, dict) or not raw:
        raise PricingError(f"{origin}: field 'prices' must be a non-empty object of instance type -> price")
    prices = {_check_type(k, f"{origin}: prices"): _number(v, f"{origin}: prices.{k}") for k, v in raw.items()}
    return PriceTable(
        region=tregion, date=date, source=source, currency=currency, capacity_type=capacity_type,
        prices=prices, generated_at=generated_at, operating_system=str(doc.get("operating_system", "Linux")),
        unit=str(doc.get("unit", "hour")), origin=origin, notes=tuple(notes),
    )


def _table_from_csv(text: str, *, origin: str, region: str | None) -> PriceTable:
    """Parse the CSV schema of pricing_data/README.md ('# key: value' comments + columns)."""
    meta: dict[str, str] = {}
    lines = text.splitlines()
    body_start = 0
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            m = _CSV_META_RE.match(stripped)
            if m and m.group(1).lower() in _META_KEYS:
                meta[m.group(1).lower()] = m.group(2)
            continue
        body_start = i
        break
    else:
        raise PricingError(f"{origin}: no header row (expected columns instance_type,price)")
    reader = csv.reader(io.StringIO("\n".join(lines[body_start:])))
    header = [h.strip().lower() for h in next(reader)]
    header_line = body_start + 1
    for required in ("instance_type", "price"):
        if required not in header:
            raise PricingError(f"{origin}: line {header_line}: header lacks column {required!r} "
                               f"(got {', '.join(header)})")
    unknown = [h for h in header if h not in ("instance_type", "price", *_META_KEYS)]
    if unknown:
        raise PricingError(f"{origin}: line {header_line}: unknown column(s) {', '.join(unknown)}")
    col = {h: i for i, h in enumerate(header)}
    prices: dict[str, float] = {}
    row_meta: dict[str, str] = {}
    for offset, row in enumerate(reader, start=1):
        line_no = header_line + offset
        if not row or all(not c.strip() for c in row) or row[0].lstrip().startswith("#"):
            continue
        where = f"{origin}: line {line_no}"
        if len(row) != len(header):
            raise PricingError(f"{where}: expected {len(header)} fields, got {len(row)}")
        name = _check_type(row[col["instance_type"]].strip(), f"{where}: instance_type")
        if name in prices:
            raise PricingError(f"{where}: instance_type: duplicate row for {name!r}")
        prices[name] = _number(row[col["price"]].strip(), f"{where}: price")
        for key in _META_KEYS:
            if key not in col:
                continue
            value = row[col[key]].strip()
            seen = row_meta.setdefault(key, value)
            if value != seen:
                raise PricingError(f"{where}: {key}: {value!r} differs from earlier rows ({seen!r}); "
                                   f"one table holds one {key}")
    for key, value in row_meta.items():
        if key in meta and meta[key] != value:
            raise PricingError(f"{origin}: {key}: column value {value!r} contradicts header comment {meta[key]!r}")
        meta[key] = value
    if not prices:
        raise PricingError(f"{origin}: no price rows")
    doc: dict[str, Any] = {"prices": prices, **meta}
    return _table_from_doc(doc, origin=origin, region=region)


def load_table_from_path(path: str | Path, *, region: str | None = None) -> PriceTable:
    """Load a user table: ``.json`` (bundled schema) or ``.csv`` (see pricing_data/README.md).

    ``region`` is used when the file does not name one. Errors name the file and the row/field.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise PricingError(f"{p}: cannot read price table: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise PricingError(f"{p}: cannot read price table: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} "
                           f"at offset {exc.start})") from None
    suffix = p.suffix.lower()
    if suffix == ".json":
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise PricingError(f"{p}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
        return _table_from_doc(doc, origin=str(p), region=region)
    if suffix == ".csv":
        return _table_from_csv(text, origin=str(p), region=region)
    raise PricingError(f"{p}: unsupported price table format {suffix or '(none)'!r}; use .json or .csv")


def resolve_table(region: str, prices: str | Path | PriceTable | None = None) -> PriceTable:
    """"A table date or a path": ``None`` -> newest bundled, ``YYYY-MM-DD`` -> that bundled table,
    anything else -> a file path. The table's region must equal ``region``."""
    if isinstance(prices, PriceTable):
        table = prices
    elif prices is None:
        table = load_table(region)
    elif isinstance(prices, str) and _DATE_RE.match(prices):
        table = load_table(region, prices)
    else:
        table = load_table_from_path(prices, region=region)
    if table.region != region:
        raise PricingError(f"{table.origin or 'price table'}: table is for region {table.region!r}, "
                           f"not {region!r}")
    return table


def write_table(table: PriceTable, path: str | Path) -> Path:
    """Write ``table`` as JSON in the bundled schema; returns the path."""
    p = Path(path)
    p.write_text(json.dumps(table.to_dict(), indent=1) + "\n", encoding="utf-8")
    return p


def write_spot_prices(prices: Mapping[str, Mapping[str, float]], path: str | Path, *, region: str,
                      date: str, source: str) -> Path:
    """Write measured spot prices ``{type: {zone: price}}`` as JSON; returns the path."""
    _check_date(date, "spot price date")
    doc = {
        "region": region, "date": date, "currency": partition_currency(region), "unit": "hour",
        "capacity_type": "spot", "operating_system": "Linux", "source": source,
        "prices": {t: {z: prices[t][z] for z in sorted(prices[t])} for t in sorted(prices)},
    }
    p = Path(path)
    p.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return p


# ----------------------------------------------------------------------------- provider

SpotMode = Literal["model", "on-demand"]


class PricingProvider:
    """Mirrors pricing.go ``DefaultProvider`` over a dated table and the spot model.

    ``spot_mode="model"`` (default) prices spot with :class:`~awsprovider.spotmodel.SpotModel`;
    ``"on-demand"`` reproduces upstream before its first spot refresh (spot = OD price in every
    zone). ``zones`` restricts spot prices to those zones (a zone outside them has no price,
    like upstream after a refresh); empty = any zone.
    """

    def __init__(self, region: str, prices: str | Path | PriceTable | None = None,
                 zones: Sequence[str] = (), *, spot_feed: SpotAdvisorFeed | None = None,
                 spot_mode: SpotMode = "model", table_region: str | None = None) -> None:
        if spot_mode not in ("model", "on-demand"):
            raise PricingError(f"spot_mode must be 'model' or 'on-demand', got {spot_mode!r}")
        self.region = region
        self.table = resolve_table(table_region or region, prices)
        self.spot_mode: SpotMode = spot_mode
        self._zones: tuple[str, ...] = tuple(sorted(set(zones)))
        self._on_demand: dict[str, float] = dict(self.table.prices)
        self._measured_spot: dict[str, dict[str, float]] | None = None
        self._spot_model: SpotModel | None = None
        #: bumped by every ``update_*`` call (consumers cache prices by it)
        self.version = 0
        self._bundled_feed = spot_feed is None
        if spot_mode == "model":
            self._spot_model = SpotModel(region, self._on_demand, spot_feed or bundled_spot_advisor())

    @property
    def cache_token(self) -> tuple[Any, ...] | None:
        """A content key of every price this provider answers, for process-wide caches of what is
        derived from them (:data:`awsprovider.instancetype.SHARED_CACHE`): the region, the table's
        identity and prices, the spot mode and zones; None once ``update_*`` changed a price or
        when a spot feed other than the bundled one was given (no content key for it)."""
        if self.version or self._measured_spot is not None or not self._bundled_feed:
            return None
        t = self.table
        zone_variation = self._spot_model.zone_variation if self._spot_model is not None else None
        return (self.region, t.region, t.date, t.source, t.currency, t.capacity_type, t.operating_system,
                tuple(sorted(t.prices.items())), self.spot_mode, self._zones, zone_variation)

    # --- metadata
    @property
    def zones(self) -> tuple[str, ...]:
        """The zones spot is priced in (sorted); empty = unrestricted."""
        return self._zones

    @property
    def date(self) -> str:
        return self.table.date

    @property
    def source(self) -> str:
        return self.table.source

    @property
    def currency(self) -> str:
        return self.table.currency

    @property
    def spot_model(self) -> SpotModel | None:
        return self._spot_model

    def prices_metadata(self) -> dict[str, Any]:
        """The JSON output's ``"prices"`` key: ``date`` and ``source`` of the table, plus

        * ``requested_date`` -- only when no table had the asked date (this is the newest before it);
        * ``region`` -- the table's region; ``proxy: true`` when it is not the simulated region
          (``--price-region``: another region's prices stand in);
        * ``spot`` -- ``"modelled"`` (advisor savings + a per-zone offset, :mod:`awsprovider.spotmodel`),
          ``"measured"`` or ``"on-demand"`` (spot priced as on-demand);
        * ``operating_system`` -- the OS the table prices (``"Linux"``): Windows instances are
          ranked and reported at these prices, without the Windows licence (as upstream ranks them).
        """
        meta: dict[str, Any] = {"date": self.table.date, "source": self.table.source}
        if self.table.requested_date is not None:
            meta["requested_date"] = self.table.requested_date
        meta["region"] = self.table.region
        meta["proxy"] = self.table.region != self.region
        if self._measured_spot is not None:
            meta["spot"] = "measured"
        else:
            meta["spot"] = "modelled" if self._spot_model is not None else "on-demand"
        meta["operating_system"] = self.table.operating_system
        return meta

    # --- upstream Provider interface
    def instance_types(self) -> list[str]:
        """Types with an on-demand or (measured) spot price, sorted (pricing.go ``InstanceTypes``)."""
        names = set(self._on_demand)
        if self._measured_spot is not None:
            names.update(self._measured_spot)
        return sorted(names)

    def on_demand_price(self, instance_type: str) -> float | None:
        """pricing.go ``OnDemandPrice``; ``None`` = no price (offering unavailable)."""
        return self._on_demand.get(instance_type)

    def spot_price(self, instance_type: str, zone: str) -> float | None:
        """pricing.go ``SpotPrice``; ``None`` = no price for (type, zone) (offering unavailable)."""
        if self._zones and zone not in self._zones:
            return None
        if self._measured_spot is not None:
            return self._measured_spot.get(instance_type, {}).get(zone)
        if self._spot_model is None:
            return self._on_demand.get(instance_type)
        return self._spot_model.price(instance_type, zone)

    def spot_quote(self, instance_type: str, zone: str) -> SpotQuote | None:
        """The spot price with savings, interruption bucket, capacity score and model basis."""
        price = self.spot_price(instance_type, zone)
        if price is None:
            return None
        od = self._on_demand.get(instance_type, price)
        if self._measured_spot is not None or self._spot_model is None:
            basis = "measured" if self._measured_spot is not None else "on-demand"
            model = self._spot_model
            bucket = model.estimate(instance_type).interruption_bucket if model else DEFAULT_INTERRUPTION_BUCKET
            score = model.capacity_score(instance_type, zone) if model else (5 - bucket) / 5
            return SpotQuote(instance_type, zone, price, od, round((1 - price / od) * 100, 4) if od else 0.0,
                             bucket, score, basis, None, basis != "measured")
        return self._spot_model.quote(instance_type, zone)

    def interruption_bucket(self, instance_type: str, zone: str) -> int | None:
        """The advisor's interruption bucket 0..4 ('<5%'..'>20%'), or ``None`` without a spot price."""
        q = self.spot_quote(instance_type, zone)
        return None if q is None else q.interruption_bucket

    def capacity_score(self, instance_type: str, zone: str) -> float | None:
        """Capacity signal in (0, 1] for the spot allocation strategies (higher = more capacity)."""
        q = self.spot_quote(instance_type, zone)
        return None if q is None else q.capacity_score

    def is_spot_modelled(self, instance_type: str) -> bool:
        """True when the spot price is not the advisor's own row (explain output says so)."""
        if self._measured_spot is not None:
            return False
        if self._spot_model is None:
            return True
        return self._spot_model.estimate(instance_type).modelled

    # --- refresh results (pricing.go UpdateOnDemandPricing / UpdateSpotPricing merge rules)
    def update_on_demand_prices(self, prices: Mapping[str, float]) -> None:
        """Merge fetched OD prices over the current ones; entries never disappear (``lo.Assign``)."""
        if not prices:
            raise PricingError("no on-demand pricing found")
        self._on_demand.update(prices)
        self.version += 1
        if self._spot_model is not None:
            self._spot_model = SpotModel(self.region, self._on_demand, self._spot_model.feed,
                                         zone_variation=self._spot_model.zone_variation)

    def update_spot_prices(self, prices: Mapping[str, Mapping[str, float]]) -> None:
        """Merge measured per-zone spot prices; afterwards only measured (type, zone) pairs have a
        spot price, as upstream once ``spotPricingUpdated`` is set."""
        if not prices:
            raise PricingError("no spot pricing found")
        merged = self._measured_spot if self._measured_spot is not None else {}
        for itype, zonal in prices.items():
            merged.setdefault(itype, {}).update(zonal)
        self._measured_spot = merged
        self.version += 1


# ----------------------------------------------------------------------------- refresh (boto3)

def pricing_api_region(region: str) -> str:
    """The Pricing API endpoint region for ``region`` (pricing.go ``NewAPI``)."""
    if region.startswith("ap-"):
        return "ap-south-1"
    if region.startswith("cn-"):
        return "cn-northwest-1"
    if region.startswith("eu-"):
        return "eu-central-1"
    return "us-east-1"


def _term(field_name: str, value: str) -> dict[str, str]:
    return {"Type": "TERM_MATCH", "Field": field_name, "Value": value}


def on_demand_filters(region: str, *, metal: bool) -> list[dict[str, str]]:
    """GetProducts filters of pricing.go ``fetchOnDemandPricing`` for the shared (``metal=False``)
    or the bare-metal (``metal=True``: tenancy Dedicated, productFamily 'Compute Instance (bare metal)') query."""
    filters = [
        _term("regionCode", region),
        _term("serviceCode", "AmazonEC2"),
        _term("preInstalledSw", "NA"),
        _term("operatingSystem", "Linux"),
        _term("capacitystatus", "Used"),
        _term("marketoption", "OnDemand"),
    ]
    if metal:
        filters += [_term("tenancy", "Dedicated"), _term("productFamily", "Compute Instance (bare metal)")]
    else:
        filters += [_term("tenancy", "Shared"), _term("productFamily", "Compute Instance")]
    return filters


def parse_price_list(price_list: Iterable[str | Mapping[str, Any]], currency: str) -> dict[str, float]:
    """OD price per instance type from GetProducts ``PriceList`` items (pricing.go ``onDemandPage``):
    ``terms.OnDemand.*.priceDimensions.*.pricePerUnit[currency]``; unparsable/zero prices and items
    without ``product.attributes.instanceType`` are skipped; a later dimension overwrites."""
    result: dict[str, float] = {}
    for item in price_list:
        try:
            doc = json.loads(item) if isinstance(item, (str, bytes)) else item
        except json.JSONDecodeError:
            continue
        if not isinstance(doc, Mapping):
            continue
        itype = ((doc.get("product") or {}).get("attributes") or {}).get("instanceType")
        if not itype:
            continue
        for term in ((doc.get("terms") or {}).get("OnDemand") or {}).values():
            for dim in (term.get("priceDimensions") or {}).values():
                try:
                    price = float((dim.get("pricePerUnit") or {}).get(currency, ""))
                except (TypeError, ValueError):
                    continue
                if price == 0 or not math.isfinite(price):
                    continue
                result[str(itype)] = price
    return result


def _get_products(client: Any, filters: list[dict[str, str]], currency: str) -> dict[str, float]:
    prices: dict[str, float] = {}
    kwargs: dict[str, Any] = {"ServiceCode": "AmazonEC2", "Filters": filters,
                              "MaxResults": GET_PRODUCTS_PAGE_SIZE}
    while True:
        page = client.get_products(**kwargs)
        prices.update(parse_price_list(page.get("PriceList", []), currency))
        token = page.get("NextToken")
        if not token:
            return prices
        kwargs["NextToken"] = token


def fetch_on_demand_prices(pricing_client: Any, region: str) -> dict[str, float]:
    """On-demand prices of ``region`` from the AWS Pricing API (pricing.go ``UpdateOnDemandPricing``):
    the shared-tenancy and the bare-metal queries, both must return prices, merged in that order.

    Unlike upstream's controller this does not skip GovCloud (like the codegen's
    ``WithSkipRegionCheck``): the client should point at ``pricing_api_region(region)``."""
    currency = partition_currency(region)
    shared = _get_products(pricing_client, on_demand_filters(region, metal=False), currency)
    metal = _get_products(pricing_client, on_demand_filters(region, metal=True), currency)
    if not shared or not metal:
        raise PricingError(f"no on-demand pricing found for region {region!r}")
    return {**shared, **metal}


def fetch_on_demand_table(pricing_client: Any, region: str, date: str, *,
                          source: str = "AWS Price List API GetProducts (AmazonEC2, Linux, OnDemand)",
                          write_to: str | Path | None = None) -> PriceTable:
    """``fetch_on_demand_prices`` as a ``PriceTable`` dated ``date`` (dates are data: the caller
    passes it), written as JSON to ``write_to`` when given."""
    _check_date(date, "price table date")
    table = PriceTable(region=region, date=date, source=source, currency=partition_currency(region),
                       capacity_type="on-demand", prices=fetch_on_demand_prices(pricing_client, region),
                       origin=str(write_to) if write_to else "aws-pricing-api")
    if write_to is not None:
        write_table(table, write_to)
    return table


def fetch_spot_prices(ec2_client: Any, start_time: _dt.datetime) -> dict[str, dict[str, float]]:
    """Current spot prices ``{type: {zone: price}}`` from ``DescribeSpotPriceHistory``
    (pricing.go ``UpdateSpotPricing``/``spotPage``): Linux/UNIX + Linux/UNIX (Amazon VPC),
    ``StartTime=start_time`` (pass "now"; no wall clock here), 2000 per page, paginated.
    Unparsable prices and records without Timestamp are skipped; the **last** record per
    (type, zone) wins, with no timestamp comparison, as upstream."""
    prices: dict[str, dict[str, float]] = {}
    kwargs: dict[str, Any] = {"ProductDescriptions": list(SPOT_PRODUCT_DESCRIPTIONS),
                              "StartTime": start_time, "MaxResults": SPOT_PRICE_HISTORY_PAGE_SIZE}
    while True:
        page = ec2_client.describe_spot_price_history(**kwargs)
        for rec in page.get("SpotPriceHistory", []):
            try:
                price = float(rec.get("SpotPrice", ""))
            except (TypeError, ValueError):
                continue
            if rec.get("Timestamp") is None:
                continue
            prices.setdefault(str(rec.get("InstanceType", "")), {})[str(rec.get("AvailabilityZone", ""))] = price
        token = page.get("NextToken")
        if not token:
            break
        kwargs["NextToken"] = token
    if not prices:
        raise PricingError("no spot pricing found")
    return prices
