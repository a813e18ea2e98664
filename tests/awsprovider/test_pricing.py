"""Tests for awsprovider.pricing: bundled tables, user tables, the provider, the refresh path."""

from __future__ import annotations

import datetime as dt
import json
from importlib import resources
from pathlib import Path

import boto3
import pytest
from botocore import UNSIGNED
from botocore.config import Config
from botocore.stub import Stubber

from awsprovider.pricing import (
    GET_PRODUCTS_PAGE_SIZE,
    SPOT_PRODUCT_DESCRIPTIONS,
    PriceTable,
    PricingError,
    PricingProvider,
    fetch_on_demand_prices,
    fetch_on_demand_table,
    fetch_spot_prices,
    list_tables,
    load_table,
    load_table_from_path,
    on_demand_filters,
    parse_price_list,
    pricing_api_region,
    resolve_table,
    write_spot_prices,
    write_table,
)
from awsprovider.spotmodel import load_spot_advisor

ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")


@pytest.fixture(scope="module")
def feed():
    return load_spot_advisor()


# ----------------------------------------------------------------------------- bundled tables

def test_index_matches_files_and_package_data_is_importable():
    import pricing_data  # noqa: F401  (must stay importable)

    root = resources.files("pricing_data").joinpath("aws-ondemand-prices")
    index = json.loads(root.joinpath("index.json").read_text())
    files = sorted(p.name for p in root.iterdir() if p.name != "index.json" and p.name.endswith(".json"))
    assert sorted(e["file"] for e in index) == files
    assert len(files) == 99


def test_list_tables_sorted_and_filtered():
    all_tables = list_tables()
    assert all_tables == sorted(all_tables)
    assert {r for r, _ in all_tables} == {"us-east-1", "us-gov-east-1", "us-gov-west-1", "cn-north-1"}
    us = list_tables("us-east-1")
    assert len(us) == 37
    assert us[0] == ("us-east-1", "2023-09-18") and us[-1] == ("us-east-1", "2026-07-20")
    assert list_tables("cn-north-1") == [("cn-north-1", "2023-09-18"), ("cn-north-1", "2024-11-06")]
    assert list_tables("eu-west-1") == []


def test_newest_table_is_default():
    t = load_table("us-east-1")
    assert t.date == "2026-07-20"
    assert t.generated_at == "2026-07-20T13:44:30Z"
    assert t.currency == "USD" and t.capacity_type == "on-demand"
    assert "zz_generated.pricing_aws.go" in t.source and "6fc13b5236fd" in t.source
    assert len(t.prices) == 1367


def test_known_prices_2026_07_20():
    # data README seed scenario: 7th generation is cheaper than 8th.
    t = load_table("us-east-1", "2026-07-20")
    assert t.prices["c7i.large"] == 0.08925
    assert t.prices["c8i.large"] == 0.09371
    assert t.prices["m7i.large"] == 0.1008
    assert t.prices["m8i.large"] == 0.10584
    assert t.prices["c7i.large"] < t.prices["c8i.large"]


def test_explicit_older_date():
    t = load_table("us-east-1", "2023-09-18")
    assert t.date == "2023-09-18"
    assert len(t.prices) == 730
    assert "c8i.large" not in t.prices


def test_date_without_table_uses_newest_before_it():
    # issue #11: `--prices 2025-10-01` with no table of that date uses the newest on or before it
    t = load_table("us-east-1", "2026-07-21")
    assert t.date == "2026-07-20" and t.requested_date == "2026-07-21"
    assert load_table("us-east-1", "2026-07-20").requested_date is None


def test_date_before_every_table_lists_available_dates():
    with pytest.raises(PricingError) as exc:
        load_table("us-east-1", "2023-09-17")
    msg = str(exc.value)
    assert "2023-09-17 or earlier" in msg and "available dates" in msg
    assert "2023-09-18" in msg and "2026-07-20" in msg
    assert isinstance(exc.value, ValueError)


def test_malformed_date_is_an_error():
    with pytest.raises(PricingError, match="expected YYYY-MM-DD"):
        load_table("us-east-1", "July 2026")


