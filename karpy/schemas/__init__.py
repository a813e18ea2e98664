"""The JSON Schema (draft 2020-12) of the document ``karpy simulate -o json`` prints.

The schema is generated from the types that build the document (:mod:`karpy.document`: the frozen
records behind ``Result.nodeclaims`` / ``pods`` / ``cost`` and the :class:`~karpy.document.Document`
TypedDict) by pydantic, and shipped as package data, ``document.schema.json`` beside this module
(``karpy schema`` prints it; :func:`schema` returns it). ``python -m karpy.schemas`` rewrites the
file after a change to :mod:`karpy.document`; a test fails while the shipped file and the types
disagree.

``SCHEMA_VERSION`` (also the schema's ``version`` and the tail of its ``$id``) is ``MAJOR.MINOR``:
MINOR grows when keys are added (old readers are unaffected: every object admits keys it does not
name), MAJOR when a key is removed, renamed or changes meaning or type. A test pins the schema's
fingerprint per version, so a schema change without a version change fails.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["SCHEMA_FILE", "SCHEMA_ID", "SCHEMA_VERSION", "generate", "schema", "schema_text", "write"]

SCHEMA_VERSION = "1.3"
SCHEMA_ID = f"https://karpy.dev/schemas/document/{SCHEMA_VERSION}/document.schema.json"
SCHEMA_FILE = "document.schema.json"
_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def generate() -> dict[str, Any]:
    """The schema, generated now from :class:`karpy.document.Document` (needs pydantic)."""
    from pydantic import TypeAdapter

    from karpy.document import Document

    body = TypeAdapter(Document).json_schema()
    return {"$schema": _DIALECT, "$id": SCHEMA_ID, "version": SCHEMA_VERSION, **body}


def _render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def schema_text() -> str:
    """The shipped schema file's text (what ``karpy schema`` prints)."""
    return resources.files(__name__).joinpath(SCHEMA_FILE).read_text(encoding="utf-8")


def schema() -> dict[str, Any]:
    """The document's JSON Schema, as shipped with the package (``karpy.schema()``)."""
    loaded: dict[str, Any] = json.loads(schema_text())
    return loaded


def write(path: Path | None = None) -> Path:
    """Regenerate the shipped file (``python -m karpy.schemas``)."""
    target = path or Path(__file__).with_name(SCHEMA_FILE)
    target.write_text(_render(generate()), encoding="utf-8")
    return target
