"""``python -m karpy`` and the ``karpy`` command: :func:`karpy.cli.main`, with a Ctrl-C that
arrives while the command line is still being imported answered as one in a run is (one line, exit
130, no traceback)."""

import sys


def run() -> None:
    try:
        from karpy.cli import main
    except KeyboardInterrupt:
        sys.stderr.write("karpy: interrupted\n")
        raise SystemExit(130) from None
    main()


if __name__ == "__main__":
    run()
