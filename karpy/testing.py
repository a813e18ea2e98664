"""pytest helpers for NodePool designs: build or load a scenario, run it, assert on the outcome.

Load it as a pytest plugin (``pytest_plugins = ["karpy.testing"]`` in a ``conftest.py``, or through the
``pytest11`` entry point) and write a regression test in a few lines::

    def test_weighted_pools_fall_back_to_7th_gen(karpy_scenario):
        result = karpy_scenario("examples/generation-preference/02-weighted-nodepools",
                                "examples/generation-preference/common",
                                prices="2026-07-20", unavailable=["*8i.*:*:on-demand"]).run()
        assert_launched(result, generation="7", family_in={"c7i", "m7i", "r7i"}, capacity_type="on-demand")
        assert_all_running(result)

Every failing assertion raises :class:`AssertionError` whose message holds what went wrong, the
one-line answer of ``karpy explain`` (why each instance type won, the failed launches grouped, why
pods stay pending) and the table view of the run (:func:`karpy.report.table.render_table`); for a
result without a simulation, its explain trace or else the NodeClaims of the JSON document.

The plugin is light to load: nothing of the engine (and no boto3) is imported until a scenario runs.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # pragma: no cover
    from karpy.result import Result

__all__ = [
    "AWS_NODE_CLASS_REF",
    "LABEL_INSTANCE_FAMILY",
    "LABEL_INSTANCE_GENERATION",
    "Scenario",
    "ScenarioFactory",
    "Summary",
    "assert_all_running",
    "assert_cost",
    "assert_cost_change",
    "assert_cost_at_most",
    "assert_cost_over",
    "assert_generation_share",
    "assert_no_pending_longer_than",
    "assert_no_pod_pending_longer_than",
    "assert_plan_converges",
    "assert_failed_launches",
    "assert_launched",
    "assert_offered",
    "assert_pending",
    "candidate_types",
    "explain",
    "family_of",
    "fleet_types",
    "generation_of",
    "karpy_scenario",
    "launched_nodeclaims",
    "failed_nodeclaims",
    "summarize",
]

from karpy.summary import LABEL_INSTANCE_FAMILY, LABEL_INSTANCE_GENERATION, LABEL_INSTANCE_TYPE  # noqa: E402
#: nodeClassRef of the EC2NodeClass the AWS provider defaults to (for NodePools built in Python)
AWS_NODE_CLASS_REF: Mapping[str, str] = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}
#: how many list entries the failure message spells out before "... (+N more)"
_LIST_LIMIT = 12
_KEPT_LABELS = (LABEL_INSTANCE_FAMILY, LABEL_INSTANCE_GENERATION, "karpenter.sh/capacity-type",
                "karpenter.sh/nodepool", "topology.kubernetes.io/zone")

_BUILDERS = ("make_pod", "make_pods", "make_deployment", "make_daemonset", "make_node", "make_nodepool",
             "make_nodeoverlay", "make_priority_class", "requirement", "topology_spread", "pod_affinity_term")


def __getattr__(name: str) -> Any:
    """Re-export ``karpy.api.builders`` lazily (``from karpy.testing import make_pod``)."""
    if name in _BUILDERS:
        from karpy.api import builders

        return getattr(builders, name)
    raise AttributeError(f"module 'karpy.testing' has no attribute {name!r}")


# -- scenarios ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Scenario:
    """An immutable description of one simulation; :meth:`run` runs it once and remembers the result.

    ``manifests`` are what :func:`karpy.simulate` accepts (paths, YAML text, dicts, model objects);
    relative paths are resolved against ``base_dir`` when they exist there. The other fields are
    :func:`karpy.simulate`'s keyword arguments.
    """

    manifests: tuple[Any, ...]
    region: str | None = "us-east-1"
    prices: str | None = None
    unavailable: tuple[str, ...] = ()
    preference_policy: str = "Respect"
    min_values_policy: str = "Strict"
    cloud_provider: Any = "aws"
    base_dir: Path | None = None
    #: Karpenter --feature-gates overrides, as sorted (name, value) pairs
    feature_gates: tuple[tuple[str, bool], ...] = ()
    _cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, *manifests: Any, region: str | None = "us-east-1", prices: str | None = None,
           unavailable: Iterable[str] = (), preference_policy: str = "Respect",
           min_values_policy: str = "Strict", cloud_provider: Any = "aws",
           base_dir: str | Path | None = None, feature_gates: Mapping[str, bool] | None = None) -> Scenario:
        """Build a scenario; ``manifests`` may be given one by one or as lists."""
        flat: list[Any] = []
        for m in manifests:
            flat.extend(m) if isinstance(m, (list, tuple)) else flat.append(m)
        if isinstance(unavailable, str):
            unavailable = [unavailable]
        return cls(tuple(flat), region=region, prices=prices, unavailable=tuple(unavailable),
                   preference_policy=preference_policy, min_values_policy=min_values_policy,
                   cloud_provider=cloud_provider, base_dir=Path(base_dir) if base_dir is not None else None,
                   feature_gates=tuple(sorted((feature_gates or {}).items())))

    def with_options(self, **changes: Any) -> Scenario:
        """A copy with some of ``region``/``prices``/``unavailable``/... changed (and no cached result)."""
        if isinstance(changes.get("unavailable"), str):
            changes["unavailable"] = (changes["unavailable"],)
        if "unavailable" in changes:
            changes["unavailable"] = tuple(changes["unavailable"])
        return replace(self, _cache={}, **changes)

    def with_unavailable(self, *specs: str) -> Scenario:
        """A copy with these injected capacity errors (``TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE``)."""
        return self.with_options(unavailable=specs)

    def add(self, *manifests: Any) -> Scenario:
        """A copy with more manifests (pods, workloads, NodePools ... built in Python or loaded)."""
        return replace(self, manifests=self.manifests + tuple(manifests), _cache={})

    def resolved_manifests(self) -> list[Any]:
        """The manifests with relative paths resolved against ``base_dir``."""
        return [self._resolve(m) for m in self.manifests]

    def _resolve(self, item: Any) -> Any:
        if isinstance(item, str) and "\n" not in item and ": " not in item:
            item = Path(item)
        if isinstance(item, Path) and not item.is_absolute() and not item.exists() and self.base_dir is not None:
            candidate = self.base_dir / item
            if candidate.exists():
                return candidate
        return item

    def run(self) -> Result:
        """Run the simulation (once per Scenario object) and return its :class:`karpy.result.Result`."""
        if "result" not in self._cache:
            from karpy.simulator import simulate

            self._cache["result"] = simulate(
                self.resolved_manifests(), region=self.region, prices=self.prices,
                unavailable=list(self.unavailable), preference_policy=self.preference_policy,
                min_values_policy=self.min_values_policy, cloud_provider=self.cloud_provider,
                feature_gates=dict(self.feature_gates))
        result: Result = self._cache["result"]
        return result


class ScenarioFactory:
    """What the ``karpy_scenario`` fixture returns: ``karpy_scenario(*manifests, **options) -> Scenario``,
    with relative paths resolved against the pytest root directory."""

    def __init__(self, base_dir: Path | None) -> None:
        self.base_dir = base_dir

    def __call__(self, *manifests: Any, **options: Any) -> Scenario:
        options.setdefault("base_dir", self.base_dir)
        return Scenario.of(*manifests, **options)


@pytest.fixture(scope="session")
def karpy_scenario(pytestconfig: pytest.Config) -> ScenarioFactory:
    """Factory of :class:`Scenario` objects (session-scoped, so module-scoped fixtures may use it)."""
    return ScenarioFactory(Path(pytestconfig.rootpath))


# -- reading a result (karpy.summary; re-exported here for tests) -------------------------------
from karpy.summary import (  # noqa: E402
    Summary,
    _deleted_names,
    _document,
    _family,
    candidate_types,
    failed_nodeclaims,
    family_of,
    fleet_types,
    generation_of,
    launched_nodeclaims,
    summarize,
)


# -- failure messages -----------------------------------------------------------------------------
def _abbreviate(values: Sequence[Any], limit: int = _LIST_LIMIT) -> list[Any]:
    values = list(values)
    if len(values) <= limit:
        return values
    return values[:limit] + [f"... (+{len(values) - limit} more)"]


def _compact_nodeclaim(nc: Mapping[str, Any]) -> dict[str, Any]:
    fleet = nc.get("fleet") or {}
    errors = fleet.get("errors") or []
    overrides = fleet.get("overrides") or []
    out: dict[str, Any] = {k: nc.get(k) for k in ("name", "nodepool", "instance_type", "capacity_type", "zone",
                                                  "price", "launched", "created_at")}
    if nc.get("error"):
        err = str(nc["error"])
        out["error"] = err if len(err) <= 300 else err[:300] + f"... ({len(err)} chars)"
    out["labels"] = {k: v for k, v in (nc.get("labels") or {}).items() if k in _KEPT_LABELS}
    out["annotations"] = dict(nc.get("annotations") or {})
    out["pods"] = _abbreviate(nc.get("pods") or [])
    reqs = []
    for r in nc.get("requirements") or ():
        entry = dict(r)
        entry["values"] = _abbreviate(r.get("values") or [])
        reqs.append(entry)
    out["requirements"] = reqs
    if fleet:
        seen: dict[str, Any] = {}
        for o in overrides:
            seen.setdefault(o.get("instance_type"), o.get("priority"))
        out["fleet"] = {
            "allocation_strategy": fleet.get("allocation_strategy"),
            "capacity_type": fleet.get("capacity_type"),
            "override_count": len(overrides),
            "override_types (priority)": _abbreviate([f"{t} ({p})" if p is not None else t for t, p in seen.items()]),
            "error_count": len(errors),
            "errors": _abbreviate(sorted({f"{e.get('error_code')}: {e.get('instance_type')}" for e in errors})),
        }
    return out


def explain(result: Any) -> str:
    """The table view, then the explain trace if the result has one, else the NodeClaims as JSON."""
    from karpy.report.table import render_table

    doc = _document(result)
    parts = [render_table(doc).rstrip("\n")]
    trace: str | None = None
    explain_text = getattr(result, "explain_text", None)
    if callable(explain_text):
        trace = explain_text()
    elif getattr(result, "explain", None):
        trace = json.dumps(result.explain, indent=2, default=str)
    if trace:
        parts.append("EXPLAIN\n" + trace.rstrip("\n"))
    else:
        claims = [_compact_nodeclaim(nc) for nc in doc.get("nodeclaims") or ()]
        parts.append("NODECLAIMS (JSON; long lists abbreviated, result.to_json() has everything)\n"
                     + json.dumps(claims, indent=2, default=str))
    return "\n\n".join(parts) + "\n"


def _answer(result: Any) -> list[str] | None:
    """The one-line answers of ``karpy explain`` for a karpy Result (None for anything else)."""
    if getattr(result, "simulation", None) is None or not callable(getattr(result, "to_document", None)):
        return None
    from karpy.explain import answer_lines, explain_run

    trace = explain_run(result)
    return answer_lines(trace.get("nodeclaims") or {}, trace.get("pods") or {})


def _failure_message(result: Any, message: str) -> str:
    """What a failing assertion prints: what went wrong, the one-line answer of ``karpy explain``,
    the table view, and where the full trace is (a result without a simulation: :func:`explain`)."""
    answer = _answer(result)
    if answer is None:
        return f"{message}\n\n{explain(result)}"
    from karpy.report.table import render_table

    return (f"{message}\n\n" + "\n".join(f"why: {line}" for line in answer) + "\n\n"
            + render_table(_document(result)).rstrip("\n")
            + "\n\n(the decision trace: print(result.explain_text()), or verbose=True for every override)\n")


def _fail(result: Any, message: str) -> None:
    __tracebackhide__ = True
    raise AssertionError(_failure_message(result, message))


def _matches_any(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _as_set(values: str | int | Iterable[Any] | None) -> set[str] | None:
    if values is None:
        return None
    if isinstance(values, (str, int)):
        return {str(values)}
    return {str(v) for v in values}


# -- assertions -----------------------------------------------------------------------------------
def _check_nodeclaim(nc: Mapping[str, Any], *, instance_types: set[str] | None, family_in: set[str] | None,
                     generation: set[str] | None, capacity_type: str | None, nodepool: str | None,
                     zone: str | None, allocation_strategy: str | None,
                     annotations: Mapping[str, str] | None) -> list[str]:
    problems = []
    itype = nc.get("instance_type")
    if instance_types is not None and not _matches_any(str(itype), instance_types):
        problems.append(f"instance type {itype} not in {sorted(instance_types)}")
    if family_in is not None and _family(nc) not in family_in:
        problems.append(f"family {_family(nc)} not in {sorted(family_in)}")
    if generation is not None and generation_of(nc) not in generation:
        problems.append(f"generation {generation_of(nc)} not in {sorted(generation)}")
    if capacity_type is not None and nc.get("capacity_type") != capacity_type:
        problems.append(f"capacity type {nc.get('capacity_type')} != {capacity_type}")
    if nodepool is not None and nc.get("nodepool") != nodepool:
        problems.append(f"nodepool {nc.get('nodepool')} != {nodepool}")
    if zone is not None and not fnmatch.fnmatchcase(str(nc.get("zone")), zone):
        problems.append(f"zone {nc.get('zone')} does not match {zone}")
    strategy = (nc.get("fleet") or {}).get("allocation_strategy")
    if allocation_strategy is not None and strategy != allocation_strategy:
        problems.append(f"fleet allocation strategy {strategy} != {allocation_strategy}")
    for key, value in (annotations or {}).items():
        have = (nc.get("annotations") or {}).get(key)
        if have != value:
            problems.append(f"annotation {key}={have!r}, expected {value!r}")
    return problems


def assert_launched(result: Any, *, count: int | None = None, instance_types: str | Iterable[str] | None = None,
                    family_in: str | Iterable[str] | None = None, generation: str | int | Iterable[Any] | None = None,
                    capacity_type: str | None = None, nodepool: str | None = None, zone: str | None = None,
                    allocation_strategy: str | None = None,
                    annotations: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Every launched NodeClaim matches every given criterion, and at least one launched (or exactly
    ``count``). ``instance_types`` and ``zone`` take glob patterns (``"c8i.*"``); ``generation`` a value
    or a set of values. Returns the launched NodeClaims (document form) for further checks."""
    __tracebackhide__ = True
    launched = launched_nodeclaims(result)
    if count is not None and len(launched) != count:
        _fail(result, f"expected {count} launched NodeClaim(s), got {len(launched)}")
    if count is None and not launched:
        _fail(result, "expected at least one launched NodeClaim, got none")
    criteria: dict[str, Any] = dict(
        instance_types=_as_set(instance_types), family_in=_as_set(family_in), generation=_as_set(generation),
        capacity_type=capacity_type, nodepool=nodepool, zone=zone, allocation_strategy=allocation_strategy,
        annotations=annotations)
    problems = [f"{nc['name']}: {p}" for nc in launched for p in _check_nodeclaim(nc, **criteria)]
    if problems:
        _fail(result, "launched NodeClaims do not match:\n  " + "\n  ".join(problems))
    return launched


