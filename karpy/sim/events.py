"""Warning events upstream publishes during provisioning, said as run warnings (``warnings`` and
stderr), not only in explain output.

Mirrors core pkg/controllers/provisioning/scheduling/events.go ``NoCompatibleInstanceTypes``: a
NodePool whose requirements leave no compatible instance type is skipped with a Warning event on
the NodePool, deduplicated per NodePool (scheduler.go NewScheduler).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["NO_COMPATIBLE_INSTANCE_TYPES", "nodepool_event_warnings"]

NO_COMPATIBLE_INSTANCE_TYPES = "NodePool requirements filtered out all compatible available instance types"


def nodepool_event_warnings(passes: Iterable[Any]) -> list[str]:
    """One warning per NodePool a provisioning pass skipped for NoCompatibleInstanceTypes (its first
    occurrence, with the filter's reason), in the order they first happened."""
    first: dict[str, str] = {}
    for ps in passes:
        for name, reason in ps.template_errors.items():
            first.setdefault(name, reason)
    out = []
    for name, reason in first.items():
        message = NO_COMPATIBLE_INSTANCE_TYPES
        if "minValues" in reason:
            message += " due to minValues incompatibility"
        out.append(f'NodePool "{name}": NoCompatibleInstanceTypes: {message}' + (f" ({reason})" if reason else ""))
    return out
