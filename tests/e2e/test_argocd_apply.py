"""What `paddlegen argocd` writes is applyable as it is: every file `kubectl apply -f DIR` reads
is a Kubernetes object the real kubeconform knows (strict, the Argo CD CRD schemas); the plugin
configuration, the sidecar's Dockerfile and the two patches are where that command does not read.

kubectl itself cannot run here: even `apply --dry-run=client` asks an API server which kinds
exist. The files it reads are picked as it picks them (`files_kubectl_applies`); the cluster
tests apply the folder for real (hack/localcluster/argocd.py `install`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from paddlegen.cli import cli
from paddlegen.errors import ToolError
from paddlegen.gitops import argocd_files as argo_files
from paddlegen.gitops import argocd_sidecar
from paddlegen.validate.kubeconform import run_kubeconform
from tests.builders import job_spec
from tests.conftest import require_tool

REPO = "https://git.example.com/ml/jobs.git"
# kubectl reads these of a folder's files, case-sensitively (k8s.io/cli-runtime
# pkg/resource/builder.go:45 at v0.37.2)...
KUBECTL_EXTENSIONS = (".json", ".yaml", ".yml")


def files_kubectl_applies(folder: Path) -> list[Path]:
    """The files `kubectl apply -f FOLDER` reads: its own files of those extensions, no
    subfolder without -R (...and pkg/resource/visitor.go:505-520)."""
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in KUBECTL_EXTENSIONS)


@pytest.fixture()
def deploy(runner, tmp_path) -> Path:
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "a.yaml").write_text(job_spec("a"))
    result = runner.invoke(cli, ["render", str(jobs), "-o", str(tmp_path / "deploy")])
    assert result.exit_code == 0, result.output
    return tmp_path / "deploy"


@pytest.mark.parametrize(
    ("mode", "folder", "kinds"),
    [
        ("applicationset", "", ["ApplicationSet"]),
        ("applications", "applications", ["Application"]),
    ],
)
def test_kubectl_apply_of_the_folder_reads_only_objects_kubeconform_knows(
    runner, tmp_path, deploy, mode, folder, kinds
):
    kubeconform = require_tool("kubeconform")
    out = tmp_path / "argocd"
    args = ["argocd", "--mode", mode, "--deploy", str(deploy), "-o", str(out), "--repo-url", REPO]
    result = runner.invoke(cli, [*args, "--dest-namespace", "ml", "--sidecar"])
    assert result.exit_code == 0, result.output

    applied = files_kubectl_applies(out / folder)

    found = [yaml.safe_load(p.read_text()) for p in applied]
    assert [(d["apiVersion"], d["kind"]) for d in found] == [
        ("argoproj.io/v1alpha1", kind) for kind in kinds
    ]
    # kubeconform without -ignore-missing-schemas: a kind it has no schema for (the plugin's
    # ConfigManagementPlugin, which no API server serves) is a ToolError, not a pass.
    files = [(str(p), p.read_text()) for p in applied]
    assert run_kubeconform(files, kubeconform) == []
    # What is not applied: below the folder, where -f does not look.
    below = [
        argo_files.CMP_FILE,
        argo_files.DOCKERFILE,
        argo_files.HEALTH_FILE,
        argo_files.SIDECAR_PATCH_FILE,
    ]
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == sorted(
        [*(str(p.relative_to(out)) for p in applied), *below]
    )
    assert {Path(path).parent for path in below}.isdisjoint({Path("."), Path(folder)})


def test_the_plugin_configuration_is_no_object_an_api_server_serves(tmp_path):
    """Why it may not be where kubectl reads: kubeconform, like an API server, knows no
    ConfigManagementPlugin (the sidecar reads it from its own file system)."""
    kubeconform = require_tool("kubeconform")
    unknown = "no schema for: argoproj.io/v1alpha1 ConfigManagementPlugin"
    with pytest.raises(ToolError, match=unknown):
        run_kubeconform(list(argocd_sidecar.cmp_plugin().items()), kubeconform)


def test_a_folder_of_the_old_layout_is_moved_and_said_so(runner, tmp_path, deploy):
    out = tmp_path / "argocd"
    args = ["argocd", "--deploy", str(deploy), "-o", str(out), "--repo-url", REPO, "--sidecar"]
    assert runner.invoke(cli, [*args, "--dest-namespace", "ml"]).exit_code == 0
    for new in (argo_files.DOCKERFILE, argo_files.SIDECAR_PATCH_FILE):  # not written then
        (out / new).unlink()
    for old, new in argo_files.MOVED.items():  # as paddlegen wrote them before
        (out / new).rename(out / old)
    (out / "sidecar").rmdir()
    (out / "patches").rmdir()

    result = runner.invoke(cli, [*args, "--dest-namespace", "ml"])

    assert result.exit_code == 0, result.output
    assert (
        f"paddlegen: moved {out}/cmp-plugin.yaml to {out}/sidecar/plugin.yaml, so that "
        f"`kubectl apply -f {out}` applies only the Argo CD objects; update what reads it there"
    ) in result.stderr
    assert f"paddlegen: moved {out}/argocd-cm-health.yaml to {out}/patches/" in result.stderr
    assert [p.name for p in files_kubectl_applies(out)] == ["applicationset.yaml"]


def test_without_sidecar_an_old_plugin_file_is_removed_and_said_so(runner, tmp_path, deploy):
    out = tmp_path / "argocd"
    args = ["argocd", "--deploy", str(deploy), "-o", str(out), "--repo-url", REPO]
    assert runner.invoke(cli, [*args, "--dest-namespace", "ml", "--sidecar"]).exit_code == 0
    (out / argo_files.CMP_FILE).rename(out / "cmp-plugin.yaml")  # where it was written before

    result = runner.invoke(cli, [*args, "--dest-namespace", "ml"])

    assert result.exit_code == 0, result.output
    assert (
        "paddlegen: removed the plugin sidecar's files (cmp-plugin.yaml, "
        "patches/argocd-repo-server-sidecar.yaml, sidecar/Dockerfile in "
        f"{out}): they are written with --sidecar (or --sidecar-image IMAGE)"
    ) in result.stderr
    assert "paddlegen: moved" not in result.stderr
    assert not (out / "sidecar").exists() and not (out / "cmp-plugin.yaml").exists()
