"""Tests for awsprovider.spotmodel: the advisor feed and the deterministic spot price model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from awsprovider.pricing import PricingError, PricingProvider, load_table
from awsprovider.spotmodel import (
    DEFAULT_INTERRUPTION_BUCKET,
    DEFAULT_SAVINGS_PERCENT,
    ZONE_PRICE_VARIATION,
    SpotAdvisorEntry,
    SpotAdvisorFeed,
    SpotModel,
    load_spot_advisor,
    parse_instance_type,
)

ZONES = ("us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1e", "us-east-1f")


@pytest.fixture(scope="module")
def feed() -> SpotAdvisorFeed:
    return load_spot_advisor()


@pytest.fixture(scope="module")
def od() -> dict[str, float]:
    return dict(load_table("us-east-1", "2026-07-20").prices)


@pytest.fixture(scope="module")
def model(feed, od) -> SpotModel:
    return SpotModel("us-east-1", od, feed)


def test_feed_metadata_and_structure(feed):
    assert feed.date == "2025-06-28"
    assert "spot-bid-advisor" in feed.source
    assert feed.ranges == ("<5%", "5-10%", "10-15%", "15-20%", ">20%")
    assert feed.interruption_label(1) == "5-10%"
    assert len(feed.regions) == 33
    assert feed.entries("us-gov-east-1") is None and feed.entries("cn-north-1") is None
    us = feed.entries("us-east-1")
    assert us is not None and len(us) == 894
    assert us["c7i.large"] == SpotAdvisorEntry(66.0, 4)
    assert us["m7i.large"] == SpotAdvisorEntry(68.0, 3)
    assert "c8i.large" not in us and "m8i.large" not in us and "r8i.large" not in us


def test_parse_instance_type():
    assert parse_instance_type("c8i.large") == ("c", 8, "i", "large")
    assert parse_instance_type("m7i-flex.2xlarge") == ("m", 7, "i-flex", "2xlarge")
    assert parse_instance_type("hpc7g.16xlarge") == ("hpc", 7, "g", "16xlarge")
    assert parse_instance_type("u-6tb1.112xlarge") is None
    assert parse_instance_type("c7i") is None


def test_advisor_type_price_formula(model, od):
    q = model.quote("c7i.large", "us-east-1a")
    assert q is not None and q.basis == "advisor" and not q.modelled
    base = od["c7i.large"] * (1 - 66 / 100)
    assert base * (1 - ZONE_PRICE_VARIATION) - 1e-6 <= q.price <= base * (1 + ZONE_PRICE_VARIATION) + 1e-6
    assert q.interruption_bucket == 4 and q.savings_percent == 66.0


def test_determinism_across_instances(feed, od):
    a = SpotModel("us-east-1", od, feed)
    b = SpotModel("us-east-1", dict(od), load_spot_advisor())
    for it in ("c7i.large", "c8i.large", "m8i.xlarge", "r8i.large", "u-6tb1.112xlarge"):
        for z in ZONES:
            assert a.quote(it, z) == b.quote(it, z)


def test_zones_differ(model):
    prices = {model.price("m7i.large", z) for z in ZONES}
    assert len(prices) == len(ZONES)
    scores = [model.capacity_score("m7i.large", z) for z in ZONES]
    assert len(set(scores)) == len(ZONES)


def test_missing_type_uses_nearest_generation_sibling(model, od):
    # c8i/m8i/r8i are absent from the 2025-06-28 feed -> c7i/m7i/r7i of the same size.
    for new, old in (("c8i.large", "c7i.large"), ("m8i.large", "m7i.large"), ("r8i.large", "r7i.large"),
                     ("m8i-flex.large", "m7i-flex.large")):
        est = model.estimate(new)
        ref = model.estimate(old)
        assert est.basis == "sibling" and est.reference == old and est.modelled
        assert (est.savings_percent, est.interruption_bucket) == (ref.savings_percent, ref.interruption_bucket)
        q = model.quote(new, "us-east-1a")
        assert q is not None and q.modelled and q.reference == old


def test_sibling_family_and_category_median_and_default(feed):
    rows = {"c7i.large": SpotAdvisorEntry(60, 1), "c7i.xlarge": SpotAdvisorEntry(70, 3),
            "c6g.large": SpotAdvisorEntry(40, 0), "m5.large": SpotAdvisorEntry(55, 2)}
    tiny = SpotAdvisorFeed("2025-01-01", "test", feed.ranges, {"r-1": rows})
    od = {"c8i.metal": 10.0, "c9i.2xlarge": 1.0, "c8gb.large": 1.0, "x9.large": 1.0, "m6.large": 1.0}
    m = SpotModel("r-1", od, tiny)
    fam = m.estimate("c8i.metal")
    assert (fam.basis, fam.reference, fam.savings_percent, fam.interruption_bucket) == (
        "sibling-family", "c7i", 65.0, 1)
    cat = m.estimate("c8gb.large")
    assert (cat.basis, cat.reference, cat.savings_percent, cat.interruption_bucket) == (
        "category-median", "c", 60.0, 1)
    d = m.estimate("x9.large")
    assert (d.basis, d.savings_percent, d.interruption_bucket) == (
        "default", DEFAULT_SAVINGS_PERCENT, DEFAULT_INTERRUPTION_BUCKET)
    # nearest generation: m6 -> m5 sibling
    assert m.estimate("m6.large").reference == "m5.large"


def test_sibling_tie_prefers_older_generation(feed):
    rows = {"c6i.large": SpotAdvisorEntry(50, 1), "c8i.large": SpotAdvisorEntry(70, 3)}
    m = SpotModel("r-1", {"c7i.large": 1.0}, SpotAdvisorFeed("d", "s", feed.ranges, {"r-1": rows}))
    assert m.estimate("c7i.large").reference == "c6i.large"


def test_spot_never_above_on_demand_and_below_for_advisor_savings(model, od):
    for it in sorted(od):
        for z in ("us-east-1a", "us-east-1d"):
            q = model.quote(it, z)
            assert q is not None
            assert 0 < q.price <= od[it]
            if q.savings_percent > 100 * ZONE_PRICE_VARIATION + 1:
                assert q.price < od[it]


def test_seed_types_spot_below_on_demand(model, od):
    for it in ("c7i.large", "c8i.large", "m7i.large", "m8i.large", "r7i.large", "r8i.large"):
        for z in ZONES:
            assert model.price(it, z) < od[it]


def test_negative_feed_savings_capped_at_on_demand(feed):
    rows = {"p9.large": SpotAdvisorEntry(-62, 4)}
    m = SpotModel("r-1", {"p9.large": 2.0}, SpotAdvisorFeed("d", "s", feed.ranges, {"r-1": rows}))
    assert m.price("p9.large", "r-1a") == 2.0


def test_type_without_on_demand_price_has_no_spot_price(model):
    assert model.quote("c7i.nonexistent", "us-east-1a") is None
    assert model.price("c99.large", "us-east-1a") is None


def test_region_missing_from_feed_prices_spot_at_on_demand(feed):
    # GovCloud: upstream's pre-refresh rule (spot = static OD), never another region's feed
    p = PricingProvider("us-gov-west-1", None, ("us-gov-west-1a",), spot_feed=feed)
    assert not p.spot_model.region_in_feed
    od = p.on_demand_price("c5.large")
    q = p.spot_quote("c5.large", "us-gov-west-1a")
    assert q is not None and q.price == od and q.basis == "on-demand" and q.modelled


def test_capacity_score_orders_by_bucket(model):
    # bucket 0 always scores above bucket 4 regardless of zone
    low = [model.capacity_score("c7i-flex.large", z) for z in ZONES]   # r = 0
    high = [model.capacity_score("c7i.large", z) for z in ZONES]       # r = 4
    assert min(low) > max(high)
    assert all(0 < s <= 1 for s in low + high)


@settings(max_examples=60, deadline=None)
@given(itype=st.sampled_from(["c7i.large", "c8i.large", "m8i.4xlarge", "r8i.large", "t3.micro"]),
       zone=st.text(alphabet="abcdefghij-0123456789", min_size=1, max_size=20))
def test_property_price_within_band(feed, od, itype, zone):
    m = SpotModel("us-east-1", od, feed)
    q = m.quote(itype, zone)
    assert q is not None
    base = od[itype] * (1 - q.savings_percent / 100)
    assert base * (1 - ZONE_PRICE_VARIATION) - 1e-6 <= q.price <= min(od[itype], base * (1 + ZONE_PRICE_VARIATION)) + 1e-6
    assert q == m.quote(itype, zone)


def test_load_feed_from_path_and_errors(tmp_path: Path, feed):
    good = tmp_path / "feed.json"
    good.write_text(json.dumps({"ranges": [{"index": i, "label": l} for i, l in enumerate(feed.ranges)],
                                "spot_advisor": {"r-1": {"Linux": {"c7i.large": {"s": 60, "r": 1}},
                                                         "Windows": {"c7i.large": {"s": 1, "r": 4}}}}}))
    f = load_spot_advisor(good, date="2026-01-01")
    assert f.entries("r-1") == {"c7i.large": SpotAdvisorEntry(60.0, 1)}  # Linux key only
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"ranges": [{"index": i} for i in range(5)],
                               "spot_advisor": {"r-1": {"Linux": {"c7i.large": {"s": 60, "r": 9}}}}}))
    with pytest.raises(PricingError, match=r"bad\.json: spot_advisor\.r-1\.Linux\.c7i\.large\.r"):
        load_spot_advisor(bad)
    with pytest.raises(PricingError, match="not a spot advisor feed"):
        (tmp_path / "x.json").write_text("[]")
        load_spot_advisor(tmp_path / "x.json")


def test_price_is_the_quotes_price_for_every_type_and_zone(model, od):
    # price() skips building the quote's other signals; it must give exactly the quote's price
    for name in sorted(od):
        for zone in ZONES:
            quote = model.quote(name, zone)
            assert model.price(name, zone) == (None if quote is None else quote.price), (name, zone)
    assert model.price("no-such.type", ZONES[0]) is None



def test_stable_fraction_memo_is_the_hash_of_the_joined_parts():
    # stable_fraction is memoised by the joined text; the memo must give SHA-256's fraction for
    # every call, the first and the repeated, and keep "/"-joining (("a/b",) and ("a", "b") agree)
    import hashlib

    from awsprovider.spotmodel import stable_fraction

    def direct(text: str) -> float:
        return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") / 2.0**64

    for parts in (("m7i.large", "us-east-1a"), ("capacity", "c8i.xlarge", "us-east-1f"), ("a/b",), ("a", "b")):
        first = stable_fraction(*parts)
        assert first == direct("/".join(parts))
        assert stable_fraction(*parts) == first
    assert stable_fraction("a/b") == stable_fraction("a", "b")
    assert stable_fraction("m7i.large", "us-east-1a") != stable_fraction("m7i.large", "us-east-1b")
