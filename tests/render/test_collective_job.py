"""Facts about the `collective-job` workload that a snapshot cannot pin alone."""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

import pytest

from paddlegen.pipeline import load
from paddlegen.render.syncwaves import HOOK, WAVE
from paddlegen.spec.loader import parse_spec
from paddlegen.workloads.shared.launcher import (
    FORWARDING_WRAPPER,
    LLM_SCRIPT,
    LLM_WRAPPER,
    MASTER_SCRIPT,
    NO_NODE_COUNT_EXIT,
    WRAPPER,
)
from tests.builders import HEADER, rendered_objects

BODY = """\
metadata: {name: resnet, namespace: ml}
spec:
  workload: collective-job
  image: r/resnet:v1
  resources: {limits: {memory: 8Gi}}
  worker: {replicas: 3}
"""


def render(body: str = BODY, extra: str = "  args: [train.py]\n") -> dict[tuple[str, str], Any]:
    return rendered_objects(HEADER + body + extra)


def container(objects: dict[tuple[str, str], Any], name: str = "resnet") -> dict[str, Any]:
    (found,) = objects[("Job", name)]["spec"]["template"]["spec"]["containers"]
    return dict(found)


def test_an_indexed_job_runs_every_rank_at_once_and_fails_as_a_whole():
    job = render()[("Job", "resnet")]["spec"]
    assert (job["parallelism"], job["completions"], job["completionMode"]) == (3, 3, "Indexed")
    # One failed rank, or an evicted one, fails the Job at once; no index is retried alone.
    assert job["podFailurePolicy"] == {
        "rules": [
            {
                "action": "FailJob",
                "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
            },
            {
                "action": "FailJob",
                "onExitCodes": {"containerName": "paddle", "operator": "NotIn", "values": [0]},
            },
        ]
    }
    assert "backoffLimitPerIndex" not in job and "backoffLimit" not in job
    assert job["template"]["spec"]["restartPolicy"] == "Never"  # the policy allows no other


def test_the_spec_run_fields_land_on_the_job():
    run = "  run: {backoffLimit: 2, activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 60}\n"
    job = render(BODY + run)[("Job", "resnet")]["spec"]
    assert (job["backoffLimit"], job["activeDeadlineSeconds"]) == (2, 600)
    assert job["ttlSecondsAfterFinished"] == 60


def test_a_headless_service_names_every_pod_before_it_is_ready():
    objects = render()
    service = objects[("Service", "resnet")]
    assert service["metadata"]["namespace"] == "ml"
    assert service["spec"] == {
        "clusterIP": "None",
        "publishNotReadyAddresses": True,
        # the Job controller's label on the training pods, not on the data Job's
        "selector": {"batch.kubernetes.io/job-name": "resnet"},
    }
    pod = objects[("Job", "resnet")]["spec"]["template"]["spec"]
    assert pod["subdomain"] == "resnet"  # pod i: resnet-i.resnet
    # there before the pods that look the names up; not a hook: it stays between runs
    assert service["metadata"]["annotations"] == {WAVE: "0"}
    assert objects[("Job", "resnet")]["metadata"]["annotations"][HOOK] == "Sync"
    assert list(objects).index(("Service", "resnet")) < list(objects).index(("Job", "resnet"))


