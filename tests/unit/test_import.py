"""paddlegen.authoring.importer on small inputs: what it maps, what it lists, what it refuses."""

from __future__ import annotations

import pytest
import yaml

from paddlegen.authoring.importer import import_jobs, import_manifests
from paddlegen.cli import cli
from paddlegen.errors import InputError
from tests.builders import HEADER, rendered_objects
from tests.conftest import DATA
from tests.helpers import LOSSY_JOB

IMPORT_DATA = DATA / "import"
# A Job that maps whole (its training container is named paddle, its pods run no host network)
JOB = LOSSY_JOB.replace("name: main", "name: paddle").replace("      hostNetwork: true\n", "")
CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: b}\n"
# A claim of kubeflow()'s pods
CLAIM = (
    "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: ml}\n"
    "spec: {accessModes: [ReadWriteMany], resources: {requests: {storage: 5Gi}}}\n"
)
POD = """\
    spec:
      containers:
      - name: paddle
        image: {image}
        volumeMounts: [{{name: data, mountPath: /data}}]
      volumes: [{{name: data, persistentVolumeClaim: {{claimName: {claim}}}}}]
"""


def kubeflow(
    master_image="r/a:v1", worker_image="r/a:v1", claim="data", scheduler: str | None = "volcano"
) -> str:
    def replicas(kind: str, image: str) -> str:
        pod = "\n".join("    " + line for line in POD.format(image=image, claim=claim).splitlines())
        if scheduler:
            pod += f"\n          schedulerName: {scheduler}"
        return f"    {kind}:\n      replicas: 2\n      template:\n{pod}\n"

    return (
        "apiVersion: kubeflow.org/v1\nkind: PaddleJob\nmetadata: {name: kf, namespace: ml}\n"
        "spec:\n  runPolicy:\n    cleanPodPolicy: All\n    backoffLimit: 3\n"
        "    schedulingPolicy: {minAvailable: 3, queue: q1}\n  paddleReplicaSpecs:\n"
        + replicas("Master", master_image)
        + replicas("Worker", worker_image)
    )


def imported(*texts: str):
    return import_manifests([(f"in{i}.yaml", t) for i, t in enumerate(texts)])


def said(result) -> list[str]:
    """The notes as the text report words them, without kind or file."""
    return [str(note) for note in result.notes]


def test_shared_values_move_to_the_spec_and_different_ones_stay_on_roles():
    """A scheduling policy with Volcano pods maps whole, without a lossy note."""
    result = imported(kubeflow(worker_image="r/b:v1"))
    spec = result.spec["spec"]
    assert "image" not in spec
    assert (spec["ps"]["image"], spec["worker"]["image"]) == ("r/a:v1", "r/b:v1")
    assert spec["kubeflow"] == {"cleanPodPolicy": "All"}
    assert spec["run"] == {"backoffLimit": 3}
    assert spec["scheduling"] == {"scheduler": "volcano", "minAvailable": 3, "queue": "q1"}
    assert lossy(result) == []


def test_a_scheduling_policy_without_volcano_pods_keeps_the_default_scheduler_and_says_so():
    """The operator gangs through Volcano only with --gang-scheduler-name=volcano; pods naming
    Volcano would stay Pending where it is not installed: the scheduler stays, the policy is
    lossy."""
    result = imported(kubeflow(scheduler=None))
    assert "scheduling" not in result.spec["spec"]
    assert lossy(result) == [
        'PaddleJob/kf: runPolicy.schedulingPolicy {"minAvailable": 3, "queue": "q1"} is not '
        "carried over: the pods name no scheduler, so they run on the default scheduler unless "
        "the operator gang-schedules every job; set spec.scheduling.scheduler: volcano (the "
        "pods then name Volcano) if this job needs its gang"
    ]
    job = render(result)["PaddleJob"]["spec"]
    pods = [r["template"]["spec"] for r in job["paddleReplicaSpecs"].values()]
    assert [p.get("schedulerName") for p in pods] == [None, None]
    assert "schedulingPolicy" not in job.get("runPolicy", {})


