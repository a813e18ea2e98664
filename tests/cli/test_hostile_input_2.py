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
