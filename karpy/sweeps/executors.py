"""Where the cells of a sweep run: in this process, on a local process pool, or on a Dask cluster.

Every executor runs the same :func:`karpy.sweeps.cell.run_cell` on the same cells and puts each row
back at its cell's index, so the rows and their order never depend on the executor, the number of
workers or the order cells finish in. A cell that raises anyway (a worker that died) becomes an
error row.

- ``"sequential"``: one cell after another in this process.
- ``"process"`` (the default): a ``concurrent.futures.ProcessPoolExecutor`` with one worker per CPU
  this process may use (``os.sched_getaffinity``), never more than there are cells. Workers live for
  the whole sweep, so each keeps its catalogue and price tables warm across the cells it runs.
  Start method: ``fork`` when this interpreter runs a single thread (fast, nothing re-imported),
  else ``spawn`` (forking a multi-threaded host is unsafe).
- ``"dask"``: a ``distributed.Client`` for ``scheduler`` (``tcp://host:8786``), closed afterwards;
  or pass a ``distributed.Client`` as the executor (left open). Dask is imported only here, only
  when asked (``pip install "karpy[dask]"``). Workers need karpy installed; they need no access to
  the manifests (cells carry their text).
- any ``concurrent.futures.Executor`` (e.g. a ``ThreadPoolExecutor``), used as given and left open.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from typing import Any

from karpy.sweeps.cell import Cell, _one_line, run_cell

__all__ = ["EXECUTORS", "ExecutorError", "default_workers", "run_cells"]

EXECUTORS = ("sequential", "process", "dask")

OnDone = Callable[[dict[str, Any]], None]


class ExecutorError(ValueError):
    """An unknown executor name, or Dask asked for but not installed / reachable."""


def default_workers() -> int:
    """CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _failed(cell: Cell, err: BaseException) -> dict[str, Any]:
    return {**cell.axes(), "region": cell.region, "unavailable": " ".join(cell.unavailable), "status": "error",
            "error": _one_line(err)}


def _sequential(cells: Sequence[Cell], on_done: OnDone) -> list[dict[str, Any]]:
    rows = []
    for cell in cells:
        row = run_cell(cell)
        rows.append(row)
        on_done(row)
    return rows


def _collect(cells: Sequence[Cell], finished: Iterable[tuple[int, Any]], on_done: OnDone) -> list[dict[str, Any]]:
    """Put each finished future's row at its cell's index (an exception becomes an error row)."""
    rows: list[dict[str, Any] | None] = [None] * len(cells)
    for i, future in finished:
        try:
            rows[i] = future.result()
        except Exception as err:  # noqa: BLE001 - a dead worker loses one cell, not the sweep
            rows[i] = _failed(cells[i], err)
        on_done(rows[i])  # type: ignore[arg-type]
    return rows  # type: ignore[return-value]


def _futures(executor: Executor, cells: Sequence[Cell], on_done: OnDone) -> list[dict[str, Any]]:
    index = {executor.submit(run_cell, cell): i for i, cell in enumerate(cells)}
    return _collect(cells, ((index[f], f) for f in as_completed(index)), on_done)


def _start_method() -> str:
    methods = multiprocessing.get_all_start_methods()
    return "fork" if "fork" in methods and threading.active_count() == 1 else "spawn"


def _process_pool(cells: Sequence[Cell], workers: int | None, on_done: OnDone) -> list[dict[str, Any]]:
    n = max(1, min(workers or default_workers(), len(cells)))
    context = multiprocessing.get_context(_start_method())
    with ProcessPoolExecutor(max_workers=n, mp_context=context) as pool:
        return _futures(pool, cells, on_done)


def _is_dask_client(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "distributed" and hasattr(obj, "submit") and hasattr(obj, "gather")


def _dask(cells: Sequence[Cell], client: Any, on_done: OnDone) -> list[dict[str, Any]]:
    from distributed import as_completed as dask_completed

    futures = [client.submit(run_cell, cell, pure=False) for cell in cells]
    index = {f.key: i for i, f in enumerate(futures)}
    return _collect(cells, ((index[f.key], f) for f in dask_completed(futures)), on_done)


def _dask_client(scheduler: str | None) -> Any:
    try:
        from distributed import Client
    except ImportError:
        raise ExecutorError('--executor dask needs Dask: pip install "karpy[dask]"') from None
    if not scheduler:
        raise ExecutorError("--executor dask needs --scheduler ADDRESS (e.g. tcp://host:8786)")
    try:
        return Client(scheduler, timeout=30)
    except OSError as err:
        raise ExecutorError(f"cannot reach the Dask scheduler at {scheduler}: {err}") from None


def run_cells(cells: Sequence[Cell], executor: Any = "process", *, workers: int | None = None,
              scheduler: str | None = None, on_done: OnDone | None = None) -> list[dict[str, Any]]:
    """Run every cell on ``executor`` (see the module docstring); rows in cell order.
    ``on_done(row)`` is called in this process as each cell finishes (for progress)."""
    done: OnDone = on_done or (lambda row: None)
    if not cells:
        return []
    if executor == "sequential" or (executor == "process" and (workers == 1 or len(cells) == 1)):
        return _sequential(cells, done)
    if executor == "process":
        return _process_pool(cells, workers, done)
    if executor == "dask":
        client = _dask_client(scheduler)
        try:
            return _dask(cells, client, done)
        finally:
            client.close()
    if _is_dask_client(executor):
        return _dask(cells, executor, done)
    if isinstance(executor, Executor):
        return _futures(executor, cells, done)
    raise ExecutorError(f"unknown executor {executor!r}; use one of {', '.join(EXECUTORS)}, "
                        "a distributed.Client or a concurrent.futures.Executor")
