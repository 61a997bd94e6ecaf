"""The plugin sidecar's warm renderer: paddlegen loaded once, a forked worker per render.

Argo CD runs the plugin's `generate` once per Application on every manifest-cache miss; a
cold ``paddlegen render --stdout`` spends most of its time starting Python and importing.
``serve`` imports everything a render needs and compiles the templates once, then listens on
a Unix socket for ``plugin_client``. Each request is served by a child forked from that warm
process: it takes over the client's standard streams, working directory and environment and
runs the same ``paddlegen`` CLI on the client's arguments, so its output, messages and exit
code are the CLI's own, byte for byte. A worker leaves nothing behind in this process (its
memory stays what warming made it, however many requests), runs beside other workers, and is
killed when it outlives its time, which the client reports; the next request never waits for
it. The renderer refuses to serve once the paddlegen it loaded is no longer the installed one
(a new install replaces its files), so it never renders with older code than a cold start
would; the client then renders cold.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import socket
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from paddlegen.errors import EXIT_ERROR, InputError
from paddlegen.gitops import plugin_client as client

DEFAULT_TIMEOUT = 60.0  # seconds; Argo CD itself gives a generate 90 (ARGOCD_EXEC_TIMEOUT)
# Renders at once: more wait in the socket's backlog until one ends.
MAX_WORKERS = 2 * (os.cpu_count() or 1)
_POLL = 0.5  # seconds between looks at timeouts and at the sidecar's main process


@dataclass
class _Worker:
    conn: socket.socket
    started: float
    cut_off: bool = False


def _identity() -> tuple[tuple[int, int, int], ...]:
    """What a new install of paddlegen changes: its package's and templates' files are
    replaced, so their inode, size or modification time differ."""
    from paddlegen.resources import spec_schema_path, templates_dir

    package = Path(__file__).resolve().parents[1]
    files = (package / "__init__.py", package / "version.py", templates_dir(), spec_schema_path())
    return tuple((s.st_ino, s.st_size, s.st_mtime_ns) for s in map(os.stat, files))


def warm() -> None:
    """Import what any command a plugin runs imports, and compile every template."""
    import importlib
    import pkgutil

    import paddlegen
    from paddlegen.render.engine import warm_templates
    from paddlegen.spec.schema import warm_validator

    for module in pkgutil.walk_packages(paddlegen.__path__, "paddlegen."):
        if not module.name.endswith(("__main__", "plugin_client")):
            importlib.import_module(module.name)
    warm_templates()
    warm_validator()


def listen(path: str) -> socket.socket:
    """A socket at ``path`` only this user can connect to; a stale socket file there (a
    renderer that died) is replaced, anything else refused."""
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISSOCK(os.lstat(path).st_mode):
            os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(path)
    except OSError as exc:
        listener.close()
        raise InputError(f"cannot listen at {path}: {exc.strerror}") from None
    finally:
        os.umask(old)
    listener.listen(64)
    return listener


def serve(
    path: str,
    run: Callable[[], None],
    timeout: float = DEFAULT_TIMEOUT,
    then: list[str] | None = None,
) -> None:
    """Serve renders at ``path`` until killed, each by ``run`` (the CLI's entry point, which
    reads ``sys.argv``) in a forked worker. With ``then``, the renderer runs in a child
    and this process becomes that command (the sidecar's argocd-cmp-server), with
    the renderer's socket, its client and the interpreter in its environment (``client``'s
    variables), for the plugin commands it starts."""
    warm()  # first: a socket that is there is served at once (before, generates render cold)
    listener = listen(path)
    identity = _identity()
    if not then:
        _loop(listener, run, timeout, identity, parent=None)
        return
    os.environ[client.SOCKET_VARIABLE] = path
    os.environ[client.CLIENT_VARIABLE] = client.__file__
    os.environ[client.PYTHON_VARIABLE] = sys.executable
    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork() == 0:
        _loop(listener, run, timeout, identity, parent=os.getppid())
        os._exit(0)
    listener.close()
    try:
        os.execvp(then[0], then)
    except OSError as exc:  # the renderer ends too: its parent is gone
        raise InputError(f"cannot run {then[0]}: {exc.strerror}") from None


def _loop(
    listener: socket.socket,
    run: Callable[[], None],
    timeout: float,
    identity: tuple[tuple[int, int, int], ...],
    parent: int | None,
) -> None:
    workers: dict[int, _Worker] = {}
    selector = selectors.DefaultSelector()
    # A worker's end wakes the loop (SIGCHLD writes to this socket), so its slot is free at once.
    wake_read, wake_write = socket.socketpair()
    wake_write.setblocking(False)
    signal.set_wakeup_fd(wake_write.fileno())
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector.register(wake_read, selectors.EVENT_READ)
    accepting = False
    while parent is None or os.getppid() == parent:
        if accepting != (len(workers) < MAX_WORKERS):  # a slot came free, or none is left
            accepting = not accepting
            if accepting:
                selector.register(listener, selectors.EVENT_READ)
            else:
                selector.unregister(listener)
        for key, _ in selector.select(_POLL):
            if key.fileobj is wake_read:
                wake_read.recv(4096)
            elif accepting:
                conn, _ = listener.accept()
                if _identity() != identity:
                    _reply(conn, client.STALE)  # the client renders cold
                    conn.close()
                    return  # serve nobody from now on: a new renderer takes the socket
                _start(listener, conn, run, workers)
        _reap(workers)
        _cut_off(workers, timeout)


def _start(
    listener: socket.socket,
    conn: socket.socket,
    run: Callable[[], None],
    workers: dict[int, _Worker],
) -> None:
    try:
        pid = os.fork()
    except OSError:
        conn.close()  # nothing started: the client renders cold
        return
    if pid == 0:
        listener.close()  # the worker serves its one request
        _work(conn, run)
    workers[pid] = _Worker(conn, time.monotonic())


def _reap(workers: dict[int, _Worker]) -> None:
    """The workers that ended: their clients have their exit code from the worker itself;
    one that was cut off gets that said, and one killed otherwise nothing (it says so)."""
    for pid in list(workers):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            worker = workers.pop(pid)
            if worker.cut_off:
                _reply(worker.conn, client.CUT_OFF + f"{_elapsed(worker):.0f}".encode())
            worker.conn.close()
            _log(worker, status)


def _cut_off(workers: dict[int, _Worker], timeout: float) -> None:
    for pid, worker in workers.items():
        if not worker.cut_off and _elapsed(worker) > timeout:
            worker.cut_off = True
            os.kill(pid, signal.SIGKILL)


def _log(worker: _Worker, status: int) -> None:
    """A line per render on stderr (the sidecar's log): how it ended and how long it took."""
    if worker.cut_off:
        end = "cut off"
    elif os.WIFEXITED(status):
        end = f"exit {os.WEXITSTATUS(status)}"
    else:
        end = f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    sys.stderr.write(f"paddlegen serve: a render ended ({end}) after {_elapsed(worker):.3f} s\n")
    sys.stderr.flush()


def _elapsed(worker: _Worker) -> float:
    return time.monotonic() - worker.started


def _reply(conn: socket.socket, line: bytes) -> None:
    with contextlib.suppress(OSError):  # the client is gone (Argo CD gave up on it)
        conn.sendall(line + b"\n")


def _work(conn: socket.socket, run: Callable[[], None]) -> NoReturn:
    """In the forked worker: the request's render, as `paddlegen ARGS` would run it, its
    exit code sent to the client before the worker ends."""
    code = EXIT_ERROR
    try:
        for signum in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(signum, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)
        args, cwd, env = _request(conn)
        _reply(conn, client.STARTED)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        sys.argv = ["paddlegen", *args]
        try:
            run()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        sys.stdout.flush()
        sys.stderr.flush()
        _reply(conn, client.EXIT + str(code).encode())
    except BaseException:  # noqa: BLE001 - a worker ends here, whatever happened
        code = EXIT_ERROR
    finally:
        os._exit(code)


def _request(conn: socket.socket) -> tuple[list[str], str, dict[str, str]]:
    """The client's arguments, working directory and environment; its standard streams
    become this process's."""
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
    if len(fds) != 3:
        raise InputError("a request without its standard streams")
    while not data.endswith(b"\n") and (chunk := conn.recv(1 << 16)):
        data += chunk
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    body = json.loads(data)
    return list(body["args"]), str(body["cwd"]), dict(body["env"])
