"""An existing node (or in-flight NodeClaim with no Node yet) as a scheduling target.

Mirrors pkg/controllers/provisioning/scheduling/existingnode.go (NewExistingNode, CanAdd,
tryVolumeAlternative, Add). Existing nodes use *strict* label compatibility (no allowance for
undefined well-known labels). Volume topology alternatives are tried in order. Out of scope: volume
limits, DRA, consolidateAfter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from karpy.provisioning.requirementchanges import topology_changes_error
from karpy.scheduling.labels import LABEL_HOSTNAME, OP_IN
from karpy.scheduling.requirement import Requirement
from karpy.scheduling.requirements import Requirements
from karpy.scheduling.resources import fits
from karpy.state.cluster import StateNode

if TYPE_CHECKING:
    from karpy.api.pod import Pod

__all__ = ["ExistingNode"]

_NO_ALLOW: frozenset[str] = frozenset()


class ExistingNode:
    """existingnode.go ExistingNode."""

    __slots__ = (
        "state_node",
        "name",
        "hostname",
        "pods",
        "topology",
        "taints",
        "remaining_resources",
        "requirements",
        "host_port_usage",
        "_initialized",
        "volume_usage",
        "_merged",
        "_owns",
    )

    def __init__(self, state_node: StateNode, topology: Any, taints: list[Any], daemon_resources: dict[str, int],
                 label_requirements: Requirements | None = None, available: dict[str, int] | None = None) -> None:
        """``label_requirements``: ``Requirements.from_labels(state_node.labels())`` when the caller
        has it already (SchedulerCache.label_requirements); only read here, never narrowed.
        ``available``: ``state_node.available()`` when the caller has it (only read)."""
        self.state_node = state_node
        self.name = state_node.name
        self.pods: list[Pod] = []
        self.topology = topology
        self.taints = taints
        # remaining daemon resources = compatible DS requests - DS requests already bound, clamped at 0
        daemon = dict(daemon_resources)
        for k, v in state_node.daemonset_requests().items():
            daemon[k] = daemon.get(k, 0) - v
        for k, v in daemon.items():
            if v < 0:
                daemon[k] = 0
        if available is None:
            available = state_node.available()
        self.remaining_resources = {k: v - daemon.get(k, 0) for k, v in available.items()}
        reqs = (Requirements.from_labels(state_node.labels()) if label_requirements is None
                else label_requirements.copy())
        hostname = state_node.hostname()
        #: the node's hostname; its requirement is ``In [hostname]`` (scanskips' pre-filter)
        self.hostname = hostname
        reqs.add(Requirement(LABEL_HOSTNAME, OP_IN, (hostname,)))
        self.requirements = reqs
        self.host_port_usage = state_node.host_port_usage().copy()
        #: whether remaining_resources and host_port_usage are this node's own (a fresh copy shares
        #: its prototype's until add changes them)
        self._owns = True
        self._initialized = state_node.initialized()
        #: CSI volume limits (karpy.provisioning.volumeusage.VolumeUsage; set by the scheduler)
        self.volume_usage: Any = None
        #: pod requirement signature -> (node requirements + pod requirements, or the Compatible
        #: error): a pure function of the two while the node's requirements stay the same object;
        #: reset by add, the only place they change
        self._merged: dict[Any, tuple[Requirements | None, str | None]] = {}
        topology.register(LABEL_HOSTNAME, hostname)

    def __repr__(self) -> str:
        return f"ExistingNode({self.name!r}, pods={len(self.pods)})"

    def fresh(self, topology: Any) -> ExistingNode:
        """What ``__init__`` builds for this node's StateNode, taints and daemon resources, with
        ``topology``: a copy of this one, which no pod was added to (karpy.provisioning.existingnodememo's
        prototype). The copy shares the prototype's remaining resources and host-port usage until
        add changes them (then they are copied); the requirements and taints are shared (add
        replaces the requirements, nothing edits either in place)."""
        en = object.__new__(ExistingNode)
        en.state_node = self.state_node
        en.name = self.name
        hostname = en.hostname = self.hostname
        en.pods = []
        en.topology = topology
        en.taints = self.taints
        en.remaining_resources = self.remaining_resources
        en.requirements = self.requirements
        en.host_port_usage = self.host_port_usage
        en._owns = False
        en._initialized = self._initialized
        en.volume_usage = None
        en._merged = {}
        topology.register(LABEL_HOSTNAME, hostname)
        return en

    def initialized(self) -> bool:
        return self._initialized

    def managed(self) -> bool:
        return self.state_node.managed()

    def labels(self) -> dict[str, str]:
        return self.state_node.labels()

    def can_add(self, pod: Pod, pod_data: Any) -> tuple[Requirements | None, str | None]:
        """existingnode.go CanAdd (:81-139), same order of checks and messages."""
        err = pod_data.tolerates_taints(self, self.taints)
        if err is not None:
            return None, err
        if self.volume_usage is not None and pod_data.volumes:
            err = self.volume_usage.exceeds_limits(pod_data.volumes)
            if err is not None:
                return None, "checking volume usage, " + err
        if pod_data.host_ports:
            err = self.host_port_usage.conflicts(pod_data.key, pod_data.host_ports)
            if err is not None:
                return None, "checking host port usage, " + err
        if not self.has_room(pod_data.requests):
            return None, "exceeds node resources"
        hit = self._merged.get(pod_data.req_signature)
        if hit is None:
            err = self.requirements.compatible(pod_data.requirements)
            if err is not None:
                hit = (None, err)
            else:
                merged = self.requirements.copy()
                merged.add(*pod_data.requirements.values())
                hit = (merged, None)
            self._merged[pod_data.req_signature] = hit
        base, err = hit
        if base is None:
            return None, err
        alternatives = pod_data.volume_requirements or (None,)
        last: str | None = None
        for vol in alternatives:
            reqs, err = self._try_volume_alternative(pod, pod_data, base, vol)
            if err is None:
                return reqs, None
            last = err
        return None, last

    def has_room(self, requests: dict[str, int]) -> bool:
        """CanAdd's resource check: nothing overcommitted and every request within what remains.
        Remaining resources only shrink during a Solve (add subtracts non-negative requests), so
        once False for some requests it stays False for them (scanskips.Scans relies on it)."""
        return fits(requests, self.remaining_resources)

    def _try_volume_alternative(self, pod: Pod, pod_data: Any, base: Requirements,
                                vol: Requirements | None) -> tuple[Requirements | None, str | None]:
        """existingnode.go tryVolumeAlternative: the node's labels must satisfy the volume
        alternative, then topology."""
        reqs = base
        if vol is not None:
            err = base.compatible(vol, _NO_ALLOW)
            if err is not None:
                return None, "incompatible volume requirements, " + err
            reqs = base.copy()
            reqs.add(*vol.values())
        # AddRequirements + Compatible + Add as the keys they change (Topology.narrow, requirementchanges),
        # as NodeClaim's tryVolumeAlternative reads them: no copy when no topology narrows the node
        changes, err = self.topology.narrow(pod, self.taints, pod_data.strict_requirements, reqs, _NO_ALLOW)
        if err is not None:
            return None, err
        if not changes:
            return reqs, None
        cerr = topology_changes_error(reqs, changes, _NO_ALLOW)
        if cerr is not None:
            return None, cerr
        narrowed = reqs.copy()
        dict.update(narrowed, changes)
        return narrowed, None

    def add(self, pod: Pod, pod_data: Any, requirements: Requirements) -> None:
        """existingnode.go Add (:159-185)."""
        if not self._owns:
            self.remaining_resources = dict(self.remaining_resources)
            self.host_port_usage = self.host_port_usage.copy()
            self._owns = True
        self.pods.append(pod)
        remaining = self.remaining_resources
        for k, v in pod_data.requests.items():
            remaining[k] = remaining.get(k, 0) - v
        self.requirements = requirements
        self._merged = {}
        self.topology.record(pod, self.taints, requirements, _NO_ALLOW)
        if self.volume_usage is not None and pod_data.volumes:
            self.volume_usage.add(pod_data.volumes)
        if pod_data.host_ports:
            self.host_port_usage.add(pod_data.key, pod_data.host_ports)
