"""Running a Scenario's events on the virtual clock (:mod:`karpy.api.scenario` defines them).

:class:`ScenarioRunner` checks every event before the run starts — an unknown workload, an
``apply`` that does not load, an ``at`` after the horizon, a capacity spec the cloud provider
rejects, an event after which more pods would be alive at once than ``--max-pods`` (the workloads'
replicas and Jobs' parallelism as the events change them, plus a rollout's maxSurge) — and raises
:class:`karpy.api.loader.ManifestError` naming the file, document, event index and field
(``spec.events[3].scale.name``). Then it schedules each event at its ``at``.

What each action does:

* ``scale`` — the Deployment / ReplicaSet / StatefulSet controller (:mod:`karpy.sim.deployment`,
  :mod:`karpy.sim.replicaset`, :mod:`karpy.sim.statefulset`) creates or deletes pods; a static
  NodePool's ``spec.replicas`` is set (its scale subresource) and the static controllers
  (:mod:`karpy.static`) create or delete NodeClaims -- a NodePool without ``spec.replicas`` cannot be
  scaled (the CRD's transition rule);
* ``rollout`` — a restart of a Deployment (new pod-template hash, RollingUpdate or Recreate);
* ``apply`` — each object is created, or updated when it exists (a Deployment with a new template
  rolls out; new replicas scale; a NodePool is replaced in the store; a cloud-provider kind such as
  ``EC2NodeClass`` goes to the provider's ``apply``); provisionable pods are re-queued;
* ``delete`` — workloads delete their pods (gracefully); a NodePool's NodeClaims are terminated
  (``deleted_by: nodepool-deleted``, as the owner-reference garbage collector does upstream);
* ``capacity`` — the provider's ``capacity_event(unavailable=, available=)`` starts or stops
  injected capacity errors; provisionable pods are re-queued;
* ``interrupt`` — the provider's ``interrupt(cluster, nodeclaims)`` (the AWS provider's interruption
  controller) handles a spot interruption of each target NodeClaim; with ``capacity_reservation`` the
  provider's ``interrupt_reservation(cluster, id)`` reclaims an interruptible reservation (its
  NodeClaims get the capacity-reservation interruption warning);
* ``cancel_reservation`` — the provider's ``cancel_capacity_reservation(id)`` (the AWS provider: EC2
  CancelCapacityReservation); the provider's controllers are woken (the AWS capacity-type
  controller then demotes the reservation's nodes to on-demand).

Events at the same instant run in the Scenario's order, then the ``events=`` / ``--event`` ones.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from karpy.api.loader import ManifestError, Manifests, format_loc, load_manifests, static_nodes_over_limit
from karpy.api.scenario import Scenario, ScenarioEvent, parse_event_line
from karpy.utils import pod as podutils
from karpy.sim.replicaset import ManagedReplicaSet, find_by_key

if TYPE_CHECKING:
    from karpy.sim.simulation import Simulation

__all__ = ["EventLine", "ScenarioRunner", "event_line", "validate_events"]

_WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "Job")
#: pkg/apis/v1/nodepool.go's CEL transition rule (``has(self.replicas) == has(oldSelf.replicas)``)
NODEPOOL_MODE_TRANSITION = ("Cannot transition NodePool between static (replicas set) and dynamic (replicas unset) "
                            "provisioning modes")


@dataclass(frozen=True)
class EventLine:
    """An ``--event`` line and the Scenario event it parses to: the run's errors about the event
    name the line as the user wrote it (``--event '10m scale deployment/nope 3': scale.name: ...``)."""

    line: str
    event: dict[str, Any]

    @property
    def label(self) -> str:
        return f"--event {self.line!r}"


def event_label(event: Any, index: int) -> str:
    """What an error about the ``index``-th extra event names: its ``--event`` line, else ``events[i]``."""
    return event.label if isinstance(event, EventLine) else f"events[{index}]"


def validate_events(events: Sequence[Any]) -> list[ScenarioEvent]:
    """``ScenarioEvent`` objects from models, dicts or :class:`EventLine` s; ``ManifestError`` on the
    first bad one, naming it as :func:`event_label` does (``events[2]: scale.replicas: ...``)."""
    out: list[ScenarioEvent] = []
    for i, ev in enumerate(events):
        raw = ev.event if isinstance(ev, EventLine) else ev
        if isinstance(raw, ScenarioEvent):
            out.append(raw)
            continue
        try:
            out.append(ScenarioEvent.model_validate(raw))
        except ValidationError as err:
            first = err.errors()[0]
            loc = format_loc(tuple(p for p in first["loc"] if isinstance(p, (int, str))
                                   and p not in ("function-after", "function-before")))
            msg = str(first["msg"]).removeprefix("Value error, ")
            if msg.startswith("Input should be"):
                msg = "must be" + msg[len("Input should be"):] + f" (got {first.get('input')!r})"
            raise ManifestError(event_label(ev, i), None, loc, msg) from None
    return out


def event_line(line: str) -> EventLine:
    """One ``--event`` line as a Scenario event, checked as ``spec.events`` are and kept with its line:
    a bad one is a ``ManifestError`` naming the line (``--event '10m scale deployment/web -1':
    scale.replicas: ...``), as the run's later checks (an unknown workload, an ``at`` past the
    horizon) do; a malformed one is parse_event_line's ``ValueError``."""
    labelled = EventLine(line, parse_event_line(line))
    validate_events([labelled])
    return labelled


