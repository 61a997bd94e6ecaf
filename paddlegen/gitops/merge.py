"""What merging does to each Argo CD Application: the output and specs a commit holds against
what `render` would write now.

An Application deploys what its kustomization builds: a flat job's folder, or a job's base/,
one overlays/<env>/ and the job's custom/. Any change to those files is a sync, and every sync
runs the job's hooks (render/syncwaves.py): a change is a run.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paddlegen.errors import Diagnostic, InputError, Rule, SpecError, UnsafeMergeError
from paddlegen.gitops.committed import Committed
from paddlegen.output.layout import HEADER, KUSTOMIZATION, STAMP, generated_jobs, is_custom
from paddlegen.output.removals import REMOVAL
from paddlegen.render.toolchain import tree_files
from paddlegen.spec.loader import FieldPath, format_path, parse_spec, read_spec_bytes

if TYPE_CHECKING:
    from paddlegen.pipeline.build import Rendered

CREATE, RERUN, DELETE, UNCHANGED = ACTIONS = ("create", "rerun", "delete", "unchanged")

UNASKED_RERUN = Rule(
    "rerun",
    "a merge runs no job again whose spec did not change (`plan --allow-rerun` allows it)",
    explanation=(
        "Merging changes the objects of an Application whose spec did not change (its custom/ "
        "Component changed, or paddlegen renders it differently): under Argo CD the sync runs "
        "the job again, a finished one too. `paddlegen plan --allow-rerun` allows it."
    ),
    severity="error",
)

Files = dict[str, bytes]  # a job folder's files that Applications deploy: relative path -> bytes
_GENERATED = HEADER.encode()
_MORE = 5  # names listed in a reason before "and N more"


@dataclass(frozen=True)
class Change:
    """What merging does to one Application: the job's, or the job's in ``environment``
    (None: a job without overlays)."""

    job: str
    environment: str | None
    action: str  # create, rerun, delete or unchanged
    reason: str = ""
    # A rerun its own spec asks for (what the user changed is what runs); False for every other
    # rerun and for a delete, which plan refuses unless allowed.
    asked: bool = True

    @property
    def application(self) -> str:
        """The Application's name as `paddlegen argocd` makes it (gitops/argocd.py)."""
        return f"{self.job}-{self.environment}" if self.environment else self.job

    def as_dict(self) -> dict[str, str | None]:
        """The JSON target: every field but ``asked``, by its name."""
        return {k: v for k, v in dataclasses.asdict(self).items() if k != "asked"}


@dataclass(frozen=True)
class MergePlan:
    """Every Application of the output folder at ``base`` or now, what merging does to it,
    sorted by job, then environment."""

    base: str  # the revision compared with, as given
    output: str
    changes: list[Change] = field(default_factory=list)

    @property
    def changed(self) -> list[Change]:
        """The Applications that merging creates, runs again or deletes."""
        return [c for c in self.changes if c.action != UNCHANGED]

    def counts(self) -> str:
        """``1 create, 2 rerun, 0 delete, 7 unchanged``."""
        found = Counter(c.action for c in self.changes)
        return ", ".join(f"{found[action]} {action}" for action in ACTIONS)

    def refuse_unasked(self, allow_removal: bool = False, allow_rerun: bool = False) -> None:
        """UnsafeMergeError (exit 1) naming every delete, and every rerun its own spec does not
        ask for, unless allowed."""
        found = [
            Diagnostic(
                str(Path(self.output) / c.job),
                message=c.reason
                if c.action == DELETE
                else f"Argo CD runs job {c.job} again (Application {c.application}), and its "
                f"spec did not ask for it: {c.reason}",
                rule=REMOVAL.id if c.action == DELETE else UNASKED_RERUN.id,
                hint=f"--allow-{'removal' if c.action == DELETE else 'rerun'} allows it",
            )
            for c in self.changes
            if (c.action == DELETE and not allow_removal)
            or (c.action == RERUN and not c.asked and not allow_rerun)
        ]
        if found:
            raise UnsafeMergeError(f"{len(found)} unasked change(s) against {self.base}", found)


