"""karpy's layers (issue 38): every import of a karpy module -- at module level, inside a function or
under ``TYPE_CHECKING`` -- goes to the same or a lower layer, no import circle joins karpy's modules,
and karpy never imports awsprovider. Read from the source's AST, so nothing is imported.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KARPY = ROOT / "karpy"

#: karpy's packages and top-level modules, bottom layer first; a tuple is one layer (its members may
#: import each other). ``karpy`` is the root ``__init__``.
LAYERS: list[tuple[str, ...]] = [
    ("_errors", "_exports"),  # the error bases and the lazy-export helper: import nothing of karpy
    ("validation",),  # Kubernetes name / label validation
    ("admission",),  # the API server's admission, which the loader runs
    ("api",),  # the models of what users write, and loading
    ("scheduling",),  # the algebra both schedulers share (pkg/scheduling)
    ("featuregates",),
    ("options",),  # Options, SchedulerConfig
    ("cloudprovider",),
    ("utils",),  # pkg/utils: pod, disruption costs, PDBs, durations, cron
    ("state",),  # pkg/controllers/state
    ("provisioning",),
    ("kubescheduler",),
    ("sim.host",),  # what a controller may read and do: SimulationHost, the clock, store, records, options
    ("nodeclaim",),  # nodeclaim disruption / expiration conditions
    ("termination",),
    ("static",),
    ("disruption",),
    ("sim",),  # object store, clock, the simulation loop
    ("summary",),  # one run's outcome in plain values
    ("report",),  # the renderers of the documents (table, HTML, compare, sweep)
    ("cost", "document", "billing"),  # list prices and the bill (karpy.billing) over the run
    ("explain",),
    ("whynot",),  # where an instance type left the race (re-runs through RunInputs.rerun)
    ("result",),
    ("simulator",),  # karpy.simulate
    ("comparison", "alignment", "planner"),  # karpy.compare; karpy.align_billing (re-runs a design); karpy.plan
    ("sweeps",),  # karpy.sweep
    ("schemas",),
    ("cli", "__main__"),
    ("errors",),  # the public catalogue of every error
    ("karpy",),  # the package root (lazy names)
    ("testing",),  # the pytest plugin (reads karpy.__version__)
]

#: Edges (importer module, imported module) still waiting for a redesign, each with the reason; each
#: is removed from the checks below. Delete an entry once its import is gone (the last test says when).
KNOWN_EXCEPTIONS: dict[tuple[str, str], str] = {}


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(KARPY.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(module: str, path: Path) -> Iterator[tuple[str, int]]:
    """``(imported name, line)`` for every import statement in the file, wherever it sits."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                yield (sub if sub in MODULES else target), node.lineno


def _karpy_module(name: str) -> str | None:
    """The karpy module an imported name lives in (``karpy.api.pod.Pod`` -> ``karpy.api.pod``)."""
    while name not in MODULES:
        if "." not in name:
            return None
        name = name.rpartition(".")[0]
    return name


def _edges() -> dict[tuple[str, str], int]:
    edges: dict[tuple[str, str], int] = {}
    for module, path in MODULES.items():
        for name, line in _imports(module, path):
            target = _karpy_module(name)
            if target is not None and target != module:
                edges.setdefault((module, target), line)
    return edges


EDGES = _edges()


#: modules of karpy.sim that sit below the controllers: the interface the simulation offers them
#: (upstream hands its controllers the manager, the cluster state and the clients, not the loop)
SIM_INTERFACE = frozenset({"karpy.sim.host", "karpy.sim.clock", "karpy.sim.store", "karpy.sim.records",
                           "karpy.sim.options", "karpy.sim.timeline"})


def _unit(module: str) -> str:
    """The layer unit of a module: its top package or top-level module under karpy."""
    if module in SIM_INTERFACE:
        return "sim.host"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "karpy"


LAYER_OF = {unit: i for i, layer in enumerate(LAYERS) for unit in layer}


def test_every_package_has_a_layer() -> None:
    units = {_unit(m) for m in MODULES}
    assert not units - set(LAYER_OF), f"add to LAYERS: {sorted(units - set(LAYER_OF))}"
    assert not set(LAYER_OF) - units, f"no such package: {sorted(set(LAYER_OF) - units)}"


def test_imports_only_go_down() -> None:
    upward = [f"{a}:{line} imports {b} ({_unit(a)} is layer {LAYER_OF[_unit(a)]}, {_unit(b)} is {LAYER_OF[_unit(b)]})"
              for (a, b), line in sorted(EDGES.items())
              if (a, b) not in KNOWN_EXCEPTIONS and LAYER_OF[_unit(b)] > LAYER_OF[_unit(a)]]
    assert not upward, "\n".join(upward)


def _cycles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    graph: dict[str, list[str]] = {m: [] for m in MODULES}
    for a, b in sorted(edges):
        graph[a].append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_no_import_circle_among_karpy_modules() -> None:
    cycles = _cycles(set(EDGES) - set(KNOWN_EXCEPTIONS))
    assert not cycles, "\n".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_check_sees_a_cycle() -> None:
    a, b = "karpy.api.pod", "karpy.api.meta"
    assert _cycles({(a, b), (b, a)}) == [sorted([a, b])]


def test_karpy_never_imports_awsprovider() -> None:
    found = [f"{m}:{line} imports {name}" for m, path in MODULES.items() for name, line in _imports(m, path)
             if name == "awsprovider" or name.startswith("awsprovider.")]
    assert not found, "\n".join(found)


def test_known_exceptions_still_exist() -> None:
    """An allow-list entry whose import is gone is stale: delete it."""
    stale = [edge for edge in KNOWN_EXCEPTIONS if edge not in EDGES]
    assert not stale, f"delete from KNOWN_EXCEPTIONS: {stale}"
