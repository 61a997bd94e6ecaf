"""argocd: the Argo CD Applications or ApplicationSet, plugin and health checks for a tree;
kueue: the Kueue objects a platform team sets up once."""

from __future__ import annotations

from typing import Any

import click

from paddlegen.cli.common import (
    emit,
    env_name,
    errors_format_option,
    format_option,
    note,
    note_backend,
    undone_on_spec_errors,
    validation_options,
)


def _parsed(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> Any:
    """The values of --destination or --keep-sidecar, parsed; a bad one is a usage error."""
    from paddlegen.errors import InvalidValueError
    from paddlegen.gitops import argocd, argocd_sidecar

    parsers = {
        "destinations": argocd.parse_destinations,
        "kept": argocd_sidecar.parse_kept_sidecars,
    }
    try:
        return parsers[str(param.name)](values)
    except InvalidValueError as exc:
        raise click.BadParameter(exc.message, ctx, param) from None


@click.command()
@errors_format_option
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
@click.option(
    "--env",
    metavar="ENV",
    callback=env_name,
    help="Deploy environment ENV of jobs with overlays.",
)
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
@click.option(
    "--destination",
    "destinations",
    multiple=True,
    metavar="ENV=SERVER[,NAMESPACE]",
    callback=_parsed,
    help="Where environment ENV deploys (repeatable); others use --dest-server/--dest-namespace.",
)
@click.option("--project", default="default", show_default=True, help="The Argo CD project.")
@click.option(
    "--auto-sync/--no-auto-sync",
    default=True,
    show_default=True,
    help="Sync on every commit, pruning and self-healing.",
)
@click.option(
    "--sidecar",
    is_flag=True,
    help="Also write the plugin sidecar (OUTPUT/sidecar/, OUTPUT/patches/"
    "argocd-repo-server-sidecar.yaml), for repositories that commit specs and let Argo CD "
    "render them.",
)
@click.option(
    "--sidecar-image",
    metavar="IMAGE",
    help="The plugin sidecar's image, built from OUTPUT/sidecar/Dockerfile (implies --sidecar) "
    "[default: a placeholder at registry.example.invalid, which never resolves].",
)
@click.option(
    "--keep-sidecar",
    "kept",
    multiple=True,
    metavar="VERSION=IMAGE",
    callback=_parsed,
    help="Keep an older paddlegen's sidecar running beside this one's (repeatable; implies "
    "--sidecar): Applications that name its plugin keep its rendering, so their jobs do not "
    "run again.",
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
    destinations: dict[str, Any],
    project: str,
    auto_sync: bool,
    sidecar: bool,
    sidecar_image: str | None,
    kept: dict[str, str],
) -> None:
    """Write Applications (or an ApplicationSet) over the rendered tree and health checks;
    with --sidecar, a Config Management Plugin and its sidecar as well.

    \b
    OUTPUT/applicationset.yaml    kubectl apply -f OUTPUT
    OUTPUT/applications/*.yaml    (--mode applications) kubectl apply -f OUTPUT/applications
    OUTPUT/patches/argocd-cm-health.yaml   merge into argocd-cm (kubectl patch, its header)
    OUTPUT/sidecar/plugin.yaml    (--sidecar) the plugin sidecar image's configuration
    OUTPUT/sidecar/Dockerfile     (--sidecar) builds that image (paddlegen's wheel beside it)
    OUTPUT/patches/argocd-repo-server-sidecar.yaml   (--sidecar) adds the sidecar to
                                  argocd-repo-server (a kustomize patch of Argo CD's install)

    With --destination, stderr says where each Application deploys: a job without overlays,
    or an environment no --destination names, deploys to --dest-server.

    Each job runs as a Sync hook, so its sync lasts as long as its training: keep Argo CD's
    controller.sync.timeout.seconds (argocd-cmd-params-cm) at 0 or above the longest run, as
    a sync that outlasts it terminates its running hooks.

    \b
    Examples:
      paddlegen argocd --repo-url https://git.example.com/ml/jobs.git
      paddlegen argocd --mode applications --env prod --repo-url URL -o argocd/prod
      paddlegen argocd --repo-url URL --destination prod=https://prod.example:6443,ml
    """
    from paddlegen.gitops import argocd as argocd_setup

    target = argocd_setup.Target(
        repo_url,
        revision,
        path_prefix,
        dest_server,
        dest_namespace,
        project,
        auto_sync,
        destinations,
    )
    generated = argocd_setup.generate(
        deploy, out_dir, mode, target, env, sidecar_image, sidecar, kept
    )
    for line in generated.notes(out_dir, env):
        note(f"paddlegen: {line}")
    click.echo(generated.report.summary(out_dir), err=True)


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    "out_dir",
    default="kueue",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Folder the Kueue objects and their kustomization.yaml are written to.",
)
@validation_options
@format_option
def kueue(
    file: str,
    out_dir: str,
    kubeconform: str | None,
    kubernetes_version: str | None,
    schema_locations: tuple[str, ...],
    ignore_missing_schemas: bool,
    fmt: str,
) -> None:
    """Write Kueue's ResourceFlavors, ClusterQueues, LocalQueues and WorkloadPriorityClasses
    (kueue.x-k8s.io/v1beta2) from FILE, a KueueSetup of flavors, teams and their quotas.

    Each team gets a ClusterQueue and, in each of its namespaces, a LocalQueue of its name:
    the queue a spec names in scheduling.kueue.queue. With waitForPodsReady, FILE also bounds
    how often Kueue queues again a job whose pods never start: that is written as Kueue's
    manager configuration (ConfigMap kueue-system/kueue-manager-config, replacing the one of
    Kueue's install; restart Kueue after it changes); FILE's install names a Helm release's
    ConfigMap instead. The objects are validated against
    Kueue's CRD schemas (kubeconform when installed) before anything is written; an invalid
    FILE is reported like a spec, at its lines. Deploy OUTPUT with an Argo CD Application or
    `kubectl apply -k OUTPUT`. Schema of FILE: schemas/kueue.v1.schema.json.

    \b
    Examples:
      paddlegen kueue platform/kueue.yaml
      paddlegen kueue platform/kueue.yaml -o clusters/prod/kueue
    """
    from paddlegen.gitops import kueue_setup
    from paddlegen.validate.locations import ExtraSchemas

    extra = ExtraSchemas(schema_locations, ignore_missing_schemas)
    with undone_on_spec_errors("nothing written", fmt):
        generated = kueue_setup.generate(file, out_dir, kubeconform, kubernetes_version, extra)
    emit(generated.warnings, fmt)
    note_backend(generated.backend)
    for line in generated.report.kept_notes(out_dir):
        note(f"paddlegen: {line}")
    click.echo(generated.report.summary(out_dir), err=True)
    note(f"paddlegen: {generated.restart_note(file)}")


