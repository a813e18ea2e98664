"""pytest plugin of golden_json.py: writes the JSON of every Result a test creates to $KARPY_GOLDEN_DIR."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

_created: list[Any] = []


def pytest_configure(config: pytest.Config) -> None:
    from karpy.result import Result

    original = Result.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        _created.append(self)

    Result.__init__ = __init__  # type: ignore[method-assign]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Any:
    """Results created during this test's setup (fixtures) and call are written after its teardown."""
    yield
    out = Path(os.environ["KARPY_GOLDEN_DIR"])
    out.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", item.nodeid)[-180:]
    for i, result in enumerate(_created):
        try:
            text = result.to_json()
        except Exception as e:  # noqa: BLE001 -- a Result a test built by hand may not serialise
            text = f"unserialisable: {type(e).__name__}\n"
        (out / f"{stem}-{i}.json").write_text(text)
    _created.clear()
