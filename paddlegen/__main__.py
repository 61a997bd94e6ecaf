"""The `paddlegen` command (and `python -m paddlegen`).

`--version` is answered here, before the CLI and click are imported: scripts and hooks ask
for it often, and it should cost no more than starting Python. Its text is click's, and run
from a git checkout it names the commit too.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: importing typing would double what `--version` costs
if TYPE_CHECKING:
    from typing import Any, NoReturn

    from paddlegen.errors import Interrupted


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from paddlegen.version import version_text

        sys.stdout.write(version_text())
        return
    import gc
    import signal

    # A collection of the youngest objects every 10,000 allocations net of frees, not every 700
    # (CPython's default, Modules/gcmodule.c _PyGC_InitState): loading the CLI, the rules and
    # jinja2 allocates objects that live as long as the process, so a cold `render --stdout` ran
    # 60 collections that freed some 500 objects in all (1.3% of its instructions). What a run
    # leaves unreachable in cycles waits a little longer to be freed.
    gc.set_threshold(10_000)

    from paddlegen.errors import Interrupted

    # Installed before the CLI loads, so that no moment of a run ends in a traceback. Both
    # signals raise, in the main thread, where the run is: what is being written cleans up on
    # the way out (pipeline/write.writing), then this function exits with the signal's code.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _interrupt)
    try:
        from paddlegen.cli import main as cli_main

        cli_main()
    except Interrupted as exc:
        _exit_interrupted(exc)
    finally:
        # The process ends here. Python's exit runs full collections over every object still
        # tracked, the run's and its modules' (CPython 3.11 Python/pylifecycle.c: Py_FinalizeEx,
        # finalize_modules, interpreter_clear): about a tenth of a cold `render --stdout`.
        # Frozen, the objects are left out of them, to the operating system; what is freed
        # by reference counting (a module's file objects, say) still is, and Python flushes
        # stdout and stderr itself.
        gc.freeze()


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
        # The second signal cut the cleanup of the first short (pipeline/write.writing).
        sys.stderr.write(
            f"paddlegen: interrupted by {name} again while cleaning up; the next render "
            "removes any staging folder left in the output folder (check lists them)\n"
        )
    elif exc.output:
        import shlex

        sys.stderr.write(
            f"paddlegen: interrupted by {name}: {exc.output} is partly updated (each job in it "
            "is its old tree or its new one); to finish, run the same command again: "
            f"paddlegen {shlex.join(sys.argv[1:])}\n"
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
