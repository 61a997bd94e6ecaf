"""validate, schema, schemas export: specs and manifests checked, schemas handed out."""

from __future__ import annotations

import click

from paddlegen.cli.common import (
    WORKLOAD_NAMES,
    emit,
    errors_format_option,
    format_option,
    ignore_option,
    no_specs_error,
    note_backend,
    read_inputs,
    server_options,
    server_target,
    specs_argument,
    stdout_is_output,
    validation_options,
)


@click.command()
@specs_argument
@click.option(
    "--manifests/--no-manifests",
    default=True,
    help="Render the specs in memory and validate the manifests too (default: in process; "
    "given explicitly: with kubeconform when it is installed).",
)
@click.option(
    "--workload", type=click.Choice(WORKLOAD_NAMES), help="Validate as if spec.workload were this."
)
@ignore_option
@validation_options
@server_options
@format_option
def validate(
    specs: tuple[str, ...],
    manifests: bool,
    workload: str | None,
    ignore: list[str],
    kubeconform: str | None,
    kubernetes_version: str | None,
    schema_locations: tuple[str, ...],
    ignore_missing_schemas: bool,
    server: bool,
    context: str | None,
    kubeconfig: str | None,
    fmt: str,
) -> None:
    """Check SPEC files (or folders of them) against the schema and paddlegen's rules, and the
    manifests they render to (every environment), in process: fast and offline, as a
    pre-commit hook needs. --no-manifests checks the specs alone.

    A rendered directory (one with paddlegen's kustomization.yaml, or a folder of such) is
    validated as manifests, its overlays' patched objects included, and each job's custom/
    Component is built (with kustomize when it is installed). Rendered directories, an
    explicit --manifests or --kubeconform PATH use kubeconform (strict, offline schemas) when
    it is installed, and say so when it is not.

    --server also sends every spec's objects (base and overlays) to an API server with your
    kubectl, as a server-side apply dry-run: nothing is created; each refusal or warning is a
    finding at the spec position it maps to. A cluster that cannot answer (no kubectl, not
    reachable, CRDs missing) is exit 2.

    \b
    Examples:
      paddlegen validate examples/*.yaml
      paddlegen validate --server --context staging jobs/
      paddlegen validate --no-manifests jobs/
      paddlegen validate deploy/
      paddlegen validate --format github jobs/*.yaml
      paddlegen validate --format sarif jobs/ > paddlegen.sarif
    """
    from paddlegen.api import Request, run_validate
    from paddlegen.validate.inputs import any_rendered_tree

    source = click.get_current_context().get_parameter_source
    asked = source("manifests") is not click.core.ParameterSource.DEFAULT or kubeconform
    target = server_target(server, context, kubeconfig)
    if target and any_rendered_tree(specs):
        raise click.UsageError(
            "--server validates specs; for a rendered tree run "
            "kubectl apply --server-side --dry-run=server -k DIR"
        )
    result = run_validate(
        Request(
            specs,
            workload=workload,
            ignore=ignore,
            manifests=manifests,
            kubernetes_version=kubernetes_version,
            kubeconform=kubeconform,
            prefer_kubeconform=bool(asked),
            schema_locations=schema_locations,
            ignore_missing_schemas=ignore_missing_schemas,
            server=target,
        )
    )
    if result.empty:
        raise no_specs_error(specs)
    read_inputs(result.files)
    if asked or result.trees:
        note_backend(result.backend)
    result.refuse_invalid()  # the group's handler lists the findings
    emit(result.diagnostics, fmt)
    if fmt == "text":
        click.echo(result.summary(), err=True)


@click.command()
@errors_format_option
def schema() -> None:
    """Print the JSON Schema of the spec format (Draft 2020-12).

    \b
    Example:
      paddlegen schema > trainingjob.v1.schema.json
    """
    from paddlegen.resources import spec_schema_path

    stdout_is_output()
    click.echo(spec_schema_path().read_text(encoding="utf-8"), nl=False)


@click.group()
def schemas() -> None:
    """The schemas paddlegen validates with."""


@schemas.command("export")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--kubernetes-version", metavar="X.Y.Z", help="Kubernetes API version to export.")
@click.option(
    "--spec-only",
    is_flag=True,
    help="Write the spec schema alone (140 KB), which editors read through a spec's modeline, "
    "not the 3 MB of Kubernetes' and the operators' schemas kubeconform reads.",
)
@errors_format_option
def schemas_export(directory: str, kubernetes_version: str | None, spec_only: bool) -> None:
    """Write every schema to DIRECTORY so you can run kubeconform yourself, offline.

    \b
    Example:
      paddlegen schemas export .schemas
      kubeconform -strict \\
        -schema-location \\
          '.schemas/crds/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json' \\
        -schema-location '.schemas/kubernetes/{{.ResourceKind}}{{.KindSuffix}}.json' \\
        -ignore-filename-pattern '(^|/)kustomization\\.yaml$' \\
        -ignore-filename-pattern '(^|/)(patch|delete)-[^/]*$' deploy/

    The command it prints leaves out kustomization.yaml and overlay patch files, which are
    not objects. For an editor, commit the spec schema alone:

    \b
      paddlegen schemas export --spec-only schemas
    """
    from paddlegen.validate.export import export_all

    stdout_is_output()  # the kubeconform command line to run
    for line in export_all(directory, kubernetes_version, spec_only):
        click.echo(line)
