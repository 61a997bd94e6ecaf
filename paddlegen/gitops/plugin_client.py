"""The Argo CD plugin's `generate`: a render by the sidecar's warm renderer, else a cold one.

Run as ``python3 -I -S plugin_client.py ARGS...`` (the sidecar's generate command): only the
standard library, no site-packages, nothing of paddlegen imported, so that starting it costs
little more than the interpreter. It hands the renderer (``paddlegen serve``, started with the
sidecar) its standard streams, working directory, environment and arguments over a Unix
socket; the renderer's worker runs the same CLI on exactly those, writing straight into the
streams, and sends back the exit code. When no renderer answers (none started, dead, or
serving another install of paddlegen) it becomes ``paddlegen ARGS...``: the same output, cold.
"""

from __future__ import annotations

import json
import os
import sys

TYPE_CHECKING = False  # not typing's: the client imports as little as it can
if TYPE_CHECKING:
    import socket

SOCKET_VARIABLE = "PADDLEGEN_RENDERER_SOCKET"
# Set by `paddlegen serve` for the command it becomes: this file, and the interpreter that
# runs paddlegen (the plugin's generate starts the one with the other).
CLIENT_VARIABLE = "PADDLEGEN_PLUGIN_CLIENT"
PYTHON_VARIABLE = "PADDLEGEN_PYTHON"
# The renderer's replies, a line each. Its worker says STARTED before it writes anything, so
# until then a cold render cannot print anything twice; then EXIT and the code, or the
# renderer says CUT_OFF and the seconds.
STARTED = b"started"
EXIT = b"exit "
CUT_OFF = b"cut-off "
STALE = b"stale"


def request(args: list[str]) -> bytes:
    """What the renderer reads: one JSON line (the streams travel beside it)."""
    body = {"args": args, "cwd": os.getcwd(), "env": dict(os.environ)}
    return json.dumps(body).encode("utf-8") + b"\n"


def _replies(sock: socket.socket) -> list[bytes]:
    """The renderer's lines, up to the one that ends the render (or the end of the socket)."""
    data = b""
    while chunk := sock.recv(4096):
        data += chunk
        if data.endswith(b"\n") and data.splitlines()[-1].startswith((EXIT, CUT_OFF)):
            break
    return data.splitlines()


def served(path: str, args: list[str]) -> int | None:
    """The exit code of the renderer's render, or None when no renderer started one."""
    import socket  # here: `paddlegen argocd` reads this module's names, never a socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        try:
            sock.connect(path)
            socket.send_fds(sock, [request(args)], [0, 1, 2])
            sock.shutdown(socket.SHUT_WR)
            replies = _replies(sock)
        except OSError:
            return None
    if not replies or replies[0] != STARTED:
        return None  # refused (stale) or gone before it began: nothing was written
    last = replies[-1]
    if last.startswith(EXIT):
        return int(last[len(EXIT) :])
    if last.startswith(CUT_OFF):
        seconds = last[len(CUT_OFF) :].decode()
        sys.stderr.write(f"paddlegen: the renderer cut this render off after {seconds} s\n")
    else:  # the worker died mid-render: what it wrote may be partial
        sys.stderr.write("paddlegen: the renderer ended before the render did\n")
    return 2


def main() -> None:
    args = sys.argv[1:]
    path = os.environ.get(SOCKET_VARIABLE)
    code = served(path, args) if path else None
    if code is not None:
        sys.exit(code)
    try:
        os.execvp("paddlegen", ["paddlegen", *args])
    except OSError as exc:
        sys.stderr.write(f"paddlegen: error: cannot start paddlegen: {exc}\n")
        sys.exit(2)


if __name__ == "__main__":
    main()
