"""The scheduler's view of the cluster: existing nodes, in-flight NodeClaims, bound pods.

Mirrors pkg/controllers/state/statenode.go (StateNode) and the parts of
pkg/controllers/state/cluster.go the provisioner reads (Nodes, ForPodsWithAntiAffinity,
NodePoolResourcesFor, GetDaemonSetPod). Plain Python classes built by the simulation
from Node / NodeClaim / Pod models; no informers, no locks, no clock.

Determinism: upstream keeps nodes and pods in Go maps; here ``ClusterState.nodes`` keeps the
order it was given, and ``pods_with_anti_affinity()`` is sorted by pod key.
Out of scope: volume usage (volume topology), disruption costs, nomination windows.

A snapshot is rebuilt per provisioning pass; :meth:`ClusterState.adopt_derived` lets it take over
the previous snapshot's per-node pod sums where a node's bound pods are the same objects (what
upstream's long-lived StateNode keeps up to date pod by pod).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from karpy.api.quantity import NANO
from karpy.scheduling.labels import LABEL_HOSTNAME, LABEL_NODEPOOL, NODE_INITIALIZED, NODE_REGISTERED
from karpy.scheduling.resources import from_quantities, merge_into
from karpy.scheduling.taints import is_known_ephemeral_taint, match_taint
from karpy.utils import pod as podutils

if TYPE_CHECKING:  # pragma: no cover
    from karpy.api.meta import ObjectMeta
    from karpy.api.node import Node
    from karpy.api.nodeclaim import NodeClaim
    from karpy.api.pod import Pod, Taint
    from karpy.api.workloads import DaemonSet
    from karpy.scheduling.hostports import HostPortUsage

__all__ = ["ClusterState", "PodBindings", "RESOURCE_NODES", "StateNode"]

#: pkg/utils/resources resources.Node: the pseudo resource counting nodes (limits.nodes)
RESOURCE_NODES = "nodes"


def _condition_true(obj: Any, cond_type: str) -> bool:
    status = getattr(obj, "status", None)
    for cond in getattr(status, "conditions", None) or ():
        if cond.type == cond_type and cond.status == "True":
            return True
    return False


class PodBindings(Protocol):
    """An index of a pod list by ``spec.nodeName``, each list in the pod list's order
    (:class:`karpy.sim.podsbynode.PodsByNode` over the simulation's store)."""

    def on(self, node: str) -> list[Pod]: ...
    def unbound(self) -> list[Pod]: ...
    def with_affinity(self) -> list[Pod]: ...


class StateNode:
    """An existing Node and/or in-flight NodeClaim (statenode.go StateNode).

    ``pods`` are the pods bound to it (spec.nodeName == node name). Requests of those pods
    (and of the DaemonSet-owned ones) are computed once at construction.
    """

    __slots__ = (
        "node",
        "nodeclaim",
        "pods",
        "_marked_for_deletion",
        "_pod_requests",
        "_daemonset_requests",
        "_host_port_usage",
    )

    def __init__(
        self,
        node: Node | None = None,
        nodeclaim: NodeClaim | None = None,
        pods: Iterable[Pod] = (),
        marked_for_deletion: bool = False,
    ) -> None:
        if node is None and nodeclaim is None:
            raise ValueError("StateNode needs a node or a nodeclaim")
        self.node = node
        self.nodeclaim = nodeclaim
        self.pods: list[Pod] = list(pods)
        self._marked_for_deletion = marked_for_deletion
        self._pod_requests: dict[str, int] | None = None
        self._daemonset_requests: dict[str, int] | None = None
        self._host_port_usage: HostPortUsage | None = None

    def __repr__(self) -> str:
        return f"StateNode({self.name!r})"

    # -- identity -------------------------------------------------------------------------
    def managed(self) -> bool:
        """statenode.go Managed: backed by a NodeClaim."""
        return self.nodeclaim is not None

    def registered(self) -> bool:
        """statenode.go Registered."""
        if self.managed():
            return self.node is not None and (self.node.metadata.labels or {}).get(NODE_REGISTERED) == "true"
        return True

    def initialized(self) -> bool:
        """statenode.go Initialized."""
        if self.managed():
            return self.node is not None and (self.node.metadata.labels or {}).get(NODE_INITIALIZED) == "true"
        return True

    @property
    def name(self) -> str:
        """statenode.go Name: the NodeClaim name until the Node registers."""
        name: str = self._meta().name
        return name

    def _claim(self) -> NodeClaim:
        """The NodeClaim where there must be one: managed, or no Node (``__init__`` needs one of the two)."""
        assert self.nodeclaim is not None, "a StateNode has a node or a nodeclaim"
        return self.nodeclaim

    def _node(self) -> Node:
        """The Node where there must be one: unmanaged, or initialized (``__init__`` needs one of the two)."""
        assert self.node is not None, "a StateNode has a node or a nodeclaim"
        return self.node

    def _meta(self) -> ObjectMeta:
        node, claim = self.node, self.nodeclaim
        if node is None:
            return self._claim().metadata
        meta = node.metadata
        if claim is None:
            return meta
        # (registered(), inline: asked for every name and labels read)
        return meta if (meta.labels or {}).get(NODE_REGISTERED) == "true" else claim.metadata

    def labels(self) -> dict[str, str]:
        """statenode.go Labels."""
        return self._meta().labels or {}

    def annotations(self) -> dict[str, str]:
        """statenode.go Annotations."""
        return self._meta().annotations or {}

    def hostname(self) -> str:
        """statenode.go HostName: the hostname label, else Name()."""
        return self.labels().get(LABEL_HOSTNAME) or self.name

    def nodepool_name(self) -> str | None:
        """The karpenter.sh/nodepool label (cluster.go uses it for NodePool resources)."""
        return self.labels().get(LABEL_NODEPOOL)

    def taints(self) -> list[Taint]:
        """statenode.go Taints: NodeClaim taints until registered; uninitialized managed nodes
        drop known ephemeral taints and taints matching the NodeClaim's startup taints."""

        if (not self.registered() and self.managed()) or self.node is None:
            taints = list(self._claim().spec.taints or ())
        else:
            taints = list(self.node.spec.taints or ())
        if not self.initialized() and self.managed():
            startup = list(self._claim().spec.startup_taints or ())
            return [
                t
                for t in taints
                if not is_known_ephemeral_taint(t) and not any(match_taint(s, t) for s in startup)
            ]
        return taints

    def deleted(self) -> bool:
        """statenode.go Deleted."""
        claim = self.nodeclaim
        if claim is not None:
            return claim.metadata.deletion_timestamp is not None or _condition_true(claim, "InstanceTerminating")
        return self.node is not None and self.node.metadata.deletion_timestamp is not None

    def marked_for_deletion(self) -> bool:
        """statenode.go MarkedForDeletion."""
        return self._marked_for_deletion or self.deleted()

    def mark_for_deletion(self, value: bool = True) -> None:
        self._marked_for_deletion = value

    # -- resources ------------------------------------------------------------------------
    def capacity(self) -> dict[str, int]:
        """statenode.go Capacity (always includes ``nodes: 1``)."""
        if not self.initialized() and self.nodeclaim is not None:
            if self.node is not None:
                ret = from_quantities(self.node.status.capacity)
                for k, v in from_quantities(self.nodeclaim.status.capacity).items():
                    if not ret.get(k):
                        ret[k] = v
            else:
                ret = from_quantities(self.nodeclaim.status.capacity)
        else:
            ret = from_quantities(self._node().status.capacity)
        ret[RESOURCE_NODES] = NANO
        return ret

    def allocatable(self) -> dict[str, int]:
        """statenode.go Allocatable (NodeClaim values fill zero Node values until initialized)."""
        if not self.initialized() and self.nodeclaim is not None:
            if self.node is not None:
                ret = from_quantities(self.node.status.allocatable)
                for k, v in from_quantities(self.nodeclaim.status.allocatable).items():
                    if not ret.get(k):
                        ret[k] = v
                return ret
            return from_quantities(self.nodeclaim.status.allocatable)
        return from_quantities(self._node().status.allocatable)

    def _compute_requests(self) -> None:
        from karpy.scheduling.resources import pod_requests

        total: dict[str, int] = {}
        ds: dict[str, int] = {}
        for p in self.pods:
            r = pod_requests(p)
            merge_into(total, r)
            if podutils.is_owned_by_daemonset(p):
                merge_into(ds, r)
        self._pod_requests = total
        self._daemonset_requests = ds

    def sums_from(self, old: StateNode) -> bool:
        """Take ``old``'s pod and DaemonSet request sums (computed over other pods bound to the same
        node) and change them by the pods bound since and those gone: exact (integer sums) when
        no sum comes to zero (then a resource may have no pod left: not taken, False). The sums'
        key order may differ from a fresh computation's; no reader depends on it. ``old``'s
        host-port usage is taken too when no pod bound or gone has a host port and the pods kept
        are in the same order (the usage lists the ports by pod, in the pods' order)."""
        if old._pod_requests is None or old._daemonset_requests is None:
            return False
        from karpy.scheduling.hostports import get_host_ports
        from karpy.scheduling.resources import pod_requests

        now = {id(p) for p in self.pods}
        before = {id(p) for p in old.pods}
        gone = [p for p in old.pods if id(p) not in now]
        bound = [p for p in self.pods if id(p) not in before]
        if 2 * (len(gone) + len(bound)) > len(self.pods):
            return False  # (as cheap to sum them all)
        total, ds = dict(old._pod_requests), dict(old._daemonset_requests)
        ports = False
        for sign, pods in ((-1, gone), (1, bound)):
            for p in pods:
                r = pod_requests(p)
                sums = (total, ds) if podutils.is_owned_by_daemonset(p) else (total,)
                for into in sums:
                    for k, v in r.items():
                        into[k] = into.get(k, 0) + sign * v
                ports = ports or bool(get_host_ports(p))
        if 0 in total.values() or 0 in ds.values():
            return False
        self._pod_requests, self._daemonset_requests = total, ds
        if old._host_port_usage is not None and not ports and self._host_port_usage is None and \
                [id(p) for p in self.pods if id(p) in before] == [id(p) for p in old.pods if id(p) in now]:
            self._host_port_usage = old._host_port_usage
        return True

    def pod_requests(self) -> dict[str, int]:
        """statenode.go PodRequests: sum of bound pods' requests."""
        if self._pod_requests is None:
            self._compute_requests()
        return dict(self._pod_requests or {})

    def daemonset_requests(self) -> dict[str, int]:
        """statenode.go DaemonSetRequests: sum of bound DaemonSet pods' requests."""
        if self._daemonset_requests is None:
            self._compute_requests()
        return dict(self._daemonset_requests or {})

    def available(self) -> dict[str, int]:
        """statenode.go Available = Allocatable - PodRequests (resources.Subtract: keys of allocatable)."""
        alloc = self.allocatable()
        req = self.pod_requests()
        return {k: v - req.get(k, 0) for k, v in alloc.items()}

    def host_port_usage(self) -> HostPortUsage:
        """statenode.go HostPortUsage: host ports of bound pods."""
        if self._host_port_usage is None:
            from karpy.scheduling.hostports import HostPortUsage, get_host_ports

            usage = HostPortUsage()
            for p in self.pods:
                ports = get_host_ports(p)
                if ports:
                    usage.add(p.key, ports)
            self._host_port_usage = usage
        return self._host_port_usage

    def add_pod(self, pod: Pod) -> None:
        """Bind a pod (cluster.go updateNodeUsageFromPod)."""
        self.pods.append(pod)
        self._pod_requests = None
        self._daemonset_requests = None
        self._host_port_usage = None


class ClusterState:
    """Snapshot of cluster state for one provisioning pass (cluster.go Cluster, read side)."""

    def __init__(self, nodes: Sequence[StateNode] = (), pods: Sequence[Pod] = ()) -> None:
        self.nodes: list[StateNode] = list(nodes)
        self.pods: list[Pod] = list(pods)
        self._by_node_name: dict[str, StateNode] = {}
        for sn in self.nodes:
            if sn.node is not None:
                self._by_node_name[sn.node.metadata.name] = sn
        #: what from_objects(scan_pods=True) noted while binding: (the pods list it walked, its
        #: length, the pods without spec.nodeName, the bound pods with an affinity), see _scanned
        self._scan: tuple[list[Pod], int, list[Pod], list[Pod]] | None = None
        #: (from_objects ``scan_pods``) the Topologies over this snapshot share one pod index
        #: (topologypodindex.PodIndex, ``pod_index``), the first built from the previous snapshot's
        #: (``pod_index_seed``): see topologypodindex.cluster_pod_index
        self.shares_pod_index = False
        self.pod_index: Any = None
        self.pod_index_seed: Any = None

    @classmethod
    def from_objects(
        cls,
        nodes: Sequence[Node] = (),
        nodeclaims: Sequence[NodeClaim] = (),
        pods: Sequence[Pod] = (),
        marked_for_deletion: Iterable[str] = (),
        previous: ClusterState | None = None,
        scan_pods: bool = False,
        bindings: PodBindings | None = None,
    ) -> ClusterState:
        """Pair NodeClaims with Nodes (by providerID, else status.nodeName) and bind pods.

        cluster.go keys state nodes by providerID; a NodeClaim without a Node is in flight.
        ``marked_for_deletion`` holds state-node names (disruption's MarkForDeletion).
        ``previous``: an earlier snapshot of the same cluster whose per-node sums may be reused
        (:meth:`adopt_derived`). ``scan_pods``: the caller edits none of these pods in place while
        it uses the snapshot (the simulation's store replaces a pod to change it); binding then
        also notes the unbound pods and the bound pods with an affinity, which
        :meth:`unbound_pods` and :meth:`pods_with_anti_affinity` walk instead of every pod, and
        the snapshot's Topologies share one pod index, built from ``previous``'s
        (``shares_pod_index``). ``bindings`` (with ``scan_pods``): an index of ``pods`` by
        ``spec.nodeName`` whose lists are the ones the walk over ``pods`` would build, read instead.
        """
        marked = set(marked_for_deletion)
        by_pid: dict[str, Node] = {}
        by_name: dict[str, Node] = {}
        for n in nodes:
            by_name[n.metadata.name] = n
            pid = getattr(n.spec, "provider_id", None)
            if pid:
                by_pid[pid] = n
        used: set[str] = set()
        state_nodes: list[StateNode] = []
        for nc in nodeclaims:
            status = getattr(nc, "status", None)
            pid = getattr(status, "provider_id", None)
            node = by_pid.get(pid) if pid else None
            if node is None:
                nn = getattr(status, "node_name", None)
                node = by_name.get(nn) if nn else None
            if node is not None:
                used.add(node.metadata.name)
            state_nodes.append(StateNode(node=node, nodeclaim=nc))
        for n in nodes:
            if n.metadata.name not in used:
                state_nodes.append(StateNode(node=n))
        if marked:  # (nothing to look up when nothing is marked, the common case)
            for sn in state_nodes:
                if sn.name in marked:
                    sn.mark_for_deletion()
        cs = cls(state_nodes, pods)
        unbound, with_affinity = cs._bind_pods(bindings if scan_pods else None)
        if scan_pods:
            cs._scan = (cs.pods, len(cs.pods), unbound, with_affinity)
            cs.shares_pod_index = True
            if previous is not None and previous.shares_pod_index:
                cs.pod_index_seed = previous.pod_index if previous.pod_index is not None else previous.pod_index_seed
        if previous is not None:
            cs.adopt_derived(previous)
        return cs

    def _bind_pods(self, bindings: PodBindings | None) -> tuple[list[Pod], list[Pod]]:
        """from_objects' binding of :attr:`pods` to the fresh StateNodes; returns the unbound pods
        and the bound pods with an affinity. node_for_pod and add_pod for every pod, read inline
        (every pass binds every pod of the cluster): the same lookup, and the same appends in the
        same order -- the fresh StateNodes have derived nothing yet, so add_pod's resets have
        nothing to reset. ``bindings``: the same lists from the index, no pod's spec read."""
        by_node_name = self._by_node_name
        if bindings is not None:
            for node_name, sn in by_node_name.items():
                sn.pods = bindings.on(node_name)
            return bindings.unbound(), [p for p in bindings.with_affinity() if p.spec.node_name in by_node_name]
        unbound: list[Pod] = []
        with_affinity: list[Pod] = []
        for p in self.pods:
            spec = p.spec
            name = spec.node_name
            if name:
                bound = by_node_name.get(name)
                if bound is not None:
                    bound.pods.append(p)
                    if spec.affinity is not None:
                        with_affinity.append(p)
            else:
                unbound.append(p)
        return unbound, with_affinity

    #: False: a node bound to other pods than before sums all of them again (the plain path the
    #: tests compare with)
    incremental_sums = True

    def adopt_derived(self, previous: ClusterState) -> int:
        """Take over what ``previous``'s StateNodes derived from their bound pods -- the pod and
        DaemonSet requests and the host-port usage -- for every StateNode here bound to exactly
        the same pod objects, in the same order; returns how many nodes adopted something.

        Upstream's cluster state is long-lived and updates a StateNode's sums as pods bind and
        leave (cluster.go updateNodeUsageFromPod / cleanupOldBindings); karpy rebuilds the
        snapshot per provisioning pass, so without this every pass sums every bound pod again.
        Sound because those values are functions of the bound pods alone, keyed here by the pods'
        identities (``previous`` holds the objects, so no identity is reused while comparing), and
        because the object store replaces a pod on every change instead of editing it (a bind, an
        eviction, a status change: a new object, a new key). The node and NodeClaim objects are
        not part of the key: nothing adopted depends on them. A node bound to other pods than
        the same node in ``previous`` takes its sums changed by the pods bound and gone
        (:meth:`StateNode.sums_from`)."""
        derived: dict[tuple[int, ...], StateNode] = {}
        summed: dict[str, StateNode] = {}
        for sn in previous.nodes:
            if sn._pod_requests is not None or sn._host_port_usage is not None:
                derived[tuple(map(id, sn.pods))] = sn
                summed[sn.name] = sn
        adopted = 0
        for sn in self.nodes:
            old = derived.get(tuple(map(id, sn.pods)))
            if old is None:
                # the same node with other pods: its sums changed by the pods bound and gone
                old = summed.get(sn.name)
                if self.incremental_sums and old is not None and sn._pod_requests is None and sn.sums_from(old):
                    adopted += 1
                continue
            if sn._pod_requests is None and old._pod_requests is not None:
                sn._pod_requests = old._pod_requests
                sn._daemonset_requests = old._daemonset_requests
            if sn._host_port_usage is None and old._host_port_usage is not None:
                sn._host_port_usage = old._host_port_usage
            adopted += 1
        return adopted

    def active_nodes(self) -> list[StateNode]:
        """StateNodes.Active(): not marked for deletion."""
        return [n for n in self.nodes if not n.marked_for_deletion()]

    def deleting_nodes(self) -> list[StateNode]:
        """StateNodes.Deleting()."""
        return [n for n in self.nodes if n.marked_for_deletion()]

    def partition_nodes(self) -> tuple[list[StateNode], list[StateNode]]:
        """(:meth:`active_nodes`, :meth:`deleting_nodes`), asking each node once."""
        active: list[StateNode] = []
        deleting: list[StateNode] = []
        for n in self.nodes:
            (deleting if n.marked_for_deletion() else active).append(n)
        return active, deleting

    def node_for_pod(self, pod: Pod) -> StateNode | None:
        """The state node (with a real Node) a pod is bound to, via spec.nodeName."""
        name = pod.spec.node_name
        if not name:
            return None
        return self._by_node_name.get(name)

    def _scanned(self) -> tuple[list[Pod], int, list[Pod], list[Pod]] | None:
        """from_objects' notes (``scan_pods``) while :attr:`pods` is still the list it walked, at
        the length it had; None otherwise."""
        scan = self._scan
        if scan is not None and scan[0] is self.pods and len(self.pods) == scan[1]:
            return scan
        return None

    def unbound_pods(self, pods: Sequence[Pod]) -> list[Pod] | None:
        """The pods of ``pods`` without ``spec.nodeName``, in their order, when ``pods`` holds
        exactly this snapshot's pods (the same objects in the same order) and from_objects noted
        them (``scan_pods``); None otherwise. Not in upstream; for GetPendingPods, which passes
        over every bound pod (IsProvisionable is false for each)."""
        scan = self._scanned()
        if scan is None or len(pods) != len(self.pods) or not all(map(operator.is_, pods, self.pods)):
            return None
        return scan[2]

    def pods_with_anti_affinity(self) -> list[tuple[Pod, Node]]:
        """cluster.go ForPodsWithAntiAffinity: (pod, Node) for bound pods with *required*
        anti-affinity whose Node exists. Sorted by pod key (upstream iterates a sync.Map).

        After from_objects(scan_pods=True) only the bound pods with an affinity it noted are
        walked. Not in upstream; same result because the walk below keeps only pods with an
        affinity bound to a Node of the snapshot, and those are the ones noted, in the same order
        (nothing edits them meanwhile: ``scan_pods``)."""
        out: list[tuple[Pod, Node]] = []
        has_required = podutils.has_required_pod_anti_affinity
        scan = self._scanned()
        for p in (self.pods if scan is None else scan[3]):
            # (a pod without affinity, the common case, is answered before the call)
            if p.spec.affinity is None or not has_required(p):
                continue
            sn = self.node_for_pod(p)
            if sn is None or sn.node is None:
                continue
            out.append((p, sn.node))
        out.sort(key=lambda t: t[0].key)
        return out

    def nodepool_usage(self, name: str) -> dict[str, int]:
        """cluster.go NodePoolResourcesFor: Σ Capacity() (incl. ``nodes: 1``) of the pool's
        state nodes that are not marked for deletion."""
        total: dict[str, int] = {}
        for sn in self.nodes:
            if sn.nodepool_name() != name or sn.marked_for_deletion():
                continue
            merge_into(total, sn.capacity())
        return total

    def daemonset_pod(self, daemonset: DaemonSet) -> Pod | None:
        """cluster.go GetDaemonSetPod: a pod owned by the DaemonSet (matched by owner uid, else
        name), the first by pod key (upstream keeps the most recently seen one)."""
        uid = getattr(daemonset.metadata, "uid", None)
        name = daemonset.metadata.name
        ns = daemonset.metadata.namespace
        best = None
        for p in self.pods:
            if p.metadata.namespace != ns:
                continue
            for ref in p.metadata.owner_references or ():
                if ref.kind == "DaemonSet" and ((uid and ref.uid == uid) or (not uid and ref.name == name)):
                    if best is None or p.key < best.key:
                        best = p
                    break
        return best
