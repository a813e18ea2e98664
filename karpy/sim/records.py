"""What a run records: its NodeClaims (:class:`LaunchRecord`), its provisioning passes and what
they did with each pod (explain output), and the final state (:class:`SimulationResult`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from karpy.api.node import Node
from karpy.api.pod import Pod
from karpy.sim.options import SimulationOptions
from karpy.sim.timeline import Timeline

__all__ = ["LaunchRecord", "PodHistory", "ProvisioningPass", "SimulationResult"]


@dataclass
class LaunchRecord:
    """One NodeClaim as Karpenter created it, and what the cloud provider made of it."""

    name: str
    nodepool: str
    created_at: float
    requested: Any  # the NodeClaim model sent to CloudProvider.create
    launched: Any | None = None  # the NodeClaim returned by create
    error: str | None = None
    instance_type: str | None = None
    capacity_type: str | None = None
    zone: str | None = None
    price: float | None = None
    node_name: str | None = None
    registered_at: float | None = None
    initialized_at: float | None = None
    deleted: bool = False
    #: termination: when it began (the NodeClaim got its deletionTimestamp), when the instance was
    #: deleted, and why (``interruption``, ``nodepool-deleted``, a disruption method, ...)
    deleting_at: float | None = None
    deleted_at: float | None = None
    deleted_by: str | None = None
    scheduling: Any = None  # the in-flight claim of the provisioning pass (for explain output)
    #: explain output (references, no copies): the provisioning pass that created the claim, the
    #: pass's instance types of its NodePool, the claim's instance types before the
    #: MaxInstanceTypes cut and its requirements before ToNodeClaim narrowed them
    pass_index: int = 0
    instance_types: Sequence[Any] | None = None
    untruncated: Sequence[Any] | None = None
    requirements: Any = None
    #: the $/h steps of its life when the price changed after launch (a reserved node demoted to
    #: on-demand when its reservation ended): ``(from, $/h, capacity type)``, the launch first;
    #: empty while the launch price held throughout (``price`` is always the current $/h)
    price_history: list[tuple[float, float, str | None]] = field(default_factory=list)
    #: its launch detail (``scheduling``, ``instance_types``, ``untruncated``, ``requirements`` and
    #: the provider's launch record) was let go once it was gone (karpy.sim.retention)
    detail_released: bool = False


@dataclass
class ProvisioningPass:
    """One provisioning pass (for explain output): when it ran, the NodePools it considered in
    weight order, the ones the scheduler dropped up front (name -> upstream error) and the ones it
    kept as templates."""

    index: int
    time: float
    nodepools: list[tuple[str, int]] = field(default_factory=list)
    template_errors: dict[str, str] = field(default_factory=dict)
    #: the scheduler's templates (NodePools kept up front), weight order (Scheduler.template_names)
    templates: list[str] = field(default_factory=list)


@dataclass
class PodHistory:
    """What the provisioning passes did with one pod (for explain output). ``decisive`` is the
    last ``(pass, attempt)`` that decided something (``attempt``: the scheduler's record,
    ``karpy.provisioning.scheduler.PodAttempt.from_record(attempt)``) -- a later pass that merely found the pod's
    own launching NodeClaim as an existing node does not replace it; ``last`` the last one."""

    decisive: tuple[ProvisioningPass, Any]
    last: tuple[ProvisioningPass, Any]
    passes: int = 1


@dataclass
class SimulationResult:
    """The final state of a run (``karpy.report`` turns it into the JSON document)."""

    pods: dict[str, Pod]
    deleted_pods: dict[str, Pod]
    nodes: dict[str, Node]
    launches: list[LaunchRecord]
    pod_errors: dict[str, str]
    virtual_seconds: float
    provisioning_passes: int
    scheduling_cycles: int
    warnings: list[str] = field(default_factory=list)
    #: explain output: every provisioning pass that ran the scheduler, in order, and per pod key
    #: what those passes did with the pod
    passes: list[ProvisioningPass] = field(default_factory=list)
    pod_history: dict[str, PodHistory] = field(default_factory=dict)
    options: SimulationOptions | None = None
    #: the timeline (karpy.sim.timeline) and the horizon the cost integral runs to (None: the end
    #: of the run)
    timeline: Timeline = field(default_factory=Timeline)
    horizon: float | None = None
    #: pods whose arrival (karpy.io/arrive-after) lies after the end of the run: key -> arrival time
    not_arrived: dict[str, tuple[Pod, float]] = field(default_factory=dict)
    #: the NodePools at the end of the run (their status conditions: the document's ``nodepools``)
    nodepools: list[Any] = field(default_factory=list)
    #: the disruption controller (decisions, events, timeline steps) when disruption ran
    disruption: Any = None
