"""Ports pkg/scheduling/requirements_test.go (Describe "Requirements") and the pod-requirement
behaviour of requirements.go NewPodRequirements / NewStrictPodRequirements.

The compatibility matrices mirror upstream's Expect(...) lines one-to-one (same order, upstream
variable names) so that they can be diffed against the Go file.
"""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest

from karpy.api.pod import NodeSelectorRequirement, Pod
from karpy.scheduling.labels import CORE_WELL_KNOWN_LABELS, LABEL_HOSTNAME, LABEL_ZONE
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import (
    Requirements,
    has_preferred_node_affinity,
    label_hint,
    pod_requirements,
    strict_pod_requirements,
)

# AllowUndefinedWellKnownLabels: upstream resolves to v1.WellKnownLabels (the core set here).
WELL_KNOWN = CORE_WELL_KNOWN_LABELS


def new(key: str, op: str, *values: str) -> Requirement:
    return Requirement(key, op, values)


# Use a well known label like zone, because it behaves differently than custom labels
unconstrained = Requirements()
exists = Requirements(new(LABEL_ZONE, "Exists"))
doesNotExist = Requirements(new(LABEL_ZONE, "DoesNotExist"))
inA = Requirements(new(LABEL_ZONE, "In", "A"))
inB = Requirements(new(LABEL_ZONE, "In", "B"))
inAB = Requirements(new(LABEL_ZONE, "In", "A", "B"))
notInA = Requirements(new(LABEL_ZONE, "NotIn", "A"))
in1 = Requirements(new(LABEL_ZONE, "In", "1"))
in9 = Requirements(new(LABEL_ZONE, "In", "9"))
in19 = Requirements(new(LABEL_ZONE, "In", "1", "9"))
notIn12 = Requirements(new(LABEL_ZONE, "NotIn", "1", "2"))
greaterThan1 = Requirements(new(LABEL_ZONE, "Gt", "1"))
greaterThan9 = Requirements(new(LABEL_ZONE, "Gt", "9"))
lessThan1 = Requirements(new(LABEL_ZONE, "Lt", "1"))
lessThan9 = Requirements(new(LABEL_ZONE, "Lt", "9"))

