"""The control plane: etcd, kube-apiserver, kube-controller-manager, kube-scheduler (and
kubectl), built from hack/tools/k8s and hack/tools/etcd, started on loopback."""

from __future__ import annotations

import json
import secrets
import shutil
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Collection, Sequence
from pathlib import Path

from .base import HACK, Cluster, ClusterError, GoBuild, alive, free_port, pinned, stop, tail

CRDS = HACK / "crds"
K8S_COMMANDS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl")
READY_TIMEOUT = 60.0  # seconds; the API server is ready in about 4 s on 2 cores
# The Services' virtual IPs; the first is the `kubernetes` Service's, which the kubelet gives
# every pod as KUBERNETES_SERVICE_HOST, and which the API server's self-signed certificate
# names (the kube-root-ca.crt pods verify it with).
SERVICE_RANGE = "10.96.0.0/16"
API_SERVICE_IP = "10.96.0.1"


def k8s_ldflags(version: str) -> str:
    # Without them the binaries report gitVersion v0.0.0-master (kubectl version, /version).
    major, minor = version.lstrip("v").split(".")[:2]
    flags = ["-s", "-w"]
    for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        flags += [
            f"-X {package}.gitVersion={version}",
            f"-X {package}.gitMajor={major}",
            f"-X {package}.gitMinor={minor}",
            f"-X {package}.gitTreeState=clean",
            f"-X {package}.buildDate=1970-01-01T00:00:00Z",
        ]
    return " ".join(flags)


def kubernetes(commands: Sequence[str]) -> GoBuild:
    """``commands`` of k8s.io/kubernetes/cmd, built from hack/tools/k8s into one folder."""
    packages = tuple(f"k8s.io/kubernetes/cmd/{name}" for name in commands)
    return GoBuild("k8s", "k8s.io/kubernetes", packages, tuple(commands), ldflags=k8s_ldflags)


K8S = kubernetes(K8S_COMMANDS)
# The module's last element is etcd: `go build .` names the binary after it.
ETCD = GoBuild("etcd", "go.etcd.io/etcd/server/v3", (".",), ("etcd",), ("etcd",))


def kubernetes_version() -> str:
    return pinned(K8S.module, K8S.tools)


def binaries() -> dict[str, Path]:
    return {**K8S.binaries(), **ETCD.binaries()}


def build(absent: Collection[str]) -> None:
    K8S.build(absent)
    ETCD.build(absent)


def start(state: Path, stand_in: bool, timeout: float = READY_TIMEOUT) -> Cluster:
    """Start the control plane under ``state`` and install the CRDs; kube-scheduler with
    the stand-in `volcano` profile when ``stand_in``. The cluster is recorded in ``state``
    as each process starts (so that `down` stops what started, whatever fails after)."""
    paths = binaries()
    state.mkdir(parents=True, exist_ok=True)
    state.chmod(0o700)  # holds the admin token and the service-account key
    key = state / "sa.key"
    openssl = shutil.which("openssl")
    if openssl is None:
        raise ClusterError("`openssl` is not on PATH: it makes the service-account key")
    subprocess.run([openssl, "genrsa", "-out", str(key), "2048"], check=True, capture_output=True)
    token = secrets.token_hex(16)
    (state / "tokens.csv").write_text(f"{token},admin,admin,system:masters\n", encoding="utf-8")
    etcd_port, peer_port, api_port = free_port(), free_port(), free_port()
    server = f"https://127.0.0.1:{api_port}"
    kubeconfig = state / "kubeconfig"
    write_kubeconfig(kubeconfig, server, token)
    cluster = Cluster(
        str(state), str(kubeconfig), server, token, [str(K8S.bin_dir()), str(ETCD.bin_dir())], {}
    )
    cluster.save()
    etcd_url, peer_url = f"http://127.0.0.1:{etcd_port}", f"http://127.0.0.1:{peer_port}"
    cluster.start(
        "etcd",
        [
            str(paths["etcd"]),
            "--name=local",
            f"--data-dir={state / 'etcd'}",
            f"--listen-client-urls={etcd_url}",
            f"--advertise-client-urls={etcd_url}",
            f"--listen-peer-urls={peer_url}",
            f"--initial-advertise-peer-urls={peer_url}",
            f"--initial-cluster=local={peer_url}",
            "--unsafe-no-fsync",  # a throwaway test store: no fsync, much faster
            "--log-level=warn",
        ],
    )
    cluster.start(
        "kube-apiserver",
        [
            str(paths["kube-apiserver"]),
            f"--etcd-servers={etcd_url}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            # No kubernetes Service endpoints: the reconciler refuses a loopback address. A
            # real node's pods reach the API at the Service's IP all the same (node.py).
            "--endpoint-reconciler-type=none",
            f"--secure-port={api_port}",
            f"--cert-dir={state / 'pki'}",
            f"--token-auth-file={state / 'tokens.csv'}",
            "--authorization-mode=RBAC",
            f"--service-account-key-file={key}",
            f"--service-account-signing-key-file={key}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-cluster-ip-range={SERVICE_RANGE}",
            "--enable-priority-and-fairness=false",
            # `kubectl logs` and `exec` reach a real node (`--with node`) by its IP: it has
            # no name the host resolves.
            "--kubelet-preferred-address-types=InternalIP",
        ],
    )
    wait_ready(cluster, {name: paths[name] for name in ("etcd", "kube-apiserver")}, timeout)
    cluster.start(
        "kube-controller-manager",
        [
            str(paths["kube-controller-manager"]),
            f"--kubeconfig={kubeconfig}",
            f"--service-account-private-key-file={key}",
            # publishes the kube-root-ca.crt ConfigMap, which every pod's service-account
            # volume projects: a real kubelet does not start a pod without it
            f"--root-ca-file={state / 'pki' / 'apiserver.crt'}",
            "--use-service-account-credentials=true",
            "--leader-elect=false",
            "--bind-address=127.0.0.1",
            "--secure-port=0",
            "--controllers=*",
            # Tests pause KWOK (SIGSTOP) for as long as an Argo CD sync takes; with the default
            # grace period (under a minute) its nodes turn NotReady meanwhile, get the
            # unreachable taint and no new pod is placed (a data Job's pod then never is).
            "--node-monitor-grace-period=10m",
        ],
    )
    start_kube_scheduler(cluster, stand_in)
    install_crds(cluster)
    return cluster


