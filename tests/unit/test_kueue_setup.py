"""`paddlegen kueue` (gitops/kueue_setup.py): Kueue's objects from a file of teams and quotas,
valid by Kueue's CRD schemas, its input held to a spec's error model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from paddlegen.cli import cli
from paddlegen.errors import ManifestError
from paddlegen.gitops import kueue_manager, kueue_setup
from paddlegen.validate.inprocess import validate_in_process
from tests.conftest import DATA, EXAMPLES, ROOT

SETUP = EXAMPLES / "gitops" / "platform" / "kueue.yaml"
COMMITTED = EXAMPLES / "gitops" / "kueue"
INVALID = sorted((DATA / "kueue" / "invalid").glob("*.yaml"))


def planned(text: str | None = None) -> dict[str, dict[str, Any]]:
    data = yaml.safe_load(text) if text else kueue_setup.load(SETUP)[0]
    return {
        name: yaml.safe_load(body)
        for name, body in kueue_setup.plan(data).items()
        if name != "kustomization.yaml"
    }


def by_kind(objects: dict[str, dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {
        o["metadata"].get("namespace", "") + "/" + o["metadata"]["name"]: o
        for o in objects.values()
        if o["kind"] == kind
    }


def test_the_example_plans_to_its_snapshot(yaml_snapshot):
    data, warnings = kueue_setup.load(SETUP)
    assert warnings == []
    files = kueue_setup.plan(data)
    assert "".join(f"# ---- {path} ----\n{text}" for path, text in files.items()) == yaml_snapshot


def test_the_committed_example_output_is_what_paddlegen_kueue_writes(runner, tmp_path):
    result = runner.invoke(cli, ["kueue", str(SETUP), "-o", str(tmp_path / "kueue")])
    assert result.exit_code == 0, result.output
    written = {p.name: p.read_text() for p in (tmp_path / "kueue").iterdir()}
    assert written == {p.name: p.read_text() for p in COMMITTED.iterdir()}
    assert "12 written, 0 unchanged, 0 removed\n" in result.stderr
    assert "restart Kueue (kubectl -n kueue-system rollout restart deployment" in result.stderr


def test_every_object_is_valid_by_kueues_crd_schemas_at_v1beta2_or_kubernetes():
    files = kueue_setup.plan(kueue_setup.load(SETUP)[0])
    objects = [(name, text) for name, text in files.items() if name != "kustomization.yaml"]
    assert validate_in_process(objects) == []
    versions = {yaml.safe_load(t)["apiVersion"] for _, t in objects}
    assert versions == {"kueue.x-k8s.io/v1beta2", "v1"}  # v1: Kueue's own ConfigMap


def test_a_team_gets_a_cluster_queue_and_a_local_queue_of_its_name_in_each_namespace():
    objects = planned()
    assert sorted(by_kind(objects, "LocalQueue")) == [
        "ml-training/ml-training",
        "research-dev/research",
        "research/research",
    ]
    assert all(
        q["spec"] == {"clusterQueue": q["metadata"]["name"]}
        for q in by_kind(objects, "LocalQueue").values()
    )
    research = by_kind(objects, "ClusterQueue")["/research"]["spec"]
    assert research["namespaceSelector"]["matchExpressions"] == [
        {
            "key": "kubernetes.io/metadata.name",
            "operator": "In",
            "values": ["research", "research-dev"],
        }
    ]


def test_every_flavor_of_a_queue_lists_every_resource_of_its_one_group_in_order():
    """Kueue refuses a resource in two groups and a flavor whose resources differ from the
    group's coveredResources (v0.19.2 clusterqueue_webhook.go validateResourceGroups)."""
    (group,) = by_kind(planned(), "ClusterQueue")["/ml-training"]["spec"]["resourceGroups"]
    assert group["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu"]
    assert group["flavors"] == [
        {
            "name": "a100",
            "resources": [
                {"name": "cpu", "nominalQuota": "48"},
                {"name": "memory", "nominalQuota": "384Gi"},
                {"name": "nvidia.com/gpu", "nominalQuota": "8"},
            ],
        },
        {
            "name": "cpu",
            "resources": [
                {"name": "cpu", "nominalQuota": "32"},
                {"name": "memory", "nominalQuota": "128Gi"},
                {"name": "nvidia.com/gpu", "nominalQuota": "0"},
            ],
        },
    ]


