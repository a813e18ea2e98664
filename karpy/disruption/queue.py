"""The orchestration queue: launch replacements, wait for them to initialize, then delete the
candidates; roll back on failure.

Mirrors pkg/controllers/disruption/queue.go (StartCommand, markDisrupted, waitOrTerminate,
CompleteCommand, getRetryDuration). The cluster operations (taint, create NodeClaims, delete
NodeClaims) are the :class:`Operations` the simulation provides. Commands are kept in a list in
start order (upstream: a map).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from karpy.disruption.types import Command

__all__ = ["MAX_RETRY_DURATION", "MIN_RETRY_DURATION", "QUEUE_BASE_DELAY", "Operations", "Queue", "QueuedCommand",
           "retry_duration"]

#: queue.go queueBaseDelay: the first requeue of a command still waiting on its replacements
QUEUE_BASE_DELAY = 1.0
#: queue.go minRetryDuration / maxRetryDuration / retryDurationScale (80 ms per queued candidate)
MIN_RETRY_DURATION = 600.0
MAX_RETRY_DURATION = 3600.0
RETRY_DURATION_SCALE = 0.080


def retry_duration(queued_candidates: int) -> float:
    """queue.go getRetryDuration: clamp(80 ms × candidates in the whole queue, 10 min, 1 h)."""
    return min(max(RETRY_DURATION_SCALE * queued_candidates, MIN_RETRY_DURATION), MAX_RETRY_DURATION)


class Operations(Protocol):
    """What the queue asks of the cluster (the simulation implements it)."""

    def mark_disrupted(self, cmd: Command) -> None: ...
    def unmark_disrupted(self, cmd: Command) -> None: ...
    def create_replacements(self, cmd: Command) -> list[Any] | str: ...
    def replacement_state(self, record: Any) -> str: ...  # "initialized" | "waiting" | "deleted"
    def delete_candidates(self, cmd: Command) -> None: ...


@dataclass
class QueuedCommand:
    command: Command
    replacements: list[Any] = field(default_factory=list)  # launch records
    done: bool = False
    succeeded: bool = False
    failure: str | None = None


class Queue:
    """queue.go Queue."""

    def __init__(self, ops: Operations) -> None:
        self.ops = ops
        self.items: list[QueuedCommand] = []

    def names(self) -> frozenset[str]:
        """Candidates of in-flight commands (queue.HasAny; a command finishing in the reconcile under way
        is no longer in flight)."""
        return frozenset(c.name for q in self.items if not q.done for c in q.command.candidates)

    def has_any(self, names: set[str]) -> bool:
        return bool(self.names() & names)

    def start_command(self, cmd: Command) -> QueuedCommand | str:
        """queue.go StartCommand (:321-397): taint and mark, launch replacements first, then mark
        the candidates for deletion; an error string when nothing was started."""
        if self.has_any({c.name for c in cmd.candidates}):
            return "candidate is being disrupted"
        self.ops.mark_disrupted(cmd)
        created = self.ops.create_replacements(cmd) if cmd.replacements else []
        if isinstance(created, str):
            # candidates stay tainted until the next round's cleanup (queue.go :302-315)
            return f"launching replacement nodeclaim, {created}"
        q = QueuedCommand(cmd, list(created))
        self.items.append(q)
        return q

    def reconcile(self, now: float) -> list[QueuedCommand]:
        """waitOrTerminate for every in-flight command; returns the ones that finished now, which
        leave the queue (queue.go CompleteCommand: their simulation results go with them)."""
        finished = []
        waiting = []
        limit = retry_duration(sum(len(q.command.candidates) for q in self.items))
        for q in self.items:
            err = None
            states = [self.ops.replacement_state(r) for r in q.replacements]
            if "deleted" in states and now - q.command.created_at < QUEUE_BASE_DELAY:
                # upstream creates the replacement NodeClaim and returns; its launch fails later and the
                # queue sees it gone at a requeue (queueBaseDelay), not in the instant it started
                waiting.append(q)
                continue
            if "deleted" in states:
                err = "replacement was deleted"
            elif "waiting" in states:
                if now - q.command.created_at > limit:
                    err = "command reached timeout, nodeclaim not initialized"
                else:
                    waiting.append(q)
                    continue
            q.done = True
            if err is None:
                self.ops.delete_candidates(q.command)
                q.succeeded = True
            else:
                q.failure = err
                self.ops.unmark_disrupted(q.command)
            finished.append(q)
        self.items = waiting
        return finished

    def pending(self) -> bool:
        return bool(self.items)
