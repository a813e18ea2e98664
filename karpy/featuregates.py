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

The same list also takes kube-scheduler's gates of the modelled Kubernetes version
(:data:`KUBERNETES_GATES`, pkg/features/kube_features.go; the names do not collide with
Karpenter's): e.g. ``GenericWorkload=true`` turns on v1.37's PodGroup scheduling cycle.
"""

from __future__ import annotations

from collections.abc import Mapping

from karpy._errors import KarpyError

__all__ = ["CAPACITY_BUFFER", "COMPOSITE_POD_GROUP", "DEFAULTS", "DEFAULT_KUBERNETES_VERSION", "FeatureGateError",
           "GENERIC_WORKLOAD", "KUBERNETES_GATES", "KUBERNETES_GATE_DEPENDENCIES", "KUBERNETES_VERSIONS", "NODE_OVERLAY",
           "POD_GROUP_PREEMPTION_POLICY", "RESERVED_CAPACITY", "SPOT_TO_SPOT_CONSOLIDATION", "STATIC_CAPACITY",
           "TOPOLOGY_AWARE_WORKLOAD_SCHEDULING", "check_kubernetes_version", "parse_feature_gates", "resolve",
           "resolve_kubernetes", "split_gates"]

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


# -- kube-scheduler's gates, per modelled Kubernetes version ------------------------------------------

GENERIC_WORKLOAD = "GenericWorkload"
GANG_SCHEDULING = "GangScheduling"
TOPOLOGY_AWARE_WORKLOAD_SCHEDULING = "TopologyAwareWorkloadScheduling"
COMPOSITE_POD_GROUP = "CompositePodGroup"
POD_GROUP_PREEMPTION_POLICY = "PodGroupPreemptionPolicy"
DRA_WORKLOAD_RESOURCE_CLAIMS = "DRAWorkloadResourceClaims"
WORKLOAD_WITH_JOB = "WorkloadWithJob"

#: the Kubernetes versions whose kube-scheduler karpy models, oldest first
KUBERNETES_VERSIONS: tuple[str, ...] = ("1.35", "1.37")
#: the newest modelled version (``--kubernetes-version`` default)
DEFAULT_KUBERNETES_VERSION = "1.37"

#: kube_features.go defaultVersionedKubernetesFeatureGates at each version (the workload-aware
#: scheduling gates karpy reads). 1.35: GenericWorkload and GangScheduling alpha; 1.37:
#: GenericWorkload beta (GangScheduling and WorkloadAwarePreemption merged into it), TAS alpha
#: (1.36), CompositePodGroup and PodGroupPreemptionPolicy alpha, DRAWorkloadResourceClaims beta.
KUBERNETES_GATES: dict[str, dict[str, bool]] = {
    "1.35": {GENERIC_WORKLOAD: False, GANG_SCHEDULING: False},
    "1.37": {GENERIC_WORKLOAD: False, TOPOLOGY_AWARE_WORKLOAD_SCHEDULING: False, COMPOSITE_POD_GROUP: False,
             POD_GROUP_PREEMPTION_POLICY: False, DRA_WORKLOAD_RESOURCE_CLAIMS: False, WORKLOAD_WITH_JOB: False},
}

#: kube_features.go defaultKubernetesFeatureGateDependencies (gate -> gates it needs on)
KUBERNETES_GATE_DEPENDENCIES: dict[str, tuple[str, ...]] = {
    GANG_SCHEDULING: (GENERIC_WORKLOAD,),
    TOPOLOGY_AWARE_WORKLOAD_SCHEDULING: (GENERIC_WORKLOAD,),
    COMPOSITE_POD_GROUP: (GENERIC_WORKLOAD, TOPOLOGY_AWARE_WORKLOAD_SCHEDULING),
    POD_GROUP_PREEMPTION_POLICY: (GENERIC_WORKLOAD,),
    DRA_WORKLOAD_RESOURCE_CLAIMS: (GENERIC_WORKLOAD,),
    WORKLOAD_WITH_JOB: (GENERIC_WORKLOAD,),
}


def check_kubernetes_version(version: object) -> str:
    """``version`` as a modelled version string (``"1.37"``; ``"v1.37"`` and ``1.37`` accepted)."""
    text = str(version).strip().lstrip("v")
    if text not in KUBERNETES_VERSIONS:
        raise FeatureGateError(f"unsupported Kubernetes version {version!r}: karpy models "
                               f"{', '.join(KUBERNETES_VERSIONS)}")
    return text


def split_gates(overrides: Mapping[str, object] | None,
                kubernetes_version: str = DEFAULT_KUBERNETES_VERSION) -> tuple[dict[str, object], dict[str, object]]:
    """One ``--feature-gates`` list split into (Karpenter's, kube-scheduler's); a name in neither
    (or a Kubernetes gate that does not exist at ``kubernetes_version``) raises."""
    version = check_kubernetes_version(kubernetes_version)
    karpenter: dict[str, object] = {}
    kube: dict[str, object] = {}
    for name, value in (overrides or {}).items():
        if name in DEFAULTS:
            karpenter[name] = value
        elif name in KUBERNETES_GATES[version]:
            kube[name] = value
        elif any(name in gates for gates in KUBERNETES_GATES.values()):
            at = [v for v, gates in KUBERNETES_GATES.items() if name in gates]
            raise FeatureGateError(f"unrecognized feature gate: {name} (a Kubernetes {', '.join(at)} gate; it does "
                                   f"not exist in Kubernetes {version})")
        else:
            raise FeatureGateError(f"unrecognized feature gate: {name} (known: "
                                   f"{', '.join(sorted([*DEFAULTS, *KUBERNETES_GATES[version]]))})")
    return karpenter, kube


def resolve_kubernetes(kubernetes_version: str = DEFAULT_KUBERNETES_VERSION,
                       overrides: Mapping[str, object] | None = None) -> dict[str, bool]:
    """kube-scheduler's gates at ``kubernetes_version`` with ``overrides`` (kube gate names only)
    applied; an unknown gate, a non-bool value or a gate on whose dependency is off raises."""
    version = check_kubernetes_version(kubernetes_version)
    out = dict(KUBERNETES_GATES[version])
    for name, value in (overrides or {}).items():
        if name not in out:
            split_gates({name: value}, version)  # raises the right message
            raise FeatureGateError(f"unrecognized feature gate: {name}")
        if not isinstance(value, bool):
            raise FeatureGateError(f"invalid value of {name}: {value!r}, err: must be true or false")
        out[name] = value
    for name, on in out.items():
        missing = [d for d in KUBERNETES_GATE_DEPENDENCIES.get(name, ()) if d in out and not out[d]]
        if on and missing:
            raise FeatureGateError(f"feature gate {name} depends on {', '.join(missing)}, which "
                                   f"{'is' if len(missing) == 1 else 'are'} disabled (enable "
                                   f"{', '.join(f'{m}=true' for m in missing)})")
    return out


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


def parse_feature_gates(text: str, kubernetes_version: str | None = None) -> dict[str, bool]:
    """``"SpotToSpotConsolidation=true,NodeOverlay=true"`` -> overrides (as ParseFeatureGates).
    Kubernetes gates are accepted too when they exist at ``kubernetes_version`` (default: the
    newest modelled)."""
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
    version = kubernetes_version or DEFAULT_KUBERNETES_VERSION
    karpenter, kube = split_gates(out, version)
    resolve(karpenter)
    resolve_kubernetes(version, kube)
    return out
