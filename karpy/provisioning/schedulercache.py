"""Keeps what NewScheduler builds on every provisioning pass (the instance types, their index, the template
pre-filter, the reserved capacity, the nodes' label requirements) while the cloud provider's key of each
NodePool's types is unchanged -- the same values as building them, pinned by
tests/provisioning/test_scheduler_cache.py (why: docs/internals/upstream-mirrors.md#schedulercache).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from karpy.provisioning.poddata import SpecMemo
from karpy.scheduling.requirements import Requirements

__all__ = ["SchedulerCache", "pass_key"]


def _bounded_put(table: OrderedDict[Any, Any], key: Any, value: Any, size: int) -> Any:
    table[key] = value
    table.move_to_end(key)
    while len(table) > size:
        table.popitem(last=False)
    return value


class SchedulerCache:
    """Instance types per NodePool, the instance-type index, the template pre-filter and the
    reserved capacity, kept across provisioning passes (module doc). ``hits`` / ``misses`` count
    the instance-type lookups (for tests and benchmarks)."""

    ENTRIES = 8

    def __init__(self) -> None:
        #: NodePool name -> (provider key, the types listed for it)
        self._types: dict[str, tuple[Hashable, list[Any]]] = {}
        self._index: OrderedDict[Hashable, Any] = OrderedDict()
        self._templates: OrderedDict[Hashable, tuple[list[Any], str | None]] = OrderedDict()
        self._reserved: OrderedDict[Hashable, dict[str, int]] = OrderedDict()
        self._labels: OrderedDict[tuple[tuple[str, str], ...], Requirements] = OrderedDict()
        #: PodData's spec-derived values per pod spec, across passes (a pod is solved again in
        #: every pass and consolidation simulation while it is pending or movable)
        self.specs = SpecMemo()
        self.hits = 0
        self.misses = 0

    # -- instance types -------------------------------------------------------------------------
    def instance_types(self, cloud_provider: Any, nodepool: Any,
                       lookup: Callable[[Any], Sequence[Any]]) -> tuple[list[Any], Hashable | None]:
        """``(types, key)`` of the NodePool: the cached list when the provider's key is the one it
        was listed under, else ``lookup(nodepool)`` (which may raise; nothing is cached then).
        ``key`` is None when the provider has none (nothing derived is cached either)."""
        key_of = getattr(cloud_provider, "instance_types_key", None)
        key: Hashable | None = None
        if callable(key_of):
            try:
                key = key_of(nodepool)
            except Exception:  # noqa: BLE001 - the lookup below raises the real error
                key = None
        name = nodepool.metadata.name
        if key is not None:
            hit = self._types.get(name)
            if hit is not None and hit[0] == key:
                self.hits += 1
                return hit[1], key
        its = list(lookup(nodepool))
        self.misses += 1
        if key is not None:
            self._types[name] = (key, its)
        else:
            self._types.pop(name, None)
        return its, key

    # -- derived parts --------------------------------------------------------------------------
    def index(self, key: Hashable | None, build: Callable[[], Any]) -> Any:
        """The pass's InstanceTypeIndex (instancetypeindex.py): reused while every NodePool's types have
        the same keys (``key``: :func:`pass_key` with the well-known labels; None: built anew)."""
        if key is None:
            return build()
        hit = self._index.get(key)
        if hit is None:
            hit = _bounded_put(self._index, key, build(), self.ENTRIES)
        return hit

    @staticmethod
    def _template_key(types_key: Hashable, nodepool: Any, best_effort: bool,
                      well_known: frozenset[str]) -> Hashable:
        """Every input of the template pre-filter besides the types: the NodePool's template (its
        requirements, labels, taints; by value), the minValues policy and the well-known labels."""
        return (types_key, nodepool.metadata.name, nodepool.spec.template.model_dump_json(), best_effort, well_known)

    def template_filter(self, types_key: Hashable | None, nodepool: Any, best_effort: bool,
                        well_known: frozenset[str],
                        compute: Callable[[], tuple[list[Any], str | None]]) -> tuple[list[Any], str | None]:
        """The template pre-filter's (remaining types, error text) for the NodePool (a fresh list
        each call: templates own theirs)."""
        if types_key is None:
            return compute()
        key = self._template_key(types_key, nodepool, best_effort, well_known)
        hit = self._templates.get(key)
        if hit is None:
            hit = _bounded_put(self._templates, key, compute(), self.ENTRIES * 4)
        return list(hit[0]), hit[1]

    def reserved_capacity(self, key: Hashable | None, compute: Callable[[], dict[str, int]]) -> dict[str, int]:
        """ReservationManager's starting capacity per reservation id (a fresh dict each call: the
        manager spends it). The reservations' counts are part of each type's offerings, so of the
        provider keys (``key``: :func:`pass_key`; None: computed anew)."""
        if key is None:
            return compute()
        hit = self._reserved.get(key)
        if hit is None:
            hit = _bounded_put(self._reserved, key, compute(), self.ENTRIES)
        return dict(hit)

    # -- nodes ----------------------------------------------------------------------------------
    #: label sets kept by :meth:`label_requirements` (a node's labels, of existing and in-flight
    #: nodes; the least recently used set is dropped beyond this)
    LABEL_SETS = 16384

    def label_requirements(self, labels: Mapping[str, str]) -> Requirements:
        """``Requirements.from_labels(labels)`` (NewLabelRequirements), kept by the labels' content
        across passes: every pass builds an ExistingNode and the topology's node filter input for
        every node, and a node's labels rarely change. Read-only, like the instance types: callers
        that narrow it (ExistingNode) copy it first."""
        key = tuple(labels.items())
        hit = self._labels.get(key)
        if hit is None:
            hit = Requirements.from_labels(labels)
            _bounded_put(self._labels, key, hit, self.LABEL_SETS)
        else:
            self._labels.move_to_end(key)
        return hit

    def clear(self) -> None:
        self.specs = SpecMemo()
        self._labels.clear()
        self._types.clear()
        self._index.clear()
        self._templates.clear()
        self._reserved.clear()


def pass_key(instance_type_keys: Mapping[str, Hashable | None], *extra: Hashable) -> Hashable | None:
    """The pass-level key of the parts built over every NodePool's types: each pool's name and
    provider key, in the pass's pool order, and ``extra``; None when a pool has no key."""
    if any(k is None for k in instance_type_keys.values()):
        return None
    return (tuple(instance_type_keys.items()), *extra)
