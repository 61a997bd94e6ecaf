"""What besides a spec decides the output bytes: paddlegen's code, its libraries, the templates."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from paddlegen import __version__
from paddlegen.reading import read_bytes

PACKAGE = Path(__file__).resolve().parents[1]  # paddlegen/, every subpackage included


def tree_files(root: Path) -> Iterable[tuple[str, str]]:
    """``(relative posix path, full path)`` of every file below ``root``, in sorted order."""
    prefix = len(str(root)) + 1
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(folder, name)
            yield full[prefix:].replace(os.sep, "/"), full


@lru_cache(maxsize=1)
def _libraries() -> str:
    """The versions of the libraries that shape the output. jinja2's is read from its
    ``__init__.py`` rather than imported: a run that skips every job never loads jinja2
    (~20 ms), and importlib.metadata would cost as much."""
    import importlib.util

    import yaml  # loaded anyway: the spec loader needs it

    spec = importlib.util.find_spec("jinja2")
    with open(spec.origin if spec and spec.origin else os.devnull, "rb") as fh:
        jinja2_init = hashlib.sha256(fh.read()).hexdigest()  # holds __version__
    return (
        f"paddlegen {__version__} jinja2 {jinja2_init} pyyaml {yaml.__version__} "
        f"libyaml {hasattr(yaml, 'CSafeDumper')}\n"
    )


@lru_cache(maxsize=1)
def code_digest() -> str:
    """paddlegen's own code and the libraries that shape its output (fixed for a process)."""
    h = hashlib.sha256(_libraries().encode())
    # Every module, subpackages included: a change anywhere in the package may change output.
    for rel, full in tree_files(PACKAGE):
        if rel.endswith(".py"):
            with open(full, "rb") as fh:
                data = fh.read()
            h.update(f"{rel}\0{len(data)}\0".encode())
            h.update(data)
    return h.hexdigest()


# What shapes a template's compiled code: the environment's options (engine.py) and the
# sandbox's rewrite of the parsed template (sandbox.py), with jinja2 itself (in _libraries).
# Filters, tests and globals are looked up when a template runs, not compiled in.
COMPILER_MODULES = ("render/engine.py", "render/sandbox.py")


@lru_cache(maxsize=1)
def compiler_digest() -> str:
    """What the compiled templates depend on besides their source (fixed for a process): the
    name of the template cache's folder. Two files, not code_digest's every module: hashing
    the whole package was a tenth of a cold one-spec render's instructions."""
    h = hashlib.sha256(_libraries().encode())
    for rel in COMPILER_MODULES:
        with open(PACKAGE / rel, "rb") as fh:
            data = fh.read()
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def toolchain_digest(templates: str | None = None) -> str:
    """Everything besides the spec that decides the output bytes.

    Read afresh by every render (a few milliseconds), never cached across them: a template
    edited while a process lives must not be served from an old digest.
    """
    from paddlegen.resources import spec_schema_path, templates_dir

    h = hashlib.sha256(code_digest().encode())
    _add_files(h, "builtin", tree_files(templates_dir()))
    _add_files(h, "schema", [("spec", str(spec_schema_path()))])
    if templates:
        _add_files(h, "user", tree_files(Path(templates)))
    return h.hexdigest()


def templates_digest(templates: str | None) -> str:
    """The user's own templates (``--templates``), which are theirs as the spec is: "" for
    none."""
    if not templates:
        return ""
    h = hashlib.sha256()
    _add_files(h, "user", tree_files(Path(templates)))
    return h.hexdigest()


def _add_files(h: Any, label: str, files: Iterable[tuple[str, str]]) -> None:
    for rel, full in files:
        data = read_bytes(full)  # --templates is the user's folder: no FIFO, no device
        h.update(f"{label}/{rel}\0{len(data)}\0".encode())
        h.update(data)
