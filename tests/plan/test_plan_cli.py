"""``karpy plan`` on the command line: the document is the Python API's, the exit codes (0, 2, 3, 4) and
bad input as one line with nothing the user wrote changed."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from dumps import EC2NODECLASS, cluster_dump, deployment, dump_text, nodepool  # noqa: E402

import karpy  # noqa: E402
from karpy.cli import cli  # noqa: E402
from karpy.planner import EXIT_GATE, plan_schema  # noqa: E402

PRICES = "2026-07-20"
SIZES = ["xlarge", "2xlarge"]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("plancli")
    design = [EC2NODECLASS, nodepool(sizes=SIZES), deployment("web", 4, "3", "4Gi")]
    out = {"dump": root / "cluster.yaml", "change": root / "gen8.yaml", "same": root / "same.yaml",
           "broken": root / "broken.yaml", "pod": root / "pod.yaml"}
    out["dump"].write_text(dump_text(cluster_dump(design, prices=PRICES)))
    out["change"].write_text(yaml.safe_dump(nodepool(sizes=SIZES, families=["c8i", "m8i", "r8i"])))
    out["same"].write_text(yaml.safe_dump(nodepool(sizes=SIZES)))
    out["broken"].write_text("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: general\nspec: [\n")
    out["pod"].write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                                          "spec": {"containers": [{"name": "c", "image": "x"}]}}))
    return out


def _digests(files: dict[str, Path]) -> dict[str, str]:
    return {k: hashlib.sha256(p.read_bytes()).hexdigest() for k, p in files.items()}


def _run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, ["plan", *args])
    return r.exit_code, r.stdout, r.stderr


def test_json_is_the_python_documents_and_a_tripped_gate_exits_4(files: dict[str, Path], tmp_path: Path) -> None:
    report = tmp_path / "plan.html"
    code, out, _ = _run(str(files["dump"]), "--apply", str(files["change"]), "--prices", PRICES, "-o", "json",
                        "--fail-on", "cost>+1%", "--fail-on", "evictions>100", "--report", str(report))
    assert code == EXIT_GATE == 4
    doc = json.loads(out)
    jsonschema.Draft202012Validator(plan_schema()).validate(doc)
    assert [(g["gate"], g["tripped"]) for g in doc["gates"]] == [("cost>+1%", True), ("evictions>100", False)]
    api = karpy.plan(files["dump"], apply=[files["change"]], prices=PRICES, fail_on=["cost>+1%", "evictions>100"])
    assert out == api.to_json()
    assert report.read_text().startswith("<!DOCTYPE html>") and 'class="wave"' in report.read_text()
    code, md, _ = _run(str(files["dump"]), "--apply", str(files["change"]), "--prices", PRICES, "-o", "markdown",
                       "--fail-on", "cost>+1%", "--fail-on", "evictions>100")
    assert code == 4 and md == api.to_markdown()
    code, table, _ = _run(str(files["dump"]), "--apply", str(files["change"]), "--prices", PRICES)
    assert code == 0 and "general/gen 8/on-demand: 4" in table


def test_no_changes_exits_0(files: dict[str, Path]) -> None:
    code, out, _ = _run(str(files["dump"]), "--apply", str(files["same"]), "--prices", PRICES)
    assert code == 0 and out.startswith("Plan: no changes.")


def test_cluster_on_stdin(files: dict[str, Path]) -> None:
    r = CliRunner().invoke(cli, ["plan", "-", "--apply", str(files["same"]), "--prices", PRICES, "-o", "json"],
                           input=files["dump"].read_text())
    assert r.exit_code == 0 and json.loads(r.stdout)["changed"] is False


@pytest.mark.parametrize("args,message", [
    (["--apply", "{broken}"], "--apply #1: "),
    (["--apply", "{pod}"], "--apply #1: no NodePool, EC2NodeClass, NodeOverlay in it"),
    (["--apply", "{change}", "--delete", "nodepool/gone"], "--delete nodepool/gone: no NodePool 'gone' in the cluster"),
    (["--delete", "deployment/web"], "--delete 'deployment/web': expected KIND/NAME"),
    (["--apply", "{change}", "--fail-on", "cost>5"], "--fail-on 'cost>5': expected"),
    (["--apply", "{change}", "--until", "soon"], "until"),
    ([], "nothing to plan"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_changed(files: dict[str, Path], args: list[str],
                                                          message: str) -> None:
    before = _digests(files)
    code, out, err = _run(str(files["dump"]), *[a.format(**{k: str(v) for k, v in files.items()}) for a in args],
                          "--prices", PRICES)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err, err
    assert _digests(files) == before


def test_a_dump_without_nodepools_is_bad_input(files: dict[str, Path], tmp_path: Path) -> None:
    bare = tmp_path / "bare.yaml"
    items = [i for i in yaml.safe_load(files["dump"].read_text())["items"] if i["kind"] != "NodePool"]
    bare.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    code, _, err = _run(str(bare), "--apply", str(files["change"]), "--prices", PRICES)
    assert code == 2 and "the cluster has no NodePool" in err and len(err.strip().splitlines()) == 1


def test_plan_schema_command_prints_the_shipped_schema() -> None:
    r = CliRunner().invoke(cli, ["schema", "plan"])
    assert r.exit_code == 0 and json.loads(r.stdout) == plan_schema()


def test_a_long_plan_shows_progress_on_stderr_and_ends_with_the_final_figures(
        files: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """As ``karpy simulate``: a progress line once the run takes a while (here: at once), the last line the
    run's final virtual time, passes and NodeClaims; stdout is the plan alone."""
    from karpy.cli import _Progress

    monkeypatch.setattr(_Progress, "AFTER_SECONDS", 0.0)
    monkeypatch.setattr(_Progress, "LOG_EVERY_SECONDS", 0.0)
    code, out, err = _run(str(files["dump"]), "--apply", str(files["change"]), "--prices", PRICES, "-o", "json")
    assert code == 0
    lines = [line for line in err.splitlines() if line.startswith("karpy: simulat")]
    assert len(lines) > 2 and all(line.startswith("karpy: simulating... virtual t=") for line in lines[:-1])
    sim = karpy.plan(files["dump"], apply=[files["change"]], prices=PRICES).result.simulation
    assert lines[-1].startswith(f"karpy: simulated virtual t={sim.virtual_seconds:.0f}s, "
                                f"{sim.provisioning_passes} provisioning passes, {len(sim.launches)} NodeClaims (")
    assert json.loads(out)["converged"] is True
