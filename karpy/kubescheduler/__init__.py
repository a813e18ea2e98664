"""Model of kube-scheduler v1.35 and v1.37 (--kubernetes-version): queue, framework + default plugins,
preemption, gangs and the v1.37 PodGroup cycle (podgroupcycle). Names
resolve lazily (the plugins load the API models)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._exports import lazy_exports

_EXPORTS = {
    **dict.fromkeys(("BOUND", "NOMINATED", "UNSCHEDULABLE", "KubeScheduler", "ScheduleOneResult", "SchedulerConfig", "Victim"), "scheduler"),
}

__all__ = [
    "BOUND", "KubeScheduler", "NOMINATED", "ScheduleOneResult", "SchedulerConfig", "UNSCHEDULABLE", "Victim",
]

if TYPE_CHECKING:  # pragma: no cover
    from karpy.kubescheduler.scheduler import BOUND, NOMINATED, UNSCHEDULABLE, KubeScheduler, ScheduleOneResult, SchedulerConfig, Victim

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
