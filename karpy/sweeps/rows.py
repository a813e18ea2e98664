"""The rows of a sweep: one tidy, flat row per cell, and their CSV / JSON lines / Parquet / pandas forms.

Columns, in order: the cell number and axes (``design``, ``workload``, ``scenario``, ``capacity``,
``preference_policy``, ``min_values_policy``, ``prices``), ``region``, ``unavailable`` (the specs,
space-separated), ``status`` (``ok`` | ``error``) and ``error``, the price table's ``prices_date``
and ``prices_source``, then the outcome: ``nodeclaims``, ``instance_types`` (``"2x m7i.large,
c7i.xlarge"``), ``generations`` (``"7,8"``), ``capacity_types``, ``nodepools``,
``allocation_strategies``, ``failed_launches``, ``pending_pods``, ``cost_per_hour``,
``last_launch_at``, ``horizon`` (virtual seconds the run covered: a Scenario's ``until``, else until
it settled), ``cost_total`` ($ over that horizon); in a sweep with BillingProfiles ``billing`` (the
axis), ``billed_total``, ``billed_per_hour`` and ``unused_commitment`` (``cost.billed``, modelled); one
``nodes_gen<N>`` column per generation launched anywhere in the sweep (NodeClaims of that
generation), ``node_hours_gen<N>`` (node-hours of that generation over the horizon),
``warnings``, and ``prices_notes`` (what is modelled about the prices: spot, a proxy region, the OS;
``; ``-joined, as ``karpy simulate`` words it).

Generation columns are the union over all rows in numeric order, so the schema depends only on the
results, never on the executor. Missing values are empty in CSV and ``null`` in JSON.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from karpy.result import EXIT_OK, EXIT_PENDING
from karpy.summary import generation_sort_key
from karpy.utils.atomicwrite import atomic_path, write_atomic

__all__ = ["BILLING_COLUMNS", "EXIT_CELL_FAILED", "FIXED_COLUMNS", "SweepResult", "flatten"]

#: exit code of a sweep in which some cell failed (its row says why)
EXIT_CELL_FAILED = 1

FIXED_COLUMNS = ("cell", "design", "workload", "scenario", "capacity", "preference_policy", "min_values_policy",
                 "prices", "region", "unavailable", "status", "error", "prices_date", "prices_source",
                 "nodeclaims", "instance_types", "generations", "capacity_types", "nodepools",
                 "allocation_strategies", "failed_launches", "pending_pods", "cost_per_hour", "last_launch_at",
                 "horizon", "cost_total")
#: after FIXED_COLUMNS, only in a sweep with a ``billing`` axis or BillingProfiles (karpy.billing)
BILLING_COLUMNS = ("billing", "billed_total", "billed_per_hour", "unused_commitment")
_INT = {"cell", "nodeclaims", "failed_launches", "pending_pods"}
_FLOAT = {"cost_per_hour", "last_launch_at", "horizon", "cost_total", "billed_total", "billed_per_hour",
          "unused_commitment"}


def _join(values: Any) -> str | None:
    if values is None:
        return None
    return ",".join(str(v) for v in values)


def flatten(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A row of :func:`karpy.sweeps.cell.run_cell` with its mappings and lists made scalar."""
    from karpy.report.compare import format_value

    row = {k: raw.get(k) for k in FIXED_COLUMNS}
    row.update({k: raw[k] for k in BILLING_COLUMNS if k in raw})
    if "kubernetes_version" in raw:  # only in a sweep with a kubernetesVersion axis
        row["kubernetes_version"] = raw["kubernetes_version"]
    if raw.get("status") == "ok":
        types = raw.get("instance_types") or {}
        row["instance_types"] = format_value("instance_types", types) if types else ""
        row["generations"] = _join(raw.get("generations") or {})
        for key in ("capacity_types", "nodepools", "allocation_strategies"):
            row[key] = _join(raw.get(key) or [])
    for gen, n in (raw.get("generations") or {}).items():
        row[f"nodes_gen{gen}"] = n
    for gen, hours in (raw.get("node_hours_by_generation") or {}).items():
        row[f"node_hours_gen{gen}"] = hours
    row["warnings"] = "; ".join(raw.get("warnings") or []) or None
    # what is modelled about the prices (spot, a proxy region, the OS), as simulate says it
    row["prices_notes"] = "; ".join(raw.get("prices_notes") or []) or None
    return row