def assert_offered(result: Any, *, family_in: str | Iterable[str] | None = None,
                   generation: str | int | Iterable[Any] | None = None, in_fleet: bool = True) -> None:
    """Types of these families/generations were candidates of every launched NodeClaim (its
    instance-type list) and, with ``in_fleet``, in its CreateFleet overrides -- i.e. they were offered
    to EC2 and lost, rather than filtered out before."""
    __tracebackhide__ = True
    families, generations = _as_set(family_in), _as_set(generation)

    def wanted(t: str) -> bool:
        return ((families is None or family_of(t) in families)
                and (generations is None or generation_of(t) in generations))

    launched = launched_nodeclaims(result)
    if not launched:
        _fail(result, "expected launched NodeClaims to inspect, got none")
    for nc in launched:
        if not any(wanted(t) for t in candidate_types(nc)):
            _fail(result, f"{nc['name']}: no candidate instance type of family {families} / generation "
                          f"{generations} in its instance-type requirement")
        if in_fleet and not any(wanted(t) for t in fleet_types(nc)):
            _fail(result, f"{nc['name']}: no CreateFleet override of family {families} / generation {generations}")


def assert_failed_launches(result: Any, *, count: int | None = None, min_count: int | None = None,
                           error_code: str | None = None, instance_types: str | Iterable[str] | None = None,
                           family_in: str | Iterable[str] | None = None,
                           generation: str | int | Iterable[Any] | None = None) -> list[dict[str, Any]]:
    """Failed launches: exactly ``count`` (``0`` = none failed) or at least ``min_count`` (default 1 when
    neither is given); every fleet error has ``error_code`` and names a type matching the filters."""
    __tracebackhide__ = True
    failed = failed_nodeclaims(result)
    if count is not None and len(failed) != count:
        _fail(result, f"expected {count} failed launch(es), got {len(failed)}")
    if count is None and len(failed) < (1 if min_count is None else min_count):
        _fail(result, f"expected at least {1 if min_count is None else min_count} failed launch(es), got {len(failed)}")
    patterns, families, generations = _as_set(instance_types), _as_set(family_in), _as_set(generation)
    problems = []
    for nc in failed:
        for e in ((nc.get("fleet") or {}).get("errors") or ()):
            t = str(e.get("instance_type"))
            if error_code is not None and e.get("error_code") != error_code:
                problems.append(f"{nc['name']}: {e.get('error_code')} on {t}, expected {error_code}")
            if patterns is not None and not _matches_any(t, patterns):
                problems.append(f"{nc['name']}: error on {t}, not in {sorted(patterns)}")
            if families is not None and family_of(t) not in families:
                problems.append(f"{nc['name']}: error on {t}, family not in {sorted(families)}")
            if generations is not None and generation_of(t) not in generations:
                problems.append(f"{nc['name']}: error on {t}, generation not in {sorted(generations)}")
    if problems:
        _fail(result, "failed launches do not match:\n  " + "\n  ".join(_abbreviate(sorted(set(problems)), 20)))
    return failed


