"""plan: what merging does to each Argo CD Application, against a git revision."""

from __future__ import annotations

import click

from paddlegen.cli.common import (
    RenderInputs,
    TerminalEvents,
    allow_removal_option,
    format_option,
    render_options,
    stdout_is_output,
    undone_on_spec_errors,
    upgrade_options,
    upgraded,
)
from paddlegen.report import PLAN_FORMATS  # a light module: --help lists the formats


@click.command()
@render_options
@click.option(
    "--base",
    default="HEAD",
    show_default=True,
    metavar="REF",
    help="The git revision merged into (a branch, tag or commit; origin/main in a pull "
    "request's CI): its OUTPUT and specs are what is deployed now.",
)
@click.option(
    "--output-format",
    type=click.Choice(tuple(PLAN_FORMATS)),
    default="text",
    show_default=True,
    help="How the plan is printed on stdout: text, json or markdown (a pull-request "
    "comment). --format keeps its meaning: how errors and findings are printed.",
)
@upgrade_options
@allow_removal_option
@click.option(
    "--allow-rerun",
    is_flag=True,
    help="Do not fail when merging runs a job again whose spec did not change (its custom/ "
    "changed, or paddlegen renders it differently).",
)
@format_option
def plan(
    inputs: RenderInputs,
    base: str,
    output_format: str,
    upgrade: tuple[str, ...],
    upgrade_all: bool,
    allow_removal: bool,
    allow_rerun: bool,
    fmt: str,
) -> None:
    """Print what merging does to each Argo CD Application: create, rerun (and why), delete
    or unchanged.

    It compares OUTPUT and the specs as committed at --base with what `paddlegen render`
    would write now, before rendering or after, and writes nothing. Under Argo CD every
    change to an Application's objects is a sync, and a sync runs its job.

    Exits 1 when merging deletes an Application, or runs a job again that its own spec does
    not ask to (--allow-removal, --allow-rerun allow them). A job whose spec did not change
    keeps what an older paddlegen rendered, as `render` keeps it: --upgrade JOB and
    --upgrade-all show the reruns that `render --upgrade` would cause.

    \b
    Examples:
      paddlegen plan jobs/ -o deploy/
      paddlegen plan jobs/ -o deploy/ --base origin/main --output-format markdown
      paddlegen plan jobs/ -o deploy/ --upgrade-all
    """
    from paddlegen.api import run_merge_plan

    stdout_is_output()  # the plan; a --format json document of errors goes to stderr
    request = inputs.request(
        upgrade=upgraded(upgrade, upgrade_all),
    )
    with (
        undone_on_spec_errors("nothing planned", fmt),
        TerminalEvents(inputs.out_dir, fmt) as events,
    ):
        result = run_merge_plan(request, base, events)
    click.echo(PLAN_FORMATS[output_format](result), nl=False)
    result.refuse_unasked(allow_removal, allow_rerun)