# upstream: pkg/scheduling/requirements_test.go Context("Compatibility")
# It("should be compatible with well-known v1 labels undefined")  (existing, incoming, succeeds)
COMPATIBLE_ALLOW_UNDEFINED = [
    (unconstrained, unconstrained, True),
    (unconstrained, exists, True),
    (unconstrained, doesNotExist, True),
    (unconstrained, inA, True),
    (unconstrained, inB, True),
    (unconstrained, inAB, True),
    (unconstrained, notInA, True),
    (unconstrained, in1, True),
    (unconstrained, in9, True),
    (unconstrained, in19, True),
    (unconstrained, notIn12, True),
    (unconstrained, greaterThan1, True),
    (unconstrained, greaterThan9, True),
    (unconstrained, lessThan1, True),
    (unconstrained, lessThan9, True),
    (exists, unconstrained, True),
    (exists, exists, True),
    (exists, doesNotExist, False),
    (exists, inA, True),
    (exists, inB, True),
    (exists, inAB, True),
    (exists, notInA, True),
    (exists, in1, True),
    (exists, in9, True),
    (exists, in19, True),
    (exists, notIn12, True),
    (exists, greaterThan1, True),
    (exists, greaterThan9, True),
    (exists, lessThan1, True),
    (exists, lessThan9, True),
    (doesNotExist, unconstrained, True),
    (doesNotExist, exists, False),
    (doesNotExist, doesNotExist, True),
    (doesNotExist, inA, False),
    (doesNotExist, inB, False),
    (doesNotExist, inAB, False),
    (doesNotExist, notInA, True),
    (doesNotExist, in1, False),
    (doesNotExist, in9, False),
    (doesNotExist, in19, False),
    (doesNotExist, notIn12, True),
    (doesNotExist, greaterThan1, False),
    (doesNotExist, greaterThan9, False),
    (doesNotExist, lessThan1, False),
    (doesNotExist, lessThan9, False),
    (inA, unconstrained, True),
    (inA, exists, True),
    (inA, doesNotExist, False),
    (inA, inA, True),
    (inA, inB, False),
    (inA, inAB, True),
    (inA, notInA, False),
    (inA, in1, False),
    (inA, in9, False),
    (inA, in19, False),
    (inA, notIn12, True),
    (inA, greaterThan1, False),
    (inA, greaterThan9, False),
    (inA, lessThan1, False),
    (inA, lessThan9, False),
    (inB, unconstrained, True),
    (inB, exists, True),
    (inB, doesNotExist, False),
    (inB, inA, False),
    (inB, inB, True),
    (inB, inAB, True),
    (inB, notInA, True),
    (inB, in1, False),
    (inB, in9, False),
    (inB, in19, False),
    (inB, notIn12, True),
    (inB, greaterThan1, False),
    (inB, greaterThan9, False),
    (inB, lessThan1, False),
    (inB, lessThan9, False),
    (inAB, unconstrained, True),
    (inAB, exists, True),
    (inAB, doesNotExist, False),
    (inAB, inA, True),
    (inAB, inB, True),
    (inAB, inAB, True),
    (inAB, notInA, True),
    (inAB, in1, False),
    (inAB, in9, False),
    (inAB, in19, False),
    (inAB, notIn12, True),
    (inAB, greaterThan1, False),
    (inAB, greaterThan9, False),
    (inAB, lessThan1, False),
    (inAB, lessThan9, False),
    (notInA, unconstrained, True),
    (notInA, exists, True),
    (notInA, doesNotExist, True),
    (notInA, inA, False),
    (notInA, inB, True),
    (notInA, inAB, True),
    (notInA, notInA, True),
    (notInA, in1, True),
    (notInA, in9, True),
    (notInA, in19, True),
    (notInA, notIn12, True),
    (notInA, greaterThan1, True),
    (notInA, greaterThan9, True),
    (notInA, lessThan1, True),
    (notInA, lessThan9, True),
    (in1, unconstrained, True),
    (in1, exists, True),
    (in1, doesNotExist, False),
    (in1, inA, False),
    (in1, inB, False),
    (in1, inAB, False),
    (in1, notInA, True),
    (in1, in1, True),
    (in1, in9, False),
    (in1, in19, True),
    (in1, notIn12, False),
    (in1, greaterThan1, False),
    (in1, greaterThan9, False),
    (in1, lessThan1, False),
    (in1, lessThan9, True),
    (in9, unconstrained, True),
    (in9, exists, True),
    (in9, doesNotExist, False),
    (in9, inA, False),
    (in9, inB, False),
    (in9, inAB, False),
    (in9, notInA, True),
    (in9, in1, False),
    (in9, in9, True),
    (in9, in19, True),
    (in9, notIn12, True),
    (in9, greaterThan1, True),
    (in9, greaterThan9, False),
    (in9, lessThan1, False),
    (in9, lessThan9, False),
    (in19, unconstrained, True),
    (in19, exists, True),
    (in19, doesNotExist, False),
    (in19, inA, False),
    (in19, inB, False),
    (in19, inAB, False),
    (in19, notInA, True),
    (in19, in1, True),
    (in19, in9, True),
    (in19, in19, True),
    (in19, notIn12, True),
    (in19, greaterThan1, True),
    (in19, greaterThan9, False),
    (in19, lessThan1, False),
    (in19, lessThan9, True),
    (notIn12, unconstrained, True),
    (notIn12, exists, True),
    (notIn12, doesNotExist, True),
    (notIn12, inA, True),
    (notIn12, inB, True),
    (notIn12, inAB, True),
    (notIn12, notInA, True),
    (notIn12, in1, False),
    (notIn12, in9, True),
    (notIn12, in19, True),
    (notIn12, notIn12, True),
    (notIn12, greaterThan1, True),
    (notIn12, greaterThan9, True),
    (notIn12, lessThan1, True),
    (notIn12, lessThan9, True),
    (greaterThan1, unconstrained, True),
    (greaterThan1, exists, True),
    (greaterThan1, doesNotExist, False),
    (greaterThan1, inA, False),
    (greaterThan1, inB, False),
    (greaterThan1, inAB, False),
    (greaterThan1, notInA, True),
    (greaterThan1, in1, False),
    (greaterThan1, in9, True),
    (greaterThan1, in19, True),
    (greaterThan1, notIn12, True),
    (greaterThan1, greaterThan1, True),
    (greaterThan1, greaterThan9, True),
    (greaterThan1, lessThan1, False),
    (greaterThan1, lessThan9, True),
    (greaterThan9, unconstrained, True),
    (greaterThan9, exists, True),
    (greaterThan9, doesNotExist, False),
    (greaterThan9, inA, False),
    (greaterThan9, inB, False),
    (greaterThan9, inAB, False),
    (greaterThan9, notInA, True),
    (greaterThan9, in1, False),
    (greaterThan9, in9, False),
    (greaterThan9, in19, False),
    (greaterThan9, notIn12, True),
    (greaterThan9, greaterThan1, True),
    (greaterThan9, greaterThan9, True),
    (greaterThan9, lessThan1, False),
    (greaterThan9, lessThan9, False),
    (lessThan1, unconstrained, True),
    (lessThan1, exists, True),
    (lessThan1, doesNotExist, False),
    (lessThan1, inA, False),
    (lessThan1, inB, False),
    (lessThan1, inAB, False),
    (lessThan1, notInA, True),
    (lessThan1, in1, False),
    (lessThan1, in9, False),
    (lessThan1, in19, False),
    (lessThan1, notIn12, True),
    (lessThan1, greaterThan1, False),
    (lessThan1, greaterThan9, False),
    (lessThan1, lessThan1, True),
    (lessThan1, lessThan9, True),
    (lessThan9, unconstrained, True),
    (lessThan9, exists, True),
    (lessThan9, doesNotExist, False),
    (lessThan9, inA, False),
    (lessThan9, inB, False),
    (lessThan9, inAB, False),
    (lessThan9, notInA, True),
    (lessThan9, in1, True),
    (lessThan9, in9, False),
    (lessThan9, in19, True),
    (lessThan9, notIn12, True),
    (lessThan9, greaterThan1, True),
    (lessThan9, greaterThan9, False),
    (lessThan9, lessThan1, True),
    (lessThan9, lessThan9, True),
]

