"""`paddlegen schemas export`: every schema on disk, for running kubeconform by hand, or the
spec schema alone, for editors."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

from paddlegen.errors import OutputError
from paddlegen.resources import spec_schema_path
from paddlegen.validate import k8s_schemas as k8sschemas
from paddlegen.validate.kubeconform import crd_schemas_dir, schema_and_ignore_args


def export_all(
    directory: str | Path, kubernetes_version: str | None = None, spec_only: bool = False
) -> list[str]:
    """Write the spec schema and, unless ``spec_only``, kubernetes/ and crds/; return what a
    user should read."""
    from paddlegen.output.claim import SCHEMAS, claim

    out = Path(directory)
    claim(out, SCHEMAS, whole=True)
    try:
        return _export(out, kubernetes_version, spec_only)
    except OSError as exc:  # a file where a folder goes, a read-only folder, a full disk
        where = exc.filename or out
        raise OutputError(f"{where}: cannot write: {exc.strerror or exc}") from None


def _export(out: Path, kubernetes_version: str | None, spec_only: bool) -> list[str]:
    version = k8sschemas.resolve_version(
        kubernetes_version or k8sschemas.DEFAULT_KUBERNETES_VERSION
    )
    out.mkdir(parents=True, exist_ok=True)
    spec = out / spec_schema_path().name
    shutil.copy2(spec_schema_path(), spec)
    if spec_only:
        return [f"wrote the spec schema to {spec}, which a spec's modeline points editors at"]
    k8s = k8sschemas.export(out / "kubernetes", version)
    crds = _compact_copy(crd_schemas_dir(), out / "crds")
    # Rendered trees hold kustomizations and overlay patches, which are not objects: the
    # command leaves them out, as paddlegen's own kubeconform run does.
    argv = ["kubeconform", "-strict", "-kubernetes-version", version]
    argv += schema_and_ignore_args(crds, k8s)
    return [
        f"wrote Kubernetes {version} schemas to {k8s}, CRD schemas to {crds}",
        "use them with (DIR: a rendered tree, e.g. deploy/):",
        "  " + shlex.join([*argv, "DIR"]),
    ]


def _compact_copy(source: Path, target: Path) -> Path:
    """``source``'s tree at ``target``, each JSON schema on one line: the CRD schemas are kept
    indented for review, and their indentation is four fifths of their bytes (4.8 MB, 1.1 MB
    without), which a repository that commits the export would carry for nothing."""
    for path in sorted(source.rglob("*")):
        into = target / path.relative_to(source)
        if path.is_dir():
            into.mkdir(parents=True, exist_ok=True)
        elif path.suffix == ".json":
            into.parent.mkdir(parents=True, exist_ok=True)
            schema = json.loads(path.read_bytes())
            into.write_text(json.dumps(schema) + "\n", encoding="utf-8", newline="\n")
        else:
            into.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, into)
    return target
