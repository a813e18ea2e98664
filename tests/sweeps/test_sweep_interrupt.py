"""Ctrl-C on ``karpy sweep --executor process`` (issue 35), with a real subprocess and real signals:
one SIGINT stops promptly and cleanly (queued cells cancelled, workers ended), a second stops at
once, and the finished rows are kept in ``<file>.partial`` (never over a complete file). Bounded:
every wait has a timeout."""

from __future__ import annotations

import csv
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COOKBOOK = ROOT / "examples" / "generation-preference"
SWEEP = f"""apiVersion: karpy.io/v1alpha1
kind: Sweep
metadata: {{name: ctrlc}}
spec:
  designs:
    one-pool: [{COOKBOOK}/01-one-nodepool, {COOKBOOK}/common/workload.yaml]
  shared: [{COOKBOOK}/common/ec2nodeclass.yaml]
  prices: all
"""

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def sigint_default() -> None:
    """In the child: SIGINT's default disposition. A suite started in the background (``&`` in a
    script, a CI wrapper) passes SIGINT on ignored, and karpy then rightly leaves it ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(tmp_path: Path, *args: str) -> subprocess.Popen[bytes]:
    (tmp_path / "sweep.yaml").write_text(SWEEP)
    (tmp_path / "rows.csv").write_text("an earlier, complete file\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "karpy", "sweep", "sweep.yaml", "--executor", "process",
                             "--workers", "2", "--csv", "rows.csv", "--jsonl", "rows.jsonl", *args],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, preexec_fn=sigint_default)


def _wait_for_first_cell(proc: subprocess.Popen[bytes], timeout: float = 240) -> bytes:
    """Read stderr until the progress line says a cell finished (not a tty: one line per report)."""
    assert proc.stderr is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stderr, selectors.EVENT_READ)
    seen = b""
    deadline = time.monotonic() + timeout
    while b"] 0/" in seen or b" cells" not in seen:
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            pytest.fail(f"no cell finished in {timeout}s: {seen.decode()[-500:]}")
        if sel.select(timeout=1):
            chunk = os.read(proc.stderr.fileno(), 4096)
            seen += chunk
    return seen


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _started(pid: int) -> str | None:
    """The process's start time (/proc/PID/stat field 22), None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _ended(pid: int, started: str | None, within: float = 5.0) -> bool:
    """Whether the process ``pid`` that started at ``started`` is gone (or a zombie) within
    ``within`` seconds: a SIGKILLed worker on a busy machine may not have run to its end yet when
    its parent has exited (the parent sends SIGKILL and does not wait)."""
    deadline = time.monotonic() + within
    while True:
        if _started(pid) != started:  # gone, or the pid taken by another process
            return True
        try:
            if "zombie" in Path(f"/proc/{pid}/status").read_text():
                return True
        except OSError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)


def _finish(proc: subprocess.Popen[bytes], seen: bytes, timeout: float) -> tuple[int, str, float]:
    start = time.monotonic()
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"the sweep did not stop within {timeout}s of the signal")
    return proc.returncode, (seen + err).decode(), time.monotonic() - start


def _check_partial(tmp_path: Path, stderr: str) -> None:
    lines = [line for line in stderr.splitlines() if line.startswith("karpy: interrupted")]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    assert "rows.csv.partial" in lines[0] and "rows.jsonl.partial" in lines[0]
    assert (tmp_path / "rows.csv").read_text() == "an earlier, complete file\n"
    rows = list(csv.DictReader((tmp_path / "rows.csv.partial").read_text().splitlines()))
    jsonl = [json.loads(line) for line in (tmp_path / "rows.jsonl.partial").read_text().splitlines()]
    assert 1 <= len(rows) < 37 and len(jsonl) == len(rows)
    assert all(r["status"] == "ok" for r in rows)
    assert not (tmp_path / "rows.jsonl").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("to_group", [True, False], ids=["ctrl-c-in-a-terminal", "sigint-to-main-only"])