def merge_plan(
    committed: Committed,
    rendered: Sequence[Rendered],
    output: str | Path,
    *,
    prune: bool = True,
    env: str | None = None,
) -> MergePlan:
    """What merging the work tree into ``committed`` (the output folder's repository at the
    base revision) does to each Application, ``rendered`` being the plan of a render into
    ``output`` (``api.plan``; ``prune`` and ``env`` as the render's). Reads git and the work
    tree; writes nothing."""
    out = Path(output)
    tree = committed.folder_paths()
    # A job reused as it is on disk, where git sees no file that differs from the commit, is
    # the same at both ends: its files are read from neither (1,000 unchanged jobs, none).
    touched = {_job(path) for path in committed.changed_paths()}
    same = {r.name: r.reused.files for r in rendered if r.reused and r.name not in touched}
    then, stamps = _committed_jobs(committed.folder_files(p for p in tree if _job(p) not in same))
    now = _current_jobs([r for r in rendered if r.name not in same], out, rendered, prune)
    pairs: list[tuple[str, str | None, Files | None, Files | None, dict[str | None, Files]]] = []
    for job in sorted(then.keys() | now.keys() | same.keys()):
        if job in same:  # unchanged: nothing to compare
            pairs += [(job, name, {}, {}, {}) for name in environments(same[job], env)]
            continue
        before, after = applications(then.get(job, {}), env), applications(now.get(job, {}), env)
        for name in sorted(before.keys() | after.keys(), key=lambda e: e or ""):
            pairs.append((job, name, before.get(name), after.get(name), after))
    reruns = {job for job, _, b, a, _ in pairs if b is not None and a is not None and b != a}
    why = _Reasons(committed, out, rendered, stamps, reruns)
    return MergePlan(committed.ref, str(output), [why.change(*pair) for pair in pairs])


def _job(path: str) -> str:
    return path.partition("/")[0]


def _committed_jobs(tree: Files) -> tuple[dict[str, Files], dict[str, dict[str, Any]]]:
    """The generated job folders of the output at the commit, and their stamps."""
    jobs: dict[str, Files] = {}
    stamps: dict[str, dict[str, Any]] = {}
    for path, data in tree.items():
        job, _, rel = path.partition("/")
        if not rel or job.startswith("."):
            continue  # a file beside the jobs, a staging folder or the lock
        if rel == STAMP:
            stamps[job] = _stamp(data)
        jobs.setdefault(job, {})[rel] = data
    return {job: _deployed(files) for job, files in jobs.items()}, stamps


def _stamp(data: bytes) -> dict[str, Any]:
    text = data.decode("utf-8", errors="replace")
    try:
        body = json.loads(text[len(HEADER) :]) if text.startswith(HEADER) else None
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _deployed(files: Mapping[str, bytes]) -> Files:
    """What an Application builds of a job folder: paddlegen's files and custom/ (no other
    file of the user's is deployed, and the stamp is a cache)."""
    return {
        rel: data
        for rel, data in files.items()
        if is_custom(rel) or (rel != STAMP and data.startswith(_GENERATED))
    }


def _current_jobs(
    jobs: Sequence[Rendered], out: Path, rendered: Sequence[Rendered], prune: bool
) -> dict[str, Files]:
    """What a render (``rendered``) leaves in the folders of ``jobs``: its plan, or for a
    job reused or kept as an older paddlegen wrote it the folder as it is; custom/ as it is;
    and a job no spec renders as it is, unless the render removes it (``prune``)."""
    from paddlegen.pipeline.write import orphans

    found: dict[str, Files] = {}
    for r in jobs:
        if r.reused:
            found[r.name] = _folder(out / r.name)
        else:
            found[r.name] = {rel: text.encode("utf-8") for rel, text in r.plan.items()}
            found[r.name].update(_folder(out / r.name, only=f"custom{os.sep}"))
    names = {r.name for r in rendered}
    left = [name for name in generated_jobs(out) if name not in names]
    pruned = set(orphans(rendered, out, prune)) if left else set()
    found.update((name, _folder(out / name)) for name in left if name not in pruned)
    return {name: _deployed(files) for name, files in found.items()}


