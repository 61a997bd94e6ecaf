"""The command line: options in, one API call, output formatted. No pipeline logic here."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from paddlegen import __version__
from paddlegen.errors import EXIT_ERROR, Diagnostic, PaddlegenError
from paddlegen.workloads import WORKLOADS

WORKLOAD_NAMES = tuple(WORKLOADS)


def _note(message: str) -> None:
    """A line on stderr. Paths and messages can carry a spec's or a file name's characters:
    control and bidi characters are shown escaped, never sent to the terminal."""
    from paddlegen.report import printable

    click.echo(printable(message), err=True)


def _usage(message: str) -> click.UsageError:
    from paddlegen.report import printable

    return click.UsageError(printable(message))


def _emit(diagnostics: Sequence[Diagnostic], fmt: str, *, err: bool = True) -> None:
    from paddlegen.report import REPORTERS

    if diagnostics or fmt == "json":
        click.echo(REPORTERS[fmt](diagnostics), nl=False, err=err)


# init, explain, import, dockerfile live in cli_authoring, loaded only when one of them runs
# (or --help lists them): `paddlegen --version` and `render` do not pay for their definitions.
_AUTHORING = {
    "init": "init",
    "explain": "explain",
    "import": "import_command",
    "dockerfile": "dockerfile",
}


class _Group(click.Group):
    """Turns paddlegen's own errors into messages and exit codes; anything else is a bug."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *_AUTHORING])

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in _AUTHORING:
            from paddlegen import cli_authoring

            return getattr(cli_authoring, _AUTHORING[name])
        return super().get_command(ctx, name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PaddlegenError as exc:
            fmt = ctx.meta.get("paddlegen.format", "text")
            if exc.diagnostics:
                _emit(exc.diagnostics, fmt)
            else:
                _note(f"paddlegen: error: {exc.message}")
            ctx.exit(exc.exit_code)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception:  # noqa: BLE001 - a bug: keep the traceback, exit 2 not 1
            traceback.print_exc(file=sys.stderr)
            click.echo("paddlegen: internal error (a bug in paddlegen; please report it)", err=True)
            ctx.exit(EXIT_ERROR)


def _format_option(f: Callable[..., Any]) -> Callable[..., Any]:
    def remember(ctx: click.Context, _param: click.Parameter, value: str) -> str:
        ctx.meta["paddlegen.format"] = value
        return value

    return click.option(
        "--format",
        "fmt",
        type=click.Choice(["text", "json", "github"]),
        default="text",
        show_default=True,
        callback=remember,
        is_eager=True,
        help="How diagnostics are printed.",
    )(f)


def _specs_argument(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.argument("specs", nargs=-1, required=True, type=click.Path(allow_dash=False))(f)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=__version__, prog_name="paddlegen")
def cli() -> None:
    """Render PaddlePaddle training-job specs into kustomize-ready Kubernetes manifests.

    \b
    Exit codes: 0 success, 1 findings (invalid spec, invalid or stale output),
    2 usage, I/O, tool or internal error.
    """


def _render_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Options shared by render, check and diff: they must render identically."""
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
                "-j",
                "--jobs",
                type=click.IntRange(min=0),
                default=0,
                callback=lambda _ctx, _param, n: n or _cores(),
                help="Processes to render with (default 0: one per available core).",
            ),
        ]
    ):
        f = option(f)
    return f


def _cores() -> int:
    from paddlegen.pool import default_jobs

    return default_jobs()


def _specs(specs: Sequence[str]) -> tuple[list[Path], bool]:
    from paddlegen import api

    paths, whole_set = api.collect_specs(specs)
    if not paths:
        raise _usage("no spec files found in " + " ".join(specs))
    return paths, whole_set


def _render(
    specs: Sequence[str], workload: str | None, templates: str | None, argocd: bool, fmt: str
) -> tuple[list[Any], bool]:
    """Every spec rendered in full, objects and positions kept (--stdout, --validate)."""
    from paddlegen import api

    paths, whole_set = _specs(specs)
    rendered = api.render_specs(paths, workload, templates, argocd=argocd)
    _emit([w for r in rendered for w in r.warnings], fmt)
    return rendered, whole_set


def _plan(
    specs: Sequence[str],
    workload: str | None,
    templates: str | None,
    argocd: bool,
    fmt: str,
    out_dir: str,
    jobs: int,
) -> tuple[list[Any], bool]:
    """Every spec's job directory, reusing those already up to date in ``out_dir``."""
    from paddlegen import batch

    paths, whole_set = _specs(specs)
    planned = batch.plan_specs(paths, workload, templates, argocd=argocd, reuse=out_dir, jobs=jobs)
    _emit([w for p in planned for w in p.warnings], fmt)
    return planned, whole_set


def _validation_options(f: Callable[..., Any]) -> Callable[..., Any]:
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
        ]
    ):
        f = option(f)
    return f