def _pending(result: Any) -> dict[str, Mapping[str, Any]]:
    return {k: p for k, p in _document(result)["pods"].items() if p.get("phase") == "Pending"}


def assert_all_running(result: Any) -> None:
    """No pod is left pending (exit code 0)."""
    __tracebackhide__ = True
    pending = _pending(result)
    if pending:
        _fail(result, f"expected every pod to run, {len(pending)} pending: {', '.join(_abbreviate(sorted(pending)))}")


def assert_pending(result: Any, pods: int | str | Iterable[str] | None = None, *,
                   reason_contains: str | None = None) -> list[str]:
    """Some pods are pending. ``pods``: an exact count, or names/glob patterns (``"default/web-*"`` or
    ``"web-*"``) that must match exactly the pending pods; ``reason_contains``: text every pending pod's
    message contains. Returns the pending pod keys."""
    __tracebackhide__ = True
    pending = _pending(result)
    keys = sorted(pending)
    if not pending and pods != 0:
        _fail(result, "expected pending pods, every pod runs")
    if isinstance(pods, int):
        if len(pending) != pods:
            _fail(result, f"expected {pods} pending pod(s), got {len(pending)}")
    elif pods is not None:
        patterns = [pods] if isinstance(pods, str) else list(pods)

        def hit(key: str, pattern: str) -> bool:
            return fnmatch.fnmatchcase(key, pattern) or fnmatch.fnmatchcase(key.split("/", 1)[-1], pattern)

        unmatched = [p for p in patterns if not any(hit(k, p) for k in keys)]
        extra = [k for k in keys if not any(hit(k, p) for p in patterns)]
        if unmatched or extra:
            _fail(result, f"pending pods differ: patterns matching no pending pod {unmatched}, "
                          f"pending pods not expected {_abbreviate(extra)}")
    if reason_contains is not None:
        wrong = [k for k in keys if reason_contains not in str(pending[k].get("message") or "")]
        if wrong:
            _fail(result, f"pending pods whose message lacks {reason_contains!r}: "
                          + "; ".join(f"{k}: {pending[k].get('message')!r}" for k in _abbreviate(wrong, 3)
                                      if k in pending))
    return keys


