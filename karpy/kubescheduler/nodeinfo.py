"""NodeInfo: per-node aggregate of the pods on a node.

Mirrors pkg/scheduler/framework/types.go (NodeInfo, AddPod/RemovePod, ImageStateSummary) and
pkg/scheduler/backend/cache/node_tree.go (zone-interleaved node order).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Optional, TypeVar

from .podinfo import CPU, MEMORY, PODS, HostPortEntry, PodInfo, ResourceList, _nanos
from .types import LABEL_REGION, LABEL_ZONE


#: a PodInfo's uid (for C-level maps over a pod list)
_UID = operator.attrgetter("uid")


@dataclass(slots=True)
class ImageState:
    size: int
    num_nodes: int


@dataclass(slots=True)
class NodeInfo:
    """framework.NodeInfo.

    Like upstream's NodeInfo, ``pods_with_affinity`` and ``pods_with_required_anti_affinity`` are
    kept incrementally by ``add_pod``/``remove_pod`` (types.go AddPodInfo/RemovePod maintain
    PodsWithAffinity / PodsWithRequiredAntiAffinity) instead of being re-filtered from ``pods`` on
    every read; each holds the same pods, in the same (``pods``) order, as the filter would.
    ``name``, ``labels``, ``spec_taints`` (spec.taints as stored) and ``unschedulable`` are read from
    the Node once: a NodeInfo is rebuilt whenever the scheduler is told its Node changed
    (add_node/update_node), so it is a snapshot of the Node like upstream's cached NodeInfo.
    ``generation`` counts pod changes (types.go NodeInfo.Generation); per-node memos key on it.
    """

    node: Any
    pods: list[PodInfo] = field(default_factory=list)
    requested: ResourceList = field(default_factory=dict)
    non_zero_requested: ResourceList = field(default_factory=dict)
    used_ports: list[HostPortEntry] = field(default_factory=list)
    allocatable: ResourceList = field(default_factory=dict)
    image_states: dict[str, ImageState] = field(default_factory=dict)
    name: str = field(init=False, repr=False, compare=False, default="")
    pods_with_affinity: list[PodInfo] = field(init=False, repr=False, compare=False, default_factory=list)
    pods_with_required_anti_affinity: list[PodInfo] = field(init=False, repr=False, compare=False,
                                                            default_factory=list)
    labels: dict[str, str] = field(init=False, repr=False, compare=False, default_factory=dict)
    spec_taints: Any = field(init=False, repr=False, compare=False, default=None)
    unschedulable: bool = field(init=False, repr=False, compare=False, default=False)
    generation: int = field(init=False, repr=False, compare=False, default=0)
    memo: dict[Any, Any] = field(init=False, repr=False, compare=False, default_factory=dict)
    #: each pod's uid, in ``pods`` order (kept with it; remove_pod finds its pod with list.index)
    pod_uids: list[str] = field(init=False, repr=False, compare=False, default_factory=list)
    #: the change journal of the scheduler whose cache holds this NodeInfo (set by
    #: KubeScheduler when it caches it; performance only); None for clones and NodeInfos built
    #: elsewhere, which are never in a scheduler snapshot's tree
    journal: Optional[ChangeJournal] = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        node = self.node
        self.name = node.metadata.name
        self.labels = node.metadata.labels or {}
        spec = getattr(node, "spec", None)
        self.spec_taints = getattr(spec, "taints", None) if spec else None
        self.unschedulable = bool(getattr(spec, "unschedulable", False)) if spec is not None else False
        self.pods_with_affinity = [p for p in self.pods if p.has_affinity()]
        self.pods_with_required_anti_affinity = [p for p in self.pods if p.required_anti_affinity_terms]
        self.pod_uids = list(map(_UID, self.pods))

    @classmethod
    def from_node(cls, node: Any, pods: list[PodInfo] = ()) -> NodeInfo:  # type: ignore[assignment]
        st = getattr(node, "status", None)
        alloc = {k: _nanos(v) for k, v in ((getattr(st, "allocatable", None) or getattr(st, "capacity", None) or {}) if st else {}).items()}
        ni = cls(node=node, allocatable=alloc)
        for p in pods:
            ni.add_pod(p)
        return ni

    @property
    def taints(self) -> list[Any]:
        return list(self.spec_taints or [])

    @property
    def allowed_pod_number(self) -> int:
        """Allocatable pods as a count (nano-units / 1e9)."""
        return self.allocatable.get(PODS, 0) // 10**9

    def add_pod(self, p: PodInfo) -> None:
        self.generation += 1
        if self.journal is not None:
            self.journal.note(self)
        self.pods.append(p)
        self.pod_uids.append(p.uid)
        if p.has_affinity():
            self.pods_with_affinity.append(p)
        if p.required_anti_affinity_terms:
            self.pods_with_required_anti_affinity.append(p)
        for k, v in p.requests.items():
            self.requested[k] = self.requested.get(k, 0) + v
        for k in (CPU, MEMORY):
            self.non_zero_requested[k] = self.non_zero_requested.get(k, 0) + p.non_zero_requests.get(k, 0)
        self.used_ports.extend(p.host_ports)

    def remove_pod(self, p: PodInfo) -> bool:
        # the first pod with p's uid (types.go RemovePod), found by list.index over pod_uids
        uids = self.pod_uids
        if len(uids) != len(self.pods):  # (pods replaced without pod_uids: list them again)
            uids = self.pod_uids = list(map(_UID, self.pods))
        try:
            i = uids.index(p.uid)
        except ValueError:
            return False
        q = self.pods[i]
        self.generation += 1
        if self.journal is not None:
            self.journal.note(self)
        del self.pods[i]
        del uids[i]
        if self.pods_with_affinity:
            _remove_uid(self.pods_with_affinity, q)
        if self.pods_with_required_anti_affinity:
            _remove_uid(self.pods_with_required_anti_affinity, q)
        for k, v in q.requests.items():
            self.requested[k] = self.requested.get(k, 0) - v
        for k in (CPU, MEMORY):
            self.non_zero_requested[k] = self.non_zero_requested.get(k, 0) - q.non_zero_requests.get(k, 0)
        for hp in q.host_ports:
            self.used_ports.remove(hp)
        return True

    def clone(self) -> NodeInfo:
        return NodeInfo(self.node, list(self.pods), dict(self.requested), dict(self.non_zero_requested),
                        list(self.used_ports), self.allocatable, self.image_states)


class ChangeJournal:
    """The cached NodeInfos of one KubeScheduler whose pods changed (generation bumped). Performance
    only (not in upstream): PerNode asks for the NodeInfos changed after the position it has seen
    instead of comparing every node's generation. ``count`` is the absolute position (changes ever
    noted); ``latest`` holds each changed NodeInfo once, by id, with the position of its newest
    change, in the order of those newest changes, so a reader walks the nodes changed since its
    position (newest first) and never one change per pod. One per scheduler (no state shared
    between schedulers or threads); the entries hold the NodeInfos, so their ids stay unique while
    they are in it; a NodeInfo that leaves the cache leaves the journal (:meth:`forget`), so it
    holds the live nodes, not every node of the run; emptied past :attr:`LIMIT` nodes (``base``:
    the position of the emptying), and a reader whose position predates ``base`` falls back to
    comparing every generation."""

    __slots__ = ("latest", "count", "base")

    LIMIT = 200_000

    def __init__(self) -> None:
        self.latest: dict[int, tuple[int, NodeInfo]] = {}
        self.count = 0
        self.base = 0

    def note(self, ni: NodeInfo) -> None:
        """A change of ``ni``'s pods (its newest)."""
        self.count += 1
        latest = self.latest
        k = id(ni)
        if k in latest:
            del latest[k]  # (re-inserted last: the order of the newest changes)
        latest[k] = (self.count, ni)

    def forget(self, ni: NodeInfo) -> None:
        """``ni`` left the cache (its node deleted or replaced by an update): drop its entry, so
        the journal holds the live nodes only (a reader of a tree that had ``ni`` rebuilds anyway:
        a node removed or updated makes a new tree)."""
        hit = self.latest.get(id(ni))
        if hit is not None and hit[1] is ni:
            del self.latest[id(ni)]

    def position(self) -> int:
        """The absolute position just after the newest change; empties the journal when it is full
        (a reader whose position predates the emptying falls back to comparing generations)."""
        if len(self.latest) >= self.LIMIT:
            self.base = self.count
            self.latest.clear()
        return self.count

    def changed_since(self, seen: int) -> list[NodeInfo]:
        """The NodeInfos changed after position ``seen`` (>= ``base``), newest change first."""
        out = []
        for pos, ni in reversed(self.latest.values()):
            if pos <= seen:
                break
            out.append(ni)
        return out


