"""Deterministic spot price model built on the EC2 Spot Instance Advisor feed.

Karpenter itself has no static spot table: before its first successful
``DescribeSpotPriceHistory`` refresh it prices spot at the static on-demand price for every
zone (mirrors pkg/providers/pricing/pricing.go ``SpotPrice``/``populateInitialSpotPricing``),
and afterwards it uses the live per-zone price. Offline we have neither live prices nor a
per-zone table, so this module *models* them from the advisor feed
(``pricing_data/aws-spot-advisor/spot-advisor-data.json``, Linux key, region keys = region codes).

The model (all constants below, one named place each):

* ``spot(type, zone) = min(OD, OD * (1 - savings/100) * (1 + v(type, zone)))`` rounded to
  6 decimals (upstream's ``%f``), where ``v`` is a deterministic per-zone variation in
  ``[-ZONE_PRICE_VARIATION, +ZONE_PRICE_VARIATION)`` taken from SHA-256 of ``"type/zone"``,
  so zones differ as in real EC2. Spot never exceeds on-demand (EC2 caps the spot price at the
  on-demand price; the feed has a few negative savings which therefore price at OD).
* ``savings`` and the interruption bucket ``r`` (0 '<5%' .. 4 '>20%') come from the feed when
  it lists the type (basis ``advisor``). For a type the feed lacks (c8i, m8i, r8i ...):
  1. ``sibling``: same category + attributes + size, nearest generation in the feed
     (ties -> the older generation), e.g. c8i.large -> c7i.large;
  2. ``sibling-family``: same category + attributes, nearest generation, median savings /
     median-low bucket over that family's sizes (e.g. c8i.32xlarge -> the c7i family);
  3. ``category-median``: median savings / median-low bucket of the category (``c``, ``m``,
     ``r``, ``hpc`` ...);
  4. ``default``: ``DEFAULT_SAVINGS_PERCENT`` (50 %, the OD x 0.5 that upstream's tests use,
     instancetype/suite_test.go ``generateSpotPricing``) and ``DEFAULT_INTERRUPTION_BUCKET``.
  Every basis other than ``advisor`` is flagged ``modelled=True`` so explain output can say so.
* A region absent from the feed (GovCloud, China) gets upstream's pre-refresh rule: spot =
  on-demand for every zone (basis ``on-demand``), bucket ``DEFAULT_INTERRUPTION_BUCKET``.
  Never another region's feed.
* ``capacity_score(type, zone) = (5 - bucket - h) / 5`` with ``h`` in ``[0, 1)`` from SHA-256
  of ``"capacity/type/zone"``: in ``(0, 1]``, higher = more spare capacity; a lower interruption
  bucket always scores higher, and zones of one type are ordered deterministically.
"""

from __future__ import annotations

import hashlib
import json
import re
import statistics
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

# PricingError: a price table, spot feed or price request is invalid (re-exported here and by
# awsprovider.pricing; defined in karpy._errors so every karpy error shares one base).
from karpy._errors import PricingError

__all__ = [
    "PricingError",
    "SPOT_ADVISOR_RESOURCE",
    "ZONE_PRICE_VARIATION",
    "DEFAULT_SAVINGS_PERCENT",
    "DEFAULT_INTERRUPTION_BUCKET",
    "FEED_OPERATING_SYSTEM",
    "SpotAdvisorEntry",
    "SpotAdvisorFeed",
    "SpotEstimate",
    "SpotQuote",
    "SpotModel",
    "bundled_spot_advisor",
    "load_spot_advisor",
    "parse_instance_type",
    "stable_fraction",
]


