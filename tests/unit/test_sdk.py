"""paddlegen.sdk: the seed's `paddle.job` SDK, its README example verbatim, and what it renders."""

from __future__ import annotations

import pytest
import yaml

from paddlegen.errors import InvalidArgumentError, SpecError
from paddlegen.sdk import CephFSVolume, PaddleJob
from paddlegen.workloads.collective_job import RANK_PATH
from paddlegen.workloads.kubeflow_paddlejob import INDEX_LABEL as KUBEFLOW_INDEX_LABEL
from tests.conftest import ROOT
from tests.seeds import code_blocks, seed_text

SEED_IMPORT = "import paddle.job as job"
OUR_IMPORT = "import paddlegen.sdk as job"  # `paddle` is PaddlePaddle's package; we cannot own it


def seed_example() -> PaddleJob:
    """Seed 002's "Create PaddleJob instance" example, run as written but for its import."""
    (block,) = [b for b in code_blocks(seed_text("002")) if "job.PaddleJob(" in b]
    assert SEED_IMPORT in block
    scope: dict = {}
    exec(block.replace(SEED_IMPORT, OUR_IMPORT), scope)  # noqa: S102 - the seed's example
    return scope["paddle_job"]


def objects(out_dir, name):
    return {f.name: yaml.safe_load(f.read_text()) for f in (out_dir / name).glob("*.yaml")}


def test_the_seed_readme_example_runs_and_makes_a_valid_spec():
    paddle_job = seed_example()
    spec = paddle_job.to_spec()
    assert spec["metadata"] == {"name": "paddle-job", "namespace": "yanxu"}
    body = spec["spec"]
    assert body["image"] == "yancey1989/paddle-job"
    assert body["ps"] == {"replicas": 3}  # pservers=3, honoured
    assert body["worker"] == {"replicas": 3}  # trainers: the seed's default 3
    assert body["resources"] == {"requests": {"cpu": "3"}}  # cpu_num=3 as a request
    assert "gpus" not in body  # use_gpu=False
    assert body["workingDir"] == "/example/word2vec"  # trainer_package_path
    assert body["args"][0].endswith("exec python train.py")  # entry_point
    (volume,) = body["volumes"]
    # The seed's monitors_addr: its in-tree volume, asked for, with the warning that says so.
    assert volume["cephfs"] == {
        "inTree": True,
        "monitors": ["172.19.32.166:6789"],
        "user": "admin",
        "secretName": "cephfs-secret",
        "path": "/",
    }
    assert volume["mountPath"] == "/mnt/cephfs"
    found = paddle_job.validate()
    assert not [d for d in found if d.is_error]
    (in_tree,) = [d for d in found if d.rule == "cephfs-in-tree"]
    assert in_tree.severity == "warning" and in_tree.path == "$.spec.volumes[0]"


def test_the_seed_example_renders_a_kustomize_directory_with_trainer_env(tmp_path):
    job_dir = seed_example().render(tmp_path)
    assert job_dir == tmp_path / "paddle-job"
    found = objects(tmp_path, "paddle-job")
    assert "kustomization.yaml" in found
    kinds = sorted(obj["kind"] for obj in found.values() if "kind" in obj)
    assert kinds == [
        "ConfigMap",
        "Kustomization",
        "PaddleJob",
        "PersistentVolume",
        "PersistentVolumeClaim",
    ]
    paddlejob = found["batch.paddlepaddle.org_v1_paddlejob_paddle-job.yaml"]
    container = paddlejob["spec"]["worker"]["template"]["spec"]["containers"][0]
    assert {"name": "TRAINERS", "value": "3"} in container["env"]
    # The operator sets PADDLE_TRAINER_ID after our env; the shell copies it to TRAINER_ID.
    assert container["command"] == ["sh", "-c"]
    assert container["args"] == ['export TRAINER_ID="${PADDLE_TRAINER_ID:-}"; exec python train.py']


def test_to_yaml_is_the_spec_under_the_schema_modeline():
    paddle_job = seed_example()
    text = paddle_job.to_yaml()
    assert text.startswith("# yaml-language-server: $schema=")
    assert yaml.safe_load(text) == paddle_job.to_spec()


def test_the_parameter_tables_spellings_work_too():
    job = PaddleJob(
        job_name="demo",
        entry_point="python train.py",
        runtime_image="r/demo:v1",
        cpu_nums=2,
        memory="4Gi",
        gpu_nums=1,
        pservers=0,
        trainers=2,
        trainer_package="/workspace",
    )
    body = job.to_spec()["spec"]
    assert body["resources"] == {
        "requests": {"cpu": "2", "memory": "4Gi"},
        "limits": {"memory": "4Gi"},
    }
    assert body["gpus"] == 1
    assert "ps" not in body  # no pservers: the operator runs Collective mode
    assert body["workingDir"] == "/workspace"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"cpu_nums": 2, "cpu_num": 3},
        {"use_gpu": False, "gpu_nums": 2},
        {"trainer_package": "/a", "trainer_package_path": "/b"},
    ],
)
def test_contradicting_spellings_are_refused(kwargs):
    with pytest.raises(TypeError):
        PaddleJob(job_name="demo", entry_point="python train.py", runtime_image="r/d:v1", **kwargs)


