"""One real node (`--with node`): Debian's containerd and runc, the CNI bridge and host-local
plugins, a kubelet built from hack/tools/k8s, CoreDNS (hack/tools/coredns) as cluster DNS,
and the images of images.py imported into containerd. `down` undoes every host change it
makes: the bridge, the kubelet's sysctls and iptables chains, mounts, cgroups, folders."""

from __future__ import annotations

import json
import multiprocessing
import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from . import images
from .base import (
    Cluster,
    ClusterError,
    Component,
    GoBuild,
    alive,
    cache_root,
    free_port,
    on_path,
    run,
    stop,
    tail,
)
from .controlplane import API_SERVICE_IP, SERVICE_RANGE, kubernetes

NAME = "local-node"
BRIDGE = "paddlegen0"
# The bridge's address is the node's IP, the kubelet's and CoreDNS's: the kubelet refuses a
# loopback node IP. Pods get the rest of the /24 (host-local IPAM) and talk over pod IPs:
# no gateway, no masquerading, so no forwarding sysctl. Two NAT rules only: the portmap
# plugin's for hostPorts, and one that takes the `kubernetes` Service's IP to the API server
# (`api_service`).
NODE_IP = "10.244.0.1"
POD_SUBNET = "10.244.0.0/24"
CLUSTER_DOMAIN = "cluster.local"
CNI_PLUGINS = Path("/usr/lib/cni")  # Debian's containernetworking-plugins
# What the kubelet changes when it starts (pkg/kubelet/cm/container_manager_linux.go
# setupKernelTunables): recorded before, written back by `down`.
SYSCTLS = ("vm.overcommit_memory", "kernel.panic", "kernel.panic_on_oops")
# Host folders the node's parts create outside the state folder whatever their flags say
# (containerd's shim sockets under /run/containerd/s, libcni's result cache, the kubelet's
# device-plugin socket folder and its /var/log/containers links): removed by `down` when
# `up` found them absent.
HOST_FOLDERS = ("/run/containerd", "/var/lib/cni", "/var/lib/kubelet", "/var/log/containers")
# The Debian packages it runs (.ci/run installs them): command -> package.
DEBIAN = {
    "containerd": "containerd",
    "ctr": "containerd",
    "runc": "runc",
    "iptables": "iptables",
    "ip6tables": "iptables",
    "iptables-save": "iptables",
    "ip6tables-save": "iptables",
    "nft": "nftables",  # deletes the tables iptables-nft made
}
READY_TIMEOUT = 60.0


