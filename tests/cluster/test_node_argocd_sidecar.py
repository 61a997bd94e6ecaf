"""The plugin sidecar image on the real node (`hack/local-cluster --with node,argocd`): the
image `build` made (hack/localcluster/images.py PLUGIN: Debian, Python, the wheel of this
checkout) runs in containerd as the container `paddlegen argocd`'s patch adds to
argocd-repo-server, with the pinned argocd-cmp-server (the host's build) as its entry point in
the var-files volume and the host's plugin socket folder as its plugins volume. The host's
repo-server meets it through the socket, as a repo-server meets its sidecar in a pod, and an
Application over a `file://` repository of specs syncs through it: the live objects are the
committed rendered tree's, and Argo CD, pointed at that tree, finds them Synced."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from paddlegen.gitops import argocd as argo
from paddlegen.gitops import argocd_files as argo_files
from tests.cluster.conftest import Kube, local_cluster, with_extras
from tests.cluster.test_argocd import (
    application,
    compared_with_tree,
    init_repo,
    paddlegen,
    render_and_commit,
    synced_at,
)
from tests.cluster.test_argocd_envs import resources
from tests.cluster.test_argocd_runtime_safety import settle
from tests.cluster.test_paddleflow import wait_for
from tests.conftest import require_tool

pytestmark = pytest.mark.node

NAMESPACE = "node-plugin"  # the job's
POD = "argocd-plugin-sidecar"  # in Argo CD's namespace, as the sidecar of its repo-server
JOB = "plugin-rendered"
SIDECAR_TIMEOUT = 90.0  # the pod running and its socket there (the image imported by `up`)
SYNC_TIMEOUT = 120.0  # the first sync runs the job's pod on the node (a Sync hook)


@pytest.fixture(scope="module")
def argocd_node(node: Kube) -> Kube:
    """The node's control plane with Argo CD too (its repo-server and controllers on the
    host; the host's plugin sidecar is handed over to the pod below)."""
    require_tool("kustomize")  # the repo-server builds the committed tree with it
    return with_extras(node, ["argocd"])


def spec(image: str) -> dict[str, Any]:
    """A job that runs a moment on the node, in the Paddle image (imported by `up`)."""
    return {
        "apiVersion": "paddlegen/v1",
        "kind": "TrainingJob",
        "metadata": {"name": JOB, "namespace": NAMESPACE},
        "spec": {
            "workload": "job",
            "image": image,
            "imagePullPolicy": "Never",
            "resources": {"requests": {"cpu": "100m"}, "limits": {"memory": "256Mi"}},
            "command": ["python3", "-c", "print('rendered by the plugin sidecar')"],
            "run": {"restartPolicy": "Never", "backoffLimit": 0},
        },
    }


def renders(kube: Kube) -> int:
    """How many renders the sidecar's warm renderer says it served (its log's lines)."""
    log = kube.run("-n", "argocd", "logs", POD).stdout
    return log.count("paddlegen serve: a render ended (exit 0)")


def kill_renderer() -> None:
    """SIGKILL the sidecar's warm renderer: on this node its processes are the host's, and
    it is the one still running `paddlegen serve` (the container's first process became
    argocd-cmp-server)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            words = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if (
            b"serve" in words
            and argo.CMP_SERVER.encode() in words
            and any(w.endswith(b"paddlegen") for w in words)
        ):
            parent = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            found.append((int(proc.name), parent))
    # the renderer, not a worker of its (forked: the same command line, the renderer's child)
    (renderer,) = [pid for pid, parent in found if parent not in {p for p, _ in found}]
    os.kill(renderer, signal.SIGKILL)


def sidecar_pod(patch: Path, var_files: Path, plugins: Path) -> dict[str, Any]:
    """The patch's container as a pod of its own: the two volumes it shares with the
    repo-server in Argo CD's Deployment are host folders here (the repo-server is a host
    process), its /tmp the patch's emptyDir."""
    deployment = yaml.safe_load(patch.read_text())
    template = deployment["spec"]["template"]["spec"]
    (container,) = template["containers"]
    container["imagePullPolicy"] = "Never"  # imported by `up`; no registry has it
    shared = {
        "var-files": var_files,
        "plugins": plugins,
    }
    assert {m["name"] for m in container["volumeMounts"]} == {*shared, argo.SIDECAR_TMP}
    volumes = [
        {"name": name, "hostPath": {"path": str(path), "type": "Directory"}}
        for name, path in shared.items()
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": POD, "namespace": "argocd"},
        "spec": {
            "containers": [container],
            "volumes": [*volumes, *template["volumes"]],
            "automountServiceAccountToken": False,
        },
    }