def test_unknown_region_no_fallback():
    with pytest.raises(PricingError) as exc:
        load_table("eu-west-1")
    assert "eu-west-1" in str(exc.value)
    assert "us-east-1" in str(exc.value)  # lists what exists
    with pytest.raises(PricingError):
        PricingProvider("us-west-2")


def test_explicit_us_east_1_fallback_is_opt_in(feed):
    p = PricingProvider("us-west-2", table_region="us-east-1", spot_feed=feed)
    assert p.region == "us-west-2" and p.table.region == "us-east-1"
    assert p.on_demand_price("m5.large") == 0.096
    # spot is modelled from us-west-2's own feed rows
    assert p.spot_model is not None and p.spot_model.region_in_feed


def test_govcloud_tables_load_in_usd():
    for region in ("us-gov-east-1", "us-gov-west-1"):
        t = load_table(region)
        assert t.region == region and t.date == "2026-07-20" and t.currency == "USD"
        assert "pricing_aws_us_gov.go" in t.source
    assert load_table("us-gov-east-1").prices["c5.12xlarge"] == 2.448


def test_cn_table_loads_in_cny_with_note():
    t = load_table("cn-north-1")
    assert t.date == "2024-11-06"
    assert t.currency == "CNY"
    assert t.prices["c5.large"] == 0.739
    assert any("CNY" in n for n in t.notes)
    assert load_table("cn-north-1", "2023-09-18").currency == "CNY"


# ----------------------------------------------------------------------------- user tables

def test_user_json_table(tmp_path: Path):
    f = tmp_path / "prices.json"
    f.write_text(json.dumps({"region": "us-east-1", "date": "2026-08-01", "source": "EDP",
                             "prices": {"c7i.large": 0.07, "c8i.large": 0.065}}))
    t = load_table_from_path(f)
    assert (t.region, t.date, t.source, t.currency) == ("us-east-1", "2026-08-01", "EDP", "USD")
    assert t.prices == {"c7i.large": 0.07, "c8i.large": 0.065}
    p = PricingProvider("us-east-1", str(f), ZONES, spot_mode="on-demand")
    assert p.prices_metadata() == {"date": "2026-08-01", "source": "EDP", "region": "us-east-1", "proxy": False,
                                   "spot": "on-demand", "operating_system": "Linux"}
    assert p.on_demand_price("c8i.large") == 0.065
    assert p.on_demand_price("m5.large") is None


def test_user_json_table_region_from_caller_and_generated_at(tmp_path: Path):
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"generated_at": "2026-01-02T03:04:05Z", "prices": {"m5.large": 0.1}}))
    t = load_table_from_path(f, region="us-west-2")
    assert t.region == "us-west-2" and t.date == "2026-01-02" and t.source == str(f)


@pytest.mark.parametrize(
    ("doc", "needle"),
    [
        ({"date": "2026-08-01", "prices": {"c7i.large": 1}}, "'region'"),
        ({"region": "us-east-1", "prices": {"c7i.large": 1}}, "'date'"),
        ({"region": "us-east-1", "date": "2026-13-01", "prices": {"c7i.large": 1}}, "invalid date"),
        ({"region": "us-east-1", "date": "2026-08-01", "prices": {}}, "'prices'"),
        ({"region": "us-east-1", "date": "2026-08-01", "prices": {"c7i.large": -1}}, "prices.c7i.large"),
        ({"region": "us-east-1", "date": "2026-08-01", "prices": {"c7i.large": "abc"}}, "prices.c7i.large"),
        ({"region": "us-east-1", "date": "2026-08-01", "prices": {"c7i.large": True}}, "prices.c7i.large"),
        ({"region": "us-east-1", "date": "2026-08-01", "prices": {"C7I large": 1}}, "invalid instance type"),
        ({"region": "us-east-1", "date": "2026-08-01", "capacity_type": "spot",
          "prices": {"c7i.large": 1}}, "capacity_type"),
    ],
)
def test_user_json_table_errors_name_file_and_field(tmp_path: Path, doc, needle):
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(doc))
    with pytest.raises(PricingError) as exc:
        load_table_from_path(f)
    assert str(f) in str(exc.value)
    assert needle in str(exc.value)