class Node(Component):
    name = "node"
    kubelet = kubernetes(("kubelet",))
    # Our own main (hack/tools/coredns/main.go): the Corefile's three plugins, not all of
    # them; cached apart from the full build earlier versions of this file made.
    coredns = GoBuild(
        "coredns",
        "github.com/coredns/coredns",
        (".",),
        ("coredns",),
        ("coredns",),
        cache="coredns-node",
    )

    def binaries(self) -> dict[str, Path]:
        found = {**self.kubelet.binaries(), **self.coredns.binaries()}
        found.update({command: on_path(command, package) for command, package in DEBIAN.items()})
        plugins = ("bridge", "host-local", "portmap")
        found.update({f"cni {plugin}": CNI_PLUGINS / plugin for plugin in plugins})
        return found

    def images(self) -> dict[str, Path]:
        return {f"{image.name} image": image.archive() for image in images.IMAGES}

    def build(self, absent: Collection[str]) -> None:
        self.require_debian(absent)
        self.kubelet.build(absent)
        self.coredns.build(absent)

    def require_debian(self, absent: Collection[str]) -> None:
        """Refuse when a Debian package the node or its images need is not installed."""
        debian = sorted({package for command, package in DEBIAN.items() if command in absent})
        if any(name.startswith("cni ") for name in absent):
            debian.append("containernetworking-plugins")
        if debian:
            raise ClusterError(
                f"not installed: {', '.join(debian)} (Debian: apt-get install "
                f"--no-install-recommends {' '.join(debian)})"
            )

    def building_aside(self, absent: Collection[str]) -> AbstractContextManager[None]:
        self.require_debian(absent)  # before anything starts
        return building_aside(images.IMAGES)

    def processes(self) -> dict[str, Path]:
        paths = self.binaries()
        return {name: paths[name] for name in ("containerd", "coredns", "kubelet")}

    def unusable(self) -> list[str]:
        """What this machine lacks to run a node (empty: it can)."""
        lacking = []
        if os.geteuid() != 0:
            lacking.append("root (containerd, the kubelet and the bridge need it)")
        if "overlay" not in Path("/proc/filesystems").read_text():
            lacking.append("overlayfs (containerd's snapshotter)")
        # The kubelet's controllers: as cgroup v1 hierarchies (this machine kind: its cgroup2
        # mount has none of them) or on a cgroup2 mounted at /sys/fs/cgroup.
        mounts = cgroup_mounts()
        v1 = {"cpu", "cpuacct", "cpuset", "memory", "pids", "devices"}
        v2 = Path("/sys/fs/cgroup/cgroup.controllers")
        if not v1 <= set(mounts) and not (
            mounts.get("unified") == Path("/sys/fs/cgroup")
            and {"cpu", "cpuset", "memory", "pids"} <= set(v2.read_text().split())
        ):
            absent = ", ".join(sorted(v1 - set(mounts)))
            lacking.append(
                "usable cgroups (neither a cgroup2 at /sys/fs/cgroup with cpu, cpuset, memory "
                f"and pids nor cgroup v1 hierarchies of {absent})"
            )
        if Path(f"/sys/class/net/{BRIDGE}").exists():
            lacking.append(f"free bridge name ({BRIDGE} exists: another node running?)")
        return lacking

    def start(self, cluster: Cluster) -> None:
        paths = self.binaries()
        node = Path(cluster.state) / "node"
        node.mkdir(exist_ok=True)
        short = low_disk(node)
        if short:
            raise ClusterError(short)
        record_host(node)
        run(["ip", "link", "add", BRIDGE, "type", "bridge"])
        run(["ip", "addr", "add", f"{NODE_IP}/24", "dev", BRIDGE])
        run(["ip", "link", "set", BRIDGE, "up"])
        api_service(cluster)
        socket = node / "containerd.sock"
        cluster.start(
            "containerd",
            [str(paths["containerd"]), f"--config={containerd_config(node, paths)}"],
        )
        wait(cluster, "containerd", paths, socket.is_socket)
        import_images(node, paths)
        corefile = node / "Corefile"
        corefile.write_text(
            f".:53 {{\n  bind {NODE_IP}\n  errors\n"
            f"  kubernetes {CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {{\n"
            f"    kubeconfig {cluster.kubeconfig} local\n    pods insecure\n  }}\n}}\n",
            encoding="utf-8",
        )
        cluster.start("coredns", [str(paths["coredns"]), "-conf", str(corefile)])
        cluster.start(
            "kubelet",
            [
                str(paths["kubelet"]),
                f"--config={kubelet_config(node, socket)}",
                f"--kubeconfig={cluster.kubeconfig}",
                f"--root-dir={node / 'kubelet'}",
                f"--cert-dir={node / 'kubelet-pki'}",
                f"--hostname-override={NAME}",
                f"--node-ip={NODE_IP}",
            ],
        )
        wait(cluster, "kubelet", paths, lambda: node_ready(cluster), READY_TIMEOUT)

    def stop(self, state: Path, pids: Mapping[str, int]) -> None:
        """The kubelet first (it would restart what goes), then every container (their
        shims outlive containerd), CoreDNS and containerd; then the host as it was."""
        node = state / "node"
        host = node / "host.json"
        if not host.is_file():
            return
        paths = self.processes()

        def stop_process(name: str) -> None:
            if name in pids and alive(pids[name], str(paths[name])):
                stop([pids[name]])

        stop_process("kubelet")
        if "containerd" in pids and alive(pids["containerd"], str(paths["containerd"])):
            remove_containers(node, self.binaries())
        stop_process("coredns")
        stop_process("containerd")
        kill_shims(node / "containerd.sock")
        restore_host(node, json.loads(host.read_text(encoding="utf-8")))
        host.unlink()  # restored: once


def cgroup_mounts() -> dict[str, Path]:
    """cgroup v1 controller (or hierarchy name) -> the folder its hierarchy is mounted on,
    and "unified" -> the cgroup2 one, if mounted (the kubelet makes kubepods in each)."""
    found = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split(" - ", 1)
        if len(fields) != 2:
            continue
        point, kind = Path(fields[0].split()[4]), fields[1].split()
        if kind[0] == "cgroup2":
            found["unified"] = point
        elif kind[0] == "cgroup":
            for option in kind[2].split(","):
                found[option] = point
    return found


