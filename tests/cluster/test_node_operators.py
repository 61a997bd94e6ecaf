"""Real training under the real operators on a real node (`hack/local-cluster --with node`):
`paddlejob` specs rendered by paddlegen run under the PaddleFlow operator in Collective mode
(Paddle 3.x) and parameter-server mode (Paddle 2.6, with the examples' `withGloo: 1`), and a
`kubeflow-paddlejob` (Master + Worker) under the Kubeflow training-operator, gang-scheduled by
the real Volcano, beside a native sidecar and after an init container. Each runs to
completion, its losses fall and its ranks agree."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from paddlegen.output.layout import stream
from paddlegen.pipeline import build
from paddlegen.spec.loader import parse_spec
from tests.cluster.conftest import Kube, local_cluster, with_extras
from tests.cluster.test_paddleflow import wait_for
from tests.cluster.training import (
    PREPARED,
    assert_trained,
    program,
    with_init_container_and_sidecar,
)

pytestmark = pytest.mark.node

# Seconds after which a training job is taken as stuck, not slow. Issue 24's budget, 60 s a
# job, is measured by benchmarks/node.py (medians of the times the tests record, trained_in),
# not asserted: a job's time follows the machine's load, and CI's loaded run took a three-rank
# job past 60 s that this machine trains in 16 s idle and 27 s under the full run.
HANG_TIMEOUT = 300.0
PROGRAM = "/program/train.py"  # from a ConfigMap volume, as a team ships its training code


@pytest.fixture(scope="module")
def paddleflow(node: Kube) -> Kube:
    return with_extras(node, ["paddle-operator"])


@pytest.fixture(scope="module")
def kubeflow(node: Kube) -> Kube:
    """The node with Volcano (the operator gang-schedules every job through it) and the
    training-operator."""
    return with_extras(node, ["volcano", "training-operator"])


def spec(name: str, workload: str, image: str, command: list[str], body: dict[str, Any]) -> dict:
    """A spec of ``name`` in a namespace of that name that runs ``command`` on the training
    program of a ConfigMap ``program`` (``apply`` makes it)."""
    return {
        "apiVersion": "paddlegen/v1",
        "kind": "TrainingJob",
        "metadata": {"name": name, "namespace": name},
        "spec": {
            "workload": workload,
            "image": image,
            "imagePullPolicy": "Never",  # imported by `up`, no registry has it
            "resources": {"requests": {"cpu": "250m"}, "limits": {"memory": "2Gi"}},
            "command": command,
            "volumes": [
                {
                    "name": "program",
                    "mountPath": "/program",
                    "readOnly": True,
                    "configMap": {"name": "program"},
                }
            ],
            **body,
        },
    }


def render(data: dict[str, Any]) -> build.Rendered:
    return build.render_document(parse_spec(yaml.safe_dump(data).encode(), "spec.yaml"))


def create_namespace(kube: Kube, data: dict[str, Any], program_name: str) -> None:
    """The spec's namespace, with the ConfigMap `program` holding ``program_name``."""
    namespace = data["metadata"]["namespace"]
    kube.run("create", "namespace", namespace)
    kube.run("create", "configmap", "program", "-n", namespace,
             f"--from-literal=train.py={program(program_name)}")  # fmt: skip


def apply(kube: Kube, data: dict[str, Any], program_name: str) -> None:
    create_namespace(kube, data, program_name)
    kube.apply(build.manifest_stream([render(data)]))


def get(kube: Kube, namespace: str, *what: str) -> Any:
    done = kube.run("get", "-n", namespace, *what, "-o", "json", check=False)
    return json.loads(done.stdout) if done.returncode == 0 else None


def logs(kube: Kube, namespace: str, container: str = "paddle") -> dict[str, str]:
    """Every pod's training container's log, by pod name (`node` in a TrainJob's pods)."""
    pods = get(kube, namespace, "pods")["items"]
    return {
        pod["metadata"]["name"]: kube.run(
            "logs", "-n", namespace, pod["metadata"]["name"], "-c", container, check=False
        ).stdout
        for pod in pods
    }


def wait_until_done(
    kube: Kube, namespace: str, done, container: str = "paddle"
) -> tuple[str, float, dict[str, str]]:
    """Poll ``done()`` (the job's final state, or "") until it says or HANG_TIMEOUT passed: the
    state, how long it took and the logs of the pods' ``container``."""
    started = time.monotonic()
    state = ""
    while time.monotonic() - started < HANG_TIMEOUT and not state:
        state = done()
        time.sleep(0.5)
    return state, time.monotonic() - started, logs(kube, namespace, container)


def trained_in(took: float, what: str = "trained") -> None:
    """Say how long the job took, and record it for benchmarks/node.py: a JSON line with the
    test's id appended to $PADDLEGEN_NODE_TIMES when set."""
    print(f"{what} in {took:.1f} s")
    if record := os.environ.get("PADDLEGEN_NODE_TIMES"):
        test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
        with open(record, "a", encoding="utf-8") as times:
            times.write(json.dumps({"test": test, "what": what, "seconds": round(took, 2)}) + "\n")


