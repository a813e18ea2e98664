"""Well-known / restricted labels, key normalisation and requirement validation.

Mirrors pkg/apis/v1/labels.go and pkg/apis/v1/nodeclaim_validation.go (ValidateRequirement) of
Karpenter core, plus the label-key / label-value checks of k8s.io/apimachinery
(pkg/api/validate/content/kube.go IsLabelKey / IsLabelValue, dns.go IsDNS1123Subdomain; implemented
once in :mod:`karpy.validation`).

Upstream keeps ``v1.WellKnownLabels`` as a global set that cloud providers mutate at init time.
karpy has no global registry: every function that depends on the provider's extra well-known
labels takes a ``well_known: frozenset[str]`` argument (``CORE_WELL_KNOWN_LABELS | provider``).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from karpy.validation import is_label_key, is_label_value

# --- Kubernetes core labels (k8s.io/api/core/v1 well_known_labels.go) -------------------------
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_FAILURE_DOMAIN_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_FAILURE_DOMAIN_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
LABEL_INSTANCE_TYPE = "node.kubernetes.io/instance-type"
LABEL_INSTANCE_TYPE_BETA = "beta.kubernetes.io/instance-type"
LABEL_ARCH = "kubernetes.io/arch"
LABEL_ARCH_BETA = "beta.kubernetes.io/arch"
LABEL_OS = "kubernetes.io/os"
LABEL_OS_BETA = "beta.kubernetes.io/os"
LABEL_WINDOWS_BUILD = "node.kubernetes.io/windows-build"
# Aliases named after the upstream Go constants.
LABEL_TOPOLOGY_ZONE = LABEL_ZONE
LABEL_TOPOLOGY_REGION = LABEL_REGION
LABEL_INSTANCE_TYPE_STABLE = LABEL_INSTANCE_TYPE
LABEL_ARCH_STABLE = LABEL_ARCH
LABEL_OS_STABLE = LABEL_OS

# --- Karpenter (pkg/apis/apis.go, pkg/apis/v1/labels.go) --------------------------------------
GROUP = "karpenter.sh"
COMPATIBILITY_GROUP = "compatibility." + GROUP

ARCHITECTURE_AMD64 = "amd64"
ARCHITECTURE_ARM64 = "arm64"
CAPACITY_TYPE_SPOT = "spot"
CAPACITY_TYPE_ON_DEMAND = "on-demand"
CAPACITY_TYPE_RESERVED = "reserved"

LABEL_NODEPOOL = GROUP + "/nodepool"
NODE_INITIALIZED = GROUP + "/initialized"
NODE_REGISTERED = GROUP + "/registered"
NODE_DO_NOT_SYNC_TAINTS = GROUP + "/do-not-sync-taints"
LABEL_CAPACITY_TYPE = GROUP + "/capacity-type"
# Upstream Go names.
NODEPOOL_LABEL_KEY = LABEL_NODEPOOL
NODE_INITIALIZED_LABEL_KEY = NODE_INITIALIZED
NODE_REGISTERED_LABEL_KEY = NODE_REGISTERED
CAPACITY_TYPE_LABEL_KEY = LABEL_CAPACITY_TYPE

DO_NOT_DISRUPT_ANNOTATION_KEY = GROUP + "/do-not-disrupt"
PROVIDER_COMPATIBILITY_ANNOTATION_KEY = COMPATIBILITY_GROUP + "/provider"
NODEPOOL_HASH_ANNOTATION_KEY = GROUP + "/nodepool-hash"
NODEPOOL_HASH_VERSION_ANNOTATION_KEY = GROUP + "/nodepool-hash-version"
NODECLAIM_TERMINATION_TIMESTAMP_ANNOTATION_KEY = GROUP + "/nodeclaim-termination-timestamp"
NODECLAIM_MIN_VALUES_RELAXED_ANNOTATION_KEY = GROUP + "/nodeclaim-min-values-relaxed"
DRA_DRIVERS_ANNOTATION_KEY = GROUP + "/requested-dra-drivers"
TERMINATION_FINALIZER = GROUP + "/termination"

# Node selector operators (k8s core + pkg/apis/v1/nodeclaim.go Gte/Lte).
OP_IN = "In"
OP_NOT_IN = "NotIn"
OP_EXISTS = "Exists"
OP_DOES_NOT_EXIST = "DoesNotExist"
OP_GT = "Gt"
OP_LT = "Lt"
OP_GTE = "Gte"
OP_LTE = "Lte"

#: RestrictedLabelDomains (labels.go) are reserved by karpenter.
RESTRICTED_LABEL_DOMAINS: frozenset[str] = frozenset({GROUP})

#: WellKnownLabels (labels.go) before any cloud provider extends it.
CORE_WELL_KNOWN_LABELS: frozenset[str] = frozenset(
    {
        LABEL_NODEPOOL,
        LABEL_ZONE,
        LABEL_REGION,
        LABEL_INSTANCE_TYPE,
        LABEL_ARCH,
        LABEL_OS,
        LABEL_CAPACITY_TYPE,
        LABEL_WINDOWS_BUILD,
    }
)

#: WellKnownResources (labels.go).
WELL_KNOWN_RESOURCES: frozenset[str] = frozenset({"cpu", "memory", "ephemeral-storage", "pods"})

#: WellKnownValuesForRequirements (labels.go).
WELL_KNOWN_VALUES_FOR_REQUIREMENTS: Mapping[str, frozenset[str]] = {
    LABEL_CAPACITY_TYPE: frozenset({CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT, CAPACITY_TYPE_RESERVED}),
}

#: WellKnownLabelsForOfferings (labels.go).
WELL_KNOWN_LABELS_FOR_OFFERINGS: frozenset[str] = frozenset({LABEL_ZONE, LABEL_CAPACITY_TYPE})

#: RestrictedLabels (labels.go): labels that would interfere with provisioning.
RESTRICTED_LABELS: frozenset[str] = frozenset({LABEL_HOSTNAME})

#: NormalizedLabels (labels.go): aliased (beta) keys -> the well-known key. A dict: a cloud provider
#: adds its aliases at start-up (:func:`register_normalized_labels`).
NORMALIZED_LABELS: dict[str, str] = {
    LABEL_FAILURE_DOMAIN_BETA_ZONE: LABEL_ZONE,
    LABEL_ARCH_BETA: LABEL_ARCH,
    LABEL_OS_BETA: LABEL_OS,
    LABEL_INSTANCE_TYPE_BETA: LABEL_INSTANCE_TYPE,
    LABEL_FAILURE_DOMAIN_BETA_REGION: LABEL_REGION,
}

#: SupportedNodeSelectorOps (nodeclaim_validation.go).
SUPPORTED_NODE_SELECTOR_OPS: frozenset[str] = frozenset(
    {OP_IN, OP_NOT_IN, OP_EXISTS, OP_DOES_NOT_EXIST, OP_GT, OP_LT, OP_GTE, OP_LTE}
)

_normalized_get = NORMALIZED_LABELS.get


def register_normalized_labels(aliases: Mapping[str, str]) -> None:
    """Add a cloud provider's label aliases to :data:`NORMALIZED_LABELS`, process-wide, as upstream's
    providers do at start-up (aws pkg/operator/operator.go init: ``lo.Assign(karpv1.NormalizedLabels,
    {"topology.ebs.csi.aws.com/zone": corev1.LabelTopologyZone})``). Idempotent; karpy applies a
    provider's ``NORMALIZED_LABELS`` (:func:`karpy.cloudprovider.registry.register_provider`)."""
    NORMALIZED_LABELS.update(aliases)


