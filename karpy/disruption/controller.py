"""The disruption controller on the simulation's virtual clock.

Mirrors pkg/controllers/disruption/controller.go (Reconcile: stale-taint cleanup, the methods in
order Emptiness, StaticDrift, Drift, MultiNodeConsolidation, SingleNodeConsolidation, the first
method with commands ends the round, RequeueImmediately after acting, 10 s otherwise), together
with the controllers it relies on: the NodeClaim disruption conditions
(:mod:`karpy.nodeclaim.disruption`), podevents (lastPodEventTime, 10 s dedupe), expiration
(:mod:`karpy.nodeclaim.expiration`), the orchestration queue (:mod:`karpy.disruption.queue`) and
node termination (:mod:`karpy.termination`).

Modelling choices (deterministic, documented):

* a graceful method's 15 s validation parks the controller until ``t + 15`` while the rest of
  the simulation runs; a failed validation continues the round with the next method (as upstream
  does for Emptiness and multi-node consolidation);
* StaticDrift (:mod:`karpy.disruption.staticdrift`) runs whatever the ``StaticCapacity`` gate
  says, as upstream (only the static controllers are gated); it reads the simulation's NodePool
  state (:func:`karpy.static.controller.observe`), and the replacements it launches release their
  node-count reservation as CreateNodeClaims does;
* consolidation methods get the round's Balanced NodePool totals before computing
  (controller.go SetNodePoolTotals, :mod:`karpy.disruption.balanced`);
* deletions go through the simulation's termination controller
  (:mod:`karpy.termination.controller`), whose steps this controller's timeline records;
* command IDs are a counter; the queue is looked at every round and whenever a Node changes;
* the drain re-runs every second; pods are evicted through the simulation (deleted after their
  grace period; a workload's replica comes back pending);
* ``deleted_by``: ``emptiness``, ``drift``, ``consolidation`` (multi and single),
  ``expiration``, or what the caller of :meth:`DisruptionController.delete_nodeclaim` names
  (``interruption``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import partial
from typing import TYPE_CHECKING, Any

from karpy.disruption.budgets import build_disruption_budget_mapping
from karpy.disruption.drift import Drift
from karpy.disruption.emptiness import Emptiness
from karpy.disruption.helpers import build_nodepool_map, get_candidates_with_totals
from karpy.disruption.multinodeconsolidation import MultiNodeConsolidation
from karpy.disruption.consolidationmemo import ConsolidationMemo
from karpy.disruption.podchecks import PodChecksMemo
from karpy.disruption.queue import QUEUE_BASE_DELAY, Queue
from karpy.disruption.singlenodeconsolidation import SingleNodeConsolidation
from karpy.disruption.staticdrift import StaticDrift
from karpy.disruption.timeddonotdisrupt import TimedDoNotDisrupt
from karpy.disruption.types import Cluster, Command, DECISION_NOOP, Method
from karpy.disruption.consolidation import COMMAND_VALIDATION_DELAY, CONSOLIDATION_STATE_RESET
from karpy.disruption.validation import ValidationError, validate_consolidation, validate_emptiness
from karpy.nodeclaim.disruption import (InstanceTypeCheckCache, PoolMemo, set_condition, update_consolidatable,
                                        update_drifted)
from karpy.nodeclaim.expiration import expires_at
from karpy.utils import pod as podutils
from karpy.scheduling.labels import NODE_INITIALIZED
from karpy.static.controller import observe
from karpy.static.nodepoolstate import NodePoolState
from karpy.utils.pod import DISRUPTED_TAINT_KEY

if TYPE_CHECKING:  # pragma: no cover
    from karpy.sim.host import SimulationHost
    from karpy.termination.controller import TerminationController

__all__ = ["DELETED_BY", "DisruptionController", "POLLING_PERIOD"]

#: controller.go pollingPeriod
POLLING_PERIOD = 10.0
#: podevents/controller.go dedupeTimeout
POD_EVENT_DEDUPE = 10.0
#: state/statenode.go nomination window: max(2 × BatchMaxDuration, 10 s)
NOMINATION_WINDOW = 20.0
DELETED_BY = {"emptiness": "emptiness", "drift": "drift", "static-drift": "drift",
             "multi-node-consolidation": "consolidation",
              "single-node-consolidation": "consolidation"}


class DisruptionController:
    """Runs inside a simulation (``sim``, a :class:`karpy.sim.host.SimulationHost`); the wiring
    (:mod:`karpy.simulator`) registers it with ``sim.set_disruption``."""

    def __init__(self, sim: SimulationHost, feature_gates: dict[str, bool], termination: TerminationController,
                 nodepool_state: NodePoolState | None = None) -> None:
        """``termination``: the simulation's termination controller (every deletion drains through
        it); ``nodepool_state``: state.Cluster's NodePoolState, shared with the static controllers."""
        self.sim = sim
        self.feature_gates = dict(feature_gates)
        # controller.go NewMethods, in upstream's order
        self.methods: list[Method] = [Emptiness(), StaticDrift(), Drift(), MultiNodeConsolidation(),
                                      SingleNodeConsolidation()]
        self.queue = Queue(self)
        #: the simulation's termination controller drains every deletion; its steps go to this
        #: controller's timeline (``disruption.<step>``)
        self.termination = termination
        self.nodepool_state = nodepool_state if nodepool_state is not None else NodePoolState()
        self.termination.on_step = self._timeline
        self.termination.on_terminated.append(self._terminated)
        self.marked: set[str] = set()
        self.nominated_until: dict[str, float] = {}
        self.consolidation_state = 0.0
        self.decisions: list[dict[str, Any]] = []
        self.timeline: list[dict[str, Any]] = []
        self.deleted_by: dict[str, str] = {}
        self.deleted_at: dict[str, float] = {}
        #: node name -> {(reason, message): last time} (explain output)
        self.node_events: dict[str, dict[tuple[str, str], float]] = {}
        #: node name -> {(reason, message): first time} (the plan's blockers: held since)
        self.node_events_first: dict[str, dict[tuple[str, str], float]] = {}
        self._parked: tuple[int, list[Command], dict[str, int]] | None = None
        self._round_gen = 0
        self._ids = 0
        self._expiry_scheduled: set[str] = set()
        self._last_pod_event: dict[str, float] = {}
        self._wakes: list[float] = []
        #: build_nodepool_map's maps by NodePool, kept while the provider's key for its types holds
        self._pool_maps: dict[str, tuple[Hashable, dict[str, Any] | None]] = {}
        self._it_cache: tuple[float, dict[tuple[str, int], tuple[list[Any], Hashable | None]]] = (-1.0, {})
        #: drift.go instanceTypeNotFoundCheckCache
        self._instance_type_checks = InstanceTypeCheckCache()
        #: NewCandidate's pod checks, shared by the methods of a round (karpy.disruption.podchecks)
        self.pod_checks = PodChecksMemo()
        #: IsCurrentlyReschedulable of the pods no PDB or do-not-disrupt makes time-dependent (types.Cluster)
        self.lasting_movable: dict[int, tuple[Any, bool]] = {}
        #: computeConsolidation's no-command answers while nothing changed (karpy.disruption.consolidationmemo)
        self.consolidation_memo = ConsolidationMemo()
        #: the pods whose do-not-disrupt can end on its own (_wake; karpy.disruption.timeddonotdisrupt)
        self._timed_do_not_disrupt = TimedDoNotDisrupt(sim.store)
        sim.store.watch("Pod", self._on_pod)
        sim.store.watch("Node", self._on_node)
        sim.store.watch("NodePool", self._on_nodepool)
        # the simulation's periodic-controller hook: a 10 s poll that skips ticks at which nothing
        # changed (the decision would be the same), woken for time-driven rules (see _wake)
        self._ctrl = sim.add_controller("disruption", POLLING_PERIOD, lambda now: self._round(self._round_gen),
                                        start=0.0)

    # -- watches ---------------------------------------------------------------------------------
    def _now(self) -> float:
        return float(self.sim.clock.now())

    def _mark_unconsolidated(self) -> None:
        self.consolidation_state = self._now()

    def mark_unconsolidated(self) -> None:
        """cluster.go MarkUnconsolidated from outside the store's watches (nodeoverlay/controller.go:
        a NodeOverlay changed, which the cloud provider holds): consolidation re-runs at the next poll."""
        self._mark_unconsolidated()
        self.sim.wake_controller(self._ctrl, self._now())

    def _on_nodepool(self, ev: Any) -> None:
        """state/informer/nodepool.go: a NodePool created or changed re-triggers consolidation at once
        (a deleted one does not)."""
        if ev.type != "DELETED":
            self._mark_unconsolidated()

    def _on_pod(self, ev: Any) -> None:
        self._timed_do_not_disrupt.observe(ev)
        pod, old = ev.obj, ev.old
        bound_before = bool(old is not None and old.spec.node_name)
        node = pod.spec.node_name
        if ev.type == "DELETED" or bool(node) != bound_before:
            self._mark_unconsolidated()
        if not node or podutils.is_owned_by_daemonset(pod):
            return
        newly_bound = ev.type == "ADDED" or not bound_before
        went_terminal = podutils.is_terminal(pod) and (old is None or not podutils.is_terminal(old))
        went_terminating = pod.metadata.deletion_timestamp is not None and (
            old is None or old.metadata.deletion_timestamp is None)
        if ev.type == "DELETED" or newly_bound or went_terminal or went_terminating:
            self._stamp_pod_event(node)

    def _stamp_pod_event(self, node_name: str) -> None:
        """podevents controller: lastPodEventTime = now unless stamped < 10 s ago."""
        rec = self.sim.nodeclaim_of_node(node_name)
        if rec is None or rec.launched is None:
            return
        now = self._now()
        last = self._last_pod_event.get(node_name)
        if last is not None and now - last < POD_EVENT_DEDUPE:
            return
        self._last_pod_event[node_name] = now
        rec.launched.status.last_pod_event_time = self.sim.clock.timestamp(now)

    def _on_node(self, ev: Any) -> None:
        self._mark_unconsolidated()
        if ev.type == "DELETED":
            return
        labels = ev.obj.metadata.labels or {}
        was = (ev.old.metadata.labels or {}).get(NODE_INITIALIZED) if ev.old is not None else None
        if labels.get(NODE_INITIALIZED) == "true" and was != "true":
            rec = self.sim.nodeclaim_of_node(ev.obj.metadata.name)
            if rec is not None and rec.launched is not None:
                set_condition(rec.launched, "Initialized", "True", self._now())
            self.sim.events.schedule_in(0.0, f"disruption queue {ev.obj.metadata.name}", self._reconcile_queue)

    # -- the cluster view ------------------------------------------------------------------------
    def live_records(self) -> list[Any]:
        return [r for r in self.sim.existing_records() if r.launched is not None]

    def view(self) -> Cluster:
        sim = self.sim
        now = self._now()
        if now - self.consolidation_state >= CONSOLIDATION_STATE_RESET:
            self.consolidation_state = now
        nodepools = {np.metadata.name: np for np in sim.store.list("NodePool")}
        return Cluster(now=now, state=sim.cluster_state(), nodepools=nodepools, pods=sim.store.list("Pod"),
                       pdbs=sim.pod_disruption_budgets(), daemonsets=sim.store.list("DaemonSet"),
                       provisioner=sim.provisioner, instance_types=self._instance_types_of,
                       instance_types_key=self._instance_types_key_of,
                       nominated_until=self.nominated_until, in_queue=self.queue.names(),
                       feature_gates=self.feature_gates, consolidation_state=self.consolidation_state,
                       version=sim.store.resource_version, pod_checks=self.pod_checks,
                       lasting_movable=self.lasting_movable if self.keep_movable else None,
                       consolidation_memo=self.consolidation_memo,
                       nodepool_state=observe(sim, self.nodepool_state, self) if any(np.spec.replicas is not None
                                                          for np in nodepools.values()) else None)

    def _keyed_instance_types(self, np: Any) -> tuple[list[Any], Hashable | None]:
        """The NodePool's instance types and the provider's key for them, looked up once per NodePool
        per virtual instant (availability only changes as time moves) through the provisioner's
        SchedulerCache: the same types while the provider's key holds."""
        sim = self.sim
        now = self._now()
        if self._it_cache[0] != now:
            self._it_cache = (now, {})
        cache = self._it_cache[1]
        key = (np.metadata.name, id(np))
        if key not in cache:
            its, types_key = sim.provisioner.scheduler_cache.instance_types(
                sim.cloud_provider, np, sim.cloud_provider.get_instance_types)
            cache[key] = (list(its), types_key)
        return cache[key]

    def _instance_types_of(self, np: Any) -> list[Any]:
        return self._keyed_instance_types(np)[0]

    def _instance_types_key_of(self, np: Any) -> Hashable | None:
        return self._keyed_instance_types(np)[1]

    def in_flight(self) -> frozenset[str]:
        """Candidates of in-flight commands (queue.HasAny; the static controllers' pending disruption)."""
        return self.queue.names()

    def _record_events(self, cluster: Cluster) -> None:
        for reason, obj, msg in cluster.events:
            name = obj.split("/", 1)[1] if obj.startswith("node/") else obj
            self._note_event(name, (reason, msg), cluster.now)

    def _note_event(self, name: str, key: tuple[str, str], now: float) -> None:
        self.node_events.setdefault(name, {})[key] = now
        self.node_events_first.setdefault(name, {}).setdefault(key, now)

    def nominate(self, results: Any) -> None:
        """scheduling Results.Record: existing nodes that received pods are nominated for 20 s."""
        until = self._now() + NOMINATION_WINDOW
        for en in getattr(results, "existing_nodes", ()):
            if en.pods:
                self.nominated_until[en.name] = until

    # -- the round -------------------------------------------------------------------------------
    def _schedule_round(self, delay: float) -> None:
        self._round_gen += 1
        gen = self._round_gen
        self.sim.events.schedule_in(delay, "disruption round", lambda: self._round(gen))

    def _round(self, gen: int) -> None:
        if gen != self._round_gen or self._parked is not None:
            return
        self._wakes = []
        self._update_nodeclaims()
        self._reconcile_queue()
        self._cleanup_stale_taints()
        self._run_methods(0)

    #: False: every method takes its own look (the plain path the equivalence test compares against)
    share_look = True

    def _run_methods(self, start: int) -> None:
        look: Cluster | None = None
        for i in range(start, len(self.methods)):
            m = self.methods[i]
            if look is None:
                cluster = self.view()
                # Not in upstream (each method looks again): a method that found no command changed
                # nothing the next one reads, so it looks at the same cluster (its own event list);
                # static NodePools' reservations are observed anew
                if self.share_look and cluster.nodepool_state is None:
                    look = cluster
            else:
                cluster = look
                cluster.events = []
            pool_map = build_nodepool_map(cluster, self._pool_maps if self.share_instance_types else None)
            cands, totals = get_candidates_with_totals(
                cluster, partial(m.should_disrupt, cluster=cluster), m.disruption_class, pool_map)
            if not cands:
                self._record_events(cluster)
                continue
            # controller.go: consolidation methods score Balanced pools against this round's totals
            set_totals = getattr(m, "set_nodepool_totals", None)
            if set_totals is not None:
                set_totals(totals)
            budgets = build_disruption_budget_mapping(cluster.state.nodes, cluster.nodepools.values(), cluster.now,
                                                      m.reason, cluster.events)
            snapshot = dict(budgets)
            cmds = [c for c in m.compute_commands(cluster, budgets, cands) if c.decision() != DECISION_NOOP]
            self._record_events(cluster)
            if not cmds:
                continue
            if m.validates:
                self._parked = (i, cmds, snapshot)
                self.sim.events.schedule_in(COMMAND_VALIDATION_DELAY, f"disruption validation {m.name}",
                                            self._validate)
                return
            started = self._start(m, cmds, snapshot, validated=None)
            if started:
                self._schedule_round(0.0)
            self._wake()
            return
        self._wake()

    def _wake(self) -> None:
        """Ask the simulation to run the next poll at the first time-driven change even if the
        store does not change: a consolidateAfter window ending, a nomination or a do-not-disrupt
        duration expiring, a budget window opening or closing, the five-minute consolidation
        state reset."""
        from karpy.disruption.budgets import budget_window_changes
        from karpy.utils.pod import do_not_disrupt_until

        now = self._now()
        times = [t for t in self._wakes if t > now]
        # state/cluster.go ConsolidationState: re-evaluated at least every five minutes (capacity
        # and prices may have changed without any object changing)
        times.append(max(self.consolidation_state + CONSOLIDATION_STATE_RESET, now + POLLING_PERIOD))
        times += [t for t in self.nominated_until.values() if t > now]
        for p in self._timed_do_not_disrupt.pods():
            t = do_not_disrupt_until(p)
            if t is not None and now < t < float("inf"):
                times.append(t)
        for np in self.sim.store.iter("NodePool"):
            times += budget_window_changes(np, now)
        if times:
            self.sim.wake_controller(self._ctrl, min(times))

    def _validate(self) -> None:
        assert self._parked is not None
        i, cmds, snapshot = self._parked
        self._parked = None
        m = self.methods[i]
        cluster = self.view()
        ok = []
        for cmd in cmds:
            try:
                ok.append(validate_emptiness(m, cluster, cmd) if m.name == "emptiness"
                          else validate_consolidation(m, cluster, cmd))
            except ValidationError as err:
                self._decision(m, cmd, snapshot, validated=False, error=f"{err.kind}: {err}")
                for c in cmd.candidates:
                    self._note_event(c.name, (  # events.go
                        "ConsolidationRejected", f"Consolidation rejected: {cmd.string_for_node(c)}, reason: "
                        f"{err.kind} (savings: ${cmd.estimated_savings():.2f})"), cluster.now)
        self._record_events(cluster)
        if ok and self._start(m, ok, snapshot, validated=True):
            self._schedule_round(0.0)
            self._wake()
            return
        self._run_methods(i + 1)

    def _start(self, m: Any, cmds: list[Command], budgets: dict[str, int], validated: bool | None) -> bool:
        started = False
        for cmd in cmds:
            self._ids += 1
            cmd.id, cmd.method, cmd.reason, cmd.created_at = self._ids, m.name, m.reason, self._now()
            q = self.queue.start_command(cmd)
            if isinstance(q, str):
                self._decision(m, cmd, budgets, validated=validated, error=q)
                continue
            started = True
            self._decision(m, cmd, budgets, validated=validated, replacements=[r.name for r in q.replacements])
            if q.replacements:
                # the queue's first requeue (queueBaseDelay) looks at the replacements again
                self.sim.events.schedule_in(QUEUE_BASE_DELAY, f"disruption queue {cmd.id}", self._reconcile_queue)
        return started

    def _decision(self, m: Any, cmd: Command, budgets: dict[str, int], validated: bool | None,
                  replacements: list[str] | None = None, error: str | None = None) -> None:
        pools = sorted({c.nodepool.metadata.name for c in cmd.candidates})
        rec: dict[str, Any] = {
            "t": self._now(), "method": m.name, "reason": m.reason, "decision": cmd.decision(),
            "candidates": [c.name for c in cmd.candidates],
            "replacements": replacements if replacements is not None else [],
            "replacement_instance_types": [[it.name for it in r.instance_type_options[:10]]
                                           for r in cmd.replacements],
            "savings_per_hour": round(cmd.estimated_savings(), 6),
            "budget": {p: budgets.get(p, 0) for p in pools},
            "validated": validated,
        }
        if error is not None:
            rec["error"] = error
        self.decisions.append(rec)
        self._timeline("decision", ",".join(rec["candidates"]),
                       {k: rec[k] for k in ("method", "decision", "replacements", "savings_per_hour", "validated")}
                       | ({"error": error} if error is not None else {}))

    # -- queue operations (queue.Operations) -------------------------------------------------------
    def _taint(self, name: str, add: bool) -> None:
        self.termination.taint(name, add)

    def _record_of(self, name: str) -> Any | None:
        rec = self.sim.nodeclaim_of_node(name)
        if rec is None:
            rec = self.sim.nodeclaim(name)  # by name; an adopted record is also known by its claim's name
            rec = rec if rec is not None and rec.name == name else None
        return rec

    def mark_disrupted(self, cmd: Command) -> None:
        for c in cmd.candidates:
            self._taint(c.name, True)
            rec = self._record_of(c.name)
            if rec is not None and rec.launched is not None:
                set_condition(rec.launched, "DisruptionReason", "True", self._now(), cmd.reason)

    def unmark_disrupted(self, cmd: Command) -> None:
        for c in cmd.candidates:
            self._taint(c.name, False)
            self.marked.discard(c.name)
            rec = self._record_of(c.name)
            if rec is not None and rec.launched is not None:
                set_condition(rec.launched, "DisruptionReason", None, self._now())
        self._timeline("rollback", ",".join(c.name for c in cmd.candidates), {"command": cmd.id})

    def create_replacements(self, cmd: Command) -> list[Any] | str:
        """provisioner.CreateNodeClaims for the replacements (limits checked first), then
        MarkForDeletion of the candidates (queue.go :350-355)."""
        sim = self.sim
        cluster = sim.cluster_state()
        staged = []
        try:
            for claim in cmd.replacements:
                pool = sim.store.get("NodePool", claim.nodepool_name)
                if pool is not None:
                    exceeded = sim.provisioner.limits_exceeded(pool, cluster)
                    if exceeded is not None:
                        return str(exceeded)
                staged.append(sim.stage_nodeclaim(claim))
            sim.launch(staged)
        finally:
            # provisioner.go CreateNodeClaims: a static replacement's reserved node is released
            # whether or not it was created (StaticDrift reserved it)
            for claim in cmd.replacements:
                if claim.template.is_static:
                    self.nodepool_state.release_node_count(claim.nodepool_name, 1)
        for c in cmd.candidates:
            self.marked.add(c.name)
        for r in staged:
            self._timeline("replacement", r.name, {"command": cmd.id, "for": [c.name for c in cmd.candidates],
                                                   "instance_type": r.instance_type, "error": r.error})
        return staged

    def replacement_state(self, record: Any) -> str:
        if record.error is not None or record.deleted:
            return "deleted"
        node = self.sim.store.get("Node", record.name)
        if node is not None and (node.metadata.labels or {}).get(NODE_INITIALIZED) == "true":
            return "initialized"
        return "waiting"

    def delete_candidates(self, cmd: Command) -> None:
        for c in cmd.candidates:
            self.delete_nodeclaim(c.name, DELETED_BY.get(cmd.method or "", cmd.method or ""))

    def _reconcile_queue(self) -> None:
        for q in self.queue.reconcile(self._now()):
            if q.failure is not None:
                for d in reversed(self.decisions):
                    if d["candidates"] == [c.name for c in q.command.candidates]:
                        d["error"] = q.failure
                        break

    def _cleanup_stale_taints(self) -> None:
        """controller.go :150-164: untaint nodes neither queued nor marked for deletion."""
        queued = self.queue.names()
        for rec in self.live_records():
            if rec.name in queued or rec.name in self.marked or self.termination.is_draining(rec.name):
                continue
            node = self.sim.store.get("Node", rec.name)
            if node is not None and any(t.key == DISRUPTED_TAINT_KEY for t in node.spec.taints or ()):
                self._taint(rec.name, False)
                set_condition(rec.launched, "DisruptionReason", None, self._now())

    # -- NodeClaim controllers -------------------------------------------------------------------------
    #: False: every look asks IsCurrentlyReschedulable of every pod (the plain path the equivalence test compares)
    keep_movable = True

    #: False: each NodeClaim's drift check hashes its NodePool anew (the plain path the equivalence test compares)
    share_pool_facts = True

    #: False: the drift check asks the cloud provider for each NodePool's instance types anew every round
    #: (the plain path the equivalence test compares), not through the look's cached lookup
    share_instance_types = True


    def _update_nodeclaims(self) -> None:
        now = self._now()
        pools = {np.metadata.name: np for np in self.sim.store.list("NodePool")}
        provider = _RoundProvider(self.sim.cloud_provider,
                                  self._instance_types_of if self.share_instance_types else None)
        pool_memo: PoolMemo | None = {} if self.share_pool_facts else None
        for rec in self.live_records():
            claim = rec.launched
            if claim.metadata.deletion_timestamp is not None:
                continue
            pool = pools.get(rec.nodepool)
            if pool is not None:
                update_drifted(pool, claim, now, provider, self._instance_type_checks, pool_memo)
                until = update_consolidatable(pool, claim, now)
                if until is not None:
                    self._wakes.append(until)
            if rec.name not in self._expiry_scheduled:
                self._expiry_scheduled.add(rec.name)
                at = expires_at(claim)
                if at is not None:
                    self.sim.events.schedule(at, f"expire {rec.name}", partial(self._expire, rec.name))

    def _expire(self, name: str) -> None:
        rec = self._record_of(name)
        if rec is None or rec.deleted or rec.launched is None or rec.launched.metadata.deletion_timestamp is not None:
            return
        at = expires_at(rec.launched)
        if at is None or self._now() < at:
            return
        self.delete_nodeclaim(name, "expiration")

    # -- termination ----------------------------------------------------------------------------------
    def delete_nodeclaim(self, name: str, reason: str) -> None:
        """Delete a NodeClaim through the simulation's termination controller
        (:mod:`karpy.termination.controller`: deletionTimestamp and the TGP deadline, taint,
        four-tier drain, delete)."""
        rec = self._record_of(name)
        if rec is None or rec.deleted or self.termination.is_draining(name):
            return
        self.deleted_by[name] = reason
        if not self.sim.delete_nodeclaim(rec.name, reason, evict_reason="disruption"):
            self.termination.delete(rec, reason, evict_reason="disruption")  # a record the simulation refuses

    def _terminated(self, name: str) -> None:
        """The termination controller finished ``name`` (whoever deleted it)."""
        self.marked.discard(name)
        self.deleted_at[name] = self._now()
        self.deleted_by.setdefault(name, self.termination_reason(name))

    def termination_reason(self, name: str) -> str:
        rec = self._record_of(name)
        return str(getattr(rec, "deleted_by", None) or "")

    def _timeline(self, kind: str, obj: str, detail: dict[str, Any]) -> None:
        """A disruption step, in ``disruption_timeline`` and in the simulation's timeline
        (``disruption.taint``, ``disruption.evict`` ...)."""
        self.timeline.append({"t": self._now(), "kind": kind, "object": obj, "detail": detail})
        record = getattr(self.sim, "record", None)
        if record is not None:
            record(f"disruption.{kind}", obj, **detail)

    def busy(self) -> bool:
        return self.queue.pending() or bool(self.termination.draining) or self._parked is not None


class _RoundProvider:
    """The cloud provider as the NodeClaim drift check sees it in one round: GetInstanceTypes asked
    once per NodePool (upstream's provider caches it too) -- through ``lookup`` when given (the
    controller's per-instant lookup, which the provisioner's SchedulerCache serves while the
    provider's key holds) --, IsDrifted and the reserved-capacity labels passed through."""

    def __init__(self, cloud_provider: Any, lookup: Callable[[Any], list[Any]] | None = None) -> None:
        self._cp = cloud_provider
        self._lookup = lookup
        self._types: dict[tuple[str, int], list[Any]] = {}
        self.is_drifted = getattr(cloud_provider, "is_drifted", None)
        self.reserved_capacity_labels = frozenset(getattr(cloud_provider, "reserved_capacity_labels", ()))

    def get_instance_types(self, nodepool: Any) -> list[Any]:
        if self._lookup is not None:
            return self._lookup(nodepool)  # kept per instant already
        key = (nodepool.metadata.name, id(nodepool))
        if key not in self._types:
            self._types[key] = list(self._cp.get_instance_types(nodepool))
        return self._types[key]
