"""What every command shares: messages on stderr, diagnostics, the common options."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from paddlegen.errors import SUMMARY, Diagnostic
from paddlegen.events import Events
from paddlegen.workloads import WORKLOADS

if TYPE_CHECKING:
    from paddlegen.api import Request

WORKLOAD_NAMES = tuple(WORKLOADS)


def note(message: str) -> None:
    """A line on stderr. Paths and messages can carry a spec's or a file name's characters:
    control and bidi characters are shown escaped, never sent to the terminal."""
    from paddlegen.report import printable

    click.echo(printable(message), err=True)


def usage_error(message: str) -> click.UsageError:
    from paddlegen.report import printable

    return click.UsageError(printable(message))


# A --format json, sarif or junit run's findings, gathered in the click context and printed by
# the group as one document when the command ends, whichever way it ends (stdout unless
# STDOUT_TAKEN); INPUTS, the spec files the command read, are the JUnit test cases.
FINDINGS = "paddlegen.findings"
INPUTS = "paddlegen.inputs"
STDOUT_TAKEN = "paddlegen.stdout"
FORMATS = ("text", "json", "github", "sarif", "junit")


def emit(diagnostics: Sequence[Diagnostic], fmt: str) -> None:
    """Text and github on stderr at once; json, sarif and junit join the run's one document."""
    if fmt == "text" and not diagnostics:
        return  # the usual run: nothing to say, and the reporters' module stays unloaded
    from paddlegen.report import DOCUMENTS, REPORTERS, text

    ctx = click.get_current_context(silent=True)
    if fmt in DOCUMENTS and ctx is not None:
        ctx.meta.setdefault(FINDINGS, []).extend(diagnostics)
    elif fmt == "text" and diagnostics:
        colour = colour_on_stderr()  # decided here, so click keeps the colours it gets
        click.echo(text(diagnostics, colour=colour), nl=False, err=True, color=colour)
    elif diagnostics or fmt in DOCUMENTS:
        click.echo(REPORTERS[fmt](diagnostics), nl=False, err=True)


@contextlib.contextmanager
def undone_on_spec_errors(
    undone: str, fmt: str, *, findings: bool = True, validate: Sequence[str] = ()
) -> Iterator[None]:
    """When a spec has errors (a SpecError inside), print its findings and, as the run's last
    line, what the command left undone and why (``nothing written: 1 of 12 specs has
    errors``; in json and the other formats, an info finding of rule ``summary``); exit 1.

    Without ``findings`` (the pre-commit hooks, whose paddlegen-validate lists them, so that
    a commit shows each finding once) the line names the specs instead, and ``paddlegen
    validate`` with the arguments ``validate``, which lists their findings.
    """
    from paddlegen.errors import SpecError

    try:
        yield
    except SpecError as exc:
        said = exc.undone(undone, None if findings else validate)
        if findings:
            emit(exc.diagnostics, fmt)
        if fmt == "text":
            note(f"paddlegen: {said}")
        else:
            emit([Diagnostic(severity="info", message=said, rule=SUMMARY.id)], fmt)
        raise SpecError(said, exc.diagnostics, shown=True) from None


def colour_on_stderr() -> bool:
    """Colour diagnostics only for a person: stderr is a terminal and NO_COLOR is unset or
    empty (https://no-color.org); never in a pipe, a file or a CI log."""
    if os.environ.get("NO_COLOR"):
        return False
    return _stderr_is_terminal()


def _stderr_is_terminal() -> bool:
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def stdout_is_output() -> None:
    """The command prints what it makes on stdout (manifests, a spec, a schema): a --format
    json, sarif or junit document goes to stderr, so a pipe gets only the product."""
    click.get_current_context().meta[STDOUT_TAKEN] = True


def read_inputs(paths: Sequence[str | os.PathLike[str]]) -> None:
    """The spec files the command reads: each a test case of --format junit."""
    click.get_current_context().meta[INPUTS] = tuple(map(str, paths))


def is_document(fmt: object) -> bool:
    """Whether ``fmt`` makes one document of the run (json, sarif, junit)."""
    if fmt == "text":  # the default: no need to load the reporters' module to know
        return False
    from paddlegen.report import DOCUMENTS

    return fmt in DOCUMENTS


def print_report(ctx: click.Context) -> None:
    """The run's one document, with --format json, sarif or junit (empty of findings when
    nothing was found)."""
    fmt: str = ctx.meta.get("paddlegen.format", "text")
    if is_document(fmt):
        from paddlegen.report import REPORTERS, Run

        found = ctx.meta.pop(FINDINGS, [])
        run = Run(ctx.invoked_subcommand or "", ctx.meta.get(INPUTS, ()))
        click.echo(REPORTERS[fmt](found, run), nl=False, err=bool(ctx.meta.get(STDOUT_TAKEN)))


def format_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--format`` for a command that prints diagnostics itself (it gets ``fmt``)."""
    return _format(f, expose=True)


def errors_format_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--format`` for a command whose only diagnostics are its errors, which the group
    prints: every command takes the option, so scripts can pass it to any of them."""
    return _format(f, expose=False)


