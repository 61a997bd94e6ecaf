"""plan: what merging does to each Argo CD Application, against a git revision; its text,
JSON and Markdown (a pull-request comment)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from paddlegen.cli.common import (
    TerminalEvents,
    allow_removal_option,
    format_option,
    render_options,
    specs_argument,
    stdout_is_output,
    undone_on_spec_errors,
    upgrade_options,
    upgraded,
)
from paddlegen.cli.render import _request

if TYPE_CHECKING:
    from paddlegen.gitops.merge import Change, MergePlan


def _where(c: Change) -> str:
    return f"{c.job} (environment {c.environment})" if c.environment else c.job


def text(plan: MergePlan) -> str:
    """A line per Application that changes, then the counts; unchanged ones only counted."""
    from paddlegen.report import printable

    lines = [
        f"{c.action:<7} {_where(c)}" + (f": {c.reason}" if c.reason else "") for c in plan.changed
    ]
    lines.append(f"merging into {plan.base}: {plan.counts()}")
    return "".join(printable(line) + "\n" for line in lines)


def as_json(plan: MergePlan) -> str:
    """``{"targets": [{"job", "environment", "action", "reason"}]}``, every Application."""
    return json.dumps({"targets": [c.as_dict() for c in plan.changes]}, indent=2) + "\n"


_MARKDOWN = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")


def _md(value: str) -> str:
    """Text from a spec or a file name, shown as itself in a table cell (no markup, no HTML)."""
    from paddlegen.report import printable

    return _MARKDOWN.sub(r"\\\1", printable(value))


def markdown(plan: MergePlan) -> str:
    """A pull-request comment: the counts, and a table of the Applications that change (in
    bold what plan fails on unless allowed)."""
    out = [
        f"### paddlegen plan: merging into {_md(plan.base)}",
        "",
        f"{plan.counts()}. Each row is an Argo CD Application; under Argo CD every change to "
        "one runs its job.",
    ]
    if plan.changed:
        out += ["", "| job | environment | action | reason |", "| --- | --- | --- | --- |"]
        out += [
            f"| {_md(c.job)} | {_md(c.environment or '')} | "
            + (c.action if c.asked else f"**{c.action}**")
            + f" | {_md(c.reason)} |"
            for c in plan.changed
        ]
    return "\n".join(out) + "\n"


_FORMATS: dict[str, Callable[[MergePlan], str]] = {
    "text": text,
    "json": as_json,
    "markdown": markdown,
}


@click.command()
@specs_argument
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
    type=click.Choice(tuple(_FORMATS)),
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
    specs: tuple[str, ...],
    out_dir: str,
    workload: str | None,
    templates: str | None,
    argocd: bool,
    jobs: int,
    ignore: list[str],
    env: str | None,
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
    request = _request(
        specs,
        out_dir,
        workload,
        templates,
        argocd,
        jobs,
        ignore,
        env,
        upgrade=upgraded(upgrade, upgrade_all),
    )
    with undone_on_spec_errors("nothing planned", fmt), TerminalEvents(out_dir, fmt) as events:
        result = run_merge_plan(request, base, events)
    click.echo(_FORMATS[output_format](result), nl=False)
    result.refuse_unasked(allow_removal, allow_rerun)
