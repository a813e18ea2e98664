"""Ports pkg/scheduling/requirement_test.go (Describe "Requirement").

The tables below mirror upstream's DescribeTable entries one-to-one (same order, upstream
variable names) so that they can be diffed against the Go file.
"""

from __future__ import annotations

from typing import Any

import pytest

from karpy.scheduling.labels import (
    LABEL_ARCH,
    LABEL_INSTANCE_TYPE,
    LABEL_OS,
    LABEL_REGION,
    LABEL_ZONE,
)
from karpy.scheduling.requirement import MAX_INT, MAX_INT64, Requirement, within_bounds
from karpy.scheduling.requirements import Requirements, pod_requirements


def raw(
    complement: bool,
    values: set[str],
    gte: int | None = None,
    lte: int | None = None,
    min_values: int | None = None,
) -> Requirement:
    """Upstream's ``&Requirement{Key: "key", ...}`` struct literal."""
    return Requirement._make("key", complement, frozenset(values), gte, lte, min_values)


def new(key: str, op: str, *values: str) -> Requirement:
    return Requirement(key, op, values)


def flex(key: str, op: str, min_values: int, *values: str) -> Requirement:
    """NewRequirementWithFlexibility."""
    return Requirement(key, op, values, min_values)


# Requirements created without minValues
exists = new("key", "Exists")
doesNotExist = new("key", "DoesNotExist")
inA = new("key", "In", "A")
inB = new("key", "In", "B")
inAB = new("key", "In", "A", "B")
notInA = new("key", "NotIn", "A")
in1 = new("key", "In", "1")
in9 = new("key", "In", "9")
in19 = new("key", "In", "1", "9")
notIn12 = new("key", "NotIn", "1", "2")
greaterThan1 = new("key", "Gt", "1")
greaterThan9 = new("key", "Gt", "9")
lessThan1 = new("key", "Lt", "1")
lessThan9 = new("key", "Lt", "9")

# Requirements created with minValues flexibility
existsOperatorWithFlexibility = flex("key", "Exists", 1)
doesNotExistOperatorWithFlexibility = flex("key", "DoesNotExist", 1)
inAOperatorWithFlexibility = flex("key", "In", 1, "A")
inBOperatorWithFlexibility = flex("key", "In", 1, "B")
inABOperatorWithFlexibility = flex("key", "In", 2, "A", "B")
notInAOperatorWithFlexibility = flex("key", "NotIn", 1, "A")
in1OperatorWithFlexibility = flex("key", "In", 1, "1")
in9OperatorWithFlexibility = flex("key", "In", 1, "9")
in19OperatorWithFlexibility = flex("key", "In", 2, "1", "9")
notIn12OperatorWithFlexibility = flex("key", "NotIn", 2, "1", "2")
greaterThan1OperatorWithFlexibility = flex("key", "Gt", 1, "1")
greaterThan9OperatorWithFlexibility = flex("key", "Gt", 1, "9")
lessThan1OperatorWithFlexibility = flex("key", "Lt", 1, "1")
lessThan9OperatorWithFlexibility = flex("key", "Lt", 1, "9")

# upstream: pkg/scheduling/requirement_test.go Describe("Requirement") Context("Intersect requirements")
# DescribeTable("should intersect two requirements without minValues")
INTERSECT_WITHOUT_MIN_VALUES = [
    (exists, exists, exists),
    (exists, doesNotExist, doesNotExist),
    (exists, inA, inA),
    (exists, inB, inB),
    (exists, inAB, inAB),
    (exists, notInA, notInA),
    (exists, in1, in1),
    (exists, in9, in9),
    (exists, in19, in19),
    (exists, notIn12, notIn12),
    (exists, greaterThan1, greaterThan1),
    (exists, greaterThan9, greaterThan9),
    (exists, lessThan1, lessThan1),
    (exists, lessThan9, lessThan9),
    (doesNotExist, exists, doesNotExist),
    (doesNotExist, doesNotExist, doesNotExist),
    (doesNotExist, inA, doesNotExist),
    (doesNotExist, inB, doesNotExist),
    (doesNotExist, inAB, doesNotExist),
    (doesNotExist, notInA, doesNotExist),
    (doesNotExist, in1, doesNotExist),
    (doesNotExist, in9, doesNotExist),
    (doesNotExist, in19, doesNotExist),
    (doesNotExist, notIn12, doesNotExist),
    (doesNotExist, greaterThan1, doesNotExist),
    (doesNotExist, greaterThan9, doesNotExist),
    (doesNotExist, lessThan1, doesNotExist),
    (doesNotExist, lessThan9, doesNotExist),
    (inA, exists, inA),
    (inA, doesNotExist, doesNotExist),
    (inA, inA, inA),
    (inA, inB, doesNotExist),
    (inA, inAB, inA),
    (inA, notInA, doesNotExist),
    (inA, in1, doesNotExist),
    (inA, in9, doesNotExist),
    (inA, in19, doesNotExist),
    (inA, notIn12, inA),
    (inA, greaterThan1, doesNotExist),
    (inA, greaterThan9, doesNotExist),
    (inA, lessThan1, doesNotExist),
    (inA, lessThan9, doesNotExist),
    (inB, exists, inB),
    (inB, doesNotExist, doesNotExist),
    (inB, inA, doesNotExist),
    (inB, inB, inB),
    (inB, inAB, inB),
    (inB, notInA, inB),
    (inB, in1, doesNotExist),
    (inB, in9, doesNotExist),
    (inB, in19, doesNotExist),
    (inB, notIn12, inB),
    (inB, greaterThan1, doesNotExist),
    (inB, greaterThan9, doesNotExist),
    (inB, lessThan1, doesNotExist),
    (inB, lessThan9, doesNotExist),
    (inAB, exists, inAB),
    (inAB, doesNotExist, doesNotExist),
    (inAB, inA, inA),
    (inAB, inB, inB),
    (inAB, inAB, inAB),
    (inAB, notInA, inB),
    (inAB, in1, doesNotExist),
    (inAB, in9, doesNotExist),
    (inAB, in19, doesNotExist),
    (inAB, notIn12, inAB),
    (inAB, greaterThan1, doesNotExist),
    (inAB, greaterThan9, doesNotExist),
    (inAB, lessThan1, doesNotExist),
    (inAB, lessThan9, doesNotExist),
    (notInA, exists, notInA),
    (notInA, doesNotExist, doesNotExist),
    (notInA, inA, doesNotExist),
    (notInA, inB, inB),
    (notInA, inAB, inB),
    (notInA, notInA, notInA),
    (notInA, in1, in1),
    (notInA, in9, in9),
    (notInA, in19, in19),
    (notInA, notIn12, raw(complement=True, values={"A", "1", "2"})),
    (notInA, greaterThan1, greaterThan1),
    (notInA, greaterThan9, greaterThan9),
    (notInA, lessThan1, lessThan1),
    (notInA, lessThan9, lessThan9),
    (in1, exists, in1),
    (in1, doesNotExist, doesNotExist),
    (in1, inA, doesNotExist),
    (in1, inB, doesNotExist),
    (in1, inAB, doesNotExist),
    (in1, notInA, in1),
    (in1, in1, in1),
    (in1, in9, doesNotExist),
    (in1, in19, in1),
    (in1, notIn12, doesNotExist),
    (in1, greaterThan1, doesNotExist),
    (in1, greaterThan9, doesNotExist),
    (in1, lessThan1, doesNotExist),
    (in1, lessThan9, in1),
    (in9, exists, in9),
    (in9, doesNotExist, doesNotExist),
    (in9, inA, doesNotExist),
    (in9, inB, doesNotExist),
    (in9, inAB, doesNotExist),
    (in9, notInA, in9),
    (in9, in1, doesNotExist),
    (in9, in9, in9),
    (in9, in19, in9),
    (in9, notIn12, in9),
    (in9, greaterThan1, in9),
    (in9, greaterThan9, doesNotExist),
    (in9, lessThan1, doesNotExist),
    (in9, lessThan9, doesNotExist),
    (in19, exists, in19),
    (in19, doesNotExist, doesNotExist),
    (in19, inA, doesNotExist),
    (in19, inB, doesNotExist),
    (in19, inAB, doesNotExist),
    (in19, notInA, in19),
    (in19, in1, in1),
    (in19, in9, in9),
    (in19, in19, in19),
    (in19, notIn12, in9),
    (in19, greaterThan1, in9),
    (in19, greaterThan9, doesNotExist),
    (in19, lessThan1, doesNotExist),
    (in19, lessThan9, in1),
    (notIn12, exists, notIn12),
    (notIn12, doesNotExist, doesNotExist),
    (notIn12, inA, inA),
    (notIn12, inB, inB),
    (notIn12, inAB, inAB),
    (notIn12, notInA, raw(complement=True, values={"A", "1", "2"})),
    (notIn12, in1, doesNotExist),
    (notIn12, in9, in9),
    (notIn12, in19, in9),
    (notIn12, notIn12, notIn12),
    (notIn12, greaterThan1, raw(complement=True, gte=greaterThan1.gte, values={"2"})),
    (notIn12, greaterThan9, raw(complement=True, gte=greaterThan9.gte, values=set())),
    (notIn12, lessThan1, raw(complement=True, lte=lessThan1.lte, values=set())),
    (notIn12, lessThan9, raw(complement=True, lte=lessThan9.lte, values={"1", "2"})),
    (greaterThan1, exists, greaterThan1),
    (greaterThan1, doesNotExist, doesNotExist),
    (greaterThan1, inA, doesNotExist),
    (greaterThan1, inB, doesNotExist),
    (greaterThan1, inAB, doesNotExist),
    (greaterThan1, notInA, greaterThan1),
    (greaterThan1, in1, doesNotExist),
    (greaterThan1, in9, in9),
    (greaterThan1, in19, in9),
    (greaterThan1, notIn12, raw(complement=True, gte=greaterThan1.gte, values={"2"})),
    (greaterThan1, greaterThan1, greaterThan1),
    (greaterThan1, greaterThan9, greaterThan9),
    (greaterThan1, lessThan1, doesNotExist),
    (greaterThan1, lessThan9, raw(complement=True, gte=greaterThan1.gte, lte=lessThan9.lte, values=set())),
    (greaterThan9, exists, greaterThan9),
    (greaterThan9, doesNotExist, doesNotExist),
    (greaterThan9, inA, doesNotExist),
    (greaterThan9, inB, doesNotExist),
    (greaterThan9, inAB, doesNotExist),
    (greaterThan9, notInA, greaterThan9),
    (greaterThan9, in1, doesNotExist),
    (greaterThan9, in9, doesNotExist),
    (greaterThan9, in19, doesNotExist),
    (greaterThan9, notIn12, greaterThan9),
    (greaterThan9, greaterThan1, greaterThan9),
    (greaterThan9, greaterThan9, greaterThan9),
    (greaterThan9, lessThan1, doesNotExist),
    (greaterThan9, lessThan9, doesNotExist),
    (lessThan1, exists, lessThan1),
    (lessThan1, doesNotExist, doesNotExist),
    (lessThan1, inA, doesNotExist),
    (lessThan1, inB, doesNotExist),
    (lessThan1, inAB, doesNotExist),
    (lessThan1, notInA, lessThan1),
    (lessThan1, in1, doesNotExist),
    (lessThan1, in9, doesNotExist),
    (lessThan1, in19, doesNotExist),
    (lessThan1, notIn12, lessThan1),
    (lessThan1, greaterThan1, doesNotExist),
    (lessThan1, greaterThan9, doesNotExist),
    (lessThan1, lessThan1, lessThan1),
    (lessThan1, lessThan9, lessThan1),
    (lessThan9, exists, lessThan9),
    (lessThan9, doesNotExist, doesNotExist),
    (lessThan9, inA, doesNotExist),
    (lessThan9, inB, doesNotExist),
    (lessThan9, inAB, doesNotExist),
    (lessThan9, notInA, lessThan9),
    (lessThan9, in1, in1),
    (lessThan9, in9, doesNotExist),
    (lessThan9, in19, in1),
    (lessThan9, notIn12, raw(complement=True, lte=lessThan9.lte, values={"1", "2"})),
    (lessThan9, greaterThan1, raw(complement=True, gte=greaterThan1.gte, lte=lessThan9.lte, values=set())),
    (lessThan9, greaterThan9, doesNotExist),
    (lessThan9, lessThan1, lessThan1),
    (lessThan9, lessThan9, lessThan9),
]

