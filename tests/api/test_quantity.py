"""Property tests for karpy.api.quantity (exactness against Decimal)."""

from __future__ import annotations

from decimal import ROUND_UP, Decimal, localcontext

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from karpy.api.quantity import NANO, Quantity, QuantityError, format_nanos, parse_nanos

SI = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
BIN = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

nanos = st.integers(min_value=-(10**30), max_value=10**30)
#: no example database: tests must not write into the checkout
NO_DB = settings(database=None, deadline=None)

formats = st.sampled_from(["DecimalSI", "BinarySI", "DecimalExponent"])


@st.composite
def quantity_strings(draw: st.DrawFn) -> tuple[str, Decimal]:
    """A quantity string and its exact value (in base units) as a Decimal."""
    sign = draw(st.sampled_from(["", "-", "+"]))
    whole = draw(st.integers(min_value=0, max_value=10**12))
    frac = draw(st.one_of(st.just(""), st.integers(min_value=0, max_value=10**6).map(str)))
    num = f"{whole}.{frac}" if frac else str(whole)
    kind = draw(st.sampled_from(["si", "bin", "exp"]))
    if kind == "si":
        suffix = draw(st.sampled_from(sorted(SI)))
        factor = Decimal(10) ** SI[suffix]
    elif kind == "bin":
        suffix = draw(st.sampled_from(sorted(BIN)))
        factor = Decimal(2) ** BIN[suffix]
    else:
        exp = draw(st.integers(min_value=-12, max_value=12))
        suffix = f"e{exp}"
        factor = Decimal(10) ** exp
    with localcontext() as ctx:
        ctx.prec = 200
        value = Decimal(num) * factor
        if sign == "-":
            value = -value  # unary minus rounds to the context precision: keep it inside
    return f"{sign}{num}{suffix}", value


def _expected_nanos(value: Decimal) -> int:
    """Exact nano-units, rounding sub-nano amounts away from zero (as Kubernetes does)."""
    with localcontext() as ctx:
        ctx.prec = 200
        return int((value * NANO).to_integral_value(rounding=ROUND_UP))


@NO_DB
@given(quantity_strings())
@example(("-86736.20894Ei", Decimal("-100000040514998651864943.16544")))  # once failed: 28-digit rounding
def test_parse_is_exact(case: tuple[str, Decimal]) -> None:
    text, value = case
    assert parse_nanos(text) == _expected_nanos(value)


@NO_DB
@given(nanos, formats)
def test_format_parse_round_trip(n: int, fmt: str) -> None:
    assert parse_nanos(format_nanos(n, fmt)) == n  # type: ignore[arg-type]


def test_long_values_are_exact() -> None:
    # regression: the default 28-digit Decimal context rounded values this long
    assert parse_nanos("10000000000000000000000000001n") == 10**28 + 1
    assert parse_nanos("10Ei") == 10 * 2**60 * NANO
    assert Quantity("10000000000000000000000000001n").as_decimal() == Decimal("10000000000000000000.000000001")


@NO_DB
@given(quantity_strings())
def test_str_round_trip_keeps_value_and_is_canonical(case: tuple[str, Decimal]) -> None:
    q = Quantity(case[0])
    again = Quantity(str(q))
    assert again == q
    assert str(again) == str(q)


@NO_DB
@given(nanos, nanos)
def test_add_sub_exact(a: int, b: int) -> None:
    qa, qb = Quantity.from_nanos(a), Quantity.from_nanos(b)
    assert (qa + qb).nanos == a + b
    assert (qa - qb).nanos == a - b
    with localcontext() as ctx:
        ctx.prec = 200
        assert (qa + qb).as_decimal() == qa.as_decimal() + qb.as_decimal()
    assert (qa + qb - qb) == qa


@NO_DB
@given(quantity_strings(), quantity_strings())
def test_ordering_consistent_with_decimal(x: tuple[str, Decimal], y: tuple[str, Decimal]) -> None:
    qa, qb = Quantity(x[0]), Quantity(y[0])
    na, nb = _expected_nanos(x[1]), _expected_nanos(y[1])
    assert (qa < qb) == (na < nb)
    assert (qa == qb) == (na == nb)
    assert (qa <= qb) == (na <= nb)
    assert sorted([qa, qb]) == sorted([qa, qb], key=lambda q: q.as_decimal())


@NO_DB
@given(nanos)
def test_equal_quantities_hash_equal(n: int) -> None:
    a = Quantity.from_nanos(n, "DecimalSI")
    b = Quantity.from_nanos(n, "BinarySI")
    assert a == b and hash(a) == hash(b)


@pytest.mark.parametrize(("text", "expected"), [
    ("100m", 100_000_000), ("1", NANO), ("1.5", 1_500_000_000), ("1Ki", 1024 * NANO), ("2Gi", 2 * 2**30 * NANO),
    ("1e3", 1000 * NANO), ("1E", 10**18 * NANO), ("1e-10", 1), ("-1e-10", -1), ("0", 0), (".5", NANO // 2),
])
def test_known_values(text: str, expected: int) -> None:
    assert parse_nanos(text) == expected


@pytest.mark.parametrize(("text", "canonical"), [("2048Mi", "2Gi"), ("1500m", "1500m"), ("1000m", "1"),
                                                 ("1e3", "1e3"), ("1000", "1k"), ("0.5Gi", "512Mi")])
def test_canonical_format(text: str, canonical: str) -> None:
    assert str(Quantity(text)) == canonical


@pytest.mark.parametrize("bad", ["", "abc", "1.2.3", "1Qi", "Mi", "--1", "1 Gi", "1e"])
def test_unparsable(bad: str) -> None:
    with pytest.raises(QuantityError):
        parse_nanos(bad)


def test_bool_is_not_a_quantity() -> None:
    with pytest.raises(QuantityError):
        parse_nanos(True)
