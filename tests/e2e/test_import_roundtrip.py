"""`paddlegen import` end to end: rendered examples come back to the same objects, and every
manifest the seeds show imports into a valid spec, with what it leaves listed (what cannot
come back: README, "Import"). A derived value equal to what the spec derives is left out."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import cache

import pytest
import yaml

from paddlegen.authoring.importer import Imported, import_jobs, import_manifests, read_manifests
from paddlegen.cli import cli
from paddlegen.pipeline import build
from paddlegen.render.engine import Manifest
from paddlegen.spec.loader import parse_spec, read_spec
from paddlegen.workloads.import_pod import PROBE_DEFAULTS
from tests.builders import (
    HEADER,
    KUEUE,
    KUEUE_WORKLOADS,
    diagnostics,
    kueue_spec,
    spec,
    text_of,
)
from tests.conftest import ROOT, example_specs
from tests.helpers import (
    ENV_SOURCES,
    INIT_CONTAINERS,
    POD_SETTINGS,
    ROLE_ENV_SOURCES,
    ROLE_POD_SETTINGS,
    ROLE_SIDECARS,
    SIDECARS,
)
from tests.seeds import manifest_blocks, seed_text

EXAMPLES = example_specs()
SEEDS = ("000", "001", "002", "003", "004")
# Seed 001 writes its image as `[YOUR_REPO]/paddle:mypaddle`, which is not YAML until the
# reader puts their repository there, as the seed tells them to.
PLACEHOLDERS = {"[YOUR_REPO]": "registry.example.com"}
STORAGE_KINDS = {"PersistentVolume", "PersistentVolumeClaim"}


def manifests_of(text: str) -> list[Manifest]:
    """What a spec's text renders."""
    return build.render_document(parse_spec(text, "spec.yaml")).manifests


def imported_alike(manifests: list[Manifest]) -> Imported:
    """What ``manifests`` import to: without a note (not even a cosmetic one) or an error, and
    rendering them again."""
    imported = import_manifests([("in.yaml", "---\n".join(m.text() for m in manifests))])
    assert imported.notes == []
    assert not [d for d in imported.diagnostics if d.is_error]
    assert [m.obj for m in manifests_of(imported.text)] == [m.obj for m in manifests]
    return imported


def read_back_lossless(objects: list[dict], read_back: Callable[[dict], dict]) -> Imported:
    """What ``objects`` import to as ``read_back`` has them back from the cluster: no lossy
    note."""
    stream = "---\n".join(yaml.safe_dump(read_back(o)) for o in objects)
    imported = import_manifests([("in.yaml", stream)])
    assert [str(n) for n in imported.lossy] == []
    return imported


def rendered_stream(path) -> tuple[str, list[dict]]:
    manifests = build.render_document(read_spec(path)).manifests
    return "---\n".join(m.text() for m in manifests), [m.obj for m in manifests]


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT / "examples")))
def test_a_rendered_example_imports_to_a_spec_that_renders_the_same_objects(spec):
    imported_alike(build.render_document(read_spec(spec)).manifests)


UID = "0b6f3c1e-5a7d-4c2b-9e51-2f0d8a6b7c31"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def as_read_back(obj: dict) -> dict:
    """``obj`` as `kubectl get -o yaml` prints it once applied and running (Kubernetes 1.31,
    tests/data/import/indexed-job.yaml is a real one): what the API server sets on every
    object, its defaults for batch Jobs and their pod templates, bound PVs and PVCs. The
    operators' CRDs default nothing in their pod templates."""
    out = copy.deepcopy(obj)
    meta = out["metadata"]
    meta.setdefault("annotations", {})[LAST_APPLIED] = json.dumps(obj)
    meta.update(uid=UID, resourceVersion="884213", generation=1)
    meta["creationTimestamp"] = "2026-11-20T09:12:44Z"
    {
        "Job": _job_read_back,
        "PersistentVolumeClaim": _claim_read_back,
        "Service": _service_read_back,
        "TrainJob": _trainjob_read_back,
    }.get(out["kind"], lambda o: None)(out)
    if out["kind"] == "PersistentVolume":
        meta["finalizers"] = ["kubernetes.io/pv-protection"]
        meta["annotations"]["pv.kubernetes.io/bound-by-controller"] = "yes"
        out["spec"]["volumeMode"] = "Filesystem"
        out["spec"]["claimRef"] = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "name": meta["name"],
            "namespace": "default",
            "resourceVersion": "884200",
            "uid": UID,
        }
    out.setdefault(
        "status",
        {"phase": "Bound"}
        if "Persistent" in out["kind"]
        else {"loadBalancer": {}}
        if out["kind"] == "Service"
        else {"active": 1},
    )
    return out


