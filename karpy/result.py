"""The result of a simulation and the JSON document of the design's contract.

``Result.to_document()`` builds the document ``karpy simulate -o json`` prints; its keys are stable
(more may be added). Its ``explain`` key holds the decision traces of :mod:`karpy.explain`
(``{"scope", "nodeclaims": {name: ...}, "pods": {key: ...}}``), unless ``Result.explain`` was set.
``Result.to_json()`` serialises it with sorted-free, insertion-ordered keys and fixed float
formatting so the same input gives byte-identical output.

The typed views a library caller reads -- ``Result.nodeclaims`` (:class:`~karpy.document.NodeClaimResult`),
``Result.pods`` (:class:`~karpy.document.PodResult`), ``Result.cost`` (:class:`~karpy.document.Cost`),
``Result.warnings`` -- are the records the document is built from, so they and the JSON never
disagree; :mod:`karpy.schemas` publishes the document's JSON Schema, generated from the same types.
Views without arguments are properties; queries that take one are methods (``pods_on(node)``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast

from karpy.api.billing import BillingProfile
from karpy.document import Cost, NodeClaimResult, PodResult, RequirementDocument
from karpy.scheduling.labels import LABEL_OS
from karpy.sim.collector import FrozenSurvivors
from karpy.sim.simulation import LaunchRecord, SimulationResult

if TYPE_CHECKING:
    from karpy.api.pod import Pod
    from karpy.whynot import WhyNot

__all__ = ["EXIT_BAD_INPUT", "EXIT_OK", "EXIT_PENDING", "Result", "RunInputs", "document_json", "write_document_json"]

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_PENDING = 3


def _round(price: float | None) -> float | None:
    return None if price is None else round(price, 6)


def _requirements(model: Any) -> tuple[RequirementDocument, ...]:
    out: list[RequirementDocument] = []
    for r in model.spec.requirements or ():
        entry: RequirementDocument = {"key": r.key, "operator": r.operator, "values": list(r.values or ())}
        if r.min_values is not None:
            entry["minValues"] = r.min_values
        out.append(entry)
    return tuple(out)


def _owner(pod: Pod) -> str | None:
    """``"Deployment web"``: the pod's controller (a Deployment's ReplicaSet ``web-<hash>`` named by
    its ``pod-template-hash`` label as the Deployment), else None."""
    for ref in pod.metadata.owner_references or ():
        if not ref.controller:
            continue
        if ref.kind == "ReplicaSet":
            h = (pod.metadata.labels or {}).get("pod-template-hash")
            if h and ref.name.endswith(f"-{h}"):
                return f"Deployment {ref.name[: -len(h) - 1]}"
        return f"{ref.kind} {ref.name}"
    return None


@dataclass(frozen=True)
class RunInputs:
    """What ``karpy.simulate`` was called with, so a question about the run can re-run it with a
    change (:meth:`Result.why_not` verifies each flip that way)."""

    #: the ``manifests`` argument as given (paths, YAML text, dicts or model objects)
    manifests: Any
    #: ``simulate``'s keyword arguments (``progress`` left out)
    options: Mapping[str, Any]
    #: what runs it again (``karpy.simulate``, handed down by the simulator)
    rerun: Callable[..., Result]


@dataclass(repr=False)
class Result:
    """What a simulation produced, with the context needed to report it.

    ``repr(result)`` is one line (region, prices, counts, $/h, exit code); ``to_json()`` has it all."""

    simulation: SimulationResult
    region: str | None
    prices: dict[str, Any]
    cloud_provider: Any
    explain: dict[str, Any] = field(default_factory=dict)
    #: pods given with status.phase Succeeded/Failed: reported with that phase, never scheduled
    terminal_pods: list[Any] = field(default_factory=list)
    #: the run's karpy.io/v1alpha1 BillingProfile (adds ``cost.billed``; :mod:`karpy.billing`)
    billing: BillingProfile | None = None
    #: what ``karpy.simulate`` was called with (None for a run it did not build its provider for)
    inputs: RunInputs | None = None

    def __repr__(self) -> str:
        sim = self.simulation
        launched = sum(1 for r in sim.launches if r.launched is not None)
        pods = len(set(sim.pods) | set(sim.deleted_pods) | set(sim.not_arrived) | {p.key for p in self.terminal_pods})
        return (f"<Result region={self.region!r} prices={self.prices.get('date')!r} "
                f"nodeclaims={len(sim.launches)} ({launched} launched) pods={pods} "
                f"({len(self.pending_pods)} pending) cost_per_hour={self.cost_per_hour} exit_code={self.exit_code}>")

    # -- convenience views ----------------------------------------------------------------------
    @property
    def launches(self) -> list[LaunchRecord]:
        """The simulation's internal launch records (every NodeClaim created; low-level: prefer
        :attr:`nodeclaims`)."""
        return self.simulation.launches

    @property
    def nodeclaims(self) -> tuple[NodeClaimResult, ...]:
        """Every NodeClaim created, in creation order, including failed launches (the document's
        ``nodeclaims``)."""
        by_node = self.pods_by_node()
        return tuple(self._nodeclaim(r, by_node) for r in self.simulation.launches)

    @property
    def launched(self) -> tuple[NodeClaimResult, ...]:
        """The NodeClaims whose launch succeeded (:attr:`nodeclaims` with ``launched`` true)."""
        return tuple(nc for nc in self.nodeclaims if nc.launched)

    @property
    def pods(self) -> dict[str, PodResult]:
        """How every pod ended, by ``namespace/name``, sorted (the document's ``pods``)."""
        return self._pod_results()

    @property
    def pending_pods(self) -> list[str]:
        return sorted([k for k, p in self.simulation.pods.items() if not p.spec.node_name]
                      + list(self.simulation.not_arrived))

    @property
    def cost(self) -> Cost:
        """The cost integral (the document's ``cost``; :func:`karpy.cost.cost_integral`). Was a
        method returning the dict: ``result.cost()`` still works, deprecated."""
        from karpy.cost import cost_integral

        sim = self.simulation
        horizon = sim.horizon if sim.horizon is not None else sim.virtual_seconds
        bill = getattr(self.cloud_provider, "reservation_costs", None)
        rows = bill(0.0, horizon) if bill is not None else None
        data = cost_integral(sim.launches, horizon, rows or None)
        if self.billing is not None:
            from karpy.billing import billed_cost, price_book_of, usages

            data["billed"] = billed_cost(usages(sim.launches, horizon), horizon, self.billing,
                                         price_book_of(self.cloud_provider), self.region)
        return Cost.from_dict(data)

    @property
    def cost_per_hour(self) -> float:
        """$/h of the NodeClaims running at the end of the run."""
        running = (r for r in self.simulation.launches if r.launched is not None and not r.deleted)
        return round(sum(r.price or 0.0 for r in running), 6)

    @property
    def exit_code(self) -> int:
        """0 when every pod was placed, 3 when some pod is still pending."""
        return EXIT_PENDING if self.pending_pods else EXIT_OK

    @property
    def warnings(self) -> list[str]:
        """What the run did not model or skipped: the loader's and provider's warnings, then the
        run's own (Windows NodeClaims priced without their licence). Printed on stderr by the CLI in
        every output mode, and the document's ``warnings``."""
        out = list(self.simulation.warnings)
        windows = [r.name for r in self.simulation.launches
                   if r.launched is not None and (r.launched.metadata.labels or {}).get(LABEL_OS) == "windows"]
        if windows:
            out.append(f"{len(windows)} NodeClaim{'s' if len(windows) != 1 else ''} run{'' if len(windows) != 1 else 's'} "
                       "Windows: $/h is the Linux on-demand price without the Windows licence (Karpenter ranks "
                       f"Windows types by Linux prices too): {', '.join(windows[:5])}"
                       + (f", +{len(windows) - 5} more" if len(windows) > 5 else ""))
        return out

    def pods_on(self, node_name: str) -> list[str]:
        """Sorted ``namespace/name`` of the pods bound to ``node_name`` at the end of the run (a
        method: it takes the node; ``nodeclaims[i].pods`` holds the same for each NodeClaim)."""
        return sorted(k for k, p in self.simulation.pods.items() if p.spec.node_name == node_name)

    def why_not(self, instance_type: str | None = None, *, generation: int | str | None = None,
                verify: bool = True, nodeclaim: str | None = None, pod: str | None = None) -> WhyNot:
        """Where ``instance_type`` (or the best candidate of ``generation``) left the race in this
        run, and the smallest changes that flip it, each verified by re-running the simulation
        (:mod:`karpy.whynot`); ``nodeclaim`` / ``pod`` narrow it to that NodeClaim / the pod's NodeClaims.
        Raises :class:`karpy.whynot.WhyNotError` for a type no NodePool offered."""
        from karpy.whynot import why_not

        return why_not(self, instance_type, generation=generation, verify=verify, nodeclaim=nodeclaim, pod=pod)

    def pods_by_node(self) -> dict[str, list[str]]:
        """node name -> sorted pod keys bound there (:meth:`pods_on` for every node in one pass over
        the pods, so the document is O(pods + NodeClaims), not O(pods x NodeClaims))."""
        out: dict[str, list[str]] = {}
        for k, p in self.simulation.pods.items():
            if p.spec.node_name:
                out.setdefault(p.spec.node_name, []).append(k)
        for keys in out.values():
            keys.sort()
        return out

    # -- the document ---------------------------------------------------------------------------
    def _fleet(self, record: LaunchRecord) -> dict[str, Any] | None:
        getter = getattr(self.cloud_provider, "fleet_record", None)
        if getter is None:
            return None
        fleet: dict[str, Any] | None = getter(record.name)
        return fleet

    def _nodeclaim(self, record: LaunchRecord, pods_by_node: dict[str, list[str]] | None = None) -> NodeClaimResult:
        model = record.launched if record.launched is not None else record.requested
        return NodeClaimResult(
            name=record.name,
            nodepool=record.nodepool,
            instance_type=record.instance_type,
            capacity_type=cast(Any, record.capacity_type),
            zone=record.zone,
            price=_round(record.price),
            labels=dict(sorted((model.metadata.labels or {}).items())) if record.launched is not None else {},
            annotations=dict(sorted((model.metadata.annotations or {}).items())),
            pods=tuple((self.pods_on(record.name) if pods_by_node is None else pods_by_node.get(record.name, ()))
                       if record.launched is not None else ()),
            requirements=_requirements(record.requested),
            fleet=cast(Any, self._fleet(record)),
            launched=record.launched is not None,
            error=record.error,
            created_at=record.created_at,
            registered_at=record.registered_at,
            launched_at=record.created_at if record.launched is not None else None,
            deleted_at=record.deleted_at,
            deleted_by=record.deleted_by,
        )

    def _pod(self, pod: Pod) -> dict[str, Any]:
        """The document's ``pods[key]`` entry of ``pod`` (:meth:`_pod_result` as a dict)."""
        return self._pod_result(pod).to_dict()

    def _pod_result(self, pod: Any) -> PodResult:
        key = pod.key
        if pod.status.phase in ("Deleted", "Succeeded"):
            phase = pod.status.phase
        elif pod.spec.node_name:
            phase = "Running"
        else:
            phase = "Pending"
        message = None
        if phase == "Pending":
            message = self.simulation.pod_errors.get(key)
            if message is None:
                for c in pod.status.conditions or ():
                    if c.type == "PodScheduled" and c.status == "False":
                        message = c.message or c.reason
                if message is None and pod.spec.scheduling_gates:
                    message = "pod has scheduling gates: " + ", ".join(g.name for g in pod.spec.scheduling_gates)
        return PodResult(phase=phase, node=pod.spec.node_name or None,
                         nominated_node=pod.status.nominated_node_name or None, message=message, owner=_owner(pod))

    def _pod_results(self) -> dict[str, PodResult]:
        sim = self.simulation
        pods: dict[str, PodResult] = {}
        terminal = {p.key: p for p in self.terminal_pods}
        for key in sorted(set(sim.pods) | set(sim.deleted_pods) | set(sim.not_arrived) | set(terminal)):
            pod = sim.pods.get(key) or sim.deleted_pods.get(key)
            if pod is None and key in sim.not_arrived:
                _, at = sim.not_arrived[key]
                message = (f"not arrived: karpy.io/arrive-after puts it at {at:g}s, after the end of the run "
                           f"({sim.virtual_seconds:g}s)")
                pods[key] = PodResult(phase="Pending", node=None, nominated_node=None, message=message, owner=None)
                continue
            if pod is None:
                t = terminal[key]
                pods[key] = PodResult(phase=t.status.phase, node=t.spec.node_name or None, nominated_node=None,
                                      message="terminal pod: not scheduled, holds no capacity", owner=_owner(t))
                continue
            pods[key] = self._pod_result(pod)
        return pods

    def to_document(self) -> dict[str, Any]:
        """The JSON document (:class:`karpy.document.Document`; schema: :func:`karpy.schema`)."""
        with FrozenSurvivors():  # performance only: as the run (karpy.sim.collector)
            return dict(self.document_sections())

    def document_sections(self, streamed: bool = False) -> Iterator[tuple[str, Any]]:
        """The document's top-level ``(key, value)`` pairs in document order, each built only when
        the iterator reaches it (:meth:`to_document` is ``dict`` of them; :meth:`write_json`
        writes each and lets it go before the next is built). ``streamed``: the large sections
        (``nodeclaims``, ``pods``, ``timeline``) come as :class:`karpy.report.jsontext.Lazy`,
        their entries built one at a time as the streaming writer reaches them."""
        from karpy.report.jsontext import Lazy

        def lazy(entries: Iterator[Any], items: bool = False) -> Any:
            return Lazy(entries, items) if streamed else (dict(entries) if items else list(entries))

        sim = self.simulation
        yield "region", self.region
        yield "prices", dict(self.prices)
        by_node = self.pods_by_node()
        yield "nodeclaims", lazy(self._nodeclaim(r, by_node).to_dict() for r in sim.launches)
        yield "pods", lazy(((key, p.to_dict()) for key, p in self._pod_results().items()), items=True)
        yield "cost_per_hour", self.cost_per_hour
        yield "simulation", {"virtual_seconds": sim.virtual_seconds, "provisioning_passes": sim.provisioning_passes,
                             "scheduling_cycles": sim.scheduling_cycles,
                             "kubernetes_version": self._kubernetes_version()}
        yield "warnings", self.warnings
        yield "timeline", lazy(e.to_dict() for e in sim.timeline.entries)
        yield "cost", self.cost.to_dict()
        yield from self._status_block().items()
        if sim.disruption is not None:
            yield "disruptions", list(sim.disruption.decisions)
            yield "disruption_timeline", list(sim.disruption.timeline)
        yield "explain", self.explain if self.explain else self.explain_block()

    def _kubernetes_version(self) -> str:
        """The modelled Kubernetes version of the run (its kube-scheduler's)."""
        from karpy.featuregates import DEFAULT_KUBERNETES_VERSION

        cfg = getattr(getattr(self.simulation, "options", None), "scheduler_config", None)
        return str(getattr(cfg, "kubernetes_version", None) or DEFAULT_KUBERNETES_VERSION)

    def _status_block(self) -> dict[str, Any]:
        """The document's ``nodeclasses`` (the cloud provider's ``nodeclass_statuses()``, when it has
        one) and ``nodepools`` (each NodePool's status conditions at the end of the run), present
        when the provider reports NodeClass statuses."""
        statuses = getattr(self.cloud_provider, "nodeclass_statuses", None)
        if not callable(statuses):
            return {}
        from karpy.api.conditionset import condition_document

        pools = sorted(getattr(self.simulation, "nodepools", ()) or (), key=lambda np: np.metadata.name)
        return {"nodeclasses": statuses(),
                "nodepools": {np.metadata.name: {"conditions": [condition_document(c) for c in np.status.conditions]}
                              for np in pools}}

    def explain_block(self) -> dict[str, Any]:
        """The document's ``explain`` key (:func:`karpy.explain.explain_document`): NodeClaim and pod
        decision traces, computed now from what the run recorded."""
        from karpy.explain import explain_document

        return explain_document(self)

    def explain_text(self, verbose: bool = False) -> str:
        """The decision trace of every NodeClaim and pending pod, as ``karpy explain`` prints it
        (``verbose``: as ``karpy explain --verbose``)."""
        from karpy.explain import explain_run, render_explain

        return render_explain(explain_run(self), verbose=verbose)

    def to_json(self, indent: int | None = 2) -> str:
        """The document as JSON text (:func:`document_json` of :meth:`to_document`; with an indent
        written section by section, as :meth:`write_json` writes it)."""
        if not _indented(indent):
            return document_json(self.to_document(), indent)
        parts: list[str] = []
        self.write_json(parts.append, cast(int, indent))
        return "".join(parts)

    def write_json(self, write: Callable[[str], object], indent: int = 2) -> None:
        """Write :meth:`to_json`'s text to ``write`` in pieces (``sys.stdout.write``, a file's
        ``write``), building one top-level section at a time: the whole document -- as a dict tree
        or as text -- is never held at once (:func:`karpy.report.jsontext.write_object`)."""
        with FrozenSurvivors():  # performance only: the run's heap is not rescanned (karpy.sim.collector)
            write_document_json(self.document_sections(streamed=True), write, indent)


def _indented(indent: int | None) -> bool:
    return isinstance(indent, int) and not isinstance(indent, bool) and indent >= 0


def document_json(document: dict[str, Any], indent: int | None = 2) -> str:
    """The text :meth:`Result.to_json` prints for a document :meth:`Result.to_document` built (for
    callers that already hold the document: it is not built twice). The text is
    ``json.dumps(document, indent=indent, ensure_ascii=False)``; with an indent it is written by
    :func:`karpy.report.jsontext.dumps_indented` (the same bytes, without the stdlib's
    pure-Python indenting encoder)."""
    if _indented(indent):
        from karpy.report.jsontext import dumps_indented

        return dumps_indented(document, cast(int, indent)) + "\n"
    return json.dumps(document, indent=indent, ensure_ascii=False) + "\n"


def write_document_json(sections: Mapping[str, Any] | Iterable[tuple[str, Any]], write: Callable[[str], object],
                        indent: int = 2) -> None:
    """Write :func:`document_json`'s text of a document -- a dict, or its ``(key, value)`` pairs
    in order, as :meth:`Result.document_sections` yields them -- to ``write`` in pieces (an indent
    is required: without one there is nothing to stream section by section)."""
    from karpy.report.jsontext import write_object

    if not _indented(indent):
        raise ValueError(f"write_document_json needs an indent >= 0, not {indent!r}")
    write_object(sections.items() if isinstance(sections, Mapping) else sections, write, indent)
    write("\n")
