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
    occurrence, with the filter's reason), in the order they first happened. When a later pass kept
    the NodePool (the capacity came back, an overlay or NodePool changed), the warning says in which
    passes and when it held, so it does not read as the state at the end."""
    passes = list(passes)
    first: dict[str, str] = {}
    skipped: dict[str, list[Any]] = {}
    for ps in passes:
        for name, reason in ps.template_errors.items():
            first.setdefault(name, reason)
            skipped.setdefault(name, []).append(ps)
    out = []
    for name, reason in first.items():
        message = NO_COMPATIBLE_INSTANCE_TYPES
        if "minValues" in reason:
            message += " due to minValues incompatibility"
        line = f'NodePool "{name}": NoCompatibleInstanceTypes: {message}' + (f" ({reason})" if reason else "")
        held = skipped[name]
        if any(ps.index > held[-1].index and name in ps.templates for ps in passes):
            when = f"t={held[0].time:g}s" + (f" to t={held[-1].time:g}s" if len(held) > 1 else "")
            line += f"; only in {len(held)} of {len(passes)} provisioning passes ({when}): later passes kept the NodePool"
        out.append(line)
    return out