def test_a_scheduling_policy_without_volcano_pods_is_an_import_that_exits_1(runner, tmp_path):
    source = tmp_path / "kf.yaml"
    source.write_text(kubeflow(scheduler=None))
    out = tmp_path / "kf.spec.yaml"
    result = runner.invoke(cli, ["import", str(source), "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert "runPolicy.schedulingPolicy" in result.stderr
    assert "scheduler: volcano" not in out.read_text()
    accepted = runner.invoke(cli, ["import", str(source), "-o", str(out), "--force", "--lossy"])
    assert accepted.exit_code == 0, accepted.output


def test_a_paddleflow_scheduling_policy_without_volcano_pods_is_lossy_too():
    text = (
        "apiVersion: batch.paddlepaddle.org/v1\nkind: PaddleJob\nmetadata: {name: pf}\n"
        "spec:\n  schedulingPolicy: {queue: q1}\n  worker:\n    replicas: 2\n"
        "    template: {spec: {containers: [{name: paddle, image: r/a:v1}]}}\n"
    )
    result = imported(text)
    assert "scheduling" not in result.spec["spec"]
    (note,) = lossy(result)
    assert note.startswith('PaddleJob/pf: schedulingPolicy {"queue": "q1"} is not carried over')
    volcano = text.replace("r/a:v1}]", "r/a:v1}], schedulerName: volcano")
    with_volcano = imported(volcano)
    assert with_volcano.spec["spec"]["scheduling"] == {"scheduler": "volcano", "queue": "q1"}
    assert lossy(with_volcano) == []


def test_a_claim_outside_the_input_stays_a_claim_and_one_without_a_pv_is_dynamic():
    assert imported(kubeflow()).spec["spec"]["volumes"][0]["claim"] == {"name": "data"}
    result = imported(kubeflow(), CLAIM.replace("spec: {", "spec: {storageClassName: fast, "))
    (volume,) = result.spec["spec"]["volumes"]
    # ReadWriteMany is what a dynamic claim of four pods derives: left to the spec
    assert volume == {
        "name": "data",
        "mountPath": "/data",
        "dynamic": {"storageClassName": "fast"},
        "capacity": "5Gi",
    }
    assert "PersistentVolumeClaim/data: renamed kf-data (paddlegen derives the name)" in said(
        result
    )


def test_the_only_pv_of_the_input_is_not_taken_for_a_claim_when_another_claim_names_it():
    """A claim without volumeName is bound to the input's only PV (the seeds' form), unless
    another claim of the input names that PV: then it is a dynamic claim of its own."""
    job = JOB.replace(
        "command: [python3, train.py]}]",
        "command: [python3, train.py], volumeMounts: [{name: data, mountPath: /data},"
        " {name: scratch, mountPath: /scratch}]}]\n"
        "      volumes: [{name: data, persistentVolumeClaim: {claimName: data}},"
        " {name: scratch, persistentVolumeClaim: {claimName: scratch}}]",
    )
    storage = (
        "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: nas}\nspec:\n"
        "  capacity: {storage: 10Gi}\n  accessModes: [ReadWriteMany]\n"
        "  nfs: {server: 10.0.0.1, path: /data}\n---\n"
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\n"
        "spec: {accessModes: [ReadWriteMany], resources: {requests: {storage: 10Gi}},"
        " volumeName: nas}\n---\n"
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: scratch}\n"
        "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n"
    )
    volumes = {v["name"]: v for v in imported(job, storage).spec["spec"]["volumes"]}
    assert volumes["data"]["nfs"] == {"server": "10.0.0.1", "path": "/data"}
    assert volumes["scratch"]["dynamic"] == {} and volumes["scratch"]["capacity"] == "1Gi"


def test_objects_without_a_spec_counterpart_and_server_fields_are_listed():
    job = kubeflow().replace(
        "metadata: {name: kf, namespace: ml}",
        "metadata: {name: kf, namespace: ml, uid: x1, generation: 2}",
    )
    result = imported(job + "status: {conditions: []}\n", CONFIG_MAP)
    assert "ConfigMap/cfg: no spec counterpart; not imported" in said(result)
    assert "PaddleJob/kf: server-set uid, generation, status ignored" in said(result)


def test_a_list_of_objects_is_read_item_by_item():
    items = "\n".join("  " + line for line in kubeflow().splitlines())
    result = imported(f"apiVersion: v1\nkind: List\nitems:\n-{items[1:]}\n")
    assert result.spec["spec"]["workload"] == "kubeflow-paddlejob"


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        (
            (JOB + "---\n" + kubeflow(),),
            r"the input holds 2 jobs \(Job/demo, PaddleJob/kf\).* a spec per job with -o DIR/",
        ),
        (("- just\n- a list\n",), "not a Kubernetes object"),
        (("kind: Job\nmetadata: {name: [x\n",), r"in0.yaml:3:\d+: not valid YAML"),
        (("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n",), "no training object"),
    ],
)
def test_what_cannot_become_one_spec_is_refused(texts, message):
    with pytest.raises(InputError, match=message):
        imported(*texts)


def render(result) -> dict[str, dict]:
    """The objects the imported spec renders, by kind."""
    return {kind: obj for (kind, _), obj in rendered_objects(result.text).items()}


def imported_file(name: str):
    path = IMPORT_DATA / name
    return import_manifests([(path.name, path.read_text(encoding="utf-8"))])


def lossy(result) -> list[str]:
    return [str(note) for note in result.notes if note.kind == "lossy"]


def test_a_note_is_a_finding_of_its_kind_in_the_file_that_held_the_object():
    result = imported(kubeflow(), CONFIG_MAP)
    found = {(n.where, n.kind, n.file) for n in result.notes}
    assert ("ConfigMap/cfg", "lossy", "in1.yaml") in found  # an object the spec will not make
    assert ("PaddleJob/kf", "cosmetic", "in0.yaml") in found  # restricted: false, said so
    rules = {(d.severity, d.rule) for d in (n.diagnostic() for n in result.notes)}
    assert rules == {("warning", "import-lossy"), ("info", "import-note")}
    assert result.lossy == [n for n in result.notes if n.kind == "lossy"]


def test_an_indexed_job_of_three_pods_is_one_pod_and_says_so():
    result = imported_file("indexed-job.yaml")
    spec = result.spec["spec"]
    assert (spec["workload"], spec["worker"]) == ("job", {"replicas": 1})
    (note,) = lossy(result)  # the server's fields and defaults are cosmetic
    assert note.startswith("Job/resnet: parallelism 3, completions 3, completionMode Indexed: ")
    assert "the Job runs 3 pods with a completion index each" in note
    assert "workload job runs exactly one" in note
    assert "use workload collective-job (an Indexed Job that runs Paddle's launcher" in note
    assert not [d for d in result.diagnostics if d.is_error]


def test_kubectl_output_leaves_server_set_fields_and_defaults_to_the_cluster():
    result = imported_file("indexed-job.yaml")
    # The uid labels would make the API server refuse the new Job (selector mismatch).
    assert "labels" not in result.spec["metadata"]
    notes = said(result)
    server = next(n for n in notes if n.startswith("Job/resnet: server-set uid"))
    assert "spec.selector.matchLabels.batch.kubernetes.io/controller-uid" in server
    assert "spec.template.metadata.labels.job-name" in server
    defaults = next(n for n in notes if n.startswith("Job/resnet: defaults"))
    for field in ("spec.suspend", "spec.template.spec.dnsPolicy", "terminationMessagePolicy"):
        assert field in defaults
    rendered = render(result)
    assert (
        rendered["Job"]["spec"]["template"]["metadata"]["labels"]
        .keys()
        .isdisjoint({"controller-uid", "job-name", "batch.kubernetes.io/controller-uid"})
    )


