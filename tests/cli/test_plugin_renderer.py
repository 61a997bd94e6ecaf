"""The plugin sidecar's warm renderer (`paddlegen serve`) and the client its generate runs:
every answer is the cold `paddlegen` command's, byte for byte, whoever serves it."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from paddlegen.gitops import plugin_client
from paddlegen.gitops.argocd_files import CMP_FILE
from paddlegen.gitops.argocd_sidecar import ENV_VARIABLE, cmp_plugin
from paddlegen.yamlio import load_all
from tests.conftest import DATA, EXAMPLES, ROOT, example_specs
from tests.helpers import copy_repository

CLIENT = plugin_client.__file__
# The renderer's cut-off in the test of a hung render, seconds: long enough for the render
# served meanwhile on a loaded machine, where 3 s cut one off.
TIMEOUT = 10
GENEROUS = 120  # everywhere else: 8 renders at once on a loaded machine
START = 60.0  # seconds a renderer may take to listen (it imports and compiles everything)


class Renderer:
    def __init__(self, socket_path: Path, process: subprocess.Popen[bytes], log: Path) -> None:
        self.socket = socket_path
        self.process = process
        self.log = log

    def renders(self, at_least: int = 0) -> int:
        """How many renders its log says it served, once it says ``at_least`` (the line
        comes when the renderer reaps the worker, just after the client had its answer)."""
        deadline = time.monotonic() + 10
        while True:
            said = self.log.read_text(encoding="utf-8").count("paddlegen serve: a render ended")
            if said >= at_least or time.monotonic() > deadline:
                return said
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def start_renderer(folder: Path, cwd: Path = ROOT, timeout: int = GENEROUS, **env: str) -> Renderer:
    path = folder / "r.sock"
    log = folder / "renderer.log"
    with open(log, "wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "paddlegen", "serve", "--socket", str(path)]
            + ["--timeout", str(timeout)],
            cwd=cwd,
            env={**os.environ, **env},
            stderr=stderr,
        )
    deadline = time.monotonic() + START
    while time.monotonic() < deadline:
        assert process.poll() is None, "the renderer ended"
        try:
            with socket.socket(socket.AF_UNIX) as probe:
                probe.connect(str(path))
                probe.shutdown(socket.SHUT_WR)  # an empty request: its worker just ends
                probe.recv(1)
            return Renderer(path, process, log)
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise AssertionError(f"no renderer listening at {path} after {START} s")


@pytest.fixture(scope="module")
def renderer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Renderer]:
    started = start_renderer(tmp_path_factory.mktemp("renderer"))
    yield started
    started.stop()


def _env(**extra: str) -> dict[str, str]:
    # `paddlegen` from this interpreter's environment, as the sidecar image has it on PATH
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, "PATH": path, **extra}


def generate(
    args: list[str], cwd: Path, socket_path: Path | str, **env: str
) -> subprocess.CompletedProcess[bytes]:
    """What the plugin's generate runs: the client, isolated from site-packages."""
    return subprocess.run(
        [sys.executable, "-I", "-S", CLIENT, *args],
        cwd=cwd,
        capture_output=True,
        check=False,
        env=_env(**{plugin_client.SOCKET_VARIABLE: str(socket_path), **env}),
    )


def cold(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["paddlegen", *args], cwd=cwd, capture_output=True, check=False, env=_env(**env)
    )


def answer(done: subprocess.CompletedProcess[bytes]) -> tuple[int, bytes, bytes]:
    return done.returncode, done.stdout, done.stderr


def environments(spec: Path) -> list[str]:
    return sorted(yaml.safe_load(spec.read_text(encoding="utf-8")).get("overlays") or {})


CASES = [
    pytest.param(spec.parent, ["render", spec.name, "--stdout", *env], id=f"{spec.stem}{env}")
    for spec in example_specs()
    for env in ([], *(["--env", e] for e in environments(spec)))
]
ERRORS = {
    "missing-file": ["render", "nope.yaml", "--stdout"],
    "invalid-spec": ["render", str(DATA / "specs" / "invalid" / "bad-enums.yaml"), "--stdout"],
    "unknown-env": ["render", "quickstart.yaml", "--stdout", "--env", "nope"],
    "usage": ["render", "--no-such-option"],
    "json-format": ["render", "nope.yaml", "--stdout", "--format", "json"],
}