#: Package-data path (inside ``pricing_data``) of the bundled advisor feed.
SPOT_ADVISOR_RESOURCE = ("aws-spot-advisor", "spot-advisor-data.json")
#: Sidecar with the feed's source and date (the feed itself carries none).
SPOT_ADVISOR_META_RESOURCE = ("aws-spot-advisor", "spot-advisor-data.meta.json")
#: Per-zone spot price variation: +/- 5 % around OD x (1 - savings).
ZONE_PRICE_VARIATION = 0.05
#: Savings used when neither the type, a sibling, nor its category is in the feed.
DEFAULT_SAVINGS_PERCENT = 50.0
#: Interruption bucket used for the ``default`` and ``on-demand`` bases ('10-15%').
DEFAULT_INTERRUPTION_BUCKET = 2
#: The advisor feed's OS key used for every price (Karpenter prices Linux only).
FEED_OPERATING_SYSTEM = "Linux"
#: Number of interruption buckets in the feed's ``ranges``.
_BUCKETS = 5
_PRICE_DECIMALS = 6

_FAMILY_RE = re.compile(r"^([a-z]+)(\d+)([a-z0-9-]*)$")


def stable_fraction(*parts: str) -> float:
    """A deterministic number in ``[0, 1)`` from SHA-256 of ``"/".join(parts)`` (no ``hash()`` salt)."""
    return _fraction("/".join(parts))


@lru_cache(maxsize=1 << 16)
def _fraction(text: str) -> float:
    """:func:`stable_fraction` of the joined text; memoised (a pure function of the string: a type
    and zone give the same fraction under every price table, so a second table -- ``prices diff``,
    a price sweep -- or a second provider in the process does not hash them again)."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


def parse_instance_type(name: str) -> tuple[str, int, str, str] | None:
    """Split ``c7i-flex.large`` into ``(category, generation, attributes, size)``.

    ``("c", 7, "i-flex", "large")``; ``None`` when the name does not follow the
    ``<category><generation><attributes>.<size>`` convention (e.g. ``u-6tb1.metal``).
    """
    family, sep, size = name.partition(".")
    if not sep or not size:
        return None
    m = _FAMILY_RE.match(family)
    if m is None:
        return None
    return m.group(1), int(m.group(2)), m.group(3), size


@dataclass(frozen=True, slots=True)
class SpotAdvisorEntry:
    """One feed row: ``s`` savings over on-demand in percent, ``r`` interruption bucket 0..4."""

    savings_percent: float
    interruption_bucket: int


@dataclass(frozen=True)
class SpotAdvisorFeed:
    """The parsed Spot Instance Advisor feed (Linux rows only), with its source and date."""

    date: str
    source: str
    ranges: tuple[str, ...]
    regions: Mapping[str, Mapping[str, SpotAdvisorEntry]]

    def entries(self, region: str) -> Mapping[str, SpotAdvisorEntry] | None:
        """The feed's Linux rows for ``region``, or ``None`` when the feed lacks the region."""
        return self.regions.get(region)

    def interruption_label(self, bucket: int) -> str:
        """The feed's label of an interruption bucket, e.g. ``1 -> '5-10%'``."""
        return self.ranges[bucket]


def _feed_from_dict(doc: Any, *, origin: str, date: str, source: str) -> SpotAdvisorFeed:
    if not isinstance(doc, dict) or not isinstance(doc.get("spot_advisor"), dict):
        raise PricingError(f"{origin}: not a spot advisor feed (missing 'spot_advisor' object)")
    raw_ranges = doc.get("ranges")
    if not isinstance(raw_ranges, list) or len(raw_ranges) != _BUCKETS:
        raise PricingError(f"{origin}: 'ranges' must list {_BUCKETS} interruption buckets")
    ranges = tuple(str(r.get("label", "")) for r in sorted(raw_ranges, key=lambda r: r.get("index", 0)))
    regions: dict[str, Mapping[str, SpotAdvisorEntry]] = {}
    for region in sorted(doc["spot_advisor"]):
        by_os = doc["spot_advisor"][region]
        rows = by_os.get(FEED_OPERATING_SYSTEM) if isinstance(by_os, dict) else None
        if not isinstance(rows, dict):
            continue
        parsed: dict[str, SpotAdvisorEntry] = {}
        for itype in sorted(rows):
            row = rows[itype]
            try:
                s, r = float(row["s"]), int(row["r"])
            except (KeyError, TypeError, ValueError) as exc:
                raise PricingError(
                    f"{origin}: spot_advisor.{region}.{FEED_OPERATING_SYSTEM}.{itype}: bad row {row!r}"
                ) from exc
            if not 0 <= r < _BUCKETS:
                raise PricingError(
                    f"{origin}: spot_advisor.{region}.{FEED_OPERATING_SYSTEM}.{itype}.r: "
                    f"bucket {r} outside 0..{_BUCKETS - 1}"
                )
            parsed[itype] = SpotAdvisorEntry(s, r)
        regions[region] = MappingProxyType(parsed)
    return SpotAdvisorFeed(date=date, source=source, ranges=ranges, regions=MappingProxyType(regions))