def test_kubectl_apply_annotation_is_not_carried_over_to_every_object():
    job = JOB.replace(
        "metadata: {name: demo}",
        "metadata:\n  name: demo\n  annotations:\n"
        '    kubectl.kubernetes.io/last-applied-configuration: \'{"kind": "Job"}\'\n'
        "    team: ads\n",
    )
    result = imported(job)
    assert result.spec["metadata"]["annotations"] == {"team": "ads"}
    assert any("server-set" in n and "last-applied-configuration" in n for n in said(result))
    assert lossy(result) == []


@pytest.mark.parametrize(
    ("shape", "runs"),
    [
        ("parallelism: 2\n  completions: 4", "the Job runs 4 pods, 2 at a time;"),
        ("completions: 3", "the Job runs 3 pods, 1 at a time;"),
        ("parallelism: 5", "the Job runs 5 pods;"),
        ("completionMode: Indexed", "the Job runs 1 pod with a completion index each"),
    ],
)
def test_a_job_of_several_or_indexed_pods_is_lossy(shape, runs):
    (note,) = lossy(imported(JOB.replace("spec:\n", f"spec:\n  {shape}\n", 1)))
    assert runs in note


def test_a_job_of_one_pod_is_not():
    shape = "spec:\n  parallelism: 1\n  completions: 1\n  completionMode: NonIndexed\n"
    result = imported(JOB.replace("spec:\n", shape, 1))
    assert lossy(result) == []
    assert result.spec["spec"]["worker"] == {"replicas": 1}


def test_containers_beside_the_training_one_and_volumes_without_a_spec_form_are_lossy():
    result = imported_file("sidecar-job.yaml")
    assert sorted(lossy(result)) == sorted(
        [
            "Job/wide-deep: container 'log-shipper' (fluent/fluent-bit:3.1) is not carried "
            "over: the spec's pods run one container, the training container; a native sidecar "
            "(spec.sidecars) runs beside it, and ends with it",
            "Job/wide-deep: volume 'creds' (projected) is not carried over: mounted at "
            "/etc/creds, it has no spec volume form",
        ]
    )


def test_what_a_pod_holds_that_the_spec_can_express_is_mapped():
    result = imported_file("sidecar-job.yaml")
    spec = result.spec["spec"]
    assert result.spec["metadata"] == {
        "name": "wide-deep",
        "namespace": "ml",
        "labels": {"team": "ads"},
    }
    assert (spec["image"], spec["command"], spec["args"], spec["workingDir"]) == (
        "registry.example.com/wide-deep:v2",
        ["python3", "train.py"],
        ["--epochs", "10"],
        "/workspace",
    )
    assert spec["env"] == [
        {"name": "EPOCHS", "value": "10"},
        {"name": "S3_KEY", "valueFrom": {"secretKeyRef": {"name": "s3", "key": "access-key"}}},
    ]
    assert spec["resources"] == {
        "requests": {"cpu": "4", "memory": "8Gi"},
        "limits": {"memory": "8Gi"},
    }
    assert spec["nodeSelector"] == {"pool": "gpu"}
    assert spec["priorityClassName"] == "high"  # the pods' own, without Volcano
    assert spec["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    assert spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert spec["volumes"] == [
        {"name": "data", "mountPath": "/data", "emptyDir": {}},
        {"name": "logs", "mountPath": "/var/log/train", "emptyDir": {}},
    ]
    # the init container, mounting data where the training container does
    assert spec["initContainers"] == [
        {
            "name": "fetch",
            "image": "busybox:1.36",
            "command": ["sh", "-c", "wget -O /data/train.txt http://data.example.com/train.txt"],
            "volumeMounts": [{"name": "data"}],
        }
    ]
    assert spec["run"] == {
        "restartPolicy": "OnFailure",
        "backoffLimit": 2,
        "activeDeadlineSeconds": 86400,
        "ttlSecondsAfterFinished": 3600,
    }
    # The pod's runAsUser and runAsNonRoot apply to the container: spec.security puts them there.
    assert spec["security"] == {
        "restricted": False,
        "runAsNonRoot": True,
        "runAsUser": 1000,
        "fsGroup": 1000,
    }


# What tests/data/import/volcano-job.yaml's gang maps to
VOLCANO_JOB_SCHEDULING = {"scheduler": "volcano", "queue": "research", "priorityClassName": "high"}


def test_a_gang_scheduled_job_with_its_podgroup_maps_whole():
    result = imported_file("volcano-job.yaml")
    spec = result.spec["spec"]
    # the PodGroup's minMember 1 is every pod of the job: the spec derives it
    assert spec["scheduling"] == VOLCANO_JOB_SCHEDULING
    assert (spec["gpus"], spec["shm"]) == (2, "8Gi")
    assert spec["volumes"] == [
        {"name": "data", "mountPath": "/data", "claim": {"name": "imagenet"}, "readOnly": True}
    ]
    # restricted: the container's settings and the pod's seccomp profile together
    assert "security" not in spec
    assert lossy(result) == []
    # rendered, the gang is Volcano's own group for the Job: no PodGroup of paddlegen's
    objects = render(result)
    assert "PodGroup" not in objects
    job = objects["Job"]
    assert job["metadata"]["annotations"]["scheduling.volcano.sh/group-min-member"] == "1"
    pod = job["spec"]["template"]
    assert pod["metadata"]["annotations"]["scheduling.volcano.sh/queue-name"] == "research"
    assert pod["spec"]["priorityClassName"] == "high"


