"""The provisioning scheduler (Solve).

Mirrors pkg/controllers/provisioning/scheduling/scheduler.go: NewScheduler (template pre-filter,
daemon overhead groups, limits / remaining resources, existing nodes), Solve, trySchedule,
updateCachedPodData, add, addToExistingNode, addToInflightNode, addToNewNodeClaim,
calculateExistingNodeClaims, buildDaemonOverheadGroups, isDaemonPodCompatible, subtractMax,
filterByRemainingResources, Results.TruncateInstanceTypes.

Determinism rules (upstream location -> our rule):
- parallel first-fit (parallelizeUntil, :614-790): the lowest index wins, evaluated sequentially.
- in-flight claims ``sort.Slice`` by pod count (:598): a stable sort (ties keep creation order).
- daemon overhead groups (buildDaemonOverheadGroups, :972-1004, Go map order): first appearance
  in the template's instance-type order.
- hostname placeholders (nodeclaim.go:85, global atomic counter): a per-Scheduler counter.
- existing nodes (sortExistingNodes, :845-858): initialized first, then name (stable).
- Solve's 1-minute timeout is not modelled (no wall clock).

The first-fit scans skip targets as :mod:`~karpy.provisioning.scanskips` says; pod copies, the
explain records and the other differences from upstream: docs/internals/upstream-mirrors.md#scheduler.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, ClassVar, Mapping, Sequence

from karpy.cloudprovider.types import (
    MIN_VALUES_POLICY_BEST_EFFORT,
    MIN_VALUES_POLICY_STRICT,
    InstanceTypes,
)
from karpy.provisioning.existingnode import ExistingNode
from karpy.provisioning.existingnodememo import NO_TOPOLOGY, ExistingNodeMemo
from karpy.provisioning.freshclaimfailures import FreshClaimFailures
from karpy.provisioning.instancetypeindex import InstanceTypeIndex
from karpy.provisioning.nodeclaim import (
    DaemonOverheadGroup,
    NodeClaim,
    ReservedOfferingError,
    filter_instance_types_by_requirements,
)
from karpy.provisioning.nodeclaimtemplate import (
    DEFAULT_MAX_INSTANCE_TYPES,
    SCHEDULING_SIMULATION_KEYS,
    NodeClaimTemplate,
)
from karpy.utils import pod as podutils
from karpy.provisioning.preferences import (
    Preferences,
    can_relax,
    changes_node_requirements,
    relaxable_copy,
    remove_required_node_affinity_term,
    tolerate_prefer_no_schedule_taints,
)
from karpy.provisioning.poddata import PodData, Prepared, SpecMemo
from karpy.provisioning.podruns import Run, plain, run_requirements
from karpy.provisioning.queue import Queue, SortKey
from karpy.provisioning.reservationmanager import ReservationManager, ReservedOfferingMode
from karpy.provisioning.reservationmanager import reserved_capacity as reserved_capacity_of
from karpy.provisioning.scanskips import Scans
from karpy.provisioning.schedulercache import SchedulerCache, pass_key
from karpy.provisioning.volumeusage import VolumeUsage, pod_volumes
from karpy.state.cluster import ClusterState, StateNode
from karpy.scheduling.hostports import HostPortUsage, get_host_ports
from karpy.scheduling.labels import (CORE_WELL_KNOWN_LABELS, LABEL_HOSTNAME, LABEL_NODEPOOL,
                                     NODECLAIM_MIN_VALUES_RELAXED_ANNOTATION_KEY)
from karpy.scheduling.requirements import Requirements, strict_pod_requirements
from karpy.scheduling.resources import from_quantities, max_resources, requests_for_pods
from karpy.scheduling.taints import tolerates

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = [
    "DRAError",
    "OUTCOME_EXISTING_NODE",
    "OUTCOME_FAILED",
    "OUTCOME_INFLIGHT_NODECLAIM",
    "OUTCOME_NEW_NODECLAIM",
    "PodAttempt",
    "TEMPLATE_ERROR_SEPARATOR",
    "PREFERENCE_POLICY_IGNORE",
    "PREFERENCE_POLICY_RESPECT",
    "PodData",
    "Results",
    "Scheduler",
    "subtract_max",
    "filter_by_remaining_resources",
]

from karpy.options import PREFERENCE_POLICY_IGNORE, PREFERENCE_POLICY_RESPECT  # noqa: E402  (options.go)
RESOURCE_NODES = "nodes"
ERR_NO_TEMPLATES = "nodepool requirements filtered out all available instance types"
ERR_EXISTING_NODES = "failed scheduling pod to existing nodes"
ERR_INFLIGHT_NODES = "failed scheduling pod to inflight nodes"
ERR_DRA = "pod has Dynamic Resource Allocation requirements that are not yet supported by Karpenter"
MIN_VALUES_POD_ERROR = "pod didn\u2019t schedule because NodePool couldn\u2019t meet minValues requirements, {err} (NodePool={pool})"


class DRAError(str):
    """scheduler.go DRAError (an error value; never relaxed)."""


#: PodAttempt.outcome values (where the pod's last add went)
OUTCOME_EXISTING_NODE = "existing-node"
OUTCOME_INFLIGHT_NODECLAIM = "in-flight-nodeclaim"
OUTCOME_NEW_NODECLAIM = "new-nodeclaim"
OUTCOME_FAILED = "failed"


#: separates the template errors of one round inside a PodAttempt record (never in error texts)
TEMPLATE_ERROR_SEPARATOR = "\x1f"


class PodAttempt:
    """What the last Solve did with one pod: cheap facts recorded for explain output (karpy.explain).

    ``outcome`` is one of the ``OUTCOME_*`` constants; ``target`` the existing node's name or the
    new / in-flight claim's hostname placeholder. ``rounds``: one ``(relaxation,
    template_errors, error)`` per ``add`` of trySchedule, in order; ``relaxation`` is the reason
    ``Preferences.relax`` returned before that add (None for the first;
    ``preferences.describe_relaxations`` names the steps), ``template_errors`` the errors of the
    templates addToNewNodeClaim tried, in weight order (``template_errors[i]`` belongs to
    ``Scheduler.templates[i]``; on success the next template is the one that won; None when the
    add did not reach the templates; :meth:`templates_tried` pairs them with NodePool names),
    ``error`` the add's error (None on success).

    The scheduler appends one flat record per try to a log of strings, ``(outcome, target,
    number of rounds, relaxation_1, template_errors_1, error_1, relaxation_2, ...)``, each
    round's template errors joined by :data:`TEMPLATE_ERROR_SEPARATOR` into one string;
    ``Scheduler.attempts`` maps the pod key to the offset of its last record;
    ``Scheduler.attempt_record(key)`` returns it as a tuple and :meth:`from_record` reads that
    (no object the garbage collector tracks is allocated: docs/internals/upstream-mirrors.md#scheduler).
    """

    __slots__ = ("outcome", "target", "rounds")

    def __init__(self, outcome: str, target: str | None,
                 rounds: tuple[tuple[str | None, tuple[str, ...] | None, str | None], ...]) -> None:
        self.outcome = outcome
        self.target = target
        self.rounds = rounds

    @classmethod
    def from_record(cls, record: Sequence[Any]) -> PodAttempt:
        """The view of a ``Scheduler.attempt_record`` tuple (see the class doc)."""
        rounds = []
        for i in range(3, 3 + 3 * record[2], 3):
            errs = record[i + 1]
            rounds.append((record[i], None if errs is None else tuple(errs.split(TEMPLATE_ERROR_SEPARATOR))
                           if errs else (), record[i + 2]))
        return cls(record[0], record[1], tuple(rounds))

    @property
    def relaxations(self) -> list[str]:
        """The relaxation reasons applied, in order."""
        return [r[0] for r in self.rounds if r[0] is not None]

    @property
    def error(self) -> str | None:
        """The last add's error (None when the pod was placed)."""
        return self.rounds[-1][2] if self.rounds else None

    @staticmethod
    def templates_tried(template_names: Sequence[str], template_errors: Sequence[str] | None,
                        placed: bool) -> list[tuple[str, str | None]] | None:
        """``(nodepool, error)`` per template one round tried, in weight order; the winner (when
        ``placed``) with error None. ``template_names``: ``Scheduler.template_names``."""
        if template_errors is None:
            return None
        out: list[tuple[str, str | None]] = list(zip(template_names, template_errors))
        if placed and len(template_errors) < len(template_names):
            out.append((template_names[len(template_errors)], None))
        return out

    def __repr__(self) -> str:
        return f"PodAttempt({self.outcome!r}, {self.target!r}, rounds={len(self.rounds)})"


_has_dra = podutils.has_dra_requirements


def subtract_max(remaining: dict[str, int], instance_types: Sequence[Any]) -> dict[str, int]:
    """scheduler.go subtractMax: remaining - max capacity over the instance types (keys of remaining)."""
    if not instance_types:
        return remaining
    mx = max_resources(*(it.capacity for it in instance_types))
    return {k: v - mx.get(k, 0) for k, v in remaining.items()}


def filter_by_remaining_resources(instance_types: Sequence[Any], remaining: dict[str, int]) -> list[Any]:
    """scheduler.go filterByRemainingResources: drop types whose capacity exceeds a remaining amount."""
    items = list(remaining.items())
    out = []
    for it in instance_types:
        cap = it.capacity
        for name, rem in items:
            if cap.get(name, 0) > rem:
                break
        else:
            out.append(it)
    return out


@dataclass
class Results:
    """scheduler.go Results. ``pod_errors`` maps pod key (``ns/name``) to the error text."""

    new_nodeclaims: list[NodeClaim]
    existing_nodes: list[ExistingNode]
    pod_errors: dict[str, str] = field(default_factory=dict)
    pods: dict[str, Any] = field(default_factory=dict)
    #: id(claim) -> the claim's instance types before truncate_instance_types cut them (references,
    #: for explain output: where the MaxInstanceTypes cut fell)
    untruncated: dict[int, list[Any]] = field(default_factory=dict)

    def truncate_instance_types(self, max_instance_types: int, min_values_policy: str = MIN_VALUES_POLICY_STRICT,
                                well_known: frozenset[str] | None = None) -> Results:
        """scheduler.go TruncateInstanceTypes (+ InstanceTypes.Truncate): claims whose cut list
        violates minValues are dropped and their pods get the minValues error."""
        valid = []
        for nc in self.new_nodeclaims:
            wk = well_known if well_known is not None else nc.well_known
            self.untruncated[id(nc)] = nc.instance_type_options
            its, err = InstanceTypes(nc.instance_type_options)._truncate(
                nc.requirements, max_instance_types, min_values_policy, wk)
            if err is not None:
                for p in nc.pods:
                    self.pod_errors[p.key] = MIN_VALUES_POD_ERROR.format(err=err, pool=nc.nodepool_name)
            else:
                nc.instance_type_options = list(its)
                valid.append(nc)
        self.new_nodeclaims = valid
        return self

    def dra_errors(self) -> dict[str, str]:
        """scheduler.go Results.DRAErrors: the pod errors that are DRA errors."""
        return {k: e for k, e in self.pod_errors.items() if isinstance(e, DRAError)}

    def reserved_offering_errors(self) -> dict[str, str]:
        """scheduler.go Results.ReservedOfferingErrors."""
        return {k: e for k, e in self.pod_errors.items() if isinstance(e, ReservedOfferingError)}

    def nodepool_to_pods(self) -> dict[str, list[Any]]:
        """scheduler.go NodePoolToPodMapping."""
        out: dict[str, list[Any]] = {}
        for nc in self.new_nodeclaims:
            out.setdefault(nc.nodepool_name, []).extend(nc.pods)
        for en in self.existing_nodes:
            out.setdefault(en.labels().get(LABEL_NODEPOOL, ""), []).extend(en.pods)
        return out


class Scheduler:
    """scheduler.go Scheduler. Built once per provisioning pass.

    ``nodepools`` must already be filtered and ordered by weight (the Provisioner does that).
    """

    #: add a run of alike pods in one step to the existing node or in-flight claim that took the pod
    #: before them (karpy.provisioning.podruns; the same Results, pinned by test_podruns_equivalence)
    take_runs: ClassVar[bool] = True

    def __init__(
        self,
        nodepools: Sequence[Any],
        cluster: ClusterState,
        state_nodes: Sequence[StateNode],
        topology: Any,
        instance_types: Mapping[str, Sequence[Any]],
        daemonset_pods: Sequence[Pod] = (),
        *,
        well_known: frozenset[str] = CORE_WELL_KNOWN_LABELS,
        preference_policy: str = PREFERENCE_POLICY_RESPECT,
        min_values_policy: str = MIN_VALUES_POLICY_STRICT,
        reserved_offering_mode: ReservedOfferingMode = ReservedOfferingMode.FALLBACK,
        reserved_capacity: bool = True,
        volume_requirements: dict[str, Any] | None = None,
        volumes: Any = None,
        cache: SchedulerCache | None = None,
        instance_type_keys: Mapping[str, Hashable | None] | None = None,
        label_requirements: Callable[[Mapping[str, str]], Requirements] | None = None,
        existing_nodes_memo: ExistingNodeMemo | None = None,
        specs: SpecMemo | None = None,
        prepared: Mapping[int, tuple[Pod, Prepared]] | None = None,
        requests: Mapping[Any, Mapping[str, int]] | None = None,
    ) -> None:
        """scheduler.go NewScheduler. ``reserved_offering_mode``: ReservedOfferingMode (the provisioner
        passes STRICT); ``reserved_capacity``: the ReservedCapacity gate; ``volume_requirements``:
        pod key -> volume topology alternatives; ``volumes``: the VolumeTopology; ``cache`` with
        ``instance_type_keys`` (NodePool name -> the provider's key of its types): the index, the
        template pre-filter and the reserved capacity are taken from the SchedulerCache while those
        keys hold; ``label_requirements``: a memo of ``Requirements.from_labels`` (the cache's);
        ``existing_nodes_memo``: the ExistingNodes of ``cluster`` built once for every scheduler on it
        (karpy.provisioning.existingnodememo); ``specs``: the SpecMemo of the pods' PodData (default:
        the cache's), with ``prepared``: id(pod) -> (the pod, its ``of_pod``) and ``requests``: their distinct ones."""
        self.well_known = well_known
        self.volume_requirements = volume_requirements or {}
        self.volume_topology = volumes
        self.reserved_offering_mode = reserved_offering_mode
        keys: Mapping[str, Hashable | None] = (instance_type_keys if instance_type_keys is not None
                                                 else {name: None for name in instance_types})
        types_key = pass_key(keys) if cache is not None else None
        self.reservation_manager = (_reservation_manager(instance_types, cache, types_key)
                                    if reserved_capacity else None)
        self.preference_policy = preference_policy
        self.min_values_policy = min_values_policy
        self.best_effort = min_values_policy == MIN_VALUES_POLICY_BEST_EFFORT
        self.topology = topology
        self.cluster = cluster
        self.index = _instance_type_index(instance_types, well_known, cache, types_key)
        self.index.begin_scheduler()
        self._hostname_seq = 0
        self._interned: dict[tuple[Any, ...], int] = {}
        # PodData's spec-derived values per spec
        self._specs = specs if specs is not None else cache.specs if cache is not None else SpecMemo()
        self._prepared: Mapping[int, tuple[Pod, Prepared]] = prepared or {}
        self._requests = requests
        self.new_nodeclaims: list[NodeClaim] = []
        #: hostnames of ``new_nodeclaims`` (for the hostname anti-affinity pre-filter in _add)
        self._claim_hostnames: set[str] = set()
        self._max_cap: dict[tuple[int, ...], dict[str, int]] = {}
        self._template_max_cap: dict[int, dict[str, int]] = {}
        self.template_errors: dict[str, str] = {}
        self._init_explain(nodepools, instance_types)
        #: fresh claims' filter failures in this Solve (_add_to_new_nodeclaim; see FreshClaimFailures)
        self._fresh_failures = FreshClaimFailures()
        tolerate_pns = any(t.effect == "PreferNoSchedule" for np in nodepools for t in np.spec.template.spec.taints)
        self.preferences = Preferences(tolerate_pns)
        self.templates: list[NodeClaimTemplate] = self._prefilter_templates(nodepools, instance_types, cache, keys)
        #: names of ``templates`` (weight order; explain output pairs them with PodAttempt errors)
        self.template_names: list[str] = [t.nodepool_name for t in self.templates]
        # DaemonSet pods are mutated by isDaemonPodCompatible upstream (shared pointers); work on copies
        self.daemonset_pods = [p.model_copy(deep=True) for p in daemonset_pods]
        self.daemon_groups: dict[int, list[DaemonOverheadGroup]] = {
            id(t): self._build_daemon_groups(t) for t in self.templates
        }
        self.remaining_resources: dict[str, dict[str, int]] = {}
        for np in nodepools:
            if np.spec.limits is not None:
                self.remaining_resources[np.metadata.name] = from_quantities(np.spec.limits)
        self.existing_nodes = self._calculate_existing_nodes(state_nodes, topology, label_requirements,
                                                             existing_nodes_memo)

    # -- explain output -----------------------------------------------------------------------
    def _init_explain(self, nodepools: Sequence[Any], instance_types: Mapping[str, Sequence[Any]]) -> None:
        """What explain output reads of this Solve: the NodePools' types and weights, each pod's last try."""
        #: the pass's instance types per NodePool (a reference, for explain output)
        self.instance_types = instance_types
        #: (name, weight) of the NodePools given, in weight order (for explain output)
        self.nodepool_weights: list[tuple[str, int]] = [(np.metadata.name, np.spec.weight or 0)
                                                        for np in nodepools]
        #: pod key -> offset in ``_attempt_log`` of what its last try in this Solve did (explain
        #: output; see PodAttempt and :meth:`attempt_record`)
        self.attempts: dict[str, int] = {}
        self._attempt_log: list[Any] = []
        # set by _add / _add_to_new_nodeclaim for _try_schedule's record (cheap attribute writes)
        self._placed_outcome = OUTCOME_FAILED
        self._placed_target: str | None = None
        self._tries: list[str] | None = None
        #: where the last add placed the pod: an existing node, or an in-flight claim that kept its
        #: place in the list with that place (read and cleared by Solve: _take_run)
        self._run_target: tuple[ExistingNode | NodeClaim, int] | None = None

    def attempt_record(self, key: str) -> tuple[Any, ...] | None:
        """The record of the pod's last try in this Solve (a tuple of strings; PodAttempt)."""
        i = self.attempts.get(key)
        if i is None:
            return None
        log = self._attempt_log
        return tuple(log[i:i + 3 + 3 * log[i + 2]])

    def attempt(self, key: str) -> PodAttempt | None:
        """:class:`PodAttempt` of the pod's last try in this Solve (None: not tried)."""
        record = self.attempt_record(key)
        return None if record is None else PodAttempt.from_record(record)

    # -- construction helpers -----------------------------------------------------------------
    def _prefilter_templates(self, nodepools: Sequence[Any], instance_types: Mapping[str, Sequence[Any]],
                             cache: SchedulerCache | None,
                             keys: Mapping[str, Hashable | None]) -> list[NodeClaimTemplate]:
        """NewScheduler's template pre-filter (:156-171): the templates left with instance types."""
        templates: list[NodeClaimTemplate] = []
        for np in nodepools:
            t = NodeClaimTemplate(np)

            def prefilter(t: NodeClaimTemplate = t) -> tuple[list[Any], str | None]:
                its = list(instance_types.get(t.nodepool_name, ()))
                group = DaemonOverheadGroup(its, {}, HostPortUsage())
                left, _, err = filter_instance_types_by_requirements(
                    self.index, its, t.requirements, (), "", {}, [group], {}, self.best_effort,
                    _satisfies_min_values)
                if err is not None and hasattr(err, "requirements"):
                    # the reason names the NodePool's requirements: upstream's event has no reason, and
                    # the registered/initialized keys are the template's for DaemonSet simulation only
                    # (nodeclaimtemplate.go schedulingSimulationKeys); the filter above kept them
                    err.requirements = _without_simulation_keys(err.requirements)
                return list(left), (str(err) if err is not None else None)

            remaining, error = (cache.template_filter(keys.get(t.nodepool_name), np, self.best_effort, self.well_known,
                                                      prefilter)
                                if cache is not None else prefilter())
            if not remaining:
                # NoCompatibleInstanceTypes event
                self.template_errors[t.nodepool_name] = error if error is not None else ""
                continue
            t.instance_type_options = remaining
            templates.append(t)
        return templates

    def _calculate_existing_nodes(self, state_nodes: Sequence[StateNode], topology: Any,
                                  label_requirements: Callable[[Mapping[str, str]], Requirements] | None,
                                  memo: ExistingNodeMemo | None = None) -> list[ExistingNode]:
        """scheduler.go calculateExistingNodeClaims (:792-858): existing nodes with their daemon
        overhead, less their capacity from their NodePool's remaining resources. With ``memo``
        each node is a copy of its prototype on this snapshot (karpy.provisioning.existingnodememo)."""
        existing: list[ExistingNode] = []
        protos = memo.prototypes_for(self.daemonset_pods) if memo is not None and memo.enabled else None
        # the distinct requests of the pods to solve: a node fitting none is left out (existingnodememo)
        requests = None
        if protos is not None and memo is not None and memo.roomless_left_out and self._prepared:
            requests = (self._requests if self._requests is not None
                        else {a.derived.requests_key: a.derived.requests for _, a in self._prepared.values()})
        # id(StateNode) -> (it, its prototype or None when it has no room for these requests, its hostname)
        table = memo.room_table(protos, requests) if memo is not None and protos is not None and requests else None
        register = topology.register if topology.registers(LABEL_HOSTNAME) else None
        for sn in state_nodes:
            en: ExistingNode | None = None
            if protos is None or memo is None:
                en = self._new_existing_node(sn, topology, label_requirements)
            elif table is None:
                en = self._prototype_of(sn, protos, label_requirements).fresh(topology)
            else:
                got = table.get(id(sn))
                if got is None or got[0] is not sn:
                    got = table[id(sn)] = self._room_entry(sn, protos, memo, requests or {}, label_requirements)
                if got[1] is not None:
                    en = got[1].fresh(topology)
                elif register is not None:
                    register(LABEL_HOSTNAME, got[2])  # (what its copy registers)
            if en is not None:
                existing.append(en)
                if self.volume_topology is not None and self.volume_topology.csi_nodes:  # (no CSINode: no limits)
                    self._attach_volume_usage(en, sn)
            if not self.remaining_resources:  # (no NodePool has limits: nothing to subtract)
                continue
            pool = sn.labels().get(LABEL_NODEPOOL)
            if pool in self.remaining_resources:
                rem = self.remaining_resources[pool]
                cap = memo.capacity(sn) if protos is not None and memo is not None else sn.capacity()
                self.remaining_resources[pool] = {k: v - cap.get(k, 0) for k, v in rem.items()}
        existing.sort(key=lambda n: (not n.initialized(), n.name))  # sortExistingNodes
        return existing

    def _prototype_of(self, sn: StateNode, protos: dict[int, tuple[StateNode, ExistingNode]],
                 label_requirements: Callable[[Mapping[str, str]], Requirements] | None,
                 available: dict[str, int] | None = None) -> ExistingNode:
        """``sn``'s prototype on this snapshot (existingnodememo), built on first use (``available``:
        its StateNode.Available, when known)."""
        hit = protos.get(id(sn))
        if hit is None or hit[0] is not sn:
            hit = protos[id(sn)] = (sn, self._new_existing_node(sn, NO_TOPOLOGY, label_requirements, available))
        return hit[1]

    def _room_entry(self, sn: StateNode, protos: dict[int, tuple[StateNode, ExistingNode]], memo: ExistingNodeMemo,
                    requests: Mapping[Any, Mapping[str, int]],
                    label_requirements: Callable[[Mapping[str, str]], Requirements] | None
                    ) -> tuple[StateNode, ExistingNode | None, str]:
        """(``sn``, its prototype or None when it has no room for any of ``requests``, its hostname);
        no room in what it has available before DaemonSet overhead: no prototype is built."""
        if not memo.has_room_available(sn, requests):
            return sn, None, sn.hostname()
        proto = self._prototype_of(sn, protos, label_requirements, memo.available(sn))
        return sn, (proto if memo.has_room(proto, requests) else None), proto.hostname

    def _new_existing_node(self, sn: StateNode, topology: Any,
                           label_requirements: Callable[[Mapping[str, str]], Requirements] | None,
                           available: dict[str, int] | None = None) -> ExistingNode:
        """existingnode.go NewExistingNode with the DaemonSets that fit the node (isDaemonPodCompatibleWithNode)."""
        taints = sn.taints()
        daemons = [p for p in self.daemonset_pods if not _has_dra(p) and self._daemon_compatible_with_node(p, taints, sn.labels())]
        return ExistingNode(sn, topology, taints, requests_for_pods(daemons),
                            label_requirements(sn.labels()) if label_requirements is not None else None, available)

    def _next_hostname(self) -> str:
        self._hostname_seq += 1
        return f"hostname-placeholder-{self._hostname_seq:04d}"

    def _daemon_compatible_with_node(self, pod: Pod, taints: Sequence[Any], labels: dict[str, str]) -> bool:
        """scheduler.go isDaemonPodCompatibleWithNode."""
        if tolerates(taints, pod.spec.tolerations) is not None:
            return False
        return Requirements.from_labels(labels).compatible(strict_pod_requirements(pod)) is None

    def _daemon_compatible(self, template: NodeClaimTemplate, it: Any, pod: Pod) -> bool:
        """scheduler.go isDaemonPodCompatible (mutates the DS pod like upstream)."""
        tolerate_prefer_no_schedule_taints(pod)
        if tolerates(template.taints, pod.spec.tolerations) is not None:
            return False
        while True:
            reqs = strict_pod_requirements(pod)
            if template.requirements.is_compatible(reqs, self.well_known) and it.requirements.intersects(reqs) is None:
                return True
            if remove_required_node_affinity_term(pod) is None:
                return False

    def _build_daemon_groups(self, template: NodeClaimTemplate) -> list[DaemonOverheadGroup]:
        """scheduler.go buildDaemonOverheadGroups (group order: first appearance)."""
        groups: dict[str, DaemonOverheadGroup] = {}
        members: dict[str, list[Any]] = {}
        for it in template.instance_type_options:
            compatible = [p for p in self.daemonset_pods if not _has_dra(p) and self._daemon_compatible(template, it, p)]
            key = ",".join(sorted(p.key for p in compatible))
            if key in members:
                members[key].append(it)
                continue
            members[key] = [it]
            usage = HostPortUsage()
            for p in compatible:
                usage.add(p.key, get_host_ports(p))
            groups[key] = DaemonOverheadGroup([], requests_for_pods(compatible) if compatible else {}, usage)
        out = []
        for key, g in groups.items():
            out.append(DaemonOverheadGroup(members[key], g.daemon_overhead, g.host_port_usage))
        return out

    # -- solve ----------------------------------------------------------------------------------
    def _max_capacity(self, instance_types: Sequence[Any]) -> dict[str, int]:
        """``MaxResources`` of the types' capacities, memoised by the identity of the types (the
        same few lists recur on every new NodeClaim; instance types are immutable in a Solve)."""
        key = tuple(map(id, instance_types))
        mx = self._max_cap.get(key)
        if mx is None:
            if len(self._max_cap) >= 256:
                self._max_cap.clear()
            mx = self._max_cap[key] = max_resources(*(it.capacity for it in instance_types))
        return mx

    def _all_within(self, template: NodeClaimTemplate, remaining: dict[str, int]) -> bool:
        """True when filterByRemainingResources would keep every type of the template: no type's
        capacity exceeds a remaining amount iff the element-wise maximum capacity does not (then
        the template's list is used as is instead of being filtered type by type)."""
        mx = self._template_max_cap.get(id(template))
        if mx is None:
            mx = self._template_max_cap[id(template)] = max_resources(
                *(it.capacity for it in template.instance_type_options))
        for name, rem in remaining.items():
            if rem < 0 or mx.get(name, 0) > rem:  # (rem < 0: a type lacking the resource fails too)
                return False
        return True

    def _subtract_max(self, remaining: dict[str, int], instance_types: Sequence[Any]) -> dict[str, int]:
        """:func:`subtract_max` with the maximum capacity memoised (:meth:`_max_capacity`)."""
        if not instance_types:
            return remaining
        mx = self._max_capacity(instance_types)
        return {k: v - mx.get(k, 0) for k, v in remaining.items()}

    def _attach_volume_usage(self, en: ExistingNode, sn: StateNode) -> None:
        """statenode.go VolumeUsage: the node's CSINode limits and the claims its pods mount."""
        vt = self.volume_topology
        limits = vt.volume_limits(sn.node.metadata.name) if sn.node is not None else {}
        if not limits:
            return
        usage = VolumeUsage(limits)
        for p in sn.pods:
            usage.add(pod_volumes(vt, p))
        en.volume_usage = usage

    def _pod_data(self, pod: Pod, relaxed: bool = False) -> PodData:
        """``relaxed``: ``pod`` is a relaxable_copy, whose spec the relaxation changes in place
        (not served from or kept in the SpecMemo)."""
        got = None if relaxed else self._prepared.get(id(pod))
        data = PodData(pod, self.preference_policy == PREFERENCE_POLICY_IGNORE, self._interned,
                       None if relaxed else self._specs, got[1] if got is not None and got[0] is pod else None)
        data.volume_requirements = self.volume_requirements.get(data.key)
        if self.volume_topology is not None and data.has_volumes:
            data.volumes = pod_volumes(self.volume_topology, pod)
        return data

    def _solve_data(self, pods: Sequence[Pod], lazy: bool,
                    keys: bool = True) -> tuple[dict[int, PodData], dict[int, SortKey]]:
        """Each pod's PodData and queue sort key by id; ``lazy`` (a Solve that may end early): each
        PodData made when first read, the sort keys taken from what new_scheduler prepared;
        ``keys=False``: no sort key (the queue's order is given)."""
        if not lazy:
            data = {id(p): self._pod_data(p) for p in pods}
            return data, {k: d.sort_key for k, d in data.items()} if keys else {}
        lazy_data = _PodDataOf({id(p): p for p in pods}, self._pod_data)
        if not keys:
            return lazy_data, {}
        prepared = self._prepared
        sort_keys = {}
        for p in pods:
            got = prepared.get(id(p))
            sort_keys[id(p)] = got[1].sort_key if got is not None and got[0] is p else lazy_data[id(p)].sort_key
        return lazy_data, sort_keys

    def solve(self, pods: Sequence[Pod], placed: Callable[[str], bool] | None = None,
              order: Sequence[Pod] | None = None) -> Results:
        """scheduler.go Solve (:440-519). ``placed`` (not in upstream) hears the key of every pod as
        it is placed, which is final; when it answers True the Solve ends there (a disruption
        simulation whose outcome is already known: karpy.disruption.certainfailure). ``order``
        (not in upstream): ``pods`` as the queue sorts them, found by the caller
        (karpy.disruption.queueorder)."""
        self._reset_scans()
        data, sort_keys = self._solve_data(pods, lazy=placed is not None, keys=order is None)
        q = Queue(pods, sort_keys) if order is None else Queue.in_order(order)
        pod_errors: dict[str, str] = {}
        by_key: dict[str, Any] = {}
        while True:
            pod = q.pop()
            if pod is None:
                break
            d = data[id(pod)]
            err = self._try_schedule(pod, d)
            if err is not None:
                pod_errors[d.key] = err if isinstance(err, str) else str(err)  # keeps DRAError etc.
                by_key[d.key] = pod
                self.topology.update(pod)
                # updateCachedPodData(pod): data[id(pod)] is still the original's
                # (docs/internals/upstream-mirrors.md#scheduler)
                q.push(pod)
            else:
                pod_errors.pop(d.key, None)
                target = self._run_target
                taken = self._take_run(q, data, d, pod_errors, *target) if target is not None else ()
                if placed is not None and (placed(d.key) or any(placed(k) for k in taken)):
                    break
        for nc in self.new_nodeclaims:
            nc.finalize_scheduling()
        # Results list claims in creation order (the in-flight list is kept sorted by pod count)
        ordered = sorted(self.new_nodeclaims, key=lambda c: c.seq)
        return Results(ordered, list(self.existing_nodes), pod_errors,
                       {k: by_key[k] for k in pod_errors})

    def _take_run(self, q: Queue, data: dict[int, PodData], d: PodData, pod_errors: dict[str, str],
                  target: ExistingNode | NodeClaim, i: int) -> list[str]:
        """The alike pods after ``d``'s pod, which went at its first try to ``target`` (an existing
        node, or the claim at ``i`` in the in-flight list), each placed as _try_schedule would place
        it: onto ``target`` while it has room (a claim: keeps an option and its place in the list;
        karpy.provisioning.podruns). Their keys."""
        self._run_target = None
        log = self._attempt_log
        if log[self.attempts[d.key] + 2] != 1 or not self.take_runs or self.reservation_manager is not None:
            return []
        if not plain(d, self.topology):
            return []
        if isinstance(target, ExistingNode):
            pods = self._take_existing_run(q, data, d, target)
        else:
            pods = self._take_inflight_run(q, data, d, target, i)
        if not pods:
            return []
        self._scans.forget(target)
        outcome, name = self._placed_outcome, self._placed_target
        keys = []
        for p in pods:
            key = data[id(p)].key
            keys.append(key)
            self.attempts[key] = len(log)
            log.extend((outcome, name, 1, None, None, None))
            pod_errors.pop(key, None)
            q.pop()  # (upcoming read them in pop's order)
        return keys

    def _take_existing_run(self, q: Queue, data: dict[int, PodData], d: PodData, en: ExistingNode) -> list[Pod]:
        """A run onto an existing node: each pod as ExistingNode.add adds it, while it has room."""
        reqs = run_requirements(en.requirements, d)
        if reqs is None:
            return []
        return Run(q.upcoming(), data, d, self.topology, None).onto(en, reqs)

    def _take_inflight_run(self, q: Queue, data: dict[int, PodData], d: PodData, nc: NodeClaim,
                           i: int) -> list[Pod]:
        """A run onto an in-flight claim, in one NodeClaim.add_run."""
        claims = self.new_nodeclaims
        limit = len(claims[i + 1].pods) - len(nc.pods) if i + 1 < len(claims) else None
        if limit == 0:
            return []
        reqs = run_requirements(nc.requirements, d, nc.well_known)
        if reqs is None:
            return []
        run = Run(q.upcoming(), data, d, self.topology, limit)
        count, total, options = run.taken_by(nc, reqs)
        if not count or options is None:
            return []
        pods = run.pods[:count]
        nc.add_run(pods, reqs, total, options)
        return pods

    def _reset_scans(self) -> None:
        """The memos of the first-fit scans, per Solve (scanskips.Scans)."""
        self._scans = Scans(self.existing_nodes, self.index, self.topology)

    def _try_schedule(self, pod: Pod, data: PodData) -> Any:
        """scheduler.go trySchedule: add, relaxing one preference per failure.

        Appends a PodAttempt record per try (explain output; see PodAttempt)."""
        p = pod
        key = data.key
        copied = False
        reason: Any = None
        log = self._attempt_log
        start = len(log)
        log.append(OUTCOME_FAILED)  # outcome, target, number of rounds: set below
        log.append(None)
        log.append(0)
        n = 0
        while True:
            self._tries = None
            err = self._add(p, data)
            tries = self._tries
            n += 1
            log.append(reason)
            log.append(None if tries is None else TEMPLATE_ERROR_SEPARATOR.join(tries))
            if err is None:
                log.append(None)
                log[start] = self._placed_outcome
                log[start + 1] = self._placed_target
                log[start + 2] = n
                self.attempts[key] = start
                return None
            log.append(str(err))
            if isinstance(err, (ReservedOfferingError, DRAError)) or \
                    not can_relax(p, self.preferences.tolerate_prefer_no_schedule):
                log[start + 2] = n
                self.attempts[key] = start
                return err
            if not copied:
                p = relaxable_copy(pod)
                copied = True
            reason = self.preferences.relax(p)
            self.topology.update(p)
            # updateCachedPodData: requests, host ports and DRA claims never change under
            # relaxation; the requirements only change when a node-affinity term was removed
            data = self._pod_data(p, relaxed=True) if changes_node_requirements(reason) else data.relaxed(p)

    def _add(self, pod: Pod, data: PodData) -> Any:
        """scheduler.go add (:582-612)."""
        if data.has_dra:
            return DRAError(ERR_DRA)
        if self._add_to_existing_node(pod, data) is None:
            return None
        # (sort.Slice by pod count: the in-flight list is kept sorted, see _add_to_inflight_node)
        if self._add_to_inflight_node(pod, data) is None:
            return None
        if not self.templates:
            return ERR_NO_TEMPLATES
        return self._add_to_new_nodeclaim(pod, data)

    def _add_to_existing_node(self, pod: Pod, data: PodData) -> str | None:
        """scheduler.go addToExistingNode (:614-656): the lowest-index node whose CanAdd succeeds."""
        found = self._scans.first_existing_node(pod, data)
        if found is None:
            return ERR_EXISTING_NODES
        en, reqs = found
        en.add(pod, data, reqs)
        self._scans.forget(en)
        self._placed_outcome = OUTCOME_EXISTING_NODE
        self._placed_target = en.name
        self._run_target = (en, -1)
        return None

    def _add_to_inflight_node(self, pod: Pod, data: PodData) -> str | None:
        """scheduler.go addToInflightNode (:658-693): the lowest-index claim, fewest pods first,
        whose CanAdd succeeds; the list stays sorted by pod count (a stable sort's order)."""
        claims = self.new_nodeclaims
        found = self._scans.first_inflight_claim(claims, self._claim_hostnames, pod, data)
        if found is None:
            return ERR_INFLIGHT_NODES
        i, nc, reqs, its = found
        nc.add(pod, data, reqs, its)
        self._scans.forget(nc)
        self._placed_outcome = OUTCOME_INFLIGHT_NODECLAIM
        self._placed_target = nc.hostname
        c = len(nc.pods)
        if i + 1 < len(claims) and len(claims[i + 1].pods) < c:
            claims.pop(i)
            claims.insert(bisect_left(claims, c, lo=i, key=_pod_count), nc)
        else:
            self._run_target = (nc, i)
        return None

    def _add_to_new_nodeclaim(self, pod: Pod, data: PodData) -> Any:
        """scheduler.go addToNewNodeClaim (:695-790)."""
        errs: list[str] = []
        # explain output (PodAttempt.rounds): errs[i] is the error of self.templates[i]; the
        # template after the last error is the one that won (on success)
        self._tries = errs
        for t in self.templates:
            its = t.instance_type_options
            name = t.nodepool_name
            remaining = self.remaining_resources.get(name)
            if remaining is not None:
                if remaining.get(RESOURCE_NODES, None) == 0:
                    errs.append(f"node limits have been exhausted for nodepool (NodePool={name})")
                    continue
                if not self._all_within(t, remaining):
                    its = filter_by_remaining_resources(its, remaining)
                if not its:
                    errs.append(f"all available instance types exceed limits for nodepool (NodePool={name})")
                    continue
            if self.reservation_manager is None:
                # a fresh claim's memoised filter failure (FreshClaimFailures.answer): the claim
                # upstream builds would take the next hostname and fail with this text
                known = self._fresh_failures.answer(t, its, pod, data, self.topology, self.index, self.best_effort)
                if known is not None:
                    self._next_hostname()
                    errs.append(known)
                    continue
            nc = NodeClaim(t, self.topology, self.daemon_groups[id(t)], its, self._next_hostname(),
                           self.index, _satisfies_min_values)
            nc.seq = self._hostname_seq
            nc.fresh_failures = self._fresh_failures
            if self.reservation_manager is not None:
                nc.reservation_manager = self.reservation_manager
                nc.reserved_offering_mode = self.reserved_offering_mode
            reqs, new_its, err = nc.can_add(pod, data, self.best_effort)
            if err is not None:
                if isinstance(err, ReservedOfferingError):
                    errs.append(str(err))
                    return err
                errs.append(str(err))
                continue
            assert reqs is not None and new_its is not None  # can_add returns both whenever there is no error
            relaxed = False
            for k, orig in nc.requirements.items():
                upd = reqs.get(k).min_values
                if orig.min_values is not None and upd is not None and upd < orig.min_values:
                    relaxed = True
                    break
            nc.annotations[NODECLAIM_MIN_VALUES_RELAXED_ANNOTATION_KEY] = "true" if relaxed else "false"
            nc.add(pod, data, reqs, new_its)
            self._placed_outcome = OUTCOME_NEW_NODECLAIM
            self._placed_target = nc.hostname
            claims = self.new_nodeclaims
            claims.insert(bisect_right(claims, len(nc.pods), key=_pod_count), nc)
            self._claim_hostnames.add(nc.hostname)
            if remaining is not None:
                self.remaining_resources[name] = self._subtract_max(remaining, nc.instance_type_options)
            return None
        return "; ".join(errs)


class _PodDataOf(dict[int, PodData]):
    """id(pod) -> its PodData, made when first read (Scheduler._pod_data)."""

    __slots__ = ("_pods", "_make")

    def __init__(self, pods: dict[int, Pod], make: Callable[[Pod], PodData]) -> None:
        super().__init__()
        self._pods = pods
        self._make = make

    def __missing__(self, key: int) -> PodData:
        d = self[key] = self._make(self._pods[key])
        return d


def _without_simulation_keys(requirements: Requirements) -> Requirements:
    """A copy of ``requirements`` without nodeclaimtemplate.go's schedulingSimulationKeys."""
    out = requirements.copy()
    for key in SCHEDULING_SIMULATION_KEYS:
        out.pop(key, None)
    return out


def _pod_count(nc: NodeClaim) -> int:
    return len(nc.pods)


def _reservation_manager(instance_types: Mapping[str, Sequence[Any]], cache: SchedulerCache | None,
                         types_key: Hashable | None) -> ReservationManager | None:
    """NewReservationManager (None when no offering is reserved: nothing to reserve)."""
    capacity = (cache.reserved_capacity(types_key, lambda: reserved_capacity_of(instance_types))
                if cache is not None else None)
    manager = ReservationManager(instance_types, capacity=capacity)
    return manager if manager.capacity else None


def _instance_type_index(instance_types: Mapping[str, Sequence[Any]], well_known: frozenset[str],
                         cache: SchedulerCache | None, types_key: Hashable | None) -> InstanceTypeIndex:
    """The pass's InstanceTypeIndex over every NodePool's types (the cache's while its key holds)."""
    def build_index() -> InstanceTypeIndex:
        index = InstanceTypeIndex(well_known)
        for its in instance_types.values():
            index.register(its)
        return index

    return (cache.index(None if types_key is None else (types_key, well_known), build_index)
            if cache is not None else build_index())


def _satisfies_min_values(its: Sequence[Any], reqs: Requirements) -> tuple[int, dict[str, int] | None, str | None]:
    return InstanceTypes(its)._satisfies_min_values(reqs)
