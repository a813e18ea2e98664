"""NodeInfo: per-node aggregate of the pods on a node.

Mirrors pkg/scheduler/framework/types.go (NodeInfo, AddPod/RemovePod, ImageStateSummary) and
pkg/scheduler/backend/cache/node_tree.go (zone-interleaved node order).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .podinfo import CPU, MEMORY, PODS, HostPortEntry, PodInfo, ResourceList, _nanos
from .types import LABEL_REGION, LABEL_ZONE


@dataclass
class ImageState:
    size: int
    num_nodes: int


@dataclass
class NodeInfo:
    """framework.NodeInfo."""

    node: Any
    pods: list[PodInfo] = field(default_factory=list)
    requested: ResourceList = field(default_factory=dict)
    non_zero_requested: ResourceList = field(default_factory=dict)
    used_ports: list[HostPortEntry] = field(default_factory=list)
    allocatable: ResourceList = field(default_factory=dict)
    image_states: dict[str, ImageState] = field(default_factory=dict)

    @classmethod
    def from_node(cls, node: Any, pods: list[PodInfo] = ()) -> NodeInfo:  # type: ignore[assignment]
        st = getattr(node, "status", None)
        alloc = {k: _nanos(v) for k, v in ((getattr(st, "allocatable", None) or getattr(st, "capacity", None) or {}) if st else {}).items()}
        ni = cls(node=node, allocatable=alloc)
        for p in pods:
            ni.add_pod(p)
        return ni

    @property
    def name(self) -> str:
        return self.node.metadata.name

    @property
    def labels(self) -> dict[str, str]:
        return self.node.metadata.labels or {}

    @property
    def taints(self) -> list[Any]:
        return list(getattr(self.node.spec, "taints", None) or []) if getattr(self.node, "spec", None) else []

    @property
    def allowed_pod_number(self) -> int:
        """Allocatable pods as a count (nano-units / 1e9)."""
        return self.allocatable.get(PODS, 0) // 10**9

    @property
    def pods_with_affinity(self) -> list[PodInfo]:
        return [p for p in self.pods if p.has_affinity()]

    @property
    def pods_with_required_anti_affinity(self) -> list[PodInfo]:
        return [p for p in self.pods if p.required_anti_affinity_terms]

    def add_pod(self, p: PodInfo) -> None:
        self.pods.append(p)
        for k, v in p.requests.items():
            self.requested[k] = self.requested.get(k, 0) + v
        for k in (CPU, MEMORY):
            self.non_zero_requested[k] = self.non_zero_requested.get(k, 0) + p.non_zero_requests.get(k, 0)
        self.used_ports.extend(p.host_ports)

    def remove_pod(self, p: PodInfo) -> bool:
        for i, q in enumerate(self.pods):
            if q.uid == p.uid:
                del self.pods[i]
                for k, v in q.requests.items():
                    self.requested[k] = self.requested.get(k, 0) - v
                for k in (CPU, MEMORY):
                    self.non_zero_requested[k] = self.non_zero_requested.get(k, 0) - q.non_zero_requests.get(k, 0)
                for hp in q.host_ports:
                    self.used_ports.remove(hp)
                return True
        return False

    def clone(self) -> NodeInfo:
        return NodeInfo(self.node, list(self.pods), dict(self.requested), dict(self.non_zero_requested),
                        list(self.used_ports), self.allocatable, self.image_states)


def zone_key(node: Any) -> str:
    """utilnode.GetZoneKey: region + ":\\x00:" + zone ("" when neither label is set)."""
    labels = node.metadata.labels or {}
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


def build_image_states(nodes: list[Any]) -> dict[str, dict[str, ImageState]]:
    """framework.createImageExistenceMap + getNodeImageStates: node name -> image -> state."""
    counts: dict[str, int] = {}
    per_node: dict[str, dict[str, int]] = {}
    for n in nodes:
        st = getattr(n, "status", None)
        imgs = getattr(st, "images", None) or [] if st is not None else []
        sizes: dict[str, int] = {}
        for img in imgs:
            for name in getattr(img, "names", None) or []:
                sizes[normalized_image_name(name)] = int(getattr(img, "size_bytes", 0) or 0)
        per_node[n.metadata.name] = sizes
        for name in sizes:
            counts[name] = counts.get(name, 0) + 1
    return {node: {img: ImageState(sz, counts[img]) for img, sz in s.items()} for node, s in per_node.items()}


def normalized_image_name(name: str) -> str:
    """imagelocality normalizedImageName: append ':latest' when the name has no tag or digest."""
    if name.rfind(":") <= name.rfind("/"):
        name = name + ":latest"
    return name