# It("should be strictly compatible")  (existing, incoming, succeeds)
COMPATIBLE_STRICT = [
    (unconstrained, exists, False),
    (unconstrained, inA, False),
    (unconstrained, inB, False),
    (unconstrained, inAB, False),
    (unconstrained, in1, False),
    (unconstrained, in9, False),
    (unconstrained, in19, False),
    (unconstrained, greaterThan1, False),
    (unconstrained, greaterThan9, False),
    (unconstrained, lessThan1, False),
    (unconstrained, lessThan9, False),
    (unconstrained, unconstrained, True),
    (unconstrained, doesNotExist, True),
    (unconstrained, notInA, True),
    (unconstrained, notIn12, True),
    (exists, unconstrained, True),
    (exists, exists, True),
    (exists, doesNotExist, False),
    (exists, inA, True),
    (exists, inB, True),
    (exists, inAB, True),
    (exists, notInA, True),
    (exists, in1, True),
    (exists, in9, True),
    (exists, in19, True),
    (exists, notIn12, True),
    (exists, greaterThan1, True),
    (exists, greaterThan9, True),
    (exists, lessThan1, True),
    (exists, lessThan9, True),
    (doesNotExist, unconstrained, True),
    (doesNotExist, exists, False),
    (doesNotExist, doesNotExist, True),
    (doesNotExist, inA, False),
    (doesNotExist, inB, False),
    (doesNotExist, inAB, False),
    (doesNotExist, notInA, True),
    (doesNotExist, in1, False),
    (doesNotExist, in9, False),
    (doesNotExist, in19, False),
    (doesNotExist, notIn12, True),
    (doesNotExist, greaterThan1, False),
    (doesNotExist, greaterThan9, False),
    (doesNotExist, lessThan1, False),
    (doesNotExist, lessThan9, False),
    (inA, unconstrained, True),
    (inA, exists, True),
    (inA, doesNotExist, False),
    (inA, inA, True),
    (inA, inB, False),
    (inA, inAB, True),
    (inA, notInA, False),
    (inA, in1, False),
    (inA, in9, False),
    (inA, in19, False),
    (inA, notIn12, True),
    (inA, greaterThan1, False),
    (inA, greaterThan9, False),
    (inA, lessThan1, False),
    (inA, lessThan9, False),
    (inB, unconstrained, True),
    (inB, exists, True),
    (inB, doesNotExist, False),
    (inB, inA, False),
    (inB, inB, True),
    (inB, inAB, True),
    (inB, notInA, True),
    (inB, in1, False),
    (inB, in9, False),
    (inB, in19, False),
    (inB, notIn12, True),
    (inB, greaterThan1, False),
    (inB, greaterThan9, False),
    (inB, lessThan1, False),
    (inB, lessThan9, False),
    (inAB, unconstrained, True),
    (inAB, exists, True),
    (inAB, doesNotExist, False),
    (inAB, inA, True),
    (inAB, inB, True),
    (inAB, inAB, True),
    (inAB, notInA, True),
    (inAB, in1, False),
    (inAB, in9, False),
    (inAB, in19, False),
    (inAB, notIn12, True),
    (inAB, greaterThan1, False),
    (inAB, greaterThan9, False),
    (inAB, lessThan1, False),
    (inAB, lessThan9, False),
    (notInA, unconstrained, True),
    (notInA, exists, True),
    (notInA, doesNotExist, True),
    (notInA, inA, False),
    (notInA, inB, True),
    (notInA, inAB, True),
    (notInA, notInA, True),
    (notInA, in1, True),
    (notInA, in9, True),
    (notInA, in19, True),
    (notInA, notIn12, True),
    (notInA, greaterThan1, True),
    (notInA, greaterThan9, True),
    (notInA, lessThan1, True),
    (notInA, lessThan9, True),
    (in1, unconstrained, True),
    (in1, exists, True),
    (in1, doesNotExist, False),
    (in1, inA, False),
    (in1, inB, False),
    (in1, inAB, False),
    (in1, notInA, True),
    (in1, in1, True),
    (in1, in9, False),
    (in1, in19, True),
    (in1, notIn12, False),
    (in1, greaterThan1, False),
    (in1, greaterThan9, False),
    (in1, lessThan1, False),
    (in1, lessThan9, True),
    (in9, unconstrained, True),
    (in9, exists, True),
    (in9, doesNotExist, False),
    (in9, inA, False),
    (in9, inB, False),
    (in9, inAB, False),
    (in9, notInA, True),
    (in9, in1, False),
    (in9, in9, True),
    (in9, in19, True),
    (in9, notIn12, True),
    (in9, greaterThan1, True),
    (in9, greaterThan9, False),
    (in9, lessThan1, False),
    (in9, lessThan9, False),
    (in19, unconstrained, True),
    (in19, exists, True),
    (in19, doesNotExist, False),
    (in19, inA, False),
    (in19, inB, False),
    (in19, inAB, False),
    (in19, notInA, True),
    (in19, in1, True),
    (in19, in9, True),
    (in19, in19, True),
    (in19, notIn12, True),
    (in19, greaterThan1, True),
    (in19, greaterThan9, False),
    (in19, lessThan1, False),
    (in19, lessThan9, True),
    (notIn12, unconstrained, True),
    (notIn12, exists, True),
    (notIn12, doesNotExist, True),
    (notIn12, inA, True),
    (notIn12, inB, True),
    (notIn12, inAB, True),
    (notIn12, notInA, True),
    (notIn12, in1, False),
    (notIn12, in9, True),
    (notIn12, in19, True),
    (notIn12, notIn12, True),
    (notIn12, greaterThan1, True),
    (notIn12, greaterThan9, True),
    (notIn12, lessThan1, True),
    (notIn12, lessThan9, True),
    (greaterThan1, unconstrained, True),
    (greaterThan1, exists, True),
    (greaterThan1, doesNotExist, False),
    (greaterThan1, inA, False),
    (greaterThan1, inB, False),
    (greaterThan1, inAB, False),
    (greaterThan1, notInA, True),
    (greaterThan1, in1, False),
    (greaterThan1, in9, True),
    (greaterThan1, in19, True),
    (greaterThan1, notIn12, True),
    (greaterThan1, greaterThan1, True),
    (greaterThan1, greaterThan9, True),
    (greaterThan1, lessThan1, False),
    (greaterThan1, lessThan9, True),
    (greaterThan9, unconstrained, True),
    (greaterThan9, exists, True),
    (greaterThan9, doesNotExist, False),
    (greaterThan9, inA, False),
    (greaterThan9, inB, False),
    (greaterThan9, inAB, False),
    (greaterThan9, notInA, True),
    (greaterThan9, in1, False),
    (greaterThan9, in9, False),
    (greaterThan9, in19, False),
    (greaterThan9, notIn12, True),
    (greaterThan9, greaterThan1, True),
    (greaterThan9, greaterThan9, True),
    (greaterThan9, lessThan1, False),
    (greaterThan9, lessThan9, False),
    (lessThan1, unconstrained, True),
    (lessThan1, exists, True),
    (lessThan1, doesNotExist, False),
    (lessThan1, inA, False),
    (lessThan1, inB, False),
    (lessThan1, inAB, False),
    (lessThan1, notInA, True),
    (lessThan1, in1, False),
    (lessThan1, in9, False),
    (lessThan1, in19, False),
    (lessThan1, notIn12, True),
    (lessThan1, greaterThan1, False),
    (lessThan1, greaterThan9, False),
    (lessThan1, lessThan1, True),
    (lessThan1, lessThan9, True),
    (lessThan9, unconstrained, True),
    (lessThan9, exists, True),
    (lessThan9, doesNotExist, False),
    (lessThan9, inA, False),
    (lessThan9, inB, False),
    (lessThan9, inAB, False),
    (lessThan9, notInA, True),
    (lessThan9, in1, True),
    (lessThan9, in9, False),
    (lessThan9, in19, True),
    (lessThan9, notIn12, True),
    (lessThan9, greaterThan1, True),
    (lessThan9, greaterThan9, False),
    (lessThan9, lessThan1, True),
    (lessThan9, lessThan9, True),
]