def _format(f: Callable[..., Any], *, expose: bool) -> Callable[..., Any]:
    def remember(ctx: click.Context, _param: click.Parameter, value: str) -> str:
        ctx.meta["paddlegen.format"] = value  # read by the group when it reports an error
        return value

    return click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        default="text",
        show_default=True,
        callback=remember,
        is_eager=True,
        expose_value=expose,
        help="How diagnostics and errors are printed.",
    )(f)


def _rules(_ctx: click.Context, _param: click.Parameter, names: tuple[str, ...]) -> list[str]:
    if not names:  # the usual run: no rules' module to import (output/stamp.py _run_rules)
        return []
    from paddlegen.errors import InvalidValueError
    from paddlegen.rules.ignores import run_rules

    try:
        return sorted(run_rules(names))
    except InvalidValueError as exc:
        raise click.BadParameter(exc.message) from None


def _complete_rules(_ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[str]:
    from paddlegen.rules import REQUIRED, RULES

    return [r for r in RULES if r.startswith(incomplete) and r not in REQUIRED]


# A decorator, like the options render_options lists (render, check, diff and validate use it).
ignore_option = click.option(
    "--ignore",
    "ignore",
    metavar="RULE",
    multiple=True,
    callback=_rules,
    shell_complete=_complete_rules,
    help="Silence RULE's findings in every spec (repeatable); docs/reference/rules.md lists "
    "the rules, docs/validation.md#silencing-a-rule how a spec silences one.",
)


# The one flag for removals of what is deployed (output/removals.py): render, check --fix, plan.
allow_removal_option = click.option(
    "--allow-removal",
    is_flag=True,
    help="Do not fail when this removes what Argo CD deploys, and the running job with it: "
    "an environment a spec no longer has (overlays/ENV), or in a merge an Application (a "
    "removed spec, a renamed job, an environment removed).",
)


def upgrade_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """render's --upgrade JOB and --upgrade-all, and plan's, which previews them."""
    f = click.option(
        "--upgrade-all",
        is_flag=True,
        help="Take this paddlegen's rendering of every job (see --upgrade).",
    )(f)
    return click.option(
        "--upgrade",
        "upgrade",
        metavar="JOB",
        multiple=True,
        help="Take this paddlegen's rendering of job JOB although its spec did not change "
        "(under Argo CD, a job whose objects change runs again). Repeatable.",
    )(f)


def upgraded(upgrade: Sequence[str], upgrade_all: bool) -> Sequence[str] | None:
    """The jobs that take this paddlegen's rendering: None for every job."""
    return None if upgrade_all else upgrade


def specs_argument(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.argument("specs", nargs=-1, required=True, type=click.Path(allow_dash=False))(f)


@dataclass(frozen=True)
class RenderInputs:
    """SPEC and the options render, check, diff and plan share: they must render identically."""

    specs: tuple[str, ...]
    out_dir: str
    workload: str | None
    templates: str | None
    argocd: bool
    jobs: int
    ignore: list[str]
    env: str | None

    def request(self, **flags: Any) -> Request:
        """The request these make, with the command's own ``flags``: a folder or glob among
        SPEC is the whole set of specs (the job folders whose stamp names no spec and that
        none renders go too)."""
        from paddlegen.api import Request

        paths, whole_set = spec_paths(self.specs)
        return Request(
            paths,
            self.out_dir,
            self.workload,
            self.templates,
            self.argocd,
            self.jobs,
            self.ignore,
            prune=whole_set,
            env=self.env,
            **flags,
        )


def render_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """SPEC and the options shared by render, check, diff and plan, given to the command as
    one argument, ``inputs``."""

    @functools.wraps(f)  # with the options already on ``f`` (click's __click_params__)
    def command(*args: Any, **kwargs: Any) -> Any:
        shared = {field.name: kwargs.pop(field.name) for field in fields(RenderInputs)}
        return f(*args, inputs=RenderInputs(**shared), **kwargs)

    for option in reversed(
        [
            click.option(
                "-o",
                "--output",
                "out_dir",
                default="deploy",
                show_default=True,
                type=click.Path(file_okay=False),
                help="Folder that gets one directory per job.",
            ),
            click.option(
                "--workload",
                type=click.Choice(WORKLOAD_NAMES),
                help="Override spec.workload for this run.",
            ),
            click.option(
                "--templates",
                type=click.Path(exists=True, file_okay=False),
                help="A folder of templates that override the built-in ones by name.",
            ),
            click.option(
                "--argocd/--no-argocd",
                default=True,
                show_default=True,
                help="Add Argo CD sync-wave and sync-options annotations.",
            ),
            click.option(
                "--env",
                metavar="ENV",
                callback=env_name,
                help="Environment ENV alone, in the flat layout: each spec merged with its "
                "overlay ENV (a spec with overlays but not ENV: its base).",
            ),
            click.option(
                "-j",
                "--jobs",
                type=click.IntRange(min=0),
                default=0,
                callback=lambda _ctx, _param, n: n or cores(),
                help="Processes to render with (default 0: one per available core).",
            ),
            ignore_option,
        ]
    ):
        command = option(command)
    return specs_argument(command)


def env_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """An environment's name; an empty one is a mistake (a shell variable that was not set),
    not "no environment": that would render every overlay's folder as its flat base."""
    if value == "":
        raise click.BadParameter("an environment's name, not an empty string", ctx, param)
    return value


def cores() -> int:
    from paddlegen.output.pool import default_jobs

    return default_jobs()


def spec_paths(specs: Sequence[str]) -> tuple[list[Path], bool]:
    from paddlegen.pipeline.load import collect_specs

    paths, whole_set = collect_specs(specs)
    if not paths:
        raise no_specs_error(specs)
    read_inputs(paths)
    return paths, whole_set


def no_specs_error(specs: Sequence[str]) -> click.UsageError:
    """The one verdict of every command when its arguments hold no spec (exit 2)."""
    return usage_error("no spec files found in " + " ".join(specs))


def _schema_locations(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[str, ...]:
    if not values:  # the usual run: the validator's module stays unloaded
        return values
    from paddlegen.errors import InvalidValueError
    from paddlegen.validate.locations import check_template

    for value in values:
        try:
            check_template(value)
        except InvalidValueError as exc:
            raise click.BadParameter(exc.message, ctx, param) from None
    return values


def validation_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The validator's options: the command gets ``kubeconform``, ``kubernetes_version``,
    ``schema_locations`` and ``ignore_missing_schemas``."""
    for option in reversed(
        [
            click.option(
                "--kubeconform",
                "kubeconform",
                metavar="PATH",
                help="The kubeconform binary (default: $PADDLEGEN_KUBECONFORM, then PATH).",
            ),
            click.option(
                "--kubernetes-version",
                metavar="X.Y.Z",
                help="Kubernetes API version to validate against (default: the newest bundled).",
            ),
            click.option(
                "--schema-location",
                "schema_locations",
                metavar="TEMPLATE",
                multiple=True,
                callback=_schema_locations,
                help="Where to find schemas for kinds paddlegen has none for, such as a "
                "custom/ ServiceMonitor (repeatable, tried in order after paddlegen's own): "
                "a kubeconform -schema-location, e.g. "
                "'schemas/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json'. "
                "Validating in process reads local paths only.",
            ),
            click.option(
                "--ignore-missing-schemas",
                is_flag=True,
                help="Leave objects of a kind no schema is found for unchecked, instead of "
                "failing (exit 2).",
            ),
        ]
    ):
        f = option(f)
    return f


def server_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--server and the kubectl settings it takes (combined by ``server_target``)."""
    for option in reversed(
        [
            click.option(
                "--server",
                is_flag=True,
                help="Also send the objects to the API server of the current kubectl context "
                "as a server-side apply dry-run (kubectl apply --server-side --dry-run=server).",
            ),
            click.option("--context", metavar="NAME", help="With --server: this kubectl context."),
            click.option(
                "--kubeconfig",
                metavar="PATH",
                type=click.Path(dir_okay=False),
                help="With --server: this kubeconfig (default: kubectl's).",
            ),
        ]
    ):
        f = option(f)
    return f


def server_target(server: bool, context: str | None, kubeconfig: str | None) -> Any:
    """The ``Server`` that --server asks for; None without it (and then no kubectl setting)."""
    if not server:
        if context or kubeconfig:
            raise usage_error("--context and --kubeconfig go with --server")
        return None
    from paddlegen.validate.target import Server

    return Server(context, kubeconfig)


def note_backend(used: str | None) -> None:
    """Say so when manifests were validated in process: kubeconform was not found."""
    if used == "in-process":
        note("paddlegen: kubeconform not found; validating in process against the same schemas")


# Fewer specs than this finish before a progress line would help.
PROGRESS_FROM = 20


class TerminalEvents(Events):
    """What a long call tells a person: a progress line, redrawn in place and only at a
    terminal with text output (never in a pipe, a CI log or --format json), why it waits
    when another paddlegen holds the output folder (always said), and the warnings and the
    validator as the call finds them."""

    def __init__(self, out_dir: str, fmt: str) -> None:
        self.out_dir = out_dir
        self.fmt = fmt
        self.live = fmt == "text" and sys.stderr.isatty()
        self.shown = False

    def progress(self, done: int, total: int) -> None:
        if self.live and total >= PROGRESS_FROM:
            click.echo(f"\rpaddlegen: {done}/{total} specs rendered", nl=False, err=True)
            self.shown = True

    def waiting_for_lock(self) -> None:
        self.clear()
        note(f"paddlegen: waiting for another paddlegen writing to {self.out_dir}")

    def warnings(self, found: Sequence[Diagnostic]) -> None:
        self.clear()
        emit(found, self.fmt)

    def validated(self, backend: str | None) -> None:
        note_backend(backend)

    def clear(self) -> None:
        if self.shown:
            click.echo("\r\033[K", nl=False, err=True)  # the line is gone before what follows
            self.shown = False

    def __enter__(self) -> TerminalEvents:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.clear()
