"""Argo CD (`--with argocd`): the repo-server, application controller, ApplicationSet
controller and plugin sidecar of one binary built from its sources, with Debian's
redis-server; `install` puts what `paddlegen argocd` wrote into it."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Collection
from pathlib import Path

from .base import (
    TOOLS,
    Cluster,
    ClusterError,
    Component,
    GoBuild,
    alive,
    free_port,
    on_path,
    reap,
    stop,
    tail,
)

# What `--with argocd` runs, by the names `up` records them under: Debian's redis-server (Argo
# CD's cache, shared by the components) and four components of the one binary, the plugin
# sidecar (argocd-cmp-server, running paddlegen's Config Management Plugin) among them. No API
# server, UI, Dex or notifications: the tests read and write Applications with kubectl.
NAMESPACE = "argocd"
REDIS = "argocd-redis"
CMP_SERVER = "argocd-cmp-server"
COMPONENTS = (
    CMP_SERVER,
    "argocd-repo-server",
    "argocd-application-controller",
    "argocd-applicationset-controller",
)
# The folder of the plugin sidecar's socket, given to both it and the repo-server as
# ARGOCD_PLUGINSOCKFILEPATH (in a pod: a shared emptyDir).
PLUGIN_SOCKETS = "argocd-plugins"
ARGOCD_TOOLS = TOOLS / "argocd"
# The AppProject CRD, from the same release as hack/crds' Application and ApplicationSet; it
# lives here, not in hack/crds, because only a running Argo CD needs it (no paddlegen output is
# an AppProject, so it gets no schema in schemas/crds).
CRDS = ARGOCD_TOOLS / "crds"
# sockaddr_un's sun_path holds 108 bytes, the terminating NUL among them.
MAX_SOCKET_PATH = 107
SOCKET_NAME_ROOM = "paddlegen-v00.00.00.sock"  # a plugin's socket, named <name>-<version>.sock


def ldflags(version: str) -> str:
    # What `argocd version` and the components' startup lines report (common/version.go).
    package = "github.com/argoproj/argo-cd/v3/common"
    return (
        f"-s -w -X {package}.version={version.lstrip('v')} -X {package}.gitTag={version} "
        f"-X {package}.gitTreeState=clean"
    )


class ArgoCD(Component):
    name = "argocd"
    # One binary for every component; ARGOCD_BINARY_NAME picks one (cmd/main.go).
    go = GoBuild(
        "argocd",
        "github.com/argoproj/argo-cd/v3",
        ("github.com/argoproj/argo-cd/v3/cmd",),
        ("argocd",),
        ("argocd",),
        ldflags,
    )

    def binaries(self) -> dict[str, Path]:
        # redis-server is not built here: Debian's package (README)
        return {**super().binaries(), "redis-server": on_path("redis-server", "redis-server")}

    def build(self, absent: Collection[str]) -> None:
        if "redis-server" in absent:
            raise ClusterError(
                "`redis-server` is not on PATH: Argo CD's cache "
                "(Debian: apt-get install redis-server)"
            )
        super().build(absent)

    def processes(self) -> dict[str, Path]:
        paths = self.binaries()
        return {
            REDIS: paths["redis-server"],
            **{name: paths["argocd"] for name in COMPONENTS},
        }

    def start(self, cluster: Cluster, timeout: float = 30.0) -> None:
        """Argo CD's CRDs and settings, then redis, the plugin sidecar and the repo-server,
        application controller and ApplicationSet controller, on loopback ports and a socket,
        without TLS between them; wait until the repo-server answers and the sidecar
        listens."""
        paths = self.binaries()
        state = Path(cluster.state)
        crds = sorted(CRDS.glob("*.yaml"))
        argv = [cluster.kubectl, "apply", "--server-side", "--field-manager=local-cluster"]
        cluster.kubectl_run([*argv, *(f"--filename={file}" for file in crds)])
        cluster.kubectl_run(
            [cluster.kubectl, "wait", "--for=condition=Established", "--timeout=60s"]
            + [f"--filename={file}" for file in crds]
        )
        cluster.apply(setup(cluster))
        redis_port, repo_port = free_port(), free_port()
        redis = f"127.0.0.1:{redis_port}"
        repo_server = f"127.0.0.1:{repo_port}"
        cluster.start(
            REDIS,
            [
                str(paths["redis-server"]),
                "--bind", "127.0.0.1",
                "--port", str(redis_port),
                "--save", "",  # a cache: nothing on disk
                "--appendonly", "no",
                "--set-proc-title", "no",  # keep the command line `down` recognises it by
                "--dir", str(state),
            ],
        )  # fmt: skip
        tmp = state / "argocd-tmp"  # the repo-server's checkouts, the sidecar's _cmp_server/
        tmp.mkdir(exist_ok=True)
        # argocd-cmp-server names its socket after the plugin (and its version): the folder
        # must leave room for such a name
        sockets = state / PLUGIN_SOCKETS
        if len(str(sockets / SOCKET_NAME_ROOM)) > MAX_SOCKET_PATH:
            raise ClusterError(f"{sockets}: too long for unix sockets; use a shorter state path")
        sockets.mkdir(exist_ok=True)
        paddlegen = find_paddlegen()
        env = {
            **os.environ,
            "ARGOCD_PLUGINSOCKFILEPATH": str(sockets),
            "ARGOCD_GPG_ENABLED": "false",
            "ARGOCD_ASK_PASS_SOCK": str(state / "argocd-askpass.sock"),  # not the shared /tmp one
            "TMPDIR": str(tmp),
            # the ApplicationSet controller's client (controller-runtime's) ignores --kubeconfig
            "KUBECONFIG": cluster.kubeconfig,
            # git-verify-wrapper.sh (see there); git and kustomize come from PATH
            "PATH": os.pathsep.join([str(ARGOCD_TOOLS / "path"), os.environ.get("PATH", "")]),
        }
        common = ["--logformat=text", "--loglevel=info"]
        kube = [f"--kubeconfig={cluster.kubeconfig}", f"--namespace={NAMESPACE}"]
        argvs = {
            CMP_SERVER: [f"--config-dir-path={cmp_config(state, paddlegen)}"],
            "argocd-repo-server": [
                "--address=127.0.0.1",
                f"--port={repo_port}",
                "--metrics-address=127.0.0.1",
                f"--metrics-port={free_port()}",
                "--disable-tls",
                "--client-ca-path=",  # no mTLS (its default path fails with --disable-tls)
                f"--redis={redis}",
            ],
            "argocd-application-controller": [
                *kube,
                f"--repo-server={repo_server}",
                "--repo-server-plaintext",
                f"--redis={redis}",
                f"--metrics-port={free_port()}",
            ],
            "argocd-applicationset-controller": [
                *kube,
                f"--argocd-repo-server={repo_server}",
                "--repo-server-plaintext",
                "--metrics-addr=0",  # off
                "--probe-addr=0",  # off
                f"--webhook-addr=127.0.0.1:{free_port()}",
            ],
        }
        # The plugin's commands run with the sidecar's environment: the paddlegen it names
        # first.
        path = os.pathsep.join([str(paddlegen.parent), env["PATH"]])
        for name in COMPONENTS:
            cluster.start(
                name,
                [str(paths["argocd"]), *argvs[name], *common],
                {
                    **env,
                    "ARGOCD_BINARY_NAME": name,
                    **({"PATH": path} if name == CMP_SERVER else {}),
                },
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            cluster.check_alive(self.processes())
            try:
                with socket.create_connection(("127.0.0.1", repo_port), timeout=1):
                    if listening(sockets):
                        return
            except OSError:
                pass
            time.sleep(0.2)
        waiting = "argocd-repo-server" if listening(sockets) else CMP_SERVER
        raise ClusterError(
            f"{waiting} did not listen in {timeout:.0f} s:\n" + tail(state / f"{waiting}.log")
        )


def listening(sockets: Path) -> bool:
    """Whether a plugin sidecar listens in the folder ``sockets``."""
    return any(path.is_socket() for path in sockets.glob("*.sock"))


def hand_over_plugin(state: Path) -> Path:
    """Stop the plugin sidecar `up` started as a host process and remove its socket, so that
    another argocd-cmp-server (the plugin image's, in a pod on the node) can listen in the
    socket folder the repo-server reads; that folder. The rest of Argo CD keeps running, and
    the cluster stays recorded without it: `load` wants every recorded process alive, and
    `down` stops the others as before."""
    cluster = Cluster(**json.loads((state / "cluster.json").read_text(encoding="utf-8")))
    pid = cluster.pids.pop(CMP_SERVER, None)
    if pid is not None:
        if alive(pid, str(ArgoCD().binaries()["argocd"])):
            stop([pid])
        reap([pid])
        cluster.save()
    folder = state / PLUGIN_SOCKETS
    for socket_path in folder.glob("*.sock"):
        socket_path.unlink()
    return folder


def setup(cluster: Cluster) -> list[dict[str, object]]:
    """What Argo CD's components read besides their flags: the settings ConfigMap and Secret
    (found by the part-of label), the project every Application names by default, and the
    local API server as a destination. Argo CD's own install also has argocd-rbac-cm and more,
    read by the API server, which does not run here."""
    part_of = {"app.kubernetes.io/part-of": "argocd"}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "argocd-cm", "namespace": NAMESPACE, "labels": part_of},
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "argocd-secret", "namespace": NAMESPACE, "labels": part_of},
            # Without it the settings are "incomplete" (util/settings/settings.go).
            "stringData": {"server.secretkey": secrets.token_hex(16)},
        },
        {
            # What Argo CD's API server creates at its start; open to every repository and
            # destination, as there.
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "AppProject",
            "metadata": {"name": "default", "namespace": NAMESPACE},
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
                "namespace": NAMESPACE,
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


def find_paddlegen() -> Path:
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


def cmp_config(state: Path, paddlegen: Path) -> Path:
    """The sidecar's configuration folder: plugin.yaml, the sidecar/plugin.yaml that
    `paddlegen argocd` writes (the plugin is the same whatever the repository: none is read
    here)."""
    written = state / "argocd-paddlegen"
    done = subprocess.run(
        [str(paddlegen), "argocd", "--repo-url", "file:///", "--deploy", str(state / "no-deploy"),
         "-o", str(written), "--sidecar"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise ClusterError(f"paddlegen argocd: exit {done.returncode}\n{done.stderr}")
    config = state / "argocd-cmp"
    config.mkdir(exist_ok=True)
    shutil.copyfile(written / "sidecar" / "plugin.yaml", config / "plugin.yaml")
    return config


def install(cluster: Cluster, folder: Path) -> list[Path]:
    """Install what `paddlegen argocd` wrote in ``folder`` into the running Argo CD of
    ``cluster``, as a platform team would (the README's commands): the health checks merged
    into argocd-cm (the `kubectl patch` of the file's header), then `kubectl apply -f` of the
    folder, or of its applications/ (--mode applications). The plugin sidecar already runs the
    same plugin configuration (`up`). The files installed, in order."""
    health = folder / "patches" / "argocd-cm-health.yaml"
    if not health.is_file():
        raise ClusterError(f"{health}: missing; is {folder} a folder `paddlegen argocd` wrote?")
    applied = folder if (folder / "applicationset.yaml").is_file() else folder / "applications"
    argocd = [cluster.kubectl, f"--namespace={NAMESPACE}"]
    cluster.kubectl_run([*argocd, "patch", "configmap", "argocd-cm", "--type=merge",
                         f"--patch-file={health}"])  # fmt: skip
    # The whole folder, as it is: it holds only objects (the plugin and the patch are below it).
    cluster.kubectl_run([*argocd, "apply", f"--filename={applied}"])
    return [health, *sorted(applied.glob("*.yaml"))]
