"""Kueue v0.19.2 (`hack/local-cluster --with kueue`) queues the jobs paddlegen renders on KWOK's
fake nodes (#27): its webhook suspends a job of a queue on create, a ClusterQueue's quota
admits one 3-CPU job of two and tells why the other waits, the second runs once the first has
finished, a higher WorkloadPriorityClass preempts a lower one, each workload Kueue integrates
is admitted and resumed (its pods made; Kubeflow's PaddleJob's PodGroup), and `validate
--server` names a LocalQueue that does not exist.

The queue's objects are plain YAML here; each job is queued by its spec's `scheduling.kueue`
(``queued_render``). KWOK completes a batch Job's pods as soon as they run, so the tests that
need a job to keep running pause it and set the pods' status themselves, as a kubelet would
(test_collective.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from paddlegen.pipeline import build
from paddlegen.spec.loader import parse_spec
from paddlegen.validate.kueue_queues import RULE
from paddlegen.validate.server import Server, dry_run
from tests.cluster.conftest import Kube, local_cluster, with_extras
from tests.cluster.test_argocd_loop import kwok_paused
from tests.cluster.test_collective import INDEX, fail, run_on
from tests.cluster.test_paddleflow import get, wait_for
from tests.cluster.test_trainjob import install_runtimes

FLAVOR = "default-flavor"


@pytest.fixture(scope="module")
def kueue(kube: Kube) -> Kube:
    """One cluster for the module: KWOK's nodes, Kueue, and the controllers of every workload
    it queues (JobSet and Trainer for `trainjob`, training-operator for `kubeflow-paddlejob`);
    a ResourceFlavor and two WorkloadPriorityClasses every test shares."""
    with_extras(kube, ["kwok", "jobset", "trainer", "training-operator", "kueue"])
    install_runtimes(kube)
    flavor_and_priorities(kube)
    return kube


def flavor_and_priorities(kube: Kube) -> None:
    """The ResourceFlavor every ClusterQueue here uses, and WorkloadPriorityClasses `low`
    (100) and `high` (1000)."""
    kube.apply(
        yaml.safe_dump_all(
            [
                {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
                 "metadata": {"name": FLAVOR}},
                *(
                    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
                     "metadata": {"name": name}, "value": value}
                    for name, value in (("low", 100), ("high", 1000))
                ),
            ]
        )
    )  # fmt: skip


def queue(kube: Kube, namespace: str, cpu: int | str, *others: str, flavor: str = FLAVOR) -> None:
    """``namespace`` (and the ``others``) with a LocalQueue `team` of one ClusterQueue named
    after ``namespace`` (``cpu`` CPUs of ``flavor``; memory plenty: Kueue admits no workload
    asking for a resource its ClusterQueue does not cover), which preempts lower priorities."""
    for name in (namespace, *others):
        kube.run("create", "namespace", name)
    kube.apply(
        yaml.safe_dump_all(
            [
                {
                    "apiVersion": "kueue.x-k8s.io/v1beta2",
                    "kind": "ClusterQueue",
                    "metadata": {"name": namespace},
                    "spec": {
                        "namespaceSelector": {
                            "matchExpressions": [
                                {
                                    "key": "kubernetes.io/metadata.name",
                                    "operator": "In",
                                    "values": [namespace, *others],
                                }
                            ]
                        },
                        "preemption": {"withinClusterQueue": "LowerPriority"},
                        "resourceGroups": [
                            {
                                "coveredResources": ["cpu", "memory"],
                                "flavors": [
                                    {
                                        "name": flavor,
                                        "resources": [
                                            {"name": "cpu", "nominalQuota": cpu},
                                            {"name": "memory", "nominalQuota": "256Gi"},
                                        ],
                                    }
                                ],
                            }
                        ],
                    },
                },
                *(
                    {
                        "apiVersion": "kueue.x-k8s.io/v1beta2",
                        "kind": "LocalQueue",
                        "metadata": {"name": "team", "namespace": name},
                        "spec": {"clusterQueue": namespace},
                    }
                    for name in (namespace, *others)
                ),
            ]
        )
    )


def spec(name: str, namespace: str, workload: str, ranks: int, **extra: Any) -> dict[str, Any]:
    """A job of ``ranks`` pods of one CPU each (`job`: one pod of ``ranks`` CPUs)."""
    cpu = ranks if workload == "job" else 1
    body: dict[str, Any] = {
        "workload": workload,
        "image": "registry.example.com/resnet:v1",
        "args": ["train.py"],
        "resources": {"requests": {"cpu": str(cpu)}, "limits": {"memory": "1Gi"}},
        **extra,
    }
    if workload != "job":
        body["worker"] = {"replicas": ranks}
    if workload == "distributed-job":
        body.pop("args")
        body["volumes"] = [{"name": "jobpath", "mountPath": "/home/jobpath", "emptyDir": {}}]
        body["distributed"] = {"volume": "jobpath", "trainConfigDir": "quick_start"}
    return {
        "apiVersion": "paddlegen/v1",
        "kind": "TrainingJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": body,
    }


def queued_render(data: dict[str, Any], queue_name: str, priority: str = "") -> build.Rendered:
    """``data`` queued in ``queue_name`` (and the WorkloadPriorityClass ``priority``) by its
    `spec.scheduling.kueue`, rendered by paddlegen."""
    kueue = {"queue": queue_name, **({"priorityClass": priority} if priority else {})}
    scheduling = {**data["spec"].get("scheduling", {}), "kueue": kueue}
    queued = {**data, "spec": {**data["spec"], "scheduling": scheduling}}
    return build.render_document(parse_spec(yaml.safe_dump(queued).encode(), "spec.yaml"))


def submit(kube: Kube, data: dict[str, Any], priority: str = "") -> None:
    kube.apply(build.manifest_stream([queued_render(data, "team", priority)]))


def workload(kube: Kube, namespace: str, kind: str, name: str) -> dict[str, Any] | None:
    """The Workload Kueue made for the job ``kind``/``name`` (it owns it by reference)."""
    for found in get(kube, namespace, "workloads.kueue.x-k8s.io")["items"]:
        refs = found["metadata"].get("ownerReferences", [])
        if any(r["kind"] == kind and r["name"] == name for r in refs):
            return found
    return None


def workload_condition(
    kube: Kube, namespace: str, kind: str, name: str, kind_of_condition: str, status: str = "True"
) -> dict[str, Any] | None:
    found = workload(kube, namespace, kind, name) or {}
    return next(
        (
            c
            for c in found.get("status", {}).get("conditions", [])
            if c["type"] == kind_of_condition and c["status"] == status
        ),
        None,
    )


def admitted(kube: Kube, namespace: str, kind: str, name: str) -> dict[str, Any]:
    return wait_for(
        f"{kind} {name} admitted",
        lambda: workload_condition(kube, namespace, kind, name, "Admitted"),
    )


def leave(kube: Kube, namespace: str, job: str) -> None:
    """Delete the Job ``job`` and its pods at once, as a kubelet confirming their end would
    (KWOK paused keeps them Terminating): its Workload goes, and its quota."""
    kube.run("delete", "job", "-n", namespace, job, "--wait=false")
    kube.run("delete", "pods", "-n", namespace, "-l", f"job-name={job}", "--force",
             "--grace-period=0")  # fmt: skip


def readmitted(kube: Kube, namespace: str, kind: str, name: str) -> None:
    """Wait until the job Kueue evicted is admitted again (its Evicted condition gone)."""
    wait_for(
        f"{kind} {name} admitted again",
        lambda: (
            workload_condition(kube, namespace, kind, name, "Evicted") is None
            and workload_condition(kube, namespace, kind, name, "Admitted")
        ),
    )


def suspended(kube: Kube, namespace: str, resource: str, name: str) -> bool:
    obj = get(kube, namespace, resource, name)
    spec = obj["spec"].get("runPolicy", obj["spec"])  # Kubeflow's PaddleJob: in runPolicy
    return spec.get("suspend") is True


def pods_of_job(kube: Kube, namespace: str, job: str) -> list[dict[str, Any]]:
    return get(kube, namespace, "pods", "-l", f"batch.kubernetes.io/job-name={job}")["items"]


def running(kube: Kube, namespace: str, job: str, count: int) -> list[dict[str, Any]]:
    """The ``count`` pods of ``job``, once made, reported Running as a kubelet would."""
    pods = wait_for(
        f"{count} pods of {job}",
        lambda: (found := pods_of_job(kube, namespace, job)) and len(found) == count and found,
    )
    for i, pod in enumerate(pods):
        run_on(kube, namespace, pod, f"10.0.0.{i + 1}")
    return pods


@pytest.fixture
def paused(kueue: Kube) -> Iterator[Kube]:
    with kwok_paused(kueue):
        yield kueue


def test_the_webhook_suspends_a_job_of_a_queue_on_create(kueue: Kube) -> None:
    # What Kueue's mutating webhook does; without it the Job would start at once.
    kube, namespace = kueue, "kq-webhook"
    queue(kube, namespace, cpu=4)
    rendered = queued_render(spec("held", namespace, "job", 1), "no-such-queue")
    kube.apply(build.manifest_stream([rendered]))
    assert suspended(kube, namespace, "job", "held")
    pending = wait_for(
        "the Workload of held",
        lambda: workload_condition(kube, namespace, "Job", "held", "QuotaReserved", "False"),
    )
    assert "LocalQueue no-such-queue doesn't exist" in pending["message"]
    assert pods_of_job(kube, namespace, "held") == []


def test_the_quota_admits_one_job_and_the_second_once_the_first_has_finished(
    paused: Kube,
) -> None:
    kube, namespace = paused, "kq-quota"
    queue(kube, namespace, cpu=4)
    submit(kube, spec("first", namespace, "collective-job", 3))
    admitted(kube, namespace, "Job", "first")
    first = running(kube, namespace, "first", 3)
    submit(kube, spec("second", namespace, "collective-job", 3))
    waiting = wait_for(
        "the second Workload told why it waits",
        lambda: workload_condition(kube, namespace, "Job", "second", "QuotaReserved", "False"),
    )
    # 3 CPUs of 4 are taken: the second needs 2 more than the 1 left
    assert "insufficient unused quota for cpu in flavor default-flavor" in waiting["message"]
    assert suspended(kube, namespace, "job", "second")
    assert pods_of_job(kube, namespace, "second") == []
    assert not suspended(kube, namespace, "job", "first")

    for pod in first:
        kube.succeed(namespace, pod["metadata"]["name"])
    wait_for(
        "first finished",
        lambda: workload_condition(kube, namespace, "Job", "first", "Finished"),
    )
    admitted(kube, namespace, "Job", "second")
    assert not suspended(kube, namespace, "job", "second")
    running(kube, namespace, "second", 3)


def test_a_higher_priority_preempts_a_lower_one(paused: Kube) -> None:
    kube, namespace = paused, "kq-preempt"
    queue(kube, namespace, cpu=4)
    submit(kube, spec("low", namespace, "collective-job", 3), priority="low")
    admitted(kube, namespace, "Job", "low")
    running(kube, namespace, "low", 3)
    submit(kube, spec("high", namespace, "collective-job", 3), priority="high")
    evicted = wait_for(
        "low preempted",
        lambda: workload_condition(kube, namespace, "Job", "low", "Evicted"),
    )
    assert evicted["reason"] == "Preempted"
    assert "Preempted to accommodate a workload" in evicted["message"]
    assert (workload(kube, namespace, "Job", "low") or {})["spec"]["priority"] == 100
    wait_for("low suspended again", lambda: suspended(kube, namespace, "job", "low"))
    admitted(kube, namespace, "Job", "high")
    running(kube, namespace, "high", 3)


# workload -> (the top-level object's resource, Kind); the pods each runs
WORKLOADS = {
    "job": ("job", "Job"),
    "distributed-job": ("job", "Job"),
    "collective-job": ("job", "Job"),
    "trainjob": ("trainjob", "TrainJob"),
    "kubeflow-paddlejob": ("paddlejob.kubeflow.org", "PaddleJob"),
}


@pytest.mark.parametrize("workload_name", list(WORKLOADS))
def test_each_workload_kueue_integrates_is_admitted_and_runs(
    paused: Kube, workload_name: str
) -> None:
    kube, namespace, name = paused, f"kq-{workload_name}", "w"
    resource, kind = WORKLOADS[workload_name]
    queue(kube, namespace, cpu=4)
    submit(kube, spec(name, namespace, workload_name, 2))
    assert admitted(kube, namespace, kind, name)["reason"] == "Admitted"
    (pod_set,) = workload(kube, namespace, kind, name)["status"]["admission"]["podSetAssignments"]
    assert pod_set["flavors"]["cpu"] == FLAVOR
    # Kueue resumes the job after it has admitted its Workload, in a reconcile of its own
    wait_for(f"{workload_name} resumed", lambda: not suspended(kube, namespace, resource, name))
    if workload_name == "kubeflow-paddlejob":
        # resumed, the training-operator makes the gang's PodGroup; its pods only once Volcano
        # (not running here: test_kubeflow.py) has placed the gang
        wait_for(
            "the PaddleJob's PodGroup",
            lambda: get(kube, namespace, "podgroups.scheduling.volcano.sh", name),
        )
        return
    ranks = 1 if workload_name == "job" else 2
    wait_for(
        f"the pods of {workload_name}",
        lambda: len(get(kube, namespace, "pods")["items"]) >= ranks,
    )


def test_validate_server_names_a_local_queue_that_does_not_exist(
    kueue: Kube, monkeypatch: pytest.MonkeyPatch
) -> None:
    kube, namespace = kueue, "kq-validate"
    queue(kube, namespace, cpu=4)
    monkeypatch.setenv("PATH", kube.env["PATH"])  # the pinned kubectl
    server = Server(kubeconfig=kube.env["KUBECONFIG"])
    good = queued_render(spec("good", namespace, "job", 1), "team")
    lost = queued_render(spec("lost", namespace, "job", 1), "no-such-queue")
    (found,) = dry_run([good, lost], server)
    assert (found.severity, found.rule, found.file) == ("warning", RULE.id, "spec.yaml")
    assert found.message == (
        "Job/lost names the Kueue LocalQueue 'no-such-queue', which namespace 'kq-validate' "
        "does not have: Kueue keeps the job suspended until it exists"
    )
    assert dry_run([good], server) == []


def test_a_volcano_gang_is_admitted_preempted_and_admitted_again_in_its_podgroup(
    paused: Kube,
) -> None:
    """Kueue decides when a `scheduler: volcano` job starts, Volcano places its gang: no
    PodGroup while it waits (Volcano's podgroup controller works from pods), one owned by the
    Job once admitted, kept through a preemption, and the pods of the re-admission join it
    ("Queueing with Kueue" -> "With Volcano")."""
    kube, namespace = with_extras(paused, ["volcano"]), "kq-volcano"
    queue(kube, namespace, cpu=2)
    gang = {"scheduling": {"scheduler": "volcano"}}
    submit(kube, spec("low", namespace, "collective-job", 2, **gang), priority="low")
    admitted(kube, namespace, "Job", "low")
    group = wait_for("the Job's PodGroup", lambda: get(kube, namespace, "podgroups")["items"])
    (owner,) = group[0]["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], group[0]["spec"]["minMember"]) == ("Job", "low", 2)
    pods = wait_for("the gang bound", lambda: bound(kube, namespace, "low", 2))
    assert {p["spec"]["schedulerName"] for p in pods} == {"volcano"}

    submit(kube, spec("high", namespace, "collective-job", 2), priority="high")
    wait_for("low preempted", lambda: workload_condition(kube, namespace, "Job", "low", "Evicted"))
    wait_for("low suspended again", lambda: suspended(kube, namespace, "job", "low"))
    for pod in pods:  # a kubelet's report of the ranks the suspension stopped
        fail(kube, namespace, pod, exit_code=143)
    admitted(kube, namespace, "Job", "high")
    leave(kube, namespace, "high")
    readmitted(kube, namespace, "Job", "low")
    again = wait_for("the gang bound again", lambda: bound(kube, namespace, "low", 2))
    assert {p["metadata"]["name"] for p in again}.isdisjoint(p["metadata"]["name"] for p in pods)
    (same,) = get(kube, namespace, "podgroups")["items"]
    assert same["metadata"]["uid"] == group[0]["metadata"]["uid"]
    assert {p["metadata"]["annotations"]["scheduling.k8s.io/group-name"] for p in again} == {
        same["metadata"]["name"]
    }


def bound(kube: Kube, namespace: str, job: str, count: int) -> list[dict[str, Any]] | None:
    """The ``count`` pods of ``job`` not being deleted, once each is bound to a node."""
    found = [
        p
        for p in pods_of_job(kube, namespace, job)
        if "deletionTimestamp" not in p["metadata"] and p["spec"].get("nodeName")
    ]
    return found if len(found) == count else None


TAS_FLAVOR = "racks"


def topology_flavor(kube: Kube) -> None:
    """A Topology of the fake nodes' block, rack and host labels, and the ResourceFlavor of
    those nodes that names it: Kueue's topology-aware scheduling, as `paddlegen kueue` writes
    it."""
    kwok = local_cluster().kwok
    levels = [kwok.BLOCK_LABEL, kwok.RACK_LABEL, "kubernetes.io/hostname"]
    kube.apply(
        yaml.safe_dump_all(
            [
                {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology",
                 "metadata": {"name": "fake-racks"},
                 "spec": {"levels": [{"nodeLabel": label} for label in levels]}},
                {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
                 "metadata": {"name": TAS_FLAVOR},
                 "spec": {"nodeLabels": {"type": "kwok"}, "topologyName": "fake-racks"}},
            ]
        )
    )  # fmt: skip


def test_a_job_that_requires_a_rack_is_placed_in_the_rack_with_room_in_rank_order(
    kueue: Kube,
) -> None:
    """A collective-job of four ranks of 40 CPUs (one per 64-CPU node) that must stay in one
    rack: Kueue admits it into rack-2, whose four nodes hold it, not rack-1 of three, and
    gives rank i the i-th host of the rack in the Topology's order (block, rack, host: rank
    order follows the wiring, sigs.k8s.io/kueue v0.19.2 pkg/cache/scheduler/
    tas_flavor_snapshot.go:1701-1729, pkg/controller/tas/topology_ungater.go:572-586)."""
    kwok = local_cluster().kwok
    kube, namespace, name = kueue, "kq-topology", "ring"
    topology_flavor(kube)
    queue(kube, namespace, cpu=200, flavor=TAS_FLAVOR)
    data = spec(name, namespace, "collective-job", 4)
    data["spec"]["resources"]["requests"]["cpu"] = "40"
    data["spec"]["scheduling"] = {"topology": {"required": kwok.RACK_LABEL}}
    submit(kube, data)
    admitted(kube, namespace, "Job", name)
    (pod_set,) = workload(kube, namespace, "Job", name)["spec"]["podSets"]
    assert pod_set["topologyRequest"]["required"] == kwok.RACK_LABEL

    def bound() -> list[dict[str, Any]]:
        pods = pods_of_job(kube, namespace, name)
        return pods if len([p for p in pods if p["spec"].get("nodeName")]) == 4 else []

    pods = wait_for("the four ranks bound", bound)
    places = kwok.node_places()
    node_of = {int(p["metadata"]["labels"][INDEX]): p["spec"]["nodeName"] for p in pods}
    assert {places[int(node.rsplit("-", 1)[1])][1] for node in node_of.values()} == {"rack-2"}
    # ranks 0..3 on the rack's hosts in order: neighbours in the ring are neighbours in the rack
    assert [node_of[rank] for rank in range(4)] == sorted(node_of.values())
