"""Hostile input made at run time (too big to commit): bounded time and memory, exit 1 or 2."""

from __future__ import annotations

import os
import random
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from paddlegen.cli import cli
from paddlegen.errors import SpecError
from paddlegen.pipeline import load
from paddlegen.spec.loader import MAX_BYTES, MAX_DEPTH
from tests.security.trees import render_good_tree, tree_state

HEAD = "apiVersion: paddlegen/v1\nkind: TrainingJob\nmetadata: {name: demo}\n"
# CPU seconds per hostile file (load + schema + checks): a bound that tells bounded from
# unbounded work (without the guards these files take minutes or all memory), not a speed
# target, which is the benchmark's. The largest, anchor-huge-mapping, takes about 1 s.
TIME_BUDGET = 3.0
MEMORY_BUDGET = 64 * 1024 * 1024  # peak bytes allocated by Python while handling one file


def _laughs(levels: int, width: int) -> str:
    lines = [HEAD, "x0: &x0 [" + ", ".join(["lol"] * width) + "]\n"]
    for i in range(1, levels):
        lines.append(f"x{i}: &x{i} [" + ", ".join([f"*x{i - 1}"] * width) + "]\n")
    return "".join(lines) + f"spec: {{workload: job, image: 'x:1', args: *x{levels - 1}}}\n"


def _hostile() -> dict[str, bytes]:
    rng = random.Random(6)  # reproducible "binary" input
    levels = 2 * MAX_DEPTH
    block = "".join("  " * i + f"k{i}:\n" for i in range(levels)) + "  " * levels + "x"
    texts = {
        "deep-flow-sequences-10000": "[" * 10_000 + "]" * 10_000,
        "deep-flow-unclosed-100000": "[" * 100_000,  # segfaulted the C composer before
        "deep-flow-mappings-10000": "{a: " * 10_000 + "}" * 10_000,
        "deep-block-mappings": block,
        "deep-block-sequences": "".join("  " * i + "-\n" for i in range(2 * MAX_DEPTH)),
        "deep-in-spec": HEAD + "spec:\n  args: " + "[" * 5000 + "]" * 5000 + "\n",
        "billion-laughs-9x9": _laughs(9, 9),
        "billion-laughs-wide": _laughs(4, 300),
        "anchor-huge-string": HEAD
        + "spec:\n  image: &s '"
        + "x" * 900_000
        + "'\n  args: ["
        + ", ".join(["*s"] * 30)
        + "]\n",
        "anchor-huge-mapping": HEAD
        + "base: &b {"
        + ", ".join(f"k{i}: {i}" for i in range(5000))
        + "}\nspec: {args: ["
        + ", ".join(["*b"] * 40)
        + "]}\n",
        "many-values": HEAD + "spec: {args: [" + ",".join(["1"] * 400_000) + "]}\n",
        "many-keys": HEAD + "spec:\n" + "".join(f"  k{i}: {i}\n" for i in range(90_000)),
        "many-documents": "a: 1\n" + "---\n" * 200_000,
        "long-value": HEAD
        + "spec: {workload: job, image: 'x:1', note: '"
        + "x" * (MAX_BYTES - 200)
        + "'}",
        "huge-integers": HEAD + "spec: {gpus: " + "9" * 100_000 + "}\n",
        "many-huge-integers": HEAD + "spec: {args: [" + ", ".join(["9" * 40] * 10_000) + "]}\n",
        "many-errors": HEAD + "spec:\n" + "".join(f"  unknown{i}: {i}\n" for i in range(10_000)),
    }
    raw = {name: text.encode() for name, text in texts.items()}
    raw["too-large"] = b"a: " + b"x" * (4 * MAX_BYTES)
    raw["random-bytes"] = bytes(rng.getrandbits(8) for _ in range(65_536))
    alphabet = b"[]{}:,-&*!|>'\"%@` #\n\tab0"  # YAML's indicators, shuffled
    raw["random-printable"] = bytes(rng.choice(alphabet) for _ in range(200_000))
    raw["utf-16"] = (HEAD + "spec: {}\n").encode("utf-16")
    raw["nul-in-the-middle"] = HEAD.encode() + b"\x00" * 10
    return raw


HOSTILE = _hostile()


@pytest.fixture(scope="module")
def hostile_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    for name, data in HOSTILE.items():
        (folder / f"{name}.yaml").write_bytes(data)
    return folder


def _load(path: Path) -> SpecError:
    with pytest.raises(SpecError) as info:
        load.load_valid(path)
    return info.value


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_is_refused_within_time_budget(name, hostile_dir):
    started = time.process_time()  # CPU time: other processes on a busy runner do not count
    error = _load(hostile_dir / f"{name}.yaml")
    elapsed = time.process_time() - started
    assert error.diagnostics, name
    assert all(d.line >= 1 and d.col >= 1 and d.path.startswith("$") for d in error.diagnostics)
    assert elapsed < TIME_BUDGET, f"{name}: {elapsed:.2f} s"


# The inputs built to expand (tracemalloc slows everything down, so only these)
EXPANDING = ["billion-laughs-9x9", "anchor-huge-string", "too-large", "deep-flow-unclosed-100000"]


