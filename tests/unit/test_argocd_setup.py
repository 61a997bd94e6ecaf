"""paddlegen argocd: Applications and ApplicationSet valid by the CRDs, the CMP, the TTL warning."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import Result

from paddlegen.cli import cli
from paddlegen.errors import InputError, OutputError
from paddlegen.gitops import argocd as argo
from paddlegen.gitops import argocd_files as argo_files
from paddlegen.gitops import argocd_health as argo_health
from paddlegen.gitops import argocd_sidecar as argo_sidecar
from paddlegen.output.writer import WriteReport
from paddlegen.validate.inprocess import validate_in_process
from paddlegen.validate.manifests import validate_manifests
from tests.builders import diagnostics, job_spec, rendered, spec
from tests.conftest import ROOT
from tests.helpers import GLOBBINGS, generated_paths

REPO = "https://git.example.com/ml/jobs.git"
OVERLAYS = """\
overlays:
  dev: {metadata: {namespace: ml-dev}, spec: {image: "img:2"}}
  prod: {metadata: {namespace: ml-prod}, spec: {image: "img:3"}}
"""


def render_jobs(runner, tmp_path: Path, **specs: str) -> Path:
    """deploy/, rendered from jobs/ holding each spec's text under its name."""
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    for name, text in specs.items():
        (jobs / f"{name}.yaml").write_text(text)
    deploy = tmp_path / "deploy"
    result = runner.invoke(cli, ["render", str(jobs), "-o", str(deploy)])
    assert result.exit_code == 0, result.output
    return deploy


def rendered_tree(runner, tmp_path: Path) -> Path:
    """deploy/ with a flat job `flat` and a job `staged` with overlays dev and prod."""
    return render_jobs(
        runner, tmp_path, flat=job_spec("flat"), staged=job_spec("staged") + OVERLAYS
    )


def objects(files: dict[str, str]) -> dict[str, dict]:
    return {path: yaml.safe_load(text) for path, text in files.items()}


def assert_valid(files: dict[str, str]) -> None:
    """Valid by the Argo CD CRD schemas, in process and with kubeconform when it is installed."""
    manifests = [(path, text) for path, text in files.items() if path != argo_files.CMP_FILE]
    assert validate_in_process(manifests) == []
    if shutil.which("kubeconform"):
        assert validate_manifests(manifests) == ([], "kubeconform")


def argocd_cli(runner, deploy: Path, out: Path | str, *options: str) -> Result:
    """`paddlegen argocd` of the rendered tree ``deploy`` into ``out``, for the repository REPO."""
    args = ["argocd", "--deploy", str(deploy), "-o", str(out), "--repo-url", REPO, *options]
    return runner.invoke(cli, args)


def said(result: Result, start: str) -> list[str]:
    """The lines of ``result``'s stderr that begin with ``start``."""
    return [line for line in result.stderr.splitlines() if line.startswith(start)]


def test_rendered_jobs_lists_flat_jobs_and_environments(runner, tmp_path):
    deploy = rendered_tree(runner, tmp_path)
    (deploy / "notes").mkdir()  # not generated: not a job
    assert argo.rendered_jobs(deploy) == {"flat": [], "staged": ["dev", "prod"]}
    assert argo.rendered_jobs(tmp_path / "missing") == {}


def test_an_application_per_flat_job_and_per_environment():
    target = argo.Target(REPO, revision="main", path_prefix="gitops/deploy/")
    files = argo.applications({"flat": [], "staged": ["dev", "prod"]}, target)
    assert sorted(files) == [
        "applications/flat.yaml",
        "applications/staged-dev.yaml",
        "applications/staged-prod.yaml",
    ]
    assert_valid(files)
    apps = objects(files)
    app = apps["applications/staged-prod.yaml"]
    assert app["metadata"]["name"] == "staged-prod"
    assert app["metadata"]["namespace"] == "argocd"
    assert app["metadata"]["finalizers"] == ["resources-finalizer.argocd.argoproj.io/background"]
    assert app["spec"]["source"] == {
        "repoURL": REPO,
        "targetRevision": "main",
        "path": "gitops/deploy/staged/overlays/prod",
    }
    assert apps["applications/flat.yaml"]["spec"]["source"]["path"] == "gitops/deploy/flat"
    assert app["spec"]["destination"] == {"server": "https://kubernetes.default.svc"}
    assert app["spec"]["project"] == "default"


