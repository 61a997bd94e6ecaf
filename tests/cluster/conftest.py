"""The `cluster` tests' control plane: hack/localcluster's own `up`, once per session."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import ssl
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import ROOT, require_tool


def local_cluster() -> ModuleType:
    """hack/localcluster, the package behind hack/local-cluster (not installed: loaded by
    path), once: its record of the processes it started is shared by every fixture. Its
    modules are attributes of it (``local_cluster().kwok.FAKE_NODES``)."""
    if "localcluster" in sys.modules:
        return sys.modules["localcluster"]
    package = ROOT / "hack" / "localcluster"
    spec = importlib.util.spec_from_file_location(
        "localcluster", package / "__init__.py", submodule_search_locations=[str(package)]
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its modules and dataclasses look it up by name
    spec.loader.exec_module(module)
    return module


@dataclass
class Kube:
    """A running local control plane and the pinned kubectl that talks to it."""

    kubectl: str
    env: dict[str, str]
    server: str
    token: str
    state: Path  # hack/localcluster's state folder of this cluster
    # resource name as kubectl takes it -> (its API path prefix, namespaced): `read`'s discovery
    resources: dict[str, tuple[str, bool]] = field(default_factory=dict)

    def read(self, namespace: str, resource: str, name: str = "", selector: str = "") -> Any:
        """What `kubectl get -n NAMESPACE RESOURCE [NAME] [-l SELECTOR] -o json` prints, None
        where it fails, read from the API server itself: the tests poll with it, and a kubectl
        process costs about 100 ms of CPU against 4 ms for a request (2 cores run the two
        clusters of the suite and the CPU-bound tests at once)."""
        if resource not in self.resources:
            self.resources.update(self._discover())
        if resource not in self.resources:
            return None
        prefix, namespaced = self.resources[resource]
        path = prefix.format(namespace=f"namespaces/{namespace}/" if namespaced else "")
        query = "?" + urllib.parse.urlencode({"labelSelector": selector}) if selector else ""
        try:
            found = self._request(path + (f"/{name}" if name else "") + query)
        except urllib.error.HTTPError:
            return None
        if not name:  # a list's items, as kubectl prints them: each with its kind
            kind = found.get("kind", "").removesuffix("List")
            found["items"] = [
                {"apiVersion": found.get("apiVersion"), "kind": kind, **item}
                for item in found.get("items", [])
            ]
        return found

    def _request(self, path: str) -> Any:
        request = urllib.request.Request(
            self.server + path, headers={"Authorization": f"Bearer {self.token}"}
        )
        # as the kubeconfig of hack/localcluster says: insecure-skip-tls-verify on loopback
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        with urllib.request.urlopen(request, context=context, timeout=30) as response:
            return json.load(response)

    def _discover(self) -> dict[str, tuple[str, bool]]:
        """Every resource by the names kubectl takes (plural, singular, short names, and each
        with `.group`), the core group's first and then the groups in the server's order of
        priority, as kubectl resolves a bare name: `jobs` is batch's, not Volcano's."""
        found: dict[str, tuple[str, bool]] = {}
        versions = [("", "/api/v1")] + [
            (group["name"], f"/apis/{group['preferredVersion']['groupVersion']}")
            for group in self._request("/apis")["groups"]
        ]
        for group, base in versions:
            for res in self._request(base)["resources"]:
                if "/" in res["name"]:
                    continue  # a subresource
                place = (f"{base}/{{namespace}}{res['name']}", res["namespaced"])
                names = [res["name"], res.get("singularName") or res["kind"].lower()]
                names += res.get("shortNames", [])
                for name in names + ([f"{n}.{group}" for n in names] if group else []):
                    found.setdefault(name, place)
        return found

    def run(
        self, *args: str, stdin: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [self.kubectl, *args],
            input=stdin,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if check and done.returncode != 0:
            pytest.fail(f"kubectl {' '.join(args)}: exit {done.returncode}\n{done.stderr}")
        return done

    def succeed(
        self, namespace: str, pod: str, phase: str = "Succeeded", missing_ok: bool = False
    ) -> None:
        """Mark a pod Succeeded, as its training finishing would (KWOK keeps pods Running but
        a batch Job's, which it completes at once, and paused none), or with
        ``phase="Failed"`` as its training crashing would; with ``missing_ok``, a pod deleted
        since it was listed (its job completed) is no failure."""
        args = (
            "patch", "pod", "-n", namespace, pod, "--subresource=status", "--type=merge",
            "-p", json.dumps({"status": {"phase": phase}}),
        )  # fmt: skip
        done = self.run(*args, check=False)
        if done.returncode != 0 and not (missing_ok and "(NotFound)" in done.stderr):
            pytest.fail(f"kubectl {' '.join(args)}: exit {done.returncode}\n{done.stderr}")

    def apply(self, stream: str) -> subprocess.CompletedProcess[str]:
        """A real server-side apply of ``stream`` as paddlegen's field manager."""
        return self.run(
            "apply", "--server-side", "--field-manager=paddlegen", "-f", "-", stdin=stream
        )


# A session's cluster is stopped once the module of the last test that uses it has ended, not
# at the end of the session: its control plane, Argo CD (which refreshes every Application
# every 3 minutes) and the node would otherwise take CPU from every test after them. The node's
# tests run last, so that the other cluster is stopped before the node starts. Fixture name ->
# the nodeid of the test after which it stops (after deselection), and what stops it.
_LAST_TEST: dict[str, str] = {}
_STOP: dict[str, Callable[[], None]] = {}


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def uses(item: pytest.Item, name: str) -> bool:
        return name in getattr(item, "fixturenames", ())

    # One pytest-xdist worker runs the tests on the real node and another those on KWOK's
    # cluster (tests/conftest.py tells them apart by module name): a `node` test elsewhere
    # would start a second real node beside the first, and the two cannot share a host.
    here = Path(__file__).parent
    only_node = [uses(item, "node") and not uses(item, "kube") for item in items]
    misplaced = [
        item.nodeid
        for item, on_node in zip(items, only_node, strict=True)
        if item.path.parent == here and item.path.name.startswith("test_node") != on_node
    ]
    if misplaced:
        raise pytest.UsageError(
            "tests on the real node (fixture `node`, and not `kube`) belong in test_node_*.py "
            "modules, and only they: " + ", ".join(misplaced)
        )
    # A `late` test runs after the others of its cluster: it checks that something did not
    # happen over minutes, which pass while they run instead of in a wait of its own.
    items.sort(key=lambda i: (uses(i, "node"), i.get_closest_marker("late") is not None))
    for name in ("kube", "node"):
        last = max((n for n, item in enumerate(items) if uses(item, name)), default=None)
        if last is None:
            continue
        while last + 1 < len(items) and items[last + 1].path == items[last].path:
            last += 1  # its module's fixtures may still need the cluster in their teardown
        _LAST_TEST[name] = items[last].nodeid


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    for name, nodeid in _LAST_TEST.items():
        if nodeid == item.nodeid and name in _STOP:
            _STOP[name]()


def _stopped_after_its_last_test(name: str, down: Callable[[], None]) -> Callable[[], None]:
    """``down``, called once: after the last test that uses fixture ``name``, or by the
    fixture's own teardown if that comes first (a test run stopped early, -x)."""

    def stop() -> None:
        if _STOP.pop(name, None) is not None:
            down()

    _STOP[name] = stop
    return stop


@pytest.fixture(scope="session")
def kube(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kube]:
    hack = local_cluster()
    absent = hack.missing()
    if absent:
        message = f"control plane not built ({', '.join(absent)}): run hack/local-cluster build"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    state = tmp_path_factory.mktemp("cluster")
    try:
        cluster = hack.up(state)
    except hack.ClusterError as exc:
        pytest.fail(f"hack/local-cluster up: {exc}")
    stop = _stopped_after_its_last_test("kube", lambda: hack.down(state))
    try:
        yield Kube(cluster.kubectl, cluster.env(), cluster.server, cluster.token, state)
    finally:
        stop()


def with_extras(kube: Kube, extras: list[str]) -> Kube:
    """``kube`` with ``extras`` of hack/localcluster started too (skipped when not built on a
    developer machine, failed under CI=true)."""
    hack = local_cluster()
    absent = hack.missing(extras)
    if absent:
        message = f"not built ({', '.join(absent)}): hack/local-cluster build --with " + ",".join(
            extras
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    try:
        hack.up(kube.state, extras=extras)
    except hack.ClusterError as exc:
        pytest.fail(f"hack/local-cluster up --with: {exc}")
    return kube


@pytest.fixture(scope="session")
def node() -> Iterator[Kube]:
    """A control plane of its own with one real node (`--with node`: containerd, the kubelet,
    CoreDNS, the Paddle image): apart from ``kube``, whose KWOK nodes would take pods too.
    Skipped when not built or when this machine cannot run a node (not root, no overlayfs,
    no cgroups), failed under CI=true; always stopped, the host restored, at the end."""
    hack = local_cluster()
    absent = hack.missing(["node"])
    lacking = hack.unusable(["node"])
    if absent or lacking:
        message = (
            f"not built ({', '.join(absent)}): hack/local-cluster build --with node"
            if absent
            else f"this machine cannot run a node: no {'; no '.join(lacking)}"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    # Not under pytest's base temp folder: a concurrent pytest run on the same machine
    # removes all but its three newest, and with it a running node's state (and mounts).
    state = Path(tempfile.mkdtemp(prefix="paddlegen-node-"))
    before = host_state(state)

    def down() -> None:
        hack.down(state)  # removes ``state`` once `up` has recorded a cluster in it
        if state.exists():
            state.rmdir()
        assert host_state(state) == before, "hack/local-cluster down did not restore the host"

    stop = _stopped_after_its_last_test("node", down)
    try:
        try:
            cluster = hack.up(state, extras=["node"])
        except hack.ClusterError as exc:
            pytest.fail(f"hack/local-cluster up --with node: {exc}")
        yield Kube(cluster.kubectl, cluster.env(), cluster.server, cluster.token, state)
    finally:
        stop()


@pytest.fixture(scope="session")
def operators(kube: Kube) -> Kube:
    """The same cluster with KWOK (fake nodes that run pods), Volcano (which admits and
    places the operator's gangs) and the PaddleFlow operator."""
    return with_extras(kube, ["kwok", "volcano", "paddle-operator"])


@pytest.fixture(scope="session")
def argocd(kube: Kube) -> Kube:
    """The same cluster with KWOK, Volcano, the PaddleFlow operator and Argo CD."""
    require_tool("kustomize")  # the repo-server builds the rendered kustomizations with it
    return with_extras(kube, ["kwok", "volcano", "paddle-operator", "argocd"])


def host_state(state: Path) -> dict[str, object]:
    """What a node changes on the host and `down` restores, as the host's own tools see it;
    and the processes that name ``state`` (containerd's shims among them)."""

    def output(*argv: str) -> list[str]:
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        # without iptables-save's dated comments and the packet counters
        return [re.sub(r"\[\d+:\d+\]", "", line) for line in done.stdout.splitlines()
                if not line.startswith("#")]  # fmt: skip

    folders = local_cluster().node.HOST_FOLDERS  # where its parts write outside ``state``
    places = (str(state), *folders)
    return {
        "sysctls": output("sysctl", "vm.overcommit_memory", "kernel.panic", "kernel.panic_on_oops"),
        "iptables": output("iptables-save"),
        "ip6tables": output("ip6tables-save"),
        "nft tables": output("nft", "list", "tables"),
        "links": sorted(
            path.name
            for path in Path("/sys/class/net").iterdir()
            if path.name.startswith(("veth", "paddlegen"))
        ),
        "kubepods": sorted(str(path) for path in Path("/sys/fs/cgroup").glob("*/kubepods")),
        "mounts": [
            point
            for line in Path("/proc/self/mountinfo").read_text().splitlines()
            if (point := line.split()[4]).startswith(places)
        ],
        "folders": [folder for folder in folders if os.path.lexists(folder)],
        "processes": [  # each with its command line: a failure says which one was left
            proc.name + " " + cmdline.replace(b"\0", b" ").decode(errors="replace")[:300]
            for proc in Path("/proc").iterdir()
            if proc.name.isdigit() and str(state).encode() in (cmdline := _cmdline(proc))
        ],
    }


def _cmdline(proc: Path) -> bytes:
    try:
        return (proc / "cmdline").read_bytes()
    except OSError:
        return b""