def _trainjob_read_back(train_job: dict) -> None:
    """A TrainJob (Trainer v2.3.0): the CRD's defaults (pkg/apis/trainer/v1alpha1/
    trainjob_types.go:127-177), the time the webhook stamps on each runtime patch (:303-307),
    and the status the controller writes while its JobSet runs (its source:
    tests/e2e/test_argocd_lua.py, NODE_ACTIVE)."""
    spec = train_job["spec"]
    spec.update(suspend=False, managedBy="trainer.kubeflow.org/trainjob-controller")
    for patch in spec.get("runtimePatches", []):
        patch["time"] = "2026-11-20T09:12:44Z"
    train_job["status"] = {
        "jobsStatus": [
            {"name": "node", "active": 1, "ready": 1, "succeeded": 0, "failed": 0, "suspended": 0}
        ]
    }


def _job_read_back(job: dict) -> None:
    name, spec = job["metadata"]["name"], job["spec"]
    spec.update(
        suspend=False,
        manualSelector=False,
        # the only one a pod failure policy allows (collective-job)
        podReplacementPolicy="Failed" if "podFailurePolicy" in spec else "TerminatingOrFailed",
        selector={"matchLabels": {"batch.kubernetes.io/controller-uid": UID}},
    )
    spec.setdefault("completionMode", "NonIndexed")
    for key, value in (("backoffLimit", 6), ("parallelism", 1), ("completions", 1)):
        spec.setdefault(key, value)
    template = spec["template"]
    template["metadata"]["creationTimestamp"] = None
    template["metadata"]["labels"].update(
        {
            "batch.kubernetes.io/controller-uid": UID,
            "batch.kubernetes.io/job-name": name,
            "controller-uid": UID,
            "job-name": name,
        }
    )
    pod = template["spec"]
    for key, value in (
        ("dnsPolicy", "ClusterFirst"),
        ("schedulerName", "default-scheduler"),
        ("terminationGracePeriodSeconds", 30),
        ("securityContext", {}),
    ):
        pod.setdefault(key, value)
    if "serviceAccountName" in pod:
        pod["serviceAccount"] = pod["serviceAccountName"]
    for container in [*pod.get("initContainers", []), *pod["containers"]]:
        container.setdefault("imagePullPolicy", "IfNotPresent")
        container.setdefault("terminationMessagePath", "/dev/termination-log")
        container.setdefault("terminationMessagePolicy", "File")
        for port in container.get("ports", []):
            port.setdefault("protocol", "TCP")
        for probe in (container.get(k) for k in ("startupProbe", "livenessProbe")):
            for key, value in PROBE_DEFAULTS.items():
                probe and probe.setdefault(key, value)
            if probe and "httpGet" in probe:
                probe["httpGet"].setdefault("scheme", "HTTP")

        for entry in container.get("env", []):
            if "fieldRef" in entry.get("valueFrom", {}):
                entry["valueFrom"]["fieldRef"]["apiVersion"] = "v1"


def _service_read_back(service: dict) -> None:
    """A headless Service (collective-job's): the cluster's network fields and defaults."""
    service["spec"].update(
        clusterIPs=["None"],
        ipFamilies=["IPv4"],
        ipFamilyPolicy="SingleStack",
        internalTrafficPolicy="Cluster",
        sessionAffinity="None",
        type="ClusterIP",
    )


