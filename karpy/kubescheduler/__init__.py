"""Model of kube-scheduler v1.34/1.35: queue, framework + default plugins, preemption, gangs."""

from .scheduler import BOUND, NOMINATED, UNSCHEDULABLE, KubeScheduler, ScheduleOneResult, SchedulerConfig, Victim

__all__ = ["BOUND", "NOMINATED", "UNSCHEDULABLE", "KubeScheduler", "ScheduleOneResult", "SchedulerConfig", "Victim"]