def var_files_with(cmp_server: Path, folder: Path) -> Path:
    """What Argo CD's copyutil init container leaves in var-files: the argocd binary, named
    argocd-cmp-server (the one binary acts by its name), readable and runnable by user 999."""
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)  # whatever the umask
    target = folder / Path(argo.CMP_SERVER).name
    shutil.copyfile(cmp_server, target)
    target.chmod(0o755)
    return folder


def wait_listening(kube: Kube, socket_path: Path) -> None:
    deadline = time.monotonic() + SIDECAR_TIMEOUT
    while not socket_path.is_socket():
        if time.monotonic() > deadline:
            pod = kube.run("-n", "argocd", "get", "pod", POD, "-o", "json", check=False)
            status = json.loads(pod.stdout or "{}").get("status", {})
            logs = kube.run("-n", "argocd", "logs", POD, check=False)
            pytest.fail(
                f"no {socket_path} in {SIDECAR_TIMEOUT:.0f} s; the pod's status: "
                f"{json.dumps(status, indent=1)[:3000]}\nits log: {logs.stdout[-3000:]}"
                f"{logs.stderr[-1000:]}"
            )
        time.sleep(0.3)


def built_objects(kustomize: str, folder: Path) -> list[dict[str, Any]]:
    """`kustomize build` of a committed folder, as Argo CD's repo-server builds it."""
    done = subprocess.run(
        [kustomize, "build", str(folder)], capture_output=True, text=True, check=True
    )
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def contained(expected: Any, live: Any, where: str = "") -> list[str]:
    """Where ``live`` differs from ``expected``: every field of ``expected`` must be there with
    its value (the API server and Argo CD only add: defaults, status, the tracking label)."""
    if isinstance(expected, dict):
        if not isinstance(live, dict):
            return [f"{where}: {live!r} is no object"]
        return [
            diff
            for key, value in expected.items()
            for diff in contained(value, live.get(key), f"{where}.{key}")
        ]
    if isinstance(expected, list):
        if not isinstance(live, list) or len(live) != len(expected):
            return [f"{where}: {live!r} is not {expected!r}"]
        return [
            diff
            for n, (value, found) in enumerate(zip(expected, live, strict=True))
            for diff in contained(value, found, f"{where}[{n}]")
        ]
    return [] if expected == live else [f"{where}: {live!r} is not {expected!r}"]


