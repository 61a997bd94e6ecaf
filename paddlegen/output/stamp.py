"""The stamp: what a job directory was rendered from, so an unchanged job is not rendered again.

Each job directory gets a ``.paddlegen-stamp`` (paddlegen's header, then JSON) holding

- ``input``: a sha256 over the spec's bytes, the render options (the ``--ignore`` rules among
  them: they decide which findings fail the run and which warnings it shows) and the toolchain
  (paddlegen's own code, the built-in and ``--templates`` templates, the spec schema, jinja2
  and PyYAML);
- ``files``: the sha256 of every file the render wrote;
- ``warnings``: the spec's warnings (those the run did not silence), so a skipped job still
  reports them.
- ``custom``: true when the job folder's own Component (`custom/`) was there, and the
  kustomization lists it;
- ``spec``: the spec's path relative to the job directory, so that a run given the spec files
  one by one (`jobs/*.yaml`, which the shell expands) still knows a job whose spec was deleted,
  or now names another job, for an orphan (pipeline/write.orphans), and another spec file with the
  same job name is refused while that one still names the job (output/owner.py);
- ``env``: the environment rendered alone (`--env`), so that a check without it (or with
  another) says how the folder was made, not only that every file differs;
- ``source``: a sha256 over what is the user's alone (the spec's bytes, the render options and
  the ``--templates`` folder), not paddlegen's code, templates, schema or libraries; and
  ``version``, the paddlegen that wrote the folder. A job whose ``source`` is unchanged keeps
  the files an older paddlegen wrote when this one renders them differently (``keepable``):
  under Argo CD, changed objects are a sync, and a sync runs the job again; the user takes the
  new rendering by asking (`render --upgrade`).

A later render or check skips a spec only when its input digest equals the stamp's, the stamp
names that spec, every file on disk still has its recorded digest, with no generated file
added, and `custom/kustomization.yaml` is there exactly when the stamp says so: editing the
spec, a template, paddlegen itself or a rendered file all make the job render again. The stamp is a
cache, never output: ``check`` does not count a stale stamp as drift.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from paddlegen.errors import Diagnostic, InputError
from paddlegen.output.layout import COMPONENT, HEADER, STAMP, is_custom
from paddlegen.reading import read_bytes
from paddlegen.render.toolchain import templates_digest, toolchain_digest, tree_files
from paddlegen.spec.loader import read_spec_bytes
from paddlegen.spec.record import record

if TYPE_CHECKING:  # the writer only for a report of a write: --stdout never loads it
    from paddlegen.output.writer import WriteReport


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def input_digest(spec: bytes, options: Mapping[str, object], toolchain: str) -> str:
    """The digest a spec's stamp must carry for its output to be reused."""
    head = json.dumps({"options": dict(options), "toolchain": toolchain}, sort_keys=True)
    return _sha256(head.encode() + b"\0" + spec)


def source_digest(spec: bytes, options: Mapping[str, object], templates: str) -> str:
    """The digest of what a spec's output depends on that is the user's: the spec, the
    options, the user's own templates (``templates``: their digest)."""
    head = json.dumps({"options": dict(options), "templates": templates}, sort_keys=True)
    return _sha256(head.encode() + b"\0" + spec)


def stamp_text(
    digest: str,
    plan: Mapping[str, str],
    warnings: Iterable[Diagnostic],
    spec: str | None = None,
    custom: bool = False,
    env: str | None = None,
    source: str = "",
) -> str:
    from paddlegen import __version__

    body = {
        **({"spec": spec} if spec else {}),
        **({"custom": True} if custom else {}),
        **({"env": env} if env else {}),
        **({"source": source, "version": __version__} if source else {}),
        "input": digest,
        "files": {rel: _sha256(text.encode("utf-8")) for rel, text in sorted(plan.items())},
        "warnings": [{k: v for k, v in asdict(d).items() if k != "file"} for d in warnings],
    }
    return HEADER + json.dumps(body, indent=1, sort_keys=True, ensure_ascii=True) + "\n"


