"""``karpy instance-types``: the catalogue as Karpenter sees it, on the real us-east-1 2026-07-20 table.

Each moto-backed invocation costs a few seconds (the catalogue is read once per command), so the
module runs few commands and checks several facts on each result.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from awsprovider.commands import parse_requirements



@pytest.fixture(scope="module")
def c7i_c8i(invoke) -> dict:
    result = invoke("instance-types", "--region", "us-east-1", "--prices", "2026-07-20",
                    "--requirement", "karpenter.k8s.aws/instance-family In c7i,c8i", "--limit", "0", "-o", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _by_name(doc: dict) -> dict[str, dict]:
    return {t["name"]: t for t in doc["instance_types"]}


def test_real_prices_and_generations(c7i_c8i: dict) -> None:
    types = _by_name(c7i_c8i)
    assert types["c7i.large"]["on_demand_price"] == 0.08925
    assert types["c7i.large"]["generation"] == 7
    assert types["c8i.large"]["on_demand_price"] == 0.09371
    assert types["c8i.large"]["generation"] == 8
    assert c7i_c8i["prices"]["date"] == "2026-07-20"
    assert c7i_c8i["region"] == "us-east-1"


def test_only_requested_families_sorted_by_on_demand_price(c7i_c8i: dict) -> None:
    types = c7i_c8i["instance_types"]
    assert {t["family"] for t in types} == {"c7i", "c8i"}
    assert c7i_c8i["matching"] == c7i_c8i["shown"] == len(types) > 2
    assert c7i_c8i["catalogue"] > len(types)
    keys = [(t["on_demand_price"], t["name"]) for t in types]
    assert keys == sorted(keys)
    assert types[0]["name"] == "c7i.large"


def test_allocatable_labels_and_spot(c7i_c8i: dict) -> None:
    c7i = _by_name(c7i_c8i)["c7i.large"]
    assert c7i["arch"] == "amd64" and c7i["cpu"] == 2 and c7i["memory_gib"] == 4.0
    assert c7i["allocatable"]["cpu"] == "1930m"
    assert c7i["allocatable"]["pods"] == "29"
    assert c7i["labels"]["karpenter.k8s.aws/instance-family"] == "c7i"
    spot = c7i["spot_price"]
    assert 0 < spot["price"] < c7i["on_demand_price"]
    assert spot["zone"].startswith("us-east-1")


def test_generation_gte_8_excludes_c7i_table(invoke) -> None:
    result = invoke("instance-types", "--prices", "2026-07-20",
                    "--requirement", "karpenter.k8s.aws/instance-family In c7i,c8i",
                    "--requirement", "karpenter.k8s.aws/instance-generation Gte 8", "--limit", "5")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    header = next(line for line in lines if line.startswith("TYPE"))
    for column in ("ARCH", "CPU", "MEM GIB", "ALLOC CPU", "ALLOC MEM GIB", "ALLOC PODS", "ON-DEMAND $/H",
                   "SPOT $/H (ZONE)", "GEN"):
        assert column in header
    rows = lines[lines.index(header) + 1:-1]
    assert len(rows) == 5
    assert rows[0].split()[0] == "c8i.large" and "0.09371" in rows[0]
    assert all(r.split()[0].startswith("c8i.") for r in rows)
    assert "c7i." not in result.output


def test_arch_cpu_and_capacity_type_requirements(invoke) -> None:
    result = invoke("instance-types", "--prices", "2026-07-20",
                    "--requirement", "kubernetes.io/arch In arm64",
                    "--requirement", "karpenter.k8s.aws/instance-cpu Lt 8",
                    "--requirement", "karpenter.sh/capacity-type In spot", "--limit", "7", "-o", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    types = doc["instance_types"]
    assert doc["shown"] == len(types) == 7 < doc["matching"]
    assert all(t["arch"] == "arm64" and t["cpu"] < 8 for t in types)
    assert all(t["spot_price"] is not None for t in types)
    prices = [t["on_demand_price"] for t in types]
    assert prices == sorted(prices)


def test_nodepool_requirements_are_used(invoke, tmp_path: Path) -> None:
    nodepool = tmp_path / "np.yaml"
    nodepool.write_text("""\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: eighth}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [c8i]}
""")
    result = invoke("instance-types", "--nodepool", str(nodepool),
                    "--requirement", "karpenter.k8s.aws/instance-cpu Lt 4", "-o", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["nodepool"] == "eighth"
    assert [t["name"] for t in doc["instance_types"]] == ["c8i.large"]
    keys = {r["key"] for r in doc["requirements"]}
    assert {"karpenter.k8s.aws/instance-family", "karpenter.k8s.aws/instance-cpu", "karpenter.sh/nodepool"} <= keys


@pytest.mark.parametrize(("text", "key", "probe_in", "probe_out"), [
    ("karpenter.k8s.aws/instance-family In c7i,c8i", "karpenter.k8s.aws/instance-family", "c8i", "m7i"),
    ("karpenter.k8s.aws/instance-family In c7i, c8i", "karpenter.k8s.aws/instance-family", "c7i", "m7i"),
    ("karpenter.k8s.aws/instance-family NotIn c7i", "karpenter.k8s.aws/instance-family", "c8i", "c7i"),
    ("karpenter.k8s.aws/instance-generation Gte 8", "karpenter.k8s.aws/instance-generation", "8", "7"),
    ("karpenter.k8s.aws/instance-generation Gt 7", "karpenter.k8s.aws/instance-generation", "8", "7"),
    ("karpenter.k8s.aws/instance-cpu Lt 8", "karpenter.k8s.aws/instance-cpu", "4", "8"),
    ("karpenter.k8s.aws/instance-cpu Lte 8", "karpenter.k8s.aws/instance-cpu", "8", "16"),
    ("karpenter.sh/capacity-type In spot", "karpenter.sh/capacity-type", "spot", "on-demand"),
])
def test_parse_requirements_operators(text: str, key: str, probe_in: str, probe_out: str) -> None:
    reqs = parse_requirements([text])
    assert list(reqs) == [key]
    assert reqs[key].has(probe_in)
    assert not reqs[key].has(probe_out)


def test_parse_requirements_exists_and_does_not_exist() -> None:
    reqs = parse_requirements(["karpenter.k8s.aws/instance-gpu-count DoesNotExist",
                               "karpenter.k8s.aws/instance-local-nvme Exists"])
    assert reqs["karpenter.k8s.aws/instance-gpu-count"].operator == "DoesNotExist"
    assert reqs["karpenter.k8s.aws/instance-local-nvme"].operator == "Exists"


def test_parse_requirements_intersects_repeated_keys() -> None:
    reqs = parse_requirements(["karpenter.k8s.aws/instance-family In c7i,c8i",
                               "karpenter.k8s.aws/instance-family In c8i,m8i"])
    assert reqs["karpenter.k8s.aws/instance-family"].sorted_values() == ["c8i"]