def test_a_cohort_lets_teams_borrow_and_priorities_preempt_within_a_queue():
    queues = by_kind(planned(), "ClusterQueue")
    assert {q["spec"]["cohortName"] for q in queues.values()} == {"ml"}
    assert all(
        q["spec"]["preemption"]
        == {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"}
        for q in queues.values()
    )
    alone = SETUP.read_text().replace("cohort: ml", "")
    for queue in by_kind(planned(alone), "ClusterQueue").values():
        assert "cohortName" not in queue["spec"]
        assert queue["spec"]["preemption"] == {"withinClusterQueue": "LowerPriority"}


def test_a_flavors_node_labels_are_its_spec_never_its_own_labels():
    # kueue#425: labels of the ResourceFlavor object once leaked into pods' nodeSelectors
    a100 = by_kind(planned(), "ResourceFlavor")["/a100"]
    assert a100["spec"]["nodeLabels"] == {"cloud.google.com/gke-accelerator": "nvidia-tesla-a100"}
    assert a100["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "paddlegen"}
    assert a100["spec"]["tolerations"][0]["key"] == "nvidia.com/gpu"


def test_a_topology_is_kueues_and_its_flavor_names_it():
    objects = planned()
    (topology,) = by_kind(objects, "Topology").values()
    assert topology["metadata"]["name"] == "gpu-fabric"
    assert topology["spec"]["levels"] == [
        {"nodeLabel": "cloud.provider.com/topology-block"},
        {"nodeLabel": "cloud.provider.com/topology-rack"},
        {"nodeLabel": "kubernetes.io/hostname"},
    ]
    flavors = by_kind(objects, "ResourceFlavor")
    assert flavors["/a100"]["spec"]["topologyName"] == "gpu-fabric"
    assert "topologyName" not in flavors["/cpu"]["spec"]


def test_priority_classes_are_workload_priority_classes():
    classes = by_kind(planned(), "WorkloadPriorityClass")
    assert {name: c["value"] for name, c in classes.items()} == {"/high": 1000, "/low": 100}


def test_the_kustomization_applies_what_queues_name_first():
    kustomization = yaml.safe_load(
        kueue_setup.plan(kueue_setup.load(SETUP)[0])["kustomization.yaml"]
    )
    kinds = [name.split("_")[2] for name in kustomization["resources"]]
    assert kinds.index("clusterqueue") > max(
        i for i, k in enumerate(kinds) if k in ("resourceflavor", "workloadpriorityclass")
    )
    assert kinds.index("topology") < kinds.index("resourceflavor")


@pytest.mark.parametrize("setup", INVALID, ids=lambda p: p.stem)
def test_an_invalid_file_is_reported_at_its_lines_and_nothing_is_written(
    runner, setup: Path, tmp_path, monkeypatch, text_snapshot
):
    monkeypatch.chdir(ROOT)
    rel = str(setup.relative_to(ROOT))
    out = tmp_path / "kueue"
    result = runner.invoke(cli, ["kueue", rel, "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.stderr
    assert not out.exists()
    assert result.stderr == text_snapshot
    lines = result.stderr.splitlines()
    assert lines[-1] == f"paddlegen: nothing written: {rel} has errors"
    for line in lines[:-2]:  # file:line:col: severity: $.field.path: message [rule]
        assert line.startswith(f"{rel}:"), line
        assert line.split(":")[1].isdigit() and line.split(":")[2].isdigit(), line
        assert line.split(": ", 2)[2].startswith("$"), line


def test_an_invalid_object_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    # what the schemas of Kueue's CRDs refuse, should the planning ever produce it
    real = kueue_setup.objects
    broken = lambda data: [{**real(data)[0], "value": "high"}]  # noqa: E731
    monkeypatch.setattr(kueue_setup, "objects", broken)
    monkeypatch.setenv("PATH", str(tmp_path))  # no kubeconform: the in-process validator
    monkeypatch.delenv("PADDLEGEN_KUBECONFORM", raising=False)
    with pytest.raises(ManifestError) as caught:
        kueue_setup.generate(SETUP, tmp_path / "kueue")
    assert [d.path for d in caught.value.diagnostics] == ["WorkloadPriorityClass/high value"]
    assert not (tmp_path / "kueue").exists()


def test_warnings_are_shown_and_the_objects_written(runner, tmp_path):
    setup = tmp_path / "kueue.yaml"
    setup.write_text(
        SETUP.read_text().replace("  - name: cpu\n", "  - name: spare\n  - name: cpu\n")
    )
    result = runner.invoke(cli, ["kueue", str(setup), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "no team has quota on flavor 'spare'" in result.stderr
    assert "[kueue-setup-unused]" in result.stderr
    assert (tmp_path / "out" / "kueue.x-k8s.io_v1beta2_resourceflavor_spare.yaml").is_file()


def test_the_shared_definitions_are_the_spec_schemas():
    kueue = json.loads((ROOT / "schemas" / "kueue.v1.schema.json").read_text())["$defs"]
    spec = json.loads((ROOT / "schemas" / "trainingjob.v1.schema.json").read_text())["$defs"]
    shared = ["quantity", "qualifiedName", "labelValue", "labels", "dns1123Subdomain"]
    for name in [*shared, "dns1123Label", "kueueName", "toleration"]:
        assert kueue[name] == spec[name], name


def manager_configuration(objects: dict[str, dict[str, Any]]) -> dict[str, Any]:
    (config_map,) = by_kind(objects, "ConfigMap").values()
    assert config_map["metadata"]["namespace"] == "kueue-system"
    assert config_map["metadata"]["name"] == "kueue-manager-config"
    return yaml.safe_load(config_map["data"]["controller_manager_config.yaml"])


def test_a_pods_ready_bound_is_written_into_kueues_own_configuration():
    config = manager_configuration(planned())
    assert config["waitForPodsReady"] == {
        "timeout": "10m",
        "requeuingStrategy": {"timestamp": "Eviction", "backoffLimitCount": 3},
    }
    # everything else as Kueue's release has it, and the Kubeflow PaddleJob queued too
    rest = {k: v for k, v in config.items() if k != "waitForPodsReady"}
    assert rest == kueue_manager.RELEASED
    assert {"batch/job", "jobset.x-k8s.io/jobset", "trainer.kubeflow.org/trainjob",
            "kubeflow.org/paddlejob"} <= set(config["integrations"]["frameworks"])  # fmt: skip


def test_every_field_of_the_bound_has_its_place_in_kueues_configuration():
    text = SETUP.read_text().replace(
        "  timeout: 10m\n",
        "  timeout: 5m\n  recoveryTimeout: 0s\n  blockAdmission: true\n"
        "  backoffBaseSeconds: 10\n  backoffMaxSeconds: 600\n",
    )
    assert manager_configuration(planned(text))["waitForPodsReady"] == {
        "timeout": "5m",
        "recoveryTimeout": "0s",
        "blockAdmission": True,
        "requeuingStrategy": {
            "timestamp": "Eviction",
            "backoffLimitCount": 3,
            "backoffBaseSeconds": 10,
            "backoffMaxSeconds": 600,
        },
    }


def test_without_a_bound_kueues_configuration_is_left_alone_and_the_user_told(runner, tmp_path):
    setup = tmp_path / "kueue.yaml"
    setup.write_text(SETUP.read_text().split("# A job whose pods")[0])
    assert by_kind(planned(setup.read_text()), "ConfigMap") == {}
    result = runner.invoke(cli, ["kueue", str(setup), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "sets no waitForPodsReady: Kueue then queues a job whose pods never start" in (
        result.stderr
    )


def test_the_restart_note_asks_for_a_restart_only_when_kueues_configuration_is_written():
    from paddlegen.gitops.kueue_install import MANIFESTS
    from paddlegen.output.writer import WriteReport

    written = kueue_setup.KueueFiles(WriteReport(), [], "in-process", True, MANIFESTS)
    assert written.restart_note("k.yaml") == (
        "note: Kueue reads kueue-system/kueue-manager-config when it starts: once a change to "
        "it is synced, restart Kueue (kubectl -n kueue-system rollout restart deployment "
        "kueue-controller-manager)"
    )
    unbounded = kueue_setup.KueueFiles(WriteReport(), [], "in-process", False, MANIFESTS)
    assert unbounded.restart_note("k.yaml").startswith("note: k.yaml sets no waitForPodsReady: ")
