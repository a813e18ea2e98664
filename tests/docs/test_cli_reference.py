"""The CLI reference page is generated from the click commands (docs/cli_reference.py, an mkdocs
hook): every command, plug-in commands included, and every option of each appear on it."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import click

from karpy.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "docs" / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _commands(group: click.Group, ctx: click.Context) -> list[tuple[str, click.Command]]:
    found = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        if command.hidden:
            continue
        sub = click.Context(command, info_name=name, parent=ctx)
        found.append((sub.command_path, command))
        if isinstance(command, click.Group):
            found.extend(_commands(command, sub))
    return found


def test_every_command_and_option_is_on_the_page() -> None:
    text = _hook().render()
    commands = _commands(cli, click.Context(cli, info_name="karpy"))
    paths = [path for path, _ in commands]
    # the built-in commands and the AWS provider's plug-in commands (karpy.commands entry points)
    assert {"karpy simulate", "karpy explain", "karpy compare", "karpy sweep", "karpy instance-types",
            "karpy prices", "karpy prices diff"} <= set(paths)
    for path, command in commands:
        assert f"`{path}`" in text, path
        for param in command.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("-"):
                    assert opt in text, (path, opt)


def test_the_hook_fills_the_marker_only() -> None:
    hook = _hook()
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert hook.MARKER in page
    rendered = hook.on_page_markdown(page, None, None, None)
    assert hook.MARKER not in rendered and "## `karpy`" in rendered
    assert hook.on_page_markdown("no marker", None, None, None) == "no marker"
