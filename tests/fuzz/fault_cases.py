"""Fault injection for the fuzzer (issue 35), shared by ``test_fuzz_faults.py`` and ``run.py --faults``.

* A full disk on each output (``simulate --report``, ``sweep --csv/--jsonl/--report/--charts/--parquet``):
  the write path of :mod:`karpy.utils.atomicwrite` (``_write``; pyarrow's ``write_table`` for Parquet)
  writes a drawn number of bytes, then fails with ENOSPC. The contract: exit 2 with one ``karpy:`` line and no traceback, an existing
  target byte-identical, no temporary file beside it.
* A damaged catalogue cache entry (:mod:`awsprovider.ec2.catalogcache`): random bytes, a flipped bit,
  a truncation, the right key with an empty answer, a FIFO or a directory in the entry's place. The contract: the same document as with no cache, and
  the entry repaired (the next run reads it).

* SIGINT during a ``--executor process`` sweep (a real subprocess): a drawn moment after its first
  finished cell, once or twice, to the process group (a terminal's Ctrl-C) or to the main process
  alone. The contract: exit 130 within :data:`SIGNAL_STOP_SECONDS`, one ``karpy: interrupted`` line
  and no traceback, an earlier complete ``rows.csv`` untouched; unless a second SIGINT stopped it at
  once (``karpy: interrupted again``): the finished rows (all ``ok``) in ``rows.csv.partial`` and
  ``rows.jsonl.partial``, no temporary file, the pool's workers gone.
  (``tests/sweeps/test_sweep_interrupt.py`` has the fixed cases and the lost Dask scheduler.)
"""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import strategies as st

from awsprovider.ec2 import catalog as catalog_module
from awsprovider.ec2.catalog import INSTANCE_TYPE_FILTERS, OFFERINGS_LOCATION_TYPE, _filters_key
from awsprovider.ec2.catalogcache import CACHE_DIR_ENV, NO_CACHE_ENV, CatalogCache, encode_entry
from karpy.cli import cli
from karpy.utils import atomicwrite

__all__ = ["CacheFault", "DiskFull", "FaultOutcome", "SignalFault", "cache_faults", "check_cache_fault",
           "check_disk_full", "check_signal", "disk_full_faults", "signal_faults"]

ROOT = Path(__file__).resolve().parents[2]
COOKBOOK = ROOT / "examples" / "generation-preference"
SWEEP = f"""apiVersion: karpy.io/v1alpha1
kind: Sweep
metadata:
  name: faults
spec:
  designs:
    one-pool: [{COOKBOOK}/01-one-nodepool, {COOKBOOK}/common/workload.yaml]
    gte8: [{COOKBOOK}/04-generation-gte-8, {COOKBOOK}/common/workload.yaml]
  shared: [{COOKBOOK}/common/ec2nodeclass.yaml]
  prices: [2026-07-20]
"""
#: (command, option) of every output file written through karpy.utils.atomicwrite
OUTPUTS = (("simulate", "--report"), ("sweep", "--csv"), ("sweep", "--jsonl"), ("sweep", "--report"),
           ("sweep", "--charts"), ("sweep", "--parquet"))
ENTRIES = (("DescribeInstanceTypes", _filters_key(INSTANCE_TYPE_FILTERS)),
           ("DescribeInstanceTypeOfferings", (OFFERINGS_LOCATION_TYPE,)))
DAMAGES = ("bytes", "bitflip", "truncate", "empty", "fifo", "directory")


@dataclass(frozen=True)
class DiskFull:
    command: str
    option: str
    at: float  # where in the file the disk fills up (a fraction of its length)
    nth: int  # for --charts: which chart file (modulo their number)
    existing: bytes | None  # the target's earlier content, or None when it does not exist


@dataclass(frozen=True)
class CacheFault:
    entry: int  # index into ENTRIES
    damage: str  # one of DAMAGES
    at: float  # truncation point / where random bytes go (a fraction of the entry's length)
    noise: bytes


@dataclass(frozen=True)
class SignalFault:
    after: float  # seconds after the first finished cell
    twice: bool  # a second SIGINT right after the first
    to_group: bool  # the process group (a terminal's Ctrl-C), else the main process alone


