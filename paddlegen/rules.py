"""What each rule id checks: the help text of the reports that describe their rules (SARIF).

The semantic rules' texts (``CHECKS``, Markdown) are the README's table in "Silencing a rule",
word for word (tests/unit/test_rules.py holds the two together); ``OTHERS`` name what the
findings of every other rule id paddlegen reports are about. A rule id missing from both is
still reported, without a description.
"""

from __future__ import annotations

CHECKS: dict[str, str] = {
    "job-replicas": "workload `job` runs one pod: no `ps` or `heter`, `worker.replicas` 1",
    "image-required": "every role, and the data Job, has an image",
    "name-length": "the names derived from `metadata.name` fit in 63 characters",
    "volume-source": "a volume has exactly one source",
    "volume-capacity": (
        "`nfs`, `efs`, `cephfs` and `dynamic` volumes have a capacity, more than zero and at "
        "most 2^63-1 bytes"
    ),
    "volume-unique": (
        "volume names and mount paths are unique, and clear of `spec.shm`'s; an init container "
        "or sidecar mounts each path once"
    ),
    "volume-reference": (
        "`distributed.volume` and `dataPrep.volume` name a volume, and not a `configMap` or "
        "`secret` one (read-only files, no place for data); an init container's or sidecar's "
        "`volumeMounts` name volumes of `spec.volumes`"
    ),
    "cephfs-in-tree": (
        "no `cephfs` volume asks for the in-tree plugin (`inTree: true`), which does nothing "
        "from Kubernetes 1.31"
    ),
    "cephfs-secret-namespace": (
        "a CSI `cephfs` volume's Secret has a namespace: `secretNamespace` or `metadata.namespace`"
    ),
    "env-unique": "env names are unique within a list",
    "env-value": "an env entry has `value` or `valueFrom`, not both",
    "secret-literal": 'no literal credential in env (see "Safe by default")',
    "image-tag": "images are pinned to a tag (not `latest`) or a digest",
    "limits-missing": "every role has a memory limit",
    "min-available": "`scheduling.minAvailable` is at most the job's pods",
    "paddlejob-min-available": (
        "a PaddleFlow gang smaller than the job (`minAvailable` below its pods) can deadlock: "
        "started pods wait for an endpoints ConfigMap the operator makes only once every pod "
        "has an IP"
    ),
    "priority-class": (
        "under Volcano, a `job` or `distributed-job` pod's `priorityClassName` is the gang's "
        "(`scheduling.priorityClassName`): Volcano's group for the Job takes the pods'"
    ),
    "paddlejob-heter": (
        "PaddleJob's `heter` role needs `ps` (error); with it, the operator (v0.3.5) starts "
        "heter pods with `TRAINING_ROLE=HETER`, which Paddle's role maker refuses, so they fail"
        " unless your entry point maps it (warning)"
    ),
    "paddlejob-gloo": "`withGloo` needs `ps` (it works with every `intranet`)",
    "paddlejob-elastic": (
        "elastic mode (on whenever `paddlejob.elastic` is there, `0` too) has no PS mode, and "
        "forces `restartPolicy: OnFailure`"
    ),
    "paddlejob-clean-pod-policy": (
        "a PaddleFlow `cleanPodPolicy` of `Never` or `OnFailure` keeps a completed job's pods, "
        "and the operator (v0.3.5) creates any that goes later: it trains again, with stale "
        "endpoints"
    ),
    "operator-env": (
        "no env that the `paddlejob` or `kubeflow-paddlejob` operator sets itself "
        "(`PADDLE_PORT`, `PADDLE_TRAINER_ID`, `POD_IP`, `PADDLE_MASTER`, ...): it would "
        "override the operator's value or be replaced"
    ),
    "kubeflow-heter": "the Kubeflow PaddleJob has no heter role",
    "workload-setting": "a settings section or run field the workload ignores",
    "distributed-roles": "`distributed-job` has no `ps` or `heter` role",
    "distributed-required": "`distributed-job` has `distributed.volume` and `trainConfigDir`",
    "distributed-ports": "`distributed-job`'s ports stay below 65536",
    "distributed-command": "one start command, not `distributed.command` and another",
    "distributed-env": "no env that `distributed-job` sets itself",
    "hostport-nodes": "hostPorts take a node per pod: something bounds the wait for them",
    "collective-roles": (
        "`collective-job` and `trainjob` have no `ps` or `heter` role: every pod is a trainer"
    ),
    "collective-command": (
        "a `collective-job` or `trainjob` runs something: `args` (the training script, which "
        "the default "
        "command, Paddle's launcher, runs) or a `command`"
    ),
    "collective-restart": (
        "a `collective-job`'s or `trainjob`'s pods run with `restartPolicy: Never`: its pod "
        "failure policy "
        "takes no other, and a rank restarted in place cannot rejoin the others"
    ),
    "collective-env": (
        "no env that `collective-job` or `trainjob` sets itself (`POD_IP`, `PADDLE_RANK`, "
        "`PADDLE_NNODES`, "
        "`PADDLE_JOB_ID`, `PADDLE_MASTER`), nor `PADDLE_TRAINER_ENDPOINTS` or "
        "`DISTRIBUTED_TRAINER_ENDPOINTS`, which make the launcher replace the master and node "
        "count"
    ),
    "collective-args": (
        "the launcher's own flags that the env overrides (`--master`, `--nnodes`, `--rank`, "
        "`--job_id`, `--host`, before the training script)"
    ),
    "workload-unsupported": (
        "no setting the workload's object has no place for: a `trainjob` (Trainer v2.3.0) "
        "carries no `priorityClassName`, `runtimeClassName`, `topologySpreadConstraints`, "
        "`initContainers`, `sidecars`, `envFrom`, `workingDir` (errors), `imagePullPolicy` "
        "(warning), nor, under Volcano, the gang's `priorityClassName` (error) or a "
        "`minAvailable` below its pods (warning)"
    ),
    "dataprep-layout": "the data Job writes where the trainers read",
    "volume-access-mode": (
        "`ReadWriteOncePod` stands alone; no `ReadWriteOnce` volume shared by several pods"
    ),
    "deprecated": "a field that no longer does anything (`run.recreateOnChange`)",
    "control-character": (
        "no string or key that reaches a manifest holds a character YAML cannot (C0 controls "
        "but tab and line breaks, DEL, C1 controls but NEL, U+FFFE, U+FFFF): a server-side "
        "apply sends YAML, and the API server refuses it"
    ),
    "quantity-fractional-bytes": (
        "memory, ephemeral-storage and hugepages, `shm`, `capacity` and `sizeLimit` are whole "
        "bytes (the API server warns, Kubernetes rounds up), at most 9223372036854775"
    ),
    "resource-name": (
        "a container asks only for `cpu`, `memory`, `ephemeral-storage`, `hugepages-<size>` or "
        "a resource with a domain (not a quota's `requests.` name)"
    ),
    "resource-quantity": (
        "extended resources (`nvidia.com/gpu`, any domain but `kubernetes.io`) are whole "
        "numbers; hugepages whole pages"
    ),
    "gpus-override": (
        "`gpus` does not silently replace a different `nvidia.com/gpu` limit in `resources`"
    ),
    "gpu-shm": (
        "pods with GPUs have a `/dev/shm` beyond the container runtime's 64 MiB, which NCCL and"
        " data loader workers outgrow: `shm`, or a volume of the spec's own at `/dev/shm`; "
        "reported at each `gpus` that reaches a pod (a role's own, or the spec's)"
    ),
    "implausible-size": (
        "no role has more than 1000 replicas and no pod more than 16 GPUs: the schema allows "
        "10000 and 64, but the largest GPU nodes have 16 (DGX-2, a2-megagpu-16g; 8 is common), "
        "so such a pod stays Pending, and 1000 pods are past what one job plausibly runs on one"
        " cluster (Kubernetes is tested up to 5000 nodes; 1000 trainers of 8 GPUs are 8000 "
        "GPUs). A job that really is that big silences it for the field (`{rule: "
        "implausible-size, path: $.spec.worker.replicas}`); `init` refuses such a size"
    ),
    "request-limit": (
        "every request is at most its limit; extended resources and hugepages have a limit, and"
        " a request equal to it (`gpus` counts as the `nvidia.com/gpu` limit)"
    ),
    "env-downward-api": (
        "env `fieldRef` reads a pod field env may read (apiVersion v1); `resourceFieldRef` a "
        "resource env may read, with a divisor the API server accepts (`1m` or `1` for cpu; "
        "`1`, `1k`...`1E`, `1Ki`...`1Ei` for bytes, as the server spells them: `1024` is not "
        "`1Ki`)"
    ),
    "nfs-recycle": (
        "no `reclaimPolicy: Recycle` (deprecated upstream; the recycler handles only NFS) on a "
        "volume paddlegen makes a PersistentVolume for"
    ),
    "pv-binding": (
        "in a spec without a namespace, a volume paddlegen makes a PersistentVolume for (`nfs`,"
        " `efs`, `cephfs`) names no `storageClassName`: the PV has no `claimRef` (it needs the "
        "namespace), so other claims of the class named could bind it first (without "
        '`storageClassName` the PV gets a class of its own; see "Workloads")'
    ),
    "toleration": (
        "tolerations as the API server takes them: a key is a taint key, an empty key goes with"
        " `operator: Exists`, `Exists` has no value and `Equal` a label-like one, "
        "`tolerationSeconds` only with `effect: NoExecute`"
    ),
    "env-key-ref": (
        "`secretKeyRef` and `configMapKeyRef` name a key a Secret or ConfigMap can hold "
        "(letters, digits, `-`, `_`, `.`; not starting with `..`)"
    ),
    "host-path": "a `hostPath` has no `..` in it",
    "image-whitespace": (
        "an image has no leading or trailing whitespace (the API server refuses the pods)"
    ),
    "topology-spread": (
        "`topologySpreadConstraints` as the API server takes them: one constraint per "
        "`topologyKey` and `whenUnsatisfiable`, `minDomains` only with `DoNotSchedule`, "
        "`matchLabelKeys` only with a `labelSelector` and none of its keys, `In` and `NotIn` "
        "with values, `Exists` and `DoesNotExist` without; for `paddlejob`, none of "
        "`minDomains`, `matchLabelKeys`, `nodeAffinityPolicy`, `nodeTaintsPolicy`, which "
        "PaddleFlow's CRD (v0.3.5) lacks, so the API server would drop them"
    ),
    "container-name": (
        "the containers of a pod have names of their own: an init container or sidecar is not "
        "named `paddle` (the training container), nor, for `paddlejob`, `coord-paddle` (the "
        "operator's init container), nor like another of the pod's (a role's own list counts "
        "with the spec's lists it keeps)"
    ),
    "container-port": (
        "a sidecar's port number (with its protocol) and name are no other container's of the "
        "pod (the training container's `master` port for `kubeflow-paddlejob`, `jobport<i>` for"
        " `distributed-job`, another sidecar's): they share one network; a probe's named port "
        "is one of its own sidecar's"
    ),
    "paddlejob-sidecar-pruned": (
        "no `sidecars` for `paddlejob`: PaddleFlow's CRD (v0.3.5) has no `restartPolicy` for "
        "init containers, so the sidecar would be an init container that never exits (use "
        "`kubeflow-paddlejob`, `job` or `distributed-job`)"
    ),
    "kueue-workload": (
        "`scheduling.kueue` only for a workload Kueue can hold suspended: not `paddlejob` "
        "(PaddleFlow's PaddleJob has no `suspend`; use `collective-job`, `trainjob` or "
        "`kubeflow-paddlejob`); for `kubeflow-paddlejob` a note that Kueue's "
        "`kubeflow.org/paddlejob` integration is off by default from v0.19"
    ),
    "kueue-labels": (
        "Kueue's labels (`kueue.x-k8s.io/queue-name`, `kueue.x-k8s.io/priority-class`) are set "
        "through `scheduling.kueue`, not in `metadata.labels` (every object, the data Job too) "
        "or `podLabels` (Kueue's pod integration would queue each pod)"
    ),
    "kueue-data-prep": (
        "a job with `dataPrep` is not queued in a LocalQueue named `default`: Kueue's default "
        "queue takes every Job of its namespace without a queue label, the data Job too, which "
        "Argo CD then reads as finished while it runs"
    ),
    "kueue-requests": (
        "under Kueue, every role gives its cpu and memory: Kueue charges the queue's quota what "
        "the pods request, paddlegen's default requests (cpu 500m, memory 1Gi) otherwise"
    ),
    "kueue-runtime": (
        "a queued TrainJob runs on paddlegen's queued runtime, or on one whose pod failure policy "
        "also ignores the exit codes of ranks that Kueue's preemption stops"
    ),
}