def api_service(cluster: Cluster) -> None:
    """Let pods reach the API server at the `kubernetes` Service's IP and port 443, as
    in-cluster clients do (a ServiceAccount's peer discovery, `distributed-job`): kube-proxy's
    one job here, done with one DNAT rule to the API server on loopback, which the kernel
    routes only where the packet came in with route_localnet (the bridge's own setting: it
    goes with the bridge). `down` deletes the rule with the kubelet's."""
    Path(f"/proc/sys/net/ipv4/conf/{BRIDGE}/route_localnet").write_text("1\n")
    api = f"127.0.0.1:{cluster.server.rsplit(':', 1)[1]}"
    run(["iptables", "-t", "nat", "-A", "PREROUTING", "-i", BRIDGE, "-d", API_SERVICE_IP,
         "-p", "tcp", "--dport", "443", "-j", "DNAT", "--to-destination", api])  # fmt: skip


def iptables_save(command: str) -> dict[str, dict[str, list[str]]]:
    """table -> chain -> its rules (`-A CHAIN ...` lines), from COMMAND-save."""
    tables: dict[str, dict[str, list[str]]] = {}
    table: dict[str, list[str]] = {}
    for line in run([command]).splitlines():
        if line.startswith("*"):
            table = tables.setdefault(line[1:], {})
        elif line.startswith(":"):
            table.setdefault(line[1:].split()[0], [])
        elif line.startswith("-A "):
            table.setdefault(line.split()[1], []).append(line)
    return tables


