"""What every component shares: errors, the tools cache, Go builds, processes, the state."""

from __future__ import annotations

import json
import os
import random
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path

HACK = Path(__file__).resolve().parent.parent
TOOLS = HACK / "tools"
DEFAULT_STATE = "/tmp/paddlegen-cluster"


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


def cache_root() -> Path:
    explicit = os.environ.get("PADDLEGEN_TOOLS_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "paddlegen"


def go_build(
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
        # No DWARF, in the compiler and the linker, and no symbol table: nothing here debugs
        # these binaries, and leaving them out took a tenth of a cold build's CPU (the
        # paddle-operator from an empty GOCACHE: 214 s of CPU with them, 192 s without).
        flags = ["-trimpath", "-gcflags=all=-dwarf=false", "-ldflags", f"-s -w {ldflags}"]
        command = [go, "build", *flags, "-o", output, *packages]
        report = timer()
        done = subprocess.run(command, cwd=module_dir, check=False)
        if done.returncode != 0:
            raise ClusterError(f"go build in {module_dir} failed (exit {done.returncode})")
        built = sorted(p.name for p in Path(tmp).iterdir())
        for binary in built:
            os.replace(Path(tmp) / binary, bin_dir / binary)
        report(", ".join(built))


def timer() -> Callable[[str], None]:
    """A function that prints ``built WHAT in N s (M s of CPU)`` on stderr, counted from now:
    CPU time too, as wall time depends on what else the machine runs, CPU time much less."""
    started, before = time.monotonic(), _children_cpu()

    def report(what: str) -> None:
        took, cpu = time.monotonic() - started, _children_cpu() - before
        print(f"built {what} in {took:.0f} s ({cpu:.0f} s of CPU)", file=sys.stderr)

    return report


def _children_cpu() -> float:
    """User and system time of the finished child processes (go build and its compilers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run ``argv``; its output, or a ClusterError with the end of what it said."""
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ClusterError(f"{' '.join(argv[:3])}: exit {done.returncode}\n{done.stderr[-2000:]}")
    return done.stdout


def on_path(command: str, package: str) -> Path:
    """``command`` on PATH, its folder resolved (/bin is /usr/bin on Debian) but not the file
    (redis-server is a link to redis-check-rdb, which acts by the name it is run as); a path
    that says what is missing when it is not there."""
    found = shutil.which(command)
    if found is None:
        return Path(f"{command} (not on PATH: Debian's {package})")
    return Path(os.path.realpath(Path(found).parent)) / command


@dataclass(frozen=True)
class GoBuild:
    """Binaries built from one module under hack/tools: one per package, cached by the
    version go.mod pins."""

    tools: str  # its module under hack/tools
    module: str  # the module whose version go.mod pins
    packages: tuple[str, ...]  # what `go build` builds, one binary each
    processes: tuple[str, ...]  # the name each binary runs under (state, logs), in that order
    names: tuple[str, ...] = ()  # the binaries' names, if not their packages' (one package)
    ldflags: Callable[[str], str] | None = None  # from the pinned version
    cache: str = ""  # its folder in the tools cache, if not the module's under hack/tools

    def bin_dir(self) -> Path:
        return cache_root() / (self.cache or self.tools) / pinned(self.module, self.tools) / "bin"

    def binaries(self) -> dict[str, Path]:
        """Process name -> where its binary is (`go build` names it after its package)."""
        names = self.names or tuple(package.rsplit("/", 1)[-1] for package in self.packages)
        return {
            process: self.bin_dir() / name
            for process, name in zip(self.processes, names, strict=True)
        }

    def build(self, absent: Collection[str]) -> None:
        """Build the binaries of ``absent`` (process names), all in one `go build`; not those
        built since ``absent`` was found (a build two components share: jobset.py)."""
        binaries = self.binaries()
        packages = [
            package
            for package, process in zip(self.packages, self.processes, strict=True)
            if process in absent and not os.access(binaries[process], os.X_OK)
        ]
        if packages:
            ldflags = self.ldflags(pinned(self.module, self.tools)) if self.ldflags else ""
            output = self.names[0] if self.names else ""  # names a single binary
            go_build(TOOLS / self.tools, packages, self.bin_dir(), ldflags, output)


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
    def kubectl(self) -> str:
        return str(Path(self.bin_dirs[0]) / "kubectl")

    def env(self) -> dict[str, str]:
        """The environment a kubectl of this cluster needs."""
        path = os.pathsep.join([*self.bin_dirs, os.environ.get("PATH", "")])
        return {**os.environ, "KUBECONFIG": self.kubeconfig, "PATH": path}

    def save(self) -> None:
        (Path(self.state) / "cluster.json").write_text(json.dumps(asdict(self), indent=2) + "\n")

    def start(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> int:
        """Start ``argv`` as the process ``name`` (log <state>/NAME.log), recorded at once so
        that `down` stops it whatever happens next."""
        self.pids[name] = start(name, argv, Path(self.state), env)
        self.save()
        return self.pids[name]

    def gone(self, name: str) -> ClusterError:
        """The error for a process of this cluster that ended: how (its exit status, or the
        signal that killed it: one killed before it logged anything leaves nothing else to
        go by) and the end of its log."""
        child = CHILDREN.get(self.pids[name])
        code = None if child is None else child.poll()
        how = "exited"
        if code is not None:
            how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
        return ClusterError(f"{name} {how}:\n{tail(Path(self.state) / (name + '.log'))}")

    def check_alive(self, processes: Mapping[str, Path]) -> None:
        """Raise the error of the first of ``processes`` (name -> executable) that ended."""
        for name, binary in processes.items():
            if not alive(self.pids[name], str(binary)):
                raise self.gone(name)

    def apply(self, objects: list[dict[str, object]]) -> None:
        stream = "".join(f"---\n{json.dumps(obj)}\n" for obj in objects)
        done = subprocess.run(
            [self.kubectl, "apply", "-f", "-"],
            input=stream,
            env=self.env(),
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise ClusterError(f"kubectl apply failed: {done.stderr.strip()}")

    def kubectl_run(self, argv: list[str]) -> str:
        """Run ``argv`` (a kubectl command line), raising with its stderr; its output."""
        done = subprocess.run(argv, env=self.env(), capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ClusterError(f"{' '.join(argv[1:3])} failed: {done.stderr.strip()}")
        return done.stdout


def state_dir(explicit: str | Path | None = None) -> Path:
    return Path(explicit or os.environ.get("PADDLEGEN_CLUSTER_DIR") or DEFAULT_STATE)


def free_port() -> int:
    """A loopback port no one listens on, below the kernel's ephemeral range: a port the kernel
    hands out (bind to 0) is also what it picks for the source port of any outgoing connection,
    so between our pick and the component's own bind another process could take it (seen:
    argocd-repo-server "bind: address already in use" while other builds downloaded)."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768  # Linux's default
    chooser = random.SystemRandom()
    for _ in range(200):
        port = chooser.randrange(10000, max(low, 10001))
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue  # in use: try another
            return port
    raise ClusterError("no free loopback port below the ephemeral range")


def alive(pid: int, binary: str) -> bool:
    """``pid`` runs ``binary`` (a recycled pid running something else is not ours)."""
    # A process just started can show an empty command line for a moment (its exec is not
    # complete in /proc yet); a zombie shows one for good.
    for _ in range(50):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False
        if cmdline:
            return cmdline.split(b"\0")[0].decode() == binary
        time.sleep(0.002)
    return False


# The processes this Python process started, kept so that they are waited for, not reported
# as still running when garbage-collected (the pytest fixture runs `up` and `down` in-process).
CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def start(name: str, argv: list[str], state: Path, env: dict[str, str] | None = None) -> int:
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
    CHILDREN[process.pid] = process
    return process.pid


def tail(log: Path, lines: int = 15) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def stop(pids: Sequence[int]) -> None:
    """SIGTERM ``pids`` (checked to be ours by the caller), SIGKILL what still runs after 3 s,
    and wait (a little) until those are gone too."""
    for pid in pids:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 3  # a throwaway cluster: no long graceful shutdown
    for pid in pids:
        while running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if running(pid):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 2
    for pid in pids:
        while running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)


def reap(pids: Collection[int]) -> None:
    """Wait for those of ``pids`` this process started, ended by us or by themselves."""
    for pid in pids:
        child = CHILDREN.pop(pid, None)
        if child is not None:
            child.wait()


def running(pid: int) -> bool:
    child = CHILDREN.get(pid)
    if child is not None:
        if child.poll() is None:
            return True
        del CHILDREN[pid]
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class Component:
    """One `--with` part of the cluster: what `build` makes or finds for it, the processes
    `up` starts for it (recorded by name in cluster.json) and how."""

    name: str
    go: GoBuild | None = None
    requires: tuple[str, ...] = ()  # components `--with` it starts first, named or not

    def binaries(self) -> dict[str, Path]:
        """What it needs, by name, where `build` puts it (or where its package has it)."""
        return self.go.binaries() if self.go else {}

    def build(self, absent: Collection[str]) -> None:
        """Make those of its binaries() named in ``absent``."""
        if self.go:
            self.go.build(absent)

    def building_aside(self, absent: Collection[str]) -> AbstractContextManager[None]:
        """What it builds beside everyone's `build` (work that waits on downloads and the
        disk more than on the CPU), from the context's start to its end."""
        return nullcontext()

    def processes(self) -> dict[str, Path]:
        """The processes `up` records for it, by name -> the executable each runs."""
        return self.go.binaries() if self.go else {}

    def images(self) -> dict[str, Path]:
        """The image archives it needs, by name, where `build` puts them."""
        return {}

    def unusable(self) -> list[str]:
        """What this machine lacks to run it (`up` refuses before it starts anything)."""
        return []

    def start(self, cluster: Cluster) -> None:
        raise NotImplementedError

    def stop(self, state: Path, pids: Mapping[str, int]) -> None:
        """Undo what it changed beyond its processes, given the pids `up` recorded (`down`
        stops the processes it has not stopped, by pid, after)."""
