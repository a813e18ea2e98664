"""Karpenter's cluster state (``pkg/controllers/state``): the scheduler's and the disruption
controller's view of existing nodes, in-flight NodeClaims and bound pods. Names resolve lazily."""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._exports import lazy_exports

_EXPORTS = {"ClusterState": "cluster", "PodBindings": "cluster", "StateNode": "cluster"}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from karpy.state.cluster import ClusterState, PodBindings, StateNode

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