def normalize_key(key: str) -> str:
    """Return the well-known key for a beta alias (labels.go NormalizedLabels), else ``key``."""
    return _normalized_get(key, key)


def get_label_domain(key: str) -> str:
    """Mirrors labels.go GetLabelDomain: the part before the first '/', or ''."""
    domain, sep, _ = key.partition("/")
    return domain if sep else ""


def go_list(items: Iterable[Any]) -> str:
    """Format a Go slice the way ``fmt.Sprintf("%v", slice)`` does: ``[a b c]``."""
    return "[" + " ".join(str(i) for i in items) + "]"


def _go_set_map(items: Iterable[str]) -> str:
    """Format a Go ``sets.Set[string]`` with ``%v`` (a map, printed with sorted keys)."""
    return "map[" + " ".join(f"{i}:{{}}" for i in sorted(items)) + "]"


def _restricted_label_error(key: str, well_known: frozenset[str]) -> str:
    return (
        f"using label {key} is not allowed as it might interfere with the internal provisioning logic; "
        f"specify a well known label: {go_list(sorted(well_known))}, or a custom label that does not use "
        f"a restricted domain: {go_list(sorted(RESTRICTED_LABEL_DOMAINS))}"
    )


def is_restricted_label(key: str, well_known: frozenset[str]) -> str | None:
    """Mirrors labels.go IsRestrictedLabel: an error string if ``key`` is restricted, else None.

    ``well_known`` is the full well-known set (core + cloud provider).
    """
    if key in well_known:
        return None
    domain = get_label_domain(key)
    for restricted in sorted(RESTRICTED_LABEL_DOMAINS):
        if domain == restricted or domain.endswith("." + restricted):
            return _restricted_label_error(key, well_known)
    if key in RESTRICTED_LABELS:
        return _restricted_label_error(key, well_known)
    return None


