"""The NodeClaim/Node termination controller on the simulation's virtual clock.

Mirrors pkg/controllers/node/termination/controller.go (finalize: the NodeClaim's
deletionTimestamp and terminationGracePeriod deadline, the ``karpenter.sh/disrupted:NoSchedule``
taint, awaitDrain — :class:`karpy.termination.terminator.Terminator`'s four tiers with
PDB-respecting eviction, requeued every second — MinDrainTime, then instance deletion). Every
deletion goes through it, whoever asked: the disruption controller's methods and expiration, the
AWS interruption controller, a deleted NodePool (upstream: they all delete the NodeClaim and the
termination controller drains it like any other).

The simulation side is passed in (``sim``, a :class:`karpy.sim.host.SimulationHost`): its store,
clock and event queue, ``evict`` (pods deleted after their grace period, replicas recreated by their
controllers) and ``finish_deletion`` (remaining pods, the Node, the instance through the cloud
provider). The wiring (:mod:`karpy.simulator`) registers it with ``sim.set_termination``. Each
step (``delete``, ``taint``, ``evict``, ``drain-blocked``, ``drained``, ``terminated``) goes to
``on_step(kind, object, detail)`` — the simulation's timeline as ``termination.<step>``, or the
disruption controller's ``disruption_timeline`` when it runs. A drain blocked for good (a PDB
allowing no disruption, no terminationGracePeriod) retries every second until the cloud reclaims
the instance or the run's horizon, as upstream's would.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from karpy.api.nodepool import parse_duration
from karpy.api.pod import Taint
from karpy.termination.terminator import DRAIN_REQUEUE, MIN_DRAIN_TIME, Terminator
from karpy.utils.pdb import Limits
from karpy.utils.pod import DISRUPTED_TAINT_KEY

if TYPE_CHECKING:  # pragma: no cover
    from karpy.sim.host import SimulationHost

__all__ = ["StepListener", "TerminationController"]

StepListener = Callable[[str, str, dict[str, Any]], None]


class TerminationController:
    """Drains and deletes NodeClaims of one simulation (see the module docstring)."""

    def __init__(self, sim: SimulationHost, on_step: StepListener | None = None) -> None:
        self.sim = sim
        self.terminator = Terminator(self._evict)
        #: name -> {reason, deadline, drained_at, blocked}: the NodeClaims draining now
        self.draining: dict[str, dict[str, Any]] = {}
        self.on_step: StepListener = on_step or self._record
        #: called with the NodeClaim name once it is terminated
        self.on_terminated: list[Callable[[str], None]] = []
        #: the eviction reason of the drain pass running now (``pod.evicted``'s ``reason``)
        self._evict_reason = "termination"

    def _now(self) -> float:
        return float(self.sim.clock.now())

    def _record(self, kind: str, obj: str, detail: dict[str, Any]) -> None:
        self.sim.record(f"termination.{kind}", obj, **detail)

    def is_draining(self, name: str) -> bool:
        return name in self.draining

    def delete(self, record: Any, reason: str, evict_reason: str | None = None) -> bool:
        """Start terminating ``record`` (a launch record with ``name``/``launched``): the
        NodeClaim's deletionTimestamp and terminationGracePeriod deadline, the taint, the first
        drain pass. ``evict_reason`` (default ``reason``) labels the pods' ``pod.evicted``.
        False when it is already deleted or draining."""
        name = record.name
        if record.deleted or name in self.draining:
            return False
        now = self._now()
        claim = record.launched
        deadline = None
        if claim is not None:
            if claim.metadata.deletion_timestamp is None:
                claim.metadata.deletion_timestamp = self.sim.clock.timestamp(now)
            tgp = claim.spec.termination_grace_period
            if tgp:
                deadline = now + (parse_duration(tgp) or 0)
        self.draining[name] = {"reason": reason, "deadline": deadline, "drained_at": None,
                               "evict_reason": evict_reason or reason}
        self.on_step("delete", name, {"reason": reason})
        self.taint(name, True)
        self._drain(name)
        return True

    def taint(self, name: str, add: bool) -> None:
        """Add or remove ``karpenter.sh/disrupted:NoSchedule`` on Node ``name`` (idempotent)."""
        store = self.sim.store
        node = store.get("Node", name)
        if node is None:
            return
        has = any(t.key == DISRUPTED_TAINT_KEY and t.effect == "NoSchedule" for t in node.spec.taints or ())
        if has == add:
            return
        updated = node.model_copy(deep=True)
        taints = [t for t in updated.spec.taints or () if t.key != DISRUPTED_TAINT_KEY]
        if add:
            taints.append(Taint(key=DISRUPTED_TAINT_KEY, effect="NoSchedule"))
        updated.spec.taints = taints
        store.update("Node", updated, old=node)
        self.on_step("taint" if add else "untaint", name, {"taint": f"{DISRUPTED_TAINT_KEY}:NoSchedule"})

    def _evict(self, key: str, grace: float) -> None:
        self.on_step("evict", key, {"grace_seconds": grace})
        self.sim.evict(key, grace, reason=self._evict_reason)

    def _record_of(self, name: str) -> Any | None:
        return self.sim.nodeclaim(name)

    def _drain(self, name: str) -> None:
        state = self.draining.get(name)
        if state is None:
            return
        rec = self._record_of(name)
        if rec is None or rec.deleted:  # reclaimed by the cloud meanwhile
            self.draining.pop(name, None)
            return
        now = self._now()
        pods = self.sim.pods_on_node(name)
        limits = Limits.from_objects(self.sim.pod_disruption_budgets(), self.sim.store.list("Pod"))
        self._evict_reason = state["evict_reason"]
        res = self.terminator.drain(pods, limits, now, state["deadline"])
        if res.waiting:
            if res.blocked and state.get("blocked") != res.blocked:
                state["blocked"] = res.blocked
                self.on_step("drain-blocked", name, {"pods": [f"{k}: {why}" for k, why in res.blocked]})
            self.sim.events.schedule_in(DRAIN_REQUEUE, f"drain {name}", lambda: self._drain(name))
            return
        if state["drained_at"] is None:
            state["drained_at"] = now
            self.on_step("drained", name, {})
        if now - state["drained_at"] < MIN_DRAIN_TIME:
            self.sim.events.schedule(state["drained_at"] + MIN_DRAIN_TIME, f"drain {name}", lambda: self._drain(name))
            return
        self._finish(name)

    def _finish(self, name: str) -> None:
        """Drained: the simulation deletes the remaining pods, the Node and the instance."""
        state = self.draining.pop(name)
        rec = self._record_of(name)
        if rec is not None and not rec.deleted:
            self.sim.finish_deletion(rec)
        self.on_step("terminated", name, {"reason": state["reason"]})
        for hook in self.on_terminated:
            hook(name)
