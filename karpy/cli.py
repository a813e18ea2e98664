"""The ``karpy`` command (also ``python -m karpy``): a thin layer over :func:`karpy.simulate`.

Exit codes: 0 every pod placed; 3 some pods left pending (a valid answer); 2 bad input, reported
as one line on stderr with no traceback.

Plug-in commands. karpy never imports a cloud provider package, so provider-specific commands
(the AWS provider's ``instance-types`` and ``prices``) are found through the entry-point group
:data:`COMMAND_ENTRY_POINT_GROUP` (``karpy.commands``), the way Flask finds ``flask.commands``:
each entry point names a :class:`click.Command` (or group), added under the entry point's name::

    [project.entry-points."karpy.commands"]
    instance-types = "awsprovider.commands:instance_types"
    prices = "awsprovider.commands:prices"

Entry points are loaded lazily, only when their command is invoked or help lists it; built-in
commands win over a plug-in of the same name; a plug-in that fails to load is reported as bad input
when invoked (and left out of ``--help``) instead of breaking the whole CLI. This was preferred over
a ``cli_commands()`` hook on the registered cloud-provider class: commands do not need a provider
instance, listing them does not import the provider's heavy modules, and one package can add
commands that belong to no provider.

Helpers for plug-in commands (same style and contract as ``simulate``): :func:`bad_input` (one
line on stderr, exit 2) and :func:`parse_requirement` (``'KEY OPERATOR [VALUES]'`` strings).
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import time
from collections.abc import Callable, Mapping
from importlib.metadata import EntryPoint, entry_points
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from karpy.api.loader import DEFAULT_MAX_PODS
from karpy.result import EXIT_BAD_INPUT
from karpy.sim.collector import RUN_GC_THRESHOLDS

if TYPE_CHECKING:
    from karpy.api.pod import NodeSelectorRequirement
    from karpy.result import Result
    from karpy.sweeps.rows import SweepResult

__all__ = ["CLI_GC_THRESHOLDS", "COMMAND_ENTRY_POINT_GROUP", "OutputChoice", "PluginGroup", "bad_input", "cli",
           "main", "parse_requirement", "preload_cloud_provider", "print_warnings", "tune_gc"]

#: Entry-point group of extra ``karpy`` subcommands (see the module docstring).
COMMAND_ENTRY_POINT_GROUP = "karpy.commands"
#: What ``--requirement`` strings look like (used in error messages).
REQUIREMENT_SYNTAX = "'KEY OPERATOR [VALUE,...]', e.g. 'karpenter.k8s.aws/instance-family In c7i,c8i'"

BUNDLED_EXAMPLE = "generation-preference.yaml"


def bundled_example() -> Path:
    """The example scenario shipped inside the package (used when no PATH is given)."""
    return Path(str(files("karpy") / "examples" / BUNDLED_EXAMPLE))


def bad_input(message: str) -> NoReturn:
    """Report bad input as one line on stderr (``karpy: <message>``) and exit 2."""
    click.echo(f"karpy: {' '.join(str(message).split())}", err=True)
    sys.exit(EXIT_BAD_INPUT)


#: characters ``str.splitlines`` breaks on, escaped in a bad-input line (a manifest value quoted in a
#: message may hold U+2028 and friends; the line stays one line)
_LINE_BREAKS = {ord(c): c.encode("unicode_escape").decode("ascii") for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"}


def _bad_input(message: str) -> NoReturn:
    click.echo(f"karpy: {message.translate(_LINE_BREAKS)}", err=True)
    sys.exit(EXIT_BAD_INPUT)


def parse_requirement(text: str) -> NodeSelectorRequirement:
    """Parse ``'KEY OPERATOR [VALUES]'`` into a validated NodePool requirement.

    VALUES are comma- and/or space-separated (``In c7i,c8i``, ``In c7i, c8i``); ``Exists`` and
    ``DoesNotExist`` take none; ``Gt``/``Lt``/``Gte``/``Lte`` take one non-negative integer. The
    rules are the NodePool CRD's. Raises
    ``ValueError`` with a one-line message quoting ``text`` (the CRD's rules are checked by admitting the
    requirement in a NodePool, so the message is the API server's).
    """
    from pydantic import TypeAdapter, ValidationError

    from karpy.api.nodepool import KarpenterRequirement
    from karpy.api.pod import NODE_SELECTOR_OPERATORS

    where = f"requirement {text!r}"
    tokens = text.split()
    if not tokens:
        raise ValueError(f"{where}: empty; expected {REQUIREMENT_SYNTAX}")
    if len(tokens) == 1:
        raise ValueError(f"{where}: missing operator; expected {REQUIREMENT_SYNTAX}")
    key, operator = tokens[0], tokens[1]
    if operator not in NODE_SELECTOR_OPERATORS:
        hint = next((op for op in NODE_SELECTOR_OPERATORS if op.lower() == operator.lower()), None)
        raise ValueError(f"{where}: unknown operator {operator!r}"
                         + (f" (did you mean {hint!r}?)" if hint else "")
                         + f"; must be one of {', '.join(NODE_SELECTOR_OPERATORS)}")
    values = [v for v in ",".join(tokens[2:]).split(",") if v]
    try:
        requirement = TypeAdapter(KarpenterRequirement).validate_python(
            {"key": key, "operator": operator, "values": values})
    except ValidationError as err:
        first = err.errors()[0]
        msg = str(first.get("msg", err)).removeprefix("Value error, ").removeprefix(f"requirement {key!r}: ")
        raise ValueError(f"{where}: {msg}") from None
    # the NodePool CRD's own rules on a requirement (non-negative Gt/Lt/Gte/Lte, restricted keys)
    from karpy.admission import AdmissionError, admit

    probe = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "requirement"},
             "spec": {"template": {"spec": {"nodeClassRef": {"group": "g", "kind": "k", "name": "n"},
                                            "requirements": [requirement.model_dump(mode="json", by_alias=True,
                                                                                    exclude_none=True)]}}}}
    try:
        admit(probe)
    except AdmissionError as err:
        raise ValueError(f"{where}: {err.errors[0].body}") from None
    return requirement


def _command_entry_points() -> dict[str, EntryPoint]:
    """The ``karpy.commands`` entry points by name (deterministic: the first by value wins)."""
    found: dict[str, EntryPoint] = {}
    for ep in sorted(entry_points(group=COMMAND_ENTRY_POINT_GROUP), key=lambda e: (e.name, e.value)):
        found.setdefault(ep.name, ep)
    return found


def _broken_command(name: str, reason: str) -> click.Command:
    """A stand-in for a plug-in command that could not be loaded: invoking it is bad input."""

    def run() -> None:
        bad_input(f"command {name!r} is unavailable: {reason}")

    return click.Command(name, callback=run, hidden=True, help=f"(unavailable: {reason})",
                         context_settings={"ignore_unknown_options": True, "allow_extra_args": True})


class OneLineError(click.ClickException):
    """A click error shown as bad input: one line ``karpy: <message>`` on stderr, exit 2."""

    exit_code = EXIT_BAD_INPUT

    def show(self, file: Any = None) -> None:
        click.echo(f"karpy: {self.message}", err=True)


def _one_line(err: click.ClickException) -> OneLineError:
    """``err`` (a bad option value, an unknown option or command, ...) as one line naming the
    command, instead of click's usage block."""
    message = " ".join(err.format_message().split())
    ctx = getattr(err, "ctx", None)
    if ctx is not None:
        message = f"{message} (see '{ctx.command_path} --help')"
        if ctx.parent is not None:
            message = f"{ctx.info_name}: {message}"
    return OneLineError(message)


#: the exit status of a run stopped by Ctrl-C (128 + SIGINT, as a shell reports it)
EXIT_INTERRUPTED = 128 + signal.SIGINT


def _interrupted() -> NoReturn:
    """Ctrl-C: one line, exit 130, no traceback (karpy sweep keeps its rows first, then exits so too)."""
    click.echo("karpy: interrupted", err=True)
    sys.exit(EXIT_INTERRUPTED)


class PluginGroup(click.Group):
    """A click group that also offers the commands of the ``karpy.commands`` entry points (lazily).

    ``discover`` returns name -> entry point (default: the installed ones); tests and embedding
    tools may pass their own. Every click error below it (bad option values, unknown options or
    commands) is reported like bad input: one line, exit 2 (:class:`OneLineError`); a bare
    ``karpy`` still prints its help.
    """

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except OneLineError:
            raise
        except click.ClickException as err:
            raise _one_line(err) from None
        except OSError as err:  # --help / --version written to a full stdout: as invoke() says it
            raise _output_error(err) from None
        except KeyboardInterrupt:
            _interrupted()

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OneLineError:
            raise
        except click.ClickException as err:
            raise _one_line(err) from None
        except OSError as err:
            raise _output_error(err) from None
        except KeyboardInterrupt:  # click's own answer is "Aborted!" and exit 1, the sweep's failed-cell code
            _interrupted()

    def __init__(self, *args: Any, discover: Callable[[], Mapping[str, EntryPoint]] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.discover = discover
        self._loaded: dict[str, click.Command] = {}

    def _plugins(self) -> Mapping[str, EntryPoint]:
        return (self.discover or _command_entry_points)()

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self._plugins()))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        builtin = super().get_command(ctx, cmd_name)
        if builtin is not None:
            return builtin
        if cmd_name in self._loaded:
            return self._loaded[cmd_name]
        ep = self._plugins().get(cmd_name)
        if ep is None:
            return None
        try:
            command = ep.load()
        except Exception as err:  # noqa: BLE001 - a broken plug-in must not break the CLI
            command = _broken_command(cmd_name, f"cannot load {ep.value}: {type(err).__name__}: {err}")
        if not isinstance(command, click.Command):
            command = _broken_command(cmd_name, f"{ep.value} is not a click command")
        self._loaded[cmd_name] = command
        return command