def has_known_values(key: str, values: Iterable[str], well_known: frozenset[str]) -> str | None:
    """Mirrors labels.go HasKnownValues (unused upstream, kept for completeness).

    Go prints ``UnsortedList()`` (random order); we print the known values sorted.
    """
    if key not in well_known:
        return None
    vals = list(values)
    known = WELL_KNOWN_VALUES_FOR_REQUIREMENTS.get(key, frozenset())
    if not any(v in known for v in vals):
        return f"invalid values: {go_list(vals)} for key: {key}, expected one of: {go_list(sorted(known))}"
    return None


# --- k8s.io/apimachinery label key / value validation (content.IsLabelKey / IsLabelValue) ----------
#: ``validation.IsQualifiedName`` (content.IsLabelKey since apimachinery v0.35)
is_qualified_name = is_label_key
#: ``validation.IsValidLabelValue`` (content.IsLabelValue)
is_valid_label_value = is_label_value


_GO_INT_RE = re.compile(r"[+-]?[0-9]+")
_MAX_INT64 = (1 << 63) - 1
_MIN_INT64 = -(1 << 63)


def go_atoi(s: str) -> tuple[int, bool]:
    """Go ``strconv.Atoi`` on a 64-bit platform: ``(value, ok)``.

    Syntax errors give ``(0, False)``; out-of-range values give the clamped value and False.
    """
    if not _GO_INT_RE.fullmatch(s):
        return 0, False
    v = int(s)
    if v > _MAX_INT64:
        return _MAX_INT64, False
    if v < _MIN_INT64:
        return _MIN_INT64, False
    return v, True


def _validate_well_known_values(key: str, operator: str, values: list[str], min_values: int | None,
                                well_known: frozenset[str]) -> str | None:
    """Mirrors nodeclaim_validation.go validateWellKnownValues (the log line is dropped)."""
    if key not in well_known or operator != OP_IN:
        return None
    known = WELL_KNOWN_VALUES_FOR_REQUIREMENTS.get(key)
    if known is None:
        return None
    valid = [v for v in values if v in known]
    invalid = [v for v in values if v not in known]
    if not valid:
        return (
            f"no valid values found in {go_list(values)} for {key}, expected one of: {_go_set_map(known)}, "
            f"got: {go_list(invalid)}"
        )
    if min_values is not None and len(valid) < min_values:
        return (
            f"not enough valid values found in {go_list(values)} for {key}, expected at least {min_values} "
            f"valid values from: {go_list(sorted(known))}, got: {len(valid)}"
        )
    return None


def validate_requirement(req: Any, well_known: frozenset[str]) -> str | None:
    """Mirrors nodeclaim_validation.go ValidateRequirement; errors joined with "; " (multierr).

    ``req`` is duck-typed: ``key``, ``operator``, ``values`` and optional ``min_values``.
    Deterministic rule: Go prints ``SupportedNodeSelectorOps.UnsortedList()`` and
    ``knownValues.UnsortedList()`` in random order; we print them sorted.
    """
    key: str = normalize_key(req.key)
    operator: str = str(req.operator)
    values: list[str] = list(req.values or ())
    min_values: int | None = getattr(req, "min_values", None)
    errs: list[str] = []
    if operator not in SUPPORTED_NODE_SELECTOR_OPS:
        errs.append(
            f"key {key} has an unsupported operator {operator} not in {go_list(sorted(SUPPORTED_NODE_SELECTOR_OPS))}"
        )
    e = is_restricted_label(key, well_known)
    if e is not None:
        errs.append(e)
    e = _validate_well_known_values(key, operator, values, min_values, well_known)
    if e is not None:
        errs.append(e)
    for msg in is_qualified_name(key):
        errs.append(f"key {key} is not a qualified name, {msg}")
    for value in values:
        for msg in is_valid_label_value(value):
            errs.append(f"invalid value {value} for key {key}, {msg}")
    if operator == OP_IN and not values:
        errs.append(f"key {key} with operator {operator} must have a value defined")
    if operator == OP_IN and min_values is not None and len(values) < min_values:
        errs.append(
            f"key {key} with operator {operator} must have at least minimum number of values defined in 'values' field"
        )
    if operator in (OP_GT, OP_LT, OP_GTE, OP_LTE):
        bad = len(values) != 1
        if not bad:
            number, ok = go_atoi(values[0])
            bad = not ok or number < 0
        if bad:
            errs.append(f"key {key} with operator {operator} must have a single positive integer value")
    return "; ".join(errs) if errs else None
