"""render, check, diff: specs to job directories, and how the ones on disk differ."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from paddlegen.cli.common import (
    TerminalEvents,
    emit,
    format_option,
    is_document,
    note,
    note_backend,
    render_options,
    server_options,
    server_target,
    spec_paths,
    specs_argument,
    stdout_is_output,
    undone_on_spec_errors,
    validation_options,
)


def _render(
    specs: Sequence[str],
    workload: str | None,
    templates: str | None,
    argocd: bool,
    fmt: str,
    ignore: list[str],
    output: str | None,
) -> tuple[list[Any], bool]:
    """Every spec rendered in full, objects and positions kept (--stdout, --validate), for
    job folders in ``output`` (None: printed)."""
    from paddlegen import api

    paths, whole_set = spec_paths(specs)
    rendered = api.render_specs(
        paths,
        workload,
        templates,
        argocd=argocd,
        ignore=ignore,
        output=output,
        stamped=output is not None,  # printed output is never stamped
    )
    emit([w for r in rendered for w in r.warnings], fmt)
    return rendered, whole_set


def _plan(
    specs: Sequence[str],
    workload: str | None,
    templates: str | None,
    argocd: bool,
    fmt: str,
    out_dir: str,
    jobs: int,
    ignore: list[str],
    warnings: bool = True,
) -> tuple[list[Any], bool]:
    """Every spec's job directory, reusing those already up to date in ``out_dir``; the
    specs' warnings shown unless not ``warnings``."""
    from paddlegen import api

    paths, whole_set = spec_paths(specs)
    with TerminalEvents(out_dir, fmt) as events:
        planned = api.render_specs(
            paths,
            workload,
            templates,
            argocd=argocd,
            objects=False,
            reuse=out_dir,
            jobs=jobs,
            ignore=ignore,
            events=events,
            output=out_dir,
        )
    if not warnings:
        planned = [dataclasses.replace(p, warnings=[]) for p in planned]
    if fmt == "text":  # other formats print the warnings with the drift, in one report
        emit([w for p in planned for w in p.warnings], fmt)
    return planned, whole_set


@click.command()
@specs_argument
@render_options
@click.option(
    "--stdout",
    "to_stdout",
    is_flag=True,
    help="Print one multi-document stream in apply order instead of writing files.",
)
@click.option(
    "--env",
    metavar="ENV",
    help="With --stdout: print environment ENV (the spec merged with its overlay).",
)
@click.option(
    "--validate",
    "validate_output",
    is_flag=True,
    help="Validate the manifests (kubeconform) first, and with --server against an API "
    "server; write nothing if they fail.",
)
@validation_options
@server_options
@format_option
def render(
    specs: tuple[str, ...],
    out_dir: str,
    workload: str | None,
    templates: str | None,
    argocd: bool,
    jobs: int,
    ignore: list[str],
    to_stdout: bool,
    env: str | None,
    validate_output: bool,
    kubeconform: str | None,
    kubernetes_version: str | None,
    server: bool,
    context: str | None,
    kubeconfig: str | None,
    fmt: str,
) -> None:
    """Render SPEC files into OUTPUT/<metadata.name>/ (kustomization.yaml + one file per object).

    A SPEC may be a folder (every *.yaml below it) or a glob; then the job directories of specs
    that no longer exist are removed from OUTPUT (only files paddlegen generated). With spec
    files listed one by one, only those whose stamp names a spec that is gone (or a listed
    spec that names another job now) are.

    \b
    Examples:
      paddlegen render examples/quickstart.yaml -o deploy/
      paddlegen render jobs/ -o deploy/
      paddlegen render examples/quickstart.yaml --stdout | kubectl apply -f -
    """
    from paddlegen import api

    target = server_target(server, context, kubeconfig)
    if target and not validate_output:
        raise click.UsageError("--server goes with --validate")
    if to_stdout:
        stdout_is_output()
    if env and not to_stdout:
        raise click.UsageError("--env needs --stdout (written output has every environment)")
    output_given = click.get_current_context().get_parameter_source("out_dir")
    if to_stdout and output_given is not click.core.ParameterSource.DEFAULT:
        raise click.UsageError("-o/--output and --stdout exclude each other: choose one")
    if not to_stdout and not validate_output:
        # Unchanged jobs are skipped; the rest are rendered and written on every core.
        paths, whole_set = spec_paths(specs)
        with undone_on_spec_errors("nothing written", fmt), TerminalEvents(out_dir, fmt) as events:
            planned, reports = api.render_into(
                paths,
                out_dir,
                workload,
                templates,
                argocd=argocd,
                jobs=jobs,
                prune=whole_set,
                ignore=ignore,
                events=events,
            )
        emit([w for p in planned for w in p.warnings], fmt)
        _summary(len(planned), out_dir, reports)
        return
    with undone_on_spec_errors("nothing printed" if to_stdout else "nothing written", fmt):
        rendered, whole_set = _render(
            specs, workload, templates, argocd, fmt, ignore, None if to_stdout else out_dir
        )
    if validate_output:
        from paddlegen.errors import ManifestError

        found, used = api.validate_rendered(rendered, out_dir, kubernetes_version, kubeconform)
        note_backend(used)
        if target and not any(d.is_error for d in found):
            from paddlegen.validate.server import dry_run

            found += dry_run(rendered, target)
        if any(d.is_error for d in found):
            raise ManifestError("invalid manifests", found)
        if found:
            emit(found, fmt)  # the server's warnings
    if env:
        from paddlegen.output.layout import base_fallbacks

        fallbacks = base_fallbacks(env, {r.name: list(r.environments) for r in rendered})
        for r in rendered:
            if r.name in fallbacks:
                note(f"paddlegen: {r.file} has no overlay '{env}': its base is rendered")
    if to_stdout:
        click.echo(api.manifest_stream(rendered, env), nl=False)
        return
    _summary(
        len(rendered),
        out_dir,
        api.write_rendered(rendered, out_dir, prune=whole_set, events=TerminalEvents(out_dir, fmt)),
    )