def assert_cost_at_most(result: Any, dollars_per_hour: float) -> None:
    """The run's ``cost_per_hour`` is at most this."""
    __tracebackhide__ = True
    cost = float(_document(result).get("cost_per_hour") or 0.0)
    if cost > dollars_per_hour + 1e-9:
        _fail(result, f"cost ${cost:.5f}/h exceeds ${dollars_per_hour:.5f}/h")


def assert_cost(result: Any, dollars_per_hour: float, *, abs_tol: float = 1e-6) -> None:
    """The run's ``cost_per_hour`` equals this (within ``abs_tol``)."""
    __tracebackhide__ = True
    cost = float(_document(result).get("cost_per_hour") or 0.0)
    if abs(cost - dollars_per_hour) > abs_tol:
        _fail(result, f"cost ${cost:.5f}/h != expected ${dollars_per_hour:.5f}/h")


# -- assertions over time (the document's ``cost`` and ``timeline``) ----------------------------------
def assert_cost_over(result: Any, *, at_most: float | None = None, at_least: float | None = None) -> None:
    """The run's total cost integral (``cost.total``, $ over the horizon) is within the bounds."""
    total = _document(result)["cost"]["total"]
    if at_most is not None and total > at_most + 1e-9:
        _fail(result, f"cost over the run is ${total:.6f}, more than ${at_most:.6f}")
    if at_least is not None and total < at_least - 1e-9:
        _fail(result, f"cost over the run is ${total:.6f}, less than ${at_least:.6f}")


