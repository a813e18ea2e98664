"""Node termination and drain (upstream pkg/controllers/node/termination)."""

from karpy.termination.terminator import (CRITICAL_PRIORITY_CLASSES, MIN_DRAIN_TIME, DrainResult, Terminator,
                                          group_pods_by_priority)

__all__ = ["CRITICAL_PRIORITY_CLASSES", "MIN_DRAIN_TIME", "DrainResult", "Terminator", "group_pods_by_priority"]
