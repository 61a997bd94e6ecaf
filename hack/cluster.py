"""A local Kubernetes control plane on loopback, built from pinned sources (hack/local-cluster).

etcd, kube-apiserver, kube-controller-manager and kube-scheduler (and kubectl) are built once
from the Go modules in hack/tools into a cache keyed by version; `up` starts them with free
ports under a state folder, installs the upstream CRDs of hack/crds and waits until the API
server is ready; `down` stops exactly the processes `up` started. The pytest fixture of the
`cluster` tests (tests/cluster.py) runs the same code. Standard library only: it runs before
any package is installed, and in CI before the virtualenv exists.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import resource
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

HACK = Path(__file__).resolve().parent
TOOLS = HACK / "tools"
CRDS = HACK / "crds"
K8S_COMMANDS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl")
DEFAULT_STATE = "/tmp/paddlegen-cluster"
READY_TIMEOUT = 60.0  # seconds; the API server is ready in about 4 s on 2 cores


class ClusterError(Exception):
    """What went wrong, said for a person: no traceback."""


def pinned(module: str, tools: str) -> str:
    """The version of ``module`` that hack/tools/<tools>/go.mod requires (the one place the
    control plane's version is written)."""
    text = (TOOLS / tools / "go.mod").read_text(encoding="utf-8")
    found = re.search(rf"^\s*(?:require\s+)?{re.escape(module)}\s+(v\S+)", text, re.MULTILINE)
    if not found:
        raise ClusterError(f"hack/tools/{tools}/go.mod requires no {module}")
    return found.group(1)


def kubernetes_version() -> str:
    return pinned("k8s.io/kubernetes", "k8s")


def etcd_version() -> str:
    return pinned("go.etcd.io/etcd/server/v3", "etcd")


@dataclass(frozen=True)
class Extra:
    """What `up --with NAME` starts besides the control plane: one process per package."""

    tools: str  # its module under hack/tools
    module: str  # the module whose version go.mod pins
    packages: tuple[str, ...]  # what `go build` builds, one binary each
    processes: tuple[str, ...]  # the name each binary runs under (state, logs), in that order
    names: tuple[str, ...] = ()  # the binaries' names, if not their packages' (one package)

    @property
    def binaries(self) -> dict[str, str]:
        """Process name -> binary name (`go build` names a binary after its package)."""
        names = self.names or tuple(package.rsplit("/", 1)[-1] for package in self.packages)
        return dict(zip(self.processes, names, strict=True))


EXTRAS = {
    "kwok": Extra("kwok", "sigs.k8s.io/kwok", ("sigs.k8s.io/kwok/cmd/kwok",), ("kwok",)),
    "paddle-operator": Extra(
        "paddle-operator",
        "github.com/paddleflow/paddle-operator",
        ("github.com/paddleflow/paddle-operator",),
        ("paddle-operator",),
    ),
    "training-operator": Extra(
        "training-operator",
        "github.com/kubeflow/training-operator",
        ("github.com/kubeflow/training-operator/cmd/training-operator.v1",),
        ("training-operator",),
    ),
    # Real gang scheduling: vc-scheduler admits and places whole PodGroups; the controller
    # manager keeps Queues' state and makes PodGroups for plain pods that name the scheduler.
    "volcano": Extra(
        "volcano",
        "volcano.sh/volcano",
        ("volcano.sh/volcano/cmd/scheduler", "volcano.sh/volcano/cmd/controller-manager"),
        ("vc-scheduler", "vc-controller-manager"),
    ),
    # One binary for every component; ARGOCD_BINARY_NAME picks one (cmd/main.go).
    # (its components run as argocd-repo-server, ...: ARGOCD_COMPONENTS below)
    "argocd": Extra(
        "argocd",
        "github.com/argoproj/argo-cd/v3",
        ("github.com/argoproj/argo-cd/v3/cmd",),
        ("argocd",),
        ("argocd",),
    ),
}
# What `--with argocd` runs, by the names `up` records them under: Debian's redis-server (Argo
# CD's cache, shared by the components) and four components of the one binary, the plugin
# sidecar (argocd-cmp-server, running paddlegen's Config Management Plugin) among them. No API
# server, UI, Dex or notifications: the tests read and write Applications with kubectl.
ARGOCD_NAMESPACE = "argocd"
ARGOCD_REDIS = "argocd-redis"
ARGOCD_CMP_SERVER = "argocd-cmp-server"
ARGOCD_COMPONENTS = (
    ARGOCD_CMP_SERVER,
    "argocd-repo-server",
    "argocd-application-controller",
    "argocd-applicationset-controller",
)
# The socket the plugin sidecar listens on, in the folder both it and the repo-server are
# given as ARGOCD_PLUGINSOCKFILEPATH (in a pod: a shared emptyDir): <plugin name>.sock.
ARGOCD_PLUGIN_SOCKET = "argocd-plugins/paddlegen.sock"
# The extra each process that is not named after its extra belongs to.
_PROCESS_EXTRA = {name: "argocd" for name in (ARGOCD_REDIS, *ARGOCD_COMPONENTS)}
ARGOCD_TOOLS = TOOLS / "argocd"
# The AppProject CRD, from the same release as hack/crds' Application and ApplicationSet; it
# lives here, not in hack/crds, because only a running Argo CD needs it (no paddlegen output is
# an AppProject, so it gets no schema in schemas/crds).
ARGOCD_CRDS = ARGOCD_TOOLS / "crds"


def extras_of(processes: Sequence[str]) -> list[str]:
    """The extras whose processes are among ``processes`` (a cluster's recorded pids)."""
    owners = {_PROCESS_EXTRA.get(name, name) for name in processes}
    return [name for name, extra in EXTRAS.items() if set(extra.processes) & owners]


# training-operator v1.9.0 starts its controllers only once its certificate rotator has found
# the webhook Secret and the ValidatingWebhookConfiguration of its release (pkg/cert/cert.go).
# Its webhook server cannot be reached from this API server (no Service, no pod network), so
# the configuration registered here matches no request: the operator's admission checks do not
# run, the controllers do.
TRAINING_OPERATOR_NAMESPACE = "kubeflow"
TRAINING_OPERATOR_SETUP = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": TRAINING_OPERATOR_NAMESPACE}},
    {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "training-operator-webhook-cert",
            "namespace": TRAINING_OPERATOR_NAMESPACE,
        },
    },
    {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "validator.training-operator.kubeflow.org"},
        "webhooks": [
            {
                "name": "validator.paddlejob.training-operator.kubeflow.org",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Ignore",
                "clientConfig": {
                    "service": {
                        "name": "training-operator",
                        "namespace": TRAINING_OPERATOR_NAMESPACE,
                        "path": "/validate-kubeflow-org-v1-paddlejob",
                    }
                },
                "rules": [],
            }
        ],
    },
]
# The fake nodes `--with kwok` adds: room for every example's pods, one per node where host
# ports or anti-affinity ask for it.
FAKE_NODES = 8
FAKE_NODE_CAPACITY = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"}


