"""Static NodePools (``spec.replicas``, upstream pkg/controllers/static): the NodePool state
(:mod:`.nodepoolstate`), the provisioning (:mod:`.provisioning`) and deprovisioning
(:mod:`.deprovisioning`) controllers, and their wiring into the simulation (:mod:`.controller`),
behind the ``StaticCapacity`` feature gate. StaticDrift is a disruption method
(:mod:`karpy.disruption.staticdrift`). Names resolve lazily."""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._exports import lazy_exports

_EXPORTS = {
    "NodePoolState": "nodepoolstate",
    "StaticCapacityController": "controller",
    "observe": "controller",
    "StaticNodeClaim": "provisioning",
    "deprovisioning_candidates": "deprovisioning",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from karpy.static.controller import StaticCapacityController, observe
    from karpy.static.deprovisioning import deprovisioning_candidates
    from karpy.static.nodepoolstate import NodePoolState
    from karpy.static.provisioning import StaticNodeClaim

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
