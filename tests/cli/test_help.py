"""Every command's ``--help`` reads as plain text: no reStructuredText markup, the exit codes, the
``--event`` grammar itself, one name (``table``) for the plain view, examples not wrapped mid-word."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from karpy.api.scenario import EVENT_ACTIONS
from karpy.cli import cli


def _commands() -> list[list[str]]:
    ctx = click.Context(cli)
    out: list[list[str]] = [[]]
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        out.append([name])
        if isinstance(command, click.Group):
            out.extend([name, sub] for sub in command.list_commands(ctx))
    return out


def _help(*args: str) -> str:
    res = CliRunner().invoke(cli, [*args, "--help"], terminal_width=80)
    assert res.exit_code == 0, res.output
    return res.output


@pytest.mark.parametrize("args", _commands(), ids=lambda a: " ".join(a) or "karpy")
def test_help_is_plain_text_with_exit_codes(args: list[str]) -> None:
    text = _help(*args)
    assert "``" not in text and ":func:" not in text and ":data:" not in text, text
    assert "Exit codes:" in text or re.search(r"\bExit 0\b", text), text
    assert "README" not in text and "docs/guides" not in text, text
    assert "[text|" not in text and "|text]" not in text, text  # one name for the plain view: table


def test_event_grammar_is_in_the_help() -> None:
    text = " ".join(_help("simulate").split())
    for action in EVENT_ACTIONS:
        assert action.replace("_", "-") in text, action
    assert "scale KIND/NAME REPLICAS [-n NS]" in text and "capacity unavailable|available SPEC..." in text


@pytest.mark.parametrize("columns", ["80", "100"])
def test_feature_gates_example_is_not_wrapped_mid_word(columns: str) -> None:
    env = {**os.environ, "COLUMNS": columns}
    text = subprocess.run([sys.executable, "-m", "karpy", "simulate", "--help"], capture_output=True, text=True,
                          env=env, check=True).stdout
    assert "SpotToSpotConsolidation=true" in text and "NodeOverlay=true" in text, text


@pytest.mark.parametrize("command", ["simulate", "explain", "compare", "sweep"])
def test_table_is_the_documented_plain_view(command: str) -> None:
    assert re.search(r"-o, --output \[table\|", _help(command)), _help(command)


def test_text_is_accepted_as_table_everywhere(tmp_path: object) -> None:
    runner = CliRunner()
    example = Path(__file__).resolve().parents[2] / "karpy" / "examples" / "generation-preference.yaml"
    for command in (["simulate"], ["explain"], ["compare", f"a={example}", f"b={example}"]):
        table = runner.invoke(cli, [*command, "--cloud-provider", "fake", "-o", "table"])
        text = runner.invoke(cli, [*command, "--cloud-provider", "fake", "-o", "text"])
        assert table.exit_code == text.exit_code and table.exit_code in (0, 3), table.output
        assert table.output == text.output
    bad = runner.invoke(cli, ["simulate", "--cloud-provider", "fake", "-o", "xml"])
    assert bad.exit_code == 2