def _seconds(t: float) -> str:
    """``7200s``, ``3596400s`` (never ``3.5964e+06s``), ``90.5s``."""
    return f"{t:.0f}s" if float(t).is_integer() else f"{t}s"


def _field(path: str, rest: str) -> str:
    """A field path under an event's (``spec.events[3]`` + ``scale.name``; an extra event's is empty)."""
    return f"{path}.{rest}" if path else rest


class ScenarioRunner:
    """Validate and schedule the events of one run (see the module docstring)."""

    def __init__(self, sim: Simulation, scenario: Scenario | None, extra: Sequence[Any] = (),
                 manifests: Manifests | None = None) -> None:
        """``manifests``: the run's input (what the events may name); the wiring (karpy.simulator)
        builds the runner after the simulation loaded it."""
        self.sim = sim
        self.manifests = manifests if manifests is not None else Manifests()
        self.scenario = scenario
        self.file, self.document = scenario.source if scenario is not None else ("", None)
        self.entries: list[tuple[str, int | None, str, ScenarioEvent]] = []
        if scenario is not None:
            for i, ev in enumerate(scenario.spec.events):
                self.entries.append((self.file, self.document, f"spec.events[{i}]", ev))
        for i, (raw, ev) in enumerate(zip(extra, validate_events(extra))):
            self.entries.append((event_label(raw, i), None, "", ev))
        if sim.horizon is None and scenario is not None and scenario.spec.until is not None:
            sim.horizon = scenario.spec.until
        self._applied: dict[int, list[Any]] = {}

    # -- validation -------------------------------------------------------------------------------
    def _error(self, file: str, doc: int | None, path: str, message: str) -> ManifestError:
        return ManifestError(file, doc, path, message, kind="Scenario" if doc is not None else None,
                             name=self.scenario.metadata.name if self.scenario is not None and doc is not None
                             else None)

    def _known_workloads(self) -> set[tuple[str, str, str]]:
        m = self.manifests
        known = set()
        for kind, items in (("Deployment", m.deployments), ("ReplicaSet", m.replica_sets),
                            ("ReplicationController", m.replication_controllers), ("StatefulSet", m.stateful_sets), ("Job", m.jobs), ("Pod", m.pods),
                            ("NodePool", m.nodepools), ("DaemonSet", m.daemon_sets)):
            for w in items:
                known.add((kind, w.metadata.namespace or "default", w.metadata.name))
        for kind, items in (getattr(m, "extra", {}) or {}).items():
            for w in items:
                known.add((kind, getattr(w.metadata, "namespace", None) or "default", w.metadata.name))
        return known

    def _load_apply(self, value: Any, file: str, doc: int | None, path: str) -> list[Any]:
        extra = getattr(self.sim.cloud_provider, "EXTRA_KINDS", None)
        source = value
        if isinstance(value, str) and "\n" not in value and not value.lstrip().startswith(("{", "apiVersion")):
            p = Path(value)
            if not p.is_absolute() and not p.exists() and doc is not None and Path(file).exists():
                p = Path(file).parent / p
            source = p
        try:  # unbounded here: check() holds the run's pods, with these, to --max-pods
            loaded = load_manifests(source if not isinstance(value, list) else list(value), extra_kinds=extra,
                                    max_pods=None)
        except ManifestError as err:
            raise self._error(file, doc, _field(path, "apply"), str(err)) from None
        if loaded.scenarios:
            raise self._error(file, doc, _field(path, "apply"), "an applied manifest cannot be a Scenario")
        return list(loaded.objects)

    @staticmethod
    def _ns(obj: Any) -> str:
        return getattr(obj.metadata, "namespace", None) or "default"

    def _initial_pods(self) -> dict[tuple[str, str, str], int]:
        """(kind, namespace, name) -> the pods each Pod or workload of the manifests keeps alive."""
        m = self.manifests
        counts: dict[tuple[str, str, str], int] = {}
        for pod in m.pods:
            counts[("Pod", self._ns(pod), pod.metadata.name)] = 1
        for items in (m.deployments, m.replica_sets, m.replication_controllers, m.stateful_sets, m.jobs):
            for w in items:
                counts[(w.kind or type(w).__name__, self._ns(w), w.metadata.name)] = w.pod_count()
        return counts

    def _over_limit(self, total: int, what: str) -> str | None:
        """The message when ``total`` pods alive at once pass the run's ``--max-pods``, else None."""
        limit = getattr(self.manifests, "max_pods", None)
        if limit is None or total <= limit:
            return None
        return (f"{what} makes {total:,} pods alive at once, more than karpy's limit of {limit:,} per run; "
                f"raise it with --max-pods (library: max_pods=)")

    def _static_over_limit(self, pool: Any, replicas: int | None = None) -> str | None:
        """:func:`static_nodes_over_limit` for the run's --max-pods, with the StaticCapacity gate on
        (off, replicas are not acted on)."""
        if not self.sim.options.operator_options().feature_gates.static_capacity:
            return None
        return static_nodes_over_limit(pool, getattr(self.manifests, "max_pods", None), replicas)

    def _surge(self, key: tuple[str, str, str], replicas: int) -> int:
        """The extra pods a RollingUpdate of Deployment ``key`` may run at once (maxSurge)."""
        from karpy.sim.deployment import resolve_fenceposts

        d = next((d for d in self.manifests.deployments
                  if (d.kind or "Deployment", self._ns(d), d.metadata.name) == key), None)
        strategy = d.spec.strategy if d is not None else None
        if (strategy or {}).get("type") == "Recreate":
            return 0
        return resolve_fenceposts(strategy, replicas)[0]

    def check(self) -> None:
        """Raise ``ManifestError`` for the first bad event (in time order of application)."""
        known = self._known_workloads()
        #: pods each Pod / workload keeps alive as the events change them (held to --max-pods)
        alive = self._initial_pods()
        #: NodePool name -> the NodePool as the events change it (static: ``spec.replicas`` set)
        pools: dict[str, Any] = {np.metadata.name: np for np in self.manifests.nodepools}
        order = sorted(range(len(self.entries)), key=lambda i: (self.entries[i][3].at, i))
        for i in order:
            file, doc, path, ev = self.entries[i]
            if self.sim.horizon is not None and ev.at > self.sim.horizon:
                raise self._error(file, doc, _field(path, "at"),
                                  f"{_seconds(ev.at)} is after the end of the run (until {_seconds(self.sim.horizon)})")
            action = ev.action
            if action == "apply":
                self._check_apply(i, known, alive, pools)
            elif action in ("scale", "rollout", "delete"):
                self._check_reference(i, known, alive, pools)
            elif action == "capacity":
                self._check_capacity(file, doc, path, ev)
            elif action == "interrupt":
                if not hasattr(self.sim.cloud_provider, "interrupt"):
                    raise self._error(file, doc, _field(path, "interrupt"),
                                      f"cloud provider {getattr(self.sim.cloud_provider, 'name', '?')!r} does not "
                                      "model interruptions")
                self._check_interrupt_reservation(file, doc, path, ev)
            elif action == "cancel_reservation":
                self._check_cancel_reservation(file, doc, path, ev)

    def _check_apply(self, i: int, known: set[tuple[str, str, str]], alive: dict[tuple[str, str, str], int],
                     pools: dict[str, Any]) -> None:
        """An ``apply`` event: its manifests load, keep each NodePool's mode, and stay within --max-pods
        (pods, and a static NodePool's nodes)."""
        file, doc, path, ev = self.entries[i]
        objs = self._load_apply(ev.apply, file, doc, path)
        self._applied[i] = objs
        for o in objs:
            kind = getattr(o, "kind", type(o).__name__)
            if kind == "NodePool":
                was = pools.get(o.metadata.name)
                if was is not None and (was.spec.replicas is not None) != (o.spec.replicas is not None):
                    raise self._error(file, doc, _field(path, "apply"), f'NodePool "{o.metadata.name}": spec: '
                                      f"Invalid value: {NODEPOOL_MODE_TRANSITION}")
                pools[o.metadata.name] = o
                message = self._static_over_limit(o)
                if message is not None:
                    raise self._error(file, doc, _field(path, "apply"), f'NodePool "{o.metadata.name}": {message}')
            known.add((kind, self._ns(o), o.metadata.name))
            if kind in _WORKLOAD_KINDS or kind == "Pod":
                alive[(kind, self._ns(o), o.metadata.name)] = o.pod_count() if kind != "Pod" else 1
        message = self._over_limit(sum(alive.values()), "this apply")
        if message is not None:
            raise self._error(file, doc, _field(path, "apply"), message)

    def _check_reference(self, i: int, known: set[tuple[str, str, str]], alive: dict[tuple[str, str, str], int],
                         pools: dict[str, Any]) -> None:
        """A ``scale``, ``rollout`` or ``delete`` event: it names a loaded object and stays within --max-pods."""
        file, doc, path, ev = self.entries[i]
        action = ev.action
        ref = getattr(ev, action)
        ns = ref.namespace or "default"
        lookup_ns = "default" if ref.kind in ("NodePool", "EC2NodeClass", "NodeOverlay", "PriorityClass") else ns
        if (ref.kind, lookup_ns, ref.name) not in known:
            hint = "" if any(k == ref.kind for (k, _, _) in known) else f" (no {ref.kind} is loaded)"
            raise self._error(file, doc, _field(path, f"{action}.name"),
                              f"unknown {ref.kind} {ns + '/' if lookup_ns != 'default' or ns != 'default' else ''}"
                              f"{ref.name!r}{hint}".replace("'", '"'))
        if action == "scale" and ref.kind == "NodePool":
            pool = pools.get(ref.name)
            if pool is None or pool.spec.replicas is None:
                raise self._error(file, doc, _field(path, "scale.name"),
                                  f'NodePool "{ref.name}" has no spec.replicas: {NODEPOOL_MODE_TRANSITION}')
            message = self._static_over_limit(pool, ref.replicas)
            if message is not None:
                raise self._error(file, doc, _field(path, "scale.replicas"), message)
        key = (ref.kind, lookup_ns, ref.name)
        if action == "scale" and ref.kind != "NodePool":
            alive[key] = ref.replicas
            message = self._over_limit(sum(alive.values()),
                                       f"scaling {ref.kind} \"{ref.name}\" to {ref.replicas:,} replicas")
            if message is not None:
                raise self._error(file, doc, _field(path, "scale.replicas"), message)
        if action == "rollout":
            message = self._over_limit(sum(alive.values()) + self._surge(key, alive.get(key, 0)),
                                       f"the rollout of Deployment \"{ref.name}\" (with its maxSurge)")
            if message is not None:
                raise self._error(file, doc, _field(path, "rollout"), message)
        if action == "delete":
            alive.pop(key, None)
            known.discard((ref.kind, lookup_ns, ref.name))
            if ref.kind == "NodePool":
                pools.pop(ref.name, None)

    def _check_capacity(self, file: str, doc: int | None, path: str, ev: Any) -> None:
        """A ``capacity`` event: the provider models capacity changes and accepts each spec."""
        capacity_check = getattr(self.sim.cloud_provider, "check_capacity_spec", None)
        if capacity_check is None or not hasattr(self.sim.cloud_provider, "capacity_event"):
            raise self._error(file, doc, _field(path, "capacity"),
                              f"cloud provider {getattr(self.sim.cloud_provider, 'name', '?')!r} does not "
                              "model injected capacity changes")
        for field_name in ("unavailable", "available"):
            for j, spec in enumerate(getattr(ev.capacity, field_name)):
                try:
                    capacity_check(spec)
                except ValueError as err:
                    raise self._error(file, doc, _field(path, f"capacity.{field_name}[{j}]"), str(err)) from None

    def _check_cancel_reservation(self, file: str, doc: int | None, path: str, ev: ScenarioEvent) -> None:
        provider = self.sim.cloud_provider
        check = getattr(provider, "check_capacity_reservation", None)
        if check is None or not hasattr(provider, "cancel_capacity_reservation"):
            raise self._error(file, doc, _field(path, "cancel_reservation"),
                              f"cloud provider {getattr(provider, 'name', '?')!r} does not model capacity reservations")
        assert ev.cancel_reservation is not None  # ScenarioEvent holds exactly the field its action names
        try:
            check(ev.cancel_reservation.id)
        except ValueError as err:
            raise self._error(file, doc, _field(path, "cancel_reservation.id"), str(err)) from None

    def _check_interrupt_reservation(self, file: str, doc: int | None, path: str, ev: ScenarioEvent) -> None:
        assert ev.interrupt is not None  # ScenarioEvent holds exactly the field its action names
        rid = ev.interrupt.capacity_reservation
        if rid is None:
            return
        provider = self.sim.cloud_provider
        check = getattr(provider, "check_capacity_reservation", None)
        if check is None or not hasattr(provider, "interrupt_reservation"):
            raise self._error(file, doc, _field(path, "interrupt.capacity_reservation"),
                              f"cloud provider {getattr(provider, 'name', '?')!r} does not model capacity reservations")
        try:
            check(rid, "interrupt")
        except ValueError as err:
            raise self._error(file, doc, _field(path, "interrupt.capacity_reservation"), str(err)) from None

    def schedule(self) -> None:
        self.check()
        for i, (_, _, _, ev) in enumerate(self.entries):
            self.sim.events.schedule(ev.at, f"scenario {ev.action} #{i}", functools.partial(self._run, i, ev))

    # -- running ----------------------------------------------------------------------------------
    def _run(self, i: int, ev: ScenarioEvent) -> None:
        getattr(self, f"_do_{ev.action}")(i, ev)

    def _requeue(self) -> None:
        self.sim.requeue()

    def _do_scale(self, i: int, ev: ScenarioEvent) -> None:
        sim, ref = self.sim, ev.scale
        assert ref is not None  # ScenarioEvent holds exactly the field its action names
        key = f"{ref.namespace}/{ref.name}"
        if ref.kind == "NodePool":
            pool = sim.store.get("NodePool", ref.name)
            if pool is not None:
                sim.record("scale", f"NodePool/{ref.name}", previous=pool.spec.replicas, replicas=ref.replicas)
                new = pool.model_copy(deep=True)
                new.spec.replicas = ref.replicas
                sim.store.update("NodePool", new, old=pool)
        elif ref.kind == "Deployment":
            d = sim.deployments.deployments.get(key)
            if d is not None:
                sim.deployments.scale(d, ref.replicas)
        elif ref.kind in ("ReplicaSet", "ReplicationController"):
            rs = sim.replica_sets.get(key, ref.kind)
            if rs is not None:
                sim.replica_sets.scale(rs, ref.replicas)
        else:
            s = sim.stateful_sets.get(key)
            if s is not None:
                sim.stateful_sets.scale(s, ref.replicas)

    def _do_rollout(self, i: int, ev: ScenarioEvent) -> None:
        assert ev.rollout is not None  # ScenarioEvent holds exactly the field its action names
        d = self.sim.deployments.deployments.get(f"{ev.rollout.namespace}/{ev.rollout.name}")
        if d is not None:
            self.sim.deployments.rollout(d)

    def _do_capacity(self, i: int, ev: ScenarioEvent) -> None:
        cap = ev.capacity
        assert cap is not None  # ScenarioEvent holds exactly the field its action names
        self.sim.cloud_provider.capacity_event(unavailable=list(cap.unavailable), available=list(cap.available))
        if cap.unavailable:
            self.sim.record("capacity.unavailable", "Capacity", specs=list(cap.unavailable))
        if cap.available:
            self.sim.record("capacity.available", "Capacity", specs=list(cap.available))
        self._requeue()

    def _do_interrupt(self, i: int, ev: ScenarioEvent) -> None:
        sim, target = self.sim, ev.interrupt
        assert target is not None  # ScenarioEvent holds exactly the field its action names
        if target.capacity_reservation is not None:
            if not sim.cloud_provider.interrupt_reservation(sim, target.capacity_reservation):
                sim.record("interruption", f"CapacityReservation/{target.capacity_reservation}", matched=0)
            return
        records = []
        for rec in sim.launches:
            if rec.launched is None or rec.deleted or rec.deleting_at is not None:
                continue
            if target.node is not None:
                if rec.name == target.node:
                    records.append(rec)
            elif rec.instance_type == target.instance_type and rec.zone == target.zone and rec.capacity_type == "spot":
                records.append(rec)
        if not records:
            sim.record("interruption", f"NodeClaim/{target.node}" if target.node else
                       f"Offering/{target.instance_type}/{target.zone}/spot", matched=0)
            return
        sim.cloud_provider.interrupt(sim, [r.launched for r in records])

    def _do_cancel_reservation(self, i: int, ev: ScenarioEvent) -> None:
        sim, target = self.sim, ev.cancel_reservation
        assert target is not None  # ScenarioEvent holds exactly the field its action names
        try:
            sim.cloud_provider.cancel_capacity_reservation(target.id)
        except ValueError as err:
            sim.record("capacityreservation.cancel-failed", f"CapacityReservation/{target.id}", error=str(err))
            return
        sim.record("capacityreservation.cancelled", f"CapacityReservation/{target.id}")
        sim.wake_provider_controllers()
        self._requeue()

    def _do_delete(self, i: int, ev: ScenarioEvent) -> None:
        sim, ref = self.sim, ev.delete
        assert ref is not None  # ScenarioEvent holds exactly the field its action names
        key = f"{ref.namespace}/{ref.name}"
        sim.record("delete", f"{ref.kind}/{key if ref.kind not in ('NodePool',) else ref.name}")
        owner_uid = None
        if ref.kind == "Deployment":
            d = sim.deployments.deployments.pop(key, None)
            if d is not None:
                for rs in d.sets:
                    rs.replicas = 0
                    for p in sim.pods.owned_pods(rs.uid):
                        sim.pods.delete_controller_pod(p.key, "deleted")
                    sim.replica_sets.sets.pop(rs.uid, None)
        elif ref.kind in ("ReplicaSet", "ReplicationController", "StatefulSet", "Job"):
            registries: dict[str, dict[str, Any]] = {
                "ReplicaSet": sim.replica_sets.sets, "ReplicationController": sim.replica_sets.sets,
                "StatefulSet": sim.stateful_sets.sets, "Job": sim.jobs.jobs}
            registry = registries[ref.kind]
            managed = find_by_key(registry, key, ref.kind)
            if managed is not None:
                owner_uid = managed.uid
                registry.pop(managed.uid, None)
        elif ref.kind == "Pod":
            pod = sim.store.get("Pod", ref.name, ref.namespace)
            if pod is not None:
                sim.pods.delete_controller_pod(pod.key, "deleted")
        elif ref.kind == "NodePool":
            pool = sim.store.get("NodePool", ref.name)
            if pool is not None:
                sim.store.delete("NodePool", pool)
            for rec in list(sim.launches):
                if rec.nodepool == ref.name and rec.launched is not None and not rec.deleted:
                    sim.delete_nodeclaim(rec.name, "nodepool-deleted")
        elif ref.kind == "DaemonSet":
            ds = sim.store.get("DaemonSet", ref.name, ref.namespace)
            if ds is not None:
                sim.store.delete("DaemonSet", ds)
        else:
            apply = getattr(sim.cloud_provider, "delete_object", None)
            if apply is not None:
                apply(ref.kind, ref.name)
                if ref.kind == "NodeOverlay" and sim.disruption is not None:
                    sim.disruption.mark_unconsolidated()  # nodeoverlay/controller.go
        if owner_uid is not None:
            for p in sim.pods.owned_pods(owner_uid):
                sim.pods.delete_controller_pod(p.key, "deleted")
        self._requeue()

    def _do_apply(self, i: int, ev: ScenarioEvent) -> None:
        sim = self.sim
        for obj in self._applied.get(i, ()):
            kind = getattr(obj, "kind", None) or type(obj).__name__
            ns = self._ns(obj)
            key = f"{ns}/{obj.metadata.name}"
            sim.record("apply", f"{kind}/{obj.metadata.name if getattr(obj, 'CLUSTER_SCOPED', False) else key}")
            if kind == "Pod":
                sim.pods.admit(obj.model_copy(deep=True))
            elif kind == "Deployment":
                d = sim.deployments.deployments.get(key)
                if d is None:
                    d = sim.deployments.add(obj.model_copy(deep=True), initial_next_index=0)
                    sim.replica_sets.sync(d.new)
                else:
                    if obj.spec.template != d.model.spec.template:
                        d.model.spec.strategy = obj.spec.strategy
                        d.model.spec.replicas = obj.spec.replicas
                        sim.deployments.rollout(d, obj.spec.template.model_copy(deep=True))
                    elif obj.spec.replicas != d.replicas:
                        sim.deployments.scale(d, obj.spec.replicas)
            elif kind in ("ReplicaSet", "ReplicationController"):
                rs = sim.replica_sets.get(key, kind)
                if rs is None:
                    rs = sim.replica_sets.add(ManagedReplicaSet(obj.model_copy(deep=True), obj.spec.replicas, 0,
                                                                sim.clock.now()))
                    sim.replica_sets.sync(rs)
                else:
                    sim.replica_sets.scale(rs, obj.spec.replicas)
            elif kind == "StatefulSet":
                s = sim.stateful_sets.get(key)
                if s is None:
                    sim.stateful_sets.sync(sim.stateful_sets.add(obj.model_copy(deep=True)))
                else:
                    sim.stateful_sets.scale(s, obj.spec.replicas)
            elif kind == "Job":
                if sim.jobs.get(key) is None:
                    j = sim.jobs.add(obj.model_copy(deep=True))
                    j.next_index = 0
                    sim.jobs.sync(j)
            elif kind in ("NodePool", "DaemonSet"):
                store_ns = obj.metadata.namespace if kind == "DaemonSet" else ""
                old = sim.store.get(kind, obj.metadata.name, store_ns or "")
                new = obj.model_copy(deep=True)
                if old is None:
                    sim.store.create(kind, new)
                else:
                    sim.store.update(kind, new, old=old)
                if kind == "DaemonSet" and old is None:
                    for node in sim.store.list("Node"):
                        if sim.pods.daemonset_fits(new, node):
                            pod = new.pod_for_node(node.metadata.name)
                            if not podutils.has_dra_requirements(pod):  # claims: kube-scheduler decides
                                pod.spec = pod.spec.model_copy(update={"node_name": node.metadata.name})
                            sim.pods.create(pod)
            elif kind == "PriorityClass":
                sim.scheduler.add_priority_class(obj)
            elif kind == "PodDisruptionBudget":
                sim.scheduler.add_pdb(obj)
            else:
                apply = getattr(sim.cloud_provider, "apply", None)
                if apply is not None:
                    apply(obj.model_copy(deep=True))
                    if kind == "NodeOverlay" and sim.disruption is not None:
                        sim.disruption.mark_unconsolidated()  # nodeoverlay/controller.go
                else:
                    sim.record("apply.ignored", f"{kind}/{obj.metadata.name}",
                               reason="the cloud provider does not take this kind at run time")
        self._requeue()