def test_user_json_syntax_error_names_line(tmp_path: Path):
    f = tmp_path / "broken.json"
    f.write_text('{"region": "us-east-1",\n "prices": {,}}')
    with pytest.raises(PricingError, match=r"broken\.json: invalid JSON at line 2"):
        load_table_from_path(f)


def test_user_csv_table_with_comment_metadata(tmp_path: Path):
    f = tmp_path / "p.csv"
    f.write_text("# region: us-east-1\n# date: 2026-08-01\n# source: negotiated\n"
                 "instance_type,price\nc7i.large,0.08\n\nc8i.large,0.085\n")
    t = load_table_from_path(f)
    assert (t.region, t.date, t.source) == ("us-east-1", "2026-08-01", "negotiated")
    assert t.prices == {"c7i.large": 0.08, "c8i.large": 0.085}


def test_user_csv_table_with_region_date_columns(tmp_path: Path):
    f = tmp_path / "p.csv"
    f.write_text("region,date,instance_type,price\nus-gov-west-1,2026-08-01,c5.large,0.1\n"
                 "us-gov-west-1,2026-08-01,c5.xlarge,0.2\n")
    t = load_table_from_path(f)
    assert (t.region, t.date, t.currency) == ("us-gov-west-1", "2026-08-01", "USD")
    assert resolve_table("us-gov-west-1", f).prices["c5.xlarge"] == 0.2


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("# region: us-east-1\n# date: 2026-08-01\ninstance_type,price\nc7i.large,0.08\nc8i.large,-1\n",
         "line 5: price"),
        ("# region: us-east-1\n# date: 2026-08-01\ninstance_type,price\nc7i.large,x\n", "line 4: price"),
        ("# region: us-east-1\n# date: 2026-08-01\ninstance_type,price\nc7i.large,1\nc7i.large,2\n",
         "line 5: instance_type: duplicate"),
        ("# region: us-east-1\n# date: 2026-08-01\ninstance_type,price\nc7i.large\n", "line 4: expected 2 fields"),
        ("# region: us-east-1\n# date: 2026-08-01\ntype,cost\nc7i.large,1\n", "lacks column 'instance_type'"),
        ("# region: us-east-1\n# date: 2026-08-01\ninstance_type,price,colour\nc7i.large,1,red\n",
         "unknown column"),
        ("region,date,instance_type,price\nus-east-1,2026-08-01,a.large,1\nus-west-2,2026-08-01,b.large,1\n",
         "line 3: region"),
        ("# region: us-east-1\nregion,date,instance_type,price\nus-west-2,2026-08-01,a.large,1\n",
         "contradicts header comment"),
        ("# region: us-east-1\ninstance_type,price\nc7i.large,1\n", "'date'"),
        ("# region: us-east-1\n# date: 2026-08-01\ninstance_type,price\n", "no price rows"),
    ],
)
def test_user_csv_bad_rows(tmp_path: Path, text: str, needle: str):
    f = tmp_path / "bad.csv"
    f.write_text(text)
    with pytest.raises(PricingError) as exc:
        load_table_from_path(f)
    assert str(f) in str(exc.value)
    assert needle in str(exc.value)


def test_unreadable_and_unsupported_paths(tmp_path: Path):
    with pytest.raises(PricingError, match="cannot read"):
        load_table_from_path(tmp_path / "nope.json")
    f = tmp_path / "p.yaml"
    f.write_text("x: 1")
    with pytest.raises(PricingError, match="unsupported"):
        load_table_from_path(f)


def test_region_mismatch_is_an_error(tmp_path: Path):
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"region": "us-east-1", "date": "2026-08-01", "prices": {"m5.large": 1}}))
    with pytest.raises(PricingError, match="not 'us-west-2'"):
        resolve_table("us-west-2", f)


def test_write_table_round_trips(tmp_path: Path):
    t = load_table("us-gov-east-1")
    out = write_table(t, tmp_path / "copy.json")
    back = load_table_from_path(out)
    assert back.prices == t.prices
    assert (back.region, back.date, back.source, back.currency) == (t.region, t.date, t.source, t.currency)


