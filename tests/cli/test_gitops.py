"""render/check/diff over a folder of specs: drift, pruning, byte stability across processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from paddlegen.cli import cli
from tests.builders import job_spec
from tests.conftest import ROOT, example_specs


def repo(tmp_path, **jobs: str):
    jobs_dir = tmp_path / "jobs"
    jobs_dir.mkdir(exist_ok=True)
    for name, tag in jobs.items():
        (jobs_dir / f"{name}.yaml").write_text(job_spec(name, f"img:{tag}"))
    return str(jobs_dir), str(tmp_path / "deploy")


def rendered(runner, tmp_path, **jobs: str) -> tuple[str, str]:
    """The folders of ``repo``'s specs and of their output, rendered there."""
    jobs_dir, deploy = repo(tmp_path, **jobs)
    result = runner.invoke(cli, ["render", jobs_dir, "-o", deploy])
    assert result.exit_code == 0, result.output
    return jobs_dir, deploy


def snapshot(path) -> dict[str, tuple[bytes, float]]:
    return {
        str(p.relative_to(path)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(path.rglob("*"))
        if p.is_file()
    }


def test_folder_render_then_check_is_clean(runner, tmp_path):
    jobs, deploy = repo(tmp_path, a="1", b="1")
    result = runner.invoke(cli, ["render", jobs, "-o", deploy])
    assert result.exit_code == 0, result.output
    assert result.stderr == f"2 jobs in {deploy}: 6 written, 0 unchanged, 0 removed\n"
    before = snapshot(tmp_path / "deploy")
    again = runner.invoke(cli, ["render", jobs, "-o", deploy])
    assert again.stderr == f"2 jobs in {deploy}: 0 written, 6 unchanged, 0 removed\n"
    assert snapshot(tmp_path / "deploy") == before  # bytes and mtimes
    check = runner.invoke(cli, ["check", jobs, "-o", deploy])
    assert check.exit_code == 0 and check.stderr == f"2 jobs in {deploy}: up to date\n"


def test_check_reports_stale_missing_and_extra_with_a_diff(runner, tmp_path):
    jobs, deploy = rendered(runner, tmp_path, a="1", b="1")
    repo(tmp_path, a="2")  # a edited
    os.remove(os.path.join(jobs, "b.yaml"))  # b deleted
    repo(tmp_path, c="1")  # c added
    result = runner.invoke(cli, ["check", jobs, "-o", deploy])
    assert result.exit_code == 1
    assert "-        image: img:1\n+        image: img:2\n" in result.stdout
    assert f"stale: {deploy}/a/batch_v1_job_a.yaml" in result.stderr
    assert f"missing: {deploy}/c/batch_v1_job_c.yaml" in result.stderr
    assert f"extra: {deploy}/b/batch_v1_job_b.yaml" in result.stderr

    shown = runner.invoke(cli, ["diff", jobs, "-o", deploy])
    assert shown.exit_code == 0 and shown.stdout == result.stdout

    fixed = runner.invoke(cli, ["check", jobs, "-o", deploy, "--fix"])
    assert fixed.exit_code == 1  # pre-commit counts rewritten files as a failure
    assert runner.invoke(cli, ["check", jobs, "-o", deploy]).exit_code == 0
    assert sorted(p.name for p in (tmp_path / "deploy").iterdir()) == ["a", "c"]


def test_a_failed_check_says_the_render_that_mends_it_and_that_render_does(runner, tmp_path):
    jobs, deploy = repo(tmp_path, a="1")
    runner.invoke(cli, ["render", jobs, "-o", deploy, "--no-argocd"])
    repo(tmp_path, a="2")
    args = [jobs, "-o", deploy, "--no-argocd", "--ignore", "image-tag"]
    result = runner.invoke(cli, ["check", *args])
    assert result.exit_code == 1
    mend = f"paddlegen render {jobs} -o {deploy} --no-argocd --ignore image-tag"
    assert result.stderr.splitlines()[-1] == (
        f"paddlegen: to bring the output up to date: {mend} (or this check with --fix)"
    )
    assert runner.invoke(cli, mend.split()[1:]).exit_code == 0
    assert runner.invoke(cli, ["check", *args]).exit_code == 0


@pytest.mark.parametrize("slash", ["", "/"])
def test_a_deleted_spec_removes_only_generated_files(runner, tmp_path, slash):
    """And an output folder given with a trailing slash is shown without a double one."""
    jobs, deploy = repo(tmp_path, a="1", b="1")
    assert runner.invoke(cli, ["render", jobs, "-o", deploy + slash]).exit_code == 0
    (tmp_path / "deploy" / "b" / "NOTES.md").write_text("keep me\n")
    os.remove(os.path.join(jobs, "b.yaml"))
    result = runner.invoke(cli, ["render", jobs, "-o", deploy + slash])
    assert result.exit_code == 0, result.output
    assert f"kept {deploy}/b/NOTES.md" in result.stderr and "//" not in result.stderr
    assert sorted(p.name for p in (tmp_path / "deploy" / "b").iterdir()) == ["NOTES.md"]


def test_listed_specs_find_the_job_of_a_deleted_spec_as_a_folder_does(runner, tmp_path):
    """`check jobs/*.yaml` (the shell lists the files) fails like `check jobs` on the output
    of a deleted spec: its stamp names the spec, which is gone."""
    jobs, deploy = rendered(runner, tmp_path, a="1", b="1")
    os.remove(os.path.join(jobs, "b.yaml"))
    listed = [os.path.join(jobs, "a.yaml")]
    for command in (["check", jobs], ["check", *listed]):
        result = runner.invoke(cli, [*command, "-o", deploy])
        assert result.exit_code == 1, result.output
        assert f"extra: {deploy}/b/kustomization.yaml" in result.stderr
    assert runner.invoke(cli, ["diff", *listed, "-o", deploy]).stdout.startswith("--- a/deploy/b/")
    fixed = runner.invoke(cli, ["check", *listed, "-o", deploy, "--fix"])
    assert fixed.exit_code == 1, fixed.output
    assert sorted(p.name for p in (tmp_path / "deploy").iterdir()) == ["a"]
    assert runner.invoke(cli, ["check", *listed, "-o", deploy]).exit_code == 0


def test_listed_specs_find_the_old_job_of_a_spec_that_names_another_one(runner, tmp_path):
    jobs, deploy = rendered(runner, tmp_path, a="1", b="1")
    (tmp_path / "jobs" / "b.yaml").write_text(job_spec("c", "img:1"))
    listed = [os.path.join(jobs, name) for name in ("a.yaml", "b.yaml")]
    result = runner.invoke(cli, ["check", *listed, "-o", deploy])
    assert result.exit_code == 1
    assert f"extra: {deploy}/b/kustomization.yaml" in result.stderr
    assert f"missing: {deploy}/c/kustomization.yaml" in result.stderr


def test_a_moved_spec_renders_its_stamp_again_so_it_names_the_spec(runner, tmp_path):
    jobs, deploy = rendered(runner, tmp_path, a="1", b="1")
    os.rename(os.path.join(jobs, "b.yaml"), os.path.join(jobs, "bee.yaml"))
    assert runner.invoke(cli, ["render", jobs, "-o", deploy]).exit_code == 0
    listed = [os.path.join(jobs, "a.yaml")]
    assert runner.invoke(cli, ["check", *listed, "-o", deploy]).exit_code == 0


def test_a_generated_file_that_lost_its_header_is_refused_with_the_way_out(runner, tmp_path):
    jobs, deploy = rendered(runner, tmp_path, a="1")
    manifest = tmp_path / "deploy" / "a" / "batch_v1_job_a.yaml"
    manifest.write_text(manifest.read_text().split("\n", 1)[1])  # a tool dropped the header
    (tmp_path / "jobs" / "a.yaml").write_text(job_spec("a", "img:2"))
    for command in (["render"], ["check", "--fix"]):
        result = runner.invoke(cli, [*command, jobs, "-o", deploy])
        assert result.exit_code == 2, result.output
        assert result.stderr.endswith(
            f"paddlegen: error: {deploy}/a: refusing to overwrite files paddlegen did not "
            "generate: batch_v1_job_a.yaml (they lack its header). If paddlegen wrote them, "
            f"delete them and run again: rm {deploy}/a/batch_v1_job_a.yaml; if they are "
            f"yours, move them out of {deploy}/a\n"
        )
        assert "img:2" not in manifest.read_text()
    os.remove(manifest)  # the way out it names
    assert runner.invoke(cli, ["render", jobs, "-o", deploy]).exit_code == 0
    assert "img:2" in manifest.read_text()
    assert runner.invoke(cli, ["check", jobs, "-o", deploy]).exit_code == 0


def test_output_is_byte_stable_across_processes_and_hash_seeds(tmp_path):
    outputs = []
    # every example spec (examples/ also holds a file that is none: platform/kueue.yaml)
    specs = [str(p.relative_to(ROOT)) for p in example_specs()]
    for seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-m", "paddlegen", "render", *specs, "--stdout"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            check=True,
        )
        outputs.append(out.stdout)
    assert outputs[0] == outputs[1] and len(outputs[0]) > 1000


def test_check_in_json_reports_the_stale_files_as_findings_with_the_warnings(runner, tmp_path):
    jobs, deploy = rendered(runner, tmp_path, a="1", b="1")
    (tmp_path / "jobs" / "a.yaml").write_text(job_spec("a", "img:2"))
    os.remove(tmp_path / "deploy" / "b" / "kustomization.yaml")
    result = runner.invoke(cli, ["check", jobs, "-o", deploy, "--format", "json"])
    assert result.exit_code == 1
    report = json.loads(result.stdout)  # one JSON document, nothing else on stdout
    assert [(d["file"], d["rule"]) for d in report] == [
        (f"{deploy}/a/batch_v1_job_a.yaml", "stale"),
        (f"{deploy}/a/v1_configmap_a-run.yaml", "stale"),  # its digest
        (f"{deploy}/b/kustomization.yaml", "missing"),
    ]
    assert "+        image: img:2" in result.stderr  # the diff goes with the human text