def test_a_gang_scheduled_job_as_paddlegen_renders_it_maps_back_whole():
    text = (IMPORT_DATA / "volcano-job.yaml").read_text(encoding="utf-8")
    job = text[text.index("apiVersion: batch/v1") :].replace(
        "metadata: {name: resnet, namespace: ml}",
        "metadata:\n  name: resnet\n  namespace: ml\n"
        "  annotations: {scheduling.volcano.sh/group-min-member: '1'}",
    )
    job = job.replace(
        "scheduling.k8s.io/group-name: resnet", "scheduling.volcano.sh/queue-name: research"
    )
    result = imported(job)
    assert result.spec["spec"]["scheduling"] == VOLCANO_JOB_SCHEDULING
    assert "annotations" not in result.spec["metadata"]
    assert lossy(result) == []


def test_a_pod_priority_other_than_the_gangs_is_lossy():
    text = (IMPORT_DATA / "volcano-job.yaml").read_text(encoding="utf-8")
    result = imported(text.replace("priorityClassName: high\n---", "priorityClassName: low\n---"))
    assert result.spec["spec"]["scheduling"]["priorityClassName"] == "low"
    (note,) = lossy(result)
    assert "priorityClassName 'high' is lost: the gang's is 'low'" in note


def test_settings_that_differ_between_roles_are_lossy():
    text = kubeflow().replace(
        "      template:\n        spec:\n",
        "      template:\n        spec:\n          securityContext: {fsGroup: 1000}\n",
        1,
    )
    notes = lossy(imported(text))
    assert any("security differs between roles" in n for n in notes)


def test_pod_settings_that_differ_between_roles_stay_on_the_roles():
    text = kubeflow().replace(
        "      template:\n        spec:\n",
        "      template:\n        metadata: {labels: {tier: ps}}\n        spec:\n"
        "          priorityClassName: high\n",
        1,
    )
    result = imported(text)
    spec = result.spec["spec"]
    assert (spec["ps"]["priorityClassName"], spec["ps"]["podLabels"]) == ("high", {"tier": "ps"})
    assert "priorityClassName" not in spec["worker"]
    assert lossy(result) == []


def test_derived_names_are_cosmetic_and_a_gang_of_other_resources_is_lossy():
    group = (
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
        "metadata: {name: kf, namespace: ml}\nspec: {minMember: 4, minResources: {cpu: '64'}}\n"
    )
    job = kubeflow().replace("name: paddle", "name: trainer")
    kinds = {str(n): n.kind for n in imported(job, group).notes}
    rename = (
        "PaddleJob/kf Master: container 'trainer' is named 'paddle' (operators find it by name)"
    )
    gang = (
        'PodGroup/kf: minResources {"cpu": "64"} becomes {"cpu": "2", "memory": "4Gi"} '
        "(the sum of the pods' requests)"
    )
    assert (kinds[rename], kinds[gang]) == ("cosmetic", "lossy")


@pytest.mark.parametrize("name", sorted(p.name for p in IMPORT_DATA.glob("*.yaml")))
def test_each_sample_imports_to_a_valid_spec_that_renders(name):
    result = imported_file(name)
    assert not [d for d in result.diagnostics if d.is_error], result.diagnostics
    assert {"Job", "TrainJob"} & render(result).keys()


@pytest.mark.parametrize(
    ("pod_field", "kind", "said_"),
    [
        ("hostNetwork: true", "lossy", "spec.template.spec.hostNetwork = true: not carried over"),
        ("hostIPC: true", "lossy", "spec.template.spec.hostIPC = true: not carried over"),
        ("imagePullSecrets: [{name: a, x: b}]", "lossy", "imagePullSecrets[0].name"),
        ("dnsPolicy: ClusterFirst", "cosmetic", "defaults spec.template.spec.dnsPolicy left"),
        ("terminationGracePeriodSeconds: 30", "cosmetic", "terminationGracePeriodSeconds left"),
        ("schedulerName: kube-batch", "lossy", 'schedulerName = "kube-batch": not carried over'),
        ("schedulerName: default-scheduler", "cosmetic", "defaults spec.template.spec.schedulerN"),
    ],
)
def test_a_pod_field_is_lossy_unless_the_cluster_sets_it_anyway(pod_field, kind, said_):
    result = imported(
        JOB.replace("restartPolicy: Never", f"restartPolicy: Never\n      {pod_field}")
    )
    (note,) = [n for n in result.notes if said_ in str(n)]
    assert note.kind == kind
    assert bool(lossy(result)) == (kind == "lossy")


