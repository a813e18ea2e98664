"""Lazy package exports: a package root names its public API without importing it.

A package ``__init__`` lists ``__all__`` and a ``{name: submodule}`` map; :func:`lazy_exports`
returns the module-level ``__getattr__`` / ``__dir__`` (PEP 562) that import a submodule on first
use. So ``from karpy.scheduling import Requirement`` works, while importing one leaf module (or
``import karpy``) does not load the rest of the package and no import cycle can form.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str],
                 namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` exporting ``exports`` (name -> submodule, relative
    to ``package``; a leading ``.`` climbs a package, as a relative import does, for a name that
    moved and stays importable where it was). A resolved name is cached in ``namespace`` (the
    package's ``globals()``)."""

    def __getattr__(name: str) -> Any:
        submodule = exports.get(name)
        if submodule is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{submodule}", package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
