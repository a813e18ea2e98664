"""Property tests for the requirement algebra (pkg/scheduling/requirement.go, requirements.go).

Semantics checked against a brute-force model over a small universe of values: a Requirement is the
set of values ``v`` with ``has(v)``.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from karpy.scheduling.requirement import MAX_INT, Requirement
from karpy.scheduling.requirements import Requirements

VALUES = ["A", "B", "x", "-1", "0", "1", "2", "5", "9", "10", "12"]
UNIVERSE = VALUES + ["3", "4", "6", "7", "8", "11", "100", "Z", "01"]


@st.composite
def requirements_st(draw: st.DrawFn, key: str = "key") -> Requirement:
    op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"]))
    mv = draw(st.none() | st.integers(1, 3))
    if op in ("In", "NotIn"):
        vals = draw(st.lists(st.sampled_from(VALUES), min_size=1 if op == "In" else 0, max_size=4))
        return Requirement(key, op, vals, mv)
    if op in ("Gt", "Lt", "Gte", "Lte"):
        return Requirement(key, op, [str(draw(st.integers(0, 11)))], mv)
    return Requirement(key, op, (), mv)


@st.composite
def derived_st(draw: st.DrawFn) -> Requirement:
    """A requirement possibly produced by intersections (complements with bounds and exclusions)."""
    r = draw(requirements_st())
    for _ in range(draw(st.integers(0, 2))):
        r = r.intersection(draw(requirements_st()))
    return r


def allowed(r: Requirement) -> frozenset[str]:
    return frozenset(v for v in UNIVERSE if r.has(v))


@settings(max_examples=300, deadline=None)
@given(derived_st(), derived_st())
def test_intersection_commutative(a: Requirement, b: Requirement) -> None:
    assert a.intersection(b) == b.intersection(a)


@settings(max_examples=300, deadline=None)
@given(derived_st())
def test_intersection_idempotent(a: Requirement) -> None:
    assert a.intersection(a) == a


@settings(max_examples=300, deadline=None)
@given(derived_st(), derived_st())
def test_intersection_is_set_intersection(a: Requirement, b: Requirement) -> None:
    assert allowed(a.intersection(b)) == allowed(a) & allowed(b)
    mv = [m for m in (a.min_values, b.min_values) if m is not None]
    assert a.intersection(b).min_values == (max(mv) if mv else None)


@settings(max_examples=300, deadline=None)
@given(derived_st(), derived_st(), derived_st())
def test_intersection_associative(a: Requirement, b: Requirement, c: Requirement) -> None:
    assert allowed(a.intersection(b).intersection(c)) == allowed(a.intersection(b.intersection(c)))


@settings(max_examples=300, deadline=None)
@given(derived_st(), derived_st())
def test_has_intersection_agrees_with_intersection(a: Requirement, b: Requirement) -> None:
    got = a.has_intersection(b)
    assert got == b.has_intersection(a)
    i = a.intersection(b)
    if a.complement and b.complement:
        # upstream: both complements "intersect" unless the bounds cross (-> DoesNotExist)
        assert got == i.complement
    else:
        # concrete result: the values are exactly the common allowed values
        assert got == bool(i.values)
        assert got == bool(allowed(a) & allowed(b))


@settings(max_examples=200, deadline=None)
@given(st.integers(-(2**40), 2**40))
def test_gt_is_gte_plus_one_and_lt_is_lte_minus_one(n: int) -> None:
    assert Requirement("k", "Gt", [str(n)]) == Requirement("k", "Gte", [str(n + 1)])
    assert Requirement("k", "Lt", [str(n)]) == Requirement("k", "Lte", [str(n - 1)])
    assert Requirement("k", "Gt", [str(MAX_INT)]) == Requirement("k", "DoesNotExist")


@settings(max_examples=300, deadline=None)
@given(derived_st())
def test_operator_and_len_consistent(a: Requirement) -> None:
    op = a.operator
    if a.complement:
        assert op == ("NotIn" if a.values else "Exists")
    else:
        assert op == ("In" if a.values else "DoesNotExist")
        assert a.gte is None and a.lte is None  # concrete sets carry no bounds
        assert len(a) == len(allowed(a) & a.values)
    v = a.any()
    if v != "":
        assert a.has(v)
    elif not a.complement:
        assert not a.values


def _reqs(draw: st.DrawFn) -> Requirements:
    keys = draw(st.lists(st.sampled_from(["a", "b", "c", "topology.kubernetes.io/zone"]), max_size=4))
    r = Requirements()
    for k in keys:
        r.add(draw(requirements_st(k)))
    return r


reqs_st = st.composite(lambda draw: _reqs(draw))


@settings(max_examples=300, deadline=None)
@given(reqs_st(), reqs_st(), st.booleans())
def test_is_compatible_matches_compatible(a: Requirements, b: Requirements, allow: bool) -> None:
    allow_undefined = frozenset({"topology.kubernetes.io/zone"}) if allow else frozenset()
    err = a.compatible(b, allow_undefined)
    assert (err is None) == a.is_compatible(b, allow_undefined)
    assert (a.intersects(b) is None) == a._intersects_ok(b)


@settings(max_examples=300, deadline=None)
@given(reqs_st(), reqs_st())
def test_compatible_definition(a: Requirements, b: Requirements) -> None:
    # requirements.go Compatible: undefined custom keys only with NotIn/DoesNotExist, then Intersects
    undefined_ok = all(k in a or b[k].operator in ("NotIn", "DoesNotExist") for k in b)
    intersects_ok = all(
        a[k].has_intersection(b[k])
        or (b[k].operator in ("NotIn", "DoesNotExist") and a[k].operator in ("NotIn", "DoesNotExist"))
        for k in b
        if k in a
    )
    assert a.is_compatible(b) == (undefined_ok and intersects_ok)


@settings(max_examples=200, deadline=None)
@given(requirements_st())
def test_single_requirement_node_selector_round_trip(a: Requirement) -> None:
    key, op, values, mv = a.node_selector_fields()
    assert Requirement(key, op, values, mv) == a