def _claim_read_back(claim: dict) -> None:
    meta, spec = claim["metadata"], claim["spec"]
    meta["finalizers"] = ["kubernetes.io/pvc-protection"]
    meta["annotations"].update(
        {"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"}
    )
    if "volumeName" not in spec:  # provisioned
        meta["annotations"]["volume.kubernetes.io/storage-provisioner"] = "efs.csi.aws.com"
        spec["volumeName"] = f"pvc-{UID}"
    spec["volumeMode"] = "Filesystem"


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT / "examples")))
def test_a_rendered_example_read_back_from_the_cluster_imports_without_a_lossy_note(spec):
    imported = read_back_lossless(rendered_stream(spec)[1], as_read_back)
    assert not [d for d in imported.diagnostics if d.is_error]
    assert LAST_APPLIED not in imported.text
    assert all(UID not in m.text() for m in manifests_of(imported.text))  # refused: the old uid


def test_the_cli_round_trip_through_stdin(runner, tmp_path):
    spec = ROOT / "examples" / "distributed-efs.yaml"
    stream, objects = rendered_stream(spec)
    result = runner.invoke(cli, ["import", "-", "-o", str(tmp_path / "back.yaml")], input=stream)
    assert result.exit_code == 0, result.output
    rendered = runner.invoke(cli, ["render", str(tmp_path / "back.yaml"), "--stdout"])
    assert list(read_manifests([("back", rendered.stdout)])) == objects


@cache
def seed_cases() -> list[tuple[str, list[str]]]:
    """Each seed manifest with a training object, plus the seed's storage-only manifests of the
    claims it mounts; read when a test runs, so a checkout without the seeds skips only these."""
    cases = []
    for seed in SEEDS:
        text = seed_text(seed)
        for placeholder, value in PLACEHOLDERS.items():
            text = text.replace(placeholder, value)
        blocks = manifest_blocks(text)
        kinds = [{o["kind"] for o in read_manifests([("seed", b)])} for b in blocks]
        storage = [b for b, k in zip(blocks, kinds, strict=True) if k <= STORAGE_KINDS]
        for block, found in zip(blocks, kinds, strict=True):
            if found <= STORAGE_KINDS:
                continue
            extra = [
                s
                for s in storage
                if any(
                    f"claimName: {o['metadata']['name']}" in block
                    for o in read_manifests([("s", s)])
                    if o["kind"] == "PersistentVolumeClaim"
                )
            ]
            if extra:  # and the PVs the claims bind to
                extra += [s for s in storage if s not in extra and "PersistentVolumeClaim" not in s]
            cases.append((seed, [block, *extra]))
    return cases


# 000: 1, 001: 2, 003: 5 (one with its PV/PVC), 004: 2
SEED_CASE_COUNT = 10


def test_every_seed_manifest_is_covered():
    seen = {b for _, blocks in seed_cases() for b in blocks}
    for seed in SEEDS:
        shown = manifest_blocks(seed_text(seed).replace("[YOUR_REPO]", "registry.example.com"))
        assert set(shown) <= seen, seed
    assert len(seed_cases()) == SEED_CASE_COUNT


@pytest.mark.parametrize("index", range(SEED_CASE_COUNT))
def test_a_seed_manifest_imports_to_a_valid_spec_that_renders(index):
    seed, blocks = seed_cases()[index]
    imported = import_manifests([(f"seed {seed}", b) for b in blocks])
    assert not [d for d in imported.diagnostics if d.is_error], imported.diagnostics
    assert build.render_document(parse_spec(imported.text, "imported.yaml")).manifests


def _import_seed(seed: str, pick=slice(None)):
    blocks = manifest_blocks(seed_text(seed))[pick]
    return import_manifests([(f"seed {seed}", "---\n".join(blocks))])


