"""KubeScheduler: the cache, queue, nominator and scheduling cycle driven by explicit state feeds.

Mirrors pkg/scheduler/schedule_one.go (ScheduleOne, handleSchedulingFailure), pkg/scheduler/eventhandlers.go
(node/pod events → MoveAllToActiveOrBackoffQueue with derived node update events),
pkg/scheduler/backend/cache (assume on schedule) and backend/queue/nominator.go.
Binding is instantaneous: a Bound result means the scheduler has assumed the pod on the node; the
simulation then writes spec.nodeName and may call ``update_pod`` (idempotent).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from karpy.featuregates import DEFAULT_KUBERNETES_VERSION, resolve_kubernetes

from .framework import (ADD, ASSIGNED_POD, DELETE, NODE, UNSCHEDULED_POD, UPDATE, UPDATE_NODE_ALLOCATABLE,
                        UPDATE_NODE_CONDITION, UPDATE_NODE_LABEL, UPDATE_NODE_TAINT, UPDATE_POD_LABEL,
                        UPDATE_POD_SCHEDULING_GATES_ELIMINATED, UPDATE_POD_TOLERATION, ClusterEvent, CycleState,
                        Framework)
from .gang import MSG_OTHERS_UNSCHEDULABLE, MSG_WAIT_SCHEDULED, GangScheduling, group_key, min_count_of
from .nodeinfo import ChangeJournal, NodeInfo, Snapshot, node_tree_order
from .plugins.defaultplugins import DEFAULT_WEIGHTS, default_plugins
from .plugins.noderesources import ScoringStrategy
from .plugins.volumes import volume_plugins
from .podinfo import PodInfo, SpecRequests, new_pod_info
from .preemption import DefaultPreemption
from .priority import resolve_priority
from .queue import PriorityQueue, QueuedPodInfo
from .schedule_one import Algorithm, FitError, NoNodesAvailable, _no_nominations
from .types import (ERR_NO_NODES_AVAILABLE, POD_SCHEDULED, REASON_SCHEDULER_ERROR, REASON_UNSCHEDULABLE, Code,
                    Status)

if TYPE_CHECKING:
    from karpy.api.pod import Pod

# The assigned-pod events of the cache's pod handlers (ClusterEvent is an immutable value: one
# instance each, not one per event)
_ASSIGNED_POD_ADD = ClusterEvent(ASSIGNED_POD, ADD)
_ASSIGNED_POD_UPDATE = ClusterEvent(ASSIGNED_POD, UPDATE)
_ASSIGNED_POD_UPDATE_LABEL = ClusterEvent(ASSIGNED_POD, UPDATE_POD_LABEL)
_ASSIGNED_POD_DELETE = ClusterEvent(ASSIGNED_POD, DELETE)

BOUND = "Bound"
UNSCHEDULABLE = "Unschedulable"
NOMINATED = "Nominated"
GATED = "Gated"
ERROR = "Error"
SKIPPED = "Skipped"


@dataclass
class SchedulerConfig:
    """The parts of KubeSchedulerConfiguration karpy models (defaults as upstream)."""

    percentage_of_nodes_to_score: int = 0
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    pod_max_in_unschedulable_pods_duration: float = 300.0
    scoring_strategy: Optional[ScoringStrategy] = None
    taint_message_style: str = "1.35"
    scheduler_name: str = "default-scheduler"
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100
    default_spread_selector: Any = None  # callable(pod) -> LabelSelector | None (Service/RS/STS selector)
    #: the modelled kube-scheduler version (karpy.featuregates.KUBERNETES_VERSIONS)
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    #: kube-scheduler's feature gates, resolved (None: that version's defaults)
    feature_gates: Optional[dict[str, bool]] = None

    def gates(self) -> dict[str, bool]:
        """The feature gates in force: :attr:`feature_gates` or the version's defaults."""
        return resolve_kubernetes(self.kubernetes_version, self.feature_gates)

    def gate(self, name: str) -> bool:
        return bool(self.gates().get(name, False))


@dataclass(frozen=True, slots=True)
class Victim:
    key: str
    node: str
    grace_period_seconds: int


@dataclass(slots=True)
class ScheduleOneResult:
    """What one ``schedule_one`` did. ``condition`` is the PodScheduled condition to write (None for
    Bound: the API server sets PodScheduled=True); ``nominated_node_name`` None = unchanged,
    "" = clear, else set."""

    pod_key: str
    outcome: str
    node_name: Optional[str] = None
    condition: Optional[dict[str, str]] = None
    condition_changed: bool = False
    nominated_node_name: Optional[str] = None
    victims: list[Victim] = field(default_factory=list)
    cleared_nominations: list[str] = field(default_factory=list)
    members: list[ScheduleOneResult] = field(default_factory=list)  # gang cycle: one result per member


