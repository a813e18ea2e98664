"""Tests for karpy.scheduling.labels: pkg/apis/v1/labels.go and nodeclaim_validation.go
ValidateRequirement. Ports the RuntimeValidate requirement cases of
pkg/apis/v1/nodepool_validation_cel_test.go (Context("Requirements")) at the ValidateRequirement
level, and pins the exact upstream error texts."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from karpy.scheduling.labels import (
    CORE_WELL_KNOWN_LABELS,
    LABEL_ARCH,
    LABEL_CAPACITY_TYPE,
    LABEL_HOSTNAME,
    LABEL_INSTANCE_TYPE,
    LABEL_NODEPOOL,
    LABEL_OS,
    LABEL_REGION,
    LABEL_WINDOWS_BUILD,
    LABEL_ZONE,
    NODE_INITIALIZED,
    NODE_REGISTERED,
    RESTRICTED_LABEL_DOMAINS,
    RESTRICTED_LABELS,
    get_label_domain,
    go_atoi,
    has_known_values,
    is_qualified_name,
    is_restricted_label,
    is_valid_label_value,
    normalize_key,
    validate_requirement,
)

WK = CORE_WELL_KNOWN_LABELS
WK_LIST = (
    "[karpenter.sh/capacity-type karpenter.sh/nodepool kubernetes.io/arch kubernetes.io/os "
    "node.kubernetes.io/instance-type node.kubernetes.io/windows-build topology.kubernetes.io/region "
    "topology.kubernetes.io/zone]"
)


@dataclass
class NSR:
    key: str
    operator: str
    values: list[str] = field(default_factory=list)
    min_values: int | None = None


def test_constants() -> None:
    # upstream: pkg/apis/v1/labels.go WellKnownLabels / RestrictedLabels / RestrictedLabelDomains
    assert WK == {
        LABEL_NODEPOOL, LABEL_ZONE, LABEL_REGION, LABEL_INSTANCE_TYPE, LABEL_ARCH, LABEL_OS,
        LABEL_CAPACITY_TYPE, LABEL_WINDOWS_BUILD,
    }
    assert RESTRICTED_LABELS == {"kubernetes.io/hostname"} and LABEL_HOSTNAME == "kubernetes.io/hostname"
    assert RESTRICTED_LABEL_DOMAINS == {"karpenter.sh"}
    assert (NODE_REGISTERED, NODE_INITIALIZED) == ("karpenter.sh/registered", "karpenter.sh/initialized")
    assert LABEL_CAPACITY_TYPE == "karpenter.sh/capacity-type" and LABEL_NODEPOOL == "karpenter.sh/nodepool"


@pytest.mark.parametrize(
    "key,expected",
    [
        ("failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone"),
        ("failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region"),
        ("beta.kubernetes.io/arch", "kubernetes.io/arch"),
        ("beta.kubernetes.io/os", "kubernetes.io/os"),
        ("beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type"),
        ("topology.kubernetes.io/zone", "topology.kubernetes.io/zone"),
        ("custom", "custom"),
    ],
)
def test_normalize_key(key: str, expected: str) -> None:
    # upstream: labels.go NormalizedLabels
    assert normalize_key(key) == expected


@pytest.mark.parametrize("key,domain", [("a.b/c", "a.b"), ("c", ""), ("a/b/c", "a"), ("/x", "")])
def test_get_label_domain(key: str, domain: str) -> None:
    assert get_label_domain(key) == domain


@pytest.mark.parametrize(
    "key,restricted",
    [
        ("karpenter.sh/test", True),  # "should fail for restricted domains"
        ("sub.karpenter.sh/test", True),
        ("notkarpenter.sh/test", False),
        ("kubernetes.io/hostname", True),
        ("kubernetes.io/test", False),  # "should allow kubernetes domains"
        ("k8s.io/test", False),
        ("subdomain.kubernetes.io/test", False),  # "should allow kubernetes subdomains exceptions"
        ("subdomain.k8s.io/test", False),
        ("karpenter.sh/nodepool", False),  # well-known wins
        ("karpenter.sh/capacity-type", False),
        ("karpenter.sh/registered", True),
        ("custom", False),
    ],
)
def test_is_restricted_label(key: str, restricted: bool) -> None:
    # upstream: labels.go IsRestrictedLabel
    err = is_restricted_label(key, WK)
    assert (err is not None) is restricted
    if restricted:
        assert err == (
            f"using label {key} is not allowed as it might interfere with the internal provisioning logic; "
            f"specify a well known label: {WK_LIST}, or a custom label that does not use a restricted domain: "
            "[karpenter.sh]"
        )


def test_is_restricted_label_respects_provider_well_known() -> None:
    assert is_restricted_label("karpenter.sh/extra", WK) is not None
    assert is_restricted_label("karpenter.sh/extra", WK | {"karpenter.sh/extra"}) is None


def test_has_known_values() -> None:
    assert has_known_values(LABEL_CAPACITY_TYPE, ["spot", "x"], WK) is None
    assert has_known_values("custom", ["x"], WK) is None
    assert has_known_values(LABEL_CAPACITY_TYPE, ["x"], WK) == (
        "invalid values: [x] for key: karpenter.sh/capacity-type, expected one of: [on-demand reserved spot]"
    )


_NAME_REGEX = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
_PREFIX_REGEX = "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"


@pytest.mark.parametrize(
    "key,errors",
    [
        # nodepool_validation_cel_test.go "should succeed for valid requirement keys"
        ("Test", []),
        ("test.com/Test", []),
        ("test.com.com/test", []),
        ("key-only", []),
        # "should fail for invalid requirement keys"
        ("test.com.com}", [_NAME_REGEX]),
        ("Test.com/test", [_PREFIX_REGEX]),
        ("test/test/test", [
            "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]),
        ("test/", ["name part must be non-empty", _NAME_REGEX]),
        ("/test", ["prefix part must be non-empty"]),
        # "should fail at runtime for requirement keys that are too long"
        ("test.com.test/test-" + "a" * 250, ["name part must be no more than 63 bytes"]),
        ("test.com.test." + "a" * 250 + "/test", ["prefix part must be no more than 253 bytes"]),
        ("a\n", [_NAME_REGEX]),  # Go's $ does not match before a trailing newline
    ],
)
def test_is_qualified_name(key: str, errors: list[str]) -> None:
    # apimachinery content.IsLabelKey
    assert is_qualified_name(key) == errors


@pytest.mark.parametrize(
    "value,ok",
    [("", True), ("a", True), ("my_value", True), ("12345", True), ("-a", False), ("a-", False), ("a b", False),
     ("a" * 63, True), ("a" * 64, False), ("é", False)],
)
def test_is_valid_label_value(value: str, ok: bool) -> None:
    assert (is_valid_label_value(value) == []) is ok


_VALUE_REGEX = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def test_label_value_error_text() -> None:
    assert is_valid_label_value("a" * 64) == ["must be no more than 63 bytes"]
    assert is_valid_label_value("-") == [
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
        "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    ]


@pytest.mark.parametrize(
    "s,expected",
    [("1", (1, True)), ("-1", (-1, True)), ("+7", (7, True)), ("a", (0, False)), (" 1", (0, False)),
     ("1_000", (0, False)), ("99999999999999999999", ((1 << 63) - 1, False)),
     ("-99999999999999999999", (-(1 << 63), False))],
)
def test_go_atoi(s: str, expected: tuple[int, bool]) -> None:
    assert go_atoi(s) == expected


# --- ValidateRequirement --------------------------------------------------------------------


@pytest.mark.parametrize(
    "req",
    [
        # nodepool_validation_cel_test.go "should allow supported ops"
        NSR(LABEL_ZONE, "In", ["test"]),
        NSR(LABEL_ZONE, "Gt", ["1"]),
        NSR(LABEL_ZONE, "Lt", ["1"]),
        NSR(LABEL_ZONE, "NotIn"),
        NSR(LABEL_ZONE, "Exists"),
        NSR(LABEL_ZONE, "Gte", ["0"]),
        NSR(LABEL_ZONE, "Lte", ["10"]),
        # "should allow kubernetes domains" / "... subdomains exceptions"
        NSR("kubernetes.io/test", "In", ["test"]),
        NSR("k8s.io/test", "In", ["test"]),
        NSR("subdomain.kubernetes.io/test", "In", ["test"]),
        NSR("subdomain.k8s.io/test", "In", ["test"]),
        # "should allow well known label exceptions"
        *[NSR(label, "In", ["test"]) for label in sorted(WK - {LABEL_NODEPOOL, LABEL_CAPACITY_TYPE})],
        # "should allow more than 50 values if minValues is not specified."
        NSR(LABEL_INSTANCE_TYPE, "In", [f"instance{i}" for i in range(90)]),
        NSR(LABEL_CAPACITY_TYPE, "In", ["spot", "bogus"]),
        NSR("failure-domain.beta.kubernetes.io/zone", "In", ["a"]),
    ],
    ids=lambda r: f"{r.key}-{r.operator}",
)
def test_validate_requirement_ok(req: NSR) -> None:
    assert validate_requirement(req, WK) is None


@pytest.mark.parametrize(
    "req,expected",
    [
        # "should fail for unsupported ops"
        (NSR(LABEL_ZONE, "unknown", ["test"]),
         "key topology.kubernetes.io/zone has an unsupported operator unknown not in [DoesNotExist Exists Gt Gte In Lt Lte NotIn]"),
        # "should fail with invalid GT or LT values" / "... GTE or LTE values"
        *[
            (NSR(LABEL_ZONE, op, vals), f"key topology.kubernetes.io/zone with operator {op} must have a single positive integer value")
            for op in ("Gt", "Lt", "Gte", "Lte")
            for vals in ([], ["1", "2"], ["a"])
        ],
        *[
            (NSR(LABEL_ZONE, op, ["-1"]),
             "invalid value -1 for key topology.kubernetes.io/zone, " + _VALUE_REGEX
             + f"; key topology.kubernetes.io/zone with operator {op} must have a single positive integer value")
            for op in ("Gt", "Lt", "Gte", "Lte")
        ],
        # "should error when minValues is greater than the number of unique values specified within In operator"
        (NSR(LABEL_INSTANCE_TYPE, "In", ["insance-type-1"], 2),
         "key node.kubernetes.io/instance-type with operator In must have at least minimum number of values defined in 'values' field"),
        (NSR("custom", "In", []), "key custom with operator In must have a value defined"),
        (NSR("custom", "In", ["a b"]),
         "invalid value a b for key custom, a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
        (NSR(LABEL_CAPACITY_TYPE, "In", ["bogus"]),
         "no valid values found in [bogus] for karpenter.sh/capacity-type, expected one of: map[on-demand:{} reserved:{} spot:{}], got: [bogus]"),
        (NSR(LABEL_CAPACITY_TYPE, "In", ["spot", "bogus"], 2),
         "not enough valid values found in [spot bogus] for karpenter.sh/capacity-type, expected at least 2 valid values from: [on-demand reserved spot], got: 1"),
    ],
)
def test_validate_requirement_errors(req: NSR, expected: str) -> None:
    assert validate_requirement(req, WK) == expected


def test_validate_requirement_restricted_and_order_of_checks() -> None:
    # "should fail for restricted domains" / "should fail for restricted labels"; errors are joined
    # with "; " in upstream's order: operator, restricted, known values, qualified name, values,
    # In-without-values, minValues, numeric.
    err = validate_requirement(NSR("karpenter.sh/test", "In", ["test"]), WK)
    assert err == is_restricted_label("karpenter.sh/test", WK)
    err = validate_requirement(NSR("kubernetes.io/hostname/test", "In", ["test"]), WK)
    assert err is not None and err.startswith("key kubernetes.io/hostname/test is not a qualified name, a valid label key")
    err = validate_requirement(NSR("karpenter.sh/x}", "Bad", ["-"]), WK)
    assert err is not None
    # the restricted-label message itself contains "; ", so check the order by position
    idx = [
        err.index("key karpenter.sh/x} has an unsupported operator Bad not in [DoesNotExist Exists Gt Gte In Lt Lte NotIn]"),
        err.index("; using label karpenter.sh/x} is not allowed"),
        err.index("; key karpenter.sh/x} is not a qualified name, name part must consist"),
        err.index("; invalid value - for key karpenter.sh/x}, a valid label"),
    ]
    assert idx == sorted(idx) and idx[0] == 0
    assert err.count("; ") == 4
