"""The karpy.io/v1alpha1 Sweep kind: parsing, defaults, the price axis, and bad input naming the
file and field path. No simulation runs here."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from karpy.sweeps import SweepError, expand, load_sweep, spec_from_options
from karpy.sweeps.spec import PriceRange

from .conftest import COOKBOOK

SweepFile = Callable[..., Path]
DESIGNS = """designs:
  "01": [@01-one-nodepool, @common/workload.yaml]
  "02": "@02-weighted-nodepools"
shared: [@common/ec2nodeclass.yaml]"""


def test_defaults_and_order(sweep_file: SweepFile) -> None:
    spec = load_sweep(sweep_file(DESIGNS))
    assert list(spec.designs) == ["01", "02"]  # quoted or not, the base loader keeps "01" text
    assert spec.designs["02"] == (COOKBOOK / "02-weighted-nodepools",)
    assert spec.region == "us-east-1" and spec.cloud_provider == "aws"
    assert dict(spec.unavailable) == {"normal": ()}
    assert spec.preference_policies == ("Respect",) and spec.min_values_policies == ("Strict",)
    cells = expand(spec)
    assert [(c.index, c.design, c.prices, c.capacity) for c in cells] == [(0, "01", "", "normal"),
                                                                           (1, "02", "", "normal")]
    # the cell carries the text of its manifests (loader order), not the caller's paths
    assert any("kind: NodePool" in text for text in cells[0].manifests)
    assert any("kind: EC2NodeClass" in text for text in cells[0].manifests)


def test_unquoted_numeric_design_names_stay_text(sweep_file: SweepFile) -> None:
    spec = load_sweep(sweep_file("designs:\n  01: @01-one-nodepool\n  007: @03-nodeoverlay"))
    assert list(spec.designs) == ["01", "007"]


def test_prices_all_range_and_list(sweep_file: SweepFile) -> None:
    from awsprovider.pricing import list_tables

    bundled = [d for _, d in list_tables("us-east-1")]
    every = expand(load_sweep(sweep_file(DESIGNS + "\nprices: all")))
    assert [c.prices for c in every if c.design == "01"] == bundled
    ranged = load_sweep(sweep_file(DESIGNS + "\nprices: {from: 2025-01-01, to: 2025-12-31}"))
    assert ranged.prices == PriceRange("2025-01-01", "2025-12-31")
    dates = [c.prices for c in expand(ranged) if c.design == "01"]
    assert dates == [d for d in bundled if d.startswith("2025-")] and dates
    listed = expand(load_sweep(sweep_file(DESIGNS + "\nprices: [2026-07-20, 2024-03-04]")))
    assert [c.prices for c in listed if c.design == "01"] == ["2024-03-04", "2026-07-20"]  # oldest first


def test_full_axis_order(sweep_file: SweepFile) -> None:
    spec = load_sweep(sweep_file(DESIGNS + """
