"""Fixtures shared by the AWS provider's tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture
def made() -> Iterator[list[Any]]:
    """A list a test appends the providers it builds to; each is closed after the test."""
    out: list[Any] = []
    yield out
    for p in out:
        p.close()
