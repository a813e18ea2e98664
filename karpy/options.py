"""Karpenter's operator options: the one settings object every layer reads.

Mirrors pkg/operator/options/options.go (``Options``, ``FeatureGates``) -- upstream hands it to
every controller through ``options.FromContext(ctx)``; karpy passes this frozen value explicitly:
the simulation builds one from ``karpy.simulate(...)``'s arguments and hands the same object to the
provisioner, the scheduler and the cloud provider (``ProviderOptions.options``), so a policy such
as ``min_values_policy="BestEffort"`` reaches the provider's launch path as well as Solve.

Only the options that change a scheduling decision are modelled; their defaults are upstream's
flag defaults. ``--ignore-dra-requests`` is fixed at its default (true): pods with resource claims
get upstream's DRA error and DaemonSet pods with claims are not overhead; karpy has no DRA device
allocator for the ``false`` setting.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from karpy._errors import KarpyError
from karpy.featuregates import parse_feature_gates
from karpy.featuregates import resolve as resolve_gates
from karpy.featuregates import split_gates

__all__ = [
    "MIN_VALUES_POLICIES",
    "MIN_VALUES_POLICY_BEST_EFFORT",
    "MIN_VALUES_POLICY_STRICT",
    "PREFERENCE_POLICIES",
    "PREFERENCE_POLICY_IGNORE",
    "PREFERENCE_POLICY_RESPECT",
    "FeatureGates",
    "Options",
    "SchedulerConfigError",
    "SchedulerConfiguration",
    "parse_scheduler_config",
]

PREFERENCE_POLICY_RESPECT = "Respect"
PREFERENCE_POLICY_IGNORE = "Ignore"
PREFERENCE_POLICIES = (PREFERENCE_POLICY_RESPECT, PREFERENCE_POLICY_IGNORE)
MIN_VALUES_POLICY_STRICT = "Strict"
MIN_VALUES_POLICY_BEST_EFFORT = "BestEffort"
MIN_VALUES_POLICIES = (MIN_VALUES_POLICY_STRICT, MIN_VALUES_POLICY_BEST_EFFORT)



@dataclass(frozen=True)
class FeatureGates:
    """options.go FeatureGates with upstream's defaults (``ReservedCapacity`` on), as typed fields
    over :mod:`karpy.featuregates` (the names, defaults and parsing)."""

    node_repair: bool = False
    reserved_capacity: bool = True
    spot_to_spot_consolidation: bool = False
    node_overlay: bool = False
    static_capacity: bool = False
    capacity_buffer: bool = False

    @classmethod
    def from_mapping(cls, gates: Mapping[str, bool] | None = None) -> FeatureGates:
        """The gates of :mod:`karpy.featuregates` (upstream names, ``Name -> bool`` over the defaults)."""
        return cls(**{_GATE_FIELDS[name]: value for name, value in resolve_gates(gates).items()})

    def to_mapping(self) -> dict[str, bool]:
        """The gates by upstream name (the inverse of :meth:`from_mapping`)."""
        return {name: getattr(self, attr) for name, attr in _GATE_FIELDS.items()}

    @classmethod
    def parse(cls, text: str) -> FeatureGates:
        """``"ReservedCapacity=false,NodeOverlay=true"`` over the defaults (options.go ParseFeatureGates).
        An unknown gate or a value other than true/false raises ``ValueError``."""
        karpenter = split_gates(parse_feature_gates(text))[0]  # kube-scheduler's gates go elsewhere
        return cls.from_mapping({k: bool(v) for k, v in karpenter.items()})


#: upstream gate name -> :class:`FeatureGates` field
_GATE_FIELDS = {"NodeRepair": "node_repair", "ReservedCapacity": "reserved_capacity",
                "SpotToSpotConsolidation": "spot_to_spot_consolidation", "NodeOverlay": "node_overlay",
                "StaticCapacity": "static_capacity", "CapacityBuffer": "capacity_buffer"}


class SchedulerConfigError(KarpyError, ValueError):
    """A ``--scheduler-config`` document upstream's ParseSchedulerConfiguration would reject."""


@dataclass(frozen=True)
class SchedulerConfiguration:
    """options.go SchedulerConfiguration: the parts of the cluster's kube-scheduler config Karpenter
    mirrors -- ``podTopologySpread.defaultConstraints`` (TopologySpreadConstraint models, no
    selector: one is deduced per pod, see karpy.provisioning.defaultconstraints)."""

    default_constraints: tuple[Any, ...] = ()