def test_should_normalize_aliased_labels() -> None:
    # upstream: requirements_test.go Context("Compatibility") "should normalize aliased labels"
    reqs = Requirements(new("failure-domain.beta.kubernetes.io/zone", "In", "test"))
    assert not reqs.has("failure-domain.beta.kubernetes.io/zone")
    assert reqs.get(LABEL_ZONE).has("test")


@pytest.mark.parametrize("existing,incoming,succeeds", COMPATIBLE_ALLOW_UNDEFINED)
def test_compatible_with_well_known_labels_undefined(
    existing: Requirements, incoming: Requirements, succeeds: bool
) -> None:
    # upstream: requirements_test.go "should be compatible with well-known v1 labels undefined"
    err = existing.compatible(incoming, WELL_KNOWN)
    assert (err is None) is succeeds
    assert existing.is_compatible(incoming, WELL_KNOWN) is succeeds


@pytest.mark.parametrize("existing,incoming,succeeds", COMPATIBLE_STRICT)
def test_strictly_compatible(existing: Requirements, incoming: Requirements, succeeds: bool) -> None:
    # upstream: requirements_test.go "should be strictly compatible"
    err = existing.compatible(incoming)
    assert (err is None) is succeeds
    assert existing.is_compatible(incoming) is succeeds


