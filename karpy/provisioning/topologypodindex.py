"""The cluster's pods grouped by namespace and labels, for Topology's countDomains (topology.go
countDomains lists every pod per group; the same pods in the same order come from here, once per
label set). The equivalence is pinned by tests/provisioning/test_cross_pass_equivalence.py and
test_pass_build_equivalence.py."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = ["PodIndex", "cluster_pod_index"]


def cluster_pod_index(cluster: Any, pods: Sequence[Pod]) -> PodIndex:
    """The :class:`PodIndex` of ``pods`` (the cluster's): built here, or -- for a snapshot whose
    pods nothing edits in place (ClusterState.from_objects ``scan_pods``, which sets
    ``shares_pod_index``) -- the one an earlier Topology of the same snapshot built, else one built
    from the previous snapshot's index (``pod_index_seed``) and kept on the snapshot."""
    if not getattr(cluster, "shares_pod_index", False):
        return PodIndex(pods)
    index = cluster.pod_index
    if isinstance(index, PodIndex) and index.indexes(pods):
        return index
    seed = cluster.pod_index_seed if cluster.pod_index_seed is not None else index
    index = PodIndex(pods, seed if isinstance(seed, PodIndex) else None)
    cluster.pod_index = index
    cluster.pod_index_seed = None  # (its entries live on in the new index where they still apply)
    return index


class PodIndex:
    """The cluster's pods grouped by (namespace, labels) for :meth:`Topology._count_domains`.

    Upstream (topology.go countDomains) lists the pods of the group's namespaces matching its
    selector on every call; pods of one controller share their labels, so a selector is evaluated
    once per distinct label set instead of once per pod. :meth:`matching` answers exactly what the
    list comprehension over ``cluster.pods`` followed by a stable sort on ``spec.nodeName`` did:
    the same pods, in the same order (node name, then position in ``cluster.pods``), so every
    group's domain counts -- and their insertion order -- are unchanged. Built from the list it
    was given (:meth:`indexes` notices a different or resized list).

    ``seed``: the index of an earlier snapshot of the same cluster whose pods nothing edits in
    place (see :func:`cluster_pod_index`). Not in upstream; same result because what a pod is
    filed under -- its namespace and labels -- is read from the pod object alone, so a pod that
    is the same object as in the seed is filed as the seed filed it (the seed holds its pods, so
    no id is reused while it is compared); the positions are this list's.
    """

    __slots__ = ("_source", "_size", "_by_namespace", "_entries")

    def __init__(self, pods: Sequence[Pod], seed: PodIndex | None = None) -> None:
        self._source = pods
        self._size = len(pods)
        #: namespace -> labels key -> (a representative labels mapping, [(position, pod)])
        self._by_namespace: dict[str, dict[Any, tuple[Any, list[tuple[int, Any]]]]] = {}
        #: id(pod) -> (the pod, its (namespace, labels key), its labels): what each pod was filed
        #: under, for an index built from this one (seed)
        entries: dict[int, tuple[Any, tuple[str, Any], Any]] = {}
        self._entries = entries
        previous = seed._entries if seed is not None else {}
        #: equal keys share one object (hashing a key then reads memory in use)
        canonical: dict[tuple[str, Any], tuple[str, Any]] = {}
        # one flat pass keyed by (namespace, labels), split by namespace after: the same buckets,
        # each in the order its first pod came, holding its pods in their order
        flat: dict[tuple[str, Any], tuple[Any, list[tuple[int, Any]]]] = {}
        for i, p in enumerate(pods):
            entry = previous.get(id(p))
            if entry is None or entry[0] is not p:
                meta = p.metadata
                labels = meta.labels
                key = (meta.namespace, None if labels is None else tuple(labels.items()))
                entry = (p, canonical.setdefault(key, key), labels)
            entries[id(p)] = entry
            bucket = flat.get(entry[1])
            if bucket is None:
                bucket = flat[entry[1]] = (entry[2], [])
            bucket[1].append((i, p))
        by_namespace = self._by_namespace
        for (namespace, labels_key), bucket in flat.items():
            buckets = by_namespace.get(namespace)
            if buckets is None:
                buckets = by_namespace[namespace] = {}
            buckets[labels_key] = bucket

    def indexes(self, pods: Sequence[Pod]) -> bool:
        """Whether this index was built from ``pods`` (the same list, of the same length)."""
        return pods is self._source and len(pods) == self._size

    def matching(self, namespaces: Iterable[str], selector: Any) -> list[Any]:
        """The pods in ``namespaces`` whose labels ``selector`` matches, ordered by
        ``spec.nodeName`` (empty first), then by their position in the indexed list."""
        hits: list[tuple[str, int, Any]] = []
        for ns in namespaces:
            for labels, members in self._by_namespace.get(ns, {}).values():
                if selector.matches(labels):
                    hits.extend((p.spec.node_name or "", i, p) for i, p in members)
        hits.sort(key=lambda h: (h[0], h[1]))
        return [h[2] for h in hits]
