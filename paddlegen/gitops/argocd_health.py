"""Argo CD health checks for the objects of paddlegen's jobs: Lua scripts for argocd-cm, one
for each kind of object the workloads registry lists (paddlegen/workloads/objects.py)."""

from __future__ import annotations

from paddlegen.gitops.argocd_files import ARGOCD_NAMESPACE, HEALTH_FILE, Plan, header
from paddlegen.workloads import judged_objects
from paddlegen.yamlio import dump_yaml

HEALTH_KEY_PREFIX = "resource.customizations.health."


def health_scripts() -> dict[str, str]:
    """argocd-cm key -> Lua health check, for every kind of object Argo CD judges in a job
    paddlegen renders (``judged_objects``: the workloads' objects and their children, the data
    Job and Volcano's PodGroup), each made of its ``TrainingObject.health`` files. The
    batch/v1 Job's replaces Argo CD's own, which calls a Job Kueue resumed finished
    (workloads/shared/health/job.lua)."""
    return {
        HEALTH_KEY_PREFIX + obj.health_key: "".join(
            path.read_text(encoding="utf-8") for path in obj.health
        )
        for obj in judged_objects()
    }


def health_configmap() -> Plan:
    """``patches/argocd-cm-health.yaml``: the health checks as a patch of the argocd-cm
    ConfigMap.

    A patch, kept out of what `kubectl apply -f argocd/` reads: applied, it would become
    argocd-cm's last-applied configuration, and kubectl's three-way merge deletes what the last
    applied configuration has and the new one lacks (a client-side apply's patch:
    k8s.io/kubectl pkg/cmd/apply/patcher.go:126 and :367 at v0.37.2). Applied over
    an argocd-cm that a team applies with its own settings (url, SSO, RBAC), it would delete
    those; and the next apply of Argo CD's own argocd-cm (an upgrade) would delete the checks.
    A merge patch changes only its keys and leaves the last-applied configuration alone."""
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "argocd-cm",
            "namespace": ARGOCD_NAMESPACE,
            "labels": {
                "app.kubernetes.io/name": "argocd-cm",
                "app.kubernetes.io/part-of": "argocd",
            },
        },
        "data": health_scripts(),
    }
    return {
        # Names every kind of judged_objects() in prose (tests/unit/test_argocd_setup.py).
        HEALTH_FILE: header(f"""\
Argo CD health checks for PaddleJob (batch.paddlepaddle.org, kubeflow.org), Volcano's
PodGroup, Kubeflow Trainer's TrainJob and JobSet, and batch/v1 Job: that one replaces Argo CD's
own for every Job of the instance, with the same status except for a Job resumed after a
suspension (Progressing until it ends; Argo CD's own calls it finished). Merge it into
argocd-cm, never kubectl apply it (it would replace argocd-cm's last-applied configuration, and
a later apply of either would delete the other's keys):
  kubectl -n {ARGOCD_NAMESPACE} patch configmap argocd-cm --type merge --patch-file {HEALTH_FILE}
(from the folder above this one), or list it under `patches:` in the kustomization that installs
Argo CD.""")
        + dump_yaml(configmap)
    }
