"""--no-cache on the CLI: nothing written to the catalogue cache; without it the cache fills.

(Here, not beside the cache's own tests: ``karpy simulate`` leaves its mocked EC2 running, which
later backends in the same module would share.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from awsprovider.ec2 import catalog as catalog_module
from awsprovider.ec2.catalogcache import CACHE_DIR_ENV, NO_CACHE_ENV


@pytest.fixture
def no_process_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalog_module, "_MEMO", {})


def _entries(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


@pytest.mark.parametrize("args", [["simulate", "-o", "json"], ["instance-types", "--limit", "1"]])
def test_cli_no_cache_writes_nothing_and_the_default_fills_the_cache(
        tmp_path: Path, no_process_memo: None, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    from karpy.cli import cli

    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    monkeypatch.delenv(NO_CACHE_ENV, raising=False)
    bypassed = CliRunner().invoke(cli, [*args, "--no-cache"])
    assert bypassed.exit_code == 0, bypassed.output
    assert _entries(tmp_path / "catalog") == []
    catalog_module._MEMO.clear()
    cached = CliRunner().invoke(cli, args)
    assert cached.exit_code == 0, cached.output
    assert len(_entries(tmp_path / "catalog")) == 2
    assert cached.stdout == bypassed.stdout  # stderr carries the wall-clock progress line