def _remove_uid(lst: list[PodInfo], p: PodInfo) -> None:
    """Drop ``p`` (the very PodInfo removed from ``pods``) from a derived list, keeping order."""
    try:
        del lst[list(map(id, lst)).index(id(p))]
    except ValueError:
        pass


class Snapshot(list):  # type: ignore[type-arg]
    """cache.Snapshot's nodeInfoList (zone-interleaved node-tree order) for one scheduling cycle, plus
    upstream's derived lists ``havePodsWithAffinityNodeInfoList`` and
    ``havePodsWithRequiredAntiAffinityNodeInfoList`` (snapshot.go): the nodes that have at least one
    pod with (anti-)affinity, in snapshot order. InterPodAffinity's PreFilter/PreScore walk only
    those, exactly as upstream does; the result equals walking every node's (empty) lists.
    A plain ``list`` of NodeInfos still works everywhere (plugins fall back to filtering it)."""

    _with_affinity: Optional[list[NodeInfo]] = None
    _with_required_anti: Optional[list[NodeInfo]] = None
    #: the scheduler's node-tree list this snapshot copies (the same object while the node set,
    #: the order and every NodeInfo object are unchanged); None for a snapshot built elsewhere
    tree: Optional[list[NodeInfo]] = None
    #: the change journal of the scheduler whose NodeInfos these are (set with ``tree``)
    journal: Optional[ChangeJournal] = None

    @property
    def have_pods_with_affinity(self) -> list[NodeInfo]:
        if self._with_affinity is None:
            self._with_affinity = [ni for ni in self if ni.pods_with_affinity]
        return self._with_affinity

    @property
    def have_pods_with_required_anti_affinity(self) -> list[NodeInfo]:
        if self._with_required_anti is None:
            self._with_required_anti = [ni for ni in self if ni.pods_with_required_anti_affinity]
        return self._with_required_anti