def cache_root() -> Path:
    explicit = os.environ.get("PADDLEGEN_TOOLS_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "paddlegen"


def k8s_bin() -> Path:
    return cache_root() / "k8s" / kubernetes_version() / "bin"


def etcd_bin() -> Path:
    return cache_root() / "etcd" / etcd_version() / "bin"


def extra_bin(name: str) -> Path:
    extra = EXTRAS[name]
    return cache_root() / name / pinned(extra.module, extra.tools) / "bin"


def binaries(extras: Sequence[str] = ()) -> dict[str, Path]:
    """Every binary the control plane (and ``extras``) needs, by name, where `build` puts it."""
    found = {name: k8s_bin() / name for name in K8S_COMMANDS}
    found["etcd"] = etcd_bin() / "etcd"
    for name in extras:
        for process, binary in EXTRAS[name].binaries.items():
            found[process] = extra_bin(name) / binary
    if "argocd" in extras:  # not built here: Debian's package (README)
        found["redis-server"] = _redis_server()
    return found


def _redis_server() -> Path:
    """redis-server on PATH, its folder resolved (/bin is /usr/bin on Debian) but not the
    file: it is a link to redis-check-rdb, which acts by the name it is run as."""
    found = shutil.which("redis-server")
    if found is None:
        return Path("redis-server (not on PATH)")
    return Path(os.path.realpath(Path(found).parent)) / "redis-server"


def _argv0(process: str, paths: dict[str, Path]) -> str | None:
    """The executable that `up` started the process recorded as ``process`` with."""
    if process in paths:
        return str(paths[process])
    if process == ARGOCD_REDIS:
        return str(paths.get("redis-server", ""))
    if process in ARGOCD_COMPONENTS:
        return str(paths.get("argocd", ""))
    return None


def _argocd_ldflags(version: str) -> str:
    # What `argocd version` and the components' startup lines report (common/version.go).
    package = "github.com/argoproj/argo-cd/v3/common"
    return (
        f"-s -w -X {package}.version={version.lstrip('v')} -X {package}.gitTag={version} "
        f"-X {package}.gitTreeState=clean"
    )


def missing(extras: Sequence[str] = ()) -> list[str]:
    return [name for name, path in binaries(extras).items() if not os.access(path, os.X_OK)]


def _ldflags(version: str) -> str:
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


def _go_build(
    module_dir: Path, packages: list[str], bin_dir: Path, ldflags: str = "", name: str = ""
) -> None:
    """Build ``packages`` into ``bin_dir`` (one package as ``name``, when given): into a
    temporary folder beside it first, then renamed, so an interrupted build never leaves a
    binary that looks finished."""
    go = shutil.which("go")
    if go is None:
        raise ClusterError("`go` is not on PATH: it builds the control plane (hack/tools)")
    bin_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=bin_dir, prefix=".build-") as tmp:
        output = f"{tmp}/{name}" if name else tmp + "/"
        command = [go, "build", "-trimpath", "-ldflags", ldflags, "-o", output, *packages]
        started, before = time.monotonic(), _children_cpu()
        done = subprocess.run(command, cwd=module_dir, check=False)
        if done.returncode != 0:
            raise ClusterError(f"go build in {module_dir} failed (exit {done.returncode})")
        built = sorted(p.name for p in Path(tmp).iterdir())
        for binary in built:
            os.replace(Path(tmp) / binary, bin_dir / binary)
        took, cpu = time.monotonic() - started, _children_cpu() - before
        # CPU time too: wall time depends on what else the machine runs, CPU time much less.
        print(f"built {', '.join(built)} in {took:.0f} s ({cpu:.0f} s of CPU)", file=sys.stderr)


