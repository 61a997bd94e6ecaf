"""`trainjob` (#26) on the real control plane with Kubeflow Trainer v2.3.0 and JobSet v0.12.0
(`hack/local-cluster --with jobset,trainer`): paddlegen's runtimes (`paddlegen runtime`) and
a rendered TrainJob applied server-side; Trainer makes a JobSet, JobSet the Indexed Job, the
Job controller one pod per rank with the launcher's contract. The TrainJob completes when its
pods do and fails at once, nothing restarted, when one rank fails; with Volcano, Trainer's
PodGroup holds every rank. The API server calls the controllers' webhooks: what Trainer's
refuses, the server refuses. The CRD's CEL rule refuses a name of 64 characters, while
numNodes 0 passes every check of the server (and completes with no pod at all): paddlegen
refuses both first, with their positions. On the real node: test_node_trainjob.py.

KWOK completes a batch Job's pods as soon as they run, so the tests that look at the ranks
pause it and set the pods' status themselves, as a kubelet would (test_collective.py)."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from paddlegen.authoring.importer import import_manifests
from paddlegen.cli import cli
from paddlegen.pipeline import build
from paddlegen.spec.loader import parse_spec
from paddlegen.workloads.trainjob.names import JOBSET_NAME, MASTER_PORT, NODE, VOLCANO_RUNTIME
from tests import builders
from tests.cluster.conftest import Kube, with_extras
from tests.cluster.test_argocd_loop import kwok_paused
from tests.cluster.test_collective import INDEX, apply, condition, env, fail, render
from tests.cluster.test_paddleflow import get, wait_for

# seconds from a rank's failure to the TrainJob Failed: the Job's pod failure policy, the
# JobSet's and Trainer's reconciles, each a watch event away
FAILURE_TIMEOUT = 15.0
FIELD_MANAGER = "--field-manager=paddlegen"


def install_runtimes(kube: Kube) -> None:
    """What a platform team installs once: `paddlegen runtime`, applied server-side (Trainer's
    webhook validates the runtimes)."""
    done = CliRunner().invoke(cli, ["runtime"])
    assert done.exit_code == 0, done.output
    kube.apply(done.stdout)


@pytest.fixture(scope="module")
def trainer(kube: Kube) -> Kube:
    """KWOK's nodes, JobSet and Trainer, and paddlegen's runtimes."""
    with_extras(kube, ["kwok", "jobset", "trainer"])
    install_runtimes(kube)
    return kube


@pytest.fixture(scope="module")
def gang(trainer: Kube) -> Kube:
    """The same with Volcano, which places a PodGroup's pods only all together."""
    return with_extras(trainer, ["kwok", "volcano", "jobset", "trainer"])


def spec(name: str, namespace: str, nodes: int, **extra: Any) -> dict[str, Any]:
    return builders.spec(
        "trainjob",
        metadata={"name": name, "namespace": namespace},
        image="registry.example.com/resnet:v1",
        worker={"replicas": nodes},
        **extra,
    )


def trainjob_of(rendered: build.Rendered) -> dict[str, Any]:
    (ours,) = [m.obj for m in rendered.manifests if m.kind == "TrainJob"]
    return ours


def ranks(kube: Kube, namespace: str, name: str) -> list[dict[str, Any]]:
    """The pods of the TrainJob ``name`` (JobSet labels each with its name), by rank."""
    found = get(kube, namespace, "pods", "-l", f"{JOBSET_NAME}={name}")["items"]
    return sorted(found, key=lambda p: int(p["metadata"]["annotations"][INDEX]))


def wait_ranks(kube: Kube, namespace: str, name: str, count: int) -> list[dict[str, Any]]:
    def made() -> list[dict[str, Any]] | None:
        found = ranks(kube, namespace, name)
        return found if len(found) == count else None

    return wait_for(f"{count} pods of {name}", made)


def trainjob_condition(kube: Kube, namespace: str, name: str, kind: str) -> dict[str, Any] | None:
    return condition(kube, namespace, name, kind, resource="trainjob")


def owner(obj: dict[str, Any]) -> tuple[str, str]:
    (ref,) = [r for r in obj["metadata"]["ownerReferences"] if r.get("controller")]
    return ref["kind"], ref["name"]


