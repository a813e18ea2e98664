"""``karpy.plan`` (this module: karpy.planner, as karpy.simulator holds ``karpy.simulate``) and ``karpy plan``: what a NodePool / EC2NodeClass / NodeOverlay change does to a running cluster.

The cluster (a ``kubectl get ... -A -o yaml`` dump, or manifests) is the state at t=0, as is: its
NodeClaims and Nodes are Karpenter's (:mod:`karpy.sim.existing`). The change is a Scenario ``apply``
(and ``delete``) event at t=0, and the run goes on with Karpenter's disruption controller until the
horizon (``until``, default 6h). The plan is read from that one simulation -- there is no separate
model: the object diff (each field marked with what makes it drift, or not), the disruption waves
(the controller's decisions, the pods each evicted, the nodes blocked and the budgets that held),
and the end state. Guide: docs/guides/plan.md.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, Literal

from typing_extensions import TypedDict

from karpy._errors import KarpyError
from karpy.result import EXIT_BAD_INPUT, EXIT_OK, EXIT_PENDING, Result

__all__ = ["DEFAULT_UNTIL", "EXIT_GATE", "FailOn", "FieldChange", "NodeRef", "ObjectChange", "Plan", "PlanError",
           "Wave", "Blocked", "GateResult", "PlanDocument", "generate_plan_schema", "parse_fail_on", "plan",
           "plan_schema", "plan_schema_text"]

#: the horizon when ``until`` is not given
DEFAULT_UNTIL = "6h"
#: exit code of ``karpy plan`` when a ``--fail-on`` gate tripped (0, 2, 3 are the simulate codes)
EXIT_GATE = 4
#: the kinds a change may carry
CHANGE_KINDS = ("NodePool", "EC2NodeClass", "NodeOverlay")
_GENERATION = "karpenter.k8s.aws/instance-generation"
_SCHEMA_FILE = "plan.schema.json"
PLAN_SCHEMA_VERSION = "1.0"


class PlanError(KarpyError, ValueError):
    """Bad input to :func:`plan`: a change that does not load, a delete of an object not in the
    cluster, a cluster without NodePools, a ``--fail-on`` that does not parse (CLI: exit 2)."""


# -- the typed result -------------------------------------------------------------------------------

@dataclass(frozen=True)
class FieldChange:
    """One changed field: ``drift`` says what it makes Karpenter do (``nodepool-hash``,
    ``requirements``, ``ec2nodeclass-hash``, ``dynamic`` -- resolved AMIs/subnets/security groups --
    or None: not a drift trigger)."""

    path: str
    before: Any
    after: Any
    drift: str | None


@dataclass(frozen=True)
class ObjectChange:
    kind: str
    name: str
    action: str  # "create" | "update" | "delete" | "unchanged"
    fields: tuple[FieldChange, ...] = ()

    @property
    def drifts(self) -> bool:
        return self.action == "delete" and self.kind == "NodePool" or any(f.drift for f in self.fields)


@dataclass(frozen=True)
class NodeRef:
    name: str
    nodepool: str
    instance_type: str | None
    generation: str | None
    capacity_type: str | None
    zone: str | None
    price: float | None


@dataclass(frozen=True)
class Wave:
    """One disruption decision: when, by which method and why, the nodes it replaced, what replaced
    them, the pods it evicted, and the budget (nodes allowed per NodePool) it ran under."""

    t: float
    method: str
    reason: str
    decision: str
    candidates: tuple[NodeRef, ...]
    replacements: tuple[NodeRef, ...]
    evicted: tuple[str, ...]
    savings_per_hour: float | None
    budget: Mapping[str, int]
    done_at: float | None = None  # when its last candidate was terminated (None: not by the horizon)


@dataclass(frozen=True)
class Blocked:
    """A node (or a NodePool, for a budget) disruption was held back on: from ``since`` to ``until``
    (None: still at the horizon)."""

    object: str
    event: str
    message: str
    since: float
    until: float | None


@dataclass(frozen=True)
class GateResult:
    gate: str
    value: float
    tripped: bool


@dataclass(frozen=True)
class FailOn:
    """A parsed ``--fail-on`` gate: ``metric`` (cost, evictions, pending) ``>`` ``threshold`` in ``unit``
    (``%``, ``$/h``, count, seconds)."""

    text: str
    metric: str
    threshold: float
    unit: str


_FAIL_ON = re.compile(r"^\s*(cost|evictions|pending)\s*>\s*(\+?)(\$?)([0-9]+(?:\.[0-9]+)?)\s*(%|/h|[smh])?\s*$")


def parse_fail_on(text: str) -> FailOn:
    """``cost>+5%``, ``cost>+$1/h``, ``evictions>N``, ``pending>10m``, ``unconverged``; a
    :class:`PlanError` otherwise."""
    if text.strip() == "unconverged":  # drift left at the horizon, or pods pending
        return FailOn(text, "unconverged", 0.0, "")
    m = _FAIL_ON.match(text)
    bad = PlanError(f"--fail-on {text!r}: expected cost>+N% | cost>+$N/h | evictions>N | pending>DURATION "
                    "| unconverged (e.g. cost>+5%, cost>+$1/h, evictions>20, pending>10m)")
    if not m:
        raise bad
    metric, _plus, dollar, number, unit = m.groups()
    value = float(number)
    if metric == "cost":
        if unit == "%" and not dollar:
            return FailOn(text, metric, value, "%")
        if dollar and unit == "/h":
            return FailOn(text, metric, value, "$/h")
        raise bad
    if metric == "evictions":
        if dollar or unit or not number.isdigit():
            raise bad
        return FailOn(text, metric, value, "pods")
    if dollar or unit not in ("s", "m", "h"):
        raise bad
    return FailOn(text, metric, value * {"s": 1, "m": 60, "h": 3600}[unit], "s")


@dataclass(frozen=True)
class Plan:
    """What the change does (:func:`plan`). ``result`` is the simulation it was read from (None when
    there were no changes and nothing ran)."""

    changes: tuple[ObjectChange, ...]
    waves: tuple[Wave, ...]
    blocked: tuple[Blocked, ...]
    before: tuple[NodeRef, ...]
    after: tuple[NodeRef, ...]
    cost_per_hour_before: float
    cost_per_hour_after: float
    transition_node_hours: float
    transition_cost: float
    evicted: int
    longest_pod_wait: float
    longest_waiting_pod: str | None
    pending: tuple[str, ...]
    converged: bool
    converged_at: float | None
    horizon: float
    assumptions: tuple[str, ...]
    warnings: tuple[str, ...]
    gates: tuple[GateResult, ...] = ()
    #: ``pending``: ``[[t, pods pending]]``; ``cost_per_hour``: ``[[t, $/h]]`` (the HTML report's lines)
    series: Mapping[str, tuple[tuple[float, float], ...]] = field(default_factory=dict)
    result: Result | None = field(default=None, compare=False, repr=False)

    @property
    def changed(self) -> bool:
        return any(c.action != "unchanged" for c in self.changes)

    @property
    def cost_change(self) -> float:
        return round(self.cost_per_hour_after - self.cost_per_hour_before, 6)

    @property
    def exit_code(self) -> int:
        """0 nothing pending at the end (``converged`` says whether drift is done); 3 pods pending at the
        end; 4 a ``fail_on`` gate tripped."""
        if any(g.tripped for g in self.gates):
            return EXIT_GATE
        return EXIT_PENDING if self.pending else EXIT_OK

    def to_document(self) -> dict[str, Any]:
        """The ``karpy plan -o json`` document (schema: :func:`plan_schema`)."""
        body = {f.name: _plain(getattr(self, f.name)) for f in fields(self) if f.name != "result"}
        for change in body["changes"]:
            change["drifts"] = any(f["drift"] for f in change["fields"]) or (
                change["action"] == "delete" and change["kind"] == "NodePool")
        return {"kind": "Plan", "version": PLAN_SCHEMA_VERSION, "changed": self.changed,
                "cost_change_per_hour": self.cost_change, "exit_code": self.exit_code,
                "by_nodepool_generation": {"before": _groups(self.before), "after": _groups(self.after)}, **body}

    def to_json(self) -> str:
        return json.dumps(_jsonable(self.to_document()), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    def to_markdown(self) -> str:
        from karpy.report.plan import render_plan_markdown

        return render_plan_markdown(json.loads(self.to_json()))

    def to_table(self) -> str:
        from karpy.report.plan import render_plan_table

        return render_plan_table(json.loads(self.to_json()))

    def to_html(self) -> str:
        from karpy.report.plan import render_plan_html

        return render_plan_html(json.loads(self.to_json()))


def _plain(value: Any) -> Any:
    """A dataclass as plain dicts and lists (``dataclasses.asdict`` would copy the Result too)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _duration(seconds: float) -> str:
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float):
        return round(value, 6)
    return value


