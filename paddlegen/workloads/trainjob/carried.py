"""What a TrainJob carries of a spec: the launcher contract's env its pods get, with the source
of each, and the spec fields it has no place for. Trainer's sources cited are
github.com/kubeflow/trainer at v2.3.0."""

from __future__ import annotations

# The env the runtime gives every pod, and PADDLE_NNODES, which the TrainJob gives (Trainer's
# plain ML policy sets no node count: plugins/plainml/plainml.go:47-73).
CONTRACT_ENV = {
    "POD_IP": "the pod's IP",
    "PADDLE_RANK": "the pod's completion index",
    "PADDLE_NNODES": "worker.replicas",
    "PADDLE_JOB_ID": "the JobSet's name (metadata.name)",
    "PADDLE_MASTER": "rank 0's address and the runtime's master port",
}
# What the TrainJob cannot carry: runtimePatches (v2.3.0) patch a pod only with the fields of
# PodSpecPatch and a container only with env, volumeMounts and securityContext
# (pkg/apis/trainer/v1alpha1/trainjob_types.go:385-490), init containers only when the
# runtime has them, and never the env of container `node` (plugins/jobset/jobset.go:190-206).
# field -> (severity, why)
UNSUPPORTED: dict[str, tuple[str, str]] = {
    key: ("error", f"a TrainJob (Trainer v2.3.0) cannot set the pods' {key}: {why}")
    for key, why in {
        "priorityClassName": "its runtime patches have no such field",
        "runtimeClassName": "its runtime patches have no such field",
        "topologySpreadConstraints": "its runtime patches have no such field",
        "initContainers": "a runtime patch may only change the runtime's own init containers",
        "sidecars": "a runtime patch may only change the runtime's own init containers",
        "envFrom": "a runtime patch of a container carries env, volumeMounts and "
        "securityContext only",
        "workingDir": "a runtime patch of a container carries env, volumeMounts and "
        "securityContext only",
    }.items()
}
UNSUPPORTED["imagePullPolicy"] = (
    "warning",
    "a TrainJob (Trainer v2.3.0) cannot set the pods' imagePullPolicy: the trainer has only an "
    "image, so Kubernetes' default applies (IfNotPresent for a tagged image)",
)