def test_use_gpu_alone_means_one_gpu_as_in_the_original_sdk():
    job = PaddleJob(job_name="demo", entry_point="x", runtime_image="r/d:v1", use_gpu=True)
    assert job.to_spec()["spec"]["gpus"] == 1


def test_a_single_pod_job_knows_it_is_trainer_zero_of_one(tmp_path):
    job = PaddleJob(
        job_name="solo",
        entry_point="python train.py",
        runtime_image="r/d:v1",
        workload="job",
        pservers=0,
        trainers=1,
    )
    body = job.to_spec()["spec"]
    assert body["env"] == [{"name": "TRAINER_ID", "value": "0"}, {"name": "TRAINERS", "value": "1"}]
    assert body["args"] == ["python train.py"]
    job.render(tmp_path)
    assert (tmp_path / "solo" / "batch_v1_job_solo.yaml").is_file()


def test_kubeflow_trainers_read_their_index_from_the_operators_pod_label():
    job = PaddleJob(
        job_name="kf",
        entry_point="python train.py",
        runtime_image="r/d:v1",
        workload="kubeflow-paddlejob",
        pservers=1,
        trainers=2,
    )
    (trainer_id,) = [e for e in job.to_spec()["spec"]["env"] if e["name"] == "TRAINER_ID"]
    assert (
        trainer_id["valueFrom"]["fieldRef"]["fieldPath"]
        == f"metadata.labels['{KUBEFLOW_INDEX_LABEL}']"
    )


@pytest.mark.parametrize("workload", ["distributed-job", "trainjob", "nope"])
def test_a_workload_without_a_trainer_identity_is_refused_for_what_it_is(workload):
    job = PaddleJob(job_name="d", entry_point="x", runtime_image="r/d:v1", workload=workload)
    with pytest.raises(SpecError) as info:
        job.to_spec()
    (finding,) = info.value.diagnostics
    assert "cannot run an entry_point: paddlegen gives its pods no TRAINER_ID" in finding.message
    assert "distributed-job image" not in finding.message  # nothing of another workload's
    assert finding.message.endswith(
        "use one of: job, paddlejob, kubeflow-paddlejob, collective-job"
    )


def test_collective_job_runs_the_entry_point():
    spec = PaddleJob(
        job_name="c",
        entry_point="x",
        runtime_image="r/d:v1",
        pservers=0,
        memory="1Gi",
        workload="collective-job",
    ).to_spec()
    assert spec["spec"]["workload"] == "collective-job"


def test_an_invalid_job_is_a_spec_error_naming_the_job_and_field():
    job = PaddleJob(job_name="Bad_Name", entry_point="x", runtime_image="r/d:v1")
    with pytest.raises(SpecError) as info:
        job.to_spec()
    (finding,) = info.value.diagnostics
    assert (finding.file, finding.path) == ("PaddleJob(job_name='Bad_Name')", "$.metadata.name")


def test_job_with_the_seeds_default_pservers_is_refused():
    job = PaddleJob(job_name="solo", entry_point="x", runtime_image="r/d:v1", workload="job")
    with pytest.raises(SpecError) as info:
        job.to_spec()  # pservers defaults to 2, as in the seed; workload job has no ps role
    assert "job-replicas" in {d.rule for d in info.value.diagnostics}


def test_cephfs_with_a_cluster_id_and_fs_name_is_the_csi_driver(tmp_path):
    volume = CephFSVolume(cluster_id="ceph-a", fs_name="cephfs", path="/volumes/g/sub")
    assert volume.to_volume()["cephfs"] == {
        "clusterID": "ceph-a",
        "fsName": "cephfs",
        "secretName": "cephfs-secret",
        "path": "/volumes/g/sub",
    }
    job = PaddleJob(
        job_name="demo",
        entry_point="python train.py",
        runtime_image="r/d:v1",
        memory="1Gi",
        namespace="team",
        cephfs_volume=volume,
    )
    assert job.validate() == []  # valid, and no warning
    found = objects(job.render(tmp_path).parent, "demo")
    (pv,) = [o for o in found.values() if o.get("kind") == "PersistentVolume"]
    assert pv["spec"]["csi"]["driver"] == "cephfs.csi.ceph.com"
    assert pv["spec"]["csi"]["nodeStageSecretRef"] == {"name": "cephfs-secret", "namespace": "team"}


def test_the_example_of_seed_002_holds_the_sdks_csi_volume():
    """examples/README.md says which CephFSVolume call makes sdk-cephfs.yaml's volume."""
    example = yaml.safe_load((ROOT / "examples" / "sdk-cephfs.yaml").read_text())
    (volume,) = example["spec"]["volumes"]
    assert volume == CephFSVolume(cluster_id="my-ceph-cluster", fs_name="cephfs").to_volume()


