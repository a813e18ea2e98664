"""PriorityQueue: activeQ, backoffQ (+ error backoffQ), unschedulablePods, in-flight events, nominator.

Mirrors pkg/scheduler/backend/queue/{scheduling_queue.go, active_queue.go, backoff_queue.go,
unschedulable_pods.go, nominator.go}, v1.34/1.35 behaviour with QueueingHints on and
SchedulerPopFromBackoffQ on (backoff expiry truncated to whole seconds, flushed on whole-second ticks).
No goroutines: the periodic flushes (1 s backoff, 30 s leftover) run lazily in ``run_flushes(now)`` at
exactly the tick times they would have run, so the result does not depend on how often it is called.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from sortedcontainers import SortedList

from .framework import (UNSCHEDULABLE_TIMEOUT, ClusterEvent, Framework, QueueingHint)
from .podinfo import PodInfo
from .types import (BACKOFF_FLUSH_PERIOD, DEFAULT_POD_INITIAL_BACKOFF, DEFAULT_POD_MAX_BACKOFF,
                    DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION, UNSCHEDULABLE_FLUSH_PERIOD)


_NO_SIG = object()


def _call_hint(fn: Callable[[PodInfo, Any, Any], QueueingHint], pod: PodInfo, old: Any, new: Any) -> QueueingHint:
    """A QueueingHintFn's answer; an error counts as Queue."""
    try:
        return fn(pod, old, new)
    except Exception:  # an error counts as Queue
        return QueueingHint.QUEUE


def entity_backoff_duration(count: int, initial: float, max_backoff: float, size: int = 1) -> float:
    """backoff_queue.go calculateBackoffDuration: ``min(initial·2^(count−1), cap)``; the cap is
    ``max_backoff`` for a pod and ``max_backoff·√size`` for a group entity of ``size`` pods (1.37)."""
    if count == 0 or max_backoff == 0:
        return 0.0
    cap = max_backoff * math.sqrt(size) if size > 1 else max_backoff
    d = initial
    for _ in range(count - 1):
        if d > cap - d:
            return cap
        d *= 2
    return d


class Strategy(enum.IntEnum):
    """queueingStrategy (higher wins)."""

    QUEUE_SKIP = 0
    QUEUE_AFTER_BACKOFF = 1
    QUEUE_IMMEDIATELY = 2


@dataclass(slots=True)
class QueuedPodInfo:
    """framework.QueuedPodInfo."""

    pod_info: PodInfo
    timestamp: float
    seq: int
    initial_attempt_timestamp: Optional[float] = None
    attempts: int = 0
    unschedulable_count: int = 0
    consecutive_errors_count: int = 0
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gating_plugin: str = ""
    gating_message: str = ""
    #: 1.37 group entity (types.go EntityKey ``podgroup/<ns>/<name>``): "" for a standalone pod
    entity_key: str = ""
    #: the number of pods the entity held at its last attempt (the backoff's √size cap)
    entity_size: int = 1

    @property
    def key(self) -> str:
        return self.pod_info.key

    @property
    def gated(self) -> bool:
        return bool(self.gating_plugin)