def _input_errors() -> tuple[type[BaseException], ...]:
    from karpy.api.loader import ManifestError
    from karpy.cloudprovider.registry import UnknownCloudProviderError

    return (ManifestError, UnknownCloudProviderError, ValueError, FileNotFoundError)


class OutputChoice(click.Choice):  # type: ignore[type-arg]
    """``-o`` values: ``table`` is the plain view in every command; ``text`` is accepted as another
    name for it (``explain -o text`` before it was ``table``) and not listed in ``--help``."""

    ALIASES = {"text": "table"}

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and self.ALIASES.get(value.lower()) in self.choices:
            value = self.ALIASES[value.lower()]
        return super().convert(value, param, ctx)


def _output_error(err: OSError) -> BaseException:
    """stdout on a full disk (``> /dev/full``) and the like: one line, not a traceback; a closed
    pipe (``karpy ... | head``) is left to click, which exits quietly."""
    if err.errno == errno.EPIPE:
        return err
    _discard_stdout()
    return OneLineError(f"cannot write output: {err.strerror or err}")


def _discard_stdout() -> None:
    """In the ``karpy`` process only (:func:`tune_gc` ran): point standard output at the null device
    once writing it failed, so what its buffer still holds -- which can never be written -- does not
    fail again at the exit's flush (Python would print ``Exception ignored`` and exit 120 after the
    one line; seen with a buffered stdout, i.e. without ``PYTHONUNBUFFERED``)."""
    if not _gc_tuned:
        return
    try:
        fd = sys.stdout.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, fd)
        finally:
            os.close(null)
    except (OSError, ValueError, AttributeError):  # (io.UnsupportedOperation is an OSError and a ValueError)
        pass