T = TypeVar("T")


class PerNode(Generic[T]):
    """A value derived from each node of the scheduler's snapshot (from the node's labels and pods
    only), kept across cycles and recomputed only for the nodes whose pods changed.

    Not in upstream (its plugins walk every node each cycle); same values because the snapshot's
    ``tree`` is the same list only while the NodeInfo objects are (a node added, removed or
    updated rebuilds it, see KubeScheduler._snapshot), a NodeInfo's labels never change, and every
    change of its pods bumps its ``generation``: a node whose generation is unchanged has the
    value computed before. The nodes whose generation may have changed are the tree's NodeInfos
    in the scheduler's change journal (``Snapshot.journal``, every generation bump) after the position seen last, so
    an unchanged snapshot costs no walk; when the tree changes, a NodeInfo object of the previous
    tree with an unchanged generation keeps its value (the same object: the same labels and pods)."""

    __slots__ = ("tree", "nodes", "gens", "values", "pos", "index")

    def __init__(self) -> None:
        self.tree: Optional[list[NodeInfo]] = None
        self.nodes: list[NodeInfo] = []
        self.gens: list[int] = []
        self.values: list[T] = []
        self.pos = -1
        self.index: dict[int, int] = {}

    def refresh(self, nodes: list[NodeInfo], compute: Callable[[NodeInfo], T]) -> Optional[list[tuple[int, T, T]]]:
        """Bring the values up to date with ``nodes``: None when every value was (re)computed or
        taken over (``nodes`` is not the snapshot of the tree seen last, or not a scheduler
        snapshot: then nothing is kept), else (index, old value, new value) of each node whose
        pods changed, in node order."""
        journal = nodes.journal if isinstance(nodes, Snapshot) else None
        tree = nodes.tree if isinstance(nodes, Snapshot) and journal is not None else None
        pos = journal.position() if journal is not None else -1
        if tree is None or tree is not self.tree:
            old_index, old_nodes, old_gens, old_values = self.index, self.nodes, self.gens, self.values
            self.tree = tree
            self.pos = pos
            if tree is None:
                self.nodes, self.gens, self.index = [], [], {}
                self.values = [compute(ni) for ni in nodes]
                return None
            self.nodes = list(nodes)
            self.gens = gens = [ni.generation for ni in nodes]
            self.index = {id(ni): i for i, ni in enumerate(nodes)}
            if not old_index:  # (nothing to take over: every value computed)
                self.values = list(map(compute, nodes))
                return None
            values: list[T] = []
            for ni, g in zip(nodes, gens):
                j = old_index.get(id(ni))
                if j is not None and old_nodes[j] is ni and old_gens[j] == g:
                    values.append(old_values[j])
                else:
                    values.append(compute(ni))
            self.values = values
            return None
        seen = self.pos
        self.pos = pos
        if seen == pos:
            return []
        assert journal is not None  # (tree is not None)
        base = journal.base
        idxs: Any
        if seen < base:  # the journal was emptied since: compare every generation
            idxs = range(len(nodes))
        else:
            index = self.index
            found = set()
            for ni in journal.changed_since(seen):
                i = index.get(id(ni))
                if i is not None and nodes[i] is ni:
                    found.add(i)
            if not found:
                return []
            idxs = sorted(found)
        changed: list[tuple[int, T, T]] = []
        values = self.values
        gens = self.gens
        for i in idxs:
            ni = nodes[i]
            g = ni.generation
            if g != gens[i]:
                gens[i] = g
                old = values[i]
                values[i] = compute(ni)
                changed.append((i, old, values[i]))
        return changed


