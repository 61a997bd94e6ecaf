"""Argo CD sync annotations: ordering waves, the objects that run as hooks, and the run record.

What runs (the data Job and the training object) is an Argo CD ``Sync`` hook, so that a job
that finished never runs again unless its objects change (gitops-engine at Argo CD v3.5.1):

- Hooks are not compared with the live state (controller/state.go:981), so a finished job
  deleted by its TTL, by its operator or by hand is not Missing and no sync re-creates it
  (argoproj/argo-cd#8586); a sync of selected resources, which self-heal starts, skips hooks
  (controller/sync.go:311).
- Hooks are never skipped as in sync (gitops-engine pkg/sync/sync_context.go:763 keeps them
  under ApplyOutOfSyncOnly), and a hook whose health is Degraded fails (:359) and with it the
  sync (:636): a failed data Job stops the sync before training, whichever sync it is.
- ``BeforeHookCreation`` deletes the previous object before the next sync creates it: a
  changed job runs anew, the old pods gone (a PaddleJob never takes a change in place).

Hooks being outside the comparison, a change to one would go unnoticed: the run record, a
ConfigMap ``<job>-run`` holding the digest of every hook, is what a change makes OutOfSync,
and so what starts the sync that runs the job again. It is applied in wave 0, before the
hooks, so a run that fails still leaves the Application Synced: nothing, not even a later
commit of another job, runs it again until its own objects change or a person syncs it.
"""

from __future__ import annotations

import hashlib

from paddlegen.render.engine import COMMON_FOLDER, Manifest
from paddlegen.spec.model import RUN_RECORD_SUFFIX
from paddlegen.spec.scheduling import KUEUE_PRIORITY_LABEL, KUEUE_QUEUE_LABEL
from paddlegen.workloads import WORKLOADS
from paddlegen.workloads.objects import BATCH_JOB

WAVE = "argocd.argoproj.io/sync-wave"
OPTIONS = "argocd.argoproj.io/sync-options"
HOOK = "argocd.argoproj.io/hook"
HOOK_DELETE_POLICY = "argocd.argoproj.io/hook-delete-policy"
RUN_RECORD_TEMPLATE = "_argocd/run-record"  # a Manifest's origin; no template file behind it

# Storage, RBAC, Services and the run record first, then a PodGroup (only a --templates one:
# paddlegen renders none), then the data Job, then training.
_WAVES = {
    "ServiceAccount": 0,
    "Role": 0,
    "RoleBinding": 0,
    "PersistentVolume": 0,
    "PersistentVolumeClaim": 0,
    "ConfigMap": 0,
    "Service": 0,  # a collective-job's pods' names: there before the pods that look them up
    "TrainingRuntime": 0,  # a trainjob's own (with restarts): there before its TrainJob
    "PodGroup": 1,
}
_DATA_JOB_WAVE = 2
_TRAINING_WAVE = 3
_KUEUE_LABELS = (KUEUE_QUEUE_LABEL, KUEUE_PRIORITY_LABEL)
_CORE_GROUPS = ("v1", "batch/v1", "rbac.authorization.k8s.io/v1")


def _wave(manifest: Manifest) -> int:
    if manifest.kind in _WAVES:
        return _WAVES[manifest.kind]
    if manifest.kind == "Job" and manifest.template.startswith(COMMON_FOLDER + "/"):
        return _DATA_JOB_WAVE
    return _TRAINING_WAVE


def _options(manifest: Manifest) -> list[str]:
    options = []
    if manifest.kind in ("PersistentVolume", "PersistentVolumeClaim"):
        # Data must survive deleting the Application, and a claim keeps its volume: a PV
        # deleted under a kept, bound claim would wait on its pv-protection finalizer for
        # good, and the Application's deletion (resources finalizer) with it.
        options.append("Delete=false")
    if manifest.obj["apiVersion"] not in _CORE_GROUPS:
        # The CRD may be installed by the same sync; a dry run would fail before it exists.
        options.append("SkipDryRunOnMissingResource=true")
    return options


def _runs(manifest: Manifest, workload: str) -> bool:
    """Whether ``manifest`` runs pods to completion: a batch Job (the data Job among them) or
    a training object of the workload's, whichever of its ``objects`` the spec made."""
    kinds = [BATCH_JOB, *WORKLOADS[workload].objects]
    return (manifest.obj["apiVersion"], manifest.kind) in {k.api_kind for k in kinds}


def _annotated(manifest: Manifest, annotations: dict[str, str]) -> Manifest:
    # Copied along the path written to; the rest is shared with the original, unchanged.
    metadata = dict(manifest.obj["metadata"])
    metadata["annotations"] = {**(metadata.get("annotations") or {}), **annotations}
    return Manifest({**manifest.obj, "metadata": metadata}, manifest.template)


def run_record(job_name: str, runs: list[Manifest]) -> Manifest:
    """The ConfigMap ``<job>-run``: the digest of the objects that run, in their order, and
    their kinds and names; beside them, with the training object's namespace and labels but
    Kueue's, which only the training object carries."""
    digest = hashlib.sha256("".join(m.text() for m in runs).encode()).hexdigest()
    model = runs[-1].obj["metadata"]
    metadata = {
        "name": job_name + RUN_RECORD_SUFFIX,
        **({"namespace": model["namespace"]} if "namespace" in model else {}),
        "labels": {k: v for k, v in model["labels"].items() if k not in _KUEUE_LABELS},
        "annotations": {WAVE: str(_WAVES["ConfigMap"])},
    }
    data = {
        "digest": f"sha256:{digest}",
        "objects": "".join(f"{m.kind}/{m.name}\n" for m in runs),
    }
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}
    return Manifest(obj, RUN_RECORD_TEMPLATE)


def annotate(job_name: str, workload: str, manifests: list[Manifest]) -> list[Manifest]:
    """Copies of ``manifests`` carrying the sync-wave, sync-options and hook annotations,
    and the run record after them (Argo CD orders by wave; kubectl by the files' order)."""
    out: list[Manifest] = []
    runs: list[Manifest] = []
    for manifest in manifests:
        annotations = {WAVE: str(_wave(manifest))}
        options = _options(manifest)
        if options:
            annotations[OPTIONS] = ",".join(options)
        if _runs(manifest, workload):
            annotations[HOOK] = "Sync"
            annotations[HOOK_DELETE_POLICY] = "BeforeHookCreation"
            runs.append(_annotated(manifest, annotations))
            out.append(runs[-1])
        else:
            out.append(_annotated(manifest, annotations))
    return [*out, run_record(job_name, runs)] if runs else out