@record
class Inputs:
    """What a render depends on besides the spec; ``toolchain`` is read once per call."""

    workload: str | None
    templates: str | None
    argocd: bool
    toolchain: str
    ignore: tuple[str, ...] = ()  # the run's silenced rules, sorted
    env: str | None = None  # one environment rendered in the flat layout (--env)
    user_templates: str = ""  # the digest of the user's --templates folder, "" for none

    @classmethod
    def of(
        cls,
        workload: str | None,
        templates: str | None,
        argocd: bool,
        ignore: Iterable[str] = (),
        stamped: bool = True,
        env: str | None = None,
    ) -> Inputs:
        """Without ``stamped`` (output that is printed, never stamped) no toolchain digest is
        read, and ``digest`` is "": reading paddlegen's code and templates for it was a
        tenth of a cold `render --stdout`'s own work."""
        rules = _run_rules(tuple(ignore))
        toolchain = toolchain_digest(templates) if stamped else ""
        user = templates_digest(templates) if stamped else ""
        return cls(workload, templates, argocd, toolchain, rules, env, user)

    def digest(self, raw: bytes) -> str:
        if not self.toolchain:
            return ""  # "" writes no stamp (Rendered.digest)
        return input_digest(raw, self._options(), self.toolchain)

    def source(self, raw: bytes) -> str:
        """What of the input digest is the user's (see ``source_digest``); "" unstamped."""
        if not self.toolchain:
            return ""
        return source_digest(raw, self._options(), self.user_templates)

    def _options(self) -> dict[str, object]:
        # With the rules in the digest, a job skipped as unchanged was checked with the same
        # ones: an error another run silenced is not skipped past, nor a silenced warning shown.
        options: dict[str, object] = {
            "workload": self.workload,
            "argocd": self.argocd,
            "ignore": list(self.ignore),
        }
        if self.env:  # said only when given: every other stamp keeps its digest
            options["env"] = self.env
        return options


def _run_rules(ignore: tuple[str, ...]) -> tuple[str, ...]:
    """The run's silenced rules, sorted. The rules (paddlegen/rules and what it
    imports) only for a run that names any: an unchanged spec's re-render or check needs
    none of it (about 3 ms of a 100 ms run)."""
    if not ignore:
        return ()
    from paddlegen.rules.ignores import run_rules

    return tuple(sorted(run_rules(ignore)))


class _Output(Protocol):
    @property
    def file(self) -> str: ...
    @property
    def plan(self) -> Mapping[str, str]: ...
    @property
    def digest(self) -> str: ...
    @property
    def warnings(self) -> Sequence[Diagnostic]: ...
    @property
    def custom(self) -> bool: ...
    @property
    def env(self) -> str | None: ...
    @property
    def source(self) -> str: ...


def with_stamp(r: _Output, job_dir: Path) -> dict[str, str]:
    """A rendered job's files plus its stamp (none for output with no input digest)."""
    if not r.digest:
        return dict(r.plan)
    spec = spec_ref(r.file, job_dir)
    text = stamp_text(r.digest, r.plan, r.warnings, spec, r.custom, r.env, r.source)
    return {**r.plan, STAMP: text}


def spec_ref(spec_file: str, job_dir: Path) -> str | None:
    """``spec_file`` relative to ``job_dir``, as the stamp records it; None when it is no file
    (a spec the SDK made in memory)."""
    if not os.path.isfile(spec_file):
        return None
    try:
        return Path(os.path.relpath(resolved(spec_file), resolved(job_dir))).as_posix()
    except ValueError:  # another drive
        return None


def stamped_spec(job_dir: Path, body: Mapping[str, Any] | None = None) -> str | None:
    """The spec file a job directory's stamp (``body``, else read) names (absolute, its
    folders resolved as ``resolved`` does), if it names one."""
    body = read_stamp(job_dir) if body is None else body
    spec = body.get("spec") if body else None
    if not isinstance(spec, str):
        return None
    return os.path.normpath(os.path.join(resolved(job_dir), spec))


