"""What a platform team installs in Argo CD: Applications or ApplicationSet, CMP, health checks."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paddlegen.errors import InputError, InvalidValueError, OutputError
from paddlegen.output.layout import (
    HEADER,
    KUSTOMIZATION,
    base_fallbacks,
    generated_jobs,
    is_generated,
)
from paddlegen.output.writer import WriteReport
from paddlegen.resources import templates_dir
from paddlegen.spec.model import MANAGED_BY
from paddlegen.yamlio import dump_yaml

ARGOCD_NAMESPACE = "argocd"
API_VERSION = "argoproj.io/v1alpha1"
IN_CLUSTER = "https://kubernetes.default.svc"
# Deleting an Application (or the ApplicationSet dropping one) deletes its objects too; PVCs
# stay, they carry Delete=false.
FINALIZER = "resources-finalizer.argocd.argoproj.io"
MODES = ("applicationset", "applications")
APPLICATIONSET_FILE = "applicationset.yaml"
CMP_FILE = "cmp-plugin.yaml"
HEALTH_FILE = "argocd-cm-health.yaml"
PLUGIN_NAME = "paddlegen"
ENV_VARIABLE = "PADDLEGEN_ENV"  # the Application's plugin.env; the CMP sees ARGOCD_ENV_<name>
# argocd-cm key suffix (<group>_<Kind>) -> its Lua script in templates/_argocd/health/.
HEALTH_CHECKS = {
    "batch.paddlepaddle.org_PaddleJob": "paddlejob.lua",
    "kubeflow.org_PaddleJob": "kubeflow-paddlejob.lua",
    "scheduling.volcano.sh_PodGroup": "podgroup.lua",
}
HEALTH_KEY_PREFIX = "resource.customizations.health."
_MAX_NAME = 63  # Argo CD writes the Application name into the app.kubernetes.io/instance label

Plan = dict[str, str]  # relative path in the output folder -> file text
Jobs = dict[str, list[str]]  # job directory -> its environments (empty: flat layout)


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

    @property
    def prefix(self) -> str:
        """``path_prefix`` as a clean relative POSIX path; "" for the repository root."""
        cleaned = posixpath.normpath(self.path_prefix.strip().strip("/") or ".")
        return "" if cleaned == "." else cleaned


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


def _header(purpose: str) -> str:
    # HEADER marks the file as generated: re-running `paddlegen argocd` may replace it.
    return HEADER + "".join(f"# {line}\n" for line in purpose.splitlines())


def _sync_policy(target: Target) -> dict[str, Any]:
    # ApplyOutOfSyncOnly: a sync started by one changed object leaves finished Jobs alone
    # (re-applying them with Replace=true would fail on their immutable, generated fields).
    options = ["ApplyOutOfSyncOnly=true"]
    if target.dest_namespace:
        options.append("CreateNamespace=true")  # only a named destination can be created
    policy: dict[str, Any] = {}
    if target.auto_sync:
        policy["automated"] = {"prune": True, "selfHeal": True}
    policy["syncOptions"] = options
    return policy


def _app_spec(target: Target, path: str) -> dict[str, Any]:
    destination = {"server": target.dest_server}
    if target.dest_namespace:
        destination["namespace"] = target.dest_namespace
    return {
        "project": target.project,
        "source": {"repoURL": target.repo_url, "targetRevision": target.revision, "path": path},
        "destination": destination,
        "syncPolicy": _sync_policy(target),
    }


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


def applications(jobs: Jobs, target: Target, env: str | None = None) -> Plan:
    """``applications/<name>.yaml``: one Application per job (per environment with overlays)."""
    files: Plan = {}
    for name, folder in application_sources(jobs, env).items():
        app = {
            "apiVersion": API_VERSION,
            "kind": "Application",
            "metadata": _metadata(name),
            "spec": _app_spec(target, posixpath.join(target.prefix, folder)),
        }
        files[f"applications/{name}.yaml"] = _header(
            f"Argo CD Application for {folder}; apply it in namespace {ARGOCD_NAMESPACE}."
        ) + dump_yaml(app)
    return files


def application_set(target: Target, env: str | None = None, fallbacks: Sequence[str] = ()) -> Plan:
    """``applicationset.yaml``: one ApplicationSet over every rendered job, now and later.

    It uses the git *files* generator on each job's ``kustomization.yaml`` rather than the
    directory generator on ``<deploy>/*``: a job with overlays has no kustomization at its
    root (only in ``base/`` and ``overlays/<env>/``), so a directory generator would make an
    empty Application for it. Matching the kustomizations picks exactly the deployable
    folders: flat jobs, and the overlays (of ``env``, or of every environment). With ``env``,
    the jobs that lack that overlay (``fallbacks``, known when this is written) deploy their
    base: a glob cannot say "base only where overlays/<env> is missing", so they are listed,
    and a job added later without that overlay needs `paddlegen argocd` run again.
    """
    root = f"{target.prefix}/" if target.prefix else ""
    depth = len(target.prefix.split("/")) if target.prefix else 0
    job = f"index .path.segments {depth}"
    if env is None:  # <job> for a flat job, <job>-<env> for an overlay: as in applications()
        name = (
            f"{{{{ {job} }}}}{{{{ if gt (len .path.segments) {depth + 1} }}}}"
            "-{{ .path.basename }}{{ end }}"
        )
    else:
        name = f"{{{{ {job} }}}}-{env}"
    files = [
        {"path": f"{root}*/{KUSTOMIZATION}"},
        {"path": f"{root}*/overlays/{env or '*'}/{KUSTOMIZATION}"},
        *({"path": f"{root}{job}/base/{KUSTOMIZATION}"} for job in fallbacks),
    ]
    appset = {
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
            ],
            "template": {
                "metadata": _metadata(name),
                "spec": _app_spec(target, "{{ .path.path }}"),
            },
        },
    }
    where = f"{root or './'}*" + (f" (environment {env})" if env else "")
    return {
        APPLICATIONSET_FILE: _header(
            f"Argo CD ApplicationSet: an Application per rendered job in {where};\n"
            f"apply it in namespace {ARGOCD_NAMESPACE}."
        )
        + dump_yaml(appset)
    }


