"""Suite-wide hook: every JSON document a test produces is validated against the published schema.

``Result.document_sections`` builds the document's sections for ``Result.to_document()``,
``Result.to_json()`` / ``write_json()``, ``karpy simulate -o json`` (streamed) / ``karpy explain -o
json`` (in-process through click's runner) and the ``runs`` of ``karpy compare``; the hook wraps it
once per session so each document is checked against ``karpy.schema()`` (the shipped file) when it
is built. A document that does not validate fails the test that built it,
naming the JSON path. tests/test_document_schema.py proves the hook is installed and that a broken
document fails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

_VALIDATOR: Any = None


def document_validator() -> Any:
    """The draft 2020-12 validator of the shipped schema (built once)."""
    global _VALIDATOR
    if _VALIDATOR is None:
        import jsonschema

        from karpy.schemas import schema

        loaded = schema()
        jsonschema.Draft202012Validator.check_schema(loaded)
        _VALIDATOR = jsonschema.Draft202012Validator(loaded)
    return _VALIDATOR


def validate_document(document: Any) -> None:
    """Raise AssertionError naming every place ``document`` breaks the schema."""
    errors = sorted(document_validator().iter_errors(document), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [f"  {e.json_path}: {e.message[:300]}" for e in errors[:10]]
        more = f"\n  ... {len(errors) - 10} more" if len(errors) > 10 else ""
        raise AssertionError("the document does not match karpy's JSON Schema (karpy/schemas/"
                             "document.schema.json):\n" + "\n".join(lines) + more)


@pytest.fixture(name="validate_document")
def validate_document_fixture() -> Callable[[Any], None]:
    """:func:`validate_document`, for tests that check a document by hand."""
    return validate_document


def pytest_configure(config: pytest.Config) -> None:
    from karpy.result import Result

    original: Callable[[Result], Iterator[tuple[str, Any]]] = Result.document_sections
    if getattr(original, "__validated__", False):
        return

    def document_sections(self: Result, streamed: bool = False) -> Iterator[tuple[str, Any]]:
        # validated whole; a streamed write gets the same sections as plain lists and dicts
        # (tests/report/test_document_stream.py exercises the streamed ones unwrapped)
        sections = list(original(self))
        validate_document(dict(sections))
        return iter(sections)

    document_sections.__validated__ = True  # type: ignore[attr-defined]
    document_sections.__wrapped__ = original  # type: ignore[attr-defined]
    document_sections.__doc__ = original.__doc__
    Result.document_sections = document_sections  # type: ignore[method-assign]