def test_a_job_without_the_environment_deploys_its_base():
    jobs = {"flat": [], "staged": ["dev", "prod"], "devonly": ["dev"]}
    assert argo.application_sources(jobs, "prod") == {
        "devonly-prod": "devonly/base",
        "flat-prod": "flat",
        "staged-prod": "staged/overlays/prod",
    }
    files = argo.plan("applicationset", argo.Target(REPO), jobs, "prod")
    appset = yaml.safe_load(files[argo.APPLICATIONSET_FILE])
    for globbing in GLOBBINGS:
        assert generated_paths(appset, tree("deploy", jobs), globbing) == [
            "deploy/flat/kustomization.yaml",
            "deploy/staged/overlays/prod/kustomization.yaml",
            "deploy/devonly/base/kustomization.yaml",
        ], globbing


def tree(prefix: str, jobs: dict[str, list[str]]) -> list[str]:
    """The kustomization.yaml files of a rendered tree at ``prefix`` in the repository, each
    job with its own Component (`custom/`, which may nest kustomizations of its own): part of
    the job, never an Application of its own."""
    root = f"{prefix}/" if prefix else ""
    found = []
    for job, envs in jobs.items():
        folders = [f"{job}/base", *(f"{job}/overlays/{e}" for e in envs)] if envs else [job]
        folders += [f"{job}/custom", f"{job}/custom/netpol"]
        found += [f"{root}{folder}/kustomization.yaml" for folder in folders]
    return found


def test_an_environment_no_job_has_is_an_error_listing_those_that_exist():
    with pytest.raises(
        InputError, match=r"no job has an overlay 'test' \(environments: dev, prod\)"
    ):
        argo.application_sources({"flat": [], "staged": ["dev", "prod"]}, "test")


def test_an_application_name_too_long_for_a_label_is_an_error():
    with pytest.raises(OutputError, match="has 64 characters"):
        argo.application_sources({"j" * 59: ["prod"]})


# Every Application's; with a destination namespace, CreateNamespace=true too
SYNC_OPTIONS = [
    "PrunePropagationPolicy=background",
    "RespectIgnoreDifferences=true",
    "ServerSideApply=true",
]


def test_sync_policy_follows_auto_sync_and_destination_namespace():
    auto = argo.Target(REPO, dest_namespace="ml")
    spec = objects(argo.applications({"a": []}, auto))["applications/a.yaml"]["spec"]
    assert spec["syncPolicy"] == {
        "automated": {"prune": True, "selfHeal": True},
        # a retry would run a failed job's hooks again (paddlegen/render/syncwaves.py)
        "retry": {"limit": 0},
        "syncOptions": [*SYNC_OPTIONS, "CreateNamespace=true"],
    }
    assert spec["destination"]["namespace"] == "ml"
    manual = argo.Target(REPO, auto_sync=False)
    spec = objects(argo.applications({"a": []}, manual))["applications/a.yaml"]["spec"]
    assert spec["syncPolicy"] == {"syncOptions": SYNC_OPTIONS}
    assert "namespace" not in spec["destination"]


def test_an_application_deploys_to_and_creates_its_rendered_namespace():
    """The rendered tree has no Namespace: each Application names the one its kustomization
    gives its objects, which Argo CD then creates (CreateNamespace) when it is missing."""
    target = argo.Target(REPO, dest_namespace="fallback")
    jobs = {"a": [], "b": [], "c": ["dev", "prod"]}
    namespaces = {"a": "ml", "b": None, "c/overlays/dev": "ml-dev", "c/overlays/prod": "ml-prod"}
    files = objects(argo.applications(jobs, target, namespaces=namespaces))
    found = {
        name: (app["spec"]["destination"]["namespace"], app["spec"]["syncPolicy"]["syncOptions"])
        for name, app in files.items()
    }
    created = [*SYNC_OPTIONS, "CreateNamespace=true"]
    assert found == {
        "applications/a.yaml": ("ml", created),
        "applications/b.yaml": ("fallback", created),
        "applications/c-dev.yaml": ("ml-dev", created),
        "applications/c-prod.yaml": ("ml-prod", created),
    }