def test_seed_003_typo_is_listed_with_a_suggestion_and_its_nfs_pv_is_read_back():
    imported = _import_seed("003", slice(-2, None))  # 示例5: pv-pvc.yaml + data_demo.yaml
    (typo,) = [n for n in imported.notes if "spec.cleanPolicy" in str(n)]
    assert "did you mean 'cleanPodPolicy'" in str(typo)
    assert typo.kind == "cosmetic"  # the API server dropped it from the input as well
    (volume,) = imported.spec["spec"]["volumes"]
    assert volume["nfs"] == {"server": "10.12.201.xx", "path": "/nas"}
    assert (volume["capacity"], volume["reclaimPolicy"], volume["storageClassName"]) == (
        "10Gi",
        "Recycle",
        "slow",
    )
    renamed = [
        n for n in imported.notes if str(n).startswith("PersistentVolumeClaim/nfs-pvc: renamed")
    ]
    assert [n.kind for n in renamed] == ["cosmetic"]  # the pods mount the same export


def test_seed_004_stream_becomes_a_distributed_job_with_data_preparation():
    imported = _import_seed("004")
    spec = imported.spec["spec"]
    assert spec["workload"] == "distributed-job"
    assert spec["distributed"] == {
        "volume": "efs",
        "trainConfigDir": "quick_start",
        "nic": "eth0",
        "port": 7164,
        "portsNum": 2,
        "portsNumSparse": 2,
        "trainerCount": 3,
        "hostPorts": True,
    }
    assert spec["dataPrep"] == {"volume": "efs", "image": "paddlepaddle/paddle-tutorial:k8s_data"}
    notes = "\n".join(map(str, imported.notes))
    assert "OUT_DIR /efs/paddle-cluster-job becomes /home/jobpath/paddle-cluster-job" in notes
    assert 'requests.storage "50Gi" differs' in notes
    assert "imagePullPolicy" in notes  # the data Job's Always is not carried over


def test_seed_001_cluster_job_lists_what_paddlegen_changes():
    text = seed_text("001").replace("[YOUR_REPO]", "registry.example.com")
    imported = import_manifests([("seed 001", manifest_blocks(text)[1])])
    notes = "\n".join(map(str, imported.notes))
    assert "TRAINER_COUNT was not set" in notes
    assert "JOB_NAMESPACE='default' now comes from the pod's namespace" in notes
    assert imported.spec["spec"]["distributed"]["trainConfigDir"] == "recommendation"


# The pod settings spec-wide, and a role's own: each comes back from the objects.
# Training code and credentials as files: ConfigMap and Secret volumes come back as they were.
OBJECT_VOLUMES = [
    {
        "name": "code",
        "mountPath": "/code",
        "configMap": {"name": "code", "items": [{"key": "a.py", "path": "a.py", "mode": 365}]},
    },
    {
        "name": "creds",
        "mountPath": "/creds",
        "readOnly": True,
        "secret": {"secretName": "creds", "defaultMode": 256, "optional": True},
    },
]
POD_SETTINGS_CASES = [
    (workload, volcano, role)
    for workload in ("job", "distributed-job", "paddlejob", "kubeflow-paddlejob", "collective-job")
    for volcano in (False, True)
    for role in (False, True)
]


def roles(workload: str, worker: dict) -> dict:
    """The spec fields of ``workload``'s roles with ``worker``'s own: one trainer for a job,
    else two, and a parameter server for the operators' PaddleJobs."""
    ps = {"ps": {"replicas": 1}} if workload in ("paddlejob", "kubeflow-paddlejob") else {}
    return {"worker": {"replicas": 1 if workload == "job" else 2, **worker}, **ps}