# upstream: pkg/scheduling/requirement_test.go Describe("Requirement") Context("Intersect requirements")
# DescribeTable("should intersect requirement with minValues with a requirement without")
INTERSECT_MIN_VALUES_WITH_WITHOUT = [
    (existsOperatorWithFlexibility, exists, existsOperatorWithFlexibility),
    (existsOperatorWithFlexibility, doesNotExist, doesNotExistOperatorWithFlexibility),
    (existsOperatorWithFlexibility, inA, inAOperatorWithFlexibility),
    (existsOperatorWithFlexibility, inB, inBOperatorWithFlexibility),
    (existsOperatorWithFlexibility, inAB, raw(complement=False, values={"A", "B"}, min_values=1)),
    (existsOperatorWithFlexibility, notInA, notInAOperatorWithFlexibility),
    (existsOperatorWithFlexibility, in1, in1OperatorWithFlexibility),
    (existsOperatorWithFlexibility, in9, in9OperatorWithFlexibility),
    (existsOperatorWithFlexibility, in19, raw(complement=False, values={"1", "9"}, min_values=1)),
    (existsOperatorWithFlexibility, notIn12, raw(complement=True, values={"1", "2"}, min_values=1)),
    (existsOperatorWithFlexibility, greaterThan1, greaterThan1OperatorWithFlexibility),
    (existsOperatorWithFlexibility, greaterThan9, greaterThan9OperatorWithFlexibility),
    (existsOperatorWithFlexibility, lessThan1, lessThan1OperatorWithFlexibility),
    (existsOperatorWithFlexibility, lessThan9, lessThan9OperatorWithFlexibility),
    (existsOperatorWithFlexibility, exists, existsOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, exists, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, doesNotExist, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, inA, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, inB, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, inAB, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, notInA, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, in1, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, in9, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, in19, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, notIn12, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, greaterThan1, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, greaterThan9, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, lessThan1, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, lessThan9, doesNotExistOperatorWithFlexibility),
    (inAOperatorWithFlexibility, exists, inAOperatorWithFlexibility),
    (inAOperatorWithFlexibility, doesNotExist, doesNotExistOperatorWithFlexibility),
    (inAOperatorWithFlexibility, inA, inAOperatorWithFlexibility),
    (inAOperatorWithFlexibility, inB, doesNotExistOperatorWithFlexibility),
    (inAOperatorWithFlexibility, inAB, inAOperatorWithFlexibility),
    (inAOperatorWithFlexibility, notInA, doesNotExistOperatorWithFlexibility),
    (inAOperatorWithFlexibility, in1, doesNotExistOperatorWithFlexibility),
    (inAOperatorWithFlexibility, in9, doesNotExistOperatorWithFlexibility),
    (inAOperatorWithFlexibility, in19, doesNotExistOperatorWithFlexibility),
    (inAOperatorWithFlexibility, notIn12, inAOperatorWithFlexibility),
    (inAOperatorWithFlexibility, greaterThan1, doesNotExistOperatorWithFlexibility),
    (inAOperatorWithFlexibility, greaterThan9, doesNotExistOperatorWithFlexibility),
    (inAOperatorWithFlexibility, lessThan1, doesNotExistOperatorWithFlexibility),
    (inAOperatorWithFlexibility, lessThan9, doesNotExistOperatorWithFlexibility),
    (inBOperatorWithFlexibility, exists, inBOperatorWithFlexibility),
    (inBOperatorWithFlexibility, doesNotExist, doesNotExistOperatorWithFlexibility),
    (inBOperatorWithFlexibility, inA, doesNotExistOperatorWithFlexibility),
    (inBOperatorWithFlexibility, inB, inBOperatorWithFlexibility),
    (inBOperatorWithFlexibility, inAB, inBOperatorWithFlexibility),
    (inBOperatorWithFlexibility, notInA, inBOperatorWithFlexibility),
    (inBOperatorWithFlexibility, in1, doesNotExistOperatorWithFlexibility),
    (inBOperatorWithFlexibility, in9, doesNotExistOperatorWithFlexibility),
    (inBOperatorWithFlexibility, in19, doesNotExistOperatorWithFlexibility),
    (inBOperatorWithFlexibility, notIn12, inBOperatorWithFlexibility),
    (inBOperatorWithFlexibility, greaterThan1, doesNotExistOperatorWithFlexibility),
    (inBOperatorWithFlexibility, greaterThan9, doesNotExistOperatorWithFlexibility),
    (inBOperatorWithFlexibility, lessThan1, doesNotExistOperatorWithFlexibility),
    (inBOperatorWithFlexibility, lessThan9, doesNotExistOperatorWithFlexibility),
    (inABOperatorWithFlexibility, exists, inABOperatorWithFlexibility),
    (inABOperatorWithFlexibility, doesNotExist, raw(complement=False, values=set(), min_values=2)),
    (inABOperatorWithFlexibility, inA, raw(complement=False, values={"A"}, min_values=2)),
    (inABOperatorWithFlexibility, inB, raw(complement=False, values={"B"}, min_values=2)),
    (inABOperatorWithFlexibility, inAB, inABOperatorWithFlexibility),
    (inABOperatorWithFlexibility, notInA, raw(complement=False, values={"B"}, min_values=2)),
    (inABOperatorWithFlexibility, in1, raw(complement=False, values=set(), min_values=2)),
    (inABOperatorWithFlexibility, in9, raw(complement=False, values=set(), min_values=2)),
    (inABOperatorWithFlexibility, in19, raw(complement=False, values=set(), min_values=2)),
    (inABOperatorWithFlexibility, notIn12, raw(complement=False, values={"A", "B"}, min_values=2)),
    (inABOperatorWithFlexibility, greaterThan1, raw(complement=False, values=set(), min_values=2)),
    (inABOperatorWithFlexibility, greaterThan9, raw(complement=False, values=set(), min_values=2)),
    (inABOperatorWithFlexibility, lessThan1, raw(complement=False, values=set(), min_values=2)),
    (inABOperatorWithFlexibility, lessThan9, raw(complement=False, values=set(), min_values=2)),
    (notInAOperatorWithFlexibility, exists, notInAOperatorWithFlexibility),
    (notInAOperatorWithFlexibility, doesNotExist, doesNotExistOperatorWithFlexibility),
    (notInAOperatorWithFlexibility, inA, doesNotExistOperatorWithFlexibility),
    (notInAOperatorWithFlexibility, inB, inBOperatorWithFlexibility),
    (notInAOperatorWithFlexibility, inAB, inBOperatorWithFlexibility),
    (notInAOperatorWithFlexibility, notInA, notInAOperatorWithFlexibility),
    (notInAOperatorWithFlexibility, in1, in1OperatorWithFlexibility),
    (notInAOperatorWithFlexibility, in9, in9OperatorWithFlexibility),
    (notInAOperatorWithFlexibility, in19, raw(complement=False, values={"1", "9"}, min_values=1)),
    (notInAOperatorWithFlexibility, notIn12, raw(complement=True, values={"A", "1", "2"}, min_values=1)),
    (notInAOperatorWithFlexibility, greaterThan1, greaterThan1OperatorWithFlexibility),
    (notInAOperatorWithFlexibility, greaterThan9, greaterThan9OperatorWithFlexibility),
    (notInAOperatorWithFlexibility, lessThan1, lessThan1OperatorWithFlexibility),
    (notInAOperatorWithFlexibility, lessThan9, lessThan9OperatorWithFlexibility),
    (in1OperatorWithFlexibility, exists, in1OperatorWithFlexibility),
    (in1OperatorWithFlexibility, doesNotExist, doesNotExistOperatorWithFlexibility),
    (in1OperatorWithFlexibility, inA, doesNotExistOperatorWithFlexibility),
    (in1OperatorWithFlexibility, inB, doesNotExistOperatorWithFlexibility),
    (in1OperatorWithFlexibility, inAB, doesNotExistOperatorWithFlexibility),
    (in1OperatorWithFlexibility, notInA, in1OperatorWithFlexibility),
    (in1OperatorWithFlexibility, in1, in1OperatorWithFlexibility),
    (in1OperatorWithFlexibility, in9, doesNotExistOperatorWithFlexibility),
    (in1OperatorWithFlexibility, in19, in1OperatorWithFlexibility),
    (in1OperatorWithFlexibility, notIn12, doesNotExistOperatorWithFlexibility),
    (in1OperatorWithFlexibility, greaterThan1, doesNotExistOperatorWithFlexibility),
    (in1OperatorWithFlexibility, greaterThan9, doesNotExistOperatorWithFlexibility),
    (in1OperatorWithFlexibility, lessThan1, doesNotExistOperatorWithFlexibility),
    (in1OperatorWithFlexibility, lessThan9, in1OperatorWithFlexibility),
    (in9OperatorWithFlexibility, exists, in9OperatorWithFlexibility),
    (in9OperatorWithFlexibility, doesNotExist, doesNotExistOperatorWithFlexibility),
    (in9OperatorWithFlexibility, inA, doesNotExistOperatorWithFlexibility),
    (in9OperatorWithFlexibility, inB, doesNotExistOperatorWithFlexibility),
    (in9OperatorWithFlexibility, inAB, doesNotExistOperatorWithFlexibility),
    (in9OperatorWithFlexibility, notInA, in9OperatorWithFlexibility),
    (in9OperatorWithFlexibility, in1, doesNotExistOperatorWithFlexibility),
    (in9OperatorWithFlexibility, in9, in9OperatorWithFlexibility),
    (in9OperatorWithFlexibility, in19, in9OperatorWithFlexibility),
    (in9OperatorWithFlexibility, notIn12, in9OperatorWithFlexibility),
    (in9OperatorWithFlexibility, greaterThan1, in9OperatorWithFlexibility),
    (in9OperatorWithFlexibility, greaterThan9, doesNotExistOperatorWithFlexibility),
    (in9OperatorWithFlexibility, lessThan1, doesNotExistOperatorWithFlexibility),
    (in9OperatorWithFlexibility, lessThan9, doesNotExistOperatorWithFlexibility),
    (in19OperatorWithFlexibility, exists, in19OperatorWithFlexibility),
    (in19OperatorWithFlexibility, doesNotExist, raw(complement=False, values=set(), min_values=2)),
    (in19OperatorWithFlexibility, inA, raw(complement=False, values=set(), min_values=2)),
    (in19OperatorWithFlexibility, inB, raw(complement=False, values=set(), min_values=2)),
    (in19OperatorWithFlexibility, inAB, raw(complement=False, values=set(), min_values=2)),
    (in19OperatorWithFlexibility, notInA, raw(complement=False, values={"1", "9"}, min_values=2)),
    (in19OperatorWithFlexibility, in1, raw(complement=False, values={"1"}, min_values=2)),
    (in19OperatorWithFlexibility, in9, raw(complement=False, values={"9"}, min_values=2)),
    (in19OperatorWithFlexibility, in19, in19OperatorWithFlexibility),
    (in19OperatorWithFlexibility, notIn12, raw(complement=False, values={"9"}, min_values=2)),
    (in19OperatorWithFlexibility, greaterThan1, raw(complement=False, values={"9"}, min_values=2)),
    (in19OperatorWithFlexibility, greaterThan9, raw(complement=False, values=set(), min_values=2)),
    (in19OperatorWithFlexibility, lessThan1, raw(complement=False, values=set(), min_values=2)),
    (in19OperatorWithFlexibility, lessThan9, raw(complement=False, values={"1"}, min_values=2)),
    (notIn12OperatorWithFlexibility, exists, notIn12OperatorWithFlexibility),
    (notIn12OperatorWithFlexibility, doesNotExist, raw(complement=False, values=set(), min_values=2)),
    (notIn12OperatorWithFlexibility, inA, raw(complement=False, values={"A"}, min_values=2)),
    (notIn12OperatorWithFlexibility, inB, raw(complement=False, values={"B"}, min_values=2)),
    (notIn12OperatorWithFlexibility, inAB, inABOperatorWithFlexibility),
    (notIn12OperatorWithFlexibility, notInA, raw(complement=True, values={"A", "1", "2"}, min_values=2)),
    (notIn12OperatorWithFlexibility, in1, raw(complement=False, values=set(), min_values=2)),
    (notIn12OperatorWithFlexibility, in9, raw(complement=False, values={"9"}, min_values=2)),
    (notIn12OperatorWithFlexibility, in19, raw(complement=False, values={"9"}, min_values=2)),
    (notIn12OperatorWithFlexibility, notIn12, notIn12OperatorWithFlexibility),
    (notIn12OperatorWithFlexibility, greaterThan1, raw(complement=True, gte=greaterThan1.gte, values={"2"}, min_values=2)),
    (notIn12OperatorWithFlexibility, greaterThan9, raw(complement=True, gte=greaterThan9.gte, values=set(), min_values=2)),
    (notIn12OperatorWithFlexibility, lessThan1, raw(complement=True, lte=lessThan1.lte, values=set(), min_values=2)),
    (notIn12OperatorWithFlexibility, lessThan9, raw(complement=True, lte=lessThan9.lte, values={"1", "2"}, min_values=2)),
    (greaterThan1OperatorWithFlexibility, exists, greaterThan1OperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, doesNotExist, doesNotExistOperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, inA, doesNotExistOperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, inB, doesNotExistOperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, inAB, doesNotExistOperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, notInA, greaterThan1OperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, in1, doesNotExistOperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, in9, in9OperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, in19, in9OperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, notIn12, raw(complement=True, gte=greaterThan1.gte, values={"2"}, min_values=1)),
    (greaterThan1OperatorWithFlexibility, greaterThan1, greaterThan1OperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, greaterThan9, greaterThan9OperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, lessThan1, doesNotExistOperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, lessThan9, raw(complement=True, gte=greaterThan1.gte, lte=lessThan9.lte, values=set(), min_values=1)),
    (greaterThan9OperatorWithFlexibility, exists, greaterThan9OperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, doesNotExist, doesNotExistOperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, inA, doesNotExistOperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, inB, doesNotExistOperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, inAB, doesNotExistOperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, notInA, greaterThan9OperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, in1, doesNotExistOperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, in9, doesNotExistOperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, in19, doesNotExistOperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, notIn12, greaterThan9OperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, greaterThan1, greaterThan9OperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, greaterThan9, greaterThan9OperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, lessThan1, doesNotExistOperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, lessThan9, doesNotExistOperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, exists, lessThan1OperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, doesNotExist, doesNotExistOperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, inA, doesNotExistOperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, inB, doesNotExistOperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, inAB, doesNotExistOperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, notInA, lessThan1OperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, in1, doesNotExistOperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, in9, doesNotExistOperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, in19, doesNotExistOperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, notIn12, lessThan1OperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, greaterThan1, doesNotExistOperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, greaterThan9, doesNotExistOperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, lessThan1, lessThan1OperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, lessThan9, lessThan1OperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, exists, lessThan9OperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, doesNotExist, doesNotExistOperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, inA, doesNotExistOperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, inB, doesNotExistOperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, inAB, doesNotExistOperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, notInA, lessThan9OperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, in1, in1OperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, in9, doesNotExistOperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, in19, in1OperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, notIn12, raw(complement=True, lte=lessThan9.lte, values={"1", "2"}, min_values=1)),
    (lessThan9OperatorWithFlexibility, greaterThan1, raw(complement=True, gte=greaterThan1.gte, lte=lessThan9.lte, values=set(), min_values=1)),
    (lessThan9OperatorWithFlexibility, greaterThan9, doesNotExistOperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, lessThan1, lessThan1OperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, lessThan9, lessThan9OperatorWithFlexibility),
]

