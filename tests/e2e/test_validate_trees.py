"""`paddlegen validate deploy/`: kubeconform reads rendered trees where they lie (no copies).

Both paths must pick the same files (manifests, not kustomize plumbing), name findings by the
real file, and never follow a symlink.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from paddlegen.cli import cli
from paddlegen.output.layout import HEADER
from paddlegen.validate import inputs as validation
from paddlegen.validate import kubeconform as kc
from paddlegen.validate.inprocess import validate_in_process
from tests.builders import job_spec
from tests.conftest import require_tool
from tests.helpers import executable


@pytest.fixture()
def deploy(runner, tmp_path):
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    for name in ("a", "b"):
        (jobs / f"{name}.yaml").write_text(job_spec(name))
    overlay = job_spec("c") + "overlays:\n  prod:\n    spec:\n      image: img:2\n"
    (jobs / "c.yaml").write_text(overlay)
    out = tmp_path / "deploy"
    assert runner.invoke(cli, ["render", str(jobs), "-o", str(out)]).exit_code == 0
    return out


def _verdicts(out, binary):
    trees = validation.rendered_trees(out)
    by_binary = kc.run_kubeconform([], binary, trees=trees)
    in_process = validate_in_process(kc.tree_files(trees))
    return by_binary, in_process


def with_unknown_field(deploy) -> Path:
    """Job a's manifest, given a field `spec.bogus`."""
    manifest = deploy / "a" / "batch_v1_job_a.yaml"
    manifest.write_text(
        manifest.read_text().replace("  completions: 1\n", "  completions: 1\n  bogus: 1\n")
    )
    return manifest


@pytest.fixture(params=["kubeconform", "in-process"])
def backend(request, monkeypatch, tmp_path) -> tuple[str, list[str]]:
    """What `validate` validates with, and the options that say so: kubeconform named, or none
    to be found (in process)."""
    monkeypatch.delenv(kc.ENV_VAR, raising=False)
    if request.param == "kubeconform":
        return request.param, ["--kubeconform", require_tool("kubeconform")]
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    return request.param, []


def test_a_finding_names_the_file_on_disk_on_both_paths(deploy):
    binary = require_tool("kubeconform")
    manifest = with_unknown_field(deploy)
    by_binary, in_process = _verdicts(deploy, binary)
    assert [(d.file, d.path) for d in by_binary] == [(str(manifest), "Job/a spec.bogus")]
    assert [(d.file, d.path) for d in in_process] == [(str(manifest), "Job/a spec.bogus")]


def test_both_paths_read_the_same_files(deploy):
    binary = require_tool("kubeconform")
    names = [name for name, _ in kc.tree_files(validation.rendered_trees(deploy))]
    # The overlay's kustomization and patches are kustomize plumbing, not objects.
    assert not [n for n in names if n.endswith("kustomization.yaml") or "/patch-" in n]
    assert any("/c/base/" in n for n in names)
    # A foreign .yml with an error is validated by both (kubeconform reads .yml and .json too).
    (deploy / "b" / "extra.yml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: 1}\n"
    )
    by_binary, in_process = _verdicts(deploy, binary)
    assert (
        {d.file for d in by_binary}
        == {d.file for d in in_process}
        == {str(deploy / "b" / "extra.yml")}
    )


def test_a_symlink_in_a_tree_is_never_followed(deploy, tmp_path):
    binary = require_tool("kubeconform")
    secret = tmp_path / "secret.yaml"
    secret.write_text("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nbogus: TOPSECRET\n")
    (deploy / "a" / "leak.yaml").symlink_to(secret)
    by_binary, in_process = _verdicts(deploy, binary)
    assert by_binary == in_process == []  # the link's target was not read by either
    result = validation.validate_rendered([], "", trees=validation.rendered_trees(deploy))
    assert result[0] == []


def test_validate_deploy_runs_kubeconform_on_the_tree_itself(runner, deploy, tmp_path):
    binary = require_tool("kubeconform")
    log = tmp_path / "argv"
    wrapper = executable(
        tmp_path / "kubeconform", f'printf "%s\\n" "$@" > "{log}"\nexec "{binary}" "$@"'
    )
    result = runner.invoke(cli, ["validate", str(deploy), "--kubeconform", str(wrapper)])
    assert result.exit_code == 0, result.output
    assert result.stderr == "3 rendered jobs valid\n"
    argv = log.read_text().splitlines()
    assert argv[-3:] == [str(deploy / name) for name in ("a", "b", "c")]


def test_a_finding_is_labelled_by_what_found_it(runner, deploy, backend):
    with_unknown_field(deploy)
    used, args = backend
    result = runner.invoke(cli, ["validate", str(deploy), *args])
    assert result.exit_code == 1
    assert f"Job/a spec.bogus: unknown field [{used}]" in result.stderr
    noted = "kubeconform not found; validating in process" in result.stderr
    assert noted == (used == "in-process")


def test_an_overlay_patch_is_validated_as_the_object_it_makes(runner, deploy, backend):
    """`replicas: eight` in a prod patch: kustomize build would print it; validate refuses it,
    named by the patch file."""
    patch = deploy / "c" / "overlays" / "prod" / "patch-batch_v1_job_c.yaml"
    body = yaml.safe_load(patch.read_text())
    body["spec"]["parallelism"] = "eight"
    patch.write_text(HEADER + yaml.safe_dump(body))
    result = runner.invoke(cli, ["validate", str(deploy), *backend[1]])
    assert result.exit_code == 1
    assert f"{patch}: error: Job/c spec.parallelism" in result.stderr


def test_a_patch_that_does_not_apply_is_a_finding(runner, deploy, tmp_path, monkeypatch):
    patch = deploy / "c" / "overlays" / "prod" / "patch-batch_v1_job_c.yaml"
    patch.write_text(HEADER + "apiVersion: batch/v1\nkind: Job\nmetadata: {name: c}\nspec: [1]\n")
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    result = runner.invoke(cli, ["validate", str(deploy)])
    assert result.exit_code == 1
    assert f"{patch}: error: this patch does not apply to " in result.stderr
    assert "[overlay]" in result.stderr
