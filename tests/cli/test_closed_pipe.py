"""A reader that closes paddlegen's stdout early (`| head`, a check script that fails) ends the
run quietly with 141, as a shell reports a Unix tool that SIGPIPE ended: no traceback, no
"internal error"."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from paddlegen.errors import EXIT_BROKEN_PIPE
from tests.conftest import example_specs

SPECS = [str(path) for path in example_specs()]  # about 100 KB of manifests


@pytest.mark.parametrize(
    "args",
    [
        ["render", *SPECS, "--stdout"],
        ["render", *SPECS, "--stdout", "--format", "sarif"],  # its report on stderr
        ["schema"],
    ],
    ids=["render", "render-sarif", "schema"],
)
def test_a_reader_that_leaves_ends_the_run_quietly(args: list[str]) -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte: every write fails
    with os.fdopen(write, "wb") as stdout:
        done = subprocess.run(
            [sys.executable, "-m", "paddlegen", *args],
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == EXIT_BROKEN_PIPE, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    if "sarif" not in args:
        assert done.stderr == ""