def _groups(nodes: Sequence[NodeRef]) -> dict[str, int]:
    """``NODEPOOL/gen N/CAPACITY-TYPE`` -> nodes."""
    out: dict[str, int] = {}
    for n in nodes:
        key = f"{n.nodepool}/gen {n.generation or '?'}/{n.capacity_type or '?'}"
        out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items()))


class ChangeDocument(TypedDict):
    kind: str
    name: str
    action: str
    fields: list[FieldChange]
    drifts: bool


class GroupsDocument(TypedDict):
    before: dict[str, int]
    after: dict[str, int]


class PlanDocument(TypedDict):
    """The ``karpy plan -o json`` document (:meth:`Plan.to_document`); the schema is generated from it."""

    kind: Literal["Plan"]
    version: str
    changed: bool
    exit_code: int
    cost_change_per_hour: float
    by_nodepool_generation: GroupsDocument
    changes: list[ChangeDocument]
    waves: list[Wave]
    blocked: list[Blocked]
    before: list[NodeRef]
    after: list[NodeRef]
    cost_per_hour_before: float
    cost_per_hour_after: float
    transition_node_hours: float
    transition_cost: float
    evicted: int
    longest_pod_wait: float
    longest_waiting_pod: str | None
    pending: list[str]
    converged: bool
    converged_at: float | None
    horizon: float
    assumptions: list[str]
    warnings: list[str]
    gates: list[GateResult]
    series: dict[str, list[tuple[float, float]]]


