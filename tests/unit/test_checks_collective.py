"""Checks of collective-job (#26): message, position and rule."""

from __future__ import annotations

import pytest

from tests.builders import findings, rules

COLLECTIVE = "spec:\n  workload: collective-job\n  image: img:1\n"


def test_a_spec_with_the_training_script_as_args_has_no_findings():
    assert findings(COLLECTIVE + "  args: [train.py]\n") == []


def test_a_command_without_paddles_launcher_would_train_alone_on_every_pod():
    assert findings(COLLECTIVE + "  worker: {replicas: 2, command: [python3, t.py]}\n") == [
        "spec.yaml:7:34: warning: $.spec.worker.command: the pods' command starts no Paddle "
        "launcher: each of the 2 pods would train alone, as a job of one, and succeed (leave "
        "command out (Paddle's launcher then runs the args), or start it yourself: python3 -m "
        "paddle.distributed.launch train.py) [collective-launcher]"
    ]
    assert rules(COLLECTIVE + "  worker: {replicas: 2}\n  command: [sh, -c, python3 t.py]\n") == [
        "collective-launcher"
    ]


@pytest.mark.parametrize(
    "command",
    [
        "[sh, -c, 'python3 -m paddle.distributed.launch --log_dir /l t.py']",
        "[fleetrun, t.py]",
        "[paddleformers-cli, train, c.yaml]",
        "[erniekit, train, c.yaml]",
        "[python3, -m, paddle.distributed.fleet.launch, t.py]",
        "[python3, -m, paddle.distributed.launch, t.py]",
    ],
)
def test_a_command_that_starts_the_launcher_is_fine(command):
    assert findings(COLLECTIVE + f"  worker: {{replicas: 2}}\n  command: {command}\n") == []


def test_one_pod_may_run_its_program_without_the_launcher():
    assert rules(COLLECTIVE + "  command: [python3, t.py]\n") == []


def test_nothing_to_run_without_a_command_or_args():
    assert findings(COLLECTIVE) == [
        "spec.yaml:4:1: error: $.spec: nothing to run: without a command the pods run Paddle's "
        "launcher (python3 -m paddle.distributed.launch), which needs the training script as "
        "args (set args, e.g. args: [train.py] (the launcher runs it on every pod), or a "
        "command) [collective-command]"
    ]
    assert rules(COLLECTIVE + "  args: []\n  worker: {replicas: 2, args: []}\n") == [
        "collective-command"
    ]


@pytest.mark.parametrize("role", ["ps", "heter"])
def test_every_pod_is_a_trainer(role):
    (line,) = findings(COLLECTIVE + f"  args: [t.py]\n  {role}: {{replicas: 1}}\n")
    assert line.startswith(
        f"spec.yaml:8:3: error: $.spec.{role}: workload 'collective-job' has no '{role}' role: "
    )
    assert line.endswith("[collective-roles]")


def test_the_pods_restart_policy_is_never():
    (line,) = findings(COLLECTIVE + "  args: [t.py]\n  run: {restartPolicy: OnFailure}\n")
    assert line.startswith("spec.yaml:8:24: error: $.spec.run.restartPolicy: ")
    assert "a rank restarted in place cannot rejoin the others" in line
    assert line.endswith("[collective-restart]")
    assert findings(COLLECTIVE + "  args: [t.py]\n  run: {restartPolicy: Never}\n") == []


def test_the_launchers_contract_is_the_workloads():
    body = (
        COLLECTIVE + "  args: [t.py]\n  env: [{name: PADDLE_MASTER, value: 'x:1'}, "
        "{name: PADDLE_TRAINER_ENDPOINTS, value: 'x:1'}, {name: PADDLE_TRAINER_ID, value: '0'}]\n"
        "  worker: {replicas: 2, env: [{name: POD_IP, value: '1.2.3.4'}]}\n"
    )
    assert findings(body) == [
        "spec.yaml:8:16: error: $.spec.env[0].name: env 'PADDLE_MASTER' is set by workload "
        "'collective-job' from rank 0's address and collective.port (remove it here) "
        "[collective-env]",
        "spec.yaml:8:53: error: $.spec.env[1].name: env 'PADDLE_TRAINER_ENDPOINTS' makes "
        "Paddle's launcher replace the master and the node count that workload "
        "'collective-job' gives it with its own (remove it here: the launcher gives each "
        "process its endpoints) [collective-env]",
        "spec.yaml:9:38: error: $.spec.worker.env[0].name: env 'POD_IP' is set by workload "
        "'collective-job' from the pod's IP (remove it here) [collective-env]",
    ]