def _names(ref: object, spec_file: str, job_dir: Path) -> bool:
    """Whether a stamp's ``ref`` is ``spec_file`` (``spec_ref`` from ``job_dir``). Asked first
    without resolving: where no symlink leads to either, the two agree, and resolving (~50 us
    a path) for every unchanged job would cost a re-render of 1,000 jobs a tenth of a second."""
    try:
        lexical = os.path.relpath(os.path.abspath(spec_file), os.path.abspath(job_dir))
    except ValueError:  # another drive
        return False
    return ref == Path(lexical).as_posix() or ref == spec_ref(spec_file, job_dir)


def resolved(path: str | Path) -> str:
    """``path`` absolute, the folders leading to it resolved (symlinks followed), the last
    name kept: a job folder reached through a symlinked output folder, or from another
    working directory, names its spec by the same path, and a spec that is itself a symlink
    is that link (deleting it deletes the spec)."""
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(os.path.realpath(folder), name)


def stamped_env(job_dir: Path) -> str | None:
    """The environment a job directory was rendered for alone (`--env`), if it was."""
    body = read_stamp(job_dir)
    env = body.get("env") if body else None
    return env if isinstance(env, str) else None


def without_stamp(report: WriteReport) -> WriteReport:
    """A write's report in the user's terms: manifests and kustomizations, not the cache."""
    for files in (report.written, report.unchanged, report.removed):
        if STAMP in files:
            files.remove(STAMP)
    return report


@record
class Reused:
    """A job directory found to be exactly what its spec renders to."""

    files: list[str]  # the generated files (the stamp aside)
    kept: list[str]  # files paddlegen did not generate (left alone, as a write would)
    warnings: list[Diagnostic]

    def report(self) -> WriteReport:
        """What writing it would have reported: every file unchanged."""
        from paddlegen.output.writer import WriteReport

        return WriteReport(unchanged=list(self.files), kept=list(self.kept))


def read_stamp(job_dir: Path) -> dict[str, Any] | None:
    try:
        if job_dir.is_symlink() or (job_dir / STAMP).is_symlink():
            return None
        text = read_bytes(job_dir / STAMP).decode("utf-8")
        body = json.loads(text[len(HEADER) :]) if text.startswith(HEADER) else None
    except (OSError, ValueError):
        return None
    return body if isinstance(body, dict) and isinstance(body.get("input"), str) else None


def verify(job_dir: Path, body: dict[str, Any], spec_file: str) -> Reused | None:
    """``job_dir`` as its stamp recorded it (no file edited, missing or added), else None."""
    files = body.get("files")
    if not isinstance(files, dict):
        return None
    if "spec" in body and not _names(body["spec"], spec_file, job_dir):
        return None  # the spec moved: its stamp must name it where it is
    seen: list[str] = []
    kept: list[str] = []
    try:
        for rel, full in tree_files(job_dir):
            if rel == STAMP:
                continue
            if os.path.islink(full):
                return None  # the full render decides what a symlink means
            data = read_bytes(full)
            if rel in files:
                if _sha256(data) != files[rel]:
                    return None  # edited by hand: render again to restore it
                seen.append(rel)
            elif data.startswith(HEADER.encode()) and not is_custom(rel):
                return None  # a generated file the render would remove
            else:
                kept.append(rel)
        # A folder symlink inside the job is not walked into: it would show up as missing.
        if sorted(seen) != sorted(files):
            return None
        # custom/ came or went: the kustomization lists it, or no longer may. The walk found
        # custom/kustomization.yaml as has_custom() would: a regular file (a symlink returned
        # above) in a real folder (os.walk enters no folder symlink), in a job folder that is
        # no symlink (read_stamp), without a stat of its own per job.
        if bool(body.get("custom")) != (COMPONENT in kept):
            return None
        warnings = [Diagnostic(file=spec_file, **w) for w in body.get("warnings", [])]
    except (OSError, TypeError):
        return None
    return Reused(sorted(seen), kept, warnings)