class SweepResult(Sequence[dict[str, Any]]):
    """The rows of a sweep, in cell order (a sequence of dicts keyed by :attr:`columns`)."""

    def __init__(self, raw_rows: Sequence[Mapping[str, Any]], *, name: str = "sweep") -> None:
        self.name = name
        self.raw_rows = [dict(r) for r in raw_rows]
        flat = [flatten(r) for r in self.raw_rows]
        gens = sorted({str(g) for r in self.raw_rows for g in (r.get("generations") or {})}, key=generation_sort_key)
        hours = sorted({str(g) for r in self.raw_rows for g in (r.get("node_hours_by_generation") or {})},
                       key=generation_sort_key)
        ok = {r["cell"] for r in self.raw_rows if r.get("status") == "ok"}
        billed = any(k in r for r in self.raw_rows for k in BILLING_COLUMNS)
        versioned = any("kubernetes_version" in r for r in self.raw_rows)
        self.columns: tuple[str, ...] = (*FIXED_COLUMNS, *(BILLING_COLUMNS if billed else ()),
                                         *(("kubernetes_version",) if versioned else ()),
                                         *(f"nodes_gen{g}" for g in gens),
                                         *(f"node_hours_gen{g}" for g in hours), "warnings", "prices_notes")
        self.rows = []
        for r in flat:
            done = r["cell"] in ok
            self.rows.append({c: r.get(c, (0 if c.startswith("nodes_gen") else 0.0 if c.startswith("node_hours_gen")
                                           else None) if done else None) for c in self.columns})

    # -- Sequence --------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: Any) -> Any:
        return self.rows[index]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows)

    def __repr__(self) -> str:
        return f"SweepResult({self.name!r}, {len(self.rows)} rows, {len(self.errors)} failed)"

    # -- outcome ---------------------------------------------------------------------------------
    @property
    def errors(self) -> list[dict[str, Any]]:
        """Rows of the cells that failed."""
        return [r for r in self.rows if r["status"] != "ok"]

    @property
    def exit_code(self) -> int:
        """1 when a cell failed, else 3 when some cell left pods pending, else 0."""
        if self.errors:
            return EXIT_CELL_FAILED
        return EXIT_PENDING if any(r["pending_pods"] for r in self.rows) else EXIT_OK

    @property
    def warnings(self) -> list[str]:
        """Distinct warnings of all cells (what karpy skipped or does not model), first-seen order."""
        return list(dict.fromkeys(w for r in self.raw_rows for w in (r.get("warnings") or [])))

    # -- formats ---------------------------------------------------------------------------------
    def to_csv(self, path: str | Path | None = None) -> str:
        """CSV with a header row (``\\n`` line ends; empty cell for a missing value)."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(self.columns)
        for r in self.rows:
            writer.writerow(["" if r[c] is None else repr(r[c]) if isinstance(r[c], float) else r[c]
                             for c in self.columns])
        text = buf.getvalue()
        if path is not None:
            write_atomic(path, text)  # a failed write leaves an earlier file as it was
        return text

    def to_jsonl(self, path: str | Path | None = None) -> str:
        """One JSON object per line, keys in column order."""
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.rows)
        if path is not None:
            write_atomic(path, text)  # a failed write leaves an earlier file as it was
        return text

    def arrow_schema(self) -> Any:
        import pyarrow as pa

        def kind(c: str) -> Any:
            if c in _INT or c.startswith("nodes_gen"):
                return pa.int64()
            if c in _FLOAT or c.startswith("node_hours_gen"):
                return pa.float64()
            return pa.string()

        return pa.schema([(c, kind(c)) for c in self.columns])

    def to_arrow(self) -> Any:
        """A ``pyarrow.Table`` (needs the ``parquet`` extra: ``pip install "karpy[parquet]"``)."""
        try:
            import pyarrow as pa
        except ImportError:
            raise ImportError('Parquet output needs pyarrow: pip install "karpy[parquet]"') from None
        schema = self.arrow_schema()
        return pa.Table.from_pylist(self.rows, schema=schema)

    def to_parquet(self, path: str | Path) -> Path:
        """Write the rows as a Parquet file (pyarrow)."""
        table = self.to_arrow()
        import pyarrow.parquet as pq

        with atomic_path(path) as tmp:  # a failed write leaves an earlier file as it was
            pq.write_table(table, str(tmp))
        return Path(path)

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` of the rows (needs pandas installed)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError('to_pandas() needs pandas: pip install "karpy[pandas]"') from None
        return pd.DataFrame(self.rows, columns=list(self.columns))