def _folder(job_dir: Path, only: str = "") -> Files:
    """The regular files below ``job_dir`` (below its subfolder ``only``); no symlink is
    followed (none is deployed: see output/layout.has_custom)."""
    root = job_dir / only if only else job_dir
    if job_dir.is_symlink() or root.is_symlink() or not root.is_dir():
        return {}
    found: Files = {}
    for rel, full in tree_files(root):
        if not os.path.islink(full):
            with open(full, "rb") as fh:
                found[(Path(only) / rel).as_posix() if only else rel] = fh.read()
    return found


def environments(paths: Collection[str], env: str | None = None) -> Sequence[str | None]:
    """The environments of a job folder's Applications, as `paddlegen argocd` makes them
    from its files (``paths``): a flat job one Application (environment None; ``env`` when
    the tree is one environment's, `render --env`), a job with overlays one each."""
    if KUSTOMIZATION in paths:
        return [env]
    if f"base/{KUSTOMIZATION}" not in paths:
        return []
    return sorted(
        {
            parts[1]
            for parts in (rel.split("/") for rel in paths)
            if len(parts) == 3 and parts[0] == "overlays" and parts[2] == KUSTOMIZATION
        }
    )


def applications(files: Files, env: str | None = None) -> dict[str | None, Files]:
    """A job folder's Applications (``environments``), each with the files its
    kustomization builds: the flat job's folder, or base/, its overlay and custom/."""
    if KUSTOMIZATION in files:
        return {env: files}
    return {
        name: {
            rel: data
            for rel, data in files.items()
            if rel.startswith(("base/", f"overlays/{name}/")) or is_custom(rel)
        }
        for name in environments(files)
    }


class _Reasons:
    """Why each Application changes: the specs of the jobs that run again, at the commit
    (read from git in one batch) and now, and the stamps' paddlegen versions."""

    def __init__(
        self,
        committed: Committed,
        out: Path,
        rendered: Sequence[Rendered],
        stamps: Mapping[str, Mapping[str, Any]],
        reruns: Iterable[str],
    ) -> None:
        self.committed = committed
        self.out = out
        self.stamps = stamps
        self.files = {r.name: r.file for r in rendered}  # job -> its spec file now
        self.fresh = {r.name for r in rendered if not r.reused}  # rendered by this paddlegen
        # a spec file (in the repository) -> the job it renders now
        self.renders = {committed.repo_path(r.file): r.name for r in rendered}
        paths = {job: self._committed_spec(job) for job in sorted(reruns)}
        raw = committed.read(sorted({p for p in paths.values() if p}))
        self.then = {job: _data(raw.get(p) if p else None, p or "") for job, p in paths.items()}
        self.now = {job: self._current_spec(job) for job in paths}

    def change(
        self,
        job: str,
        env: str | None,
        then: Files | None,
        now: Files | None,
        job_now: Mapping[str | None, Files],
    ) -> Change:
        """What merging does to the job's Application of ``env``: ``then`` its files at the
        commit, ``now`` after a render (None: it has none), ``job_now`` the job's
        Applications after a render."""
        if then is None:
            return Change(job, env, CREATE)
        if now is None:
            return Change(
                job,
                env,
                DELETE,
                self._deleted(job, env, job_now),
                asked=False,
            )
        if then == now:
            return Change(job, env, UNCHANGED)
        why, asked = _reasons(
            env,
            then,
            now,
            self.then[job],
            self.now[job],
            self._versions(job),
            self.committed.ref,
        )
        return Change(job, env, RERUN, why, asked=asked)

    def _committed_spec(self, job: str) -> str | None:
        """The spec file (a path in the repository) the job's stamp at the commit names."""
        spec = self.stamps.get(job, {}).get("spec")
        return _joined(self.committed.folder, job, spec) if isinstance(spec, str) else None

    def _deleted(self, job: str, env: str | None, now: Mapping[str | None, Files]) -> str:
        app = Change(job, env, DELETE).application
        if env is None and now:
            why = "its spec has overlays now, an Application each"
        elif None in now:
            why = "its spec has no overlays any more"
        elif now:
            why = f"its spec has no overlay {env} any more"
        else:
            spec = self._committed_spec(job)
            renamed = self.renders.get(spec) if spec else None
            why = (
                f"its spec renders job {renamed} now"
                if renamed
                else "its spec is gone"
                if spec and not os.path.exists(os.path.join(self.committed.top, spec))
                else "no spec given renders it"
            )
        return f"{why}: Argo CD deletes Application {app}, and a running job with it"

    def _current_spec(self, job: str) -> Any:
        from paddlegen.output.stamp import stamped_spec

        file = self.files.get(job) or stamped_spec(self.out / job)
        try:
            return _data(read_spec_bytes(file), file) if file else None
        except InputError:
            return None

    def _versions(self, job: str) -> tuple[str, str]:
        """The paddlegen versions that wrote the job's folder at the commit and now."""
        from paddlegen import __version__
        from paddlegen.output.stamp import read_stamp

        then = str(self.stamps.get(job, {}).get("version", ""))
        if job in self.fresh:
            return then, __version__
        return then, str((read_stamp(self.out / job) or {}).get("version", ""))


