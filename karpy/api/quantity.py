"""Exact Kubernetes resource quantities.

Mirrors ``k8s.io/apimachinery/pkg/api/resource.Quantity``: a signed decimal with an
SI (``k M G T P E``, ``m u n``), binary (``Ki Mi Gi Ti Pi Ei``) or exponent (``e3``)
suffix. Inside karpy every amount is an ``int`` of **nano-units** (1e-9 of the base
unit): exact, hashable and fast to add and compare in the scheduler's hot loops.
Like Kubernetes, a value finer than a nano-unit is rounded up (away from zero) to the
next nano-unit (``1e-10`` -> ``1n``).

``Quantity`` is the public value object (what the API models hold); ``parse_nanos`` and
``format_nanos`` are the fast paths the scheduling code uses.
"""

from __future__ import annotations

import math

import re
from decimal import Decimal, InvalidOperation, localcontext
from functools import total_ordering
from typing import Any, Literal

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

from karpy._errors import KarpyError

__all__ = [
    "NANO",
    "Quantity",
    "QuantityError",
    "format_nanos",
    "parse_nanos",
]

#: nano-units per base unit
NANO = 1_000_000_000

Format = Literal["DecimalSI", "BinarySI", "DecimalExponent"]

_DECIMAL_SUFFIXES: dict[str, int] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES: dict[str, int] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

_QUANTITY_RE = re.compile(
    r"^(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:(?P<bin>Ki|Mi|Gi|Ti|Pi|Ei)|(?P<exp>[eE][+-]?[0-9]+)|(?P<dec>[numkMGTPE]?))$"
)


class QuantityError(KarpyError, ValueError):
    """A string that is not a Kubernetes quantity."""


def _ceil_div_away(numerator: int, denominator: int) -> int:
    """Integer division rounding away from zero (Kubernetes rounds sub-nano values up)."""
    q, r = divmod(abs(numerator), denominator)
    if r:
        q += 1
    return q if numerator >= 0 else -q