@pytest.mark.parametrize(
    ("pod_fields", "carried"),
    [
        ("automountServiceAccountToken: true", {"automountServiceAccountToken": True}),
        ("automountServiceAccountToken: false", {}),  # paddlegen's own default
        (
            "dnsPolicy: None\n"
            "      dnsConfig: {nameservers: [10.96.0.10], options: [{name: ndots}]}",
            {
                "dnsPolicy": "None",
                "dnsConfig": {"nameservers": ["10.96.0.10"], "options": [{"name": "ndots"}]},
            },
        ),
        ("dnsPolicy: Default", {"dnsPolicy": "Default"}),
    ],
)
def test_the_token_and_dns_settings_come_back_into_the_spec(pod_fields, carried):
    result = imported(
        JOB.replace("restartPolicy: Never", f"restartPolicy: Never\n      {pod_fields}")
    )
    assert lossy(result) == []
    spec = result.spec["spec"]
    assert {k: spec[k] for k in carried} == carried
    assert not {"automountServiceAccountToken", "dnsPolicy", "dnsConfig"} - set(carried) & set(spec)
    pod = render(result)["Job"]["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is carried.get("automountServiceAccountToken", False)
    assert {k: pod[k] for k in ("dnsPolicy", "dnsConfig") if k in pod} == {
        k: v for k, v in carried.items() if k != "automountServiceAccountToken"
    }


def test_a_data_job_of_its_own_priority_or_security_is_lossy():
    data = """\
apiVersion: batch/v1
kind: Job
metadata: {name: kf-data, namespace: ml}
spec:
  template:
    spec:
      priorityClassName: low
      restartPolicy: Never
      containers:
      - name: paddle
        image: r/a:v1
        env: [{name: OUT_DIR, value: /data/kf}, {name: SPLIT_COUNT, value: "2"}]
        securityContext:
          allowPrivilegeEscalation: false
          capabilities: {drop: [ALL]}
          seccompProfile: {type: RuntimeDefault}
        volumeMounts: [{name: data, mountPath: /data}]
      volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
"""
    result = imported(kubeflow(), data)
    assert result.spec["spec"]["dataPrep"] == {"volume": "data"}
    assert lossy(result) == [
        'Job/kf-data: priorityClassName "low" is not carried over: the data Job takes '
        "priorityClassName from the spec (unset)",
        'Job/kf-data: security {} becomes the spec\'s {"restricted": false}: the data Job '
        "takes spec.security",
    ]


LEGACY = """\
apiVersion: batch/v1
kind: Job
metadata: {name: legacy}
spec:
  parallelism: 3
  template:
    spec:
      restartPolicy: Never
      volumes: [{name: efs, persistentVolumeClaim: {claimName: efsvol}}]
      containers:
      - name: paddle
        image: paddlepaddle/paddle-tutorial:k8s_train
        command: ["bin/bash", "-c", "/root/start.sh"]
        env:
        - {name: JOB_NAME, value: legacy}
        - {name: JOB_PATH, value: /home/jobpath}
        - {name: TRAIN_CONFIG_DIR, value: quick_start}
        - {name: CONF_PADDLE_PORT, value: "7164"}
        - {name: CONF_PADDLE_PORTS_NUM, value: "2"}
        - {name: CONF_PADDLE_PORTS_NUM_SPARSE, value: "2"}
        - {name: CONF_PADDLE_GRADIENT_NUM, value: "3"}
        - {name: TRAINER_COUNT, value: "3"}
        volumeMounts: [{name: efs, mountPath: /home/jobpath}]
        ports:
        - {name: jobport, hostPort: 7164, containerPort: 7164}
"""


LEGACY_PORTS = (
    "Job/legacy: ports 7164..7167 with equal hostPorts (jobport0..jobport3, from "
    "distributed.port, portsNum and portsNumSparse): "
)


def test_a_legacy_job_declaring_only_its_first_port_says_what_the_render_declares():
    """The legacy Job's one hostPort 7164 is no loss: the render declares it, with 7165-7167."""
    result = imported(LEGACY)
    assert result.spec["spec"]["distributed"]["hostPorts"] is True
    notes = [n for n in said(result) if "port" in n.lower()]
    assert notes == [LEGACY_PORTS + "7164 kept, 7165, 7166, 7167 added"]
    assert lossy(result) == notes  # three more host ports to find free on each node
    container = render(result)["Job"]["spec"]["template"]["spec"]["containers"][0]
    assert [(p["containerPort"], p["hostPort"]) for p in container["ports"]] == [
        (port, port) for port in range(7164, 7168)
    ]


@pytest.mark.parametrize(
    ("ports", "kind", "said_"),
    [
        (
            (7164, 7165, 7166, 7167, 9090),
            "lossy",
            "7164, 7165, 7166, 7167 kept, 9090 (hostPort 9090) not carried over",
        ),
        ((7164, 7165, 7166, 7167), "cosmetic", "named jobport0..jobport3"),
    ],
    ids=["outside-the-range", "other-names"],
)
def test_legacy_ports_the_render_does_not_declare_alike_are_named(ports, kind, said_):
    text = LEGACY.replace(
        "        - {name: jobport, hostPort: 7164, containerPort: 7164}\n",
        "".join(
            f"        - {{name: p{i}, hostPort: {port}, containerPort: {port}}}\n"
            for i, port in enumerate(ports)
        ),
    )
    (note,) = [n for n in imported(text).notes if "port" in str(n).lower()]
    assert (note.kind, str(note)) == (kind, LEGACY_PORTS + said_)


# --- several jobs in one input -----------------------------------------------------------------


def jobs_of(*texts: str):
    return import_jobs([(f"in{i}.yaml", t) for i, t in enumerate(texts)])


def test_each_job_of_an_input_takes_the_objects_that_belong_to_it():
    """The PodGroup its pods name, its claims, what is named after it; an object of no one
    job is listed once, as not imported."""
    volcano = (IMPORT_DATA / "volcano-job.yaml").read_text(encoding="utf-8")
    service = "apiVersion: v1\nkind: Service\nmetadata: {name: demo-svc}\n"
    result = jobs_of(JOB, volcano, kubeflow(), service, CONFIG_MAP, CLAIM)
    assert [job.label for job in result.jobs] == ["Job/demo", "Job/resnet", "PaddleJob/kf"]
    demo, resnet, kf = result.jobs
    assert "Service/demo-svc: no spec counterpart; not imported" in said(demo)
    assert resnet.spec["spec"]["scheduling"]["queue"] == "research"  # its PodGroup's
    assert kf.spec["spec"]["volumes"][0]["dynamic"] == {}  # its claim, which it mounts
    assert [(str(n), n.file, n.kind) for n in result.notes] == [
        (
            "ConfigMap/cfg: belongs to none of the jobs (Job/demo, Job/resnet, PaddleJob/kf) "
            "alone; not imported",
            "in4.yaml",
            "lossy",
        )
    ]
    assert result.lossy == [n for n in demo.notes if n.lossy] + result.notes


def test_a_claim_two_jobs_mount_is_neither_jobs():
    result = jobs_of(kubeflow(), kubeflow().replace("name: kf,", "name: kf2,"), CLAIM)
    for job in result.jobs:  # each mounts the claim as it is, by name
        assert job.spec["spec"]["volumes"][0]["claim"] == {"name": "data"}
    assert [str(n) for n in result.notes] == [
        "PersistentVolumeClaim/data: belongs to none of the jobs (PaddleJob/kf, "
        "PaddleJob/kf2) alone; not imported"
    ]


def test_a_data_job_goes_to_the_job_it_is_named_after_or_shares_a_claim_with():
    data = (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: prep, namespace: ml}\nspec:\n"
        "  template:\n    spec:\n      containers:\n      - name: prep\n        image: r/p:v1\n"
        "        env: [{name: OUT_DIR, value: /data/kf}, {name: SPLIT_COUNT, value: '4'}]\n"
        "        volumeMounts: [{name: data, mountPath: /data}]\n"
        "      volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]\n"
    )
    result = jobs_of(JOB, kubeflow(), data)
    demo, kf = result.jobs
    assert "dataPrep" not in demo.spec["spec"]
    assert kf.spec["spec"]["dataPrep"]["image"] == "r/p:v1"
    assert result.notes == []
    named = jobs_of(JOB, kubeflow(), data.replace("name: prep, namespace: ml", "name: demo-data"))
    assert named.jobs[0].spec["spec"]["dataPrep"]["image"] == "r/p:v1"