def test_the_env_is_the_launchers_contract_before_the_specs_own():
    env = container(render(BODY + "  env: [{name: EPOCHS, value: '3'}]\n"))["env"]
    assert env == [
        {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        {
            "name": "PADDLE_RANK",
            "valueFrom": {
                "fieldRef": {
                    "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"
                }
            },
        },
        {"name": "PADDLE_NNODES", "value": "3"},
        {"name": "PADDLE_JOB_ID", "value": "resnet"},
        {"name": "PADDLE_MASTER", "value": "resnet-0.resnet:6768"},
        {"name": "EPOCHS", "value": "3"},
    ]


def test_the_master_port_is_a_setting():
    found = container(render(BODY + "  collective: {port: 8090}\n"))
    assert found["ports"] == [{"name": "master", "containerPort": 8090, "protocol": "TCP"}]
    assert {"name": "PADDLE_MASTER", "value": "resnet-0.resnet:8090"} in found["env"]


def test_without_a_command_the_pods_run_the_launcher_on_the_args():
    found = container(render())
    assert found["command"] == [*WRAPPER, "python3", "-m", "paddle.distributed.launch"]
    assert found["args"] == ["train.py"]


def test_the_specs_command_and_args_follow_the_wrapper_unchanged():
    extra = "  command: [python, -m, paddle.distributed.launch, --log_dir, /logs]\n"
    extra += "  args: [train.py, --lr, '0.1']\n"
    found = container(render(extra=extra))
    assert found["command"] == [
        *WRAPPER,
        *["python", "-m", "paddle.distributed.launch", "--log_dir", "/logs"],
    ]
    assert found["args"] == ["train.py", "--lr", "0.1"]


def test_the_kubelet_leaves_the_wrapper_as_it_is():
    """The kubelet expands $(VAR) and turns $$ into $ in a command
    (k8s.io/kubernetes third_party/forked/golang/expansion/expand.go); the script has
    neither, so /bin/sh gets it as rendered."""
    for script in (MASTER_SCRIPT, FORWARDING_WRAPPER[2], LLM_SCRIPT):
        assert "$(" not in script and "$$" not in script


def wrapped(
    rank: str,
    *command: str,
    nodes: str | None = "2",
    script: str = MASTER_SCRIPT,
    master: str = "resnet-0.resnet:6768",
) -> subprocess.CompletedProcess[str]:
    """``command`` run by the pod's wrapper (``script``) as rank ``rank`` of ``nodes``, rank 0
    named ``master``."""
    shell = shutil.which("sh")
    if shell is None:  # pragma: no cover - every CI image has a POSIX shell
        pytest.skip("no POSIX sh")
    env = {
        "PATH": "/usr/bin:/bin",
        "POD_IP": "10.244.0.7",
        "PADDLE_RANK": rank,
        "PADDLE_MASTER": master,
        **({"PADDLE_NNODES": nodes} if nodes is not None else {}),
    }
    return subprocess.run(
        [shell, "-c", script, *command], env=env, capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize("nodes", [None, ""])
def test_a_pod_without_the_node_count_stops_before_it_trains_alone(nodes):
    done = wrapped("0", "sh", "-c", "echo trained", nodes=nodes)
    assert (done.returncode, done.stdout) == (NO_NODE_COUNT_EXIT, "")
    assert done.stderr == (
        "paddlegen: PADDLE_NNODES is not set: every pod would train alone; give the pods the "
        "number of nodes (a TrainJob: spec.trainer.env)\n"
    )


@pytest.mark.parametrize("rank", ["0", "1", "10"])
# a TrainJob's runtime names rank 0 as the kubelet expands it: JobSet's pod 0 of Job 0 of `node`
@pytest.mark.parametrize("master", ["resnet-0.resnet:6768", "resnet-node-0-0.resnet:6768"])
def test_rank_0_serves_the_master_at_its_own_ip_and_the_others_find_it_by_name(rank, master):
    """The launcher starts its store only where the master's host is the pod's own IP."""
    done = wrapped(rank, "sh", "-c", 'printf %s "$PADDLE_MASTER"', master=master)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ("10.244.0.7:6768" if rank == "0" else master)


@pytest.mark.parametrize("script", [MASTER_SCRIPT, FORWARDING_WRAPPER[2]], ids=["exec", "child"])
def test_the_wrapper_runs_the_command_with_its_words_intact(script):
    words = ["a b", "$HOME", "*", "'quoted'", "", "--flag=x;y"]
    done = wrapped("0", "sh", "-c", 'printf "<%s>" "$@"', "argv0", *words, script=script)
    assert done.stdout == "".join(f"<{w}>" for w in words)
    # the command's exit code is the container's: exec'd, or its forwarding parent's
    assert wrapped("0", "sh", "-c", "exit 7", script=script).returncode == 7


def test_only_the_launcher_itself_is_execd_any_other_command_gets_the_stop_forwarded():
    """The launcher handles SIGTERM as PID 1; another command may not
    (tests/unit/test_stop_signal.py runs both as PID 1)."""
    for launcher in (
        "python3 -m paddle.distributed.launch",
        "/usr/bin/python3.10 -m paddle.distributed.launch",
    ):
        found = container(render(extra=f"  command: [{launcher.replace(' ', ', ')}, t.py]\n"))
        assert found["command"][:3] == WRAPPER
    for other in ("python3 train.py", "fleetrun t.py", "bash -c run.sh"):
        found = container(render(extra=f"  command: [{other.replace(' ', ', ')}]\n"))
        assert found["command"] == [*FORWARDING_WRAPPER, *other.split()]


@pytest.mark.parametrize("cli", ["paddleformers-cli", "erniekit", "/opt/venv/bin/erniekit"])
def test_an_llm_cli_runs_after_the_wrapper_that_sets_the_env_it_reads(cli):
    found = container(render(extra=f"  command: [{cli}, train, /config/sft.yaml]\n"))
    assert found["command"] == [*LLM_WRAPPER, cli, "train", "/config/sft.yaml"]
    other = container(render(extra="  command: [python3, -m, paddle.distributed.launch, t.py]\n"))
    assert other["command"][:3] == WRAPPER


@pytest.mark.parametrize(
    ("rank", "master"), [("0", "10.244.0.7 6768"), ("1", "resnet-0.resnet 6768")]
)
def test_an_llm_cli_reads_the_contract_in_its_own_names(rank, master):
    """paddleformers-cli and erniekit pass NNODES, RANK and MASTER_ADDR:MASTER_PORT to the
    launcher: they agree with PADDLE_NNODES, PADDLE_RANK and PADDLE_MASTER, rank 0's IP too."""
    done = wrapped(
        rank,
        "sh",
        "-c",
        'printf "%s %s %s %s|%s" "$NNODES" "$RANK" "$MASTER_ADDR" "$MASTER_PORT" "$PADDLE_MASTER"',
        script=LLM_SCRIPT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"2 {rank} {master}|{master.replace(' ', ':')}"
    assert wrapped("0", "sh", "-c", "echo x", nodes=None, script=LLM_SCRIPT).returncode == (
        NO_NODE_COUNT_EXIT
    )


def test_gpus_shm_volumes_and_the_data_job_as_for_every_workload():
    extra = (
        "  args: [train.py]\n  gpus: 2\n  shm: 8Gi\n"
        "  volumes: [{name: data, mountPath: /data, nfs: {server: 10.0.0.1, path: /x}, "
        "capacity: 1Gi}]\n  dataPrep: {volume: data, image: r/data:v1}\n"
    )
    objects = render(extra=extra)
    found = container(objects)
    assert found["resources"]["limits"]["nvidia.com/gpu"] == "2"
    assert found["volumeMounts"] == [
        {"name": "data", "mountPath": "/data"},
        {"name": "dshm", "mountPath": "/dev/shm"},
    ]
    data = objects[("Job", "resnet-data")]["spec"]
    # one part per rank; the data Job's pods are not the Service's (another job-name)
    assert {"name": "SPLIT_COUNT", "value": "3"} in data["template"]["spec"]["containers"][0]["env"]
    assert "subdomain" not in data["template"]["spec"]
    assert "completionMode" not in data


@pytest.mark.parametrize(("replicas", "fits"), [(10, True), (11, False)])
def test_the_last_pods_hostname_bounds_the_name(replicas, fits):
    name = "n" * 61  # pod 9 is n...n-9 (63 characters), pod 10 one more
    text = HEADER + BODY.replace("resnet", name).replace("replicas: 3", f"replicas: {replicas}")
    found = load.validate_document(parse_spec((text + "  args: [t.py]\n").encode(), "s.yaml"))
    rules = [d.rule for d in found if d.is_error]
    assert rules == ([] if fits else ["name-length"])


READ_ONLY = "  security: {readOnlyRootFilesystem: true}\n"


def test_under_a_read_only_root_paddle_writes_to_an_empty_dir_at_tmp():
    """`import paddle` needs a writable temporary directory, and the launcher writes
    log/workerlog.N in its working directory: on a read-only root every rank exits 1 at start."""
    objects = render(BODY + READ_ONLY)
    found = container(objects)
    assert {"name": "PADDLE_LOG_DIR", "value": "/tmp/paddle-log"} in found["env"]
    assert {"name": "paddle-tmp", "mountPath": "/tmp"} in found["volumeMounts"]
    pod = objects[("Job", "resnet")]["spec"]["template"]["spec"]
    assert {"name": "paddle-tmp", "emptyDir": {}} in pod["volumes"]


def test_what_the_spec_places_itself_stays_where_it_says():
    own = "  env: [{name: PADDLE_LOG_DIR, value: /out/logs}]\n"
    own += "  volumes: [{name: scratch, mountPath: /tmp, emptyDir: {sizeLimit: 1Gi}}]\n"
    found = container(render(BODY + READ_ONLY + own))
    assert [e for e in found["env"] if e["name"] == "PADDLE_LOG_DIR"] == [
        {"name": "PADDLE_LOG_DIR", "value": "/out/logs"}
    ]
    assert [m["name"] for m in found["volumeMounts"]] == ["scratch"]


RESTARTS = (
    "  args: [train.py]\n"
    "  run: {restarts: 3, activeDeadlineSeconds: 3600, ttlSecondsAfterFinished: 60}\n"
)


def test_with_restarts_a_jobset_runs_the_indexed_job_and_restarts_the_whole_group():
    objects = render(extra=RESTARTS)
    assert ("Job", "resnet") not in objects and ("Service", "resnet") not in objects
    jobset = objects[("JobSet", "resnet")]
    assert jobset["apiVersion"] == "jobset.x-k8s.io/v1alpha2"
    spec = jobset["spec"]
    assert spec["ttlSecondsAfterFinished"] == 60  # the JobSet's, not the Job's of one attempt
    assert spec["network"] == {"enableDNSHostnames": True, "publishNotReadyAddresses": True}
    # any failure restarts every rank, 3 times at most; the wrapper's usage exit fails at once
    assert spec["failurePolicy"]["maxRestarts"] == 3
    (rule,) = spec["failurePolicy"]["rules"]
    assert rule["action"] == "FailJobSet"
    assert rule["onJobFailureMessagePatterns"] == [
        f"failed with exit code {NO_NODE_COUNT_EXIT} matching FailJob rule"
    ]
    (replicated,) = spec["replicatedJobs"]
    assert (replicated["name"], replicated["replicas"]) == ("worker", 1)
    job = replicated["template"]["spec"]
    assert (job["parallelism"], job["completions"], job["completionMode"]) == (3, 3, "Indexed")
    # a rank is never retried alone: any counted failure fails the Job, and the JobSet
    # restarts the group; the deadline bounds each attempt
    assert job["backoffLimit"] == 0 and job["activeDeadlineSeconds"] == 3600
    assert "ttlSecondsAfterFinished" not in job
    pod = job["template"]["spec"]
    assert "subdomain" not in pod  # the JobSet sets it, to its own Service
    env = {e["name"]: e for e in pod["containers"][0]["env"]}
    # pod 0 of the JobSet's one Job `<jobset>-worker-0`, in the JobSet's Service
    assert env["PADDLE_MASTER"]["value"] == "resnet-worker-0-0.resnet:6768"


def test_the_attempt_comes_from_the_jobset_with_a_checkpoint():
    volume = (
        "  volumes: [{name: ckpt, mountPath: /ckpt, capacity: 1Gi, accessModes: [ReadWriteMany],"
        " nfs: {server: s, path: /x}}]\n  checkpoint: {volume: ckpt}\n"
    )
    objects = render(extra=RESTARTS + volume)
    job = objects[("JobSet", "resnet")]["spec"]["replicatedJobs"][0]["template"]["spec"]
    env = {e["name"]: e for e in job["template"]["spec"]["containers"][0]["env"]}
    assert env["PADDLE_RESTART_ATTEMPT"]["valueFrom"] == {
        "fieldRef": {"fieldPath": "metadata.annotations['jobset.sigs.k8s.io/restart-attempt']"}
    }
    assert env["PADDLE_CHECKPOINT_DIR"]["value"] == "/ckpt/resnet"


def test_a_queued_volcano_jobset_carries_the_queue_label_and_the_gang_on_its_job():
    extra = RESTARTS + "  scheduling: {scheduler: volcano, kueue: {queue: team-a}}\n"
    jobset = render(extra=extra)[("JobSet", "resnet")]
    assert jobset["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"
    template = jobset["spec"]["replicatedJobs"][0]["template"]
    # Volcano groups the pods of each Job; the JobSet copies these onto its Job
    assert template["metadata"]["annotations"] == {"scheduling.volcano.sh/group-min-member": "3"}
    rules = template["spec"]["podFailurePolicy"]["rules"]
    assert [r["action"] for r in rules] == ["FailJob", "Count"]


def test_restarts_with_a_backoff_limit_warn_that_it_is_ignored():
    from tests.builders import findings

    body = BODY.replace("metadata: {name: resnet, namespace: ml}\n", "") + (
        "  args: [t.py]\n  run: {restarts: 2, backoffLimit: 4}\n"
    )
    found = [f for f in findings(body) if "[workload-setting]" in f]
    assert len(found) == 1 and "backoffLimit is ignored" in found[0]
