"""The provisioner: pending pods + NodePools -> scheduling Results -> NodeClaims.

Mirrors pkg/controllers/provisioning/provisioner.go (GetPendingPods, Validate,
validateKarpenterManagedLabelCanExist, validateNodeSelector, validateAffinity, NewScheduler,
Schedule, Create's limit check, getDaemonSetPods) and pkg/utils/nodepool (OrderByWeight),
pkg/utils/daemonset (PodForDaemonSet).

Rules and scope:
- NodePool readiness: a pool is dropped when it carries a ``Ready`` condition whose status is not
  ``True`` (karpy has no NodePool readiness controller, so pools without conditions count as ready),
  when it is being deleted, or when it is static (``spec.replicas``; static pools are out of scope).
- ``OrderByWeight``: weight desc (nil = 0), ties by name DESC (``sort.Slice`` with a total order).
- Volume topology, DRA, capacity buffers, default-TSC injection and the 1-minute Solve timeout are
  out of scope. Pods with resource claims fail with upstream's DRA error.
"""

from __future__ import annotations

from typing import Any, Sequence

from karpy.cloudprovider.types import MIN_VALUES_POLICY_STRICT
from karpy.provisioning import podutils
from karpy.provisioning.nodeclaimtemplate import DEFAULT_MAX_INSTANCE_TYPES, to_nodeclaim
from karpy.provisioning.scheduler import PREFERENCE_POLICY_RESPECT, Results, Scheduler
from karpy.provisioning.state import ClusterState
from karpy.scheduling.labels import CORE_WELL_KNOWN_LABELS, LABEL_NODEPOOL, OP_DOES_NOT_EXIST, validate_requirement
from karpy.scheduling.requirements import pod_requirements

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


def nodepool_is_ready(nodepool: Any) -> bool:
    """See module doc: not ready only when a Ready condition exists and is not True."""
    for c in nodepool.status.conditions or ():
        if c.type == "Ready":
            return c.status == "True"
    return True


def pod_for_daemonset(ds: Any) -> Any:
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
    ) -> None:
        self.cloud_provider = cloud_provider
        self.preference_policy = preference_policy
        self.min_values_policy = min_values_policy
        self.max_instance_types = max_instance_types
        self.well_known: frozenset[str] = CORE_WELL_KNOWN_LABELS | frozenset(cloud_provider.well_known_labels())
        self.last_scheduler: Scheduler | None = None

    # -- validation -----------------------------------------------------------------------------
    def validate(self, pod: Any) -> str | None:
        """provisioner.go Validate (without PVC validation): errors joined with "; "."""
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
        return "; ".join(errs) if errs else None

    def pending_pods(self, pods: Sequence[Any]) -> tuple[list[Any], dict[str, str]]:
        """provisioner.go GetPendingPods: provisionable pods that validate; rejected ones with
        ``ignoring pod, <err>``."""
        out: list[Any] = []
        ignored: dict[str, str] = {}
        for p in pods:
            if not podutils.is_provisionable(p):
                continue
            err = self.validate(p)
            if err is not None:
                ignored[p.key] = f"ignoring pod, {err}"
                continue
            out.append(p)
        return out, ignored

    # -- scheduling -----------------------------------------------------------------------------
    def dynamic_nodepools(self, nodepools: Sequence[Any]) -> list[Any]:
        pools = [
            np for np in nodepools
            if not np.is_static() and nodepool_is_ready(np) and np.metadata.deletion_timestamp is None
        ]
        return order_by_weight(pools)

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

    def reschedulable_pods_of_deleting_nodes(self, cluster: ClusterState) -> list[Any]:
        """nodes.Deleting().CurrentlyReschedulablePods (PDB and do-not-disrupt checks are the
        disruption engine's; here: active or terminating StatefulSet pods, not DaemonSet/static)."""
        out = []
        for sn in cluster.deleting_nodes():
            if sn.node is None:
                continue
            for p in sn.pods:
                if podutils.is_owned_by_daemonset(p) or podutils.is_owned_by_node(p):
                    continue
                active = not podutils.is_terminal(p) and not podutils.is_terminating(p)
                if active or (podutils.is_terminating(p) and podutils.is_owned_by(p, "apps/v1", "StatefulSet")):
                    out.append(p)
        return out

    def schedule(
        self,
        pods: Sequence[Any],
        nodepools: Sequence[Any],
        cluster: ClusterState | None = None,
        daemonsets: Sequence[Any] = (),
    ) -> Results:
        """provisioner.go Schedule (:362-470)."""
        from karpy.provisioning.topology import Topology

        cluster = cluster if cluster is not None else ClusterState()
        pending, ignored = self.pending_pods(pods)
        all_pods = pending + self.reschedulable_pods_of_deleting_nodes(cluster)
        if not all_pods:
            r = Results([], [], {})
            r.ignored = ignored  # type: ignore[attr-defined]
            return r
        pools = self.dynamic_nodepools(nodepools)
        if not pools:
            r = Results([], [], {p.key: ERR_NO_DYNAMIC_NODEPOOLS for p in all_pods}, {p.key: p for p in all_pods})
            r.ignored = ignored  # type: ignore[attr-defined]
            return r
        instance_types: dict[str, list[Any]] = {}
        for np in pools:
            try:
                its = list(self.cloud_provider.get_instance_types(np))
            except Exception:  # noqa: BLE001 - upstream logs and skips the pool
                continue
            if its:
                instance_types[np.metadata.name] = its
        state_nodes = cluster.active_nodes()
        topology = Topology(cluster, state_nodes, pools, instance_types, all_pods,
                            self.preference_policy, self.well_known)
        scheduler = Scheduler(
            pools, cluster, state_nodes, topology, instance_types, self.daemonset_pods(daemonsets, cluster),
            well_known=self.well_known, preference_policy=self.preference_policy,
            min_values_policy=self.min_values_policy,
        )
        self.last_scheduler = scheduler
        results = scheduler.solve(all_pods)
        results = results.truncate_instance_types(self.max_instance_types, self.min_values_policy, self.well_known)
        results.ignored = ignored  # type: ignore[attr-defined]
        return results

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
