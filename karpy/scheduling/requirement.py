"""Requirement: the allowed values of one label key.

Mirrors pkg/scheduling/requirement.go. The allowed set is
``(complement ? U - values : values) ∩ {integers in [gte, lte]}`` when a bound exists (non-integers
never satisfy a bound). Treat instances as immutable values; every operation returns a new object.

This sits in the scheduler's innermost loop: plain ``__slots__`` objects, frozensets, no pydantic,
and the boolean ``has_intersection`` never builds sets or strings.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from karpy.scheduling.labels import (
    NORMALIZED_LABELS,
    OP_DOES_NOT_EXIST,
    OP_EXISTS,
    OP_GT,
    OP_GTE,
    OP_IN,
    OP_LT,
    OP_LTE,
    OP_NOT_IN,
    go_list,
)

MAX_INT64 = (1 << 63) - 1
MIN_INT64 = -(1 << 63)
#: Go's math.MaxInt on the 64-bit platforms Karpenter runs on.
MAX_INT = MAX_INT64

_EMPTY: frozenset[str] = frozenset()
_INT_RE = re.compile(r"[+-]?[0-9]+")
_int_match = _INT_RE.fullmatch
_normalized_get = NORMALIZED_LABELS.get


def _atoi_lenient(s: str) -> int:
    """Go ``v, _ := strconv.Atoi(s)``: syntax error -> 0, out of range -> clamped."""
    if not _int_match(s):
        return 0
    v = int(s)
    if v > MAX_INT64:
        return MAX_INT64
    if v < MIN_INT64:
        return MIN_INT64
    return v


def _wrap64(v: int) -> int:
    """Two's-complement int64 wrap-around (Go ``value--`` on MinInt)."""
    return ((v + (1 << 63)) % (1 << 64)) - (1 << 63)


def within_bounds(value: str, gte: int | None, lte: int | None) -> bool:
    """Mirrors requirement.go withinBounds: with any bound, only int64 integers qualify."""
    if gte is None and lte is None:
        return True
    if not _int_match(value):
        return False
    v = int(value)
    if v > MAX_INT64 or v < MIN_INT64:  # strconv.Atoi range error
        return False
    if gte is not None and v < gte:
        return False
    if lte is not None and v > lte:
        return False
    return True