# --- Context("Error Messages") --------------------------------------------------------------


@pytest.mark.parametrize(
    "bad_label,expected",
    [
        # upstream: DescribeTable("should detect well known label truncations")
        ("zone", 'label "zone" does not have known values (typo of "topology.kubernetes.io/zone"?)'),
        ("region", 'label "region" does not have known values (typo of "topology.kubernetes.io/region"?)'),
        ("nodepool", 'label "nodepool" does not have known values (typo of "karpenter.sh/nodepool"?)'),
        ("instance-type", 'label "instance-type" does not have known values (typo of "node.kubernetes.io/instance-type"?)'),
        ("arch", 'label "arch" does not have known values (typo of "kubernetes.io/arch"?)'),
        ("capacity-type", 'label "capacity-type" does not have known values (typo of "karpenter.sh/capacity-type"?)'),
        # upstream: DescribeTable("should detect well known label typos")
        ("topology.kubernetesio/zone", 'label "topology.kubernetesio/zone" does not have known values (typo of "topology.kubernetes.io/zone"?)'),
        ("node.io/zone", 'label "node.io/zone" does not have known values (typo of "topology.kubernetes.io/zone"?)'),
        ("topology.kubernetes.io/regio", 'label "topology.kubernetes.io/regio" does not have known values (typo of "topology.kubernetes.io/region"?)'),
        ("node.kubernetes.io/region", 'label "node.kubernetes.io/region" does not have known values (typo of "topology.kubernetes.io/region"?)'),
        ("karpenter/nodepool", 'label "karpenter/nodepool" does not have known values (typo of "karpenter.sh/nodepool"?)'),
    ],
)
def test_well_known_label_typo_hints(bad_label: str, expected: str) -> None:
    req = Requirements(new(bad_label, "Exists"))
    assert Requirements().compatible(req, WELL_KNOWN) == expected
    assert not Requirements().is_compatible(req, WELL_KNOWN)