prices: [2024-03-04, 2026-07-20]
unavailable: {normal: [], ice: ["*8i.*:*:on-demand"]}
preferencePolicies: [Respect, Ignore]"""))
    cells = expand(spec)
    assert len(cells) == 2 * 2 * 2 * 2
    assert [(c.design, c.capacity, c.preference_policy, c.prices) for c in cells[:5]] == [
        ("01", "normal", "Respect", "2024-03-04"), ("01", "normal", "Respect", "2026-07-20"),
        ("01", "normal", "Ignore", "2024-03-04"), ("01", "normal", "Ignore", "2026-07-20"),
        ("01", "ice", "Respect", "2024-03-04")]
    assert cells[4].unavailable == ("*8i.*:*:on-demand",)
    assert [c.index for c in cells] == list(range(16))


@pytest.mark.parametrize(("spec", "where", "message"), [
    ("region: us-east-1", "spec.designs", "required"),
    (DESIGNS + "\npricse: all", "spec.pricse", "unknown field"),
    (DESIGNS + "\nprices: [2026-07-21]", "spec.prices[0]", "no us-east-1 price table dated 2026-07-21"),
    (DESIGNS + "\nprices: yesterday", "spec.prices", "neither a YYYY-MM-DD date nor a price-table file"),
    (DESIGNS + "\nprices: {from: 2030-01-01}", "spec.prices", "no bundled us-east-1 price table matches"),
    (DESIGNS + "\nprices: {since: 2024-01-01}", "spec.prices.since", "unknown key"),
    (DESIGNS + "\npreferencePolicies: [respect]", "spec.preferencePolicies[0]", "'respect' is not one of"),
    (DESIGNS + "\nunavailable: [a]", "spec.unavailable", "must be a mapping"),
    ("designs:\n  a: @no-such-dir", "spec.designs.a", "no-such-dir: no such file or directory"),
    ("designs: {}", "spec.designs", "at least one"),
])
def test_bad_sweeps_name_file_and_field(sweep_file: SweepFile, spec: str, where: str, message: str) -> None:
    path = sweep_file(spec)
    with pytest.raises(SweepError) as err:
        expand(load_sweep(path))
    assert str(err.value).startswith(f"{path}: {where}: "), str(err.value)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_bad_document_level_input(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    for text, message in [("apiVersion: v1\nkind: Sweep\n", "apiVersion: must be 'karpy.io/v1alpha1'"),
                          ("apiVersion: karpy.io/v1alpha1\nkind: Sweeps\n", "kind: must be 'Sweep'"),
                          ("a: [\n", "invalid YAML"), ("", "exactly one Sweep document, found 0")]:
        path.write_text(text, encoding="utf-8")
        with pytest.raises(SweepError, match=message):
            load_sweep(path)
    with pytest.raises(SweepError, match="no such file"):
        load_sweep(tmp_path / "missing.yaml")


def test_a_bad_manifest_fails_the_sweep_before_any_cell_runs(sweep_file: SweepFile, tmp_path: Path) -> None:
    from karpy.api.loader import ManifestError

    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: x}\nspec:\n  weight: lots\n",
                   encoding="utf-8")
    with pytest.raises(ManifestError) as err:
        expand(load_sweep(sweep_file(f"designs:\n  a: {bad}")))
    assert str(err.value).startswith(f"{bad}: document 1 (NodePool \"x\"): spec.")


def test_keyword_options_build_the_same_spec(sweep_file: SweepFile) -> None:
    from_file = load_sweep(sweep_file(DESIGNS + "\nprices: [2024-03-04]"))
    from_options = spec_from_options(
        name="test", designs={"01": [COOKBOOK / "01-one-nodepool", COOKBOOK / "common/workload.yaml"],
                              "02": COOKBOOK / "02-weighted-nodepools"},
        shared=[COOKBOOK / "common/ec2nodeclass.yaml"], prices=["2024-03-04"])
    assert expand(from_options) == expand(from_file)
    with pytest.raises(TypeError, match="designz"):
        spec_from_options(designz={})


def test_keyword_feature_gates_are_the_files_feature_gates(sweep_file: SweepFile) -> None:
    # karpy.sweep(feature_gates={"NodeOverlay": True}) is spec.featureGates: {NodeOverlay: true}
    from_file = load_sweep(sweep_file(DESIGNS + "\nprices: [2024-03-04]\nfeatureGates: {NodeOverlay: true}"))
    from_options = spec_from_options(
        name="test", designs={"01": [COOKBOOK / "01-one-nodepool", COOKBOOK / "common/workload.yaml"],
                              "02": COOKBOOK / "02-weighted-nodepools"},
        shared=[COOKBOOK / "common/ec2nodeclass.yaml"], prices=["2024-03-04"], feature_gates={"NodeOverlay": True})
    assert from_options.feature_gates == {"NodeOverlay": True}
    assert expand(from_options) == expand(from_file)
    assert {c.feature_gates for c in expand(from_options)} == {(("NodeOverlay", True),)}
    off = spec_from_options(designs={"01": COOKBOOK / "02-weighted-nodepools"}, feature_gates={"NodeOverlay": False})
    assert off.feature_gates == {"NodeOverlay": False}
    with pytest.raises(SweepError, match="spec.featureGates"):
        spec_from_options(designs={"01": COOKBOOK / "02-weighted-nodepools"}, feature_gates={"NoSuchGate": True})


def test_kubernetes_version_axis(sweep_file: SweepFile) -> None:
    """spec.kubernetesVersion: one version or a list (an axis, after billing); featureGates are
    checked at each version; the rows carry the version."""
    spec = load_sweep(sweep_file(DESIGNS + '\nprices: [2024-03-04]\nkubernetesVersion: ["1.35", "1.37"]'))
    assert spec.kubernetes_versions == ("1.35", "1.37")
    cells = expand(spec)
    assert [(c.design, c.kubernetes_version) for c in cells] == [("01", "1.35"), ("01", "1.37"), ("02", "1.35"),
                                                                 ("02", "1.37")]
    assert load_sweep(sweep_file(DESIGNS + "\nkubernetesVersion: v1.35")).kubernetes_versions == ("1.35",)
    assert {c.kubernetes_version for c in expand(load_sweep(sweep_file(DESIGNS)))} == {""}  # no axis
    options = spec_from_options(designs={"01": COOKBOOK / "02-weighted-nodepools"}, kubernetes_versions=["1.35"])
    assert options.kubernetes_versions == ("1.35",)


def test_kubernetes_version_bad_input(sweep_file: SweepFile) -> None:
    with pytest.raises(SweepError, match=r"spec.kubernetesVersion\[1\]: unsupported Kubernetes version '1.36'"):
        load_sweep(sweep_file(DESIGNS + '\nkubernetesVersion: ["1.35", "1.36"]'))
    with pytest.raises(SweepError, match=r"spec.kubernetesVersion\[1\]: 1.37 is listed twice"):
        load_sweep(sweep_file(DESIGNS + '\nkubernetesVersion: ["1.37", "v1.37"]'))
    # a kube-scheduler gate that does not exist at one of the versions
    with pytest.raises(SweepError, match="spec.featureGates: .*does not exist in Kubernetes 1.35"):
        load_sweep(sweep_file(DESIGNS + '\nkubernetesVersion: ["1.35", "1.37"]\n'
                              "featureGates: {GenericWorkload: true, TopologyAwareWorkloadScheduling: true}"))


def test_kubernetes_version_rows() -> None:
    """Each cell simulates at its version; the row and the table carry it."""
    from karpy.sweeps import sweep

    result = sweep(designs={"01": [COOKBOOK / "01-one-nodepool", COOKBOOK / "common/workload.yaml"]},
                   shared=[COOKBOOK / "common/ec2nodeclass.yaml"], prices=["2024-03-04"],
                   kubernetes_versions=["1.35", "1.37"], executor="sequential")
    assert [r["kubernetes_version"] for r in result] == ["1.35", "1.37"]
    assert [r["status"] for r in result] == ["ok", "ok"]
    assert "kubernetes_version" in result.columns
    plain = sweep(designs={"01": [COOKBOOK / "01-one-nodepool", COOKBOOK / "common/workload.yaml"]},
                  shared=[COOKBOOK / "common/ec2nodeclass.yaml"], prices=["2024-03-04"], executor="sequential")
    assert "kubernetes_version" not in plain.columns