def test_one_sigint_stops_promptly_and_keeps_the_finished_rows(tmp_path: Path, to_group: bool) -> None:
    proc = _start(tmp_path)
    seen = _wait_for_first_cell(proc)
    workers = {pid: _started(pid) for pid in _children(proc.pid)}
    (os.killpg if to_group else os.kill)(proc.pid, signal.SIGINT)
    code, stderr, took = _finish(proc, seen, timeout=60)
    assert code == 130, stderr
    assert took < 30  # not every remaining cell: they were cancelled
    _check_partial(tmp_path, stderr)
    for pid, started in workers.items():  # the pool's workers are gone too
        assert _ended(pid, started), Path(f"/proc/{pid}/status").read_text()


def test_a_second_sigint_stops_at_once(tmp_path: Path) -> None:
    proc = _start(tmp_path)
    seen = _wait_for_first_cell(proc)
    os.killpg(proc.pid, signal.SIGINT)
    os.killpg(proc.pid, signal.SIGINT)
    code, stderr, took = _finish(proc, seen, timeout=30)
    assert code == 130, stderr
    assert "Traceback" not in stderr
    assert (tmp_path / "rows.csv").read_text() == "an earlier, complete file\n"


def test_a_lost_dask_scheduler_is_said_once_and_keeps_the_finished_rows(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    import shutil
    import socket
    dask = shutil.which("dask") or str(Path(sys.executable).with_name("dask"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env, "start_new_session": True}
    scheduler = subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                                 **quiet)  # type: ignore[call-overload]
    worker = None
    try:
        worker = subprocess.Popen([dask, "worker", address, "--nworkers", "1", "--nthreads", "1", "--no-dashboard"],
                                  **quiet)  # type: ignore[call-overload]
        (tmp_path / "sweep.yaml").write_text(SWEEP)
        (tmp_path / "rows.csv").write_text("an earlier, complete file\n")
        proc = subprocess.Popen([sys.executable, "-m", "karpy", "sweep", "sweep.yaml", "--executor", "dask",
                                 "--scheduler", address, "--csv", "rows.csv", "--jsonl", "rows.jsonl"],
                                cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True, preexec_fn=sigint_default)
        seen = _wait_for_first_cell(proc)
        os.killpg(scheduler.pid, signal.SIGKILL)
        code, stderr, _ = _finish(proc, seen, timeout=120)
    finally:
        for p in (scheduler, worker):
            if p is not None and p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=30)
    assert code == 1, stderr
    assert "Traceback" not in stderr and "distributed" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.startswith("karpy: ")]
    assert len(lines) == 1 and lines[0].startswith("karpy: lost the Dask scheduler"), stderr
    assert "rows.csv.partial" in lines[0]
    assert (tmp_path / "rows.csv").read_text() == "an earlier, complete file\n"
    rows = list(csv.DictReader((tmp_path / "rows.csv.partial").read_text().splitlines()))
    assert 1 <= len(rows) < 37 and all(r["status"] == "ok" for r in rows)


_RACE = """
import multiprocessing, signal, sys, time
from concurrent.futures import ProcessPoolExecutor
from karpy.sweeps import executors
pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork"), initializer=executors._ignore_sigint)
running = [pool.submit(time.sleep, 300) for _ in range(4)]
while len(multiprocessing.active_children()) < 2:
    time.sleep(0.05)
signal.signal(signal.SIGINT, executors._exit_now)
print("ready", flush=True)
for _ in range(3000):  # (short sleeps: a signal landing just before one long sleep began is handled when it ends)
    time.sleep(0.1)
"""


def test_a_second_sigint_before_the_pool_is_stopped_ends_its_workers_too(tmp_path: Path) -> None:
    """The race CI hit: the second Ctrl-C lands after the first swapped the handler but before the
    first had terminated the workers. They ignore SIGINT; left alive they held the pipes for minutes."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", _RACE], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=sigint_default)
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"ready\n"
    workers = {pid: _started(pid) for pid in _children(proc.pid)}
    assert len(workers) >= 2
    os.kill(proc.pid, signal.SIGINT)
    code, stderr, took = _finish(proc, b"", timeout=30)
    assert code == 130 and "stopping at once" in stderr, stderr
    assert took < 10
    for pid, started in workers.items():
        assert _ended(pid, started), Path(f"/proc/{pid}/status").read_text()
