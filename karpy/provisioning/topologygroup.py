"""One tracked topology: pod counts per domain for a selector, plus the domain-choice rules.

Mirrors pkg/controllers/provisioning/scheduling/topologygroup.go (TopologyGroup, NewTopologyGroup,
Get, Record, Counts, Register, Unregister, owners, Hash, nextDomainTopologySpread,
domainMinCount, nextDomainAffinity, anyCompatiblePodDomain, nextDomainAntiAffinity, selects).

Determinism: upstream iterates Go maps where it picks one domain. karpy's rules:
- topology spread (``nextDomainTopologySpread``, topologygroup.go:229-321): among the valid domains
  with the smallest count, the smallest domain name wins;
- affinity bootstrap (``nextDomainAffinity``, topologygroup.go:369-386): the first domain in
  sorted-name order of podDomains ∩ nodeDomains, then the first in sorted order of podDomains.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from karpy.provisioning.topologydomaingroup import NODE_INCLUSION_POLICY_HONOR, NODE_INCLUSION_POLICY_IGNORE, TopologyDomainGroup
from karpy.provisioning.topologynodefilter import ZERO_NODE_FILTER, TopologyNodeFilter, make_topology_node_filter
from karpy.scheduling.labels import LABEL_HOSTNAME, is_qualified_name, is_valid_label_value
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = [
    "MAX_INT32",
    "CompiledSelector",
    "TopologyGroup",
    "TopologyType",
    "compile_selector",
    "selector_hash_key",
]

MAX_INT32 = 2**31 - 1
_EMPTY: frozenset[str] = frozenset()


class TopologyType(enum.IntEnum):
    """topologygroup.go TopologyType (``str()`` gives the upstream String())."""

    SPREAD = 0
    POD_AFFINITY = 1
    POD_ANTI_AFFINITY = 2

    def __str__(self) -> str:
        return _TYPE_NAMES[self]


_TYPE_NAMES = {
    TopologyType.SPREAD: "topology spread",
    TopologyType.POD_AFFINITY: "pod affinity",
    TopologyType.POD_ANTI_AFFINITY: "pod anti-affinity",
}


# --- label selectors ---------------------------------------------------------------------------
class CompiledSelector:
    """A parsed metav1.LabelSelector (k8s.io/apimachinery labels.Selector).

    ``kind`` is ``"everything"``, ``"nothing"`` or ``"match"``; ``checks`` are
    ``(key, operator, values)`` with operator one of In/NotIn/Exists/DoesNotExist.
    """

    __slots__ = ("kind", "checks")

    def __init__(self, kind: str, checks: tuple[tuple[str, str, frozenset[str]], ...] = ()) -> None:
        self.kind = kind
        self.checks = checks

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.kind == "everything":
            return True
        if self.kind == "nothing":
            return False
        labels = labels or {}
        for key, op, values in self.checks:
            if op == "In":
                v = labels.get(key)
                if v is None or v not in values:
                    return False
            elif op == "NotIn":
                v = labels.get(key)
                if v is not None and v in values:
                    return False
            elif op == "Exists":
                if key not in labels:
                    return False
            elif key in labels:  # DoesNotExist
                return False
        return True

    def __repr__(self) -> str:
        return f"CompiledSelector({self.kind}, {self.checks})"


_EVERYTHING = CompiledSelector("everything")
_NOTHING = CompiledSelector("nothing")


def compile_selector(selector: Any | None, nil_matches: bool = False) -> CompiledSelector:
    """``metav1.LabelSelectorAsSelector`` (``nil_matches=False``: nil -> Nothing, as for
    ``selects``) or ``TopologyListOptions`` (``nil_matches=True``: nil -> Everything, the listing
    quirk of topology.go:576-596). Empty selector -> Everything; an invalid key, value or operator
    arity -> Nothing (both upstream paths turn a parse error into labels.Nothing())."""
    if selector is None:
        return _EVERYTHING if nil_matches else _NOTHING
    checks: list[tuple[str, str, frozenset[str]]] = []
    for key, value in (selector.match_labels or {}).items():
        if is_qualified_name(key) or is_valid_label_value(value):
            return _NOTHING
        checks.append((key, "In", frozenset((value,))))
    for expr in selector.match_expressions or ():
        op = expr.operator
        values = list(expr.values or ())
        if is_qualified_name(expr.key):
            return _NOTHING
        if op in ("In", "NotIn"):
            if not values:
                return _NOTHING
        elif op in ("Exists", "DoesNotExist"):
            if values:
                return _NOTHING
        else:
            return _NOTHING
        for v in values:
            if is_valid_label_value(v):
                return _NOTHING
        checks.append((expr.key, op, frozenset(values)))
    if not checks:
        return _EVERYTHING
    return CompiledSelector("match", tuple(checks))


def selector_hash_key(selector: Any | None) -> Any:
    """topologygroup.go hashSelector: expressions as a set (values as sets), plus matchLabels."""
    if selector is None:
        return None
    return (
        frozenset((e.key, e.operator, frozenset(e.values or ())) for e in selector.match_expressions or ()),
        frozenset((selector.match_labels or {}).items()),
    )


# --- the group ---------------------------------------------------------------------------------
def group_node_filter(topology_type: TopologyType, pod: Pod, taint_policy: str | None,
                      affinity_policy: str | None) -> TopologyNodeFilter:
    """The node filter of NewTopologyGroup (topologygroup.go): MakeTopologyNodeFilter for spread
    constraints (policies defaulted to Ignore / Honor), none for pod (anti-)affinity."""
    if topology_type == TopologyType.SPREAD:
        return make_topology_node_filter(
            pod,
            taint_policy or NODE_INCLUSION_POLICY_IGNORE,
            affinity_policy or NODE_INCLUSION_POLICY_HONOR,
        )
    return ZERO_NODE_FILTER


def group_hash(topology_type: TopologyType, topology_key: str, namespaces: frozenset[str], label_selector: Any | None,
               max_skew: int, node_filter: TopologyNodeFilter) -> Any:
    """topologygroup.go Hash of the group NewTopologyGroup would build from these arguments
    (minDomains is not part of the hash); :attr:`TopologyGroup.hash_key`."""
    return (
        topology_key,
        int(topology_type),
        namespaces,
        max_skew,
        node_filter.hash_key,
        selector_hash_key(label_selector),
    )


class TopologyGroup:
    """Mirrors topologygroup.go TopologyGroup.

    ``domains`` (domain -> count) and ``empty_domains`` are plain dict/set. ``selects`` results
    are cached per pod UID (labels and namespace of a pod do not change during a Solve).
    """

    __slots__ = (
        "key",
        "type",
        "max_skew",
        "min_domains",
        "namespaces",
        "raw_selector",
        "selector",
        "list_selector",
        "node_filter",
        "owners",
        "domains",
        "empty_domains",
        "occupied",
        "hash_key",
        "_selects_cache",
        "_dne",
        "exists",
        "_is_hostname",
        "_in_reqs",
        "_spread_memo",
        "_spread_memo_version",
        "version",
    )

    def __init__(
        self,
        topology_type: TopologyType,
        topology_key: str,
        pod: Pod,
        namespaces: Iterable[str],
        label_selector: Any | None,
        max_skew: int,
        min_domains: int | None,
        taint_policy: str | None,
        affinity_policy: str | None,
        domain_group: TopologyDomainGroup | None,
        node_filter: TopologyNodeFilter | None = None,
    ) -> None:
        """Mirrors topologygroup.go NewTopologyGroup. ``node_filter``: the one
        :func:`group_node_filter` returns for these arguments, when the caller already built it."""
        if node_filter is None:
            node_filter = group_node_filter(topology_type, pod, taint_policy, affinity_policy)
        self.key = topology_key
        self.type = topology_type
        self.max_skew = max_skew
        self.min_domains = min_domains
        self.namespaces: frozenset[str] = frozenset(namespaces)
        self.raw_selector = label_selector
        self.selector = compile_selector(label_selector)
        self.list_selector = compile_selector(label_selector, nil_matches=True)
        self.node_filter: TopologyNodeFilter = node_filter
        self.owners: set[str] = set()
        self.domains: dict[str, int] = {}
        self.empty_domains: set[str] = set()
        #: domains with a count > 0 (derived: ``{d for d, c in domains.items() if c > 0}``), kept so
        #: the scheduler can reject in-flight claims blocked by hostname anti-affinity with set
        #: operations instead of one ``next_domain`` call per claim (see Scheduler._add)
        self.occupied: set[str] = set()
        if domain_group is not None:
            for domain in domain_group.tolerated_domains(pod.spec.tolerations or (), node_filter.taint_policy):
                self.domains[domain] = 0
                self.empty_domains.add(domain)
        self.hash_key = group_hash(topology_type, topology_key, self.namespaces, label_selector, max_skew, node_filter)
        self._selects_cache: dict[str, bool] = {}
        self._dne = Requirement(topology_key, "DoesNotExist")
        #: ``Requirements.get`` of an undefined key (shared, immutable)
        self.exists = Requirement(topology_key, "Exists")
        self._is_hostname = topology_key == LABEL_HOSTNAME
        #: domain -> ``Requirement(key, In, [domain])`` (immutable, shared): see _in
        self._in_reqs: dict[str, Requirement] = {}
        #: bumped whenever ``domains`` changes (record / register / unregister): see next_domain
        self.version = 0
        #: (id(podDomains), id(nodeDomains), selects pod) -> (podDomains, nodeDomains, answer), for
        #: ``version == _spread_memo_version`` only: see next_domain
        self._spread_memo: dict[tuple[int, int, bool], tuple[Requirement, Requirement, Requirement]] = {}
        self._spread_memo_version = -1

    def __repr__(self) -> str:
        return f"TopologyGroup({self.type!s}, key={self.key}, domains={self.domains})"

    # -- bookkeeping ------------------------------------------------------------------------
    def record(self, *domains: str) -> None:
        """Mirrors topologygroup.go Record."""
        counts = self.domains
        empty = self.empty_domains
        for domain in domains:
            counts[domain] = counts.get(domain, 0) + 1
            empty.discard(domain)
        self.occupied.update(domains)
        self.version += 1

    def register(self, *domains: str) -> None:
        """Mirrors topologygroup.go Register."""
        for domain in domains:
            if domain not in self.domains:
                self.domains[domain] = 0
                self.empty_domains.add(domain)
                self.version += 1

    def unregister(self, *domains: str) -> None:
        """Mirrors topologygroup.go Unregister."""
        for domain in domains:
            self.domains.pop(domain, None)
            self.empty_domains.discard(domain)
            self.occupied.discard(domain)
        self.version += 1

    def add_owner(self, uid: str) -> None:
        self.owners.add(uid)

    def remove_owner(self, uid: str) -> None:
        self.owners.discard(uid)

    def is_owned_by(self, uid: str) -> bool:
        return uid in self.owners

    def selects(self, pod: Pod) -> bool:
        """Mirrors topologygroup.go selects: namespace in the group's namespaces and selector match."""
        uid = pod.metadata.uid
        if uid:
            hit = self._selects_cache.get(uid)
            if hit is not None:
                return hit
        result = pod.metadata.namespace in self.namespaces and self.selector.matches(pod.metadata.labels)
        if uid:
            self._selects_cache[uid] = result
        return result

    def counts(
        self, pod: Pod, taints: Sequence[Any], requirements: Requirements, allow_undefined: frozenset[str] = _EMPTY
    ) -> bool:
        """Mirrors topologygroup.go Counts."""
        return self.selects(pod) and self.node_filter.matches(taints, requirements, allow_undefined)

    # -- domain choice ----------------------------------------------------------------------
    def get(self, pod: Pod, pod_domains: Requirement, node_domains: Requirement) -> tuple[Requirement, set[str]]:
        """Mirrors topologygroup.go Get: the narrowed requirement and the set of valid domains."""
        if self.type == TopologyType.SPREAD:
            return self.next_domain_topology_spread(pod, pod_domains, node_domains)
        if self.type == TopologyType.POD_AFFINITY:
            req = self.next_domain_affinity(pod, pod_domains, node_domains)
        else:
            req = self.next_domain_anti_affinity(pod_domains, node_domains)
        return req, set(req.values)

    def next_domain(self, pod: Pod, pod_domains: Requirement, node_domains: Requirement) -> Requirement:
        """:meth:`get` without the valid-domain set (the hot path of ``AddRequirements``)."""
        ttype = self.type
        if ttype != TopologyType.SPREAD:
            if ttype == TopologyType.POD_ANTI_AFFINITY:
                return self.next_domain_anti_affinity(pod_domains, node_domains)
            return self.next_domain_affinity(pod, pod_domains, node_domains)
        if self._is_hostname and len(node_domains.values) == 1:
            # the hostname case is cheap, and node_domains is per NodeClaim: not memoised
            return self.next_domain_topology_spread(pod, pod_domains, node_domains)[0]
        # Not in upstream (nextDomainTopologySpread scans the counts on every call); same result
        # because the answer is a pure function of the counts, which change only through record /
        # register / unregister (each bumps ``version``), of the two (immutable) Requirements and
        # of whether the group selects the pod: Solve asks it of every in-flight NodeClaim a pod
        # is tried on, with the same Requirement objects (most often both ``exists``) between two
        # records. The entry holds both Requirements, so their ids cannot be reused while cached.
        memo = self._spread_memo
        if self._spread_memo_version != self.version:
            memo.clear()
            self._spread_memo_version = self.version
        key = (id(pod_domains), id(node_domains), self.selects(pod))
        hit = memo.get(key)
        if hit is not None and hit[0] is pod_domains and hit[1] is node_domains:
            return hit[2]
        out = self.next_domain_topology_spread(pod, pod_domains, node_domains)[0]
        memo[key] = (pod_domains, node_domains, out)
        return out

    def _in(self, domain: str) -> Requirement:
        """``Requirement(key, In, [domain])``, one shared object per domain (Requirements are
        immutable; sharing lets the identity memos downstream hit across tries and records)."""
        r = self._in_reqs.get(domain)
        if r is None:
            r = self._in_reqs[domain] = Requirement(self.key, "In", (domain,))
        return r

    def next_domain_topology_spread(
        self, pod: Pod, pod_domains: Requirement, node_domains: Requirement
    ) -> tuple[Requirement, set[str]]:
        """Mirrors topologygroup.go nextDomainTopologySpread (tie-break: smallest domain name)."""
        min_count = self.domain_min_count(pod_domains)
        self_selecting = 1 if self.selects(pod) else 0
        counts = self.domains
        max_skew = self.max_skew
        valid: set[str] = set()

        # hostname special case: new NodeClaims' domains are registered only when added
        if self._is_hostname and len(node_domains.values) == 1:
            (host,) = node_domains.values
            count = counts.get(host, 0) + self_selecting
            if count <= max_skew:
                valid.add(host)
                return self._in(host), valid
            return self._dne, valid

        if not node_domains.complement and node_domains.values:  # Operator() == In
            candidates: Iterable[str] = [d for d in node_domains.values if d in counts]
        else:
            has = node_domains.has
            candidates = [d for d in counts if has(d)]
        best: str | None = None
        best_count = 0
        for domain in candidates:
            count = counts[domain] + self_selecting
            if count - min_count <= max_skew:
                valid.add(domain)
                if best is None or count < best_count or (count == best_count and domain < best):
                    best = domain
                    best_count = count
        if best is None:
            return self._dne, valid
        return self._in(best), valid

    def domain_min_count(self, pod_domains: Requirement) -> int:
        """Mirrors topologygroup.go domainMinCount (hostname: 0; minDomains not met: 0)."""
        if self._is_hostname:
            return 0
        lowest = MAX_INT32
        supported = 0
        if _is_plain_exists(pod_domains):
            supported = len(self.domains)
            if supported:
                lowest = min(self.domains.values())
        else:
            has = pod_domains.has
            for domain, count in self.domains.items():
                if has(domain):
                    supported += 1
                    if count < lowest:
                        lowest = count
        if self.min_domains is not None and supported < self.min_domains:
            lowest = 0
        return lowest

    def next_domain_affinity(self, pod: Pod, pod_domains: Requirement, node_domains: Requirement) -> Requirement:
        """Mirrors topologygroup.go nextDomainAffinity (bootstrap picks sorted-first domains)."""
        counts = self.domains
        if self._is_hostname and len(node_domains.values) == 1:
            (host,) = node_domains.values
            if not pod_domains.has(host):
                return self._dne
            if counts.get(host, 0) > 0:
                return Requirement(self.key, "In", (host,))
            if self.selects(pod) and (
                len(counts) == len(self.empty_domains) or not self.any_compatible_pod_domain(pod_domains)
            ):
                return Requirement(self.key, "In", (host,))
            return self._dne

        options: set[str] = set()
        if not node_domains.complement and node_domains.values:  # Operator() == In
            for domain in node_domains.values:
                count = counts.get(domain)
                if count and pod_domains.has(domain):
                    options.add(domain)
        else:
            for domain, count in counts.items():
                if count > 0 and pod_domains.has(domain) and node_domains.has(domain):
                    options.add(domain)
        if options:
            return Requirement(self.key, "In", options)

        if self.selects(pod) and (
            len(counts) == len(self.empty_domains) or not self.any_compatible_pod_domain(pod_domains)
        ):
            ordered = sorted(counts)
            intersected = pod_domains.intersection(node_domains)
            for domain in ordered:
                if intersected.has(domain):
                    options.add(domain)
                    break
            for domain in ordered:
                if pod_domains.has(domain):
                    options.add(domain)
                    break
        if options:
            return Requirement(self.key, "In", options)
        return self._dne

    def any_compatible_pod_domain(self, pod_domains: Requirement) -> bool:
        """Mirrors topologygroup.go anyCompatiblePodDomain."""
        if _is_plain_exists(pod_domains):
            return len(self.domains) != len(self.empty_domains)
        has = pod_domains.has
        for domain, count in self.domains.items():
            if count > 0 and has(domain):
                return True
        return False

    def next_domain_anti_affinity(self, pod_domains: Requirement, node_domains: Requirement) -> Requirement:
        """Mirrors topologygroup.go nextDomainAntiAffinity."""
        if self._is_hostname and len(node_domains.values) == 1:
            (host,) = node_domains.values
            if self.domains.get(host, 0) == 0:
                return Requirement(self.key, "In", (host,))
            return self._dne
        empty = self.empty_domains
        options: list[str] = []
        if not node_domains.complement and node_domains.values and len(node_domains.values) < len(empty):
            for domain in node_domains.values:
                if domain in empty and pod_domains.has(domain):
                    options.append(domain)
        else:
            for domain in empty:
                if node_domains.has(domain) and pod_domains.has(domain):
                    options.append(domain)
        if options:
            return Requirement(self.key, "In", options)
        return self._dne


def _is_plain_exists(r: Requirement) -> bool:
    """``Exists`` with no exclusions and no bounds: ``has`` is always true."""
    return r.complement and not r.values and r.gte is None and r.lte is None
