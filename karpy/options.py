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

from dataclasses import dataclass, field, replace

__all__ = [
    "DEFAULT_FEATURE_GATES",
    "MIN_VALUES_POLICIES",
    "MIN_VALUES_POLICY_BEST_EFFORT",
    "MIN_VALUES_POLICY_STRICT",
    "PREFERENCE_POLICIES",
    "PREFERENCE_POLICY_IGNORE",
    "PREFERENCE_POLICY_RESPECT",
    "FeatureGates",
    "Options",
]

PREFERENCE_POLICY_RESPECT = "Respect"
PREFERENCE_POLICY_IGNORE = "Ignore"
PREFERENCE_POLICIES = (PREFERENCE_POLICY_RESPECT, PREFERENCE_POLICY_IGNORE)
MIN_VALUES_POLICY_STRICT = "Strict"
MIN_VALUES_POLICY_BEST_EFFORT = "BestEffort"
MIN_VALUES_POLICIES = (MIN_VALUES_POLICY_STRICT, MIN_VALUES_POLICY_BEST_EFFORT)

#: options.go ``--feature-gates`` default
DEFAULT_FEATURE_GATES = ("NodeRepair=false,ReservedCapacity=true,SpotToSpotConsolidation=false,NodeOverlay=false,"
                         "StaticCapacity=false,CapacityBuffer=false")


@dataclass(frozen=True)
class FeatureGates:
    """options.go FeatureGates with upstream's defaults (``ReservedCapacity`` on)."""

    node_repair: bool = False
    reserved_capacity: bool = True
    spot_to_spot_consolidation: bool = False
    node_overlay: bool = False
    static_capacity: bool = False
    capacity_buffer: bool = False

    @classmethod
    def parse(cls, text: str) -> FeatureGates:
        """``"ReservedCapacity=false,NodeOverlay=true"`` over the defaults (options.go ParseFeatureGates).
        An unknown gate or a value other than true/false raises ``ValueError``."""
        names = {"NodeRepair": "node_repair", "ReservedCapacity": "reserved_capacity",
                 "SpotToSpotConsolidation": "spot_to_spot_consolidation", "NodeOverlay": "node_overlay",
                 "StaticCapacity": "static_capacity", "CapacityBuffer": "capacity_buffer"}
        values: dict[str, bool] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            name, sep, value = part.partition("=")
            if not sep or name not in names or value not in ("true", "false"):
                raise ValueError(f"invalid feature gate {part!r} (known: {', '.join(names)}; values true/false)")
            values[names[name]] = value == "true"
        return replace(cls(), **values)


@dataclass(frozen=True)
class Options:
    """options.go Options (the scheduling-relevant subset)."""

    preference_policy: str = PREFERENCE_POLICY_RESPECT
    min_values_policy: str = MIN_VALUES_POLICY_STRICT
    feature_gates: FeatureGates = field(default_factory=FeatureGates)

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
