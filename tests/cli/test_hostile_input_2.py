"""Hostile input and faults, round two (issue #35): one regression test per class, on input shaped
as users write it. Contract: exit 2, one line ``karpy: <file>: document <n> (...): <field>: ...``
on stderr, no traceback, the input file unchanged."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: default}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
        - name: app
          image: nginx
          resources: {{requests: {{cpu: 500m, memory: 1Gi}}}}
"""


@pytest.fixture
def run(invoke: Callable[..., Result], tmp_path: Path) -> Callable[..., Result]:
    """Write ``text`` to a manifest file, run ``karpy COMMAND FILE ARGS`` (``simulate`` adds the fake
    provider and JSON output), and check the file was not changed."""

    def go(text: str, *args: str, command: str = "simulate") -> Result:
        path = tmp_path / "in.yaml"
        path.write_text(text)
        before = hashlib.sha256(path.read_bytes()).hexdigest()
        extra = ("--cloud-provider", "fake", "-o", "json") if command == "simulate" else ()
        res = invoke(command, str(path), *extra, *args)
        assert hashlib.sha256(path.read_bytes()).hexdigest() == before
        return res

    return go


def one_line(res: Result, *parts: str) -> str:
    """Assert the bad-input contract and that the line names every one of ``parts``."""
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("karpy: "), res.stderr
    assert "Traceback" not in res.output
    for part in parts:
        assert part in lines[0], (part, lines[0])
    return lines[0]


# -- 1. invalid apiVersion / kind ---------------------------------------------------------------------

@pytest.mark.parametrize("api_version", ["'*'", "'$(rm -rf /)'", "'日本語'", "apps/v1/extra", "/v1",
                                         "Example.com/v1", "example.com/V1", '"example.com/v1\\x01"'])
@pytest.mark.parametrize("command", ["simulate", "validate"])
def test_malformed_api_version_is_bad_input(run: Callable[..., Result], api_version: str, command: str) -> None:
    text = f"apiVersion: {api_version}\nkind: Widget\nmetadata: {{name: w}}\n---\n" + DEPLOYMENT.format(replicas=2)
    one_line(run(text, command=command), "in.yaml", "document 1", "apiVersion")


@pytest.mark.parametrize("kind", ["'Deployment '", "'EC2NodeClass\\t'", "'日本語'", "'Scenario!'", "'1Widget'",
                                  '"Node\\0"'])
def test_malformed_kind_is_bad_input(run: Callable[..., Result], kind: str) -> None:
    text = DEPLOYMENT.format(replicas=2) + f"---\napiVersion: apps/v1\nkind: {kind}\nmetadata: {{name: web2}}\n"
    one_line(run(text), "in.yaml", "document 2", "kind", "not a valid kind")


def test_well_formed_unmodelled_kind_is_still_skipped_with_a_warning(run: Callable[..., Result]) -> None:
    text = "apiVersion: example.com/v1alpha1\nkind: Widget\nmetadata: {name: w}\n---\n" + DEPLOYMENT.format(replicas=2)
    res = run(text)
    assert res.exit_code in (0, 3), res.output
    assert "example.com/v1alpha1 Widget" in res.stderr


# -- 2. negative and wrongly typed counts ------------------------------------------------------------

def workload(kind: str, field: str, value: str) -> str:
    api = "batch/v1" if kind == "Job" else "apps/v1"
    selector = "" if kind == "Job" else "  selector: {matchLabels: {app: web}}\n"
    restart = "      restartPolicy: Never\n" if kind == "Job" else ""
    return f"""apiVersion: {api}
kind: {kind}
metadata: {{name: web, namespace: default}}
spec:
  {field}: {value}
{selector}  template:
    metadata: {{labels: {{app: web}}}}
    spec:
{restart}      containers:
        - name: app
          image: nginx
          resources: {{requests: {{cpu: 500m, memory: 1Gi}}}}
"""


@pytest.mark.parametrize(("kind", "field"), [("Deployment", "replicas"), ("ReplicaSet", "replicas"),
                                             ("StatefulSet", "replicas"), ("Job", "parallelism"),
                                             ("Job", "completions")])
@pytest.mark.parametrize("command", ["simulate", "validate"])
def test_negative_counts_are_refused_as_the_api_server_does(run: Callable[..., Result], kind: str, field: str,
                                                            command: str) -> None:
    line = one_line(run(workload(kind, field, "-3"), command=command), "in.yaml", f'document 1 ({kind} "web")',
                    f"spec.{field}")
    assert line.endswith("Invalid value: -3: must be greater than or equal to 0"), line


def test_negative_count_in_a_library_model_is_refused() -> None:
    from pydantic import ValidationError

    from karpy.api.workloads import Deployment, Job
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        Deployment.model_validate({"metadata": {"name": "w"}, "spec": {"replicas": -3}})
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        Job.model_validate({"metadata": {"name": "w"}, "spec": {"parallelism": -1}})


SCENARIO = """---
apiVersion: karpy.io/v1alpha1
kind: Scenario
metadata: {{name: burst}}
spec:
  events:
    - at: 1m
      scale: {{kind: Deployment, name: web, replicas: {replicas}}}
"""


@pytest.mark.parametrize(("replicas", "says"), [("true", "must be a valid integer"),
                                                ('"3"', "must be a valid integer"),
                                                ("3.0", "must be a valid integer"),
                                                ("-1", "must be greater than or equal to 0")])
def test_scale_event_counts_are_not_coerced(run: Callable[..., Result], replicas: str, says: str) -> None:
    text = workload("Deployment", "replicas", "2") + SCENARIO.format(replicas=replicas)
    one_line(run(text), "in.yaml", 'document 2 (Scenario "burst")', "spec.events[0].scale.replicas", says)


def test_scale_event_with_an_int_still_runs(run: Callable[..., Result]) -> None:
    res = run(workload("Deployment", "replicas", "2") + SCENARIO.format(replicas="3"))
    assert res.exit_code in (0, 3), res.output
