"""The committed cookbook sweep (examples/generation-preference/sweep.yaml -> sweep/rows.csv, the
command in docs/guides/cookbook.md "The same strategies on every price table, 2023-2026"): the rows
are what the command gives today, and they say what that page says they say.

Re-running all 222 cells is a benchmark, not a unit test; one price table's six cells (2025-08-25,
the date only r8i of the 8th-gen Intel types is priced, where the strategies differ most) are
re-run here and must equal their committed rows column for column.
"""

from __future__ import annotations

import csv
import io

from karpy.sweeps import SweepResult, expand, load_sweep, run_cells

from .conftest import EXAMPLES, ROOT

SWEEP = EXAMPLES / "sweep.yaml"
ROWS = EXAMPLES / "sweep" / "rows.csv"
COOKBOOK = ROOT / "docs" / "guides" / "cookbook.md"


def _committed() -> list[dict[str, str]]:
    return list(csv.DictReader(ROWS.open(encoding="utf-8")))


def test_committed_rows_are_what_the_committed_command_gives_today() -> None:
    committed = {r["cell"]: r for r in _committed()}
    cells = [c for c in expand(load_sweep(SWEEP)) if c.prices == "2025-08-25"]
    assert len(cells) == 6
    fresh = list(csv.DictReader(io.StringIO(SweepResult(run_cells(cells, "sequential")).to_csv())))
    for row in fresh:
        old = committed[row["cell"]]
        for column, value in row.items():
            assert old[column] == value, (row["design"], column, old[column], value)
        # a generation column the six cells do not have is zero / empty in the committed row
        for column in set(old) - set(row):
            assert column.startswith(("nodes_gen", "node_hours_gen")) and old[column] in ("0", "0.0", ""), column


def test_the_rows_say_what_the_cookbook_page_says() -> None:
    rows = _committed()
    text = COOKBOOK.read_text(encoding="utf-8")
    dates = sorted({r["prices"] for r in rows})
    assert len(rows) == 222 and len(dates) == 37 and (dates[0], dates[-1]) == ("2023-09-18", "2026-07-20")
    flat = " ".join(text.split())
    assert "from 2023-09-18 to 2026-07-20 — 37 tables, 222 cells" in flat
    assert all(r["status"] == "ok" for r in rows)
    by = {(r["design"].split()[0], r["prices"]): r for r in rows}
    # 01: "c7i.2xlarge, 7th gen, $0.357/h on all 37 tables -- yes, lowest-price picks 7th gen on every date"
    assert {(by["01", d]["instance_types"], by["01", d]["generations"], by["01", d]["cost_per_hour"]) for d in dates} \
        == {("c7i.2xlarge", "7", "0.357")}
    assert "`c7i.2xlarge`, 7th gen, $0.357/h on all 37 tables" in text
    # 02 and 05: 7th gen until 2025-08-04, r8i on 2025-08-25, m8i on 2025-09-01, c8i from 2025-10-20
    for design in ("02", "05"):
        assert {by[design, d]["generations"] for d in dates if d <= "2025-08-04"} == {"7"}
        assert (by[design, "2025-08-25"]["instance_types"], by[design, "2025-08-25"]["cost_per_hour"]) == \
            ("r8i.2xlarge", "0.55568")
        assert (by[design, "2025-09-01"]["instance_types"], by[design, "2025-09-01"]["cost_per_hour"]) == \
            ("m8i.2xlarge", "0.42336")
        assert {by[design, d]["instance_types"] for d in dates if d >= "2025-10-20"} == {"c8i.2xlarge"}
    # 03: 7th gen through 2025-09-01, c8i.2xlarge from 2025-10-20
    assert {by["03", d]["generations"] for d in dates if d <= "2025-09-01"} == {"7"}
    assert {by["03", d]["instance_types"] for d in dates if d >= "2025-10-20"} == {"c8i.2xlarge"}
    # 04: 6 pods pending before 2025-08-25, then the same 8th-gen types as 02
    assert {by["04", d]["pending_pods"] for d in dates if d < "2025-08-25"} == {"6"}
    assert all(by["04", d]["instance_types"] == by["02", d]["instance_types"] for d in dates if d >= "2025-08-25")
    # 06: 6 pods pending through 2025-09-01, c7i.2xlarge from 2025-10-20
    assert {by["06", d]["pending_pods"] for d in dates if d <= "2025-09-01"} == {"6"}
    assert {by["06", d]["instance_types"] for d in dates if d >= "2025-10-20"} == {"c7i.2xlarge"}
    for claim in ("on 2025-08-25 only `r8i` is priced (`r8i.2xlarge`, $0.55568/h", "2025-09-01 `m8i` ($0.42336/h)",
                  "from 2025-10-20 `c8i.2xlarge` ($0.37484/h)"):
        assert claim in flat, claim
