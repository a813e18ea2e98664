"""``karpy sweep``: run a matrix of NodePool designs x workloads x price tables x capacity scenarios
x policies, one tidy row per cell, sequentially, on a local process pool or on a Dask cluster.

::

    import karpy
    rows = karpy.sweep("sweep.yaml")                       # a Sweep file (karpy.sweeps.spec)
    rows = karpy.sweep(designs={"A": ["a/"], "B": ["b/"]}, shared=["common/"],
                       prices=["2025-09-01", "2026-07-20"],
                       unavailable={"normal": [], "8th-gen-ice": ["*8i.*:*:on-demand"]},
                       executor="process")                  # or "sequential", "dask", a Client
    rows.to_csv("rows.csv"); rows.to_pandas()

Modules: :mod:`~karpy.sweeps.spec` (the Sweep kind), :mod:`~karpy.sweeps.cell` (cells and
``run_cell``), :mod:`~karpy.sweeps.executors`, :mod:`~karpy.sweeps.rows` (``SweepResult`` and its
formats), :mod:`~karpy.sweeps.progress`, :mod:`~karpy.sweeps.run` (``sweep``). Names resolve lazily
(a sweep loads the engine).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karpy._exports import lazy_exports

_EXPORTS = {
    **dict.fromkeys(("AXES", "Cell", "expand", "run_cell"), "cell"),
    **dict.fromkeys(("EXECUTORS", "ExecutorError", "default_workers", "run_cells"), "executors"),
    "SweepProgress": "progress",
    **dict.fromkeys(("EXIT_CELL_FAILED", "SweepResult"), "rows"),
    **dict.fromkeys(("spec_from_options", "sweep"), "run"),
    **dict.fromkeys(("API_VERSION", "KIND", "SweepError", "SweepSpec", "load_sweep", "parse_sweep"), "spec"),
}

__all__ = [
    "API_VERSION", "AXES", "Cell", "EXECUTORS", "EXIT_CELL_FAILED", "ExecutorError", "KIND", "SweepError",
    "SweepProgress", "SweepResult", "SweepSpec", "default_workers", "expand", "load_sweep", "parse_sweep",
    "run_cell", "run_cells", "spec_from_options", "sweep",
]

if TYPE_CHECKING:  # pragma: no cover
    from karpy.sweeps.cell import AXES, Cell, expand, run_cell
    from karpy.sweeps.executors import EXECUTORS, ExecutorError, default_workers, run_cells
    from karpy.sweeps.progress import SweepProgress
    from karpy.sweeps.rows import EXIT_CELL_FAILED, SweepResult
    from karpy.sweeps.run import spec_from_options, sweep
    from karpy.sweeps.spec import API_VERSION, KIND, SweepError, SweepSpec, load_sweep, parse_sweep

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
