"""``karpy.simulate``: manifests in, what Karpenter would launch (and why) out.

The edge of a run: the input is loaded once, the options built once, and :func:`new_simulation`
wires Karpenter's controllers into the simulation from above (upstream: pkg/controllers/controllers.go).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
import functools
from contextlib import ExitStack
from dataclasses import dataclass, replace
from typing import Any

from karpy.api.loader import DEFAULT_MAX_PODS, ManifestError, Manifests, load_manifests, static_nodes_over_limit
from karpy.api.nodepool import unmodelled_field_warnings
from karpy.api.scenario import ScenarioEvent, parse_duration
from karpy.billing import resolve_profile
from karpy.cloudprovider.registry import ProviderOptions, resolve_cloud_provider
from karpy.options import (MIN_VALUES_POLICIES, PREFERENCE_POLICIES, FeatureGates, Options, SchedulerConfigError,
                           SchedulerConfiguration, parse_scheduler_config)
from karpy.featuregates import DEFAULTS as FEATURE_GATE_DEFAULTS
from karpy.featuregates import NODE_OVERLAY, STATIC_CAPACITY
from karpy.featuregates import resolve as resolve_gates
from karpy.featuregates import (DEFAULT_KUBERNETES_VERSION, FeatureGateError, check_kubernetes_version,
                                parse_feature_gates, resolve_kubernetes, split_gates)
from karpy.kubescheduler.scheduler import SchedulerConfig
from karpy.result import Result, RunInputs
from karpy.sim.clock import VirtualClock
from karpy.sim.collector import FrozenSurvivors
from karpy.sim.options import SimulationOptions
from karpy.sim.scenario import ScenarioRunner
from karpy.sim.simulation import Simulation
from karpy.static.nodepoolstate import NodePoolState
from karpy.termination.controller import TerminationController

__all__ = ["Preloaded", "input_kubernetes_version", "load_arguments", "new_simulation", "simulate"]


def _gate_node_overlays(loaded: Any, gates: Mapping[str, bool]) -> None:
    """Upstream does not watch NodeOverlays while the NodeOverlay gate is off: drop them, say so."""
    if gates[NODE_OVERLAY] or not loaded.nodeoverlays:
        return
    names = ", ".join(o.metadata.name for o in loaded.nodeoverlays)
    loaded.warnings.append(f"ignored {len(loaded.nodeoverlays)} NodeOverlay(s) ({names}): the NodeOverlay feature "
                           "gate is off (Karpenter's default); pass --feature-gates NodeOverlay=true")
    loaded.nodeoverlays = []


def _check_choice(name: str, value: str, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)} (got {value!r})")


def _check_arguments(region: str | None, prices: str | None, preference_policy: str, min_values_policy: str) -> None:
    for name, value in (("region", region), ("prices", prices)):
        if isinstance(value, str) and not value.strip():
            raise ValueError(f"{name} must not be empty (got {value!r}; None means the default)")
    _check_choice("preference_policy", preference_policy, PREFERENCE_POLICIES)
    _check_choice("min_values_policy", min_values_policy, MIN_VALUES_POLICIES)


def _gate_overrides(value: Any, version: str) -> dict[str, object]:
    """``feature_gates``: a mapping of gate name to bool, or the CLI's ``"K=V,..."`` text (parsed as
    ``--feature-gates``); anything else raises FeatureGateError naming the argument."""
    if value is None:
        return {}
    if isinstance(value, str):
        return dict(parse_feature_gates(value, version))
    if isinstance(value, Mapping):
        return dict(value)
    raise FeatureGateError(f"feature_gates must be a mapping of gate name to bool or 'K=V,...' text "
                           f"(got {type(value).__name__}: {value!r})")


def _scheduler_config(value: Any) -> SchedulerConfiguration | None:
    """``--scheduler-config``: a parsed configuration, a path, or the document's text."""
    if isinstance(value, SchedulerConfiguration):
        return value
    from pathlib import Path

    if isinstance(value, Path) or (isinstance(value, str) and "\n" not in value and Path(value).is_file()):
        path = Path(value)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise ValueError(f"{path}: {e.strerror or e}") from None
        try:
            return parse_scheduler_config(text)
        except SchedulerConfigError as e:
            raise SchedulerConfigError(f"{path}: {e}") from None
    return parse_scheduler_config(str(value))


