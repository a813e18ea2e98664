"""The options of one run: the simulator's own settings and Karpenter's operator options.

``karpy.simulate`` builds one :class:`SimulationOptions` at the edge and passes it down; every layer
reads Karpenter's options from its ``operator`` (:class:`karpy.options.Options`, options.go), which
``__post_init__`` derives once from the policy and gate fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from karpy.kubescheduler.scheduler import SchedulerConfig
from karpy.options import FeatureGates, Options

__all__ = ["DELETED_PODS_LIMIT", "LAUNCH_DETAIL_LIMIT", "SimulationOptions", "TIMELINE_LIMIT"]

#: what a long run lists in full (karpy.sim.retention): timeline entries (about 160 bytes each) and
#: pods gone from the store (about 2 KB each)
TIMELINE_LIMIT = 200_000
DELETED_PODS_LIMIT = 20_000
#: NodeClaims gone from the cluster (deleted, or their launch failed) whose launch detail -- the
#: CreateFleet request and response, the scheduling claim explain reads -- is kept (about 0.1 MB each)
LAUNCH_DETAIL_LIMIT = 500


@dataclass(frozen=True)
class SimulationOptions:
    preference_policy: str = "Respect"
    min_values_policy: str = "Strict"
    max_instance_types: int = 600
    #: launch -> the Node registers (Ready, labelled, startup taints still on)
    registration_delay: float = 30.0
    #: registration -> initialized (startup taints removed)
    initialization_delay: float = 5.0
    batch_idle_duration: float = 1.0
    batch_max_duration: float = 10.0
    #: virtual seconds after which the run stops even if pods could still make progress
    time_limit: float = 3600.0
    seed: int = 0
    scheduler_config: SchedulerConfig | None = None
    #: run Karpenter's disruption controller (karpy.disruption) on the virtual clock; the run then
    #: lasts until the horizon (``until``, else ``time_limit``). None: on whenever time passes (a
    #: horizon or Scenario events), as production always runs it; off for a run that only settles
    disruption: bool | None = None
    #: Karpenter --feature-gates overrides (karpy.featuregates), e.g. {"SpotToSpotConsolidation": True}
    feature_gates: dict[str, bool] = field(default_factory=dict)
    #: the horizon in virtual seconds (None: run until settled); a Scenario's ``spec.until`` when unset
    until: float | None = None
    #: extra Scenario events (``karpy.api.scenario.ScenarioEvent``), after the Scenario's own
    events: tuple[Any, ...] = ()
    #: what a long run keeps of its history (karpy.sim.retention): timeline entries and pods gone from
    #: the store listed in full; later ones are counted, and the document's warnings say so
    timeline_limit: int = TIMELINE_LIMIT
    deleted_pods_limit: int = DELETED_PODS_LIMIT
    #: ... and the launch detail of the first ``launch_detail_limit`` NodeClaims gone from the
    #: cluster (every live one keeps its own); a later one's is let go when it is gone
    launch_detail_limit: int = LAUNCH_DETAIL_LIMIT
    #: Karpenter's operator options shared with the cloud provider; after construction always set:
    #: the given one (default ``Options()``) with the two policies and the gate overrides above applied
    operator: Options | None = None

    def __post_init__(self) -> None:
        base = self.operator or Options()
        gates = base.feature_gates
        if self.feature_gates:
            gates = FeatureGates.from_mapping({**gates.to_mapping(), **self.feature_gates})
        wanted = (self.preference_policy, self.min_values_policy, gates)
        if (base.preference_policy, base.min_values_policy, base.feature_gates) != wanted:
            base = Options(**{**base.__dict__, "preference_policy": self.preference_policy,
                              "min_values_policy": self.min_values_policy, "feature_gates": gates})
        object.__setattr__(self, "operator", base)

    def operator_options(self) -> Options:
        """The :class:`karpy.options.Options` every layer reads (``operator``)."""
        assert self.operator is not None  # set by __post_init__
        return self.operator