def wait_ready(cluster: Cluster, processes: dict[str, Path], timeout: float) -> None:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the API server's own self-signed loopback cert
    request = urllib.request.Request(
        cluster.server + "/readyz", headers={"Authorization": f"Bearer {cluster.token}"}
    )
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        cluster.check_alive(processes)
        try:
            with urllib.request.urlopen(request, timeout=2, context=context) as answer:
                if answer.status == 200:
                    return
        except urllib.error.HTTPError as exc:
            last = f"HTTP {exc.code}"
        except OSError as exc:
            last = str(exc)
        time.sleep(0.2)
    raise ClusterError(
        f"the API server was not ready in {timeout:.0f} s ({last}):\n"
        + tail(Path(cluster.state) / "kube-apiserver.log")
    )


def write_kubeconfig(path: Path, server: str, token: str) -> None:
    # JSON is YAML: kubectl reads it, and no YAML library is needed here.
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "local", "cluster": {"server": server, "insecure-skip-tls-verify": True}}
        ],
        "users": [{"name": "admin", "user": {"token": token}}],
        "contexts": [{"name": "local", "context": {"cluster": "local", "user": "admin"}}],
        "current-context": "local",
    }
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    path.chmod(0o600)


def scheduler_config(kubeconfig: Path, stand_in: bool) -> dict[str, object]:
    """kube-scheduler's configuration: the default profile, and, unless Volcano runs
    (`--with volcano`), one named `volcano` that stands in for Volcano's scheduler: it places
    the pods that name it, one by one, with no gang semantics, and nothing moves a PodGroup
    out of Pending (an operator waiting for Inqueue waits until someone sets it)."""
    profiles = [{"schedulerName": "default-scheduler"}]
    if stand_in:
        profiles.append({"schedulerName": "volcano"})
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig)},
        "leaderElection": {"leaderElect": False},
        "profiles": profiles,
    }


def start_kube_scheduler(cluster: Cluster, stand_in: bool) -> None:
    """Start kube-scheduler, with the stand-in `volcano` profile or without it; a running one
    configured the other way is stopped first (two schedulers of one name would race for the
    same pods)."""
    config = Path(cluster.state) / "kube-scheduler.json"
    wanted = scheduler_config(Path(cluster.kubeconfig), stand_in)
    binary = str(binaries()["kube-scheduler"])
    pid = cluster.pids.get("kube-scheduler")
    if pid is not None and alive(pid, binary):
        if json.loads(config.read_text(encoding="utf-8")) == wanted:
            return
        stop([pid])
    config.write_text(json.dumps(wanted), encoding="utf-8")
    cluster.start(
        "kube-scheduler",
        [binary, f"--config={config}", "--bind-address=127.0.0.1", "--secure-port=0"],
    )


def install_crds(cluster: Cluster, files: Sequence[Path] = ()) -> None:
    """Apply ``files`` (by default the top-level CRDs of hack/crds; variants/ holds
    alternatives of the same kinds) and wait until the API server serves them."""
    files = files or sorted(CRDS.glob("*.yaml"))
    argv = [cluster.kubectl, "apply", "--server-side", "--field-manager=local-cluster"]
    for file in files:
        argv += ["-f", str(file)]
    cluster.kubectl_run(argv)
    cluster.kubectl_run(
        [cluster.kubectl, "wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"]
    )
