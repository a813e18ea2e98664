"""Bad input to the plug-in commands: exit code 2, one line ``karpy: ...`` on stderr, no traceback;
and the ``karpy.commands`` wiring of :mod:`karpy.cli` (karpy never imports awsprovider)."""

from __future__ import annotations

import ast
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import karpy.cli
from karpy.cli import cli, parse_requirement

PLUGINS = {
    "instance-types": "awsprovider.commands:instance_types",
    "prices": "awsprovider.commands:prices",
}
REPO = Path(__file__).resolve().parents[2]
POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: pool}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [c7i]}
"""


def _register(mp: pytest.MonkeyPatch, plugins: dict[str, str]) -> None:
    mp.setattr(karpy.cli, "_command_entry_points",
               lambda: {n: EntryPoint(n, v, "karpy.commands") for n, v in plugins.items()})
    mp.setattr(cli, "_loaded", {})




def assert_bad_input(result, *fragments: str) -> None:
    """Exit 2, a SystemExit (not a crash), exactly one ``karpy:`` line on stderr."""
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    err = result.stderr
    assert "Traceback" not in result.output
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("karpy: "), err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.fixture()
def pool(tmp_path: Path) -> str:
    path = tmp_path / "pool.yaml"
    path.write_text(POOL)
    return str(path)


# ----------------------------------------------------------------------------- requirements

@pytest.mark.parametrize(("text", "fragment"), [
    ("", "empty"),
    ("karpenter.k8s.aws/instance-family", "missing operator"),
    ("kubernetes.io/arch in amd64", "did you mean 'In'?"),
    ("kubernetes.io/arch Equals amd64", "unknown operator 'Equals'"),
    ("karpenter.k8s.aws/instance-family In", "must have a value"),
    ("karpenter.k8s.aws/instance-cpu Lt eight", "needs an integer value, got 'eight'"),
    ("karpenter.k8s.aws/instance-cpu Gt 1,2", "single integer value"),
    ("karpenter.k8s.aws/instance-generation Gte -1", "positive integer"),
    ("karpenter.k8s.aws/instance-local-nvme Exists 1", "must not have values"),
    ("karpenter.k8s.aws/instance-famly In c7i", "did you mean 'karpenter.k8s.aws/instance-family'?"),
    ("team In payments", "'team' is not an instance-type label"),
])
def test_bad_requirement(invoke, text: str, fragment: str) -> None:
    result = invoke("instance-types", "--requirement", text)
    assert_bad_input(result, f"requirement {text!r}", fragment)


def test_parse_requirement_accepts_every_operator() -> None:
    ops = {"In a,b": ["a", "b"], "NotIn a": ["a"], "Exists": [], "DoesNotExist": [], "Gt 1": ["1"],
           "Lt 1": ["1"], "Gte 1": ["1"], "Lte 1": ["1"]}
    for rest, values in ops.items():
        req = parse_requirement(f"k {rest}")
        assert (req.key, req.operator, req.values) == ("k", rest.split()[0], values)


# ----------------------------------------------------------------------------- prices, regions, files

def test_instance_types_bad_date(invoke) -> None:
    assert_bad_input(invoke("instance-types", "--prices", "2020-01-01"),
                     "no us-east-1 price table dated 2020-01-01", "2026-07-20")


def test_instance_types_malformed_date(invoke) -> None:
    assert_bad_input(invoke("instance-types", "--prices", "2026-13-45"), "invalid date")


def test_instance_types_unknown_region(invoke) -> None:
    assert_bad_input(invoke("instance-types", "--region", "mars-1"), "no price tables for region 'mars-1'")


def test_instance_types_missing_price_file(invoke, tmp_path: Path) -> None:
    assert_bad_input(invoke("instance-types", "--prices", str(tmp_path / "nope.json")), "cannot read price table")


def test_instance_types_missing_nodepool_file(invoke, tmp_path: Path) -> None:
    assert_bad_input(invoke("instance-types", "--nodepool", str(tmp_path / "nope.yaml")), "no such file")


def test_nodepool_file_without_nodepool(invoke, tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x}]}\n")
    assert_bad_input(invoke("instance-types", "--nodepool", str(path)), "no NodePool")


def test_nodepool_file_with_two_nodepools(invoke, tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text(POOL + "---\n" + POOL.replace("name: pool}", "name: other}"))
    assert_bad_input(invoke("instance-types", "--nodepool", str(path)), "2 NodePools (pool, other)")


def test_nodepool_file_with_invalid_requirement(invoke, tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(POOL.replace("operator: In", "operator: Gt"))
    result = invoke("instance-types", "--nodepool", str(path))
    assert_bad_input(result, str(path))


def test_prices_unknown_region(invoke) -> None:
    assert_bad_input(invoke("prices", "--region", "mars-1"), "no price tables for region 'mars-1'",
                     "us-east-1")


def test_diff_bad_first_date(invoke, pool: str) -> None:
    assert_bad_input(invoke("prices", "diff", "2019-01-01", "2026-07-20", "--nodepool", pool),
                     "no us-east-1 price table dated 2019-01-01")


def test_diff_bad_second_date(invoke, pool: str) -> None:
    assert_bad_input(invoke("prices", "diff", "2026-07-20", "not-a-date", "--nodepool", pool),
                     "not-a-date")


def test_diff_unknown_region(invoke, pool: str) -> None:
    assert_bad_input(invoke("prices", "diff", "2026-07-20", "2026-07-06", "--nodepool", pool, "--region", "xx-1"),
                     "no price tables for region 'xx-1'")


def test_diff_takes_the_region_given_before_diff(invoke, pool: str) -> None:
    assert_bad_input(invoke("prices", "--region", "yy-2", "diff", "2026-07-20", "2026-07-06", "--nodepool", pool),
                     "no price tables for region 'yy-2'")


def test_diff_date_before_every_table(invoke, pool: str) -> None:
    # (a date without its own table falls back to the newest before it: tests/realworld/test_inputs.py)
    assert_bad_input(invoke("prices", "diff", "2026-07-20", "2020-01-06", "--nodepool", pool),
                     "no us-east-1 price table dated 2020-01-06 or earlier")


def test_diff_missing_nodepool_file(invoke, tmp_path: Path) -> None:
    assert_bad_input(invoke("prices", "diff", "2026-07-20", "2026-07-06", "--nodepool", str(tmp_path / "x.yaml")),
                     "no such file")


def test_diff_requires_nodepool(invoke) -> None:
    result = invoke("prices", "diff", "2026-07-20", "2026-07-06")
    assert result.exit_code == 2
    assert "--nodepool" in result.output and "Traceback" not in result.output


# ----------------------------------------------------------------------------- wiring

def test_help_lists_plugin_and_builtin_commands(invoke) -> None:
    result = invoke("--help")
    assert result.exit_code == 0
    commands = result.output.split("Commands:")[1]
    assert [line.split()[0] for line in commands.strip().splitlines()] == ["compare", "explain", "instance-types",
                                                                                   "plan", "prices", "schema", "simulate",
                                                                                   "sweep", "validate"]


def test_unregistered_commands_are_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    _register(monkeypatch, {})
    result = CliRunner().invoke(cli, ["instance-types"])
    assert result.exit_code == 2 and "No such command 'instance-types'" in result.output
    assert "instance-types" not in CliRunner().invoke(cli, ["--help"]).output


def test_broken_plugin_is_bad_input_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    _register(monkeypatch, {"broken": "no_such_module_karpy:cmd", "notcmd": "karpy.cli:REQUIREMENT_SYNTAX"})
    assert_bad_input(CliRunner().invoke(cli, ["broken", "--region", "x"]), "command 'broken' is unavailable",
                     "no_such_module_karpy")
    assert_bad_input(CliRunner().invoke(cli, ["notcmd"]), "is not a click command")
    help_out = CliRunner().invoke(cli, ["--help"]).output
    assert "broken" not in help_out and "simulate" in help_out


def test_builtin_wins_over_plugin_of_same_name(monkeypatch: pytest.MonkeyPatch) -> None:
    _register(monkeypatch, {"simulate": "awsprovider.commands:instance_types"})
    assert cli.get_command(click.Context(cli), "simulate") is cli.commands["simulate"]


def test_karpy_cli_does_not_import_awsprovider() -> None:
    tree = ast.parse((REPO / "karpy" / "cli.py").read_text(encoding="utf-8"))
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert imported and not any(m.split(".")[0] == "awsprovider" for m in imported)
    code = ("import sys, karpy.cli; from click.testing import CliRunner; "
            "CliRunner().invoke(karpy.cli.cli, ['simulate', '--help']); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'awsprovider'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "[]"