@pytest.mark.parametrize("nodes", [2, 3])
def test_trainer_and_jobset_make_every_rank_with_the_launchers_contract(
    trainer: Kube, nodes: int
) -> None:
    kube, namespace, name = trainer, f"tj-ranks-{nodes}", "tj"
    with kwok_paused(kube):
        ours = trainjob_of(apply(kube, spec(name, namespace, nodes)))
        pods = wait_ranks(kube, namespace, name, nodes)
        assert owner(get(kube, namespace, "jobset", name)) == ("TrainJob", name)
        (job,) = get(kube, namespace, "jobs", "-l", f"{JOBSET_NAME}={name}")["items"]
        assert job["metadata"]["name"] == f"{name}-{NODE}-0"
        assert owner(job) == ("JobSet", name)
        assert [job["spec"][k] for k in ("completionMode", "parallelism", "completions")] == [
            "Indexed", nodes, nodes,
        ]  # fmt: skip
        for i, pod in enumerate(pods):
            # rank i's name in the JobSet's subdomain, as PADDLE_MASTER names rank 0
            assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == (
                f"{name}-{NODE}-0-{i}",
                name,
            )
            assert pod["metadata"]["annotations"][INDEX] == str(i)  # PADDLE_RANK's source
            assert pod["metadata"]["labels"][JOBSET_NAME] == name  # PADDLE_JOB_ID's source
            (container,) = pod["spec"]["containers"]
            assert container["name"] == NODE
            # the TrainJob's command replaces the runtime's: the master wrapper, the launcher
            assert container["command"] == ours["spec"]["trainer"]["command"]
            assert container["args"] == ["train.py"]
            assert container["image"] == "registry.example.com/resnet:v1"
            assert container["resources"]["limits"]["memory"] == "1Gi"
            contract = env(container)
            values = dict(contract)
            assert values["PADDLE_NNODES"] == str(nodes)
            assert values["PADDLE_RANK"] == f"metadata.annotations['{INDEX}']"
            assert values["PADDLE_JOB_ID"] == f"metadata.labels['{JOBSET_NAME}']"
            assert values["POD_IP"] == "status.podIP"
            # $(PADDLE_JOB_ID) expands to the label's value, as it is defined before it
            names = [n for n, _ in contract]
            assert names.index("PADDLE_JOB_ID") < names.index("PADDLE_MASTER")
            master = values["PADDLE_MASTER"].replace("$(PADDLE_JOB_ID)", name)
            assert master == f"{name}-{NODE}-0-0.{name}:{MASTER_PORT}"
        for pod in pods:
            kube.succeed(namespace, pod["metadata"]["name"])
        done = wait_for(
            "the TrainJob Complete", lambda: trainjob_condition(kube, namespace, name, "Complete")
        )
    assert done["reason"] == "AllJobsCompleted"
    assert condition(kube, namespace, job["metadata"]["name"], "Complete")


def test_a_failed_rank_fails_the_trainjob_at_once_and_nothing_restarts(trainer: Kube) -> None:
    kube, namespace, name = trainer, "tj-fail", "tj"
    with kwok_paused(kube):
        apply(kube, spec(name, namespace, 3))
        pods = wait_ranks(kube, namespace, name, 3)
        (job,) = get(kube, namespace, "jobs", "-l", f"{JOBSET_NAME}={name}")["items"]
        failed_at = time.monotonic()
        fail(kube, namespace, pods[1])
        target = wait_for(
            "the pod failure policy",
            lambda: condition(kube, namespace, job["metadata"]["name"], "FailureTarget"),
        )
        assert target["reason"] == "PodFailurePolicy"
        assert "failed with exit code 1 matching FailJob rule at index 1" in target["message"]

        def stopping() -> bool:  # the other ranks are stopped at once
            others = [p for p in ranks(kube, namespace, name) if p["status"]["phase"] != "Failed"]
            return all(p["metadata"].get("deletionTimestamp") for p in others)

        wait_for("the other ranks stopped", stopping)
    # The Job is Failed once its pods are gone (KWOK, running again, removes them), and the
    # JobSet and the TrainJob with it: the runtime has no failurePolicy, so no restart.
    failed = wait_for(
        "the TrainJob Failed",
        lambda: trainjob_condition(kube, namespace, name, "Failed"),
        timeout=FAILURE_TIMEOUT,
    )
    took = time.monotonic() - failed_at
    assert (failed["reason"], failed["message"]) == (
        "FailedJobs",
        f"jobset failed due to one or more job failures (first failed job: {name}-{NODE}-0)",
    )
    jobset = get(kube, namespace, "jobset", name)
    assert jobset["status"]["terminalState"] == "Failed"
    assert jobset["status"].get("restarts", 0) == 0
    failed_pod = pods[1]["metadata"]["name"]
    wait_for(
        "only the failed rank left",
        lambda: [p["metadata"]["name"] for p in ranks(kube, namespace, name)] == [failed_pod],
    )
    (still,) = get(kube, namespace, "jobs", "-l", f"{JOBSET_NAME}={name}")["items"]
    assert still["metadata"]["uid"] == job["metadata"]["uid"]  # the same Job, not a new one
    assert still["status"].get("active", 0) == 0
    assert condition(kube, namespace, job["metadata"]["name"], "Failed")
    print(f"the TrainJob failed {took:.1f} s after its rank 1")


