"""PriorityClass resolution (admission plugin Priority).

Mirrors pkg/apis/scheduling/types.go (constants) and plugin/pkg/admission/priority/admission.go.
"""

from __future__ import annotations

from typing import Any, Optional

from karpy.api.priorityclass import SYSTEM_CLUSTER_CRITICAL, SYSTEM_NODE_CRITICAL
from karpy._errors import KarpyError

HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS = 0
BUILTIN_PRIORITY_CLASSES = {
    SYSTEM_CLUSTER_CRITICAL: SYSTEM_CRITICAL_PRIORITY,
    SYSTEM_NODE_CRITICAL: SYSTEM_CRITICAL_PRIORITY + 1000,
}


class UnknownPriorityClass(KarpyError, ValueError):
    """Admission rejects a pod naming a PriorityClass that does not exist."""


def resolve_priority(pod: Any, classes: dict[str, Any]) -> tuple[int, str]:
    """(priority, preemptionPolicy) for a pod: explicit spec.priority wins; else its class; else the
    globalDefault class (the lowest-valued one if several, as admission does); else 0."""
    spec = pod.spec
    policy = getattr(spec, "preemption_policy", None)
    if getattr(spec, "priority", None) is not None:
        return int(spec.priority), policy or "PreemptLowerPriority"
    name = getattr(spec, "priority_class_name", None)
    if name:
        if name in classes:
            pc = classes[name]
            return int(pc.value), policy or getattr(pc, "preemption_policy", None) or "PreemptLowerPriority"
        if name in BUILTIN_PRIORITY_CLASSES:
            return BUILTIN_PRIORITY_CLASSES[name], policy or "PreemptLowerPriority"
        raise UnknownPriorityClass(f'no PriorityClass with name {name} was found')
    default: Optional[Any] = None
    for pc in classes.values():
        if getattr(pc, "global_default", False) and (default is None or pc.value < default.value):
            default = pc
    if default is not None:
        return int(default.value), policy or getattr(default, "preemption_policy", None) or "PreemptLowerPriority"
    return DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS, policy or "PreemptLowerPriority"