class PriorityQueue:
    """The scheduling queue (one profile)."""

    def __init__(self, framework: Framework, clock: Any, *,
                 less: Optional[Callable[[QueuedPodInfo, QueuedPodInfo], bool]] = None,
                 initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF, max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
                 max_in_unschedulable: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION) -> None:
        self.fwk = framework
        self.clock = clock
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.max_in_unschedulable = max_in_unschedulable
        self._seq = 0
        # activeQ ordered by PrioritySort Less: priority desc, timestamp asc (seq keeps it a total order)
        self._active: SortedList[tuple[Any, ...]] = SortedList()
        self._active_entries: dict[str, tuple[Any, ...]] = {}
        self._backoff: SortedList[tuple[Any, ...]] = SortedList()
        self._backoff_entries: dict[str, tuple[Any, ...]] = {}
        self._error_backoff: SortedList[tuple[Any, ...]] = SortedList()
        self._error_entries: dict[str, tuple[Any, ...]] = {}
        self.unschedulable: dict[str, QueuedPodInfo] = {}
        # The unschedulable pool grouped by requeue class (see _requeue_class): class -> pod keys,
        # and each pooled pod's class and position in ``unschedulable`` (insertion counter).
        self._classes: dict[Any, dict[str, None]] = {}
        self._class_of: dict[str, Any] = {}
        self._pool_pos: dict[str, int] = {}
        self._pool_seq = 0
        self.infos: dict[str, QueuedPodInfo] = {}
        self.in_flight: dict[str, int] = {}  # key -> index into in_flight_events at pop time
        self.in_flight_events: list[tuple[ClusterEvent, Any, Any]] = []
        start = float(clock.now())
        self._next_backoff_flush = math.floor(start) + BACKOFF_FLUSH_PERIOD
        self._next_leftover_flush = start + UNSCHEDULABLE_FLUSH_PERIOD
        self._events = framework.all_events()
        # event -> (plugin, hint) and indices of the registrations matching it (_registrations)
        self._by_event: dict[ClusterEvent, tuple[list[tuple[str, Any]], frozenset[int]]] = {}

    # ---- helpers ---------------------------------------------------------------------------------
    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    @staticmethod
    def _active_key(q: QueuedPodInfo) -> tuple[Any, ...]:
        return (-q.pod_info.priority, q.timestamp, q.seq, q.key)

    def _push_active(self, q: QueuedPodInfo) -> None:
        key = q.key
        self._remove_everywhere(key)
        e = self._active_key(q)
        self._active.add(e)
        self._active_entries[key] = e
        self.infos[key] = q

    def _remove_everywhere(self, key: str) -> None:
        # activeQ, podBackoffQ, the error backoffQ, then unschedulablePods (unrolled: it runs on
        # every move between them)
        e = self._active_entries.pop(key, None)
        if e is not None:
            self._active.remove(e)
        e = self._backoff_entries.pop(key, None)
        if e is not None:
            self._backoff.remove(e)
        e = self._error_entries.pop(key, None)
        if e is not None:
            self._error_backoff.remove(e)
        if self.unschedulable.pop(key, None) is not None:
            self._unindex(key)

    def backoff_duration(self, q: QueuedPodInfo) -> float:
        """calculateBackoffDuration (1.34+: UnschedulableCount, or ConsecutiveErrorsCount if > 0)."""
        count = q.consecutive_errors_count if q.consecutive_errors_count > 0 else q.unschedulable_count
        return entity_backoff_duration(count, self.initial_backoff, self.max_backoff, q.entity_size)

    def backoff_expiry(self, q: QueuedPodInfo, duration: Optional[float] = None) -> float:
        """getBackoffTime truncated to whole seconds (backoffQOrderingWindowDuration = 1 s);
        ``duration``: ``backoff_duration(q)`` when the caller has it."""
        return float(math.floor(q.timestamp + (self.backoff_duration(q) if duration is None else duration)))

    def is_backing_off(self, q: QueuedPodInfo, now: Optional[float] = None) -> bool:
        duration = self.backoff_duration(q)
        if duration == 0:
            return False
        now = float(self.clock.now()) if now is None else now
        return self.backoff_expiry(q, duration) >= math.floor(now)

    def _push_backoff(self, q: QueuedPodInfo) -> None:
        key = q.key
        self._remove_everywhere(key)
        exp = self.backoff_expiry(q)
        e: tuple[Any, ...]
        if not q.unschedulable_plugins and not q.pending_plugins:
            e = (exp, q.seq, key)
            self._error_backoff.add(e)
            self._error_entries[key] = e
        else:
            e = (exp, -q.pod_info.priority, q.timestamp, q.seq, key)
            self._backoff.add(e)
            self._backoff_entries[key] = e
        self.infos[key] = q

    def _to_unschedulable(self, q: QueuedPodInfo) -> None:
        key = q.key
        self._remove_everywhere(key)
        self.unschedulable[key] = q
        self.infos[key] = q
        self._pool_seq += 1
        self._pool_pos[key] = self._pool_seq
        self._index(q)

    # ---- the requeue-class index of unschedulablePods ----------------------------------------------
    def _requeue_class(self, q: QueuedPodInfo) -> Any:
        """What MoveAllToActiveOrBackoffQueue reads from a pooled pod for a non-wildcard event: its
        gating plugin, its rejector plugins (unschedulable and pending) and, for every QueueingHint
        registered by a rejector, the pod signature the hint declares (framework.hint_signature);
        last, the registrations (indices into ``_events``) of a rejector whose hint declares none.

        Not in upstream (movePodsToActiveOrBackoffQueue asks every pooled pod); same result
        because isPodWorthRequeuing and the gating test read nothing else, so pods of one class
        get one answer per event unless the event matches one of those last registrations, and
        then each pod is asked (see move_all_to_active_or_backoff)."""
        rejectors = q.unschedulable_plugins | q.pending_plugins
        sigs: list[Any] = []
        unsigned: list[int] = []
        if rejectors:
            memo = q.pod_info.memo
            for i, (plugin, _reg, fn) in enumerate(self._events):
                if plugin not in rejectors:
                    continue
                sig_of = getattr(fn, "pod_signature", None)
                if sig_of is None:
                    unsigned.append(i)
                    continue
                sig = memo.get(fn, _NO_SIG)
                if sig is _NO_SIG:
                    sig = memo[fn] = sig_of(q.pod_info)
                sigs.append((i, sig))
        return (q.gating_plugin, frozenset(q.unschedulable_plugins), frozenset(q.pending_plugins), tuple(sigs),
                frozenset(unsigned))

    def _index(self, q: QueuedPodInfo) -> None:
        cls = self._requeue_class(q)
        self._class_of[q.key] = cls
        self._classes.setdefault(cls, {})[q.key] = None

    def _unindex(self, key: str) -> None:
        cls = self._class_of.pop(key)
        self._pool_pos.pop(key)
        members = self._classes[cls]
        del members[key]
        if not members:
            del self._classes[cls]

    def _move_to_active(self, q: QueuedPodInfo) -> bool:
        """moveToActiveQ: PreEnqueue (previous gating plugin first); gated pods stay in unschedulablePods."""
        st = self.fwk.run_pre_enqueue(q.pod_info, q.gating_plugin)
        if not st.is_success():
            q.gating_plugin = st.plugin
            q.gating_message = st.message()
            q.unschedulable_plugins = {st.plugin}
            self._to_unschedulable(q)
            return False
        q.gating_plugin = ""
        q.gating_message = ""
        if q.initial_attempt_timestamp is None:
            q.initial_attempt_timestamp = float(self.clock.now())
        self._push_active(q)
        return True

    # ---- public operations -----------------------------------------------------------------------
    def __contains__(self, key: str) -> bool:
        return key in self.infos

    def add(self, pod_info: PodInfo) -> bool:
        """Add: new QueuedPodInfo(Timestamp=now) → PreEnqueue → activeQ. Returns False when gated."""
        q = QueuedPodInfo(pod_info, float(self.clock.now()), self._next_seq())
        self.infos[pod_info.key] = q
        return self._move_to_active(q)

    def pending_count(self) -> tuple[int, int, int]:
        return len(self._active), len(self._backoff) + len(self._error_backoff), len(self.unschedulable)

    def has_poppable(self) -> bool:
        return bool(self._active) or bool(self._backoff)

    def pop(self) -> Optional[QueuedPodInfo]:
        """Pop: head of activeQ; when empty, head of podBackoffQ (PopFromBackoffQ, 1.33+). None when nothing."""
        if self._active:
            e = self._active.pop(0)
            key = e[-1]
            del self._active_entries[key]
        elif self._backoff:
            e = self._backoff.pop(0)
            key = e[-1]
            del self._backoff_entries[key]
        else:
            return None
        q = self.infos[key]
        q.attempts += 1
        q.unschedulable_plugins = set()
        q.pending_plugins = set()
        self.in_flight[key] = len(self.in_flight_events)
        return q

    def join_entity(self, key: str, sibling_key: str) -> None:
        """addPodGroupMember case (c): the group entity is queued, so a newly added member joins it
        where it is -- its counters, timestamp and rejectors, in its backoffQ or unschedulable pool."""
        q, s = self.infos.get(key), self.infos.get(sibling_key)
        if q is None or s is None or q.gated or s.gated or key in self.in_flight:
            return
        q.entity_key, q.entity_size = s.entity_key, s.entity_size
        q.unschedulable_count, q.consecutive_errors_count = s.unschedulable_count, s.consecutive_errors_count
        q.unschedulable_plugins, q.timestamp = set(s.unschedulable_plugins), s.timestamp
        if sibling_key in self._backoff_entries or sibling_key in self._error_entries:
            self._push_backoff(q)
        elif sibling_key in self.unschedulable:
            self._to_unschedulable(q)

    def pop_member(self, key: str) -> Optional[QueuedPodInfo]:
        """A queued (not gated) member of the entity being popped: upstream pops the whole group
        entity at once (1.37), so every member goes in flight with the first."""
        q = self.infos.get(key)
        if q is None or key in self.in_flight or q.gated:
            return None
        self._remove_everywhere(key)
        q.attempts += 1
        q.unschedulable_plugins = set()
        q.pending_plugins = set()
        self.in_flight[key] = len(self.in_flight_events)
        return q

    def done(self, key: str) -> None:
        """Done: forget in-flight bookkeeping; prune events no in-flight pod references."""
        self.in_flight.pop(key, None)
        if not self.in_flight:
            self.in_flight_events.clear()
        else:
            lo = min(self.in_flight.values())
            if lo > 0:
                del self.in_flight_events[:lo]
                for k in self.in_flight:
                    self.in_flight[k] -= lo

    def forget(self, key: str) -> None:
        """The pod was bound (or deleted): drop it entirely."""
        self.done(key)
        self._remove_everywhere(key)
        self.infos.pop(key, None)

    def add_unschedulable_if_not_present(self, q: QueuedPodInfo) -> None:
        """AddUnschedulablePodIfNotPresent: count, refresh Timestamp, replay in-flight events, requeue."""
        if not q.unschedulable_plugins and not q.pending_plugins:
            q.consecutive_errors_count += 1
        else:
            q.unschedulable_count += 1
            q.consecutive_errors_count = 0
        q.timestamp = float(self.clock.now())
        q.seq = self._next_seq()
        strategy = self._hint_for_in_flight(q)
        self._requeue(q, strategy)
        self.done(q.key)

    def requeue_active_keeping_timestamp(self, q: QueuedPodInfo) -> None:
        """AddAttemptedPodGroupIfNeeded after a Success: a leftover member goes back to activeQ at
        once, no backoff, its timestamp kept (TestSubmitPodGroupAlgorithmResult)."""
        self._push_active(q)
        self.done(q.key)

    def _hint_for_in_flight(self, q: QueuedPodInfo) -> Strategy:
        if not q.unschedulable_plugins and not q.pending_plugins:
            return Strategy.QUEUE_AFTER_BACKOFF
        start = self.in_flight.get(q.key)
        if start is None:
            return Strategy.QUEUE_SKIP
        best = Strategy.QUEUE_SKIP
        for ev, old, new in self.in_flight_events[start:]:
            s = self._worth_requeuing(q, ev, old, new)
            if s > best:
                best = s
                if best == Strategy.QUEUE_IMMEDIATELY:
                    break
        return best

    def _requeue(self, q: QueuedPodInfo, strategy: Strategy) -> Strategy:
        if strategy == Strategy.QUEUE_SKIP:
            self._to_unschedulable(q)
            return strategy
        if strategy == Strategy.QUEUE_AFTER_BACKOFF and self.is_backing_off(q):
            self._push_backoff(q)
            return strategy
        self._move_to_active(q)
        return strategy

    def _matching(self, event: ClusterEvent) -> list[tuple[str, Any]]:
        """(plugin, hint) of every registration matching ``event``, in registration order (a list
        the callers only read)."""
        return self._registrations(event)[0]

    def _registrations(self, event: ClusterEvent) -> tuple[list[tuple[str, Any]], frozenset[int]]:
        """(plugin, hint) of every registration matching ``event`` in registration order, and
        their indices into ``_events``.

        Not in upstream (the registrations are matched on every event); same result because
        ClusterEvent.Match reads only the two events and ``_events`` is fixed when the queue is
        built: the answer for an equal event is the same (a few dozen distinct events a run)."""
        hit = self._by_event.get(event)
        if hit is None:
            idx = [i for i, (_plugin, reg, _fn) in enumerate(self._events) if reg.matches(event)]
            if len(self._by_event) >= 256:
                self._by_event.clear()
            hit = self._by_event[event] = ([(self._events[i][0], self._events[i][2]) for i in idx], frozenset(idx))
        return hit

    def _worth_requeuing(self, q: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any,
                         matching: Optional[list[tuple[str, Any]]] = None,
                         hints: Optional[dict[Any, QueueingHint]] = None) -> Strategy:
        """isPodWorthRequeuing. ``matching``: :meth:`_matching` of ``event``, when the caller asks
        for many pods about one event (the registrations are matched once, not once per pod).
        ``hints``: that caller's memo of this event's hints, for hint functions that declare the
        pod signature their answer depends on (framework.hint_signature): one call per event and
        signature, not per pod."""
        pending = q.pending_plugins
        if not q.unschedulable_plugins and not pending:
            return Strategy.QUEUE_AFTER_BACKOFF
        if event.is_wildcard():
            return Strategy.QUEUE_AFTER_BACKOFF
        rejectors = q.unschedulable_plugins | pending if pending else q.unschedulable_plugins
        result = Strategy.QUEUE_SKIP
        for plugin, fn in (self._matching(event) if matching is None else matching):
            if plugin not in rejectors:
                continue
            sig_of = getattr(fn, "pod_signature", None) if hints is not None else None
            if sig_of is None:
                hint = _call_hint(fn, q.pod_info, old, new)
            else:
                memo = q.pod_info.memo
                sig = memo.get(fn, _NO_SIG)
                if sig is _NO_SIG:
                    sig = memo[fn] = sig_of(q.pod_info)
                k = (fn, sig)
                assert hints is not None
                hint = hints.get(k)  # type: ignore[assignment]
                if hint is None:
                    hint = hints[k] = _call_hint(fn, q.pod_info, old, new)
            if hint == QueueingHint.QUEUE:
                if plugin in pending:
                    return Strategy.QUEUE_IMMEDIATELY
                result = Strategy.QUEUE_AFTER_BACKOFF
        return result

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        return event.is_wildcard() or bool(self._registrations(event)[1])

    def move_all_to_active_or_backoff(self, event: ClusterEvent, old: Any = None, new: Any = None,
                                      only: Optional[set[str]] = None) -> list[str]:
        """MoveAllToActiveOrBackoffQueue; returns the keys moved out of unschedulablePods."""
        if self.in_flight:
            self.in_flight_events.append((event, old, new))
        if not self.is_event_of_interest(event):
            return []
        if event.is_wildcard() or only is not None:
            # every pooled pod (of ``only``) gets QueueAfterBackoff or its own hints: ask each one
            return self._move_by_scan(event, old, new, only)
        return self._move_by_class(event, old, new)

    def _move_by_class(self, event: ClusterEvent, old: Any, new: Any) -> list[str]:
        """MoveAllToActiveOrBackoffQueue of a non-wildcard event over the whole pool."""
        moved = []
        matching = self._matching(event)
        # Not in upstream (it asks isPodWorthRequeuing of every pooled pod): the pool is grouped by
        # requeue class (_requeue_class), and the answer is asked once per class, of its first
        # pod; same result because every pod of a class gets that answer for this event. A class
        # none of whose rejector plugins registered for the event gets QueueSkip from
        # isPodWorthRequeuing without any hint being called; a class without rejectors gets
        # QueueAfterBackoff. The pods moved are then requeued in pool order, as the scan does.
        interested = frozenset(plugin for plugin, _ in matching)
        registrations = self._matching_indices(event)
        hints: dict[Any, QueueingHint] = {}
        todo: list[tuple[int, str, Strategy]] = []
        pos = self._pool_pos
        pool = self.unschedulable
        for cls, members in self._classes.items():
            gating, unsched, pending, _sigs, unsigned = cls
            if gating and not self._gate_matches(gating, event):
                continue
            if (unsched or pending) and interested.isdisjoint(unsched) and interested.isdisjoint(pending):
                continue
            if unsigned and not unsigned.isdisjoint(registrations):  # a hint reading the whole pod
                for k in members:
                    s = self._worth_requeuing(pool[k], event, old, new, matching, hints)
                    if s != Strategy.QUEUE_SKIP:
                        todo.append((pos[k], k, s))
                continue
            s = self._worth_requeuing(pool[next(iter(members))], event, old, new, matching, hints)
            if s != Strategy.QUEUE_SKIP:
                todo.extend((pos[k], k, s) for k in members)
        todo.sort()
        for _pos, key, s in todo:
            self._requeue(self.unschedulable[key], s)
            if key not in self.unschedulable:
                moved.append(key)
        return moved

    def _move_by_scan(self, event: ClusterEvent, old: Any, new: Any, only: Optional[set[str]]) -> list[str]:
        """movePodsToActiveOrBackoffQueue as upstream writes it: isPodWorthRequeuing of every
        pooled pod (of ``only``), in pool order, gated pods only on their gating plugin's events."""
        moved = []
        matching = self._matching(event)
        wildcard = event.is_wildcard()
        hints: dict[Any, QueueingHint] = {}
        for key, q in list(self.unschedulable.items()):
            if only is not None and key not in only:
                continue
            if q.gating_plugin and not wildcard and not self._gate_matches(q.gating_plugin, event):
                continue
            s = self._worth_requeuing(q, event, old, new, matching, hints)
            if s == Strategy.QUEUE_SKIP:
                continue
            self._requeue(q, s)
            if key not in self.unschedulable:
                moved.append(key)
        return moved

    def _matching_indices(self, event: ClusterEvent) -> frozenset[int]:
        """The indices into ``_events`` of the registrations matching ``event``."""
        return self._registrations(event)[1]

    def _gate_matches(self, gating_plugin: str, event: ClusterEvent) -> bool:
        """Whether a pod gated by ``gating_plugin`` is re-examined on ``event``: the gating plugin
        registered an event matching it (movePodsToActiveOrBackoffQueue's gated-pod test)."""
        return any(reg.matches(event) for p, reg, _ in self._events if p == gating_plugin)

    def update(self, pod_info: PodInfo, events: list[ClusterEvent]) -> None:
        """Update of an unscheduled pod: in place in active/backoff; hints for unschedulable pods."""
        key = pod_info.key
        q = self.infos.get(key)
        if q is None:
            self.add(pod_info)
            return
        old_pod = q.pod_info.pod
        q.pod_info = pod_info
        if key in self.unschedulable:  # its requeue class reads the pod; its place in the pool stays
            pos = self._pool_pos[key]
            self._unindex(key)
            self._pool_pos[key] = pos
            self._index(q)
        if key in self.in_flight:
            for ev in events:
                self.in_flight_events.append((ev, old_pod, pod_info.pod))
            return
        if key in self._active_entries:
            self._push_active(q)
            return
        if key in self._backoff_entries or key in self._error_entries:
            self._push_backoff(q)
            return
        if key in self.unschedulable:
            for ev in events:
                if q.gated and ev not in [reg for p, reg, _ in self._events if p == q.gating_plugin] \
                        and not any(reg.matches(ev) for p, reg, _ in self._events if p == q.gating_plugin):
                    continue
                s = self._worth_requeuing(q, ev, old_pod, pod_info.pod)
                if s != Strategy.QUEUE_SKIP:
                    self._requeue(q, s)
                    return

    def delete(self, key: str) -> None:
        self._remove_everywhere(key)
        self.infos.pop(key, None)
        self.in_flight.pop(key, None)

    def activate(self, keys: list[str]) -> None:
        """Activate: move straight to activeQ (ForceActivate)."""
        for k in keys:
            q = self.infos.get(k)
            if q is None:
                continue
            if k in self.in_flight:
                self.in_flight_events.append((ClusterEvent("*", "ForceActivate"), None, q.pod_info.pod))
                continue
            if k in self.unschedulable or k in self._backoff_entries or k in self._error_entries:
                self._move_to_active(q)

    # ---- periodic flushes ------------------------------------------------------------------------
    def _flush_backoff_completed(self, tick: float) -> None:
        for sl, entries in ((self._backoff, self._backoff_entries), (self._error_backoff, self._error_entries)):
            while sl and sl[0][0] < math.floor(tick):
                e = sl.pop(0)
                key = e[-1]
                del entries[key]
                self._move_to_active(self.infos[key])

    def _flush_unschedulable_leftover(self, tick: float) -> None:
        for key, q in list(self.unschedulable.items()):
            if tick - q.timestamp > self.max_in_unschedulable:
                self._requeue(q, Strategy.QUEUE_AFTER_BACKOFF)

    def run_flushes(self, now: Optional[float] = None) -> None:
        """Run every flush tick due at or before ``now`` in time order."""
        now = float(self.clock.now()) if now is None else now
        while True:
            nb = self._next_backoff_due()
            nl = self._next_leftover_flush
            t = min(nb, nl)
            if t > now:
                break
            if nb <= nl:
                self._flush_backoff_completed(nb)
                self._next_backoff_flush = nb + BACKOFF_FLUSH_PERIOD
            else:
                self._flush_unschedulable_leftover(nl)
                self._next_leftover_flush = nl + UNSCHEDULABLE_FLUSH_PERIOD

    def _next_backoff_due(self) -> float:
        """The next 1 s tick at which a backoff pod completes (ticks with nothing to move are skipped)."""
        # (the earlier of the two queues' heads, each read once)
        head = self._backoff[0][0] if self._backoff else math.inf
        if self._error_backoff:
            e = self._error_backoff[0][0]
            if e < head:
                head = e
        if head == math.inf:
            return math.inf
        leave = head + 1.0  # first whole-second tick with floor(tick) > truncated expiry
        return max(self._next_backoff_flush, leave)

    def _next_leftover_due(self) -> float:
        if not self.unschedulable:
            return math.inf
        oldest = min(q.timestamp for q in self.unschedulable.values())
        t = self._next_leftover_flush
        due = oldest + self.max_in_unschedulable
        if t <= due:
            k = math.floor((due - t) / UNSCHEDULABLE_FLUSH_PERIOD) + 1
            t += k * UNSCHEDULABLE_FLUSH_PERIOD
        return t

    def next_event_time(self) -> float:
        """Earliest future time at which a flush would change the queue (inf when none)."""
        return min(self._next_backoff_due(), self._next_leftover_due())
