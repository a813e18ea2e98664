"""A memo of topology.go buildDomainGroups across Solves and simulations: the same groups the
builder it is given (:func:`karpy.provisioning.topology.build_domain_groups`) builds, pinned by
tests/provisioning/test_topology_equivalence.py. The process's memo is
``karpy.provisioning.topology.SHARED_DOMAIN_GROUPS``."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from karpy.provisioning.topologydomaingroup import TopologyDomainGroup

__all__ = ["DomainGroupCache"]

#: NodePools and their instance types -> the domain groups (topology.build_domain_groups)
DomainGroupBuilder = Callable[[Sequence[Any], Mapping[str, Sequence[Any]]], dict[str, TopologyDomainGroup]]


class DomainGroupCache:
    """Memo of :func:`build_domain_groups` across Solves, and across simulations of a process.

    Upstream rebuilds the domain groups in every NewTopology; their inputs -- each NodePool's
    template (requirements, labels, taints) and its instance types' requirements -- rarely change
    between provisioning passes, and the cloud provider hands out the same requirement objects
    while its catalogue is unchanged (the AWS provider's prototypes, shared by every simulation of
    a process; the fake catalogue). The key is the pools' templates by value and the instance
    types' requirement objects by identity (the entry holds them, so an id cannot be reused while
    it lives), or the cloud provider's key of a pool's types where it gave one; the groups are
    only read after they are built (Topology never inserts into them), so sharing them between
    Solves, simulations and threads is safe. Holds the last
    :data:`ENTRIES` answers; every Provisioner uses :data:`SHARED_DOMAIN_GROUPS` unless it is given
    its own (a warm ``karpy.simulate`` of the bundled example spent ~24 ms, an eighth of the run,
    building the groups of 1,246 instance types it built the same way in the run before).
    """

    ENTRIES = 4

    def __init__(self, build: DomainGroupBuilder) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._entries: dict[tuple[Any, ...], tuple[list[Any], dict[str, TopologyDomainGroup]]] = {}

    #: False: the instance types are keyed by their requirement objects even where the provider keyed them
    use_provider_keys = True

    def get(self, nodepools: Sequence[Any], instance_types: Mapping[str, Sequence[Any]],
            provider_keys: Mapping[str, Hashable | None] | None = None) -> dict[str, TopologyDomainGroup]:
        """``provider_keys``: NodePool name -> the cloud provider's key of its types (equal keys:
        equal types, as the SchedulerCache reads them), standing for the types where not None."""
        index = {np.metadata.name: np for np in nodepools}
        refs: list[Any] = []
        key: list[Any] = []
        keyed = provider_keys if provider_keys is not None and self.use_provider_keys else {}
        for np_name, its in instance_types.items():
            np = index.get(np_name)
            template = np.spec.template.model_dump_json() if np is not None else None
            provider_key = keyed.get(np_name)
            if provider_key is not None:
                key.append((np_name, template, "provider", provider_key))
                continue
            reqs = [it.requirements for it in its]
            refs.extend(reqs)
            key.append((np_name, template, tuple(map(id, reqs))))
        k = tuple(key)
        with self._lock:
            hit = self._entries.get(k)
        if hit is not None:
            return hit[1]
        groups = self._build(nodepools, instance_types)  # outside the lock: equal for equal keys
        with self._lock:
            hit = self._entries.get(k)
            if hit is not None:
                return hit[1]  # another thread built it meanwhile: every caller shares one answer
            while len(self._entries) >= self.ENTRIES:
                self._entries.pop(next(iter(self._entries)))
            self._entries[k] = (refs, groups)
        return groups

    def clear(self) -> None:
        """Drop every entry (tests; a host that wants the memory back)."""
        with self._lock:
            self._entries.clear()
