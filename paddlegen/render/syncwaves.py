"""Argo CD sync annotations: ordering waves and the sync options each kind needs."""

from __future__ import annotations

from paddlegen.render.engine import COMMON_FOLDER, Manifest

WAVE = "argocd.argoproj.io/sync-wave"
OPTIONS = "argocd.argoproj.io/sync-options"

# Storage and RBAC first, then a PodGroup (only a --templates one: paddlegen renders none),
# then the data Job, then training.
_WAVES = {
    "ServiceAccount": 0,
    "Role": 0,
    "RoleBinding": 0,
    "PersistentVolume": 0,
    "PersistentVolumeClaim": 0,
    "PodGroup": 1,
}
_DATA_JOB_WAVE = 2
_TRAINING_WAVE = 3
_CORE_GROUPS = ("v1", "batch/v1", "rbac.authorization.k8s.io/v1")


def _wave(manifest: Manifest) -> int:
    if manifest.kind in _WAVES:
        return _WAVES[manifest.kind]
    if manifest.kind == "Job" and manifest.template.startswith(COMMON_FOLDER + "/"):
        return _DATA_JOB_WAVE
    return _TRAINING_WAVE


def _options(manifest: Manifest, recreate_jobs: bool) -> list[str]:
    options = []
    if manifest.kind == "Job" and recreate_jobs:
        # Asked for (run.recreateOnChange): a changed Job is deleted and created again. Not by
        # default: Replace=true alone fails on any existing Job (a replace must repeat the
        # selector the API server generated), so it would refuse even the changes a plain
        # apply takes; and Force=true stops a running training.
        options += ["Force=true", "Replace=true"]
    if manifest.kind in ("PersistentVolume", "PersistentVolumeClaim"):
        # Data must survive deleting the Application, and a claim keeps its volume: a PV
        # deleted under a kept, bound claim would wait on its pv-protection finalizer for
        # good, and the Application's deletion (resources finalizer) with it.
        options.append("Delete=false")
    if manifest.obj["apiVersion"] not in _CORE_GROUPS:
        # The CRD may be installed by the same sync; a dry run would fail before it exists.
        options.append("SkipDryRunOnMissingResource=true")
    return options


def annotate(manifests: list[Manifest], recreate_jobs: bool = False) -> list[Manifest]:
    """Copies of ``manifests`` carrying the sync-wave and sync-options annotations;
    ``recreate_jobs``: Argo CD deletes and recreates a changed batch Job."""
    out = []
    for manifest in manifests:
        # Copied along the path written to; the rest is shared with the original, unchanged.
        metadata = dict(manifest.obj["metadata"])
        annotations = metadata["annotations"] = dict(metadata.get("annotations") or {})
        obj = {**manifest.obj, "metadata": metadata}
        annotations[WAVE] = str(_wave(manifest))
        options = _options(manifest, recreate_jobs)
        if options:
            annotations[OPTIONS] = ",".join(options)
        out.append(Manifest(obj, manifest.template))
    return out
