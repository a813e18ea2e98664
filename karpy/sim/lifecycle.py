"""The NodeClaim lifecycle on the virtual clock: launch, register, initialize, and the end of a
NodeClaim (its deletion through the termination controller, the instance deleted).

Mirrors pkg/controllers/nodeclaim/lifecycle (launch.go, registration.go, initialization.go): a
launched NodeClaim registers its Node after ``registration_delay`` (with the NodeClaim's taints and
startup taints) and is initialized ``initialization_delay`` later (startup taints removed). A Node is
named after its NodeClaim; NodeClaim names are ``<nodepool>-<5 chars>`` derived from a per-run
counter (upstream: a random ``generateName`` suffix).
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from karpy.api.node import Node
from karpy.api.nodeclaim import NodeClaim as NodeClaimModel
from karpy.api.pod import Taint
from karpy.nodeclaim.registration import node_annotations, node_labels
from karpy.state.cluster import ClusterState
from karpy.scheduling.labels import (LABEL_CAPACITY_TYPE, LABEL_HOSTNAME, LABEL_INSTANCE_TYPE, LABEL_ZONE)
from karpy.sim.records import LaunchRecord

if TYPE_CHECKING:  # pragma: no cover
    from karpy.provisioning.provisioner import Provisioner
    from karpy.sim.clock import EventQueue, VirtualClock
    from karpy.sim.host import DisruptionHooks, Termination
    from karpy.sim.options import SimulationOptions
    from karpy.sim.pods import Pods, Recorder
    from karpy.sim.store import ObjectStore

__all__ = ["NodeClaimLifecycle"]

LABEL_REGISTERED = "karpenter.sh/registered"
LABEL_INITIALIZED = "karpenter.sh/initialized"
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def _suffix(seed: str) -> str:
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(_SUFFIX_ALPHABET[b % len(_SUFFIX_ALPHABET)] for b in digest[:5])


class NodeClaimLifecycle:
    """The NodeClaims of one simulation (see the module docstring)."""

    def __init__(self, store: ObjectStore, clock: VirtualClock, events: EventQueue, record: Recorder,
                 cloud_provider: Any, provisioner: Provisioner, options: SimulationOptions, pods: Pods,
                 errors: dict[str, str], changed: Callable[[], None], pass_index: Callable[[], int]) -> None:
        """``errors``: the simulation's per-pod errors (a failed launch sets them); ``changed()``:
        the cluster changed under the pending pods (kube-scheduler retries them); ``pass_index()``:
        the provisioning pass running now (explain output)."""
        self.store = store
        self.clock = clock
        self.events = events
        self.record = record
        self.cloud_provider = cloud_provider
        self.provisioner = provisioner
        self.options = options
        self.pods = pods
        self.errors = errors
        self._changed = changed
        self._pass_index = pass_index
        self.launches: list[LaunchRecord] = []
        #: pod key -> the NodeClaims a provisioning pass created for it (explain output)
        self.pod_claims: dict[str, set[str]] = {}
        #: every NodeClaim deletion drains through it; the disruption controller's marks
        self.termination: Termination | None = None
        self.disruption: DisruptionHooks | None = None
        self._launch_by_name: dict[str, LaunchRecord] = {}
        self._launch_by_node: dict[str, LaunchRecord] = {}
        #: the records not deleted yet, in creation order (by id: a record leaves when deleted or its
        #: launch fails), so the per-round readers cost the live cluster, not every NodeClaim the run
        #: ever made
        self._undeleted: dict[int, LaunchRecord] = {}
        self._claim_names: set[str] = set()
        self._last_cluster: ClusterState | None = None
        #: NodeClaims gone (deleted, or failed to launch) that kept their launch detail; and those
        #: that let it go, past ``options.launch_detail_limit`` (karpy.sim.retention)
        self._gone_with_detail = 0
        self.detail_released = 0

    def adopt(self, record: LaunchRecord, claim_name: str) -> None:
        """A NodeClaim of the input (karpy.sim.existing), known by its Node's name and its own."""
        self.launches.append(record)
        self._undeleted[id(record)] = record
        self._launch_by_name[record.name] = record
        self._launch_by_name.setdefault(claim_name, record)
        self._launch_by_node[record.name] = record
        self._claim_names.update((record.name, claim_name))

    # -- launch ---------------------------------------------------------------------------------
    def _claim_name(self, nodepool: str) -> str:
        i = 0
        while True:
            name = f"{nodepool}-{_suffix(f'{nodepool}/{len(self._claim_names) + i}')}"
            if name not in self._claim_names:
                self._claim_names.add(name)
                return name
            i += 1

    def stage(self, claim: Any, instance_types: Sequence[Any] | None = None,
                         untruncated: Sequence[Any] | None = None) -> LaunchRecord:
        """ToNodeClaim, a name, and the launch record (the launch itself is :meth:`launch`)."""
        requirements = claim.requirements  # ToNodeClaim replaces (never mutates) this set
        model: NodeClaimModel = self.provisioner.to_nodeclaim(claim)
        model.metadata.name = self._claim_name(claim.nodepool_name)
        model.metadata.creation_timestamp = self.clock.timestamp()
        record = LaunchRecord(name=model.metadata.name, nodepool=claim.nodepool_name,
                              created_at=self.clock.now(), requested=model, scheduling=claim,
                              pass_index=self._pass_index(), instance_types=instance_types,
                              untruncated=untruncated if untruncated is not None else claim.instance_type_options,
                              requirements=requirements)
        self.launches.append(record)
        self._undeleted[id(record)] = record
        self._launch_by_name[record.name] = record
        self.record("nodeclaim.created", f"NodeClaim/{record.name}", nodepool=record.nodepool,
                    pods=len(claim.pods))
        for p in claim.pods:
            self.pod_claims.setdefault(p.key, set()).add(record.name)
        return record

    def launch(self, records: Sequence[LaunchRecord]) -> None:
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
                    self.errors.setdefault(p.key, f"launching nodeclaim, {outcome}")
                self._gone(record)
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
                self.finish_deletion(record)  # deleted before it registered: no Node to drain
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
        self.pods.bind_daemonset_pods(node)
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

    # -- reading --------------------------------------------------------------------------------
    def nodeclaim(self, name: str) -> LaunchRecord | None:
        """The launch record of a NodeClaim by name."""
        return self._launch_by_name.get(name)

    def nodeclaim_of_node(self, node_name: str) -> LaunchRecord | None:
        """The launch record of the NodeClaim whose Node ``node_name`` registered."""
        return self._launch_by_node.get(node_name)

    def existing_records(self) -> list[LaunchRecord]:
        """The records of the NodeClaims not deleted (launched, or not launched yet; a failed launch is
        gone), in creation order: those of :attr:`launches` neither ``deleted`` nor failed."""
        return list(self._undeleted.values())

    def live_nodeclaims(self) -> list[Any]:
        """The launched NodeClaims that are not deleting or deleted, in creation order."""
        return [r.launched for r in self.existing_records() if r.launched is not None and r.deleting_at is None]

    def node_labels(self, name: str) -> dict[str, str] | None:
        """The labels of Node ``name`` (registered, not deleting), or None."""
        node = self.store.get("Node", name)
        if node is None or node.metadata.deletion_timestamp is not None:
            return None
        return dict(node.metadata.labels or {})

    def cluster_state(self) -> ClusterState:
        existing = self.existing_records()
        claims = [rec.launched for rec in existing if rec.launched is not None]
        deleting = [rec.name for rec in existing if rec.deleting_at is not None]
        if self.disruption is not None:
            deleting += sorted(self.disruption.marked)
        # the last snapshot lends its per-node sums to nodes whose bound pods are the same objects
        # (ClusterState.adopt_derived)
        self._last_cluster = ClusterState.from_objects(self.store.list("Node"), claims, self.store.list("Pod"),
                                                       deleting, previous=self._last_cluster, scan_pods=True,
                                                       bindings=self.pods.by_node if self.pods.by_node.enabled else None)
        return self._last_cluster

    # -- the end of a NodeClaim -----------------------------------------------------------------
    def delete(self, name: str, reason: str, evict_reason: str | None = None) -> bool:
        """Begin Karpenter's termination of NodeClaim ``name`` (see the module docstring): the
        termination controller (:class:`karpy.termination.controller.TerminationController`) taints,
        drains in four tiers respecting PDBs and terminationGracePeriod, and deletes. Returns False
        when it is unknown, never launched, or already deleting."""
        rec = self._launch_by_name.get(name)
        if rec is None or rec.launched is None or rec.deleted or rec.deleting_at is not None:
            return False
        if self.termination is None:
            raise RuntimeError("no termination controller is registered (Simulation.set_termination; "
                               "karpy.simulator.new_simulation wires one)")
        rec.deleting_at = self.clock.now()
        rec.deleted_by = reason
        self.record("nodeclaim.deleting", f"NodeClaim/{name}", reason=reason)
        self.termination.delete(rec, reason, evict_reason)
        return True

    def relabel(self, name: str, labels: Mapping[str, str], remove: Iterable[str] = (),
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
        self._changed()
        self.record("nodeclaim.relabelled", f"NodeClaim/{name}", labels=dict(sorted(labels.items())),
                    removed=sorted(dropped), **({"price": price} if price is not None else {}))
        return True

    def reclaim_at(self, name: str, t: float) -> None:
        """The cloud takes the instance of NodeClaim ``name`` back at ``t`` (a spot reclaim) whether
        or not its drain finished: remaining pods are deleted with it."""
        rec = self._launch_by_name.get(name)
        if rec is None:
            return

        def reclaim() -> None:
            if not rec.deleted:
                self.record("nodeclaim.reclaimed", f"NodeClaim/{name}")
                self.finish_deletion(rec)

        self.events.schedule(t, f"reclaim {name}", reclaim)

    def finish_deletion(self, rec: LaunchRecord) -> None:
        """The NodeClaim is gone: its remaining pods deleted, its Node deleted, the instance
        deleted through the cloud provider."""
        for pod in self.pods.by_node.on(rec.name):
            self.pods.delete(pod.key)
        node = self.store.get("Node", rec.name)
        if node is not None:
            self.store.delete("Node", node)
        try:
            self.cloud_provider.delete(rec.launched)
        except Exception as err:  # noqa: BLE001 - NodeClaimNotFound etc.: the instance is gone either way
            self.record("nodeclaim.delete-error", f"NodeClaim/{rec.name}", error=str(err))
        rec.deleted = True
        rec.deleted_at = self.clock.now()
        self._gone(rec)
        self._changed()
        self.record("nodeclaim.deleted", f"NodeClaim/{rec.name}", reason=rec.deleted_by)

    def _gone(self, rec: LaunchRecord) -> None:
        """``rec`` left the cluster (deleted, or its launch failed): it leaves the live records, and
        past the first ``launch_detail_limit`` such NodeClaims it lets its launch detail go, here and
        in the provider (memory bounded by the live cluster)."""
        self._undeleted.pop(id(rec), None)
        if self._gone_with_detail < self.options.launch_detail_limit:
            self._gone_with_detail += 1
            return
        self.detail_released += 1
        rec.detail_released = True
        rec.scheduling = rec.instance_types = rec.untruncated = rec.requirements = None
        release = getattr(self.cloud_provider, "release_launch", None)
        if release is not None:
            release(rec.name)