# A Job whose pod has a native sidecar after an init container, as `kubectl get -o yaml`
# prints it: the API server's defaults in the init containers and the probe.
INIT_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: demo}
spec:
  template:
    spec:
      restartPolicy: Never
      initContainers:
      - name: fetch
        image: busybox:1.36.1
        imagePullPolicy: IfNotPresent
        command: [sh, -c, "echo ok > /scratch/ok"]
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
        volumeMounts: [{name: scratch, mountPath: /scratch}]
      - name: proxy
        image: r/proxy:2.0
        restartPolicy: Always
        ports: [{containerPort: 15000, name: admin, protocol: TCP}]
        startupProbe:
          httpGet: {path: /ready, port: admin, scheme: HTTP}
          periodSeconds: 1
          timeoutSeconds: 1
          successThreshold: 1
          failureThreshold: 30
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
      containers:
      - name: paddle
        image: r/demo:v1
        volumeMounts: [{name: data, mountPath: /data}]
      volumes:
      - {name: scratch, emptyDir: {}}
      - {name: data, emptyDir: {}}
"""


def test_init_containers_and_native_sidecars_are_carried_over_the_sidecars_first():
    result = imported(INIT_JOB)
    spec = result.spec["spec"]
    assert spec["sidecars"] == [
        {
            "name": "proxy",
            "image": "r/proxy:2.0",
            "ports": [{"containerPort": 15000, "name": "admin", "protocol": "TCP"}],
            "startupProbe": {
                "httpGet": {"path": "/ready", "port": "admin"},
                "periodSeconds": 1,
                "failureThreshold": 30,
            },
        }
    ]
    assert spec["initContainers"] == [
        {
            "name": "fetch",
            "image": "busybox:1.36.1",
            "imagePullPolicy": "IfNotPresent",
            "command": ["sh", "-c", "echo ok > /scratch/ok"],
            "volumeMounts": [{"name": "scratch"}],
        }
    ]
    # the volume only the init container mounted is now the training container's too
    assert spec["volumes"][0] == {"name": "scratch", "mountPath": "/scratch", "emptyDir": {}}
    assert sorted(lossy(result)) == [
        "Job/demo: sidecar 'proxy' (r/proxy:2.0) now starts before init container 'fetch': "
        "paddlegen starts every sidecar first",
        "Job/demo: volume 'scratch' is now also mounted into the training container, at "
        "/scratch: the spec mounts every volume into it (only init containers or sidecars did)",
    ]
    (defaults,) = [str(n) for n in result.notes if n.kind == "cosmetic" and "defaults" in str(n)]
    for field in (
        "terminationMessagePath",
        "startupProbe.timeoutSeconds",
        "startupProbe.httpGet.scheme",
    ):
        assert f"spec.template.spec.initContainers[1].{field}" in defaults


def test_what_a_spec_container_cannot_hold_is_listed():
    text = INIT_JOB.replace(
        "        volumeMounts: [{name: scratch, mountPath: /scratch}]\n",
        "        volumeMounts: [{name: scratch, mountPath: /scratch, mountPropagation: None}]\n"
        "        readinessProbe: {exec: {command: ['true']}}\n"
        "        securityContext: {privileged: true}\n",
    ).replace("periodSeconds: 1\n", "periodSeconds: 1\n          httpGet: {path: /ready, port: "
              "admin, httpHeaders: [{name: X, value: y}]}\n", 1)  # fmt: skip
    lines = "\n".join(lossy(imported(text)))
    for lost in (
        "spec.template.spec.initContainers[0].volumeMounts[0].mountPropagation",
        "spec.template.spec.initContainers[0].readinessProbe.exec.command",
        "spec.template.spec.initContainers[0].securityContext.privileged",
        "spec.template.spec.initContainers[1].startupProbe.httpGet.httpHeaders[0].name",
    ):
        assert f"{lost} = " in lines, lines


def test_an_init_container_without_the_training_containers_security_context_gets_it():
    text = INIT_JOB.replace(
        "        image: r/demo:v1\n",
        "        image: r/demo:v1\n        securityContext: {allowPrivilegeEscalation: false, "
        "capabilities: {drop: [ALL]}, seccompProfile: {type: RuntimeDefault}}\n",
    )
    notes = lossy(imported(text))
    assert (
        "Job/demo: init container 'fetch' (busybox:1.36.1) ran without a securityContext; it now "
        'gets the training container\'s, {"allowPrivilegeEscalation": false, "capabilities": '
        '{"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}' in notes
    )


def test_the_paddleflow_operators_own_init_container_is_left_to_it():
    text = (
        "apiVersion: batch.paddlepaddle.org/v1\nkind: PaddleJob\nmetadata: {name: pf}\n"
        "spec:\n  worker:\n    replicas: 2\n    template:\n      spec:\n"
        "        initContainers:\n"
        "        - {name: fetch, image: 'busybox:1.36.1'}\n"
        "        - {name: coord-paddle, image: 'alpine:3.10', command: [sh, -c, nslookup]}\n"
        "        containers: [{name: paddle, image: 'r/a:v1'}]\n"
    )
    result = imported(text)
    assert result.spec["spec"]["initContainers"] == [{"name": "fetch", "image": "busybox:1.36.1"}]
    assert lossy(result) == []
    assert "PaddleJob/pf worker: init container 'coord-paddle' is the operator's: it adds it to " \
        "every pod itself" in said(result)  # fmt: skip


def test_a_kubeflow_sidecar_comes_back_as_one():
    text = kubeflow().replace(
        "          containers:\n",
        "          initContainers: [{name: agent, image: 'r/agent:1.0', restartPolicy: Always}]\n"
        "          containers:\n",
    )
    spec = imported(text).spec["spec"]
    assert spec["sidecars"] == [{"name": "agent", "image": "r/agent:1.0"}]  # both roles'
    assert "sidecars" not in spec["ps"] and "sidecars" not in spec["worker"]


def test_the_data_jobs_init_containers_are_lossy():
    data_job = (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: demo-data}\nspec:\n  template:\n"
        "    spec:\n      restartPolicy: Never\n"
        "      initContainers: [{name: wait, image: 'busybox:1.36.1'}]\n"
        "      containers:\n      - name: paddle\n        image: r/data:v1\n"
        "        env: [{name: OUT_DIR, value: /data/demo}, {name: SPLIT_COUNT, value: '1'}]\n"
        "        volumeMounts: [{name: data, mountPath: /data}]\n"
        "      volumes: [{name: data, emptyDir: {}}]\n"
    )
    result = imported(INIT_JOB, data_job)
    assert "dataPrep" in result.spec["spec"]
    assert (
        "Job/demo-data: init container 'wait' (busybox:1.36.1) is not carried over: the data "
        "Job's pod runs none (spec.initContainers and sidecars are the trainers')"
    ) in lossy(result)


def test_a_collective_job_read_back_from_the_cluster_imports_without_a_lossy_note():
    result = imported_file("collective-job.yaml")
    assert lossy(result) == []
    spec = result.spec["spec"]
    assert spec["workload"] == "collective-job"
    assert (spec["args"], spec["worker"], spec["collective"]) == (
        ["train.py"],
        {"replicas": 3},
        {"port": 8090},
    )
    assert "command" not in spec and "env" not in spec  # the launcher, the contract: derived
    assert spec["scheduling"]["scheduler"] == "volcano"
    notes = said(result)
    # the Service is the job's own: its cluster fields are the cluster's, nothing else is left
    assert "Service/resnet: server-set uid, resourceVersion, creationTimestamp, status, " in (
        "".join(notes)
    )
    assert not [n for n in notes if "no spec counterpart" in n]
    rendered = render(result)
    assert rendered["Service"]["spec"]["selector"] == {"batch.kubernetes.io/job-name": "resnet"}
    assert rendered["Job"]["spec"]["completionMode"] == "Indexed"
    assert not [d for d in result.diagnostics if d.is_error]


HAND_WRITTEN = """\
apiVersion: batch/v1
kind: Job
metadata: {name: bert, namespace: ml}
spec:
  completionMode: Indexed
  completions: 4
  parallelism: 2
  backoffLimitPerIndex: 1
  template:
    spec:
      subdomain: workers
      restartPolicy: OnFailure
      containers:
      - name: trainer
        image: r/bert:v2
        command: [python, -m, paddle.distributed.launch, bert.py]
        env:
        - {name: PADDLE_MASTER, value: "bert-0.workers:9000"}
        - {name: PADDLE_NNODES, value: "4"}
        - name: PADDLE_RANK
          valueFrom:
            fieldRef: {fieldPath: "metadata.labels['batch.kubernetes.io/job-completion-index']"}
        - {name: EPOCHS, value: "3"}
        ports: [{containerPort: 9000}]