@pytest.mark.parametrize(
    ("prefix", "env", "picked", "name"),
    [
        (
            "deploy",
            None,
            ["flat", "staged/overlays/dev", "staged/overlays/prod"],
            "{{ index .path.segments 1 }}{{ if gt (len .path.segments) 2 }}-{{ .path.basename }}"
            "{{ end }}",
        ),
        (
            "/gitops/deploy/",
            "prod",
            ["flat", "staged/overlays/prod"],
            "{{ index .path.segments 2 }}-prod",
        ),
        (
            ".",
            None,
            ["flat", "staged/overlays/dev", "staged/overlays/prod"],
            "{{ index .path.segments 0 }}{{ if gt (len .path.segments) 1 }}-{{ .path.basename }}"
            "{{ end }}",
        ),
    ],
    ids=["deploy", "nested-prefix-with-env", "repository-root"],
)
@pytest.mark.parametrize("globbing", GLOBBINGS)
def test_applicationset_generates_from_every_deployable_kustomization(
    prefix, env, picked, name, globbing
):
    """Flat jobs and overlays, never a base that has them (nor an overlay twice), with either
    of Argo CD's file globbings."""
    target = argo.Target(REPO, path_prefix=prefix)
    files = argo.application_set(target, env)
    assert_valid(files)
    appset = objects(files)[argo.APPLICATIONSET_FILE]
    assert appset["kind"] == "ApplicationSet"
    assert appset["metadata"]["name"] == ("paddlegen-jobs-prod" if env else "paddlegen-jobs")
    root = f"{target.prefix}/" if target.prefix else ""
    jobs = {"flat": [], "staged": ["dev", "prod"]}
    assert generated_paths(appset, tree(target.prefix, jobs), globbing) == [
        f"{root}{folder}/kustomization.yaml" for folder in picked
    ]
    assert {g["git"]["revision"] for g in appset["spec"]["generators"]} == {"HEAD"}
    template = appset["spec"]["template"]
    assert template["metadata"]["name"] == name
    assert template["spec"]["source"]["path"] == "{{ .path.path }}"
    assert appset["spec"]["goTemplate"] is True


def test_health_configmap_patches_argocd_cm_with_every_check():
    files = argo_health.health_configmap()
    assert_valid(files)
    configmap = objects(files)[argo_files.HEALTH_FILE]
    assert configmap["metadata"]["name"] == "argocd-cm"
    assert configmap["metadata"]["namespace"] == "argocd"
    assert sorted(configmap["data"]) == [
        "resource.customizations.health.batch.paddlepaddle.org_PaddleJob",
        "resource.customizations.health.batch_Job",  # the core group's: <group>_<Kind>
        "resource.customizations.health.jobset.x-k8s.io_JobSet",
        "resource.customizations.health.kubeflow.org_PaddleJob",
        "resource.customizations.health.scheduling.volcano.sh_PodGroup",
        "resource.customizations.health.trainer.kubeflow.org_TrainJob",
    ]
    assert configmap["data"] == argo_health.health_scripts()  # embedded whole, as literal blocks
    # Argo CD's key is <group>_<Kind> of the live object's apiVersion: the groups of the
    # vendored CRDs (hack/crds)
    for key in ("trainer.kubeflow.org_TrainJob", "jobset.x-k8s.io_JobSet"):
        group, kind = key.split("_")
        assert (ROOT / "hack" / "crds" / f"{group}_{kind.lower()}s.yaml").is_file()
    assert "|\n" in files[argo_files.HEALTH_FILE]


def test_the_health_patchs_header_names_every_kind_it_checks():
    from paddlegen.workloads import judged_objects

    text = argo_health.health_configmap()[argo_files.HEALTH_FILE]
    header = " ".join(line.lstrip("# ") for line in text.split("\napiVersion:")[0].splitlines())
    for obj in judged_objects():
        assert re.search(rf"\b{obj.kind}\b", header), obj.kind


def test_cmp_plugin_uses_the_sidecar_format():
    plugin = objects(argo_sidecar.cmp_plugin())[argo_files.CMP_FILE]
    assert plugin["apiVersion"] == "argoproj.io/v1alpha1"
    assert plugin["kind"] == "ConfigManagementPlugin"
    assert plugin["metadata"]["name"] == "paddlegen"
    assert plugin["spec"]["generate"]["command"][:2] == ["sh", "-c"]
    assert "set -- render . --stdout" in plugin["spec"]["generate"]["command"][2]


def _run(command: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    # paddlegen from this interpreter's environment, as the sidecar image would have it.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return subprocess.run(
        command,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PATH": path, **env},
    )