@click.command(context_settings={"ignore_unknown_options": True})
@errors_format_option
@click.option(
    "--socket",
    "path",
    envvar="PADDLEGEN_RENDERER_SOCKET",
    required=True,
    metavar="PATH",
    help="The Unix socket to serve at (a stale one left there is replaced) "
    "[env: PADDLEGEN_RENDERER_SOCKET].",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=60.0,
    show_default=True,
    help="Seconds one render may take; a longer one is cut off, and its generate exits 2 "
    "saying so.",
)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def serve(path: str, timeout: float, command: tuple[str, ...]) -> None:
    """Serve renders to the Argo CD plugin's generate, warm, over a Unix socket.

    The plugin sidecar `argocd --sidecar` writes starts it as its command: paddlegen is
    loaded once, and each Application's generate is a render by a worker forked from it,
    with the output, messages and exit code of `paddlegen render`. With COMMAND (after
    `--`), the renderer runs beside it and this process becomes COMMAND (the sidecar's
    argocd-cmp-server), whose plugin commands find the socket in
    PADDLEGEN_RENDERER_SOCKET. A generate that finds no renderer renders cold.
    """
    from paddlegen.cli import main
    from paddlegen.gitops.renderer import serve as serve_renders

    serve_renders(path, main, timeout, list(command))
