"""Topology spread, pod affinity and pod anti-affinity for the provisioning scheduler.

Mirrors pkg/controllers/provisioning/scheduling/topology.go (Topology, NewTopology,
buildDomainGroups, topologyError, Update, Record, AddRequirements, GetTopologyZoneConstraints,
Register, Unregister, updateInverseAffinities, updateInverseAntiAffinity, countDomains,
newForTopologies, newForAffinities, buildNamespaceList, getMatchingTopologies,
TopologyListOptions, IgnoredForTopology).

Determinism rules (upstream iterates Go maps):
- groups are kept in creation order (upstream: ``map[uint64]*TopologyGroup``); ``add_requirements``
  evaluates the pod's own groups in that order, then the inverse groups, so the reported error is
  the first failing group in that order (the narrowed requirements do not depend on the order);
- the domain choices inside a group follow the rules of :mod:`karpy.provisioning.topologygroup`.

Performance: per pod UID the groups that select the pod and the groups it owns are cached
(invalidated when a group is created), and pods alike in namespace and labels share the selecting
groups; ``selects`` is cached per group and UID; the topology error is a small lazily formatted
value (:class:`TopologyError`), as upstream's ``topologyError`` is. ``hostname_blocked`` gives
Scheduler._add the hostnames on which AddRequirements must fail, as sets.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from karpy.provisioning.domaingroupcache import DomainGroupCache
from karpy.provisioning.topologydomaingroup import TopologyDomainGroup
from karpy.provisioning.topologygroup import (
    MAX_INT32,
    TopologyGroup,
    TopologyType,
    compile_selector,
    group_hash,
    group_node_filter,
)
from karpy.provisioning.topologynodefilter import ZERO_NODE_FILTER, TopologyNodeFilter
from karpy.provisioning.topologypodindex import PodIndex, cluster_pod_index
from karpy.scheduling.labels import LABEL_HOSTNAME, LABEL_ZONE
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements
from karpy.utils import pod as podutils

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = [
    "DomainGroupCache",
    "SHARED_DOMAIN_GROUPS",
    "PREFERENCE_POLICY_IGNORE",
    "PREFERENCE_POLICY_RESPECT",
    "Topology",
    "TopologyError",
    "build_domain_groups",
    "ignored_for_topology",
    "pretty_map",
]

PREFERENCE_POLICY_RESPECT = "Respect"
PREFERENCE_POLICY_IGNORE = "Ignore"
#: label the API server puts on every Namespace (used by namespaceSelector)
LABEL_NAMESPACE_NAME = "kubernetes.io/metadata.name"
_EMPTY: frozenset[str] = frozenset()


def pretty_map(values: Mapping[str, Any], max_items: int) -> str:
    """Mirrors pkg/utils/pretty Map: sorted keys, ``k: v`` joined by ``, ``, truncated."""
    parts: list[str] = []
    count = 0
    for k in sorted(values):
        count += 1
        parts.append(f"{k}: {values[k]}")
        if count >= max_items:
            break
    out = ", ".join(parts)
    if count < len(values):
        out += f" and {len(values) - count} other(s)"
    return out


class TopologyError:
    """topology.go topologyError: formatted lazily (``str(err)``), like upstream's ``Error()``.

    ``unsatisfiable topology constraint for <type>, key=<key> (counts = {...}, podDomains = <req>,
    nodeDomains = <req>`` — no closing parenthesis, verbatim. Compares equal to its string.
    """

    __slots__ = ("topology", "pod_domains", "node_domains")

    def __init__(self, topology: TopologyGroup, pod_domains: Requirement, node_domains: Requirement) -> None:
        self.topology = topology
        self.pod_domains = pod_domains
        self.node_domains = node_domains

    def __str__(self) -> str:
        t = self.topology
        return (
            f"unsatisfiable topology constraint for {t.type!s}, key={t.key} (counts = {pretty_map(t.domains, 25)}, "
            f"podDomains = {self.pod_domains}, nodeDomains = {self.node_domains}"
        )

    def __repr__(self) -> str:
        return f"TopologyError({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (str, TopologyError)):
            return str(self) == str(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))

    def __contains__(self, item: str) -> bool:
        return item in str(self)

    def startswith(self, prefix: str) -> bool:
        return str(self).startswith(prefix)


def ignored_for_topology(pod: Pod) -> bool:
    """topology.go IgnoredForTopology: unscheduled, terminal or terminating pods do not count."""
    return not podutils.is_scheduled(pod) or podutils.is_terminal(pod) or podutils.is_terminating(pod)


def _template_labels(np: Any) -> dict[str, str]:
    meta = getattr(np.spec.template, "metadata", None)
    return dict(getattr(meta, "labels", None) or {})


def build_domain_groups(
    nodepools: Sequence[Any], instance_types: Mapping[str, Sequence[Any]]
) -> dict[str, TopologyDomainGroup]:
    """Mirrors topology.go buildDomainGroups.

    For every NodePool with instance types: each instance type's requirements intersected with the
    pool's requirements and template labels contribute their values (raw value sets, as upstream's
    ``Values()``) tagged with the pool's taints; then every ``In`` requirement of the pool does.
    """
    index = {np.metadata.name: np for np in nodepools}
    groups: dict[str, TopologyDomainGroup] = {}
    for np_name, its in instance_types.items():
        np = index.get(np_name)
        if np is None:
            continue  # upstream would dereference a nil NodePool; an unknown pool has no domains
        spec = np.spec.template.spec
        taints = tuple(spec.taints or ())
        base = Requirements.from_node_selector_requirements(spec.requirements or ())
        base.add(*Requirements.from_labels(_template_labels(np)).values())
        for it in its:
            reqs = base.copy()
            reqs.add(*it.requirements.values())
            for key, req in reqs.items():
                group = groups.get(key)
                if group is None:
                    group = groups[key] = TopologyDomainGroup()
                for domain in sorted(req.values):
                    group.insert(domain, taints)
        for key, req in base.items():
            if not req.complement and req.values:  # Operator() == In
                group = groups.get(key)
                if group is None:
                    group = groups[key] = TopologyDomainGroup()
                for domain in sorted(req.values):
                    group.insert(domain, taints)
    return groups


#: the process's domain-group memo (see :class:`~karpy.provisioning.domaingroupcache.DomainGroupCache`)
SHARED_DOMAIN_GROUPS = DomainGroupCache(build_domain_groups)


def _toleration_key(t: Any) -> tuple[Any, ...]:
    """Every field of a core/v1 Toleration (the spread node-filter memo's key)."""
    return (t.key, t.operator, t.value, t.effect, t.toleration_seconds)


def _pod_uid(pod: Pod) -> str:
    uid: str = pod.metadata.uid
    return uid


class Topology:
    """Mirrors topology.go Topology; built once per Solve.

    ``Topology(cluster, state_nodes, nodepools, instance_types, pods, preference_policy, well_known)``
    — ``instance_types`` by NodePool name, ``pods`` the pods being scheduled now (excluded from
    counting). Raises ``ValueError`` with upstream's joined errors when NewTopology would fail.
    """

    def __init__(
        self,
        cluster: Any,
        state_nodes: Sequence[Any],
        nodepools: Sequence[Any],
        instance_types: Mapping[str, Sequence[Any]],
        pods: Sequence[Pod],
        preference_policy: str = PREFERENCE_POLICY_RESPECT,
        well_known: frozenset[str] = _EMPTY,
        domain_group_cache: DomainGroupCache | None = None,
        label_requirements: Callable[[Mapping[str, str]], Requirements] | None = None,
        prepared: Sequence[tuple[str, bool]] | None = None,
        instance_type_keys: Mapping[str, Hashable | None] | None = None,
    ) -> None:
        """``label_requirements``: a memo of ``Requirements.from_labels`` whose answers are only read
        (the Provisioner's SchedulerCache keeps one across Solves); default: built per node.
        ``prepared``: per pod, its uid and whether its spec has neither affinity nor topology spread
        constraints (SpecMemo's answers; default: read from the pods). ``instance_type_keys``: the
        cloud provider's key of each NodePool's types (DomainGroupCache.get)."""
        self.preference_policy = preference_policy
        self.well_known = well_known
        self.cluster = cluster
        self.state_nodes = list(state_nodes)
        self.domain_groups = (build_domain_groups(nodepools, instance_types) if domain_group_cache is None
                              else domain_group_cache.get(nodepools, instance_types, instance_type_keys))
        self.topology_groups: dict[Any, TopologyGroup] = {}
        self.inverse_topology_groups: dict[Any, TopologyGroup] = {}
        if prepared is None:
            prepared = [(p.metadata.uid, p.spec.affinity is None and not p.spec.topology_spread_constraints)
                        for p in pods]
        self.excluded_pods: set[str] = {uid for uid, _ in prepared}  # (_pod_uid, read inline)
        # indexes (not in upstream; derived data only)
        self._owned: dict[str, list[TopologyGroup]] = {}
        self._inverse_owned: dict[str, list[TopologyGroup]] = {}
        self._by_key: dict[str, list[TopologyGroup]] = {}
        self._version = 0
        self._selecting: dict[str, tuple[int, list[TopologyGroup], list[TopologyGroup]]] = {}
        #: (namespace, labels) -> (version, selecting groups, selecting inverse groups): shared by
        #: pods alike in both (see _selecting_groups)
        self._selecting_by_labels: dict[Any, tuple[int, list[TopologyGroup], list[TopologyGroup]]] = {}
        self._matching: dict[str, tuple[int, list[TopologyGroup]]] = {}
        self._nodes_by_name: dict[str, Any] | None = None
        self._node_reqs: dict[str, Requirements] = {}
        #: a pod's spread node filter inputs -> the filter (see _spread_node_filter)
        self._node_filters: dict[tuple[Any, ...], TopologyNodeFilter] = {}
        #: (topology key, node filter hash) -> the existing nodes' domains _count_domains registers
        self._node_domains: dict[tuple[Any, ...], tuple[str, ...]] = {}
        #: Requirements.from_labels, possibly memoised across Solves (SchedulerCache.label_requirements)
        self._labels_requirements = label_requirements or Requirements.from_labels
        #: the cluster's pods grouped by namespace and labels, for _count_domains (built on first use)
        self._pod_index: PodIndex | None = None
        self._pods_being_scheduled = list(pods)
        #: while __init__ runs (None after): the groups an update ended with, per pod spec object,
        #: namespace and labels, and the inverse groups per required anti-affinity term list and
        #: namespace -- shared by pods alike (see update and _update_inverse_anti_affinity)
        self._build_memo: dict[tuple[Any, ...], tuple[Any, list[TopologyGroup]]] | None = (
            {} if self._MEMOISE_BUILD else None)
        self._inverse_memo: dict[tuple[Any, ...], tuple[Any, list[TopologyGroup]]] | None = (
            {} if self._MEMOISE_BUILD else None)

        errors: list[str] = []
        try:
            err = self._update_inverse_affinities()
            if err:
                errors.append(err)
            owned, selecting, matching = self._owned, self._selecting, self._matching
            skip = self._SKIP_FREE
            for p, (uid, free) in zip(pods, prepared):
                if skip and free and uid not in owned and uid not in selecting and uid not in matching:
                    continue  # update would pop nothing and build nothing (its first return)
                err = self.update(p)
                if err:
                    errors.append(err)
        finally:
            # only NewTopology's own loop shares answers: later updates (Solve's relaxation) get
            # pods whose spec was edited in place, so no identity key may outlive it
            self._build_memo = None
            self._inverse_memo = None
        if errors:
            raise ValueError("; ".join(errors))

    #: whether NewTopology's loop shares the groups of pods alike (see update); tests turn it off to
    #: compare with the plain computation
    _MEMOISE_BUILD = True
    #: whether NewTopology's loop skips a pod without affinity or spread whose uid nothing holds
    #: (update would return at once); tests turn it off
    _SKIP_FREE = True

    # -- public API ---------------------------------------------------------------------------
    def update(self, pod: Pod) -> str | None:
        """Mirrors topology.go Update: re-own the pod's (possibly relaxed) topologies."""
        uid = _pod_uid(pod)
        for tg in self._owned.pop(uid, ()):
            tg.remove_owner(uid)
        self._selecting.pop(uid, None)
        self._matching.pop(uid, None)
        spec = pod.spec
        if spec.affinity is None and not spec.topology_spread_constraints:
            return None  # newForTopologies and newForAffinities build nothing: no group to own

        if (self.preference_policy == PREFERENCE_POLICY_IGNORE and podutils.has_required_pod_anti_affinity(pod)) or (
            self.preference_policy == PREFERENCE_POLICY_RESPECT and podutils.has_pod_anti_affinity(pod)
        ):
            err = self._update_inverse_anti_affinity(pod, None)
            if err:
                return f"updating inverse anti-affinities, {err}"

        owned: list[TopologyGroup] = []
        ended: list[TopologyGroup] | None = None
        memo = self._build_memo
        if memo is not None:
            # Not in upstream (newForTopologies / newForAffinities run for every pod of NewTopology);
            # same result because what they build is a function of the pod's spec (its constraints,
            # affinity terms, nodeSelector, tolerations and node affinity), its namespace and its
            # labels (matchLabelKeys), of the cluster's namespaces and the domain groups (fixed
            # while NewTopology runs), and of the groups held so far: a later pod with the same
            # three finds every group the first one ended with already held under its hash, so
            # building them again would keep exactly those groups, in the same order, and create
            # none. The spec object is held by the entry (no identity is reused) and nothing edits
            # it meanwhile.
            spec = pod.spec
            labels = pod.metadata.labels
            memo_key = (id(spec), pod.metadata.namespace, None if labels is None else tuple(labels.items()))
            hit = memo.get(memo_key)
            ended = hit[1] if hit is not None and hit[0] is spec else None
        if ended is None:
            groups = self._new_for_topologies(pod)
            affinities, err = self._new_for_affinities(pod)
            if err:
                return f"updating affinities, {err}"
            ended = [self._held(tg) for tg in groups + affinities]
            if memo is not None:
                memo[memo_key] = (spec, ended)
        # (owners are read by nothing but this ownership bookkeeping, so owning after every group
        # is held gives what owning each as it was held gave)
        for tg in ended:
            if uid not in tg.owners:
                tg.add_owner(uid)
                owned.append(tg)
        if owned:
            self._owned[uid] = owned
        self._matching.pop(uid, None)
        return None

    def _held(self, tg: TopologyGroup) -> TopologyGroup:
        """The group held under ``tg``'s hash, holding ``tg`` (its domains counted) when none is."""
        existing = self.topology_groups.get(tg.hash_key)
        if existing is not None:
            return existing
        self._count_domains(tg)
        self.topology_groups[tg.hash_key] = tg
        self._by_key.setdefault(tg.key, []).append(tg)
        self._version += 1
        return tg

    def record(
        self, pod: Pod, taints: Sequence[Any], requirements: Requirements, allow_undefined: frozenset[str] = _EMPTY
    ) -> None:
        """Mirrors topology.go Record: count the pod in every group that selects it on this node.

        ``allow_undefined`` is upstream's compatibility option (NodeClaims pass the well-known
        labels, existing nodes nothing); it only matters for nodeAffinityPolicy=Honor filters.
        """
        selecting, _ = self._selecting_groups(pod)
        for tg in selecting:
            if not tg.node_filter.matches(taints, requirements, allow_undefined):
                continue
            domains = requirements.get(tg.key)
            if tg.type == TopologyType.POD_ANTI_AFFINITY:
                # block out every domain the pod could land in
                tg.record(*domains.values)
            elif not domains.complement and len(domains.values) == 1:
                tg.record(*domains.values)
        if self._inverse_owned:
            for tg in self._inverse_owned.get(_pod_uid(pod), ()):
                tg.record(*requirements.get(tg.key).values)

    def add_requirements(
        self,
        pod: Pod,
        taints: Sequence[Any],
        pod_requirements: Requirements,
        node_requirements: Requirements,
        allow_undefined: frozenset[str] = _EMPTY,
    ) -> tuple[Requirements | None, TopologyError | None]:
        """Mirrors topology.go AddRequirements: node requirements narrowed by every topology that
        applies to the pod (its own groups and inverse anti-affinity groups selecting it), or
        ``(None, TopologyError)``. ``pod_requirements`` are the pod's *strict* requirements.

        Returns a new Requirements (never ``node_requirements`` itself) on success.
        """
        changes, err = self.narrow(pod, taints, pod_requirements, node_requirements, allow_undefined)
        if err is not None:
            return None, err
        requirements = node_requirements.copy()
        if changes:
            dict.update(requirements, changes)
        return requirements, None

    def narrow(
        self,
        pod: Pod,
        taints: Sequence[Any],
        pod_requirements: Requirements,
        node_requirements: Requirements,
        allow_undefined: frozenset[str] = _EMPTY,
    ) -> tuple[dict[str, Requirement] | None, TopologyError | None]:
        """:meth:`add_requirements` as the keys it changes: ``(changes, None)`` where the result
        of AddRequirements is ``node_requirements`` with ``changes`` set (new keys appended in
        the order of the groups, as ``Requirements.Add`` appends them), or ``(None, error)``.

        A narrowed requirement equal to the node's (by value) is left out, keeping the node's
        object. Not in upstream (which always stores the intersection); same result because the
        values are equal and Requirements are immutable -- it lets the callers see that nothing
        changed (``Compatible`` of a requirement with itself holds) and their identity memos hit.
        """
        changes: dict[str, Requirement] | None = None
        for tg in self._matching_topologies(pod, taints, node_requirements, allow_undefined):
            key = tg.key
            # Requirements.get without allocating an Exists for undefined keys
            pod_domains = dict.get(pod_requirements, key)
            if pod_domains is None:
                pod_domains = tg.exists
            base = dict.get(node_requirements, key)
            domains = tg.next_domain(pod, pod_domains, tg.exists if base is None else base)
            if not domains.complement and not domains.values:
                return None, TopologyError(tg, pod_domains, tg.exists if base is None else base)
            # Requirements.Add: intersect with what the key holds so far
            current = base if changes is None else changes.get(key, base)
            if current is not None:
                domains = domains.intersection(current)
                if base is not None and domains == base:
                    if changes is not None:
                        changes.pop(key, None)  # the key keeps the node's (equal) object
                    continue
            if changes is None:
                changes = {key: domains}
            else:
                changes[key] = domains
        return changes, None

    def get_topology_zone_constraints(self, pod: Pod, pod_requirements: Requirements) -> tuple[set[str] | None, bool]:
        """Mirrors topology.go GetTopologyZoneConstraints (upstream uses it for metrics only)."""
        result: set[str] | None = None
        uid = _pod_uid(pod)
        for tg in self._owned.get(uid, ()):
            if tg.key != LABEL_ZONE:
                continue
            pod_domains = pod_requirements.get(tg.key)
            node_domains = Requirement(tg.key, "Exists")
            _, valid = tg.get(pod, pod_domains, node_domains)
            if not valid:
                return None, False
            result = set(valid) if result is None else result & valid
        return result, True

    def register(self, topology_key: str, domain: str) -> None:
        """Mirrors topology.go Register (groups and inverse groups of that key).

        (A group that has the domain already is not asked: TopologyGroup.register would leave it
        unchanged. Every existing node registers its hostname with every hostname group, most of
        which NewTopology's countDomains registered it with.)"""
        for tg in self._by_key.get(topology_key, ()):
            if domain not in tg.domains:
                tg.register(domain)

    def registers(self, topology_key: str) -> bool:
        """Whether :meth:`register` of that key reaches a group (else it does nothing)."""
        return bool(self._by_key.get(topology_key))

    def unregister(self, topology_key: str, domain: str) -> None:
        """Mirrors topology.go Unregister."""
        for tg in self._by_key.get(topology_key, ()):
            tg.unregister(domain)

    # -- matching -----------------------------------------------------------------------------
    def inert(self, pod: Pod) -> bool:
        """No group owns or selects the pod: Record counts it nowhere and AddRequirements narrows
        no node for it (karpy.provisioning.podruns reads it; not in upstream)."""
        if not self.topology_groups and not self.inverse_topology_groups:
            return True
        uid = _pod_uid(pod)
        if self._owned.get(uid) or self._inverse_owned.get(uid):
            return False
        selecting, inverse = self._selecting_groups(pod)
        return not selecting and not inverse

    def _selecting_groups(self, pod: Pod) -> tuple[list[TopologyGroup], list[TopologyGroup]]:
        """(groups selecting the pod, inverse groups selecting the pod), cached per UID and
        invalidated whenever a group is created."""
        if not self.topology_groups and not self.inverse_topology_groups:
            return [], []  # no group to select the pod (the common Solve: nothing to key or cache)
        uid = pod.metadata.uid
        hit = self._selecting.get(uid) if uid else None
        if hit is not None and hit[0] == self._version:
            return hit[1], hit[2]
        # Not in upstream; same result because ``selects`` is a function of the pod's namespace
        # and labels alone: pods alike in both (the replicas of a Deployment) share one answer per
        # group version, so a Solve does not walk every group once per pod.
        by_labels = self._selecting_by_labels
        meta = pod.metadata
        sig = (meta.namespace, frozenset((meta.labels or {}).items()))
        shared = by_labels.get(sig)
        if shared is not None and shared[0] == self._version:
            selecting, inverse = shared[1], shared[2]
        else:
            selecting = [tg for tg in self.topology_groups.values() if tg.selects(pod)]
            inverse = [tg for tg in self.inverse_topology_groups.values() if tg.selects(pod)]
            by_labels[sig] = (self._version, selecting, inverse)
        if uid:
            self._selecting[uid] = (self._version, selecting, inverse)
            self._matching.pop(uid, None)
        return selecting, inverse

    def _matching_topologies(
        self, pod: Pod, taints: Sequence[Any], requirements: Requirements, allow_undefined: frozenset[str]
    ) -> list[TopologyGroup]:
        """Mirrors topology.go getMatchingTopologies: owned groups, then inverse groups that count
        the pod on this node. Inverse groups are anti-affinity groups with the zero node filter,
        so for them ``Counts`` is ``selects`` and the list is cached per UID."""
        uid = pod.metadata.uid
        if uid:
            hit = self._matching.get(uid)
            if hit is not None and hit[0] == self._version:
                return hit[1]
        owned = self._owned.get(uid, ())
        _, inverse = self._selecting_groups(pod)
        out = list(owned)
        cacheable = True
        for tg in inverse:
            if tg.node_filter is ZERO_NODE_FILTER:
                out.append(tg)
            else:  # not produced today; kept for fidelity
                cacheable = False
                if tg.node_filter.matches(taints, requirements, allow_undefined):
                    out.append(tg)
        if uid and cacheable:
            self._matching[uid] = (self._version, out)
        return out

    def evaluated_keys(self, pod: Pod) -> set[str] | None:
        """The keys of the groups ``add_requirements`` evaluates for this pod on *every* node (its
        own groups and the inverse groups with the zero node filter selecting it), or None when an
        inverse group with another node filter selects it (evaluated on some nodes only). Not in
        upstream; for Scheduler._add's pre-filters."""
        _, inverse = self._selecting_groups(pod)
        keys = {tg.key for tg in self._owned.get(_pod_uid(pod), ())}
        for tg in inverse:
            if tg.node_filter is not ZERO_NODE_FILTER:
                return None
            keys.add(tg.key)
        return keys

    def hostname_blocked(self, pod: Pod) -> list[set[str]]:
        """Sets of hostnames on which ``add_requirements`` fails for this pod, one per hostname
        group it evaluates on *every* node: the hostname anti-affinity groups (its own and the
        inverse groups selecting it; zero node filter, so ``Counts`` does not depend on the node)
        and its own hostname topology spreads. Not in upstream; a pure pre-filter for
        Scheduler._add (a node whose hostname is in a set is skipped without calling CanAdd).

        Same result because, for a node whose hostname requirement is ``In [h]`` (every existing
        node and in-flight claim: only ever narrowed by intersection; narrowed to nothing,
        AddRequirements fails anyway), the hostname special cases decide alone:
        ``nextDomainAntiAffinity`` returns DoesNotExist iff ``count[h] > 0`` (the ``occupied``
        set), ``nextDomainTopologySpread`` iff ``count[h] + selfSelecting > maxSkew`` -- the
        occupied hostnames whose count exceeds ``maxSkew - selfSelecting`` (a negative threshold
        would block unoccupied hostnames too; such a group is left out of the pre-filter).
        """
        uid = _pod_uid(pod)
        out: list[set[str]] = []
        for tg in self._owned.get(uid, ()):
            if tg.key != LABEL_HOSTNAME or not tg.occupied:
                continue
            if tg.type == TopologyType.POD_ANTI_AFFINITY:
                out.append(tg.occupied)
            elif tg.type == TopologyType.SPREAD:
                threshold = tg.max_skew - (1 if tg.selects(pod) else 0)
                if threshold == 0:
                    out.append(tg.occupied)
                elif threshold > 0:
                    counts = tg.domains
                    full = {d for d in tg.occupied if counts[d] > threshold}
                    if full:
                        out.append(full)
        _, inverse = self._selecting_groups(pod)
        for tg in inverse:
            if tg.type == TopologyType.POD_ANTI_AFFINITY and tg.key == LABEL_HOSTNAME and tg.node_filter is ZERO_NODE_FILTER \
                    and tg.occupied:
                out.append(tg.occupied)
        return out

    # -- construction of groups ---------------------------------------------------------------
    def _new_for_topologies(self, pod: Pod) -> list[TopologyGroup]:
        """Mirrors topology.go newForTopologies (matchLabelKeys folded into the selector).

        Upstream appends the matchLabelKeys expressions to the pod's own selector object (a
        mutation that repeats on every Update; repeated expressions do not change matching or the
        hash). karpy builds a new selector instead. With a nil selector upstream would panic; karpy
        then uses a selector holding only the matchLabelKeys expressions.
        """
        out: list[TopologyGroup] = []
        labels = pod.metadata.labels or {}
        for tsc in pod.spec.topology_spread_constraints:
            if self.preference_policy == PREFERENCE_POLICY_IGNORE and tsc.when_unsatisfiable != "DoNotSchedule":
                continue
            selector = tsc.label_selector
            extra = [(k, labels[k]) for k in tsc.match_label_keys or () if k in labels]
            if extra:
                selector = _with_expressions(selector, extra)
            node_filter = self._spread_node_filter(pod, tsc)
            namespaces = frozenset((pod.metadata.namespace,))
            known = self.topology_groups.get(
                group_hash(TopologyType.SPREAD, tsc.topology_key, namespaces, selector, tsc.max_skew, node_filter))
            if known is not None:
                # Not in upstream; same result because update keeps the group already held under
                # this hash and drops the new one unread, so building it is skipped
                out.append(known)
                continue
            out.append(
                TopologyGroup(
                    TopologyType.SPREAD,
                    tsc.topology_key,
                    pod,
                    namespaces,
                    selector,
                    tsc.max_skew,
                    tsc.min_domains,
                    tsc.node_taints_policy,
                    tsc.node_affinity_policy,
                    self.domain_groups.get(tsc.topology_key),
                    node_filter,
                )
            )
        return out

    def _spread_node_filter(self, pod: Pod, tsc: Any) -> TopologyNodeFilter:
        """group_node_filter(SPREAD, pod, the constraint's policies), memoised per Topology for
        pods without a required node-affinity term.

        Not in upstream (MakeTopologyNodeFilter runs for every constraint of every Update); same
        result because such a pod's filter is built from its nodeSelector (in order), its
        tolerations and the two policies alone, all in the key (tolerations by every field of
        theirs); the filters are only read after they are built, so equal ones can be shared."""
        affinity = pod.spec.affinity
        node_affinity = affinity.node_affinity if affinity is not None else None
        if node_affinity is not None and node_affinity.required_during_scheduling_ignored_during_execution is not None:
            return group_node_filter(TopologyType.SPREAD, pod, tsc.node_taints_policy, tsc.node_affinity_policy)
        key = (tuple((pod.spec.node_selector or {}).items()), tsc.node_taints_policy, tsc.node_affinity_policy,
               tuple(map(_toleration_key, pod.spec.tolerations or ())))
        hit = self._node_filters.get(key)
        if hit is None:
            hit = self._node_filters[key] = group_node_filter(TopologyType.SPREAD, pod, tsc.node_taints_policy,
                                                              tsc.node_affinity_policy)
        return hit

    def _new_for_affinities(self, pod: Pod) -> tuple[list[TopologyGroup], str | None]:
        """Mirrors topology.go newForAffinities (preferred terms only under Respect)."""
        out: list[TopologyGroup] = []
        affinity = pod.spec.affinity
        if affinity is None:
            return out, None
        respect = self.preference_policy == PREFERENCE_POLICY_RESPECT
        terms: list[tuple[TopologyType, Any]] = []
        for ttype, spec in (
            (TopologyType.POD_AFFINITY, affinity.pod_affinity),
            (TopologyType.POD_ANTI_AFFINITY, affinity.pod_anti_affinity),
        ):
            if spec is None:
                continue
            for term in spec.required_during_scheduling_ignored_during_execution:
                terms.append((ttype, term))
            if respect:
                for weighted in spec.preferred_during_scheduling_ignored_during_execution:
                    terms.append((ttype, weighted.pod_affinity_term))
        for ttype, term in terms:
            namespaces, err = self._build_namespace_list(pod.metadata.namespace, term.namespaces, term.namespace_selector)
            if err:
                return [], err
            out.append(self._affinity_group(ttype, term, pod, namespaces, self.topology_groups))
        return out, None

    def _affinity_group(self, ttype: Any, term: Any, pod: Pod, namespaces: Any,
                        known: Mapping[Any, TopologyGroup]) -> TopologyGroup:
        """A pod (anti-)affinity group: maxSkew MaxInt32 and no node filter (topology.go).

        Not in upstream; same result because the callers keep the group ``known`` (the groups they
        insert into) already holds under the new group's hash and drop the new one unread: that
        group is returned instead of building one.
        """
        namespaces = frozenset(namespaces)
        existing = known.get(group_hash(ttype, term.topology_key, namespaces, term.label_selector, MAX_INT32,
                                        ZERO_NODE_FILTER))
        if existing is not None:
            return existing
        return TopologyGroup(ttype, term.topology_key, pod, namespaces, term.label_selector, MAX_INT32,
                             None, None, None, self.domain_groups.get(term.topology_key), ZERO_NODE_FILTER)

    def _update_inverse_affinities(self) -> str | None:
        """Mirrors topology.go updateInverseAffinities (running pods with required anti-affinity)."""
        errors: list[str] = []
        excluded = self.excluded_pods
        for pod, node in _pods_with_anti_affinity(self.cluster):
            if pod.metadata.uid in excluded:  # (_pod_uid, read inline)
                continue
            err = self._update_inverse_anti_affinity(pod, node.metadata.labels or {})
            if err:
                errors.append(f"tracking existing pod anti-affinity, {err}")
        return "; ".join(errors) if errors else None

    def _update_inverse_anti_affinity(self, pod: Any, domains: Mapping[str, str] | None) -> str | None:
        """Mirrors topology.go updateInverseAntiAffinity (required terms only)."""
        uid = _pod_uid(pod)
        terms = pod.spec.affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution
        memo = self._inverse_memo
        if memo is not None:
            # Not in upstream (the group of every term is built for every pod); same result
            # because a term's group is a function of the term, the pod's namespace, the cluster's
            # namespaces (fixed while NewTopology runs) and the groups held so far: for a later pod
            # with the same term list (pods of one template share it, bound or not) and namespace
            # every group is held already, so the loop below finds exactly the groups the first
            # pod ended with, in the same order, and then records and owns as here. The list is
            # held by the entry (no identity is reused) and nothing edits it meanwhile.
            memo_key = (id(terms), pod.metadata.namespace)
            hit = memo.get(memo_key)
            if hit is not None and hit[0] is terms:
                for tg in hit[1]:
                    self._record_and_own_inverse(uid, tg, domains)
                return None
        ended: list[TopologyGroup] = []
        for term in terms:
            namespaces, err = self._build_namespace_list(pod.metadata.namespace, term.namespaces, term.namespace_selector)
            if err:
                return err
            tg = self._affinity_group(TopologyType.POD_ANTI_AFFINITY, term, pod, namespaces,
                                     self.inverse_topology_groups)
            existing = self.inverse_topology_groups.get(tg.hash_key)
            if existing is None:
                self.inverse_topology_groups[tg.hash_key] = tg
                self._by_key.setdefault(tg.key, []).append(tg)
                self._version += 1
            else:
                tg = existing
            ended.append(tg)
            self._record_and_own_inverse(uid, tg, domains)
        if memo is not None:
            memo[memo_key] = (terms, ended)
        return None

    def _record_and_own_inverse(self, uid: str, tg: TopologyGroup, domains: Mapping[str, str] | None) -> None:
        """updateInverseAntiAffinity's step for one term's group: record the pod's domain for the
        group's key (a bound pod's node labels) and own the group."""
        if domains is not None and tg.key in domains:
            tg.record(domains[tg.key])
        if uid not in tg.owners:
            tg.add_owner(uid)
            self._inverse_owned.setdefault(uid, []).append(tg)

    def _build_namespace_list(
        self, namespace: str, namespaces: Sequence[str], selector: Any | None
    ) -> tuple[frozenset[str], str | None]:
        """Mirrors topology.go buildNamespaceList."""
        if not namespaces and selector is None:
            return frozenset((namespace,)), None
        if selector is None:
            return frozenset(namespaces), None
        compiled = compile_selector(selector)
        if compiled.kind == "nothing" and (selector.match_labels or selector.match_expressions):
            return frozenset(), "parsing selector, invalid label selector"
        selected = {name for name, labels in self._namespace_labels() if compiled.matches(labels)}
        selected.update(namespaces)
        return frozenset(selected), None

    def _namespace_labels(self) -> list[tuple[str, dict[str, str]]]:
        """The cluster's namespaces with their labels.

        Uses ``cluster.namespaces`` when the cluster state provides it (objects with metadata, or
        a mapping name -> labels); otherwise the namespaces of all known pods plus ``default``.
        Every namespace carries ``kubernetes.io/metadata.name`` as the API server sets it.
        """
        source = getattr(self.cluster, "namespaces", None)
        out: dict[str, dict[str, str]] = {}
        if source is not None:
            if isinstance(source, Mapping):
                for name, labels in source.items():
                    out[name] = dict(labels or {})
            else:
                for ns in source:
                    if isinstance(ns, str):
                        out[ns] = {}
                    else:
                        out[ns.metadata.name] = dict(ns.metadata.labels or {})
        else:
            out["default"] = {}
            for p in list(getattr(self.cluster, "pods", ())) + self._pods_being_scheduled:
                out.setdefault(p.metadata.namespace, {})
        result = []
        for name in sorted(out):
            labels = out[name]
            labels.setdefault(LABEL_NAMESPACE_NAME, name)
            result.append((name, labels))
        return result

    # -- counting -----------------------------------------------------------------------------
    def _node_named(self, name: str) -> Any | None:
        if self._nodes_by_name is None:
            nodes: dict[str, Any] = {}
            for sn in getattr(self.cluster, "nodes", ()):
                if sn.node is not None:
                    nodes[sn.node.metadata.name] = sn.node
            for sn in self.state_nodes:
                if sn.node is not None:
                    nodes.setdefault(sn.node.metadata.name, sn.node)
            self._nodes_by_name = nodes
        return self._nodes_by_name.get(name)

    def _node_requirements(self, node: Any) -> Requirements:
        name = node.metadata.name
        reqs = self._node_reqs.get(name)
        if reqs is None:
            reqs = self._node_reqs[name] = self._labels_requirements(node.metadata.labels or {})
        return reqs

    def _count_domains(self, tg: TopologyGroup) -> None:
        """Mirrors topology.go countDomains: register domains of existing nodes that pass the
        group's node filter, then count the running pods the group's (listing) selector matches."""
        # Not in upstream (which walks the nodes for every group); same result because the
        # domains registered are a function of the state nodes (fixed for this Topology), the
        # group's key and its node filter's Matches -- which reads only what the filter's hash
        # key holds (the alternatives' requirements, compared as sets, the two policies and the
        # tolerations as a set): groups with equal (key, filter hash) register the same domains
        # in the same order, so the walk runs once per such pair and the later groups replay it.
        memo_key = (tg.key, tg.node_filter.hash_key)
        domains = self._node_domains.get(memo_key)
        if domains is None:
            found: list[str] = []
            for sn in self.state_nodes:
                node = sn.node
                if node is None:
                    continue  # in-flight NodeClaims
                if not tg.node_filter.matches(node.spec.taints or (), self._node_requirements(node)):
                    continue
                domain = sn.labels().get(tg.key)
                if domain is None:
                    continue
                found.append(domain)
            domains = self._node_domains[memo_key] = tuple(found)
        for domain in domains:
            tg.register(domain)  # (bumps the group's version when the domain is new)

        list_selector = tg.list_selector
        if list_selector.kind == "nothing":
            return
        index = self._pod_index
        source = getattr(self.cluster, "pods", ())
        if index is None or not index.indexes(source):
            index = self._pod_index = cluster_pod_index(self.cluster, source)
        for p in index.matching(tg.namespaces, list_selector):
            if ignored_for_topology(p):
                continue
            if _pod_uid(p) in self.excluded_pods:
                continue
            node = self._node_named(p.spec.node_name)
            if node is None:
                continue  # the Node is gone: the pod is leaked and does not count
            labels = node.metadata.labels or {}
            domain = labels.get(tg.key)
            if domain is None and tg.key == LABEL_HOSTNAME:
                domain = node.metadata.name
            if domain is None:
                continue
            if not tg.node_filter.matches(node.spec.taints or (), self._node_requirements(node)):
                continue
            tg.record(domain)

    # -- introspection (tests, explain) -------------------------------------------------------
    def groups(self) -> list[TopologyGroup]:
        """The topology groups in creation order."""
        return list(self.topology_groups.values())

    def inverse_groups(self) -> list[TopologyGroup]:
        """The inverse anti-affinity groups in creation order."""
        return list(self.inverse_topology_groups.values())

    def owned_groups(self, pod: Pod) -> list[TopologyGroup]:
        """The groups the pod owns (its own constraints)."""
        return list(self._owned.get(_pod_uid(pod), ()))


def _with_expressions(selector: Any | None, extra: Iterable[tuple[str, str]]) -> Any:
    """A copy of ``selector`` with ``key In [value]`` expressions appended."""
    from karpy.api.meta import LabelSelector, LabelSelectorRequirement

    exprs = [LabelSelectorRequirement(key=k, operator="In", values=[v]) for k, v in extra]
    if selector is None:
        return LabelSelector(match_expressions=exprs)
    return LabelSelector(
        match_labels=dict(selector.match_labels or {}),
        match_expressions=list(selector.match_expressions or ()) + exprs,
    )


def _pods_with_anti_affinity(cluster: Any) -> list[tuple[Any, Any]]:
    """(pod, Node) pairs from ``cluster.pods_with_anti_affinity()`` (cluster.go
    ForPodsWithAntiAffinity); a bare pod is paired with the Node it is bound to."""
    fn = getattr(cluster, "pods_with_anti_affinity", None)
    if fn is None:
        return []
    out: list[tuple[Any, Any]] = []
    for item in fn():
        if isinstance(item, tuple):
            pod, node = item
        else:
            pod = item
            sn = cluster.node_for_pod(pod)
            node = sn.node if sn is not None else None
        if node is None:
            continue
        out.append((pod, node))
    return out
