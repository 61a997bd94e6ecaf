"""`paddlegen import`: what the cluster sets by itself in an object read back from
it (`kubectl get -o yaml`): server-set identity and status, and the API's defaults. Leaving
them out of the spec runs the same, so they are cosmetic notes, not lossy ones."""

from __future__ import annotations

import re
from typing import Any

# metadata the API server assigns to every object
SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "selfLink",
)
# Annotations tools write about an object, not for it: kubectl apply's copy of the input, the
# Job controller's tracking mark (Kubernetes 1.26 to 1.28), the volume controllers' binding and
# provisioning marks on PVs and PVCs.
TOOL_ANNOTATIONS = (
    "kubectl.kubernetes.io/last-applied-configuration",
    "batch.kubernetes.io/job-tracking",
    "pv.kubernetes.io/bind-completed",
    "pv.kubernetes.io/bound-by-controller",
    "pv.kubernetes.io/provisioned-by",
    "volume.beta.kubernetes.io/storage-provisioner",
    "volume.kubernetes.io/storage-provisioner",
    "volume.kubernetes.io/selected-node",
)
# Finalizers the API server adds to keep a volume or claim in use from being deleted.
_PROTECTION = {"kubernetes.io/pv-protection", "kubernetes.io/pvc-protection"}
# The labels the API server puts on a batch Job, its pod template and its selector: the uid
# changes with every Job (a copy of an old one would not match the new Job's selector, and the
# API server would refuse it), the job name is the Job's own.
_UID_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid")
_NAME_LABELS = ("job-name", "batch.kubernetes.io/job-name")
# Every label the Job controller sets on a pod template: never a spec's podLabels.
JOB_LABELS = (*_UID_LABELS, *_NAME_LABELS)
DEFAULT_GRACE = 30  # a pod's terminationGracePeriodSeconds when none is given
_LABEL_PLACES = ("metadata.labels.", "spec.selector.matchLabels.")
# Fields the API server fills in with a default when they are not given, as paths in the pod
# template ([] for any list index) or in a batch Job's spec, and that default.
_POD_DEFAULTS: dict[str, Any] = {
    "spec.dnsPolicy": "ClusterFirst",
    "spec.schedulerName": "default-scheduler",
    "spec.terminationGracePeriodSeconds": DEFAULT_GRACE,
    "spec.enableServiceLinks": True,
    "spec.hostNetwork": False,
    **{
        f"spec.{containers}[].{field}": value
        for containers in ("containers", "initContainers")
        for field, value in (
            ("terminationMessagePath", "/dev/termination-log"),
            ("terminationMessagePolicy", "File"),
            ("ports[].protocol", "TCP"),
        )
    },
    # a native sidecar's probes (Kubernetes v1.37.2 pkg/apis/core/v1/defaults.go:275-288,
    # 358-365)
    **{
        f"spec.initContainers[].{probe}.{field}": value
        for probe in ("startupProbe", "livenessProbe")
        for field, value in (
            ("timeoutSeconds", 1),
            ("periodSeconds", 10),
            ("successThreshold", 1),
            ("failureThreshold", 3),
            ("httpGet.scheme", "HTTP"),
        )
    },
}
_JOB_DEFAULTS: dict[str, Any] = {
    # The training Job's own are read into the spec; the data Job's are left to these.
    "spec.parallelism": 1,
    "spec.completions": 1,
    "spec.backoffLimit": 6,
    "spec.suspend": False,
    "spec.manualSelector": False,
    "spec.completionMode": "NonIndexed",
    "spec.podReplacementPolicy": "TerminatingOrFailed",
}
# A Service's (collective-job's headless one): the defaults, and what the API server fills in
# from the cluster's network (its IP families, clusterIP as a list).
_SERVICE_DEFAULTS: dict[str, Any] = {
    "spec.type": "ClusterIP",
    "spec.sessionAffinity": "None",
    "spec.internalTrafficPolicy": "Cluster",
    "spec.ipFamilyPolicy": "SingleStack",
}
_SERVICE_SERVER_SET = ("spec.clusterIPs", "spec.ipFamilies")
# A TrainJob's (Trainer v2.3.0 pkg/apis/trainer/v1alpha1/trainjob_types.go:127-152): the CRD's
# defaults, and the time Trainer's webhook stamps on each runtime patch (:303-307).
_TRAINJOB_DEFAULTS: dict[str, Any] = {
    "spec.suspend": False,
    "spec.managedBy": "trainer.kubeflow.org/trainjob-controller",
}
_TRAINJOB_SERVER_SET = ("spec.runtimePatches[].time",)
# A JobSet's (sigs.k8s.io/jobset v0.12.0): the CRD's defaults (config/components/crd/bases/
# jobset.x-k8s.io_jobsets.yaml: restartStrategy, groupName) and its webhook's
# (pkg/webhooks/jobset_webhook.go:112-139: successPolicy, startupPolicy), as full paths ([]
# for any list index); a TrainingRuntime's JobSet template gets the CRD's (Trainer v2.3.0
# manifests/base/crds/trainer.kubeflow.org_trainingruntimes.yaml).
_JOBSET_DEFAULTS: dict[str, Any] = {
    "failurePolicy.restartStrategy": "Recreate",
    "replicatedJobs[].groupName": "default",
}
_OBJECT_DEFAULTS: dict[str, dict[str, Any]] = {
    "JobSet": {
        **{f"spec.{path}": value for path, value in _JOBSET_DEFAULTS.items()},
        "spec.successPolicy.operator": "All",
        "spec.startupPolicy.startupPolicyOrder": "AnyOrder",
        "spec.suspend": False,
    },
    "TrainingRuntime": {
        f"spec.template.spec.{path}": value for path, value in _JOBSET_DEFAULTS.items()
    },
}
_INDEX = re.compile(r"\[\d+\]")


