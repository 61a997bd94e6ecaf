"""Facts about the `trainjob` workload and paddlegen's Paddle runtimes a snapshot cannot pin."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft4Validator

from paddlegen.cli import cli
from paddlegen.render.syncwaves import HOOK
from paddlegen.workloads.shared import launcher
from paddlegen.workloads.trainjob import runtime as trainjob_runtime
from tests.builders import HEADER, rendered_objects

RUNTIMES = [f"paddle-distributed{kind}" for kind in ("", "-queued", "-volcano", "-volcano-queued")]
SCHEMAS = Path(__file__).resolve().parents[2] / "schemas" / "crds" / "trainer.kubeflow.org"
BODY = """\
metadata: {name: resnet, namespace: ml}
spec:
  workload: trainjob
  image: r/resnet:v1
  resources: {limits: {memory: 8Gi}}
  worker: {replicas: 3}
"""


def render(body: str = BODY, extra: str = "  args: [train.py]\n") -> dict[tuple[str, str], Any]:
    return rendered_objects(HEADER + body + extra)


def train_job(extra: str = "  args: [train.py]\n") -> dict[str, Any]:
    return dict(render(extra=extra)[("TrainJob", "resnet")])


def patched_pod(obj: dict[str, Any]) -> dict[str, Any]:
    (patch,) = obj["spec"]["runtimePatches"]
    assert patch["manager"] == "paddlegen/spec"
    (node,) = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert node["name"] == "node"
    return dict(node["template"]["spec"]["template"])


def runtime_pod(runtime: dict[str, Any]) -> dict[str, Any]:
    (node,) = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    return dict(node["template"]["spec"]["template"]["spec"])


def test_the_trainjob_carries_the_nodes_image_command_env_and_resources():
    obj = train_job()
    assert obj["apiVersion"] == "trainer.kubeflow.org/v1alpha1"
    assert obj["spec"]["runtimeRef"] == {
        "name": "paddle-distributed",
        "apiGroup": "trainer.kubeflow.org",
        "kind": "ClusterTrainingRuntime",
    }
    trainer = obj["spec"]["trainer"]
    assert trainer["numNodes"] == 3
    assert trainer["image"] == "r/resnet:v1"
    # Trainer replaces the runtime's command with the TrainJob's: the wrapper comes along.
    assert trainer["command"] == [*launcher.WRAPPER, *launcher.LAUNCHER]
    assert trainer["args"] == ["train.py"]
    # The runtime cannot know the node count; plain ML sets no env of its own.
    assert trainer["env"] == [{"name": "PADDLE_NNODES", "value": "3"}]
    assert trainer["resourcesPerNode"]["limits"] == {"memory": "8Gi"}
    # A TrainJob is a Sync hook, as every object that runs is.
    assert obj["metadata"]["annotations"][HOOK] == "Sync"


def test_the_spec_command_runs_after_the_wrapper_and_the_spec_env_after_the_node_count():
    obj = train_job('  command: [python3, train.py]\n  env: [{name: FLAGS_x, value: "1"}]\n')
    trainer = obj["spec"]["trainer"]
    assert trainer["command"] == [*launcher.FORWARDING_WRAPPER, "python3", "train.py"]
    assert "args" not in trainer
    assert [e["name"] for e in trainer["env"]] == ["PADDLE_NNODES", "FLAGS_x"]


def test_gpus_go_to_resources_per_node():
    trainer = train_job("  args: [train.py]\n  gpus: 2\n")["spec"]["trainer"]
    assert trainer["resourcesPerNode"]["limits"]["nvidia.com/gpu"] == "2"


def test_the_pod_settings_trainer_can_carry_go_in_one_runtime_patch():
    extra = """\
  args: [train.py]
  shm: 1Gi
  nodeSelector: {gpu: a100}
  tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]
  serviceAccountName: trainer
  imagePullSecrets: [regcred]
  terminationGracePeriodSeconds: 60
  podLabels: {team: vision}
  podAnnotations: {note: x}
  security: {fsGroup: 1000}
  volumes:
  - {name: data, mountPath: /data, claim: {name: shared}, readOnly: true}
