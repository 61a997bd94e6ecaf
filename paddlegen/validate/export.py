"""`paddlegen schemas export`: every schema on disk, for running kubeconform by hand."""

from __future__ import annotations

import shutil
from pathlib import Path

from paddlegen.resources import spec_schema_path
from paddlegen.validate import k8s_schemas as k8sschemas
from paddlegen.validate.kubeconform import CRD_FILE_TEMPLATE, crd_schemas_dir


def export_all(directory: str | Path, kubernetes_version: str | None = None) -> list[str]:
    """Write kubernetes/, crds/ and the spec schema; return what a user should read."""
    out = Path(directory)
    version = k8sschemas.resolve_version(
        kubernetes_version or k8sschemas.DEFAULT_KUBERNETES_VERSION
    )
    k8s = k8sschemas.export(out / "kubernetes", version)
    crds = out / "crds"
    shutil.copytree(crd_schemas_dir(), crds, dirs_exist_ok=True)
    shutil.copy2(spec_schema_path(), out / spec_schema_path().name)
    return [
        f"wrote Kubernetes {version} schemas to {k8s}, CRD schemas to {crds}",
        "use them with:",
        f"  kubeconform -strict -kubernetes-version {version}"
        f" -schema-location '{crds}/{CRD_FILE_TEMPLATE}'"
        f" -schema-location '{k8s}/{k8sschemas.KUBECONFORM_FILE_TEMPLATE}' DIR",
    ]
