"""Node termination and drain (upstream pkg/controllers/node/termination): :mod:`.terminator` (the
four-tier drain) and :mod:`.controller` (every NodeClaim deletion of a simulation)."""

from karpy.termination.controller import TerminationController

from karpy.termination.terminator import (CRITICAL_PRIORITY_CLASSES, MIN_DRAIN_TIME, DrainResult, Terminator,
                                          group_pods_by_priority)

__all__ = ["CRITICAL_PRIORITY_CLASSES", "MIN_DRAIN_TIME", "DrainResult", "TerminationController", "Terminator",
           "group_pods_by_priority"]
