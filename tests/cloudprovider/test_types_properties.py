"""Property tests for karpy.cloudprovider.types: OrderByPrice, Truncate, SatisfiesMinValues and the
offering-compatibility fast path (pkg/cloudprovider/types.go)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from karpy.cloudprovider.types import (
    MAX_FLOAT64,
    MIN_VALUES_POLICY_BEST_EFFORT,
    MIN_VALUES_POLICY_STRICT,
    InstanceType,
    InstanceTypes,
    MinValuesError,
    Offering,
    Offerings,
)
from karpy.scheduling.labels import CORE_WELL_KNOWN_LABELS, LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_ZONE
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

CTS = ["spot", "on-demand", "reserved"]
ZONES = ["z1", "z2", "z3"]
CUSTOM = "example.com/res"
FAMILY = "example.com/family"

prices = st.sampled_from([0.1, 0.5, 1.0, 1.0, 2.5, 3.0, 10.0])


@st.composite
def offerings(draw: st.DrawFn) -> Offering:
    reqs = Requirements(Requirement(LABEL_CAPACITY_TYPE, "In", [draw(st.sampled_from(CTS))]),
                        Requirement(LABEL_ZONE, "In", [draw(st.sampled_from(ZONES))]))
    extra = draw(st.sampled_from(["none", "dne", "in", "multi"]))
    if extra == "dne":
        reqs.add(Requirement(CUSTOM, "DoesNotExist"))
    elif extra == "in":
        reqs.add(Requirement(CUSTOM, "In", [draw(st.sampled_from(["a", "b"]))]))
    elif extra == "multi":
        reqs.add(Requirement(CUSTOM, "In", ["a", "b"]))
    return Offering(reqs, draw(prices), draw(st.booleans()))


@st.composite
def requirement_on(draw: st.DrawFn, key: str, values: list[str]) -> Requirement:
    op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]))
    vals = draw(st.lists(st.sampled_from(values), min_size=1 if op in ("In", "NotIn") else 0, max_size=3))
    return Requirement(key, op, vals if op in ("In", "NotIn") else ())


@st.composite
def claim_requirements(draw: st.DrawFn) -> Requirements:
    reqs = Requirements()
    for key, values in ((LABEL_CAPACITY_TYPE, CTS), (LABEL_ZONE, ZONES), (CUSTOM, ["a", "b", "c"])):
        if draw(st.booleans()):
            reqs.add(draw(requirement_on(key, values)))
    return reqs


@st.composite
def instance_types(draw: st.DrawFn) -> InstanceTypes:
    n = draw(st.integers(min_value=0, max_value=12))
    out = InstanceTypes()
    for i in range(n):
        family = draw(st.sampled_from(["f1", "f2", "f3", "f4"]))
        reqs = Requirements(Requirement(LABEL_INSTANCE_TYPE, "In", [f"it-{i}"]),
                            Requirement(FAMILY, "In", [family]))
        ofs = draw(st.lists(offerings(), min_size=0, max_size=5))
        out.append(InstanceType(f"it-{i}", reqs, Offerings(ofs), {"cpu": 1}))
    return out


def generic_key(it: InstanceType, reqs: Requirements, wk: frozenset[str]) -> float:
    """OrderByPrice's key computed with the algebra only (no fast path)."""
    best = MAX_FLOAT64
    for o in it.offerings:
        if o.available and reqs.is_compatible(o.requirements, wk) and o.price < best:
            best = o.price
    return best


well_knowns = st.sampled_from([CORE_WELL_KNOWN_LABELS, CORE_WELL_KNOWN_LABELS | {CUSTOM}])


@settings(max_examples=300, deadline=None)
@given(o=offerings(), reqs=claim_requirements(), wk=well_knowns)
def test_offering_fast_path_matches_algebra(o: Offering, reqs: Requirements, wk: frozenset[str]) -> None:
    assert o.is_compatible(reqs, wk) == reqs.is_compatible(o.requirements, wk)