def test_with_volcano_trainers_podgroup_holds_every_rank(gang: Kube) -> None:
    kube, namespace, name = gang, "tj-gang", "tj"
    ours = trainjob_of(apply(kube, spec(name, namespace, 3, scheduling={"scheduler": "volcano"})))
    assert ours["spec"]["runtimeRef"]["name"] == VOLCANO_RUNTIME
    groups = wait_for(
        "Trainer's PodGroup",
        lambda: (get(kube, namespace, "podgroups.scheduling.volcano.sh") or {}).get("items"),
    )
    assert [g["spec"]["minMember"] for g in groups] == [3]
    (group,) = groups
    assert owner(group) == ("TrainJob", name)
    # KWOK runs the pods Volcano places (all three, or none) and completes them
    wait_for("the TrainJob Complete", lambda: trainjob_condition(kube, namespace, name, "Complete"))
    pods = ranks(kube, namespace, name)
    assert len(pods) == 3
    for pod in pods:
        assert pod["spec"]["schedulerName"] == "volcano"
        assert (
            pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"]
            == (group["metadata"]["name"])
        )
        assert pod["spec"]["nodeName"]


def test_what_trainers_webhook_refuses_the_api_server_refuses(trainer: Kube) -> None:
    """A runtime patch's manager must be a domain-prefixed path: Trainer's webhook says so
    (plugins/jobset/jobset.go:175-176); the CRD does not."""
    kube, namespace = trainer, "tj-webhook"
    kube.run("create", "namespace", namespace)
    bad = trainjob_of(render(spec("tj", namespace, 2)))
    bad["spec"]["runtimePatches"][0]["manager"] = "paddlegen"
    done = kube.run(
        "apply", "--server-side", FIELD_MANAGER, "-f", "-", stdin=json.dumps(bad), check=False
    )
    assert done.returncode != 0
    assert (
        'admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: '
        'spec.runtimePatches.manager: Invalid value: "paddlegen": must be a domain-prefixed path'
    ) in done.stderr, done.stderr
    assert get(kube, namespace, "trainjob", "tj") is None


def test_a_long_name_is_refused_by_the_crds_rule_numnodes_0_by_paddlegen_alone(
    trainer: Kube, tmp_path: Path
) -> None:
    kube, namespace = trainer, "tj-cel"
    kube.run("create", "namespace", namespace)
    sent = trainjob_of(render(spec("tj", namespace, 2)))
    long = copy.deepcopy(sent)
    long["metadata"]["name"] = "a" * 64
    done = kube.run(
        "apply", "--server-side", FIELD_MANAGER, "-f", "-", stdin=json.dumps(long), check=False
    )
    assert done.returncode != 0
    # the CRD's x-kubernetes-validations on the object (trainjob_types.go, kubebuilder rules)
    assert "Invalid value: metadata.name must be no more than 63 characters" in done.stderr
    # numNodes has no minimum in the CRD, and neither webhook checks it: the server takes a
    # TrainJob of 0 nodes, and it completes with no pod, having trained nothing
    zero = copy.deepcopy(sent)
    zero["metadata"]["name"] = "tj-zero"
    zero["spec"]["trainer"]["numNodes"] = 0
    kube.apply(json.dumps(zero))
    wait_for(
        "the TrainJob of 0 nodes Complete",
        lambda: trainjob_condition(kube, namespace, "tj-zero", "Complete"),
    )
    assert ranks(kube, namespace, "tj-zero") == []
    # paddlegen refuses both, each at its place in the spec, before anything is sent
    path = tmp_path / "bad.yaml"
    path.write_text(
        "apiVersion: paddlegen/v1\nkind: TrainingJob\nmetadata:\n"
        f"  name: {'a' * 64}\n  namespace: {namespace}\n"
        "spec:\n  workload: trainjob\n  image: registry.example.com/resnet:v1\n"
        "  worker:\n    replicas: 0\n"
    )
    checked = CliRunner().invoke(cli, ["validate", str(path)])
    assert checked.exit_code == 1, checked.output
    lines = checked.stderr.splitlines()
    assert any(
        line.startswith(f"{path}:4:9: error: $.metadata.name: '{'a' * 64}' is not a DNS-1035")
        and line.endswith("[schema]")
        for line in lines
    ), checked.stderr
    assert (
        f"{path}:10:15: error: $.spec.worker.replicas: 0 is less than the minimum of 1 [schema]"
        in lines
    ), checked.stderr


def test_the_api_servers_read_back_imports_without_a_lossy_note(gang: Kube) -> None:
    """What a team that made its TrainJob by hand, or with another tool, would import: the
    object as the server keeps it (managedFields, status, defaults, Trainer's own labels)."""
    kube, namespace, name = gang, "tj-import", "tj"
    data = spec(
        name, namespace, 3, env=[{"name": "FLAGS_check_nan_inf", "value": "1"}],
        collective={"port": 8090}, scheduling={"scheduler": "volcano"},
    )  # fmt: skip
    with kwok_paused(kube):
        ours = trainjob_of(apply(kube, data))
        back = kube.run("get", "-n", namespace, "trainjob", name, "-o", "yaml").stdout
    imported = import_manifests([("read-back.yaml", back)])
    assert [str(n) for n in imported.lossy] == []
    assert not [d for d in imported.diagnostics if d.is_error]
    again = trainjob_of(build.render_document(parse_spec(imported.text, "imported.yaml")))
    assert again["spec"] == ours["spec"]
    assert again["metadata"]["labels"] == ours["metadata"]["labels"]
