"""Field errors as the API server prints them (k8s.io/apimachinery pkg/util/validation/field/errors.go).

``str(FieldError)`` is Go's ``(*field.Error).Error()``: ``<field>: <Type>[: <value>][: <detail>]``, e.g.
``spec.weight: Invalid value: 0: spec.weight in body should be greater than or equal to 1``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["OMIT", "FieldError", "go_value"]

#: ``field.OmitValueType{}``: the value is left out of the message (CEL rules on objects and arrays)
OMIT: Any = object()

_TYPE_TEXT = {
    "Required": "Required value",
    "Forbidden": "Forbidden",
    "TooLong": "Too long",
    "TooShort": "Too short",
    "Internal": "Internal error",
    "Invalid": "Invalid value",
    "TypeInvalid": "Invalid value",
    "NotSupported": "Unsupported value",
    "NotFound": "Not found",
    "Duplicate": "Duplicate value",
    "TooMany": "Too many",
    "TooFew": "Too few",
}
#: error types printed without the bad value (ErrorBody)
_NO_VALUE = frozenset({"Required", "Forbidden", "TooLong", "TooShort", "Internal"})
#: field.ErrorType values that make the API server skip CEL rules (strategy.go hasBlockingErr)
BLOCKING = frozenset({"NotSupported", "Required", "TooLong", "TooMany", "TypeInvalid"})


def go_value(value: Any) -> str:
    """A bad value as ErrorBody prints it: numbers/bools with ``%v``, strings with ``%q``, else JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _go_float(value) if isinstance(value, float) else str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _go_float(value: float) -> str:
    """``%v`` of a float64 (``%g`` with the shortest representation)."""
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    return text.replace("e+0", "e+").replace("e-0", "e-")


@dataclass(frozen=True)
class FieldError:
    """One ``field.Error``: ``type`` is the ErrorType without its ``FieldValue`` prefix (``"Decoding"``:
    a strict-decoding error such as ``duplicate field "spec.replicas"``, printed as its detail)."""

    type: str
    field: str
    value: Any = OMIT
    detail: str = ""
    #: where in the document (keys and indexes), when known: lets the loader find the YAML node
    loc: tuple[Any, ...] = ()

    @property
    def body(self) -> str:
        """``ErrorBody()``: the message without the field path."""
        if self.type == "Decoding":
            return self.detail  # a strict-decoding error: the text is the whole message
        text = _TYPE_TEXT.get(self.type, self.type)
        if self.type not in _NO_VALUE and self.value is not OMIT:
            text += f": {go_value(self.value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    @property
    def blocking(self) -> bool:
        return self.type in BLOCKING

    def __str__(self) -> str:
        return f"{self.field or '<nil>'}: {self.body}"