def test_price_table_is_immutable():
    t = load_table("us-gov-east-1")
    with pytest.raises(TypeError):
        t.prices["c5.large"] = 0.0  # type: ignore[index]
    with pytest.raises(AttributeError):
        t.date = "2020-01-01"  # type: ignore[misc]


# ----------------------------------------------------------------------------- provider

def test_provider_interface(feed):
    p = PricingProvider("us-east-1", "2026-07-20", ZONES, spot_feed=feed)
    assert p.zones == ZONES
    assert p.prices_metadata()["date"] == "2026-07-20"
    assert p.date == "2026-07-20" and p.source == load_table("us-east-1").source
    assert p.on_demand_price("c7i.large") == 0.08925
    assert p.on_demand_price("nope.large") is None
    assert p.instance_types() == sorted(load_table("us-east-1").prices)
    sp = p.spot_price("c7i.large", "us-east-1a")
    assert sp is not None and 0 < sp < 0.08925
    # outside the provider's zones: no price (offering unavailable), like upstream after a refresh
    assert p.spot_price("c7i.large", "us-east-1f") is None
    # unknown type: no price at all
    assert p.spot_price("nope.large", "us-east-1a") is None
    assert p.interruption_bucket("c7i.large", "us-east-1a") == 4
    assert p.is_spot_modelled("c8i.large") and not p.is_spot_modelled("c7i.large")


def test_provider_upstream_static_spot_mode():
    # upstream before the first spot refresh: spot = OD price for every zone (pricing.go SpotPrice)
    p = PricingProvider("us-east-1", None, (), spot_mode="on-demand")
    assert p.spot_model is None
    assert p.spot_price("m5.large", "anything-1z") == 0.096
    q = p.spot_quote("m5.large", "us-east-1a")
    assert q is not None and q.basis == "on-demand" and q.modelled


def test_provider_bad_spot_mode():
    with pytest.raises(PricingError, match="spot_mode"):
        PricingProvider("us-east-1", spot_mode="cheap")  # type: ignore[arg-type]


def test_update_spot_prices_mirrors_upstream_merge(feed):
    # upstream suite_test "should update zonal pricing with data from the spot pricing API"
    # and "should maintain previous data when pricing API returns partial data"
    p = PricingProvider("us-east-1", None, (), spot_feed=feed)
    p.update_spot_prices({"c98.large": {"test-zone-1a": 1.20}, "c99.large": {"test-zone-1a": 1.30}})
    assert p.spot_price("c98.large", "test-zone-1a") == 1.20
    assert p.spot_price("c98.large", "test-zone-1b") is None
    assert p.spot_price("m5.large", "test-zone-1a") is None  # no measured record -> no price
    p.update_spot_prices({"c99.large": {"test-zone-1a": 1.30}})
    assert p.spot_price("c98.large", "test-zone-1a") == 1.20
    assert "c98.large" in p.instance_types()
    assert p.spot_quote("c99.large", "test-zone-1a").basis == "measured"
    with pytest.raises(PricingError, match="no spot pricing found"):
        p.update_spot_prices({})


def test_update_on_demand_prices_merges(feed):
    # upstream suite_test "should maintain previous data when pricing API returns partial data"
    p = PricingProvider("us-east-1", None, (), spot_feed=feed)
    p.update_on_demand_prices({"c98.large": 1.10, "m5.large": 0.2})
    assert p.on_demand_price("c98.large") == 1.10
    assert p.on_demand_price("m5.large") == 0.2
    assert p.on_demand_price("c7i.large") == 0.08925  # entries never disappear
    assert p.spot_price("c98.large", "us-east-1a") is not None  # modelled from the new OD price
    with pytest.raises(PricingError):
        p.update_on_demand_prices({})


# ----------------------------------------------------------------------------- refresh (Stubber)

def _client(service: str, region: str = "us-east-1"):
    return boto3.client(service, region_name=region, config=Config(signature_version=UNSIGNED))