def test_unknown_label_error_message() -> None:
    # upstream: requirements_test.go "should display an error message for unknown labels"
    req = Requirements(new("deployment", "Exists"))
    assert Requirements().compatible(req) == 'label "deployment" does not have known values'


def test_typo_hint_deterministic_with_provider_labels() -> None:
    # karpy rule: an exact name-part match wins over other matches (Go: map order).
    well_known = WELL_KNOWN | {"topology.k8s.aws/zone-id"}
    assert label_hint(Requirements(), "zone", well_known) == ' (typo of "topology.kubernetes.io/zone"?)'
    # falls back to existing keys when no well-known label matches
    existing = Requirements(new("example.com/team", "In", "a"))
    assert label_hint(existing, "team", frozenset()) == ' (typo of "example.com/team"?)'
    assert label_hint(existing, "zzz", frozenset()) == ""


def test_compatible_reports_first_undefined_key_sorted() -> None:
    incoming = Requirements(new("b-custom", "In", "x"), new("a-custom", "Exists"))
    assert Requirements().compatible(incoming) == 'label "a-custom" does not have known values'


def test_compatible_allows_undefined_not_in_and_does_not_exist() -> None:
    incoming = Requirements(new("custom", "NotIn", "x"), new("other", "DoesNotExist"))
    assert Requirements().compatible(incoming) is None


def test_intersects_error_text_and_order() -> None:
    existing = Requirements(new("b", "In", "1"), new("a", "In", "x", "y"), new("c", "NotIn", "z"))
    incoming = Requirements(new("a", "In", "z"), new("b", "Gt", "5"), new("c", "DoesNotExist"))
    assert existing.intersects(incoming) == (
        "key a, a In [z] not in a In [x y]; key b, b Exists >=6 not in b In [1]"
    )
    assert not existing.is_compatible(incoming)


def test_intersects_not_in_vs_does_not_exist_is_fine() -> None:
    # NotIn/DoesNotExist vs NotIn/DoesNotExist is accepted even without overlap.
    existing = Requirements(new("k", "DoesNotExist"))
    incoming = Requirements(new("k", "NotIn", "a"))
    assert not existing["k"].has_intersection(incoming["k"])
    assert existing.intersects(incoming) is None
    assert incoming.intersects(existing) is None


def test_intersects_ignores_disjoint_keys_regardless_of_sizes() -> None:
    small = Requirements(new("a", "In", "1"))
    large = Requirements(new("b", "In", "2"), new("c", "In", "3"), new("a", "In", "1", "2"))
    assert small.intersects(large) is None and large.intersects(small) is None
    assert Requirements(new("a", "In", "9")).intersects(large) == "key a, a In [1 2] not in a In [9]"
    assert large.intersects(Requirements(new("a", "In", "9"))) == "key a, a In [9] not in a In [1 2]"


# --- Context("NodeSelectorRequirements Conversion") -----------------------------------------

