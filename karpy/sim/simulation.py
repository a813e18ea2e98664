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
can pop, no batch window open, and the last provisioning pass created nothing — or at ``time_limit``.

Modelling choices (deterministic stand-ins for what production does asynchronously):
* a Node is named after its NodeClaim; NodeClaim names are ``<nodepool>-<5 chars>`` derived from a
  per-run counter (upstream: random ``generateName`` suffix);
* binding is immediate once kube-scheduler picks a node; registration and initialization delays are
  options (defaults 30 s and 5 s);
* Karpenter's re-trigger of provisionable pods runs every 10 s for all of them together.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from karpy.api.meta import Condition, ObjectMeta
from karpy.api.node import Node
from karpy.api.nodeclaim import NodeClaim as NodeClaimModel
from karpy.api.pod import Pod, PodCondition, Taint
from karpy.kubescheduler.scheduler import (BOUND, NOMINATED, UNSCHEDULABLE, KubeScheduler, ScheduleOneResult,
                                           SchedulerConfig)
from karpy.provisioning import podutils
from karpy.provisioning.batcher import Batcher
from karpy.provisioning.provisioner import Provisioner
from karpy.provisioning.scheduler import OUTCOME_EXISTING_NODE
from karpy.provisioning.state import ClusterState
from karpy.scheduling.labels import (LABEL_CAPACITY_TYPE, LABEL_HOSTNAME, LABEL_INSTANCE_TYPE, LABEL_NODEPOOL,
                                     LABEL_ZONE)
from karpy.scheduling.requirements import Requirements, strict_pod_requirements
from karpy.scheduling.taints import tolerates
from karpy.sim.clock import EventQueue, VirtualClock
from karpy.sim.store import ObjectStore

__all__ = ["LaunchRecord", "PodHistory", "ProvisioningPass", "Simulation", "SimulationOptions", "SimulationResult"]

#: Annotation on a Pod (or a workload's pod template): create the pod this long after the start
#: (``"90s"``, ``"2m"``, ``"1h30m"`` or seconds as a number) instead of at time 0.
ARRIVE_AFTER_ANNOTATION = "karpy.io/arrive-after"
#: pkg/controllers/provisioning/controller.go: provisionable pods are re-queued every 10 s
POD_REQUEUE_SECONDS = 10.0
LABEL_REGISTERED = "karpenter.sh/registered"
LABEL_INITIALIZED = "karpenter.sh/initialized"
UNREGISTERED_TAINT_KEY = "karpenter.sh/unregistered"
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_DURATION_RE = re.compile(r"^(\d+(?:\.\d+)?h)?(\d+(?:\.\d+)?m)?(\d+(?:\.\d+)?s)?$")


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
    deleted: bool = False
    scheduling: Any = None  # the in-flight claim of the provisioning pass (for explain output)
    #: explain output (references, no copies): the provisioning pass that created the claim, the
    #: pass's instance types of its NodePool, the claim's instance types before the
    #: MaxInstanceTypes cut and its requirements before ToNodeClaim narrowed them
    pass_index: int = 0
    instance_types: Sequence[Any] | None = None
    untruncated: Sequence[Any] | None = None
    requirements: Any = None


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


def arrival_delay(pod: Pod) -> float:
    """Seconds after the start at which ``pod`` arrives (its ``karpy.io/arrive-after`` annotation)."""
    value = (pod.metadata.annotations or {}).get(ARRIVE_AFTER_ANNOTATION)
    if not value:
        return 0.0
    try:
        seconds = float(value)
    except ValueError:
        m = _DURATION_RE.match(value.strip())
        if not m or not any(m.groups()):
            raise ValueError(f"pod {pod.key}: annotation {ARRIVE_AFTER_ANNOTATION}={value!r} "
                             "is not a duration (e.g. 90s, 2m, 1h30m)") from None
        h, mi, sec = (float(g[:-1]) if g else 0.0 for g in m.groups())
        seconds = h * 3600 + mi * 60 + sec
    if seconds < 0:
        raise ValueError(f"pod {pod.key}: annotation {ARRIVE_AFTER_ANNOTATION}={value!r} must not be negative")
    return seconds