def assert_generation_share(result: Any, *, generation: str | int, at_least: float | None = None,
                            at_most: float | None = None) -> None:
    """Generation ``generation``'s share of the run's node-hours (``cost.node_hours.by_generation``)
    is at least / at most the given fraction (0..1)."""
    hours = _document(result)["cost"]["node_hours"]
    total = hours["total"]
    share = (hours["by_generation"].get(str(generation), 0.0) / total) if total else 0.0
    if at_least is not None and share < at_least - 1e-9:
        _fail(result, f"generation {generation} has {share:.1%} of the node-hours, less than {at_least:.1%} "
                      f"(by generation: {hours['by_generation']})")
    if at_most is not None and share > at_most + 1e-9:
        _fail(result, f"generation {generation} has {share:.1%} of the node-hours, more than {at_most:.1%} "
                      f"(by generation: {hours['by_generation']})")


def pending_durations(result: Any) -> dict[str, float]:
    """Per pod (``namespace/name``), the longest time it waited between creation (or an eviction
    that left it unbound) and being bound, from the timeline; a pod still unbound at the end waits
    until the end of the run."""
    doc = _document(result)
    end = doc["cost"]["horizon"]
    since: dict[str, float] = {}
    longest: dict[str, float] = {}
    for e in doc["timeline"]:
        if not e["object"].startswith("Pod/"):
            continue
        key = e["object"][4:]
        if e["kind"] == "pod.created" and not e["detail"].get("node"):
            since[key] = e["t"]
        elif e["kind"] == "pod.bound" and key in since:
            longest[key] = max(longest.get(key, 0.0), e["t"] - since.pop(key))
        elif e["kind"] in ("pod.deleted", "pod.departed", "pod.completed"):
            if key in since:
                longest[key] = max(longest.get(key, 0.0), e["t"] - since.pop(key))
    for key, t in since.items():
        longest[key] = max(longest.get(key, 0.0), end - t)
    return longest