def pods_now(kube: Kube, namespace: str) -> str:
    """One line on every pod of ``namespace``: its phase, why it is not scheduled, and each
    container's state; what an overrun shows first (CI prints a failure's first line whole
    and cuts the logs after it)."""
    lines = []
    for pod in (get(kube, namespace, "pods") or {}).get("items", []):
        status = pod.get("status", {})
        notes = [
            f"{c.get('reason')}: {c.get('message')}"
            for c in status.get("conditions", [])
            if c["type"] == "PodScheduled" and c["status"] != "True"
        ]
        for c in status.get("initContainerStatuses", []) + status.get("containerStatuses", []):
            for what, detail in c.get("state", {}).items():
                said = detail.get("reason") or detail.get("startedAt", "")
                if what == "terminated":
                    said = f"exit {detail.get('exitCode')} at {detail.get('finishedAt')}"
                notes.append(f"{c['name']} {what} {said}")
        lines.append(f"{pod['metadata']['name']} {status.get('phase')} [{'; '.join(notes)}]")
    return ", ".join(lines) or "no pods"


def overrun(kube: Kube, namespace: str, state: str, took: float, logs: Any) -> str:
    """The message of a job that did not end as expected: its state (or "not done"), when,
    its pods now (pods_now), then its logs."""
    now = time.strftime("%H:%M:%SZ", time.gmtime())
    pods = pods_now(kube, namespace)
    return f"{state or 'not done'} after {took:.0f} s (at {now}); pods: {pods}\n{logs}"


def paddlejob_phase(kube: Kube, namespace: str, name: str) -> str:
    job = get(kube, namespace, "paddlejobs.batch.paddlepaddle.org", name) or {}
    phase = job.get("status", {}).get("phase", "")
    return phase if phase in ("Completed", "Failed") else ""


def test_a_collective_paddlejob_trains(paddleflow: Kube) -> None:
    image = local_cluster().images.PADDLE.reference
    data = spec(
        "pf-collective",
        "paddlejob",
        image,
        ["python3", "-m", "paddle.distributed.launch", PROGRAM],
        {
            "worker": {"replicas": 2},
            # Never: the pods stay after completion, so that the test reads their logs
            "paddlejob": {"cleanPodPolicy": "Never"},
        },
    )
    state, took, output = run_paddlejob(paddleflow, data, "collective")
    assert state == "Completed", overrun(paddleflow, "pf-collective", state, took, output)
    assert_trained(output, 2)
    trained_in(took)


def test_a_parameter_server_paddlejob_with_gloo_trains(paddleflow: Kube) -> None:
    """The wide & deep example's shape (2 servers, 2 workers, withGloo 1) on Paddle 2.6."""
    image = local_cluster().images.PADDLE_PS.reference
    data = spec(
        "pf-ps",
        "paddlejob",
        image,
        ["python3", PROGRAM],
        {
            "ps": {"replicas": 2},
            "worker": {"replicas": 2},
            "paddlejob": {"cleanPodPolicy": "Never", "withGloo": 1},
        },
    )
    state, took, output = run_paddlejob(paddleflow, data, "parameter_server")
    assert state == "Completed", overrun(paddleflow, "pf-ps", state, took, output)
    assert_trained(output, 2, tolerance=0.05)
    trained_in(took)


def test_the_data_job_writes_the_shards_the_trainers_read(paddleflow: Kube, tmp_path: Path) -> None:
    """spec.dataPrep: the data Job writes SPLIT_COUNT shards to OUT_DIR on a hostPath volume,
    then a Collective PaddleJob's two workers each read their own. Applied in the order Argo
    CD's sync runs them (the data hook, then the training hook, README "Run-time safety")."""
    data = spec(
        "pf-data",
        "paddlejob",
        local_cluster().images.PADDLE.reference,
        ["python3", "-m", "paddle.distributed.launch", PROGRAM],
        {
            "env": [{"name": "DATA_DIR", "value": "/data/pf-data"}],  # dataPrep's default outDir
            "worker": {"replicas": 2},
            "paddlejob": {"cleanPodPolicy": "Never"},
            "dataPrep": {"volume": "data", "command": ["python3", "-c", program("prepare_data")]},
        },
    )
    data["spec"]["volumes"].append(
        {"name": "data", "mountPath": "/data",
         "hostPath": {"path": str(tmp_path / "data"), "type": "DirectoryOrCreate"}}
    )  # fmt: skip
    rendered = render(data)
    training = [m for m in rendered.manifests if m.kind == "PaddleJob"]
    create_namespace(paddleflow, data, "collective")
    paddleflow.apply(stream([m for m in rendered.manifests if m not in training]))
    paddleflow.run("wait", "-n", "pf-data", "--for=condition=Complete", "job/pf-data-data",
                   f"--timeout={HANG_TIMEOUT:.0f}s")  # fmt: skip
    assert sorted(p.name for p in (tmp_path / "data" / "pf-data").iterdir()) == [
        "part-0.npy",
        "part-1.npy",
    ]
    paddleflow.apply(stream(training))
    state, took, output = wait_until_done(
        paddleflow, "pf-data", lambda: paddlejob_phase(paddleflow, "pf-data", "pf-data")
    )
    assert state == "Completed", overrun(paddleflow, "pf-data", state, took, output)
    assert_trained(output, 2)
    reads = re.findall(
        r"^rank (\d)/2 read 256 rows of /data/pf-data$", "\n".join(output.values()), re.M
    )
    assert sorted(reads) == ["0", "1"], output
    trained_in(took, "trained on the prepared shards")


