"""Node termination and drain (upstream pkg/controllers/node/termination): :mod:`.terminator` (the
four-tier drain) and :mod:`.controller` (every NodeClaim deletion of a simulation). Names resolve lazily."""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._exports import lazy_exports

_EXPORTS = {
    **dict.fromkeys(("CRITICAL_PRIORITY_CLASSES", "MIN_DRAIN_TIME", "DrainResult", "Terminator",
                     "group_pods_by_priority"), "terminator"),
    "TerminationController": "controller",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from karpy.termination.controller import TerminationController
    from karpy.termination.terminator import (CRITICAL_PRIORITY_CLASSES, MIN_DRAIN_TIME, DrainResult, Terminator,
                                              group_pods_by_priority)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
