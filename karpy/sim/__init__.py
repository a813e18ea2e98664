"""The simulation: a virtual clock, the object store, the workload controllers and the loop that
runs Karpenter's provisioning and kube-scheduler against them (``Simulation``), recorded as a
``Timeline``. Names resolve lazily; the controllers' modules are internal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._exports import lazy_exports

_EXPORTS = {
    "EPOCH": "clock", "VirtualClock": "clock",
    "ObjectStore": "store", "WatchEvent": "store",
    "LaunchRecord": "simulation", "PodHistory": "simulation", "ProvisioningPass": "simulation",
    "Simulation": "simulation", "SimulationOptions": "simulation", "SimulationResult": "simulation",
    "Timeline": "timeline", "TimelineEntry": "timeline",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from karpy.sim.clock import EPOCH, VirtualClock
    from karpy.sim.simulation import (LaunchRecord, PodHistory, ProvisioningPass, Simulation, SimulationOptions,
                                      SimulationResult)
    from karpy.sim.store import ObjectStore, WatchEvent
    from karpy.sim.timeline import Timeline, TimelineEntry

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
