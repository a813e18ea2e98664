"""Shared fixture of the CLI tests: run ``karpy ARGS...`` through click's runner.

Provider commands (``instance-types``, ``prices``) come from the real ``karpy.commands`` entry
points in pyproject.toml, as they do for users.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from click.testing import CliRunner, Result

from karpy.cli import cli


@pytest.fixture(scope="module")
def invoke() -> Callable[..., Result]:
    def run(*args: str) -> Result:
        result = CliRunner().invoke(cli, list(args))
        # bad input ends in SystemExit(2); any other exception is a crash the user would see
        assert not (result.exception and not isinstance(result.exception, SystemExit)), result.output
        return result

    return run