def pod_settings_spec(workload: str, volcano: bool, role: bool) -> str:
    fields: dict = {**POD_SETTINGS, **ENV_SOURCES}
    worker = {**ROLE_POD_SETTINGS, **ROLE_ENV_SOURCES} if role else {}
    if workload == "distributed-job":
        fields["distributed"] = {"volume": "data", "trainConfigDir": "qs"}
    if volcano:
        fields["scheduling"] = {"scheduler": "volcano", "priorityClassName": "gang"}
        if workload in ("job", "distributed-job", "collective-job"):
            fields["priorityClassName"] = None  # a batch Job's pods carry the gang's
            worker.pop("priorityClassName", None)  # (rule priority-class)
    return text_of(
        spec(
            workload,
            metadata={"namespace": "ml", "annotations": {"owner": "ads"}},
            # as the API server defaults it in the data Job (the operators' pods keep none)
            imagePullPolicy="IfNotPresent",
            **roles(workload, worker),
            volumes=[{"name": "data", "mountPath": "/data", "emptyDir": {}}, *OBJECT_VOLUMES],
            dataPrep={"volume": "data", "image": "r/data:v1"},
            **fields,
        )
    )


@pytest.mark.parametrize(("workload", "volcano", "role"), POD_SETTINGS_CASES)
def test_the_pod_settings_come_back_from_the_objects(workload, volcano, role):
    text = pod_settings_spec(workload, volcano, role)
    assert [d for d in diagnostics(text) if d.severity == "error"] == []  # a spec validate takes
    manifests = build.render_valid(parse_spec(text, "spec.yaml")).manifests
    imported = imported_alike(manifests)
    spec = imported.spec["spec"]
    for key in (
        "imagePullSecrets",
        "podLabels",
        "podAnnotations",
        "runtimeClassName",
        "dnsPolicy",
        "dnsConfig",
        "topologySpreadConstraints",
    ):
        assert spec[key] == POD_SETTINGS[key]
        assert spec["worker"].get(key) == (ROLE_POD_SETTINGS[key] if role else None)
    # the role's own token is the spec-wide one: one value serves every pod
    assert spec["automountServiceAccountToken"] is True
    assert spec["volumes"][1:] == OBJECT_VOLUMES
    for key, value in ENV_SOURCES.items():  # a single role's may be the spec's (no data Job's)
        assert spec["worker"].get(key, spec.get(key)) == (ROLE_ENV_SOURCES[key] if role else value)
    read_back_lossless([m.obj for m in manifests], as_read_back)


FOLLOWING = """\
apiVersion: paddlegen/v1
kind: TrainingJob
metadata: {name: follow}
spec:
  workload: paddlejob
  image: r/train:v1
  worker: {replicas: 1}
  volumes:
    - {name: data, mountPath: /data, nfs: {server: 10.0.0.1, path: /data}, capacity: 10Gi}
    - {name: scratch, mountPath: /scratch, dynamic: {}, capacity: 1Gi}
  dataPrep: {image: r/prep:v1, volume: data}
  scheduling: {scheduler: volcano}
"""


def test_derived_values_of_a_round_tripped_spec_follow_a_later_change_of_replicas():
    """render -> import -> more workers -> render: the gang, the data Job's split and the
    single trainer's ReadWriteOnce claim follow, as they would in the spec that was rendered."""
    manifests = manifests_of(FOLLOWING)
    imported = imported_alike(manifests)
    spec = imported.spec["spec"]
    assert "minAvailable" not in spec["scheduling"]
    assert "splitCount" not in spec["dataPrep"] and "outDir" not in spec["dataPrep"]
    assert [v.get("accessModes") for v in spec["volumes"]] == [None, None]
    # the PV's class of its own (no namespace) follows the job's name: no pv-binding warning
    assert "storageClassName" not in spec["volumes"][0]
    assert "pv-binding" not in {d.rule for d in imported.diagnostics}

    data = yaml.safe_load(imported.text)
    data["spec"]["worker"]["replicas"] = 3
    before, after = (
        {f"{m.kind}/{m.name}": m.obj for m in found}
        for found in (manifests, manifests_of(yaml.safe_dump(data)))
    )

    def policy(objects):
        return objects["PaddleJob/follow"]["spec"]["schedulingPolicy"]["minAvailable"]

    def split(objects):
        env = objects["Job/follow-data"]["spec"]["template"]["spec"]["containers"][0]["env"]
        return next(e["value"] for e in env if e["name"] == "SPLIT_COUNT")

    def modes(objects):
        return objects["PersistentVolumeClaim/follow-scratch"]["spec"]["accessModes"]

    assert (policy(before), split(before), modes(before)) == (1, "1", ["ReadWriteOnce"])
    assert (policy(after), split(after), modes(after)) == (3, "3", ["ReadWriteMany"])


