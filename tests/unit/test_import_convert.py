"""`paddlegen import --to collective-job`: an operator's PaddleJob becomes a collective-job spec,
and what does not carry over is a note."""

from __future__ import annotations

import yaml

from paddlegen.authoring.importer import import_jobs
from paddlegen.cli import cli
from paddlegen.pipeline import build
from paddlegen.spec.loader import parse_spec

# The PaddleFlow operator's PS-mode job: two parameter servers, Gloo, its own clean-up.
PADDLEFLOW_PS = """\
apiVersion: batch.paddlepaddle.org/v1
kind: PaddleJob
metadata: {name: wide-and-deep, namespace: ml}
spec:
  cleanPodPolicy: OnCompletion
  withGloo: 1
  intranet: PodIP
  ps:
    replicas: 2
    template:
      spec:
        containers:
        - {name: paddle, image: 'r/wd:v1', command: [python3, train.py]}
  worker:
    replicas: 3
    template:
      spec:
        containers:
        - {name: paddle, image: 'r/wd:v1', command: [python3, train.py]}
"""

# A collective PaddleFlow job that starts Paddle's launcher: it runs the same on a Job.
PADDLEFLOW_COLLECTIVE = """\
apiVersion: batch.paddlepaddle.org/v1
kind: PaddleJob
metadata: {name: resnet, namespace: ml}
spec:
  cleanPodPolicy: OnCompletion
  worker:
    replicas: 2
    template:
      spec:
        containers:
        - name: paddle
          image: r/resnet:v1
          command: [python3, -m, paddle.distributed.launch, train.py]
          resources: {limits: {memory: 8Gi, nvidia.com/gpu: 1}}
"""

KUBEFLOW = """\
apiVersion: kubeflow.org/v1
kind: PaddleJob
metadata: {name: kf, namespace: ml}
spec:
  runPolicy: {cleanPodPolicy: None, backoffLimit: 3}
  paddleReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: paddle
            image: r/kf:v1
            command: [python3, -m, paddle.distributed.launch, train.py]
            ports: [{name: master, containerPort: 37777}]
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: paddle
            image: r/kf:v1
            command: [python3, -m, paddle.distributed.launch, train.py]
            ports: [{name: master, containerPort: 37777}]
"""


def converted(text: str, name: str = "in.yaml"):
    (job,) = import_jobs([(name, text)], lambda _: "spec.yaml", "collective-job").jobs
    return job


def errors(job) -> list[str]:
    """The spec's errors (its warnings are the input's: no limits, no /dev/shm)."""
    return [d.message for d in job.diagnostics if d.is_error]


def without_security(spec: dict) -> dict:
    """The spec but the security section every import of a pod without one gets."""
    return {key: value for key, value in spec.items() if key != "security"}


def notes(job) -> list[tuple[str, str]]:
    return [(note.kind, note.message) for note in job.notes]


def rendered_kinds(job) -> list[str]:
    """The kinds of the objects the converted spec renders."""
    result = build.render_document(parse_spec(job.text, "spec.yaml"))
    return sorted(m.kind for m in result.manifests)


