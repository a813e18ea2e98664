"""BillingProfiles as a sweep axis (issue 36): one value per profile file ([] = list prices only),
and the bill's columns beside the list-price ones; compare shows the same values."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import karpy

PROFILE = """\
apiVersion: karpy.io/v1alpha1
kind: BillingProfile
metadata: {name: sp-c7i}
spec:
  enterpriseDiscount: "10%"
  savingsPlans:
  - {name: sp-c7i, type: EC2Instance, family: c7i, commitment: "0.10", rates: {c7i: "40%"}}
"""


def test_billing_axis_adds_the_bill_columns(sweep_file: Callable[..., Path], tmp_path: Path) -> None:
    (tmp_path / "sp-c7i.yaml").write_text(PROFILE, encoding="utf-8")
    path = sweep_file("designs:\n  one-pool: [@01-one-nodepool, @common]\nprices: [2026-07-20]\n"
                      "scenarios:\n  two-hours: @scenarios/scale-up.yaml\n"
                      "billing:\n  list: []\n  sp-c7i: sp-c7i.yaml")
    result = karpy.sweep(path, executor="sequential")
    plain, billed = result
    assert (plain["billing"], billed["billing"]) == ("list", "sp-c7i")
    cols = list(result.columns)
    assert cols[cols.index("cost_total") + 1:cols.index("cost_total") + 5] == [
        "billing", "billed_total", "billed_per_hour", "unused_commitment"]
    assert plain["billed_total"] is None and plain["cost_total"] == billed["cost_total"]
    # every c7i hour: $0.10 of plan covers 0.10 / (0.6 od) of it, the rest bills on demand less 10%
    assert billed["billed_total"] < billed["cost_total"] and billed["unused_commitment"] < 0.01
    assert billed["billed_per_hour"] == pytest.approx(billed["billed_total"] / 2, abs=1e-6)
    assert "billed_total" in result.to_csv().splitlines()[0]


def test_a_sweep_without_billing_keeps_its_columns(sweep_file: Callable[..., Path]) -> None:
    from karpy.sweeps.rows import FIXED_COLUMNS

    result = karpy.sweep(sweep_file("designs:\n  one-pool: [@01-one-nodepool, @common]\nprices: [2026-07-20]"),
                         executor="sequential")
    assert "billing" not in result.columns and "billed_total" not in result.columns
    assert list(result.columns[:len(FIXED_COLUMNS)]) == list(FIXED_COLUMNS)


def test_a_bad_profile_fails_the_sweep_before_any_cell(sweep_file: Callable[..., Path], tmp_path: Path) -> None:
    from karpy.api.loader import ManifestError

    (tmp_path / "bad.yaml").write_text(PROFILE.replace('"0.10"', '"-1"'), encoding="utf-8")
    path = sweep_file("designs:\n  one-pool: [@01-one-nodepool, @common]\nprices: [2026-07-20]\n"
                      "billing:\n  bad: bad.yaml")
    with pytest.raises(ManifestError, match=r"bad.yaml: document 1 \(BillingProfile \"sp-c7i\"\): "
                                            r"spec.savingsPlans\[0\].commitment: '-1' must not be negative"):
        karpy.sweep(path, executor="sequential")


def test_compare_shows_the_bill_of_each_design(tmp_path: Path) -> None:
    from karpy.cli import bundled_example
    from karpy.report.compare import render_compare_table

    (tmp_path / "sp.yaml").write_text(PROFILE, encoding="utf-8")
    example = str(bundled_example())
    comparison = karpy.compare({"list": [example], "billed": [example, str(tmp_path / "sp.yaml")]},
                               prices="2026-07-20", until="1h")
    outcomes = comparison.to_document()["outcomes"]
    assert "billed_total" not in outcomes["list"]
    # m7i.2xlarge is launched; the c7i plan covers nothing and is paid: 0.4032 x 0.9 + 0.10 per hour
    hours = comparison.results["billed"].cost.node_hours.total
    assert outcomes["billed"]["billed_total"] == round(0.4032 * 0.9 * hours + 0.1, 6)
    assert outcomes["billed"]["unused_commitment"] == 0.1
    assert "billed_total" in comparison.diff["fields"]
    text = render_compare_table(comparison.to_document())
    assert "$ billed (modelled)" in text
    # every view labels the bill as modelled
    from karpy.report.compare import render_compare_html
    from karpy.report.markdown import render_compare_markdown

    assert "$ billed (modelled)" in render_compare_markdown(comparison.to_document())
    assert "$ billed (modelled)" in render_compare_html(comparison.to_document())
    assert comparison.to_document()["runs"]["billed"]["cost"]["billed"]["modelled"] is True


def test_rank_by_billed_orders_designs_by_the_bill(tmp_path: Path) -> None:
    """A c7i plan that Karpenter's m7i.2xlarge never uses makes the cheaper list design the dearer bill."""
    from click.testing import CliRunner

    from karpy.cli import bundled_example, cli
    from karpy.comparison import CompareError

    (tmp_path / "sp.yaml").write_text(PROFILE, encoding="utf-8")
    (tmp_path / "none.yaml").write_text(PROFILE.replace("metadata: {name: sp-c7i}", "metadata: {name: none}")
                                        .replace('  savingsPlans:\n  - {name: sp-c7i, type: EC2Instance, family: c7i, '
                                                 'commitment: "0.10", rates: {c7i: "40%"}}\n', ""), encoding="utf-8")
    example = str(bundled_example())
    comparison = karpy.compare({"committed": [example, str(tmp_path / "sp.yaml")],
                                "uncommitted": [example, str(tmp_path / "none.yaml")]},
                               prices="2026-07-20", until="1h")
    by_list = comparison.to_document("list")["ranking"]
    by_bill = comparison.to_document("billed")["ranking"]
    assert by_list["key"] == "cost_total" and [d["design"] for d in by_list["designs"]] == ["committed", "uncommitted"]
    assert by_bill["key"] == "billed_total" and [d["design"] for d in by_bill["designs"]] == ["uncommitted", "committed"]
    # the unused $0.10 is the whole difference
    assert by_bill["designs"][1]["cost"] == pytest.approx(by_bill["designs"][0]["cost"] + 0.1, abs=1e-6)
    assert "ranking" not in comparison.to_document()
    plain = karpy.compare({"a": [example], "b": [example]}, prices="2026-07-20")
    with pytest.raises(CompareError, match="--rank-by billed needs a karpy.io/v1alpha1 BillingProfile in every design"):
        plain.to_document("billed")
    out = CliRunner().invoke(cli, ["compare", f"committed={example},{tmp_path / 'sp.yaml'}",
                                   f"uncommitted={example},{tmp_path / 'none.yaml'}", "--prices", "2026-07-20",
                                   "--until", "1h", "--rank-by", "billed"])
    assert out.exit_code == 0, out.output
    assert "ranked by the bill (modelled), billed_total: 1. uncommitted $" in out.output