_CONVERSION_INPUT = [
    ("exists", "Exists", ()),
    ("doesNotExist", "DoesNotExist", ()),
    ("inA", "In", ("A",)),
    ("inB", "In", ("B",)),
    ("inAB", "In", ("A", "B")),
    ("notInA", "NotIn", ("A",)),
    ("in1", "In", ("1",)),
    ("in9", "In", ("9",)),
    ("in19", "In", ("1", "9")),
    ("notIn12", "NotIn", ("1", "2")),
    ("greaterThan1", "Gt", ("1",)),
    ("greaterThan9", "Gt", ("9",)),
    ("lessThan1", "Lt", ("1",)),
    ("lessThan9", "Lt", ("9",)),
]
_CONVERSION_EXPECTED = [
    ("exists", "Exists", []),
    ("doesNotExist", "DoesNotExist", []),
    ("inA", "In", ["A"]),
    ("inB", "In", ["B"]),
    ("inAB", "In", ["A", "B"]),
    ("notInA", "NotIn", ["A"]),
    ("in1", "In", ["1"]),
    ("in9", "In", ["9"]),
    ("in19", "In", ["1", "9"]),
    ("notIn12", "NotIn", ["1", "2"]),
    ("greaterThan1", "Gte", ["2"]),
    ("greaterThan9", "Gte", ["10"]),
    ("lessThan1", "Lte", ["0"]),
    ("lessThan9", "Lte", ["8"]),
]
_FLEX_MIN_VALUES = [3, 2, 1, 1, 2, 1, 1, 1, 2, 2, 1, 1, 1, 1]


def _nsr_tuples(reqs: Requirements) -> list[tuple[Any, ...]]:
    return [(n.key, n.operator, list(n.values), n.min_values) for n in reqs.node_selector_requirements()]


def test_node_selector_requirements_conversion() -> None:
    # upstream: "should convert combinations of labels to expected NodeSelectorRequirements"
    reqs = Requirements(*(Requirement(k, op, vals) for k, op, vals in _CONVERSION_INPUT))
    got = _nsr_tuples(reqs)
    assert len(got) == 14
    assert sorted(got) == sorted((k, op, vals, None) for k, op, vals in _CONVERSION_EXPECTED)
    assert all(isinstance(n, NodeSelectorRequirement) for n in reqs.node_selector_requirements())


def test_node_selector_requirements_conversion_with_flexibility() -> None:
    # upstream: "should convert combinations of labels with flexiblity to expected NodeSelectorRequirements"
    reqs = Requirements(
        *(Requirement(k, op, vals, mv) for (k, op, vals), mv in zip(_CONVERSION_INPUT, _FLEX_MIN_VALUES))
    )
    got = _nsr_tuples(reqs)
    assert len(got) == 14
    assert sorted(got) == sorted((k, op, vals, mv) for (k, op, vals), mv in zip(_CONVERSION_EXPECTED, _FLEX_MIN_VALUES))
    assert reqs.has_min_values()


def test_node_selector_requirements_both_bounds() -> None:
    # upstream: "should return both Gte and Lte requirements when both bounds exist"
    reqs = Requirements(new("cpu", "Gte", "8"), new("cpu", "Lte", "8"))
    assert _nsr_tuples(reqs) == [("cpu", "Gte", ["8"], None), ("cpu", "Lte", ["8"], None)]


def test_round_trip_through_node_selector_requirements() -> None:
    reqs = Requirements(*(Requirement(k, op, vals) for k, op, vals in _CONVERSION_INPUT), new("cpu", "Gt", "1"), new("cpu", "Lt", "9"))
    assert Requirements.from_node_selector_requirements(reqs.node_selector_requirements()) == reqs


# --- Context("Stringify Requirements") ------------------------------------------------------


def test_stringify_requirements() -> None:
    # upstream: requirements_test.go "should print Requirements in the same order"
    reqs = Requirements(*(Requirement(k, op, vals) for k, op, vals in _CONVERSION_INPUT))
    assert str(reqs) == (
        "doesNotExist DoesNotExist, exists Exists, greaterThan1 Exists >=2, greaterThan9 Exists >=10, "
        "in1 In [1], in19 In [1 9], in9 In [9], inA In [A], inAB In [A B], inB In [B], lessThan1 Exists <=0, "
        "lessThan9 Exists <=8, notIn12 NotIn [1 2], notInA NotIn [A]"
    )