def test_a_derived_value_the_input_sets_otherwise_stays_in_the_spec():
    stream = "---\n".join(
        m.text() for m in manifests_of(FOLLOWING.replace("replicas: 1}", "replicas: 4}"))
    )
    stream = stream.replace("minAvailable: 4", "minAvailable: 2").replace(
        "value: '4'", "value: '8'"
    )
    imported = import_manifests([("in.yaml", stream)])
    assert imported.spec["spec"]["scheduling"]["minAvailable"] == 2
    assert imported.spec["spec"]["dataPrep"]["splitCount"] == 8


def test_every_example_in_one_stream_imports_to_a_spec_per_job_that_renders_the_same():
    """A folder of manifests, or `kubectl get -A -o yaml`: each job gets its spec, its storage,
    data Job, RBAC and run record with it, and nothing is left over."""
    streams = {spec.name: rendered_stream(spec) for spec in EXAMPLES}
    result = import_jobs([(name, stream) for name, (stream, _) in streams.items()])
    assert result.notes == []
    assert len(result.jobs) == len(EXAMPLES)
    for job, (name, (_, objects)) in zip(result.jobs, streams.items(), strict=True):
        assert job.notes == [], name
        assert f"# imported by `paddlegen import` from {name}\n" in job.text
        assert [m.obj for m in manifests_of(job.text)] == objects, name


INIT_CONTAINER_CASES = [
    (workload, role)
    for workload in ("job", "distributed-job", "paddlejob", "kubeflow-paddlejob")
    for role in (False, True)
]


def init_containers_spec(workload: str, role: bool) -> str:
    """Init containers (and, but for paddlejob, sidecars) spec-wide; with ``role`` the workers
    have their own."""
    sidecars = workload != "paddlejob"
    worker = {"initContainers": INIT_CONTAINERS[:1]} if role else {}
    if role and sidecars:
        worker["sidecars"] = ROLE_SIDECARS
    fields: dict = {"sidecars": SIDECARS} if sidecars else {}
    if workload == "distributed-job":
        fields["distributed"] = {"volume": "data", "trainConfigDir": "qs"}
    return text_of(
        spec(
            workload,
            metadata={"namespace": "ml"},
            imagePullPolicy="IfNotPresent",  # as the API server defaults it in the data Job
            volumes=[
                {"name": "data", "mountPath": "/data", "emptyDir": {}},
                {"name": "code", "mountPath": "/code", "emptyDir": {}},
                {"name": "logs", "mountPath": "/var/log/train", "readOnly": True, "emptyDir": {}},
            ],
            initContainers=INIT_CONTAINERS,
            **roles(workload, worker),
            dataPrep={"volume": "data", "image": "r/data:v1"},
            **fields,
        )
    )


@pytest.mark.parametrize(("workload", "role"), INIT_CONTAINER_CASES)
def test_init_containers_and_sidecars_come_back_from_the_objects(workload, role):
    text = init_containers_spec(workload, role)
    manifests = manifests_of(text)
    spec, given = imported_alike(manifests).spec["spec"], yaml.safe_load(text)["spec"]
    for key in ("initContainers", "sidecars"):
        # each in its list, for its role (a single role's may be the spec's: the data Job runs
        # none); the objects above pin their fields
        for role in ("ps", "worker"):
            if role in given:
                wanted = given[role].get(key, given.get(key, []))
                back = spec[role].get(key, spec.get(key, []))
                assert [c["name"] for c in back] == [c["name"] for c in wanted]
    read_back_lossless([m.obj for m in manifests], as_read_back)