"""
    pod = patched_pod(train_job(extra))
    assert pod["metadata"]["labels"]["team"] == "vision"
    assert pod["metadata"]["labels"]["app.kubernetes.io/instance"] == "resnet"
    assert pod["metadata"]["annotations"] == {"note": "x"}
    spec = pod["spec"]
    assert spec["nodeSelector"] == {"gpu": "a100"}
    assert spec["tolerations"] == [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert spec["serviceAccountName"] == "trainer"
    assert spec["imagePullSecrets"] == [{"name": "regcred"}]
    assert spec["terminationGracePeriodSeconds"] == 60
    assert spec["securityContext"] == {"fsGroup": 1000}
    assert [v["name"] for v in spec["volumes"]] == ["data", "dshm"]
    assert spec["volumes"][1] == {
        "name": "dshm",
        "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"},
    }
    (container,) = spec["containers"]
    assert container["name"] == "node"
    assert container["volumeMounts"] == [
        {"name": "data", "mountPath": "/data", "readOnly": True},
        {"name": "dshm", "mountPath": "/dev/shm"},
    ]
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    # Trainer's webhook refuses env for container `node` in a patch: env goes in the trainer.
    assert "env" not in container


def test_volcano_picks_the_gang_runtime_and_its_queue_goes_on_the_jobset_template():
    obj = train_job("  args: [train.py]\n  scheduling: {scheduler: volcano, queue: research}\n")
    assert obj["spec"]["runtimeRef"]["name"] == "paddle-distributed-volcano"
    (patch,) = obj["spec"]["runtimePatches"]
    assert patch["trainingRuntimeSpec"]["template"]["metadata"] == {
        "annotations": {"scheduling.volcano.sh/queue-name": "research"}
    }
    # The runtime makes the pods Volcano's; the TrainJob's pods carry no scheduler of their own.
    pod = patched_pod(obj)
    assert "schedulerName" not in pod["spec"]
    assert "scheduling.volcano.sh/queue-name" not in pod["metadata"].get("annotations", {})


@pytest.mark.parametrize(
    ("scheduling", "runtime"),
    [
        ("{kueue: {queue: team}}", "paddle-distributed-queued"),
        ("{scheduler: volcano, kueue: {queue: team}}", "paddle-distributed-volcano-queued"),
    ],
)
def test_a_queued_trainjob_picks_the_queued_runtime(scheduling, runtime):
    obj = train_job(f"  args: [train.py]\n  scheduling: {scheduling}\n")
    assert obj["spec"]["runtimeRef"]["name"] == runtime
    assert obj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team"


def test_a_named_runtime_wins_and_the_deadline_is_the_trainjobs():
    obj = train_job(
        "  args: [train.py]\n  trainjob: {runtime: team-paddle}\n"
        "  run: {activeDeadlineSeconds: 600}\n"
    )
    assert obj["spec"]["runtimeRef"]["name"] == "team-paddle"
    assert obj["spec"]["activeDeadlineSeconds"] == 600


def test_the_runtimes_carry_collective_jobs_launcher_contract():
    plain, plain_queued, volcano, volcano_queued = trainjob_runtime.runtimes()
    assert [r["metadata"]["name"] for r in trainjob_runtime.runtimes()] == RUNTIMES
    for runtime, queued in ((plain, False), (plain_queued, True), (volcano, False),
                            (volcano_queued, True)):  # fmt: skip
        assert runtime["spec"]["mlPolicy"] == {"numNodes": 1}  # plain ML: numNodes is Trainer's
        (node,) = runtime["spec"]["template"]["spec"]["replicatedJobs"]
        assert (node["name"], node["replicas"]) == ("node", 1)
        assert node["template"]["metadata"]["labels"] == {
            "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"
        }
        job = node["template"]["spec"]
        assert job["completionMode"] == "Indexed"
        # A queued one's ignores a rank Kueue's preemption stopped (tests/cluster/test_node_kueue)
        assert job["podFailurePolicy"] == launcher.failure_policy("node", queued)
        # No JobSet failurePolicy: one failed Job fails the JobSet, nothing restarts it.
        assert "failurePolicy" not in runtime["spec"]["template"]["spec"]
        pod = runtime_pod(runtime)
        assert pod["restartPolicy"] == "Never"
        (container,) = pod["containers"]
        assert container["name"] == "node"
        assert container["command"] == [*launcher.WRAPPER, *launcher.LAUNCHER]
        env = {e["name"]: e for e in container["env"]}
        assert list(env) == ["POD_IP", "PADDLE_RANK", "PADDLE_JOB_ID", "PADDLE_MASTER"]
        assert env["PADDLE_RANK"]["valueFrom"]["fieldRef"]["fieldPath"] == (
            "metadata.annotations['batch.kubernetes.io/job-completion-index']"
        )
        assert env["PADDLE_JOB_ID"]["valueFrom"]["fieldRef"]["fieldPath"] == (
            "metadata.labels['jobset.sigs.k8s.io/jobset-name']"
        )
        # Rank 0 by name: JobSet's pod 0 of Job 0 of replicated job node, in the JobSet's
        # subdomain; the wrapper swaps in rank 0's own IP on rank 0.
        assert env["PADDLE_MASTER"]["value"] == "$(PADDLE_JOB_ID)-node-0-0.$(PADDLE_JOB_ID):6768"
        assert container["ports"] == [{"name": "master", "containerPort": 6768, "protocol": "TCP"}]
    for runtime in (plain, plain_queued):
        assert "podGroupPolicy" not in runtime["spec"]
        assert "schedulerName" not in runtime_pod(runtime)
    for runtime in (volcano, volcano_queued):
        assert runtime["spec"]["podGroupPolicy"] == {"volcano": {}}
        assert runtime_pod(runtime)["schedulerName"] == "volcano"


def test_the_runtimes_are_valid_cluster_training_runtimes():
    validator = Draft4Validator(
        json.loads((SCHEMAS / "clustertrainingruntime_v1alpha1.json").read_text("utf-8"))
    )
    for runtime in trainjob_runtime.runtimes():
        assert list(validator.iter_errors(runtime)) == []
    broken = trainjob_runtime.runtimes()[0]
    broken["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["bogus"] = 1
    assert not validator.is_valid(broken)


def test_a_rendered_trainjob_is_a_valid_trainjob():
    validator = Draft4Validator(json.loads((SCHEMAS / "trainjob_v1alpha1.json").read_text("utf-8")))
    extra = "  args: [train.py]\n  shm: 1Gi\n  scheduling: {scheduler: volcano}\n"
    assert list(validator.iter_errors(train_job(extra))) == []


def test_paddlegen_runtime_prints_all_four_and_writes_the_same_bytes(runner, tmp_path):
    printed = runner.invoke(cli, ["runtime"])
    assert printed.exit_code == 0, printed.stderr
    assert printed.stdout == trainjob_runtime.runtimes_text()
    assert [d["metadata"]["name"] for d in yaml.safe_load_all(printed.stdout)] == RUNTIMES
    target = tmp_path / "platform" / "runtimes.yaml"
    written = runner.invoke(cli, ["runtime", "-o", str(target)])
    assert written.exit_code == 0, written.stderr
    assert target.read_text("utf-8") == printed.stdout
    assert list(target.parent.iterdir()) == [target]  # no temporary file left behind
    target.write_text("other\n", encoding="utf-8")
    refused = runner.invoke(cli, ["runtime", "-o", str(target)])
    assert refused.exit_code == 2
    assert "already exists" in refused.stderr
    assert target.read_text("utf-8") == "other\n"  # nothing on disk changed


def test_under_a_read_only_root_paddle_writes_to_an_empty_dir_at_tmp():
    trainjob = train_job("  args: [train.py]\n  security: {readOnlyRootFilesystem: true}\n")
    assert {"name": "PADDLE_LOG_DIR", "value": "/tmp/paddle-log"} in trainjob["spec"]["trainer"][
        "env"
    ]
    pod = patched_pod(trainjob)["spec"]
    assert {"name": "paddle-tmp", "emptyDir": {}} in pod["volumes"]
    (node,) = pod["containers"]
    assert {"name": "paddle-tmp", "mountPath": "/tmp"} in node["volumeMounts"]


RESTARTS = "  args: [train.py]\n  run: {restarts: 2}\n"


@pytest.mark.parametrize(
    ("scheduling", "runtime"),
    [("", "paddle-distributed"), ("  scheduling: {scheduler: volcano, kueue: {queue: q}}\n",
                                  "paddle-distributed-volcano-queued")],
)  # fmt: skip
def test_with_restarts_the_trainjob_runs_on_a_runtime_of_its_own_that_restarts_the_group(
    scheduling, runtime
):
    objects = render(extra=RESTARTS + scheduling)
    assert objects[("TrainJob", "resnet")]["spec"]["runtimeRef"] == {
        "name": "resnet",
        "apiGroup": "trainer.kubeflow.org",
        "kind": "TrainingRuntime",
    }
    own = objects[("TrainingRuntime", "resnet")]
    assert own["metadata"]["namespace"] == "ml"
    assert own["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] == "0"  # before it
    assert HOOK not in own["metadata"]["annotations"]
    # paddlegen's runtime for the scheduler and the queue, with the JobSet's failure policy
    (shared,) = [r for r in trainjob_runtime.runtimes() if r["metadata"]["name"] == runtime]
    template, theirs = own["spec"]["template"]["spec"], shared["spec"]["template"]["spec"]
    assert template["failurePolicy"]["maxRestarts"] == 2
    assert template["failurePolicy"]["rules"][0]["action"] == "FailJobSet"
    (node,), (shared_node,) = template["replicatedJobs"], theirs["replicatedJobs"]
    assert node["template"]["spec"].pop("backoffLimit") == 0  # never one rank alone
    assert node == shared_node
    assert {k: v for k, v in own["spec"].items() if k != "template"} == {
        k: v for k, v in shared["spec"].items() if k != "template"
    }
    validator = Draft4Validator(
        json.loads((SCHEMAS / "trainingruntime_v1alpha1.json").read_text("utf-8"))
    )
    assert list(validator.iter_errors(objects[("TrainingRuntime", "resnet")])) == []


def test_with_restarts_the_deadline_bounds_each_attempt_not_the_trainjob():
    """Trainer fails a TrainJob for good once its own deadline passes, counted from its
    creation; an attempt's Job past its deadline fails alone, and the JobSet restarts it."""
    run = "  args: [train.py]\n  run: {restarts: 2, activeDeadlineSeconds: 600}\n"
    objects = render(extra=run)
    assert "activeDeadlineSeconds" not in objects[("TrainJob", "resnet")]["spec"]
    template = objects[("TrainingRuntime", "resnet")]["spec"]["template"]["spec"]
    (node,) = template["replicatedJobs"]
    assert node["template"]["spec"]["activeDeadlineSeconds"] == 600
    assert template["failurePolicy"]["maxRestarts"] == 2
    # with no restarts nothing would start again: the TrainJob's deadline bounds the run
    once = render(extra="  args: [train.py]\n  run: {activeDeadlineSeconds: 600}\n")
    assert once[("TrainJob", "resnet")]["spec"]["activeDeadlineSeconds"] == 600


def test_restarts_and_a_runtime_of_the_specs_choice_are_refused():
    from tests.builders import findings

    body = BODY.replace("metadata: {name: resnet, namespace: ml}\n", "") + (
        "  args: [t.py]\n  run: {restarts: 2}\n  trainjob: {runtime: mine}\n"
    )
    (found,) = [f for f in findings(body) if "[group-restarts]" in f]
    assert "with run.restarts the TrainJob runs on a TrainingRuntime of its own" in found