def _max_opt(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return a if a > b else b


def _min_opt(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return a if a < b else b


def _natural_key(value: str) -> tuple[Any, ...]:
    return tuple((0, int(p), p) if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", value) if p != "")


def natural_sorted(values: Iterable[str]) -> list[str]:
    """Values in natural order for people to read: ``4 16 32 48 64`` (not ``16 32 4 48 64``);
    digit runs compare as numbers. Karpenter's own strings and NodeClaim requirements keep Go's
    ``sets.List`` order; this is for display."""
    return sorted(values, key=_natural_key)


class Requirement:
    """One key's requirement. Mirrors requirement.go Requirement / NewRequirementWithFlexibility.

    ``Requirement(key, operator, values=(), min_values=None)``: the key is normalised (beta
    aliases), ``Gt N`` becomes ``gte=N+1`` (``Gt MaxInt`` becomes ``DoesNotExist`` without
    minValues), ``Lt N`` becomes ``lte=N-1``; ``Gte``/``Lte`` set the bound directly. Bound values
    are parsed like Go's ``strconv.Atoi`` with the error ignored (they are pre-validated upstream).
    Upstream's value normalisation map (``NormalizedLabelValues``) is empty in core and omitted.
    """

    __slots__ = ("key", "complement", "values", "gte", "lte", "min_values", "_hash")

    key: str
    complement: bool
    values: frozenset[str]
    gte: int | None
    lte: int | None
    min_values: int | None

    def __init__(self, key: str, operator: str, values: Iterable[str] = (), min_values: int | None = None) -> None:
        key = _normalized_get(key, key)
        if isinstance(values, str):  # guard against Requirement(k, "In", "a") meaning ("a",)
            values = (values,)
        self.key = key
        self.min_values = min_values
        self.gte = None
        self.lte = None
        self._hash: int | None = None
        if operator == OP_IN:
            self.complement = False
            self.values = frozenset(values)
            return
        self.values = _EMPTY
        self.complement = True
        if operator == OP_DOES_NOT_EXIST:
            self.complement = False
        elif operator == OP_NOT_IN:
            self.values = frozenset(values)
        elif operator == OP_GT:
            v = _atoi_lenient(_first(values))
            if v == MAX_INT:
                # Gt MaxInt matches nothing (NewRequirement: minValues is dropped)
                self.complement = False
                self.min_values = None
            else:
                self.gte = v + 1
        elif operator == OP_LT:
            self.lte = _wrap64(_atoi_lenient(_first(values)) - 1)
        elif operator == OP_GTE:
            self.gte = _atoi_lenient(_first(values))
        elif operator == OP_LTE:
            self.lte = _atoi_lenient(_first(values))
        # Exists and unknown operators: complement of the empty set (as upstream).

    @classmethod
    def _make(
        cls,
        key: str,
        complement: bool,
        values: frozenset[str],
        gte: int | None = None,
        lte: int | None = None,
        min_values: int | None = None,
    ) -> Requirement:
        """Build from raw fields (no normalisation, no validation)."""
        r = object.__new__(cls)
        r.key = key
        r.complement = complement
        r.values = values
        r.gte = gte
        r.lte = lte
        r.min_values = min_values
        r._hash = None
        return r

    # --- accessors ---------------------------------------------------------------------------
    @property
    def operator(self) -> str:
        """Mirrors requirement.go Operator: bounded complements report ``Exists``."""
        if self.complement:
            return OP_NOT_IN if self.values else OP_EXISTS
        return OP_IN if self.values else OP_DOES_NOT_EXIST

    def len(self) -> int:
        """Mirrors requirement.go Len: ``MaxInt64 - |values|`` for complements."""
        if self.complement:
            return MAX_INT64 - len(self.values)
        return len(self.values)

    def __len__(self) -> int:
        return self.len()

    def __bool__(self) -> bool:
        # A requirement object is always truthy (do not let __len__ == 0 make DoesNotExist falsy).
        return True

    def sorted_values(self) -> list[str]:
        """The raw value set, sorted (Go ``sets.List``). For complements these are the exclusions."""
        return sorted(self.values)

    def has(self, value: str) -> bool:
        """Mirrors requirement.go Has: membership (or non-exclusion) and within bounds."""
        if self.complement:
            if value in self.values:
                return False
        elif value not in self.values:
            return False
        if self.gte is None and self.lte is None:
            return True
        return within_bounds(value, self.gte, self.lte)

    def any(self) -> str:
        """Mirrors requirement.go Any, made deterministic.

        Upstream returns a random member for ``In`` and a random integer in
        ``[gte or 0, lte+1 or MaxInt64)`` for ``NotIn``/``Exists``. Our rule: ``In`` -> the smallest
        value in sorted order; complements -> the smallest integer >= ``gte`` (or 0) and <= ``lte``
        that is not excluded. When no bound-free start exists (only ``lte < 0``; upstream panics in
        ``rand.Intn``) we walk down from ``lte``. If every candidate is excluded, return "".
        ``DoesNotExist`` -> "".
        """
        if not self.complement:
            return min(self.values) if self.values else ""
        gte, lte, excluded = self.gte, self.lte, self.values
        if gte is None and lte is not None and lte < 0:
            v = lte
            while v >= MIN_INT64:
                s = str(v)
                if s not in excluded:
                    return s
                v -= 1
            return ""
        v = 0 if gte is None else gte
        hi = MAX_INT64 - 1 if lte is None else lte
        while v <= hi:
            s = str(v)
            if s not in excluded:
                return s
            v += 1
        return ""

    # --- algebra -----------------------------------------------------------------------------
    def intersection(self, other: Requirement) -> Requirement:
        """Mirrors requirement.go Intersection (minValues = max of both, key from ``self``)."""
        a_c = self.complement
        b_c = other.complement
        mv = self.min_values
        omv = other.min_values
        if mv is None or (omv is not None and omv > mv):
            mv = omv
        sg, og, sl, ol = self.gte, other.gte, self.lte, other.lte
        if sg is None and og is None and sl is None and ol is None:
            # fast path: no bounds anywhere
            if a_c:
                if b_c:
                    return Requirement._make(self.key, True, self.values | other.values, None, None, mv)
                return Requirement._make(self.key, False, other.values - self.values, None, None, mv)
            if b_c:
                return Requirement._make(self.key, False, self.values - other.values, None, None, mv)
            return Requirement._make(self.key, False, self.values & other.values, None, None, mv)
        gte = _max_opt(sg, og)
        lte = _min_opt(sl, ol)
        if gte is not None and lte is not None and gte > lte:
            return Requirement._make(self.key, False, _EMPTY, None, None, mv)
        if a_c:
            values = (self.values | other.values) if b_c else (other.values - self.values)
        elif b_c:
            values = self.values - other.values
        else:
            values = self.values & other.values
        if values:
            values = frozenset(v for v in values if within_bounds(v, gte, lte))
        if not (a_c and b_c):
            # Remove boundaries for concrete sets
            return Requirement._make(self.key, False, values, None, None, mv)
        return Requirement._make(self.key, True, values, gte, lte, mv)

    def has_intersection(self, other: Requirement) -> bool:
        """Mirrors requirement.go HasIntersection (allocation-free boolean).

        Note: two complements always "intersect" unless the bounds cross, even if the
        exclusions empty the bounded range.
        """
        sg, og, sl, ol = self.gte, other.gte, self.lte, other.lte
        if sg is None and og is None and sl is None and ol is None:
            # fast path: no bounds anywhere (set operations run in C, no allocation)
            if self.complement:
                if other.complement:
                    return True
                return not other.values.issubset(self.values)
            if other.complement:
                return not self.values.issubset(other.values)
            return not self.values.isdisjoint(other.values)
        gte = _max_opt(sg, og)
        lte = _min_opt(sl, ol)
        if gte is not None and lte is not None and gte > lte:
            return False
        a_c = self.complement
        b_c = other.complement
        if a_c and b_c:
            return True
        if a_c:
            excl = self.values
            for v in other.values:
                if v not in excl and within_bounds(v, gte, lte):
                    return True
            return False
        if b_c:
            excl = other.values
            for v in self.values:
                if v not in excl and within_bounds(v, gte, lte):
                    return True
            return False
        large = other.values
        for v in self.values:
            if v in large and within_bounds(v, gte, lte):
                return True
        return False

    # --- presentation ------------------------------------------------------------------------
    def __str__(self) -> str:
        """Mirrors requirement.go String (values sorted, >5 values -> first 5 + "and N others")."""
        return self.format()

    def format(self, natural: bool = False) -> str:
        """:meth:`__str__`; ``natural=True`` orders the values for people (:func:`natural_sorted`:
        ``4 16 32``) instead of Go's string order (``16 32 4``), as explain output does."""
        op = self.operator
        if op == OP_EXISTS or op == OP_DOES_NOT_EXIST:
            s = f"{self.key} {op}"
        else:
            vals: list[str] = natural_sorted(self.values) if natural else sorted(self.values)
            n = len(vals)
            if n > 5:
                vals = vals[:5] + [f"and {n - 5} others"]
            s = f"{self.key} {op} {go_list(vals)}"
        if self.gte is not None:
            s += f" >={self.gte}"
        if self.lte is not None:
            s += f" <={self.lte}"
        if self.min_values is not None:
            s += f" minValues {self.min_values}"
        return s

    def __repr__(self) -> str:
        return f"Requirement({self!s})"

    def node_selector_fields(self) -> tuple[str, str, list[str], int | None]:
        """``(key, operator, values, min_values)`` of requirement.go NodeSelectorRequirement."""
        if self.gte is not None:
            return self.key, OP_GTE, [str(self.gte)], self.min_values
        if self.lte is not None:
            return self.key, OP_LTE, [str(self.lte)], self.min_values
        if self.complement:
            if self.values:
                return self.key, OP_NOT_IN, sorted(self.values), self.min_values
            return self.key, OP_EXISTS, [], self.min_values
        if self.values:
            return self.key, OP_IN, sorted(self.values), self.min_values
        return self.key, OP_DOES_NOT_EXIST, [], self.min_values

    def bounded_node_selector_fields(self) -> list[tuple[str, str, list[str], int | None]]:
        """Mirrors requirement.go BoundedNodeSelectorRequirements (both bounds set): Gte then Lte."""
        return [
            (self.key, OP_GTE, [str(self.gte)], self.min_values),
            (self.key, OP_LTE, [str(self.lte)], self.min_values),
        ]

    def to_node_selector_requirement(self) -> Any:
        """Mirrors requirement.go NodeSelectorRequirement -> ``karpy.api.pod.NodeSelectorRequirement``.

        Gte wins over Lte when both bounds exist; ``Requirements.node_selector_requirements``
        emits both.
        """
        return make_node_selector_requirement(*self.node_selector_fields())

    # --- value semantics ---------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Requirement):
            return NotImplemented
        return (
            self.key == other.key
            and self.complement == other.complement
            and self.gte == other.gte
            and self.lte == other.lte
            and self.min_values == other.min_values
            and self.values == other.values
        )

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash((self.key, self.complement, self.values, self.gte, self.lte, self.min_values))
            self._hash = h
        return h

    def __copy__(self) -> Requirement:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Requirement:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (Requirement._make, (self.key, self.complement, self.values, self.gte, self.lte, self.min_values))


def _first(values: Iterable[str]) -> str:
    for v in values:
        return v
    # Go would index values[0] and panic; pre-validation makes this unreachable upstream.
    return ""


def make_node_selector_requirement(key: str, operator: str, values: list[str], min_values: int | None) -> Any:
    """Build a ``karpy.api.pod.NodeSelectorRequirement`` without re-validating it (our output is
    canonical). Imported lazily so that the API package may import scheduling."""
    from karpy.api.pod import NodeSelectorRequirement  # noqa: PLC0415

    return NodeSelectorRequirement.model_construct(key=key, operator=operator, values=values, min_values=min_values)
