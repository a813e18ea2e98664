"""Disruption budgets: how many of a NodePool's nodes a method may disrupt right now.

Mirrors pkg/apis/v1/nodepool.go (GetAllowedDisruptionsByReason, MustGetAllowedDisruptions,
Budget.GetAllowedDisruptions, Budget.IsActive) and pkg/controllers/disruption/helpers.go
(BuildDisruptionBudgetMapping).

The ``[{nodes: 10%}]`` default is applied by the NodePool model (a CRD default upstream); an
explicitly empty ``budgets: []`` is unbounded, as in Go. Budget windows are evaluated in UTC on
the virtual clock (:data:`karpy.api.time.EPOCH` is virtual time 0).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from karpy.api.nodepool import parse_duration
from karpy.api.time import EPOCH
from karpy.scheduling.labels import LABEL_NODEPOOL
from karpy.utils.cron import CronError, parse_standard

__all__ = [
    "MAX_INT32",
    "REASON_DRIFTED",
    "REASON_EMPTY",
    "REASON_UNDERUTILIZED",
    "BudgetError",
    "allowed_disruptions",
    "allowed_disruptions_by_reason",
    "budget_window_changes",
    "budget_is_active",
    "build_disruption_budget_mapping",
    "must_get_allowed_disruptions",
]

#: math.MaxInt32, the "unbounded" value of GetAllowedDisruptionsByReason
MAX_INT32 = 2**31 - 1
#: pkg/apis/v1/nodepool.go DisruptionReason values
REASON_UNDERUTILIZED = "Underutilized"
REASON_EMPTY = "Empty"
REASON_DRIFTED = "Drifted"
#: events.go NodePoolBlockedForDisruptionReason
BLOCKED_BY_BUDGET = "No allowed disruptions for disruption reason {reason} due to blocking budget"


class BudgetError(ValueError):
    """An invalid budget schedule (``invariant violated, invalid cron, ...``)."""


def budget_is_active(budget: Any, now: float) -> bool:
    """Budget.IsActive: no schedule → always; else ``Next(now − duration) <= now`` in UTC."""
    if budget.schedule is None and budget.duration is None:
        return True
    try:
        sched = parse_standard(budget.schedule)
    except CronError as err:
        raise BudgetError(f"invariant violated, invalid cron, {err}") from None
    duration = parse_duration(budget.duration) or 0
    t_now = EPOCH + timedelta(seconds=now)
    nxt = sched.next(t_now - timedelta(seconds=duration))
    return nxt is not None and nxt <= t_now


def budget_window_changes(nodepool: Any, now: float) -> list[float]:
    """Virtual times after ``now`` at which one of the pool's budget windows opens or closes
    (the disruption controller wakes up then even when nothing else changed)."""
    out: list[float] = []
    t_now = EPOCH + timedelta(seconds=now)
    for budget in nodepool.spec.disruption.budgets:
        if budget.schedule is None:
            continue
        try:
            sched = parse_standard(budget.schedule)
        except CronError:
            continue
        duration = parse_duration(budget.duration) or 0
        for start in (sched.next(t_now - timedelta(seconds=duration)), sched.next(t_now)):
            if start is None:
                continue
            for t in (start, start + timedelta(seconds=duration)):
                secs = (t - EPOCH).total_seconds()
                if secs > now:
                    out.append(secs)
    return out


def allowed_disruptions(budget: Any, now: float, num_nodes: int) -> int:
    """Budget.GetAllowedDisruptions: inactive → MaxInt32; a count as is (may exceed the node
    count); a percentage of ``num_nodes`` rounded *up* (GetScaledValueFromIntOrPercent)."""
    if not budget_is_active(budget, now):
        return MAX_INT32
    nodes = budget.nodes
    if nodes.endswith("%"):
        return math.ceil(int(nodes[:-1]) * num_nodes / 100)
    return int(nodes)


def allowed_disruptions_by_reason(nodepool: Any, now: float, num_nodes: int, reason: str) -> tuple[int, list[str]]:
    """GetAllowedDisruptionsByReason: the minimum over budgets that apply to ``reason`` (no
    reasons = all); errors of *any* budget are collected."""
    allowed = MAX_INT32
    errors: list[str] = []
    for budget in nodepool.spec.disruption.budgets:
        try:
            val = allowed_disruptions(budget, now, num_nodes)
        except BudgetError as err:
            errors.append(str(err))
            continue
        if budget.reasons is None or reason in budget.reasons:
            allowed = min(allowed, val)
    return allowed, errors


def must_get_allowed_disruptions(nodepool: Any, now: float, num_nodes: int, reason: str) -> int:
    """MustGetAllowedDisruptions: any budget error fails closed (0) for every reason."""
    allowed, errors = allowed_disruptions_by_reason(nodepool, now, num_nodes, reason)
    return 0 if errors else allowed


def _condition_true(obj: Any, cond_type: str) -> bool:
    for c in getattr(getattr(obj, "status", None), "conditions", None) or ():
        if c.type == cond_type:
            return bool(c.status == "True")
    return False


def _ready(node: Any) -> bool:
    return node is not None and _condition_true(node, "Ready")


def build_disruption_budget_mapping(state_nodes: Iterable[Any], nodepools: Iterable[Any], now: float,
                                    reason: str, events: list[tuple[str, str, str]] | None = None) -> dict[str, int]:
    """BuildDisruptionBudgetMapping: per managed NodePool, the allowed disruptions minus the nodes
    already disrupting (NotReady or MarkedForDeletion, whatever the reason), never below 0.
    Counted nodes are managed, initialized and not ``InstanceTerminating``."""
    num_nodes: dict[str, int] = {}
    disrupting: dict[str, int] = {}
    for sn in state_nodes:
        if not sn.managed() or not sn.initialized():
            continue
        if _condition_true(sn.nodeclaim, "InstanceTerminating"):
            continue
        pool = sn.labels().get(LABEL_NODEPOOL)
        if pool is None:
            continue
        num_nodes[pool] = num_nodes.get(pool, 0) + 1
        if not _ready(sn.node) or sn.marked_for_deletion():
            disrupting[pool] = disrupting.get(pool, 0) + 1
    mapping: dict[str, int] = {}
    for np in nodepools:
        name = np.metadata.name
        n = num_nodes.get(name, 0)
        raw = must_get_allowed_disruptions(np, now, n, reason)
        mapping[name] = max(raw - disrupting.get(name, 0), 0)
        if n != 0 and raw == 0 and events is not None:
            events.append(("DisruptionBlocked", f"nodepool/{name}", BLOCKED_BY_BUDGET.format(reason=reason)))
    return mapping
