"""Load -> check: spec files found, read, and validated against the schema and the rules."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from pathlib import Path

from paddlegen.errors import Diagnostic, InputError, SpecError
from paddlegen.output.layout import KUSTOMIZATIONS, is_generated, is_job_folder
from paddlegen.spec.loader import Document, manifest_diagnostic, parse_spec, read_spec_bytes


def validate_document(
    doc: Document, workload: str | None = None, ignore: Iterable[str] = ()
) -> list[Diagnostic]:
    """Every finding for a loaded spec: the schema's, and the checks' on the part of the spec
    they can read (all of a schema-valid spec; one whose only fault is unknown fields without
    them); a Kubernetes manifest's one finding instead.

    The checks' findings that the spec's ``ignore`` entries or the rules in ``ignore`` silence
    are left out (a rule that is unknown or cannot be silenced raises InvalidValueError); an
    entry that silences nothing is a warning.
    """
    from paddlegen.rules import semantic_diagnostics
    from paddlegen.rules.ignores import Silencer, run_rules
    from paddlegen.spec.overlays import patch_directives
    from paddlegen.spec.schema import readable_part, schema_diagnostics

    rules = run_rules(ignore)
    found = schema_diagnostics(doc) + patch_directives(doc)
    manifest = manifest_diagnostic(doc) if found else None
    if manifest is not None:
        return [manifest]  # the schema's findings would only list what a manifest is not
    # The rules also check a spec whose only fault is unknown fields (a typo beside the
    # problem they find): both come in the same round. Anything else wrong, they wait.
    readable = readable_part(doc) if found else doc
    silencer = Silencer(readable, rules) if readable is not None else None
    if silencer is not None and readable is not None:  # (both or neither: for mypy)
        found = sorted(
            found + silencer.refused() + silencer.keep(semantic_diagnostics(readable, workload))
        )
    # Each environment is a spec of its own: merged, it must pass everything the base does.
    # Its schema findings come in the same round as the base's, not after those are fixed.
    from paddlegen.spec.overlays import env_document, overlay_path

    source = readable if readable is not None else doc
    overlays = source.data.get("overlays") if isinstance(source.data, dict) else None
    for env, overlay in overlays.items() if isinstance(overlays, dict) else ():
        if not isinstance(overlay, dict) or not isinstance(source.data.get("spec", {}), dict):
            continue  # the schema finding on it says why: there is nothing to merge
        merged = env_document(source, env)
        more = schema_diagnostics(merged)
        if not more and silencer is not None:
            more = semantic_diagnostics(merged, workload)
        new = [
            dataclasses.replace(d, path=overlay_path(doc, env, d.path))
            for d in more
            if d not in found  # a base finding shows once, not once per environment
        ]
        found += silencer.keep(new) if silencer is not None else new
    # Every check ran on the base and each environment: an entry that silenced nothing is
    # stale (not known while a field the checks skipped might be what it silences).
    return sorted(found + (silencer.unused() if readable is doc and silencer is not None else []))


def load_valid(
    path: str | Path,
    workload: str | None = None,
    raw: bytes | None = None,
    ignore: Iterable[str] = (),
) -> tuple[Document, list[Diagnostic]]:
    """Load and validate a spec; raise SpecError carrying every error, return the warnings."""
    doc = parse_spec(read_spec_bytes(path) if raw is None else raw, str(path))
    return doc, require_valid(doc, workload, ignore)


def require_valid(
    doc: Document, workload: str | None = None, ignore: Iterable[str] = ()
) -> list[Diagnostic]:
    """A loaded spec's warnings; SpecError carrying every finding when it has errors."""
    found = validate_document(doc, workload, ignore)
    if any(d.is_error for d in found):
        raise SpecError(f"{doc.file}: invalid spec", found)
    return found


SPEC_SUFFIXES = (".yaml", ".yml")


def collect_specs(inputs: Iterable[str | Path]) -> tuple[list[Path], bool]:
    """Spec files named by ``inputs`` (files, folders searched recursively, or globs).

    Also says whether a folder or glob was given: only then does the caller know the whole
    set of jobs, and may prune the output of jobs whose spec is gone.
    """
    found: list[Path] = []
    whole_set = False
    for item in map(str, inputs):
        path = Path(item)
        if path.is_dir():
            whole_set = True
            found.extend(_folder_specs(path))
        elif not path.exists() and any(c in item for c in "*?["):
            whole_set = True
            matches = sorted(p for p in Path().glob(item) if p.is_file())
            if not matches:
                raise InputError(f"{item}: no spec matches")
            found.extend(matches)
        else:
            found.append(path)
    return list(dict.fromkeys(found)), whole_set


def _folder_specs(folder: Path) -> list[Path]:
    """The spec files below ``folder``, in path order. Rendered output below it (deploy/
    inside the repository) holds none: files paddlegen generated, job folders with all in
    them (a user's file, `custom/`), and kustomize's own folders (a Component left where a
    job's spec is gone) are passed by, as are hidden folders."""
    found: list[Path] = []
    for root, folders, files in os.walk(folder):
        here = Path(root)
        folders[:] = [
            name
            for name in folders
            if not name.startswith(".")
            and not is_job_folder(here / name)
            and not any((here / name / k).exists() for k in KUSTOMIZATIONS)
        ]
        found.extend(
            here / name
            for name in files
            if Path(name).suffix in SPEC_SUFFIXES
            and not name.startswith(".")
            and (here / name).is_file()
            and not is_generated(here / name)
        )
    return sorted(found)
