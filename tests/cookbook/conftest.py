"""Fixtures of the cookbook tests (the karpy pytest plugin is loaded through its pytest11 entry point)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from karpy.testing import Scenario

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "generation-preference"


def _load_make_table() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generation_preference_make_table", EXAMPLES / "make_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def cookbook() -> ModuleType:
    """examples/generation-preference/make_table.py (strategies, manifests, the table)."""
    return _load_make_table()


@pytest.fixture(scope="session")
def run(cookbook: ModuleType, karpy_scenario: Any) -> Callable[..., Any]:
    """``run("02-weighted-nodepools", capacity="8th gen ICE")`` -> Result; each cell runs once a session."""
    results: dict[tuple[str, str], Any] = {}

    def _run(strategy: str, capacity: str = "normal") -> Any:
        if (strategy, capacity) not in results:
            scenario: Scenario = karpy_scenario(cookbook.manifests_for(strategy), prices=cookbook.PRICES,
                                                region=cookbook.REGION, unavailable=cookbook.CAPACITIES[capacity],
                                                feature_gates=cookbook.FEATURE_GATES)
            results[strategy, capacity] = scenario.run()
        return results[strategy, capacity]

    return _run


@pytest.fixture(scope="module")
def two_hours(cookbook: ModuleType) -> Callable[..., Any]:
    """``two_hours("03-nodeoverlay", "8th gen ICE")`` -> Result of make_table.consolidation_run (2 h with
    consolidation, the outage in the first hour); each cell runs once a module. Not once a session:
    a finished run with disruption still holds a Scheduler (tests/sim/test_memory.py counts them)."""
    results: dict[tuple[str, str], Any] = {}

    def _run(strategy: str, capacity: str = "normal") -> Any:
        if (strategy, capacity) not in results:
            results[strategy, capacity] = cookbook.consolidation_run(strategy, capacity)
        return results[strategy, capacity]

    return _run