def test_a_paddleflow_ps_job_loses_its_parameter_servers_and_says_what_else_is_gone():
    job = converted(PADDLEFLOW_PS)
    assert without_security(job.spec["spec"]) == {
        "workload": "collective-job",
        "image": "r/wd:v1",
        "command": ["python3", "train.py"],
        "worker": {"replicas": 3},
    }
    said = notes(job)
    assert (
        "lossy",
        "dropped 2 parameter servers (ps): collective-job has no parameter servers, every pod "
        "is a rank of a collective (data-parallel) job; a parameter-server program must be "
        "made a collective one (fleet.init(is_collective=True)), or stay on the operator",
    ) in said
    assert (
        "cosmetic",
        "cleanPodPolicy OnCompletion not carried over: a Job keeps its finished pods (they "
        "hold no resources) until it is deleted; run.ttlSecondsAfterFinished deletes both",
    ) in said
    assert (
        "cosmetic",
        "withGloo 1 not carried over: Gloo served the parameter servers, dropped above; "
        "Paddle's launcher brings its own rendezvous",
    ) in said
    assert (
        "cosmetic",
        "intranet PodIP not carried over: collective-job's pods find rank 0 by its name under "
        "the headless Service (<job>-0.<job>)",
    ) in said
    # python3 train.py read the operator's env itself: lossy, naming what it gets instead
    (env,) = [m for _, m in said if m.startswith("the operator's env")]
    assert ("lossy", env) in said
    assert "PADDLE_TRAINER_ID" in env and "PADDLE_TRAINER_ENDPOINTS" in env
    assert env.endswith(
        "contract instead (POD_IP, PADDLE_RANK, PADDLE_NNODES, PADDLE_JOB_ID, PADDLE_MASTER); "
        "a program that reads the operator's names itself must read these, or run under "
        "Paddle's launcher (python3 -m paddle.distributed.launch)"
    )
    assert errors(job) == []
    assert rendered_kinds(job) == ["ConfigMap", "Job", "Service"]


def test_a_paddleflow_collective_job_under_the_launcher_converts_without_a_lossy_note():
    job = converted(PADDLEFLOW_COLLECTIVE)
    assert job.spec["spec"]["workload"] == "collective-job"
    assert job.spec["spec"]["command"] == ["python3", "-m", "paddle.distributed.launch", "train.py"]
    assert job.spec["spec"]["gpus"] == 1
    assert job.lossy == []
    (env,) = [m for kind, m in notes(job) if m.startswith("the operator's env")]
    assert env.endswith("PADDLE_JOB_ID, PADDLE_MASTER), which the launcher reads")
    assert errors(job) == []
    assert rendered_kinds(job) == ["ConfigMap", "Job", "Service"]


def test_a_job_without_a_command_is_told_the_launcher_replaces_the_entrypoint():
    text = PADDLEFLOW_COLLECTIVE.replace(
        "command: [python3, -m, paddle.distributed.launch, train.py]", "args: [train.py]"
    )
    job = converted(text)
    assert (
        "no command: the operator's pods ran the image's entrypoint; collective-job's run "
        'Paddle\'s launcher (python3 -m paddle.distributed.launch) on args ["train.py"] '
        "instead (set command to keep the entrypoint)"
    ) in [note.message for note in job.lossy]
    assert errors(job) == []


def test_a_kubeflow_job_loses_its_master_replicas_and_its_in_place_restarts():
    job = converted(KUBEFLOW)
    assert without_security(job.spec["spec"]) == {
        "workload": "collective-job",
        "image": "r/kf:v1",
        "command": ["python3", "-m", "paddle.distributed.launch", "train.py"],
        "worker": {"replicas": 2},
        "run": {"backoffLimit": 3},
        "collective": {"port": 37777},  # the operator's rendezvous port, the master's now
    }
    said = notes(job)
    assert (
        "lossy",
        "dropped the Master replica type (1 pod), which the operator runs as parameter servers "
        "(PS mode): collective-job has no parameter servers, every pod is a rank of a "
        "collective (data-parallel) job; a parameter-server program must be made a collective "
        "one (fleet.init(is_collective=True)), or stay on the operator",
    ) in said
    assert (
        "lossy",
        "restartPolicy OnFailure not carried over: the operator restarted a failed replica in "
        "place (up to runPolicy.backoffLimit, default 6); collective-job's pods never restart, "
        "and one failed rank fails the whole job (a new run starts every rank again)",
    ) in said
    assert (
        "cosmetic",
        "runPolicy.cleanPodPolicy None not carried over: a Job keeps its finished pods (they "
        "hold no resources) until it is deleted; run.ttlSecondsAfterFinished deletes both",
    ) in said
    (env,) = [m for _, m in said if m.startswith("the operator's env")]
    assert env.startswith(
        "the operator's env (PADDLE_SERVER_NUM, PADDLE_TRAINER_NUM, POD_IP_DUMMY, "
        "PYTHONUNBUFFERED) is not set"
    )
    assert errors(job) == []
    assert rendered_kinds(job) == ["ConfigMap", "Job", "Service"]