@pytest.mark.parametrize("cli", ["paddleformers-cli", "/usr/local/bin/erniekit"])
def test_an_llm_clis_env_is_the_master_wrappers(cli):
    body = COLLECTIVE + (
        f"  command: [{cli}, train, c.yaml]\n  env: [{{name: NNODES, value: '4'}}]\n"
        "  worker: {replicas: 2, env: [{name: MASTER_PORT, value: '1'}]}\n"
    )
    assert findings(body) == [
        f"spec.yaml:8:16: error: $.spec.env[0].name: env 'NNODES' is set by workload "
        f"'collective-job' from PADDLE_NNODES, for {cli} (its master wrapper) (remove it "
        "here) [collective-env]",
        "spec.yaml:9:38: error: $.spec.worker.env[0].name: env 'MASTER_PORT' is set by "
        f"workload 'collective-job' from the port of PADDLE_MASTER, for {cli} (its master "
        "wrapper) (remove it here) [collective-env]",
    ]


def test_other_commands_may_set_what_an_llm_cli_reads():
    body = COLLECTIVE + "  args: [t.py]\n  env: [{name: RANK, value: '0'}]\n"
    assert findings(body) == []
    worker_command = COLLECTIVE + (
        "  command: [paddleformers-cli, train, c.yaml]\n"
        "  worker: {command: [fleetrun, t.py], env: [{name: RANK, value: '0'}]}\n"
    )
    assert findings(worker_command) == []


def test_the_launchers_flags_that_the_env_overrides_are_warned_about():
    body = COLLECTIVE + (
        "  command: [python, -m, paddle.distributed.launch, --log_dir, /logs, --nnodes=4]\n"
        "  args: [--master, '10.0.0.1:8090', train.py, --rank, '3']\n"
    )
    assert findings(body) == [
        "spec.yaml:7:70: warning: $.spec.command[5]: the launcher's --nnodes is overridden by "
        "env PADDLE_NNODES, which workload 'collective-job' sets (remove --nnodes and its "
        "value) [collective-args]",
        "spec.yaml:8:10: warning: $.spec.args[0]: the launcher's --master is overridden by env "
        "PADDLE_MASTER, which workload 'collective-job' sets (remove --master and its value) "
        "[collective-args]",
    ]  # --rank after the script is the script's own


def test_flags_of_the_default_launcher_are_the_args_before_the_script():
    two_gpus = COLLECTIVE + "  gpus: 2\n  shm: 8Gi\n"
    assert rules(two_gpus + "  args: [--job_id, x, --devices, '0,1', t.py]\n") == [
        "collective-args"
    ]
    assert rules(COLLECTIVE + "  args: [t.py, --job_id, x]\n") == []


def test_other_workloads_may_set_what_collective_job_sets():
    body = "spec:\n  workload: job\n  image: img:1\n  env: [{name: PADDLE_MASTER, value: x}]\n"
    assert findings(body) == []


def test_a_queued_job_of_several_ranks_has_a_deadline():
    queued = COLLECTIVE + "  args: [t.py]\n  scheduling: {kueue: {queue: q}}\n"
    queued += "  resources: {requests: {cpu: '1', memory: 1Gi}}\n"  # else kueue-requests
    assert findings(queued + "  worker: {replicas: 2}\n") == [
        "spec.yaml:8:16: warning: $.spec.scheduling.kueue: a queued job of several ranks without "
        "run.activeDeadlineSeconds: ranks that wait for one that never comes, or a collective "
        "that hangs, hold the queue's quota for ever (set run.activeDeadlineSeconds (paddlegen "
        "init writes 86400)) [collective-deadline]"
    ]
    bounded = queued + "  worker: {replicas: 2}\n  run: {activeDeadlineSeconds: 3600}\n"
    assert findings(bounded) == []
    assert findings(queued) == []  # one rank waits for no other