def _events(events: Sequence[Any]) -> list[Any]:
    """Events as dicts or models; a ``str`` is one ``--event`` line (an error names the line)."""
    from karpy.sim.scenario import EventLine, event_line

    out: list[Any] = []
    for ev in ([events] if isinstance(events, (str, dict, ScenarioEvent, EventLine)) else events):
        out.append(event_line(ev) if isinstance(ev, str) else ev)
    return out


@dataclass
class Preloaded:
    """Input a caller has read already (:func:`karpy.plan` reads the cluster for its diff): ``simulate``
    takes ``manifests`` for ``sources`` once, when it would read them with the same arguments
    (``args``: :func:`load_arguments`'s); a re-run, or other arguments, read ``sources``."""

    sources: Any
    manifests: Manifests
    args: tuple[Any, ...]
    used: bool = False


def load_arguments(strict: bool, max_pods: int | None, exclude: Sequence[str], kubernetes_version: str,
                   extra_kinds: Any) -> tuple[Any, ...]:
    """What reading the input depends on besides the input (see :class:`Preloaded`)."""
    return (strict, max_pods, tuple(exclude), kubernetes_version, extra_kinds)


def input_kubernetes_version(kubernetes_version: str | None, options: SimulationOptions | None) -> str:
    """The API server version ``simulate`` reads the input as (its ``kubernetes_version``, else
    the options' kube-scheduler's, else the newest)."""
    return check_kubernetes_version(kubernetes_version or _base_version(options or SimulationOptions()))


