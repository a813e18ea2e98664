"""Karpenter's feature gates (``--feature-gates``), with upstream's names and defaults.

Mirrors pkg/operator/options/options.go (FeatureGates, ParseFeatureGates): a comma-separated
``Name=true|false`` list over the defaults below. karpy reads:

* ``SpotToSpotConsolidation`` — consolidation may replace a spot node with a cheaper spot node
  (off: spot nodes are only deleted);
* ``NodeOverlay`` — NodeOverlay objects adjust prices and capacity (off: they are ignored with a
  warning, as upstream does not watch them);
* ``ReservedCapacity`` (on) -- capacity reservations: Solve's reservation manager and strict
  reserved mode, and on AWS the EC2NodeClass ``capacityReservationSelectorTerms``, ``reserved``
  offerings and launches into the reservation (off: no reserved offerings, Solve ignores them);
* ``StaticCapacity`` -- the static NodePool controllers (:mod:`karpy.static`) keep a NodePool with
  ``spec.replicas`` at that many nodes (off: such a pool gets no nodes, with a warning; StaticDrift
  runs either way, as upstream);
* ``NodeRepair``, ``CapacityBuffer`` are accepted and reported (karpy does not model what they
  switch).
"""

from __future__ import annotations

from collections.abc import Mapping

from karpy._errors import KarpyError

__all__ = ["CAPACITY_BUFFER", "DEFAULTS", "FeatureGateError", "NODE_OVERLAY", "RESERVED_CAPACITY", "SPOT_TO_SPOT_CONSOLIDATION",
           "STATIC_CAPACITY", "parse_feature_gates", "resolve"]

SPOT_TO_SPOT_CONSOLIDATION = "SpotToSpotConsolidation"
NODE_REPAIR = "NodeRepair"
RESERVED_CAPACITY = "ReservedCapacity"
NODE_OVERLAY = "NodeOverlay"
STATIC_CAPACITY = "StaticCapacity"
CAPACITY_BUFFER = "CapacityBuffer"

#: options.go: --feature-gates default
#: "NodeRepair=false,ReservedCapacity=true,SpotToSpotConsolidation=false,NodeOverlay=false,StaticCapacity=false,
#: CapacityBuffer=false"
DEFAULTS: dict[str, bool] = {
    NODE_REPAIR: False,
    RESERVED_CAPACITY: True,
    SPOT_TO_SPOT_CONSOLIDATION: False,
    NODE_OVERLAY: False,
    STATIC_CAPACITY: False,
    CAPACITY_BUFFER: False,
}


class FeatureGateError(KarpyError, ValueError):
    """An unknown gate or a value other than true/false."""


def resolve(overrides: Mapping[str, object] | None = None) -> dict[str, bool]:
    """The defaults with ``overrides`` applied; unknown names or non-bool values raise
    :class:`FeatureGateError` (so unchecked input, e.g. a parsed file, may be passed)."""
    out = dict(DEFAULTS)
    for name, value in (overrides or {}).items():
        if name not in DEFAULTS:
            raise FeatureGateError(f"unrecognized feature gate: {name} (known: {', '.join(sorted(DEFAULTS))})")
        if not isinstance(value, bool):
            raise FeatureGateError(f"invalid value of {name}: {value!r}, err: must be true or false")
        out[name] = value
    return out


def parse_feature_gates(text: str) -> dict[str, bool]:
    """``"SpotToSpotConsolidation=true,NodeOverlay=true"`` -> overrides (as ParseFeatureGates)."""
    out: dict[str, bool] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep:
            raise FeatureGateError(f"missing bool value for {name}")
        low = value.strip().lower()
        if low not in ("true", "false"):
            raise FeatureGateError(f"invalid value of {name}={value}, err: strconv.ParseBool: parsing "
                                   f"\"{value}\": invalid syntax")
        out[name.strip()] = low == "true"
    resolve(out)
    return out