@pytest.mark.parametrize(("cwd", "args"), CASES)
def test_every_example_and_environment_is_served_as_the_cold_render_prints_it(
    renderer: Renderer, cwd: Path, args: list[str]
):
    served = generate(args, cwd, renderer.socket)
    assert served.returncode == 0, served.stderr.decode()
    assert answer(served) == answer(cold(args, cwd))


def test_the_plugins_generate_command_is_served_warm(renderer: Renderer):
    """plugin.yaml's generate, with the environment `paddlegen serve -- argocd-cmp-server`
    gives the server, in an Application's folder: served by the renderer, as printed cold."""
    (command,) = [d for d in load_all(cmp_plugin()[CMP_FILE]) if d]
    argv = command["spec"]["generate"]["command"]
    served = {
        plugin_client.SOCKET_VARIABLE: str(renderer.socket),
        plugin_client.CLIENT_VARIABLE: CLIENT,
        plugin_client.PYTHON_VARIABLE: sys.executable,
    }
    for env in ({}, {f"ARGOCD_ENV_{ENV_VARIABLE}": "prod"}):
        before = renderer.renders()
        done = subprocess.run(argv, cwd=EXAMPLES, capture_output=True, env=_env(**served, **env))
        assert renderer.renders(at_least=before + 1) == before + 1  # a worker rendered it
        args = ["render", ".", "--stdout", *(["--env", "prod"] if env else [])]
        assert answer(done) == answer(cold(args, EXAMPLES))


@pytest.mark.parametrize("args", list(ERRORS.values()), ids=list(ERRORS))
def test_errors_reach_argo_cd_as_the_cold_render_gives_them(renderer: Renderer, args: list[str]):
    served = generate(args, EXAMPLES, renderer.socket)
    assert served.returncode in (1, 2)
    assert answer(served) == answer(cold(args, EXAMPLES))


def test_eight_generates_at_once_each_get_their_own_render(renderer: Renderer):
    jobs = [(c.values[0], c.values[1]) for c in CASES[:8]]
    with ThreadPoolExecutor(len(jobs)) as pool:
        served = list(pool.map(lambda job: generate(job[1], job[0], renderer.socket), jobs))
    for (cwd, args), done in zip(jobs, served, strict=True):
        assert answer(done) == answer(cold(args, cwd)), args


def test_a_render_that_takes_too_long_is_cut_off_and_the_next_is_served(tmp_path):
    renderer = start_renderer(tmp_path, timeout=TIMEOUT)
    try:
        hung_render_is_cut_off(renderer)
    finally:
        renderer.stop()


def hung_render_is_cut_off(renderer: Renderer) -> None:
    # `import -` waits for standard input, which stays open until it was cut off: a hung render.
    with subprocess.Popen(
        [sys.executable, "-I", "-S", CLIENT, "import", "-"],
        cwd=EXAMPLES,
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(**{plugin_client.SOCKET_VARIABLE: str(renderer.socket)}),
    ) as hung:
        args = ["render", "quickstart.yaml", "--stdout"]
        meanwhile = generate(args, EXAMPLES, renderer.socket)  # not held up by the hung one
        assert answer(meanwhile) == answer(cold(args, EXAMPLES))
        try:
            hung.wait(timeout=TIMEOUT + 30)  # communicate() would close its standard input
        finally:
            hung.kill()
        assert hung.stderr is not None
        said = hung.stderr.read().decode()
    assert hung.returncode == 2
    assert said.endswith(f"paddlegen: the renderer cut this render off after {TIMEOUT} s\n")
    assert renderer.process.poll() is None


def test_without_a_renderer_the_client_renders_cold(tmp_path):
    args = ["render", "quickstart.yaml", "--stdout"]
    expected = answer(cold(args, EXAMPLES))
    assert answer(generate(args, EXAMPLES, tmp_path / "none.sock")) == expected
    (tmp_path / "file.sock").write_text("not a socket")
    assert answer(generate(args, EXAMPLES, tmp_path / "file.sock")) == expected
    gone = start_renderer(tmp_path)
    gone.stop()  # killed: its socket file stays behind, nobody listens
    assert gone.socket.exists()
    assert answer(generate(args, EXAMPLES, gone.socket)) == expected