def read_stamps(out: Path) -> dict[str, dict[str, Any]]:
    """Job name -> stamp, for every job directory in ``out`` that has one."""
    found = {}
    for job_dir in sorted(out.iterdir()) if out.is_dir() else []:
        body = None if job_dir.name.startswith(".") else read_stamp(job_dir)
        if body is not None:
            found[job_dir.name] = body
    return found


def reusable(
    paths: Sequence[Path],
    out: Path,
    stamps: Mapping[str, dict[str, Any]],
    inputs: Inputs,
    raws: dict[Path, bytes],
) -> dict[Path, tuple[str, str, Reused]]:
    """The specs whose job directory in ``out`` (``stamps``: what ``read_stamps`` read there)
    is exactly what they render to, as ``{spec: (job name, input digest, what is on disk)}``.
    The bytes of the specs it reads go into ``raws``, so the caller does not read them again."""
    by_digest: dict[str, list[tuple[Path, dict[str, Any]]]] = {}
    for name, body in stamps.items():
        by_digest.setdefault(body["input"], []).append((out / name, body))
    if not by_digest:
        return {}
    digests: dict[Path, str] = {}
    for path in paths:
        try:
            raws[path] = read_spec_bytes(path)
        except InputError:
            continue  # the full render reports it
        digests[path] = inputs.digest(raws[path])
    owners = Counter(digests.values())
    found: dict[Path, tuple[str, str, Reused]] = {}
    for path, digest in digests.items():
        candidates = by_digest.get(digest, [])
        if owners[digest] != 1 or len(candidates) != 1:
            continue  # two specs, or two directories, with one input: render to find out why
        job_dir, body = candidates[0]
        reused = verify(job_dir, body, str(path))
        if reused is not None:
            found[path] = (job_dir.name, digest, reused)
    return found


@record
class Keepable:
    """A job folder that an older paddlegen (``version``) rendered from the spec as it is now:
    kept as it is unless this paddlegen renders the very same files (``unchanged``)."""

    name: str
    version: str
    reused: Reused
    files: Mapping[str, str]  # the stamp's: relative path -> sha256

    def unchanged(self, plan: Mapping[str, str]) -> bool:
        """Whether ``plan`` (this paddlegen's rendering) is what the folder holds."""
        return {rel: _sha256(text.encode("utf-8")) for rel, text in plan.items()} == dict(
            self.files
        )


def keepable(
    paths: Sequence[Path],
    out: Path,
    stamps: Mapping[str, dict[str, Any]],
    inputs: Inputs,
    raws: dict[Path, bytes],
    upgrade: Collection[str] | None,
) -> dict[Path, Keepable]:
    """The specs whose job folder in ``out`` another paddlegen rendered from this very spec,
    with these options and templates of the user's, its files as it wrote them: the folders
    that stay as they are unless this paddlegen renders the same files. ``upgrade`` names the
    jobs that take this paddlegen's rendering anyway (None: every job)."""
    if upgrade is None:
        return {}
    by_source: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for name, body in stamps.items():
        if isinstance(body.get("source"), str) and name not in upgrade:
            by_source.setdefault(body["source"], []).append((name, body))
    found: dict[Path, Keepable] = {}
    for path in paths if by_source else ():
        try:
            raw = raws[path] if path in raws else read_spec_bytes(path)
        except InputError:
            continue  # the full render reports it
        candidates = by_source.get(inputs.source(raw), [])
        if len(candidates) != 1:
            continue  # none, or two folders of one spec: render to find out
        name, body = candidates[0]
        reused = verify(out / name, body, str(path))
        if reused is not None:
            version = body.get("version")
            found[path] = Keepable(name, str(version), reused, body["files"])
    return found