PLAN_SCHEMA_ID = f"https://karpy.dev/schemas/plan/{PLAN_SCHEMA_VERSION}/plan.schema.json"


def generate_plan_schema() -> dict[str, Any]:
    """The plan document's JSON Schema, generated now from :class:`PlanDocument` (needs pydantic)."""
    from pydantic import TypeAdapter

    body = TypeAdapter(PlanDocument).json_schema(mode="serialization")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": PLAN_SCHEMA_ID,
            "version": PLAN_SCHEMA_VERSION, **body}


def plan_schema_text() -> str:
    """The shipped schema file's text (``karpy schema plan`` prints it)."""
    from importlib import resources

    return resources.files("karpy.schemas").joinpath(_SCHEMA_FILE).read_text(encoding="utf-8")


def plan_schema() -> dict[str, Any]:
    """The published JSON Schema of the plan document (shipped as karpy/schemas/plan.schema.json;
    ``python -m karpy.planner`` rewrites it after a change to :class:`PlanDocument`)."""
    loaded: dict[str, Any] = json.loads(plan_schema_text())
    return loaded


if __name__ == "__main__":  # pragma: no cover
    from pathlib import Path

    Path(__file__).with_name("schemas").joinpath(_SCHEMA_FILE).write_text(
        json.dumps(generate_plan_schema(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


# -- the object diff --------------------------------------------------------------------------------

#: EC2NodeClass fields resolved by selectors (drift by the resolved AMI / subnet / security group),
#: not by the ec2nodeclass-hash (aws pkg/apis/v1/ec2nodeclass.go Hash, cloudprovider/drift.go)
_NODECLASS_DYNAMIC = ("amiSelectorTerms", "subnetSelectorTerms", "securityGroupSelectorTerms",
                      "capacityReservationSelectorTerms")
_NODECLASS_NOT_HASHED = ("ipPrefixCount",)


def _drift_of(kind: str, path: str) -> str | None:
    """What a change at ``path`` of a ``kind`` makes Karpenter do (see :class:`FieldChange`)."""
    if kind == "NodePool":
        if path.startswith("spec.template.spec.requirements"):
            return "requirements"
        return "nodepool-hash" if path.startswith("spec.template") else None
    if kind == "EC2NodeClass":
        if not path.startswith("spec."):
            return None
        top = path.split(".")[1].split("[")[0]
        if top in _NODECLASS_DYNAMIC:
            return "dynamic"
        return None if top in _NODECLASS_NOT_HASHED else "ec2nodeclass-hash"
    return None  # NodeOverlay: not in any hash (price/capacity only: consolidation may act on it)


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, Mapping) and value:
        for k in sorted(value):
            _flatten(value[k], f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value) and prefix.endswith(
            "requirements"):
        for v in sorted(value, key=lambda r: str(r.get("key"))):
            out[f"{prefix}[{v.get('key')}]"] = {k: v[k] for k in sorted(v) if k != "key"}
    else:
        out[prefix] = value


def _spec_of(obj: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = obj.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {"spec": dumped.get("spec") or {}}


def _diff(kind: str, before: Any | None, after: Any | None) -> ObjectChange:
    obj: Any = after if after is not None else before
    name = str(obj.metadata.name)
    if before is None:
        flat: dict[str, Any] = {}
        _flatten(_spec_of(after), "", flat)
        return ObjectChange(kind, name, "create",
                            tuple(FieldChange(p, None, v, _drift_of(kind, p) if kind != "NodePool" else None)
                                  for p, v in flat.items() if v not in (None, [], {})))
    if after is None:
        return ObjectChange(kind, name, "delete")
    a: dict[str, Any] = {}
    b: dict[str, Any] = {}
    _flatten(_spec_of(before), "", b)
    _flatten(_spec_of(after), "", a)
    fields = tuple(FieldChange(p, b.get(p), a.get(p), _drift_of(kind, p))
                   for p in sorted(set(a) | set(b)) if a.get(p) != b.get(p))
    return ObjectChange(kind, name, "update" if fields else "unchanged", fields)


# -- reading the cluster and the change -------------------------------------------------------------

def _read_stdin(sources: Sequence[Any]) -> list[Any]:
    """``-`` is standard input, read once (the cluster is loaded twice: for the diff and the run)."""
    return [sys.stdin.read() if isinstance(s, str) and s == "-" else s for s in sources]


def _objects(loaded: Any) -> dict[tuple[str, str], Any]:
    out: dict[tuple[str, str], Any] = {}
    for np in loaded.nodepools:
        out[("NodePool", np.metadata.name)] = np
    for ov in loaded.nodeoverlays:
        out[("NodeOverlay", ov.metadata.name)] = ov
    for kind, objs in (loaded.extra or {}).items():
        for o in objs:
            out[(kind, o.metadata.name)] = o
    return out


def _parse_delete(text: str) -> tuple[str, str]:
    kind, sep, name = text.partition("/")
    kinds = {k.lower(): k for k in CHANGE_KINDS}
    if not sep or not name or kind.lower() not in kinds:
        raise PlanError(f"--delete {text!r}: expected KIND/NAME with KIND one of {', '.join(CHANGE_KINDS)}")
    return kinds[kind.lower()], name


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


# -- reading the run --------------------------------------------------------------------------------

def _ref(rec: Any) -> NodeRef:
    labels = (rec.launched.metadata.labels or {}) if rec.launched is not None else {}
    return NodeRef(rec.name, rec.nodepool, rec.instance_type, labels.get(_GENERATION), rec.capacity_type, rec.zone,
                   None if rec.price is None else round(rec.price, 6))


def _pod_events(result: Result) -> tuple[dict[str, list[str]], dict[str, float], list[tuple[float, str]]]:
    """pods evicted per node; pods created after t=0 (their creation time); binds (t, pod)."""
    evicted: dict[str, list[str]] = {}
    created: dict[str, float] = {}
    bound: list[tuple[float, str]] = []
    for e in result.simulation.timeline.entries:
        kind, obj, t = e.kind, e.object, e.t
        detail = e.detail or {}
        if kind == "pod.evicted":
            evicted.setdefault(str(detail.get("node")), []).append(obj.removeprefix("Pod/"))
        elif kind == "pod.created" and t > 0:
            created[obj.removeprefix("Pod/")] = t
        elif kind == "pod.bound":
            bound.append((t, obj.removeprefix("Pod/")))
    return evicted, created, bound


def _waits(result: Result, created: Mapping[str, float], bound: Sequence[tuple[float, str]],
           end: float) -> tuple[float, str | None]:
    first_bound: dict[str, float] = {}
    for t, pod in bound:
        first_bound.setdefault(pod, t)
    longest, who = 0.0, None
    for pod, t in sorted(created.items()):
        wait = first_bound.get(pod, end if pod in result.simulation.pods else t) - t
        if wait > longest:
            longest, who = wait, pod
    return round(longest, 3), who


_QUIET = ("pod.created", "apply", "delete")


def _settled_at(result: Result) -> float | None:
    """The last time the cluster changed after t=0 (a NodeClaim, a disruption step, a bind)."""
    last = None
    for e in result.simulation.timeline.entries:
        if e.t > 0 and not e.kind.startswith(_QUIET):
            last = e.t
    return last


def _drifted(rec: Any) -> bool:
    claim = rec.launched
    return claim is not None and any(c.type == "Drifted" and c.status == "True"
                                     for c in (claim.status.conditions or ()))


#: the blockers a plan reports (the controller's other DisruptionBlocked events -- an uninitialized or
#: nominated node, one already deleting -- are the waves' own churn)
_HELD = ("pdb prevents", "multiple pdbs", "do-not-disrupt", "blocking budget")


def _blocked(controller: Any, decided: Mapping[str, float], end: float, start: float) -> list[Blocked]:
    """The controller's DisruptionBlocked events (do-not-disrupt, PDB, budget, ...): held from the first
    time each was seen after the change until the node's decision, else the last time it was seen (None:
    still at the horizon)."""
    out = []
    events = getattr(controller, "node_events", {}) or {}
    first_seen = getattr(controller, "node_events_first", {}) or {}
    for name in sorted(events):
        for (event, message), last in sorted(events[name].items(), key=lambda kv: (kv[1], kv[0])):
            if event != "DisruptionBlocked" or not any(k in message.lower() for k in _HELD):
                continue
            since = max(start, first_seen.get(name, {}).get((event, message), start))
            until = decided.get(name)
            out.append(Blocked(name, event, message, since, until if until is not None else
                               (None if last >= end - 1e-9 or name.startswith("nodepool/") else last)))
    return out


def _integral(result: Result, end: float) -> tuple[float, float]:
    hours = dollars = 0.0
    for rec in result.simulation.launches:
        if rec.launched is None:
            continue
        start = rec.created_at
        stop = rec.deleted_at if rec.deleted_at is not None else end
        span = max(0.0, min(stop, end) - start) / 3600.0
        hours += span
        dollars += span * (rec.price or 0.0)
    return round(hours, 6), round(dollars, 6)


def _assumptions(loaded: Any, horizon: float, overlays: bool = False) -> list[str]:
    out = [f"horizon: the run stops at {_duration(horizon)} (--until) if the cluster has not converged"]
    if overlays or loaded.nodeoverlays:
        out.append("$/h: the price table's list prices; a NodeOverlay's price or priceAdjustment steers Karpenter's "
                   "choice (CreateFleet, consolidation) but is not what AWS bills, so it is not applied to the cost")
    if loaded.nodeclaims:
        out.append("launch times: the dump's NodeClaims are taken as launched at t=0 (creationTimestamp is not "
                   "read), so expireAfter counts from the change")
        out.append("nodepool-hash: the dump's karpenter.sh/nodepool-hash annotations are not compared (karpy's hash "
                   "digits are not Go's); every NodeClaim is taken as launched from the NodePool in the dump, "
                   "not drifted before the change")
    return out


def _gates(fail_on: Sequence[FailOn], before: float, after: float, evicted: int, wait: float,
           converged: bool) -> list[GateResult]:
    out = []
    for g in fail_on:
        if g.metric == "unconverged":
            value = 0.0 if converged else 1.0
        elif g.metric == "cost":
            value = (100.0 * (after - before) / before if before else (100.0 if after > 0 else 0.0)) \
                if g.unit == "%" else after - before
        elif g.metric == "evictions":
            value = float(evicted)
        else:
            value = wait
        out.append(GateResult(g.text, round(value, 6), value > g.threshold))
    return out


# -- the entry point ------------------------------------------------------------------------------

def plan(cluster: Any, apply: Any = (), delete: Sequence[str] = (), until: str | float | None = DEFAULT_UNTIL, *,
         fail_on: Sequence[str | FailOn] = (), region: str | None = "us-east-1", prices: str | None = None,
         cloud_provider: str = "aws", feature_gates: Mapping[str, bool] | str | None = None,
         **simulate_options: Any) -> Plan:
    """Plan ``apply`` (NodePool / EC2NodeClass / NodeOverlay manifests: paths, YAML text or dicts,
    replacing the cluster's objects of the same kind and name or adding new ones) and ``delete``
    (``KIND/NAME``) on ``cluster`` (a dump or manifests; ``"-"`` is standard input). The change is
    applied at t=0 and the run, with Karpenter's disruption controller, goes to convergence or
    ``until``. ``fail_on``: gates (:func:`parse_fail_on`). Other keyword arguments go to
    :func:`karpy.simulate`. Bad input raises :class:`PlanError` (or the loader's ManifestError)."""
    from karpy.sim.collector import FrozenSurvivors

    with FrozenSurvivors(thresholds=False):  # performance only, from the dump's read on (karpy.sim.collector)
        return _plan(cluster, apply, delete, until, fail_on, region, prices, cloud_provider, feature_gates,
                     simulate_options)


def _plan(cluster: Any, apply: Any, delete: Sequence[str], until: str | float | None,
          fail_on: Sequence[str | FailOn], region: str | None, prices: str | None, cloud_provider: str,
          feature_gates: Mapping[str, bool] | str | None, simulate_options: dict[str, Any]) -> Plan:
    """:func:`plan`'s work."""
    from karpy.api.loader import load_manifests
    from karpy.api.scenario import parse_duration
    from karpy.cloudprovider.registry import resolve_cloud_provider
    from karpy.simulator import Preloaded, input_kubernetes_version, load_arguments, simulate

    gates = [g if isinstance(g, FailOn) else parse_fail_on(g) for g in fail_on]
    horizon = parse_duration(until if until is not None else DEFAULT_UNTIL, "until")
    if horizon <= 0:
        raise PlanError(f"until {until!r} must be greater than 0")
    sources = _read_stdin(_as_list(cluster))
    extra_kinds = getattr(resolve_cloud_provider(cloud_provider), "EXTRA_KINDS", None)
    from karpy.api.loader import DEFAULT_MAX_PODS

    # read as simulate reads it, and handed to it (Preloaded): a dump is read once
    read = {"strict": simulate_options.get("strict", False),
            "max_pods": simulate_options.get("max_pods", DEFAULT_MAX_PODS),
            "exclude": tuple(simulate_options.get("exclude", ())),
            "kubernetes_version": input_kubernetes_version(simulate_options.get("kubernetes_version"),
                                                           simulate_options.get("options"))}
    loaded = load_manifests(sources, extra_kinds=extra_kinds, **read)
    preloaded = Preloaded(sources, loaded, load_arguments(extra_kinds=extra_kinds, **read))
    if not loaded.nodepools:
        raise PlanError("the cluster has no NodePool (include them: kubectl get nodepools,ec2nodeclasses,nodeclaims,"
                        "nodes,pods,pdb -A -o yaml)")
    current = _objects(loaded)
    changes: list[ObjectChange] = []
    applied_sources: list[Any] = []
    for i, change in enumerate(_read_stdin(_as_list(apply))):
        try:
            objs = _objects(load_manifests(change, extra_kinds=extra_kinds))
        except ValueError as err:
            raise PlanError(f"--apply #{i + 1}: {err}") from None
        if not objs:
            raise PlanError(f"--apply #{i + 1}: no {', '.join(CHANGE_KINDS)} in it (a change is one of these kinds)")
        for (kind, name), obj in objs.items():
            changes.append(_diff(kind, current.get((kind, name)), obj))
        applied_sources.append(change)
    deletes: list[dict[str, Any]] = []
    for text in delete:
        kind, name = _parse_delete(text)
        if (kind, name) not in current:
            raise PlanError(f"--delete {text}: no {kind} {name!r} in the cluster")
        changes.append(_diff(kind, current[(kind, name)], None))
        deletes.append({"at": 0, "delete": {"kind": kind, "name": name}})
    assumptions = _assumptions(loaded, horizon, any(c.kind == "NodeOverlay" for c in changes))
    if not any(c.action != "unchanged" for c in changes):
        return _unchanged(changes, horizon, assumptions, gates, preloaded, region, prices, cloud_provider,
                          feature_gates, simulate_options)
    # the change as the user wrote it (a path, text or dict): the Scenario's apply loads it again
    events = [{"at": 0, "apply": str(c) if not isinstance(c, (str, Mapping, list)) else c} for c in applied_sources]
    result = simulate(preloaded, region=region, prices=prices, cloud_provider=cloud_provider,
                      feature_gates=feature_gates, events=events + deletes, disruption=True, until=horizon,
                      **simulate_options)
    return _read(result, changes, horizon, assumptions, gates)


def _unchanged(changes: list[ObjectChange], horizon: float, assumptions: list[str],
               gates: list[FailOn], sources: Any, region: str | None, prices: str | None,
               cloud_provider: str, feature_gates: Mapping[str, bool] | str | None,
               simulate_options: Mapping[str, Any]) -> Plan:
    """No changes: the cluster as it is, priced at t=0 (nothing runs past it)."""
    from karpy.simulator import simulate

    result = simulate(sources, region=region, prices=prices, cloud_provider=cloud_provider,
                      feature_gates=feature_gates, **simulate_options)
    nodes = tuple(_ref(r) for r in sorted(result.simulation.launches, key=lambda r: r.name)
                  if r.launched is not None and r.created_at <= 0)
    cost = round(sum(n.price or 0.0 for n in nodes), 6)
    return Plan(tuple(changes), (), (), nodes, nodes, cost, cost, 0.0, 0.0, 0, 0.0, None, (), True, 0.0, horizon,
                tuple(["no changes: nothing was simulated past t=0"] + assumptions[1:]), tuple(result.warnings),
                tuple(_gates(gates, cost, cost, 0, 0.0, True)), result=result)


def _read(result: Result, changes: list[ObjectChange], horizon: float, assumptions: list[str],
          gates: list[FailOn]) -> Plan:
    sim = result.simulation
    records = {r.name: r for r in sim.launches}
    before = tuple(_ref(r) for r in sorted(sim.launches, key=lambda r: r.name)
                   if r.launched is not None and r.created_at <= 0)
    after = tuple(_ref(r) for r in sorted(sim.launches, key=lambda r: r.name) if r.launched is not None and not r.deleted)
    evicted_by_node, created, bound = _pod_events(result)
    controller = sim.disruption
    waves: list[Wave] = []
    decided: dict[str, float] = {}
    for d in (controller.decisions if controller is not None else ()):
        if d.get("error"):
            continue
        cands = tuple(_ref(records[c]) for c in d["candidates"] if c in records)
        repl = tuple(_ref(records[r]) for r in d.get("replacements") or () if r in records)
        for c in d["candidates"]:
            decided.setdefault(c, float(d["t"]))
        evicted = tuple(sorted(p for c in d["candidates"] for p in evicted_by_node.get(c, ())))
        ends = [records[c].deleted_at for c in d["candidates"] if c in records]
        done = max(ends) if ends and all(e is not None for e in ends) else None  # type: ignore[type-var]
        waves.append(Wave(float(d["t"]), str(d["method"]), str(d.get("reason") or ""), str(d.get("decision") or ""),
                          cands, repl, evicted, d.get("savings_per_hour"), dict(sorted((d.get("budget") or {}).items())),
                          done))
    end = float(sim.virtual_seconds if sim.virtual_seconds is not None else horizon)
    end = max(end, horizon)
    pending = tuple(result.pending_pods)
    settled = _settled_at(result)
    drift_left = any(_drifted(r) for r in sim.launches if r.launched is not None and not r.deleted)
    converged = not pending and not drift_left
    converged_at = (settled or 0.0) if converged else None
    blocked = _blocked(controller, decided, end, 0.0) if controller is not None else []
    hours, dollars = _integral(result, converged_at if converged_at is not None else end)
    wait, who = _waits(result, created, bound, end)
    cost_before = round(sum(n.price or 0.0 for n in before), 6)
    cost_after = round(sum(n.price or 0.0 for n in after), 6)
    evictions = sum(len(w.evicted) for w in waves)
    if drift_left:
        assumptions = assumptions + [f"not converged: {sum(_drifted(r) for r in sim.launches if not r.deleted)} "
                                     "drifted node(s) left at the horizon"]
    return Plan(tuple(changes), tuple(waves), tuple(blocked), before, after, cost_before, cost_after, hours, dollars,
                evictions, wait, who, pending, converged, converged_at, horizon, tuple(assumptions),
                tuple(result.warnings), tuple(_gates(gates, cost_before, cost_after, evictions, wait, converged)),
                _series(result), result=result)


def _series(result: Result) -> dict[str, tuple[tuple[float, float], ...]]:
    from karpy.report.timecharts import pending_series

    timeline = [{"t": e.t, "kind": e.kind, "object": e.object, "detail": e.detail} for e in result.simulation.timeline.entries]
    pending = tuple((float(t), float(n)) for t, n in pending_series(timeline))
    per_hour = tuple((float(t), float(v)) for t, v in result.cost.per_hour)
    return {"cost_per_hour": per_hour, "pending": pending}


EXIT_CODES = {EXIT_OK: "converged, nothing pending", EXIT_BAD_INPUT: "bad input",
              EXIT_PENDING: "pods pending at the end", EXIT_GATE: "a --fail-on gate tripped"}