@settings(max_examples=200, deadline=None)
@given(its=instance_types(), reqs=claim_requirements(), wk=well_knowns)
def test_order_by_price_non_decreasing_and_stable(its: InstanceTypes, reqs: Requirements, wk: frozenset[str]) -> None:
    original = list(its)
    position = {id(it): i for i, it in enumerate(original)}
    ordered = InstanceTypes(its).order_by_price(reqs, wk)
    assert sorted(map(id, ordered)) == sorted(map(id, original))
    keys = [generic_key(it, reqs, wk) for it in ordered]
    assert keys == sorted(keys)
    for a, b, ka, kb in zip(ordered, ordered[1:], keys, keys[1:]):
        if ka == kb:
            assert position[id(a)] < position[id(b)]  # ties keep catalogue order


@settings(max_examples=200, deadline=None)
@given(its=instance_types(), reqs=claim_requirements(), max_items=st.integers(min_value=0, max_value=14))
def test_truncate_is_prefix_of_price_order(its: InstanceTypes, reqs: Requirements, max_items: int) -> None:
    expected = list(InstanceTypes(its).order_by_price(reqs))
    out, err = InstanceTypes(its)._truncate(reqs, max_items)
    assert err is None  # no minValues in reqs
    assert list(InstanceTypes(its).truncate(reqs, max_items)) == list(out)
    assert [t.name for t in out] == [t.name for t in expected[:max_items]]


def brute_min_needed(its: list[InstanceType], reqs: Requirements) -> int | None:
    mins = {k: r.min_values for k, r in reqs.items() if r.min_values is not None}
    for n in range(1, len(its) + 1):
        if all(len(set().union(*(it.requirements.get(k).values for it in its[:n]))) >= mv
               for k, mv in mins.items()):
            return n
    return None


@settings(max_examples=200, deadline=None)
@given(its=instance_types(), fam_min=st.integers(min_value=0, max_value=5),
       it_min=st.one_of(st.none(), st.integers(min_value=1, max_value=6)))
def test_satisfies_min_values_semantics(its: InstanceTypes, fam_min: int, it_min: int | None) -> None:
    reqs = Requirements(Requirement(FAMILY, "In", ["f1", "f2", "f3", "f4"], min_values=fam_min))
    if it_min is not None:
        reqs.add(Requirement(LABEL_INSTANCE_TYPE, "Exists", min_values=it_min))
    n, unsat, err = its._satisfies_min_values(reqs)
    if err is None:
        assert its.satisfies_min_values(reqs) == n
    else:  # the public method raises the same error
        with pytest.raises(MinValuesError, match=re.escape(err)):
            its.satisfies_min_values(reqs)
    expected = brute_min_needed(list(its), reqs)
    if expected is not None:
        assert (n, unsat, err) == (expected, None, None)
    elif len(its) == 0:
        assert (n, unsat, err) == (0, None, None)
    else:
        assert n == len(its)
        assert unsat and err is not None
        assert err == ("minValues requirement is not met for label(s) (label(s)=["
                       + " ".join(sorted(unsat)) + "])")
        for k, count in unsat.items():
            assert count < reqs.get(k).min_values  # type: ignore[operator]


@settings(max_examples=150, deadline=None)
@given(its=instance_types(), fam_min=st.integers(min_value=1, max_value=4),
       max_items=st.integers(min_value=0, max_value=14))
def test_truncate_min_values_policy(its: InstanceTypes, fam_min: int, max_items: int) -> None:
    reqs = Requirements(Requirement(FAMILY, "In", ["f1", "f2", "f3", "f4"], min_values=fam_min))
    expected = list(InstanceTypes(its).order_by_price(reqs))
    cut = InstanceTypes(expected[:max_items])
    ok = cut._satisfies_min_values(reqs)[2] is None
    out, err = InstanceTypes(its)._truncate(reqs, max_items, MIN_VALUES_POLICY_STRICT)
    if ok:
        assert err is None and [t.name for t in out] == [t.name for t in cut]
    else:
        assert err is not None and err.startswith("validating minValues, minValues requirement is not met")
        assert [t.name for t in out] == [t.name for t in expected]  # the whole (price-ordered) list
    out_be, err_be = InstanceTypes(its)._truncate(reqs, max_items, MIN_VALUES_POLICY_BEST_EFFORT)
    assert err_be is None and [t.name for t in out_be] == [t.name for t in cut]