# upstream: pkg/scheduling/requirement_test.go Describe("Requirement") Context("Intersect requirements")
# DescribeTable("should intersect two requirements with minValues")
INTERSECT_WITH_MIN_VALUES = [
    (existsOperatorWithFlexibility, existsOperatorWithFlexibility, existsOperatorWithFlexibility),
    (existsOperatorWithFlexibility, doesNotExistOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (existsOperatorWithFlexibility, inAOperatorWithFlexibility, inAOperatorWithFlexibility),
    (existsOperatorWithFlexibility, inBOperatorWithFlexibility, inBOperatorWithFlexibility),
    (existsOperatorWithFlexibility, inABOperatorWithFlexibility, raw(complement=False, values={"A", "B"}, min_values=2)),
    (existsOperatorWithFlexibility, notInAOperatorWithFlexibility, notInAOperatorWithFlexibility),
    (existsOperatorWithFlexibility, in1OperatorWithFlexibility, in1OperatorWithFlexibility),
    (existsOperatorWithFlexibility, in9OperatorWithFlexibility, in9OperatorWithFlexibility),
    (existsOperatorWithFlexibility, in19OperatorWithFlexibility, raw(complement=False, values={"1", "9"}, min_values=2)),
    (existsOperatorWithFlexibility, notIn12OperatorWithFlexibility, raw(complement=True, values={"1", "2"}, min_values=2)),
    (existsOperatorWithFlexibility, greaterThan1OperatorWithFlexibility, greaterThan1OperatorWithFlexibility),
    (existsOperatorWithFlexibility, greaterThan9OperatorWithFlexibility, greaterThan9OperatorWithFlexibility),
    (existsOperatorWithFlexibility, lessThan1OperatorWithFlexibility, lessThan1OperatorWithFlexibility),
    (existsOperatorWithFlexibility, lessThan9OperatorWithFlexibility, lessThan9OperatorWithFlexibility),
    (existsOperatorWithFlexibility, existsOperatorWithFlexibility, existsOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, existsOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, doesNotExistOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, inAOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, inBOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, inABOperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (doesNotExistOperatorWithFlexibility, notInAOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, in1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, in9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, in19OperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (doesNotExistOperatorWithFlexibility, notIn12OperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (doesNotExistOperatorWithFlexibility, greaterThan1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, greaterThan9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, lessThan1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (doesNotExistOperatorWithFlexibility, lessThan9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (inAOperatorWithFlexibility, existsOperatorWithFlexibility, inAOperatorWithFlexibility),
    (inAOperatorWithFlexibility, doesNotExistOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (inAOperatorWithFlexibility, inAOperatorWithFlexibility, inAOperatorWithFlexibility),
    (inAOperatorWithFlexibility, inBOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (inAOperatorWithFlexibility, inABOperatorWithFlexibility, raw(complement=False, values={"A"}, min_values=2)),
    (inAOperatorWithFlexibility, notInAOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (inAOperatorWithFlexibility, in1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (inAOperatorWithFlexibility, in9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (inAOperatorWithFlexibility, in19OperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (inAOperatorWithFlexibility, notIn12OperatorWithFlexibility, raw(complement=False, values={"A"}, min_values=2)),
    (inAOperatorWithFlexibility, greaterThan1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (inAOperatorWithFlexibility, greaterThan9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (inAOperatorWithFlexibility, lessThan1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (inAOperatorWithFlexibility, lessThan9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (inBOperatorWithFlexibility, existsOperatorWithFlexibility, inBOperatorWithFlexibility),
    (inBOperatorWithFlexibility, doesNotExistOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (inBOperatorWithFlexibility, inAOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (inBOperatorWithFlexibility, inBOperatorWithFlexibility, inBOperatorWithFlexibility),
    (inBOperatorWithFlexibility, inABOperatorWithFlexibility, raw(complement=False, values={"B"}, min_values=2)),
    (inBOperatorWithFlexibility, notInAOperatorWithFlexibility, inBOperatorWithFlexibility),
    (inBOperatorWithFlexibility, in1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (inBOperatorWithFlexibility, in9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (inBOperatorWithFlexibility, in19OperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (inBOperatorWithFlexibility, notIn12OperatorWithFlexibility, raw(complement=False, values={"B"}, min_values=2)),
    (inBOperatorWithFlexibility, greaterThan1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (inBOperatorWithFlexibility, greaterThan9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (inBOperatorWithFlexibility, lessThan1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (inBOperatorWithFlexibility, lessThan9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (inABOperatorWithFlexibility, existsOperatorWithFlexibility, inABOperatorWithFlexibility),
    (inABOperatorWithFlexibility, doesNotExistOperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (inABOperatorWithFlexibility, inAOperatorWithFlexibility, raw(complement=False, values={"A"}, min_values=2)),
    (inABOperatorWithFlexibility, inBOperatorWithFlexibility, raw(complement=False, values={"B"}, min_values=2)),
    (inABOperatorWithFlexibility, inABOperatorWithFlexibility, inABOperatorWithFlexibility),
    (inABOperatorWithFlexibility, notInAOperatorWithFlexibility, raw(complement=False, values={"B"}, min_values=2)),
    (inABOperatorWithFlexibility, in1OperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (inABOperatorWithFlexibility, in9OperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (inABOperatorWithFlexibility, in19OperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (inABOperatorWithFlexibility, notIn12OperatorWithFlexibility, raw(complement=False, values={"A", "B"}, min_values=2)),
    (inABOperatorWithFlexibility, greaterThan1OperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (inABOperatorWithFlexibility, greaterThan9OperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (inABOperatorWithFlexibility, lessThan1OperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (inABOperatorWithFlexibility, lessThan9OperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (notInAOperatorWithFlexibility, existsOperatorWithFlexibility, notInAOperatorWithFlexibility),
    (notInAOperatorWithFlexibility, doesNotExistOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (notInAOperatorWithFlexibility, inAOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (notInAOperatorWithFlexibility, inBOperatorWithFlexibility, inBOperatorWithFlexibility),
    (notInAOperatorWithFlexibility, inABOperatorWithFlexibility, raw(complement=False, values={"B"}, min_values=2)),
    (notInAOperatorWithFlexibility, notInAOperatorWithFlexibility, notInAOperatorWithFlexibility),
    (notInAOperatorWithFlexibility, in1OperatorWithFlexibility, in1OperatorWithFlexibility),
    (notInAOperatorWithFlexibility, in9OperatorWithFlexibility, in9OperatorWithFlexibility),
    (notInAOperatorWithFlexibility, in19OperatorWithFlexibility, raw(complement=False, values={"1", "9"}, min_values=2)),
    (notInAOperatorWithFlexibility, notIn12OperatorWithFlexibility, raw(complement=True, values={"A", "1", "2"}, min_values=2)),
    (notInAOperatorWithFlexibility, greaterThan1OperatorWithFlexibility, greaterThan1OperatorWithFlexibility),
    (notInAOperatorWithFlexibility, greaterThan9OperatorWithFlexibility, greaterThan9OperatorWithFlexibility),
    (notInAOperatorWithFlexibility, lessThan1OperatorWithFlexibility, lessThan1OperatorWithFlexibility),
    (notInAOperatorWithFlexibility, lessThan9OperatorWithFlexibility, lessThan9OperatorWithFlexibility),
    (in1OperatorWithFlexibility, existsOperatorWithFlexibility, in1OperatorWithFlexibility),
    (in1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (in1OperatorWithFlexibility, inAOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (in1OperatorWithFlexibility, inBOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (in1OperatorWithFlexibility, inABOperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (in1OperatorWithFlexibility, notInAOperatorWithFlexibility, in1OperatorWithFlexibility),
    (in1OperatorWithFlexibility, in1OperatorWithFlexibility, in1OperatorWithFlexibility),
    (in1OperatorWithFlexibility, in9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (in1OperatorWithFlexibility, in19OperatorWithFlexibility, raw(complement=False, values={"1"}, min_values=2)),
    (in1OperatorWithFlexibility, notIn12OperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (in1OperatorWithFlexibility, greaterThan1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (in1OperatorWithFlexibility, greaterThan9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (in1OperatorWithFlexibility, lessThan1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (in1OperatorWithFlexibility, lessThan9OperatorWithFlexibility, in1OperatorWithFlexibility),
    (in9OperatorWithFlexibility, existsOperatorWithFlexibility, in9OperatorWithFlexibility),
    (in9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (in9OperatorWithFlexibility, inAOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (in9OperatorWithFlexibility, inBOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (in9OperatorWithFlexibility, inABOperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (in9OperatorWithFlexibility, notInAOperatorWithFlexibility, in9OperatorWithFlexibility),
    (in9OperatorWithFlexibility, in1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (in9OperatorWithFlexibility, in9OperatorWithFlexibility, in9OperatorWithFlexibility),
    (in9OperatorWithFlexibility, in19OperatorWithFlexibility, raw(complement=False, values={"9"}, min_values=2)),
    (in9OperatorWithFlexibility, notIn12OperatorWithFlexibility, raw(complement=False, values={"9"}, min_values=2)),
    (in9OperatorWithFlexibility, greaterThan1OperatorWithFlexibility, in9OperatorWithFlexibility),
    (in9OperatorWithFlexibility, greaterThan9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (in9OperatorWithFlexibility, lessThan1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (in9OperatorWithFlexibility, lessThan9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (in19OperatorWithFlexibility, existsOperatorWithFlexibility, in19OperatorWithFlexibility),
    (in19OperatorWithFlexibility, doesNotExistOperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (in19OperatorWithFlexibility, inAOperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (in19OperatorWithFlexibility, inBOperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (in19OperatorWithFlexibility, inABOperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (in19OperatorWithFlexibility, notInAOperatorWithFlexibility, raw(complement=False, values={"1", "9"}, min_values=2)),
    (in19OperatorWithFlexibility, in1OperatorWithFlexibility, raw(complement=False, values={"1"}, min_values=2)),
    (in19OperatorWithFlexibility, in9OperatorWithFlexibility, raw(complement=False, values={"9"}, min_values=2)),
    (in19OperatorWithFlexibility, in19OperatorWithFlexibility, in19OperatorWithFlexibility),
    (in19OperatorWithFlexibility, notIn12OperatorWithFlexibility, raw(complement=False, values={"9"}, min_values=2)),
    (in19OperatorWithFlexibility, greaterThan1OperatorWithFlexibility, raw(complement=False, values={"9"}, min_values=2)),
    (in19OperatorWithFlexibility, greaterThan9OperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (in19OperatorWithFlexibility, lessThan1OperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (in19OperatorWithFlexibility, lessThan9OperatorWithFlexibility, raw(complement=False, values={"1"}, min_values=2)),
    (notIn12OperatorWithFlexibility, existsOperatorWithFlexibility, notIn12OperatorWithFlexibility),
    (notIn12OperatorWithFlexibility, doesNotExistOperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (notIn12OperatorWithFlexibility, inAOperatorWithFlexibility, raw(complement=False, values={"A"}, min_values=2)),
    (notIn12OperatorWithFlexibility, inBOperatorWithFlexibility, raw(complement=False, values={"B"}, min_values=2)),
    (notIn12OperatorWithFlexibility, inABOperatorWithFlexibility, inABOperatorWithFlexibility),
    (notIn12OperatorWithFlexibility, notInAOperatorWithFlexibility, raw(complement=True, values={"A", "1", "2"}, min_values=2)),
    (notIn12OperatorWithFlexibility, in1OperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (notIn12OperatorWithFlexibility, in9OperatorWithFlexibility, raw(complement=False, values={"9"}, min_values=2)),
    (notIn12OperatorWithFlexibility, in19OperatorWithFlexibility, raw(complement=False, values={"9"}, min_values=2)),
    (notIn12OperatorWithFlexibility, notIn12OperatorWithFlexibility, notIn12OperatorWithFlexibility),
    (notIn12OperatorWithFlexibility, greaterThan1OperatorWithFlexibility, raw(complement=True, gte=greaterThan1.gte, values={"2"}, min_values=2)),
    (notIn12OperatorWithFlexibility, greaterThan9OperatorWithFlexibility, raw(complement=True, gte=greaterThan9.gte, values=set(), min_values=2)),
    (notIn12OperatorWithFlexibility, lessThan1OperatorWithFlexibility, raw(complement=True, lte=lessThan1.lte, values=set(), min_values=2)),
    (notIn12OperatorWithFlexibility, lessThan9OperatorWithFlexibility, raw(complement=True, lte=lessThan9.lte, values={"1", "2"}, min_values=2)),
    (greaterThan1OperatorWithFlexibility, existsOperatorWithFlexibility, greaterThan1OperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, inAOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, inBOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, inABOperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (greaterThan1OperatorWithFlexibility, notInAOperatorWithFlexibility, greaterThan1OperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, in1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, in9OperatorWithFlexibility, in9OperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, in19OperatorWithFlexibility, raw(complement=False, values={"9"}, min_values=2)),
    (greaterThan1OperatorWithFlexibility, notIn12OperatorWithFlexibility, raw(complement=True, gte=greaterThan1.gte, values={"2"}, min_values=2)),
    (greaterThan1OperatorWithFlexibility, greaterThan1OperatorWithFlexibility, greaterThan1OperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, greaterThan9OperatorWithFlexibility, greaterThan9OperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, lessThan1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (greaterThan1OperatorWithFlexibility, lessThan9OperatorWithFlexibility, raw(complement=True, gte=greaterThan1.gte, lte=lessThan9.lte, values=set(), min_values=1)),
    (greaterThan9OperatorWithFlexibility, existsOperatorWithFlexibility, greaterThan9OperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, inAOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, inBOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, inABOperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (greaterThan9OperatorWithFlexibility, notInAOperatorWithFlexibility, greaterThan9OperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, in1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, in9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, in19OperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (greaterThan9OperatorWithFlexibility, notIn12OperatorWithFlexibility, raw(complement=True, gte=greaterThan9.gte, values=set(), min_values=2)),
    (greaterThan9OperatorWithFlexibility, greaterThan1OperatorWithFlexibility, greaterThan9OperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, greaterThan9OperatorWithFlexibility, greaterThan9OperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, lessThan1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (greaterThan9OperatorWithFlexibility, lessThan9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, existsOperatorWithFlexibility, lessThan1OperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, inAOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, inBOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, inABOperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (lessThan1OperatorWithFlexibility, notInAOperatorWithFlexibility, lessThan1OperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, in1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, in9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, in19OperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (lessThan1OperatorWithFlexibility, notIn12OperatorWithFlexibility, raw(complement=True, lte=lessThan1.lte, values=set(), min_values=2)),
    (lessThan1OperatorWithFlexibility, greaterThan1OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, greaterThan9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, lessThan1OperatorWithFlexibility, lessThan1OperatorWithFlexibility),
    (lessThan1OperatorWithFlexibility, lessThan9OperatorWithFlexibility, lessThan1OperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, existsOperatorWithFlexibility, lessThan9OperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, inAOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, inBOperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, inABOperatorWithFlexibility, raw(complement=False, values=set(), min_values=2)),
    (lessThan9OperatorWithFlexibility, notInAOperatorWithFlexibility, lessThan9OperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, in1OperatorWithFlexibility, in1OperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, in9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, in19OperatorWithFlexibility, raw(complement=False, values={"1"}, min_values=2)),
    (lessThan9OperatorWithFlexibility, notIn12OperatorWithFlexibility, raw(complement=True, lte=lessThan9.lte, values={"1", "2"}, min_values=2)),
    (lessThan9OperatorWithFlexibility, greaterThan1OperatorWithFlexibility, raw(complement=True, gte=greaterThan1.gte, lte=lessThan9.lte, values=set(), min_values=1)),
    (lessThan9OperatorWithFlexibility, greaterThan9OperatorWithFlexibility, doesNotExistOperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, lessThan1OperatorWithFlexibility, lessThan1OperatorWithFlexibility),
    (lessThan9OperatorWithFlexibility, lessThan9OperatorWithFlexibility, lessThan9OperatorWithFlexibility),
]

# upstream: pkg/scheduling/requirement_test.go Context("Has") DescribeTable("should have the right values")
HAS = [
    (exists, "A", True),
    (doesNotExist, "A", False),
    (inA, "A", True),
    (inB, "A", False),
    (inAB, "A", True),
    (notInA, "A", False),
    (in1, "A", False),
    (in9, "A", False),
    (in19, "A", False),
    (notIn12, "A", True),
    (greaterThan1, "A", False),
    (greaterThan9, "A", False),
    (lessThan1, "A", False),
    (lessThan9, "A", False),
    (exists, "B", True),
    (doesNotExist, "B", False),
    (inA, "B", False),
    (inB, "B", True),
    (inAB, "B", True),
    (notInA, "B", True),
    (in1, "B", False),
    (in9, "B", False),
    (in19, "B", False),
    (notIn12, "B", True),
    (greaterThan1, "B", False),
    (greaterThan9, "B", False),
    (lessThan1, "B", False),
    (lessThan9, "B", False),
    (exists, "1", True),
    (doesNotExist, "1", False),
    (inA, "1", False),
    (inB, "1", False),
    (inAB, "1", False),
    (notInA, "1", True),
    (in1, "1", True),
    (in9, "1", False),
    (in19, "1", True),
    (notIn12, "1", False),
    (greaterThan1, "1", False),
    (greaterThan9, "1", False),
    (lessThan1, "1", False),
    (lessThan9, "1", True),
    (exists, "2", True),
    (doesNotExist, "2", False),
    (inA, "2", False),
    (inB, "2", False),
    (inAB, "2", False),
    (notInA, "2", True),
    (in1, "2", False),
    (in9, "2", False),
    (in19, "2", False),
    (notIn12, "2", False),
    (greaterThan1, "2", True),
    (greaterThan9, "2", False),
    (lessThan1, "2", False),
    (lessThan9, "2", True),
    (exists, "9", True),
    (doesNotExist, "9", False),
    (inA, "9", False),
    (inB, "9", False),
    (inAB, "9", False),
    (notInA, "9", True),
    (in1, "9", False),
    (in9, "9", True),
    (in19, "9", True),
    (notIn12, "9", True),
    (greaterThan1, "9", True),
    (greaterThan9, "9", False),
    (lessThan1, "9", False),
    (lessThan9, "9", False),
]

# upstream: pkg/scheduling/requirement_test.go Context("Operator") DescribeTable("should return the right operator")
OPERATOR = [
    (exists, "Exists"),
    (doesNotExist, "DoesNotExist"),
    (inA, "In"),
    (inB, "In"),
    (inAB, "In"),
    (notInA, "NotIn"),
    (in1, "In"),
    (in9, "In"),
    (in19, "In"),
    (notIn12, "NotIn"),
    (greaterThan1, "Exists"),
    (greaterThan9, "Exists"),
    (lessThan1, "Exists"),
    (lessThan9, "Exists"),
]

# upstream: pkg/scheduling/requirement_test.go Context("Len") DescribeTable("should have the correct length")
LEN = [
    (exists, MAX_INT64),
    (doesNotExist, 0),
    (inA, 1),
    (inB, 1),
    (inAB, 2),
    (notInA, MAX_INT64-1),
    (in1, 1),
    (in9, 1),
    (in19, 2),
    (notIn12, MAX_INT64-2),
    (greaterThan1, MAX_INT64),
    (greaterThan9, MAX_INT64),
    (lessThan1, MAX_INT64),
    (lessThan9, MAX_INT64),
]

# upstream: pkg/scheduling/requirement_test.go Context("String") DescribeTable("should print the right string")
STRING = [
    (exists, "key Exists"),
    (doesNotExist, "key DoesNotExist"),
    (inA, "key In [A]"),
    (inB, "key In [B]"),
    (inAB, "key In [A B]"),
    (notInA, "key NotIn [A]"),
    (in1, "key In [1]"),
    (in9, "key In [9]"),
    (in19, "key In [1 9]"),
    (notIn12, "key NotIn [1 2]"),
    (greaterThan1, "key Exists >=2"),
    (greaterThan9, "key Exists >=10"),
    (lessThan1, "key Exists <=0"),
    (lessThan9, "key Exists <=8"),
    (greaterThan1.intersection(lessThan9), "key Exists >=2 <=8"),
    (greaterThan9.intersection(lessThan1), "key DoesNotExist"),
]

# upstream: pkg/scheduling/requirement_test.go Context("NodeSelectorRequirements Conversion")
# DescribeTable("should return the expected NodeSelectorRequirement")
NODE_SELECTOR_REQUIREMENT = [
    (exists, ("key", "Exists", [], None)),
    (doesNotExist, ("key", "DoesNotExist", [], None)),
    (inA, ("key", "In", ["A"], None)),
    (inB, ("key", "In", ["B"], None)),
    (inAB, ("key", "In", ["A", "B"], None)),
    (notInA, ("key", "NotIn", ["A"], None)),
    (in1, ("key", "In", ["1"], None)),
    (in9, ("key", "In", ["9"], None)),
    (in19, ("key", "In", ["1", "9"], None)),
    (notIn12, ("key", "NotIn", ["1", "2"], None)),
    (greaterThan1, ("key", "Gte", ["2"], None)),
    (greaterThan9, ("key", "Gte", ["10"], None)),
    (lessThan1, ("key", "Lte", ["0"], None)),
    (lessThan9, ("key", "Lte", ["8"], None)),
    (existsOperatorWithFlexibility, ("key", "Exists", [], 1)),
    (doesNotExistOperatorWithFlexibility, ("key", "DoesNotExist", [], 1)),
    (inAOperatorWithFlexibility, ("key", "In", ["A"], 1)),
    (inBOperatorWithFlexibility, ("key", "In", ["B"], 1)),
    (inABOperatorWithFlexibility, ("key", "In", ["A", "B"], 2)),
    (notInAOperatorWithFlexibility, ("key", "NotIn", ["A"], 1)),
    (in1OperatorWithFlexibility, ("key", "In", ["1"], 1)),
    (in9OperatorWithFlexibility, ("key", "In", ["9"], 1)),
    (in19OperatorWithFlexibility, ("key", "In", ["1", "9"], 2)),
    (notIn12OperatorWithFlexibility, ("key", "NotIn", ["1", "2"], 2)),
    (greaterThan1OperatorWithFlexibility, ("key", "Gte", ["2"], 1)),
    (greaterThan9OperatorWithFlexibility, ("key", "Gte", ["10"], 1)),
    (lessThan1OperatorWithFlexibility, ("key", "Lte", ["0"], 1)),
    (lessThan9OperatorWithFlexibility, ("key", "Lte", ["8"], 1)),
]


def _fields(r: Requirement) -> tuple[Any, ...]:
    return (r.key, r.complement, r.values, r.gte, r.lte, r.min_values)


@pytest.mark.parametrize("existing,incoming,expected", INTERSECT_WITHOUT_MIN_VALUES)
def test_intersect_without_min_values(existing: Requirement, incoming: Requirement, expected: Requirement) -> None:
    # upstream: requirement_test.go "should intersect two requirements without minValues"
    got = existing.intersection(incoming)
    assert _fields(got) == _fields(expected)
    assert got == expected


@pytest.mark.parametrize("existing,incoming,expected", INTERSECT_MIN_VALUES_WITH_WITHOUT)
def test_intersect_min_values_with_without(existing: Requirement, incoming: Requirement, expected: Requirement) -> None:
    # upstream: requirement_test.go "should intersect requirement with minValues with a requirement without"
    got = existing.intersection(incoming)
    assert _fields(got) == _fields(expected)


@pytest.mark.parametrize("existing,incoming,expected", INTERSECT_WITH_MIN_VALUES)
def test_intersect_with_min_values(existing: Requirement, incoming: Requirement, expected: Requirement) -> None:
    # upstream: requirement_test.go "should intersect two requirements with minValues"
    got = existing.intersection(incoming)
    assert _fields(got) == _fields(expected)


@pytest.mark.parametrize(
    "existing,incoming,expected",
    INTERSECT_WITHOUT_MIN_VALUES + INTERSECT_MIN_VALUES_WITH_WITHOUT + INTERSECT_WITH_MIN_VALUES,
)
def test_has_intersection_agrees_with_intersection(
    existing: Requirement, incoming: Requirement, expected: Requirement
) -> None:
    # HasIntersection is documented upstream as "a more efficient implementation of Intersection":
    # for concrete results it must agree with non-emptiness; two complements always intersect
    # (unless their bounds cross, which yields DoesNotExist).
    got = existing.has_intersection(incoming)
    if expected.complement:
        assert got is True
    else:
        assert got == (len(expected.values) > 0)


@pytest.mark.parametrize("requirement,value,expected", HAS)
def test_has(requirement: Requirement, value: str, expected: bool) -> None:
    # upstream: requirement_test.go Context("Has") "should have the right values"
    assert requirement.has(value) is expected


@pytest.mark.parametrize("requirement,expected", OPERATOR)
def test_operator(requirement: Requirement, expected: str) -> None:
    # upstream: requirement_test.go Context("Operator") "should return the right operator"
    assert requirement.operator == expected


@pytest.mark.parametrize("requirement,expected", LEN)
def test_len(requirement: Requirement, expected: int) -> None:
    # upstream: requirement_test.go Context("Len") "should have the correct length"
    assert requirement.len() == expected
    assert len(requirement) == expected


@pytest.mark.parametrize("requirement,expected", STRING)
def test_string(requirement: Requirement, expected: str) -> None:
    # upstream: requirement_test.go Context("String") "should print the right string"
    assert str(requirement) == expected


@pytest.mark.parametrize("requirement,expected", NODE_SELECTOR_REQUIREMENT)
def test_node_selector_requirement(requirement: Requirement, expected: tuple[Any, ...]) -> None:
    # upstream: requirement_test.go "should return the expected NodeSelectorRequirement"
    assert requirement.node_selector_fields() == expected
    nsr = requirement.to_node_selector_requirement()
    assert (nsr.key, nsr.operator, list(nsr.values), nsr.min_values) == expected


# --- Context("NewRequirements") -------------------------------------------------------------

_BETA_SELECTOR = {
    "failure-domain.beta.kubernetes.io/zone": "test",
    "failure-domain.beta.kubernetes.io/region": "test",
    "beta.kubernetes.io/arch": "test",
    "beta.kubernetes.io/os": "test",
    "beta.kubernetes.io/instance-type": "test",
}


def _normalization_sources() -> list[Requirements]:
    from karpy.api.pod import Pod

    exprs = [{"key": k, "operator": "In", "values": [v]} for k, v in _BETA_SELECTOR.items()]
    pod = Pod.model_validate(
        {
            "metadata": {"name": "p"},
            "spec": {
                "nodeSelector": _BETA_SELECTOR,
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": exprs}]},
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 1, "preference": {"matchExpressions": exprs}}
                        ],
                    }
                },
            },
        }
    )
    nsrs = pod.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms[0].match_expressions  # type: ignore[union-attr]
    return [
        Requirements.from_labels(_BETA_SELECTOR),
        Requirements.from_node_selector_requirements(nsrs),
        pod_requirements(pod),
    ]


def test_should_normalize_labels() -> None:
    # upstream: requirement_test.go Context("NewRequirements") "should normalize labels"
    for reqs in _normalization_sources():
        assert sorted(reqs.keys()) == sorted([LABEL_ARCH, LABEL_OS, LABEL_INSTANCE_TYPE, LABEL_REGION, LABEL_ZONE])
        assert all(r.has("test") for r in reqs.values())


# --- Context("Any") -------------------------------------------------------------------------


def test_should_return_any() -> None:
    # upstream: requirement_test.go Context("Any") "should return any"
    assert exists.any() != ""
    assert doesNotExist.any() == ""
    assert inA.any() == "A"
    assert inB.any() == "B"
    assert inAB.any() in ("A", "B")
    assert notInA.any() not in ("", "A")
    assert in1.any() == "1"
    assert in9.any() == "9"
    assert in19.any() in ("1", "9")
    assert notIn12.any() not in ("", "1", "2")
    assert int(greaterThan1.any()) >= 1
    v = int(greaterThan9.any())
    assert 9 <= v < MAX_INT64
    assert lessThan1.any() == "0"
    assert 0 <= int(lessThan9.any()) < 9


def test_any_is_deterministic() -> None:
    # karpy rule (requirement.py Requirement.any): smallest sorted In value; smallest allowed integer.
    assert inAB.any() == "A"
    assert in19.any() == "1"
    assert exists.any() == "0"
    assert notIn12.any() == "0"
    assert new("key", "NotIn", "0", "1", "3").any() == "2"
    assert greaterThan1.any() == "2"
    assert greaterThan9.any() == "10"
    assert lessThan9.any() == "0"
    assert new("key", "Lt", "0").any() == "-1"
    bounded = new("key", "Gte", "3").intersection(new("key", "Lte", "4")).intersection(new("key", "NotIn", "3"))
    assert bounded.any() == "4"
    assert bounded.intersection(new("key", "NotIn", "4")).any() == ""


# --- Context("Gte and Lte Operators") -------------------------------------------------------

gte2 = Requirement("key", "Gte", ["2"])
lte8 = Requirement("key", "Lte", ["8"])


def test_gte_inclusive_lower_bound() -> None:
    # upstream: requirement_test.go "should treat Gte as inclusive lower bound"
    assert gte2.has("2") and gte2.has("3") and gte2.has("100")
    assert not gte2.has("1") and not gte2.has("0")


def test_lte_inclusive_upper_bound() -> None:
    # upstream: requirement_test.go "should treat Lte as inclusive upper bound"
    assert lte8.has("8") and lte8.has("7") and lte8.has("0")
    assert not lte8.has("9") and not lte8.has("10")


def test_intersect_gte_and_lte() -> None:
    # upstream: requirement_test.go "should intersect Gte and Lte correctly"
    i = gte2.intersection(lte8)
    assert i.has("2") and i.has("5") and i.has("8")
    assert not i.has("1") and not i.has("9")


def test_gte_lte_equivalent_to_adjusted_gt_lt() -> None:
    # upstream: requirement_test.go "should be equivalent to adjusted Gt/Lt"
    gt1 = new("key", "Gt", "1")
    assert gte2.has("2") == gt1.has("2")
    assert gte2.has("1") == gt1.has("1")
    lt9 = new("key", "Lt", "9")
    assert lte8.has("8") == lt9.has("8")
    assert lte8.has("9") == lt9.has("9")
    assert gt1 == gte2 and lt9 == lte8


@pytest.mark.parametrize(
    "a,b,op,value,has_true,has_false",
    [
        # upstream: "should collapse redundant bounds in intersection"
        (("Gt", "4"), ("Gte", "5"), "Gte", "5", "5", "4"),
        # upstream: "should keep Gt when Gt is more restrictive"
        (("Gt", "5"), ("Gte", "5"), "Gte", "6", "6", "5"),
        # upstream: "should keep more restrictive Gte when Gte > Gt+1"
        (("Gt", "3"), ("Gte", "6"), "Gte", "6", "6", "5"),
        # upstream: "should keep Lt when Lt is more restrictive"
        (("Lt", "5"), ("Lte", "5"), "Lte", "4", "4", "5"),
        # upstream: "should keep more restrictive Lte when Lte < Lt-1"
        (("Lt", "9"), ("Lte", "5"), "Lte", "5", "5", "6"),
    ],
)
def test_bound_collapse(
    a: tuple[str, str], b: tuple[str, str], op: str, value: str, has_true: str, has_false: str
) -> None:
    i = new("key", a[0], a[1]).intersection(new("key", b[0], b[1]))
    assert i.has(has_true)
    assert not i.has(has_false)
    key, got_op, values, _ = i.node_selector_fields()
    assert (got_op, values) == (op, [value])


def test_gte0_and_lte0_boundaries() -> None:
    # upstream: "should handle Gte 0 boundary" / "should handle Lte 0 boundary"
    gte0 = Requirement("key", "Gte", ["0"])
    assert gte0.has("0") and not gte0.has("-1")
    lte0 = Requirement("key", "Lte", ["0"])
    assert lte0.has("0") and not lte0.has("1")


def test_any_for_gte_and_lte() -> None:
    # upstream: "should return valid value from Any() for Gte" / "... for Lte"
    assert int(Requirement("key", "Gte", ["5"]).any()) >= 5
    assert int(Requirement("key", "Lte", ["10"]).any()) <= 10


def test_gt_max_int_is_does_not_exist() -> None:
    # upstream: "should return DoesNotExist for Gt MaxInt"
    r = Requirement("key", "Gt", [str(MAX_INT)], min_values=3)
    assert r.operator == "DoesNotExist"
    assert r.len() == 0
    assert r.min_values is None  # NewRequirement(key, DoesNotExist) drops minValues


# --- karpy-specific edge cases (Go semantics that Python would get wrong by default) ----------


@pytest.mark.parametrize(
    "value,expected",
    [
        ("5", True),
        ("+5", True),  # strconv.Atoi accepts a sign
        ("05", True),
        (" 5", False),  # Python int() would accept these
        ("5 ", False),
        ("1_0", False),
        ("\u0665", False),  # Arabic-Indic digit five
        ("5.0", False),
        ("", False),
        ("9223372036854775808", False),  # out of int64 range -> Atoi error
        ("-9223372036854775808", False),  # in range but below the bound
    ],
)
def test_within_bounds_uses_go_atoi(value: str, expected: bool) -> None:
    assert within_bounds(value, 0, None) is expected


def test_gt_out_of_range_clamps_to_max_int() -> None:
    # strconv.Atoi returns the clamped value with ErrRange; upstream ignores the error -> Gt MaxInt.
    assert Requirement("key", "Gt", ["99999999999999999999"]).operator == "DoesNotExist"
    # Syntax errors give 0: Gt "a" == Gte 1.
    assert Requirement("key", "Gt", ["a"]).gte == 1


def test_bounded_in_set_drops_bounds_and_values() -> None:
    r = new("key", "In", "1", "5", "x").intersection(new("key", "Gt", "2"))
    assert (r.complement, r.values, r.gte, r.lte) == (False, frozenset({"5"}), None, None)


def test_string_truncates_after_five_values() -> None:
    r = new("key", "In", "a", "b", "c", "d", "e", "f", "g")
    assert str(r) == "key In [a b c d e and 2 others]"
    assert str(flex("key", "NotIn", 2, "a", "b", "c", "d", "e", "f")) == "key NotIn [a b c d e and 1 others] minValues 2"


def test_requirement_is_hashable_value_and_truthy() -> None:
    assert hash(new("key", "In", "A", "B")) == hash(new("key", "In", "B", "A"))
    assert new("key", "In", "A") != new("key", "In", "A").intersection(existsOperatorWithFlexibility)
    assert bool(doesNotExist) is True
    assert new("failure-domain.beta.kubernetes.io/zone", "In", "a").key == LABEL_ZONE
