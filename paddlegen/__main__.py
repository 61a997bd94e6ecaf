"""The `paddlegen` command (and `python -m paddlegen`).

`--version` is answered here, before the CLI and click are imported: scripts and hooks ask
for it often, and it should cost no more than starting Python. Its text is click's, and run
from a git checkout it names the commit too.
"""

from __future__ import annotations

import sys

from paddlegen import __version__

TYPE_CHECKING = False  # not typing's: importing typing would double what `--version` costs
if TYPE_CHECKING:
    from typing import Any, NoReturn

    from paddlegen.errors import Interrupted


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        sys.stdout.write(version_text())
        return
    import signal

    from paddlegen.errors import Interrupted

    # Installed before the CLI loads, so that no moment of a run ends in a traceback. Both
    # signals raise, in the main thread, where the run is: what is being written cleans up on
    # the way out (see write._writing), then this function exits with the signal's code.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _interrupt)
    try:
        from paddlegen.cli import main as cli_main

        cli_main()
    except Interrupted as exc:
        _exit_interrupted(exc)


def version_text() -> str:
    """What `paddlegen --version` prints: the version and, when the package runs from a git
    checkout (its parent folder holds `.git`), the commit it runs."""
    import os

    text = f"paddlegen, version {__version__}"
    checkout = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.exists(os.path.join(checkout, ".git")):
        commit = _commit(checkout)
        if commit:
            text += f" (commit {commit})"
    return text + "\n"


def _commit(checkout: str) -> str:
    """`git rev-parse --short HEAD` in ``checkout``; "" when git cannot say. Spawned with os
    alone where it can be: importing subprocess would cost more than the rest of `--version`."""
    import os

    # A hook's GIT_DIR or GIT_WORK_TREE would point git at another repository.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    argv = ["git", "-C", checkout, "rev-parse", "--short", "HEAD"]
    if not hasattr(os, "posix_spawnp"):  # Windows
        import subprocess

        try:
            done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        except OSError:
            return ""
        return done.stdout.strip() if done.returncode == 0 else ""
    read, write = os.pipe()
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        pid = os.posix_spawnp(
            "git",
            argv,
            env,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, write, 1),
                (os.POSIX_SPAWN_DUP2, devnull, 2),
                (os.POSIX_SPAWN_CLOSE, read),
            ],
        )
    except OSError:  # no git
        os.close(read)
        return ""
    finally:
        os.close(write)
        os.close(devnull)
    with os.fdopen(read, encoding="utf-8", errors="replace") as out:
        text = out.read()
    _, status = os.waitpid(pid, 0)
    return text.strip() if os.waitstatus_to_exitcode(status) == 0 else ""


def _interrupt(signum: int, _frame: Any) -> NoReturn:
    from paddlegen.errors import Interrupted

    raise Interrupted(signum)


def _exit_interrupted(exc: Interrupted) -> NoReturn:
    """One line on stderr and the signal's exit code; a third signal changes neither."""
    import signal

    from paddlegen.errors import Interrupted

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)
    name = signal.Signals(exc.signum).name
    if _during(exc, Interrupted):
        # The second signal cut the cleanup of the first short (write._writing).
        sys.stderr.write(
            f"paddlegen: interrupted by {name} again while cleaning up; the next render "
            "removes any staging folder left in the output folder (check lists them)\n"
        )
    else:
        sys.stderr.write(f"paddlegen: interrupted by {name}\n")
    sys.exit(exc.exit_code)


def _during(exc: BaseException, kind: type[BaseException]) -> bool:
    """Whether ``exc`` was raised while an exception of ``kind`` was being handled, however
    deep (a cleanup step may be handling an error of its own, such as rmtree's OSErrors)."""
    seen = exc.__context__
    while seen is not None and not isinstance(seen, kind):
        seen = seen.__context__
    return seen is not None


if __name__ == "__main__":
    main()
