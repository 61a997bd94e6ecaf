"""Whose output a folder is, told by files that command always writes; others refuse it."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator
from pathlib import Path

from paddlegen.errors import OutputError
from paddlegen.output.layout import KUSTOMIZATION, STAMP, is_generated


class Writer:
    """A command that writes an output folder, and how its folders are told: by its signs,
    files it writes on every run (those of `argocd` and `kueue` carry paddlegen's header, as
    everything they write). A command writing into a folder that is another's (or, for the
    commands that own their whole folder, one holding another's anywhere below it: `-o .` on
    the repository root) writes nothing, and names the folder, its owner and the way out."""

    # A plain class, not a dataclass: this module is imported by every render, and making a
    # dataclass costs a cold process a fraction of a millisecond each.
    def __init__(
        self,
        command: str,
        output: str,
        signs: tuple[str, ...],
        headed: bool = True,
        default: str = "",
    ) -> None:
        self.command = command  # as typed after `paddlegen`
        self.output = output  # what it writes, as a message says it
        self.signs = signs  # relative paths (globs) of files it always writes
        self.headed = headed  # its signs carry paddlegen's header
        self.default = default  # its default output folder, the way out a refusal names


ARGOCD = Writer(
    "argocd",
    "Argo CD files",
    ("applicationset.yaml", "applications/*.yaml", "patches/argocd-cm-health.yaml"),
    default="argocd",
)
KUEUE = Writer("kueue", "Kueue objects", ("kueue.x-k8s.io_*_clusterqueue_*.yaml",), default="kueue")
# the spec schema it exports (resources.spec_schema_path), JSON: no header
SCHEMAS = Writer("schemas export", "schemas", ("trainingjob.v1.schema.json",), headed=False)
# One job folder of `render`'s, by its stamp or its kustomization (a repository that commits no
# stamps is told too); asked last, as kueue's folder has a kustomization as well. `render`'s
# own output folder is a folder of them.
JOB = Writer("render", "a rendered job", (STAMP, KUSTOMIZATION, f"base/{KUSTOMIZATION}"))
RENDER = Writer("render", "rendered jobs", (), default="deploy")
_FOLDERS = (ARGOCD, KUEUE, SCHEMAS, JOB)


def owner(folder: Path) -> Writer | None:
    """The command whose output ``folder`` is (``JOB``: it is one rendered job's folder), by
    its sign; None for a folder no command's sign is in (new, empty, the user's)."""
    try:
        names = os.listdir(folder)  # once: most signs are missing, known without a stat each
    except OSError:
        return None  # no folder (yet), or none to read: nothing in it is anyone's
    for writer in _FOLDERS:
        for sign in writer.signs:
            if any(_signed(path, writer) for path in _candidates(folder, names, sign)):
                return writer
    return None


def _candidates(folder: Path, names: list[str], sign: str) -> Iterator[Path]:
    """The paths in ``folder`` (its entries: ``names``) that ``sign`` matches."""
    head, _, rest = sign.partition("/")
    for name in fnmatch.filter(names, head) if "*" in head else [head] * (head in names):
        if not rest:
            yield folder / name
        elif "*" in rest:
            yield from (folder / name).glob(rest)
        else:
            yield folder / name / rest


def _signed(path: Path, writer: Writer) -> bool:
    """A sign's file is there: a regular file (no symlink), with paddlegen's header if its
    command writes one (a stamp has it too)."""
    if writer.headed:
        return is_generated(path)
    return path.is_file() and not path.is_symlink()


def claim(folder: Path, writer: Writer, whole: bool = False) -> None:
    """Refuse (OutputError, nothing written) to write ``writer``'s output into ``folder`` when
    that is another command's output, or with ``whole`` (a command that owns its whole
    folder) when any folder below it is (hidden folders, `.git`, and symlinks aside)."""
    found = owner(folder)
    if found is not None and found is not writer:
        raise OutputError(_refusal(folder, writer, folder, found))
    if not whole or not folder.is_dir():
        return
    for top, dirs, _ in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in dirs:
            below = Path(top, name)
            found = owner(below)
            if found is not None:
                raise OutputError(_refusal(folder, writer, below, found))


def _refusal(folder: Path, writer: Writer, where: Path, found: Writer) -> str:
    if found is JOB and where == folder and writer is RENDER:
        return (
            f"{folder}: is a rendered job's folder, not a folder of jobs: render into the "
            f"folder that holds it ({folder.parent})"
        )
    if found is JOB and where == folder:
        what = f"{folder} is a rendered job's folder, the output of `paddlegen render`"
    elif found is JOB:
        what = f"{where.parent} holds rendered jobs ({where}), the output of `paddlegen render`"
    else:
        what = f"{where} holds {found.output}, the output of `paddlegen {found.command}`"
    if writer is JOB:
        way = "rename the job (metadata.name), or render into another folder"
    else:
        way = "give it a folder of its own" + (f" (-o {writer.default})" if writer.default else "")
    return (
        f"{folder}: refusing to write the output of `paddlegen {writer.command}` here: {what}, "
        f"which it would mix with or remove; {way}"
    )