def _children_cpu() -> float:
    """User and system time of the finished child processes (go build and its compilers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _known(extras: Sequence[str]) -> None:
    unknown = sorted(set(extras) - set(EXTRAS))
    if unknown:
        raise ClusterError(f"no such component: {', '.join(unknown)} (known: {', '.join(EXTRAS)})")


def build(extras: Sequence[str] = ()) -> dict[str, Path]:
    """Build what is missing from the cache; nothing when every binary is there."""
    _known(extras)
    absent = missing(extras)
    k8s = [f"k8s.io/kubernetes/cmd/{name}" for name in K8S_COMMANDS if name in absent]
    if k8s:
        _go_build(TOOLS / "k8s", k8s, k8s_bin(), _ldflags(kubernetes_version()))
    if "etcd" in absent:
        _go_build(TOOLS / "etcd", ["."], etcd_bin())  # the module's last element: etcd
    if "redis-server" in absent:
        raise ClusterError(
            "`redis-server` is not on PATH: Argo CD's cache (Debian: apt-get install redis-server)"
        )
    for name in extras:
        extra = EXTRAS[name]
        packages = [
            package
            for package, process in zip(extra.packages, extra.processes, strict=True)
            if process in absent
        ]
        if packages:
            ldflags = _argocd_ldflags(pinned(extra.module, extra.tools)) if name == "argocd" else ""
            output = extra.names[0] if extra.names else ""  # names a single binary
            _go_build(TOOLS / extra.tools, packages, extra_bin(name), ldflags, output)
    return binaries(extras)


@dataclass
class Cluster:
    """A running control plane, as `up` records it in <state>/cluster.json."""

    state: str
    kubeconfig: str
    server: str
    token: str
    bin_dirs: list[str]
    pids: dict[str, int]

    @property
    def extras(self) -> list[str]:
        return extras_of(list(self.pids))

    @property
    def kubectl(self) -> str:
        return str(Path(self.bin_dirs[0]) / "kubectl")

    def env(self) -> dict[str, str]:
        """The environment a kubectl of this cluster needs."""
        path = os.pathsep.join([*self.bin_dirs, os.environ.get("PATH", "")])
        return {**os.environ, "KUBECONFIG": self.kubeconfig, "PATH": path}


def state_dir(explicit: str | Path | None = None) -> Path:
    return Path(explicit or os.environ.get("PADDLEGEN_CLUSTER_DIR") or DEFAULT_STATE)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _alive(pid: int, binary: str) -> bool:
    """``pid`` runs ``binary`` (a recycled pid running something else is not ours)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
    except OSError:
        return False
    return cmdline == binary


def _gone(cluster: Cluster, name: str) -> ClusterError:
    """The error for a process of ``cluster`` that ended: how (its exit status, or the signal
    that killed it: one killed before it logged anything leaves nothing else to go by) and
    the end of its log."""
    child = _CHILDREN.get(cluster.pids[name])
    code = None if child is None else child.poll()
    how = "exited"
    if code is not None:
        how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
    return ClusterError(f"{name} {how}:\n{_tail(Path(cluster.state) / (name + '.log'))}")


# The processes this Python process started, kept so that they are waited for, not reported
# as still running when garbage-collected (the pytest fixture runs `up` and `down` in-process).
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def _start(name: str, argv: list[str], state: Path, env: dict[str, str] | None = None) -> int:
    log = open(state / f"{name}.log", "ab")  # noqa: SIM115 - the child keeps it open
    with log:
        process = subprocess.Popen(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C in the terminal that ran `up` does not stop it
        )
    _CHILDREN[process.pid] = process
    return process.pid


def _wait_ready(cluster: Cluster, binaries_: dict[str, Path], timeout: float) -> None:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the API server's own self-signed loopback cert
    request = urllib.request.Request(
        cluster.server + "/readyz", headers={"Authorization": f"Bearer {cluster.token}"}
    )
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        for name in ("etcd", "kube-apiserver"):
            if not _alive(cluster.pids[name], str(binaries_[name])):
                raise _gone(cluster, name)
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
        + _tail(Path(cluster.state) / "kube-apiserver.log")
    )


def _tail(log: Path, lines: int = 15) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _kubeconfig(path: Path, server: str, token: str) -> None:
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