def _price_item(instance_type: str, price: float, currency: str = "USD") -> str:
    # same shape as upstream pkg/fake/pricingapi.go NewOnDemandPriceWithCurrency
    return json.dumps({
        "product": {"attributes": {"instanceType": instance_type}},
        "terms": {"OnDemand": {"JRTCKXETXF.foo": {"offerTermCode": "JRTCKXETXF", "priceDimensions": {
            "JRTCKXETXF.foo.bar": {"pricePerUnit": {currency: f"{price:f}"}}}}}},
    })


def _gp_params(region: str, metal: bool, token: str | None = None) -> dict:
    params = {"ServiceCode": "AmazonEC2", "Filters": on_demand_filters(region, metal=metal),
              "MaxResults": GET_PRODUCTS_PAGE_SIZE}
    if token:
        params["NextToken"] = token
    return params


def test_pricing_api_region_mirrors_new_api():
    assert pricing_api_region("ap-northeast-1") == "ap-south-1"
    assert pricing_api_region("cn-north-1") == "cn-northwest-1"
    assert pricing_api_region("eu-west-1") == "eu-central-1"
    assert pricing_api_region("us-west-2") == "us-east-1"
    assert pricing_api_region("us-gov-west-1") == "us-east-1"


def test_on_demand_filters_match_upstream():
    f = {x["Field"]: x["Value"] for x in on_demand_filters("us-east-1", metal=False)}
    assert f == {"regionCode": "us-east-1", "serviceCode": "AmazonEC2", "preInstalledSw": "NA",
                 "operatingSystem": "Linux", "capacitystatus": "Used", "marketoption": "OnDemand",
                 "tenancy": "Shared", "productFamily": "Compute Instance"}
    m = {x["Field"]: x["Value"] for x in on_demand_filters("us-east-1", metal=True)}
    assert m["tenancy"] == "Dedicated" and m["productFamily"] == "Compute Instance (bare metal)"
    assert all(x["Type"] == "TERM_MATCH" for x in on_demand_filters("x", metal=True))


def test_parse_price_list_skips_bad_items():
    items = [
        _price_item("c98.large", 1.2),
        _price_item("c97.large", 0.0),                      # zero -> skipped
        json.dumps({"product": {"attributes": {}}}),         # no instance type
        "not json",
        _price_item("c96.large", 2.0, currency="CNY"),      # other currency
    ]
    assert parse_price_list(items, "USD") == {"c98.large": 1.2}
    assert parse_price_list(items, "CNY") == {"c96.large": 2.0}


def test_fetch_on_demand_prices_paginated(tmp_path: Path):
    # upstream suite_test "should update pricing when we make multiple paginated calls ..."
    client = _client("pricing")
    with Stubber(client) as stub:
        stub.add_response("get_products", {"PriceList": [_price_item("c94.large", 1.10)], "NextToken": "t1"},
                          _gp_params("us-east-1", False))
        stub.add_response("get_products", {"PriceList": [_price_item("c95.large", 1.20)]},
                          _gp_params("us-east-1", False, "t1"))
        stub.add_response("get_products", {"PriceList": [_price_item("c5.metal", 4.08)]},
                          _gp_params("us-east-1", True))
        table = fetch_on_demand_table(client, "us-east-1", "2026-08-01", write_to=tmp_path / "t.json")
        stub.assert_no_pending_responses()
    assert table.prices == {"c94.large": 1.10, "c95.large": 1.20, "c5.metal": 4.08}
    assert table.date == "2026-08-01" and table.currency == "USD"
    assert load_table_from_path(tmp_path / "t.json").prices == table.prices


def test_fetch_on_demand_prices_cn_reads_cny():
    # upstream suite_test "should update on-demand pricing ... when in the CN partition"
    client = _client("pricing", "cn-northwest-1")
    with Stubber(client) as stub:
        stub.add_response("get_products", {"PriceList": [_price_item("c98.large", 1.20, "CNY")]},
                          _gp_params("cn-north-1", False))
        stub.add_response("get_products", {"PriceList": [_price_item("c99.metal", 1.23, "CNY")]},
                          _gp_params("cn-north-1", True))
        prices = fetch_on_demand_prices(client, "cn-north-1")
    assert prices == {"c98.large": 1.20, "c99.metal": 1.23}