def _joined(folder: str, job: str, spec: str) -> str | None:
    """A stamp's ``spec`` (relative to its job folder) as a path in the repository."""
    path = os.path.normpath(os.path.join(folder, job, spec)).replace(os.sep, "/")
    return None if path.startswith("../") or path == ".." else path


def _data(raw: bytes | None, name: str) -> Any:
    """A spec's data; None when it cannot be read or parsed."""
    if raw is None:
        return None
    try:
        return parse_spec(raw, name).data
    except SpecError:
        return None


def _reasons(
    env: str | None,
    then: Files,
    now: Files,
    spec_then: Any,
    spec_now: Any,
    versions: tuple[str, str],
    base: str,
) -> tuple[str, bool]:
    """Why an Application's files changed, and whether its own spec asks for it."""
    differ = sorted(rel for rel in then.keys() | now.keys() if then.get(rel) != now.get(rel))
    custom = [rel for rel in differ if is_custom(rel)]
    rendered = [rel for rel in differ if not is_custom(rel)]
    fields = (
        spec_changes(spec_then, spec_now, env)
        if spec_then is not None and spec_now is not None
        else None
    )
    reasons = []
    if rendered and fields:
        reasons.append(f"spec changed: {_listed(fields)}")
    if custom:
        reasons.append(f"custom/ changed: {_listed(custom)}")
    component = f"custom/{KUSTOMIZATION}"
    if rendered and not fields and (component in then) == (component in now):
        if fields is None:
            reasons.append(f"its files changed, and its spec at {base} or now cannot be read")
        else:
            old, new = versions
            reasons.append(
                "paddlegen's rendering changed"
                + (f" ({old} to {new})" if old and new and old != new else "")
            )
    return "; ".join(reasons), bool(rendered and fields)


def _listed(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_MORE])
    return shown + (f" and {len(names) - _MORE} more" if len(names) > _MORE else "")


def spec_changes(then: Any, now: Any, env: str | None = None) -> list[str]:
    """The fields that differ between two specs' data, as paths (``spec.worker.replicas``):
    what every environment shares, and with ``env`` that environment's overlay
    (``overlays.prod.spec.image``); another environment's overlay is not this one's spec."""

    def shared(doc: Any) -> Any:
        return {k: v for k, v in doc.items() if k != "overlays"} if isinstance(doc, dict) else doc

    def overlay(doc: Any) -> Any:
        overlays = doc.get("overlays") if isinstance(doc, dict) else None
        return overlays.get(env, _ABSENT) if isinstance(overlays, dict) else _ABSENT

    found = _differences(shared(then), shared(now), ())
    if env is not None:
        found += _differences(overlay(then), overlay(now), ("overlays", env))
    return [format_path(path).removeprefix("$.") for path in found]


_ABSENT = object()  # a key one side lacks (None is a value)


def _differences(then: Any, now: Any, path: FieldPath) -> list[FieldPath]:
    # Walked whole, not compared at once: Python takes 1 == True == 1.0, YAML does not.
    if isinstance(then, dict) and isinstance(now, dict):
        keys = [*now, *(k for k in then if k not in now)]  # as the spec has them now
        return [
            p
            for key in keys
            for p in _differences(then.get(key, _ABSENT), now.get(key, _ABSENT), (*path, key))
        ]
    if isinstance(then, list) and isinstance(now, list) and len(then) == len(now):
        return [
            p
            for i, (a, b) in enumerate(zip(then, now, strict=True))
            for p in _differences(a, b, (*path, i))
        ]
    return [] if type(then) is type(now) and then == now else [path]
