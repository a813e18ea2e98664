"""Griffe extensions for the docs build: each module's ``__all__`` as Python computes it, and the
docstrings' reStructuredText roles as Markdown.

karpy's package roots build ``__all__`` from their lazy-export tables (``__all__ = sorted(_EXPORTS)``,
see ``karpy/_exports.py``), which griffe's static reader cannot evaluate. This extension imports each
package root (they are light: their names resolve lazily), and each module whose ``__all__`` griffe
could not read, from this checkout, and hands griffe the list, so the API reference renders exactly
the public names. ``__main__`` modules are never imported.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path
from typing import Any

import griffe

#: the checkout these docs describe (the parent of docs/), imported ahead of any installed karpy
ROOT = str(Path(__file__).resolve().parent.parent)


#: ``:func:`name```, ``:class:`~pkg.mod.Name``` ... -- Sphinx roles the docstrings use
_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|exc|obj|const):`(~?)([^`]+)`")
#: a paragraph ending in reStructuredText's literal-block marker ``::``
_LITERAL_MARKER = re.compile(r"(?<=\S)::$", re.MULTILINE)


def markdown_docstring(text: str) -> str:
    """``text`` with its Sphinx roles as code spans (``~`` keeps the last dotted part, as Sphinx
    shows it) and ``word::`` as ``word:`` (the indented block that follows is Markdown code)."""
    text = _ROLE.sub(lambda m: f"`{m.group(2).rsplit('.', 1)[-1] if m.group(1) else m.group(2)}`", text)
    return _LITERAL_MARKER.sub(":", text)


class RuntimeExports(griffe.Extension):
    """Set ``Module.exports`` from the imported module's ``__all__``; docstrings as Markdown."""

    def on_module(self, *, mod: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        self.on_object(obj=mod, loader=loader)
        static = mod.exports
        unreadable = "__all__" in mod.members and (static is None or not all(isinstance(n, str) for n in static))
        if mod.name == "__main__" or not (mod.is_init_module or unreadable):
            return
        if sys.path[:1] != [ROOT]:
            sys.path.insert(0, ROOT)
        names = getattr(importlib.import_module(mod.path), "__all__", None)
        if names is not None:
            mod.exports = [str(name) for name in names]

    def on_object(self, *, obj: griffe.Object, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_docstring(obj.docstring.value)
