"""Kueue v0.19.2 under Argo CD v3.5.1 (#27), on KWOK's fake nodes (`hack/local-cluster --with
kwok,kueue,argocd`), with the Applications `paddlegen argocd` writes (auto-sync, self-heal):
a queued `collective-job` with data preparation. The data Job is not queued and runs first;
the training Job, a Sync hook, is suspended by Kueue's webhook, admitted, preempted by a job of
higher priority and admitted again, and the sync lasts through all of it (paddlegen's batch/v1
Job health check: Argo CD's own calls a Job Kueue resumed finished), while the Application
stays Synced and Argo CD never recreates or changes the Job.

KWOK is paused (SIGSTOP) while the jobs run, and the tests set the pods' status as a kubelet
would (test_collective.py): Running, Succeeded, or Failed with exit code 143, the code of a
rank that a preemption stopped (test_node_kueue.py shows it on the real node)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests import builders
from tests.cluster.conftest import Kube, with_extras
from tests.cluster.test_argocd import Loop, application, init_repo, wait_synced
from tests.cluster.test_argocd_envs import reconcile
from tests.cluster.test_argocd_loop import kwok_paused, operation, results
from tests.cluster.test_argocd_runtime_safety import install
from tests.cluster.test_collective import fail, job_pods, run_on
from tests.cluster.test_kueue import (
    admitted,
    flavor_and_priorities,
    leave,
    pods_of_job,
    queue,
    readmitted,
    submit,
    suspended,
    workload,
    workload_condition,
)
from tests.cluster.test_paddleflow import get, wait_for
from tests.cluster.test_trainjob import install_runtimes
from tests.cluster.test_trainjob import spec as trainjob_spec

NAMESPACE = "acd-kueue"
DATA = [{"name": "data", "mountPath": "/data", "hostPath": {"path": "/srv/acd-kueue"}}]
ZONE = {"example.com/zone": "a"}  # what a flavor's nodes carry: Kueue adds it on admission
DISK = {"example.com/disk": "ssd"}  # a spec's own nodeSelector


@pytest.fixture(scope="module")
def loop(kube: Kube, tmp_path_factory: pytest.TempPathFactory) -> Loop:
    cluster = with_extras(kube, ["kwok", "kueue", "argocd"])
    flavor_and_priorities(cluster)
    queue(cluster, NAMESPACE, cpu=2)  # the namespace, and its LocalQueue `team`
    return Loop(cluster, init_repo(tmp_path_factory.mktemp("acd-kueue") / "jobs-repo"), {})


def spec(name: str, priority: str, **extra: Any) -> dict[str, Any]:
    """A collective-job of two 1-CPU ranks in the LocalQueue `team`: the whole queue."""
    return builders.spec(
        "collective-job",
        metadata={"name": name, "namespace": NAMESPACE},
        image="registry.example.com/resnet:v1",
        resources={"requests": {"cpu": "1"}},
        worker={"replicas": 2},
        scheduling={"kueue": {"queue": "team", "priorityClass": priority}},
        **extra,
    )


def live_pods(kube: Kube, job: str, count: int) -> list[dict[str, Any]]:
    """The ``count`` pods of ``job`` not being deleted, once made."""

    def made() -> list[dict[str, Any]] | None:
        found = [
            p for p in job_pods(kube, NAMESPACE, job) if "deletionTimestamp" not in p["metadata"]
        ]
        return found if len(found) == count else None

    return wait_for(f"{count} pods of {job}", made)


def placed(kube: Kube, job: str) -> list[dict[str, Any]]:
    return [p for p in pods_of_job(kube, NAMESPACE, job) if p["spec"].get("nodeName")]


def hook_phase(kube: Kube, app: str, kind: str, name: str) -> str | None:
    return results(app, kube).get((kind, name), {}).get("hookPhase")


def test_a_queued_job_trains_after_its_data_and_its_sync_lasts_through_preemption(
    loop: Loop,
) -> None:
    kube, app, data_job = loop.kube, "low", "low-data"
    data_prep = {"volume": "data", "command": ["python3", "prep.py"]}
    loop.specs["low.yaml"] = spec(app, "low", volumes=DATA, dataPrep=data_prep)
    loop.commit("a queued job with data preparation")
    with kwok_paused(kube):
        install(loop)
        # Wave by wave: the data Job runs unqueued (no Workload), the training Job waits for it.
        data_pod = wait_for("the data Job's pod placed", lambda: placed(kube, data_job))[0]
        assert workload(kube, NAMESPACE, "Job", data_job) is None
        assert get(kube, NAMESPACE, "jobs", app) is None
        kube.succeed(NAMESPACE, data_pod["metadata"]["name"])

        # The training Job: suspended on create, admitted, resumed, its ranks running; the
        # hook and the sync go on (Argo CD's own Job health would call it Healthy here).
        admitted(kube, NAMESPACE, "Job", app)
        uid = get(kube, NAMESPACE, "jobs", app)["metadata"]["uid"]
        wait_for("the Job resumed", lambda: not suspended(kube, NAMESPACE, "job", app))
        for i, pod in enumerate(live_pods(kube, app, 2)):
            run_on(kube, NAMESPACE, pod, f"10.0.1.{i + 1}")
        wait_for("the hook Running", lambda: hook_phase(kube, app, "Job", app) == "Running")
        assert hook_phase(kube, app, "Job", data_job) == "Succeeded"
        assert operation(app, kube)["phase"] == "Running"

        # Preempted by a higher priority (not through Argo CD): suspended again, its ranks
        # stopped with exit code 143; the sync still runs, the Application Synced.
        submit(kube, spec("high", "high"), "high")
        evicted = wait_for(
            "low preempted", lambda: workload_condition(kube, NAMESPACE, "Job", app, "Evicted")
        )
        assert evicted["reason"] == "Preempted"
        wait_for("low suspended", lambda: suspended(kube, NAMESPACE, "job", app))
        for pod in job_pods(kube, NAMESPACE, app):
            fail(kube, NAMESPACE, pod, exit_code=143)
        admitted(kube, NAMESPACE, "Job", "high")
        assert operation(app, kube)["phase"] == "Running"
        assert hook_phase(kube, app, "Job", app) == "Running"
        assert application(kube, app)["status"]["sync"]["status"] == "Synced"

        # The higher one leaves: low is admitted again and trains to the end with new ranks.
        leave(kube, NAMESPACE, "high")
        readmitted(kube, NAMESPACE, "Job", app)
        wait_for("low resumed", lambda: not suspended(kube, NAMESPACE, "job", app))
        for pod in live_pods(kube, app, 2):
            kube.succeed(NAMESPACE, pod["metadata"]["name"])
        wait_for("the sync Succeeded", lambda: operation(app, kube).get("phase") == "Succeeded")
    assert hook_phase(kube, app, "Job", app) == "Succeeded"
    job = get(kube, NAMESPACE, "jobs", app)
    assert job["metadata"]["uid"] == uid  # never recreated
    assert not job["status"].get("failed")  # the preempted ranks were not failures
    status = application(kube, app)["status"]
    assert (status["sync"]["status"], status["health"]["status"]) == ("Synced", "Healthy")


@pytest.fixture(scope="module")
def plain(loop: Loop, tmp_path_factory: pytest.TempPathFactory) -> Loop:
    """A repository rendered with `--no-argocd` (no hooks: Argo CD compares every object),
    in the same cluster, with JobSet, Trainer and paddlegen's runtimes for a TrainJob."""
    cluster = with_extras(loop.kube, ["kwok", "kueue", "argocd", "jobset", "trainer"])
    install_runtimes(cluster)
    repo = init_repo(tmp_path_factory.mktemp("acd-kueue-plain") / "jobs-repo")
    return Loop(cluster, repo, {}, ("--no-argocd",))


