"""The simulation: a virtual clock, the object store, the workload controllers and the loop that
runs Karpenter's provisioning and kube-scheduler against them (``Simulation``), recorded as a
``Timeline``; ``SimulationHost``: what the controllers wired from above (karpy.simulator) may read
and do. Names resolve lazily; the controllers' modules are internal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._exports import lazy_exports

_EXPORTS = {
    "EPOCH": "clock", "VirtualClock": "clock",
    "ObjectStore": "store", "WatchEvent": "store",
    "LaunchRecord": "records", "PodHistory": "records", "ProvisioningPass": "records",
    "SimulationResult": "records", "SimulationOptions": "options", "Simulation": "simulation",
    "PeriodicController": "host", "SimulationHost": "host",
    "Timeline": "timeline", "TimelineEntry": "timeline",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from karpy.sim.clock import EPOCH, VirtualClock
    from karpy.sim.host import PeriodicController, SimulationHost
    from karpy.sim.options import SimulationOptions
    from karpy.sim.records import LaunchRecord, PodHistory, ProvisioningPass, SimulationResult
    from karpy.sim.simulation import Simulation
    from karpy.sim.store import ObjectStore, WatchEvent
    from karpy.sim.timeline import Timeline, TimelineEntry

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