def assert_no_pending_longer_than(result: Any, duration: str | float) -> None:
    """No pod waited unbound longer than ``duration`` (``"2m"``, or seconds) at any time of the run."""
    from karpy.api.scenario import parse_duration

    limit = parse_duration(duration, "duration")
    waits = pending_durations(result)
    worst = sorted(((w, k) for k, w in waits.items() if w > limit), reverse=True)
    if worst:
        shown = ", ".join(f"{k} {w:g}s" for w, k in worst[:_LIST_LIMIT])
        _fail(result, f"{len(worst)} pod(s) pending longer than {limit:g}s: {shown}")


def _plan_fail(plan: Any, message: str) -> None:
    """An AssertionError with the plan's one-screen table under ``message``."""
    raise AssertionError(f"{message}\n\n{plan.to_table()}")


def assert_plan_converges(plan: Any, *, within: str | float | None = None) -> None:
    """The plan (:func:`karpy.plan`) converged -- no drift left, nothing pending -- by its horizon, or
    by ``within`` (``"1h"``, or seconds) when given."""
    from karpy.api.scenario import parse_duration

    if not plan.converged:
        _plan_fail(plan, f"the plan did not converge by the horizon ({plan.horizon:g}s); pending: "
                         f"{list(plan.pending)[:_LIST_LIMIT]}")
    if within is not None and (plan.converged_at or 0.0) > parse_duration(within, "within"):
        _plan_fail(plan, f"the plan converged at {plan.converged_at:g}s, later than {within}")