def test_cmp_generate_prints_only_manifests_on_stdout(tmp_path):
    if not shutil.which("sh"):
        pytest.skip("needs sh")
    command = objects(argo_sidecar.cmp_plugin())[argo_files.CMP_FILE]["spec"]["generate"]["command"]
    spec = (job_spec("staged") + OVERLAYS).replace("  resources: {limits: {memory: 1Gi}}\n", "")
    (tmp_path / "staged.yaml").write_text(spec)
    base = _run(command, tmp_path)
    assert base.returncode == 0, base.stderr
    docs = [d for d in yaml.safe_load_all(base.stdout) if d is not None]
    assert [d["kind"] for d in docs] == ["Job", "ConfigMap"]  # the job, its run record
    assert docs[0]["spec"]["template"]["spec"]["containers"][0]["image"] == "img:1"
    assert "[limits-missing]" in base.stderr  # warnings go to stderr, never into the stream
    prod = _run(command, tmp_path, ARGOCD_ENV_PADDLEGEN_ENV="prod")
    assert prod.returncode == 0, prod.stderr
    job, _ = [d for d in yaml.safe_load_all(prod.stdout) if d is not None]
    assert job["spec"]["template"]["spec"]["containers"][0]["image"] == "img:3"


def test_cli_writes_the_applicationset_setup(runner, tmp_path):
    deploy = rendered_tree(runner, tmp_path)
    out = tmp_path / "argocd"
    args = ["argocd", "--deploy", str(deploy), "-o", str(out), "--repo-url", REPO]
    args += ["--dest-namespace", "ml"]  # `flat` names none
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert result.stderr == (
        "paddlegen: note: a job's sync lasts as long as its training (it is a Sync hook): keep "
        "Argo CD's controller.sync.timeout.seconds at 0 or above your longest run\n"
        f"{out}: 2 written, 0 unchanged, 0 removed\n"
    )
    # No plugin sidecar unless asked: this tree is rendered, Argo CD reads it as it is.
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == [
        "applicationset.yaml",
        "patches/argocd-cm-health.yaml",
    ]
    again = runner.invoke(cli, args)
    assert again.stderr == f"{out}: 0 written, 2 unchanged, 0 removed\n"


def test_the_notes_say_what_moved_went_and_stayed_in_the_order_they_print():
    sidecar_patch = argo_files.SIDECAR_PATCH_FILE
    report = WriteReport(
        written=[argo_files.CMP_FILE],
        removed=["cmp-plugin.yaml", "applications/old.yaml", sidecar_patch],
        kept=["README.md"],
    )
    files = argo_files.ArgocdFiles(
        report,
        fallbacks=["flat"],
        without_namespace=["flat"],
        placements=["Application flat deploys to S (why)"],
        moved=argo_files.moved(report),
        sidecar_removed=argo_files.sidecar_removed(report),
        removed_applications=argo_files.removed_applications(report),
    )
    notes = files.notes("out", "prod")
    assert [n.split(" ")[0] for n in notes] == [
        "Application",
        "flat",
        "warning:",
        "removed",
        "moved",
        "warning:",
        "kept",
        "note:",
    ]
    assert notes[1] == "flat has no overlay 'prod': its base is deployed"
    assert notes[3].startswith(
        f"removed the plugin sidecar's files ({argo_files.SIDECAR_PATCH_FILE}"
    )
    assert notes[4].startswith(f"moved out/cmp-plugin.yaml to out/{argo_files.CMP_FILE}, ")
    assert notes[5].startswith("warning: removed out/applications/old.yaml: ")
    assert notes[6] == "kept out/README.md (not generated by paddlegen)"
    assert report.summary("out") == "out: 1 written, 0 unchanged, 3 removed"
    # Nothing written, nothing to say about syncs; nothing removed or kept, nothing else.
    quiet = argo_files.ArgocdFiles(WriteReport(unchanged=["a"]), [], [], [], {}, [], [])
    assert quiet.notes("out") == []


