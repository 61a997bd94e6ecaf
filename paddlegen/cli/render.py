"""render, check, diff: specs to job directories, and how the ones on disk differ."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from paddlegen.cli.common import (
    RenderInputs,
    TerminalEvents,
    allow_removal_option,
    emit,
    format_option,
    is_document,
    note,
    render_options,
    server_options,
    server_target,
    stdout_is_output,
    undone_on_spec_errors,
    upgrade_options,
    upgraded,
    validation_options,
)
from paddlegen.errors import Diagnostic


class _DriftEvents(TerminalEvents):
    """check and diff: the specs' warnings (unless not ``spec_findings``) at once in text, in
    the drift's report in the other formats; the drift as soon as it is known."""

    def __init__(self, out_dir: str, fmt: str, spec_findings: bool = True) -> None:
        super().__init__(out_dir, fmt)
        self.spec_findings = spec_findings

    def warnings(self, found: Sequence[Diagnostic]) -> None:
        if self.fmt == "text" and self.spec_findings:
            super().warnings(found)

    def drifted(self, rendered: Sequence[Any], drifts: Sequence[tuple[str, Any]]) -> None:
        """The diff on stdout (on stderr with a --format whose document stdout holds); on
        stderr the files, as lines, or in the other formats as findings reported with the
        specs' warnings, in one report."""
        # Here, not at the top: render, which never shows a drift, does not load them.
        from paddlegen.output.drift import leftover_notes
        from paddlegen.report import printable_lines

        findings = [w for r in rendered for w in r.warnings] if self.spec_findings else []
        origins = {r.name: r.file for r in rendered}  # an extra job's spec is gone: no origin
        for name, found in drifts:
            # With --format json, sarif or junit stdout holds the report alone, and the diff
            # goes with the human text.
            click.echo(printable_lines(found.diff), nl=False, err=is_document(self.fmt))
            if self.fmt == "text":
                for line in found.notes(self.out_dir, name):
                    note(line)
            else:
                findings += found.findings(self.out_dir, name, origins.get(name, ""))
        if self.fmt != "text":
            emit(findings, self.fmt)
            return
        for line in leftover_notes(drifts, self.out_dir):
            note(line)


@click.command()
@render_options
@click.option(
    "--stdout",
    "to_stdout",
    is_flag=True,
    help="Print one multi-document stream in apply order instead of writing files.",
)
@click.option(
    "--validate",
    "validate_output",
    is_flag=True,
    help="Validate the manifests (kubeconform) first, and with --server against an API "
    "server; write nothing if they fail.",
)
@upgrade_options
@allow_removal_option
@validation_options
@server_options
@format_option
def render(
    inputs: RenderInputs,
    to_stdout: bool,
    validate_output: bool,
    upgrade: tuple[str, ...],
    upgrade_all: bool,
    allow_removal: bool,
    kubeconform: str | None,
    kubernetes_version: str | None,
    schema_locations: tuple[str, ...],
    ignore_missing_schemas: bool,
    server: bool,
    context: str | None,
    kubeconfig: str | None,
    fmt: str,
) -> None:
    """Render SPEC files into OUTPUT/<metadata.name>/ (kustomization.yaml + one file per object).

    A SPEC may be a folder (every *.yaml below it) or a glob. A job directory in OUTPUT is
    removed (only the files paddlegen generated) when the spec its stamp names is gone, or is
    given and names another job now; the directories of other specs that exist stay. OUTPUT
    must not be another command's folder (argocd's, kueue's, a job's).

    A job whose spec did not change keeps the files an older paddlegen wrote when this one
    renders them differently (said in a note): under Argo CD, changed objects run the job
    again. --upgrade JOB or --upgrade-all takes the new rendering.

    \b
    Examples:
      paddlegen render examples/quickstart.yaml -o deploy/
      paddlegen render jobs/ -o deploy/
      paddlegen render examples/quickstart.yaml --stdout | kubectl apply -f -
      paddlegen render jobs/ --env prod -o review/prod/
    """
    from paddlegen.api import run_render

    target = server_target(server, context, kubeconfig)
    if target and not validate_output:
        raise click.UsageError("--server goes with --validate")
    if to_stdout:
        stdout_is_output()
    output_given = click.get_current_context().get_parameter_source("out_dir")
    if to_stdout and output_given is not click.core.ParameterSource.DEFAULT:
        raise click.UsageError("-o/--output and --stdout exclude each other: choose one")
    request = inputs.request(
        stdout=to_stdout,
        validate=validate_output,
        kubeconform=kubeconform,
        kubernetes_version=kubernetes_version,
        schema_locations=schema_locations,
        ignore_missing_schemas=ignore_missing_schemas,
        server=target,
        upgrade=upgraded(upgrade, upgrade_all),
        allow_removal=allow_removal,
    )
    undone = "nothing printed" if to_stdout else "nothing written"
    with undone_on_spec_errors(undone, fmt), TerminalEvents(inputs.out_dir, fmt) as events:
        result = run_render(request, events)
    for line in result.fallback_notes(inputs.env):
        note(line)
    if to_stdout:
        click.echo(result.stream, nl=False)
        return
    for line in result.write_notes(inputs.out_dir):
        note(line)


@click.command()
@render_options
@click.option("--fix", is_flag=True, help="Rewrite stale output (still exits 1 if it was stale).")
@allow_removal_option
@click.option(
    "--spec-findings/--no-spec-findings",
    default=True,
    show_default=True,
    help="List the specs' errors and warnings. --no-spec-findings (the pre-commit hooks, "
    "beside paddlegen-validate, which lists them) only names the specs with errors.",
)
@format_option
def check(
    inputs: RenderInputs,
    fix: bool,
    allow_removal: bool,
    spec_findings: bool,
    fmt: str,
) -> None:
    """Fail (exit 1) with a diff when the output in OUTPUT is not what SPEC renders to.

    \b
    Examples:
      paddlegen check jobs/ -o deploy/
      paddlegen check jobs/ -o deploy/ --fix
    """
    from paddlegen.api import run_check

    request = inputs.request(
        fix=fix,
        allow_removal=allow_removal,
    )
    validate = [*inputs.specs, *(arg for rule in inputs.ignore for arg in ("--ignore", rule))]
    with (
        undone_on_spec_errors(
            "nothing written" if fix else "nothing checked",
            fmt,
            findings=spec_findings,
            validate=validate,
        ),
        _DriftEvents(inputs.out_dir, fmt, spec_findings) as events,
    ):
        result = run_check(request, events)
    for line in result.fallback_notes(inputs.env) + result.kept_notes(inputs.out_dir):
        note(line)
    if not result.drifts:
        note(result.up_to_date(inputs.out_dir))
        return
    if fix:  # the output was rewritten, and the leftovers swept
        click.echo(result.fix_summary(inputs.out_dir), err=True)
    elif fmt == "text":
        for line in result.mend_notes(request, inputs.specs):
            note(line)
    result.refuse_drift()


@click.command()
@render_options
@format_option
def diff(
    inputs: RenderInputs,
    fmt: str,
) -> None:
    """Print how OUTPUT differs from what SPEC renders to, without failing.

    \b
    Example:
      paddlegen diff jobs/ -o deploy/ | less
    """
    from paddlegen.api import run_check

    request = inputs.request()
    with (
        undone_on_spec_errors("nothing compared", fmt),
        _DriftEvents(inputs.out_dir, fmt) as events,
    ):
        result = run_check(request, events)
    for line in result.fallback_notes(inputs.env):
        note(line)
    if fmt == "text":
        for line in result.other_env_notes(inputs.out_dir, inputs.env, "diff"):
            note(line)