@dataclass(frozen=True)
class FaultOutcome:
    kind: str  # "ok", "target destroyed", "temp left", "crash"
    detail: str = ""


disk_full_faults = st.builds(
    lambda out, at, nth, existing: DiskFull(out[0], out[1], at, nth, existing),
    st.sampled_from(OUTPUTS), st.floats(min_value=0.0, max_value=1.0), st.integers(min_value=0, max_value=20),
    st.one_of(st.none(), st.binary(min_size=0, max_size=64)))
signal_faults = st.builds(SignalFault, st.floats(min_value=0.0, max_value=2.0), st.booleans(), st.booleans())
cache_faults = st.builds(CacheFault, st.integers(min_value=0, max_value=len(ENTRIES) - 1), st.sampled_from(DAMAGES),
                         st.floats(min_value=0.0, max_value=1.0), st.binary(min_size=1, max_size=64))


def sigint_default() -> None:
    """In the child: SIGINT's default disposition. A suite started in the background (``&`` in a
    script, a CI wrapper) passes SIGINT on ignored, and karpy then rightly leaves it ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextmanager
def _env(**values: str | None) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextmanager
def _disk_full_on(match: Callable[[Path], bool], at: float) -> Iterator[list[Path]]:
    """Replace ``atomicwrite._write``: a write to a path ``match`` accepts writes ``at`` of its
    bytes and fails with ENOSPC; the paths that failed are collected."""
    real = atomicwrite._write
    failed: list[Path] = []

    def full(path: Path, raw: bytes) -> None:
        if failed or not match(path):
            return real(path, raw)
        failed.append(path)
        with open(path, "wb") as f:
            f.write(raw[: int(at * len(raw))])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    import pyarrow.parquet as pq  # Parquet goes through pyarrow's writer, into atomicwrite's temporary path

    real_table = pq.write_table

    def full_table(table: Any, where: Any, *args: Any, **kwargs: Any) -> None:
        path = Path(str(where))
        if failed or not match(path):
            real_table(table, where, *args, **kwargs)
            return
        failed.append(path)
        buf = io.BytesIO()
        real_table(table, buf, *args, **kwargs)
        path.write_bytes(buf.getvalue()[: int(at * len(buf.getvalue()))])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    atomicwrite._write = full
    pq.write_table = full_table
    try:
        yield failed
    finally:
        atomicwrite._write = real
        pq.write_table = real_table


def _clean_exit_2(res: Any) -> str | None:
    """None when ``res`` is exit 2 with one ``karpy:`` line and no traceback, else what is wrong."""
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        return f"{type(res.exception).__name__}: {res.exception}"[:300]
    lines = [ln for ln in res.stderr.splitlines() if not ln.startswith(("karpy: simulat", "karpy sweep:"))]
    if res.exit_code != 2 or len(lines) != 1 or not lines[0].startswith("karpy: ") or "Traceback" in res.output:
        return f"exit {res.exit_code}: {res.stderr[-300:]!r}"
    return None


def check_disk_full(fault: DiskFull, workdir: Path, runner: CliRunner | None = None) -> FaultOutcome:
    """Run the command of ``fault`` in ``workdir`` (emptied first) with the disk filling up."""
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    out = workdir / "out"
    out.mkdir()
    if fault.command == "simulate":
        target = out / "report.html"
        args = ["simulate", "-o", "json", "--report", str(target)]
    else:
        spec = workdir / "sweep.yaml"
        spec.write_text(SWEEP, encoding="utf-8")
        args = ["sweep", str(spec), "--executor", "sequential", "-q", "-o", "csv"]
        if fault.option == "--charts":
            charts = out / "charts"
            # the chart written nth (of the names a clean run writes: 2 designs, one price table)
            names = sorted(_chart_names(workdir, runner))
            target = charts / names[fault.nth % len(names)]
            args += ["--charts", str(charts)]
        else:
            target = out / {"--csv": "rows.csv", "--jsonl": "rows.jsonl", "--report": "report.html",
                            "--parquet": "rows.parquet"}[fault.option]
            args += [fault.option, str(target)]
    if fault.existing is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(fault.existing)
    with _disk_full_on(lambda p: p.name.startswith(f".{target.name}."), fault.at) as failed:
        res = (runner or CliRunner()).invoke(cli, args, catch_exceptions=True)
    if not failed:
        return FaultOutcome("crash", f"{target.name} was never written ({res.exit_code}: {res.stderr[-200:]!r})")
    wrong = _clean_exit_2(res)
    if wrong is not None:
        return FaultOutcome("crash", wrong)
    if fault.existing is None and target.exists():
        return FaultOutcome("target destroyed", f"{target} appeared after a failed write")
    if fault.existing is not None and (not target.is_file() or target.read_bytes() != fault.existing):
        return FaultOutcome("target destroyed", f"{target} changed after a failed write")
    left = [p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")]
    if left:
        return FaultOutcome("temp left", f"{left} beside {target}")
    return FaultOutcome("ok")


_CHARTS: list[str] = []


def _chart_names(workdir: Path, runner: CliRunner | None) -> list[str]:
    """The chart files a clean sweep writes (run once per process)."""
    if not _CHARTS:
        charts = workdir / "clean-charts"
        res = (runner or CliRunner()).invoke(cli, ["sweep", str(workdir / "sweep.yaml"), "--executor", "sequential",
                                                   "-q", "-o", "csv", "--charts", str(charts)])
        assert res.exit_code == 0, res.output
        _CHARTS.extend(p.name for p in charts.iterdir())
        shutil.rmtree(charts)
    return _CHARTS


def _simulate(cache_dir: Path | None, runner: CliRunner | None) -> str:
    """``karpy simulate -o json`` on the bundled example (the AWS provider, whose catalogue the disk
    cache holds), the process memo cleared so the disk cache is read; with no cache if ``cache_dir`` is None."""
    catalog_module._MEMO.clear()
    env = {CACHE_DIR_ENV: str(cache_dir), NO_CACHE_ENV: None} if cache_dir else {NO_CACHE_ENV: "1"}
    with _env(**env):
        res = (runner or CliRunner()).invoke(cli, ["simulate", "-o", "json"], catch_exceptions=True)
    if res.exception is not None and not isinstance(res.exception, SystemExit) or res.exit_code not in (0, 3):
        raise AssertionError(f"exit {res.exit_code}: {res.exception!r} {res.stderr[-300:]!r}")
    return res.stdout


_REFERENCE: dict[str, Any] = {}


def check_cache_fault(fault: CacheFault, workdir: Path, runner: CliRunner | None = None) -> FaultOutcome:
    """Damage one entry of a filled cache in ``workdir``; the run's document must be the one with no
    cache, and the entry must be readable afterwards."""
    if not _REFERENCE:
        _REFERENCE["document"] = _simulate(None, runner)
        _REFERENCE["filled"] = filled = workdir.parent / f"{workdir.name}-filled"
        shutil.rmtree(filled, ignore_errors=True)
        _simulate(filled, runner)
    shutil.rmtree(workdir, ignore_errors=True)
    shutil.copytree(_REFERENCE["filled"], workdir)
    cache = CatalogCache(workdir / "catalog")
    kind, request = ENTRIES[fault.entry]
    path = cache.path(kind, "us-east-1", request)
    good = path.read_bytes()
    path.unlink()
    at = int(fault.at * len(good))
    if fault.damage == "bytes":
        path.write_bytes(good[:at] + fault.noise + good[at + len(fault.noise):])
    elif fault.damage == "bitflip":  # one bit of a bad sector
        i = min(at, len(good) - 1)
        path.write_bytes(good[:i] + bytes([good[i] ^ (1 << fault.noise[0] % 8)]) + good[i + 1:])
    elif fault.damage == "truncate":
        path.write_bytes(good[:at])
    elif fault.damage == "empty":  # the right key, an empty answer
        path.write_bytes(encode_entry(cache.key(kind, "us-east-1", request), cache._digest(kind, "us-east-1", request),
                                      1, {}))
    elif fault.damage == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    try:
        document = _simulate(workdir, runner)
    except AssertionError as err:
        return FaultOutcome("crash", str(err))
    if document != _REFERENCE["document"]:
        return FaultOutcome("crash", f"a different document with a damaged {kind} entry ({fault.damage})")
    if cache.load(kind, "us-east-1", request) is None:
        return FaultOutcome("crash", f"the damaged {kind} entry ({fault.damage}) was not repaired")
    return FaultOutcome("ok")


#: a sweep long enough to be interrupted (37 cells: one design on every bundled us-east-1 table)
SIGNAL_SWEEP = SWEEP.replace("    gte8: [", "    # gte8: [").replace("prices: [2026-07-20]", "prices: all")
#: how soon after the (first) SIGINT the sweep must have exited
SIGNAL_STOP_SECONDS = 30


def _first_cell(proc: subprocess.Popen[bytes], timeout: float = 240) -> bytes | None:
    """stderr up to the progress line that reports a finished cell (not a tty: one line per report),
    or None when the sweep ended or did not get there in ``timeout`` seconds."""
    assert proc.stderr is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stderr, selectors.EVENT_READ)
    seen = b""
    deadline = time.monotonic() + timeout
    while b"] 0/" in seen or b" cells" not in seen:
        if time.monotonic() > deadline or proc.poll() is not None:
            return None
        if sel.select(timeout=1):
            seen += os.read(proc.stderr.fileno(), 4096)
    return seen


def check_signal(fault: SignalFault, workdir: Path) -> FaultOutcome:
    """Interrupt a process-pool sweep in ``workdir`` (emptied first) as ``fault`` says."""
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    (workdir / "sweep.yaml").write_text(SIGNAL_SWEEP, encoding="utf-8")
    earlier = "an earlier, complete file\n"
    (workdir / "rows.csv").write_text(earlier)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "karpy", "sweep", "sweep.yaml", "--executor", "process",
                             "--workers", "2", "--csv", "rows.csv", "--jsonl", "rows.jsonl"], cwd=workdir, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=sigint_default)
    try:
        seen = _first_cell(proc)
        if seen is None:
            proc.kill()
            return FaultOutcome("crash", f"no cell finished (exit {proc.poll()})")
        time.sleep(fault.after)
        workers = [int(c) for c in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()] \
            if Path(f"/proc/{proc.pid}").exists() else []
        if proc.poll() is not None:
            return FaultOutcome("ok", "the sweep ended before the signal")
        for n in range(2 if fault.twice else 1):
            time.sleep(0.05 * n)
            (os.killpg if fault.to_group else os.kill)(proc.pid, signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=SIGNAL_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            return FaultOutcome("crash", f"still running {SIGNAL_STOP_SECONDS}s after the signal")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    stderr = (seen + err).decode(errors="replace")
    lines = [line for line in stderr.splitlines() if line.startswith("karpy: interrupted")]
    if proc.returncode != 130 or len(lines) != 1 or "Traceback" in stderr:
        return FaultOutcome("crash", f"exit {proc.returncode}: {stderr[-300:]!r}")
    if (workdir / "rows.csv").read_text() != earlier or (workdir / "rows.jsonl").exists():
        return FaultOutcome("target destroyed", "a complete row file was written by an interrupted sweep")
    if lines[0].startswith("karpy: interrupted again"):
        return FaultOutcome("ok")  # the second SIGINT came before the finished rows were written: at once, as asked
    rows = list(csv.DictReader((workdir / "rows.csv.partial").read_text().splitlines()))
    jsonl = [json.loads(line) for line in (workdir / "rows.jsonl.partial").read_text().splitlines()]
    if len(rows) != len(jsonl) or any(r["status"] != "ok" for r in rows):
        return FaultOutcome("crash", f"partial rows: {len(rows)} CSV, {len(jsonl)} JSONL")
    if [p.name for p in workdir.iterdir() if p.name.endswith(".tmp")]:
        return FaultOutcome("temp left", "a temporary file beside the row files")
    alive = [pid for pid in workers if Path(f"/proc/{pid}").exists()
             and "zombie" not in Path(f"/proc/{pid}/status").read_text()]
    if alive:
        return FaultOutcome("crash", f"pool workers {alive} still running")
    return FaultOutcome("ok")