#: NodeInfo.memo entries beyond which the memo is cleared (every user of the memo shares the bound)
_NODE_MEMO_LIMIT = 256

#: NodeInfo.memo key of pods_by_labels (a key no plugin signature can equal)
_PODS_BY_LABELS = ("pods_by_labels",)

#: one pods_by_labels group: (labels_key, pods, non-terminating pods, one of the pods)
LabelGroup = tuple[tuple[str, frozenset[tuple[str, str]]], int, int, PodInfo]


def pods_by_labels(ni: NodeInfo) -> tuple[LabelGroup, ...]:
    """The node's pods grouped by ``labels_key`` (namespace and labels), in first-seen order: per
    group the key, how many pods, how many of them are not terminating, and the first pod.

    Performance (not in upstream): a label selector or an AffinityTerm reads nothing of a pod but
    its namespace and labels (the plugins' match memos key on ``labels_key`` for that reason), so
    a count of the pods that match is the sum of the group sizes of the groups whose pod matches;
    the replicas of a workload share their labels, so a node has a few groups for many pods. The
    groups are a function of the node's pods (PodInfos are immutable and ``labels_key`` /
    ``terminating`` are read once per PodInfo) and are kept in ``ni.memo`` with the node's
    generation, which every change of its pods bumps."""
    memo = ni.memo
    hit = memo.get(_PODS_BY_LABELS)
    gen = ni.generation
    if hit is not None and hit[0] == gen:
        groups: tuple[LabelGroup, ...] = hit[1]
        return groups
    counts: dict[Any, list[Any]] = {}
    for p in ni.pods:
        lk = p.labels_key
        c = counts.get(lk)
        if c is None:
            c = counts[lk] = [0, 0, p]
        c[0] += 1
        if not p.terminating:
            c[1] += 1
    groups = tuple([(lk, n, live, first) for lk, (n, live, first) in counts.items()])
    if len(memo) >= _NODE_MEMO_LIMIT:
        memo.clear()
    memo[_PODS_BY_LABELS] = (gen, groups)
    return groups


