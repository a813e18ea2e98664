"""Pods on the virtual clock: admitted (at once, or at their ``karpy.io/arrive-after``), created,
bound by kube-scheduler's results, evicted after their grace period, completed
(``karpy.io/run-for``) or departed (``karpy.io/depart-after``); DaemonSet pods bound to every node
they fit (as the DaemonSet controller does); a pod gone wakes its workload controller, which
creates a replacement. Also the workload controllers' host (:class:`karpy.sim.replicaset.ControllerHost`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from karpy.api.node import Node
from karpy.api.pod import Pod, PodCondition
from karpy.api.scenario import (ARRIVE_AFTER_ANNOTATION, DEPART_AFTER_ANNOTATION, RUN_FOR_ANNOTATION,
                                parse_duration)
from karpy.kubescheduler.scheduler import BOUND, NOMINATED, UNSCHEDULABLE, ScheduleOneResult
from karpy.scheduling.requirements import Requirements, strict_pod_requirements
from karpy.scheduling.taints import tolerates
from karpy.sim.deployment import DeploymentController
from karpy.sim.job import JobController
from karpy.sim.podsbynode import PodsByNode
from karpy.sim.replicaset import ReplicaSetController
from karpy.sim.statefulset import StatefulSetController
from karpy.utils import pod as podutils

if TYPE_CHECKING:  # pragma: no cover
    from karpy.sim.clock import EventQueue, VirtualClock
    from karpy.sim.store import ObjectStore, WatchEvent

__all__ = ["DEFAULT_TERMINATION_GRACE_SECONDS", "Pods", "Recorder", "arrival_delay"]

#: v1.PodSpec default terminationGracePeriodSeconds
DEFAULT_TERMINATION_GRACE_SECONDS = 30.0
_FINISHED = ("Succeeded", "Failed")


class Recorder(Protocol):
    """The simulation's timeline: ``record(kind, object, **detail)`` at the current virtual time."""

    def __call__(self, kind: str, obj: str, **detail: Any) -> None: ...


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


def _revised(pod: Pod, node_name: str | None = None) -> Pod:
    """A new version of ``pod`` for a status (and binding) update, as the API server returns one.

    Only what an update replaces is copied — the status (whose fields are then reassigned, never
    mutated in place) and, when binding, the spec — so the old version a watch event carries stays
    intact without deep-copying the whole pod.
    """
    spec = pod.spec.model_copy(update={"node_name": node_name}) if node_name is not None else pod.spec
    return pod.model_copy(update={"spec": spec, "status": pod.status.model_copy()})