def simulate(
    manifests: Any,
    *,
    region: str | None = "us-east-1",
    prices: str | None = None,
    unavailable: Sequence[str] = (),
    preference_policy: str = "Respect",
    min_values_policy: str = "Strict",
    cloud_provider: Any = "aws",
    options: SimulationOptions | None = None,
    provider_extra: dict[str, Any] | None = None,
    progress: Callable[[float, int, int], None] | None = None,
    scheduler_config: Any = None,
    exclude: Sequence[str] = (),
    price_region: str | None = None,
    until: str | float | None = None,
    events: Sequence[Any] = (),
    disruption: bool | None = None,
    feature_gates: Mapping[str, bool] | str | None = None,
    strict: bool = False,
    max_pods: int | None = DEFAULT_MAX_PODS,
    billing: Any = None,
    kubernetes_version: str | None = None,
) -> Result:
    """Run one simulation and return its :class:`~karpy.result.Result`.

    ``manifests``: paths (files or directories), YAML text, dicts or model objects, or a list of
    them. ``region``/``prices``: the price table (a date such as ``"2026-07-20"``, a path, or None
    for the newest table of the region). ``unavailable``: injected capacity errors
    ``TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE``. ``cloud_provider``: a registered name (``"aws"``,
    ``"fake"``), or a CloudProvider object (then ``region``/``prices``/``unavailable`` are the
    object's business). ``progress(virtual_seconds, passes, nodeclaims)`` is called after each
    provisioning pass, as the virtual clock moves and every 1,024 kube-scheduler cycles. ``until``:
    the horizon (``"6h"``, or seconds), overriding a Scenario's ``spec.until``. ``events``: Scenario
    events (dicts as in ``spec.events``, ``--event`` lines, or
    :class:`karpy.api.scenario.ScenarioEvent` objects), added to the Scenario's own.
    ``disruption``: Karpenter's disruption controller (:mod:`karpy.disruption`) runs until the
    horizon whenever time passes (``until``, ``events`` or a Scenario), as production always runs it;
    ``False`` turns it off (and a warning says so), ``True`` runs it for a run that only settles too. ``feature_gates``: Karpenter's ``--feature-gates`` overrides (:mod:`karpy.featuregates`), a mapping or the option's ``"K=V,..."`` text;
    with ``NodeOverlay`` off (upstream's default) NodeOverlays are ignored and a warning says so.
    ``strict``: unknown fields are errors, not warnings (``kubectl --validate=strict``). ``scheduler_config``:
    Karpenter's ``--scheduler-config`` -- YAML/JSON text, a path to such a file, or a parsed
    :class:`karpy.options.SchedulerConfiguration` (default none: no default topology-spread
    constraints, as upstream).
    ``max_pods`` bounds the pods alive at once (explicit pods plus workload replicas, as the
    manifests and the Scenario's scale, apply and rollout events make them; ``None``: unbounded);
    past it the workload or event that crosses it is bad input.
    ``exclude``: glob patterns a directory walk skips. ``price_region``: price the run with that
    region's table (a proxy; the document's ``prices.proxy`` says so). ``billing``: a ``karpy.io/v1alpha1``
    BillingProfile (the object, a path, YAML text or a dict) adding ``cost.billed`` (:mod:`karpy.billing`);
    one among the manifests is used when not given. ``kubernetes_version``: the modelled
    kube-scheduler and API server (``"1.35"`` or ``"1.37"``, default the newest); ``feature_gates``
    also takes that version's kube-scheduler gates (e.g. ``GenericWorkload``).
    Bad input raises :class:`karpy.api.loader.ManifestError` or ``ValueError``.

    A provider built here from a name is closed before ``simulate`` returns or raises (the AWS one
    drops its mocked EC2 state; the result keeps its launch records); a provider object passed in
    stays the caller's to close. Nothing process-wide is changed (no environment variable, no
    global mock), and concurrent calls from several threads are safe.
    """
    called = dict(locals())  # the arguments as given: what a re-run needs (RunInputs)
    if isinstance(manifests, Preloaded):
        called["manifests"] = manifests.sources
    _check_arguments(region, prices, preference_policy, min_values_policy)
    clock = VirtualClock()
    base = options or SimulationOptions()
    version = input_kubernetes_version(kubernetes_version, base)
    karpenter_gates, kube_gates = split_gates(_gate_overrides(feature_gates, version), version)
    gates = resolve_gates({**base.feature_gates, **karpenter_gates})
    base = _with_kubernetes(base, version, kube_gates)
    operator = _operator_options(base, preference_policy, min_values_policy, gates, scheduler_config)
    asked = base.disruption if disruption is None else disruption
    given = until is not None or bool(events) or base.until is not None or bool(base.events)
    with ExitStack() as owned:
        owned.enter_context(FrozenSurvivors(thresholds=False))  # performance only, from the read on (sim.collector)
        load = functools.partial(_load, manifests, strict=strict, max_pods=max_pods, exclude=exclude,
                                 disruption=asked, gates=gates, kubernetes_version=version,
                                 time_given=given)
        if isinstance(cloud_provider, str):
            factory = resolve_cloud_provider(cloud_provider)
            loaded = load(factory)
            provider = _build_provider(factory, loaded, region, prices, unavailable, clock, provider_extra,
                                       operator, price_region)
            owned.callback(_closer(provider))
        else:
            provider = cloud_provider
            loaded = load(provider)
        disruption = disruption_runs(asked, given or scenario_time(loaded.scenarios))
        if progress is not None:  # loaded and the provider up, virtual time still 0 (issue 32: a long run's set-up)
            progress(0.0, 0, 0)
        profile = resolve_profile(billing, loaded, provider, region)
        loaded.warnings.extend(_provider_manifest_warnings(provider))
        run_options = _run_options(base, operator, gates, disruption, until, events)
        outcome = new_simulation(loaded, provider, run_options, clock=clock, progress=progress).run()
        return _result(outcome, loaded, provider, profile, called)


def _provider_manifest_warnings(provider: Any) -> list[str]:
    """What the provider says of the manifests it read (its ``manifest_warnings``, when it has one)."""
    said = getattr(provider, "manifest_warnings", None)
    return list(said()) if callable(said) else []


def _result(outcome: Any, loaded: Manifests, provider: Any, profile: Any, called: dict[str, Any]) -> Result:
    """The Result of a run; a re-run takes every argument but progress (the caller's UI), and a
    provider object passed in is not re-runnable."""
    by_name = isinstance(called["cloud_provider"], str)
    inputs = RunInputs(called["manifests"], {k: v for k, v in called.items() if k not in ("manifests", "progress")},
                       simulate) if by_name else None
    region = called["region"]
    return Result(simulation=outcome, region=region if by_name or region else None, prices=_prices_meta(provider),
                  cloud_provider=provider, terminal_pods=list(loaded.terminal_pods), billing=profile, inputs=inputs)