def have_pods_with_affinity(nodes: list[NodeInfo]) -> list[NodeInfo]:
    """The snapshot's havePodsWithAffinityNodeInfoList (computed when ``nodes`` is a plain list)."""
    if isinstance(nodes, Snapshot):
        return nodes.have_pods_with_affinity
    return [ni for ni in nodes if ni.pods_with_affinity]


def have_pods_with_required_anti_affinity(nodes: list[NodeInfo]) -> list[NodeInfo]:
    """The snapshot's havePodsWithRequiredAntiAffinityNodeInfoList."""
    if isinstance(nodes, Snapshot):
        return nodes.have_pods_with_required_anti_affinity
    return [ni for ni in nodes if ni.pods_with_required_anti_affinity]


def zone_key(node: Any) -> str:
    """utilnode.GetZoneKey: region + ":\\x00:" + zone ("" when neither label is set)."""
    labels: dict[str, str] = node.metadata.labels or {}
    region = labels.get(LABEL_REGION, "")
    zone = labels.get(LABEL_ZONE, "")
    if not region and not zone:
        return ""
    return region + ":\x00:" + zone


def node_tree_order(nodes: list[Any]) -> list[Any]:
    """node_tree.go list(): zones in first-seen order, round-robin across zones.

    ``nodes`` must be in insertion order (the cache keeps it; removal swaps with the last)."""
    zones: dict[str, list[Any]] = {}
    for n in nodes:
        zones.setdefault(zone_key(n), []).append(n)
    out: list[Any] = []
    lists = list(zones.values())
    i = 0
    while len(out) < len(nodes):
        for lst in lists:
            if i < len(lst):
                out.append(lst[i])
        i += 1
    return out


def node_image_sizes(n: Any) -> dict[str, int]:
    """A node's images: normalized name -> size in bytes (status.images)."""
    st = getattr(n, "status", None)
    imgs = getattr(st, "images", None) or [] if st is not None else []
    sizes: dict[str, int] = {}
    for img in imgs:
        for name in getattr(img, "names", None) or []:
            sizes[normalized_image_name(name)] = int(getattr(img, "size_bytes", 0) or 0)
    return sizes


def build_image_states(nodes: list[Any], sizes_of: Any = node_image_sizes) -> dict[str, dict[str, ImageState]]:
    """framework.createImageExistenceMap + getNodeImageStates: node name -> image -> state.
    ``sizes_of(node)`` gives one node's images (the scheduler passes a per-Node-object cache)."""
    counts: dict[str, int] = {}
    per_node: dict[str, dict[str, int]] = {}
    for n in nodes:
        sizes = sizes_of(n)
        per_node[n.metadata.name] = sizes
        for name in sizes:
            counts[name] = counts.get(name, 0) + 1
    return {node: {img: ImageState(sz, counts[img]) for img, sz in s.items()} for node, s in per_node.items()}


def normalized_image_name(name: str) -> str:
    """imagelocality normalizedImageName: append ':latest' when the name has no tag or digest."""
    if name.rfind(":") <= name.rfind("/"):
        name = name + ":latest"
    return name
