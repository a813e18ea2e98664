"""What a controller registered with the simulation may read and do.

Upstream's controllers.go builds every controller from above and hands each the manager, the
cluster state and the clients; karpy's top-level wiring (:mod:`karpy.simulator`) does the same and
the controllers (disruption, static capacity, termination, the cloud provider's own) see the
simulation only through :class:`SimulationHost`. The simulation calls back into two of them through
:class:`Termination` and :class:`DisruptionHooks`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from karpy.api.pod import Pod
from karpy.provisioning.provisioner import Provisioner
from karpy.state.cluster import ClusterState
from karpy.sim.clock import EventQueue, VirtualClock
from karpy.sim.records import LaunchRecord
from karpy.sim.store import ObjectStore

__all__ = ["DisruptionHooks", "PeriodicController", "RecordListener", "SimulationHost", "Termination"]

#: called as ``fn(kind, object, detail)`` for every timeline entry
RecordListener = Callable[[str, str, dict[str, Any]], None]


@dataclass
class PeriodicController:
    """A controller on the virtual clock (see :meth:`SimulationHost.add_controller`)."""

    name: str
    interval: float
    reconcile: Callable[[float], None]
    next_at: float
    #: the store's resource version after the controller's last run (None: never ran)
    seen_version: int | None = None
    wake_at: float | None = None

    def due(self, version: int) -> float | None:
        """The next tick at which the controller must run, or None while nothing changed for it."""
        if self.seen_version != version:
            return self.next_at
        if self.wake_at is not None:
            ticks = max(0.0, math.ceil((self.wake_at - self.next_at) / self.interval))
            return self.next_at + ticks * self.interval
        return None


class Termination(Protocol):
    """Karpenter's termination controller (karpy.termination): every NodeClaim deletion drains through it."""

    def delete(self, record: LaunchRecord, reason: str, evict_reason: str | None = None) -> bool: ...


class DisruptionHooks(Protocol):
    """Karpenter's disruption controller as the provisioner sees it: the nodes it marked for
    deletion (state.Cluster MarkForDeletion) and the nomination of the nodes a pass used."""

    marked: set[str]

    def nominate(self, results: Any) -> None: ...

    def mark_unconsolidated(self) -> None:
        """A NodePool or NodeOverlay changed: consolidation looks again now (state/informer/nodepool.go)."""


class SimulationHost(Protocol):
    """The simulation as its controllers see it (:class:`karpy.sim.simulation.Simulation`)."""

    clock: VirtualClock
    events: EventQueue
    store: ObjectStore
    cloud_provider: Any
    provisioner: Provisioner
    launches: list[LaunchRecord]

    # -- reading ----------------------------------------------------------------------------------
    def now(self) -> float: ...
    def nodeclaim(self, name: str) -> LaunchRecord | None: ...
    def nodeclaim_of_node(self, node_name: str) -> LaunchRecord | None: ...
    def cluster_state(self) -> ClusterState: ...
    def pod_disruption_budgets(self) -> list[Any]: ...
    def existing_records(self) -> list[LaunchRecord]: ...
    def live_nodeclaims(self) -> list[Any]: ...
    def node_labels(self, name: str) -> dict[str, str] | None: ...

    # -- the clock and the timeline ---------------------------------------------------------------
    def record(self, kind: str, obj: str, **detail: Any) -> None: ...
    def add_record_listener(self, listener: RecordListener) -> None: ...
    def add_controller(self, name: str, interval: float, reconcile: Callable[[float], None],
                       start: float | None = None) -> PeriodicController: ...
    def wake_controller(self, ctrl: PeriodicController, at: float) -> None: ...

    # -- NodeClaims -------------------------------------------------------------------------------
    def stage_nodeclaim(self, claim: Any, instance_types: Sequence[Any] | None = None,
                        untruncated: Sequence[Any] | None = None) -> LaunchRecord: ...
    def launch(self, records: Sequence[LaunchRecord]) -> None: ...
    def delete_nodeclaim(self, name: str, reason: str, evict_reason: str | None = None) -> bool: ...
    def finish_deletion(self, record: LaunchRecord) -> None: ...
    def relabel_nodeclaim(self, name: str, labels: Mapping[str, str], remove: Iterable[str] = (),
                          price: float | None = None) -> bool: ...
    def reclaim_at(self, name: str, t: float) -> None: ...

    # -- pods -------------------------------------------------------------------------------------
    def pods_on_node(self, name: str) -> list[Pod]: ...
    def evict(self, key: str, grace: float, reason: str = "preemption") -> None: ...
