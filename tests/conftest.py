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

import os
import shutil
import sys
import tempfile
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


#: the catalogue cache every run of the suite uses (in process and in the subprocesses it starts):
#: a temporary directory, so the suite never writes into the user's ``~/.cache/karpy``
_CACHE_DIR: str | None = None
_USER_CACHE_BEFORE: tuple[str, ...] | None = None


def _user_cache_listing() -> tuple[str, ...]:
    """Every path under the user's real karpy cache directory, with its size and mtime."""
    import platformdirs

    root = platformdirs.user_cache_dir("karpy")
    found = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            try:
                st = os.stat(path)
            except OSError:
                continue
            found.append(f"{path} {st.st_size} {st.st_mtime_ns}")
    return (root if os.path.isdir(root) else "", *sorted(found))


#: Hypothesis's default storage in the checkout, and whether it was there before the run
_CHECKOUT_HYPOTHESIS = os.path.join(os.getcwd(), ".hypothesis")
_CHECKOUT_HYPOTHESIS_BEFORE = os.path.exists(_CHECKOUT_HYPOTHESIS)


def pytest_sessionstart(session: pytest.Session) -> None:
    global _USER_CACHE_BEFORE
    _USER_CACHE_BEFORE = _user_cache_listing()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run if anything under the user's real ``~/.cache/karpy`` appeared or changed."""
    if _USER_CACHE_BEFORE is not None and _user_cache_listing() != _USER_CACHE_BEFORE:
        print("\nthe suite wrote into the user's karpy cache directory (it must use KARPY_CACHE_DIR)",
              file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if not _CHECKOUT_HYPOTHESIS_BEFORE and os.path.exists(_CHECKOUT_HYPOTHESIS):
        print(f"\nthe suite wrote {_CHECKOUT_HYPOTHESIS} (Hypothesis's storage belongs in the temporary directory)",
              file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if _CACHE_DIR is not None:
        shutil.rmtree(_CACHE_DIR, ignore_errors=True)


def pytest_configure(config: pytest.Config) -> None:
    global _CACHE_DIR
    if _CACHE_DIR is None:
        _CACHE_DIR = tempfile.mkdtemp(prefix="karpy-test-cache-")
        os.environ["KARPY_CACHE_DIR"] = _CACHE_DIR
        # Hypothesis keeps its example database and the constants it collects in ./.hypothesis (the
        # checkout) by default: here in the temporary directory, and no database kept across runs
        from hypothesis import settings
        from hypothesis.configuration import set_hypothesis_home_dir

        set_hypothesis_home_dir(os.path.join(_CACHE_DIR, "hypothesis"))
        settings.register_profile("karpy-suite", database=None)
        settings.load_profile("karpy-suite")

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