# What a TrainJob carries (Trainer v2.3.0's runtime patches: workloads/trainjob), each
# spec-wide: the pod settings, env (the trainer's), volumes, /dev/shm, GPUs, security.
TRAINJOB_POD_SETTINGS = {
    key: POD_SETTINGS[key]
    for key in (
        "imagePullSecrets",
        "serviceAccountName",
        "podLabels",
        "podAnnotations",
        "terminationGracePeriodSeconds",
    )
}
TRAINJOB_CASES = {
    "default": {},
    "volcano": {"scheduling": {"scheduler": "volcano", "queue": "research"}},
    "runtime": {"trainjob": {"runtime": "paddle-copy"}},
    "runtime-volcano": {
        "trainjob": {"runtime": "paddle-copy"},
        "scheduling": {"scheduler": "volcano"},
    },
}
TRAINJOB_COMMAND = ["python3", "-m", "paddle.distributed.launch", "--log_dir", "/logs"]


def trainjob_manifests(extra: dict) -> list[Manifest]:
    """What a trainjob spec with every field a TrainJob carries renders, ``extra`` given too."""
    fields = {
        "command": TRAINJOB_COMMAND,
        "env": ENV_SOURCES["env"],
        "resources": {"requests": {"cpu": "4"}, "limits": {"memory": "16Gi"}},
        "gpus": 2,
        "shm": "8Gi",
        **TRAINJOB_POD_SETTINGS,
        "nodeSelector": {"pool": "gpu"},
        "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "security": {"runAsNonRoot": True, "runAsUser": 1000, "fsGroup": 1000},
        "worker": {"replicas": 3},
        "volumes": [{"name": "data", "mountPath": "/data", "emptyDir": {}}, *OBJECT_VOLUMES],
        "run": {"activeDeadlineSeconds": 3600},
        **extra,
    }
    metadata = {"namespace": "ml", "labels": {"team": "ads"}}
    return manifests_of(text_of(spec("trainjob", metadata=metadata, **fields)))


@pytest.mark.parametrize("case", TRAINJOB_CASES)
def test_a_trainjob_comes_back_with_its_runtime_its_gang_and_its_pod_settings(case):
    extra = TRAINJOB_CASES[case]
    manifests = trainjob_manifests(extra)
    spec = imported_alike(manifests).spec["spec"]
    assert spec.get("trainjob") == extra.get("trainjob")
    assert spec.get("scheduling", {}).get("scheduler") == extra.get("scheduling", {}).get(
        "scheduler"
    )
    assert (spec["worker"], spec["gpus"], spec["shm"]) == ({"replicas": 3}, 2, "8Gi")
    assert (spec["command"], spec["env"]) == (TRAINJOB_COMMAND, ENV_SOURCES["env"])
    assert {key: spec[key] for key in TRAINJOB_POD_SETTINGS} == TRAINJOB_POD_SETTINGS
    assert spec["volumes"][1:] == OBJECT_VOLUMES
    read_back_lossless([m.obj for m in manifests], as_read_back)


# What only a TrainingRuntime of the job's own carries (workloads/trainjob/runtime.py).
RUNTIME_POD_SETTINGS = {
    key: POD_SETTINGS[key] for key in ("automountServiceAccountToken", "dnsPolicy", "dnsConfig")
}
OWN_RUNTIME_CASES = {
    "pod-settings": RUNTIME_POD_SETTINGS,
    "volcano-restarts": {
        **RUNTIME_POD_SETTINGS,
        "scheduling": {"scheduler": "volcano", "queue": "research"},
        "run": {"restarts": 2, "activeDeadlineSeconds": 3600},
    },
    "dns-config": {"dnsConfig": {"options": [{"name": "ndots", "value": "1"}]}},
    "queued": {"dnsPolicy": "Default", "scheduling": {"kueue": {"queue": "team-a"}}},
}