def test_a_renderer_whose_paddlegen_was_replaced_serves_no_more(tmp_path):
    """A new install replaces the package's files: the renderer, still holding the old code,
    refuses and ends; the client renders cold, with the installed paddlegen."""
    tree = tmp_path / "tree"
    copy_repository(tree, ("paddlegen", "templates", "schemas"))
    renderer = start_renderer(tmp_path, cwd=tree, PYTHONPATH=str(tree))
    try:
        args = ["render", "quickstart.yaml", "--stdout"]
        expected = answer(cold(args, EXAMPLES))
        assert answer(generate(args, EXAMPLES, renderer.socket)) == expected
        version = tree / "paddlegen" / "version.py"
        replaced = tmp_path / "version.py"
        shutil.copy2(version, replaced)
        os.replace(replaced, version)  # as an install writes it: a new file
        assert answer(generate(args, EXAMPLES, renderer.socket)) == expected
        assert renderer.process.wait(timeout=10) == 0
    finally:
        renderer.stop()


def test_serve_then_a_command_becomes_it_and_serves_beside_it(tmp_path):
    """`serve -- COMMAND`, the sidecar's command: the process becomes COMMAND (its pid, its
    environment with the client's variables), the renderer serves beside it and ends with it."""
    path = tmp_path / "r.sock"
    seen = tmp_path / "env"
    # renamed into place: the shell creates a redirect's file before env writes to it
    script = f"env > {seen}.part && mv {seen}.part {seen}; exec sleep 60"
    with subprocess.Popen(
        [sys.executable, "-m", "paddlegen", "serve", "--socket", str(path), "--"]
        + ["sh", "-c", script],
        cwd=ROOT,
        stderr=subprocess.DEVNULL,
    ) as sidecar:
        try:
            deadline = time.monotonic() + START
            while not (seen.exists() and path.exists()) and time.monotonic() < deadline:
                time.sleep(0.1)
            env = dict(line.split("=", 1) for line in seen.read_text().splitlines() if "=" in line)
            assert env[plugin_client.SOCKET_VARIABLE] == str(path)
            assert env[plugin_client.CLIENT_VARIABLE] == CLIENT
            assert env[plugin_client.PYTHON_VARIABLE] == sys.executable
            cmdline = Path(f"/proc/{sidecar.pid}/cmdline")
            while cmdline.read_bytes().split(b"\0")[:2] != [b"sleep", b"60"]:
                # the same process becomes the command (sh, then the sleep it execs)
                assert time.monotonic() < deadline, cmdline.read_bytes()
                time.sleep(0.05)
            args = ["render", "quickstart.yaml", "--stdout"]
            assert answer(generate(args, EXAMPLES, path)) == answer(cold(args, EXAMPLES))
        finally:
            sidecar.kill()
    # Its parent gone, the renderer ends: nobody is left listening at the socket.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.socket(socket.AF_UNIX) as probe:
                probe.connect(str(path))
        except OSError:
            break
        time.sleep(0.2)
    else:
        raise AssertionError("the renderer outlived the command it served beside")


def _rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS")))


def _served_quietly(path: Path, args: list[str]) -> int:
    """A request as the client makes it, from this process, its streams /dev/null: the
    worker's render alone, without starting a client's interpreter each time."""
    with (
        open(os.devnull, "rb") as stdin,
        open(os.devnull, "wb") as sink,
        socket.socket(socket.AF_UNIX) as sock,
    ):
        sock.connect(str(path))
        fds = [stdin.fileno(), sink.fileno(), sink.fileno()]
        socket.send_fds(sock, [plugin_client.request(args)], fds)
        sock.shutdown(socket.SHUT_WR)
        replies = b""
        while chunk := sock.recv(4096):
            replies += chunk
    last = replies.splitlines()[-1]
    assert last.startswith(plugin_client.EXIT), replies
    return int(last[len(plugin_client.EXIT) :])


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_the_renderers_memory_stays_bounded_over_a_thousand_requests(tmp_path, monkeypatch):
    """Every tenth request renders, the others ask the version: the renderer's own share of a
    request (accept, fork, streams, reaping) is the same for both, and what a render holds
    lives in the worker, which exits; renders alone cost 10 times the CPU for the same proof."""
    renderer = start_renderer(tmp_path)
    monkeypatch.chdir(EXAMPLES)  # the requests' working directory
    render, version = ["render", "quickstart.yaml", "--stdout"], ["--version"]

    def serve(count: int) -> None:
        asked = [render if i % 10 == 0 else version for i in range(count)]
        with ThreadPoolExecutor(4) as pool:
            codes = set(pool.map(lambda args: _served_quietly(renderer.socket, args), asked))
        assert codes == {0}

    try:
        serve(10)
        after_ten = _rss_kib(renderer.process.pid)
        serve(990)
        assert _rss_kib(renderer.process.pid) <= 1.5 * after_ten
    finally:
        renderer.process.send_signal(signal.SIGTERM)
        renderer.stop()
