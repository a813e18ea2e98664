"""Framework status codes, statuses and constants.

Mirrors pkg/scheduler/framework/interface.go (Code, Status) and the constants of
pkg/scheduler/backend/queue/scheduling_queue.go, pkg/scheduler/schedule_one.go and
pkg/scheduler/apis/config/v1/defaults.go (all in one place).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Optional

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0

# queue (scheduling_queue.go)
DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0
BACKOFF_FLUSH_PERIOD = 1.0
UNSCHEDULABLE_FLUSH_PERIOD = 30.0

# schedule_one.go
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5

# defaultpreemption args defaults
MIN_CANDIDATE_NODES_PERCENTAGE = 10
MIN_CANDIDATE_NODES_ABSOLUTE = 100

# pkg/scheduler/util non-zero defaults (nano units: 100m cpu, 200Mi memory)
DEFAULT_MILLI_CPU_REQUEST_NANOS = 100 * 10**6
DEFAULT_MEMORY_REQUEST_NANOS = 200 * 1024 * 1024 * 10**9

# v1 constants
POD_SCHEDULED = "PodScheduled"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"
REASON_SCHEDULING_GATED = "SchedulingGated"
ERR_NO_NODES_AVAILABLE = "no nodes available to schedule pods"

TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"


class Code(enum.IntEnum):
    """framework.Code (interface.go)."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6


#: the codes of a status that rejects the pod (Status.IsRejected)
REJECTED_CODES = frozenset((Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING))


@dataclass(slots=True)
class Status:
    """framework.Status: a code, reasons and the plugin that produced it."""

    code: Code = Code.SUCCESS
    reasons: list[str] = field(default_factory=list)
    plugin: str = ""

    @classmethod
    def success(cls) -> Status:
        return cls(Code.SUCCESS)

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    def is_rejected(self) -> bool:
        return self.code in REJECTED_CODES

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, name: str) -> Status:
        self.plugin = name
        return self


class _EmptyReasons(list):  # type: ignore[type-arg]
    """An empty reasons list that cannot be filled (the shared Success status's ``reasons``)."""

    def _immutable(self, *a: object, **k: object) -> None:
        raise TypeError("the shared Success status is immutable; create Status() to modify one")

    append = extend = insert = remove = pop = clear = sort = reverse = _immutable
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _immutable  # type: ignore[assignment]


class _SharedSuccess(Status):
    """The one Success status the hot paths return (Filter/Score plugins, RunFilterPlugins).

    Performance: upstream returns a nil *Status for success (``Status.IsSuccess`` treats nil as
    Success), so a successful Filter allocates nothing. We mirror that with one shared, immutable
    Success value: any attempt to mutate it raises, so sharing it cannot leak state between
    callers; it compares equal to ``Status()``."""

    def __init__(self) -> None:
        object.__setattr__(self, "code", Code.SUCCESS)
        object.__setattr__(self, "reasons", _EmptyReasons())
        object.__setattr__(self, "plugin", "")

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError("the shared Success status is immutable; create Status() to modify one")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Status):
            return NotImplemented
        return other.code == Code.SUCCESS and not other.reasons and other.plugin == ""

    __hash__ = None  # type: ignore[assignment]

    def with_plugin(self, name: str) -> Status:
        return Status(self.code, [], name)


SUCCESS_STATUS: Status = _SharedSuccess()


def unschedulable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, list(reasons))


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, list(reasons))


SUCCESS = Code.SUCCESS


@dataclass(slots=True)
class Diagnosis:
    """framework.Diagnosis (pkg/scheduler/framework/types.go)."""

    node_to_status: dict[str, Status] = field(default_factory=dict)
    absent_status: Optional[Status] = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    #: how many statuses of node_to_status carry each reason, once counted (FitError.message)
    reason_counts: Optional[dict[str, int]] = None
    #: the earlier Diagnosis whose statuses this one repeats (_pass_filters_or_repeat), else None
    repeats: Optional[Diagnosis] = None
