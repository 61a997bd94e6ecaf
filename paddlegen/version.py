"""What `paddlegen --version` prints: the version, and the commit when run from a git checkout.

Imported by `paddlegen --version` before anything else (paddlegen/__main__.py): os and sys
only, which Python has loaded already.
"""

from __future__ import annotations

from paddlegen import __version__


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
