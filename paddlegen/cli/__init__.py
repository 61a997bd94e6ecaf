"""The command line: options in, one API call, output formatted. No pipeline logic here.

One module per command group (render, validate, gitops, authoring), each loaded only when
one of its commands runs or ``--help`` lists them: ``paddlegen render`` does not pay for the
definitions of ``init`` or ``argocd``. ``common`` holds what they share.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from paddlegen.cli.common import emit, is_document, note, print_report
from paddlegen.errors import (
    EXIT_BROKEN_PIPE,
    EXIT_ERROR,
    INTERNAL,
    USAGE,
    Diagnostic,
    PaddlegenError,
)

# command name -> (module in this package, attribute)
COMMANDS = {
    "render": ("render", "render"),
    "check": ("render", "check"),
    "diff": ("render", "diff"),
    "plan": ("plan", "plan"),
    "validate": ("validate", "validate"),
    "schema": ("validate", "schema"),
    "schemas": ("validate", "schemas"),
    "argocd": ("gitops", "argocd"),
    "kueue": ("gitops", "kueue"),
    "serve": ("gitops", "serve"),
    "init": ("authoring", "init"),
    "explain": ("authoring", "explain"),
    "import": ("authoring", "import_command"),
    "dockerfile": ("authoring", "dockerfile"),
    "runtime": ("authoring", "runtime"),
    "completion": ("shell", "completion"),
}


class _Group(click.Group):
    """Loads commands when asked for; turns paddlegen's own errors into messages and exit
    codes. Anything else is a bug."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attribute = COMMANDS[name]
        command: click.Command = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        report = True
        try:
            return self._invoke_reporting(ctx)
        except click.exceptions.Exit as exc:
            # --help exits 0 before the command runs (no paddlegen command exits so): its text
            # is what stdout is for. Every other end, findings or errors, is reported.
            report = exc.exit_code != 0
            raise
        finally:
            if report:
                print_report(ctx)  # however the command ended: one document

    def _invoke_reporting(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PaddlegenError as exc:
            fmt: str = ctx.meta.get("paddlegen.format", "text")
            if exc.shown:
                pass
            elif exc.diagnostics:
                emit(exc.diagnostics, fmt)
            elif fmt == "text":
                note(f"paddlegen: error: {exc.message}")
            else:  # a machine reading json, github, sarif or junit gets the error in that form
                emit([Diagnostic(message=exc.message, rule=exc.rule)], fmt)
            ctx.exit(exc.exit_code)
        except click.ClickException as exc:
            fmt = ctx.meta.get("paddlegen.format", "text")
            if is_document(fmt):  # click still says it on stderr
                emit([Diagnostic(message=exc.format_message(), rule=USAGE.id)], fmt)
            raise
        except (click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:
            # The reader of stdout closed it (`| head`, a script that stopped reading): no
            # bug. End quietly with the status a shell gives a Unix tool that SIGPIPE ended
            # (Python ignores SIGPIPE, so the write raised). stdout goes to /dev/null first:
            # the report and the flush at exit would fail on the same pipe.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            ctx.exit(EXIT_BROKEN_PIPE)
        except Exception:  # noqa: BLE001 - a bug: keep the traceback, exit 2 not 1
            import traceback  # here: only a bug needs it, and every command imports us

            traceback.print_exc(file=sys.stderr)
            click.echo("paddlegen: internal error (a bug in paddlegen; please report it)", err=True)
            fmt = ctx.meta.get("paddlegen.format", "text")
            if is_document(fmt):
                emit([Diagnostic(message="internal error", rule=INTERNAL.id)], fmt)
            ctx.exit(EXIT_ERROR)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """-V, --version: what `paddlegen --version` prints before the CLI loads (__main__)."""
    if not value or ctx.resilient_parsing:
        return
    from paddlegen.version import version_text

    click.echo(version_text(), nl=False)
    ctx.exit()


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "-V",
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
def cli() -> None:
    """Render PaddlePaddle training-job specs into kustomize-ready Kubernetes manifests.

    \b
    Exit codes: 0 success, 1 findings (invalid spec, invalid or stale output),
    2 usage, I/O, tool or internal error.
    """


def main() -> None:
    cli(prog_name="paddlegen")
