"""Timeline scenarios as a sweep axis: a Scenario file (karpy.io/v1alpha1, issue #9) per axis
value, and the horizon columns ($ over the horizon, node-hours per generation) in every row."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import karpy

from .conftest import COOKBOOK


def test_scenarios_axis_gives_horizon_cost_and_node_hours(sweep_file: Callable[..., Path]) -> None:
    path = sweep_file("designs:\n  one-pool: [@01-one-nodepool, @common]\nprices: [2026-07-20]\n"
                      "scenarios:\n  settle: []\n  scale-up: @scenarios/scale-up.yaml")
    result = karpy.sweep(path, executor="sequential")
    settle, scale_up = result
    assert (settle["scenario"], scale_up["scenario"]) == ("settle", "scale-up")
    assert settle["horizon"] < 600 and scale_up["horizon"] == 7200.0
    # one c7i.2xlarge from 1 s to 2 h, plus whatever the 6 extra pods launched at 30 m
    assert scale_up["nodes_gen7"] >= 2 and scale_up["pending_pods"] == 0
    assert scale_up["node_hours_gen7"] > 2.0 + 1.0
    first = 0.357 * (7200 - 1) / 3600
    assert scale_up["cost_total"] > first
    assert settle["cost_total"] == pytest.approx(0.357 * (settle["horizon"] - 1) / 3600, abs=1e-5)
    assert "node_hours_gen7" in result.columns and result.exit_code == 0


def test_scenario_files_must_exist(sweep_file: Callable[..., Path]) -> None:
    from karpy.sweeps import SweepError, load_sweep

    with pytest.raises(SweepError, match=r"spec.scenarios.x: nope.yaml: no such file"):
        load_sweep(sweep_file("designs:\n  a: @01-one-nodepool\nscenarios:\n  x: nope.yaml"))
    assert (COOKBOOK / "scenarios" / "scale-up.yaml").is_file()