@pytest.mark.parametrize("mode", argo.MODES)
def test_an_application_without_a_namespace_is_a_warning_naming_the_ways_out(
    runner, tmp_path, mode
):
    """Argo CD cannot sync objects that name no namespace into an Application that gives none
    ("Namespace for ... is missing", controller/state.go:1006-1007 at v3.5.1)."""
    deploy = rendered_tree(runner, tmp_path)  # `flat` names no namespace; `staged`'s overlays do
    result = argocd_cli(runner, deploy, tmp_path / "a", "--mode", mode)
    assert result.exit_code == 0, result.output
    (warning,) = [line for line in result.stderr.splitlines() if "warning" in line]
    assert warning.startswith("paddlegen: warning: Application flat: its objects name no namespace")
    assert "set metadata.namespace in the job's spec, or pass --dest-namespace" in warning
    quiet = argocd_cli(runner, deploy, tmp_path / "b", "--mode", mode, "--dest-namespace", "ml")
    assert "warning" not in quiet.stderr


def test_cli_applications_mode_replaces_the_applicationset(runner, tmp_path):
    deploy = rendered_tree(runner, tmp_path)
    out = tmp_path / "argocd"
    assert argocd_cli(runner, deploy, out).exit_code == 0
    (out / "README.md").write_text("ours\n")
    options = [
        "--mode",
        "applications",
        "--env",
        "prod",
        "--dest-namespace",
        "ml",
        "--no-auto-sync",
    ]
    result = argocd_cli(runner, deploy, f"{out}/", *options)
    assert result.exit_code == 0, result.output
    # -o given with a trailing slash: no double slash in the path it shows
    assert f"paddlegen: kept {out}/README.md (not generated by paddlegen)" in result.stderr
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*.yaml")) == [
        "applications/flat-prod.yaml",
        "applications/staged-prod.yaml",
        "patches/argocd-cm-health.yaml",
    ]
    app = yaml.safe_load((out / "applications" / "staged-prod.yaml").read_text())
    assert app["spec"]["source"]["path"] == "deploy/staged/overlays/prod"
    assert "automated" not in app["spec"]["syncPolicy"]
    assert (out / "README.md").read_text() == "ours\n"


def test_cli_errors_name_the_problem(runner, tmp_path):
    out = tmp_path / "argocd"
    missing = argocd_cli(runner, tmp_path / "nothing", out, "--mode", "applications")
    assert missing.exit_code == 2
    assert missing.stderr == (
        "paddlegen: error: no rendered jobs found (run `paddlegen render` first)\n"
    )
    no_env = argocd_cli(runner, rendered_tree(runner, tmp_path), out, "--env", "test")
    assert no_env.exit_code == 2
    assert no_env.stderr.startswith(
        "paddlegen: error: no job has an overlay 'test' (environments: "
    )
    assert not out.exists()
    no_repo = runner.invoke(cli, ["argocd"])
    assert no_repo.exit_code == 2 and "--repo-url" in no_repo.stderr


@pytest.mark.parametrize(
    ("workload", "kind"),
    [
        ("job", "Job"),
        ("distributed-job", "Job"),
        ("kubeflow-paddlejob", "PaddleJob"),
        ("collective-job", "Job"),
    ],
)
def test_a_ttl_is_safe_under_argo_cd_the_finished_object_is_a_hook(workload, kind):
    """The object a TTL deletes is a Sync hook, which Argo CD does not compare: it is not
    Missing after its TTL and no sync creates it again (verified live in
    tests/cluster/test_argocd_runtime_safety.py). So no warning any more."""
    ttl = spec(workload, metadata={"name": "ttl"}, run={"ttlSecondsAfterFinished": 600})
    assert not [d for d in diagnostics(ttl) if "ttl" in d.message.lower()]
    (main,) = [m for m in rendered(ttl).manifests if (m.name, m.kind) == ("ttl", kind)]
    assert main.obj["metadata"]["annotations"]["argocd.argoproj.io/hook"] == "Sync"


# Environments: each deploys to a destination of its own, and none share objects.
SHARED = """\
overlays:
  dev: {spec: {image: "img:2"}}
  prod: {spec: {image: "img:3"}}
"""
PROD = argo.Destination("https://prod.example:6443", "ml-prod")


def test_destination_parses_env_server_and_optional_namespace():
    assert argo.parse_destination("prod=https://p:6443,ml") == (
        "prod",
        argo.Destination("https://p:6443", "ml"),
    )
    assert argo.parse_destination("dev=https://d") == ("dev", argo.Destination("https://d"))
    for bad, reason in [
        ("prod", "is not ENV=SERVER"),
        ("prod=", "is not ENV=SERVER"),
        ("Prod=https://p", "environment 'Prod'"),
        ("prod=https://p,ML", "namespace 'ML'"),
    ]:
        with pytest.raises(argo.InvalidValueError, match=reason):
            argo.parse_destination(bad)
    given = ["prod=https://p:6443,ml", "dev=https://d"]
    assert argo.parse_destinations(given) == dict(map(argo.parse_destination, given))
    with pytest.raises(argo.InvalidValueError, match="^environment 'prod' is given twice$"):
        argo.parse_destinations([*given, "prod=https://q"])


