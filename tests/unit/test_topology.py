"""spec.scheduling.topology: Kueue's topology annotations on a queued job's training pod
templates (a Kubeflow PaddleJob's Master and Workers grouped), Volcano's network topology on a
gang Volcano's podgroup controller groups, nothing on the data Job, and the rules
topology-unhonoured and topology-tier."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from paddlegen.pipeline import build
from tests import builders
from tests.builders import findings

RACK = "example.com/rack"
REQUIRED = {"kueue.x-k8s.io/podset-required-topology": RACK}
VOLCANO_HARD = {
    "volcano.sh/network-topology-mode": "hard",
    "volcano.sh/network-topology-highest-tier": "1",
}


def spec(workload: str, scheduling: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return builders.spec(
        workload, metadata={"name": "ring"}, worker={"replicas": 4}, scheduling=scheduling, **extra
    )


def rendered(data: dict[str, Any]) -> list[dict[str, Any]]:
    stream = build.manifest_stream([builders.rendered(data)])
    return [o for o in yaml.safe_load_all(stream) if o]


def of_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def pod_annotations(template: dict[str, Any]) -> dict[str, str]:
    annotations: dict[str, str] = template["metadata"].get("annotations", {})
    return annotations


@pytest.mark.parametrize("topology", [{"required": RACK}, {"preferred": RACK}])
def test_a_queued_collective_jobs_ranks_carry_kueues_topology_and_the_data_job_none(topology):
    data = spec(
        "collective-job",
        {"kueue": {"queue": "team"}, "topology": topology},
        volumes=[{"name": "data", "mountPath": "/data", "emptyDir": {}}],
        dataPrep={"volume": "data"},
    )
    training, data_job = sorted(of_kind(rendered(data), "Job"), key=lambda j: j["metadata"]["name"])
    key = "required" if "required" in topology else "preferred"
    assert pod_annotations(training["spec"]["template"]) == {
        f"kueue.x-k8s.io/podset-{key}-topology": RACK
    }
    assert data_job["metadata"]["name"] == "ring-data"
    assert pod_annotations(data_job["spec"]["template"]) == {}


def test_a_queued_jobset_carries_it_on_its_replicated_jobs_pods():
    data = spec("collective-job", {"kueue": {"queue": "team"}, "topology": {"required": RACK}},
                run={"restarts": 2})  # fmt: skip
    (jobset,) = of_kind(rendered(data), "JobSet")
    (replicated,) = jobset["spec"]["replicatedJobs"]
    assert pod_annotations(replicated["template"]["spec"]["template"]) == REQUIRED


def test_a_queued_trainjob_carries_it_in_its_runtime_patch():
    data = spec("trainjob", {"kueue": {"queue": "team"}, "topology": {"required": RACK}})
    (trainjob,) = of_kind(rendered(data), "TrainJob")
    (patch,) = trainjob["spec"]["runtimePatches"]
    (node,) = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert pod_annotations(node["template"]["spec"]["template"]) == REQUIRED


@pytest.mark.parametrize(("ps", "grouped"), [(1, True), (2, False), (0, False)])
def test_a_kubeflow_paddlejobs_one_master_is_grouped_with_its_workers(ps, grouped):
    data = spec("kubeflow-paddlejob", {"kueue": {"queue": "team"}, "topology": {"required": RACK}})
    if ps:
        data["spec"]["ps"] = {"replicas": ps}
    (paddlejob,) = of_kind(rendered(data), "PaddleJob")
    group = {"kueue.x-k8s.io/podset-group-name": "paddle"} if grouped else {}
    for replica in paddlejob["spec"]["paddleReplicaSpecs"].values():
        assert pod_annotations(replica["template"]) == {**REQUIRED, **group}


@pytest.mark.parametrize("workload", ["job", "distributed-job", "collective-job"])
def test_a_volcano_gang_volcano_groups_carries_its_network_topology(workload):
    topology = {"required": RACK, "hyperNodeTier": 1}
    data = spec(workload, {"scheduler": "volcano", "topology": topology})
    if workload == "job":
        data["spec"].pop("worker")
    (job,) = of_kind(rendered(data), "Job")
    annotations = pod_annotations(job["spec"]["template"])
    assert {k: v for k, v in annotations.items() if k.startswith("volcano.sh/")} == VOLCANO_HARD


def test_preferred_is_volcanos_soft_mode():
    topology = {"preferred": RACK, "hyperNodeTier": 2}
    (job,) = of_kind(rendered(spec("collective-job", {"scheduler": "volcano",
                                                      "topology": topology})), "Job")  # fmt: skip
    annotations = pod_annotations(job["spec"]["template"])
    assert annotations["volcano.sh/network-topology-mode"] == "soft"
    assert annotations["volcano.sh/network-topology-highest-tier"] == "2"


def test_a_queued_volcano_gang_is_placed_by_kueue_alone():
    topology = {"required": RACK, "hyperNodeTier": 1}
    data = spec("collective-job", {"scheduler": "volcano", "kueue": {"queue": "team"},
                                   "topology": topology})  # fmt: skip
    (job,) = of_kind(rendered(data), "Job")
    annotations = pod_annotations(job["spec"]["template"])
    assert annotations == {"scheduling.volcano.sh/queue-name": "default", **REQUIRED}


def test_without_a_topology_the_pods_carry_none_of_it():
    (job,) = of_kind(rendered(spec("collective-job", {"kueue": {"queue": "team"}})), "Job")
    assert pod_annotations(job["spec"]["template"]) == {}


BODY = "spec:\n  workload: {workload}\n  image: img:1\n  args: [a]\n  scheduling:\n"


@pytest.mark.parametrize(
    ("workload", "scheduling", "rule"),
    [
        ("collective-job", "    topology: {required: r}\n", "topology-unhonoured"),
        ("collective-job", "    scheduler: volcano\n    topology: {required: r}\n",
         "topology-tier"),
        ("kubeflow-paddlejob", "    scheduler: volcano\n    topology: {required: r}\n",
         "topology-unhonoured"),
        ("paddlejob", "    scheduler: volcano\n    topology: {required: r, hyperNodeTier: 1}\n",
         "topology-unhonoured"),
    ],
)  # fmt: skip
def test_a_topology_nothing_would_honour_is_refused(workload, scheduling, rule):
    found = findings(BODY.format(workload=workload) + scheduling)
    (line,) = [line for line in found if "$.spec.scheduling.topology:" in line]
    assert line.endswith(f"[{rule}]")
    assert ": error: " in line


@pytest.mark.parametrize(
    "scheduling",
    [
        "    kueue: {queue: team}\n    topology: {required: r}\n",
        "    scheduler: volcano\n    topology: {preferred: r, hyperNodeTier: 3}\n",
        "    scheduler: volcano\n    kueue: {queue: team}\n    topology: {required: r}\n",
    ],
)
def test_a_topology_kueue_or_volcano_honours_has_no_finding(scheduling):
    found = findings(BODY.format(workload="collective-job") + scheduling)
    assert [line for line in found if "topology" in line] == []
