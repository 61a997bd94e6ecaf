"""The sidecar patch `paddlegen argocd` writes, applied by the real kustomize to Argo CD
v3.5.1's own argocd-repo-server Deployment (tests/data/argocd/) as the patch's header says,
gives a valid apps/v1 Deployment (the real kubeconform, strict, and the in-process validator)
with the sidecars (this paddlegen's and an older one's kept) beside the repo-server, on the
upstream volumes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from paddlegen import __version__
from paddlegen.cli import cli
from paddlegen.gitops import argocd_files as argo_files
from paddlegen.gitops import argocd_sidecar as argo
from paddlegen.validate.inprocess import validate_in_process
from paddlegen.validate.kubeconform import run_kubeconform
from tests.conftest import ROOT, require_tool

UPSTREAM = ROOT / "tests" / "data" / "argocd" / "argocd-repo-server-deployment.yaml"
IMAGE = "ghcr.io/acme/paddlegen-cmp:0.1.0"
OLDER = "0.0.9=ghcr.io/acme/paddlegen-cmp:0.0.9"


def built(runner, tmp_path: Path) -> tuple[str, dict]:
    """kustomize build of a kustomization like the one that installs Argo CD: its namespace,
    the upstream Deployment, and the patch as `paddlegen argocd` wrote it."""
    kustomize = require_tool("kustomize")
    out = tmp_path / "argocd"
    args = ["argocd", "--deploy", str(tmp_path / "none"), "-o", str(out)]
    args += ["--repo-url", "file:///", "--sidecar-image", IMAGE, "--keep-sidecar", OLDER]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    install = tmp_path / "install"
    install.mkdir()
    (install / "argocd-repo-server-deployment.yaml").write_text(UPSTREAM.read_text())
    (install / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "namespace": "argocd",
                "resources": ["argocd-repo-server-deployment.yaml"],
                "patches": [{"path": f"../argocd/{argo_files.SIDECAR_PATCH_FILE}"}],
            }
        )
    )
    done = subprocess.run(
        [kustomize, "build", "--load-restrictor=LoadRestrictionsNone", str(install)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (deployment,) = list(yaml.safe_load_all(done.stdout))
    return done.stdout, deployment


def test_the_patched_deployment_is_valid_apps_v1(runner, tmp_path):
    kubeconform = require_tool("kubeconform")
    text, deployment = built(runner, tmp_path)
    assert (deployment["apiVersion"], deployment["kind"]) == ("apps/v1", "Deployment")
    assert deployment["metadata"]["namespace"] == "argocd"
    files = [("argocd-repo-server.yaml", text)]
    assert validate_in_process(files) == []
    assert run_kubeconform(files, kubeconform) == []


def test_the_sidecar_runs_beside_the_repo_server_on_the_shared_volumes(runner, tmp_path):
    _, deployment = built(runner, tmp_path)
    pod = deployment["spec"]["template"]["spec"]
    containers = {c["name"]: c for c in pod["containers"]}
    name, older = argo.sidecar_container_name(__version__), argo.sidecar_container_name("0.0.9")
    assert list(containers) == [name, older, "argocd-repo-server"]
    sidecar = containers[name]
    assert (sidecar["image"], sidecar["command"]) == (IMAGE, argo.SIDECAR_COMMAND)
    assert containers[older]["image"] == OLDER.split("=")[1]
    volumes = {v["name"]: v for v in pod["volumes"]}
    for mount in (*sidecar["volumeMounts"], *containers[older]["volumeMounts"]):
        assert mount["name"] in volumes, mount
    # the repo-server meets the sidecar's socket in the one plugins volume
    repo_server = {
        m["name"]: m["mountPath"] for m in containers["argocd-repo-server"]["volumeMounts"]
    }
    plugins = {m["name"]: m["mountPath"] for m in sidecar["volumeMounts"]}["plugins"]
    assert repo_server["plugins"] == plugins
    # the upstream Deployment is otherwise as it was: two containers more, each with its /tmp
    upstream = yaml.safe_load(UPSTREAM.read_text())["spec"]["template"]["spec"]
    assert containers["argocd-repo-server"] == upstream["containers"][0]
    assert len(volumes) == len(upstream["volumes"]) + 2
    for tmp in (f"{name}-tmp", f"{older}-tmp"):
        assert volumes[tmp] == {"name": tmp, "emptyDir": {}}
    assert pod["initContainers"] == upstream["initContainers"]