def _prices_meta(provider: Any) -> dict[str, Any]:
    """The document's ``prices``: the provider's price-table metadata, or its name."""
    prices_meta = getattr(provider, "prices_metadata", None)
    if callable(prices_meta):
        meta: dict[str, Any] = prices_meta()
        return meta
    return {"date": None, "source": f"{provider.name} cloud provider"}


def _build_provider(factory: Any, loaded: Manifests, region: str | None, prices: str | None,
                    unavailable: Sequence[str], clock: VirtualClock, provider_extra: Mapping[str, Any] | None,
                    operator: Options, price_region: str | None) -> Any:
    """The registered provider built for this run (closed by ``simulate`` when it returns)."""
    return factory.from_options(ProviderOptions(region=region, prices=prices, unavailable=tuple(unavailable),
                                                clock=clock, manifests=loaded, extra=dict(provider_extra or {}),
                                                options=operator, price_region=price_region))


def _closer(provider: Any) -> Callable[[], None]:
    """What closes a provider built here (its ``close``, when it has one)."""
    close = getattr(provider, "close", None)
    return close if callable(close) else (lambda: None)


def _operator_options(base: SimulationOptions, preference_policy: str, min_values_policy: str,
                      gates: Mapping[str, bool], scheduler_config: Any) -> Options:
    """Karpenter's operator options of the run (shared with the cloud provider): ``simulate``'s
    arguments over ``options.operator``."""
    fields = {**base.operator_options().__dict__, "preference_policy": preference_policy,
              "min_values_policy": min_values_policy, "feature_gates": FeatureGates.from_mapping(gates)}
    if scheduler_config is not None:
        fields["scheduler_config"] = _scheduler_config(scheduler_config)
    return Options(**fields)


def _base_version(base: SimulationOptions) -> str:
    cfg = base.scheduler_config
    return cfg.kubernetes_version if cfg is not None else DEFAULT_KUBERNETES_VERSION


def _with_kubernetes(base: SimulationOptions, version: str, overrides: Mapping[str, object]) -> SimulationOptions:
    """``base`` with its kube-scheduler at ``version``, its gates over that version's defaults."""
    cfg = base.scheduler_config or SchedulerConfig()
    prior = cfg.feature_gates if cfg.kubernetes_version == version else None
    gates = resolve_kubernetes(version, {**(prior or {}), **dict(overrides)})
    if cfg.kubernetes_version == version and cfg.gates() == gates and base.scheduler_config is not None:
        return base
    cfg = replace(cfg, kubernetes_version=version, feature_gates=gates)
    return replace(base, scheduler_config=cfg)


def scenario_time(scenarios: Sequence[Any]) -> bool:
    """Time passes in a Scenario among the manifests: it sets a horizon or has events."""
    return any(s.spec.until is not None or s.spec.events for s in scenarios)


def disruption_runs(asked: bool | None, time_passes: bool) -> bool:
    """Whether Karpenter's disruption controller runs: as asked, else whenever time passes."""
    return time_passes if asked is None else asked


#: said when the user turned the controller off for a run in which time passes
DISRUPTION_OFF_WARNING = ("disruption is off (--no-disruption / disruption=False): Karpenter's disruption controller "
                          "(consolidation, drift, expiration, emptiness) does not run, as it always does in "
                          "production; nodes stay as launched to the horizon")


