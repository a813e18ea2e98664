"""`karpy simulate` through click's runner and as a subprocess: outputs, exit codes, bad input.

Every bad-input class of the design gets one line on stderr naming the file, document and field
path, exit code 2, no traceback, and the user's file is left as it was.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from karpy.cli import cli

POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.test.sh, kind: TestNodeClass, name: default}
      requirements: %s
"""
PODS = """\
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: nginx, resources: {requests: {cpu: %s, memory: 1Gi}}}]
"""


def manifest(tmp_path: Path, text: str, name: str = "m.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def simulate(*args: str) -> "click.testing.Result":  # noqa: F821
    return CliRunner().invoke(cli, ["simulate", "--cloud-provider", "fake", *args])


def test_table_output_and_exit_zero(tmp_path: Path) -> None:
    path = manifest(tmp_path, POOL % "[]" + PODS % '"1"')
    res = simulate(str(path))
    assert res.exit_code == 0, res.output
    assert "NODECLAIMS (1)" in res.output and "total: $" in res.output


def test_json_output_is_the_contract_document(tmp_path: Path) -> None:
    path = manifest(tmp_path, POOL % "[]" + PODS % '"1"')
    res = simulate(str(path), "-o", "json")
    doc = json.loads(res.stdout)  # (warnings go to stderr)
    assert set(doc) >= {"region", "prices", "nodeclaims", "pods", "cost_per_hour"}
    [claim] = doc["nodeclaims"]
    assert set(claim) >= {"name", "nodepool", "instance_type", "capacity_type", "zone", "price", "labels",
                          "annotations", "pods", "requirements", "fleet"}
    assert all(p["phase"] == "Running" for p in doc["pods"].values())


def test_pending_pods_exit_three(tmp_path: Path) -> None:
    path = manifest(tmp_path, POOL % "[]" + PODS % '"512"')
    res = simulate(str(path))
    assert res.exit_code == 3
    assert "PENDING PODS (3)" in res.output


def test_same_scenario_twice_gives_byte_identical_json(tmp_path: Path) -> None:
    path = manifest(tmp_path, POOL % "[]" + PODS % '"1"')
    assert simulate(str(path), "-o", "json").output == simulate(str(path), "-o", "json").output


def test_report_is_written(tmp_path: Path) -> None:
    path = manifest(tmp_path, POOL % "[]" + PODS % '"1"')
    report = tmp_path / "report.html"
    res = simulate(str(path), "--report", str(report))
    assert res.exit_code == 0
    assert "cost-by-nodepool" in report.read_text()


BAD_INPUT = [
    # (manifest text, fragments the one-line message must contain)
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: [unclosed\n", ["m.yaml"]),
    ("kind: NodePool\nmetadata: {name: x}\n", ["m.yaml", "document 1", "apiVersion"]),
    (POOL % '[{key: foo, operator: In, values: [on, "b"]}]', ["document 1", "values[0]", "boolean", "on"]),
    (POOL % '[{key: foo, operator: In, values: [4]}]', ["document 1", "values[0]", "must be of type string", "quote it"]),
    (POOL % '[{key: foo, operator: Near, values: ["a"]}]', ["document 1", "operator"]),
    (POOL % '[{key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: ["four"]}]', ["document 1", "integer"]),
    (POOL % "[]" + PODS % '"-1"', ["document 2", "cpu"]),
    (POOL % "[]" + PODS % '"lots"', ["document 2", "cpu"]),
    ("apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: x}\nspec: {}\n", ["document 1", "v1beta1"]),
]


@pytest.mark.parametrize("text,fragments", BAD_INPUT)
def test_bad_manifests_exit_two_with_one_clear_line(tmp_path: Path, text: str, fragments: list[str]) -> None:
    path = manifest(tmp_path, text)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    res = simulate(str(path))
    assert res.exit_code == 2, res.output
    err = res.stderr.strip()
    assert "Traceback" not in res.output and len(err.splitlines()) == 1, err
    for fragment in fragments:
        assert fragment in err, (fragment, err)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before  # nothing the user wrote is changed


def test_unknown_kinds_are_skipped_with_one_warning(tmp_path: Path) -> None:
    text = POOL % "[]" + PODS % '"1"' + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
    res = simulate(str(manifest(tmp_path, text)), "-o", "json")
    assert res.exit_code == 0
    assert any("ConfigMap" in w for w in json.loads(res.stdout)["warnings"])


def test_missing_path_is_bad_input(tmp_path: Path) -> None:
    res = simulate(str(tmp_path / "nope.yaml"))
    assert res.exit_code == 2 and "nope.yaml" in res.stderr


@pytest.mark.parametrize("args,fragment", [
    (["--unavailable", "c8i.large"], "TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE"),
    (["--preference-policy", "Sometimes"], "Sometimes"),
])
def test_bad_options_exit_two(tmp_path: Path, args: list[str], fragment: str) -> None:
    res = simulate(str(manifest(tmp_path, POOL % "[]" + PODS % '"1"')), *args)
    assert res.exit_code == 2
    assert fragment in res.stderr + res.output


@pytest.mark.parametrize("args,fragment", [
    (["--region", "mars-north-1"], "mars-north-1"),
    (["--prices", "1999-01-01"], "1999-01-01"),
    (["--unavailable", "c8i.large:us-east-1a"], "TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE"),
])
def test_aws_bad_region_date_and_spec_exit_two_as_a_subprocess(args: list[str], fragment: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "karpy", "simulate", *args], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert fragment in proc.stderr


def test_bundled_example_as_a_subprocess(validate_document: Any) -> None:
    proc = subprocess.run([sys.executable, "-m", "karpy", "simulate", "-o", "json"], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    validate_document(doc)  # a subprocess's document is not seen by conftest's to_document hook
    assert doc["nodeclaims"][0]["labels"]["karpenter.k8s.aws/instance-generation"] == "7"


def test_progress_line_appears_only_after_two_seconds() -> None:
    from karpy.cli import _Progress

    now = [0.0]
    progress = _Progress(now=lambda: now[0], tty=False)
    progress(31.0, 2, 4)
    assert not progress.shown  # a quick run prints nothing
    now[0] = 2.5
    progress(41.0, 3, 5)
    assert progress.shown
    now[0] = 3.0
    progress(51.0, 4, 5)  # not a terminal: throttled to one line every 10 s
    now[0] = 13.0
    progress(61.0, 5, 6)


def test_progress_lines_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    from karpy.cli import _Progress

    now = [0.0]
    progress = _Progress(now=lambda: now[0], tty=False)
    for t in (2.5, 3.0, 13.0):
        now[0] = t
        progress(t * 10, 1, 1)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith("karpy: simulating... virtual t=") for line in err)


def test_verbose_table_lists_every_failed_offering() -> None:
    cookbook = Path(__file__).resolve().parents[2] / "examples" / "generation-preference"
    args = ["simulate", str(cookbook / "04-generation-gte-8"), str(cookbook / "common"), "--prices", "2026-07-20",
            "--unavailable", "*8i.*:*:on-demand"]
    short = CliRunner().invoke(cli, args)
    full = CliRunner().invoke(cli, [*args, "--verbose"])
    assert short.exit_code == full.exit_code == 3, short.output
    assert "launches failed: c8i/m8i/r8i \u00d7 5 zones, InsufficientInstanceCapacity" in short.output
    assert len(short.output.splitlines()) <= 40 < len(full.output.splitlines())
    assert "ERROR" in full.output.split("FAILED LAUNCHES")[1].splitlines()[1]