def test_cephfs_secret_namespace_is_passed_on():
    volume = CephFSVolume(cluster_id="c", fs_name="f", secret_namespace="ceph-csi")
    assert volume.to_volume()["cephfs"]["secretNamespace"] == "ceph-csi"
    job = PaddleJob(job_name="d", entry_point="x", runtime_image="r/d:v1", cephfs_volume=volume)
    assert "cephfs-secret-namespace" not in {d.rule for d in job.validate()}
    without = CephFSVolume(cluster_id="c", fs_name="f")
    job = PaddleJob(job_name="d", entry_point="x", runtime_image="r/d:v1", cephfs_volume=without)
    assert "cephfs-secret-namespace" in {d.rule for d in job.validate() if d.is_error}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"cluster_id": "c"}, "needs both cluster_id and fs_name"),
        ({"fs_name": "f"}, "needs both cluster_id and fs_name"),
        ({"monitors_addr": "m:6789", "cluster_id": "c", "fs_name": "f"}, "monitors_addr and"),
        ({"user": "paddle", "cluster_id": "c", "fs_name": "f"}, "got user and cluster_id"),
        ({}, "needs cluster_id and fs_name .* or monitors_addr"),
    ],
)
def test_cephfs_volume_arguments_that_mix_or_miss_a_form_are_refused(kwargs, message):
    with pytest.raises(InvalidArgumentError, match=message):
        CephFSVolume(**kwargs)


def test_cephfs_monitors_may_be_a_comma_separated_string_or_a_list():
    one = CephFSVolume("10.0.0.1:6789, 10.0.0.2:6789", mount_path="/data")
    two = CephFSVolume(["10.0.0.1:6789", "10.0.0.2:6789"], mount_path="/data")
    assert one.to_volume() == two.to_volume()
    assert one.to_volume()["cephfs"]["monitors"] == ["10.0.0.1:6789", "10.0.0.2:6789"]


def test_a_spec_error_says_why_and_a_diagnostic_reads_as_a_line(tmp_path):
    job = PaddleJob(job_name="Demo_Job", entry_point="x", runtime_image="r/d:v1")
    with pytest.raises(SpecError) as info:
        job.render(tmp_path)
    (first, *reasons) = str(info.value).splitlines()
    assert first == "PaddleJob(job_name='Demo_Job'): invalid spec"
    assert reasons and all(r.startswith("PaddleJob(job_name='Demo_Job'):") for r in reasons)
    assert any("$.metadata.name" in r and r.endswith("[schema]") for r in reasons)
    assert str(info.value.diagnostics[0]) == reasons[0]


def test_a_rendered_job_is_reused_by_the_cli_render_of_the_saved_spec(tmp_path):
    from click.testing import CliRunner

    from paddlegen.cli import cli

    job = PaddleJob(job_name="demo", entry_point="python train.py", runtime_image="r/d:v1")
    job.render(tmp_path / "deploy")
    stamp = tmp_path / "deploy" / "demo" / ".paddlegen-stamp"
    before = stamp.stat().st_mtime_ns  # the SDK wrote a stamp
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "demo.yaml").write_text(job.to_yaml())
    result = CliRunner().invoke(
        cli, ["render", str(tmp_path / "jobs"), "-o", str(tmp_path / "deploy")]
    )
    assert result.exit_code == 0, result.output
    assert " 0 written, " in result.stderr
    assert stamp.stat().st_mtime_ns == before  # its stamp matched: the job was not rendered


def test_without_parameter_servers_the_default_is_collective_job_with_the_rank_as_trainer_id(
    tmp_path,
):
    job = PaddleJob(
        job_name="ranks", entry_point="python train.py", runtime_image="r/d:v1", pservers=0
    )
    body = job.to_spec()["spec"]
    assert body["workload"] == "collective-job"
    assert body["env"] == [
        {"name": "TRAINER_ID", "valueFrom": {"fieldRef": {"fieldPath": RANK_PATH}}},
        {"name": "TRAINERS", "value": "3"},
    ]
    folder = job.render(tmp_path)
    (container,) = yaml.safe_load((folder / "batch_v1_job_ranks.yaml").read_text())["spec"][
        "template"
    ]["spec"]["containers"]
    # paddlegen's rank-0 wrapper, then the entry point's shell, unchanged
    assert container["command"][3:] == ["sh", "-c"]
    assert container["args"] == ["python train.py"]
    names = [e["name"] for e in container["env"]]
    assert {"TRAINER_ID", "TRAINERS", "PADDLE_RANK", "PADDLE_NNODES"} <= set(names)


def test_with_parameter_servers_the_default_is_the_paddleflow_paddlejob():
    job = PaddleJob(job_name="ps", entry_point="python train.py", runtime_image="r/d:v1")
    assert job.to_spec()["spec"]["workload"] == "paddlejob"
