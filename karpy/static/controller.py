"""The static NodePool controllers on the simulation's virtual clock (the ``StaticCapacity`` gate).

Runs :mod:`karpy.static.provisioning` and :mod:`karpy.static.deprovisioning` for every static
NodePool (``spec.replicas``) inside a :class:`karpy.sim.simulation.Simulation`, as upstream's
pkg/controllers/controllers.go registers them when ``--feature-gates StaticCapacity=true``.

Triggers (upstream: controller-runtime watches and ``RequeueAfter``): a reconcile of a NodePool
runs -- provisioning, then deprovisioning -- at the instant the NodePool is created or changed,
and whenever one of its NodeClaims begins deleting or is deleted; a NodeClaim created runs the
deprovisioning controller only (upstream's predicates: provisioning does not watch creates).
Upstream's periodic requeues (1 min, 30 s at the node limit) are not polled: on the
deterministic clock a reconcile whose inputs did not change decides the same, so karpy only
re-runs on a change (a ``limits.nodes`` change is acted on at once; upstream sees it at the next
requeue). A NodeClaim whose launch failed (e.g. insufficient capacity) is retried at the cloud
provider's next capacity change (``next_capacity_change``: an ICE-cache entry expiring, an
injected outage ending); without one it is not retried. The simulation's NodePool state
(:class:`karpy.static.nodepoolstate.NodePoolState`) is re-derived from its NodeClaims before each
reconcile (:func:`observe`). Every reconcile that acts is in the timeline as ``static.provisioned``
or ``static.deprovisioned`` (``detail``: ``nodeclaims``, ``replicas``, ``error``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from karpy.static import deprovisioning, provisioning
from karpy.static.nodepoolstate import ACTIVE, DELETING, PENDING_DISRUPTION, NodePoolState
from karpy.static.provisioning import StaticNodeClaim

if TYPE_CHECKING:  # pragma: no cover
    from karpy.state.cluster import ClusterState
    from karpy.sim.host import SimulationHost

__all__ = ["DisruptionState", "StaticCapacityController", "observe"]

_NODECLAIM_EVENTS = ("nodeclaim.created", "nodeclaim.deleting", "nodeclaim.deleted", "nodeclaim.launch-failed")


class DisruptionState(Protocol):
    """The disruption controller as the static controllers see it (karpy.disruption.controller)."""

    marked: set[str]

    def in_flight(self) -> frozenset[str]: ...
    def delete_nodeclaim(self, name: str, reason: str) -> None: ...


def observe(sim: SimulationHost, state: NodePoolState, disruption: DisruptionState | None = None) -> NodePoolState:
    """Re-derive ``state`` (upstream: state.Cluster's NodePoolState) from the simulation's
    NodeClaims: a NodeClaim whose launch failed or that is deleted is gone (upstream deletes a
    NodeClaim whose launch failed); one deleting or marked for deletion by the disruption controller
    is deleting; a candidate of an in-flight disruption command not yet marked is pending
    disruption; the rest are active."""
    marked = disruption.marked if disruption is not None else set()
    queued = disruption.in_flight() if disruption is not None else frozenset()

    def status(rec: Any) -> str | None:
        if rec.error is not None or rec.deleted:
            return None
        if rec.deleting_at is not None or rec.name in marked:
            return DELETING
        if rec.name in queued:
            return PENDING_DISRUPTION
        return ACTIVE

    state.observe((rec.nodepool, rec.name, status(rec)) for rec in sim.launches)
    return state


class StaticCapacityController:
    """The two static controllers of one simulation (see the module docstring); also their
    :class:`~karpy.static.provisioning.StaticHost` / :class:`~karpy.static.deprovisioning.DeprovisioningHost`."""

    def __init__(self, sim: SimulationHost, state: NodePoolState | None = None,
                 disruption: DisruptionState | None = None) -> None:
        """``state``: the NodePoolState shared with the disruption controller's StaticDrift;
        ``disruption``: the disruption controller when it runs (its marks, its deletions)."""
        self.sim = sim
        self.state = state if state is not None else NodePoolState()
        self.disruption = disruption
        #: NodePool name -> a reconcile is scheduled; whether it provisions too
        self._queued: dict[str, bool] = {}
        #: NodePool name -> when a failed launch is retried
        self._retry_at: dict[str, float] = {}
        sim.store.watch("NodePool", self._on_nodepool)
        sim.add_record_listener(self._on_record)

    # -- triggers ---------------------------------------------------------------------------------
    def _on_nodepool(self, ev: Any) -> None:
        if ev.type != "DELETED" and ev.obj.spec.replicas is not None:
            self._enqueue(ev.obj.metadata.name)

    def _on_record(self, kind: str, obj: str, detail: dict[str, Any]) -> None:
        if kind not in _NODECLAIM_EVENTS:
            return
        rec = self.sim.nodeclaim(obj.split("/", 1)[1])
        if rec is None:
            return
        pool = self.sim.store.get("NodePool", rec.nodepool)
        if kind == "nodeclaim.created" and isinstance(rec.scheduling, StaticNodeClaim) and pool is not None:
            self._explain_types(rec, pool)
        if pool is not None and pool.spec.replicas is not None:
            if kind == "nodeclaim.launch-failed":
                # not at once: the same launch would fail again at the same virtual instant
                self._retry_later(rec.nodepool)
            else:
                # a create is watched by the deprovisioning controller only (upstream's predicates)
                self._enqueue(rec.nodepool, provision=kind != "nodeclaim.created")

    def _explain_types(self, rec: Any, pool: Any) -> None:
        """For explain: a static NodeClaim's funnel starts from the NodePool's instance types and
        ends at those its requirements allow with an available offering -- what the cloud
        provider's Create chooses from (the NodeClaim itself lists none)."""
        claim = rec.scheduling
        try:
            types = list(self.sim.cloud_provider.get_instance_types(pool))
        except Exception:  # noqa: BLE001 - explain output only
            return
        wk = claim.well_known
        rec.instance_types = types
        rec.untruncated = [it for it in types if claim.requirements.is_compatible(it.requirements, wk)
                           and it.has_compatible_available_offering(claim.requirements, wk)]

    def _enqueue(self, name: str, provision: bool = True) -> None:
        """Reconcile ``name`` at this instant (after the change that asked): both controllers, or
        only deprovisioning (``provision=False``)."""
        queued = name in self._queued
        self._queued[name] = self._queued.get(name, False) or provision
        if not queued:
            self.sim.events.schedule(self.sim.clock.now(), f"static {name}", lambda: self._reconcile(name))

    def _retry_later(self, name: str) -> None:
        next_change = getattr(self.sim.cloud_provider, "next_capacity_change", None)
        now = self.sim.clock.now()
        t = next_change(now) if next_change is not None else None
        pending = self._retry_at.get(name)
        if t is None or t <= now or (pending is not None and now < pending <= t):
            return
        self._retry_at[name] = t
        self.sim.events.schedule(t, f"static retry {name}", lambda: self._enqueue(name))

    # -- the reconcile ------------------------------------------------------------------------------
    def _reconcile(self, name: str) -> None:
        provision = self._queued.pop(name, True)
        sim = self.sim
        pool = sim.store.get("NodePool", name)
        if pool is None or pool.spec.replicas is None:
            return
        if provision:
            up = provisioning.reconcile(pool, self.observe(), self, sim.provisioner.well_known)
            if up.created or up.error:
                sim.record("static.provisioned", f"NodePool/{name}", nodeclaims=list(up.created),
                           replicas=pool.spec.replicas, **({"error": up.error} if up.error else {}))
        state = self.observe()
        down = deprovisioning.reconcile(pool, state, self)
        if down.created or down.error:
            sim.record("static.deprovisioned", f"NodePool/{name}", nodeclaims=list(down.created),
                       replicas=pool.spec.replicas, **({"error": down.error} if down.error else {}))

    def observe(self) -> NodePoolState:
        """:func:`observe` over this controller's state."""
        return observe(self.sim, self.state, self.disruption)

    # -- the hosts ------------------------------------------------------------------------------------
    @property
    def now(self) -> float:
        return float(self.sim.clock.now())

    def is_managed(self, nodepool: Any) -> bool:
        """nodepoolutils.IsManaged: the NodePool's nodeClassRef is a kind the cloud provider
        supports (a provider that does not say manages every NodePool)."""
        supported = getattr(self.sim.cloud_provider, "supported_node_classes", None)
        ref = nodepool.spec.template.spec.node_class_ref
        if supported is None or ref is None:
            return True
        return (ref.group, ref.kind) in set(supported())

    def is_ready(self, nodepool: Any) -> bool:
        """The NodePool's root Ready condition (karpy.provisioning.nodepoolvalidation); a NotReady
        static pool is reported as the provisioner reports dynamic ones ("is not ready and was
        ignored")."""
        from karpy.provisioning.nodepoolvalidation import REASON_VALIDATION_FAILED, nodepool_is_ready, runtime_validate

        why = None
        if not nodepool_is_ready(nodepool):
            why = "its Ready condition is not True"
        else:
            err = runtime_validate(nodepool, self.sim.provisioner.well_known)
            if err is not None:
                why = f"{REASON_VALIDATION_FAILED}: {err}"
        if why is not None:
            self.sim.provisioner.not_ready.setdefault(nodepool.metadata.name, why)
        return why is None

    def create(self, claims: Sequence[StaticNodeClaim]) -> list[str | BaseException]:
        """provisioner.go Create for each claim, launched together (a failed launch is recorded on
        its NodeClaim, as upstream's lifecycle controller launches after Create)."""
        sim = self.sim
        cluster = sim.cluster_state()
        out: list[str | BaseException] = []
        staged = []
        for claim in claims:
            pool = sim.store.get("NodePool", claim.nodepool_name)
            exceeded = sim.provisioner.limits_exceeded(pool, cluster) if pool is not None else None
            if exceeded is not None:
                out.append(ValueError(exceeded))
                continue
            rec = sim.stage_nodeclaim(claim)
            staged.append(rec)
            out.append(rec.name)
        sim.launch(staged)
        return out

    def list_nodeclaims(self, nodepool: str) -> list[Any]:
        """The pool's NodeClaims that exist (created, not deleted, launch not failed)."""
        out = []
        for rec in self.sim.existing_records():
            if rec.nodepool != nodepool or rec.error is not None:
                continue
            claim = rec.launched if rec.launched is not None else rec.requested
            if rec.deleting_at is not None and claim.metadata.deletion_timestamp is None:
                claim = claim.model_copy(update={"metadata": claim.metadata.model_copy(
                    update={"deletion_timestamp": self.sim.clock.timestamp(rec.deleting_at)})})
            out.append(claim)
        return out

    def cluster(self) -> ClusterState:
        return self.sim.cluster_state()

    def delete(self, nodeclaim: str) -> str | None:
        """A client Delete: the NodeClaim is terminated (drained) by the termination controller."""
        if self.disruption is not None:
            self.disruption.delete_nodeclaim(nodeclaim, deprovisioning.TERMINATION_REASON)
        else:
            self.sim.delete_nodeclaim(nodeclaim, deprovisioning.TERMINATION_REASON)
        return None