def assert_no_pod_pending_longer_than(plan: Any, duration: str | float) -> None:
    """No pod of the plan waited unbound longer than ``duration`` (``"2m"``, or seconds)."""
    from karpy.api.scenario import parse_duration

    limit = parse_duration(duration, "duration")
    if plan.longest_pod_wait > limit:
        _plan_fail(plan, f"{plan.longest_waiting_pod} waited {plan.longest_pod_wait:g}s, longer than {limit:g}s")


def assert_cost_change(plan: Any, *, at_most: float | str | None = None, at_least: float | str | None = None) -> None:
    """The plan's $/h change (after - before) is at most / at least ``at_most`` / ``at_least``: dollars
    per hour (``0.5``, ``"$0.5/h"``) or a percentage of the cost before (``"5%"``, ``"-2%"``)."""

    def limit(value: float | str) -> tuple[float, str]:
        if isinstance(value, str) and value.strip().endswith("%"):
            pct = float(value.strip().rstrip("%"))
            return plan.cost_per_hour_before * pct / 100.0, f"{pct:+g}% (${plan.cost_per_hour_before * pct / 100.0:+.5f}/h)"
        number = float(str(value).strip().replace("$", "").replace("/h", ""))
        return number, f"${number:+.5f}/h"

    change = plan.cost_change
    if at_most is not None:
        bound, text = limit(at_most)
        if change > bound + 1e-9:
            _plan_fail(plan, f"the plan changes the cost by ${change:+.5f}/h, more than {text}")
    if at_least is not None:
        bound, text = limit(at_least)
        if change < bound - 1e-9:
            _plan_fail(plan, f"the plan changes the cost by ${change:+.5f}/h, less than {text}")


def pytest_report_header(config: pytest.Config) -> str:
    """One header line so a test run says the karpy plugin is active."""
    from karpy import __version__

    return f"karpy.testing plugin (karpy {__version__})"