OTHERS: dict[str, str] = {
    "yaml": (
        "a spec file is one YAML document, a mapping of plain values: valid syntax, no duplicate "
        "keys, no tags, within the size, alias and nesting limits"
    ),
    "encoding": "a spec file is UTF-8 text, without NUL bytes",
    "schema": (
        "a spec matches its JSON Schema (`paddlegen schema`): known fields, types, enums, "
        "quantities and names"
    ),
    "job-name": "no two specs name one job (`metadata.name`): both would render into one folder",
    "ignore-unused": "every `ignore` entry silences a finding (a stale one is noticed)",
    "ignore-required": "no `ignore` entry names a required rule",
    "kubeconform": (
        "a rendered manifest is valid by the Kubernetes and CRD schemas, checked by kubeconform "
        "(strict, offline)"
    ),
    "in-process": (
        "a rendered manifest is valid by the Kubernetes and CRD schemas, checked in process "
        "(kubeconform was not installed)"
    ),
    "overlay": "an environment's patch applies to its base object",
    "server": "the API server accepts the objects (a server-side apply dry-run, `--server`)",
    "kueue-local-queue": (
        "the Kueue LocalQueue a job's queue-name label names exists in its namespace (`--server`)"
    ),
    "stale": "a rendered file is what the specs render to (`paddlegen render` rewrites it)",
    "missing": "every file a render writes is there",
    "extra": "no file that paddlegen generated is left where a render no longer writes one",
    "unknown": (
        "every file in a job folder is one paddlegen generated, or in its `custom/` Component "
        "(a file nothing deploys is reported)"
    ),
    "custom": "a job's `custom/` folder is a kustomize Component kustomize can use",
    "leftover": "no staging folder of an interrupted render is left in the output",
    "summary": "what the run left undone because of the errors it found",
    "import-note": (
        "what `import` changed without changing what runs (a server-set field, a default made "
        "explicit, a name paddlegen derives)"
    ),
    "import-lossy": "what `import` could not carry over: the spec would run differently",
    "input": "every file named can be read",
    "output": "the output can be written without overwriting files paddlegen did not make",
    "tool": "an external tool (kubeconform, kubectl) is there and answers",
    "template": "every template renders",
    "usage": "the command line is one paddlegen takes",
    "value": "every value given is one paddlegen can take",
    "argument": "the arguments given agree with each other",
    "error": "an error paddlegen expected",
    "internal": "nothing fails inside paddlegen (otherwise a bug: please report it)",
    # `paddlegen kueue`'s input (paddlegen/gitops/kueue_setup.py)
    "kueue-setup-flavor": "a team's quota is on a flavor of `flavors`",
    "kueue-setup-unique": "no two flavors, priority classes or teams share a name",
    "kueue-setup-default-queue": (
        "no team is named `default`: its LocalQueues would be Kueue's default queue, which "
        "takes every Job of the namespace without a queue label, paddlegen's data Jobs too"
    ),
    "kueue-setup-quantity": "an extended resource's quota (`nvidia.com/gpu`) is a whole number",
    "kueue-setup-unused": "every flavor has a team's quota on it",
}

HELP: dict[str, str] = {**CHECKS, **OTHERS}