def test_the_sidecar_image_renders_an_application_through_the_socket(
    argocd_node: Kube, tmp_path: Path
) -> None:
    kube = argocd_node
    hack = local_cluster()
    kustomize = require_tool("kustomize")

    # The sidecar, as the patch of `paddlegen argocd --sidecar-image` describes it.
    setup = tmp_path / "setup"
    image = hack.images.PLUGIN.reference
    paddlegen(
        "argocd", "--repo-url", "file:///", "--deploy", str(tmp_path / "none"),
        "-o", str(setup), "--sidecar-image", image,
    )  # fmt: skip
    plugins = hack.argocd.hand_over_plugin(kube.state)  # the host's sidecar stopped
    assert not (plugins / "paddlegen.sock").exists()
    os.chown(plugins, argo.SIDECAR_USER, argo.SIDECAR_USER)  # it listens there as user 999
    cmp_server = hack.argocd.ArgoCD().binaries()["argocd"]  # the pinned build `up` runs
    var_files = var_files_with(cmp_server, tmp_path / "var-files")
    pod = sidecar_pod(setup / argo_files.SIDECAR_PATCH_FILE, var_files, plugins)
    kube.run("apply", "-f", "-", stdin=json.dumps(pod))
    wait_listening(kube, plugins / "paddlegen.sock")
    found = kube.read("argocd", "pods", POD)
    (container,) = found["status"]["containerStatuses"]
    assert container["image"].endswith(image.split("/", 1)[1]), container["image"]
    assert found["spec"]["containers"][0]["command"] == argo.SIDECAR_COMMAND

    # A repository of specs, rendered and committed too; the Application renders the specs
    # with the plugin (named: no other plugin could answer).
    repo = init_repo(tmp_path / "jobs-repo")
    revision = render_and_commit(
        repo, {"job.yaml": spec(hack.images.PADDLE.reference)}, "a job for the sidecar"
    )
    source = {"repoURL": f"file://{repo}", "targetRevision": "main", "path": "jobs"}
    app = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": JOB, "namespace": "argocd"},
        "spec": {
            "project": "default",
            "source": {**source, "plugin": {"name": argo.PLUGIN_NAME}},
            "destination": {"server": kube.server, "namespace": NAMESPACE},
            "syncPolicy": {"automated": {}, "syncOptions": ["CreateNamespace=true"]},
        },
    }
    started = time.monotonic()
    kube.run("apply", "-f", "-", stdin=json.dumps(app))

    def synced() -> dict[str, Any] | None:
        found = application(kube, JOB)
        return found if synced_at(found, revision) else None

    try:
        status = wait_for("the plugin's sync", synced, timeout=SYNC_TIMEOUT)["status"]
    finally:
        said = application(kube, JOB).get("status", {})
        print(json.dumps({k: said.get(k) for k in ("sync", "conditions", "operationState")})[:3000])
        print(kube.run("-n", "argocd", "logs", POD, check=False).stdout[-3000:])
    print(f"applied to synced through the sidecar: {time.monotonic() - started:.1f} s")
    assert status.get("sourceType") == "Plugin", status.get("conditions")

    # The live objects are the committed tree's, field for field.
    committed = built_objects(kustomize, repo / "deploy" / JOB)
    assert sorted(o["kind"] for o in committed) == ["ConfigMap", "Job"]
    for expected in committed:
        resource = f"{expected['kind'].lower()}s"
        live = kube.read(NAMESPACE, resource, expected["metadata"]["name"])
        assert live, f"{expected['kind']}/{expected['metadata']['name']} not found"
        assert contained(expected, live) == [], expected["kind"]
    job = kube.read(NAMESPACE, "jobs", JOB)
    assert any(c["type"] == "Complete" for c in job["status"].get("conditions", [])), job["status"]

    # Rendered by the warm renderer: each render is a line of the sidecar's log.
    served = renders(kube)
    assert served >= 1
    objects = resources(status)

    # The renderer killed, a hard refresh renders through the generate's cold fallback: the
    # same objects, Synced at the same revision, and no render by a renderer.
    kill_renderer()
    settle(kube, JOB, revision)
    assert resources(application(kube, JOB)["status"]) == objects
    assert renders(kube) == served

    # Argo CD's own comparison: the same Application over the committed tree, no plugin, no
    # automated sync, compares Synced with what the sidecar rendered, object for object.
    status = compared_with_tree(kube, JOB, source, f"deploy/{JOB}", timeout=SYNC_TIMEOUT)
    assert status.get("sourceType") == "Kustomize", status.get("conditions")
    assert status["sync"]["status"] == "Synced", status["resources"]
    assert resources(status) == objects
    assert status["operationState"]["syncResult"]["revision"] == revision  # no sync since
