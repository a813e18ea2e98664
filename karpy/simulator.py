"""``karpy.simulate``: manifests in, what Karpenter would launch (and why) out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from karpy.api.loader import load_manifests
from karpy.api.nodepool import unmodelled_field_warnings
from karpy.api.scenario import ScenarioEvent, parse_duration, parse_event_line
from karpy.cloudprovider.registry import ProviderOptions, resolve_cloud_provider
from karpy.result import Result
from karpy.sim.clock import VirtualClock
from karpy.sim.simulation import Simulation, SimulationOptions

__all__ = ["simulate"]

PREFERENCE_POLICIES = ("Respect", "Ignore")
MIN_VALUES_POLICIES = ("Strict", "BestEffort")


def _check_choice(name: str, value: str, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)} (got {value!r})")


def _events(events: Sequence[Any]) -> list[Any]:
    """Events as dicts or models; a ``str`` is one ``--event`` line."""
    out: list[Any] = []
    for ev in ([events] if isinstance(events, (str, dict, ScenarioEvent)) else events):
        out.append(parse_event_line(ev) if isinstance(ev, str) else ev)
    return out


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
    exclude: Sequence[str] = (),
    price_region: str | None = None,
    until: str | float | None = None,
    events: Sequence[Any] = (),
    strict: bool = False,
) -> Result:
    """Run one simulation and return its :class:`~karpy.result.Result`.

    ``manifests``: paths (files or directories), YAML text, dicts or model objects, or a list of
    them. ``region``/``prices``: the price table (a date such as ``"2026-07-20"``, a path, or None
    for the newest table of the region). ``unavailable``: injected capacity errors
    ``TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE``. ``cloud_provider``: a registered name (``"aws"``,
    ``"fake"``), or a CloudProvider object (then ``region``/``prices``/``unavailable`` are the
    object's business). ``progress(virtual_seconds, passes, nodeclaims)`` is called after each
    provisioning pass. ``until``: the horizon (``"6h"``, or seconds), overriding a Scenario's
    ``spec.until``. ``events``: Scenario events (dicts as in ``spec.events``, ``--event`` lines, or
    :class:`karpy.api.scenario.ScenarioEvent` objects), added to the Scenario's own. ``strict``:
    unknown fields are errors, not warnings (``kubectl --validate=strict``).
    ``exclude``: glob patterns a directory walk skips. ``price_region``: price the run with that
    region's table (a proxy; the document's ``prices.proxy`` says so).
    Bad input raises :class:`karpy.api.loader.ManifestError` or ``ValueError``.
    """
    _check_choice("preference_policy", preference_policy, PREFERENCE_POLICIES)
    _check_choice("min_values_policy", min_values_policy, MIN_VALUES_POLICIES)
    clock = VirtualClock()
    if isinstance(cloud_provider, str):
        factory = resolve_cloud_provider(cloud_provider)
        loaded = load_manifests(manifests, extra_kinds=getattr(factory, "EXTRA_KINDS", None), strict=strict,
                                exclude=exclude)
        loaded.warnings.extend(unmodelled_field_warnings(loaded.nodepools))
        provider = factory.from_options(ProviderOptions(region=region, prices=prices, unavailable=tuple(unavailable),
                                                        clock=clock, manifests=loaded,
                                                        extra=dict(provider_extra or {}),
                                                        price_region=price_region))
    else:
        provider = cloud_provider
        loaded = load_manifests(manifests, extra_kinds=getattr(provider, "EXTRA_KINDS", None), strict=strict,
                                exclude=exclude)
        loaded.warnings.extend(unmodelled_field_warnings(loaded.nodepools))
    provider_warnings = getattr(provider, "manifest_warnings", None)
    if callable(provider_warnings):
        loaded.warnings.extend(provider_warnings())
    base = options or SimulationOptions()
    overrides: dict[str, Any] = {"preference_policy": preference_policy, "min_values_policy": min_values_policy}
    if until is not None:
        overrides["until"] = parse_duration(until, "until")
        if overrides["until"] <= 0:
            raise ValueError(f"until {until!r} must be greater than 0")
    if events:
        overrides["events"] = (*base.events, *_events(events))
    sim_options = SimulationOptions(**{**base.__dict__, **overrides})
    simulation = Simulation(loaded, provider, sim_options, clock=clock, progress=progress)
    outcome = simulation.run()
    prices_meta = getattr(provider, "prices_metadata", None)
    meta = prices_meta() if callable(prices_meta) else {"date": None, "source": f"{provider.name} cloud provider"}
    return Result(simulation=outcome, region=region if isinstance(cloud_provider, str) or region else None,
                  prices=meta, cloud_provider=provider, terminal_pods=list(loaded.terminal_pods))