def test_without_hooks_what_kueue_writes_keeps_the_applications_synced(plain: Loop) -> None:
    """Objects Argo CD compares, self-heal on: a queued Job Kueue suspends, admits, preempts
    and admits again (`spec.suspend`), and an unqueued TrainJob whose runtime patches Kueue's
    webhook appends to (trainjob_webhook.go:91-102 at v0.19.2). Each Application stays Synced
    and Argo CD changes neither object again (the Applications `paddlegen argocd` writes: its
    ignoreDifferences, RespectIgnoreDifferences and ServerSideApply); Kueue's values stay.
    Applied client-side, the TrainJob's sync failed in 2 runs of 7: self-heal re-applied it
    before Argo CD's cache had seen it, without Kueue's runtime patch, which Trainer refuses."""
    kube, app, other = plain.kube, "plain", "unqueued"
    plain.specs["plain.yaml"] = spec(app, "low")
    plain.specs["unqueued.yaml"] = trainjob_spec(other, NAMESPACE, 2)
    revision = plain.commit("a queued Job and an unqueued TrainJob, no hooks")
    with kwok_paused(kube):
        install(plain)
        admitted(kube, NAMESPACE, "Job", app)
        wait_for(f"{app} resumed", lambda: not suspended(kube, NAMESPACE, "job", app))
        wait_for(f"{other}: Kueue's runtime patch", lambda: kueue_patch(kube, other))
        for name in (app, other):
            wait_synced(kube, name, revision)
        resources = {app: "jobs", other: "trainjobs.trainer.kubeflow.org"}
        synced = {name: argocd_writes(kube, resource, name) for name, resource in resources.items()}

        submit(kube, spec("higher", "high"), "high")  # not through Argo CD
        evicted = wait_for(
            f"{app} preempted", lambda: workload_condition(kube, NAMESPACE, "Job", app, "Evicted")
        )
        assert evicted["reason"] == "Preempted"
        wait_for(f"{app} suspended", lambda: suspended(kube, NAMESPACE, "job", app))
        reconcile(kube, app)  # compared with Kueue's suspend: Synced, and left as Kueue set it
        assert suspended(kube, NAMESPACE, "job", app)

        leave(kube, NAMESPACE, "higher")
        readmitted(kube, NAMESPACE, "Job", app)
        wait_for(f"{app} resumed again", lambda: not suspended(kube, NAMESPACE, "job", app))
        for name in (app, other):
            reconcile(kube, name)
    assert kueue_patch(kube, other)  # self-heal left it
    # no write of Argo CD's to either object after their first sync (a sync that re-applies
    # the same fields, as self-heal may once right after the first, changes nothing)
    assert {name: argocd_writes(kube, res, name) for name, res in resources.items()} == synced