def test_each_environment_application_deploys_to_its_destination():
    target = argo.Target(REPO, dest_namespace="ml", destinations={"prod": PROD})
    files = argo.applications({"flat": [], "staged": ["dev", "prod"]}, target)
    assert_valid(files)
    destination = {k: a["spec"]["destination"] for k, a in objects(files).items()}
    default = {"server": argo.IN_CLUSTER, "namespace": "ml"}
    assert destination == {
        "applications/flat.yaml": default,
        "applications/staged-dev.yaml": default,
        "applications/staged-prod.yaml": {"server": PROD.server, "namespace": "ml-prod"},
    }
    # --env prod: every Application deploys prod, to prod's destination
    with_env = objects(argo.applications({"flat": [], "staged": ["prod"]}, target, "prod"))
    assert {a["spec"]["destination"]["server"] for a in with_env.values()} == {PROD.server}


def test_the_applicationset_gives_an_environment_with_a_destination_a_set_of_its_own():
    target = argo.Target(REPO, destinations={"prod": PROD})
    files = argo.application_set(target)
    assert_valid(files)
    rest, prod = yaml.safe_load_all(files[argo.APPLICATIONSET_FILE])
    assert rest["metadata"]["name"] == "paddlegen-jobs"
    jobs = tree("deploy", {"flat": [], "staged": ["dev", "prod"]})
    for globbing in GLOBBINGS:
        assert generated_paths(rest, jobs, globbing) == [
            "deploy/flat/kustomization.yaml",
            "deploy/staged/overlays/dev/kustomization.yaml",
        ]
        assert generated_paths(prod, jobs, globbing) == [
            "deploy/staged/overlays/prod/kustomization.yaml"
        ]
    # The kustomization's namespace (a parameter of the files generator), else none.
    assert rest["spec"]["template"]["spec"]["destination"] == {
        "server": argo.IN_CLUSTER,
        "namespace": '{{ with index . "namespace" }}{{ . }}{{ else }}{{ end }}',
    }
    assert prod["metadata"]["name"] == "paddlegen-jobs-prod"
    assert prod["spec"]["template"]["metadata"]["name"] == "{{ index .path.segments 1 }}-prod"
    spec = prod["spec"]["template"]["spec"]
    assert spec["destination"] == {
        "server": PROD.server,
        "namespace": '{{ with index . "namespace" }}{{ . }}{{ else }}ml-prod{{ end }}',
    }
    assert "CreateNamespace=true" in spec["syncPolicy"]["syncOptions"]
    # with --env prod: one set, deploying to prod's destination
    (only,) = yaml.safe_load_all(argo.application_set(target, "prod")[argo.APPLICATIONSET_FILE])
    assert only["spec"]["template"]["spec"]["destination"]["server"] == PROD.server


@pytest.mark.parametrize("mode", argo.MODES)
def test_environments_sharing_one_destination_are_refused_until_separated(runner, tmp_path, mode):
    deploy = render_jobs(runner, tmp_path, demo=job_spec("demo") + SHARED)
    out = tmp_path / "argocd"
    shared = argocd_cli(runner, deploy, out, "--mode", mode)
    assert shared.exit_code == 2
    assert shared.stderr.startswith(
        "paddlegen: error: Applications demo-dev and demo-prod would both deploy the objects "
        f"of demo into the same namespace of {argo.IN_CLUSTER}. Give each environment"
    )
    assert not out.exists()
    # Any one of the three ways out: a destination, one environment, or a namespace
    destination = ("--destination", f"prod={PROD.server}")
    assert argocd_cli(runner, deploy, out, "--mode", mode, *destination).exit_code == 0
    assert argocd_cli(runner, deploy, out, "--mode", mode, "--env", "prod").exit_code == 0
    spec = tmp_path / "jobs" / "demo.yaml"
    spec.write_text(
        spec.read_text().replace("prod: {spec", "prod: {metadata: {namespace: p}, spec")
    )
    assert runner.invoke(cli, ["render", str(spec.parent), "-o", str(deploy)]).exit_code == 0
    assert argo.rendered_namespaces(deploy, argo.rendered_jobs(deploy)) == {
        "demo/base": None,
        "demo/overlays/dev": None,
        "demo/overlays/prod": "p",
    }
    assert argocd_cli(runner, deploy, out, "--mode", mode).exit_code == 0


