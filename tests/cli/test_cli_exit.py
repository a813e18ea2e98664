"""The ``karpy`` process ends without tearing its heap down (issue #13), and only when that is
safe: the standard streams flushed, ``atexit`` handlers run, no other thread alive."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from karpy.cli import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "karpy" / "examples" / "generation-preference.yaml")
#: the machine's environment, with the standard streams buffered as they are by default
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}, "PYTHONPATH": str(ROOT)}


def _probe(body: str) -> subprocess.CompletedProcess[str]:
    """Run ``karpy.cli.main()`` in a fresh interpreter with ``cli`` replaced by ``body``'s ``cli``.
    Python's own finalization (which tears the heap down) raises the audit event
    ``cpython.PyInterpreterState_Clear`` after the atexit handlers (``cpython._PySys_ClearAuditHooks``
    before 3.9); the probe prints a line when it sees it, so a process ended by ``os._exit`` never
    prints it."""
    code = ("import os, sys\n"
            "def _audit(event, args, write=os.write):\n"
            "    if event in ('cpython.PyInterpreterState_Clear', 'cpython._PySys_ClearAuditHooks'):\n"
            "        write(1, b'python finalized\\n')\n"
            "sys.addaudithook(_audit)\n"
            "import karpy.cli\n"
            f"{body}\n"
            "karpy.cli.cli = cli\n"
            "karpy.cli.main()\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=120)


def test_the_command_prints_the_whole_document_with_its_status() -> None:
    proc = subprocess.run([sys.executable, "-m", "karpy", "simulate", EXAMPLE, "-o", "json"],
                          capture_output=True, text=True, env=ENV, timeout=300)
    in_process = CliRunner().invoke(cli, ["simulate", EXAMPLE, "-o", "json"])
    assert proc.returncode == 0 == in_process.exit_code
    assert proc.stdout == in_process.stdout and proc.stdout.endswith("}\n")


def test_bad_input_keeps_its_line_and_exit_code(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, "
                   "resources: {requests: {cpu: lots}}}]}\n")
    proc = subprocess.run([sys.executable, "-m", "karpy", "simulate", str(bad)],
                          capture_output=True, text=True, env=ENV, timeout=300)
    assert proc.returncode == 2
    assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1 and "bad.yaml" in proc.stderr


def test_the_process_ends_without_tearing_the_heap_down_after_atexit_handlers_ran() -> None:
    proc = _probe("import atexit\n"
                  "def cli():\n"
                  "    atexit.register(lambda: print('atexit ran'))\n"
                  "    sys.stdout.write('unflushed output')\n"
                  "    sys.exit(3)\n")
    assert proc.returncode == 3
    assert proc.stdout == "unflushed outputatexit ran\n"  # not finalized: os._exit ended it


def test_a_thread_still_running_leaves_the_exit_to_python() -> None:
    proc = _probe("import threading, time\n"
                  "def cli():\n"
                  "    threading.Thread(target=lambda: (time.sleep(0.2), print('thread done'))).start()\n"
                  "    sys.exit(0)\n")
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[0] == "thread done"  # Python joined the thread before exiting
    assert "python finalized" in proc.stdout


def test_a_message_for_an_exit_code_is_printed_as_python_prints_it() -> None:
    proc = _probe("def cli():\n"
                  "    sys.exit('karpy: stopped')\n")
    assert proc.returncode == 1 and proc.stderr == "karpy: stopped\n"
    assert "python finalized" in proc.stdout


def _interrupted_at(setup: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the ``karpy`` entry point (karpy.__main__.run, as the console script does) in a fresh
    interpreter after ``setup``, which arranges for a KeyboardInterrupt (what Ctrl-C raises)."""
    code = f"import sys\nsys.argv = ['karpy', *{list(args)!r}]\n{setup}\nfrom karpy.__main__ import run\nrun()\n"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=300)


def test_ctrl_c_while_the_command_line_is_imported_is_one_line_and_exit_130() -> None:
    proc = _interrupted_at("import builtins\n"
                           "_import = builtins.__import__\n"
                           "def _ctrl_c(name, *a, **k):\n"
                           "    if name == 'click':\n"
                           "        raise KeyboardInterrupt\n"
                           "    return _import(name, *a, **k)\n"
                           "builtins.__import__ = _ctrl_c\n", "simulate", EXAMPLE)
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "", "karpy: interrupted\n")


def test_ctrl_c_during_a_run_is_one_line_and_exit_130_not_clicks_aborted_and_1() -> None:
    # exit 1 means a failed sweep cell (docs/contract.md); click's own answer to Ctrl-C is "Aborted!" and 1
    proc = _interrupted_at("import karpy.simulator\n"
                           "def _ctrl_c(*a, **k):\n"
                           "    raise KeyboardInterrupt\n"
                           "karpy.simulator.simulate = _ctrl_c\n", "simulate", EXAMPLE, "-o", "json")
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "", "karpy: interrupted\n")


def test_ctrl_c_really_sent_to_the_process_is_answered_the_same(tmp_path: Path) -> None:
    import signal
    import time

    # SIGINT's default disposition in the child: a suite started in the background (nohup, `&` in a
    # script) passes SIGINT ignored, and Python then never raises KeyboardInterrupt
    proc = subprocess.Popen([sys.executable, "-m", "karpy", "simulate", EXAMPLE, "--until", "8760h", "-o", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(1.0)  # importing or running: either answers the same
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert (proc.returncode, out, err) == (130, "", "karpy: interrupted\n")


def test_ctrl_c_through_executed_source_under_python_m_is_still_exit_130(tmp_path: Path) -> None:
    # CPython (3.11; Modules/main.c pymain_run_module, Py_RunMain): a KeyboardInterrupt raised inside
    # exec'd source -- a dataclass's methods being made while the command line is imported -- leaves its
    # "unhandled KeyboardInterrupt" flag set even when caught, and `python -m` then ends the process by
    # SIGINT (-2) instead of the 130 asked for. Seen once when a real Ctrl-C landed in an import under load.
    pkg = tmp_path / "ctrlc_karpy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "__main__.py").write_text(
        "import builtins, sys\n"
        f"sys.argv = ['karpy', 'simulate', {EXAMPLE!r}]\n"
        "_import = builtins.__import__\n"
        "def _ctrl_c(name, *a, **k):\n"
        "    if name == 'click':\n"
        "        exec('raise KeyboardInterrupt')\n"
        "    return _import(name, *a, **k)\n"
        "builtins.__import__ = _ctrl_c\n"
        "from karpy.__main__ import run\n"
        "run()\n")
    env = {**ENV, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    proc = subprocess.run([sys.executable, "-m", "ctrlc_karpy"], capture_output=True, text=True, env=env, timeout=300)
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "", "karpy: interrupted\n")