def record_host(node: Path) -> None:
    """What `down` restores, written before anything changes."""
    record = {
        "sysctls": {
            name: Path("/proc/sys", *name.split(".")).read_text().strip() for name in SYSCTLS
        },
        "iptables": {
            command: iptables_save(f"{command}-save") for command in ("iptables", "ip6tables")
        },
        "absent": [folder for folder in HOST_FOLDERS if not os.path.lexists(folder)],
        "cgroups": [
            str(point / "kubepods")
            for point in set(cgroup_mounts().values())
            if not (point / "kubepods").exists()
        ],
    }
    (node / "host.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def restore_host(node: Path, record: dict[str, Any]) -> None:
    """Undo what the node changed: containers' mounts, the kubelet's chains, cgroups and
    sysctls, the bridge, the host folders it made. Each step is tried; what failed is said
    at the end."""
    failed = []
    for folder in [str(node), *record["absent"]]:
        images.unmount_under(Path(folder))
        failed += [f"still mounted: {point}" for point in images.mounts_under(Path(folder))]
    for command, before in record["iptables"].items():
        failed += restore_iptables(command, before)
    for cgroup in record["cgroups"]:
        try:
            remove_cgroup(Path(cgroup))
        except OSError as exc:
            failed.append(f"cgroup {cgroup}: {exc.strerror}")
    for name, value in record["sysctls"].items():
        Path("/proc/sys", *name.split(".")).write_text(value + "\n")
    subprocess.run(["ip", "link", "delete", BRIDGE], check=False, capture_output=True)
    for folder in record["absent"]:
        shutil.rmtree(folder, ignore_errors=True)
    if failed:
        raise ClusterError("down left host changes behind:\n" + "\n".join(failed))


def restore_iptables(command: str, before: dict[str, dict[str, list[str]]]) -> list[str]:
    """Delete the rules and chains that are in COMMAND's tables now and were not before,
    and the tables that were not there (iptables-nft makes them on first use: only `nft`
    deletes them); what could not be undone."""
    failed = []
    for table, chains in iptables_save(f"{command}-save").items():
        old = before.get(table, {})
        new_chains = [chain for chain in chains if chain not in old]
        for chain, rules in chains.items():
            if chain in new_chains:
                continue
            for rule in rules:
                if rule not in old[chain]:
                    argv = [command, "-t", table, "-D", *shlex.split(rule)[1:]]
                    subprocess.run(argv, check=False, capture_output=True)
        for flag in ("-F", "-X"):  # empty them all first: they may jump to each other
            for chain in new_chains:
                subprocess.run(
                    [command, "-t", table, flag, chain], check=False, capture_output=True
                )
        if table not in before:
            family = "ip6" if command == "ip6tables" else "ip"
            argv = ["nft", "delete", "table", family, table]
            if subprocess.run(argv, check=False, capture_output=True).returncode != 0:
                failed.append(f"{command} table {table} (made by the kubelet; nft failed)")
    return failed


def remove_cgroup(folder: Path) -> None:
    """rmdir ``folder`` and the cgroups below it, deepest first (a cgroup's files go with
    it; its processes are gone by now)."""
    if not folder.is_dir():
        return
    for child in sorted(folder.rglob("*"), key=lambda path: -len(path.parts)):
        if child.is_dir():
            child.rmdir()
    folder.rmdir()


def containerd_root() -> Path:
    """containerd's root (content store, unpacked snapshots, metadata), kept between clusters
    like the tools cache: an image is imported and unpacked once, not on every `up` (1 GB,
    about 30 s), and `down` does not delete its 16,000 files (another 30 s)."""
    return cache_root() / "node" / "containerd"


@contextmanager
def building_aside(wanted: Collection[images.Image]) -> Iterator[None]:
    """Those of ``wanted`` not built yet, in a process of their own (which reports its own
    CPU), from before the control plane's build to after the last component's: they wait on
    downloads and the disk more than on the CPU."""
    pending = [image for image in wanted if not image.archive().is_file()]
    if not pending:
        yield
        return
    builder = multiprocessing.get_context("fork").Process(target=images.build_all, args=(pending,))
    builder.start()
    try:
        yield
    finally:
        builder.join()  # it cleans up after itself (mounts, folders): let it end
    if builder.exitcode != 0:
        raise ClusterError("the node's images were not built (its error is above)")


def import_images(
    node: Path, paths: Mapping[str, Path], wanted: Collection[images.Image] = images.IMAGES
) -> None:
    """Import those of ``wanted`` containerd does not have yet, and remove those of ours that
    are no longer built (a new key; not those a component imports itself, images.ALL)."""
    current = {image.reference for image in images.ALL}
    present = set(ctr(node, paths, "images", "list", "--quiet").split())
    for reference in present - current:
        if reference.startswith(images.REPOSITORY + "/"):
            ctr(node, paths, "images", "remove", reference)
    by_reference = {image.reference: image for image in wanted}
    for reference in set(by_reference) - present:
        ctr(node, paths, "images", "import", str(by_reference[reference].archive()))


def ctr_argv(node: Path, paths: Mapping[str, Path], *args: str) -> list[str]:
    """A `ctr` command line for our containerd, in the CRI plugin's namespace."""
    return [str(paths["ctr"]), "--address", str(node / "containerd.sock"), "-n", "k8s.io", *args]


def ctr(node: Path, paths: Mapping[str, Path], *args: str) -> str:
    return run(ctr_argv(node, paths, *args))


def remove_containers(node: Path, paths: Mapping[str, Path]) -> None:
    """Kill and delete every task and container the kubelet left (with the kubelet gone,
    nobody else would), so that their shims exit and their mounts go."""
    for task in ctr(node, paths, "tasks", "list", "--quiet").split():
        argv = ctr_argv(node, paths, "tasks", "kill", "--signal", "SIGKILL", task)
        subprocess.run(argv, check=False, capture_output=True)
    deadline = time.monotonic() + 10
    for task in ctr(node, paths, "tasks", "list", "--quiet").split():
        argv = ctr_argv(node, paths, "tasks", "delete", task)
        while subprocess.run(argv, check=False, capture_output=True).returncode != 0:
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
    containers = ctr(node, paths, "containers", "list", "--quiet").split()
    if containers:
        ctr(node, paths, "containers", "delete", *containers)


def kill_shims(socket: Path) -> None:
    """SIGKILL the containerd shims of our containerd (they name its socket on their
    command line) that outlived it."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[0].endswith(b"containerd-shim-runc-v2") and str(socket).encode() in argv:
            stop([int(proc.name)])


def containerd_config(node: Path, paths: dict[str, Path]) -> Path:
    """containerd's own configuration: everything under ``node``, the CRI plugin with our
    pause image, runc, the CNI bridge, and `restrict_oom_score_adj`: without it every sandbox
    fails where the kernel withholds CAP_SYS_RESOURCE (`runc create failed: ... can't get
    final child's PID from pipe: EOF`; runc cannot set the pause container's -998)."""
    cni = node / "cni"
    (cni / "net.d").mkdir(parents=True)
    network = {
        "cniVersion": "1.0.0",
        "name": "paddlegen",
        "plugins": [
            {
                "type": "bridge",
                "bridge": BRIDGE,
                "isGateway": False,
                "ipMasq": False,
                "ipam": {
                    "type": "host-local",
                    "ranges": [[{"subnet": POD_SUBNET, "rangeStart": "10.244.0.10"}]],
                    # the one way out of a pod: to the Services' IPs, through the node
                    "routes": [{"dst": SERVICE_RANGE, "gw": NODE_IP}],
                    "dataDir": str(cni / "ipam"),
                },
            },
            # hostPorts (`distributed-job`): the CRI passes a pod's as portMappings
            {"type": "portmap", "capabilities": {"portMappings": True}},
        ],
    }
    (cni / "net.d" / "10-paddlegen.conflist").write_text(json.dumps(network), encoding="utf-8")
    cri = 'plugins."io.containerd.grpc.v1.cri"'
    config = node / "containerd.toml"
    config.write_text(
        f"""version = 2
root = "{containerd_root()}"
state = "{node / "containerd-state"}"
[grpc]
  address = "{node / "containerd.sock"}"
[plugins."io.containerd.internal.v1.opt"]
  path = "{node / "containerd-opt"}"
[{cri}]
  sandbox_image = "{images.PAUSE.reference}"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
[{cri}.cni]
  bin_dir = "{CNI_PLUGINS}"
  conf_dir = "{cni / "net.d"}"
[{cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"
[{cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[{cri}.containerd.runtimes.runc.options]
  BinaryName = "{paths["runc"]}"
  Root = "{node / "runc"}"
""",
        encoding="utf-8",
    )
    return config


# Free space `up` wants on the node's file system, beyond the kubelet's eviction threshold
# (kubelet_config: 1%): the images unpacked by containerd and what the pods write. Below it the
# kubelet evicts the pods under DiskPressure, which tests saw as jobs that never finished and
# a plugin sidecar whose socket vanished (2026-11-28, 2.9 GB free of 252 GB).
DISK_ROOM = 5 * 1024**3


def low_disk(folder: Path) -> str | None:
    """Why the node cannot start on ``folder``'s file system for lack of space, if so."""
    usage = shutil.disk_usage(folder)
    wanted = usage.total // 100 + DISK_ROOM
    if usage.free >= wanted:
        return None
    gib = 1024**3
    return (
        f"{usage.free / gib:.1f} GiB free on the file system of {folder}, "
        f"{wanted / gib:.1f} GiB wanted: the kubelet evicts every pod below 1% "
        f"(DiskPressure), and the images and pods need {DISK_ROOM // gib} GiB more"
    )


def kubelet_config(node: Path, socket: Path) -> Path:
    config = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "failCgroupV1": False,  # this machine kind has cgroup v1 only (v2 has no controllers)
        "cgroupDriver": "cgroupfs",
        "containerRuntimeEndpoint": f"unix://{socket}",
        "address": NODE_IP,
        "port": free_port(),
        "readOnlyPort": 0,
        "healthzPort": 0,
        "authentication": {"anonymous": {"enabled": True}, "webhook": {"enabled": False}},
        "authorization": {"mode": "AlwaysAllow"},
        "clusterDNS": [NODE_IP],
        "clusterDomain": CLUSTER_DOMAIN,
        "podLogsDir": str(node / "pod-logs"),
        # Never collect the imported images (nothing could pull them back), never evict
        # for a disk other tests fill.
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%",
                         "imagefs.available": "1%"},
    }  # fmt: skip
    path = node / "kubelet.json"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path


def node_ready(cluster: Cluster) -> bool:
    done = subprocess.run(
        [cluster.kubectl, "get", "node", NAME, "-o",
         'jsonpath={.status.conditions[?(@.type=="Ready")].status}'],
        env=cluster.env(), capture_output=True, text=True, check=False,
    )  # fmt: skip
    return done.stdout == "True"


def wait(
    cluster: Cluster,
    name: str,
    paths: Mapping[str, Path],
    ready: Callable[[], bool],
    timeout: float = 30.0,
) -> None:
    """Wait until ``ready()`` while the node's processes run."""
    deadline = time.monotonic() + timeout
    started: dict[str, Path] = {
        process: paths[process]
        for process in ("containerd", "coredns", "kubelet")
        if process in cluster.pids
    }
    while time.monotonic() < deadline:
        cluster.check_alive(started)
        if ready():
            return
        time.sleep(0.2)
    raise ClusterError(
        f"{name} was not ready in {timeout:.0f} s:\n" + tail(Path(cluster.state) / f"{name}.log")
    )