def test_a_destination_for_an_environment_no_job_has_is_an_error(runner, tmp_path):
    deploy, out = rendered_tree(runner, tmp_path), tmp_path / "a"
    typo = argocd_cli(runner, deploy, out, "--destination", "prd=https://p")
    assert typo.exit_code == 2
    assert "--destination names environments no job has: prd (environments: dev, prod)" in (
        typo.stderr
    )
    for bad, message in [
        ("prod", "'prod' is not ENV=SERVER[,NAMESPACE]"),
        ("prod=https://a", "environment 'prod' is given twice"),
    ]:
        result = argocd_cli(
            runner, deploy, out, "--destination", "prod=https://a", "--destination", bad
        )
        assert result.exit_code == 2
        assert message in result.stderr


def test_a_render_that_renames_applications_warns_that_live_objects_go(runner, tmp_path):
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    spec = jobs / "demo.yaml"
    spec.write_text(job_spec("demo"))
    render = ["render", str(jobs), "-o", str(tmp_path / "deploy")]
    assert "warning" not in runner.invoke(cli, render).stderr
    spec.write_text(job_spec("demo") + "overlays:\n  prod: {metadata: {namespace: p}}\n")
    gained = runner.invoke(cli, render)
    assert gained.exit_code == 0, gained.output
    assert (
        "paddlegen: warning: demo changed layout: Argo CD Applications made without --env "
        "go from demo to demo-prod, and deleting demo deletes its live objects"
    ) in gained.stderr
    assert "warning" not in runner.invoke(cli, render).stderr  # once, when it happens
    spec.write_text(job_spec("demo"))
    refused = runner.invoke(cli, render)  # the environment goes: only when asked
    assert refused.exit_code == 1 and "[removal]" in refused.stderr, refused.output
    lost = runner.invoke(cli, [*render, "--allow-removal"])
    assert "go from demo-prod to demo, and deleting demo-prod" in lost.stderr


def test_applications_mode_warns_for_each_application_file_it_removes(runner, tmp_path):
    deploy = rendered_tree(runner, tmp_path)
    out = tmp_path / "argocd"
    assert argocd_cli(runner, deploy, out, "--mode", "applications").exit_code == 0
    result = argocd_cli(runner, deploy, out, "--mode", "applications", "--env", "prod")
    assert result.exit_code == 0, result.output
    for name in ("flat", "staged-dev"):
        assert (
            f"paddlegen: warning: removed {out}/applications/{name}.yaml: deleting that "
            "Application from Argo CD deletes its live objects"
        ) in result.stderr


def test_with_destinations_each_application_says_where_it_deploys_and_why(runner, tmp_path):
    deploy = rendered_tree(runner, tmp_path)  # `flat`, and `staged` with dev and prod
    ml, prod = ("--dest-namespace", "ml"), ("--destination", "prod=https://p")
    result = argocd_cli(runner, deploy, tmp_path / "a", *ml, *prod)
    assert result.exit_code == 0, result.output
    assert said(result, "paddlegen: Application") == [
        "paddlegen: Application flat deploys to https://kubernetes.default.svc (--dest-server: "
        "its job has no overlays)",
        "paddlegen: Application staged-dev deploys to https://kubernetes.default.svc "
        "(--dest-server: no --destination names environment dev)",
        "paddlegen: Application staged-prod deploys to https://p (--destination prod)",
    ]
    # One environment: the flat job goes with it.
    one = argocd_cli(runner, deploy, tmp_path / "b", *ml, *prod, "--env", "prod")
    assert said(one, "paddlegen: Application") == [
        "paddlegen: Application flat-prod deploys to https://p (--destination prod)",
        "paddlegen: Application staged-prod deploys to https://p (--destination prod)",
    ]
    # Without --destination every Application goes to --dest-server: nothing to say.
    quiet = argocd_cli(runner, deploy, tmp_path / "c", *ml)
    assert "paddlegen: Application" not in quiet.stderr