def _summary(jobs: int, out_dir: str, reports: list[Any]) -> None:
    from paddlegen.gitops.argocd import renamed_applications
    from paddlegen.output.layout import CUSTOM, is_custom

    totals = {"written": 0, "unchanged": 0, "removed": 0}
    for name, report in reports:
        renamed = renamed_applications(name, report)
        if renamed:
            before, after = (", ".join(names) for names in renamed)
            note(
                f"paddlegen: warning: {name} changed layout: Argo CD Applications made without "
                f"--env go from {before} to {after}, and deleting {before} deletes its live "
                "objects (resources finalizer), stopping a running job; see the README, "
                "'Environments in Argo CD'"
            )
        gone = not (report.written or report.unchanged)  # the job's spec is gone
        own_place = _OWN_PLACE.format(os.path.join(out_dir, name, CUSTOM))
        for rel in report.kept:
            kept = os.path.join(out_dir, name, rel)  # `-o deploy/` must not show `deploy//x`
            if gone:
                note(f"paddlegen: kept {kept} (not generated by paddlegen)")
            elif not is_custom(rel):  # custom/ is where a job's own files go: nothing to say
                note(
                    f"paddlegen: kept {kept} (not generated by paddlegen, and not deployed: "
                    f"no kustomization lists it; {own_place})"
                )
        for key in totals:
            totals[key] += len(getattr(report, key))
    note(
        f"{jobs} job{'s' if jobs != 1 else ''} in {out_dir}: "
        + ", ".join(f"{n} {key}" for key, n in totals.items())
    )


@click.command()
@specs_argument
@render_options
@click.option("--fix", is_flag=True, help="Rewrite stale output (still exits 1 if it was stale).")
@click.option(
    "--spec-findings/--no-spec-findings",
    default=True,
    show_default=True,
    help="List the specs' errors and warnings. --no-spec-findings (the pre-commit hooks, "
    "beside paddlegen-validate, which lists them) only names the specs with errors.",
)
@format_option
def check(
    specs: tuple[str, ...],
    out_dir: str,
    workload: str | None,
    templates: str | None,
    argocd: bool,
    jobs: int,
    ignore: list[str],
    fix: bool,
    spec_findings: bool,
    fmt: str,
) -> None:
    """Fail (exit 1) with a diff when the output in OUTPUT is not what SPEC renders to.

    \b
    Examples:
      paddlegen check jobs/ -o deploy/
      paddlegen check jobs/ -o deploy/ --fix
    """
    from paddlegen import api

    validate = [*specs, *(arg for rule in ignore for arg in ("--ignore", rule))]
    with undone_on_spec_errors(
        "nothing written" if fix else "nothing checked",
        fmt,
        findings=spec_findings,
        validate=validate,
    ):
        rendered, whole_set = _plan(
            specs, workload, templates, argocd, fmt, out_dir, jobs, ignore, spec_findings
        )
    drifts = api.drift(rendered, out_dir, prune=whole_set)
    _show_drift(rendered, drifts, out_dir, fmt)
    if not drifts:
        note(f"{len(rendered)} job{'s' if len(rendered) != 1 else ''} in {out_dir}: up to date")
        return
    if fix:
        api.write_rendered(
            rendered, out_dir, prune=whole_set, events=TerminalEvents(out_dir, fmt)
        )  # sweeps the leftovers too
        stale = sum(found.fixable and not found.leftover for _, found in drifts)
        left = sum(found.leftover for _, found in drifts)
        theirs = sum(len(found.unknown) + len(found.custom) for _, found in drifts)
        click.echo(
            f"paddlegen: rewrote {stale} stale job(s)"
            + (f", removed {left} leftover staging folder(s)" if left else "")
            + (
                f"; {theirs} file(s) above are yours to move into custom/ or fix: "
                "--fix does not touch them"
                if theirs
                else ""
            ),
            err=True,
        )
    raise click.exceptions.Exit(1)


