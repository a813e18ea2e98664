"""Rows of a sweep: flat tidy columns, CSV / JSON lines / Parquet / pandas, error rows, executor
ordering, and the progress bar. Synthetic rows (what run_cell returns) except where a cell runs."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import karpy
from karpy.sweeps import Cell, SweepProgress, SweepResult, run_cells
from karpy.sweeps import executors as executors_module

OK = {"cell": 0, "design": "a", "workload": "", "scenario": "", "capacity": "normal", "preference_policy": "Respect",
      "min_values_policy": "Strict", "prices": "2026-07-20", "region": "us-east-1", "unavailable": "",
      "status": "ok", "error": None, "prices_date": "2026-07-20", "prices_source": "table",
      "nodeclaims": 3, "instance_types": {"m7i.large": 2, "c8i.xlarge": 1}, "generations": {"7": 2, "8": 1},
      "capacity_types": ["on-demand"], "nodepools": ["general"], "allocation_strategies": ["lowest-price"],
      "pending_pods": 0, "failed_launches": 0, "cost_per_hour": 0.5, "last_launch_at": 1.0,
      "warnings": ["skipped 1 document(s) of kinds karpy does not model: Service"]}
FAILED = {**{k: OK[k] for k in ("design", "workload", "scenario", "preference_policy", "min_values_policy",
                                "region")},
          "cell": 1, "capacity": "ice", "prices": "2026-07-20", "unavailable": "bad", "status": "error",
          "error": "CapacitySpecError: capacity spec 'bad': expected TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE"}
TEN = {**OK, "cell": 2, "generations": {"10": 1}, "instance_types": {"x10.large": 1}, "nodeclaims": 1,
       "pending_pods": 2, "warnings": []}


def test_flat_columns_with_one_column_per_generation_in_numeric_order() -> None:
    result = SweepResult([OK, FAILED, TEN])
    assert result.columns[-5:] == ("nodes_gen7", "nodes_gen8", "nodes_gen10", "warnings", "prices_notes")
    ok, failed, ten = result
    assert ok["instance_types"] == "2x m7i.large, c8i.xlarge" and ok["generations"] == "7,8"
    assert (ok["nodes_gen7"], ok["nodes_gen8"], ok["nodes_gen10"]) == (2, 1, 0)
    assert failed["status"] == "error" and failed["nodes_gen7"] is None and failed["cost_per_hour"] is None
    assert "CapacitySpecError" in failed["error"]
    assert ten["generations"] == "10" and ten["nodes_gen10"] == 1
    assert result.exit_code == 1 and result.errors == [failed]
    assert SweepResult([OK, TEN]).exit_code == 3 and SweepResult([OK]).exit_code == 0
    assert result.warnings == ["skipped 1 document(s) of kinds karpy does not model: Service"]


def test_csv_and_json_lines() -> None:
    result = SweepResult([OK, FAILED])
    lines = result.to_csv().splitlines()
    assert lines[0].split(",")[:3] == ["cell", "design", "workload"]
    assert lines[1].startswith("0,a,,,normal,Respect,Strict,2026-07-20,us-east-1,,ok,,2026-07-20,table,3,"
                               '"2x m7i.large, c8i.xlarge",')
    assert lines[2].startswith("1,a,,,ice,Respect,Strict,2026-07-20,us-east-1,bad,error,")
    records = [json.loads(line) for line in result.to_jsonl().splitlines()]
    assert [list(r) for r in records] == [list(result.columns)] * 2
    assert records[0]["cost_per_hour"] == 0.5 and records[1]["cost_per_hour"] is None


def test_parquet_and_pandas_round_trip(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")  # the parquet extra, in the test extra
    result = SweepResult([OK, FAILED, TEN])
    path = result.to_parquet(tmp_path / "rows.parquet")
    table = pq.read_table(path)
    assert table.column_names == list(result.columns)
    assert table.to_pylist() == result.rows
    assert str(table.schema.field("nodes_gen10").type) == "int64"
    pytest.importorskip("pandas")
    frame = result.to_pandas()
    assert list(frame.columns) == list(result.columns) and len(frame) == 3
    assert frame.loc[0, "cost_per_hour"] == 0.5


def _cell(i: int) -> Cell:
    return Cell(index=i, design=f"d{i}", workload="", scenario="", capacity="normal", preference_policy="Respect",
                min_values_policy="Strict", prices="", region="us-east-1", unavailable=(), cloud_provider="aws",
                manifests=())


def test_rows_come_back_in_cell_order_and_a_raising_cell_is_an_error_row(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_run_cell(cell: Cell) -> dict[str, Any]:
        time.sleep(0.05 * (4 - cell.index))  # finish in reverse order
        if cell.index == 2:
            raise MemoryError("worker died")
        return {**OK, **cell.axes()}

    monkeypatch.setattr(executors_module, "run_cell", fake_run_cell)
    finished: list[int] = []
    with ThreadPoolExecutor(4) as pool:
        rows = run_cells([_cell(i) for i in range(4)], pool, on_done=lambda r: finished.append(r["cell"]))
    assert [r["cell"] for r in rows] == [0, 1, 2, 3]
    assert finished[0] == 3  # the last cell finished first, and still sits last
    assert rows[2]["status"] == "error" and rows[2]["error"] == "MemoryError: worker died"
    assert [r["design"] for r in rows] == ["d0", "d1", "d2", "d3"]


def test_unknown_executor_and_dask_without_scheduler() -> None:
    from karpy.sweeps import ExecutorError

    with pytest.raises(ExecutorError, match="unknown executor 'ray'"):
        run_cells([_cell(0), _cell(1)], "ray")
    with pytest.raises(ExecutorError, match="--scheduler"):
        run_cells([_cell(0), _cell(1)], "dask")


def test_a_failing_cell_is_a_row_with_its_error_and_the_sweep_goes_on(sweep_file: Callable[..., Path]) -> None:
    path = sweep_file("designs:\n  one-pool: [@01-one-nodepool, @common]\nprices: [2026-07-20]\n"
                      "unavailable:\n  normal: []\n  typo: ['c8i.*:on-demand']")
    result = karpy.sweep(path, executor="sequential")
    normal, typo = result
    assert normal["status"] == "ok" and normal["instance_types"] == "c7i.2xlarge"
    assert typo["status"] == "error" and "c8i.*:on-demand" in typo["error"] and typo["unavailable"] == "c8i.*:on-demand"
    assert result.exit_code == 1


def test_progress_line_has_count_rate_and_eta() -> None:
    clock = iter([0.0, 2.0, 4.0, 30.0, 40.0])
    out = io.StringIO()
    bar = SweepProgress(4, stream=out, tty=False, now=lambda: next(clock))
    bar({"status": "ok"})          # t=2: first line always
    bar({"status": "error"})       # t=4: within 10 s of the last line, not printed
    bar({"status": "ok"})          # t=30
    bar({"status": "ok"})          # t=40: the last cell, always printed
    lines = out.getvalue().splitlines()
    assert len(lines) == 3
    assert lines[0] == "karpy sweep: [######..................] 1/4 cells, 0.50 cells/s, elapsed 0:02, ETA 0:06"
    assert "3/4 cells, 1 failed, 0.10 cells/s" in lines[1] and "ETA 0:10" in lines[1]
    assert lines[2].startswith("karpy sweep: [########################] 4/4 cells, 1 failed")


def test_the_default_pool_has_one_worker_per_usable_cpu_and_no_more_than_the_cells(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    sizes: list[int] = []

    class Recording(ThreadPoolExecutor):  # the pool's sizing, with the cells run in threads
        def __init__(self, max_workers: int, mp_context: Any = None, initializer: Any = None) -> None:
            sizes.append(max_workers)
            super().__init__(max_workers)

    monkeypatch.setattr(executors_module, "run_cell", lambda cell: {**OK, **cell.axes()})
    monkeypatch.setattr(executors_module, "ProcessPoolExecutor", Recording)
    cpus = len(os.sched_getaffinity(0))
    assert executors_module.default_workers() == cpus
    many = [_cell(i) for i in range(cpus + 3)]
    assert [r["cell"] for r in run_cells(many)] == list(range(cpus + 3))  # "process" is the default
    assert [r["cell"] for r in run_cells(many[:2], workers=8)] == [0, 1]
    assert sizes == [cpus, 2]
    sizes.clear()
    monkeypatch.setattr(executors_module.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4})
    run_cells([_cell(i) for i in range(9)])
    assert sizes == [5]


def test_what_is_modelled_about_the_prices_is_a_column_and_shows_in_the_report_and_table() -> None:
    """Issue 37: modelled spot prices were said on stderr and in the simulate report, never in a
    sweep's. A cell's ``prices_notes`` (karpy.report.table.prices_notes of its document's prices)
    is a column, and the sweep report and table list it under each design's warnings."""
    from karpy.report.sweep import render_sweep_html, render_sweep_table

    spot = "spot prices modelled (spot-advisor savings + a per-zone offset), not measured"
    from karpy.cli import bundled_example

    cell = Cell(index=0, design="a", workload="", scenario="", capacity="normal", preference_policy="Respect",
                min_values_policy="Strict", prices="2026-07-20", region="us-east-1", unavailable=(),
                cloud_provider="aws", manifests=(str(bundled_example()),))
    result = SweepResult(run_cells([cell], "sequential"))
    assert result.columns[-1] == "prices_notes"
    assert result.rows[0]["prices_notes"].split("; ")[0] == spot
    assert f"prices: {spot}" in render_sweep_html(result.rows)
    assert f"  - prices: {spot}" in render_sweep_table(result.rows).splitlines()
    failed = SweepResult([FAILED])
    assert failed.rows[0]["prices_notes"] is None  # a failed cell priced nothing