def parse_scheduler_config(raw: str | None) -> SchedulerConfiguration | None:
    """options.go ParseSchedulerConfiguration + Validate: YAML or JSON; empty = None (no
    overrides); unknown fields, malformed documents and constraints kube-scheduler's
    ValidatePodTopologySpreadArgs rejects raise :class:`SchedulerConfigError`."""
    import yaml
    from pydantic import ValidationError

    from karpy.api.pod import TopologySpreadConstraint
    from karpy.scheduling.labels import is_qualified_name

    if not raw:
        return None
    try:
        doc = yaml.safe_load(raw)
    except yaml.YAMLError as e:
        raise SchedulerConfigError(f"decoding scheduler config, {' '.join(str(e).split())}") from None
    if doc is None:
        return None
    if not isinstance(doc, dict) or set(doc) - {"podTopologySpread"}:
        unknown = sorted(set(doc) - {"podTopologySpread"}) if isinstance(doc, dict) else [type(doc).__name__]
        raise SchedulerConfigError(f'decoding scheduler config, unknown field "{unknown[0]}"')
    pts = doc.get("podTopologySpread") or {}
    if not isinstance(pts, dict) or set(pts) - {"defaultConstraints"}:
        raise SchedulerConfigError("decoding scheduler config, unknown field in podTopologySpread")
    out = []
    raws = pts.get("defaultConstraints") or []
    for i, c in enumerate(raws):
        where = f"validating scheduler config, podTopologySpread.defaultConstraints[{i}]"
        if not isinstance(c, dict):
            raise SchedulerConfigError(f"decoding scheduler config, defaultConstraints[{i}] is not an object")
        if not isinstance(c.get("maxSkew"), int) or c["maxSkew"] <= 0:
            raise SchedulerConfigError(f"{where}.maxSkew must be greater than 0")
        key = c.get("topologyKey") or ""
        if not key:
            raise SchedulerConfigError(f"{where}.topologyKey must be set")
        errs = is_qualified_name(key)
        if errs:
            raise SchedulerConfigError(f'{where}.topologyKey "{key}" is not a valid label name, {", ".join(errs)}')
        wu = c.get("whenUnsatisfiable")
        if wu not in ("DoNotSchedule", "ScheduleAnyway"):
            raise SchedulerConfigError(f'{where}.whenUnsatisfiable "{wu}" must be one of "DoNotSchedule" or "ScheduleAnyway"')
        if c.get("labelSelector") is not None:
            raise SchedulerConfigError(f"{where}.labelSelector must not be set, as selectors are deduced for each pod")
        if c.get("matchLabelKeys"):
            raise SchedulerConfigError(f"{where}.matchLabelKeys must not be set, as it has no effect on default constraints")
        for j, prev in enumerate(raws[:i]):
            if prev.get("topologyKey") == key and prev.get("whenUnsatisfiable") == wu:
                raise SchedulerConfigError(f"validating scheduler config, podTopologySpread.defaultConstraints[{i}] "
                                           f"is a duplicate of [{j}], {{{key}, {wu}}}")
        try:
            out.append(TopologySpreadConstraint.model_validate(c))
        except ValidationError as e:
            raise SchedulerConfigError(f"decoding scheduler config, {where}: {e.errors()[0]['msg']}") from None
    return SchedulerConfiguration(tuple(out))


@dataclass(frozen=True)
class Options:
    """options.go Options (the scheduling-relevant subset)."""

    preference_policy: str = PREFERENCE_POLICY_RESPECT
    min_values_policy: str = MIN_VALUES_POLICY_STRICT
    feature_gates: FeatureGates = field(default_factory=FeatureGates)
    #: ``--scheduler-config`` (default none: no default topology-spread constraints, as upstream)
    scheduler_config: SchedulerConfiguration | None = None

    def __post_init__(self) -> None:
        if self.preference_policy not in PREFERENCE_POLICIES:
            raise ValueError(f"preference_policy must be one of {', '.join(PREFERENCE_POLICIES)} "
                             f"(got {self.preference_policy!r})")
        if self.min_values_policy not in MIN_VALUES_POLICIES:
            raise ValueError(f"min_values_policy must be one of {', '.join(MIN_VALUES_POLICIES)} "
                             f"(got {self.min_values_policy!r})")

    @property
    def best_effort(self) -> bool:
        return self.min_values_policy == MIN_VALUES_POLICY_BEST_EFFORT