class KubeScheduler:
    """A deterministic kube-scheduler (one default profile)."""

    def __init__(self, clock: Any, rng: random.Random, config: Optional[SchedulerConfig] = None) -> None:
        self.clock = clock
        self.rng = rng
        self.config = config or SchedulerConfig()
        c = self.config
        self.priority_classes: dict[str, Any] = {}
        self.pdbs: dict[str, Any] = {}
        self.groups: dict[str, Any] = {}  # group key -> PodGroup / Workload
        self.nodes: dict[str, Any] = {}
        self.node_infos: dict[str, NodeInfo] = {}
        self.pods: dict[str, Any] = {}
        self.pod_infos: dict[str, PodInfo] = {}
        self.assigned: dict[str, str] = {}  # pod key -> node name
        self.nominated: dict[str, str] = {}  # pod key -> nominated node
        self.preempting: set[str] = set()  # victims being deleted by scheduler preemption
        self.conditions: dict[str, tuple[str, str]] = {}
        # The node tree order of the NodeInfos, rebuilt only when the node set changes (see _snapshot).
        self._node_tree: Optional[list[NodeInfo]] = None
        #: the cached NodeInfos' pod changes, for PerNode (see ChangeJournal)
        self._journal = ChangeJournal()
        self._image_sizes: dict[str, tuple[Any, dict[str, int]]] = {}
        #: the names of the cached nodes whose _image_sizes entry lists an image
        self._with_images: set[str] = set()
        plugins = default_plugins(c.scoring_strategy, c.taint_message_style, c.default_spread_selector)
        #: 1.37 scheduling.k8s.io/v1beta1 PodGroups by ns/name (and the CompositePodGroups, Workloads)
        self.pod_groups_v137: dict[str, Any] = {}
        self.composite_pod_groups: dict[str, Any] = {}
        self.workloads_v137: dict[str, Any] = {}
        #: PodGroup status conditions the scheduler wrote (ns/name -> conditions), and per group the
        #: members that fit in its last rejected cycle (for the Karpenter mismatch warning)
        self.pod_group_conditions: dict[str, list[dict[str, Any]]] = {}
        self.pod_group_last_fit: dict[str, tuple[int, int]] = {}
        #: per group, the victims its workload-aware preemptions evicted (for the IsPreempting note)
        self.pod_group_victims: dict[str, int] = {}
        #: per group, the nodes of its running members evicted one by one (not by the scheduler)
        self.pod_group_evicted: dict[str, list[str]] = {}
        #: GenericWorkload at the modelled version (the PodGroup cycle and its PreEnqueue)
        self.generic_workload = c.kubernetes_version != "1.35" and c.gate("GenericWorkload")
        #: hook points (see podgroupcycle): TAS placement and PodGroupPostFilter; None = default path
        self.placement_hook: Optional[Any] = None
        self.post_filter_hook: Optional[Any] = None
        #: the live (non-terminal) pods of each 1.37 PodGroup, ns/name -> pod keys (AllPods)
        self._v137_members: dict[str, dict[str, None]] = {}
        #: the node names of the placement being evaluated (None: the whole snapshot)
        self._placement_nodes: Optional[set[str]] = None
        plugins.insert(1, GangScheduling(self._lookup_group, self._count_group_members,
                                         self._v137_group if self.generic_workload else None,
                                         self._v137_tree_ready if self.generic_workload else None))
        #: the cluster's claims / volumes / classes (set_volume_topology); None = no volume plugins act
        self.volume_topology: Any = None
        #: new PodInfos' requests per pod spec (podinfo.SpecRequests)
        self.spec_requests = SpecRequests()
        fit = next(i for i, p in enumerate(plugins) if p.name == "NodeResourcesFit")
        plugins[fit + 1:fit + 1] = volume_plugins(lambda: self.volume_topology)
        self.framework = Framework(plugins, dict(DEFAULT_WEIGHTS), profile_name=c.scheduler_name)
        self.algorithm = Algorithm(self.framework, rng, c.percentage_of_nodes_to_score)
        self.preemption = DefaultPreemption(self.framework, rng, c.min_candidate_nodes_percentage,
                                            c.min_candidate_nodes_absolute)
        self.queue = PriorityQueue(self.framework, clock, initial_backoff=c.pod_initial_backoff_seconds,
                                   max_backoff=c.pod_max_backoff_seconds,
                                   max_in_unschedulable=c.pod_max_in_unschedulable_pods_duration)

    def set_volume_topology(self, volumes: Any) -> None:
        """The PVCs, PVs, StorageClasses and CSINodes the volume plugins read (plugins/volumes.py)."""
        self.volume_topology = volumes

    def set_default_constraints(self, injector: Any) -> None:
        """PodTopologySpread ``defaultingType: List`` with the cluster's ``defaultConstraints``: the
        injector (karpy.provisioning.defaultconstraints) gives pods without constraints the defaults
        with their deduced selector, as kube-scheduler's buildDefaultConstraints does."""
        self.default_constraints = injector

    # ---- helpers ---------------------------------------------------------------------------------
    def _pod_info(self, pod: Pod, prev: Optional[PodInfo] = None) -> PodInfo:
        """The PodInfo of ``pod``; ``prev``: the PodInfo of its previous version (see new_pod_info)."""
        injector = getattr(self, "default_constraints", None)
        if injector is not None and not pod.spec.topology_spread_constraints:
            pod = injector.inject([pod])[0]
        pi = new_pod_info(pod, prev, self.spec_requests)
        prio, _policy = resolve_priority(pod, self.priority_classes)
        pi.priority = prio
        return pi

    def _lookup_group(self, pod: Pod) -> Optional[Any]:
        from karpy.api.podgroup import pod_group_of
        ref = pod_group_of(pod)
        if ref is None:
            return None
        if ref.kind == "Workload":
            return self.groups.get(f"Workload/{ref.namespace}/{ref.name}")
        return self.groups.get(f"PodGroup/{ref.namespace}/{ref.name}")

    def _v137_group_key(self, pod: Pod) -> Optional[str]:
        """``ns/name`` of the 1.37 PodGroup of ``pod`` while GenericWorkload is on, else None."""
        if not self.generic_workload:
            return None
        from karpy.api.podgroup import scheduling_group_of
        return scheduling_group_of(pod)

    def _v137_group(self, pod: Pod) -> Optional[tuple[Any, int]]:
        """(PodGroup or None, AllPodsCount) for GangScheduling's 1.37 PreEnqueue."""
        gk = self._v137_group_key(pod)
        if gk is None:
            return None
        return self.pod_groups_v137.get(gk), self._count_v137_members(gk)

    def _v137_tree_ready(self, pod: Pod) -> Optional[bool]:
        """hierarchy_tracker.go isGroupReady at the root of the pod's CompositePodGroup tree (None:
        no observed tree): a leaf is ready with AllPodsCount >= minCount, a composite node with
        ready children >= minGroupCount (basic policy: 1 either way)."""
        gk = self._v137_group_key(pod)
        tree = self._composite_tree(gk) if gk is not None and gk in self.pod_groups_v137 else None
        if tree is None:
            return None

        def ready(n: Any) -> bool:
            want = 1 if n.min_count is None else n.min_count
            if not n.is_composite:
                return self._count_v137_members(n.key.split("/", 1)[1]) >= want
            return sum(1 for c in n.children if ready(c)) >= want
        return ready(tree)

    def _count_v137_members(self, gk: str) -> int:
        """PodGroupState.AllPodsCount: every known pod of the group."""
        return len(self._v137_members.get(gk, ()))

    def _count_group_members(self, gkey: str) -> int:
        return sum(1 for p in self.pods.values() if group_key(p) == gkey)

    def _snapshot(self) -> Snapshot:
        """cache.UpdateSnapshot: the NodeInfos in node-tree order.

        Performance: upstream's snapshot rebuilds nodeInfoList from the node tree only when a node
        was added/removed (updateAllLists) and otherwise keeps the list, updating NodeInfos in place.
        We do the same: the ordered list is cached and dropped by add_node/update_node/delete_node
        (the only places that change the node set, a node's zone labels or a NodeInfo object); pod
        assume/forget mutate the cached NodeInfos in place, so the cached order is exactly what
        node_tree_order would compute. Each cycle gets its own Snapshot copy (it carries the
        per-cycle havePodsWith*AffinityNodeInfoList)."""
        if self._node_tree is None:
            self._node_tree = [self.node_infos[n.metadata.name] for n in node_tree_order(list(self.nodes.values()))]
        snap = Snapshot(self._node_tree)
        snap.tree = self._node_tree
        snap.journal = self._journal
        return snap

    def _nominated_on(self, node: str) -> list[PodInfo]:
        return [self.pod_infos[k] for k, n in self.nominated.items() if n == node and k in self.pod_infos]

    def _nominator(self) -> Any:
        """A per-cycle ``nominated(node)`` lookup equal to ``_nominated_on``.

        Performance: upstream's nominator keeps nominatedPods as map[nodeName][]podRef, so the
        per-node lookup in RunFilterPluginsWithNominatedPods is O(1). ``self.nominated`` does not
        change during a scheduling cycle, so we index it by node once per cycle (same pods, same
        order as the scan in _nominated_on); with no nominations at all every node gets ()."""
        if not self.nominated:
            return _no_nominations
        by_node: dict[str, list[PodInfo]] = {}
        for k, n in self.nominated.items():
            pi = self.pod_infos.get(k)
            if pi is not None:
                by_node.setdefault(n, []).append(pi)
        return lambda node: by_node.get(node, [])

    def _is_unassigned(self, pod: Pod) -> bool:
        return not (getattr(pod.spec, "node_name", None) or "")

    def _responsible(self, pod: Pod) -> bool:
        name = getattr(pod.spec, "scheduler_name", None) or "default-scheduler"
        return name == self.config.scheduler_name

    def _terminal(self, pod: Pod) -> bool:
        return getattr(getattr(pod, "status", None), "phase", None) in ("Succeeded", "Failed")

    def _event(self, ev: ClusterEvent, old: Any, new: Any) -> None:
        self.queue.move_all_to_active_or_backoff(ev, old, new)

    # ---- state feeds -----------------------------------------------------------------------------
    def add_priority_class(self, pc: Any) -> None:
        self.priority_classes[pc.metadata.name] = pc

    def delete_priority_class(self, name: str) -> None:
        self.priority_classes.pop(name, None)

    def add_pdb(self, pdb: Any) -> None:
        self.pdbs[f"{pdb.metadata.namespace}/{pdb.metadata.name}"] = pdb

    update_pdb = add_pdb

    def delete_pdb(self, namespace: str, name: str) -> None:
        self.pdbs.pop(f"{namespace}/{name}", None)

    def add_pod_group(self, group: Any) -> None:
        """A coscheduling PodGroup or a Workload (or a 1.37 v1beta1 PodGroup / CompositePodGroup /
        Workload); re-runs PreEnqueue for gated members."""
        from karpy.api.podgroup import CompositePodGroup, SchedulingPodGroup, SchedulingWorkload
        key = f"{group.metadata.namespace}/{group.metadata.name}"
        if isinstance(group, SchedulingPodGroup):
            self.pod_groups_v137[key] = group
        elif isinstance(group, CompositePodGroup):
            self.composite_pod_groups[key] = group
        elif isinstance(group, SchedulingWorkload):
            self.workloads_v137[key] = group
            return
        else:
            self.groups[f"{group.KIND}/{group.metadata.namespace}/{group.metadata.name}"] = group
        self.queue.move_all_to_active_or_backoff(ClusterEvent("*", "PodGroupAdd"))

    def add_node(self, node: Any) -> None:
        name = node.metadata.name
        self.nodes[name] = node
        pods = [self.pod_infos[k] for k, n in self.assigned.items() if n == name]
        self.node_infos[name] = ni = NodeInfo.from_node(node, pods)
        ni.journal = self._journal
        self._node_tree = None
        self._image_sizes.pop(name, None)  # re-read this node's images (it may be the same object)
        self._refresh_images(name)
        self._event(ClusterEvent(NODE, ADD), None, node)

    def update_node(self, node: Any) -> None:
        """eventhandlers.go updateNodeInCache + nodeSchedulingPropertiesChange."""
        name = node.metadata.name
        old = self.nodes.get(name)
        if old is None:
            self.add_node(node)
            return
        self.nodes[name] = node
        ni = self.node_infos[name]
        self._journal.forget(ni)
        self.node_infos[name] = ni = NodeInfo.from_node(node, ni.pods)
        ni.journal = self._journal
        self._node_tree = None
        self._image_sizes.pop(name, None)  # re-read this node's images (it may be the same object)
        self._refresh_images(name)
        for action in node_update_events(old, node):
            self._event(ClusterEvent(NODE, action), old, node)

    def delete_node(self, name: str) -> None:
        old = self.nodes.pop(name, None)
        gone = self.node_infos.pop(name, None)
        if gone is not None:
            self._journal.forget(gone)  # (else the journal kept every NodeInfo the run ever had)
        self._node_tree = None
        # (the next refresh would drop the entry: the node is no longer cached)
        self._image_sizes.pop(name, None)
        self._with_images.discard(name)
        if old is not None:
            self._event(ClusterEvent(NODE, DELETE), old, None)

    def _refresh_images(self, changed: Optional[str] = None) -> None:
        """Recompute every node's image states (counts span all nodes); ``changed``: the node just
        added or updated (its NodeInfo is new).

        Performance: a node's status.images is read once per Node object (``_image_sizes``, keyed by
        name and checked by identity; the scheduler is handed a new object on every node update),
        so a refresh no longer re-parses every node's image list; the added/updated node's entry is
        dropped first so it is always re-read. The states are built as before."""
        from .nodeinfo import build_image_states, node_image_sizes
        cache = self._image_sizes
        with_images = self._with_images

        def sizes_of(n: Any) -> dict[str, int]:
            name = n.metadata.name
            hit = cache.get(name)
            if hit is not None and hit[0] is n:
                return hit[1]
            sizes = node_image_sizes(n)
            cache[name] = (n, sizes)
            if sizes:
                with_images.add(name)
            else:
                with_images.discard(name)
            return sizes
        if changed is not None:
            node = self.nodes.get(changed)
            if node is not None:
                sizes_of(node)
            if not with_images:
                # Not in upstream (the cache keeps image states per node incrementally; karpy
                # rebuilds them all here); same result because no cached node lists an image, so
                # the rebuild would give every NodeInfo empty states, and every NodeInfo already
                # has them: a NodeInfo is given non-empty states only by a rebuild, for images its
                # node listed then; its node's entry here changes only with its Node (add_node /
                # update_node), which builds a new NodeInfo (empty states), so a NodeInfo holding
                # states belongs to a node still listed in ``_with_images``. Skips a walk over
                # every node per node event (nodes without status.images, as karpy's are).
                return
        for gone in [k for k in cache if k not in self.nodes]:
            del cache[gone]
            with_images.discard(gone)
        states = build_image_states(list(self.nodes.values()), sizes_of)
        for n, ni in self.node_infos.items():
            ni.image_states = states.get(n, {})

    def add_pod(self, pod: Any) -> bool:
        """A pod appeared. Assigned pods enter the cache; unassigned pods of this scheduler enter the
        queue. Returns False when the pod is gated by PreEnqueue (never attempted)."""
        key = pod.key
        self.pods[key] = pod
        if self._terminal(pod):
            return True
        gk137 = self._v137_group_key(pod)
        if gk137 is not None:
            self._v137_members.setdefault(gk137, {})[key] = None
        pi = self._pod_info(pod)
        self.pod_infos[key] = pi
        if not self._is_unassigned(pod):
            self._assign(pi, pod.spec.node_name)
            self._event(_ASSIGNED_POD_ADD, None, pod)
            return True
        if not self._responsible(pod):
            return True
        nnn = pi.nominated_node_name
        if nnn:
            self.nominated[key] = nnn
        ok = self.queue.add(pi)
        # a new member may complete a gang quorum: re-run PreEnqueue of gated siblings
        gk = gk137
        if gk is not None:
            siblings = {k for k in self._v137_members.get(gk, ()) if k != key}
            queued = next((k for k in sorted(siblings) if k in self.queue.infos and self.queue.infos[k].entity_key
                           and k not in self.assigned), None)
            if ok and queued is not None:
                self.queue.join_entity(key, queued)
            tree = self._composite_tree(gk) if gk in self.pod_groups_v137 else None
            if tree is not None:  # UnscheduledPod/Add: every pod of the same hierarchy (same root)
                siblings |= {k for leaf in tree.leaves() for k in self._v137_members.get(leaf.key.split("/", 1)[1], ())
                             if k != key}
            self.queue.move_all_to_active_or_backoff(ClusterEvent("*", "GangMemberAdd"), None, pod, only=siblings)
            return ok
        gk = group_key(pod)
        if gk is not None:
            siblings = {k for k, p in self.pods.items() if k != key and group_key(p) == gk}
            self.queue.move_all_to_active_or_backoff(ClusterEvent("*", "GangMemberAdd"), None, pod, only=siblings)
        return ok

    def _assign(self, pi: PodInfo, node: str) -> None:
        prev = self.assigned.get(pi.key)
        if prev is not None and prev in self.node_infos:
            self.node_infos[prev].remove_pod(pi)
        self.assigned[pi.key] = node
        if node in self.node_infos:
            self.node_infos[node].add_pod(pi)

    def update_pod(self, pod: Any) -> None:
        key = pod.key
        old = self.pods.get(key)
        if old is None:
            self.add_pod(pod)
            return
        self.pods[key] = pod
        if self._terminal(pod):
            self.delete_pod(key)
            return
        old_pi = self.pod_infos.get(key)
        pi = self._pod_info(pod, old_pi)
        self.pod_infos[key] = pi
        if key in self.assigned:
            node = self.assigned[key]
            if node in self.node_infos and old_pi is not None:
                self.node_infos[node].remove_pod(old_pi)
                self.node_infos[node].add_pod(pi)
            if not self._is_unassigned(pod) and pod.spec.node_name != node:
                self._assign(pi, pod.spec.node_name)
            labels_changed = old.metadata.labels != pod.metadata.labels
            self._event(_ASSIGNED_POD_UPDATE_LABEL if labels_changed else _ASSIGNED_POD_UPDATE, old, pod)
            return
        if not self._is_unassigned(pod):
            self.queue.forget(key)
            self._assign(pi, pod.spec.node_name)
            self._event(_ASSIGNED_POD_ADD, None, pod)
            return
        events = []
        if (old.spec.scheduling_gates or []) and not (pod.spec.scheduling_gates or []):
            events.append(ClusterEvent(UNSCHEDULED_POD, UPDATE_POD_SCHEDULING_GATES_ELIMINATED))
        if old.spec.tolerations != pod.spec.tolerations:
            events.append(ClusterEvent(UNSCHEDULED_POD, UPDATE_POD_TOLERATION))
        if old.metadata.labels != pod.metadata.labels:
            events.append(ClusterEvent(UNSCHEDULED_POD, UPDATE_POD_LABEL))
        if not events:
            events.append(ClusterEvent(UNSCHEDULED_POD, UPDATE))
        self.queue.update(pi, events)

    def delete_pod(self, key: str) -> None:
        old = self.pods.pop(key, None)
        if old is not None and self._v137_members:
            gk137 = self._v137_group_key(old)
            if gk137 is not None:
                self._v137_members.get(gk137, {}).pop(key, None)
                node137 = self.assigned.get(key)
                if (node137 is not None and key not in self.preempting
                        and getattr(old.metadata, "deletion_timestamp", None) is not None):
                    self.pod_group_evicted.setdefault(gk137, []).append(node137)
        pi = self.pod_infos.pop(key, None)
        self.nominated.pop(key, None)
        self.preempting.discard(key)
        self.conditions.pop(key, None)
        self.queue.delete(key)
        node = self.assigned.pop(key, None)
        if node is not None and pi is not None:
            if node in self.node_infos:
                self.node_infos[node].remove_pod(pi)
            self._event(_ASSIGNED_POD_DELETE, old, None)

    def activate(self, keys: list[str]) -> None:
        self.queue.activate(keys)

    # ---- queue / time ----------------------------------------------------------------------------
    def next_event_time(self) -> float:
        """When the scheduler next has work on its own: now if a pod can be popped, else the next flush
        that moves a pod (math.inf when nothing is pending)."""
        self.queue.run_flushes()
        if self.queue.has_poppable():
            return float(self.clock.now())
        return self.queue.next_event_time()

    def gated_pods(self) -> list[str]:
        return [k for k, q in self.queue.unschedulable.items() if q.gated]

    # ---- the cycle -------------------------------------------------------------------------------
    def schedule_one(self, flushed: bool = False) -> Optional[ScheduleOneResult]:
        """Pop one pod (after due flushes) and run a scheduling cycle. None when nothing can be popped.

        ``flushed``: the caller has just called :meth:`next_event_time` at this instant and changed
        nothing since, so the flushes it ran leave none due: performance only (run_flushes would
        find nothing to do; the simulation loop asks next_event_time before every cycle)."""
        if not flushed:
            self.queue.run_flushes()
        q = self.queue.pop()
        if q is None:
            return None
        pod = self.pods.get(q.key)
        if pod is None or getattr(pod.metadata, "deletion_timestamp", None) is not None:
            self.queue.forget(q.key)
            return ScheduleOneResult(q.key, SKIPPED)
        v137 = self._v137_group_key(pod)
        if v137 is not None and v137 in self.pod_groups_v137:
            return self._schedule_pod_group(q, v137)
        gk = group_key(pod)
        if gk is not None:
            grp = self._lookup_group(pod)
            if grp is not None and min_count_of(grp, pod) is not None:
                return self._schedule_group(q, gk, grp)
        return self._schedule_pod(q)

    def _schedule_pod(self, q: QueuedPodInfo) -> ScheduleOneResult:
        pi = q.pod_info
        if not self.node_infos:
            # Not in upstream (schedulePod updates the snapshot, then returns ErrNoNodesAvailable
            # when it holds no node); same result because with no node cached the cycle's state,
            # snapshot and nominator are read by nothing before Algorithm.schedule_pod raises
            # NoNodesAvailable, whose handling follows. A cluster waiting for its first nodes
            # fails every pod this way (30,000 cycles of the 5,000-pod benchmark).
            return self._no_nodes_available(q)
        state = CycleState()
        nodes = self._snapshot()
        nominated = self._nominator()
        try:
            res = self.algorithm.schedule_pod(state, pi, nodes, nominated)
        except NoNodesAvailable:
            return self._no_nodes_available(q)
        except FitError as fe:
            q.unschedulable_plugins = set(fe.diagnosis.unschedulable_plugins)
            out = self.preemption.preempt(state, pi, nodes, fe.diagnosis, list(self.pdbs.values()),
                                          nominated, float(self.clock.now()), self._terminating_by_preemption)
            fe.diagnosis.post_filter_msg = out.message
            result = self._fail(q, fe.message(), REASON_UNSCHEDULABLE, out.nominated_node)
            if out.status.is_success() and out.nominated_node:
                result.outcome = NOMINATED
                result.victims = self._prepare_candidate(pi, out.nominated_node, out.victims)
                result.cleared_nominations = self._clear_lower_nominations(pi, out.nominated_node)
            return result
        except RuntimeError as e:
            return self._fail(q, str(e), REASON_SCHEDULER_ERROR, None)
        # assume + (Reserve/Permit: no default plugin rejects) + bind
        self.nominated.pop(pi.key, None)
        self._assign(pi, res.suggested_host)
        self.queue.forget(pi.key)
        self.conditions.pop(pi.key, None)
        self._event(_ASSIGNED_POD_ADD, None, pi.pod)
        return ScheduleOneResult(pi.key, BOUND, res.suggested_host)

    def _no_nodes_available(self, q: QueuedPodInfo) -> ScheduleOneResult:
        """handleSchedulingFailure of ErrNoNodesAvailable (no rejector plugin: the error backoff)."""
        q.unschedulable_plugins = set()
        return self._fail(q, ERR_NO_NODES_AVAILABLE, REASON_UNSCHEDULABLE, None)

    def _terminating_by_preemption(self, p: PodInfo) -> bool:
        if p.key in self.preempting:
            return True
        if not p.terminating:
            return False
        for c in getattr(getattr(p.pod, "status", None), "conditions", None) or []:
            if c.type == "DisruptionTarget" and c.status == "True" and c.reason == "PreemptionByScheduler":
                return True
        return False

    def _prepare_candidate(self, pod: PodInfo, node: str, victims: list[PodInfo]) -> list[Victim]:
        out = []
        for v in victims:
            self.preempting.add(v.key)
            grace = getattr(v.pod.spec, "termination_grace_period_seconds", None)
            out.append(Victim(v.key, node, 30 if grace is None else int(grace)))
        return out

    def _clear_lower_nominations(self, pod: PodInfo, node: str) -> list[str]:
        cleared = []
        for k, n in list(self.nominated.items()):
            if n == node and k != pod.key and k in self.pod_infos and self.pod_infos[k].priority < pod.priority:
                del self.nominated[k]
                cleared.append(k)
        return sorted(cleared)

    def _fail(self, q: QueuedPodInfo, message: str, reason: str, nominated: Optional[str],
              keep_timestamp: bool = False) -> ScheduleOneResult:
        """handleSchedulingFailure: requeue, nominate, PodScheduled=False condition.
        ``keep_timestamp``: a leftover of a placed group (to activeQ at once, timestamp kept)."""
        pi = q.pod_info
        if keep_timestamp:
            self.queue.requeue_active_keeping_timestamp(q)
        else:
            self.queue.add_unschedulable_if_not_present(q)
        if nominated is not None:
            if nominated:
                self.nominated[pi.key] = nominated
            else:
                self.nominated.pop(pi.key, None)
        cond = {"type": POD_SCHEDULED, "status": "False", "reason": reason, "message": message}
        changed = self.conditions.get(pi.key) != (reason, message)
        self.conditions[pi.key] = (reason, message)
        return ScheduleOneResult(pi.key, UNSCHEDULABLE if reason == REASON_UNSCHEDULABLE else ERROR, None, cond,
                                 changed, nominated)

    def _schedule_group(self, first: QueuedPodInfo, gkey: str, grp: Any) -> ScheduleOneResult:
        """PodGroup cycle: all-or-nothing for the queued members (schedule_one_podgroup.go)."""
        members = [first]
        for k in list(self.queue.infos):
            if k == first.key or k in self.queue.unschedulable:
                continue
            p = self.pods.get(k)
            if p is not None and group_key(p) == gkey:
                q = self.queue.infos[k]
                self.queue._remove_everywhere(k)
                q.attempts += 1
                self.queue.in_flight[k] = len(self.queue.in_flight_events)
                members.append(q)
        members.sort(key=lambda q: (-q.pod_info.priority, q.initial_attempt_timestamp or 0.0, q.seq))
        min_count = min_count_of(grp, first.pod_info.pod) or 0
        already = sum(1 for k in self.assigned if group_key(self.pods[k]) == gkey) if self.assigned else 0
        placed: list[tuple[QueuedPodInfo, str]] = []
        failed: list[tuple[QueuedPodInfo, FitError | None]] = []
        for q in members:
            state = CycleState()
            try:
                res = self.algorithm.schedule_pod(state, q.pod_info, self._snapshot(), self._nominated_on)
            except FitError as fe:
                failed.append((q, fe))
                continue
            except NoNodesAvailable:
                failed.append((q, None))
                continue
            self._assign(q.pod_info, res.suggested_host)  # assume so later members see it
            placed.append((q, res.suggested_host))
        results: list[ScheduleOneResult] = []
        if already + len(placed) >= min_count:
            for q, node in placed:
                self.queue.forget(q.key)
                self.nominated.pop(q.key, None)
                self.conditions.pop(q.key, None)
                self._event(_ASSIGNED_POD_ADD, None, q.pod_info.pod)
                results.append(ScheduleOneResult(q.key, BOUND, node))
            for q, fit_error in failed:
                q.unschedulable_plugins = set(fit_error.diagnosis.unschedulable_plugins) if fit_error else set()
                results.append(self._fail(q, fit_error.message() if fit_error else ERR_NO_NODES_AVAILABLE,
                                          REASON_UNSCHEDULABLE, None))
            outcome = BOUND
        else:
            for q, _node in placed:
                self.assigned.pop(q.key, None)
                for ni in self.node_infos.values():
                    ni.remove_pod(q.pod_info)
            for q in members:
                q.unschedulable_plugins = {"GangScheduling"}
                results.append(self._fail(q, MSG_WAIT_SCHEDULED, REASON_UNSCHEDULABLE, None))
            outcome = UNSCHEDULABLE
        head = next(r for r in results if r.pod_key == first.key)
        return ScheduleOneResult(first.key, outcome, head.node_name, head.condition, head.condition_changed,
                                 members=results)


    # ---- the 1.37 PodGroup cycle (schedule_one_podgroup.go) ---------------------------------------
    def _unassign(self, pi: PodInfo) -> None:
        node = self.assigned.pop(pi.key, None)
        if node is not None and node in self.node_infos:
            self.node_infos[node].remove_pod(pi)

    def _group_post_filter_hook(self, preemptor: Any, groups: Any, composite_gate: bool,
                                on_victims: Callable[[list[PodInfo]], None]) -> Callable[..., Any]:
        """DefaultPreemption's PodGroupPostFilter over this scheduler's snapshot, nominations and PDBs."""
        from karpy.api.podgroup import scheduling_group_of

        from . import podgrouppreemption as wap
        from .podgroupcycle import PostFilterResult, entity_key

        def group_of(pi: PodInfo) -> Optional[str]:
            gk = scheduling_group_of(pi.pod)
            return entity_key(*gk.split("/", 1)) if gk else None
        return wap.core_post_filter_hook(
            preemptor, lambda: list(self._snapshot()), self.framework, self._nominated_on,
            lambda k: self.pod_infos[k], group_of, groups, lambda st, noms: PostFilterResult(st, dict(noms)),
            list(self.pdbs.values()), composite_gate, on_victims)

    def _bind_member(self, q: QueuedPodInfo, node: str) -> ScheduleOneResult:
        """A group member the cycle binds: assumed on ``node``, off the queue, its condition cleared."""
        self.nominated.pop(q.key, None)
        self._assign(q.pod_info, node)
        self.queue.forget(q.key)
        self.conditions.pop(q.key, None)
        self._event(_ASSIGNED_POD_ADD, None, q.pod_info.pod)
        return ScheduleOneResult(q.key, BOUND, node)

    def _pop_group_members(self, first: QueuedPodInfo, gk: str) -> list[QueuedPodInfo]:
        """The PodGroup's queued members popped beside ``first``, deleting ones dropped
        (skipPodGroupPodSchedule), in the cycle's order: priority, first attempt, arrival."""
        members = [first]
        for k in list(self._v137_members.get(gk, ())):
            if k != first.key and k in self.pods and self._is_unassigned(self.pods[k]) and k not in self.assigned:
                q = self.queue.pop_member(k)
                if q is not None:
                    members.append(q)
        kept = []
        for q in members:
            if q.key in self.pods and getattr(self.pods[q.key].metadata, "deletion_timestamp", None) is None:
                kept.append(q)
            else:
                self.queue.forget(q.key)
        kept.sort(key=lambda q: (-q.pod_info.priority, q.initial_attempt_timestamp or 0.0, q.seq))
        return kept

    def _pop_tree_members(self, first: QueuedPodInfo, leaf_groups: dict[str, str]
                          ) -> tuple[dict[str, QueuedPodInfo], dict[str, list[str]]]:
        """Every leaf PodGroup's queued members popped (deleting ones dropped): by pod key, and each
        leaf's keys in the cycle's order."""
        by_key: dict[str, QueuedPodInfo] = {first.key: first}
        keys_of: dict[str, list[str]] = {}
        for ekey, gk in leaf_groups.items():
            queued = []
            for k in list(self._v137_members.get(gk, ())):
                if k in self.assigned or k not in self.pods or not self._is_unassigned(self.pods[k]):
                    continue
                q = by_key.get(k) or self.queue.pop_member(k)
                if q is None:
                    continue
                if getattr(self.pods[k].metadata, "deletion_timestamp", None) is not None:
                    self.queue.forget(k)
                    continue
                by_key[k] = q
                queued.append(q)
            queued.sort(key=lambda q: (-q.pod_info.priority, q.initial_attempt_timestamp or 0.0, q.seq))
            keys_of[ekey] = [q.key for q in queued]
        return by_key, keys_of

    def _pod_group_priority(self, pg: Any) -> Optional[int]:
        """The PodGroup's priority: its own, else its PriorityClass's value (None when neither)."""
        prio: Optional[int] = pg.spec.priority
        if prio is None and pg.spec.priority_class_name:
            pc = self.priority_classes.get(pg.spec.priority_class_name)
            prio = int(getattr(pc, "value", 0) or 0) if pc is not None else None
        return prio

    def _member_schedule(self, by_key: dict[str, QueuedPodInfo], nominated: Callable[[str], list[PodInfo]],
                         errors_as_status: bool) -> Callable[[str], tuple[Optional[str], Optional[Status], Any]]:
        """The group cycle's per-member SchedulePod on the placement snapshot: (host, None, None), or
        (None, the Unschedulable status, the FitError); ``errors_as_status``: an internal error is an
        Error status rather than raised."""
        def schedule(key: str) -> tuple[Optional[str], Optional[Status], Any]:
            try:
                res = self.algorithm.schedule_pod(CycleState(), by_key[key].pod_info, self._placement_snapshot(),
                                                  nominated)
            except FitError as fe:
                return None, Status(Code.UNSCHEDULABLE, [fe.message()]), fe
            except NoNodesAvailable:
                return None, Status(Code.UNSCHEDULABLE, [ERR_NO_NODES_AVAILABLE]), None
            except RuntimeError as e:
                if not errors_as_status:
                    raise
                return None, Status(Code.ERROR, [str(e)]), None
            return res.suggested_host, None, None
        return schedule

    def _actuate_group_victims(self, head: ScheduleOneResult, victims: list[PodInfo], gk: str) -> None:
        """Executor.actuatePodGroupPreemption: the victims are deleted (counted against ``gk``)."""
        if victims:
            self.pod_group_victims[gk] = self.pod_group_victims.get(gk, 0) + len(victims)
        for v in victims:
            node = self.assigned.get(v.key, "")
            self.preempting.add(v.key)
            grace = getattr(v.pod.spec, "termination_grace_period_seconds", None)
            head.victims.append(Victim(v.key, node, 30 if grace is None else int(grace)))

    def _submit_tree_leaf(self, outcome: Any, ekey: str, gk: str, keys: list[str], by_key: dict[str, QueuedPodInfo],
                          bindable: set[str], post: Any, now: str) -> list[ScheduleOneResult]:
        """One leaf PodGroup of a tree's cycle submitted: bound when the tree binds it, else requeued
        or nominated; its PodGroup condition written."""
        from .podgroupcycle import (BIND, NOMINATE, AlgorithmResult, PodResult, apply_post_filter, complete_result,
                                    submit_actions, update_pod_group_condition)
        results: list[ScheduleOneResult] = []
        leaf = outcome.results.get(ekey)
        algo = leaf.payload if leaf is not None and isinstance(leaf.payload, AlgorithmResult) else None
        if algo is None:  # completed under a failed parent: its assignments and pod statuses kept
            algo = AlgorithmResult(leaf.status if leaf is not None else outcome.root.status)
            if leaf is not None:
                algo.pods = [PodResult(a.pod.key, a.node_name) for a in leaf.assignments]
                algo.pods += [PodResult(k, None, st) for k, st in leaf.pod_statuses.items()
                              if k not in {a.pod.key for a in leaf.assignments}]
        algo = complete_result(AlgorithmResult(leaf.status if leaf is not None else outcome.root.status,
                                               list(algo.pods), algo.any_scheduled), keys)
        if ekey not in bindable and algo.status.is_success():
            algo.status = outcome.root.status
        if post is not None:  # applyPodGroupPostFilterResult over every leaf of the tree
            algo = apply_post_filter(algo, post)
        success = ekey in bindable
        for a in submit_actions(algo, keys):
            q = by_key[a.key]
            if a.action == BIND and success:
                assert a.node is not None
                results.append(self._bind_member(q, a.node))
                continue
            q.unschedulable_plugins = set()
            failed = self._fail(q, a.message or algo.status.message(), a.reason,
                                a.nominated if a.action == NOMINATE else None, keep_timestamp=bool(bindable))
            if a.action == NOMINATE:
                failed.outcome = NOMINATED
            results.append(failed)
        pg = self.pod_groups_v137[gk]
        fit = sum(1 for r in algo.pods if r.fit)
        if success:
            self.pod_group_last_fit.pop(gk, None)
        else:
            self.pod_group_last_fit[gk] = (fit, len(keys))
        conds = self.pod_group_conditions.setdefault(gk, [dict(c) for c in pg.status.conditions])
        update_pod_group_condition(conds, Status() if success else algo.status, now, pg.metadata.generation)
        return results

    @staticmethod
    def _group_rejectors(result: Any, invalid: bool) -> set[str]:
        """The entity's rejectors: its members' FitError plugins; none (an invalid group, an error, no
        nodes, or only the gang rule rejected) = the error backoff, retried once it expires
        (AddAttemptedPodGroupIfNeeded)."""
        rejectors: set[str] = set()
        if invalid or result.status.code == Code.ERROR:
            return rejectors
        for r in result.pods:
            if r.detail is not None and hasattr(r.detail, "diagnosis"):
                rejectors |= set(r.detail.diagnosis.unschedulable_plugins)
        return rejectors

    def _submit_group_actions(self, actions: list[Any], by_key: dict[str, QueuedPodInfo],
                              members: list[QueuedPodInfo], rejectors: set[str],
                              success: bool) -> list[ScheduleOneResult]:
        """The cycle's submit: each member bound, nominated or requeued, the entity's counts shared."""
        from .podgroupcycle import BIND, NOMINATE
        ucount = max(q.unschedulable_count for q in members)
        ecount = max(q.consecutive_errors_count for q in members)
        results: list[ScheduleOneResult] = []
        for a in actions:
            q = by_key[a.key]
            q.unschedulable_count, q.consecutive_errors_count = ucount, ecount
            if a.action == BIND:
                assert a.node is not None
                results.append(self._bind_member(q, a.node))
                continue
            q.unschedulable_plugins = set(rejectors)
            nominated = a.nominated if a.action == NOMINATE else ("" if a.reason == REASON_SCHEDULER_ERROR else None)
            failed = self._fail(q, a.message, a.reason, nominated, keep_timestamp=success)
            if a.action == NOMINATE:
                failed.outcome = NOMINATED
            results.append(failed)
        return results

    def _schedule_pod_group(self, first: QueuedPodInfo, gk: str) -> ScheduleOneResult:
        """scheduleOnePodGroup: pop the entity's members, validate, run the cycle on one snapshot
        (assume/revert), submit (bind / requeue / nominate) and write the PodGroup condition."""
        from .podgroupcycle import (AlgorithmResult, entity_key, run_pod_group_cycle, submit_actions,
                                    update_pod_group_condition, validate_pod_group)

        pg = self.pod_groups_v137[gk]
        ns, name = gk.split("/", 1)
        tree = self._composite_tree(gk)
        if tree is not None:
            return self._schedule_composite_tree(first, tree)
        ekey = entity_key(ns, name)
        members = self._pop_group_members(first, gk)
        by_key = {q.key: q for q in members}
        keys = [q.key for q in members]
        for q in members:
            q.entity_key = ekey
            q.entity_size = len(members)
        scheduled = [k for k in self._v137_members.get(gk, ()) if k in self.assigned]
        prio = self._pod_group_priority(pg)

        def facts(k: str) -> tuple[str, int, str]:
            pod = self.pods[k]
            pi = self.pod_infos[k]
            _prio, policy = resolve_priority(pod, self.priority_classes)
            return (pod.spec.scheduler_name or "default-scheduler", pi.priority, policy or "PreemptLowerPriority")

        victims: list[PodInfo] = []
        err = validate_pod_group([facts(k) for k in keys], prio, pg.spec.preemption_policy,
                                 self.config.gate("PodGroupPreemptionPolicy"), [facts(k) for k in scheduled])
        if err is not None:
            result = AlgorithmResult(Status(Code.ERROR, [err]))
            actions = submit_actions(result, keys)
            for a in actions:
                a.message = err
        else:
            by_node = self._nominator()

            def unassumed(node: str) -> list[PodInfo]:
                # a member assumed on the snapshot this cycle is on its node, no longer only nominated
                # there (assume deletes the nominated entry: DeleteNominatedPodIfExists)
                return [p for p in by_node(node) if p.key not in self.assigned]
            schedule = self._member_schedule(by_key, by_node if by_node is _no_nominations else unassumed,
                                             errors_as_status=True)
            placement_hook, post_filter_hook = self._cycle_hooks(pg, ekey, keys, by_key, scheduled, prio, victims)
            try:
                result = run_pod_group_cycle(keys, pg.min_count, len(scheduled), schedule,
                                             lambda k, n: self._assign(by_key[k].pod_info, n),
                                             lambda k: self._unassign(by_key[k].pod_info),
                                             placement_hook, post_filter_hook)
            finally:
                self._placement_nodes = None
            actions = submit_actions(result, keys)
        success = result.status.is_success()
        results = self._submit_group_actions(actions, by_key, members, self._group_rejectors(result, err is not None),
                                             success)
        fit = sum(1 for r in result.pods if r.fit)
        if not success:
            self.pod_group_last_fit[gk] = (fit, len(keys) + len(scheduled))
        else:
            self.pod_group_last_fit.pop(gk, None)
        conds = self.pod_group_conditions.setdefault(gk, [dict(c) for c in pg.status.conditions])
        update_pod_group_condition(conds, result.status, f"{float(self.clock.now()):.0f}",
                                   pg.metadata.generation, error=err is not None)
        head = next(r for r in results if r.pod_key == first.key)
        self._actuate_group_victims(head, victims, gk)
        return ScheduleOneResult(first.key, BOUND if success else head.outcome, head.node_name, head.condition,
                                 head.condition_changed, members=results)

    # ---- CompositePodGroup trees (compositepodgroup.py; gates CompositePodGroup + TAS) --------------
    def _composite_tree(self, gk: str) -> Optional[Any]:
        """The GroupNode tree of the root CompositePodGroup above PodGroup ``gk``, when both gates are
        on and the root and every node of the tree are observed; else None (the leaf alone)."""
        if not (self.config.gate("CompositePodGroup") and self.config.gate("TopologyAwareWorkloadScheduling")):
            return None
        pg = self.pod_groups_v137[gk]
        if not pg.spec.parent_composite_pod_group_name:
            return None
        from .compositepodgroup import GroupNode, root_of
        from .podgroupcycle import entity_key
        ns = gk.split("/", 1)[0]
        parents: dict[str, Optional[str]] = {}
        for k, g in (*self.pod_groups_v137.items(), *self.composite_pod_groups.items()):
            parent = g.spec.parent_composite_pod_group_name
            parents[("pg:" if k in self.pod_groups_v137 else "cpg:") + k] = f"cpg:{ns}/{parent}" if parent else None
        root = root_of(f"pg:{gk}", parents)
        if root is None or not root.startswith("cpg:") or root[4:] not in self.composite_pod_groups:
            return None

        def child_order(ref: str) -> tuple[float, str, str]:
            kind, key = ref.split(":", 1)
            ts = (self.pod_groups_v137 if kind == "pg" else self.composite_pod_groups)[key].metadata.creation_timestamp
            return (ts.timestamp() if ts is not None else float("-inf"), key.split("/", 1)[1], kind)

        def build(ref: str) -> Any:
            kind, key = ref.split(":", 1)
            n2, name2 = key.split("/", 1)
            constraints = (self.pod_groups_v137[key] if kind == "pg" else self.composite_pod_groups[key]).spec
            topo = constraints.scheduling_constraints
            topology_key = topo.topology[0].key if topo is not None and topo.topology else None
            if kind == "pg":
                members = self._v137_members.get(key, {})
                return GroupNode(entity_key(n2, name2), self.pod_groups_v137[key].min_count, topology_key,
                                 tuple(self.assigned[k] for k in members if k in self.assigned))
            # PodGroupInfo.SortChildren (framework/types.go): creationTimestamp, then name, then type
            children = sorted((c for c, p in parents.items() if p == ref), key=child_order)
            if not children:
                raise LookupError(ref)
            gang = self.composite_pod_groups[key].spec.scheduling_policy.gang
            return GroupNode(entity_key(n2, name2, "compositepodgroup"), gang.min_group_count if gang else None,
                             topology_key, (), tuple(build(c) for c in children))
        try:
            return build(root)
        except LookupError:
            return None

    def _schedule_composite_tree(self, first: QueuedPodInfo, tree: Any) -> ScheduleOneResult:
        """The cycle of a CompositePodGroup root entity: every leaf's queued members popped, the tree
        scheduled by compositepodgroup.schedule_group_tree on one snapshot (rollback, commitment),
        then bound atomically (bindable_leaf_results) or every member requeued; leaf PodGroups get
        conditions, composite nodes none (1.37)."""
        from .compositepodgroup import bindable_leaf_results, schedule_group_tree, successful_leaf_results
        from .placement import GroupResult, Placement, ProposedAssignment
        from .podgroupcycle import AlgorithmResult, PodResult, default_algorithm

        leaf_groups = {leaf.key: leaf.key.split("/", 1)[1] for leaf in tree.leaves()}  # entity key -> ns/name
        by_key, keys_of = self._pop_tree_members(first, leaf_groups)
        for q in by_key.values():
            q.entity_key = tree.key
            q.entity_size = len(by_key)
        err = self._validate_tree(tree, keys_of)
        if err is not None:
            return self._fail_tree(first, leaf_groups, keys_of, by_key, err)

        def nominated_unassumed(node: str) -> list[PodInfo]:
            # a member assumed this cycle is on its node, no longer only nominated (DeleteNominatedPodIfExists)
            return [p for p in self._nominated_on(node) if p.key not in self.assigned]
        schedule = self._member_schedule(by_key, nominated_unassumed, errors_as_status=False)

        def assume_key(k: str, n: str) -> None:
            self._assign(by_key[k].pod_info, n)

        def unassume_key(k: str) -> None:
            self._unassign(by_key[k].pod_info)

        def evaluate_leaf(leaf: Any, p: Placement) -> tuple[GroupResult, Any]:
            self._restrict(p)
            try:
                r = default_algorithm(keys_of[leaf.key], leaf.min_count, leaf.view().scheduled_pods_count,
                                      schedule, assume_key, unassume_key)
            finally:
                self._restrict(None)
            got = [ProposedAssignment(by_key[x.key].pod_info, x.node) for x in r.pods if x.node]
            statuses = {x.key: x.status for x in r.pods if x.status is not None}
            return GroupResult(leaf.key, r.status, got, statuses, bool(r.any_scheduled), payload=r), (lambda: None)

        def assume(result: GroupResult) -> tuple[Status, Any]:
            done = []
            for a in result.assignments:
                self._assign(a.pod, a.node_name)
                done.append(a.pod)

            def revert() -> None:
                for pi in reversed(done):
                    self._unassign(pi)
            return Status(), revert

        snap = self._snapshot()
        outcome = schedule_group_tree(tree, Placement("", tuple(snap)), self.node_infos, evaluate_leaf, assume,
                                      rng=self.rng)
        outcome.revert()  # the algorithm only simulates: the submit assumes for real
        self._placement_nodes = None
        post: Any = None
        victims: list[PodInfo] = []
        if outcome.root.status.code == Code.UNSCHEDULABLE:  # podGroupCycle: PodGroupPostFilter on the root

            def run_tree() -> AlgorithmResult:
                """pgSchedulingFunc: the tree algorithm again on the current NodeInfos (reverted)."""
                again = schedule_group_tree(tree, Placement("", tuple(self._snapshot())), self.node_infos,
                                            evaluate_leaf, assume, rng=self.rng)
                again.revert()
                self._placement_nodes = None
                pods = [PodResult(a.pod.key, a.node_name) for r in successful_leaf_results(tree, again.results)
                        for a in r.assignments]
                return AlgorithmResult(again.root.status, pods)
            post = self._tree_post_filter(tree, by_key, run_tree, victims)
        bindable = {r.key for r in bindable_leaf_results(tree, outcome.results)}
        results: list[ScheduleOneResult] = []
        now = f"{float(self.clock.now()):.0f}"
        for ekey, gk in leaf_groups.items():
            results += self._submit_tree_leaf(outcome, ekey, gk, keys_of[ekey], by_key, bindable, post, now)
        head = next(r for r in results if r.pod_key == first.key)
        self._actuate_group_victims(head, victims, self._v137_group_key(first.pod_info.pod) or "")
        return ScheduleOneResult(first.key, BOUND if bindable else head.outcome, head.node_name, head.condition,
                                 head.condition_changed, members=results)

    def _tree_post_filter(self, tree: Any, by_key: dict[str, QueuedPodInfo], run_tree: Callable[[], Any],
                          victims: list[PodInfo]) -> Any:
        """DefaultPreemption.PodGroupPostFilter for a CompositePodGroup root (podGroupCycle): the
        preemptor is the root (its priority and preemption policy, every queued pod of the tree,
        topology-constrained when any group of the tree has a topology); victims are units (pods,
        PodGroups, CompositePodGroups with disruptionMode all); pgSchedulingFunc is ``run_tree``."""
        from karpy.api.podgroup import scheduling_group_of

        from . import podgrouppreemption as wap
        from .podgroupcycle import PostFilterResult, entity_key
        root = self.composite_pod_groups[tree.key.split("/", 1)[1]]
        gate = self.config.gate("PodGroupPreemptionPolicy")
        pods = tuple(q.pod_info for q in by_key.values())
        prio = root.spec.priority
        if prio is None and root.spec.priority_class_name:
            pc = self.priority_classes.get(root.spec.priority_class_name)
            prio = int(getattr(pc, "value", 0) or 0) if pc is not None else None

        def nodes_of(n: Any) -> Any:
            yield n
            for c in n.children:
                yield from nodes_of(c)
        constrained = any(n.topology_key is not None for n in nodes_of(tree))
        preemptor = wap.Preemptor(tree.key, prio or 0, pods,
                                  wap.resolve_preemption_policy(root.spec.preemption_policy, pods, gate), constrained)
        groups: dict[str, Any] = {}
        for kind, objs in (("podgroup", self.pod_groups_v137), ("compositepodgroup", self.composite_pod_groups)):
            for gk2, g in objs.items():
                ns2, name2 = gk2.split("/", 1)
                parent = g.spec.parent_composite_pod_group_name
                mode = getattr(g.spec, "disruption_mode", None)
                groups[entity_key(ns2, name2, kind)] = wap.GroupMeta(
                    entity_key(ns2, name2, kind), entity_key(ns2, parent, "compositepodgroup") if parent else None,
                    int(g.spec.priority or 0), bool(mode and mode.is_all))

        return self._group_post_filter_hook(preemptor, groups, True, victims.extend)(None, run_tree)

    def _validate_tree(self, tree: Any, keys_of: dict[str, list[str]]) -> Optional[str]:
        """validatePodGroup + validatePodGroupHierarchy (schedule_one_podgroup.go) over the tree:
        groups pre-order, a leaf's queued pods then its scheduled ones, against the root."""
        from .podgroupcycle import TreeNodeFacts, validate_pod_group_hierarchy

        def pod_facts(k: str) -> tuple[str, str, int, str]:
            pod = self.pods[k]
            _prio, policy = resolve_priority(pod, self.priority_classes)
            return (pod.metadata.name, pod.spec.scheduler_name or "default-scheduler", self.pod_infos[k].priority,
                    policy or "PreemptLowerPriority")

        nodes: list[TreeNodeFacts] = []

        def walk(n: Any) -> None:
            gk = n.key.split("/", 1)[1]
            g = self.composite_pod_groups[gk] if n.is_composite else self.pod_groups_v137[gk]
            prio = g.spec.priority
            if prio is None and g.spec.priority_class_name:
                pc = self.priority_classes.get(g.spec.priority_class_name)
                prio = int(getattr(pc, "value", 0) or 0) if pc is not None else None
            pods: list[tuple[str, str, int, str]] = []
            if not n.is_composite:
                scheduled = [k for k in self._v137_members.get(gk, ()) if k in self.assigned and k in self.pods]
                pods = [pod_facts(k) for k in (*keys_of.get(n.key, ()), *scheduled)]
            nodes.append((n.key, prio or 0, g.spec.preemption_policy or "PreemptLowerPriority", pods))
            for c in n.children:
                walk(c)
        walk(tree)
        first = next((pods[0] for _k, _p, _pol, pods in nodes if pods), None)
        first_pod = (first[0], first[1], first[3]) if first is not None else None
        return validate_pod_group_hierarchy(nodes, first_pod, self.config.gate("PodGroupPreemptionPolicy"))

    def _fail_tree(self, first: QueuedPodInfo, leaf_groups: dict[str, str], keys_of: dict[str, list[str]],
                   by_key: dict[str, QueuedPodInfo], err: str) -> ScheduleOneResult:
        """A tree that fails validation: every queued member SchedulerError with the text, every leaf
        PodGroup's condition False/SchedulerError (updatePodGroupConditionWithError)."""
        from .podgroupcycle import update_pod_group_condition
        results: list[ScheduleOneResult] = []
        now = f"{float(self.clock.now()):.0f}"
        for ekey, gk in leaf_groups.items():
            for k in keys_of[ekey]:
                q = by_key[k]
                q.unschedulable_plugins = set()
                results.append(self._fail(q, err, REASON_SCHEDULER_ERROR, "", keep_timestamp=False))
            pg = self.pod_groups_v137[gk]
            conds = self.pod_group_conditions.setdefault(gk, [dict(c) for c in pg.status.conditions])
            update_pod_group_condition(conds, Status(Code.ERROR, [err]), now, pg.metadata.generation, error=True)
        head = next(r for r in results if r.pod_key == first.key)
        return ScheduleOneResult(first.key, head.outcome, head.node_name, head.condition, head.condition_changed,
                                 members=results)

    # ---- hook points: TAS placement (placement.py) and PodGroupPostFilter (podgrouppreemption.py) --
    def _placement_snapshot(self) -> Snapshot:
        """The cycle's snapshot, narrowed to the placement being evaluated (snapshot.AssumePlacement)."""
        snap = self._snapshot()
        if self._placement_nodes is None:
            return snap
        return Snapshot([ni for ni in snap if ni.name in self._placement_nodes])

    def _restrict(self, placement: Any) -> None:
        """AssumePlacement(p) / ForgetPlacement (None)."""
        self._placement_nodes = None if placement is None else set(placement.node_names())

    def _cycle_hooks(self, pg: Any, ekey: str, keys: list[str], by_key: dict[str, QueuedPodInfo],
                     scheduled: list[str], prio: Optional[int], victims: list[PodInfo]) -> tuple[Any, Any]:
        """(placement_hook, post_filter_hook) for one PodGroup cycle: the explicit ones when set, else
        karpy.kubescheduler.placement (TopologyAwareWorkloadScheduling on) and
        karpy.kubescheduler.podgrouppreemption (DefaultPreemption.PodGroupPostFilter) when those
        modules exist; None = podgroupcycle's default path."""
        import importlib

        from .podgroupcycle import AlgorithmResult, PostFilterResult, default_algorithm, entity_key
        placement_hook, post_filter_hook = self.placement_hook, self.post_filter_hook
        tas = self.config.gate("TopologyAwareWorkloadScheduling")
        constraints = pg.spec.scheduling_constraints
        topology_key = constraints.topology[0].key if tas and constraints is not None and constraints.topology else None
        if placement_hook is None and tas:
            try:
                placement = importlib.import_module(".placement", __package__)
            except ImportError:
                placement = None
            if placement is not None:
                snap = self._snapshot()
                view = placement.PlacementView(ekey, topology_key,
                                               tuple(self.assigned[k] for k in scheduled if k in self.assigned))
                placement_hook = placement.core_placement_hook(
                    view, placement.Placement("", tuple(snap)), self.node_infos, self._restrict,
                    lambda k: by_key[k].pod_info, default_algorithm, lambda st: AlgorithmResult(st), rng=self.rng)
        if post_filter_hook is None:
            try:
                wap = importlib.import_module(".podgrouppreemption", __package__)
            except ImportError:
                wap = None
            if wap is not None:
                from karpy.api.podgroup import scheduling_group_of
                gate = self.config.gate("PodGroupPreemptionPolicy")
                pods = tuple(by_key[k].pod_info for k in keys)
                preemptor = wap.Preemptor(ekey, prio or 0, pods,
                                          wap.resolve_preemption_policy(pg.spec.preemption_policy, pods, gate),
                                          topology_key is not None)
                groups = {}
                for gk2, g in self.pod_groups_v137.items():
                    ns2, name2 = gk2.split("/", 1)
                    parent = g.spec.parent_composite_pod_group_name
                    groups[entity_key(ns2, name2)] = wap.GroupMeta(
                        entity_key(ns2, name2), entity_key(ns2, parent, "compositepodgroup") if parent else None,
                        int(g.spec.priority or 0), bool(g.spec.disruption_mode and g.spec.disruption_mode.is_all))

                post_filter_hook = self._group_post_filter_hook(
                    preemptor, groups, self.config.gate("CompositePodGroup"), victims.extend)
        return placement_hook, post_filter_hook

    def _gated_fields_warning(self) -> Optional[str]:
        """PodGroup fields whose feature gate is off: the API server drops them on create
        (dropDisabledFields), so the scheduler never sees them."""
        gates = (("preemption_policy", "spec.preemptionPolicy", "PodGroupPreemptionPolicy"),
                 ("scheduling_constraints", "spec.schedulingConstraints", "TopologyAwareWorkloadScheduling"),
                 ("parent_composite_pod_group_name", "spec.parentCompositePodGroupName", "CompositePodGroup"))
        found = []
        for attr, field_path, gate in gates:
            if self.config.gate(gate):
                continue
            names = sorted(gk for gk, pg in self.pod_groups_v137.items() if getattr(pg.spec, attr, None))
            if names:
                found.append(f"{field_path} ({gate} is off: {', '.join(names)})")
        if not found:
            return None
        return "PodGroup fields ignored, as the API server drops them while their feature gate is off: " + "; ".join(found)

    def pod_group_warnings(self) -> list[str]:
        """What Karpenter v1.14 (no gang awareness) did with each 1.37 gang still not placed:
        capacity launched member by member that the gang cannot use, or a gang it never saw."""
        out = []
        if not self.generic_workload and self.pod_groups_v137:
            names = ", ".join(sorted(self.pod_groups_v137))
            return [f"GenericWorkload is off (the Kubernetes {self.config.kubernetes_version} default): PodGroup "
                    f"{names} and spec.schedulingGroup are ignored and the pods are scheduled one by one; pass "
                    "--feature-gates GenericWorkload=true for gang scheduling"]
        dropped = self._gated_fields_warning()
        if dropped:
            out.append(dropped)
        for gk, pg in sorted(self.pod_groups_v137.items()):
            conds = self.pod_group_conditions.get(gk, [])
            placed = any(c.get("type") == "PodGroupInitiallyScheduled" and c.get("status") == "True" for c in conds)
            if placed and gk in self.pod_group_victims:
                n = self.pod_group_victims[gk]
                out.append(f"PodGroup {gk} (gang, minCount {pg.min_count}): placed by workload-aware preemption "
                           f"({n} victim{'s' if n != 1 else ''} evicted); while its pods carried "
                           "status.nominatedNodeName, Karpenter v1.14 ignored the gang (IsPreempting) and launched "
                           "no capacity for it")
            if placed and gk in self.pod_group_evicted:
                out.append(self._evicted_warning(gk, pg))
            if placed or pg.min_count is None:
                continue
            members = list(self._v137_members.get(gk, ()))
            pending = [k for k in members if k not in self.assigned]
            if not pending:
                continue
            if not self.generic_workload:
                continue
            nominated = [k for k in pending if k in self.nominated]
            if gk not in self.pod_group_conditions:
                out.append(f"PodGroup {gk} (gang, minCount {pg.min_count}): {len(pending)} pods held at PreEnqueue "
                           f"({len(members)} of {pg.min_count} pods exist, or the PodGroup is missing); they carry no "
                           "PodScheduled condition, so Karpenter v1.14 (no gang awareness) ignores them and "
                           "launches nothing")
            elif nominated:
                out.append(f"PodGroup {gk} (gang, minCount {pg.min_count}): its pods are nominated for preemption "
                           "(status.nominatedNodeName), so Karpenter v1.14 ignores the whole gang (IsPreempting) "
                           "while the victims terminate")
            elif pg.spec.parent_composite_pod_group_name and self._composite_tree(gk) is not None:
                fit, total = self.pod_group_last_fit.get(gk, (0, len(members)))
                out.append(f"PodGroup {gk} (gang, minCount {pg.min_count}, in CompositePodGroup "
                           f"{gk.split('/', 1)[0]}/{pg.spec.parent_composite_pod_group_name}): not scheduled; "
                           f"kube-scheduler found room for {fit} of its {total} pods, but the group tree binds "
                           "atomically and it was not placed whole, so it binds none; Karpenter v1.14 (no gang "
                           "awareness) provisions members one by one and its capacity for the tree stays unused "
                           "(check NodePool limits)")
            elif self._topology_spread(pg) is not None:
                out.append(self._topology_warning(gk, pg, len(members)))
            else:
                fit, total = self.pod_group_last_fit.get(gk, (0, len(members)))
                out.append(f"PodGroup {gk} (gang, minCount {pg.min_count}): not scheduled; kube-scheduler found room "
                           f"for {fit} of its {total} pods, fewer than minCount, so it binds none; Karpenter v1.14 "
                           "(no gang awareness) provisions members one by one and its capacity for the gang "
                           "stays unused (check NodePool limits)")
        return out

    def _evicted_warning(self, gk: str, pg: Any) -> str:
        """Karpenter v1.14 evicts gang members one at a time (it ignores disruptionMode); the
        re-created members join the placed gang (reference kube-scheduler-1.37.md §11)."""
        nodes = self.pod_group_evicted[gk]
        mode = "all" if pg.spec.disruption_mode is not None and pg.spec.disruption_mode.is_all else "single"
        return (f"PodGroup {gk} (gang, minCount {pg.min_count}, disruptionMode {mode}): {len(nodes)} running "
                f"member{'s were' if len(nodes) != 1 else ' was'} evicted one by one (from "
                f"{', '.join(sorted(set(nodes)))}) while the rest kept running; Karpenter v1.14 drains nodes pod by "
                "pod with no gang awareness (it ignores disruptionMode), and a re-created member is scheduled as a "
                "member of the already-placed gang (PodGroupInitiallyScheduled stays True)")

    def _topology_spread(self, pg: Any) -> Optional[tuple[str, dict[str, int]]]:
        """(key, nodes per domain) when the group has a topology constraint (TAS on) and the
        cluster's nodes span more than one domain of its key; else None."""
        constraints = pg.spec.scheduling_constraints
        if not self.config.gate("TopologyAwareWorkloadScheduling") or constraints is None or not constraints.topology:
            return None
        key = constraints.topology[0].key
        domains: dict[str, int] = {}
        for node in self.nodes.values():
            value = (node.metadata.labels or {}).get(key)
            if value is not None:
                domains[value] = domains.get(value, 0) + 1
        return (key, domains) if len(domains) > 1 else None

    def _topology_warning(self, gk: str, pg: Any, members: int) -> str:
        """Karpenter v1.14 ignores schedulingConstraints.topology: it launched the gang's nodes in
        several domains, none of which holds minCount (reference kube-scheduler-1.37.md §11)."""
        spread = self._topology_spread(pg)
        assert spread is not None
        key, domains = spread
        fit, total = self.pod_group_last_fit.get(gk, (0, members))
        where = ", ".join(f"{d}: {n} node{'s' if n != 1 else ''}" for d, n in sorted(domains.items()))
        return (f"PodGroup {gk} (gang, minCount {pg.min_count}, topology {key}): not scheduled; kube-scheduler "
                f"found no single {key} domain with room for minCount pods (its last cycle fit {fit} of {total} "
                "in one domain), so it binds none; Karpenter v1.14 ignores schedulingConstraints.topology and spread "
                f"the nodes over {len(domains)} domains ({where}); that capacity stays unused by the gang")


def node_update_events(old: Any, new: Any) -> list[str]:
    """eventhandlers.go nodeSchedulingPropertiesChange (allocatable, labels, taints/unschedulable, conditions)."""
    out = []
    if (old.status.allocatable or {}) != (new.status.allocatable or {}):
        out.append(UPDATE_NODE_ALLOCATABLE)
    if (old.metadata.labels or {}) != (new.metadata.labels or {}):
        out.append(UPDATE_NODE_LABEL)
    if list(old.spec.taints or []) != list(new.spec.taints or []) or bool(old.spec.unschedulable) != bool(new.spec.unschedulable):
        out.append(UPDATE_NODE_TAINT)
    if list(getattr(old.status, "conditions", None) or []) != list(getattr(new.status, "conditions", None) or []):
        out.append(UPDATE_NODE_CONDITION)
    return out