def _parse(value: str) -> tuple[int, Format]:
    s = value.strip()
    m = _QUANTITY_RE.match(s)
    if not m:
        raise QuantityError(f"quantities must match the regular expression "
                            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' (got {value!r})")
    try:
        num = Decimal(m.group("num"))
    except InvalidOperation as e:  # pragma: no cover - the regex already guards this
        raise QuantityError(f"unparsable quantity {value!r}") from e
    # exact arithmetic: the default 28-digit context would round long values (e.g. "10Ei" in nanos)
    with localcontext() as ctx:
        ctx.prec = len(m.group("num")) + 200
        return _scale(num, m)


def _scale(num: Decimal, m: re.Match[str]) -> tuple[int, Format]:
    if m.group("bin"):
        scaled = num * (Decimal(2) ** _BINARY_SUFFIXES[m.group("bin")]) * NANO
        fmt: Format = "BinarySI"
    elif m.group("exp"):
        exp = int(m.group("exp")[1:])
        if abs(exp) > 64:
            raise QuantityError(f"quantity exponent out of range in {m.group(0)!r}")
        scaled = num.scaleb(exp + 9)
        fmt = "DecimalExponent"
    else:
        scaled = num.scaleb(_DECIMAL_SUFFIXES[m.group("dec") or ""] + 9)
        fmt = "DecimalSI"
    n, d = scaled.as_integer_ratio()
    return _ceil_div_away(n, d), fmt


def parse_nanos(value: str | int | float | Quantity) -> int:
    """Parse a quantity (``"100m"``, ``"2Gi"``, ``1.5``, ``"1e3"``) into integer nano-units."""
    if isinstance(value, Quantity):
        return value.nanos
    if isinstance(value, bool):
        raise QuantityError(f"a quantity cannot be a boolean (got {value!r})")
    if isinstance(value, int):
        return value * NANO
    if isinstance(value, float):
        if not math.isfinite(value):  # YAML .inf / .nan / 1.0e400
            raise QuantityError(f"a quantity must be a finite number (got {value!r})")
        n, d = Decimal(repr(value)).scaleb(9).as_integer_ratio()
        return _ceil_div_away(n, d)
    if isinstance(value, str):
        return _parse(value)[0]
    raise QuantityError(f"a quantity must be a string or a number (got {type(value).__name__})")


def _format_decimal(nanos: int) -> str:
    if nanos == 0:
        return "0"
    sign = "-" if nanos < 0 else ""
    mag = abs(nanos)
    # largest SI exponent (multiple of 3, from E down to n) that divides the value exactly
    for suffix, exp in (("E", 18), ("P", 15), ("T", 12), ("G", 9), ("M", 6), ("k", 3), ("", 0),
                        ("m", -3), ("u", -6), ("n", -9)):
        unit = 10 ** (exp + 9)
        if mag % unit == 0:
            return f"{sign}{mag // unit}{suffix}"
    raise AssertionError("unreachable: every nano value is a multiple of 1n")


def _format_binary(nanos: int) -> str:
    if nanos % NANO or abs(nanos) < 1024 * NANO:
        return _format_decimal(nanos)
    sign = "-" if nanos < 0 else ""
    whole = abs(nanos) // NANO
    for suffix, exp in (("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)):
        unit = 1 << exp
        if whole % unit == 0:
            return f"{sign}{whole // unit}{suffix}"
    return f"{sign}{whole}"


def _format_exponent(nanos: int) -> str:
    if nanos == 0 or nanos % NANO:
        return _format_decimal(nanos)
    sign = "-" if nanos < 0 else ""
    whole = abs(nanos) // NANO
    exp = 0
    while whole % 1000 == 0:
        whole //= 1000
        exp += 3
    return f"{sign}{whole}e{exp}" if exp else f"{sign}{whole}"


def format_nanos(nanos: int, fmt: Format = "DecimalSI") -> str:
    """Canonical string for ``nanos`` in the given format, as ``Quantity.String()`` prints it."""
    if fmt == "BinarySI":
        return _format_binary(nanos)
    if fmt == "DecimalExponent":
        return _format_exponent(nanos)
    return _format_decimal(nanos)


@total_ordering
class Quantity:
    """An exact, immutable Kubernetes quantity.

    >>> Quantity("1.5") == Quantity("1500m")
    True
    >>> str(Quantity("2048Mi"))
    '2Gi'
    """

    __slots__ = ("_nanos", "_format")

    def __init__(self, value: str | int | float | Quantity = 0, fmt: Format | None = None) -> None:
        if isinstance(value, Quantity):
            nanos, parsed_fmt = value._nanos, value._format
        elif isinstance(value, str):
            nanos, parsed_fmt = _parse(value)
        else:
            nanos, parsed_fmt = parse_nanos(value), "DecimalSI"
        self._nanos: int = nanos
        self._format: Format = fmt or parsed_fmt

    @classmethod
    def from_nanos(cls, nanos: int, fmt: Format = "DecimalSI") -> Quantity:
        q = cls.__new__(cls)
        q._nanos = nanos
        q._format = fmt
        return q

    @property
    def nanos(self) -> int:
        return self._nanos

    @property
    def format(self) -> Format:
        return self._format

    @property
    def milli_value(self) -> int:
        """The value in milli-units, rounded up as ``Quantity.MilliValue()`` does."""
        return _ceil_div_away(self._nanos, 1_000_000)

    @property
    def value(self) -> int:
        """The value in whole units, rounded up as ``Quantity.Value()`` does."""
        return _ceil_div_away(self._nanos, NANO)

    def as_decimal(self) -> Decimal:
        with localcontext() as ctx:
            ctx.prec = len(str(abs(self._nanos))) + 10
            return Decimal(self._nanos).scaleb(-9)

    def as_float(self) -> float:
        return self._nanos / NANO

    def is_zero(self) -> bool:
        return self._nanos == 0

    def __add__(self, other: Quantity) -> Quantity:
        return Quantity.from_nanos(self._nanos + Quantity(other)._nanos, self._format)

    def __sub__(self, other: Quantity) -> Quantity:
        return Quantity.from_nanos(self._nanos - Quantity(other)._nanos, self._format)

    def __neg__(self) -> Quantity:
        return Quantity.from_nanos(-self._nanos, self._format)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self._nanos == other._nanos
        if isinstance(other, (str, int, float)) and not isinstance(other, bool):
            try:
                return self._nanos == parse_nanos(other)
            except QuantityError:
                return False
        return NotImplemented

    def __lt__(self, other: Quantity | str | int | float) -> bool:
        return self._nanos < parse_nanos(other)

    def __hash__(self) -> int:
        return hash(self._nanos)

    def __str__(self) -> str:
        return format_nanos(self._nanos, self._format)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        def validate(value: Any) -> Quantity:
            if isinstance(value, Quantity):
                return value
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise ValueError(f"a quantity must be a string or a number, not {value!r}")
            try:
                return Quantity(value)
            except QuantityError as e:
                raise ValueError(str(e)) from None

        return core_schema.no_info_plain_validator_function(
            validate, serialization=core_schema.plain_serializer_function_ser_schema(str)
        )
