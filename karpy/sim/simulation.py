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

Hooks for periodic controllers (Karpenter's disruption controller, ``karpy/disruption``):

* :meth:`Simulation.add_controller` registers ``reconcile(now)`` to run every ``interval`` virtual
  seconds (upstream: the disruption controller's 10 s poll). Ticks at which nothing in the store
  changed since the controller's previous run are skipped (its decision would be the same), unless
  the controller asked for a wake-up with :meth:`Simulation.wake_controller` (time-driven rules such
  as ``expireAfter`` or ``consolidateAfter``). A run without a horizon ends only once every
  controller has reconciled the settled state.
* :meth:`Simulation.delete_nodeclaim` starts Karpenter's termination of a NodeClaim with a reason
  (``deleted_by`` in the JSON: ``interruption``, ``nodepool-deleted``, or the disruption method)
  through Karpenter's termination controller (:mod:`karpy.termination.controller`): the node is
  tainted ``karpenter.sh/disrupted:NoSchedule`` and drained in upstream's four tiers, PDB-respecting
  and bounded by the NodeClaim's terminationGracePeriod (pods evicted with their grace period,
  replacements created by their controllers), then the instance is deleted through the cloud
  provider; its steps are in the timeline as ``termination.<step>`` (``disruption.<step>`` when
  the disruption controller runs); ``LaunchRecord.deleting_at`` / ``deleted_at`` / ``deleted_by`` record it.
  While it drains the node is marked for deletion in the provisioner's cluster state.

Modelling choices (deterministic stand-ins for what production does asynchronously):
* a Node is named after its NodeClaim; NodeClaim names are ``<nodepool>-<5 chars>`` derived from a
  per-run counter (upstream: random ``generateName`` suffix);
* binding is immediate once kube-scheduler picks a node; registration and initialization delays are
  options (defaults 30 s and 5 s);
* Karpenter's re-trigger of provisionable pods runs every 10 s for all of them together.
"""

from __future__ import annotations

import copy
import hashlib
import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from karpy.api.meta import Condition, ObjectMeta
from karpy.api.scenario import (ARRIVE_AFTER_ANNOTATION, DEPART_AFTER_ANNOTATION, RUN_FOR_ANNOTATION,
                                parse_duration)
from karpy.api.node import Node
from karpy.api.nodeclaim import NodeClaim as NodeClaimModel
from karpy.api.pod import Pod, PodCondition, Taint
from karpy.nodeclaim.registration import node_annotations, node_labels
from karpy.options import Options
from karpy.provisioning.defaultconstraints import DefaultTopologySpreadInjector
from karpy.provisioning.volumetopology import VolumeTopology
from karpy.kubescheduler.scheduler import (BOUND, NOMINATED, UNSCHEDULABLE, KubeScheduler, ScheduleOneResult,
                                           SchedulerConfig)
from karpy.provisioning import podutils
from karpy.provisioning.batcher import Batcher
from karpy.provisioning.provisioner import Provisioner
from karpy.provisioning.scheduler import OUTCOME_EXISTING_NODE
from karpy.provisioning.state import ClusterState
from karpy.scheduling.labels import (LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_NODEPOOL,
                                     LABEL_ZONE)
from karpy.scheduling.requirements import Requirements, strict_pod_requirements
from karpy.scheduling.taints import tolerates
from karpy.sim.clock import EventQueue, VirtualClock
from karpy.sim.deployment import DeploymentController
from karpy.sim.events import nodepool_event_warnings
from karpy.sim.existing import adopt_nodeclaims
from karpy.sim.loopguard import LaunchLoopGuard
from karpy.sim.job import JobController
from karpy.sim.replicaset import ManagedReplicaSet, ReplicaSetController
from karpy.sim.statefulset import StatefulSetController
from karpy.sim.store import ObjectStore
from karpy.sim.timeline import Timeline
from karpy.termination.controller import TerminationController

__all__ = ["LaunchRecord", "PeriodicController", "PodHistory", "ProvisioningPass", "Simulation", "SimulationOptions",
           "SimulationResult"]

#: pkg/controllers/provisioning/controller.go: provisionable pods are re-queued every 10 s
POD_REQUEUE_SECONDS = 10.0
LABEL_REGISTERED = "karpenter.sh/registered"
LABEL_INITIALIZED = "karpenter.sh/initialized"
UNREGISTERED_TAINT_KEY = "karpenter.sh/unregistered"
#: pkg/apis/v1/taints.go DisruptedNoScheduleTaint (the termination controller's cordon)
DISRUPTED_TAINT_KEY = "karpenter.sh/disrupted"
#: v1.PodSpec default terminationGracePeriodSeconds
DEFAULT_TERMINATION_GRACE_SECONDS = 30.0
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


@dataclass(frozen=True)
class SimulationOptions:
    preference_policy: str = "Respect"
    min_values_policy: str = "Strict"
    max_instance_types: int = 600
    #: launch -> the Node registers (Ready, labelled, startup taints still on)
    registration_delay: float = 30.0
    #: registration -> initialized (startup taints removed)
    initialization_delay: float = 5.0
    batch_idle_duration: float = 1.0
    batch_max_duration: float = 10.0
    #: virtual seconds after which the run stops even if pods could still make progress
    time_limit: float = 3600.0
    seed: int = 0
    scheduler_config: SchedulerConfig | None = None
    #: run Karpenter's disruption controller (karpy.disruption) on the virtual clock; the run then
    #: lasts until the horizon (``until``, else ``time_limit``)
    disruption: bool = False
    #: Karpenter --feature-gates overrides (karpy.featuregates), e.g. {"SpotToSpotConsolidation": True}
    feature_gates: dict[str, bool] = field(default_factory=dict)
    #: the horizon in virtual seconds (None: run until settled); a Scenario's ``spec.until`` when unset
    until: float | None = None
    #: extra Scenario events (``karpy.api.scenario.ScenarioEvent``), after the Scenario's own
    events: tuple[Any, ...] = ()
    #: Karpenter's operator options shared with the cloud provider; None = built from the two
    #: policies above (``operator_options``)
    operator: Options | None = None

    def operator_options(self) -> Options:
        """The :class:`karpy.options.Options` every layer reads; the two policy fields win."""
        base = self.operator or Options()
        if (base.preference_policy, base.min_values_policy) == (self.preference_policy, self.min_values_policy):
            return base
        return Options(**{**base.__dict__, "preference_policy": self.preference_policy,
                          "min_values_policy": self.min_values_policy})


@dataclass
class LaunchRecord:
    """One NodeClaim as Karpenter created it, and what the cloud provider made of it."""

    name: str
    nodepool: str
    created_at: float
    requested: Any  # the NodeClaim model sent to CloudProvider.create
    launched: Any | None = None  # the NodeClaim returned by create
    error: str | None = None
    instance_type: str | None = None
    capacity_type: str | None = None
    zone: str | None = None
    price: float | None = None
    node_name: str | None = None
    registered_at: float | None = None
    initialized_at: float | None = None
    deleted: bool = False
    #: termination: when it began (the NodeClaim got its deletionTimestamp), when the instance was
    #: deleted, and why (``interruption``, ``nodepool-deleted``, a disruption method, ...)
    deleting_at: float | None = None
    deleted_at: float | None = None
    deleted_by: str | None = None
    scheduling: Any = None  # the in-flight claim of the provisioning pass (for explain output)
    #: explain output (references, no copies): the provisioning pass that created the claim, the
    #: pass's instance types of its NodePool, the claim's instance types before the
    #: MaxInstanceTypes cut and its requirements before ToNodeClaim narrowed them
    pass_index: int = 0
    instance_types: Sequence[Any] | None = None
    untruncated: Sequence[Any] | None = None
    requirements: Any = None
    #: the $/h steps of its life when the price changed after launch (a reserved node demoted to
    #: on-demand when its reservation ended): ``(from, $/h, capacity type)``, the launch first;
    #: empty while the launch price held throughout (``price`` is always the current $/h)
    price_history: list[tuple[float, float, str | None]] = field(default_factory=list)


@dataclass
class ProvisioningPass:
    """One provisioning pass (for explain output): when it ran, the NodePools it considered in
    weight order, the ones the scheduler dropped up front (name -> upstream error) and the ones it
    kept as templates."""

    index: int
    time: float
    nodepools: list[tuple[str, int]] = field(default_factory=list)
    template_errors: dict[str, str] = field(default_factory=dict)
    #: the scheduler's templates (NodePools kept up front), weight order (Scheduler.template_names)
    templates: list[str] = field(default_factory=list)


@dataclass
class PodHistory:
    """What the provisioning passes did with one pod (for explain output). ``decisive`` is the
    last ``(pass, attempt)`` that decided something (``attempt``: the scheduler's record,
    ``karpy.provisioning.scheduler.PodAttempt.from_record(attempt)``) -- a later pass that merely found the pod's
    own launching NodeClaim as an existing node does not replace it; ``last`` the last one."""

    decisive: tuple[ProvisioningPass, Any]
    last: tuple[ProvisioningPass, Any]
    passes: int = 1


@dataclass
class SimulationResult:
    """The final state of a run (``karpy.report`` turns it into the JSON document)."""

    pods: dict[str, Pod]
    deleted_pods: dict[str, Pod]
    nodes: dict[str, Node]
    launches: list[LaunchRecord]
    pod_errors: dict[str, str]
    virtual_seconds: float
    provisioning_passes: int
    scheduling_cycles: int
    warnings: list[str] = field(default_factory=list)
    #: explain output: every provisioning pass that ran the scheduler, in order, and per pod key
    #: what those passes did with the pod
    passes: list[ProvisioningPass] = field(default_factory=list)
    pod_history: dict[str, PodHistory] = field(default_factory=dict)
    options: SimulationOptions | None = None
    #: the timeline (karpy.sim.timeline) and the horizon the cost integral runs to (None: the end
    #: of the run)
    timeline: Timeline = field(default_factory=Timeline)
    horizon: float | None = None
    #: pods whose arrival (karpy.io/arrive-after) lies after the end of the run: key -> arrival time
    not_arrived: dict[str, tuple[Pod, float]] = field(default_factory=dict)
    #: the NodePools at the end of the run (their status conditions: the document's ``nodepools``)
    nodepools: list[Any] = field(default_factory=list)
    #: the disruption controller (decisions, events, timeline steps) when disruption ran
    disruption: Any = None


def _annotation_seconds(pod: Pod, annotation: str) -> float | None:
    value = (pod.metadata.annotations or {}).get(annotation)
    if value is None or value == "":
        return None
    try:
        return parse_duration(value, f"annotation {annotation}=")
    except ValueError:
        raise ValueError(f"pod {pod.key}: annotation {annotation}={value!r} is not a non-negative duration "
                         "(e.g. 90s, 2m, 1h30m)") from None


def arrival_delay(pod: Pod) -> float:
    """Seconds after the start at which ``pod`` arrives (its ``karpy.io/arrive-after`` annotation)."""
    return _annotation_seconds(pod, ARRIVE_AFTER_ANNOTATION) or 0.0


@dataclass
class PeriodicController:
    """A controller on the virtual clock (see :meth:`Simulation.add_controller`)."""

    name: str
    interval: float
    reconcile: Callable[[float], None]
    next_at: float
    #: the store's resource version after the controller's last run (None: never ran)
    seen_version: int | None = None
    wake_at: float | None = None

    def due(self, version: int) -> float | None:
        """The next tick at which the controller must run, or None while nothing changed for it."""
        if self.seen_version != version:
            return self.next_at
        if self.wake_at is not None:
            ticks = max(0.0, math.ceil((self.wake_at - self.next_at) / self.interval))
            return self.next_at + ticks * self.interval
        return None


def _revised(pod: Pod, node_name: str | None = None) -> Pod:
    """A new version of ``pod`` for a status (and binding) update, as the API server returns one.

    Only what an update replaces is copied — the status (whose fields are then reassigned, never
    mutated in place) and, when binding, the spec — so the old version a watch event carries stays
    intact without deep-copying the whole pod.
    """
    spec = pod.spec.model_copy(update={"node_name": node_name}) if node_name is not None else pod.spec
    return pod.model_copy(update={"spec": spec, "status": pod.status.model_copy()})


def _has_disrupted_taint(node: Node) -> bool:
    """controller.go NodeController: the node carries the karpenter.sh/disrupted:NoSchedule taint."""
    return any(t.key == DISRUPTED_TAINT_KEY and t.effect == "NoSchedule" for t in node.spec.taints or ())


def _suffix(seed: str) -> str:
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(_SUFFIX_ALPHABET[b % len(_SUFFIX_ALPHABET)] for b in digest[:5])


class Simulation:
    """One run over a set of manifests. Build it, call :meth:`run` once."""

    def __init__(self, manifests: Any, cloud_provider: Any, options: SimulationOptions | None = None,
                 clock: VirtualClock | None = None,
                 progress: Callable[[float, int, int], None] | None = None) -> None:
        """``progress(virtual_seconds, provisioning_passes, nodeclaims)`` is called after each
        provisioning pass (the CLI shows it on stderr for long runs)."""
        self.progress = progress
        self.manifests = manifests
        self.cloud_provider = cloud_provider
        self.options = options or SimulationOptions()
        self.clock = clock or VirtualClock()
        self.rng = random.Random(self.options.seed)
        self.events = EventQueue(self.clock)
        self.store = ObjectStore()
        self.scheduler = KubeScheduler(self.clock, self.rng, self.options.scheduler_config)
        self.provisioner = Provisioner(cloud_provider, options=self.options.operator_options(),
                                       max_instance_types=self.options.max_instance_types)
        self.provisioner.volumes = self._volumes()  # every NewScheduler (consolidation too) reads them
        self.batcher = Batcher(self.clock, self.options.batch_idle_duration, self.options.batch_max_duration)
        self.launches: list[LaunchRecord] = []
        self.pod_errors: dict[str, str] = {}
        self.deleted_pods: dict[str, Pod] = {}
        self._launch_by_node: dict[str, LaunchRecord] = {}
        self._claim_names: set[str] = set()
        self._requeue_at: float | None = None
        self._passes = 0
        self._pass_log: list[ProvisioningPass] = []
        self._pod_history: dict[str, PodHistory] = {}
        self._pod_claims: dict[str, set[str]] = {}
        self._cycles = 0
        self._last_pass_version: int | None = None
        self._cluster_version = 0
        self._last_cluster: ClusterState | None = None
        self._attempted: dict[str, int] = {}
        self.timeline = Timeline()
        self.replica_sets = ReplicaSetController(self)
        self.deployments = DeploymentController(self, self.replica_sets)
        self.stateful_sets = StatefulSetController(self)
        self.jobs = JobController(self)
        self._launch_by_name: dict[str, LaunchRecord] = {}
        #: controller uid -> pod key -> the pod's store key (namespace, name), in creation order
        self._owned: dict[str, dict[str, tuple[str, str]]] = {}
        self._bound_at: dict[str, float] = {}
        self._condemned: set[str] = set()
        self._controllers: list[PeriodicController] = []
        self._provider_controllers: list[PeriodicController] = []
        self._pending_arrivals: dict[str, tuple[Pod, float]] = {}
        #: what reading the input's cluster state said (karpy.sim.existing)
        self.state_warnings: list[str] = []
        self.loop_guard = LaunchLoopGuard(self)
        self._deployment_syncs: set[str] = set()
        self.horizon: float | None = self.options.until
        #: called as ``fn(kind, object, detail)`` for every timeline entry (karpy.static listens
        #: for its NodeClaims' lifecycle)
        self.record_listeners: list[Callable[[str, str, dict[str, Any]], None]] = []
        #: state.Cluster NodePoolState: static NodePools' NodeClaim counts (karpy.static)
        from karpy.static.nodepoolstate import NodePoolState

        self.nodepool_state = NodePoolState()
        self._wire()
        #: Karpenter's termination controller: every NodeClaim deletion drains through it
        self.termination = TerminationController(self)
        self.disruption: Any = None
        if self.options.disruption:
            from karpy.disruption.controller import DisruptionController
            from karpy.featuregates import resolve

            self.disruption = DisruptionController(self, resolve(self.options.feature_gates))
        self.static: Any = None
        if self.options.operator_options().feature_gates.static_capacity or \
                self.options.feature_gates.get("StaticCapacity", False):
            # controllers.go: the static provisioning and deprovisioning controllers (karpy.static)
            from karpy.static.controller import StaticCapacityController

            self.static = StaticCapacityController(self)

    # -- hooks for periodic controllers (see the module docstring) --------------------------------
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

    def nodeclaim(self, name: str) -> LaunchRecord | None:
        """The launch record of a NodeClaim by name."""
        return self._launch_by_name.get(name)

    def delete_nodeclaim(self, name: str, reason: str, evict_reason: str | None = None) -> bool:
        """Begin Karpenter's termination of NodeClaim ``name`` (see the module docstring): the
        termination controller (:class:`karpy.termination.controller.TerminationController`) taints,
        drains in four tiers respecting PDBs and terminationGracePeriod, and deletes. Returns False
        when it is unknown, never launched, or already deleting."""
        rec = self._launch_by_name.get(name)
        if rec is None or rec.launched is None or rec.deleted or rec.deleting_at is not None:
            return False
        rec.deleting_at = self.clock.now()
        rec.deleted_by = reason
        self.record("nodeclaim.deleting", f"NodeClaim/{name}", reason=reason)
        self.termination.delete(rec, reason, evict_reason)
        return True

    def relabel_nodeclaim(self, name: str, labels: Mapping[str, str], remove: Iterable[str] = (),
                          price: float | None = None) -> bool:
        """A label patch of NodeClaim ``name`` and of its Node (when registered and not deleting),
        as a cloud provider's controller makes it (the AWS capacity-type controller demoting a
        reserved node to on-demand): ``remove`` keys dropped, ``labels`` set; ``price`` the $/h
        from now on (the cost integral follows, :attr:`LaunchRecord.price_history`). False when the
        NodeClaim is unknown, not launched, deleting or deleted."""
        rec = self._launch_by_name.get(name)
        if rec is None or rec.launched is None or rec.deleted or rec.deleting_at is not None:
            return False
        dropped = set(remove)

        def patched(current: Mapping[str, str] | None) -> dict[str, str]:
            out = {k: v for k, v in (current or {}).items() if k not in dropped}
            out.update(labels)
            return out

        before = rec.capacity_type
        rec.launched.metadata.labels = patched(rec.launched.metadata.labels)
        rec.capacity_type = rec.launched.metadata.labels.get(LABEL_CAPACITY_TYPE)
        now = self.clock.now()
        if price is not None and price != rec.price:
            if not rec.price_history:
                rec.price_history.append((rec.created_at, rec.price or 0.0, before))
            rec.price = price
            rec.price_history.append((now, price, rec.capacity_type))
        node = self.store.get("Node", name)
        if node is not None and node.metadata.deletion_timestamp is None:
            updated = node.model_copy(deep=True)
            updated.metadata.labels = patched(updated.metadata.labels)
            self.store.update("Node", updated, old=node)
        self._cluster_version += 1
        self.record("nodeclaim.relabelled", f"NodeClaim/{name}", labels=dict(sorted(labels.items())),
                    removed=sorted(dropped), **({"price": price} if price is not None else {}))
        return True

    def node_labels(self, name: str) -> dict[str, str] | None:
        """The labels of Node ``name`` (registered, not deleting), or None."""
        node = self.store.get("Node", name)
        if node is None or node.metadata.deletion_timestamp is not None:
            return None
        return dict(node.metadata.labels or {})

    def live_nodeclaims(self) -> list[Any]:
        """The launched NodeClaims that are not deleting or deleted, in creation order."""
        return [r.launched for r in self.launches
                if r.launched is not None and not r.deleted and r.deleting_at is None]

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

    def reclaim_at(self, name: str, t: float) -> None:
        """The cloud takes the instance of NodeClaim ``name`` back at ``t`` (a spot reclaim) whether
        or not its drain finished: remaining pods are deleted with it."""
        rec = self._launch_by_name.get(name)
        if rec is None:
            return

        def reclaim() -> None:
            if not rec.deleted:
                self.record("nodeclaim.reclaimed", f"NodeClaim/{name}")
                self._finish_deletion(rec)

        self.events.schedule(t, f"reclaim {name}", reclaim)

    def _finish_deletion(self, rec: LaunchRecord) -> None:
        for pod in self.store.list("Pod"):
            if pod.spec.node_name == rec.name:
                self._delete_pod(pod.key)
        node = self.store.get("Node", rec.name)
        if node is not None:
            self.store.delete("Node", node)
        try:
            self.cloud_provider.delete(rec.launched)
        except Exception as err:  # noqa: BLE001 - NodeClaimNotFound etc.: the instance is gone either way
            self.record("nodeclaim.delete-error", f"NodeClaim/{rec.name}", error=str(err))
        rec.deleted = True
        rec.deleted_at = self.clock.now()
        self._cluster_version += 1
        self.record("nodeclaim.deleted", f"NodeClaim/{rec.name}", reason=rec.deleted_by)

    # -- ControllerHost (karpy.sim.replicaset) ------------------------------------------------------
    def now(self) -> float:
        return self.clock.now()

    def owned_pods(self, owner_uid: str) -> list[Pod]:
        return self.store.get_all("Pod", self._owned.get(owner_uid, {}).values())

    def counts_as_active(self, pod: Pod) -> bool:
        """A pod the workload controllers count: not finished and not condemned by a controller.
        A pod evicted by preemption or a drain counts until it is gone, so its replacement is
        created when it is deleted (upstream: at its deletionTimestamp; the earlier behaviour of
        karpy is kept)."""
        return pod.status.phase not in ("Succeeded", "Failed") and pod.key not in self._condemned

    def ready_since(self, key: str) -> float | None:
        return self._bound_at.get(key)

    def create_controller_pod(self, pod: Pod) -> None:
        ns = pod.metadata.namespace or "default"
        pod.metadata.uid = f"uid-{ns}-{pod.metadata.name}-{self.clock.now():g}"
        pod.metadata.creation_timestamp = self.clock.timestamp()
        self.deleted_pods.pop(pod.key, None)
        self._create_pod(pod)

    def delete_controller_pod(self, key: str, reason: str) -> None:
        pod = self.store.get("Pod", *reversed(key.split("/", 1)))
        if pod is None:
            return
        self._condemned.add(key)
        if not pod.spec.node_name:
            self._delete_pod(key, reason=reason)
            return
        grace = pod.spec.termination_grace_period_seconds
        # a controller deletes (graceful deletion), it does not evict: pod.deleting in the timeline
        self._evict(key, DEFAULT_TERMINATION_GRACE_SECONDS if grace is None else float(grace), reason=reason,
                    kind="pod.deleting")

    # -- wiring -----------------------------------------------------------------------------------
    def _wire(self) -> None:
        ks = self.scheduler

        owned = self._owned

        def on_pod(ev: Any) -> None:
            bound_before = bool(ev.old is not None and ev.old.spec.node_name)
            changed = ev.type == "DELETED" or bool(ev.obj.spec.node_name) != bound_before
            if changed:
                self._cluster_version += 1
            if ev.type != "MODIFIED" or changed:
                for ref in ev.obj.metadata.owner_references or ():
                    if ref.controller and ref.uid:
                        if ev.type == "ADDED":
                            meta = ev.obj.metadata
                            owned.setdefault(ref.uid, {})[ev.obj.key] = (meta.namespace or "", meta.name)
                        elif ev.type == "DELETED":
                            owned.get(ref.uid, {}).pop(ev.obj.key, None)
                        if ev.type != "ADDED" and self.deployments.deployments:
                            d = self.deployments.owns(ref.uid)
                            if d is not None and d.rolling_out:
                                self._schedule_deployment_sync(d.key)
            if ev.type == "ADDED":
                ks.add_pod(ev.obj)
            elif ev.type == "MODIFIED":
                ks.update_pod(ev.obj)
            else:
                ks.delete_pod(ev.obj.key)
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

    def _schedule_deployment_sync(self, key: str) -> None:
        """Re-sync a Deployment at the current instant (after the watch event that asked for it)."""
        if key in self._deployment_syncs:
            return
        self._deployment_syncs.add(key)

        def sync() -> None:
            self._deployment_syncs.discard(key)
            d = self.deployments.deployments.get(key)
            if d is not None:
                self.deployments.sync(d)

        self.events.schedule(self.clock.now(), f"sync Deployment {key}", sync)

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

    # -- loading ----------------------------------------------------------------------------------
    def _load(self) -> None:
        m = self.manifests
        for pc in m.priority_classes:
            self.scheduler.add_priority_class(pc)
        for pdb in m.pod_disruption_budgets:
            self.scheduler.add_pdb(pdb)
        self.scheduler.set_volume_topology(self._volumes())
        self.scheduler.set_default_constraints(self._default_constraints())
        for grp in list(m.pod_groups) + list(m.scheduling_workloads):
            self.scheduler.add_pod_group(grp)
        for np in m.nodepools:
            self.store.create("NodePool", np)
        for node in m.nodes:
            self.store.create("Node", node)
        self.state_warnings = adopt_nodeclaims(self)  # the input's NodeClaims, tied to their Nodes
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
            self._bind_daemonset_pods(node)
        for pod in list(m.pods) + list(m.workload_pods()):
            self._admit(pod)
        self._add_provider_controllers()
        scenarios = list(getattr(m, "scenarios", ()) or ())
        if scenarios or self.options.events:
            from karpy.sim.scenario import ScenarioRunner

            ScenarioRunner(self, scenarios[0] if scenarios else None, self.options.events).schedule()

    def _admit(self, pod: Pod) -> None:
        """Create ``pod`` now, or when its ``karpy.io/arrive-after`` delay has passed."""
        delay = arrival_delay(pod)
        if delay > 0:
            self._pending_arrivals[pod.key] = (pod, self.clock.now() + delay)

            def arrive(pod: Pod = pod) -> None:
                self._pending_arrivals.pop(pod.key, None)
                self._create_pod(pod)

            self.events.schedule(self.clock.now() + delay, f"arrive {pod.key}", arrive)
        else:
            self._create_pod(pod)

    def _create_pod(self, pod: Pod) -> None:
        if not pod.metadata.uid:
            pod.metadata.uid = f"uid-{pod.metadata.namespace}-{pod.metadata.name}"
        if pod.metadata.creation_timestamp is None:
            pod.metadata.creation_timestamp = self.clock.timestamp()
        if pod.spec.node_name:
            pod.status.phase = "Running"
            if pod.status.start_time is None:  # kubelet: status.startTime when the pod starts
                pod.status.start_time = self.clock.timestamp()
        self.store.create("Pod", pod)
        self.record("pod.created", f"Pod/{pod.key}", **({"node": pod.spec.node_name} if pod.spec.node_name else {}))
        if pod.spec.node_name:
            self._started(pod)
        depart = _annotation_seconds(pod, DEPART_AFTER_ANNOTATION)
        if depart is not None:
            key, uid = pod.key, pod.metadata.uid

            def depart_now() -> None:
                current = self.store.get("Pod", *reversed(key.split("/", 1)))
                if current is not None and current.metadata.uid == uid:
                    self._condemned.add(key)
                    self._delete_pod(key, reason="departed")

            self.events.schedule_in(depart, f"depart {key}", depart_now)

    def _started(self, pod: Pod) -> None:
        """A pod began running: remember when (ReplicaSet ranking), and schedule its completion
        when it carries ``karpy.io/run-for``."""
        self._bound_at[pod.key] = self.clock.now()
        run_for = _annotation_seconds(pod, RUN_FOR_ANNOTATION)
        if run_for is None:
            return
        key, uid = pod.key, pod.metadata.uid

        def complete() -> None:
            current = self.store.get("Pod", *reversed(key.split("/", 1)))
            if current is None or current.metadata.uid != uid or current.metadata.deletion_timestamp is not None:
                return
            self._condemned.add(key)
            self.store.delete("Pod", current)
            current.status.phase = "Succeeded"
            self.deleted_pods[key] = current
            self.record("pod.completed", f"Pod/{key}", node=current.spec.node_name)
            self._pod_gone(current, succeeded=True)

        self.events.schedule_in(run_for, f"complete {key}", complete)

    def _daemonset_fits(self, ds: Any, node: Node) -> bool:
        template = ds.template_pod()
        if tolerates(node.spec.taints or (), template.spec.tolerations or ()) is not None:
            # upstream DaemonSet controller tolerates NoExecute/NoSchedule of not-ready etc.;
            # node taints the DaemonSet pod does not tolerate keep it off the node
            return False
        labels = Requirements.from_labels(node.metadata.labels or {})
        return labels.is_compatible(strict_pod_requirements(template))

    def _given_daemonset_pods(self, node_name: str) -> set[tuple[str, str]]:
        """(namespace, DaemonSet name) of the manifests' pods already running on ``node_name`` and
        controlled by a DaemonSet (ownerReferences): a dump lists both the DaemonSet and its pods,
        and the controller does not create a second pod on a node that has one."""
        out: set[tuple[str, str]] = set()
        for pod in getattr(self.manifests, "pods", ()):
            if pod.spec.node_name != node_name:
                continue
            for ref in pod.metadata.owner_references or ():
                if ref.kind == "DaemonSet" and ref.controller:
                    out.add((pod.metadata.namespace or "default", ref.name))
        return out

    def _bind_daemonset_pods(self, node: Node) -> None:
        given = self._given_daemonset_pods(node.metadata.name)
        for ds in self.store.list("DaemonSet"):
            if (ds.metadata.namespace or "default", ds.metadata.name) in given:
                continue
            if self._daemonset_fits(ds, node):
                pod = ds.pod_for_node(node.metadata.name)
                if not podutils.has_dra_requirements(pod):  # claims: kube-scheduler's DynamicResources decides
                    pod.spec = pod.spec.model_copy(update={"node_name": node.metadata.name})  # copy-on-write
                self._create_pod(pod)

    # -- kube-scheduler results -----------------------------------------------------------------
    def _apply(self, result: ScheduleOneResult) -> None:
        for member in result.members or ():
            self._apply(member)
        if result.members:
            return
        if (result.outcome != BOUND and not (result.condition is not None and result.condition_changed)
                and result.nominated_node_name is None and not result.victims and not result.cleared_nominations):
            # Performance only: every branch below is then a no-op whether or not the pod exists
            # (a failure that repeats the pod's condition: 30,000 cycles of the 5,000-pod benchmark
            # while the first nodes start), so the pod is not looked up.
            return
        pod = self.store.get("Pod", *reversed(result.pod_key.split("/", 1)))
        if pod is None:
            return
        if result.outcome == BOUND and result.node_name:
            updated = _revised(pod, node_name=result.node_name)
            updated.status.phase = "Running"
            updated.status.start_time = self.clock.timestamp()  # kubelet sets status.startTime
            updated.status.nominated_node_name = None
            self._set_condition(updated, "True", None, None)
            self.store.update("Pod", updated, old=pod)
            self.pod_errors.pop(pod.key, None)
            self.record("pod.bound", f"Pod/{pod.key}", node=result.node_name)
            self._started(updated)
            return
        if result.outcome in (UNSCHEDULABLE, NOMINATED):
            set_condition = result.condition is not None and result.condition_changed
            if set_condition or result.nominated_node_name is not None:  # else the pod is unchanged
                updated = _revised(pod)
                if set_condition:
                    assert result.condition is not None
                    self._set_condition(updated, result.condition.get("status", "False"),
                                        result.condition.get("reason"), result.condition.get("message"))
                if result.nominated_node_name is not None:
                    updated.status.nominated_node_name = result.nominated_node_name or None
                self.store.update("Pod", updated, old=pod)
            for victim in result.victims:
                self._evict(victim.key, victim.grace_period_seconds)
            for key in result.cleared_nominations:
                other = self.store.get("Pod", *reversed(key.split("/", 1)))
                if other is not None and other.status.nominated_node_name:
                    cleared = _revised(other)
                    cleared.status.nominated_node_name = None
                    self.store.update("Pod", cleared, old=other)

    def _set_condition(self, pod: Pod, status: str, reason: str | None, message: str | None) -> None:
        conds = [c for c in pod.status.conditions if c.type != "PodScheduled"]
        conds.append(PodCondition(type="PodScheduled", status=status, reason=reason, message=message))
        pod.status.conditions = conds

    def _evict(self, key: str, grace: float, reason: str = "preemption", kind: str = "pod.evicted") -> None:
        pod = self.store.get("Pod", *reversed(key.split("/", 1)))
        if pod is None or pod.metadata.deletion_timestamp is not None:
            return
        # a new object with its own metadata and status (the fields that change from here on:
        # deletionTimestamp now, status.phase on deletion); the spec is shared, as _revised does
        meta = pod.metadata.model_copy()
        meta.deletion_timestamp = self.clock.timestamp()
        terminating = pod.model_copy(update={"metadata": meta, "status": pod.status.model_copy()})
        self.store.update("Pod", terminating, old=pod)
        self.record(kind, f"Pod/{key}", node=pod.spec.node_name, reason=reason,
                    grace_period_seconds=float(grace or 0))
        uid = pod.metadata.uid

        def delete() -> None:
            current = self.store.get("Pod", *reversed(key.split("/", 1)))
            if current is not None and current.metadata.uid == uid:
                self._delete_pod(key)

        self.events.schedule_in(float(grace or 0), f"delete {key}", delete)

    def _delete_pod(self, key: str, reason: str | None = None) -> None:
        pod = self.store.get("Pod", *reversed(key.split("/", 1)))
        if pod is None:
            return
        self.store.delete("Pod", pod)
        pod.status.phase = "Deleted"
        self.deleted_pods[key] = pod
        self.record("pod.departed" if reason == "departed" else "pod.deleted", f"Pod/{key}",
                    **({"node": pod.spec.node_name} if pod.spec.node_name else {}))
        self._pod_gone(pod)

    def _pod_gone(self, pod: Pod, succeeded: bool = False) -> None:
        """A pod left the store: its controller re-syncs (a replacement, or the next Job pod).
        A pod a controller condemned (scale-down, departure, completion) is not replaced."""
        self._condemned.discard(pod.key)
        self._bound_at.pop(pod.key, None)
        for ref in pod.metadata.owner_references or ():
            if not ref.controller:
                continue
            uid = ref.uid
            if uid in self.replica_sets.sets:
                rs = self.replica_sets.sets[uid]
                d = self.deployments.deployments.get(rs.deployment) if rs.deployment else None
                if d is not None and d.rolling_out:
                    self._schedule_deployment_sync(d.key)
                else:
                    self.replica_sets.sync(rs)
            elif uid in self.stateful_sets.sets:
                self.stateful_sets.sync(self.stateful_sets.sets[uid])
            elif uid in self.jobs.jobs:
                j = self.jobs.jobs[uid]
                if succeeded:
                    self.jobs.pod_succeeded(j, pod)
                else:
                    self.jobs.sync(j)
            return

    # -- Karpenter --------------------------------------------------------------------------------
    def _cluster_state(self) -> ClusterState:
        claims = [rec.launched for rec in self.launches if rec.launched is not None and not rec.deleted]
        deleting = [rec.name for rec in self.launches if rec.deleting_at is not None and not rec.deleted]
        if self.disruption is not None:
            deleting += sorted(self.disruption.marked)
        # the last snapshot lends its per-node sums to nodes whose bound pods are the same objects
        # (ClusterState.adopt_derived)
        self._last_cluster = ClusterState.from_objects(self.store.list("Node"), claims, self.store.list("Pod"),
                                                       deleting, previous=self._last_cluster, scan_pods=True)
        return self._last_cluster

    def _volumes(self) -> VolumeTopology:
        """The manifests' claims, volumes and classes (plus StatefulSet / ephemeral claims), built once."""
        vt = getattr(self, "_volume_topology", None)
        if vt is None:
            m = self.manifests
            vt = self._volume_topology = VolumeTopology.from_objects(
                getattr(m, "persistent_volume_claims", ()), getattr(m, "persistent_volumes", ()),
                getattr(m, "storage_classes", ()), list(m.pods), list(m.stateful_sets),
                getattr(m, "csi_nodes", ()))
        return vt

    def _default_constraints(self) -> DefaultTopologySpreadInjector | None:
        """The ``--scheduler-config`` default topology-spread injector (None when not configured),
        over the manifests' Services and the pods' ReplicaSets / StatefulSets; built once."""
        if not hasattr(self, "_injector"):
            cfg = self.options.operator_options().scheduler_config
            self._injector = None
            if cfg is not None and cfg.default_constraints:
                m = self.manifests
                controllers = [*m.replication_controllers, *m.replica_sets,
                               *(d.replica_set() for d in m.deployments), *m.stateful_sets]
                self._injector = DefaultTopologySpreadInjector(cfg.default_constraints,
                                                               getattr(m, "services", ()), controllers)
        return self._injector

    def _provision(self) -> None:
        """One provisioning pass: Schedule, then Create each new NodeClaim."""
        self._passes += 1
        self._last_pass_version = self.store.resource_version
        cluster = self._cluster_state()
        self.provisioner.last_scheduler = None
        results = self.provisioner.schedule(self.store.list("Pod"), self.store.list("NodePool"), cluster,
                                            self.store.list("DaemonSet"),
                                            pdbs=list(self.manifests.pod_disruption_budgets), now=self.clock.now(),
                                            volumes=self._volumes(), default_constraints=self._default_constraints())
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
        self.pod_errors = {k: v for k, v in results.pod_errors.items()}
        for key, msg in getattr(results, "ignored", {}).items():
            self.pod_errors[key] = msg
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
            staged.append(self._stage_nodeclaim(claim, pool_types.get(claim.nodepool_name),
                                                untruncated.get(id(claim))))
        self._launch(staged)
        for record in staged:  # kept for explain output only from here (issue #13, memory)
            release = getattr(record.scheduling, "release_solve_state", None)
            if release is not None:
                release()
        self._last_pass_version = self.store.resource_version if not staged else None
        if self.progress is not None:
            self.progress(self.clock.now(), self._passes, len(self.launches))

    def _record_attempts(self, ps: ProvisioningPass, sched: Any) -> None:
        """Fold one pass's PodAttempt records into the per-pod history (see PodHistory)."""
        history = self._pod_history
        own = self._pod_claims
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

    def _claim_name(self, nodepool: str) -> str:
        i = 0
        while True:
            name = f"{nodepool}-{_suffix(f'{nodepool}/{len(self._claim_names) + i}')}"
            if name not in self._claim_names:
                self._claim_names.add(name)
                return name
            i += 1

    def _stage_nodeclaim(self, claim: Any, instance_types: Sequence[Any] | None = None,
                         untruncated: Sequence[Any] | None = None) -> LaunchRecord:
        """ToNodeClaim, a name, and the launch record (the launch itself is :meth:`_launch`)."""
        requirements = claim.requirements  # ToNodeClaim replaces (never mutates) this set
        model: NodeClaimModel = self.provisioner.to_nodeclaim(claim)
        model.metadata.name = self._claim_name(claim.nodepool_name)
        model.metadata.creation_timestamp = self.clock.timestamp()
        record = LaunchRecord(name=model.metadata.name, nodepool=claim.nodepool_name,
                              created_at=self.clock.now(), requested=model, scheduling=claim,
                              pass_index=self._passes, instance_types=instance_types,
                              untruncated=untruncated if untruncated is not None else claim.instance_type_options,
                              requirements=requirements)
        self.launches.append(record)
        self._launch_by_name[record.name] = record
        self.record("nodeclaim.created", f"NodeClaim/{record.name}", nodepool=record.nodepool,
                    pods=len(claim.pods))
        for p in claim.pods:
            self._pod_claims.setdefault(p.key, set()).add(record.name)
        return record

    def _launch(self, records: Sequence[LaunchRecord]) -> None:
        """Launch one pass's NodeClaims at the same virtual instant, as upstream creates them in
        parallel: a provider with ``create_many`` gets them together (the AWS provider's CreateFleet
        batcher then merges identical requests); otherwise they are created one by one."""
        if not records:
            return
        # ``model_copy(deep=True)``, which is ``copy.deepcopy`` of the model. Not in upstream (Go
        # passes the object); the same copy because most of a deep copy's time is its walk over the
        # requirement value lists (up to 600 instance-type names each), whose elements are ``str``
        # (immutable: deepcopy returns them as they are), so ``list(values)`` already is the deep
        # copy of such a list; seeding deepcopy's memo with it makes deepcopy use it (the original
        # lists live as long as ``r.requested``, so their ids are not reused meanwhile). Lists
        # holding anything else are left to deepcopy.
        models = []
        for r in records:
            memo: dict[int, Any] = {}
            for req in r.requested.spec.requirements or ():
                values = req.values
                if type(values) is list and all(type(v) is str for v in values):
                    memo[id(values)] = list(values)
            models.append(copy.deepcopy(r.requested, memo) if memo else r.requested.model_copy(deep=True))
        create_many = getattr(self.cloud_provider, "create_many", None)
        if create_many is not None and len(models) > 1:
            outcomes: list[Any] = list(create_many(models))
        else:
            outcomes = []
            for m in models:
                try:
                    outcomes.append(self.cloud_provider.create(m))
                except Exception as err:  # noqa: BLE001 - every create error is recorded, as Karpenter logs it
                    outcomes.append(err)
        for record, outcome in zip(records, outcomes):
            if isinstance(outcome, BaseException):
                record.error = str(outcome)
                self.record("nodeclaim.launch-failed", f"NodeClaim/{record.name}", error=record.error)
                for p in record.scheduling.pods:
                    self.pod_errors.setdefault(p.key, f"launching nodeclaim, {outcome}")
            else:
                self._launched(record, outcome)

    def _launched(self, record: LaunchRecord, launched: Any) -> None:
        record.launched = launched
        labels = launched.metadata.labels or {}
        record.instance_type = labels.get(LABEL_INSTANCE_TYPE)
        record.capacity_type = labels.get(LABEL_CAPACITY_TYPE)
        record.zone = labels.get(LABEL_ZONE)
        record.price = self._price_of(record)
        record.node_name = record.name
        launched.metadata.name = record.name
        if launched.status is not None:
            launched.status.node_name = record.name
        self.record("nodeclaim.launched", f"NodeClaim/{record.name}", instance_type=record.instance_type,
                    zone=record.zone, capacity_type=record.capacity_type, price=record.price)
        self.events.schedule_in(self.options.registration_delay, f"register {record.name}",
                                lambda: self._register(record))

    def _price_of(self, record: LaunchRecord) -> float | None:
        """$/h of the launched offering: the provider's own figure when it has one (the AWS provider
        reports the real price of the override EC2 picked, not an overlaid one), else the price of
        the matching offering."""
        launch_price = getattr(self.cloud_provider, "launch_price", None)
        if launch_price is not None:
            price: float | None = launch_price(record.name)
            return price
        pool = self.store.get("NodePool", record.nodepool)
        if pool is None or record.instance_type is None:
            return None
        for it in self.cloud_provider.get_instance_types(pool):
            if it.name != record.instance_type:
                continue
            for o in it.offerings:
                if o.zone == record.zone and o.capacity_type == record.capacity_type:
                    offering_price: float = o.price
                    return offering_price
        return None

    def _register(self, record: LaunchRecord) -> None:
        if record.deleting_at is not None:
            if not record.deleted:
                self._finish_deletion(record)  # deleted before it registered: no Node to drain
            return
        claim = record.launched
        assert claim is not None  # registration is scheduled only once the claim launched
        labels = node_labels(claim, record.name, self.cloud_provider)  # kubelet + cloud side + syncNode
        taints = [Taint(key=t.key, value=t.value, effect=t.effect) for t in (claim.spec.taints or ())]
        startup = [Taint(key=t.key, value=t.value, effect=t.effect) for t in (claim.spec.startup_taints or ())]
        status = claim.status
        node = Node.model_validate({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": record.name, "labels": labels, "annotations": node_annotations(claim)},
            "spec": {"providerID": getattr(status, "provider_id", None),
                     "taints": [t.model_dump(by_alias=True, exclude_none=True) for t in taints + startup]},
            "status": {"capacity": {k: str(v) for k, v in (status.capacity or {}).items()},
                       "allocatable": {k: str(v) for k, v in (status.allocatable or {}).items()},
                       "conditions": [{"type": "Ready", "status": "True"}]},
        })
        record.registered_at = self.clock.now()
        self._launch_by_node[record.name] = record
        self.store.create("Node", node)
        self.record("nodeclaim.registered", f"NodeClaim/{record.name}")
        self._bind_daemonset_pods(node)
        self.events.schedule_in(self.options.initialization_delay, f"initialize {record.name}",
                                lambda: self._initialize(record))

    def _initialize(self, record: LaunchRecord) -> None:
        node = self.store.get("Node", record.name)
        if node is None or record.deleting_at is not None:
            return
        assert record.launched is not None  # it registered, so it launched
        startup = {(t.key, t.effect) for t in (record.launched.spec.startup_taints or ())}
        # a new Node whose spec and metadata are new objects (the two fields that change, both
        # reassigned); the rest is shared with the old version, which nothing edits in place (the
        # store replaces objects), as _revised does for pods -- the same content as a deep copy
        spec = node.spec.model_copy(update={
            "taints": [t for t in (node.spec.taints or ()) if (t.key, t.effect) not in startup]})
        meta = node.metadata.model_copy(update={
            "labels": {**(node.metadata.labels or {}), LABEL_INITIALIZED: "true"}})
        updated = node.model_copy(update={"spec": spec, "metadata": meta})
        self.store.update("Node", updated, old=node)
        record.initialized_at = self.clock.now()
        self.record("nodeclaim.initialized", f"NodeClaim/{record.name}")

    # -- the loop ---------------------------------------------------------------------------------
    def _quiescent(self) -> bool:
        if len(self.events) or self.batcher.open:
            return False
        if self.scheduler.queue.has_poppable():
            return False
        # every pending pod must have been tried since the cluster last changed under it
        gated = set(self.scheduler.gated_pods())
        for pod in self.store.iter("Pod"):
            if pod.spec.node_name or pod.metadata.deletion_timestamp is not None or pod.key in gated:
                continue
            if self._attempted.get(pod.key, -1) < self._cluster_version:
                return False
        provisionable = any(podutils.is_provisionable(p) for p in self.store.iter("Pod"))
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
        if next_change is not None and any(podutils.is_provisionable(p) for p in self.store.iter("Pod")):
            t = next_change(self.clock.now())
            if t is not None and t > self.clock.now():
                times.append(t)
        times = [t for t in times if t <= limit]
        return min(times) if times else None

    def run(self) -> SimulationResult:
        self._load()
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
                self._apply(result)
            if self._requeue_at is not None and self._requeue_at <= now:
                self._requeue_at = None
                for pod in self.store.list("Pod"):
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
                    self.clock.advance_to(wake)
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
                self.clock.advance_to(nxt)
            while (due := self.events.next_time()) is not None and due <= self.clock.now():
                self.events.run_next()
        if self.horizon is not None and self.clock.now() < self.horizon:
            self.clock.advance_to(self.horizon)
        return SimulationResult(
            pods={p.key: p for p in self.store.list("Pod")},
            deleted_pods=dict(self.deleted_pods),
            nodes={n.metadata.name: n for n in self.store.list("Node")},
            launches=list(self.launches),
            pod_errors=dict(self.pod_errors),
            virtual_seconds=self.clock.now(),
            provisioning_passes=self._passes,
            scheduling_cycles=self._cycles,
            warnings=list(getattr(self.manifests, "warnings", [])) + self.state_warnings + self.provisioner.warnings()
            + nodepool_event_warnings(self._pass_log) + self.loop_guard.warnings(),
            passes=list(self._pass_log),
            pod_history=dict(self._pod_history),
            options=self.options,
            disruption=self.disruption,
            timeline=self.timeline,
            horizon=self.horizon,
            not_arrived=dict(self._pending_arrivals),
            nodepools=list(self.store.list("NodePool")),
        )