def _revised(pod: Pod, node_name: str | None = None) -> Pod:
    """A new version of ``pod`` for a status (and binding) update, as the API server returns one.

    Only what an update replaces is copied — the status (whose fields are then reassigned, never
    mutated in place) and, when binding, the spec — so the old version a watch event carries stays
    intact without deep-copying the whole pod.
    """
    spec = pod.spec.model_copy(update={"node_name": node_name}) if node_name is not None else pod.spec
    return pod.model_copy(update={"spec": spec, "status": pod.status.model_copy()})


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
        self.provisioner = Provisioner(cloud_provider, preference_policy=self.options.preference_policy,
                                       min_values_policy=self.options.min_values_policy,
                                       max_instance_types=self.options.max_instance_types)
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
        self._attempted: dict[str, int] = {}
        self._workloads: dict[tuple[str, str, str], Any] = {}
        self._next_replica: dict[tuple[str, str, str], int] = {}
        self._wire()

    # -- wiring -----------------------------------------------------------------------------------
    def _wire(self) -> None:
        ks = self.scheduler

        def on_pod(ev: Any) -> None:
            bound_before = bool(ev.old is not None and ev.old.spec.node_name)
            if ev.type == "DELETED" or bool(ev.obj.spec.node_name) != bound_before:
                self._cluster_version += 1
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

        self.store.watch("Pod", on_pod)
        self.store.watch("Node", on_node)

    def _trigger(self, pod: Pod) -> None:
        """controller.go: every provisionable pod triggers the batcher and is re-queued in 10 s."""
        self.batcher.trigger(pod.metadata.uid or pod.key)
        if self._requeue_at is None:
            self._requeue_at = self.clock.now() + POD_REQUEUE_SECONDS

    # -- loading ----------------------------------------------------------------------------------
    def _load(self) -> None:
        m = self.manifests
        for pc in m.priority_classes:
            self.scheduler.add_priority_class(pc)
        for pdb in m.pod_disruption_budgets:
            self.scheduler.add_pdb(pdb)
        for grp in list(m.pod_groups) + list(m.scheduling_workloads):
            self.scheduler.add_pod_group(grp)
        for np in m.nodepools:
            self.store.create("NodePool", np)
        for node in m.nodes:
            self.store.create("Node", node)
        for ds in m.daemon_sets:
            self.store.create("DaemonSet", ds)
        for kind, items in (("Deployment", m.deployments), ("ReplicaSet", m.replica_sets),
                            ("StatefulSet", m.stateful_sets), ("Job", m.jobs)):
            for w in items:
                self._workloads[(kind, w.metadata.namespace or "default", w.metadata.name)] = w
        for node in m.nodes:
            self._bind_daemonset_pods(node)
        for pod in list(m.pods) + list(m.workload_pods()):
            delay = arrival_delay(pod)
            if delay > 0:
                self.events.schedule(delay, f"arrive {pod.key}", lambda pod=pod: self._create_pod(pod))
            else:
                self._create_pod(pod)

    def _create_pod(self, pod: Pod) -> None:
        if not pod.metadata.uid:
            pod.metadata.uid = f"uid-{pod.metadata.namespace}-{pod.metadata.name}"
        if pod.metadata.creation_timestamp is None:
            pod.metadata.creation_timestamp = self.clock.timestamp()
        if pod.spec.node_name:
            pod.status.phase = "Running"
        self.store.create("Pod", pod)

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
                pod.spec.node_name = node.metadata.name
                self._create_pod(pod)

    # -- kube-scheduler results -----------------------------------------------------------------
    def _apply(self, result: ScheduleOneResult) -> None:
        for member in result.members or ():
            self._apply(member)
        if result.members:
            return
        pod = self.store.get("Pod", *reversed(result.pod_key.split("/", 1)))
        if pod is None:
            return
        if result.outcome == BOUND and result.node_name:
            updated = _revised(pod, node_name=result.node_name)
            updated.status.phase = "Running"
            updated.status.nominated_node_name = None
            self._set_condition(updated, "True", None, None)
            self.store.update("Pod", updated, old=pod)
            self.pod_errors.pop(pod.key, None)
            return
        if result.outcome in (UNSCHEDULABLE, NOMINATED):
            updated = _revised(pod)
            changed = False
            if result.condition is not None and result.condition_changed:
                self._set_condition(updated, result.condition.get("status", "False"),
                                    result.condition.get("reason"), result.condition.get("message"))
                changed = True
            if result.nominated_node_name is not None:
                updated.status.nominated_node_name = result.nominated_node_name or None
                changed = True
            if changed:
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

    def _evict(self, key: str, grace: float) -> None:
        pod = self.store.get("Pod", *reversed(key.split("/", 1)))
        if pod is None or pod.metadata.deletion_timestamp is not None:
            return
        terminating = pod.model_copy(deep=True)
        terminating.metadata.deletion_timestamp = self.clock.timestamp()
        self.store.update("Pod", terminating, old=pod)
        self.events.schedule_in(float(grace or 0), f"delete {key}", lambda: self._delete_pod(key))

    def _delete_pod(self, key: str) -> None:
        pod = self.store.get("Pod", *reversed(key.split("/", 1)))
        if pod is None:
            return
        self.store.delete("Pod", pod)
        pod.status.phase = "Deleted"
        self.deleted_pods[key] = pod
        self._recreate_replica(pod)

    def _recreate_replica(self, pod: Pod) -> None:
        """A controller-owned evicted pod comes back as a new replica (StatefulSets: same name)."""
        for ref in pod.metadata.owner_references or ():
            if not ref.controller:
                continue
            ns = pod.metadata.namespace or "default"
            owner_kind = ref.kind
            workload = self._workloads.get((owner_kind, ns, ref.name))
            if workload is None and owner_kind == "ReplicaSet":
                for (kind, wns, _), w in self._workloads.items():
                    if kind == "Deployment" and wns == ns and w.replica_set().metadata.name == ref.name:
                        workload = w
                        break
            if workload is None:
                return
            wkey = (type(workload).__name__, ns, workload.metadata.name)
            if type(workload).__name__ == "StatefulSet":
                ordinal = int(pod.metadata.name.rsplit("-", 1)[1])
                fresh = workload.pod_for(ordinal)
                self.deleted_pods.pop(pod.key, None)
            else:
                index = self._next_replica.get(wkey, workload.spec.replicas if hasattr(workload.spec, "replicas")
                                               and workload.spec.replicas is not None else 1)
                self._next_replica[wkey] = index + 1
                fresh = workload.pod_for(index)
            fresh.metadata.uid = f"uid-{ns}-{fresh.metadata.name}-{self.clock.now():g}"
            fresh.metadata.creation_timestamp = self.clock.timestamp()
            self._create_pod(fresh)
            return

    # -- Karpenter --------------------------------------------------------------------------------
    def _cluster_state(self) -> ClusterState:
        claims = [rec.launched for rec in self.launches if rec.launched is not None and not rec.deleted]
        return ClusterState.from_objects(self.store.list("Node"), claims, self.store.list("Pod"))

    def _provision(self) -> None:
        """One provisioning pass: Schedule, then Create each new NodeClaim."""
        self._passes += 1
        self._last_pass_version = self.store.resource_version
        cluster = self._cluster_state()
        self.provisioner.last_scheduler = None
        results = self.provisioner.schedule(self.store.list("Pod"), self.store.list("NodePool"), cluster,
                                            self.store.list("DaemonSet"))
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
        self.pod_errors = {k: v for k, v in results.pod_errors.items()}
        for key, msg in getattr(results, "ignored", {}).items():
            self.pod_errors[key] = msg
        nodepools = {np.metadata.name: np for np in self.store.list("NodePool")}
        staged: list[LaunchRecord] = []
        for claim in results.new_nodeclaims:
            pool = nodepools.get(claim.nodepool_name)
            if pool is not None:
                # provisioner.go Create: limits against the state before this pass's launches (its
                # NodeClaims are created in parallel and have no capacity until launched)
                exceeded = self.provisioner.limits_exceeded(pool, cluster)
                if exceeded is not None:
                    for p in claim.pods:
                        self.pod_errors[p.key] = exceeded
                    continue
            staged.append(self._stage_nodeclaim(claim, pool_types.get(claim.nodepool_name),
                                                untruncated.get(id(claim))))
        self._launch(staged)
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
        for p in claim.pods:
            self._pod_claims.setdefault(p.key, set()).add(record.name)
        return record

    def _launch(self, records: Sequence[LaunchRecord]) -> None:
        """Launch one pass's NodeClaims at the same virtual instant, as upstream creates them in
        parallel: a provider with ``create_many`` gets them together (the AWS provider's CreateFleet
        batcher then merges identical requests); otherwise they are created one by one."""
        if not records:
            return
        models = [r.requested.model_copy(deep=True) for r in records]
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
        self.events.schedule_in(self.options.registration_delay, f"register {record.name}",
                                lambda: self._register(record))

    def _price_of(self, record: LaunchRecord) -> float | None:
        """$/h of the launched offering: the provider's own figure when it has one (the AWS provider
        reports the real price of the override EC2 picked, not an overlaid one), else the price of
        the matching offering."""
        launch_price = getattr(self.cloud_provider, "launch_price", None)
        if launch_price is not None:
            return launch_price(record.name)
        pool = self.store.get("NodePool", record.nodepool)
        if pool is None or record.instance_type is None:
            return None
        for it in self.cloud_provider.get_instance_types(pool):
            if it.name != record.instance_type:
                continue
            for o in it.offerings:
                if o.zone == record.zone and o.capacity_type == record.capacity_type:
                    return o.price
        return None

    def _register(self, record: LaunchRecord) -> None:
        claim = record.launched
        labels = dict(claim.metadata.labels or {})
        labels[LABEL_HOSTNAME] = record.name
        labels[LABEL_REGISTERED] = "true"
        taints = [Taint(key=t.key, value=t.value, effect=t.effect) for t in (claim.spec.taints or ())]
        startup = [Taint(key=t.key, value=t.value, effect=t.effect) for t in (claim.spec.startup_taints or ())]
        status = claim.status
        node = Node.model_validate({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": record.name, "labels": labels},
            "spec": {"providerID": getattr(status, "provider_id", None),
                     "taints": [t.model_dump(by_alias=True, exclude_none=True) for t in taints + startup]},
            "status": {"capacity": {k: str(v) for k, v in (status.capacity or {}).items()},
                       "allocatable": {k: str(v) for k, v in (status.allocatable or {}).items()},
                       "conditions": [{"type": "Ready", "status": "True"}]},
        })
        record.registered_at = self.clock.now()
        self._launch_by_node[record.name] = record
        self.store.create("Node", node)
        self._bind_daemonset_pods(node)
        self.events.schedule_in(self.options.initialization_delay, f"initialize {record.name}",
                                lambda: self._initialize(record))

    def _initialize(self, record: LaunchRecord) -> None:
        node = self.store.get("Node", record.name)
        if node is None:
            return
        updated = node.model_copy(deep=True)
        startup = {(t.key, t.effect) for t in (record.launched.spec.startup_taints or ())}
        updated.spec.taints = [t for t in (updated.spec.taints or ()) if (t.key, t.effect) not in startup]
        updated.metadata.labels = {**(updated.metadata.labels or {}), LABEL_INITIALIZED: "true"}
        self.store.update("Node", updated, old=node)

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

    def run(self) -> SimulationResult:
        self._load()
        limit = self.options.time_limit
        while True:
            now = self.clock.now()
            # kube-scheduler works through everything it can pop now
            while self.scheduler.next_event_time() <= now:
                result = self.scheduler.schedule_one()
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
            if self.batcher.ready(now):
                self._provision()
                continue
            if self._quiescent():
                break
            candidates = [t for t in (self.events.next_time(), self.batcher.deadline(), self._requeue_at,
                                      self.scheduler.next_event_time()) if t is not None and not math.isinf(t)]
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
            while self.events.next_time() is not None and self.events.next_time() <= self.clock.now():
                self.events.run_next()
        return SimulationResult(
            pods={p.key: p for p in self.store.list("Pod")},
            deleted_pods=dict(self.deleted_pods),
            nodes={n.metadata.name: n for n in self.store.list("Node")},
            launches=list(self.launches),
            pod_errors=dict(self.pod_errors),
            virtual_seconds=self.clock.now(),
            provisioning_passes=self._passes,
            scheduling_cycles=self._cycles,
            warnings=list(getattr(self.manifests, "warnings", [])),
            passes=list(self._pass_log),
            pod_history=dict(self._pod_history),
            options=self.options,
        )
