"""The ``karpy.sweep`` entry point: a Sweep from keyword options, expanded into cells, run on an
executor, gathered into a :class:`~karpy.sweeps.rows.SweepResult`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from karpy.sweeps.cell import expand
from karpy.sweeps.executors import run_cells
from karpy.sweeps.progress import SweepProgress
from karpy.sweeps.rows import SweepResult
from karpy.sweeps.spec import API_VERSION, KIND, SweepSpec, load_sweep, parse_sweep

__all__ = ["spec_from_options", "sweep"]

_OPTION_KEYS = {"region": "region", "cloud_provider": "cloudProvider", "designs": "designs", "shared": "shared",
                "workloads": "workloads", "prices": "prices", "unavailable": "unavailable",
                "preference_policies": "preferencePolicies", "min_values_policies": "minValuesPolicies",
                "scenarios": "scenarios", "feature_gates": "featureGates",
                "kubernetes_versions": "kubernetesVersion"}


def _plain(value: Any) -> Any:
    """Keyword values as the base YAML loader would give them (strings, lists, dicts)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None:
        return None
    if isinstance(value, bool):  # as YAML writes it (str(True) is "True", which YAML 1.2 does not read as true)
        return "true" if value else "false"
    return str(value)


def spec_from_options(name: str = "sweep", base_dir: str | Path = ".", **options: Any) -> SweepSpec:
    """A :class:`SweepSpec` from keyword arguments (snake_case names of the Sweep's spec fields)."""
    unknown = sorted(set(options) - set(_OPTION_KEYS))
    if unknown:
        raise TypeError(f"sweep() got unexpected keyword argument(s): {', '.join(unknown)}")
    document = {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": name},
                "spec": {_OPTION_KEYS[k]: _plain(v) for k, v in options.items() if v is not None}}
    return parse_sweep(document, source="<sweep()>", base_dir=Path(base_dir))


def sweep(spec: str | Path | SweepSpec | None = None, *, executor: Any = "process", workers: int | None = None,
          scheduler: str | None = None, progress: Any = None, **options: Any) -> SweepResult:
    """Run a sweep and return its rows (:class:`SweepResult`, in cell order).

    ``spec``: a Sweep file, a :class:`SweepSpec`, or None to build one from ``options`` (``designs``,
    ``shared``, ``workloads``, ``prices``, ``unavailable``, ``preference_policies``,
    ``min_values_policies``, ``scenarios``, ``feature_gates`` (``{"NodeOverlay": True}``),
    ``kubernetes_versions`` (``["1.35", "1.37"]``: an axis), ``region``,
    ``cloud_provider``; paths relative to the
    working directory). ``executor``: ``"process"`` (default), ``"sequential"``, ``"dask"`` (with
    ``scheduler``), a ``distributed.Client`` or a ``concurrent.futures.Executor``. ``progress``:
    True for the stderr bar, or a callable given each finished row. Bad input raises
    :class:`SweepError`, ``ManifestError`` or :class:`ExecutorError` before any cell runs.
    """
    if spec is None:
        resolved = spec_from_options(**options)
    elif options:
        raise TypeError("give either a sweep spec or keyword options, not both")
    elif isinstance(spec, SweepSpec):
        resolved = spec
    else:
        resolved = load_sweep(spec)
    cells = expand(resolved)
    bar = SweepProgress(len(cells)) if progress is True else None
    on_done = bar if bar is not None else (progress if callable(progress) else None)
    rows = run_cells(cells, executor, workers=workers, scheduler=scheduler, on_done=on_done)
    return SweepResult(rows, name=resolved.name)
