"""mkdocs hook: the CLI reference page, generated from the click commands at build time.

``docs/cli.md`` holds the marker ``<!-- karpy-cli-reference -->``; this hook replaces it with the
``--help`` text of ``karpy`` and of every command under it, walked from ``karpy.cli.cli`` (the
built-in commands and the plug-in commands of the ``karpy.commands`` entry points, e.g. the AWS
provider's ``instance-types`` and ``prices``), so the page cannot drift from the code. Registered
under ``hooks:`` in mkdocs.yml; no dependency beyond click, which karpy already needs.
"""

from __future__ import annotations

from typing import Any

import click

MARKER = "<!-- karpy-cli-reference -->"
WIDTH = 100  # a fixed help width: the page does not depend on the terminal that builds it


def _context(command: click.Command, name: str, parent: click.Context | None) -> click.Context:
    settings = {**command.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    return click.Context(command, info_name=name, parent=parent, **settings)


def _sections(command: click.Command, ctx: click.Context, level: int) -> list[str]:
    """One section per command, depth first, subcommands in the group's listed order."""
    title = ctx.command_path
    first = (command.get_short_help_str(limit=WIDTH) if ctx.parent is not None else "").strip()
    lines = [f"{'#' * level} `{title}`", ""]
    if first:
        lines += [first, ""]
    lines += ["```text", command.get_help(ctx).rstrip(), "```", ""]
    if isinstance(command, click.Group):
        for sub_name in command.list_commands(ctx):
            sub = command.get_command(ctx, sub_name)
            if sub is None or sub.hidden:
                continue
            lines += _sections(sub, _context(sub, sub_name, ctx), min(level + 1, 4))
    return lines


def render() -> str:
    """The reference: ``karpy --help``, then each command's help (plug-in commands included)."""
    from karpy.cli import cli

    root = _context(cli, "karpy", None)
    return "\n".join(_sections(cli, root, 2))


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, render())