# Matches a spec file's apiVersion line; grep exits 1 on no match, which Argo CD would report
# as a failed discovery rather than "not mine", hence `|| true` (empty output means no match).
_DISCOVER = (
    "grep -rlE --exclude-dir=.git --include='*.yaml' --include='*.yml' "
    "'^apiVersion:[[:space:]]*[\"]?paddlegen/v1' . || true"
)
# Only manifests on stdout: warnings and errors go to stderr, which Argo CD shows on failure.
_GENERATE = (
    "exec paddlegen render . --stdout "
    f'${{ARGOCD_ENV_{ENV_VARIABLE}:+--env "$ARGOCD_ENV_{ENV_VARIABLE}"}}'
)


def cmp_plugin() -> Plan:
    """``cmp-plugin.yaml``: the sidecar Config Management Plugin that renders specs in Argo CD."""
    plugin = {
        "apiVersion": API_VERSION,
        "kind": "ConfigManagementPlugin",
        "metadata": {"name": PLUGIN_NAME},
        "spec": {
            "generate": {"command": ["sh", "-c", _GENERATE]},
            # find.command only: Argo CD evaluates just the first of fileName, find.glob and
            # find.command, and a glob cannot look inside a file for the apiVersion.
            "discover": {"find": {"command": ["sh", "-c", _DISCOVER]}},
        },
    }
    return {
        CMP_FILE: _header(f"""\
Argo CD Config Management Plugin (sidecar, Argo CD >= 2.6): renders paddlegen specs in the
repo-server instead of committing rendered output. Bake it into a sidecar image that has
paddlegen installed, at /home/argocd/cmp-server/config/plugin.yaml, run the sidecar as user
999 with /var/run/argocd/argocd-cmp-server as its command (see Argo CD's docs on config
management plugins). An Application whose source path holds specs (apiVersion: paddlegen/v1)
is matched automatically, or name it: source.plugin.name: {PLUGIN_NAME}. To deploy an overlay,
set source.plugin.env: [{{name: {ENV_VARIABLE}, value: <env>}}].""")
        + dump_yaml(plugin)
    }


def health_scripts() -> dict[str, str]:
    """argocd-cm key -> Lua health check, for PaddleJob (both groups) and Volcano's PodGroup."""
    folder = templates_dir() / "_argocd" / "health"
    return {
        HEALTH_KEY_PREFIX + key: (folder / file).read_text(encoding="utf-8")
        for key, file in HEALTH_CHECKS.items()
    }


def health_configmap() -> Plan:
    """``argocd-cm-health.yaml``: the health checks as a patch of the argocd-cm ConfigMap."""
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "argocd-cm",
            "namespace": ARGOCD_NAMESPACE,
            "labels": {
                "app.kubernetes.io/name": "argocd-cm",
                "app.kubernetes.io/part-of": "argocd",
            },
        },
        "data": health_scripts(),
    }
    return {
        HEALTH_FILE: _header(f"""\
Argo CD health checks for PaddleJob (batch.paddlepaddle.org, kubeflow.org) and Volcano's
PodGroup. Merge it into argocd-cm, e.g.
  kubectl -n {ARGOCD_NAMESPACE} patch configmap argocd-cm --type merge --patch-file {HEALTH_FILE}
or list it under `patches:` in the kustomization that installs Argo CD.""")
        + dump_yaml(configmap)
    }


def plan(mode: str, target: Target, jobs: Jobs, env: str | None = None) -> Plan:
    """Every file of the output folder, in memory."""
    if mode not in MODES:
        raise InvalidValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if mode == "applications":
        if not jobs:
            raise InputError("no rendered jobs found (run `paddlegen render` first)")
        files = applications(jobs, target, env)
    else:
        fallbacks = base_fallbacks(env, jobs) if env is not None and jobs else []
        files = application_set(target, env, fallbacks)
    return {**files, **cmp_plugin(), **health_configmap()}


def write(out_dir: str | Path, files: Plan) -> WriteReport:
    """Replace the generated files in ``out_dir`` with ``files``; other files stay."""
    from paddlegen.output.writer import write_job

    target = Path(out_dir).resolve()
    if target.parent == target:
        raise OutputError(f"{out_dir}: not a folder paddlegen can write into")
    return write_job(target.parent, target.name, files)


def generate(
    deploy: str | Path, out_dir: str | Path, mode: str, target: Target, env: str | None = None
) -> tuple[WriteReport, list[str]]:
    """Read the rendered tree, plan the Argo CD files and write them; also return the jobs
    that deploy their base for lack of the overlay ``env`` (for the caller to say so)."""
    jobs = rendered_jobs(Path(deploy))
    report = write(out_dir, plan(mode, target, jobs, env))
    return report, base_fallbacks(env, jobs) if env is not None and jobs else []
