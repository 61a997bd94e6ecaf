"""Queued specs against the repository's KueueSetup (gitops/kueue_fit.py): `validate` and
`check` take the KueueSetup named among their files, else platform/kueue.yaml, and report a job
Kueue would never admit at the spec field that asks for too much."""

from __future__ import annotations

from pathlib import Path

import pytest

from paddlegen.cli import cli
from tests.conftest import EXAMPLES

SETUP = (EXAMPLES / "gitops" / "platform" / "kueue.yaml").read_text()
# 4 pods of 8 GPUs and an RDMA device each, in team ml-training's queue: the team (and its
# cohort) has 8 + 4 GPUs on a100 and no RDMA quota at all.
SPEC = """\
apiVersion: paddlegen/v1
kind: TrainingJob
metadata: {name: sft, namespace: ml-training}
spec:
  workload: collective-job
  image: registry.example.com/sft:1.0
  args: [train.py]
  gpus: 8
  shm: 32Gi
  resources:
    requests: {cpu: 8, memory: 64Gi}
    limits: {memory: 64Gi, rdma/rdma_shared_device_a: 1}
  worker: {replicas: 4}
  run: {activeDeadlineSeconds: 86400}
  scheduling:
    kueue: {queue: ml-training}
"""
FITS = SPEC.replace("gpus: 8", "gpus: 2").replace(", rdma/rdma_shared_device_a: 1", "")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    """A GitOps repository: jobs/ and platform/kueue.yaml, the working directory."""
    (tmp_path / "jobs").mkdir()
    (tmp_path / "platform").mkdir()
    (tmp_path / "platform" / "kueue.yaml").write_text(SETUP)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def validate(runner, *args: str, spec: str = SPEC):
    Path("jobs/sft.yaml").write_text(spec)
    return runner.invoke(cli, ["validate", "--no-manifests", *args])


def findings(output: str, rule: str) -> list[str]:
    return [line for line in output.splitlines() if line.endswith(f"[{rule}]")]


def test_a_resource_no_quota_covers_is_an_error_at_the_field_asking_for_it(runner, repo):
    result = validate(runner, "jobs/sft.yaml")
    assert result.exit_code == 1, result.output
    (covered,) = findings(result.stderr, "kueue-covered")
    assert covered.startswith(
        "jobs/sft.yaml:12:55: error: $.spec.resources.limits.rdma/rdma_shared_device_a: "
        "the worker pods request rdma/rdma_shared_device_a, which the quotas of team "
        "'ml-training' do not give (they give cpu, memory, nvidia.com/gpu)"
    ), covered
    assert "Traceback" not in result.output


def test_more_gpus_than_a_flavor_holds_with_the_cohort_is_an_error_at_gpus(runner, repo):
    result = validate(runner, "jobs/sft.yaml")
    (quota,) = findings(result.stderr, "kueue-quota")
    assert quota.startswith(
        "jobs/sft.yaml:8:9: error: $.spec.gpus: the 4 worker pods need 32 nvidia.com/gpu on "
        "one flavor, and the most a flavor of queue 'ml-training' with its cohort holds is 12"
    ), quota


def test_without_a_cohort_the_teams_own_quota_is_the_bound(runner, repo):
    (repo / "platform" / "kueue.yaml").write_text(SETUP.replace("cohort: ml", "# no cohort"))
    spec = FITS.replace("gpus: 2", "gpus: 3")  # 12 GPUs: the cohort's, not the team's 8
    result = validate(runner, "jobs/sft.yaml", spec=spec)
    (quota,) = findings(result.stderr, "kueue-quota")
    assert "need 12 nvidia.com/gpu on one flavor, and the most a flavor of queue" in quota
    assert "'ml-training' holds is 8" in quota
    assert validate(runner, "jobs/sft.yaml", spec=FITS).exit_code == 0


def test_a_job_that_fits_is_valid_and_the_setup_counted(runner, repo):
    result = validate(runner, "jobs/sft.yaml", spec=FITS)
    assert result.exit_code == 0, result.output
    assert "kueue-" not in result.stderr
    assert result.stderr.endswith("1 spec and 1 KueueSetup valid\n")


def test_the_setup_named_beside_the_specs_is_used_not_the_default(runner, repo, tmp_path):
    other = tmp_path / "other.yaml"
    other.write_text(
        SETUP.replace("nvidia.com/gpu: 8}", "nvidia.com/gpu: 8, rdma/rdma_shared_device_a: 4}")
    )
    result = validate(runner, "jobs/sft.yaml", str(other))
    assert findings(result.stderr, "kueue-covered") == []
    assert findings(result.stderr, "kueue-quota")  # 32 GPUs still fit no flavor