class Pods:
    """The simulation's pods (see the module docstring); the workload controllers' host."""

    def __init__(self, store: ObjectStore, clock: VirtualClock, events: EventQueue, record: Recorder,
                 errors: dict[str, str]) -> None:
        """``record``: the simulation's timeline; ``errors``: its per-pod errors (a binding clears one)."""
        self.store = store
        self.clock = clock
        self.events = events
        self.record = record
        self.errors = errors
        #: pods gone from the store (deleted, completed), by key: the document reports them -- the
        #: first ``deleted_limit`` (karpy.sim.retention); later ones are counted by phase
        self.deleted: dict[str, Pod] = {}
        self.deleted_limit: int | None = None
        self.deleted_dropped: dict[str, int] = {}
        #: pods whose arrival (karpy.io/arrive-after) is still ahead: key -> (pod, arrival time)
        self.arrivals: dict[str, tuple[Pod, float]] = {}
        #: controller uid -> pod key -> the pod's store key (namespace, name), in creation order
        self._owned: dict[str, dict[str, tuple[str, str]]] = {}
        self._bound_at: dict[str, float] = {}
        self._condemned: set[str] = set()
        #: controller uid -> keys of its pods in the store that are Succeeded or Failed
        self._finished_owned: dict[str, set[str]] = {}
        self._deployment_syncs: set[str] = set()
        self._given_daemonset: dict[str, set[tuple[str, str]]] = {}
        #: the pods bound to each node (fed by the simulation's Pod watch)
        self.by_node = PodsByNode(store)
        self.replica_sets = ReplicaSetController(self)
        self.deployments = DeploymentController(self, self.replica_sets)
        self.stateful_sets = StatefulSetController(self)
        self.jobs = JobController(self)

    def now(self) -> float:
        return self.clock.now()

    def track_owners(self, ev: WatchEvent, changed: bool) -> None:
        """A pod watch event: the pods each controller owns, and a rolling Deployment re-synced when
        one of its pods changed (``changed``: bound, unbound or deleted)."""
        obj = ev.obj
        finished = ev.type != "DELETED" and obj.status.phase in _FINISHED
        # (no karpy path stores a finished pod today -- a completion leaves the store first, the input's
        # terminal pods are not stored -- so this is empty unless something does; the count stays right then)
        if finished or self._finished_owned:
            self._note_finished(obj, finished)
        if ev.type == "MODIFIED" and not changed:
            return
        owned = self._owned
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

    def _note_finished(self, pod: Pod, finished: bool) -> None:
        for ref in pod.metadata.owner_references or ():
            if ref.controller and ref.uid:
                keys = self._finished_owned.setdefault(ref.uid, set())
                if finished:
                    keys.add(pod.key)
                else:
                    keys.discard(pod.key)

    def index_daemonset_pods(self, pods: Iterable[Pod]) -> None:
        """The input's pods already running on a node and controlled by a DaemonSet: a dump lists
        both a DaemonSet and its pods, and the controller does not create a second pod on a node
        that has one (read once, at load)."""
        for pod in pods:
            for ref in pod.metadata.owner_references or ():
                if pod.spec.node_name and ref.kind == "DaemonSet" and ref.controller:
                    self._given_daemonset.setdefault(pod.spec.node_name, set()).add(
                        (pod.metadata.namespace or "default", ref.name))

    # -- the workload controllers' host (karpy.sim.replicaset.ControllerHost) ----------------------
    def owned_pods(self, owner_uid: str) -> list[Pod]:
        return self.store.get_all("Pod", self._owned.get(owner_uid, {}).values())

    def active_owned_pods(self, owner_uid: str) -> list[Pod]:
        """``owned_pods(owner_uid)`` that ``counts_as_active``, read from the owner index (its pod
        keys are the pods' ``key``) without building each pod's key again."""
        owned = self._owned.get(owner_uid)
        if not owned:
            return []
        get, condemned = self.store.getter("Pod"), self._condemned
        out = []
        for key, store_key in owned.items():
            if key not in condemned:
                pod = get(store_key)
                if pod is not None and pod.status.phase not in ("Succeeded", "Failed"):
                    out.append(pod)
        return out

    def active_owned_count(self, owner_uid: str) -> int:
        """``len(active_owned_pods(owner_uid))`` from the owner index's size, less its finished and
        condemned pods, without reading a pod."""
        owned = self._owned.get(owner_uid)
        if not owned:
            return 0
        condemned = self._condemned
        if len(condemned) > len(owned):
            return len(self.active_owned_pods(owner_uid))
        finished = self._finished_owned.get(owner_uid) or set()
        return len(owned) - len(finished) - sum(1 for k in condemned if k in owned and k not in finished)

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
        self.deleted.pop(pod.key, None)
        self.create(pod)

    def delete_controller_pod(self, key: str, reason: str) -> None:
        pod = self.store.get("Pod", *reversed(key.split("/", 1)))
        if pod is None:
            return
        self._condemned.add(key)
        if not pod.spec.node_name:
            self.delete(key, reason=reason)
            return
        grace = pod.spec.termination_grace_period_seconds
        # a controller deletes (graceful deletion), it does not evict: pod.deleting in the timeline
        self.evict(key, DEFAULT_TERMINATION_GRACE_SECONDS if grace is None else float(grace), reason=reason,
                   kind="pod.deleting")

    # -- creation -------------------------------------------------------------------------------
    def admit(self, pod: Pod) -> None:
        """Create ``pod`` now, or when its ``karpy.io/arrive-after`` delay has passed."""
        delay = arrival_delay(pod)
        if delay > 0:
            self.arrivals[pod.key] = (pod, self.clock.now() + delay)

            def arrive(pod: Pod = pod) -> None:
                self.arrivals.pop(pod.key, None)
                self.create(pod)

            self.events.schedule(self.clock.now() + delay, f"arrive {pod.key}", arrive)
        else:
            self.create(pod)

    def create(self, pod: Pod) -> None:
        """The API server creates ``pod`` (a uid, a creationTimestamp; running when bound)."""
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
                    self.delete(key, reason="departed")

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
            self._gone(key, current)
            self.record("pod.completed", f"Pod/{key}", node=current.spec.node_name)
            self._pod_gone(current, succeeded=True)

        self.events.schedule_in(run_for, f"complete {key}", complete)

    def daemonset_fits(self, ds: Any, node: Node) -> bool:
        """The DaemonSet controller would place a pod of ``ds`` on ``node`` (taints, node affinity)."""
        template = ds.template_pod()
        if tolerates(node.spec.taints or (), template.spec.tolerations or ()) is not None:
            # upstream DaemonSet controller tolerates NoExecute/NoSchedule of not-ready etc.;
            # node taints the DaemonSet pod does not tolerate keep it off the node
            return False
        labels = Requirements.from_labels(node.metadata.labels or {})
        return labels.is_compatible(strict_pod_requirements(template))

    def bind_daemonset_pods(self, node: Node) -> None:
        """The DaemonSet controller: a pod of every DaemonSet that fits ``node`` (and has none there yet)."""
        given = self._given_daemonset.get(node.metadata.name, set())
        for ds in self.store.list("DaemonSet"):
            if (ds.metadata.namespace or "default", ds.metadata.name) in given:
                continue
            if self.daemonset_fits(ds, node):
                pod = ds.pod_for_node(node.metadata.name)
                if not podutils.has_dra_requirements(pod):  # claims: kube-scheduler's DynamicResources decides
                    pod.spec = pod.spec.model_copy(update={"node_name": node.metadata.name})  # copy-on-write
                self.create(pod)

    # -- kube-scheduler results -----------------------------------------------------------------
    def apply(self, result: ScheduleOneResult) -> None:
        for member in result.members or ():
            self.apply(member)
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
            self.errors.pop(pod.key, None)
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
                self.evict(victim.key, victim.grace_period_seconds)
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

    # -- the end of a pod -----------------------------------------------------------------------
    def evict(self, key: str, grace: float, reason: str = "preemption", kind: str = "pod.evicted") -> None:
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
                self.delete(key)

        self.events.schedule_in(float(grace or 0), f"delete {key}", delete)

    def delete(self, key: str, reason: str | None = None) -> None:
        pod = self.store.get("Pod", *reversed(key.split("/", 1)))
        if pod is None:
            return
        self.store.delete("Pod", pod)
        pod.status.phase = "Deleted"
        self._gone(key, pod)
        self.record("pod.departed" if reason == "departed" else "pod.deleted", f"Pod/{key}",
                    **({"node": pod.spec.node_name} if pod.spec.node_name else {}))
        self._pod_gone(pod)

    def _gone(self, key: str, pod: Pod) -> None:
        """Remember a pod gone from the store for the document, within ``deleted_limit``."""
        deleted = self.deleted
        if self.deleted_limit is None or key in deleted or len(deleted) < self.deleted_limit:
            deleted[key] = pod
        else:
            phase = pod.status.phase or "Deleted"
            self.deleted_dropped[phase] = self.deleted_dropped.get(phase, 0) + 1

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
