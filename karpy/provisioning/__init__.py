"""Karpenter's provisioning controller (``pkg/controllers/provisioning``): the batcher, the
provisioner, the scheduling simulation (``Scheduler``, topology, preferences). ``ClusterState`` and
``StateNode`` moved to :mod:`karpy.state` and stay importable from here. Names resolve lazily; the
other modules are internal to the controller.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._exports import lazy_exports

_EXPORTS = {
    "Batcher": "batcher",
    "ClusterState": ".state.cluster", "StateNode": ".state.cluster",
    "ExistingNode": "existingnode",
    "NodeClaimTemplate": "nodeclaimtemplate",
    "Preferences": "preferences", "describe_relaxations": "preferences",
    "Provisioner": "provisioner", "ProvisioningResult": "provisioner",
    "OUTCOME_EXISTING_NODE": "scheduler", "OUTCOME_FAILED": "scheduler", "OUTCOME_INFLIGHT_NODECLAIM": "scheduler",
    "OUTCOME_NEW_NODECLAIM": "scheduler", "PREFERENCE_POLICY_IGNORE": "scheduler",
    "PREFERENCE_POLICY_RESPECT": "scheduler", "PodAttempt": "scheduler", "Results": "scheduler",
    "Scheduler": "scheduler",
    "Topology": "topology",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from karpy.provisioning.batcher import Batcher
    from karpy.provisioning.existingnode import ExistingNode
    from karpy.provisioning.nodeclaimtemplate import NodeClaimTemplate
    from karpy.provisioning.preferences import Preferences, describe_relaxations
    from karpy.provisioning.provisioner import Provisioner, ProvisioningResult
    from karpy.provisioning.scheduler import (OUTCOME_EXISTING_NODE, OUTCOME_FAILED, OUTCOME_INFLIGHT_NODECLAIM,
                                              OUTCOME_NEW_NODECLAIM, PREFERENCE_POLICY_IGNORE,
                                              PREFERENCE_POLICY_RESPECT, PodAttempt, Results, Scheduler)
    from karpy.state.cluster import ClusterState, StateNode
    from karpy.provisioning.topology import Topology
    from karpy.state.cluster import ClusterState, StateNode

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
