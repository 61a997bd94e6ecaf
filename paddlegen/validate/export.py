"""`paddlegen schemas export`: every schema on disk, for running kubeconform by hand."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

from paddlegen.resources import spec_schema_path
from paddlegen.validate import k8s_schemas as k8sschemas
from paddlegen.validate.kubeconform import crd_schemas_dir, schema_and_ignore_args


def export_all(directory: str | Path, kubernetes_version: str | None = None) -> list[str]:
    """Write kubernetes/, crds/ and the spec schema; return what a user should read."""
    from paddlegen.output.claim import SCHEMAS, claim

    out = Path(directory)
    claim(out, SCHEMAS, whole=True)
    version = k8sschemas.resolve_version(
        kubernetes_version or k8sschemas.DEFAULT_KUBERNETES_VERSION
    )
    k8s = k8sschemas.export(out / "kubernetes", version)
    crds = out / "crds"
    shutil.copytree(crd_schemas_dir(), crds, dirs_exist_ok=True)
    shutil.copy2(spec_schema_path(), out / spec_schema_path().name)
    # Rendered trees hold kustomizations and overlay patches, which are not objects: the
    # command leaves them out, as paddlegen's own kubeconform run does.
    argv = ["kubeconform", "-strict", "-kubernetes-version", version]
    argv += schema_and_ignore_args(crds, k8s)
    return [
        f"wrote Kubernetes {version} schemas to {k8s}, CRD schemas to {crds}",
        "use them with (DIR: a rendered tree, e.g. deploy/):",
        "  " + shlex.join([*argv, "DIR"]),
    ]