def test_the_setup_alone_is_validated_as_a_setup(runner, repo):
    result = runner.invoke(cli, ["validate", "platform/kueue.yaml"])
    assert result.exit_code == 0, result.output
    assert result.stderr == "1 KueueSetup valid\n"
    (repo / "platform" / "kueue.yaml").write_text(SETUP.replace("name: cpu\n", "name: CPU\n"))
    result = runner.invoke(cli, ["validate", "platform/kueue.yaml"])
    assert result.exit_code == 1
    assert "platform/kueue.yaml:12:11: error: $.flavors[1].name:" in result.stderr
    assert "make a spec of it" not in result.stderr


def test_without_a_setup_nothing_is_checked_and_another_file_there_is_left_alone(runner, repo):
    (repo / "platform" / "kueue.yaml").unlink()
    assert validate(runner, "jobs/sft.yaml").exit_code == 0
    (repo / "platform" / "kueue.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n")
    result = validate(runner, "jobs/sft.yaml")
    assert result.exit_code == 0, result.output
    assert result.stderr.endswith("1 spec valid\n")


def test_a_queue_no_team_has_and_a_namespace_the_team_lacks_are_warnings(runner, repo):
    spec = FITS.replace("queue: ml-training", "queue: ml-train")
    result = validate(runner, "jobs/sft.yaml", spec=spec)
    assert result.exit_code == 0, result.output
    (team,) = findings(result.stderr, "kueue-team")
    assert team.startswith("jobs/sft.yaml:16:20: warning: $.spec.scheduling.kueue.queue: no team")
    assert "(teams: ml-training, research)" in team
    spec = FITS.replace("namespace: ml-training", "namespace: research")
    (team,) = findings(validate(runner, "jobs/sft.yaml", spec=spec).stderr, "kueue-team")
    assert team.startswith("jobs/sft.yaml:3:34: warning: $.metadata.namespace: team 'ml-training'")


def test_an_environment_that_asks_for_more_is_reported_in_its_overlay(runner, repo):
    spec = FITS + "overlays:\n  prod:\n    spec: {gpus: 4}\n"
    result = validate(runner, "jobs/sft.yaml", spec=spec)
    (quota,) = findings(result.stderr, "kueue-quota")
    assert quota.startswith("jobs/sft.yaml:19:18: error: $.overlays.prod.spec.gpus:"), quota
    assert quota.endswith("Kueue never admits the job (environment prod) (ask for fewer, or "
                          "raise the team's quota) [kueue-quota]")  # fmt: skip


def test_a_sidecars_resource_is_reported_at_the_sidecar(runner, repo):
    sidecar = (
        "  sidecars:\n    - {name: s, image: s:1, resources: {limits: {example.com/fpga: 1}}}\n"
    )
    result = validate(runner, "jobs/sft.yaml", spec=FITS + sidecar)
    (covered,) = findings(result.stderr, "kueue-covered")
    assert "$.spec.sidecars[0].resources.limits.example.com/fpga:" in covered


def test_check_reports_them_with_the_default_setup_and_a_named_one(runner, repo):
    Path("jobs/sft.yaml").write_text(SPEC)
    for args in (["jobs"], ["jobs", "platform/kueue.yaml"]):
        result = runner.invoke(cli, ["check", *args, "-o", "deploy"])
        assert result.exit_code == 1, result.output
        assert len(findings(result.stderr, "kueue-quota")) == 1
        assert result.stderr.endswith("paddlegen: nothing checked: invalid input\n")
    Path("jobs/sft.yaml").write_text(FITS)
    assert runner.invoke(cli, ["render", "jobs", "-o", "deploy"]).exit_code == 0
    result = runner.invoke(cli, ["check", "jobs", "platform/kueue.yaml", "-o", "deploy"])
    assert result.exit_code == 0, result.output


def test_a_setup_among_the_specs_of_render_is_named_as_one(runner, repo):
    Path("jobs/sft.yaml").write_text(FITS)
    Path("jobs/kueue.yaml").write_text(SETUP)
    result = runner.invoke(cli, ["render", "jobs", "-o", "deploy"])
    assert result.exit_code == 1
    assert (
        "jobs/kueue.yaml:4:13: error: $.apiVersion: a KueueSetup, not a paddlegen spec (keep it "
        "out of the specs' folder; paddlegen kueue jobs/kueue.yaml writes its objects) [schema]"
    ) in result.stderr