@pytest.mark.parametrize("case", OWN_RUNTIME_CASES)
def test_a_trainjobs_own_runtime_gives_back_its_pod_settings(case):
    extra = OWN_RUNTIME_CASES[case]
    manifests = trainjob_manifests(extra)
    objects = [m.obj for m in manifests]
    (runtime,) = [o for o in objects if o["kind"] == "TrainingRuntime"]
    (node,) = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    pod = node["template"]["spec"]["template"]["spec"]
    for key in RUNTIME_POD_SETTINGS:
        assert pod.get(key) == extra.get(key, False if key.startswith("automount") else None)
    spec = imported_alike(manifests).spec["spec"]
    assert {key: spec[key] for key in RUNTIME_POD_SETTINGS if key in spec} == {
        key: extra[key] for key in RUNTIME_POD_SETTINGS if key in extra
    }
    assert spec.get("run", {}).get("restarts") == extra.get("run", {}).get("restarts")
    read_back_lossless(objects, as_read_back)


@pytest.mark.parametrize("kind", ["required", "preferred"])
@pytest.mark.parametrize("workload", KUEUE_WORKLOADS)
def test_kueues_topology_comes_back_as_the_specs_topology(workload, kind):
    scheduling = {"kueue": {"queue": "team-a"}, "topology": {kind: "topology.example.com/rack"}}
    settings = {"run": {"activeDeadlineSeconds": 600}, "podAnnotations": {"team": "a"}}
    imported = imported_alike(manifests_of(text_of(kueue_spec(workload, scheduling, **settings))))
    assert imported.spec["spec"]["scheduling"]["topology"] == {kind: "topology.example.com/rack"}
    assert imported.spec["spec"]["podAnnotations"] == {"team": "a"}


@pytest.mark.parametrize("workload", KUEUE_WORKLOADS)
def test_the_kueue_queue_comes_back_from_the_training_objects_labels(workload):
    manifests = manifests_of(text_of(kueue_spec(workload)))
    imported = imported_alike(manifests)
    assert imported.spec["spec"]["scheduling"] == KUEUE
    assert "labels" not in imported.spec["metadata"]
    # read back from the cluster: the queue is not lost either (a data Job's server-defaulted
    # imagePullPolicy is, beside a kubeflow-paddlejob or trainjob: another matter)
    stream = "---\n".join(yaml.safe_dump(as_read_back(m.obj)) for m in manifests)
    read_back = import_manifests([("in.yaml", stream)])
    assert read_back.spec["spec"]["scheduling"] == imported.spec["spec"]["scheduling"]
    assert not [str(n) for n in read_back.lossy if "kueue" in str(n).lower()]


def test_kueues_labels_on_a_paddleflow_paddlejob_are_lost_with_the_reason():
    text = HEADER + "metadata: {name: demo}\nspec: {workload: paddlejob, image: x:1}\n"
    manifests = build.render_document(parse_spec(text, "spec.yaml"), argocd=False).manifests
    (paddlejob,) = [m.obj for m in manifests]
    paddlejob["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "team-a"  # by hand
    imported = import_manifests([("in.yaml", yaml.safe_dump(paddlejob))])
    assert "scheduling" not in imported.spec["spec"]
    assert "labels" not in imported.spec["metadata"]
    (note,) = [str(n) for n in imported.lossy]
    assert "Kueue's labels {'queue': 'team-a'} are lost" in note
    assert "Kueue cannot queue a PaddleFlow PaddleJob (it has no suspend)" in note


def test_a_queued_collective_job_without_the_preemption_rule_says_it_gains_it():
    manifests = build.render_document(
        parse_spec(text_of(kueue_spec("collective-job")), "spec.yaml"), argocd=False
    ).manifests
    objects = [m.obj for m in manifests]
    (job,) = [o for o in objects if o["metadata"]["name"] == "demo" and o["kind"] == "Job"]
    rules = job["spec"]["podFailurePolicy"]["rules"]
    job["spec"]["podFailurePolicy"]["rules"] = [
        {**r, "action": "FailJob"} if r["action"] == "Count" else r for r in rules
    ]
    stream = "---\n".join(yaml.safe_dump(o) for o in objects)
    imported = import_manifests([("in.yaml", stream)])
    (note,) = [str(n) for n in imported.lossy if "podFailurePolicy" in str(n)]
    assert "or, queued, counts against backoffLimit: Kueue's preemption stops ranks" in note