@pytest.mark.parametrize("name", EXPANDING)
def test_hostile_input_is_refused_within_memory_budget(name, hostile_dir):
    tracemalloc.start()
    try:
        _load(hostile_dir / f"{name}.yaml")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MEMORY_BUDGET, f"{name}: {peak / 1e6:.0f} MB"


def test_depth_is_refused_with_position_and_path(hostile_dir):
    [d] = _load(hostile_dir / "deep-in-spec.yaml").diagnostics
    assert (d.line, d.col) == (5, 9 + MAX_DEPTH - 2)
    assert d.path == "$.spec.args" + "[0]" * (MAX_DEPTH - 2)
    assert "nests deeper than" in d.message


@pytest.mark.parametrize(
    ("opener", "closer", "step"), [("[", "]", "[0]"), ("{a: ", "}", ".a")], ids=["seq", "map"]
)
def test_depth_is_paddlegens_own_whatever_libyaml_refuses(runner, tmp_path, opener, closer, step):
    """libyaml 0.2.6+ stops at 1,000 levels while reading ahead of the events it gave out;
    paddlegen's limit still wins, at its position (characters, not bytes, before it)."""
    spec = tmp_path / "deep.yaml"
    prefix = HEAD + "spec:\n  image: 'é€𝄞'\n  args: "
    spec.write_text(prefix + opener * 5000 + closer * 5000 + "\n", encoding="utf-8")
    result = runner.invoke(cli, ["validate", str(spec)])
    assert result.exit_code == 1
    col = len("  args: ") + len(opener) * (MAX_DEPTH - 2) + 1
    where = f"{spec}:6:{col}: error: $.spec.args" + step * (MAX_DEPTH - 2) + ": "
    assert where + f"the document nests deeper than {MAX_DEPTH} levels" in result.stderr
    assert "maximum nesting depth" not in result.stderr


def test_hostile_folder_in_a_real_process_under_memory_limit(hostile_dir, tmp_path):
    """The CLI as users run it, with address space capped: no signal, no traceback, exit 1."""
    out = tmp_path / "deploy"
    render_good_tree(out)
    before = tree_state(out)
    limit = 1024 * 1024 * 1024

    def cap() -> None:  # pragma: no cover - runs in the child
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "paddlegen", "render", str(hostile_dir), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=cap,
    )
    elapsed = time.perf_counter() - started
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    for name in HOSTILE:
        assert f"{name}.yaml:" in proc.stderr, name
    assert tree_state(out) == before
    assert elapsed < 2 * len(HOSTILE) * TIME_BUDGET


# ---- I/O problems: exit 2, a message naming the file, the output untouched ----------------


# Each case's path: in the spec folder, or as it is.
IO_CASES = {
    "missing": "missing.yaml",
    "directory-named-like-a-spec": "is-a-directory.yaml",
    "fifo-without-writer": "fifo.yaml",
    "dangling-symlink": "dangling.yaml",
    "symlink-loop": "loop-a.yaml",
    "character-device-zero": "/dev/zero",
    "character-device-urandom": "/dev/urandom",
}


def _io_cases(root: Path) -> None:
    (root / "is-a-directory.yaml").mkdir()
    os.mkfifo(root / "fifo.yaml")
    (root / "dangling.yaml").symlink_to(root / "nowhere.yaml")
    (root / "loop-a.yaml").symlink_to(root / "loop-b.yaml")
    (root / "loop-b.yaml").symlink_to(root / "loop-a.yaml")


@pytest.mark.parametrize("case", IO_CASES)
def test_unreadable_spec_is_exit_2(runner, case, tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    _io_cases(specs)
    path = str(specs / IO_CASES[case])  # an absolute one stays as it is
    if not os.path.exists(path) and case.startswith("character-device"):
        pytest.skip(f"{path} does not exist here")
    out = tmp_path / "deploy"
    render_good_tree(out)
    before = tree_state(out)
    started = time.perf_counter()
    result = runner.invoke(cli, ["render", path, "-o", str(out)])
    assert time.perf_counter() - started < 5, "reading must never block"
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.stderr
    assert path in result.stderr
    if case != "directory-named-like-a-spec":  # a folder is searched for specs: none found
        assert result.stderr.startswith(f"paddlegen: error: {path}: "), result.stderr
    assert tree_state(out) == before


def test_permission_denied_is_exit_2(runner, tmp_path, monkeypatch):
    """chmod 000 does not stop root, so the refusal is simulated where it happens."""
    spec = tmp_path / "secret.yaml"
    spec.write_text(HEAD)
    if os.geteuid() != 0:
        spec.chmod(0)
    else:
        real_open = os.open

        def deny(path, *args, **kwargs):
            if str(path) == str(spec):
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr(os, "open", deny)
    out = tmp_path / "deploy"
    result = runner.invoke(cli, ["render", str(spec), "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert result.stderr == f"paddlegen: error: {spec}: cannot read: Permission denied\n"
    assert not out.exists()


def test_a_fifo_inside_a_spec_folder_is_skipped_not_read(runner, tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    os.mkfifo(specs / "pipe.yaml")
    (specs / "demo.yaml").write_text(HEAD + "spec: {workload: job, image: 'x:1'}\n")
    result = runner.invoke(cli, ["validate", str(specs)])
    assert result.exit_code == 0, result.output