def _check_manifests(
    rendered: list[Any],
    out_dir: str,
    kubernetes_version: str | None,
    kubeconform: str | None,
    trees: list[Path],
) -> list[Diagnostic]:
    from paddlegen import api

    found, used = api.validate_rendered(
        rendered, out_dir, kubernetes_version, kubeconform, trees=trees
    )
    if used == "in-process":
        click.echo(
            "paddlegen: kubeconform not found; validating in process against the same schemas",
            err=True,
        )
    return found


@cli.command()
@_specs_argument
@_render_options
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
    help="Validate the manifests (kubeconform) first; write nothing if they fail.",
)
@_validation_options
@_format_option
def render(
    specs: tuple[str, ...],
    out_dir: str,
    workload: str | None,
    templates: str | None,
    argocd: bool,
    jobs: int,
    to_stdout: bool,
    env: str | None,
    validate_output: bool,
    kubeconform: str | None,
    kubernetes_version: str | None,
    fmt: str,
) -> None:
    """Render SPEC files into OUTPUT/<metadata.name>/ (kustomization.yaml + one file per object).

    A SPEC may be a folder (every *.yaml below it) or a glob; then the job directories of specs
    that no longer exist are removed from OUTPUT (only files paddlegen generated).

    \b
    Examples:
      paddlegen render examples/quickstart.yaml -o deploy/
      paddlegen render jobs/ -o deploy/
      paddlegen render examples/quickstart.yaml --stdout | kubectl apply -f -
    """
    from paddlegen import api

    if env and not to_stdout:
        raise click.UsageError("--env needs --stdout (written output has every environment)")
    if not to_stdout and not validate_output:
        # Unchanged jobs are skipped; the rest are rendered and written on every core.
        from paddlegen import batch

        paths, whole_set = _specs(specs)
        planned, reports = batch.render_into(
            paths, out_dir, workload, templates, argocd=argocd, jobs=jobs, prune=whole_set
        )
        _emit([w for p in planned for w in p.warnings], fmt)
        _summary(len(planned), out_dir, reports)
        return
    rendered, whole_set = _render(specs, workload, templates, argocd, fmt)
    if validate_output:
        from paddlegen.errors import ManifestError

        found = _check_manifests(rendered, out_dir, kubernetes_version, kubeconform, [])
        if any(d.is_error for d in found):
            raise ManifestError("invalid manifests", found)
    if env and any(env not in r.environments for r in rendered):
        missing = [r.doc.file for r in rendered if env not in r.environments]
        raise _usage(f"no overlay '{env}' in: {', '.join(missing)}")
    if to_stdout:
        click.echo(api.manifest_stream(rendered, env), nl=False)
        return
    _summary(len(rendered), out_dir, api.write_rendered(rendered, out_dir, prune=whole_set))


def _summary(jobs: int, out_dir: str, reports: list[Any]) -> None:
    totals = {"written": 0, "unchanged": 0, "removed": 0}
    for name, report in reports:
        for rel in report.kept:
            _note(f"paddlegen: kept {out_dir}/{name}/{rel} (not generated by paddlegen)")
        for key in totals:
            totals[key] += len(getattr(report, key))
    _note(
        f"{jobs} job{'s' if jobs != 1 else ''} in {out_dir}: "
        + ", ".join(f"{n} {key}" for key, n in totals.items())
    )