def _load(manifests: Any, provider: Any, strict: bool, max_pods: int | None, exclude: Sequence[str],
          disruption: bool | None, gates: Mapping[str, bool], kubernetes_version: str = DEFAULT_KUBERNETES_VERSION,
          *, time_given: bool = False) -> Manifests:
    """The input, read once (the provider's extra kinds too), with the warnings about what the run
    leaves unmodelled (``disruption`` None: it runs when time passes -- ``time_given`` by the
    arguments or options, or in a Scenario)."""
    extra_kinds = getattr(provider, "EXTRA_KINDS", None)
    args = load_arguments(strict, max_pods, exclude, kubernetes_version, extra_kinds)
    if isinstance(manifests, Preloaded) and not manifests.used and manifests.args == args:
        manifests.used = True
        loaded = manifests.manifests
    else:
        source = manifests.sources if isinstance(manifests, Preloaded) else manifests
        loaded = load_manifests(source, extra_kinds=extra_kinds, strict=strict, max_pods=max_pods, exclude=exclude,
                                kubernetes_version=kubernetes_version)
    time_passes = time_given or scenario_time(loaded.scenarios)
    runs = disruption_runs(disruption, time_passes)
    if disruption is False and time_passes:
        loaded.warnings.append(DISRUPTION_OFF_WARNING)
    loaded.warnings.extend(unmodelled_field_warnings(loaded.nodepools, disruption=runs,
                                                    static_capacity=gates[STATIC_CAPACITY]))
    if gates[STATIC_CAPACITY]:
        _check_static_nodes(loaded)
    _gate_node_overlays(loaded, gates)
    return loaded


def _check_static_nodes(loaded: Manifests) -> None:
    """A static NodePool whose ``spec.replicas`` (within ``limits.nodes``) passes the run's bound is
    bad input, as a workload's replicas past ``max_pods`` are (acted on only with StaticCapacity on)."""
    for np in loaded.nodepools:
        message = static_nodes_over_limit(np, loaded.max_pods)
        if message is not None:
            file, index = loaded.origins.get(id(np), ("<object>", None))
            raise ManifestError(file, index, "spec.replicas", message, kind="NodePool", name=np.metadata.name)


def _run_options(base: SimulationOptions, operator: Options, gates: Mapping[str, bool], disruption: bool | None,
                 until: str | float | None, events: Sequence[Any]) -> SimulationOptions:
    """The one options object of the run: ``options`` with ``simulate``'s arguments applied."""
    overrides: dict[str, Any] = {"preference_policy": operator.preference_policy,
                                 "min_values_policy": operator.min_values_policy, "operator": operator,
                                 "feature_gates": {k: v for k, v in gates.items() if v != FEATURE_GATE_DEFAULTS[k]}}
    if disruption is not None:
        overrides["disruption"] = disruption
    if until is not None:
        overrides["until"] = parse_duration(until, "until")
        if overrides["until"] <= 0:
            raise ValueError(f"until {until!r} must be greater than 0")
    if events:
        overrides["events"] = (*base.events, *_events(events))
    return SimulationOptions(**{**base.__dict__, **overrides})


def new_simulation(manifests: Any, cloud_provider: Any, options: SimulationOptions | None = None,
                   clock: VirtualClock | None = None,
                   progress: Callable[[float, int, int], None] | None = None) -> Simulation:
    """A :class:`karpy.sim.Simulation` with Karpenter's controllers wired in, as upstream's
    pkg/controllers/controllers.go NewControllers builds them: the termination controller (always),
    the disruption controller (``options.disruption``; None: whenever time passes), the static capacity controllers (the
    ``StaticCapacity`` gate) and the Scenario's events; the input loaded. Call ``run()`` once."""
    options = options or SimulationOptions()
    sim = Simulation(manifests, cloud_provider, options, clock=clock, progress=progress)
    termination = TerminationController(sim)
    sim.set_termination(termination)
    gates = options.operator_options().feature_gates
    # state.Cluster's NodePoolState: the static controllers' counts, read by StaticDrift
    nodepool_state = NodePoolState()
    disruption = None
    scenarios = list(getattr(manifests, "scenarios", ()) or ())
    time_passes = options.until is not None or bool(options.events) or scenario_time(scenarios)
    if disruption_runs(options.disruption, time_passes):
        from karpy.disruption.controller import DisruptionController  # heavy: only when it runs

        disruption = DisruptionController(sim, gates.to_mapping(), termination, nodepool_state)
        sim.set_disruption(disruption)
    if gates.static_capacity:
        from karpy.static.controller import StaticCapacityController

        StaticCapacityController(sim, nodepool_state, disruption)
    sim.load()
    if scenarios or options.events:
        runner = ScenarioRunner(sim, scenarios[0] if scenarios else None, options.events, manifests)
        if progress is not None:  # the events read and checked; scheduling them follows
            progress(0.0, 0, 0)
        runner.schedule()
    return sim
