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

Pods are not deep-copied on every pop: a pod is copied only when a preference must be relaxed
(the relaxed copy is what lands in a NodeClaim, as upstream), and only along the paths the
relaxation steps reassign (preferences.relaxable_copy). Out of scope: DRA (pods with
resource claims fail with upstream's DRA error), volume topology, reserved-capacity reservations,
consolidation simulation (consolidateAfter).

Explain output (karpy.explain) reads cheap facts recorded here: per pod the last try's
:class:`PodAttempt` (templates tried in weight order with their errors, relaxation reasons, where
the pod went), the NodePools in weight order, and references to the pass's instance types and
each claim's list before the MaxInstanceTypes cut (``Results.untruncated``). Nothing is copied or
formatted on the hot path.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from itertools import compress, count, repeat
from operator import attrgetter, not_, or_
from dataclasses import dataclass, field
from collections.abc import Callable, Hashable
from typing import Any, Iterator, Mapping, Sequence

from karpy.cloudprovider.types import (
    MIN_VALUES_POLICY_BEST_EFFORT,
    MIN_VALUES_POLICY_STRICT,
    InstanceTypes,
)
from karpy.provisioning.existingnode import ExistingNode
from karpy.provisioning.nodeclaim import (
    DaemonOverheadGroup,
    FreshClaimFailures,
    InstanceTypeIndex,
    NodeClaim,
    ReservedOfferingError,
    filter_instance_types_by_requirements,
)
from karpy.provisioning.nodeclaimtemplate import DEFAULT_MAX_INSTANCE_TYPES, NodeClaimTemplate
from karpy.utils import pod as podutils
from karpy.provisioning.preferences import (
    Preferences,
    can_relax,
    changes_node_requirements,
    relaxable_copy,
    remove_required_node_affinity_term,
    tolerate_prefer_no_schedule_taints,
)
from karpy.provisioning.queue import Queue
from karpy.provisioning.reservationmanager import ReservationManager, ReservedOfferingMode
from karpy.provisioning.reservationmanager import reserved_capacity as reserved_capacity_of
from karpy.provisioning.schedulercache import SchedulerCache, pass_key
from karpy.provisioning.volumeusage import VolumeUsage, pod_volumes
from karpy.state.cluster import ClusterState, StateNode
from karpy.provisioning.topology import TopologyError
from karpy.provisioning.topologynodefilter import ZERO_NODE_FILTER
from karpy.scheduling.hostports import HostPortUsage, get_host_ports
from karpy.scheduling.labels import CORE_WELL_KNOWN_LABELS, LABEL_NODEPOOL, NODECLAIM_MIN_VALUES_RELAXED_ANNOTATION_KEY
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements, has_preferred_node_affinity, pod_requirements, strict_pod_requirements
from karpy.scheduling.resources import (fits, from_quantities, max_resources, pod_requests, requests_for_pods,
                                        requests_read_status)
from karpy.scheduling.taints import tolerates

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
    ``Scheduler.attempt_record(key)`` returns it as a tuple and :meth:`from_record` reads that.
    Recording thus allocates no object the garbage collector tracks (strings, ints, list
    appends): a large Solve pays for it neither in time nor in collection work -- extra tracked
    allocations would shift when CPython runs its expensive full collections.
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


@dataclass(frozen=True, slots=True)
class _SpecDerived:
    """What PodData reads from a pod's spec (and, for a resizing pod, its status): its requests,
    requirements, host ports and DRA use."""

    requests: dict[str, int]
    requests_key: tuple[tuple[str, int], ...]
    requirements: Requirements
    strict_requirements: Requirements
    req_values: tuple[Any, ...]
    host_ports: tuple[Any, ...]
    has_dra: bool

    @staticmethod
    def of(pod: Any, ignore_preferences: bool) -> _SpecDerived:
        requests = pod_requests(pod)
        reqs = strict_pod_requirements(pod) if ignore_preferences else pod_requirements(pod)
        strict = strict_pod_requirements(pod) if has_preferred_node_affinity(pod) else reqs
        return _SpecDerived(requests, tuple(sorted(requests.items())), reqs, strict, tuple(reqs.values()),
                            get_host_ports(pod), _has_dra(pod))


class SpecMemo:
    """PodData's spec-derived values per pod spec object, for one Solve.

    Not in upstream (NewPodData computes them for every pod); same result because they are
    functions of the spec alone (a pod whose requests read its status, see requests_read_status,
    is not served) and a pod's spec is never changed in place (karpy replaces a spec to change it,
    see ``_Workload._new_pod``) except a relaxable_copy's, which the Scheduler keeps out of the
    memo (``_pod_data(relaxed=True)``): the pods of one template share one spec object, which the memo
    keeps alive so its id is not reused. The values are shared read-only, as PodData.relaxed
    shares them. ``tests/provisioning/test_spec_memo.py`` compares them with fresh PodData."""

    __slots__ = ("_by_spec",)

    def __init__(self) -> None:
        self._by_spec: dict[tuple[int, bool], tuple[Any, _SpecDerived]] = {}

    def derived(self, pod: Any, ignore_preferences: bool) -> _SpecDerived:
        if requests_read_status(pod):  # a resizing pod's requests are its own
            return _SpecDerived.of(pod, ignore_preferences)
        spec = pod.spec
        key = (id(spec), ignore_preferences)
        hit = self._by_spec.get(key)
        if hit is not None and hit[0] is spec:
            return hit[1]
        derived = _SpecDerived.of(pod, ignore_preferences)
        self._by_spec[key] = (spec, derived)
        return derived


class PodData:
    """scheduler.go PodData (+ host ports and a per-target toleration cache)."""

    __slots__ = ("pod", "key", "requests", "requirements", "strict_requirements", "host_ports", "has_dra", "_tol",
                 "req_signature", "volume_requirements", "volumes", "requests_key")

    def __init__(self, pod: Any, ignore_preferences: bool, interned: dict[tuple[Any, ...], int] | None = None,
                 specs: SpecMemo | None = None) -> None:
        """``specs``: what was derived from pod specs earlier in the Solve (see SpecMemo)."""
        self.pod = pod
        self.key: str = pod.key
        derived = (specs.derived(pod, ignore_preferences) if specs is not None
                   else _SpecDerived.of(pod, ignore_preferences))
        self.requests: dict[str, int] = derived.requests
        #: the requests by value (Scheduler._add keeps the existing nodes with room per value)
        self.requests_key: tuple[tuple[str, int], ...] = derived.requests_key
        reqs = derived.requirements
        self.requirements: Requirements = reqs
        self.strict_requirements: Requirements = derived.strict_requirements
        # an int standing for the requirement set's value (interned per Scheduler)
        sig = derived.req_values
        if interned is None:
            self.req_signature: Any = sig
        else:
            self.req_signature = interned.setdefault(sig, len(interned))
        self.host_ports = derived.host_ports
        self.has_dra = derived.has_dra
        self._tol: dict[int, str | None] = {}
        #: volume topology alternatives (PodData.VolumeRequirements; set by the scheduler)
        self.volume_requirements: list[Any] | None = None
        #: CSI driver -> claims the pod mounts (volumeusage.GetVolumes; set by the scheduler)
        self.volumes: dict[str, Any] | None = None

    def relaxed(self, pod: Any) -> PodData:
        """The data of ``pod``, a relaxed copy of this pod whose node selector and node affinity
        are unchanged: everything is shared except the toleration cache (a relaxation may have
        added a PreferNoSchedule toleration)."""
        out = PodData.__new__(PodData)
        out.pod = pod
        out.key = self.key
        out.requests = self.requests
        out.requests_key = self.requests_key
        out.requirements = self.requirements
        out.strict_requirements = self.strict_requirements
        out.req_signature = self.req_signature
        out.host_ports = self.host_ports
        out.has_dra = self.has_dra
        out.volume_requirements = self.volume_requirements
        out.volumes = self.volumes
        out._tol = {}
        return out

    def tolerates(self, template: Any) -> str | None:
        """``Taints(template.taints).ToleratesPod(pod)``, cached per template."""
        return self.tolerates_taints(template, template.taints)

    def tolerates_taints(self, holder: Any, taints: Sequence[Any]) -> str | None:
        k = id(holder)
        tol = self._tol
        if k in tol:
            return tol[k]
        r = tolerates(taints, self.pod.spec.tolerations) if taints else None
        tol[k] = r
        return r


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

    def __init__(
        self,
        nodepools: Sequence[Any],
        cluster: ClusterState,
        state_nodes: Sequence[StateNode],
        topology: Any,
        instance_types: Mapping[str, Sequence[Any]],
        daemonset_pods: Sequence[Any] = (),
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
    ) -> None:
        """``reserved_offering_mode``: scheduler.go ReservedOfferingMode (the provisioner passes
        STRICT, upstream's DisableReservedCapacityFallback); ``reserved_capacity``: the
        ReservedCapacity feature gate. Without any reserved offering no manager is built (the
        result is the same: nothing to reserve). ``volume_requirements``: pod key -> volume
        topology alternatives (scheduler.go volumeReqsByPod); ``volumes``: the VolumeTopology
        (CSI volume limits on existing nodes, volumeusage.py). ``cache`` (the Provisioner's
        :class:`~karpy.provisioning.schedulercache.SchedulerCache`) with ``instance_type_keys``
        (NodePool name -> the provider's key of its types, as the cache listed them): the index,
        the template pre-filter and the reserved capacity are taken from it while those keys
        are unchanged (the same values as building them). ``label_requirements``: a read-only memo
        of ``Requirements.from_labels`` for the existing nodes' labels (SchedulerCache's)."""
        self.well_known = well_known
        self.volume_requirements = volume_requirements or {}
        self.volume_topology = volumes
        self.reserved_offering_mode = reserved_offering_mode
        keys: Mapping[str, Hashable | None] = (instance_type_keys if instance_type_keys is not None
                                                 else {name: None for name in instance_types})
        types_key = pass_key(keys) if cache is not None else None
        manager = None
        if reserved_capacity:
            capacity = (cache.reserved_capacity(types_key, lambda: reserved_capacity_of(instance_types))
                        if cache is not None else None)
            manager = ReservationManager(instance_types, capacity=capacity)
        self.reservation_manager = manager if manager is not None and manager.capacity else None
        self.preference_policy = preference_policy
        self.min_values_policy = min_values_policy
        self.best_effort = min_values_policy == MIN_VALUES_POLICY_BEST_EFFORT
        self.topology = topology
        self.cluster = cluster
        def build_index() -> InstanceTypeIndex:
            index = InstanceTypeIndex(well_known)
            for its in instance_types.values():
                index.register(its)
            return index

        self.index = (cache.index(None if types_key is None else (types_key, well_known), build_index)
                      if cache is not None else build_index())
        self._hostname_seq = 0
        self._interned: dict[tuple[Any, ...], int] = {}
        #: PodData's spec-derived values per spec (see SpecMemo)
        self._specs = SpecMemo()
        self.new_nodeclaims: list[NodeClaim] = []
        #: hostnames of ``new_nodeclaims`` (for the hostname anti-affinity pre-filter in _add)
        self._claim_hostnames: set[str] = set()
        self._max_cap: dict[tuple[int, ...], dict[str, int]] = {}
        self._template_max_cap: dict[int, dict[str, int]] = {}
        self.template_errors: dict[str, str] = {}
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
        #: fresh claims' filter failures in this Solve (_add_to_new_nodeclaim; see FreshClaimFailures)
        self._fresh_failures = FreshClaimFailures()
        tolerate_pns = any(t.effect == "PreferNoSchedule" for np in nodepools for t in np.spec.template.spec.taints)
        self.preferences = Preferences(tolerate_pns)
        # template pre-filter (:156-171)
        empty = Requirements()
        self.templates: list[NodeClaimTemplate] = []
        for np in nodepools:
            t = NodeClaimTemplate(np)

            def prefilter(t: NodeClaimTemplate = t) -> tuple[list[Any], str | None]:
                its = list(instance_types.get(t.nodepool_name, ()))
                group = DaemonOverheadGroup(its, {}, HostPortUsage())
                left, _, err = filter_instance_types_by_requirements(
                    self.index, its, t.requirements, (), "", {}, [group], {}, self.best_effort,
                    _satisfies_min_values)
                return list(left), (str(err) if err is not None else None)

            remaining, error = (cache.template_filter(keys.get(t.nodepool_name), np, self.best_effort, well_known,
                                                      prefilter)
                                if cache is not None else prefilter())
            if not remaining:
                # NoCompatibleInstanceTypes event
                self.template_errors[t.nodepool_name] = error if error is not None else ""
                continue
            t.instance_type_options = remaining
            self.templates.append(t)
        #: names of ``templates`` (weight order; explain output pairs them with PodAttempt errors)
        self.template_names: list[str] = [t.nodepool_name for t in self.templates]
        del empty
        # DaemonSet pods are mutated by isDaemonPodCompatible upstream (shared pointers); work on copies
        self.daemonset_pods = [p.model_copy(deep=True) for p in daemonset_pods]
        self.daemon_groups: dict[int, list[DaemonOverheadGroup]] = {
            id(t): self._build_daemon_groups(t) for t in self.templates
        }
        self.remaining_resources: dict[str, dict[str, int]] = {}
        for np in nodepools:
            if np.spec.limits is not None:
                self.remaining_resources[np.metadata.name] = from_quantities(np.spec.limits)
        # existing nodes (calculateExistingNodeClaims, :792-858)
        existing: list[ExistingNode] = []
        for sn in state_nodes:
            taints = sn.taints()
            daemons = [p for p in self.daemonset_pods if not _has_dra(p) and self._daemon_compatible_with_node(p, taints, sn.labels())]
            existing.append(ExistingNode(sn, topology, taints, requests_for_pods(daemons),
                                         label_requirements(sn.labels()) if label_requirements is not None else None))
            if self.volume_topology is not None:
                self._attach_volume_usage(existing[-1], sn)
            pool = sn.labels().get(LABEL_NODEPOOL)
            if pool in self.remaining_resources:
                rem = self.remaining_resources[pool]
                cap = sn.capacity()
                self.remaining_resources[pool] = {k: v - cap.get(k, 0) for k, v in rem.items()}
        existing.sort(key=lambda n: (not n.initialized(), n.name))
        self.existing_nodes = existing

    # -- explain output -----------------------------------------------------------------------
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
    def _next_hostname(self) -> str:
        self._hostname_seq += 1
        return f"hostname-placeholder-{self._hostname_seq:04d}"

    def _daemon_compatible_with_node(self, pod: Any, taints: Sequence[Any], labels: dict[str, str]) -> bool:
        """scheduler.go isDaemonPodCompatibleWithNode."""
        if tolerates(taints, pod.spec.tolerations) is not None:
            return False
        return Requirements.from_labels(labels).compatible(strict_pod_requirements(pod)) is None

    def _daemon_compatible(self, template: NodeClaimTemplate, it: Any, pod: Any) -> bool:
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

    def _pod_data(self, pod: Any, relaxed: bool = False) -> PodData:
        """``relaxed``: ``pod`` is a relaxable_copy, whose spec the relaxation changes in place
        (not served from or kept in the SpecMemo)."""
        data = PodData(pod, self.preference_policy == PREFERENCE_POLICY_IGNORE, self._interned,
                       None if relaxed else self._specs)
        data.volume_requirements = self.volume_requirements.get(pod.key)
        if self.volume_topology is not None and pod.spec.volumes:
            data.volumes = pod_volumes(self.volume_topology, pod)
        return data

    def solve(self, pods: Sequence[Any]) -> Results:
        """scheduler.go Solve (:440-519)."""
        #: requests (PodData.requests_key) -> the existing nodes, in order, that may still have
        #: room for them (see _add); per Solve
        self._reset_scans()
        data: dict[int, PodData] = {id(p): self._pod_data(p) for p in pods}
        q = Queue(pods, {k: d.requests for k, d in data.items()})
        pod_errors: dict[str, str] = {}
        by_key: dict[str, Any] = {}
        while True:
            pod = q.pop()
            if pod is None:
                break
            err = self._try_schedule(pod, data[id(pod)])
            if err is not None:
                pod_errors[pod.key] = err if isinstance(err, str) else str(err)  # keeps DRAError etc.
                by_key[pod.key] = pod
                self.topology.update(pod)
                # updateCachedPodData(pod): not in upstream's form here (upstream's trySchedule
                # relaxed a DeepCopy whose data replaced the pod's in the UID-keyed cache, so the
                # original's is computed again); karpy keeps the relaxed copies' data local to
                # _try_schedule, so data[id(pod)] still is the original's: the same result because
                # Solve never changes the pod (relaxable_copy), and the rest of a PodData (volume
                # alternatives, volumes, the toleration cache) is a function of per-Solve inputs.
                q.push(pod)
            else:
                pod_errors.pop(pod.key, None)
        for nc in self.new_nodeclaims:
            nc.finalize_scheduling()
        # Results list claims in creation order (the in-flight list is kept sorted by pod count)
        ordered = sorted(self.new_nodeclaims, key=lambda c: c.seq)
        return Results(ordered, list(self.existing_nodes), pod_errors,
                       {k: by_key[k] for k in pod_errors})

    def _reset_scans(self) -> None:
        """The memos of _add's scans, per Solve."""
        #: requests (PodData.requests_key) -> the existing nodes, in order, that may still have
        #: room for them (see _add)
        self._with_room: dict[tuple[tuple[str, int], ...], list[ExistingNode]] = {}
        #: topology key -> target -> the target's requirement for the key by value (_miss_key)
        self._key_values = _KeyValuesByKey()
        #: in-flight claim -> ids of its instance-type options
        self._option_ids = _OptionIds()
        #: set of incompatible type ids -> option ids -> covered (_OptionMisses.skips' memo)
        self._covers = _CoversByBad()
        #: existing node -> its index in ``existing_nodes`` (the order of every with-room list)
        self._position: dict[ExistingNode, int] = {en: i for i, en in enumerate(self.existing_nodes)}
        #: requests -> topology key -> the domains of that request value's with-room list
        self._domains: dict[tuple[tuple[str, int], ...], dict[str, _Domains]] = {}

    def _forget(self, target: Any) -> None:
        """Drop what the scan memos hold for ``target``: its requirements and options were just
        replaced by Add (the only place they change during a Solve): the values held are
        recomputed. An existing node whose requirement for a key changed value moves to its new
        domain in every _Domains (a node is in a _Domains only with its value held)."""
        for key, by_target in self._key_values.items():
            old = by_target.get(target, _ABSENT)
            if old is _ABSENT:
                continue
            new = by_target[target] = _miss_key(dict.get(target.requirements, key))
            if new == old or target not in self._position:
                continue
            pos = self._position[target]
            for doms in self._domains.values():
                d = doms.get(key)
                if d is None:
                    continue
                positions = d.by_value.get(old)
                if positions is None:
                    continue
                p = bisect_left(positions, pos)
                if p < len(positions) and positions[p] == pos:
                    del positions[p]
                    insort(d.by_value.setdefault(new, []), pos)
        self._option_ids.pop(target, None)

    def _drop(self, rk: tuple[tuple[str, int], ...], nodes: list[ExistingNode], i: int) -> None:
        """Remove ``nodes[i]`` (no room for the requests ``rk``: ExistingNode.has_room stays
        False once False) from the request value's list and its _Domains."""
        en = nodes.pop(i)
        doms = self._domains.get(rk)
        if doms:
            pos = self._position[en]
            for key, d in doms.items():
                if d.nodes is nodes:
                    d.by_value[self._key_values[key][en]].remove(pos)

    def _domains_of(self, rk: tuple[tuple[str, int], ...], key: str, nodes: list[ExistingNode]) -> _Domains:
        """The _Domains of ``nodes`` (the list of ``rk``) for ``key``, built on first use."""
        doms = self._domains.setdefault(rk, {})
        d = doms.get(key)
        if d is None or d.nodes is not nodes:
            kv = self._key_values[key]
            position = self._position
            by_value: dict[Any, list[int]] = {}
            for en in nodes:
                by_value.setdefault(kv[en], []).append(position[en])
            d = doms[key] = _Domains(nodes, by_value)
        return d

    def _place_on_node(self, en: ExistingNode, pod: Any, data: PodData, reqs: Requirements) -> None:
        en.add(pod, data, reqs)
        self._forget(en)
        self._placed_outcome = OUTCOME_EXISTING_NODE
        self._placed_target = en.name

    def _try_schedule(self, pod: Any, data: PodData) -> Any:
        """scheduler.go trySchedule: add, relaxing one preference per failure.

        Appends a PodAttempt record per try (explain output; see PodAttempt)."""
        p = pod
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
                self.attempts[pod.key] = start
                return None
            log.append(str(err))
            if isinstance(err, (ReservedOfferingError, DRAError)) or \
                    not can_relax(p, self.preferences.tolerate_prefer_no_schedule):
                log[start + 2] = n
                self.attempts[pod.key] = start
                return err
            if not copied:
                p = relaxable_copy(pod)
                copied = True
            reason = self.preferences.relax(p)
            self.topology.update(p)
            # updateCachedPodData: requests, host ports and DRA claims never change under
            # relaxation; the requirements only change when a node-affinity term was removed
            data = self._pod_data(p, relaxed=True) if changes_node_requirements(reason) else data.relaxed(p)

    def _add(self, pod: Any, data: PodData) -> Any:
        """scheduler.go add (:582-612)."""
        if data.has_dra:
            return DRAError(ERR_DRA)
        # addToExistingNode: the lowest-index node whose CanAdd succeeds (its errors are discarded).
        # Not in upstream, same result: the nodes without room for these requests are dropped from
        # this request value's list for the rest of the Solve (ExistingNode.has_room stays False
        # once False), so later pods of the same size do not call CanAdd on full nodes again.
        # Two more skips (not in upstream; same result because only success matters here and they
        # skip only nodes whose CanAdd would fail): hostnames the pod's hostname topologies block
        # (Topology.hostname_blocked) and nodes sharing a failed topology domain (_TopologyMisses).
        rk = data.requests_key
        nodes = self._with_room.get(rk)
        if nodes is None:
            nodes = self._with_room[rk] = list(self.existing_nodes)
        requests = data.requests
        occupied = self.topology.hostname_blocked(pod) if nodes else None
        blocked = _union(occupied) if occupied is not None else None
        misses = _TopologyMisses(data)
        values = self._key_values
        # Until the first miss, target by target (blocked hostnames found by a walk in C); from
        # then on by domain (_Domains). Not in upstream; the targets passed over are exactly
        # those the per-target tests would skip, and the others are visited in list order.
        i = 0
        while i < len(nodes) and not misses.keys:
            if blocked is not None:
                i = _next_open([map(blocked.__contains__, map(_HOSTNAME, nodes[i:]))], i, len(nodes))
                if i == len(nodes):
                    break
            en = nodes[i]
            if not fits(requests, en.remaining_resources):  # ExistingNode.has_room, inlined
                self._drop(rk, nodes, i)
                continue
            reqs, err = en.can_add(pod, data)
            if err is None:
                assert reqs is not None  # can_add returns the requirements whenever there is no error
                return self._place_on_node(en, pod, data, reqs)
            misses.note(err, en.requirements)
            i += 1
        if i < len(nodes):  # (misses noted: the rest of the list by domain)
            key0, missed0 = next(iter(misses.keys.items()))
            by_value = self._domains_of(rk, key0, nodes).by_value
            existing = self.existing_nodes
            g = self._position[nodes[i]]
            while True:
                best = _END
                for v, positions in by_value.items():
                    if v in missed0:
                        continue
                    p = bisect_left(positions, g)
                    if p < len(positions) and positions[p] < best:
                        best = positions[p]
                if best == _END:
                    break
                g = best + 1
                en = existing[best]
                if blocked is not None and en.hostname in blocked:
                    continue
                if len(misses.keys) > 1 and any(values[k][en] in m for k, m in misses.keys.items() if k != key0):
                    continue
                if not fits(requests, en.remaining_resources):
                    self._drop(rk, nodes, nodes.index(en))
                    continue
                reqs, err = en.can_add(pod, data)
                if err is None:
                    assert reqs is not None
                    return self._place_on_node(en, pod, data, reqs)
                misses.note(err, en.requirements)
        # in-flight claims, fewest pods first (:598, sort.Slice -> a stable order kept incrementally:
        # the list is always sorted by pod count, ties in the order a stable re-sort would give)
        claims = self.new_nodeclaims
        # Pre-filters (not in upstream; the result is identical): addToInflightNode only needs the
        # lowest-index claim whose CanAdd succeeds, and its per-claim errors are discarded. A claim's
        # hostname requirement is always ``In [nc.hostname]`` (narrowed only by intersection), so
        # the hostnames the pod's hostname topologies block (Topology.hostname_blocked: anti-affinity
        # on an occupied hostname, a hostname spread already at maxSkew) make CanAdd fail in
        # AddRequirements. Such claims are skipped without calling CanAdd; the set difference runs
        # in C, so a pod with self anti-affinity no longer pays one full CanAdd per in-flight claim
        # (quadratic in the number of claims). Claims sharing a failed topology domain are skipped
        # as on existing nodes (_TopologyMisses), claims whose options a failed merged requirement
        # rules out as well (_OptionMisses); _next_open finds the next claim none of them skips.
        free: set[str] | None = None
        options: _OptionMisses | None = None
        if claims:
            if occupied is None:  # (else the same answer: the node scan recorded nothing)
                occupied = self.topology.hostname_blocked(pod)
            if occupied:
                free = self._claim_hostnames.difference(*occupied)
                if not free:
                    claims = []
            misses = _TopologyMisses(data)
        n = len(claims)
        i = 0
        while i < n:
            if free is not None or misses.keys or (options is not None and options.bad):
                u = claims[i:]
                skips = misses.skips(values, u)
                if options is not None and options.bad:
                    skips.extend(options.skips(values, self._option_ids, u, self._covers))
                if free is not None:
                    skips.append(map(not_, map(free.__contains__, map(_HOSTNAME, u))))
                i = _next_open(skips, i, n)
                if i == n:
                    break
            nc = claims[i]
            creqs, its, cerr = nc.can_add(pod, data, False, need_error=False)  # errors discarded
            if cerr is None:
                assert creqs is not None and its is not None  # can_add returns both whenever there is no error
                nc.add(pod, data, creqs, its)
                self._forget(nc)
                self._placed_outcome = OUTCOME_INFLIGHT_NODECLAIM
                self._placed_target = nc.hostname
                c = len(nc.pods)
                if i + 1 < n and len(claims[i + 1].pods) < c:
                    claims.pop(i)
                    claims.insert(bisect_left(claims, c, lo=i, key=_pod_count), nc)
                return None
            merged = nc.filtered_requirements
            if merged is not None:  # no option compatible with the merged requirements
                nc.filtered_requirements = None
                if options is None:
                    options = _OptionMisses.for_pod(self.index, self.topology, pod, data)
                if options is not None:
                    options.note(nc, merged)
            else:
                misses.note(cerr, nc.requirements)
            i += 1
        if not self.templates:
            return ERR_NO_TEMPLATES
        return self._add_to_new_nodeclaim(pod, data)

    def _add_to_new_nodeclaim(self, pod: Any, data: PodData) -> Any:
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


def _pod_count(nc: NodeClaim) -> int:
    return len(nc.pods)


def _union(sets: list[set[str]]) -> set[str] | None:
    """The union of ``sets`` (the one set itself when there is one; None when there is none)."""
    if not sets:
        return None
    if len(sets) == 1:
        return sets[0]
    return set().union(*sets)


class _TopologyMisses:
    """The topology domains on which AddRequirements failed during one first-fit scan of
    addToExistingNode or addToInflightNode (not in upstream; a pure pre-filter).

    When a target's CanAdd fails with a :class:`TopologyError` of group ``tg``, the target's own
    requirement for ``tg.key`` (``None`` when undefined) is noted; a later target of the same scan
    whose own requirement for that key is equal is skipped without calling CanAdd.

    Same result because nothing is recorded into the topology during a scan, the pod (and so its
    requirements and the groups it owns or is selected by) is fixed, and AddRequirements hands
    ``tg`` the pod's strict requirement and the node requirement ``(target requirements + pod
    requirements).Get(tg.key)`` -- a function of the target's own requirement for the key alone.
    ``next_domain`` depends only on those values and the group's counts, so ``tg`` fails the same
    way on the later target, and CanAdd fails there (or earlier). Only the groups evaluated on every
    target are noted (owned by the pod, or inverse groups with the zero node filter), and a pod
    with volume topology alternatives (which change the node requirement per alternative) notes
    nothing.
    """

    __slots__ = ("keys", "_uid", "_exact")

    def __init__(self, data: PodData) -> None:
        #: topology key -> the target requirements (values) on which a group of that key failed
        self.keys: dict[str, set[Any]] = {}
        self._uid: str = data.pod.metadata.uid
        self._exact = not data.volume_requirements

    def note(self, err: Any, requirements: Requirements) -> None:
        if not self._exact or not isinstance(err, TopologyError):
            return
        tg = err.topology
        if tg.node_filter is not ZERO_NODE_FILTER and not tg.is_owned_by(self._uid):
            return
        self.keys.setdefault(tg.key, set()).add(_miss_key(dict.get(requirements, tg.key)))

    def missed(self, requirements: Requirements) -> bool:
        """Whether a target with these requirements is skipped (the per-target form of skips)."""
        for key, values in self.keys.items():
            if _miss_key(dict.get(requirements, key)) in values:
                return True
        return False

    def skips(self, values: _KeyValuesByKey, targets: list[Any]) -> list[Iterator[bool]]:
        """Per noted key, a lazy stream over ``targets``: whether :meth:`missed` holds for the
        target's requirements (``values[key]`` holds them by value; computed in C)."""
        return [map(missed.__contains__, map(values[key].__getitem__, targets))
                for key, missed in self.keys.items()]


class _OptionMisses:
    """The merged requirements on which no instance-type option survived during one scan of
    addToInflightNode (not in upstream; a pure pre-filter).

    When a claim's CanAdd ends with no option compatible with its merged requirements
    (NodeClaim.filtered_requirements), then for each key ``k`` of the pod's topology groups the
    types incompatible with the merged requirement for ``k`` are noted under the claim's own
    requirement for ``k`` (by value, :func:`_miss_key`). A later claim of the same scan whose own
    requirement for ``k`` is equal and whose options all lie in that set is skipped without
    calling CanAdd.

    Same result because the merged requirement for ``k`` is a function of the claim's own
    requirement for ``k`` alone: it is the claim's requirement intersected with the pod's (both
    fixed), then narrowed by the pod's groups on ``k``, whose ``next_domain`` sees only that value
    and the group's counts (nothing is recorded during a scan) -- the argument of
    :class:`_TopologyMisses`, so it holds under the same conditions (every group evaluated on
    every target: Topology.evaluated_keys is not None; no volume topology alternatives). The later
    claim's merged requirements hold that same requirement for ``k``, so
    ``InstanceTypeIndex.incompatible`` of them contains the noted set, which covers its options:
    CanAdd fails there in the covered test of tryVolumeAlternative (or earlier). On a real
    catalogue this is the zone-spread pod whose next domain is a zone the claims' instance types
    are not offered in: every such claim failed after a full AddRequirements and filter.
    """

    __slots__ = ("keys", "bad", "_index")

    def __init__(self, index: InstanceTypeIndex, keys: list[str]) -> None:
        self._index = index
        self.keys = keys
        #: topology key -> the claim requirement (by value) -> ids of the incompatible types
        self.bad: dict[str, dict[Any, frozenset[int]]] = {}

    @classmethod
    def for_pod(cls, index: InstanceTypeIndex, topology: Any, pod: Any, data: PodData) -> _OptionMisses | None:
        """The notes for one scan of ``pod`` (None when the conditions above do not hold)."""
        if data.volume_requirements:
            return None
        keys = topology.evaluated_keys(pod)
        if keys is None:
            return None
        return cls(index, sorted(keys))

    def note(self, nc: NodeClaim, merged: tuple[Requirements, dict[str, Requirement] | None]) -> None:
        """Note ``nc``'s failure; ``merged`` is NodeClaim.filtered_requirements: the requirements
        before topology and the keys the topology narrowed (those win)."""
        reqs, changes = merged
        for key in self.keys:
            r = changes.get(key) if changes and key in changes else dict.get(reqs, key)
            if r is None:
                continue
            bad = self._index.incompatible_for(r)
            if bad:
                self.bad.setdefault(key, {})[_miss_key(dict.get(nc.requirements, key))] = bad

    def missed(self, nc: NodeClaim) -> bool:
        """Whether ``nc`` is skipped (the per-claim form of skips)."""
        reqs = nc.requirements
        for key, by_value in self.bad.items():
            bad = by_value.get(_miss_key(dict.get(reqs, key)))
            if bad is not None and nc.options_within(bad):
                return True
        return False

    def skips(self, values: _KeyValuesByKey, option_ids: _OptionIds, claims: list[Any],
              covers: _CoversByBad | None = None) -> list[Iterator[bool]]:
        """Per noted key, a lazy stream over ``claims``: whether :meth:`missed` holds for the claim
        (computed in C). A claim always has an option (CanAdd fails with none left), so the
        empty set standing for "nothing noted" never covers a claim's options, as ``None`` does
        not in :meth:`missed`. ``covers``: the memo of the ``issuperset`` tests (a fresh one when
        not given; see :class:`_CoversByBad`)."""
        if covers is None:
            covers = _CoversByBad()
        none = covers[_NO_IDS]
        return [map(dict.__getitem__,
                    map({v: covers[bad] for v, bad in by_value.items()}.get, map(values[key].__getitem__, claims),
                        repeat(none)),
                    map(option_ids.__getitem__, claims))
                for key, by_value in self.bad.items()]


class _KeyValues(dict[Any, Any]):
    """target (an ExistingNode or in-flight NodeClaim, by identity) -> ``_miss_key`` of its
    requirement for one topology key, computed on first use. Valid while the target's
    requirements object is unchanged: Scheduler._forget drops the entry when Add replaces it."""

    __slots__ = ("key",)

    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key

    def __missing__(self, target: Any) -> Any:
        v = self[target] = _miss_key(dict.get(target.requirements, self.key))
        return v


class _KeyValuesByKey(dict[str, _KeyValues]):
    """topology key -> its :class:`_KeyValues` (made on first use)."""

    __slots__ = ()

    def __missing__(self, key: str) -> _KeyValues:
        v = self[key] = _KeyValues(key)
        return v


class _OptionIds(dict[Any, frozenset[int]]):
    """in-flight claim -> ids of its instance-type options (NodeClaim.options_within compares
    the same set), computed on first use; dropped by Scheduler._forget when Add replaces them.
    Equal sets are one object (interned here), so the memo of :class:`_CoversByBad` finds them by
    identity (an equal but distinct key would cost a full set comparison per lookup)."""

    __slots__ = ("_interned",)

    def __init__(self) -> None:
        super().__init__()
        self._interned: dict[frozenset[int], frozenset[int]] = {}

    def __missing__(self, nc: Any) -> frozenset[int]:
        ids = frozenset(map(id, nc.instance_type_options))
        ids = self[nc] = self._interned.setdefault(ids, ids)
        return ids


class _Covers(dict[frozenset[int], bool]):
    """option ids -> ``bad.issuperset(ids)`` for one set ``bad`` (:class:`_CoversByBad`)."""

    __slots__ = ("bad",)

    def __init__(self, bad: frozenset[int]) -> None:
        super().__init__()
        self.bad = bad

    def __missing__(self, ids: frozenset[int]) -> bool:
        v = self[ids] = self.bad.issuperset(ids)
        return v


class _CoversByBad(dict[frozenset[int], _Covers]):
    """set of incompatible type ids -> its :class:`_Covers` (made on first use); per Solve.

    Not in upstream (a memo of _OptionMisses' skip test, ``bad >= ids``, a pure function of the
    two set values, so a hit gives the answer the test gives). The sets noted are interned by
    InstanceTypeIndex and the claims' option ids by _OptionIds, and the pods of a Deployment note
    the same sets against the same claims: on the us-east-1 catalogue a zone-spread pod whose next
    zone the claims' types are not offered in walked every claim, each a subset test over ~70
    option ids against a set of ~2,400."""

    __slots__ = ()

    def __missing__(self, bad: frozenset[int]) -> _Covers:
        v = self[bad] = _Covers(bad)
        return v


class _Domains:
    """The nodes of one with-room list (``nodes``, by identity) by their requirement for one
    topology key: value (_miss_key) -> the nodes' positions in Scheduler.existing_nodes,
    ascending (the list's order). Not in upstream: once a scan has a failed domain, the next
    target is the first position past the current one among the domains not failed -- the next
    target of the list the per-target scan would not skip for that key. Kept equal to the list:
    built from it, a node dropped from the list leaves its domain (Scheduler._drop), a node whose
    value changes on Add moves (Scheduler._forget)."""

    __slots__ = ("nodes", "by_value")

    def __init__(self, nodes: list[ExistingNode], by_value: dict[Any, list[int]]) -> None:
        self.nodes = nodes
        self.by_value = by_value


_HOSTNAME = attrgetter("hostname")
_END = 1 << 62
_ABSENT = object()
_NO_IDS: frozenset[int] = frozenset()


def _next_open(skips: list[Iterator[bool]], start: int, end: int) -> int:
    """The first index from ``start`` whose target no stream in ``skips`` (aligned with the
    targets from ``start`` on) skips; ``end`` when there is none. Not in upstream: one C-level
    walk in place of a Python test per target; same result because it is the first target on
    which the per-target tests (the skip predicates, or-ed) are all false."""
    if not skips:
        return start
    skip = skips[0]
    for other in skips[1:]:
        skip = map(or_, skip, other)
    return next(compress(count(start), map(not_, skip)), end)


def _miss_key(r: Requirement | None) -> Any:
    """A requirement by value, cheap to compare: a plain ``In`` (the labels of a node) by its
    value set (compared in C), anything else as itself (None: the key is undefined)."""
    if r is not None and not r.complement and r.gte is None and r.lte is None and r.min_values is None:
        return r.values
    return r


def _satisfies_min_values(its: Sequence[Any], reqs: Requirements) -> tuple[int, dict[str, int] | None, str | None]:
    return InstanceTypes(its)._satisfies_min_values(reqs)