@click.command()
@specs_argument
@render_options
@format_option
def diff(
    specs: tuple[str, ...],
    out_dir: str,
    workload: str | None,
    templates: str | None,
    argocd: bool,
    jobs: int,
    ignore: list[str],
    fmt: str,
) -> None:
    """Print how OUTPUT differs from what SPEC renders to, without failing.

    \b
    Example:
      paddlegen diff jobs/ -o deploy/ | less
    """
    from paddlegen import api

    with undone_on_spec_errors("nothing compared", fmt):
        rendered, whole_set = _plan(specs, workload, templates, argocd, fmt, out_dir, jobs, ignore)
    _show_drift(rendered, api.drift(rendered, out_dir, prune=whole_set), out_dir, fmt)


# What each kind of drift means, for --format json, github, sarif and junit (one finding per
# file, with the spec it is rendered from as its origin).
_DRIFT = {
    "stale": "differs from what the specs render to",
    "missing": "a render writes it, and it is not there",
    "extra": "paddlegen generated it, and a render no longer would",
    "unknown": "paddlegen did not generate it, and no kustomization lists it: not deployed",
}
# Where a file of the user's belongs, said with each one nothing deploys (README, "Output layout").
_OWN_PLACE = (
    "a job's own objects and patches go in {}/ (a kustomize Component, which the job's "
    "kustomization then lists)"
)


def _show_drift(rendered: list[Any], drifts: list[Any], out_dir: str, fmt: str) -> None:
    """The diff on stdout (on stderr with a --format whose document stdout holds); on
    stderr the files, as lines, or in the other formats as findings reported with the
    specs' warnings, in one report."""
    from paddlegen.errors import Diagnostic
    from paddlegen.output.layout import CUSTOM
    from paddlegen.report import printable

    findings: list[Diagnostic] = [w for r in rendered for w in r.warnings]
    specs = {r.name: r.file for r in rendered}  # an extra job's spec is gone: no origin
    for name, found in drifts:
        if found.leftover:
            if fmt == "text":
                note(f"extra: {Path(out_dir) / name}/")
            else:
                message = "a staging folder an interrupted render left; the next render removes it"
                findings.append(
                    Diagnostic(f"{Path(out_dir) / name}/", message=message, rule="leftover")
                )
            continue
        # A committed file may hold anything: each line escaped, the line breaks kept. With
        # --format json, sarif or junit stdout holds the report alone, and the diff goes with
        # the human text.
        click.echo(
            "".join(
                printable(line[:-1]) + "\n" if line.endswith("\n") else printable(line)
                for line in found.diff.splitlines(keepends=True)
            ),
            nl=False,
            err=is_document(fmt),
        )
        own_place = _OWN_PLACE.format(Path(out_dir) / name / CUSTOM)
        for label in ("stale", "missing", "extra", "unknown"):
            for rel in getattr(found, label):
                path = str(Path(out_dir) / name / rel)
                if fmt == "text":
                    note(
                        f"{label}: {path}"
                        + (f" ({_DRIFT[label]}; {own_place})" if label == "unknown" else "")
                    )
                else:
                    message = _DRIFT[label] + (f"; {own_place}" if label == "unknown" else "")
                    origin = specs.get(name, "")
                    findings.append(Diagnostic(path, message=message, rule=label, origin=origin))
        for rel, why in found.custom:
            path = str(Path(out_dir) / name / rel)
            if fmt == "text":
                note(f"custom: {path} ({why})")
            else:
                findings.append(
                    Diagnostic(path, message=why, rule="custom", origin=specs.get(name, ""))
                )
    if fmt != "text":
        emit(findings, fmt)
        return
    leftovers = sum(found.leftover for _, found in drifts)
    if leftovers:
        note(
            f"paddlegen: {leftovers} staging folder(s) left in {out_dir} by an interrupted or "
            "killed render; the next render removes them"
        )
