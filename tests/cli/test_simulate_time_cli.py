"""CLI: --until / --event, bad events (one line, exit 2), the timeline and cost sections of the table."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent.parent / "sim" / "data"
SCENARIO_DOC = """apiVersion: karpy.io/v1alpha1
kind: Scenario
metadata: {name: s}
spec:
  until: 1h
  events:
"""


@pytest.mark.parametrize("event, expected", [
    ("10m frob x", "unknown action 'frob'"),
    ("10x scale deployment/web 4", "at '10x' is not a duration"),
    # every check names the line as written (they said "<events>: events[0]...")
    ("10m scale deployment/nope 4", '--event \'10m scale deployment/nope 4\': scale.name: unknown Deployment "nope"'),
    ("10m scale deployment/web -1", "--event '10m scale deployment/web -1': scale.replicas: must be greater than or equal to 0"),
    ("2h scale deployment/web 4", "--event '2h scale deployment/web 4': at: 7200s is after the end of the run (until 3600s)"),
    ("999h scale deployment/web 4", "--event '999h scale deployment/web 4': at: 3596400s is after the end of the run"),
])
def test_bad_event_line_is_one_line_exit_2(invoke, event, expected):
    result = invoke("simulate", str(DATA / "spot-interruption.yaml"), "--until", "1h", "--event", event)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.startswith("karpy:") and "simulating" not in line]
    assert len(lines) == 1 and expected in lines[0], result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("event, field", [
    ("- {at: 10m, scael: {kind: Deployment, name: web, replicas: 1}}", "spec.events[0]: unknown action 'scael'"),
    ("- {at: 2h, scale: {kind: Deployment, name: web, replicas: 1}}", "events[0].at"),
    ("- {at: 10m, scale: {kind: Deployment, name: gone, replicas: 1}}", 'spec.events[0].scale.name: unknown Deployment'),
    ("- {at: 10m, scale: {kind: Deployment, name: web, replicas: -2}}", "spec.events[0].scale.replicas"),
    ("- {at: soon, scale: {kind: Deployment, name: web, replicas: 1}}", "spec.events[0].at"),
])
def test_bad_scenario_event_names_file_document_index_and_field(invoke, tmp_path, event, field):
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(SCENARIO_DOC + "  " + event + "\n")
    result = invoke("simulate", str(DATA / "spot-interruption.yaml"), str(scenario))
    assert result.exit_code == 2
    line = result.output.strip().splitlines()[-1]
    assert line.startswith(f"karpy: {scenario}: document 1 (Scenario \"s\"): ") and field in line, result.output


def test_until_and_event_on_the_command_line_give_timeline_and_cost(invoke):
    result = invoke("simulate", str(DATA / "spot-interruption.yaml"), "--prices", "2026-07-20", "--until", "1h",
                    "--event", "20m scale deployment/web 6")
    assert result.exit_code == 0, result.output
    assert "TIMELINE" in result.output and "scale Deployment/default/web 3->6" in result.output
    assert "COST over 1:00:00" in result.output
