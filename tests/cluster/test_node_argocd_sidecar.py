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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from paddlegen import __version__
from paddlegen.gitops import argocd_files as argo_files
from paddlegen.gitops import argocd_sidecar as argo
from tests.cluster.conftest import Kube, local_cluster, with_extras
from tests.cluster.test_argocd import (
    application,
    compared_with_tree,
    init_repo,
    paddlegen,
    render_and_commit,
    synced_at,
    wait_synced,
)
from tests.cluster.test_argocd_envs import resources
from tests.cluster.test_argocd_runtime_safety import settle
from tests.cluster.test_paddleflow import wait_for
from tests.conftest import require_tool
from tests.helpers import paddlegen_of, release

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


def spec(image: str, name: str = JOB, namespace: str = NAMESPACE) -> dict[str, Any]:
    """A job that runs a moment on the node, in the Paddle image (imported by `up`)."""
    return {
        "apiVersion": "paddlegen/v1",
        "kind": "TrainingJob",
        "metadata": {"name": name, "namespace": namespace},
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


def sidecar_pod(patch: Path, var_files: Path, plugins: Path, name: str = POD) -> dict[str, Any]:
    """The patch's containers as a pod of their own: the two volumes they share with the
    repo-server in Argo CD's Deployment are host folders here (the repo-server is a host
    process), each one's /tmp the patch's emptyDir."""
    deployment = yaml.safe_load(patch.read_text())
    template = deployment["spec"]["template"]["spec"]
    shared = {
        "var-files": var_files,
        "plugins": plugins,
    }
    for container, tmp in zip(template["containers"], template["volumes"], strict=True):
        container["imagePullPolicy"] = "Never"  # imported by `up`; no registry has it
        assert {m["name"] for m in container["volumeMounts"]} == {*shared, tmp["name"]}
    volumes = [
        {"name": name, "hostPath": {"path": str(path), "type": "Directory"}}
        for name, path in shared.items()
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "argocd"},
        "spec": {
            "containers": template["containers"],
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


def wait_listening(kube: Kube, socket_path: Path, pod_name: str = POD) -> None:
    deadline = time.monotonic() + SIDECAR_TIMEOUT
    while not socket_path.is_socket():
        if time.monotonic() > deadline:
            pod = kube.run("-n", "argocd", "get", "pod", pod_name, "-o", "json", check=False)
            status = json.loads(pod.stdout or "{}").get("status", {})
            logs = kube.run("-n", "argocd", "logs", pod_name, "--all-containers", check=False)
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


@dataclass
class Sidecar:
    """This paddlegen's sidecar in a pod on the node, listening where the repo-server looks."""

    kube: Kube
    plugins: Path  # the socket folder, the repo-server's
    var_files: Path


@pytest.fixture(scope="module")
def sidecar(argocd_node: Kube, tmp_path_factory: pytest.TempPathFactory) -> Sidecar:
    """The sidecar, as the patch of `paddlegen argocd --sidecar-image` describes it."""
    kube, hack = argocd_node, local_cluster()
    work = tmp_path_factory.mktemp("sidecar")
    setup = work / "setup"
    image = hack.images.PLUGIN.reference
    paddlegen(
        "argocd", "--repo-url", "file:///", "--deploy", str(work / "none"),
        "-o", str(setup), "--sidecar-image", image,
    )  # fmt: skip
    plugins = hack.argocd.hand_over_plugin(kube.state)  # the host's sidecar stopped
    assert not any(plugins.glob("*.sock"))
    os.chown(plugins, argo.SIDECAR_USER, argo.SIDECAR_USER)  # it listens there as user 999
    cmp_server = hack.argocd.ArgoCD().binaries()["argocd"]  # the pinned build `up` runs
    var_files = var_files_with(cmp_server, work / "var-files")
    pod = sidecar_pod(setup / argo_files.SIDECAR_PATCH_FILE, var_files, plugins)
    kube.run("apply", "-f", "-", stdin=json.dumps(pod))
    wait_listening(kube, plugins / f"{argo.plugin_name()}.sock")
    found = kube.read("argocd", "pods", POD)
    (container,) = found["status"]["containerStatuses"]
    assert container["image"].endswith(image.split("/", 1)[1]), container["image"]
    assert found["spec"]["containers"][0]["command"] == argo.SIDECAR_COMMAND
    return Sidecar(kube, plugins, var_files)


def plugin_application(kube: Kube, name: str, namespace: str, repo: Path, plugin: str) -> None:
    """An Application of the specs in ``repo``'s jobs/ that renders them with ``plugin``."""
    app = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": name, "namespace": "argocd"},
        "spec": {
            "project": "default",
            "source": {
                "repoURL": f"file://{repo}",
                "targetRevision": "main",
                "path": "jobs",
                "plugin": {"name": plugin},
            },
            "destination": {"server": kube.server, "namespace": namespace},
            "syncPolicy": {"automated": {}, "syncOptions": ["CreateNamespace=true"]},
        },
    }
    kube.run("apply", "-f", "-", stdin=json.dumps(app))


def test_the_sidecar_image_renders_an_application_through_the_socket(
    sidecar: Sidecar, tmp_path: Path
) -> None:
    kube = sidecar.kube
    hack = local_cluster()
    kustomize = require_tool("kustomize")

    # A repository of specs, rendered and committed too; the Application renders the specs
    # with the plugin, which it names.
    repo = init_repo(tmp_path / "jobs-repo")
    revision = render_and_commit(
        repo, {"job.yaml": spec(hack.images.PADDLE.reference)}, "a job for the sidecar"
    )
    source = {"repoURL": f"file://{repo}", "targetRevision": "main", "path": "jobs"}
    started = time.monotonic()
    plugin_application(kube, JOB, NAMESPACE, repo, argo.plugin_name())

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


NEWER = "0.2.0"  # a copy of this paddlegen as that version, its batch Jobs with a field more
PODS = "argocd-plugin-sidecars"  # this paddlegen's sidecar kept beside the newer one's
KEPT_NAMESPACE, KEPT = "node-plugin-kept", "plugin-kept"
RELEASE = "/opt/paddlegen-release"  # where the newer container finds the copy


def as_release(pod: dict[str, Any], container: dict[str, Any], tree: Path, plugin: Path) -> None:
    """Make ``container`` of ``pod`` the newer version's image: the plugin image with the copy
    in ``tree`` before its own paddlegen (PYTHONPATH), and the copy's plugin.yaml (``plugin``)
    where the image has its own."""
    for path in (tree, *tree.rglob("*"), plugin):  # read by user 999
        path.chmod(0o755 if path.is_dir() else 0o644)
    pod["spec"]["volumes"] += [
        {"name": "release", "hostPath": {"path": str(tree), "type": "Directory"}},
        {"name": "release-plugin", "hostPath": {"path": str(plugin), "type": "File"}},
    ]
    container["volumeMounts"] += [
        {"name": "release", "mountPath": RELEASE, "readOnly": True},
        {"name": "release-plugin", "mountPath": argo.CMP_CONFIG, "readOnly": True},
    ]
    container["env"].append({"name": "PYTHONPATH", "value": RELEASE})


def run_record(tree: Path | None, folder: Path) -> str:
    """The digest in the run record of the specs in ``folder``, as the paddlegen in ``tree``
    (None: this one) renders them."""
    done = paddlegen_of(tree, folder, "render", ".", "--stdout")
    assert done.returncode == 0, done.stderr
    (record,) = [d for d in yaml.safe_load_all(done.stdout) if d and d["kind"] == "ConfigMap"]
    return str(record["data"]["digest"])


def test_a_newer_sidecar_beside_this_one_runs_no_finished_job_again(
    sidecar: Sidecar, tmp_path: Path
) -> None:
    """An Application that names this paddlegen's plugin syncs, and its job runs. A newer
    paddlegen writes the patch with its sidecar and this one's kept (--keep-sidecar), and the
    sidecars' pod is replaced by the two: a hard refresh renders with the version the
    Application names, Synced, its job not run again. Named to the newer plugin, it takes the
    newer rendering, and its job runs once more. Named to a plugin no sidecar serves, it shows
    a comparison error, and nothing is synced or pruned."""
    kube, hack = sidecar.kube, local_cluster()
    image = hack.images.PLUGIN.reference
    repo = init_repo(tmp_path / "jobs-repo")
    job = spec(hack.images.PADDLE.reference, KEPT, KEPT_NAMESPACE)
    revision = render_and_commit(repo, {"job.yaml": job}, "a job rendered by one version")
    plugin_application(kube, KEPT, KEPT_NAMESPACE, repo, argo.plugin_name())
    wait_synced(kube, KEPT, revision)
    ran = kube.read(KEPT_NAMESPACE, "jobs", KEPT)["metadata"]["uid"]
    syncs = len(application(kube, KEPT)["status"]["history"])

    # The newer paddlegen's patch: its sidecar, and this one's kept, which runs its image's
    # own entry point.
    new = release(tmp_path, NEWER)
    setup = tmp_path / "setup-newer"
    done = paddlegen_of(
        new, tmp_path, "argocd", "--repo-url", "file:///", "--deploy", str(tmp_path / "none"),
        "-o", str(setup), "--sidecar-image", image, "--keep-sidecar", f"{__version__}={image}",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    patch_file = setup / argo_files.SIDECAR_PATCH_FILE
    pod = sidecar_pod(patch_file, sidecar.var_files, sidecar.plugins, PODS)
    newer, kept = pod["spec"]["containers"]
    assert [newer["name"], kept["name"]] == [
        argo.sidecar_container_name(NEWER),
        argo.sidecar_container_name(__version__),
    ]
    assert (newer["command"], "command" in kept) == (argo.SIDECAR_COMMAND, False)
    as_release(pod, newer, new, setup / argo_files.CMP_FILE)
    # Gone before the new pod starts: a server that stops removes its socket, which would be
    # the kept one's by then. Its server needs no grace: no render runs.
    kube.run("-n", "argocd", "delete", "pod", POD, "--wait=true", "--grace-period=1")
    for stale in sidecar.plugins.glob("*.sock"):  # a server killed leaves its socket
        stale.unlink()
    kube.run("apply", "-f", "-", stdin=json.dumps(pod))
    for version in (NEWER, __version__):
        wait_listening(kube, sidecar.plugins / f"{argo.plugin_name(version)}.sock", PODS)

    # Hard-refreshed, the Application renders with the version it names: Synced at the same
    # revision, no sync since, the same Job.
    settle(kube, KEPT, revision)
    assert len(application(kube, KEPT)["status"]["history"]) == syncs
    assert kube.read(KEPT_NAMESPACE, "jobs", KEPT)["metadata"]["uid"] == ran

    # Named to the newer plugin, it takes the newer rendering: one sync, one run more.
    digest = run_record(new, repo / "jobs")
    assert digest != run_record(None, repo / "jobs")
    patch = {"spec": {"source": {"plugin": {"name": argo.plugin_name(NEWER)}}}}
    kube.run("-n", "argocd", "patch", "application", KEPT, "--type", "merge",
             "-p", json.dumps(patch))  # fmt: skip

    def synced_again() -> bool:
        found = application(kube, KEPT)
        return len(found["status"].get("history", [])) > syncs and synced_at(found, revision)

    started = time.monotonic()
    wait_for("the sync of the newer rendering", synced_again, timeout=SYNC_TIMEOUT)
    print(f"renamed to synced with the newer rendering: {time.monotonic() - started:.1f} s")
    assert len(application(kube, KEPT)["status"]["history"]) == syncs + 1
    record = kube.read(KEPT_NAMESPACE, "configmaps", f"{KEPT}-run")
    assert record["data"]["digest"] == digest
    rerun = kube.read(KEPT_NAMESPACE, "jobs", KEPT)["metadata"]["uid"]
    assert rerun != ran

    # Named to a plugin no sidecar serves (its sidecar dropped), it cannot render: a
    # comparison error, and Argo CD syncs and prunes nothing.
    missing = argo.plugin_name("9.9.9")
    patch = {"spec": {"source": {"plugin": {"name": missing}}}}
    kube.run("-n", "argocd", "patch", "application", KEPT, "--type", "merge",
             "-p", json.dumps(patch))  # fmt: skip

    def comparison_error() -> dict[str, Any] | None:
        conditions = application(kube, KEPT)["status"].get("conditions", [])
        return next((c for c in conditions if c["type"] == "ComparisonError"), None)

    condition = wait_for("the comparison error", comparison_error, timeout=SYNC_TIMEOUT)
    assert missing in condition["message"], condition
    status = application(kube, KEPT)["status"]
    assert (status["sync"]["status"], len(status["history"])) == ("Unknown", syncs + 1), status
    assert kube.read(KEPT_NAMESPACE, "jobs", KEPT)["metadata"]["uid"] == rerun
    assert kube.read(KEPT_NAMESPACE, "configmaps", f"{KEPT}-run")["data"]["digest"] == digest
