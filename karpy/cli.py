"""The ``karpy`` command (also ``python -m karpy``): a thin layer over :func:`karpy.simulate`.

Exit codes: 0 every pod placed; 3 some pods left pending (a valid answer); 2 bad input, reported
as one line on stderr with no traceback.
"""

from __future__ import annotations

import sys
from importlib.resources import files
from pathlib import Path
from typing import Any, NoReturn

import click

from karpy.result import EXIT_BAD_INPUT

__all__ = ["main", "cli"]

BUNDLED_EXAMPLE = "generation-preference.yaml"


def bundled_example() -> Path:
    """The example scenario shipped inside the package (used when no PATH is given)."""
    return Path(str(files("karpy") / "examples" / BUNDLED_EXAMPLE))


def _bad_input(message: str) -> NoReturn:
    click.echo(f"karpy: {message}", err=True)
    sys.exit(EXIT_BAD_INPUT)


def _input_errors() -> tuple[type[BaseException], ...]:
    from karpy.api.loader import ManifestError
    from karpy.cloudprovider.registry import UnknownCloudProviderError

    return (ManifestError, UnknownCloudProviderError, ValueError, FileNotFoundError)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="karpy")
def cli() -> None:
    """What would Karpenter launch on AWS for these NodePools and pods, what would it cost, and why."""


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--region", default="us-east-1", show_default=True, help="AWS region of the price table.")
@click.option("--prices", default=None, metavar="DATE|FILE",
              help="Price table date (e.g. 2026-07-20) or a JSON/CSV table file; default: newest for the region.")
@click.option("--unavailable", multiple=True, metavar="SPEC",
              help="Inject capacity errors: TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE (repeatable).")
@click.option("--preference-policy", type=click.Choice(["Respect", "Ignore"]), default="Respect", show_default=True)
@click.option("--min-values-policy", type=click.Choice(["Strict", "BestEffort"]), default="Strict", show_default=True)
@click.option("--cloud-provider", default="aws", show_default=True, help="Registered cloud provider (aws, fake).")
@click.option("-o", "--output", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write a self-contained HTML report to this file.")
def simulate(paths: tuple[Path, ...], region: str, prices: str | None, unavailable: tuple[str, ...],
             preference_policy: str, min_values_policy: str, cloud_provider: str, output: str,
             report_path: Path | None) -> None:
    """Simulate PATH... (files or directories of manifests; default: the bundled example)."""
    from karpy.simulator import simulate as run

    sources: list[Any] = list(paths) if paths else [bundled_example()]
    for p in paths:
        if not p.exists():
            _bad_input(f"{p}: no such file or directory")
    try:
        result = run(sources, region=region, prices=prices, unavailable=unavailable,
                     preference_policy=preference_policy, min_values_policy=min_values_policy,
                     cloud_provider=cloud_provider)
    except _input_errors() as err:
        _bad_input(str(err))
    document = result.to_document()
    if output == "json":
        click.echo(result.to_json(), nl=False)
    else:
        from karpy.report.table import render_table

        click.echo(render_table(document), nl=False)
    if report_path is not None:
        from karpy.report.html import render_html

        report_path.write_text(render_html(document), encoding="utf-8")
    sys.exit(result.exit_code)


def main() -> None:
    cli()


if __name__ == "__main__":  # pragma: no cover
    main()