---
apiVersion: v1
kind: Service
metadata: {name: workers, namespace: ml}
spec:
  clusterIP: None
  selector: {job-name: bert}
"""


def test_a_hand_written_indexed_job_with_the_launchers_contract_says_what_changes():
    result = imported(HAND_WRITTEN)
    spec = result.spec["spec"]
    assert spec["workload"] == "collective-job"
    assert spec["worker"] == {"replicas": 4}
    assert spec["command"] == ["python", "-m", "paddle.distributed.launch", "bert.py"]
    assert spec["env"] == [{"name": "EPOCHS", "value": "3"}]
    assert spec["collective"] == {"port": 9000}
    assert "restartPolicy" not in spec.get("run", {})
    assert sorted(lossy(result)) == sorted(
        [
            "Job/bert: parallelism 2, completions 4: a collective-job runs all its 4 ranks at "
            "once (parallelism 4)",
            'Job/bert: env POD_IP was not set; paddlegen sets {"fieldRef": {"fieldPath": '
            "\"status.podIP\"}} (the launcher's contract, the pod's IP)",
            'Job/bert: env PADDLE_JOB_ID was not set; paddlegen sets "bert" (the launcher\'s '
            "contract, metadata.name)",
            "Job/bert: the command now runs after paddlegen's master wrapper (/bin/sh): on rank "
            "0 PADDLE_MASTER becomes the pod's own IP, where the launcher starts its store",
            "Job/bert: restartPolicy OnFailure becomes Never: a rank restarted in place cannot "
            "rejoin the others",
            "Job/bert: no podFailurePolicy (a failed pod's index was retried alone) becomes "
            "paddlegen's: a rank that fails, or is evicted, fails the whole Job at once (a rank "
            "started again alone cannot rejoin the others)",
            "Job/bert: spec.backoffLimitPerIndex = 1: not carried over",
        ]
    )
    notes = said(result)
    assert (
        "Job/bert: the pods' subdomain workers becomes bert: paddlegen names the headless "
        "Service after the job" in notes
    )
    assert "Service/workers: renamed bert (paddlegen derives the name)" in notes
    # the rank from the index label, the master by the input's own Service: the same
    assert not [
        n for n in notes if n.startswith(("Job/bert: env PADDLE_RANK", "Job/bert: env PADDLE_MA"))
    ]
    assert "Job/bert: port 9000 is declared as the container port `master`" in notes
    assert not [n for n in notes if "no spec counterpart" in n]


def test_an_indexed_job_without_the_launchers_contract_is_no_collective_job():
    text = HAND_WRITTEN.split("---")[0].replace("PADDLE_MASTER", "MASTER")
    assert imported(text).spec["spec"]["workload"] == "job"


def test_a_batch_job_is_claimed_by_one_workload_at_most():
    """The legacy image's env (CONF_PADDLE_*) makes a distributed-job, unless the pods also
    get the launcher's contract: collective-job claims that Job alone."""
    job = HAND_WRITTEN.split("---")[0]
    legacy = '        - {name: CONF_PADDLE_PORT, value: "7164"}\n'
    both = job.replace('        - {name: EPOCHS, value: "3"}\n', legacy)
    assert both != job
    assert imported(both).spec["spec"]["workload"] == "collective-job"
    without_master = both.replace("PADDLE_MASTER", "MASTER")
    assert imported(without_master).spec["spec"]["workload"] == "distributed-job"