def run_paddlejob(
    kube: Kube, data: dict[str, Any], program_name: str
) -> tuple[str, float, dict[str, str]]:
    apply(kube, data, program_name)
    name = data["metadata"]["name"]
    return wait_until_done(kube, name, lambda: paddlejob_phase(kube, name, name))


def kubeflow_condition(kube: Kube, namespace: str, name: str) -> str:
    job = get(kube, namespace, "paddlejobs.kubeflow.org", name) or {}
    true = [c["type"] for c in job.get("status", {}).get("conditions", []) if c["status"] == "True"]
    return true[-1] if true and true[-1] in ("Succeeded", "Failed") else ""


def test_a_kubeflow_paddlejob_trains_as_one_volcano_gang(kubeflow: Kube, tmp_path: Path) -> None:
    """A Master and a Worker, each pod started by Paddle's launcher from the operator's
    PADDLE_MASTER (rank 0 by its own IP); gang-scheduled by the real Volcano. The launcher runs
    a server and a trainer in every pod: the operator sets PADDLE_SERVER_NUM on Masters and
    PADDLE_TRAINER_NUM on Workers, and Paddle's launcher takes an unset count as 1
    (python/paddle/distributed/launch/controllers/ps.py, _build_pod_with_master): 2 pods train
    as 2 servers and 2 trainers (the example's 2 + 2 as 4 and 4, which 2 cores run in about
    45 s: too close to the budget). Every pod runs a native sidecar that never exits and, once
    it is up, an init container (training/__init__.py with_init_container_and_sidecar): the
    operator carries both into its pods, and they keep no replica from succeeding."""
    image = local_cluster().images.PADDLE_PS.reference
    logs_dir = tmp_path / "launcher-logs"  # the node is this machine: its hostPath is ours
    data = spec(
        "kf-ps",
        "kubeflow-paddlejob",
        image,
        # the launcher writes each process's output to its log folder, not to its own stdout
        ["python3", "-m", "paddle.distributed.launch", "--log_dir", "/logs/$(POD_NAME)", PROGRAM],
        {
            "env": [
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
            ],
            "ps": {"replicas": 1},
            "worker": {"replicas": 1},
            "kubeflow": {"cleanPodPolicy": "None"},
            "scheduling": {"scheduler": "volcano"},
        },
    )
    data["spec"]["volumes"].append(
        {"name": "logs", "mountPath": "/logs",
         "hostPath": {"path": str(logs_dir), "type": "DirectoryOrCreate"}}
    )  # fmt: skip
    with_init_container_and_sidecar(data["spec"], image)
    apply(kubeflow, data, "parameter_server")
    groups: list[dict[str, Any]] = []  # the operator deletes the job's PodGroup at the end

    def done() -> str:
        groups.extend(get(kubeflow, "kf-ps", "podgroups")["items"])
        return kubeflow_condition(kubeflow, "kf-ps", "kf-ps")

    state, took, output = wait_until_done(kubeflow, "kf-ps", done)
    output.update({str(log): log.read_text() for log in sorted(logs_dir.glob("*/*log.*"))})
    assert state == "Succeeded", overrun(kubeflow, "kf-ps", state, took, output)
    assert_trained(output, 2, tolerance=0.05)
    # one gang of both pods, which Volcano admitted and ran whole
    assert {g["spec"]["minMember"] for g in groups} == {2}, groups
    assert "Running" in {g.get("status", {}).get("phase") for g in groups}, groups
    pods = get(kubeflow, "kf-ps", "pods")["items"]
    assert [p["spec"]["schedulerName"] for p in pods] == ["volcano"] * 2
    for pod in pods:
        assert output[pod["metadata"]["name"]].startswith(PREPARED + "\n"), output
        inits = pod["spec"]["initContainers"]
        assert [(c["name"], c.get("restartPolicy")) for c in inits] == [
            ("heartbeat", "Always"),
            ("prepare", None),
        ]
    # the operator may call the job Succeeded from its trainers' exit while the kubelet still
    # stops the sidecars: the pods succeed a moment later
    wait_for(
        "kf-ps: both pods Succeeded",
        lambda: (
            [p["status"]["phase"] for p in get(kubeflow, "kf-ps", "pods")["items"]]
            == ["Succeeded"] * 2
        ),
    )
    trained_in(took)