def test_a_flavors_node_labels_beside_the_specs_node_selector_keep_the_application_synced(
    plain: Loop,
) -> None:
    """A queued Job whose spec has a nodeSelector of its own, in a queue whose flavor adds node
    labels: Kueue merges them into the pod template on admission (pkg/podset/podset.go:181-238
    at v0.19.2). The Application stays Synced through a hard refresh, and Kueue's labels and
    the spec's stay side by side (an unsuspended Job's template is immutable: a sync that
    tried to take Kueue's labels away would fail). Admitted once the first sync is done: an
    admission in the moment after it, before Argo CD's cache has seen the Job, races the
    self-heal that cache starts (docs/scheduling.md, "Argo CD and Kueue")."""
    kube, app, namespace = plain.kube, "zoned", "acd-kueue-zone"
    kube.apply(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: zone-a}\n"
        f"spec: {{nodeLabels: {json.dumps(ZONE)}}}\n"
    )
    queue(kube, namespace, 2, flavor="zone-a")
    stop_policy(kube, namespace, "Hold")
    zoned = spec(app, "low", nodeSelector=DISK)
    zoned["metadata"]["namespace"] = namespace
    plain.specs["zoned.yaml"] = zoned
    revision = plain.commit("a queued Job with a nodeSelector, in a flavor with node labels")
    with kwok_paused(kube):
        install(plain)
        wait_synced(kube, app, revision)
        stop_policy(kube, namespace, "None")
        admitted(kube, namespace, "Job", app)
        wait_for(f"{app} resumed", lambda: not suspended(kube, namespace, "job", app))
        reconcile(kube, app)  # compared with Kueue's nodeSelector: Synced
        template = get(kube, namespace, "jobs", app)["spec"]["template"]
        assert template["spec"]["nodeSelector"] == {**DISK, **ZONE}


def stop_policy(kube: Kube, cluster_queue: str, policy: str) -> None:
    """Hold a ClusterQueue's admissions, or let them go on (``None``)."""
    patch = json.dumps({"spec": {"stopPolicy": policy}})
    kube.run("patch", "clusterqueue", cluster_queue, "--type=merge", "-p", patch)


def kueue_patch(kube: Kube, name: str) -> list[dict[str, Any]]:
    found = get(kube, NAMESPACE, "trainjobs.trainer.kubeflow.org", name) or {"spec": {}}
    patches = found["spec"].get("runtimePatches", [])
    return [p for p in patches if p.get("manager") == "kueue.x-k8s.io/manager"]


def argocd_writes(kube: Kube, resource: str, name: str) -> list[str]:
    """When Argo CD last wrote the object (its managedFields entry; a webhook's change at
    create is the creator's)."""
    fields = get(kube, NAMESPACE, resource, name)["metadata"]["managedFields"]
    return [f["time"] for f in fields if f["manager"] == "argocd-controller"]