SHIFTED = """\
apiVersion: batch/v1
kind: Job
metadata: {name: demo}
spec:
  template:
    spec:
      restartPolicy: Never
      hostIPC: true
      containers:
      - name: paddle
        image: r/a:v1
        volumeMounts:
        - {name: data, mountPath: /data}
        - {name: logs, mountPath: /logs, mountPropagation: HostToContainer}
      volumes:
      - {name: data, emptyDir: {}}
      - {name: logs, emptyDir: {}}
"""


def test_a_field_left_over_is_named_at_its_line_and_one_the_import_moved_at_its_list():
    """The import takes the first mount: the second one's leftover is at index 0 of what is
    left, where the input holds another mount; it is never placed at that one's line, but at
    the list that held both (the containers). A note on no one field is at the object."""
    result = import_manifests([("in.yaml", SHIFTED)])
    placed = {n.message.split(" = ")[0]: (n.line, n.col) for n in result.notes}
    assert placed["spec.template.spec.hostIPC"] == (8, 7)
    (propagation,) = [key for key in placed if key.endswith("mountPropagation")]
    assert placed[propagation] == (9, 7)
    assert all(n.file == "in.yaml" and n.line for n in result.notes)
    (restricted,) = [n for n in result.notes if "restricted" in n.message]
    assert (restricted.line, restricted.col) == (1, 1)


def batch_job(limits: str) -> str:
    return (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: npu}\nspec:\n  template:\n"
        "    spec:\n      restartPolicy: Never\n      containers:\n      - name: paddle\n"
        f"        image: r/a:v1\n        resources: {{limits: {limits}}}\n"
    )


def test_a_known_accelerators_limit_becomes_gpus_and_the_accelerator():
    result = imported(batch_job("{memory: 8Gi, huawei.com/Ascend910: 8}"))
    spec = result.spec["spec"]
    assert (spec["gpus"], spec["accelerator"]) == (8, "huawei.com/Ascend910")
    assert spec["resources"] == {"limits": {"memory": "8Gi"}}
    nvidia = imported(batch_job("{nvidia.com/gpu: 2}")).spec["spec"]
    assert nvidia["gpus"] == 2 and "accelerator" not in nvidia  # the default


# The LLM CLIs' master wrapper as paddlegen wrote it before it forwarded the stop signal: it
# exec'd the CLI. Output rendered then imports back as the CLI alone, as now.
EXEC_LLM_SCRIPT = (
    'if [ -z "${PADDLE_NNODES:-}" ]; then echo "paddlegen: PADDLE_NNODES is not set: every pod '
    'would train alone; give the pods the number of nodes (a TrainJob: spec.trainer.env)" >&2; '
    'exit 64; fi; if [ "$PADDLE_RANK" = 0 ]; then '
    'export PADDLE_MASTER="$POD_IP:${PADDLE_MASTER##*:}"; fi; '
    'export NNODES="$PADDLE_NNODES" RANK="$PADDLE_RANK" MASTER_ADDR="${PADDLE_MASTER%:*}" '
    'MASTER_PORT="${PADDLE_MASTER##*:}"; exec "$0" "$@"'
)


@pytest.mark.parametrize("script", [EXEC_LLM_SCRIPT, None], ids=["exec", "forwarding"])
def test_an_llm_clis_wrapper_of_this_version_or_an_earlier_one_imports_as_the_cli(script):
    cli_command = ["paddleformers-cli", "train", "/mnt/llm/sft.yaml"]
    body = (
        "metadata: {name: sft, namespace: llm}\nspec:\n  workload: collective-job\n"
        f"  image: r/pf:1\n  command: {cli_command}\n  worker: {{replicas: 2}}\n"
    )
    job = rendered_objects(HEADER + body)[("Job", "sft")]
    (container,) = job["spec"]["template"]["spec"]["containers"]
    if script is not None:
        container["command"][2] = script
    result = imported(yaml.safe_dump(job))
    assert result.spec["spec"]["command"] == cli_command
    assert not [n for n in result.notes if "master wrapper" in n.message]