def _not_blank(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Option callback: an explicitly empty value (``--region ''``) is bad input, not the default."""
    if value is not None and not value.strip():
        raise click.BadParameter(f"must not be empty (got {value!r})", ctx=ctx, param=param)
    return value


def _prices_file(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--prices`` callback: not blank, and a table file (not a date) that is not UTF-8 text is bad
    input naming the option and the file (the codec's message named neither)."""
    value = _not_blank(ctx, param, value)
    if value is not None and os.path.isfile(value):
        try:
            with open(value, "rb") as f:
                f.read().decode("utf-8")
        except UnicodeDecodeError as err:
            raise click.BadParameter(f"{value}: not UTF-8 text (byte 0x{err.object[err.start]:02x} at offset "
                                     f"{err.start}); a price table is a UTF-8 JSON or CSV file",
                                     ctx=ctx, param=param) from None
        except OSError:
            pass  # unreadable: the price table loader says so, naming the file
    return value


def _scenario_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The scenario options ``simulate`` and ``explain`` share (the contract's options)."""
    for option in reversed([
        click.option("--region", default="us-east-1", show_default=True, callback=_not_blank,
                     help="AWS region of the price table."),
        click.option("--prices", default=None, metavar="DATE|FILE", callback=_prices_file,
                     help="Price table date (e.g. 2026-07-20; without a table of that date, the newest "
                          "one before it, said in the output) or a JSON/CSV table file; "
                          "default: newest for the region."),
        click.option("--price-region", default=None, metavar="REGION",
                     help="Price the run with this region's bundled table (a proxy for --region, "
                          "marked as such in every output)."),
        click.option("--exclude", multiple=True, metavar="GLOB",
                     help="Skip files/directories matching GLOB when walking a directory (repeatable)."),
        click.option("--unavailable", multiple=True, metavar="SPEC",
                     help="Inject capacity errors: TYPE-GLOB:ZONE-GLOB:CAPACITY-TYPE (repeatable)."),
        click.option("--preference-policy", type=click.Choice(["Respect", "Ignore"]), default="Respect",
                     show_default=True),
        click.option("--min-values-policy", type=click.Choice(["Strict", "BestEffort"]), default="Strict",
                     show_default=True),
        click.option("--cloud-provider", default="aws", show_default=True, callback=_not_blank,
                     help="Registered cloud provider (aws, fake)."),
        click.option("--until", default=None, metavar="DURATION",
                     help="Run to this horizon (e.g. 6h), overriding a Scenario's spec.until."),
        click.option("--event", "events", multiple=True, metavar="'AT ACTION ...'",
                     help="Add a Scenario event at AT (a duration: 90s, 30m, 1h; repeatable), e.g. "
                          "'30m scale deployment/web 40'. ACTION is one of: "
                          "scale KIND/NAME REPLICAS [-n NS] (KIND: deployment, statefulset, nodepool, ...); "
                          "rollout deployment/NAME [-n NS]; delete KIND/NAME [-n NS]; apply FILE; "
                          "capacity unavailable|available SPEC... (SPEC as --unavailable); "
                          "interrupt node=NAME | instance_type=TYPE zone=ZONE | capacity_reservation=ID; "
                          "cancel-reservation ID."),
        click.option("--feature-gates", "feature_gates", default=None, metavar="K=V,...",
                     help="Karpenter feature gates as comma-separated K=V pairs, e.g. NodeOverlay=true or "
                          "SpotToSpotConsolidation=true, and kube-scheduler's gates of --kubernetes-version, "
                          "e.g. GenericWorkload=true (upstream defaults otherwise)."),
        click.option("--kubernetes-version", "kubernetes_version", type=click.Choice(["1.35", "1.37"]),
                     default="1.37", show_default=True,
                     help="The modelled kube-scheduler and API server (its feature-gate defaults, the "
                          "scheduling.k8s.io versions it serves)."),
        click.option("--disruption/--no-disruption", default=None,
                     help="Karpenter's disruption controller (consolidation, drift, expiration) runs to the horizon "
                          "whenever time passes (--until, --event, a Scenario), as in production; --no-disruption "
                          "turns it off (said in warnings), --disruption runs it for a run that only settles too."),
        click.option("--strict", is_flag=True, default=False,
                     help="Unknown fields are errors (kubectl --validate=strict), not warnings."),
        click.option("--scheduler-config", "scheduler_config", default=None, metavar="FILE",
                     type=click.Path(dir_okay=False, path_type=Path),
                     help="Karpenter's --scheduler-config document (YAML/JSON): "
                          "podTopologySpread.defaultConstraints; default: none."),
        click.option("--max-pods", type=click.IntRange(min=0), default=DEFAULT_MAX_PODS, show_default=True,
                     help="Bound on the pods alive at once (explicit pods plus workload replicas and Jobs' parallelism, as the manifests and the Scenario's scale, apply and rollout events make them); it bounds a static NodePool's nodes (spec.replicas within limits.nodes) too."),
        click.option("--no-cache", is_flag=True, default=False,
                     help="Read the instance-type catalogue from moto, not the on-disk cache "
                          "(also: KARPY_NO_CACHE=1)."),
    ]):
        command = option(command)
    return command


class _Progress:
    """A progress line on stderr for runs longer than a couple of seconds (wall clock: this is UI,
    the engine never reads it). On a terminal the line is rewritten in place; elsewhere (CI logs)
    a line is printed at most every 10 s."""

    AFTER_SECONDS = 2.0
    LOG_EVERY_SECONDS = 10.0

    def __init__(self, now: Callable[[], float] = time.monotonic, tty: bool | None = None) -> None:
        self._now = now
        self._start = now()
        self._last: float | None = None
        self._tty = sys.stderr.isatty() if tty is None else tty
        self.shown = False

    def __call__(self, virtual_seconds: float, passes: int, nodeclaims: int) -> None:
        t = self._now()
        if t - self._start < self.AFTER_SECONDS:
            return
        if not self._tty and self._last is not None and t - self._last < self.LOG_EVERY_SECONDS:
            return
        self._last = t
        line = (f"karpy: simulating... virtual t={virtual_seconds:.0f}s, {passes} provisioning passes, "
                f"{nodeclaims} NodeClaims ({t - self._start:.0f}s)")
        click.echo(f"\r{line}" if self._tty else line, err=True, nl=not self._tty)
        self.shown = True

    def done(self, virtual_seconds: float | None = None, passes: int | None = None,
             nodeclaims: int | None = None) -> None:
        """End the progress output: once a line was shown, a last one with the final figures (so the
        last line on stderr is never stale), then a newline on a terminal."""
        if not self.shown:
            return
        if virtual_seconds is not None:
            line = (f"karpy: simulated virtual t={virtual_seconds:.0f}s, {passes} provisioning passes, "
                    f"{nodeclaims} NodeClaims ({self._now() - self._start:.0f}s)")
            click.echo(f"\r{line}" if self._tty else line, err=True, nl=not self._tty)
        if self._tty:
            click.echo("", err=True)

    def end(self, result: Result | None) -> None:
        """:meth:`done` with the figures of the run's ``result`` (None when the run failed)."""
        if result is None:
            self.done()
        else:
            sim = result.simulation
            self.done(sim.virtual_seconds, sim.provisioning_passes, len(sim.launches))


def _unavailable_message(err: BaseException) -> str:
    """``--unavailable '<spec>': <reason>`` for a bad injected-capacity spec."""
    return f"--unavailable {getattr(err, 'spec', '')!r}: {getattr(err, 'reason', err)}"


def print_warnings(warnings: Any) -> None:
    """Each warning once, on stderr, as ``karpy: warning: ...`` (every output mode)."""
    seen: set[str] = set()
    for w in warnings or ():
        if w not in seen:
            seen.add(w)
            click.echo(f"karpy: warning: {w}", err=True)


def _timeline_options(options: dict[str, Any]) -> None:
    """Turn ``--event`` lines into Scenario events and drop unset ``--until``/``--event`` (in place)."""
    if options.get("events"):
        from karpy.sim.scenario import event_line

        try:
            options["events"] = [event_line(line) for line in options["events"]]
        except ValueError as err:
            _bad_input(str(err))
    else:
        options.pop("events", None)
    if options.get("until") is None:
        options.pop("until", None)


def _run_scenario(paths: tuple[Path, ...], **options: Any) -> Any:
    """Run ``karpy.simulate`` on PATH... (default: the bundled example; ``-`` is standard input)
    for a command, turning bad input into one line on stderr and exit code 2; the run's warnings
    go to stderr."""
    from karpy.cloudprovider.types import UnavailableSpecError
    from karpy.simulator import simulate

    sources: list[Any] = [str(p) if str(p) == "-" else p for p in paths] if paths else [bundled_example()]
    for p in paths:
        if str(p) != "-" and not p.exists():
            _bad_input(f"{p}: no such file or directory")
    options["unavailable"] = tuple(options.get("unavailable") or ())
    options["exclude"] = tuple(options.get("exclude") or ())
    if options.pop("no_cache", False):
        options["provider_extra"] = {**options.get("provider_extra", {}), "catalog_cache": False}
    _timeline_options(options)
    preload_cloud_provider(options.get("cloud_provider", "aws"))
    progress = _Progress()
    result = None
    try:
        gates = options.pop("feature_gates", None)
        if gates:
            from karpy.featuregates import parse_feature_gates

            options["feature_gates"] = parse_feature_gates(gates, options.get("kubernetes_version"))
        result = simulate(sources, progress=progress, **options)
    except UnavailableSpecError as err:
        _bad_input(_unavailable_message(err))
    except _input_errors() as err:
        _bad_input(str(err))
    finally:
        progress.end(result)
    print_warnings(result.warnings)
    return result


class OutputFile(click.Path):
    """A file karpy writes: a value ending in ``/`` names a directory and is refused (one line); an
    existing directory is refused by :func:`_check_writable`, before any simulating."""

    def __init__(self, example: str) -> None:
        super().__init__(path_type=Path)
        self.example = example

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.endswith(("/", os.sep)):
            self.fail(f"{value!r} ends in '/', so it names a directory; give a file name "
                      f"(e.g. {value}{self.example})", param, ctx)
        return super().convert(value, param, ctx)


def _check_writable(option: str, path: Path) -> None:
    """Bad input (exit 2, before any simulating) unless ``path`` can be opened for writing. Probed
    by opening it: an existing file in append mode without writing (its content and mtime stay),
    a new one created and removed again -- ``os.access`` would say yes to root everywhere."""
    where = f"{option} {path}"
    if path.is_dir():
        _bad_input(f"{where}: is a directory")
    try:
        if path.exists():
            path.open("ab").close()
        else:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            path.unlink()
    except OSError as err:
        _bad_input(f"{where}: cannot write: {err.strerror or err}")


def _check_dir_writable(option: str, path: Path) -> None:
    """Bad input (before any simulating) unless ``path`` is, or can be created as, a directory to
    write files into. Probed by creating (then removing) a file in it, or the first missing directory."""
    where = f"{option} {path}"
    try:
        if path.exists():
            if not path.is_dir():
                _bad_input(f"{where}: not a directory")
            probe = path / f".karpy-probe-{os.getpid()}"
            os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            probe.unlink()
            return
        missing = path
        while not missing.parent.exists() and missing.parent != missing:
            missing = missing.parent
        if not missing.parent.is_dir():
            _bad_input(f"{where}: {missing.parent} is not a directory")
        missing.mkdir()
        missing.rmdir()
    except OSError as err:
        _bad_input(f"{where}: cannot write: {err.strerror or err}")


def _write_text(option: str, path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file renamed over it (a failed write leaves an
    earlier file as it was); a write error (a full disk, ``/dev/full``) is bad input, one line."""
    from karpy.utils.atomicwrite import write_atomic

    try:
        write_atomic(path, text)
    except OSError as err:
        _bad_input(f"{option} {path}: cannot write: {err.strerror or err}")


def _write_file(option: str, path: Path, write: Callable[[], object]) -> None:
    """Run ``write`` (which writes ``path`` atomically); an OSError is bad input naming the option
    and the file, one line."""
    try:
        write()
    except OSError as err:
        _bad_input(f"{option} {path}: cannot write: {err.strerror or err}")


def _emit(document: dict[str, Any], to_json: Callable[[], str], output: str, render_text: Callable[[Any], str],
          render_report: Callable[[Any], str], report_path: Path | None) -> None:
    """Write the HTML report (``--report``) first -- a failed write is exit 2 with nothing
    half-printed -- then print the document as JSON or text (``-o``)."""
    if report_path is not None:
        _write_text("--report", report_path, render_report(document))
    click.echo(to_json() if output == "json" else render_text(document), nl=False)


def _echo_pieces(write: Callable[[Callable[[str], object]], None]) -> None:
    """Print the text ``write`` produces piece by piece (``Result.write_json``), each piece as
    ``click.echo`` prints text: the same bytes as echoing the whole text, which is never held."""
    write(lambda piece: click.echo(piece, nl=False))


@click.group(cls=PluginGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="karpy")
def cli() -> None:
    """What would Karpenter launch on AWS for these NodePools and pods, what would it cost, and why.

    Exit codes: 0 every pod placed; 3 some pods left pending; 2 bad input; 1 a sweep cell failed
    (each command's --help says which it uses).
    """


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@_scenario_options
@click.option("-o", "--output", type=OutputChoice(["table", "markdown", "json"]), default="table", show_default=True,
              help="table: the plain view; markdown: for a pull-request comment; json: the document.")
@click.option("--report", "report_path", type=OutputFile("report.html"), default=None,
              help="Also write a self-contained HTML report to this file.")
@click.option("--verbose", is_flag=True, default=False,
              help="Table: the full trace (one row per failed offering) instead of the grouped summary.")
def simulate(paths: tuple[Path, ...], region: str, prices: str | None, price_region: str | None,
             exclude: tuple[str, ...], unavailable: tuple[str, ...],
             preference_policy: str, min_values_policy: str, cloud_provider: str, until: str | None,
             events: tuple[str, ...], feature_gates: str | None, disruption: bool | None, strict: bool, max_pods: int,
             output: str, report_path: Path | None, scheduler_config: Path | None = None,
             no_cache: bool = False, verbose: bool = False, kubernetes_version: str = "1.37") -> None:
    """Simulate PATH... (files or directories of manifests, - for standard input; default: the
    bundled example).

    Exit codes: 0 every pod placed; 3 some pods left pending (a valid answer); 2 bad input (one
    line on stderr, nothing simulated).
    """
    if report_path is not None:
        _check_writable("--report", report_path)
    result = _run_scenario(paths, region=region, prices=prices, price_region=price_region, exclude=exclude,
                           unavailable=unavailable,
                           preference_policy=preference_policy, min_values_policy=min_values_policy,
                           cloud_provider=cloud_provider, until=until, events=list(events),
                           feature_gates=feature_gates, disruption=disruption, strict=strict,
                           scheduler_config=scheduler_config, max_pods=max_pods, no_cache=no_cache,
                           kubernetes_version=kubernetes_version)
    from karpy.report.html import render_html
    from karpy.report.table import render_table
    from karpy.result import document_json

    if output == "json" and report_path is None:
        _echo_pieces(result.write_json)  # section by section: the whole document is never held at once
        sys.exit(result.exit_code)
    document = result.to_document()  # built once: the JSON printed is document_json of this same dict

    from karpy.alignment import aligned_document
    from karpy.report.markdown import render_markdown

    shown = aligned_document(result, document)  # the bill's overlays checked by re-running (text and report)
    text = render_markdown if output == "markdown" else (lambda doc: render_table(doc, verbose=verbose))
    _emit(document, lambda: document_json(document), output, lambda _: text(shown), lambda _: render_html(shown),
          report_path)
    sys.exit(result.exit_code)


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--pod", "pod_key", default=None, metavar="NS/NAME",
              help="Explain one pod (NAMESPACE/NAME; a bare NAME means namespace default).")
@click.option("--nodeclaim", "nodeclaim_name", default=None, metavar="NAME", help="Explain one NodeClaim.")
@click.option("--why-not", "why_not_type", default=None, metavar="TYPE",
              help="Where instance type TYPE left the race (filter, 600/60 cut, CreateFleet rank and price gap, "
                   "ICE, consolidation) and the smallest changes that flip it, each verified by a re-run.")
@click.option("--generation", "why_not_generation", default=None, metavar="N",
              help="As --why-not, for the best candidate of instance generation N (e.g. 8). With --pod or "
                   "--nodeclaim: only the NodeClaims of that pod / that NodeClaim.")
@_scenario_options
@click.option("-o", "--output", type=OutputChoice(["table", "json"]), default="table", show_default=True)
@click.option("--verbose", is_flag=True, default=False,
              help="The full trace: every NodeClaim and pod, every fleet override and error.")
def explain(paths: tuple[Path, ...], pod_key: str | None, nodeclaim_name: str | None, region: str,
            prices: str | None, price_region: str | None, exclude: tuple[str, ...], unavailable: tuple[str, ...], preference_policy: str, min_values_policy: str,
            cloud_provider: str, until: str | None, events: tuple[str, ...], feature_gates: str | None,
            disruption: bool | None, strict: bool, max_pods: int, output: str, scheduler_config: Path | None = None,
            no_cache: bool = False, why_not_type: str | None = None, why_not_generation: str | None = None,
            verbose: bool = False, kubernetes_version: str = "1.37") -> None:
    """Explain the decisions of a simulation of PATH... (default: the bundled example).

    Without --pod/--nodeclaim: every NodeClaim and every pending pod. For a NodeClaim: its NodePool,
    pods, how many instance types each requirement / resources / offerings removed, the price order,
    the 600 and 60 cuts, the fleet request and what EC2 picked, capacity errors and the fallback.
    For a pod: the NodePools tried in weight order and why each was rejected, the preferences
    relaxed, the kube-scheduler message, the NodeClaims it went through. The one-line answer comes
    first; --verbose prints the full trace. With --why-not TYPE or --generation N: the one-line
    answer (where it left the race, with the price gap), then the details and the verified flips
    (the "why not" guide).

    Exit codes: 0 explained; 2 bad input or an unknown pod / NodeClaim / instance type / generation.
    """
    import json

    from karpy.alignment import bill_of
    from karpy.explain import ExplainLookupError, explain_nodeclaim, explain_pod, explain_run, render_explain
    if pod_key is not None and nodeclaim_name is not None:
        _bad_input("--pod and --nodeclaim are mutually exclusive; give one of them (or neither for a summary)")
    if why_not_type is not None and why_not_generation is not None:
        _bad_input("--why-not and --generation are mutually exclusive; give one of them")
    if pod_key is not None:
        pod_key = pod_key.strip()
        if not pod_key or pod_key.count("/") > 1 or pod_key.startswith("/") or pod_key.endswith("/"):
            _bad_input(f"--pod {pod_key!r}: expected NAMESPACE/NAME")
        if "/" not in pod_key:
            pod_key = f"default/{pod_key}"
    result = _run_scenario(paths, region=region, prices=prices, price_region=price_region, exclude=exclude,
                           unavailable=unavailable,
                           preference_policy=preference_policy, min_values_policy=min_values_policy,
                           cloud_provider=cloud_provider, until=until, events=list(events),
                           feature_gates=feature_gates, disruption=disruption, strict=strict,
                           scheduler_config=scheduler_config, max_pods=max_pods, no_cache=no_cache,
                           kubernetes_version=kubernetes_version)
    if why_not_type is not None or why_not_generation is not None:
        _why_not(result, why_not_type, why_not_generation, output, nodeclaim=nodeclaim_name, pod=pod_key)
    try:
        if pod_key is not None:
            trace = explain_pod(result, pod_key)
        elif nodeclaim_name is not None:
            trace = explain_nodeclaim(result, nodeclaim_name)
        else:
            trace = explain_run(result)
    except ExplainLookupError as err:
        _bad_input(str(err.args[0]) if err.args else str(err))
    bill = None if pod_key is not None else bill_of(result, nodeclaim_name)
    if output == "json":
        if bill is not None:  # cost.billed as the document has it (schema 1.2), its overlays checked
            trace["cost"] = {"billed": bill[0]}
            if bill[1] is not None:
                trace["billing_alignment"] = bill[1]
        click.echo(json.dumps(trace, indent=2, ensure_ascii=False))
    else:
        click.echo(render_explain(trace, verbose=verbose), nl=False)
        if bill is not None:
            click.echo(_explain_bill(*bill, nodeclaim_name), nl=False)
    sys.exit(0)


def _why_not(result: Any, instance_type: str | None, generation: str | None, output: str,
             nodeclaim: str | None, pod: str | None) -> NoReturn:
    """``karpy explain --why-not TYPE | --generation N [--pod P | --nodeclaim NC]`` (karpy.whynot):
    text or ``{"why_not": ...}``."""
    import json

    from karpy.explain import ExplainLookupError
    from karpy.whynot import WhyNotError, render_why_not

    try:
        answer = result.why_not(instance_type, generation=generation, nodeclaim=nodeclaim, pod=pod)
    except (WhyNotError, ExplainLookupError) as err:
        _bad_input(str(err.args[0]) if err.args else str(err))
    if output == "json":
        click.echo(json.dumps({"why_not": answer.to_dict()}, indent=2, ensure_ascii=False))
    else:
        click.echo(render_why_not(answer), nl=False)
    sys.exit(0)


def _explain_bill(billed: dict[str, Any], alignment: dict[str, Any] | None, nodeclaim_name: str | None) -> str:
    """The bill's lines (karpy.report.table.render_billed) for the run, or for the misalignments that
    name ``nodeclaim_name`` (karpy.alignment.bill_of), with the overlays' check by re-running."""
    from karpy.report.table import render_billed

    if nodeclaim_name is not None and not billed["misalignments"]:
        return f"\non the bill (modelled): {nodeclaim_name} was the cheapest offering it allowed\n"
    return "\n" + "\n".join(render_billed({**billed, "alignment": alignment})) + "\n"


def _parse_design(text: str) -> tuple[str, list[Path]]:
    """``[NAME=]PATH[,PATH...]`` -> (name, paths); the name defaults to the first path's name."""
    name, sep, rest = text.partition("=")
    if not sep or "/" in name or not name:
        name, rest = "", text
    paths = [Path(p) for p in rest.split(",") if p]
    if not paths:
        _bad_input(f"design {text!r}: no path; expected [NAME=]PATH[,PATH...]")
    for p in paths:
        if not p.exists():
            _bad_input(f"{p}: no such file or directory")
    return name or (paths[0].resolve().name or str(paths[0])), paths


@cli.command()
@click.argument("designs", nargs=-1, required=True, metavar="DESIGN...")
@click.option("--shared", multiple=True, type=click.Path(path_type=Path), metavar="PATH",
              help="Manifests every design runs with (the workload, an EC2NodeClass); repeatable.")
@_scenario_options
@click.option("-o", "--output", type=OutputChoice(["table", "markdown", "json"]), default="table", show_default=True,
              help="table: the plain view; markdown: for a pull-request comment; json: the document.")
@click.option("--report", "report_path", type=OutputFile("report.html"), default=None,
              help="Also write a self-contained HTML report with the designs side by side (SVG).")
@click.option("--rank-by", type=click.Choice(["list", "billed"]), default=None,
              help="Rank the designs by list prices or by the bill (needs a BillingProfile).")
def compare(designs: tuple[str, ...], shared: tuple[Path, ...], region: str, prices: str | None,
            unavailable: tuple[str, ...], preference_policy: str, min_values_policy: str, cloud_provider: str,
            until: str | None, events: tuple[str, ...], strict: bool, output: str,
            report_path: Path | None, scheduler_config: Path | None = None, feature_gates: str | None = None,
            disruption: bool | None = None, max_pods: int | None = None, no_cache: bool = False,
            price_region: str | None = None, exclude: tuple[str, ...] = (), rank_by: str | None = None,
            kubernetes_version: str = "1.37") -> None:
    """Compare two or more DESIGNs over the same workload, side by side.

    Each DESIGN is [NAME=]PATH[,PATH...] (files or directories of manifests; the name defaults to
    the first path's name); the first is the baseline. Every design runs with the --shared
    manifests and the same scenario options. Exit 0 when every design places every pod, 3 when
    some design leaves pods pending, 2 on bad input.
    """
    from karpy.comparison import CompareError
    from karpy.comparison import compare as run_compare

    if report_path is not None:
        _check_writable("--report", report_path)
    parsed = [_parse_design(d) for d in designs]
    names = [n for n, _ in parsed]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        _bad_input(f"design name {duplicate!r} given twice; name them with NAME=PATH")
    for p in shared:
        if not p.exists():
            _bad_input(f"{p}: no such file or directory")
    gates: dict[str, bool] | None = None
    if feature_gates:
        from karpy.featuregates import parse_feature_gates

        try:
            gates = parse_feature_gates(feature_gates, kubernetes_version)  # as simulate's (_run_scenario)
        except ValueError as err:
            _bad_input(str(err))
    options: dict[str, Any] = dict(region=region, prices=prices, unavailable=unavailable,
                                   preference_policy=preference_policy, min_values_policy=min_values_policy,
                                   cloud_provider=cloud_provider, until=until, events=list(events), strict=strict,
                                   scheduler_config=scheduler_config, feature_gates=gates,
                                   disruption=disruption, kubernetes_version=kubernetes_version,
                                   **({} if max_pods is None else {"max_pods": max_pods}))
    if no_cache:
        options["provider_extra"] = {"catalog_cache": False}
    if price_region is not None:
        options["price_region"] = price_region
    if exclude:
        options["exclude"] = tuple(exclude)
    _timeline_options(options)
    bad_input: tuple[type[BaseException], ...] = (CompareError, *_input_errors())
    try:
        comparison = run_compare(dict(parsed), shared=list(shared), **options)
        document = comparison.to_document(rank_by)
    except bad_input as err:
        _bad_input(str(err))
    for name in names:
        for warning in document["runs"][name].get("warnings") or ():
            click.echo(f"karpy: {name}: warning: {warning}", err=True)
    from karpy.report.compare import render_compare_html, render_compare_table
    from karpy.report.markdown import render_compare_markdown

    _emit(document, lambda: comparison.to_json(rank_by=rank_by), output,
          render_compare_markdown if output == "markdown" else render_compare_table, render_compare_html, report_path)
    sys.exit(comparison.exit_code)


@cli.command()
@click.argument("sweep_file", type=click.Path(path_type=Path), metavar="SWEEP.yaml")
@click.option("-o", "--output", type=OutputChoice(["table", "csv", "jsonl"]), default="table", show_default=True,
              help="What to print on stdout.")
@click.option("--csv", "csv_path", type=OutputFile("rows.csv"), default=None,
              help="Write the rows as CSV to this file.")
@click.option("--jsonl", "jsonl_path", type=OutputFile("rows.jsonl"), default=None,
              help="Write the rows as JSON lines to this file.")
@click.option("--parquet", "parquet_path", type=OutputFile("rows.parquet"), default=None,
              help='Write the rows as Parquet to this file (needs pip install "karpy[parquet]").')
@click.option("--report", "report_path", type=OutputFile("report.html"), default=None,
              help="Write a self-contained HTML report with SVG charts to this file.")
@click.option("--charts", "charts_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also write each chart of the report as an SVG file into this directory.")
@click.option("--executor", type=click.Choice(["sequential", "process", "dask"]), default="process",
              show_default=True, help="Where cells run: this process, a local process pool, or a Dask cluster.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Process-pool size (default: the CPUs this process may use).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Dask scheduler address for --executor dask (e.g. tcp://host:8786).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar on stderr.")
@click.option("--rank-by", type=click.Choice(["list", "billed"]), default=None,
              help="Table: the cells cheapest first, by list prices or by the bill (BillingProfiles).")
def sweep(sweep_file: Path, output: str, csv_path: Path | None, jsonl_path: Path | None, parquet_path: Path | None,
          report_path: Path | None, charts_dir: Path | None, executor: str, workers: int | None,
          scheduler: str | None, quiet: bool, rank_by: str | None = None) -> None:
    """Run the matrix of a karpy.io/v1alpha1 Sweep: one row per cell (designs x workloads x price
    tables x capacity scenarios x policies).

    Exit 0 when every cell ran and placed every pod, 3 when some cell left pods pending, 1 when
    some cell failed (its row carries the error), 2 on bad input.

    Ctrl-C stops promptly (a second Ctrl-C at once), exit 130; a lost Dask scheduler stops the
    sweep, exit 1. Either way the rows of the cells that finished are written to the row files
    with ".partial" appended to their names (rows.csv.partial), never over a complete file, and
    no report or charts are written.
    """
    from karpy.sweeps import ExecutorError, SweepError, SweepProgress, expand, load_sweep, run_cells
    from karpy.sweeps.executors import SweepInterrupted, SweepLost, sigint_stops
    from karpy.sweeps.rows import EXIT_CELL_FAILED, SweepResult

    if parquet_path is not None:
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            _bad_input('--parquet needs pyarrow: pip install "karpy[parquet]"')
    outputs = {"--csv": csv_path, "--jsonl": jsonl_path, "--parquet": parquet_path, "--report": report_path}
    for option, path in outputs.items():  # every output path before the first cell, as simulate --report
        if path is not None:
            _check_writable(option, path)
    if charts_dir is not None:
        _check_dir_writable("--charts", charts_dir)
    bad_input: tuple[type[BaseException], ...] = (SweepError, *_input_errors())
    try:
        spec = load_sweep(sweep_file)
        cells = expand(spec)
    except bad_input as err:
        _bad_input(str(err))
    progress = None if quiet else SweepProgress(len(cells))
    try:
        with sigint_stops():  # through the writing of the partial rows: a second Ctrl-C then exits at once (130)
            try:
                raw = run_cells(cells, executor, workers=workers, scheduler=scheduler, on_done=progress)
            except SweepInterrupted as stop:
                _keep_partial(stop.rows, spec.name, "interrupted", {"--csv": csv_path, "--jsonl": jsonl_path,
                                                                    "--parquet": parquet_path}, progress is not None)
                sys.exit(EXIT_INTERRUPTED)
    except ExecutorError as err:
        _bad_input(str(err))
    except SweepLost as lost:
        _keep_partial(lost.rows, spec.name, lost.reason, {"--csv": csv_path, "--jsonl": jsonl_path,
                                                          "--parquet": parquet_path}, progress is not None)
        sys.exit(EXIT_CELL_FAILED)
    result = SweepResult(raw, name=spec.name)
    for warning in result.warnings:
        click.echo(f"karpy: warning: {warning}", err=True)
    for row in result.errors:
        click.echo(f"karpy: cell {row['cell']} ({row['design']}, {row['capacity']}, {row['prices'] or 'newest'}) "
                   f"failed: {row['error']}", err=True)
    if output == "table" and rank_by == "billed" and not any(r.get("billed_total") is not None for r in result.rows):
        _bad_input("--rank-by billed needs a karpy.io/v1alpha1 BillingProfile (spec.billing, or in a design)")
    # files first (each through a temporary file renamed over it): a failed write is exit 2 with
    # nothing half-printed and an earlier file left as it was
    _write_sweep_files(result, spec.name, csv_path, jsonl_path, parquet_path, report_path, charts_dir)
    if output == "csv":
        click.echo(result.to_csv(), nl=False)
    elif output == "jsonl":
        click.echo(result.to_jsonl(), nl=False)
    else:
        from karpy.report.sweep import render_sweep_table

        click.echo(render_sweep_table(result.rows, rank_by), nl=False)
    sys.exit(result.exit_code)


def _write_sweep_files(result: SweepResult, name: str, csv_path: Path | None, jsonl_path: Path | None,
                       parquet_path: Path | None, report_path: Path | None, charts_dir: Path | None) -> None:
    """The sweep's row files, report and charts, each written through a temporary file."""
    if csv_path is not None:
        _write_file("--csv", csv_path, lambda: result.to_csv(csv_path))
    if jsonl_path is not None:
        _write_file("--jsonl", jsonl_path, lambda: result.to_jsonl(jsonl_path))
    if parquet_path is not None:
        _write_file("--parquet", parquet_path, lambda: result.to_parquet(parquet_path))
    if report_path is not None or charts_dir is not None:
        from karpy.report.sweep import render_sweep_html, sweep_charts

        if report_path is not None:
            _write_text("--report", report_path, render_sweep_html(result.rows, title=f"karpy sweep: {name}",
                                                                    warnings=result.warnings))
        if charts_dir is not None:
            try:
                charts_dir.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                _bad_input(f"--charts {charts_dir}: cannot write: {err.strerror or err}")
            from karpy.utils.atomicwrite import write_all_atomic

            try:  # all or none: a failed chart leaves the earlier set whole
                write_all_atomic({charts_dir / f"{chart_id}.svg": svg + "\n"
                                  for chart_id, svg in sweep_charts(result.rows).items()})
            except OSError as err:
                _bad_input(f"--charts {err.filename}: cannot write: {err.strerror or err}")


#: what a sweep that did not finish appends to each row file's name
PARTIAL_SUFFIX = ".partial"


def _keep_partial(rows: list[dict[str, Any] | None], name: str, reason: str, outputs: dict[str, Path | None],
                  progress: bool) -> None:
    """A sweep that stopped early: the finished cells' rows go to ``<file>.partial`` for each row
    file asked for (never over a complete file of an earlier run), and one line says so."""
    from karpy.sweeps.rows import SweepResult

    finished = [r for r in rows if r is not None]
    partial = SweepResult(finished, name=name)
    written = []
    for option, path in outputs.items():
        if path is None:
            continue
        target = path.with_name(path.name + PARTIAL_SUFFIX)
        write = {"--csv": partial.to_csv, "--jsonl": partial.to_jsonl, "--parquet": partial.to_parquet}[option]
        _write_file(option, target, lambda: write(target))  # type: ignore[operator]
        written.append(str(target))
    kept = (f"their rows are in {', '.join(written)}" if written
            else "no --csv/--jsonl/--parquet was given, so their rows are not kept")
    if progress:
        click.echo("", err=True)  # end the progress line
    click.echo(f"karpy: {reason}: {len(finished)} of {len(rows)} cells finished; {kept}", err=True)


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--apply", "apply_paths", multiple=True, metavar="CHANGE",
              help="A NodePool / EC2NodeClass / NodeOverlay manifest (file, - for stdin) applied at t=0: it replaces "
                   "the cluster's object of the same kind and name, or adds it (repeatable).")
@click.option("--delete", "deletes", multiple=True, metavar="KIND/NAME",
              help="Delete an object of the cluster at t=0, e.g. nodepool/spot (repeatable).")
@click.option("--until", default="6h", show_default=True, metavar="DURATION",
              help="The horizon: the run stops here if the cluster has not converged.")
@click.option("--fail-on", "fail_on", multiple=True, metavar="GATE",
              help="Exit 4 when a gate trips: cost>+N% | cost>+$N/h | evictions>N | pending>DURATION | unconverged "
                   "(repeatable).")
@click.option("--region", default="us-east-1", show_default=True, callback=_not_blank, help="AWS region of the price table.")
@click.option("--prices", default=None, metavar="DATE|FILE", callback=_prices_file,
              help="Price table date or file; default: newest for the region.")
@click.option("--feature-gates", "feature_gates", default=None, metavar="K=V,...",
              help="Karpenter feature gates, e.g. NodeOverlay=true (upstream defaults otherwise).")
@click.option("-o", "--output", type=OutputChoice(["table", "markdown", "json"]), default="table", show_default=True,
              help="table: one screen; markdown: for a pull request; json: the plan document (karpy schema plan).")
@click.option("--report", "report_path", type=OutputFile("plan.html"), default=None,
              help="Also write a self-contained HTML report (waves as bands, pending pods, $/h) to this file.")
def plan(paths: tuple[Path, ...], apply_paths: tuple[str, ...], deletes: tuple[str, ...], until: str,
         fail_on: tuple[str, ...], region: str, prices: str | None, feature_gates: str | None, output: str,
         report_path: Path | None) -> None:
    """Plan a change to a running cluster: PATH... is the cluster (a kubectl get ... -A -o yaml dump or
    manifests, - for stdin) at t=0; the --apply / --delete change is applied at t=0 and the run, with
    Karpenter's disruption controller, goes on until the cluster converges or --until.

    Exit codes: 0 nothing pending at the end (the output says whether drift converged); 3 pods
    pending at the end; 4 a --fail-on gate tripped; 2 bad input (one line on stderr).
    """
    from karpy.planner import parse_fail_on
    from karpy.planner import plan as run_plan

    if not apply_paths and not deletes:
        _bad_input("nothing to plan: give --apply CHANGE and/or --delete KIND/NAME")
    for p in (*paths, *(Path(a) for a in apply_paths)):
        if str(p) != "-" and not p.exists():
            _bad_input(f"{p}: no such file or directory")
    if report_path is not None:
        _check_writable("--report", report_path)
    progress = _Progress()
    result = None
    try:
        gates_parsed = [parse_fail_on(g) for g in fail_on]
        gates = None
        if feature_gates:
            from karpy.featuregates import parse_feature_gates

            gates = parse_feature_gates(feature_gates)
        preload_cloud_provider("aws")
        result = run_plan([str(p) if str(p) == "-" else p for p in paths],
                          apply=[a if a == "-" else Path(a) for a in apply_paths], delete=list(deletes),
                          until=until, fail_on=gates_parsed, region=region, prices=prices, feature_gates=gates,
                          progress=progress)
    except _input_errors() as err:
        _bad_input(str(err))
    finally:
        progress.end(result.result if result is not None else None)
    print_warnings(list(result.warnings))
    if report_path is not None:
        _write_text("--report", report_path, result.to_html())
    text = {"json": result.to_json, "markdown": result.to_markdown}.get(output, result.to_table)()
    click.echo(text, nl=False)
    sys.exit(result.exit_code)


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--strict", is_flag=True, default=False,
              help="Unknown fields are errors (kubectl --validate=strict), not warnings.")
@click.option("--cloud-provider", default="aws", show_default=True,
              help="Registered cloud provider whose kinds (e.g. EC2NodeClass) are admitted too.")
@click.option("--kubernetes-version", "kubernetes_version", type=click.Choice(["1.35", "1.37"]), default="1.37",
              show_default=True, help="The API server whose admission is run (the scheduling.k8s.io versions it serves).")
def validate(paths: tuple[Path, ...], strict: bool, cloud_provider: str, kubernetes_version: str = "1.37") -> None:
    """Admit PATH... as the API server would (schemas, defaults, CEL rules, names), without simulating.

    Warnings (unknown fields, skipped kinds) go to stderr. Exit 0 when every manifest is accepted,
    2 on the first one the API server would reject (one line naming file, document and field).
    """
    from karpy.api.loader import load_manifests
    from karpy.cloudprovider.registry import resolve_cloud_provider

    for p in paths:
        if not p.exists():
            _bad_input(f"{p}: no such file or directory")
    try:
        extra_kinds = getattr(resolve_cloud_provider(cloud_provider), "EXTRA_KINDS", None)
        loaded = load_manifests(list(paths), extra_kinds=extra_kinds, strict=strict,
                                kubernetes_version=kubernetes_version)
    except _input_errors() as err:
        _bad_input(str(err))
    for warning in loaded.warnings:
        click.echo(f"karpy: warning: {warning}", err=True)
    click.echo(f"karpy: {len(loaded.objects)} object(s) admitted", err=True)
    sys.exit(0)


#: CPython's cyclic-GC thresholds for the ``karpy`` process (see :func:`tune_gc`): the young
#: generation every 100,000 allocations, the middle one every 20 young collections
CLI_GC_THRESHOLDS = RUN_GC_THRESHOLDS  # (100,000, 20, 10), what a run sets while it loops
#: whether :func:`tune_gc` ran in this process (the ``karpy`` command, not a host calling ``cli``)
_gc_tuned = False


def tune_gc() -> None:
    """Tune CPython's cyclic garbage collector for a ``karpy`` process (never for a host: a run in
    the library sets the same thresholds only while its loop runs, :mod:`karpy.sim.collector`). A run allocates millions of short-lived, mostly acyclic objects
    over a large long-lived heap (moto's models, botocore's service data, the catalogue); with the
    default thresholds (700, 10, 10) the collector rescans that heap often -- about 15 % of the
    bundled example's CPU time (issue #13, measured with ``gc.disable()``). What import created is
    frozen (moved out of the collector's generations: it lives until exit anyway) and the young
    generation is collected every 100,000 allocations instead of 700, the middle one every 20 young
    collections instead of 10. A run's objects mostly die by reference count long before a
    collection; fewer collections promote and rescan fewer of the survivors: at 5,000 pods the
    collector's time fell 0.62-0.78 -> 0.31-0.36 s and the run's CPU 10.57 -> 9.77 s (mean of three
    alternating pairs; 10,000, 10, 10 before), at 20,000 pods 3.8 -> 2.1 s and 46.3 -> 43.1 s.
    Cyclic garbage is still collected, so memory stays bounded (peak RSS unchanged: 398 MB at
    5,000 pods, 683 MB at 20,000)."""
    import gc

    global _gc_tuned
    gc.freeze()
    gc.set_threshold(*CLI_GC_THRESHOLDS)
    _gc_tuned = True


def preload_cloud_provider(name: str) -> None:
    """For a command about to build cloud provider ``name`` (``simulate`` and friends; plug-in
    commands may call it too): let the provider import what its construction imports on first use
    (its optional ``preload()`` classmethod, see :mod:`karpy.cloudprovider.registry`), then, in
    the ``karpy`` process only (after :func:`tune_gc`), freeze the heap again. The AWS provider's
    first run imports moto's EC2 models (~0.5 s, a large long-lived heap); imported after
    ``main``'s freeze they sat in the collector's oldest generation and every full collection of
    the run rescanned them: ~0.4 s CPU of the bundled example's cold process (issue #13). Under
    click's ``CliRunner`` or any host that calls :data:`cli` itself, ``gc`` is left alone (the
    imports are what the run would do anyway). An unknown name does nothing here (the command
    reports it)."""
    from karpy.cloudprovider.registry import UnknownCloudProviderError, resolve_cloud_provider

    try:
        provider = resolve_cloud_provider(name) if isinstance(name, str) else None
    except UnknownCloudProviderError:
        return
    preload = getattr(provider, "preload", None)
    if callable(preload):
        preload()
    if _gc_tuned:
        import gc

        gc.freeze()


@cli.command()
@click.argument("document", type=click.Choice(["simulate", "plan"]), default="simulate")
def schema(document: str) -> None:
    """Print the JSON Schema (draft 2020-12) of the document 'simulate -o json' (default) or
    'plan -o json' prints.

    Its version changes when a key changes (MINOR: keys added; MAJOR: a key removed or its
    meaning changed); the contract page of the docs states the compatibility promise.

    Exit codes: 0.
    """
    if document == "plan":
        from karpy.planner import plan_schema_text

        click.echo(plan_schema_text(), nl=False)
        return
    from karpy.schemas import schema_text

    click.echo(schema_text(), nl=False)


def _end_process(code: object) -> None:
    """End the ``karpy`` process with exit status ``code`` (a ``SystemExit`` code) without
    tearing its heap down; return when that is not safe, and the caller exits as Python does.

    Python's own exit frees every object the run built before the process ends: after a
    5,000-pod run that is most of a second (issue #13) spent on memory the operating system
    takes back anyway. Here the standard streams are flushed and the ``atexit`` handlers run
    (logging's flush, ``weakref.finalize`` clean-ups such as temporary directories, executors'
    joins), as Python's exit would do them, then ``os._exit``. It returns instead -- leaving the
    exit to Python -- when the code is not a number (Python prints it), when another thread is
    still alive (Python joins it) or when a stream cannot be flushed (a closed pipe: Python
    reports it and exits 120). mypy ends its process the same way. Only :func:`main` (the
    ``karpy`` command) calls it; under click's ``CliRunner`` or a host calling :data:`cli`,
    nothing here runs."""
    import atexit
    import threading

    if code is not None and not isinstance(code, int):
        return
    if threading.active_count() > 1 or not _flushed():
        return
    atexit._run_exitfuncs()
    if not _flushed():
        os._exit(120)  # what Python's exit returns when flushing a standard stream fails
    os._exit(code or 0)


def _flushed() -> bool:
    """Flush stdout and stderr; False when one cannot be flushed (a closed pipe, a full disk)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return False
    return True


def main() -> None:
    tune_gc()
    try:
        cli()
    except SystemExit as done:
        _end_process(done.code)
        raise


if __name__ == "__main__":  # pragma: no cover
    main()