def load(state: Path) -> Cluster | None:
    """The cluster recorded in ``state``, if every process of it still runs."""
    try:
        cluster = Cluster(**json.loads((state / "cluster.json").read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None
    paths = binaries(cluster.extras)
    if all(_alive(pid, _argv0(name, paths) or "") for name, pid in cluster.pids.items()):
        return cluster
    return None


def up(
    state: Path | None = None, timeout: float = READY_TIMEOUT, extras: Sequence[str] = ()
) -> Cluster:
    """Build if needed, start the control plane, install the CRDs, wait until it is ready;
    then start ``extras`` (see EXTRAS) that are not running yet."""
    _known(extras)
    state = state_dir(state)
    running = load(state)
    if running:
        _start_extras(running, [e for e in extras if e not in running.extras])
        return running
    if (state / "cluster.json").exists():
        down(state)  # a half-dead cluster from before: stop what is left, start afresh
    build(extras)
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
    etcd_port, peer_port, api_port = _free_port(), _free_port(), _free_port()
    server = f"https://127.0.0.1:{api_port}"
    kubeconfig = state / "kubeconfig"
    _kubeconfig(kubeconfig, server, token)
    pids: dict[str, int] = {}
    cluster = Cluster(
        str(state), str(kubeconfig), server, token, [str(k8s_bin()), str(etcd_bin())], pids
    )
    etcd_url, peer_url = f"http://127.0.0.1:{etcd_port}", f"http://127.0.0.1:{peer_port}"
    try:
        pids["etcd"] = _start(
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
            state,
        )
        pids["kube-apiserver"] = _start(
            "kube-apiserver",
            [
                str(paths["kube-apiserver"]),
                f"--etcd-servers={etcd_url}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                # No kubernetes Service endpoints: the reconciler refuses a loopback address,
                # and nothing in this cluster runs in a pod that would call the API by it.
                "--endpoint-reconciler-type=none",
                f"--secure-port={api_port}",
                f"--cert-dir={state / 'pki'}",
                f"--token-auth-file={state / 'tokens.csv'}",
                "--authorization-mode=RBAC",
                f"--service-account-key-file={key}",
                f"--service-account-signing-key-file={key}",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                "--service-cluster-ip-range=10.96.0.0/16",
                "--enable-priority-and-fairness=false",
            ],
            state,
        )
        _wait_ready(cluster, paths, timeout)
        pids["kube-controller-manager"] = _start(
            "kube-controller-manager",
            [
                str(paths["kube-controller-manager"]),
                f"--kubeconfig={kubeconfig}",
                f"--service-account-private-key-file={key}",
                "--use-service-account-credentials=true",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                "--secure-port=0",
                "--controllers=*",
            ],
            state,
        )
        _start_kube_scheduler(cluster, stand_in="volcano" not in extras)
        _save(cluster)
        install_crds(cluster)
        _start_extras(cluster, list(extras))
    except BaseException:
        _save(cluster)
        down(state)
        raise
    return cluster


def _scheduler_config(kubeconfig: Path, stand_in: bool) -> dict[str, object]:
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


def _start_kube_scheduler(cluster: Cluster, stand_in: bool) -> None:
    """Start kube-scheduler, with the stand-in `volcano` profile or without it; a running one
    configured the other way is stopped first (two schedulers of one name would race for the
    same pods)."""
    state = Path(cluster.state)
    config = state / "kube-scheduler.json"
    wanted = _scheduler_config(Path(cluster.kubeconfig), stand_in)
    binary = str(binaries()["kube-scheduler"])
    pid = cluster.pids.get("kube-scheduler")
    if pid is not None and _alive(pid, binary):
        if json.loads(config.read_text(encoding="utf-8")) == wanted:
            return
        _stop([pid])
    config.write_text(json.dumps(wanted), encoding="utf-8")
    cluster.pids["kube-scheduler"] = _start(
        "kube-scheduler",
        [binary, f"--config={config}", "--bind-address=127.0.0.1", "--secure-port=0"],
        state,
    )


def _save(cluster: Cluster) -> None:
    (Path(cluster.state) / "cluster.json").write_text(json.dumps(asdict(cluster), indent=2) + "\n")


def _start_extras(cluster: Cluster, extras: list[str]) -> None:
    """Start each of ``extras`` on a running control plane (built if needed), recorded in
    the state so that `down` stops them too."""
    if not extras:
        return
    paths = build(extras)
    state = Path(cluster.state)
    kubeconfig = ["--kubeconfig", cluster.kubeconfig]
    for name in extras:
        if name == "volcano":
            _start_volcano(cluster, paths)
            continue
        if name == "argocd":
            _start_argocd(cluster, paths)
            continue
        if name == "kwok":
            # A fake kubelet for every node: pods get scheduled, Running and an IP; pods of a
            # batch Job complete by themselves (KWOK's default stages).
            argv = [str(paths[name]), *kubeconfig, "--manage-all-nodes=true", "--node-port=0"]
        elif name == "training-operator":  # PaddleJob only, gangs through Volcano
            _apply(cluster, TRAINING_OPERATOR_SETUP)
            argv = [
                str(paths[name]),
                *kubeconfig,
                "--metrics-bind-address=0",
                "--health-probe-bind-address=0",
                f"--webhook-server-port={_free_port()}",
                "--enable-scheme=paddlejob",
                "--gang-scheduler-name=volcano",
            ]
        else:  # paddle-operator: PaddleFlow's controller, with the flag that turns gangs on
            argv = [
                str(paths[name]),
                *kubeconfig,
                "--metrics-bind-address=0",
                "--health-probe-bind-address=0",
                "--scheduling=volcano",
            ]
        cluster.pids[name] = _start(name, argv, state)
        _save(cluster)
        if name == "training-operator":
            _mount_webhook_certs(cluster)
    if "kwok" in extras:
        _fake_nodes(cluster)


# vc-scheduler's configuration: Volcano's own default, its Helm chart's
# installer/helm/chart/volcano/config/volcano-scheduler.conf at the pinned tag. `enqueue`
# admits a PodGroup (Pending -> Inqueue) only when its minResources fit what the queue and the
# cluster have left; `gang` lets `allocate` bind a job's pods only when minMember of them fit.
VOLCANO_SCHEDULER_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""
# The Volcano CRDs only Volcano itself needs (PodGroup is in hack/crds with the others).
VOLCANO_CRDS = TOOLS / "volcano" / "crds"


def _start_volcano(cluster: Cluster, paths: dict[str, Path]) -> None:
    """vc-scheduler and vc-controller-manager, the way Volcano's chart runs them, minus what
    needs a pod network or more CRDs: no webhook manager (its admission checks do not run),
    no metrics or health ports, and only the PodGroup and Queue controllers."""
    install_crds(cluster, sorted(VOLCANO_CRDS.glob("*.yaml")))
    _start_kube_scheduler(cluster, stand_in=False)  # vc-scheduler alone answers to `volcano`
    state = Path(cluster.state)
    conf = state / "vc-scheduler.conf"
    conf.write_text(VOLCANO_SCHEDULER_CONF, encoding="utf-8")
    kubeconfig = f"--kubeconfig={cluster.kubeconfig}"
    cluster.pids["vc-scheduler"] = _start(
        "vc-scheduler",
        [
            str(paths["vc-scheduler"]),
            kubeconfig,
            f"--scheduler-conf={conf}",
            "--leader-elect=false",
            "--cache-dumper=false",
            # Numatopology objects come from Volcano's node agent, which does not run here
            # (nor does its CRD: an informer on a missing CRD never syncs).
            "--feature-gates=ResourceTopology=false",
        ],
        state,
    )
    _save(cluster)
    cluster.pids["vc-controller-manager"] = _start(
        "vc-controller-manager",
        [
            str(paths["vc-controller-manager"]),
            kubeconfig,
            "--leader-elect=false",
            # PodGroups for pods and Jobs that name the scheduler; Queue state and counts.
            "--controllers=pg-controller,queue-controller",
            "--feature-gates=QueueCommandSync=false",  # no bus.volcano.sh Command CRD here
        ],
        state,
    )
    _save(cluster)
    _wait_open_queue(cluster, paths)


def _wait_open_queue(cluster: Cluster, paths: dict[str, Path], timeout: float = 60.0) -> None:
    """Wait for the `default` Queue (vc-scheduler creates it, the queue controller opens it):
    a PodGroup in a queue that is not there yet is not scheduled."""
    deadline = time.monotonic() + timeout
    argv = [cluster.kubectl, "get", "queue", "default", "-o", "jsonpath={.status.state}"]
    while time.monotonic() < deadline:
        for process in ("vc-scheduler", "vc-controller-manager"):
            if not _alive(cluster.pids[process], str(paths[process])):
                raise _gone(cluster, process)
        done = subprocess.run(argv, env=cluster.env(), capture_output=True, text=True, check=False)
        if done.returncode == 0 and done.stdout == "Open":
            return
        time.sleep(0.2)
    raise ClusterError(
        f"Volcano's default Queue was not Open in {timeout:.0f} s:\n"
        + _tail(Path(cluster.state) / "vc-scheduler.log")
    )


# Where training-operator's webhook server reads its certificate (pkg/cert/cert.go, certDir):
# in a pod, the kubelet mounts the Secret there; its rotator waits for the files.
WEBHOOK_CERT_DIR = Path("/tmp/k8s-webhook-server/serving-certs")


def _mount_webhook_certs(cluster: Cluster, timeout: float = 30.0) -> None:
    """Do what the kubelet's Secret volume would: copy the certificate the operator's rotator
    wrote into its Secret to the folder its webhook server reads."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = subprocess.run(
            [
                cluster.kubectl,
                "get",
                "secret",
                "training-operator-webhook-cert",
                "-n",
                TRAINING_OPERATOR_NAMESPACE,
                "-o",
                "json",
            ],
            env=cluster.env(),
            capture_output=True,
            text=True,
            check=False,
        )
        data = json.loads(done.stdout).get("data", {}) if done.returncode == 0 else {}
        if {"tls.crt", "tls.key"} <= set(data):
            WEBHOOK_CERT_DIR.mkdir(parents=True, exist_ok=True)
            for file in ("tls.crt", "tls.key"):
                (WEBHOOK_CERT_DIR / file).write_bytes(base64.b64decode(data[file]))
            return
        time.sleep(0.2)
    raise ClusterError("training-operator wrote no webhook certificate into its Secret")


def _argocd_setup(cluster: Cluster) -> list[dict[str, object]]:
    """What Argo CD's components read besides their flags: the settings ConfigMap and Secret
    (found by the part-of label), the project every Application names by default, and the
    local API server as a destination. Argo CD's own install also has argocd-rbac-cm and more,
    read by the API server, which does not run here."""
    part_of = {"app.kubernetes.io/part-of": "argocd"}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ARGOCD_NAMESPACE}},
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "argocd-cm", "namespace": ARGOCD_NAMESPACE, "labels": part_of},
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": "argocd-secret",
                "namespace": ARGOCD_NAMESPACE,
                "labels": part_of,
            },
            # Without it the settings are "incomplete" (util/settings/settings.go).
            "stringData": {"server.secretkey": secrets.token_hex(16)},
        },
        {
            # What Argo CD's API server creates at its start; open to every repository and
            # destination, as there.
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "AppProject",
            "metadata": {"name": "default", "namespace": ARGOCD_NAMESPACE},
            "spec": {
                "sourceRepos": ["*"],
                "destinations": [{"server": "*", "namespace": "*"}],
                "clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
            },
        },
        {
            # The local API server as a destination (https://127.0.0.1:PORT): the in-cluster
            # one, https://kubernetes.default.svc, needs a pod's service-account mount.
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": "cluster-local",
                "namespace": ARGOCD_NAMESPACE,
                "labels": {"argocd.argoproj.io/secret-type": "cluster"},
            },
            "stringData": {
                "name": "local",
                "server": cluster.server,
                # the kubeconfig's credentials: the admin token, the self-signed loopback cert
                "config": json.dumps(
                    {"bearerToken": cluster.token, "tlsClientConfig": {"insecure": True}}
                ),
            },
        },
    ]


def _start_argocd(cluster: Cluster, paths: dict[str, Path], timeout: float = 30.0) -> None:
    """Argo CD's CRDs and settings, then redis, the plugin sidecar and the repo-server,
    application controller and ApplicationSet controller, on loopback ports and a socket,
    without TLS between them; wait until the repo-server answers and the sidecar listens."""
    state = Path(cluster.state)
    crds = sorted(ARGOCD_CRDS.glob("*.yaml"))
    argv = [cluster.kubectl, "apply", "--server-side", "--field-manager=local-cluster"]
    _kubectl(cluster, [*argv, *(f"--filename={file}" for file in crds)])
    _kubectl(
        cluster,
        [cluster.kubectl, "wait", "--for=condition=Established", "--timeout=60s"]
        + [f"--filename={file}" for file in crds],
    )
    _apply(cluster, _argocd_setup(cluster))
    redis_port, repo_port = _free_port(), _free_port()
    redis = f"127.0.0.1:{redis_port}"
    repo_server = f"127.0.0.1:{repo_port}"
    cluster.pids[ARGOCD_REDIS] = _start(
        ARGOCD_REDIS,
        [
            str(paths["redis-server"]),
            "--bind", "127.0.0.1",
            "--port", str(redis_port),
            "--save", "",  # a cache: nothing on disk
            "--appendonly", "no",
            "--set-proc-title", "no",  # keep the command line `down` recognises it by
            "--dir", str(state),
        ],
        state,
    )  # fmt: skip
    _save(cluster)
    tmp = state / "argocd-tmp"  # the repo-server's checkouts, the sidecar's _cmp_server/
    tmp.mkdir(exist_ok=True)
    socket_path = state / ARGOCD_PLUGIN_SOCKET
    if len(str(socket_path)) > _MAX_SOCKET_PATH:
        raise ClusterError(f"{socket_path}: too long for a unix socket; use a shorter state path")
    socket_path.parent.mkdir(exist_ok=True)
    paddlegen = _paddlegen()
    env = {
        **os.environ,
        "ARGOCD_PLUGINSOCKFILEPATH": str(socket_path.parent),
        "ARGOCD_GPG_ENABLED": "false",
        "ARGOCD_ASK_PASS_SOCK": str(state / "argocd-askpass.sock"),  # not the shared /tmp one
        "TMPDIR": str(tmp),
        # the ApplicationSet controller's client (controller-runtime's) ignores --kubeconfig
        "KUBECONFIG": cluster.kubeconfig,
        # git-verify-wrapper.sh (see there); git and kustomize come from PATH
        "PATH": os.pathsep.join([str(ARGOCD_TOOLS / "path"), os.environ.get("PATH", "")]),
    }
    common = ["--logformat=text", "--loglevel=info"]
    kube = [f"--kubeconfig={cluster.kubeconfig}", f"--namespace={ARGOCD_NAMESPACE}"]
    argvs = {
        ARGOCD_CMP_SERVER: [f"--config-dir-path={_cmp_config(state, paddlegen)}"],
        "argocd-repo-server": [
            "--address=127.0.0.1",
            f"--port={repo_port}",
            "--metrics-address=127.0.0.1",
            f"--metrics-port={_free_port()}",
            "--disable-tls",
            "--client-ca-path=",  # no mTLS (its default path fails with --disable-tls)
            f"--redis={redis}",
        ],
        "argocd-application-controller": [
            *kube,
            f"--repo-server={repo_server}",
            "--repo-server-plaintext",
            f"--redis={redis}",
            f"--metrics-port={_free_port()}",
        ],
        "argocd-applicationset-controller": [
            *kube,
            f"--argocd-repo-server={repo_server}",
            "--repo-server-plaintext",
            "--metrics-addr=0",  # off
            "--probe-addr=0",  # off
            f"--webhook-addr=127.0.0.1:{_free_port()}",
        ],
    }
    # The plugin's commands run with the sidecar's environment: the paddlegen it names first.
    path = os.pathsep.join([str(paddlegen.parent), env["PATH"]])
    for name in ARGOCD_COMPONENTS:
        cluster.pids[name] = _start(
            name,
            [str(paths["argocd"]), *argvs[name], *common],
            state,
            {
                **env,
                "ARGOCD_BINARY_NAME": name,
                **({"PATH": path} if name == ARGOCD_CMP_SERVER else {}),
            },
        )
        _save(cluster)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for name in (ARGOCD_REDIS, *ARGOCD_COMPONENTS):
            if not _alive(cluster.pids[name], _argv0(name, paths) or ""):
                raise _gone(cluster, name)
        try:
            with socket.create_connection(("127.0.0.1", repo_port), timeout=1):
                if socket_path.is_socket():
                    return
        except OSError:
            pass
        time.sleep(0.2)
    waiting = "argocd-repo-server" if socket_path.is_socket() else ARGOCD_CMP_SERVER
    raise ClusterError(
        f"{waiting} did not listen in {timeout:.0f} s:\n" + _tail(state / f"{waiting}.log")
    )


# sockaddr_un's sun_path holds 108 bytes, the terminating NUL among them.
_MAX_SOCKET_PATH = 107


def _paddlegen() -> Path:
    """The paddlegen the plugin sidecar runs: the one installed beside this Python (the
    virtualenv `up` runs in), else the one on PATH."""
    beside = Path(sys.executable).parent / "paddlegen"
    found = beside if beside.is_file() else shutil.which("paddlegen")
    if not found:
        raise ClusterError(
            f"paddlegen is not installed beside {sys.executable} nor on PATH, and Argo CD's "
            "plugin sidecar runs it (pip install -e . in this checkout)"
        )
    return Path(found)


def _cmp_config(state: Path, paddlegen: Path) -> Path:
    """The sidecar's configuration folder: plugin.yaml, the cmp-plugin.yaml that `paddlegen
    argocd` writes (the plugin is the same whatever the repository: none is read here)."""
    written = state / "argocd-paddlegen"
    done = subprocess.run(
        [str(paddlegen), "argocd", "--repo-url", "file:///", "--deploy", str(state / "no-deploy"),
         "-o", str(written)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise ClusterError(f"paddlegen argocd: exit {done.returncode}\n{done.stderr}")
    config = state / "argocd-cmp"
    config.mkdir(exist_ok=True)
    shutil.copyfile(written / "cmp-plugin.yaml", config / "plugin.yaml")
    return config


def install(folder: Path, state: Path | None = None) -> list[Path]:
    """Install what `paddlegen argocd` wrote in ``folder`` into the running Argo CD, as a
    platform team would: the health checks merged into argocd-cm (the `kubectl patch` of the
    file's header), then the ApplicationSet, or the Applications. The plugin sidecar already
    runs the same plugin configuration (`up`). The files installed, in order."""
    cluster = load(state_dir(state))
    if cluster is None or "argocd" not in cluster.extras:
        raise ClusterError(
            "no cluster with Argo CD is running (hack/local-cluster up --with argocd)"
        )
    health = folder / "argocd-cm-health.yaml"
    if not health.is_file():
        raise ClusterError(f"{health}: missing; is {folder} a folder `paddlegen argocd` wrote?")
    appset = folder / "applicationset.yaml"
    apps = [appset] if appset.is_file() else sorted((folder / "applications").glob("*.yaml"))
    argocd = [cluster.kubectl, f"--namespace={ARGOCD_NAMESPACE}"]
    _kubectl(cluster, [*argocd, "patch", "configmap", "argocd-cm", "--type=merge",
                       f"--patch-file={health}"])  # fmt: skip
    for file in apps:
        _kubectl(cluster, [*argocd, "apply", f"--filename={file}"])
    return [health, *apps]


def _apply(cluster: Cluster, objects: list[dict[str, object]]) -> None:
    stream = "".join(f"---\n{json.dumps(obj)}\n" for obj in objects)
    done = subprocess.run(
        [cluster.kubectl, "apply", "-f", "-"],
        input=stream,
        env=cluster.env(),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise ClusterError(f"kubectl apply failed: {done.stderr.strip()}")


def _fake_nodes(cluster: Cluster) -> None:
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": f"kwok-node-{i}",
                "labels": {"kubernetes.io/hostname": f"kwok-node-{i}", "type": "kwok"},
                "annotations": {"kwok.x-k8s.io/node": "fake"},
            },
            "status": {"capacity": FAKE_NODE_CAPACITY, "allocatable": FAKE_NODE_CAPACITY},
        }
        for i in range(FAKE_NODES)
    ]
    _apply(cluster, nodes)


def install_crds(cluster: Cluster, files: Sequence[Path] = ()) -> None:
    """Apply ``files`` (by default the top-level CRDs of hack/crds; variants/ holds
    alternatives of the same kinds) and wait until the API server serves them."""
    files = files or sorted(CRDS.glob("*.yaml"))
    argv = [cluster.kubectl, "apply", "--server-side", "--field-manager=local-cluster"]
    for file in files:
        argv += ["-f", str(file)]
    _kubectl(cluster, argv)
    _kubectl(
        cluster,
        [cluster.kubectl, "wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"],
    )


def _kubectl(cluster: Cluster, argv: list[str]) -> None:
    done = subprocess.run(argv, env=cluster.env(), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ClusterError(f"{' '.join(argv[1:3])} failed: {done.stderr.strip()}")


def down(state: Path | None = None) -> None:
    """Stop the processes `up` recorded in ``state`` (by pid, only if they still run our
    binary) and remove the state folder."""
    state = state_dir(state)
    try:
        recorded = json.loads((state / "cluster.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        recorded = {}
    pids = list(recorded.get("pids", {}).items())
    paths = binaries(extras_of([name for name, _ in pids]))
    ours = [
        pid for name, pid in reversed(pids) if (argv0 := _argv0(name, paths)) and _alive(pid, argv0)
    ]
    _stop(ours)
    for _, pid in pids:  # reap what this process started, ended by us or by itself
        child = _CHILDREN.pop(pid, None)
        if child is not None:
            child.wait()
    if (state / "cluster.json").exists():  # never remove a folder `up` did not make
        shutil.rmtree(state, ignore_errors=True)


def _stop(pids: list[int]) -> None:
    """SIGTERM ``pids`` (checked to be ours by the caller), SIGKILL what still runs after 3 s,
    and wait (a little) until those are gone too."""
    for pid in pids:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 3  # a throwaway cluster: no long graceful shutdown
    for pid in pids:
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _running(pid):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 2
    for pid in pids:
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)


def _running(pid: int) -> bool:
    child = _CHILDREN.get(pid)
    if child is not None:
        if child.poll() is None:
            return True
        del _CHILDREN[pid]
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="hack/local-cluster",
        description="A local Kubernetes control plane on loopback, from pinned sources.",
    )
    parser.add_argument(
        "command",
        choices=["build", "up", "env", "install", "down", "status"],
        help="build: the binaries, once per version; up: start (builds if needed); "
        "env: print the exports for a shell; install: put what `paddlegen argocd` wrote "
        "in FOLDER into the running Argo CD; down: stop and remove the state; "
        "status: say whether it runs",
    )
    parser.add_argument("folder", nargs="?", metavar="FOLDER", help="install: the folder")
    parser.add_argument(
        "--with",
        dest="extras",
        default="",
        metavar="NAMES",
        help=f"build/up: also these, comma-separated: {', '.join(EXTRAS)}",
    )
    args = parser.parse_args(argv)
    extras = [name for name in args.extras.split(",") if name]
    try:
        if args.command == "build":
            for name, path in build(extras).items():
                print(f"{name}: {path}")
        elif args.command == "up":
            cluster = up(extras=extras)
            print(
                f"up: {cluster.server} (state in {cluster.state}); "
                f'`eval "$(hack/local-cluster env)"` to use it'
            )
        elif args.command == "env":
            cluster = load(state_dir())
            if cluster is None:
                raise ClusterError("no cluster is running (hack/local-cluster up)")
            print(f"export KUBECONFIG={cluster.kubeconfig}")
            print(f"export PATH={os.pathsep.join(cluster.bin_dirs)}:$PATH")
        elif args.command == "install":
            if args.folder is None:
                parser.error("install needs the FOLDER `paddlegen argocd -o` wrote")
            for file in install(Path(args.folder)):
                print(f"installed {file}")
        elif args.command == "status":
            cluster = load(state_dir())
            print(f"running: {cluster.server}" if cluster else "not running")
            return 0 if cluster else 1
        else:
            down()
    except ClusterError as exc:
        print(f"local-cluster: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