def test_sweep_rank_by_billed(sweep_file: Callable[..., Path], tmp_path: Path) -> None:
    from click.testing import CliRunner

    from karpy.cli import cli

    (tmp_path / "sp-c7i.yaml").write_text(PROFILE, encoding="utf-8")
    path = sweep_file("designs:\n  gte-8: [@04-generation-gte-8, @common]\n  one-pool: [@01-one-nodepool, @common]\n"
                      "prices: [2026-07-20]\nbilling:\n  sp-c7i: sp-c7i.yaml")
    out = CliRunner().invoke(cli, ["sweep", str(path), "--executor", "sequential", "-q", "--rank-by", "billed"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert "BILLED $" in lines[0]
    # one-pool (cell 1) launches c7i, covered by the plan, and bills less than gte-8's c8i: it ranks first
    assert lines[1].split()[:2] == ["1", "one-pool"] and lines[2].split()[:2] == ["0", "gte-8"]
    out = CliRunner().invoke(cli, ["sweep", str(sweep_file("designs:\n  one-pool: [@01-one-nodepool, @common]\n"
                                                           "prices: [2026-07-20]", name="plain.yaml")),
                                   "--executor", "sequential", "-q", "--rank-by", "billed"])
    assert out.exit_code == 2 and "--rank-by billed needs a karpy.io/v1alpha1 BillingProfile" in out.output


def test_sweep_report_shows_the_bill_beside_list_prices(sweep_file: Callable[..., Path], tmp_path: Path) -> None:
    """The HTML report's rows carry the bill's columns, labelled modelled, where a BillingProfile is
    given (main: list prices only), and the table labels its bill column modelled too."""
    from karpy.report.sweep import render_sweep_html, render_sweep_table

    (tmp_path / "sp-c7i.yaml").write_text(PROFILE, encoding="utf-8")
    path = sweep_file("designs:\n  one-pool: [@01-one-nodepool, @common]\nprices: [2026-07-20]\n"
                      "scenarios:\n  two-hours: @scenarios/scale-up.yaml\n"
                      "billing:\n  list: []\n  sp-c7i: sp-c7i.yaml")
    result = karpy.sweep(path, executor="sequential")
    plain, billed = result
    page = render_sweep_html(result.rows)
    head = page[page.index('<table id="rows">'):page.index("</thead>")]
    assert "<th>billing</th>" in head and "<th class=num>cost_total</th>" in head
    assert "<th class=num>billed_total (modelled)</th>" in head and "<th class=num>unused_commitment (modelled)</th>" in head
    row = page[page.index(f'data-cell="{billed["cell"]}"'):]
    row = row[:row.index("</tr>")]
    assert f'<td class="num">{billed["cost_total"]:.5f}</td>' in row
    assert f'<td class="num">{billed["billed_total"]:.5f}</td>' in row and "<td>sp-c7i</td>" in row
    assert 'id="billed-note"' in page and "modelled" in page[page.index('id="billed-note"'):]
    assert "BILLED $ (MODELLED)" in render_sweep_table(result.rows).splitlines()[0]
    unbilled = karpy.sweep(sweep_file("designs:\n  one-pool: [@01-one-nodepool, @common]\nprices: [2026-07-20]",
                                      name="plain.yaml"), executor="sequential")
    plain_page = render_sweep_html(unbilled.rows)
    assert "billed_total" not in plain_page and 'id="billed-note"' not in plain_page