@cli.command()
@_specs_argument
@_render_options
@click.option("--fix", is_flag=True, help="Rewrite stale output (still exits 1 if it was stale).")
@_format_option
def check(
    specs: tuple[str, ...],
    out_dir: str,
    workload: str | None,
    templates: str | None,
    argocd: bool,
    jobs: int,
    fix: bool,
    fmt: str,
) -> None:
    """Fail (exit 1) with a diff when the output in OUTPUT is not what SPEC renders to.

    \b
    Examples:
      paddlegen check jobs/ -o deploy/
      paddlegen check jobs/ -o deploy/ --fix
    """
    from paddlegen import api

    rendered, whole_set = _plan(specs, workload, templates, argocd, fmt, out_dir, jobs)
    drifts = api.drift(rendered, out_dir, prune=whole_set)
    _show_drift(drifts, out_dir)
    if not drifts:
        _note(f"{len(rendered)} job{'s' if len(rendered) != 1 else ''} in {out_dir}: up to date")
        return
    if fix:
        api.write_rendered(rendered, out_dir, prune=whole_set)
        click.echo(f"paddlegen: rewrote {len(drifts)} stale job(s)", err=True)
    raise click.exceptions.Exit(1)


@cli.command()
@_specs_argument
@_render_options
@_format_option
def diff(
    specs: tuple[str, ...],
    out_dir: str,
    workload: str | None,
    templates: str | None,
    argocd: bool,
    jobs: int,
    fmt: str,
) -> None:
    """Print how OUTPUT differs from what SPEC renders to, without failing.

    \b
    Example:
      paddlegen diff jobs/ -o deploy/ | less
    """
    from paddlegen import api

    rendered, whole_set = _plan(specs, workload, templates, argocd, fmt, out_dir, jobs)
    _show_drift(api.drift(rendered, out_dir, prune=whole_set), out_dir)


def _show_drift(drifts: list[Any], out_dir: str) -> None:
    for name, found in drifts:
        from paddlegen.report import printable

        # A committed file may hold anything: each line escaped, the line breaks kept.
        click.echo(
            "".join(
                printable(line[:-1]) + "\n" if line.endswith("\n") else printable(line)
                for line in found.diff.splitlines(keepends=True)
            ),
            nl=False,
        )
        for label in ("stale", "missing", "extra"):
            for rel in getattr(found, label):
                _note(f"{label}: {Path(out_dir) / name / rel}")


@cli.command()
@_specs_argument
@click.option(
    "--manifests", is_flag=True, help="Also render the specs in memory and validate the manifests."
)
@click.option(
    "--workload", type=click.Choice(WORKLOAD_NAMES), help="Validate as if spec.workload were this."
)
@_validation_options
@_format_option
def validate(
    specs: tuple[str, ...],
    manifests: bool,
    workload: str | None,
    kubeconform: str | None,
    kubernetes_version: str | None,
    fmt: str,
) -> None:
    """Check SPEC files (or folders of them) against the schema and paddlegen's rules.

    With --manifests, the manifests they render to are validated too, with kubeconform
    (strict, offline schemas) or in process when it is not installed. A rendered directory
    (one with paddlegen's kustomization.yaml, or a folder of such) is validated as manifests.

    \b
    Examples:
      paddlegen validate examples/*.yaml
      paddlegen validate --manifests jobs/
      paddlegen validate deploy/
      paddlegen validate --format github jobs/*.yaml
    """
    from paddlegen import api
    from paddlegen.errors import SpecError

    found: list[Diagnostic] = []
    trees: list[Path] = []
    spec_inputs = []
    for item in specs:
        tree = api.rendered_trees(item)
        if tree is None:
            spec_inputs.append(item)
        else:
            trees.extend(tree)
    paths = api.collect_specs(spec_inputs)[0] if spec_inputs else []
    valid = []
    for spec in paths:
        try:
            doc, warnings = api.load_valid(spec, workload)
            found.extend(warnings)
            valid.append((doc, warnings))
        except SpecError as exc:
            found.extend(exc.diagnostics)
    if (manifests and valid) or trees:
        rendered = (
            [api.render_document(doc, workload, warnings=w) for doc, w in valid]
            if manifests
            else []
        )
        found.extend(_check_manifests(rendered, "", kubernetes_version, kubeconform, trees))
    _emit(found, fmt, err=fmt != "json")
    if any(d.is_error for d in found):
        raise click.exceptions.Exit(1)
    if fmt == "text":
        counts = ((len(paths), "spec"), (len(trees), "rendered job"))
        click.echo(
            " and ".join(f"{n} {what}{'s' if n != 1 else ''}" for n, what in counts if n)
            + " valid",
            err=True,
        )


