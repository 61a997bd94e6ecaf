"""hack/local-cluster itself: versions kept together, `up`/`env`/`down` on a state of its own,
and `down` stopping only what `up` started."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from paddlegen.validate.k8s_schemas import DEFAULT_KUBERNETES_VERSION
from tests.cluster.conftest import Kube, local_cluster
from tests.conftest import ROOT

SCRIPT = ROOT / "hack" / "local-cluster"


def test_the_control_plane_is_the_minor_paddlegen_validates_for():
    pinned = local_cluster().kubernetes_version().lstrip("v").split(".")[:2]
    assert pinned == DEFAULT_KUBERNETES_VERSION.split(".")[:2]


def test_the_server_reports_the_pinned_version(kube: Kube):
    version = json.loads(kube.run("version", "-o", "json").stdout)
    pinned = local_cluster().kubernetes_version()
    assert version["serverVersion"]["gitVersion"] == pinned
    assert version["clientVersion"]["gitVersion"] == pinned


def test_up_env_down_on_a_state_folder_of_their_own(kube: Kube, tmp_path: Path):
    # `kube` ensures the binaries exist (or skips/fails); this starts a second cluster.
    state = tmp_path / "state"
    env = {**os.environ, "PADDLEGEN_CLUSTER_DIR": str(state)}
    # A process `down` must leave alone; it must outlive `up`, which took 63 s in a loaded CI run.
    bystander = subprocess.Popen(["sleep", "3600"])
    try:
        up = subprocess.run([sys.executable, SCRIPT, "up"], env=env, capture_output=True, text=True)
        assert up.returncode == 0, up.stderr
        recorded = json.loads((state / "cluster.json").read_text())
        assert sorted(recorded["pids"]) == [
            "etcd",
            "kube-apiserver",
            "kube-controller-manager",
            "kube-scheduler",
        ]
        exports = subprocess.run(
            [sys.executable, SCRIPT, "env"], env=env, capture_output=True, text=True, check=True
        ).stdout.splitlines()
        assert exports[0] == f"export KUBECONFIG={state / 'kubeconfig'}"
        assert exports[1].startswith("export PATH=") and exports[1].endswith(":$PATH")
        # A pid that is not one of ours (recycled, or written by hand) is never signalled.
        recorded["pids"]["etcd-impostor"] = bystander.pid
        (state / "cluster.json").write_text(json.dumps(recorded))
        down = subprocess.run([sys.executable, SCRIPT, "down"], env=env, capture_output=True)
        assert down.returncode == 0, down.stderr
        assert not state.exists()
        for pid in recorded["pids"].values():
            if pid != bystander.pid:
                assert not Path(f"/proc/{pid}").exists() or _zombie(pid), pid
        assert bystander.poll() is None
        status = subprocess.run([sys.executable, SCRIPT, "status"], env=env, capture_output=True)
        assert status.returncode == 1
    finally:
        bystander.kill()
        bystander.wait()
        local_cluster().down(state)


def _zombie(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status").read_text()
    return any(line.split()[1] == "Z" for line in status.splitlines() if line.startswith("State:"))


def test_trainer_starts_the_jobset_it_needs_first():
    resolve = local_cluster().cluster.resolve
    assert resolve(["trainer"]) == ["jobset", "trainer"]
    assert resolve(["kwok", "trainer", "jobset"]) == ["kwok", "jobset", "trainer"]


def test_the_trainer_tools_build_the_controllers_of_the_vendored_crds():
    pinned = local_cluster().base.pinned
    sources = (ROOT / "hack" / "crds" / "SOURCES.md").read_text(encoding="utf-8")
    for crd, module in (
        ("jobset.x-k8s.io_jobsets.yaml", "sigs.k8s.io/jobset"),
        ("trainer.kubeflow.org_trainjobs.yaml", "github.com/kubeflow/trainer/v2"),
    ):
        (row,) = [line for line in sources.splitlines() if line.startswith(f"| `{crd}`")]
        assert f"tag `{pinned(module, 'trainer')}`" in row


def _requires(tools: str) -> dict[str, str]:
    text = (ROOT / "hack" / "tools" / tools / "go.mod").read_text(encoding="utf-8")
    return dict(re.findall(r"^\t(\S+) (v\S+)", text, flags=re.MULTILINE))


def test_the_kueue_tools_build_the_controller_of_the_vendored_crds_sharing_trainers_packages():
    pinned = local_cluster().base.pinned("sigs.k8s.io/kueue", "kueue")
    for sources in (ROOT / "hack" / "crds", ROOT / "hack" / "tools" / "kueue" / "crds"):
        text = (sources / "SOURCES.md").read_text(encoding="utf-8")
        assert f"tag `{pinned}`" in text, sources
    # Go's build cache shares a package only if both graphs select the same version of every
    # module beneath it (hack/tools/kueue/go.mod)
    kueue, trainer = _requires("kueue"), _requires("trainer")
    shared = sorted(set(kueue) & set(trainer))
    assert len(shared) > 100
    assert [m for m in shared if kueue[m] != trainer[m]] == []


def test_the_paddleformers_image_comes_only_with_paddle_llm_and_its_node():
    hack = local_cluster()
    assert hack.cluster.resolve(["paddle-llm"]) == ["node", "paddle-llm"]
    assert hack.images.PADDLE_LLM not in hack.images.IMAGES  # not every node's
    assert set(hack.cluster.image_archives(["paddle-llm"])) == {"paddle-llm image"}
    # the other images' keys do not change with what only the PaddleFormers image needs
    recipe = hack.images.PADDLE_LLM.recipe()
    assert (recipe["sdists"], recipe["console_scripts"]) == (("gputil",), "/usr/local/bin")
    assert "sdists" not in hack.images.PADDLE.recipe()


def test_a_node_does_not_start_where_the_kubelet_would_evict_its_pods(tmp_path, monkeypatch):
    node = local_cluster().node
    gib = 1024**3
    for free, verdict in ((8 * gib, None), (int(2.9 * gib), "2.9 GiB free")):
        usage = SimpleNamespace(total=252 * gib, used=252 * gib - free, free=free)
        monkeypatch.setattr(node.shutil, "disk_usage", lambda _, usage=usage: usage)
        said = node.low_disk(tmp_path)
        assert (
            said is verdict
            if verdict is None
            else said
            == (
                f"{verdict} on the file system of {tmp_path}, 7.5 GiB wanted: the kubelet evicts "
                "every pod below 1% (DiskPressure), and the images and pods need 5 GiB more"
            )
        )
