"""Helpers for admission tests: build manifests by patching dotted paths of a base object."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from karpy.admission import AdmissionError, admit

DELETE = object()


def patched(base: dict[str, Any], patches: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of ``base`` with each ``"a.b.c": value`` set (``DELETE`` removes the key)."""
    out = copy.deepcopy(base)
    for dotted, value in patches.items():
        parts = dotted.split(".")
        cur = out
        for part in parts[:-1]:
            cur = cur.setdefault(part, {})
        if value is DELETE:
            cur.pop(parts[-1], None)
        else:
            cur[parts[-1]] = copy.deepcopy(value)
    return out


def errors_of(manifest: dict[str, Any], cls: Any = None) -> list[str]:
    """The API server's error lines for ``manifest`` (empty when admitted)."""
    try:
        admit(manifest, cls)
    except AdmissionError as e:
        return [str(x) for x in e.errors]
    return []


@pytest.fixture
def rejected():
    def check(manifest: dict[str, Any], cls: Any = None) -> list[str]:
        errs = errors_of(manifest, cls)
        assert errs, "expected the API server to reject the manifest"
        return errs
    return check
