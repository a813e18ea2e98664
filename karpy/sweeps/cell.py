"""One cell of a sweep: the axes, a snapshot of its manifests, and :func:`run_cell` (what every
executor runs, in whatever process or machine).

A cell carries the *text* of its manifest files, read once on the caller's side in the loader's
order, so a worker needs no access to the caller's files (a Dask worker on another machine runs
the cell unchanged) and a file edited mid-sweep cannot make two cells see different designs.
Manifests are validated on the caller's side first (:func:`expand`), so bad input fails the sweep
before any cell runs, with the file and field named.

Cell order (the row order) is the spec's design order, then workloads, timeline scenarios,
BillingProfiles (the ``billing`` axis), capacity scenarios, preference policies, minValues policies, and price tables oldest first:
``itertools.product`` in that nesting, so it never depends on the executor.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from karpy.sweeps.spec import PriceRange, SweepError, SweepSpec

__all__ = ["AXES", "Cell", "expand", "run_cell"]

#: the axis columns of a row, in row order
AXES = ("design", "workload", "scenario", "capacity", "preference_policy", "min_values_policy", "prices")


@dataclass(frozen=True)
class Cell:
    """Everything one simulation of the matrix needs; picklable, immutable."""

    index: int
    design: str
    workload: str
    scenario: str
    capacity: str
    preference_policy: str
    min_values_policy: str
    #: a table date, a table file path, or "" for the region's newest table
    prices: str
    region: str
    unavailable: tuple[str, ...]
    cloud_provider: str
    #: YAML text of each manifest file, in load order
    manifests: tuple[str, ...]
    #: Karpenter --feature-gates (sorted name, value pairs; the same for every cell of a sweep)
    feature_gates: tuple[tuple[str, bool], ...] = ()
    #: the billing axis: the BillingProfile's name ("" = no billing axis; its manifests are in ``manifests``)
    billing: str = ""
    #: the kubernetesVersion axis ("" = no axis: the newest modelled version)
    kubernetes_version: str = ""

    def axes(self) -> dict[str, Any]:
        return {"cell": self.index, **{a: getattr(self, a) for a in AXES}}


def _price_axis(spec: SweepSpec, provider: Any) -> list[str]:
    dates_of = getattr(provider, "price_dates", None)
    if spec.prices == ():
        return [""]
    if isinstance(spec.prices, tuple):
        if callable(dates_of):
            known = set(dates_of(spec.region))
            for i, entry in enumerate(spec.prices):
                if "/" not in entry and entry not in known:
                    raise SweepError(spec.source, f"spec.prices[{i}]",
                                     f"no {spec.region} price table dated {entry}; available: "
                                     + (", ".join(sorted(known)) or "none"))
        return sorted(spec.prices, key=lambda p: ("/" in p, p))
    if not callable(dates_of):
        raise SweepError(spec.source, "spec.prices",
                         f"cloud provider {spec.cloud_provider!r} lists no bundled price tables; give dates")
    dates = sorted(dates_of(spec.region))
    chosen = dates if spec.prices == "all" else spec.prices.select(dates) if isinstance(spec.prices, PriceRange) \
        else []
    if not chosen:
        raise SweepError(spec.source, "spec.prices",
                         f"no bundled {spec.region} price table matches; available: {', '.join(dates) or 'none'}")
    return chosen


def _snapshot(paths: tuple[Path, ...]) -> tuple[str, ...]:
    from karpy.api.loader import manifest_files

    texts = []
    for path in paths:
        for f in manifest_files(path):
            text = f.read_text(encoding="utf-8")
            if text.strip():
                # a trailing newline keeps a one-line file YAML text for the loader, never a path
                texts.append(text if text.endswith("\n") else text + "\n")
    return tuple(texts)


def expand(spec: SweepSpec) -> list[Cell]:
    """Validate the spec's manifests and price tables, and list its cells in row order.

    Raises :class:`SweepError` (price axis, provider) or :class:`karpy.api.loader.ManifestError`
    (a design, workload or scenario manifest), before anything runs.
    """
    from karpy.api.loader import load_manifests
    from karpy.api.served import LOADER_KUBERNETES_VERSION
    from karpy.cloudprovider.registry import resolve_cloud_provider

    provider = resolve_cloud_provider(spec.cloud_provider)
    prices = _price_axis(spec, provider)
    workloads = dict(spec.workloads) or {"": ()}
    scenarios = dict(spec.scenarios) or {"": ()}
    billings = dict(spec.billing) or {"": ()}
    extra_kinds = getattr(provider, "EXTRA_KINDS", None)
    snapshots: dict[tuple[str, str, str, str], tuple[str, ...]] = {}
    for design, workload, scenario, billing in itertools.product(spec.designs, workloads, scenarios, billings):
        paths = (*spec.designs[design], *workloads[workload], *scenarios[scenario], *billings[billing], *spec.shared)
        for version in spec.kubernetes_versions or (LOADER_KUBERNETES_VERSION,):  # bad input fails here
            load_manifests(list(paths), extra_kinds=extra_kinds, kubernetes_version=version)
        snapshots[design, workload, scenario, billing] = _snapshot(paths)
    cells: list[Cell] = []
    for design, workload, scenario, billing, version, capacity, pref, minv, price in itertools.product(
            spec.designs, workloads, scenarios, billings, spec.kubernetes_versions or ("",), spec.unavailable,
            spec.preference_policies, spec.min_values_policies, prices):
        cells.append(Cell(index=len(cells), design=design, workload=workload, scenario=scenario, capacity=capacity,
                          preference_policy=pref, min_values_policy=minv, prices=price, region=spec.region,
                          unavailable=tuple(spec.unavailable[capacity]), cloud_provider=spec.cloud_provider,
                          manifests=snapshots[design, workload, scenario, billing],
                          feature_gates=tuple(sorted(spec.feature_gates.items())), billing=billing,
                          kubernetes_version=version))
    return cells


def _one_line(err: BaseException) -> str:
    return " ".join(f"{type(err).__name__}: {err}".split())


def run_cell(cell: Cell) -> dict[str, Any]:
    """Simulate one cell and return its row (:mod:`karpy.sweeps.rows`). Never raises for a failing
    simulation: the row then has ``status: "error"`` and the error's one-line text."""
    from karpy.report.table import prices_notes
    from karpy.simulator import simulate
    from karpy.summary import outcome

    row: dict[str, Any] = {**cell.axes(), "region": cell.region, "unavailable": " ".join(cell.unavailable)}
    if cell.billing:
        row["billing"] = cell.billing
    if cell.kubernetes_version:
        row["kubernetes_version"] = cell.kubernetes_version
    try:
        result = simulate(list(cell.manifests), region=cell.region, prices=cell.prices or None,
                          unavailable=list(cell.unavailable), preference_policy=cell.preference_policy,
                          min_values_policy=cell.min_values_policy, cloud_provider=cell.cloud_provider,
                          feature_gates=dict(cell.feature_gates), kubernetes_version=cell.kubernetes_version or None)
        document = result.to_document()
        found = outcome(result, document)
    except Exception as err:  # noqa: BLE001 - a failing cell is a row with its error, never a lost sweep
        return {**row, "status": "error", "error": _one_line(err)}
    prices = document.get("prices") or {}
    return {**row, "status": "ok", "error": None, "prices_date": prices.get("date"),
            "prices_source": prices.get("source"), **found, "warnings": list(document.get("warnings") or []),
            "prices_notes": prices_notes(prices, cell.region)}
