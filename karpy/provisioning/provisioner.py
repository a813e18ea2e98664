"""The provisioner: pending pods + NodePools -> scheduling Results -> NodeClaims.

Mirrors pkg/controllers/provisioning/provisioner.go (GetPendingPods, Validate,
validateKarpenterManagedLabelCanExist, validateNodeSelector, validateAffinity, NewScheduler,
Schedule, Create's limit check, getDaemonSetPods) and pkg/utils/nodepool (OrderByWeight),
pkg/utils/daemonset (PodForDaemonSet).

Rules and scope:
- NodePool readiness (``nodepoolvalidation.nodepool_is_ready``): a pool is dropped when it carries a
  ``Ready`` condition whose status is not ``True``, when it fails RuntimeValidate (the validation
  controller's ``ValidationSucceeded=False``), when it is being deleted, or when it is static
  (``spec.replicas``; karpy.static keeps those at their replicas).
- ``OrderByWeight``: weight desc (nil = 0), ties by name DESC (``sort.Slice`` with a total order).
- Volume topology (karpy.provisioning.volumetopology): PVC validation and per-pod volume
  alternatives handed to the scheduler. Pods with resource claims fail with upstream's DRA error.
  Default topology-spread constraints from ``--scheduler-config`` (karpy.provisioning.
  defaultconstraints). Capacity buffers and the 1-minute Solve timeout are out of scope.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any, Sequence

from karpy.cloudprovider.registry import register_provider
from karpy.cloudprovider.types import MIN_VALUES_POLICY_STRICT
from karpy.options import Options
from karpy.utils import pod as podutils
from karpy.provisioning.nodepoolvalidation import (REASON_VALIDATION_FAILED, nodepool_is_ready, not_ready_reason,
                                                   reconcile_status, runtime_validate)
from karpy.provisioning.nodeclaimtemplate import DEFAULT_MAX_INSTANCE_TYPES, to_nodeclaim
from karpy.provisioning.reservationmanager import ReservedOfferingMode
from karpy.provisioning.defaultconstraints import DefaultTopologySpreadInjector
from karpy.provisioning.existingnodememo import ExistingNodeMemo
from karpy.provisioning.volumetopology import VolumeTopology
from karpy.provisioning.poddata import Prepared
from karpy.provisioning.scheduler import PREFERENCE_POLICY_IGNORE, PREFERENCE_POLICY_RESPECT, Results, Scheduler
from karpy.provisioning.schedulercache import SchedulerCache
from karpy.state.cluster import ClusterState
from karpy.scheduling.labels import CORE_WELL_KNOWN_LABELS, LABEL_NODEPOOL, OP_DOES_NOT_EXIST, validate_requirement
from karpy.scheduling.requirements import pod_requirements

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = [
    "ERR_KARPENTER_MANAGED_LABEL_DOES_NOT_EXIST",
    "ERR_NO_DYNAMIC_NODEPOOLS",
    "Provisioner",
    "ProvisioningResult",
    "order_by_weight",
    "nodepool_is_ready",
    "pod_for_daemonset",
]

ERR_KARPENTER_MANAGED_LABEL_DOES_NOT_EXIST = (
    f"configured to not run on a Karpenter provisioned node (requirement={LABEL_NODEPOOL} {OP_DOES_NOT_EXIST})"
)
ERR_NO_DYNAMIC_NODEPOOLS = "no dynamic nodepools found"
ERR_MATCH_FIELDS = "node selector term with matchFields is not supported"


def order_by_weight(nodepools: Sequence[Any]) -> list[Any]:
    """pkg/utils/nodepool OrderByWeight: weight desc (nil = 0), ties name descending."""
    by_name = sorted(nodepools, key=lambda np: np.metadata.name, reverse=True)
    return sorted(by_name, key=lambda np: -(np.spec.weight or 0))


def pod_for_daemonset(ds: Any) -> Pod:
    """pkg/utils/daemonset PodForDaemonSet: a pod from the template, owned by the DaemonSet.
    (Container limits without requests are already requests: API-model defaulting.)"""
    from karpy.api.meta import ObjectMeta, OwnerReference
    from karpy.api.pod import Pod

    tmpl = ds.spec.template
    return Pod(
        metadata=ObjectMeta(
            name=ds.metadata.name,
            namespace=ds.metadata.namespace,
            uid=f"daemonset-pod/{ds.metadata.namespace}/{ds.metadata.name}",
            labels=dict(tmpl.metadata.labels or {}),
            annotations=dict(tmpl.metadata.annotations or {}),
            owner_references=[OwnerReference(api_version="apps/v1", kind="DaemonSet", name=ds.metadata.name,
                                             uid=ds.metadata.uid, controller=True)],
        ),
        spec=tmpl.spec.model_copy(deep=True),
    )


class ProvisioningResult(Results):
    """Results plus the pods dropped by validation (``ignoring pod, <err>``)."""


class Provisioner:
    """provisioner.go Provisioner (the scheduling half; creation goes through ``create``).

    ``Provisioner(cloud_provider, preference_policy="Respect", min_values_policy="Strict",
    max_instance_types=600)``; ``schedule(pods, nodepools, cluster=None, daemonsets=())`` returns
    :class:`Results` (already truncated to ``max_instance_types``) with ``ignored`` set to
    ``{pod key: "ignoring pod, <err>"}`` for pods rejected by validation.
    """

    def __init__(
        self,
        cloud_provider: Any,
        *,
        preference_policy: str = PREFERENCE_POLICY_RESPECT,
        min_values_policy: str = MIN_VALUES_POLICY_STRICT,
        max_instance_types: int = DEFAULT_MAX_INSTANCE_TYPES,
        options: Options | None = None,
    ) -> None:
        """``options`` (karpy.options.Options), when given, supplies both policies."""
        self.cloud_provider = register_provider(cloud_provider)  # its label aliases (start-up)
        self.options = options or Options(preference_policy=preference_policy, min_values_policy=min_values_policy)
        self.preference_policy = self.options.preference_policy
        self.min_values_policy = self.options.min_values_policy
        self.max_instance_types = max_instance_types
        self.well_known: frozenset[str] = CORE_WELL_KNOWN_LABELS | frozenset(cloud_provider.well_known_labels())
        self.last_scheduler: Scheduler | None = None
        #: NodePool name -> why it was NotReady (RuntimeValidate errors), for warnings()
        self.not_ready: dict[str, str] = {}
        from karpy.provisioning.topology import SHARED_DOMAIN_GROUPS

        #: topology domain groups kept across Solves (and simulations) while NodePools and instance
        #: types are unchanged: the process's memo, see DomainGroupCache
        self.domain_groups = SHARED_DOMAIN_GROUPS
        #: instance types per NodePool and what the scheduler derives from them, kept across
        #: provisioning passes while the cloud provider's key for them is unchanged
        self.scheduler_cache = SchedulerCache()
        #: the cluster's claims, volumes and classes (upstream: the provisioner's volumeTopology over
        #: the kube client); every NewScheduler -- provisioning and disruption's SimulateScheduling
        #: alike -- computes the pods' volume topology requirements from it
        self.volumes: VolumeTopology | None = None

    # -- validation -----------------------------------------------------------------------------
    def validate(self, pod: Pod, volumes: VolumeTopology | None = None) -> str | None:
        """provisioner.go Validate (PVC validation when ``volumes`` is given): errors joined with "; "."""
        errs: list[str] = []
        for r in pod_requirements(pod).values():
            if r.key == LABEL_NODEPOOL and r.operator == OP_DOES_NOT_EXIST:
                errs.append(ERR_KARPENTER_MANAGED_LABEL_DOES_NOT_EXIST)
                break
        from karpy.api.pod import NodeSelectorRequirement

        for k, v in (pod.spec.node_selector or {}).items():
            e = validate_requirement(NodeSelectorRequirement.model_construct(key=k, operator="In", values=[v], min_values=None), self.well_known)
            if e:
                errs.append(e)
        aff = pod.spec.affinity
        if aff is not None and aff.node_affinity is not None:
            req = aff.node_affinity.required_during_scheduling_ignored_during_execution
            if req is not None:
                for term in req.node_selector_terms:
                    if term.match_fields:
                        errs.append(ERR_MATCH_FIELDS)
                    for expr in term.match_expressions or ():
                        e = validate_requirement(
                            NodeSelectorRequirement.model_construct(key=expr.key, operator=expr.operator,
                                                                    values=list(expr.values or ()), min_values=None),
                            self.well_known)
                        if e:
                            errs.append(e)
        if volumes is not None and pod.spec.volumes:
            e = volumes.validate(pod)
            if e:
                errs.append(e)
        return "; ".join(errs) if errs else None

    def pending_pods(self, pods: Sequence[Pod], volumes: VolumeTopology | None = None
                     ) -> tuple[list[Any], dict[str, str]]:
        """provisioner.go GetPendingPods: provisionable pods that validate; rejected ones with
        ``ignoring pod, <err>``."""
        out: list[Any] = []
        ignored: dict[str, str] = {}
        is_provisionable = podutils.is_provisionable
        by_spec: dict[int, tuple[Any, str | None]] = {}
        for p in pods:
            if not is_provisionable(p):
                continue
            spec = p.spec
            if volumes is not None and spec.volumes:
                err = self.validate(p, volumes)
            else:
                # Not in upstream (Validate runs for every pod); same result because without
                # volumes to check Validate reads the pod's spec alone (its requirements,
                # nodeSelector and node affinity) and the well-known labels: the pods of one
                # template share their spec object, so it is asked once per spec in this call
                # (the entry holds the spec, so no id is reused; nothing edits it meanwhile)
                hit = by_spec.get(id(spec))
                if hit is not None and hit[0] is spec:
                    err = hit[1]
                else:
                    err = self.validate(p, None)
                    by_spec[id(spec)] = (spec, err)
            if err is not None:
                ignored[p.key] = f"ignoring pod, {err}"
                continue
            out.append(p)
        return out, ignored

    # -- scheduling -----------------------------------------------------------------------------
    def dynamic_nodepools(self, nodepools: Sequence[Any]) -> list[Any]:
        """provisioner.go NewScheduler's filter: not static, Ready, not being deleted."""
        pools = []
        for np in nodepools:
            if np.is_static() or np.metadata.deletion_timestamp is not None:
                continue
            readiness = getattr(self.cloud_provider, "nodeclass_readiness", None)
            ready = readiness(np) if readiness is not None else None
            if ready is not None:  # the NodePool validation and readiness controllers (nodepoolvalidation)
                reconcile_status(np, self.well_known, ready, float(self.cloud_provider.clock.now()))
                if not nodepool_is_ready(np):
                    self.not_ready.setdefault(np.metadata.name, not_ready_reason(np))
                    continue
                pools.append(np)
                continue
            if not nodepool_is_ready(np):
                self.not_ready.setdefault(np.metadata.name, "its Ready condition is not True")
                continue
            err = runtime_validate(np, self.well_known)
            if err is not None:
                self.not_ready.setdefault(np.metadata.name, f"{REASON_VALIDATION_FAILED}: {err}")
                continue
            pools.append(np)
        return order_by_weight(pools)

    def warnings(self) -> list[str]:
        """One line per NodePool ignored as not ready (upstream logs "ignoring nodepool, not ready")."""
        return [f'NodePool "{name}" is not ready and was ignored ({why})' for name, why in sorted(self.not_ready.items())]

    def daemonset_pods(self, daemonsets: Sequence[Any], cluster: ClusterState) -> list[Any]:
        """provisioner.go getDaemonSetPods."""
        out = []
        for ds in daemonsets:
            pod = cluster.daemonset_pod(ds)
            pod = pod.model_copy(deep=True) if pod is not None else pod_for_daemonset(ds)
            t_aff = ds.spec.template.spec.affinity
            if t_aff is not None and t_aff.node_affinity is not None and \
                    t_aff.node_affinity.required_during_scheduling_ignored_during_execution is not None:
                from karpy.api.pod import Affinity, NodeAffinity

                if pod.spec.affinity is None:
                    pod.spec.affinity = Affinity()
                if pod.spec.affinity.node_affinity is None:
                    pod.spec.affinity.node_affinity = NodeAffinity()
                pod.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution = \
                    t_aff.node_affinity.required_during_scheduling_ignored_during_execution.model_copy(deep=True)
            out.append(pod)
        return out

    def reschedulable_pods_of_deleting_nodes(self, cluster: ClusterState, pdbs: Sequence[Any] = (),
                                             now: float = 0.0, deleting_nodes: Sequence[Any] | None = None
                                             ) -> list[Any]:
        """nodes.Deleting().CurrentlyReschedulablePods (statenode.go -> utils/node
        GetCurrentlyReschedulablePods): the pods bound to deleting nodes that PDB Limits call
        currently reschedulable -- reschedulable (active, or a terminating StatefulSet pod; not a
        DaemonSet or mirror pod), disruptable (no active ``karpenter.sh/do-not-disrupt``, including
        its duration form) and not fully blocked by a PDB. ``pdbs``: the cluster's
        PodDisruptionBudgets, their allowance computed over every pod the cluster state holds;
        ``now``: virtual seconds (for the do-not-disrupt duration); ``deleting_nodes``:
        ``cluster.deleting_nodes()`` when the caller has it already."""
        from karpy.utils.pdb import Limits

        if deleting_nodes is None:
            deleting_nodes = cluster.deleting_nodes()
        deleting = [sn for sn in deleting_nodes if sn.node is not None]
        if not deleting:
            return []
        limits = Limits.from_objects(pdbs, [p for sn in cluster.nodes for p in sn.pods])
        return [p for sn in deleting for p in sn.pods if limits.is_currently_reschedulable(p, now)]

    def schedule(
        self,
        pods: Sequence[Pod],
        nodepools: Sequence[Any],
        cluster: ClusterState | None = None,
        daemonsets: Sequence[Any] = (),
        *,
        pdbs: Sequence[Any] = (),
        now: float = 0.0,
        volumes: VolumeTopology | None = None,
        default_constraints: DefaultTopologySpreadInjector | None = None,
    ) -> Results:
        """provisioner.go Schedule (:362-470). ``pdbs``/``now``: see
        :meth:`reschedulable_pods_of_deleting_nodes`; ``volumes``: the cluster's claims, volumes
        and classes (PVC validation and volume topology, provisioner.go getVolumeTopologyRequirements);
        ``default_constraints``: the ``--scheduler-config`` default topology-spread injector
        (provisioner.go NewScheduler: injected into scheduling-time copies before NewTopology)."""
        if volumes is not None:
            self.volumes = volumes
        cluster = cluster if cluster is not None else ClusterState()
        # the cluster's snapshot may know which of these pods are unbound (ClusterState.unbound_pods):
        # GetPendingPods keeps none of the bound ones, so it is handed the others, in their order
        unbound_of = getattr(cluster, "unbound_pods", None)
        unbound = unbound_of(pods) if unbound_of is not None else None
        pending, ignored = self.pending_pods(pods if unbound is None else unbound, volumes)
        # StateNodes.Active() and Deleting() in one walk (nothing marks a node in between)
        active_nodes, deleting_nodes = cluster.partition_nodes()
        all_pods = pending + self.reschedulable_pods_of_deleting_nodes(cluster, pdbs, now, deleting_nodes)
        if not all_pods:
            r = Results([], [], {})
            r.ignored = ignored  # type: ignore[attr-defined]
            return r
        # getVolumeTopologyRequirements (inside NewScheduler upstream): pods whose lookup fails are
        # left out (upstream logs them; karpy reports them as ignored)
        volume_reqs, volume_errors = self.volume_topology_requirements(all_pods)
        for key, err in volume_errors.items():
            ignored.setdefault(key, err)
        all_pods = [p for p in all_pods if p.key not in volume_errors]
        if default_constraints is not None:
            all_pods = default_constraints.inject(all_pods)
        # provisioner.go Schedule: scheduler.DisableReservedCapacityFallback
        scheduler = self.new_scheduler(all_pods, nodepools, cluster, active_nodes, daemonsets,
                                       reserved_offering_mode=ReservedOfferingMode.STRICT,
                                       volume_requirements=volume_reqs)
        if scheduler is None:
            r = Results([], [], {p.key: ERR_NO_DYNAMIC_NODEPOOLS for p in all_pods}, {p.key: p for p in all_pods})
            r.ignored = ignored  # type: ignore[attr-defined]
            return r
        self.last_scheduler = scheduler
        results = scheduler.solve(all_pods)
        results = results.truncate_instance_types(self.max_instance_types, self.min_values_policy, self.well_known)
        results.ignored = ignored  # type: ignore[attr-defined]
        return results

    def volume_topology_requirements(self, pods: Sequence[Pod], prepared: Sequence[Prepared] | None = None
                                     ) -> tuple[dict[str, Any], dict[str, str]]:
        """provisioner.go getVolumeTopologyRequirements over :attr:`volumes`: pod key -> the
        alternatives of its volumes' zonal requirements (pods without any are left out), and pod
        key -> why the lookup failed. Nothing when the provisioner knows no volumes. ``prepared``:
        the pods' SpecMemo answers (which say whether a pod has volumes)."""
        reqs: dict[str, Any] = {}
        errors: dict[str, str] = {}
        if self.volumes is None:
            return reqs, errors
        with_volumes = (p for p in pods if p.spec.volumes) if prepared is None else (
            p for p, a in zip(pods, prepared) if a.derived.has_volumes)
        for p in with_volumes:  # (GetRequirements of no volume: no alternative, no error)
            alts, err = self.volumes.requirements(p)
            if err is not None:
                errors[p.key] = f"failed getting volume topology requirements, {err}"
            elif alts:
                reqs[p.key] = alts
        return reqs, errors

    def prepare(self, pods: Sequence[Pod]) -> list[Prepared]:
        """Each pod's key, spec-derived values, queue sort key and uid (SpecMemo.prepare on the
        cache's memo), as :meth:`new_scheduler` reads them."""
        return self.scheduler_cache.specs.prepare(pods, self.preference_policy == PREFERENCE_POLICY_IGNORE)

    def new_scheduler(self, pods: Sequence[Pod], nodepools: Sequence[Any], cluster: ClusterState,
                      state_nodes: Sequence[Any], daemonsets: Sequence[Any] = (),
                      instance_types_for: Any = None, *,
                      reserved_offering_mode: ReservedOfferingMode = ReservedOfferingMode.FALLBACK,
                      volume_requirements: dict[str, Any] | None = None,
                      instance_types_key_for: Callable[[Any], Hashable | None] | None = None,
                      existing_nodes_memo: ExistingNodeMemo | None = None,
                      prepared: Sequence[Prepared] | None = None,
                      requests: Mapping[Any, Mapping[str, int]] | None = None) -> Scheduler | None:
        """provisioner.go NewScheduler: the Solve for ``pods`` onto ``state_nodes`` and the dynamic
        NodePools (None when there is none). Disruption's SimulateScheduling calls it with the
        candidates left out of ``state_nodes`` (and its own per-instant ``instance_types_for``
        lookup, default ``cloud_provider.get_instance_types``).

        The pods' volume topology requirements come from :meth:`volume_topology_requirements`, as
        upstream computes them inside NewScheduler, for every caller (``volume_requirements``:
        already computed by :meth:`schedule` for the same pods). A pod whose lookup fails gets
        none here (upstream Solves it too; :meth:`schedule` leaves it out beforehand).

        ``instance_types_key_for(pool)``: the provider's key of what ``instance_types_for(pool)``
        returned (disruption's view takes its types from :attr:`scheduler_cache`), so the index, the
        template pre-filter and the reserved capacity come from the cache as in a provisioning pass.
        ``existing_nodes_memo``: the DaemonSet pods and existing nodes of ``cluster`` shared by the
        schedulers built on it (:mod:`karpy.provisioning.existingnodememo`). ``prepared``/``requests``:
        :meth:`prepare`'s answers for ``pods`` (in order) / their distinct requests, when kept."""
        # each pod's key, spec-derived values and uid, read once for the volume lookup, the Topology
        # and the Scheduler's PodData (the memo keeps them across Solves)
        specs = self.scheduler_cache.specs
        if prepared is None:
            prepared = self.prepare(pods)
        if volume_requirements is None:
            volume_requirements, _ = self.volume_topology_requirements(pods, prepared)
        lookup = instance_types_for or self.cloud_provider.get_instance_types
        from karpy.provisioning.topology import Topology

        pools = self.dynamic_nodepools(nodepools)
        if not pools:
            return None
        instance_types: dict[str, list[Any]] = {}
        keys: dict[str, Hashable | None] = {}
        # the provider's own lookup goes through the cache (SchedulerCache: the types of a pool are
        # listed again only when the provider's key for them changed); another lookup (disruption's
        # per-instant view) is asked every time and nothing derived is kept
        cache = self.scheduler_cache if instance_types_for is None or instance_types_key_for is not None else None
        for np in pools:
            try:
                if instance_types_for is None:
                    its, key = self.scheduler_cache.instance_types(self.cloud_provider, np, lookup)
                else:
                    its = list(lookup(np))
                    key = instance_types_key_for(np) if instance_types_key_for is not None else None
            except Exception:  # noqa: BLE001 - upstream logs and skips the pool
                continue
            if its:
                instance_types[np.metadata.name] = its
                keys[np.metadata.name] = key
        state_nodes = list(state_nodes)
        topology = Topology(cluster, state_nodes, pools, instance_types, list(pods),
                            self.preference_policy, self.well_known, domain_group_cache=self.domain_groups,
                            label_requirements=self.scheduler_cache.label_requirements,
                            prepared=[(a.uid, a.derived.topology_free) for a in prepared],
                            instance_type_keys=keys if cache is not None else None)
        memo = existing_nodes_memo if existing_nodes_memo is not None and existing_nodes_memo.enabled else None
        ds_pods = (memo.daemonset_pods(daemonsets, cluster, self.daemonset_pods) if memo is not None
                   else self.daemonset_pods(daemonsets, cluster))
        return Scheduler(
            pools, cluster, state_nodes, topology, instance_types, ds_pods,
            well_known=self.well_known, preference_policy=self.preference_policy,
            min_values_policy=self.min_values_policy,
            reserved_offering_mode=reserved_offering_mode,
            reserved_capacity=self.options.feature_gates.reserved_capacity,
            volume_requirements=volume_requirements,
            volumes=self.volumes,
            cache=cache,
            instance_type_keys=keys,
            label_requirements=self.scheduler_cache.label_requirements,
            existing_nodes_memo=memo,
            specs=specs,
            prepared={id(p): (p, a) for p, a in zip(pods, prepared)}, requests=requests,
        )

    # -- creation -------------------------------------------------------------------------------
    def limits_exceeded(self, nodepool: Any, cluster: ClusterState) -> str | None:
        """pkg/apis/v1 Limits.ExceededBy(cluster.NodePoolResourcesFor(pool)): usage > limit."""
        if nodepool.spec.limits is None:
            return None
        from karpy.api.quantity import format_nanos
        from karpy.scheduling.resources import from_quantities

        limits = from_quantities(nodepool.spec.limits)
        usage = cluster.nodepool_usage(nodepool.metadata.name)
        for name in sorted(usage):
            if name in limits and usage[name] > limits[name]:
                return (f"resource usage exceeds limit (resource-name={name}, usage={format_nanos(usage[name])}, "
                        f"limit={format_nanos(limits[name])})")
        return None

    def to_nodeclaim(self, claim: Any) -> Any:
        """provisioner.go Create's ToNodeClaim step (the API object to create)."""
        return to_nodeclaim(claim, self.max_instance_types, self.well_known)
