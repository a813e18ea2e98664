"""The discrete-event simulation: kube-scheduler, Karpenter's provisioner and a cloud provider.

One run follows the loop production follows, on a virtual clock:

1. manifests become objects in the store; pods with ``spec.nodeName`` run on their node, other pods
   are pending; DaemonSet pods are bound to every node they fit (as the DaemonSet controller does);
2. kube-scheduler pops pods and tries them; a failure writes ``PodScheduled=False,
   reason=Unschedulable`` with upstream's message — the only signal Karpenter reads;
3. Karpenter's pod controller triggers the batcher for every provisionable pod (and re-triggers
   every 10 s while it stays provisionable); when the window closes (1 s idle / 10 s max) the
   provisioner solves all pending pods against NodePools, existing nodes and in-flight NodeClaims;
4. each new NodeClaim is created through the cloud provider (limits checked first); a launch that
   fails with insufficient capacity leaves the pods pending and the next pass falls back;
5. a launched NodeClaim registers its Node after ``registration_delay`` (with the NodeClaim's taints
   and startup taints) and is initialized ``initialization_delay`` later (startup taints removed),
   which wakes kube-scheduler, which binds the pods;
6. preemption: a nominated pod is left to kube-scheduler (Karpenter ignores it); victims are deleted
   after their grace period; a victim owned by a workload controller is recreated as a new replica.

The run ends when nothing can make progress any more — no timed event pending, no pod kube-scheduler
can pop, no batch window open, and the last provisioning pass created nothing — or at ``time_limit``
(counted from the last ``karpy.io/arrive-after`` arrival, so a late pod is always processed). When the
cloud provider reports a future capacity change (``next_capacity_change(now)``: an ICE-cache entry
expiring, an injected capacity window closing) while pods are still provisionable, the run waits for
it instead of stopping. With a horizon (``SimulationOptions.until``, a Scenario's ``spec.until``) the
run goes on to the horizon; events after it do not happen.

Time (see :mod:`karpy.api.scenario`): Scenario events run at their ``at``
(:mod:`karpy.sim.scenario`); Deployments, ReplicaSets, StatefulSets and Jobs are kept at their
replicas by the workload controllers (:mod:`karpy.sim.replicaset`, :mod:`karpy.sim.deployment`,
:mod:`karpy.sim.statefulset`, :mod:`karpy.sim.job`); ``karpy.io/run-for`` pods succeed, and
``karpy.io/depart-after`` pods are deleted, on the virtual clock. Everything that happens is recorded
in :attr:`Simulation.timeline` (:mod:`karpy.sim.timeline`).

Controllers are wired from above (:mod:`karpy.simulator`, as upstream's controllers.go): they see the
simulation through :class:`karpy.sim.host.SimulationHost` and register themselves:

* :meth:`Simulation.add_controller` registers ``reconcile(now)`` to run every ``interval`` virtual
  seconds (upstream: the disruption controller's 10 s poll). Ticks at which nothing in the store
  changed since the controller's previous run are skipped (its decision would be the same), unless
  the controller asked for a wake-up with :meth:`Simulation.wake_controller` (time-driven rules such
  as ``expireAfter`` or ``consolidateAfter``). A run without a horizon ends only once every
  controller has reconciled the settled state.
* :meth:`Simulation.set_termination` registers Karpenter's termination controller
  (:mod:`karpy.termination.controller`): :meth:`Simulation.delete_nodeclaim` starts the termination
  of a NodeClaim with a reason (``deleted_by`` in the JSON) through it -- the node is tainted
  ``karpenter.sh/disrupted:NoSchedule`` and drained in upstream's four tiers, then the instance is
  deleted (:meth:`Simulation.finish_deletion`); ``LaunchRecord.deleting_at`` / ``deleted_at`` /
  ``deleted_by`` record it. While it drains the node is marked for deletion in the provisioner's
  cluster state.
* :meth:`Simulation.set_disruption` registers the disruption controller's hooks (the nodes it marked
  for deletion, the nomination of the nodes a provisioning pass used).

The NodeClaim lifecycle is :mod:`karpy.sim.lifecycle`, pod handling :mod:`karpy.sim.pods`; this
module is the event loop.

Modelling choices (deterministic stand-ins for what production does asynchronously):
* binding is immediate once kube-scheduler picks a node; registration and initialization delays are
  options (defaults 30 s and 5 s);
* Karpenter's re-trigger of provisionable pods runs every 10 s for all of them together.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from karpy.api.node import Node
from karpy.api.pod import Pod
from karpy.kubescheduler.scheduler import KubeScheduler
from karpy.utils import pod as podutils
from karpy.provisioning.batcher import Batcher
from karpy.provisioning.defaultconstraints import DefaultTopologySpreadInjector
from karpy.provisioning.provisioner import Provisioner
from karpy.provisioning.scheduler import OUTCOME_EXISTING_NODE
from karpy.state.cluster import ClusterState
from karpy.provisioning.volumetopology import VolumeTopology
from karpy.sim.clock import EventQueue, VirtualClock
from karpy.sim.collector import FrozenSurvivors
from karpy.sim.events import nodepool_event_warnings
from karpy.sim.existing import adopt_nodeclaims
from karpy.sim.loopguard import LaunchLoopGuard
from karpy.sim.host import DisruptionHooks, PeriodicController, RecordListener, Termination
from karpy.sim.lifecycle import LABEL_INITIALIZED, LABEL_REGISTERED, NodeClaimLifecycle
from karpy.sim.options import SimulationOptions
from karpy.sim.pods import DEFAULT_TERMINATION_GRACE_SECONDS, Pods, arrival_delay
from karpy.sim.records import LaunchRecord, PodHistory, ProvisioningPass, SimulationResult
from karpy.sim.replicaset import ManagedReplicaSet
from karpy.sim.retention import retention_warnings
from karpy.sim.store import ObjectStore
from karpy.sim.timeline import Timeline

__all__ = ["DEFAULT_TERMINATION_GRACE_SECONDS", "LABEL_INITIALIZED", "LABEL_REGISTERED", "LaunchRecord",
           "PROGRESS_EVERY_CYCLES", "PeriodicController", "PodHistory", "ProvisioningPass", "Simulation",
           "SimulationOptions", "SimulationResult", "arrival_delay"]

#: pkg/controllers/provisioning/controller.go: provisionable pods are re-queued every 10 s
POD_REQUEUE_SECONDS = 10.0
UNREGISTERED_TAINT_KEY = "karpenter.sh/unregistered"
#: pkg/apis/v1/taints.go DisruptedNoScheduleTaint (the termination controller's cordon)
DISRUPTED_TAINT_KEY = "karpenter.sh/disrupted"
#: kube-scheduler cycles between progress calls while it works through a burst at one virtual instant
#: (50,000 pods bind at one instant: 90 s of wall time that would otherwise show no progress)
PROGRESS_EVERY_CYCLES = 1024
#: the input kinds nothing watches: in the store from the start, read from it by every subsystem
_INPUT_KINDS = (("PriorityClass", "priority_classes"), ("PodDisruptionBudget", "pod_disruption_budgets"),
                ("PodGroup", "pod_groups"), ("Workload", "scheduling_workloads"),
                ("PersistentVolumeClaim", "persistent_volume_claims"), ("PersistentVolume", "persistent_volumes"),
                ("StorageClass", "storage_classes"), ("CSINode", "csi_nodes"), ("Service", "services"))


def _has_disrupted_taint(node: Node) -> bool:
    """controller.go NodeController: the node carries the karpenter.sh/disrupted:NoSchedule taint."""
    return any(t.key == DISRUPTED_TAINT_KEY and t.effect == "NoSchedule" for t in node.spec.taints or ())


class Simulation:
    """One run over a set of manifests: build it, register the controllers (:mod:`karpy.simulator`
    does), call :meth:`run` once."""

    def __init__(self, manifests: Any, cloud_provider: Any, options: SimulationOptions | None = None,
                 clock: VirtualClock | None = None,
                 progress: Callable[[float, int, int], None] | None = None) -> None:
        """``manifests`` (:class:`karpy.api.loader.Manifests`) are read once, by :meth:`load`.
        ``progress(virtual_seconds, provisioning_passes, nodeclaims)`` is called after each
        provisioning pass, each time the virtual clock moves and every :data:`PROGRESS_EVERY_CYCLES`
        kube-scheduler cycles (the CLI shows it on stderr for long runs)."""
        self.progress = progress
        self._input: Any = manifests
        self._warnings: list[str] = getattr(manifests, "warnings", [])
        self.cloud_provider = cloud_provider
        self.options = options or SimulationOptions()
        self.clock = clock or VirtualClock()
        self.rng = random.Random(self.options.seed)
        self.events = EventQueue(self.clock)
        self.store = ObjectStore()
        self.timeline = Timeline(limit=self.options.timeline_limit)
        self.scheduler = KubeScheduler(self.clock, self.rng, self.options.scheduler_config)
        self.provisioner = Provisioner(cloud_provider, options=self.options.operator_options(),
                                       max_instance_types=self.options.max_instance_types)
        self.batcher = Batcher(self.clock, self.options.batch_idle_duration, self.options.batch_max_duration)
        self.pod_errors: dict[str, str] = {}
        #: pod handling (karpy.sim.pods) and the NodeClaim lifecycle (karpy.sim.lifecycle)
        self.pods = Pods(self.store, self.clock, self.events, self.record, self.pod_errors)
        self.pods.deleted_limit = self.options.deleted_pods_limit
        self.nodeclaims = NodeClaimLifecycle(self.store, self.clock, self.events, self.record, cloud_provider,
                                             self.provisioner, self.options, self.pods, self.pod_errors,
                                             self._cluster_changed, lambda: self._passes)
        self.launches = self.nodeclaims.launches
        #: what reading the input's cluster state said (karpy.sim.existing)
        self.state_warnings: list[str] = []
        self.loop_guard = LaunchLoopGuard(self.nodeclaims)
        self.deleted_pods = self.pods.deleted
        self.replica_sets, self.deployments = self.pods.replica_sets, self.pods.deployments
        self.stateful_sets, self.jobs = self.pods.stateful_sets, self.pods.jobs
        self._requeue_at: float | None = None
        self._passes = 0
        self._pass_log: list[ProvisioningPass] = []
        self._pod_history: dict[str, PodHistory] = {}
        self._cycles = 0
        self._last_pass_version: int | None = None
        self._cluster_version = 0
        self._attempted: dict[str, int] = {}
        self._controllers: list[PeriodicController] = []
        self._provider_controllers: list[PeriodicController] = []
        self.horizon: float | None = self.options.until
        #: called as ``fn(kind, object, detail)`` for every timeline entry (karpy.static listens
        #: for its NodeClaims' lifecycle)
        self.record_listeners: list[RecordListener] = []
        #: registered from above (karpy.simulator): every NodeClaim deletion drains through the
        #: termination controller; the disruption controller's marks and nominations
        self.termination: Termination | None = None
        self.disruption: DisruptionHooks | None = None
        #: built by :meth:`load` from the store (every NewScheduler, consolidation too, reads them)
        self.volumes: VolumeTopology | None = None
        self.default_constraints: DefaultTopologySpreadInjector | None = None
        self._wire()

    # -- registration (karpy.simulator wires the controllers, see the module docstring) ------------
    def set_termination(self, termination: Termination) -> None:
        """Every :meth:`delete_nodeclaim` drains through ``termination`` from now on."""
        self.termination = self.nodeclaims.termination = termination

    def set_disruption(self, disruption: DisruptionHooks) -> None:
        """The provisioner's cluster state sees ``disruption.marked`` as deleting; each provisioning
        pass's results are handed to ``disruption.nominate``; the result carries it."""
        self.disruption = self.nodeclaims.disruption = disruption

    def add_record_listener(self, listener: RecordListener) -> None:
        """Call ``listener(kind, object, detail)`` for every timeline entry from now on."""
        self.record_listeners.append(listener)

    # -- what controllers read and do (karpy.sim.host.SimulationHost), from the two halves ----------
    def nodeclaim(self, name: str) -> LaunchRecord | None:
        """The launch record of a NodeClaim by name."""
        return self.nodeclaims.nodeclaim(name)

    def nodeclaim_of_node(self, node_name: str) -> LaunchRecord | None:
        """The launch record of the NodeClaim whose Node ``node_name`` registered."""
        return self.nodeclaims.nodeclaim_of_node(node_name)

    def existing_records(self) -> list[LaunchRecord]:
        """The records of the NodeClaims not deleted and not failed (launched, or not yet), in creation order."""
        return self.nodeclaims.existing_records()

    def live_nodeclaims(self) -> list[Any]:
        """The launched NodeClaims that are not deleting or deleted, in creation order."""
        return self.nodeclaims.live_nodeclaims()

    def node_labels(self, name: str) -> dict[str, str] | None:
        """The labels of Node ``name`` (registered, not deleting), or None."""
        return self.nodeclaims.node_labels(name)

    def cluster_state(self) -> ClusterState:
        """The provisioner's view of the cluster now (state.Cluster)."""
        return self.nodeclaims.cluster_state()

    def pods_on_node(self, name: str) -> list[Pod]:
        """The pods bound to Node ``name`` (``spec.nodeName``), in the store's order."""
        return self.pods.by_node.on(name)

    def stage_nodeclaim(self, claim: Any, instance_types: Sequence[Any] | None = None,
                        untruncated: Sequence[Any] | None = None) -> LaunchRecord:
        """ToNodeClaim, a name and the launch record of a scheduled claim (:meth:`launch` launches it)."""
        return self.nodeclaims.stage(claim, instance_types, untruncated)

    def launch(self, records: Sequence[LaunchRecord]) -> None:
        """Create staged NodeClaims through the cloud provider, together (one virtual instant); the
        claims are kept for explain output only from here (issue #13, memory): a provisioning pass's
        and a disruption command's replacements alike."""
        self.nodeclaims.launch(records)
        for record in records:
            release = getattr(record.scheduling, "release_solve_state", None)
            if release is not None:
                release()

    def delete_nodeclaim(self, name: str, reason: str, evict_reason: str | None = None) -> bool:
        """Begin Karpenter's termination of NodeClaim ``name`` through the registered termination
        controller (see the module docstring). False when it is unknown, never launched, or
        already deleting."""
        return self.nodeclaims.delete(name, reason, evict_reason)

    def finish_deletion(self, record: LaunchRecord) -> None:
        """The NodeClaim is gone: its pods, its Node and its instance deleted."""
        self.nodeclaims.finish_deletion(record)

    def relabel_nodeclaim(self, name: str, labels: Mapping[str, str], remove: Iterable[str] = (),
                          price: float | None = None) -> bool:
        """A label patch of NodeClaim ``name`` and its Node (karpy.sim.lifecycle)."""
        return self.nodeclaims.relabel(name, labels, remove, price)

    def reclaim_at(self, name: str, t: float) -> None:
        """The cloud takes the instance of NodeClaim ``name`` back at ``t`` (a spot reclaim)."""
        self.nodeclaims.reclaim_at(name, t)

    def evict(self, key: str, grace: float, reason: str = "preemption") -> None:
        """Evict pod ``key``: deleted after ``grace`` seconds, its controller then replaces it."""
        self.pods.evict(key, grace, reason)

    def _cluster_changed(self) -> None:
        self._cluster_version += 1

    # -- the clock and the timeline ---------------------------------------------------------------
    def add_controller(self, name: str, interval: float, reconcile: Callable[[float], None],
                       start: float | None = None) -> PeriodicController:
        """Run ``reconcile(now)`` every ``interval`` virtual seconds from ``start`` (default: one
        interval from now). Returns the registration (its ``wake_at`` may be set through
        :meth:`wake_controller`)."""
        ctrl = PeriodicController(name, float(interval), reconcile,
                                  float(start) if start is not None else self.clock.now() + float(interval))
        self._controllers.append(ctrl)
        return ctrl

    def wake_controller(self, ctrl: PeriodicController, at: float) -> None:
        """Make ``ctrl`` run at its first tick at or after ``at`` even if nothing changed."""
        ctrl.wake_at = at if ctrl.wake_at is None else min(ctrl.wake_at, at)

    def _controller_due(self) -> float | None:
        version = self.store.resource_version
        due = [t for t in (c.due(version) for c in self._controllers) if t is not None]
        return min(due) if due else None

    def _run_controllers(self) -> bool:
        ran = False
        now = self.clock.now()
        version = self.store.resource_version
        for ctrl in self._controllers:
            t = ctrl.due(version)
            while ctrl.next_at <= now:
                ctrl.next_at += ctrl.interval
            if t is None or t > now:
                continue
            if ctrl.wake_at is not None and ctrl.wake_at <= now:
                ctrl.wake_at = None
            ctrl.reconcile(now)
            ctrl.seen_version = self.store.resource_version
            version = self.store.resource_version
            ran = True
        return ran

    def record(self, kind: str, obj: str, **detail: Any) -> None:
        """Append to the timeline at the current virtual time."""
        self.timeline.record(self.clock.now(), kind, obj, **detail)
        for listener in self.record_listeners:
            listener(kind, obj, detail)

    def now(self) -> float:
        return self.clock.now()

    def _add_provider_controllers(self) -> None:
        """Register the cloud provider's own controllers (its optional ``controllers(cluster)``,
        :class:`karpy.cloudprovider.types.ProviderController`): each runs from the start at its
        interval, and at the first tick at or after the virtual time its reconcile returns."""
        hook = getattr(self.cloud_provider, "controllers", None)
        if hook is None:
            return
        for pc in hook(self):
            holder: list[PeriodicController] = []

            def reconcile(now: float, pc: Any = pc, holder: list[PeriodicController] = holder) -> None:
                wake = pc.reconcile(now)
                if wake is not None:
                    self.wake_controller(holder[0], float(wake))

            holder.append(self.add_controller(pc.name, pc.interval, reconcile, start=self.clock.now()))
            self._provider_controllers.append(holder[0])

    def wake_provider_controllers(self) -> None:
        """Make every provider controller run at its next tick (a scenario event changed the cloud
        under it, e.g. a cancelled capacity reservation)."""
        for ctrl in self._provider_controllers:
            self.wake_controller(ctrl, self.clock.now())

    # -- watches ----------------------------------------------------------------------------------
    def _wire(self) -> None:
        ks, pods = self.scheduler, self.pods

        def on_pod(ev: Any) -> None:
            bound_before = bool(ev.old is not None and ev.old.spec.node_name)
            changed = ev.type == "DELETED" or bool(ev.obj.spec.node_name) != bound_before
            if changed:
                self._cluster_version += 1
            pods.track_owners(ev, changed)
            pods.by_node.observe(ev)
            if ev.type == "ADDED":
                ks.add_pod(ev.obj)
            elif ev.type == "MODIFIED":
                ks.update_pod(ev.obj)
            else:
                ks.delete_pod(ev.obj.key)
                # the deletion bumped the cluster version: a same-named pod starts untried either way
                self._attempted.pop(ev.obj.key, None)
            if ev.type != "DELETED" and podutils.is_provisionable(ev.obj):
                self._trigger(ev.obj)

        def on_node(ev: Any) -> None:
            self._cluster_version += 1
            if ev.type == "ADDED":
                ks.add_node(ev.obj)
            elif ev.type == "MODIFIED":
                ks.update_node(ev.obj)
            else:
                ks.delete_node(ev.obj.metadata.name)
            if ev.type != "DELETED" and _has_disrupted_taint(ev.obj):
                self._trigger_node(ev.obj)

        self.store.watch("Pod", on_pod)
        self.store.watch("Node", on_node)

    def _trigger(self, pod: Pod) -> None:
        """controller.go: every provisionable pod triggers the batcher and is re-queued in 10 s."""
        self.batcher.trigger(pod.metadata.uid or pod.key)
        if self._requeue_at is None:
            self._requeue_at = self.clock.now() + POD_REQUEUE_SECONDS

    def _trigger_node(self, node: Node) -> None:
        """controller.go NodeController: a node carrying ``karpenter.sh/disrupted:NoSchedule``
        triggers the batcher (and is re-queued every 10 s while it keeps the taint)."""
        self.batcher.trigger(node.metadata.uid or node.metadata.name)
        if self._requeue_at is None:
            self._requeue_at = self.clock.now() + POD_REQUEUE_SECONDS

    # -- loading: the informers' first list ---------------------------------------------------------
    def load(self) -> None:
        """Read the input once (the manifests given to the constructor): the kinds nothing watches go
        to the store, from which every subsystem reads them; NodePools, Nodes and DaemonSets are
        created (their watchers see them), the workloads handed to their controllers, the pods
        admitted. A second call does nothing (:meth:`run` loads when the wiring has not)."""
        m, self._input = self._input, None
        if m is None:
            return
        for kind, attr in _INPUT_KINDS:
            for obj in getattr(m, attr, ()):
                self.store.create(kind, obj)
        self._build_indexes(m)
        for pc in self.store.list("PriorityClass"):
            self.scheduler.add_priority_class(pc)
        for pdb in self.pod_disruption_budgets():
            self.scheduler.add_pdb(pdb)
        self.scheduler.set_volume_topology(self.volumes)
        self.scheduler.set_default_constraints(self.default_constraints)
        for grp in [*self.store.list("PodGroup"), *self.store.list("Workload"),
                    *getattr(m, "scheduling_pod_groups", ()), *getattr(m, "composite_pod_groups", ()),
                    *getattr(m, "workloads_v1beta1", ())]:
            self.scheduler.add_pod_group(grp)
        for np in m.nodepools:
            self.store.create("NodePool", np)
        for node in m.nodes:
            self.store.create("Node", node)
        self.state_warnings = adopt_nodeclaims(m, self.nodeclaims, self.clock)  # tied to their Nodes
        for ds in m.daemon_sets:
            self.store.create("DaemonSet", ds)
        for w in m.deployments:
            self.deployments.add(w)
        for w in [*m.replica_sets, *m.replication_controllers]:
            # a ReplicationController is managed as a ReplicaSet is (replication_manager.go is the
            # ReplicaSet controller run over ReplicationControllers through a conversion adapter)
            self.replica_sets.add(ManagedReplicaSet(w, w.spec.replicas, w.spec.replicas))
        for w in m.stateful_sets:
            self.stateful_sets.add(w)
        for w in m.jobs:
            self.jobs.add(w)
        for node in m.nodes:
            self.pods.bind_daemonset_pods(node)
        for pod in list(m.pods) + list(m.workload_pods()):
            self.pods.admit(pod)
        self._add_provider_controllers()

    def _build_indexes(self, m: Any) -> None:
        """What the run derives from the input once: the volume topology (claims, volumes, classes,
        StatefulSet and ephemeral claims), the ``--scheduler-config`` default topology-spread
        injector, and the DaemonSet-owned pods the input already runs per node."""
        self.volumes = VolumeTopology.from_objects(
            self.store.list("PersistentVolumeClaim"), self.store.list("PersistentVolume"),
            self.store.list("StorageClass"), list(m.pods), list(m.stateful_sets), self.store.list("CSINode"))
        self.provisioner.volumes = self.volumes
        cfg = self.options.operator_options().scheduler_config
        if cfg is not None and cfg.default_constraints:
            controllers = [*m.replication_controllers, *m.replica_sets,
                           *(d.replica_set() for d in m.deployments), *m.stateful_sets]
            self.default_constraints = DefaultTopologySpreadInjector(cfg.default_constraints,
                                                                     self.store.list("Service"), controllers)
        self.pods.index_daemonset_pods(m.pods)

    def pod_disruption_budgets(self) -> list[Any]:
        """The PodDisruptionBudgets (from the store)."""
        return self.store.list("PodDisruptionBudget")

    def requeue(self) -> None:
        """The cluster changed under the pending pods (a scenario event): kube-scheduler retries
        them and Karpenter's re-queue of provisionable pods runs now."""
        self._cluster_version += 1
        self._requeue_at = self.clock.now()

    # -- Karpenter's provisioning pass -----------------------------------------------------------
    def _provision(self) -> None:
        """One provisioning pass: Schedule, then Create each new NodeClaim."""
        self._passes += 1
        self._last_pass_version = self.store.resource_version
        cluster = self.cluster_state()
        self.provisioner.last_scheduler = None
        results = self.provisioner.schedule(self.store.list("Pod"), self.store.list("NodePool"), cluster,
                                            self.store.list("DaemonSet"),
                                            pdbs=self.pod_disruption_budgets(), now=self.clock.now(),
                                            volumes=self.volumes, default_constraints=self.default_constraints)
        sched = self.provisioner.last_scheduler
        pool_types: dict[str, Sequence[Any]] = {}
        if sched is not None:
            # references only: explain output derives everything else lazily
            ps = ProvisioningPass(self._passes, self.clock.now(), sched.nodepool_weights, sched.template_errors,
                                  sched.template_names)
            self._pass_log.append(ps)
            self._record_attempts(ps, sched)
            pool_types = sched.instance_types
        untruncated = getattr(results, "untruncated", {})
        if self.disruption is not None:
            self.disruption.nominate(results)
        errors = self.pod_errors  # one dict, shared with the two halves: replaced in place
        errors.clear()
        errors.update(results.pod_errors)
        errors.update(getattr(results, "ignored", {}))
        nodepools = {np.metadata.name: np for np in self.store.list("NodePool")}
        staged: list[LaunchRecord] = []
        exceeded_by_pool: dict[str, str | None] = {}
        for claim in self.loop_guard.admitted(results.new_nodeclaims, self.pod_errors):
            pool = nodepools.get(claim.nodepool_name)
            if pool is not None:
                # provisioner.go Create: limits against the state before this pass's launches (its
                # NodeClaims are created in parallel and have no capacity until launched) -- the
                # same answer for every claim of a pool in this pass, so asked once per pool
                if claim.nodepool_name not in exceeded_by_pool:
                    exceeded_by_pool[claim.nodepool_name] = self.provisioner.limits_exceeded(pool, cluster)
                exceeded = exceeded_by_pool[claim.nodepool_name]
                if exceeded is not None:
                    for p in claim.pods:
                        self.pod_errors[p.key] = exceeded
                    continue
            staged.append(self.stage_nodeclaim(claim, pool_types.get(claim.nodepool_name),
                                                untruncated.get(id(claim))))
        self.launch(staged)
        self._last_pass_version = self.store.resource_version if not staged else None
        if self.progress is not None:
            self.progress(self.clock.now(), self._passes, len(self.launches))

    def _record_attempts(self, ps: ProvisioningPass, sched: Any) -> None:
        """Fold one pass's PodAttempt records into the per-pod history (see PodHistory)."""
        history = self._pod_history
        own = self.nodeclaims.pod_claims
        record = sched.attempt_record
        for key in sched.attempts:
            att = record(key)
            entry = (ps, att)
            h = history.get(key)
            if h is None:
                history[key] = PodHistory(entry, entry)
                continue
            h.last = entry
            h.passes += 1
            outcome, target = att[0], att[1]
            if outcome != OUTCOME_EXISTING_NODE or target not in own.get(key, ()):
                h.decisive = entry

    # -- the loop ---------------------------------------------------------------------------------
    def _quiescent(self) -> bool:
        if len(self.events) or self.batcher.open:
            return False
        if self.scheduler.queue.has_poppable():
            return False
        # every pending pod must have been tried since the cluster last changed under it
        gated = set(self.scheduler.gated_pods())
        unbound = self.pods.by_node.unbound()  # (a bound pod is neither waiting nor provisionable)
        for pod in unbound:
            if pod.metadata.deletion_timestamp is not None or pod.key in gated:
                continue
            if self._attempted.get(pod.key, -1) < self._cluster_version:
                return False
        provisionable = any(podutils.is_provisionable(p) for p in unbound)
        if not provisionable:
            return True
        return self._last_pass_version == self.store.resource_version

    def _wake_time(self, limit: float) -> float | None:
        """When a settled run must wake up again: a periodic controller with unseen changes (or a
        wake-up), or — while pods are provisionable — the cloud provider's next capacity change."""
        times = []
        due = self._controller_due()
        if due is not None:
            times.append(max(due, self.clock.now()))
        next_change = getattr(self.cloud_provider, "next_capacity_change", None)
        if next_change is not None and any(podutils.is_provisionable(p) for p in self.pods.by_node.unbound()):
            t = next_change(self.clock.now())
            if t is not None and t > self.clock.now():
                times.append(t)
        times = [t for t in times if t <= limit]
        return min(times) if times else None

    def run(self) -> SimulationResult:
        self.load()
        if self.progress is not None:  # loaded: a long run's first pass may take a while
            self.progress(self.clock.now(), self._passes, len(self.launches))
        with FrozenSurvivors():  # performance only: karpy.sim.collector
            return self._run_loaded()

    def _run_loaded(self) -> SimulationResult:
        if self.horizon is not None:
            limit = self.horizon
        else:
            # a late arrival or scenario event is always processed: the limit counts from the last one
            limit = self.options.time_limit + (self.events.last_time() or 0.0)
        while True:
            now = self.clock.now()
            # kube-scheduler works through everything it can pop now
            while self.scheduler.next_event_time() <= now:
                result = self.scheduler.schedule_one(flushed=True)
                if result is None:
                    break
                self._cycles += 1
                for attempted in (result.members or [result]):
                    self._attempted[attempted.pod_key] = self._cluster_version
                self.pods.apply(result)
                if self.progress is not None and not self._cycles % PROGRESS_EVERY_CYCLES:
                    self.progress(now, self._passes, len(self.launches))
            if self._requeue_at is not None and self._requeue_at <= now:
                self._requeue_at = None
                for pod in self.pods.by_node.unbound():
                    if podutils.is_provisionable(pod):
                        self._trigger(pod)
                for node in self.store.list("Node"):
                    if _has_disrupted_taint(node):
                        self._trigger_node(node)
            if self.batcher.ready(now):
                self._provision()
                continue
            if self._controllers and self._run_controllers():
                continue
            if self._quiescent():
                wake = self._wake_time(limit)
                if wake is None:
                    break
                if wake > now:
                    self._advance(wake)
                if self._controller_due() != wake:
                    # a capacity change: Karpenter's 10 s re-queue of provisionable pods picks it up
                    self._requeue_at = self.clock.now()
                continue
            candidates = [t for t in (self.events.next_time(), self.batcher.deadline(), self._requeue_at,
                                      self.scheduler.next_event_time(), self._controller_due())
                          if t is not None and not math.isinf(t)]
            if not candidates:
                break
            nxt = max(min(candidates), now)
            if nxt > limit:
                break
            if nxt == now and self.events.next_time() == now:
                self.events.run_next()
                continue
            if nxt > now:
                self._advance(nxt)
            while (due := self.events.next_time()) is not None and due <= self.clock.now():
                self.events.run_next()
        if self.horizon is not None and self.clock.now() < self.horizon:
            self.clock.advance_to(self.horizon)
        return self._result()

    def _retention_warnings(self) -> list[str]:
        """What the run counted instead of listing (karpy.sim.retention; none for ordinary runs)."""
        tl = self.timeline
        until = tl.entries[-1].t if tl.entries else None
        return retention_warnings(self.options.timeline_limit, until, tl.dropped, self.options.deleted_pods_limit,
                                  self.pods.deleted_dropped, self.options.launch_detail_limit,
                                  self.nodeclaims.detail_released)

    def _advance(self, t: float) -> None:
        """Move the virtual clock to ``t`` and tell ``progress`` (a long timeline shows its virtual
        time even when no provisioning pass runs)."""
        self.clock.advance_to(t)
        if self.progress is not None:
            self.progress(t, self._passes, len(self.launches))

    def _provider_run_warnings(self) -> list[str]:
        """What the cloud provider said while running (a scenario's applied EC2NodeClass, capacity
        reservations listed later) beyond what ``karpy.simulate`` took from it at load."""
        said = getattr(self.cloud_provider, "manifest_warnings", None)
        if not callable(said):
            return []
        known = set(self._warnings)
        return [w for w in said() if w not in known]

    def _result(self) -> SimulationResult:
        return SimulationResult(
            pods={p.key: p for p in self.store.list("Pod")},
            deleted_pods=dict(self.deleted_pods),
            nodes={n.metadata.name: n for n in self.store.list("Node")},
            launches=list(self.launches),
            pod_errors=dict(self.pod_errors),
            virtual_seconds=self.clock.now(),
            provisioning_passes=self._passes,
            scheduling_cycles=self._cycles,
            warnings=list(self._warnings) + self.state_warnings + self.provisioner.warnings()
            + nodepool_event_warnings(self._pass_log) + self.loop_guard.warnings()
            + self.scheduler.pod_group_warnings() + self._retention_warnings() + self._provider_run_warnings(),
            passes=list(self._pass_log),
            pod_history=dict(self._pod_history),
            options=self.options,
            disruption=self.disruption,
            timeline=self.timeline,
            horizon=self.horizon,
            not_arrived=dict(self.pods.arrivals),
            nodepools=list(self.store.list("NodePool")),
        )