def test_a_kubeflow_gang_that_counted_the_master_is_the_ranks_now():
    text = KUBEFLOW.replace(
        "backoffLimit: 3}", "backoffLimit: 3, schedulingPolicy: {minAvailable: 3, queue: q1}}"
    )
    for kind in ("Master", "Worker"):
        text = text.replace(
            f"    {kind}:\n      replicas: {1 if kind == 'Master' else 2}\n"
            "      template:\n        spec:\n",
            f"    {kind}:\n      replicas: {1 if kind == 'Master' else 2}\n"
            "      template:\n        spec:\n          schedulerName: volcano\n",
        )
    job = converted(text)
    assert job.spec["spec"]["scheduling"] == {"scheduler": "volcano", "queue": "q1"}
    assert (
        "cosmetic",
        "minAvailable 3 counted the pods dropped: the gang is now the job's 2 ranks, all of "
        "which a collective job needs",
    ) in notes(job)
    assert errors(job) == []


def test_a_kubeflow_jobs_kueue_labels_carry_over():
    text = KUBEFLOW.replace(
        "metadata: {name: kf, namespace: ml}",
        "metadata: {name: kf, namespace: ml, labels: {kueue.x-k8s.io/queue-name: team}}",
    )
    job = converted(text)
    assert job.spec["spec"]["scheduling"] == {"kueue": {"queue": "team"}}
    assert errors(job) == []


def test_notes_stand_at_their_field_in_the_input():
    job = converted(PADDLEFLOW_PS)
    (ps,) = [n for n in job.notes if n.message.startswith("dropped 2 parameter servers")]
    assert (ps.file, ps.line, ps.col) == ("in.yaml", 8, 3)
    (gloo,) = [n for n in job.notes if n.message.startswith("withGloo")]
    assert (gloo.line, gloo.col) == (6, 3)


def test_the_cli_converts_and_exits_1_on_a_lossy_conversion_unless_accepted(runner, tmp_path):
    source = tmp_path / "paddlejob.yaml"
    source.write_text(PADDLEFLOW_PS, encoding="utf-8")
    out = tmp_path / "wide-and-deep.yaml"
    args = ["import", str(source), "--to", "collective-job", "-o", str(out)]
    result = runner.invoke(cli, args)
    assert result.exit_code == 1
    assert "dropped 2 parameter servers (ps)" in result.stderr
    assert "[import-lossy]" in result.stderr
    assert yaml.safe_load(out.read_text())["spec"]["workload"] == "collective-job"
    result = runner.invoke(cli, [*args, "--lossy", "--force"])
    assert result.exit_code == 0, result.output
    validated = runner.invoke(cli, ["validate", str(out)])
    assert validated.exit_code == 0, validated.output
    source.write_text(PADDLEFLOW_COLLECTIVE, encoding="utf-8")
    result = runner.invoke(cli, ["import", str(source), "--to", "collective-job"])
    assert result.exit_code == 0, result.output
    assert "workload: collective-job" in result.stdout


def test_a_port_among_the_launchers_own_is_kept_and_warned_of():
    """The Kubeflow job's 37777 lies in 35100-64000, where Paddle's launcher draws its own
    processes' ports: import keeps what ran, and says so."""
    job = converted(KUBEFLOW)
    assert job.spec["spec"]["collective"] == {"port": 37777}
    (found,) = [d for d in job.diagnostics if d.rule == "launcher-port"]
    assert (found.severity, found.path) == ("warning", "$.spec.collective.port")
    assert found.message.startswith("port 37777 lies in 35100-64000, where Paddle's launcher")
    (same,) = import_jobs([("in.yaml", KUBEFLOW)], lambda _: "spec.yaml").jobs
    assert same.spec["spec"]["kubeflow"]["port"] == 37777
    assert [d.path for d in same.diagnostics if d.rule == "launcher-port"] == [
        "$.spec.kubeflow.port"
    ]