@cli.command()
def schema() -> None:
    """Print the JSON Schema of the spec format (Draft 2020-12).

    \b
    Example:
      paddlegen schema > trainingjob.v1.schema.json
    """
    from paddlegen.resources import spec_schema_path

    click.echo(spec_schema_path().read_text(encoding="utf-8"), nl=False)


@cli.group()
def schemas() -> None:
    """The schemas paddlegen validates with."""


@schemas.command("export")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--kubernetes-version", metavar="X.Y.Z", help="Kubernetes API version to export.")
def schemas_export(directory: str, kubernetes_version: str | None) -> None:
    """Write every schema to DIRECTORY so you can run kubeconform yourself, offline.

    \b
    Example:
      paddlegen schemas export .schemas
      kubeconform -strict \\
        -schema-location \\
          '.schemas/crds/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json' \\
        -schema-location '.schemas/kubernetes/{{.ResourceKind}}{{.KindSuffix}}.json' deploy/
    """
    from paddlegen.schemas_export import export_all

    for line in export_all(directory, kubernetes_version):
        click.echo(line)


@cli.command()
@click.option(
    "--mode",
    type=click.Choice(["applicationset", "applications"]),
    default="applicationset",
    show_default=True,
    help="One ApplicationSet over the rendered tree, or an Application per job.",
)
@click.option(
    "--deploy",
    default="deploy",
    show_default=True,
    type=click.Path(file_okay=False),
    help="The rendered tree (paddlegen render -o), read to list the jobs.",
)
@click.option(
    "-o",
    "--output",
    "out_dir",
    default="argocd",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Folder the Argo CD files are written to.",
)
@click.option("--env", metavar="ENV", help="Deploy environment ENV of jobs with overlays.")
@click.option("--repo-url", required=True, help="The Git repository Argo CD reads.")
@click.option("--revision", default="HEAD", show_default=True, help="Branch, tag or commit.")
@click.option(
    "--path-prefix",
    default="deploy",
    show_default=True,
    help="The rendered tree's folder inside the repository.",
)
@click.option(
    "--dest-server",
    default="https://kubernetes.default.svc",
    show_default=True,
    help="The cluster to deploy to.",
)
@click.option("--dest-namespace", help="Namespace for jobs that name none (created on sync).")
@click.option("--project", default="default", show_default=True, help="The Argo CD project.")
@click.option(
    "--auto-sync/--no-auto-sync",
    default=True,
    show_default=True,
    help="Sync on every commit, pruning and self-healing.",
)
def argocd(
    mode: str,
    deploy: str,
    out_dir: str,
    env: str | None,
    repo_url: str,
    revision: str,
    path_prefix: str,
    dest_server: str,
    dest_namespace: str | None,
    project: str,
    auto_sync: bool,
) -> None:
    """Write Applications (or an ApplicationSet), a Config Management Plugin and health checks.

    \b
    Examples:
      paddlegen argocd --repo-url https://git.example.com/ml/jobs.git
      paddlegen argocd --mode applications --env prod --repo-url URL -o argocd/prod
    """
    from paddlegen import argocd_setup

    target = argocd_setup.Target(
        repo_url, revision, path_prefix, dest_server, dest_namespace, project, auto_sync
    )
    report = argocd_setup.generate(deploy, out_dir, mode, target, env)
    for rel in report.kept:
        _note(f"paddlegen: kept {out_dir}/{rel} (not generated by paddlegen)")
    click.echo(
        f"{out_dir}: {len(report.written)} written, {len(report.unchanged)} unchanged, "
        f"{len(report.removed)} removed",
        err=True,
    )


def main() -> None:
    cli(prog_name="paddlegen")