def test_fetch_on_demand_prices_requires_both_queries():
    client = _client("pricing")
    with Stubber(client) as stub:
        stub.add_response("get_products", {"PriceList": [_price_item("c98.large", 1.20)]},
                          _gp_params("us-east-1", False))
        stub.add_response("get_products", {"PriceList": []}, _gp_params("us-east-1", True))
        with pytest.raises(PricingError, match="no on-demand pricing found"):
            fetch_on_demand_prices(client, "us-east-1")


NOW = dt.datetime(2026, 7, 20, 12, 0, tzinfo=dt.timezone.utc)


def _sph_params(token: str | None = None) -> dict:
    params = {"ProductDescriptions": list(SPOT_PRODUCT_DESCRIPTIONS), "StartTime": NOW, "MaxResults": 2000}
    if token:
        params["NextToken"] = token
    return params


def _rec(itype: str, zone: str, price: str, ts: dt.datetime | None = NOW, product: str = "Linux/UNIX") -> dict:
    rec = {"AvailabilityZone": zone, "InstanceType": itype, "SpotPrice": price, "ProductDescription": product}
    if ts is not None:
        rec["Timestamp"] = ts
    return rec


def test_fetch_spot_prices_paginated_last_record_wins(tmp_path: Path):
    # upstream suite_test "should update zonal pricing when we make multiple paginated calls ..."
    client = _client("ec2")
    with Stubber(client) as stub:
        stub.add_response("describe_spot_price_history", {"SpotPriceHistory": [
            _rec("c99.large", "test-zone-1a", "1.20"),
            _rec("c98.large", "test-zone-1b", "1.30"),
            _rec("c98.large", "test-zone-1c", "9.99"),
        ], "NextToken": "n1"}, _sph_params())
        stub.add_response("describe_spot_price_history", {"SpotPriceHistory": [
            _rec("c99.large", "test-zone-1b", "1.30"),
            _rec("c98.large", "test-zone-1c", "1.40", product="Linux/UNIX (Amazon VPC)"),  # later wins
            _rec("c98.large", "test-zone-1a", "1.20"),
            _rec("c97.large", "test-zone-1a", "1.00", ts=None),   # no timestamp -> skipped
        ]}, _sph_params("n1"))
        prices = fetch_spot_prices(client, NOW)
        stub.assert_no_pending_responses()
    assert prices == {
        "c99.large": {"test-zone-1a": 1.20, "test-zone-1b": 1.30},
        "c98.large": {"test-zone-1a": 1.20, "test-zone-1b": 1.30, "test-zone-1c": 1.40},
    }
    out = write_spot_prices(prices, tmp_path / "spot.json", region="us-east-1", date="2026-07-20", source="ec2")
    doc = json.loads(out.read_text())
    assert doc["capacity_type"] == "spot" and doc["prices"]["c98.large"]["test-zone-1c"] == 1.40
    p = PricingProvider("us-east-1", spot_mode="on-demand")
    p.update_spot_prices(prices)
    assert p.spot_price("c99.large", "test-zone-1b") == 1.30
    assert p.spot_price("c99.large", "test-zone-1c") is None


def test_fetch_spot_prices_empty_is_an_error():
    client = _client("ec2")
    with Stubber(client) as stub:
        stub.add_response("describe_spot_price_history", {"SpotPriceHistory": []}, _sph_params())
        with pytest.raises(PricingError, match="no spot pricing found"):
            fetch_spot_prices(client, NOW)


def test_nothing_runs_at_import_time():
    # importing the pricing modules must not pull in boto3, read data files or touch the network
    import subprocess
    import sys

    code = ("import sys, awsprovider.pricing, awsprovider.spotmodel; "
            "print(sorted(m for m in ('boto3', 'botocore') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.strip() == "[]"
    src = Path(__file__).resolve().parents[2].joinpath("awsprovider", "pricing.py").read_text()
    assert "datetime.now" not in src and "time.time" not in src
