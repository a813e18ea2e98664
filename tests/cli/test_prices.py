"""``karpy prices`` (the bundled tables) and ``karpy prices diff`` (a NodePool's cheapest choices
under two tables), on the real us-east-1 tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from awsprovider.commands import _change, _diff_section
from awsprovider.ec2.catalog import InstanceTypeCatalog
from awsprovider.pricing import list_tables

POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: gen-pref}}
spec:
  template:
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      requirements:
        - {{key: karpenter.k8s.aws/instance-family, operator: In, values: [c7i, c8i, m7i, m8i]}}
        - {{key: karpenter.sh/capacity-type, operator: In, values: [{capacity_types}]}}
"""


def _pool(tmp_path: Path, capacity_types: str) -> str:
    path = tmp_path / "pool.yaml"
    path.write_text(POOL.format(capacity_types=capacity_types))
    return str(path)


# ----------------------------------------------------------------------------- listing

def test_listing_marks_newest_us_east_1_table_as_default(invoke) -> None:
    result = invoke("prices")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split()[:5] == ["REGION", "DATE", "DEFAULT", "TYPES", "SOURCE"]
    us = [line.split() for line in lines if line.startswith("us-east-1 ")]
    assert len(us) == len(list_tables("us-east-1"))
    assert us[0][1] == "2026-07-20" and us[0][2] == "*"
    assert all(row[2] != "*" for row in us[1:])
    dates = [row[1] for row in us]
    assert dates == sorted(dates, reverse=True)
    assert "zz_generated.pricing_aws.go" in " ".join(us[0])
    # issue #11: a region the mocked EC2 cannot simulate is not listed as a region, only as a proxy table
    assert not any(line.startswith("us-gov-west-1 ") for line in lines)
    assert "us-gov-west-1: 30 tables usable only as --price-region (the mocked EC2 cannot simulate that region)" in lines


def test_listing_json_for_one_region(invoke) -> None:
    result = invoke("prices", "--region", "us-east-1", "-o", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert [r["region"] for r in doc["regions"]] == ["us-east-1"]
    region = doc["regions"][0]
    assert region["default"] == "2026-07-20"
    first = region["tables"][0]
    assert first["date"] == "2026-07-20" and first["default"] is True
    assert [t["default"] for t in region["tables"]].count(True) == 1
    assert all(t["source"] and t["types"] > 100 for t in region["tables"])


# ----------------------------------------------------------------------------- diff

def test_diff_between_two_real_dates_json(invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    catalogues: list[InstanceTypeCatalog] = []
    init = InstanceTypeCatalog.__init__

    def record(self: InstanceTypeCatalog, client: object) -> None:
        init(self, client)
        catalogues.append(self)

    monkeypatch.setattr(InstanceTypeCatalog, "__init__", record)
    result = invoke("prices", "--region", "us-east-1", "diff", "2025-08-25", "2026-07-20",
                    "--nodepool", _pool(tmp_path, "on-demand, spot"), "--top", "5", "-o", "json")
    assert result.exit_code == 0, result.output
    # the moto catalogue is read once for both tables
    assert len(catalogues) == 1
    assert catalogues[0].describe_instance_types_pages > 0
    assert catalogues[0].describe_offerings_pages > 0
    doc = json.loads(result.output)
    assert doc["before"]["date"] == "2025-08-25" and doc["after"]["date"] == "2026-07-20"
    assert [s["capacity_type"] for s in doc["capacity_types"]] == ["on-demand", "spot"]
    od = doc["capacity_types"][0]
    rows = {r["instance_type"]: r for r in od["rows"]}
    c7i = rows["c7i.large"]
    assert c7i["before"] == {"rank": 1, "price": 0.08925}
    assert c7i["after"] == {"rank": 1, "price": 0.08925}
    assert c7i["delta"] == 0.0 and c7i["delta_percent"] == 0.0
    # the 8th generation is not in the 2025-08-25 table: c8i.large enters the top 5 at rank 2
    assert "c8i.large" in od["entered"]
    assert rows["c8i.large"]["before"] is None
    assert rows["c8i.large"]["after"] == {"rank": 2, "price": 0.09371}
    assert rows["c8i.large"]["change"] == "entered"
    assert len(od["left"]) == len(od["entered"])
    assert od["compatible"]["after"] > od["compatible"]["before"]
    assert all(r["instance_type"].split(".")[0] in {"c7i", "c8i", "m7i", "m8i"} for r in od["rows"])
    spot = doc["capacity_types"][1]
    assert spot["rows"] and all(
        r["after"] is None or r["after"]["price"] < 0.09371 * 10 for r in spot["rows"])


def test_diff_table_on_demand_pool_with_a_changed_price_file(invoke, tmp_path: Path) -> None:
    table = tmp_path / "changed.csv"
    table.write_text("# region: us-east-1\n# date: 2026-08-01\n# source: test\n"
                     "instance_type,price\nc7i.large,0.1\nc8i.large,0.05\nm7i.large,0.2\n")
    result = invoke("prices", "diff", "2026-07-20", str(table), "--nodepool", _pool(tmp_path, "on-demand"),
                    "--top", "2")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "ON-DEMAND" in out and "SPOT" not in out
    assert "A = 2026-07-20" in out and "B = 2026-08-01 (test)" in out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.split()[:1]
            and line.split()[0] in ("c7i.large", "c8i.large", "m7i.large")}
    # c8i.large: rank 2 -> 1, 0.09371 -> 0.05
    assert rows["c8i.large"][1:] == ["2", "0.09371", "1", "0.05000", "-0.04371", "-46.64%", "up", "1"]
    # c7i.large: rank 1 -> 2, 0.08925 -> 0.1
    assert rows["c7i.large"][1:] == ["1", "0.08925", "2", "0.10000", "+0.01075", "+12.04%", "down", "1"]
    assert "m7i.large" not in rows
    assert "entered top 2: none; left: none" in out


# ----------------------------------------------------------------------------- pure helpers

def test_diff_section_ranks_deltas_and_moves() -> None:
    before = [("a", 1.0), ("b", 2.0), ("c", 3.0)]
    after = [("b", 1.5), ("a", 1.6), ("d", 1.7), ("c", 3.0)]
    sec = _diff_section("on-demand", before, after, top=2)
    assert sec["entered"] == [] and sec["left"] == []
    rows = {r["instance_type"]: r for r in sec["rows"]}
    assert list(rows) == ["b", "a"]
    assert rows["b"]["delta"] == -0.5 and rows["b"]["delta_percent"] == -25.0 and rows["b"]["change"] == "up 1"
    assert rows["a"]["delta"] == 0.6 and rows["a"]["change"] == "down 1"
    sec3 = _diff_section("spot", before, after, top=3)
    assert sec3["entered"] == ["d"] and sec3["left"] == ["c"]
    assert [r["instance_type"] for r in sec3["rows"]] == ["b", "a", "d", "c"]
    assert {r["instance_type"]: r["change"] for r in sec3["rows"]}["c"] == "left"
    assert sec3["compatible"] == {"before": 3, "after": 4}


def test_change_labels() -> None:
    assert _change(None, 1, 5) == "entered"
    assert _change(3, None, 5) == "left"
    assert _change(3, 7, 5) == "left"
    assert _change(7, 3, 5) == "entered"
    assert _change(2, 2, 5) == ""
    assert _change(4, 1, 5) == "up 3"
