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

Stopping: a Ctrl-C (``KeyboardInterrupt``) stops the sweep promptly -- queued cells are cancelled,
the process pool's workers (which ignore SIGINT, so a terminal's Ctrl-C reaches only this process
and never interrupts a worker mid-write to its result pipe) are terminated -- and raises
:class:`SweepInterrupted` carrying the rows of the cells that finished; a second Ctrl-C while it
stops ends the process at once (exit 130). A Dask scheduler lost mid-sweep raises
:class:`SweepLost` once (not an error row per cell), with the finished rows too.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from typing import Any

from karpy.sweeps.cell import Cell, _one_line, run_cell

__all__ = ["EXECUTORS", "ExecutorError", "SweepInterrupted", "SweepLost", "default_workers", "run_cells",
           "sigint_stops"]

EXECUTORS = ("sequential", "process", "dask")

OnDone = Callable[[dict[str, Any]], None]


class ExecutorError(ValueError):
    """An unknown executor name, or Dask asked for but not installed / reachable."""


class SweepInterrupted(KeyboardInterrupt):
    """A Ctrl-C stopped the sweep; ``rows`` has a row at each finished cell's index, None elsewhere."""

    def __init__(self, rows: list[dict[str, Any] | None]) -> None:
        super().__init__("interrupted")
        self.rows = rows


class SweepLost(RuntimeError):
    """The Dask scheduler was lost mid-sweep (``reason``); ``rows`` as :class:`SweepInterrupted`'s."""

    def __init__(self, reason: str, rows: list[dict[str, Any] | None]) -> None:
        super().__init__(reason)
        self.reason = reason
        self.rows = rows


def _exit_now(signum: int, frame: Any) -> None:
    """SIGINT while a sweep stops: the second Ctrl-C ends the process at once, and its pool's workers
    with it (they ignore SIGINT, and a worker outliving its parent blocks on the call queue forever,
    holding the terminal's or the caller's pipes open)."""
    try:
        sys.stderr.write("\nkarpy: interrupted again: stopping at once\n")
        sys.stderr.flush()
        for child in multiprocessing.active_children():
            with contextlib.suppress(Exception):  # (one that has just ended: the next still goes)
                child.kill()
    finally:
        os._exit(128 + signal.SIGINT)


def _first_sigint(signum: int, frame: Any) -> None:
    """SIGINT during a sweep: from now on the next one exits at once (swapped here, in the handler,
    so no second signal can land between the two), then stop as Python's default handler does."""
    signal.signal(signal.SIGINT, _exit_now)
    raise KeyboardInterrupt


@contextlib.contextmanager
def sigint_stops() -> Iterator[None]:
    """While running (main thread with Python's default handler only): the first Ctrl-C raises
    KeyboardInterrupt, a second one exits at once; the caller's handler is back afterwards. Nested
    in another (the CLI's, around the sweep and the writing of its partial rows), it leaves the
    outer one in charge, so a second Ctrl-C while the finished rows are written exits at once too."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    signal.signal(signal.SIGINT, _first_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _ignore_sigint() -> None:
    """Process-pool worker initializer: a terminal's Ctrl-C goes to the whole process group; only
    the parent decides what it means (a worker interrupted mid-write to its result pipe would hold
    the pool's lock forever: the deadlock of a second Ctrl-C)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


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
    rows: list[dict[str, Any] | None] = [None] * len(cells)
    try:
        for i, cell in enumerate(cells):
            rows[i] = row = run_cell(cell)
            on_done(row)
    except KeyboardInterrupt:
        raise SweepInterrupted(rows) from None
    return rows  # type: ignore[return-value]


def _collect(cells: Sequence[Cell], finished: Iterable[tuple[int, Any]], on_done: OnDone,
             rows: list[dict[str, Any] | None] | None = None,
             lost: Callable[[BaseException], str | None] | None = None) -> list[dict[str, Any]]:
    """Put each finished future's row at its cell's index (an exception becomes an error row, unless
    ``lost`` says it means the whole cluster is gone: then :class:`SweepLost`)."""
    rows = [None] * len(cells) if rows is None else rows
    for i, future in finished:
        try:
            rows[i] = future.result()
        except Exception as err:  # noqa: BLE001 - a dead worker loses one cell, not the sweep
            reason = lost(err) if lost is not None else None
            if reason is not None:
                raise SweepLost(reason, rows) from None
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
    pool = ProcessPoolExecutor(max_workers=n, mp_context=context, initializer=_ignore_sigint)
    rows: list[dict[str, Any] | None] = [None] * len(cells)
    with sigint_stops():
        try:
            index = {pool.submit(run_cell, cell): i for i, cell in enumerate(cells)}
            _collect(cells, ((index[f], f) for f in as_completed(index)), on_done, rows)
        except KeyboardInterrupt:
            _stop(pool)
            raise SweepInterrupted(rows) from None
    pool.shutdown(wait=True)
    return rows  # type: ignore[return-value]


def _stop(pool: ProcessPoolExecutor) -> None:
    """Cancel what is queued and end the workers now (the cells they run are lost): shutdown alone
    would wait for every running cell. ``_processes`` is the pool's own table of its workers
    (Python 3.14 adds ``terminate_workers()`` for this)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        p.terminate()
    for p in processes:
        p.join(timeout=10)


def _is_dask_client(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "distributed" and hasattr(obj, "submit") and hasattr(obj, "gather")


def _dask_lost(client: Any) -> Callable[[BaseException], str | None]:
    """Whether a future's exception means the scheduler is gone (the client no longer running, or
    a closed comm / cancelled future): then one reason for the whole sweep, not an error per cell."""
    def lost(err: BaseException) -> str | None:
        status = getattr(client, "status", "running")
        name = type(err).__name__
        if status not in ("running", "connecting") or name in ("CommClosedError", "CancelledError",
                                                                 "FutureCancelledError"):
            return f"lost the Dask scheduler ({name})"
        return None
    return lost


@contextlib.contextmanager
def _quiet_dask_client() -> Iterator[None]:
    """The client karpy made for ``--scheduler``: its reconnect attempts after a lost scheduler are
    logged as an error with a traceback each; :class:`SweepLost` says it once instead."""
    import logging

    names = ("distributed.client", "distributed.comm", "distributed.core", "distributed.batched")
    loggers = [logging.getLogger(n) for n in names]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def _dask(cells: Sequence[Cell], client: Any, on_done: OnDone) -> list[dict[str, Any]]:
    from distributed import as_completed as dask_completed

    futures = [client.submit(run_cell, cell, pure=False) for cell in cells]
    index = {f.key: i for i, f in enumerate(futures)}
    rows: list[dict[str, Any] | None] = [None] * len(cells)
    with sigint_stops():
        try:
            return _collect(cells, ((index[f.key], f) for f in dask_completed(futures)), on_done, rows,
                            lost=_dask_lost(client))
        except KeyboardInterrupt:
            client.cancel(futures)
            raise SweepInterrupted(rows) from None


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
        with _quiet_dask_client():
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
