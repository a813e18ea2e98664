"""``python -m karpy`` and the ``karpy`` command: :func:`karpy.cli.main`, with a Ctrl-C that
arrives while the command line is still being imported answered as one in a run is (one line, exit
130, no traceback)."""

import atexit
import os
import sys


def _exit_interrupted() -> None:
    """Exit 130 as the process's last act: ``atexit`` handlers run, the streams flushed, then
    ``os._exit``. Raising SystemExit is not enough under ``python -m``: a KeyboardInterrupt that went
    through exec'd source (a dataclass being made during an import) leaves CPython's "unhandled
    KeyboardInterrupt" flag set, and Py_RunMain then ends the process by SIGINT instead."""
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        os._exit(120)  # what Python's exit returns when flushing a standard stream fails
    os._exit(130)


def run() -> None:
    try:
        from karpy.cli import main
    except KeyboardInterrupt:
        sys.stderr.write("karpy: interrupted\n")
        _exit_interrupted()
    main()


if __name__ == "__main__":
    run()