def test_stringify_excludes_hostname() -> None:
    reqs = Requirements(new(LABEL_HOSTNAME, "In", "h"), new("a", "In", "b"))
    assert str(reqs) == "a In [b]"


# --- mapping behaviour ------------------------------------------------------------------------


def test_add_intersects_and_get_defaults_to_exists() -> None:
    reqs = Requirements(new("k", "In", "a", "b"))
    reqs.add(new("k", "NotIn", "a"), new("j", "Exists"))
    assert reqs["k"] == new("k", "In", "b")
    assert reqs.get("missing") == new("missing", "Exists")
    assert not reqs.has("missing") and reqs.has("j")
    assert list(reqs.keys()) == ["k", "j"]


def test_copy_is_independent() -> None:
    reqs = Requirements(new("k", "In", "a", "b"))
    for c in (reqs.copy(), copy.copy(reqs), copy.deepcopy(reqs), pickle.loads(pickle.dumps(reqs))):
        assert isinstance(c, Requirements) and c == reqs
        c.add(new("k", "In", "a"))
        assert reqs["k"].values == frozenset({"a", "b"})


def test_from_labels_and_labels() -> None:
    reqs = Requirements.from_labels({"a": "1", LABEL_HOSTNAME: "h", LABEL_ZONE: "z"})
    assert reqs["a"] == new("a", "In", "1")
    reqs.add(new("e", "Exists"), new("d", "DoesNotExist"))
    assert reqs.labels(exclude=WELL_KNOWN) == {"a": "1", "e": "0"}


def test_has_min_values() -> None:
    assert not Requirements(new("k", "In", "a")).has_min_values()
    assert Requirements(Requirement("k", "In", ["a"], 1)).has_min_values()


# --- NewPodRequirements -----------------------------------------------------------------------


def _pod(spec: dict[str, Any]) -> Pod:
    return Pod.model_validate({"metadata": {"name": "p"}, "spec": spec})


def _term(*exprs: tuple[str, str, list[str]]) -> dict[str, Any]:
    return {"matchExpressions": [{"key": k, "operator": op, "values": v} for k, op, v in exprs]}


def test_pod_requirements_node_selector_only() -> None:
    pod = _pod({"nodeSelector": {"a": "1"}})
    assert pod_requirements(pod) == Requirements(new("a", "In", "1"))
    assert strict_pod_requirements(pod) == Requirements(new("a", "In", "1"))
    assert not has_preferred_node_affinity(pod)


def test_pod_requirements_heaviest_preference_and_first_required_term() -> None:
    pod = _pod(
        {
            "nodeSelector": {"a": "1"},
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [_term(("b", "In", ["x", "y"])), _term(("c", "In", ["never"]))]
                    },
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 10, "preference": _term(("p", "In", ["light"]))},
                        {"weight": 50, "preference": _term(("p", "In", ["heavy"]), ("b", "In", ["y", "z"]))},
                        {"weight": 50, "preference": _term(("p", "In", ["tie-second"]))},
                    ],
                }
            },
        }
    )
    reqs = pod_requirements(pod)
    assert reqs == Requirements(new("a", "In", "1"), new("p", "In", "heavy"), new("b", "In", "y"))
    assert "c" not in reqs
    strict = strict_pod_requirements(pod)
    assert strict == Requirements(new("a", "In", "1"), new("b", "In", "x", "y"))
    assert has_preferred_node_affinity(pod)
    # the pod's preference list is not reordered
    prefs = pod.spec.affinity.node_affinity.preferred_during_scheduling_ignored_during_execution  # type: ignore[union-attr]
    assert [p.weight for p in prefs] == [10, 50, 50]


def test_pod_requirements_ignore_match_fields_and_min_values() -> None:
    pod = _pod(
        {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [{"key": "k", "operator": "Gt", "values": ["3"], "minValues": 2}],
                                "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}],
                            }
                        ]
                    }
                }
            }
        }
    )
    reqs = pod_requirements(pod)
    assert list(reqs.keys()) == ["k"]
    assert reqs["k"] == new("k", "Gte", "4")
    assert reqs["k"].min_values is None  # NewNodeSelectorRequirements ignores minValues
