"""Argo CD health checks for the objects paddlegen renders: Lua scripts for argocd-cm."""

from __future__ import annotations

from paddlegen.gitops.argocd_files import ARGOCD_NAMESPACE, HEALTH_FILE, Plan, header
from paddlegen.resources import templates_dir
from paddlegen.yamlio import dump_yaml

# argocd-cm key suffix (<group>_<Kind>) -> the files of templates/_argocd/health/ its Lua
# script is made of, in order. The condition-driven checks share a body (conditions.lua)
# after their own settings, and TrainJob and JobSet their counts of child Jobs
# (replicated-jobs.lua); Argo CD v3.5.1 ships no check for either (resource_customizations/).
HEALTH_CHECKS = {
    "batch_Job": ("job.lua", "conditions.lua"),
    "batch.paddlepaddle.org_PaddleJob": ("paddlejob.lua",),
    "kubeflow.org_PaddleJob": ("kubeflow-paddlejob.lua", "conditions.lua"),
    "scheduling.volcano.sh_PodGroup": ("podgroup.lua",),
    "trainer.kubeflow.org_TrainJob": ("trainjob.lua", "replicated-jobs.lua", "conditions.lua"),
    "jobset.x-k8s.io_JobSet": ("jobset.lua", "replicated-jobs.lua", "conditions.lua"),
}
HEALTH_KEY_PREFIX = "resource.customizations.health."


def health_scripts() -> dict[str, str]:
    """argocd-cm key -> Lua health check, for PaddleJob (both groups), Volcano's PodGroup,
    Trainer's TrainJob and its JobSet, and batch/v1 Job (in place of Argo CD's own, which
    calls a Job Kueue resumed finished: job.lua)."""
    folder = templates_dir() / "_argocd" / "health"
    return {
        HEALTH_KEY_PREFIX + key: "".join((folder / f).read_text(encoding="utf-8") for f in files)
        for key, files in HEALTH_CHECKS.items()
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
        HEALTH_FILE: header(f"""\
Argo CD health checks for PaddleJob (batch.paddlepaddle.org, kubeflow.org), Volcano's
PodGroup, Kubeflow Trainer's TrainJob and JobSet, and batch/v1 Job (Argo CD's own calls a Job
Kueue resumed finished while it runs). Merge it into argocd-cm, never kubectl apply
it (it would replace argocd-cm's last-applied configuration, and a later apply of either would
delete the other's keys):
  kubectl -n {ARGOCD_NAMESPACE} patch configmap argocd-cm --type merge --patch-file {HEALTH_FILE}
(from the folder above this one), or list it under `patches:` in the kustomization that installs
Argo CD.""")
        + dump_yaml(configmap)
    }
