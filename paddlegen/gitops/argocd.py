"""What a platform team installs in Argo CD: Applications or ApplicationSet, CMP, health checks."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from paddlegen.errors import InputError, InvalidValueError, OutputError
from paddlegen.gitops.argocd_files import (
    API_VERSION,
    ARGOCD_NAMESPACE,
    SIDECAR_PATCH_FILE,
    ArgocdFiles,
    Plan,
    header,
    moved,
    removed_applications,
    sidecar_removed,
)
from paddlegen.gitops.argocd_health import health_configmap
from paddlegen.output.layout import (
    CUSTOM,
    KUSTOMIZATION,
    base_fallbacks,
    generated_jobs,
    is_generated,
)
from paddlegen.output.writer import WriteReport
from paddlegen.reading import read_bytes
from paddlegen.spec.model import MANAGED_BY
from paddlegen.yamlio import dump_yaml, load_all

IN_CLUSTER = "https://kubernetes.default.svc"
# Deleting an Application (or the ApplicationSet dropping one) deletes its objects too; PVs
# and PVCs stay, they carry Delete=false. In the background, as pruning does
# (PrunePropagationPolicy below): the PaddleFlow operator creates missing pods for a PaddleJob
# even while it is being deleted (v0.3.5's Reconcile never looks at its deletionTimestamp), so
# a foreground deletion, which keeps the job until its pods are gone, can wait on it for good
# (seen live: tests/cluster/test_argocd_envs.py).
FINALIZER = "resources-finalizer.argocd.argoproj.io/background"
MODES = ("applicationset", "applications")
APPLICATIONSET_FILE = "applicationset.yaml"
_MAX_NAME = 63  # Argo CD writes the Application name into the app.kubernetes.io/instance label

Jobs = dict[str, list[str]]  # job directory -> its environments (empty: flat layout)
Namespaces = dict[str, str | None]  # deployable folder (as in application_sources) -> namespace


@dataclass(frozen=True)
class Destination:
    """The cluster an Application deploys to, and the namespace for objects that name none."""

    server: str = IN_CLUSTER
    namespace: str | None = None


@dataclass(frozen=True)
class Target:
    """Where the Applications take their manifests from and where they deploy them."""

    repo_url: str
    revision: str = "HEAD"
    path_prefix: str = "deploy"  # the rendered tree's folder inside the repository
    dest_server: str = IN_CLUSTER
    dest_namespace: str | None = None
    project: str = "default"
    auto_sync: bool = True
    # Environment -> its destination; an environment not listed (and a flat job when no
    # --env is given) deploys to dest_server / dest_namespace.
    destinations: Mapping[str, Destination] = field(default_factory=dict)

    @property
    def prefix(self) -> str:
        """``path_prefix`` as a clean relative POSIX path; "" for the repository root."""
        cleaned = posixpath.normpath(self.path_prefix.strip().strip("/") or ".")
        return "" if cleaned == "." else cleaned

    def destination(self, env: str | None) -> Destination:
        """Where an Application of environment ``env`` (None: no environment) deploys."""
        default = Destination(self.dest_server, self.dest_namespace)
        return self.destinations.get(env, default) if env is not None else default


_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def parse_destination(text: str) -> tuple[str, Destination]:
    """``ENV=SERVER[,NAMESPACE]`` (the --destination option) as an environment and where it
    deploys."""
    env, sep, rest = text.partition("=")
    server, _, namespace = rest.partition(",")
    if not sep or not server.strip():
        raise InvalidValueError(f"{text!r} is not ENV=SERVER[,NAMESPACE]")
    for what, value in (("environment", env), ("namespace", namespace)):
        if (value or what == "environment") and not _DNS_LABEL.fullmatch(value):
            raise InvalidValueError(f"{what} {value!r} in {text!r} is not a DNS-1123 label")
    return env, Destination(server.strip(), namespace or None)


def parse_destinations(texts: Iterable[str]) -> dict[str, Destination]:
    """Each ``ENV=SERVER[,NAMESPACE]`` (--destination, repeated) by its environment; an
    environment given twice is refused."""
    found: dict[str, Destination] = {}
    for text in texts:
        env, dest = parse_destination(text)
        if env in found:
            raise InvalidValueError(f"environment {env!r} is given twice")
        found[env] = dest
    return found


def rendered_namespaces(deploy: Path, jobs: Jobs) -> Namespaces:
    """The namespace each deployable folder's kustomization gives its objects (an overlay
    without one keeps its base's; None: the objects name none)."""

    def namespace(folder: str) -> str | None:
        try:
            docs = load_all(read_bytes(deploy / folder / KUSTOMIZATION).decode("utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            return None  # `paddlegen check` reports a damaged tree; here it names no namespace
        data = docs[0] if docs else None
        value = data.get("namespace") if isinstance(data, dict) else None
        return value if isinstance(value, str) else None

    found: Namespaces = {}
    for job, envs in jobs.items():
        if not envs:
            found[job] = namespace(job)
            continue
        found[f"{job}/base"] = base = namespace(f"{job}/base")
        for env in envs:
            found[f"{job}/overlays/{env}"] = namespace(f"{job}/overlays/{env}") or base
    return found


def rendered_jobs(deploy: Path) -> Jobs:
    """The job directories paddlegen generated in ``deploy``, each with its environments."""
    jobs: Jobs = {}
    for name in generated_jobs(deploy):
        overlays = deploy / name / "overlays"
        jobs[name] = (
            sorted(p.name for p in overlays.iterdir() if is_generated(p / KUSTOMIZATION))
            if overlays.is_dir()
            else []
        )
    return jobs


def _sync_policy(target: Target, namespace: str | None) -> dict[str, Any]:
    # Background deletion, as for the Application itself (FINALIZER): also how a sync deletes
    # the previous run's hooks (BeforeHookCreation, paddlegen/render/syncwaves.py).
    # RespectIgnoreDifferences: a sync keeps the live values of what Kueue writes into a queued
    # job (gitops/kueue_diff.py) instead of applying Git's over them. ServerSideApply: a sync
    # writes only the fields paddlegen renders, and merges lists by their keys; with
    # client-side apply, re-applying a TrainJob in a cluster with Kueue sends its whole
    # spec.runtimePatches list without the entry Kueue's webhook appended
    # (trainjob_webhook.go:91-102 at v0.19.2), which Trainer refuses while the TrainJob runs
    # (v2.3.0 pkg/runtime/framework/plugins/jobset/jobset.go:214-233): a sync that re-applies it
    # (by hand, or self-heal when Argo CD's cache has not seen the object it just created)
    # failed. With it Argo CD also diffs by structured merge (controller/state.go:908-912).
    # Not ApplyOutOfSyncOnly: with it a sync by hand of a failed run, whose run record is in
    # sync, first only deletes the old hook (BeforeHookCreation), records no result, and on
    # resuming reads the last operation's failed result for it: the sync fails and the job
    # does not run again (seen live in test_argocd_runtime_safety.py at v3.5.1).
    options = [
        "PrunePropagationPolicy=background",
        "RespectIgnoreDifferences=true",
        "ServerSideApply=true",
    ]
    if namespace:
        # Only the destination's namespace is created (Argo CD skips an empty one), and only
        # when missing: one that exists keeps its labels and owner.
        options.append("CreateNamespace=true")
    policy: dict[str, Any] = {}
    if target.auto_sync:
        policy["automated"] = {"prune": True, "selfHeal": True}
        # No automated retry of a failed sync (Argo CD's default is 5, controller/
        # appcontroller.go:2383): each retry runs the hooks again, that is a failed job's data
        # preparation and training, beyond the retries its own backoffLimit allowed. Argo CD
        # never retries a failed revision otherwise; a new commit or a sync by hand does.
        policy["retry"] = {"limit": 0}
    policy["syncOptions"] = options
    return policy


def _app_spec(target: Target, server: str, namespace: str | None, path: str) -> dict[str, Any]:
    """An Application's spec; ``namespace`` is the one its objects go to (the folder's
    kustomization's, else the destination's), made the destination so that Argo CD creates
    it: the rendered tree has no Namespace object."""
    # Imported here: `render` imports this module for its summary, which needs none of it.
    from paddlegen.gitops.kueue_diff import ignore_differences

    destination = {"server": server}
    if namespace:
        destination["namespace"] = namespace
    return {
        "project": target.project,
        "source": {"repoURL": target.repo_url, "targetRevision": target.revision, "path": path},
        "destination": destination,
        "syncPolicy": _sync_policy(target, namespace),
        "ignoreDifferences": ignore_differences(),
    }


def _folder_env(folder: str, env: str | None) -> str | None:
    """The environment an Application of ``folder`` deploys: its overlay's, else ``env``."""
    parts = folder.split("/")
    return parts[2] if len(parts) == 3 and parts[1] == "overlays" else env


def _metadata(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": ARGOCD_NAMESPACE,
        "labels": {"app.kubernetes.io/managed-by": MANAGED_BY},
        "finalizers": [FINALIZER],
    }


def application_sources(jobs: Jobs, env: str | None = None) -> dict[str, str]:
    """Application name -> its folder relative to the rendered tree.

    A flat job is one Application named after it; a job with overlays is one per environment,
    ``<job>-<env>``. With ``env``, every job deploys that environment (a flat job is the same
    in all of them, a job without that overlay its base: ``base_fallbacks``) and every name
    ends in ``-<env>``, so environments never share a name.
    """
    fallbacks = base_fallbacks(env, jobs) if env is not None else []
    sources: dict[str, str] = {}
    for job, envs in sorted(jobs.items()):
        if not envs:
            sources[f"{job}-{env}" if env else job] = job
        elif job in fallbacks:
            sources[f"{job}-{env}"] = f"{job}/base"
        for name in envs if env is None else [env] if env in envs else []:
            sources[f"{job}-{name}"] = f"{job}/overlays/{name}"
    for name in sources:
        if len(name) > _MAX_NAME:
            raise OutputError(
                f"Application name '{name}' has {len(name)} characters; Argo CD "
                f"puts it in a label, which allows {_MAX_NAME}"
            )
    return sources


def renamed_applications(job: str, report: WriteReport) -> tuple[list[str], list[str]] | None:
    """The Application names of ``job`` (as Argo CD files written without --env name them)
    before and after a render that moved it between the flat and the overlay layout; None
    when its layout stayed. Such a rename deletes the old Application, and with it, by its
    resources finalizer, the live objects the new one then creates again."""

    def envs(paths: list[str]) -> list[str]:
        parts = (p.split("/") for p in paths)
        return sorted(
            {p[1] for p in parts if len(p) == 3 and p[0] == "overlays" and p[2] == KUSTOMIZATION}
        )

    now = report.written + report.unchanged
    if KUSTOMIZATION in report.removed and envs(now):
        return [job], [f"{job}-{env}" for env in envs(now)]
    if f"base/{KUSTOMIZATION}" in report.removed and KUSTOMIZATION in now:
        return [f"{job}-{env}" for env in envs(report.removed)], [job]
    return None


def applications(
    jobs: Jobs, target: Target, env: str | None = None, namespaces: Namespaces | None = None
) -> Plan:
    """``applications/<name>.yaml``: one Application per job (per environment with overlays);
    ``namespaces`` (from the rendered tree) are their destination namespaces."""
    files: Plan = {}
    for name, folder in application_sources(jobs, env).items():
        dest = target.destination(_folder_env(folder, env))
        namespace = (namespaces or {}).get(folder) or dest.namespace
        app = {
            "apiVersion": API_VERSION,
            "kind": "Application",
            "metadata": _metadata(name),
            "spec": _app_spec(
                target, dest.server, namespace, posixpath.join(target.prefix, folder)
            ),
        }
        files[f"applications/{name}.yaml"] = header(
            f"Argo CD Application for {folder}; apply it in namespace {ARGOCD_NAMESPACE}."
        ) + dump_yaml(app)
    return files


def application_set(target: Target, env: str | None = None, fallbacks: Sequence[str] = ()) -> Plan:
    """``applicationset.yaml``: ApplicationSets over every rendered job, now and later.

    They use the git *files* generator on each job's ``kustomization.yaml`` rather than the
    directory generator on ``<deploy>/*``: a job with overlays has no kustomization at its
    root (only in ``base/`` and ``overlays/<env>/``), so a directory generator would make an
    empty Application for it. Matching the kustomizations picks exactly the deployable
    folders: flat jobs, and the overlays (of ``env``, or of every environment). With ``env``,
    the jobs that lack that overlay (``fallbacks``, known when this is written) deploy their
    base: a glob cannot say "base only where overlays/<env> is missing", so they are listed,
    and a job added later without that overlay needs `paddlegen argocd` run again.

    Without ``env``, each environment with a destination of its own (``target.destinations``)
    gets an ApplicationSet of its own, and the one for the rest excludes its overlays: one
    template has one destination, and a generator's template would merge field by field.

    Flat jobs, overlays and listed bases are separate generators, because Argo CD's default
    file globbing (`git ls-files`) lets ``*`` match ``/`` as well: ``<deploy>/*/kustomization.yaml``
    also matches every base and overlay (and each job's own ``custom/`` Component), so the
    flat generator excludes those, and a
    generator's excludes apply to all its includes. With the opt-in globbing
    (``--enable-new-git-file-globbing``), ``*`` stops at ``/`` and the excludes match nothing
    more: the same Applications either way.

    The files generator also makes each kustomization's fields parameters: an Application's
    destination namespace is its kustomization's ``namespace`` (paddlegen writes it in every
    kustomization of a job that has one), else the destination's.
    """
    root = f"{target.prefix}/" if target.prefix else ""
    depth = len(target.prefix.split("/")) if target.prefix else 0
    job = f"{{{{ index .path.segments {depth} }}}}"
    flat: list[dict[str, Any]] = [
        {"path": f"{root}*/{KUSTOMIZATION}"},
        {"path": f"{root}*/base/{KUSTOMIZATION}", "exclude": True},
        {"path": f"{root}*/overlays/*/{KUSTOMIZATION}", "exclude": True},
        # a job's own Component (output/layout.py CUSTOM): part of the job, no Application
        {"path": f"{root}*/{CUSTOM}/*", "exclude": True},
    ]

    def overlays(name: str) -> dict[str, Any]:
        return {"path": f"{root}*/overlays/{name}/{KUSTOMIZATION}"}

    if env is not None:
        bases = [{"path": f"{root}{j}/base/{KUSTOMIZATION}"} for j in fallbacks]
        generators = [flat, [overlays(env)], *([bases] if bases else [])]
        sets = [_appset(target, env, f"{job}-{env}", generators)]
    else:
        own = sorted(target.destinations)
        # <job> for a flat job, <job>-<env> for an overlay: as in applications()
        is_overlay = f"gt (len .path.segments) {depth + 1}"
        name = f"{job}{{{{ if {is_overlay} }}}}-{{{{ .path.basename }}}}{{{{ end }}}}"
        rest: list[dict[str, Any]] = [
            overlays("*"),
            *({**overlays(e), "exclude": True} for e in own),
        ]
        sets = [_appset(target, None, name, [flat, rest])]
        sets += [_appset(target, e, f"{job}-{e}", [[overlays(e)]]) for e in own]
    where = f"{root or './'}*" + (f" (environment {env})" if env else "")
    return {
        APPLICATIONSET_FILE: header(
            f"Argo CD ApplicationSet: an Application per rendered job in {where};\n"
            f"apply it in namespace {ARGOCD_NAMESPACE}."
        )
        + "---\n".join(dump_yaml(appset) for appset in sets)
    }


def _appset(
    target: Target, env: str | None, name: str, generators: list[list[dict[str, Any]]]
) -> dict[str, Any]:
    """One ApplicationSet: a git files generator per list of file patterns in
    ``generators``, its Applications named by the template ``name`` and deploying to
    ``env``'s destination."""
    dest = target.destination(env)
    # `index` yields nothing for a missing key where `.namespace` would fail (missingkey=error).
    namespace = (
        '{{ with index . "namespace" }}{{ . }}{{ else }}' + (dest.namespace or "") + "{{ end }}"
    )
    return {
        "apiVersion": API_VERSION,
        "kind": "ApplicationSet",
        "metadata": {
            "name": f"paddlegen-jobs-{env}" if env else "paddlegen-jobs",
            "namespace": ARGOCD_NAMESPACE,
            "labels": {"app.kubernetes.io/managed-by": MANAGED_BY},
        },
        "spec": {
            "goTemplate": True,
            "goTemplateOptions": ["missingkey=error"],
            "generators": [
                {"git": {"repoURL": target.repo_url, "revision": target.revision, "files": files}}
                for files in generators
            ],
            "template": {
                "metadata": _metadata(name),
                "spec": _app_spec(target, dest.server, namespace, "{{ .path.path }}"),
            },
        },
    }


def shared_objects(
    target: Target, jobs: Jobs, env: str | None = None, namespaces: Namespaces | None = None
) -> list[str]:
    """Pairs of Applications that would deploy the same job's objects into one namespace of
    one cluster, each as a sentence. Both would own them: Argo CD reports them as shared,
    each sync undoes the other's changes, and deleting either deletes them (finalizer)."""
    owner: dict[tuple[str, str, str], str] = {}
    clashes = []
    for name, folder in application_sources(jobs, env).items():
        dest = target.destination(_folder_env(folder, env))
        namespace = (namespaces or {}).get(folder) or dest.namespace or ""
        key = (dest.server, namespace, folder.split("/")[0])
        if key in owner:
            where = f"namespace {namespace}" if namespace else "the same namespace"
            clashes.append(
                f"Applications {owner[key]} and {name} would both deploy the objects of "
                f"{key[2]} into {where} of {dest.server}"
            )
        owner.setdefault(key, name)
    return clashes


def without_namespace(
    target: Target, jobs: Jobs, env: str | None = None, namespaces: Namespaces | None = None
) -> list[str]:
    """The Applications whose objects name no namespace and get none from their destination.
    Argo CD reports "Namespace for <object> is missing" for each and cannot sync it
    (controller/state.go:1006-1007 at v3.5.1)."""
    return [
        name
        for name, folder in application_sources(jobs, env).items()
        if not (namespaces or {}).get(folder)
        and not target.destination(_folder_env(folder, env)).namespace
    ]


def plan(
    mode: str,
    target: Target,
    jobs: Jobs,
    env: str | None = None,
    namespaces: Namespaces | None = None,
    sidecar_image: str | None = None,
    sidecar: bool = False,
    kept: Mapping[str, str] | None = None,
) -> Plan:
    """Every file of the output folder, in memory; ``namespaces`` (from the rendered tree)
    tells which Applications would share objects. With ``sidecar`` (implied by
    ``sidecar_image``, else the placeholder, and by ``kept``, older versions' sidecars) the
    plugin sidecar's files too: only a repository that commits specs and lets Argo CD render
    them needs it."""
    if mode not in MODES:
        raise InvalidValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    unknown = sorted(set(target.destinations) - {e for envs in jobs.values() for e in envs})
    if jobs and unknown:
        raise InputError(
            f"--destination names environments no job has: {', '.join(unknown)} "
            f"(environments: {', '.join(sorted({e for v in jobs.values() for e in v})) or 'none'})"
        )
    clashes = shared_objects(target, jobs, env, namespaces)
    if clashes:
        raise OutputError(
            "; ".join(clashes) + ". Give each environment its own namespace "
            "(overlays.<env>.metadata.namespace in the spec) or cluster "
            "(--destination ENV=SERVER[,NAMESPACE]), or deploy one environment (--env ENV)"
        )
    if mode == "applications":
        if not jobs:
            raise InputError("no rendered jobs found (run `paddlegen render` first)")
        files = applications(jobs, target, env, namespaces)
    else:
        fallbacks = base_fallbacks(env, jobs) if env is not None and jobs else []
        files = application_set(target, env, fallbacks)
    files.update(health_configmap())
    if sidecar or sidecar_image or kept:
        # Imported here: `render` imports this module for its summary, which needs none of it.
        from paddlegen.gitops.argocd_sidecar import (
            cmp_plugin,
            placeholder_image,
            sidecar_dockerfile,
            sidecar_patch,
        )

        files.update(cmp_plugin())
        files.update(sidecar_dockerfile())
        files.update(sidecar_patch(sidecar_image or placeholder_image(), kept))
    return files


def placements(target: Target, jobs: Jobs, env: str | None = None) -> list[str]:
    """With --destination, where each Application deploys and why, a sentence each: a job
    without overlays, or an environment no --destination names, goes to --dest-server.
    Nothing without --destination: every Application goes to --dest-server then."""
    if not target.destinations:
        return []
    found = []
    for name, folder in application_sources(jobs, env).items():
        folder_env = _folder_env(folder, env)
        dest = target.destination(folder_env)
        if folder_env in target.destinations:
            why = f"--destination {folder_env}"
        elif folder_env is None:
            why = "--dest-server: its job has no overlays"
        else:
            why = f"--dest-server: no --destination names environment {folder_env}"
        found.append(f"Application {name} deploys to {dest.server} ({why})")
    return found


def generate(
    deploy: str | Path,
    out_dir: str | Path,
    mode: str,
    target: Target,
    env: str | None = None,
    sidecar_image: str | None = None,
    sidecar: bool = False,
    kept: Mapping[str, str] | None = None,
) -> ArgocdFiles:
    """Read the rendered tree, plan the Argo CD files and write them."""
    from paddlegen.output.claim import ARGOCD
    from paddlegen.output.folder import write_folder

    jobs = rendered_jobs(Path(deploy))
    namespaces = rendered_namespaces(Path(deploy), jobs)
    from paddlegen.gitops.argocd_sidecar import dropped_sidecars, patch_text

    files = plan(mode, target, jobs, env, namespaces, sidecar_image, sidecar, kept)
    before = patch_text(Path(out_dir) / SIDECAR_PATCH_FILE)
    report = write_folder(out_dir, ARGOCD, files)
    return ArgocdFiles(
        report,
        base_fallbacks(env, jobs) if env is not None and jobs else [],
        without_namespace(target, jobs, env, namespaces),
        placements(target, jobs, env),
        moved(report),
        sidecar_removed(report),
        removed_applications(report),
        dropped_sidecars(before, files),
    )
