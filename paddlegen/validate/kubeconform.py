"""The kubeconform runner: one process for every manifest, offline schemas, findings parsed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from paddlegen.errors import Diagnostic, InputError, Rule, ToolError
from paddlegen.output.interrupts import scratch_folder
from paddlegen.reading import read_text
from paddlegen.resources import data_path
from paddlegen.validate import k8s_schemas as k8sschemas
from paddlegen.validate.locations import NO_EXTRA, ExtraSchemas

ENV_VAR = "PADDLEGEN_KUBECONFORM"
DEFAULT_TIMEOUT = 60.0
RULE = Rule(
    "kubeconform",
    (
        "a rendered manifest is valid by the Kubernetes and CRD schemas, checked by kubeconform "
        "(strict, offline)"
    ),
    explanation=(
        "Rendered manifests are checked against the Kubernetes and CRD schemas by kubeconform "
        "(strict, offline), so that an invalid object fails before it reaches a cluster."
    ),
    severity="error",
)
# kubeconform's -schema-location template for the CRD schemas under schemas/crds.
CRD_FILE_TEMPLATE = "{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json"

# Both paths word these two the same, naming the field in the path, so their findings compare.
UNKNOWN_FIELD = "unknown field"
MISSING_FIELD = "required field is missing"

_CAUSE = re.compile(r"( +)- at '([^']*)': ")
_QUOTED = re.compile(r"'([^']*)'")
_MISSING_SCHEMA = "could not find schema"
# What a run that meets a kind without a schema can do about it (both backends say it).
MISSING_HINT = (
    "name a schema with --schema-location TEMPLATE (kubeconform's template variables), "
    "or pass --ignore-missing-schemas to leave such objects unchecked"
)


def crd_schemas_dir() -> Path:
    return data_path("schemas", "crds")


def find_kubeconform(explicit: str | os.PathLike[str] | None = None) -> str | None:
    """The binary to run: ``explicit``, else $PADDLEGEN_KUBECONFORM, else PATH; None if absent.

    A path the user named but that is not there is an error, not a reason to fall back.
    """
    named = os.fspath(explicit) if explicit else os.environ.get(ENV_VAR)
    if named:
        found = shutil.which(named)
        if found is None:
            raise ToolError(f"kubeconform not found or not executable: {named}")
        return found
    return shutil.which("kubeconform")


# kustomize plumbing in a rendered tree: not objects. tree_files() leaves out the same files.
TREE_IGNORE = (r"(^|/)kustomization\.yaml$", r"(^|/)(patch|delete)-[^/]*$")
_TREE_IGNORE = [re.compile(pattern) for pattern in TREE_IGNORE]


def _is_tree_manifest(path: str) -> bool:
    """What kubeconform reads in a folder (.yaml, .yml, .json), less the TREE_IGNORE files."""
    return path.lower().endswith((".yaml", ".yml", ".json")) and not any(
        p.search(path) for p in _TREE_IGNORE
    )


def _walk(tree: Path) -> Iterator[tuple[str, bool]]:
    """``(path, is a symlink)`` of every file below ``tree``; folder links are not entered."""
    for folder, dirs, files in os.walk(tree):
        dirs.sort()
        for name in sorted(files) + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            full = os.path.join(folder, name)
            yield full, os.path.islink(full)


def tree_files(trees: Iterable[Path]) -> list[tuple[str, str]]:
    """``(path, text)`` of the manifests in rendered trees, as kubeconform picks them.

    Symlinks are skipped, never followed: a link could point anywhere (a secret, /dev/zero).
    """
    return [
        (path, _text(path))
        for tree in trees
        for path, link in _walk(tree)
        if not link and _is_tree_manifest(path)
    ]


def _text(path: str) -> str:
    """A manifest's text; InputError naming it when it is no regular file (a FIFO would
    never end the read) or cannot be read."""
    try:
        return read_text(path)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None


def kubeconform_argv(
    binary: str,
    k8s_dir: Path,
    kubernetes_version: str,
    *manifests: Path,
    extra: ExtraSchemas = NO_EXTRA,
) -> list[str]:
    """The command line: strict, JSON report, paddlegen's local schema locations then the
    user's (``extra``), manifest folders.

    The CRD location comes first: kubeconform names Kubernetes schemas by the first label of the
    group only, so Volcano's scheduling.volcano.sh PodGroup would otherwise meet Kubernetes'
    own scheduling.k8s.io PodGroup (podgroup-scheduling-v1beta1.json) and be judged by it.
    """
    return [
        binary,
        "-strict",
        "-summary",
        "-output",
        "json",
        "-kubernetes-version",
        kubernetes_version,
        *schema_and_ignore_args(crd_schemas_dir(), k8s_dir),
        *extra.kubeconform_args(),
        *map(str, manifests),
    ]


def schema_and_ignore_args(crds_dir: Path, k8s_dir: Path) -> list[str]:
    """The offline schema locations (CRDs first, see kubeconform_argv) and the kustomize
    plumbing of a rendered tree to leave out: what any kubeconform run over it needs."""
    return [
        "-schema-location",
        str(crds_dir / CRD_FILE_TEMPLATE),
        "-schema-location",
        str(k8s_dir / k8sschemas.KUBECONFORM_FILE_TEMPLATE),
        *(arg for pattern in TREE_IGNORE for arg in ("-ignore-filename-pattern", pattern)),
    ]


def _field_path(tokens: Iterable[object]) -> str:
    """``["spec", "containers", 0, "image"]`` -> ``spec.containers[0].image``."""
    text = ""
    for token in map(str, tokens):
        text += f"[{token}]" if token.isdigit() else (f".{token}" if text else token)
    return text


def diagnostic(
    file: str, obj: str, tokens: Sequence[object], message: str, rule: Rule = RULE
) -> Diagnostic:
    """A manifest finding; ``rule`` names what found it (kubeconform, or the in-process twin)."""
    where = f"{obj} {_field_path(tokens)}".strip()
    return Diagnostic(file=file, path=where, message=message, rule=rule.id)


def _pointer_tokens(pointer: str) -> list[str]:
    parts = pointer.split("/")[1:]
    return [part.replace("~1", "/").replace("~0", "~") for part in parts]


def _kubeconform_causes(msg: str) -> Iterator[tuple[list[str], str]]:
    """(field tokens, message) for each finding in kubeconform's one-line error tree.

    The tree is flattened into ``- at '/ptr': text`` entries, two more spaces per level. "validation
    failed" only wraps deeper entries; a oneOf/anyOf failure is kept whole, as jsonschema does.
    """
    parts = _CAUSE.split(msg)
    entries = [
        (len(parts[i]) // 2, parts[i + 1], parts[i + 2].strip()) for i in range(1, len(parts), 3)
    ]
    skip_below = None
    for level, pointer, text in entries:
        if skip_below is not None and level > skip_below:
            continue
        skip_below = None
        tokens = _pointer_tokens(pointer)
        if text == "validation failed":
            continue
        if text.startswith(("oneOf failed", "anyOf failed")):
            skip_below = level
        if text.startswith("additional properties"):
            for name in _QUOTED.findall(text):
                yield [*tokens, name], UNKNOWN_FIELD
        elif text.startswith("missing propert"):
            for name in _QUOTED.findall(text):
                yield [*tokens, name], MISSING_FIELD
        else:
            yield tokens, text


def _has_objects(text: str) -> bool:
    """Whether a YAML stream has anything besides blank lines, comments and separators."""
    lines = (line.strip() for line in text.splitlines())
    return any(line and not line.startswith(("#", "---", "...")) for line in lines)


def object_name(kind: object, name: object) -> str:
    return f"{kind or ''}/{name or ''}".strip("/")


def parse_report(stdout: str, names: dict[str, str], expect_objects: bool) -> list[Diagnostic]:
    """Diagnostics from kubeconform's ``-output json -summary`` report.

    ``names`` maps the file names given to kubeconform back to the manifest names.
    """
    try:
        report = json.loads(stdout)
        resources = report["resources"]
        total = sum(report["summary"].values())
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        shown = stdout[:200]
        raise ToolError(f"kubeconform printed an unreadable report ({exc}): {shown!r}") from None
    if total == 0 and expect_objects:
        raise ToolError("kubeconform reported no resources at all: the output cannot be trusted")
    found: set[Diagnostic] = set()
    missing: set[str] = set()
    for res in resources:
        file = names.get(res.get("filename", ""), res.get("filename", ""))
        obj = object_name(res.get("kind"), res.get("name"))
        msg = str(res.get("msg", ""))
        if res.get("status") == "statusError" and msg.startswith(_MISSING_SCHEMA):
            missing.add(f"{res.get('version', '')} {res.get('kind', '')}")
        elif res.get("status") == "statusInvalid":
            # A message shape this parser does not know is reported whole, never dropped.
            causes = list(_kubeconform_causes(msg)) or [([], msg)]
            found.update(diagnostic(file, obj, t, m) for t, m in causes)
        elif res.get("status") == "statusError":
            found.add(diagnostic(file, obj, [], msg))
    if missing:
        raise ToolError(
            f"kubeconform found no schema for: {', '.join(sorted(missing))}; {MISSING_HINT}"
        )
    return sorted(found)


def run_kubeconform(
    files: Sequence[tuple[str, str]],
    binary: str,
    kubernetes_version: str = k8sschemas.DEFAULT_KUBERNETES_VERSION,
    timeout: float = DEFAULT_TIMEOUT,
    trees: Sequence[Path] = (),
    extra: ExtraSchemas = NO_EXTRA,
) -> list[Diagnostic]:
    """One kubeconform process for all manifests; a crash, timeout or odd output is a ToolError.

    ``files`` are in memory and get copied to a temporary folder; ``trees`` are rendered
    folders on disk that kubeconform reads where they are (its findings name their files), but
    a tree holding a symlink is copied too, without its links, so that none is followed (and
    one holding a FIFO or device is refused).
    """
    version = k8sschemas.resolve_version(kubernetes_version)
    # kubeconform would read a FIFO for ever: a tree with one is copied, and tree_files
    # refuses it by name
    in_place = [
        tree for tree in trees if all(not link and os.path.isfile(p) for p, link in _walk(tree))
    ]
    files = [*files, *tree_files(tree for tree in trees if tree not in in_place)]
    expect_objects = any(_has_objects(text) for _, text in files) or any(
        _is_tree_manifest(p) for tree in in_place for p, _ in _walk(tree)
    )
    if not files and not expect_objects:  # kubeconform would read stdin instead
        return []
    with scratch_folder("paddlegen-kubeconform-") as tmp:
        k8s_dir = k8sschemas.export(tmp / "k8s", version)
        # Numbered copies in one folder: names may be relative or repeated, and a folder keeps the
        # command line short however many manifests there are; the report maps back.
        inputs = tmp / "manifests"
        inputs.mkdir()
        names = {}
        for index, (name, text) in enumerate(files):
            path = inputs / f"{index:05d}.yaml"
            path.write_text(text, encoding="utf-8")
            names[str(path)] = name
        folders = [inputs] if files else []
        argv = kubeconform_argv(binary, k8s_dir, version, *folders, *in_place, extra=extra)
        try:
            proc = subprocess.run(
                argv, capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            raise ToolError(f"kubeconform did not finish within {timeout:g} s") from None
        except OSError as exc:
            raise ToolError(f"kubeconform could not be started: {exc}") from None
    if proc.returncode not in (0, 1):
        tail = (proc.stderr or proc.stdout).strip()[-500:]
        raise ToolError(f"kubeconform failed with exit code {proc.returncode}: {tail}")
    diagnostics = parse_report(proc.stdout, names, expect_objects)
    if proc.returncode == 1 and not diagnostics:
        raise ToolError("kubeconform reported failure but no finding: the output cannot be trusted")
    return diagnostics