def is_server_label(key: str, value: Any, job: str) -> bool:
    """Whether a batch Job's label ``key: value`` is one the API server sets (Job ``job``)."""
    return key in _UID_LABELS or (key in _NAME_LABELS and value == job)


def set_by_cluster(path: str, value: Any, kind: str, name: str) -> str | None:
    """Why the field ``path = value`` left in the object ``kind`` ``name`` makes no difference
    ("server-set", "default" or "unused"), or None when it does (the field is lost)."""
    defaults = _OBJECT_DEFAULTS.get(kind, {})
    full = _INDEX.sub("[]", path)
    if full in defaults and defaults[full] == value:
        return "default"
    # Relative to the pod template when inside one (a template sits at spec.template,
    # spec.<role>.template or spec.paddleReplicaSpecs.<Type>.template).
    local = _INDEX.sub("[]", path).rsplit("template.", 1)[-1]
    in_template = local != _INDEX.sub("[]", path)
    if in_template and local == "metadata.name":
        return "unused"  # the controller names each pod itself
    if _server_set(local, value, kind, name, in_template):
        return "server-set"
    defaults = (
        _POD_DEFAULTS
        if in_template
        else _JOB_DEFAULTS
        if kind == "Job"
        else _SERVICE_DEFAULTS
        if kind == "Service"
        else _TRAINJOB_DEFAULTS
        if kind == "TrainJob"
        else {}
    )
    if local in defaults and defaults[local] == value:
        return "default"
    return None


def _server_set(local: str, value: Any, kind: str, name: str, in_template: bool) -> bool:
    if in_template and local == "metadata.creationTimestamp":
        return True  # null in every template read back
    if local.startswith("metadata.annotations.") and not in_template:
        return local.removeprefix("metadata.annotations.") in TOOL_ANNOTATIONS
    if local == "metadata.finalizers":
        return set(value) <= _PROTECTION
    if kind == "Service" and local in _SERVICE_SERVER_SET:
        return True
    if kind == "TrainJob" and local in _TRAINJOB_SERVER_SET:
        return True
    place = next((p for p in _LABEL_PLACES if local.startswith(p)), None)
    return kind == "Job" and place is not None and is_server_label(local[len(place) :], value, name)