def load_spot_advisor(path: str | Path | None = None, *, date: str | None = None,
                      source: str | None = None) -> SpotAdvisorFeed:
    """Load the bundled advisor feed (``path=None``, via importlib.resources) or a feed file.

    The bundled feed's date and source come from its sidecar ``spot-advisor-data.meta.json``.
    """
    if path is None:
        root = resources.files("pricing_data")
        feed_res = root.joinpath(*SPOT_ADVISOR_RESOURCE)
        meta = json.loads(root.joinpath(*SPOT_ADVISOR_META_RESOURCE).read_text(encoding="utf-8"))
        doc = json.loads(feed_res.read_text(encoding="utf-8"))
        return _feed_from_dict(doc, origin="pricing_data/" + "/".join(SPOT_ADVISOR_RESOURCE),
                               date=date or str(meta["date"]), source=source or str(meta["source"]))
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PricingError(f"{p}: cannot read spot advisor feed: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise PricingError(f"{p}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
    return _feed_from_dict(doc, origin=str(p), date=date or "unknown", source=source or str(p))


@lru_cache(maxsize=1)
def bundled_spot_advisor() -> SpotAdvisorFeed:
    """The bundled feed, parsed once per process (package data; the feed is frozen: read-only
    mappings of frozen rows, so sharing it cannot carry state between runs)."""
    return load_spot_advisor()


@dataclass(frozen=True, slots=True)
class SpotEstimate:
    """Savings and interruption bucket for one type in one region, and how they were found.

    ``basis``: ``advisor`` | ``sibling`` | ``sibling-family`` | ``category-median`` | ``default``
    | ``on-demand``; ``reference`` names the feed type or family the estimate was taken from.
    """

    savings_percent: float
    interruption_bucket: int
    basis: str
    reference: str | None = None

    @property
    def modelled(self) -> bool:
        """True unless the feed lists this exact type."""
        return self.basis != "advisor"


@dataclass(frozen=True, slots=True)
class SpotQuote:
    """A spot price for (type, zone) with the signals the spot allocation strategies use."""

    instance_type: str
    zone: str
    price: float
    on_demand_price: float
    savings_percent: float
    interruption_bucket: int
    capacity_score: float
    basis: str
    reference: str | None
    modelled: bool


class SpotModel:
    """Per-region spot prices modelled from the advisor feed and an on-demand price map.

    Pure and deterministic: the same (feed, region, on-demand prices) give the same prices.
    Results are memoised per instance (no module-level state).
    """

    def __init__(self, region: str, on_demand: Mapping[str, float], feed: SpotAdvisorFeed,
                 *, zone_variation: float = ZONE_PRICE_VARIATION) -> None:
        self.region = region
        self.feed = feed
        self.zone_variation = zone_variation
        self._on_demand = on_demand
        self._entries = feed.entries(region)
        self._estimates: dict[str, SpotEstimate] = {}
        self._by_size: dict[tuple[str, str, str], list[tuple[int, str]]] = {}
        self._by_family: dict[tuple[str, str], dict[int, list[SpotAdvisorEntry]]] = {}
        self._by_category: dict[str, list[SpotAdvisorEntry]] = {}
        for itype, entry in (self._entries or {}).items():
            parsed = parse_instance_type(itype)
            if parsed is None:
                continue
            cat, gen, attrs, size = parsed
            self._by_size.setdefault((cat, attrs, size), []).append((gen, itype))
            self._by_family.setdefault((cat, attrs), {}).setdefault(gen, []).append(entry)
            self._by_category.setdefault(cat, []).append(entry)

    @property
    def region_in_feed(self) -> bool:
        """Whether the feed has rows for this region (else spot = on-demand, upstream pre-refresh)."""
        return self._entries is not None

    def estimate(self, instance_type: str) -> SpotEstimate:
        """Savings and bucket for ``instance_type`` following the documented fallback chain."""
        cached = self._estimates.get(instance_type)
        if cached is None:
            cached = self._estimate(instance_type)
            self._estimates[instance_type] = cached
        return cached

    def _estimate(self, instance_type: str) -> SpotEstimate:
        if self._entries is None:
            return SpotEstimate(0.0, DEFAULT_INTERRUPTION_BUCKET, "on-demand", None)
        entry = self._entries.get(instance_type)
        if entry is not None:
            return SpotEstimate(entry.savings_percent, entry.interruption_bucket, "advisor", instance_type)
        parsed = parse_instance_type(instance_type)
        if parsed is not None:
            cat, gen, attrs, size = parsed
            siblings = self._by_size.get((cat, attrs, size))
            if siblings:
                _, sib = min(siblings, key=lambda g_t: (abs(g_t[0] - gen), g_t[0]))
                e = self._entries[sib]
                return SpotEstimate(e.savings_percent, e.interruption_bucket, "sibling", sib)
            family = self._by_family.get((cat, attrs))
            if family:
                fgen = min(family, key=lambda g: (abs(g - gen), g))
                rows = family[fgen]
                return SpotEstimate(
                    float(statistics.median(e.savings_percent for e in rows)),
                    int(statistics.median_low(e.interruption_bucket for e in rows)),
                    "sibling-family", f"{cat}{fgen}{attrs}",
                )
            rows = self._by_category.get(cat, [])
            if rows:
                return SpotEstimate(
                    float(statistics.median(e.savings_percent for e in rows)),
                    int(statistics.median_low(e.interruption_bucket for e in rows)),
                    "category-median", cat,
                )
        return SpotEstimate(DEFAULT_SAVINGS_PERCENT, DEFAULT_INTERRUPTION_BUCKET, "default", None)

    def zone_factor(self, instance_type: str, zone: str) -> float:
        """``1 + v`` with ``v`` in ``[-zone_variation, +zone_variation)`` from SHA-256 of ``type/zone``."""
        return 1.0 + self.zone_variation * (2.0 * stable_fraction(instance_type, zone) - 1.0)

    def capacity_score(self, instance_type: str, zone: str) -> float:
        """``(5 - bucket - h) / 5`` in ``(0, 1]``; higher = more spare capacity (see module doc)."""
        bucket = self.estimate(instance_type).interruption_bucket
        return (_BUCKETS - bucket - stable_fraction("capacity", instance_type, zone)) / _BUCKETS

    def quote(self, instance_type: str, zone: str) -> SpotQuote | None:
        """The modelled spot quote, or ``None`` when the type has no on-demand price to model from."""
        od = self._on_demand.get(instance_type)
        if od is None:
            return None
        est = self.estimate(instance_type)
        price = self._price(od, est, instance_type, zone)
        return SpotQuote(
            instance_type=instance_type, zone=zone, price=price, on_demand_price=od,
            savings_percent=est.savings_percent, interruption_bucket=est.interruption_bucket,
            capacity_score=self.capacity_score(instance_type, zone), basis=est.basis,
            reference=est.reference, modelled=est.modelled,
        )

    def price(self, instance_type: str, zone: str) -> float | None:
        """The modelled spot price ($/h in the table's currency) or ``None``: :meth:`quote`'s
        price, without building the quote (its capacity score is a second hash per offering)."""
        od = self._on_demand.get(instance_type)
        if od is None:
            return None
        return self._price(od, self.estimate(instance_type), instance_type, zone)

    def _price(self, od: float, est: SpotEstimate, instance_type: str, zone: str) -> float:
        if est.basis == "on-demand":
            return od
        raw = od * (1.0 - est.savings_percent / 100.0) * self.zone_factor(instance_type, zone)
        return min(od, round(raw, _PRICE_DECIMALS))
