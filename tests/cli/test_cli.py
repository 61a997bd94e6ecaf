"""The command line through click's CliRunner: exit codes, streams, formats."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

import paddlegen
from paddlegen.cli import cli
from paddlegen.render import engine as render_module
from paddlegen.version import version_text
from tests.builders import job_spec
from tests.helpers import own_templates

PROD = "overlays:\n  prod: {spec: {image: img:2}}\n"  # an environment prod, of image img:2


def write_spec(tmp_path, name="demo", extra=""):
    path = tmp_path / f"{name}.yaml"
    path.write_text(job_spec(name, "mypaddle/paddle:quickstart", extra))
    return path


def test_render_writes_a_kustomize_directory(runner, tmp_path):
    spec = write_spec(tmp_path)
    result = runner.invoke(cli, ["render", str(spec), "-o", str(tmp_path / "deploy")])
    assert result.exit_code == 0, result.output
    job_dir = tmp_path / "deploy" / "demo"
    assert sorted(p.name for p in job_dir.iterdir()) == [
        ".paddlegen-stamp",
        "batch_v1_job_demo.yaml",
        "kustomization.yaml",
        "v1_configmap_demo-run.yaml",  # the run record (Argo CD)
    ]
    assert result.stdout == ""
    assert result.stderr.endswith("deploy: 3 written, 0 unchanged, 0 removed\n")


def test_several_specs_render_side_by_side(runner, tmp_path):
    specs = [str(write_spec(tmp_path, n)) for n in ("one", "two")]
    result = runner.invoke(cli, ["render", *specs, "-o", str(tmp_path / "deploy")])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "deploy").iterdir()) == ["one", "two"]


def test_stdout_prints_one_stream_in_apply_order(runner, tmp_path):
    spec = write_spec(
        tmp_path,
        extra="  volumes:\n    - {name: data, mountPath: /data,"
        " dynamic: {storageClassName: fast}, capacity: 1Gi}\n",
    )
    result = runner.invoke(cli, ["render", str(spec), "--stdout"])
    assert result.exit_code == 0, result.output
    docs = list(yaml.safe_load_all(result.stdout))
    assert [d["kind"] for d in docs] == ["PersistentVolumeClaim", "Job", "ConfigMap"]
    assert not (tmp_path / "deploy").exists()


def test_one_bad_spec_stops_every_render(runner, tmp_path):
    good = write_spec(tmp_path, "good")
    bad = write_spec(tmp_path, "bad", extra="  gpus: many\n")
    result = runner.invoke(cli, ["render", str(good), str(bad), "-o", str(tmp_path / "deploy")])
    assert result.exit_code == 1
    assert (
        f"{bad}:9:9: error: $.spec.gpus: 'many' is not of type 'integer' [schema]" in result.stderr
    )
    assert not (tmp_path / "deploy").exists()


def test_missing_file_is_exit_2(runner, tmp_path):
    result = runner.invoke(cli, ["render", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2
    assert result.stderr == f"paddlegen: error: {tmp_path / 'nope.yaml'}: no such file\n"


def test_usage_error_is_exit_2(runner):
    result = runner.invoke(cli, ["render"])
    assert result.exit_code == 2
    assert "Missing argument 'SPECS...'" in result.stderr


def test_validate_formats(runner, tmp_path):
    bad = write_spec(tmp_path, extra="  wokrer: {}\n")
    text = runner.invoke(cli, ["validate", str(bad)])
    assert text.exit_code == 1
    assert text.stderr.splitlines() == [
        f"{bad}:9:3: error: $.spec.wokrer: unknown field (did you mean 'worker'?) [schema]",
        f"1 error in {bad}",
    ]
    as_json = runner.invoke(cli, ["validate", "--format", "json", str(bad)])
    assert as_json.exit_code == 1
    (finding,) = json.loads(as_json.stdout)
    assert finding["line"] == 9 and finding["col"] == 3 and finding["path"] == "$.spec.wokrer"
    assert finding["hint"] == "did you mean 'worker'?"
    gh = runner.invoke(cli, ["validate", "--format", "github", str(bad)])
    assert gh.stderr.startswith(f"::error file={bad},line=9,col=3,title=paddlegen schema::")


def test_validate_ok(runner, tmp_path):
    result = runner.invoke(cli, ["validate", str(write_spec(tmp_path))])
    assert result.exit_code == 0
    assert result.stderr == "1 spec valid\n"
    as_json = runner.invoke(cli, ["validate", "--format", "json", str(write_spec(tmp_path))])
    assert json.loads(as_json.stdout) == []


def test_schema_prints_the_published_schema(runner):
    result = runner.invoke(cli, ["schema"])
    schema = json.loads(result.stdout)
    assert schema["$id"].endswith("trainingjob.v1.schema.json")
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_workload_override(runner, tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(job_spec("demo", "mypaddle/paddle:quickstart").replace("  workload: job\n", ""))
    result = runner.invoke(cli, ["render", str(spec), "--stdout", "--workload", "job"])
    assert result.exit_code == 0, result.output
    assert [d["kind"] for d in yaml.safe_load_all(result.stdout)] == ["Job", "ConfigMap"]


def test_a_bug_is_exit_2_with_a_traceback(runner, tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(render_module, "render_job", broken)
    monkeypatch.setattr("paddlegen.pipeline.build.render_job", broken)
    result = runner.invoke(cli, ["render", str(write_spec(tmp_path)), "--stdout"])
    assert result.exit_code == 2
    assert "Traceback" in result.stderr and "internal error" in result.stderr


def test_help_shows_examples(runner):
    for command in ("render", "validate", "schema"):
        result = runner.invoke(cli, [command, "--help"])
        assert result.exit_code == 0 and "Example" in result.output


@pytest.mark.parametrize("layout", ["empty", "folder-named-yaml", "generated-only"])
@pytest.mark.parametrize("command", ["validate", "render", "check", "diff"])
def test_arguments_holding_no_spec_get_one_verdict_from_every_command(
    runner, tmp_path, layout, command
):
    folder = tmp_path / ("x.yaml" if layout == "folder-named-yaml" else "in")
    folder.mkdir()
    if layout == "generated-only":  # what `paddlegen argocd` writes: generated, not specs
        (folder / "app.yaml").write_text("# Code generated by paddlegen. DO NOT EDIT.\nkind: X\n")
    output = [] if command == "validate" else ["-o", str(tmp_path / "out")]
    result = runner.invoke(cli, [command, str(folder), *output])
    assert result.exit_code == 2
    assert f"no spec files found in {folder}" in result.stderr
    assert not (tmp_path / "out").exists()


def test_render_validate_names_findings_by_the_files_it_writes(runner, tmp_path):
    """A base finding names base/<file>; an overlay's names its patch file; both exist."""
    template = own_templates(tmp_path)
    builtin = template.read_text()
    # an unknown field on the prod object only (its image is img:2)
    shape = '{"parallelism": 1, "completions": 1}'
    bogus = '{"parallelism": 1, "completions": 1, "bogus": 1}'
    marked = builtin.replace(shape, f"({bogus} if job.roles.worker.image == 'img:2' else {shape})")
    assert marked != builtin
    template.write_text(marked)
    spec = tmp_path / "demo.yaml"
    spec.write_text(job_spec("demo") + PROD)
    out = tmp_path / "deploy"
    args = [str(spec), "-o", str(out), "--templates", str(tmp_path / "templates")]
    result = runner.invoke(cli, ["render", "--validate", *args])
    assert result.exit_code == 1
    named = str(out / "demo" / "overlays" / "prod" / "patch-batch_v1_job_demo.yaml")
    assert f"{named}: error: Job/demo spec.bogus: unknown field" in result.stderr
    assert "base/" not in result.stderr  # the base object is valid
    assert runner.invoke(cli, ["render", *args]).exit_code == 0
    assert os.path.exists(named)


def _three_jobs(tmp_path):
    """a has a prod overlay, b a dev one, c none (the same in every environment)."""
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "a.yaml").write_text(job_spec("a") + PROD)
    (jobs / "b.yaml").write_text(job_spec("b") + "overlays:\n  dev: {spec: {image: img:3}}\n")
    (jobs / "c.yaml").write_text(job_spec("c"))
    return jobs


def test_stdout_env_renders_the_base_of_a_job_without_that_overlay_and_says_so(runner, tmp_path):
    jobs = _three_jobs(tmp_path)
    result = runner.invoke(cli, ["render", str(jobs), "--stdout", "--env", "prod"])
    assert result.exit_code == 0, result.output
    images = [
        d["spec"]["template"]["spec"]["containers"][0]["image"]
        for d in yaml.safe_load_all(result.stdout)
        if d["kind"] == "Job"
    ]
    assert images == ["img:2", "img:1", "img:1"]  # a's prod, b's and c's base
    assert (
        result.stderr
        == f"paddlegen: {jobs / 'b.yaml'} has no overlay 'prod': its base is rendered\n"
    )


@pytest.mark.parametrize("output", [["--stdout"], ["-o", "prod"]], ids=["stdout", "output"])
def test_an_env_no_spec_has_is_a_usage_error_listing_the_environments(
    runner, tmp_path, monkeypatch, output
):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli, ["render", str(_three_jobs(tmp_path)), "--env", "prdo", *output])
    assert result.exit_code == 2
    assert "no job has an overlay 'prdo' (environments: dev, prod)" in result.stderr
    assert result.stdout == "" and not (tmp_path / "prod").exists()


def test_env_with_output_writes_that_environment_alone_in_the_flat_layout(runner, tmp_path):
    """`render --env prod -o` writes what `--stdout --env prod` prints, one flat folder per
    job; `check --env prod` holds it, a check without --env names the command that mends."""
    jobs, out = _three_jobs(tmp_path), tmp_path / "prod"
    result = runner.invoke(cli, ["render", str(jobs), "--env", "prod", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"paddlegen: {jobs / 'b.yaml'} has no overlay 'prod': its base is rendered" in (
        result.stderr
    )
    assert not list(out.rglob("overlays")) and not list(out.rglob("base"))
    printed = runner.invoke(cli, ["render", str(jobs), "--env", "prod", "--stdout"]).stdout
    written = [
        yaml.safe_load(p.read_text())
        for job in ("a", "b", "c")
        for p in sorted((out / job).glob("*_*.yaml"))
        if p.name != "kustomization.yaml"
    ]
    key = lambda d: (d["kind"], d["metadata"]["name"])  # noqa: E731
    assert sorted(written, key=key) == sorted(yaml.safe_load_all(printed), key=key)
    image = yaml.safe_load((out / "a" / "batch_v1_job_a.yaml").read_text())
    assert image["spec"]["template"]["spec"]["containers"][0]["image"] == "img:2"

    checked = runner.invoke(cli, ["check", str(jobs), "--env", "prod", "-o", str(out)])
    assert checked.exit_code == 0, checked.output
    plain = runner.invoke(cli, ["check", str(jobs), "-o", str(out)])
    assert plain.exit_code == 1
    assert (
        f"paddlegen: {out / 'a'} was rendered with --env prod; to compare it as written, give "
        "this check --env prod"
    ) in plain.stderr
    # a render without --env would write the layered folders over the flat ones: not offered
    assert "paddlegen render" not in plain.stderr
    assert (
        f"paddlegen: to check the output as it was written: paddlegen check {jobs} -o {out} "
        "--env prod"
    ) in plain.stderr
    (out / "a" / "batch_v1_job_a.yaml").write_text("# Code generated by paddlegen. DO NOT EDIT.\n")
    stale = runner.invoke(cli, ["check", str(jobs), "--env", "prod", "-o", str(out)])
    assert stale.exit_code == 1
    assert "to compare it as written" not in stale.stderr
    assert f"paddlegen render {jobs} -o {out} --env prod (or this check" in stale.stderr


def test_a_layered_output_compared_for_one_environment_is_pointed_to_its_own_check(
    runner, tmp_path
):
    """`check --env prod` and `diff --env prod` on the output a render without --env wrote
    (base and overlays) name the comparison that reads it as written, never a render that
    would flatten it."""
    jobs, out = _three_jobs(tmp_path), tmp_path / "deploy"
    assert runner.invoke(cli, ["render", str(jobs), "-o", str(out)]).exit_code == 0
    assert list(out.rglob("overlays"))
    checked = runner.invoke(cli, ["check", str(jobs), "--env", "prod", "-o", str(out)])
    assert checked.exit_code == 1
    said = (
        f"paddlegen: {out / 'a'} was rendered without --env; to compare it as written, give "
        "this {} no --env"
    )
    assert said.format("check") in checked.stderr
    assert "paddlegen render" not in checked.stderr and "--fix" not in checked.stderr
    assert checked.stderr.rstrip().endswith(
        f"paddlegen: to check the output as it was written: paddlegen check {jobs} -o {out}"
    )
    diffed = runner.invoke(cli, ["diff", str(jobs), "--env", "prod", "-o", str(out)])
    assert diffed.exit_code == 0
    assert said.format("diff") in diffed.stderr
    same = runner.invoke(cli, ["diff", str(jobs), "-o", str(out)])
    assert same.exit_code == 0 and "rendered without --env" not in same.stderr


def test_output_and_stdout_together_are_a_usage_error(runner, tmp_path):
    spec = tmp_path / "a.yaml"
    spec.write_text(job_spec("a"))
    result = runner.invoke(cli, ["render", str(spec), "--stdout", "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "-o/--output and --stdout exclude each other" in result.stderr
    assert result.stdout == "" and not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["validate", "render", "check"])
def test_two_specs_with_one_job_name_are_refused_by_every_command(runner, tmp_path, command):
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "a.yaml").write_text(job_spec("same"))
    (jobs / "b.yaml").write_text(job_spec("same", "img:2"))
    output = [] if command == "validate" else ["-o", str(tmp_path / "out")]
    result = runner.invoke(cli, [command, str(jobs), *output])
    assert result.exit_code == 1
    where = f"{jobs / 'b.yaml'}:4:9: "
    assert (
        f"{where}error: $.metadata.name: job 'same' is also the name of {jobs / 'a.yaml'}: "
        "both would render into the same directory [job-name]"
    ) in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["render", "check"])
@pytest.mark.parametrize("newcomer", ["0.yaml", "z.yaml"])  # before or after the owner
def test_a_job_name_taken_is_reported_at_the_spec_new_to_the_folder(
    runner, tmp_path, command, newcomer
):
    jobs, out = tmp_path / "jobs", tmp_path / "out"
    jobs.mkdir()
    (jobs / "m.yaml").write_text(job_spec("same"))
    assert runner.invoke(cli, ["render", str(jobs), "-o", str(out)]).exit_code == 0
    (jobs / newcomer).write_text(job_spec("same", "img:2"))
    result = runner.invoke(cli, [command, str(jobs), "-o", str(out)])
    assert result.exit_code == 1
    assert (
        f"{jobs / newcomer}:4:9: error: $.metadata.name: job 'same' is also the name of "
        f"{jobs / 'm.yaml'}: both would render into the same directory [job-name]"
    ) in result.stderr
    assert f"{jobs / 'm.yaml'}:4:9" not in result.stderr


def _leaf_commands():
    from paddlegen.cli import COMMANDS

    return sorted(name for name in COMMANDS if name != "schemas") + ["schemas export"]


@pytest.mark.parametrize("command", _leaf_commands())
def test_every_command_takes_format(runner, command):
    result = runner.invoke(cli, [*command.split(), "--help"])
    assert result.exit_code == 0
    assert "--format [text|json|github|sarif|junit]" in result.stdout


@pytest.mark.parametrize(
    ("args", "rule", "stream"),
    [
        (["explain", "nope"], "input", "stderr"),  # stdout is for what explain prints
        (["dockerfile", "/nonexistent.yaml"], "input", "stderr"),  # and the Dockerfile
        (["render", "/nonexistent.yaml", "-o", "out"], "input", "stdout"),
    ],
)
def test_an_error_is_reported_in_the_format_asked_for(runner, args, rule, stream):
    as_json = runner.invoke(cli, [*args, "--format", "json"])
    assert as_json.exit_code == 2
    (entry,) = json.loads(getattr(as_json, stream))
    assert (entry["severity"], entry["rule"]) == ("error", rule)
    as_github = runner.invoke(cli, [*args, "--format", "github"])
    assert as_github.stderr.startswith(f"::error title=paddlegen {rule}::")
    as_sarif = runner.invoke(cli, [*args, "--format", "sarif"])
    (invocation,) = json.loads(getattr(as_sarif, stream))["runs"][0]["invocations"]
    (notification,) = invocation["toolExecutionNotifications"]
    assert (notification["level"], notification["descriptor"]["id"]) == ("error", rule)
    as_junit = runner.invoke(cli, [*args, "--format", "junit"])
    assert re.search(rf"<error message=\"error: [^\"]*\[{rule}\]\">", getattr(as_junit, stream))
    as_text = runner.invoke(cli, args)
    assert as_text.stderr.startswith("paddlegen: error: ")


def test_writing_the_same_file_twice_is_no_error(runner, tmp_path):
    spec = tmp_path / "demo.yaml"
    spec.write_text(
        job_spec("demo")
        + "  build: {base: registry.example.com/paddle:2.6, package: {src: ., dest: /w}}\n"
    )
    out = tmp_path / "Dockerfile"
    first = runner.invoke(cli, ["dockerfile", str(spec), "-o", str(out)])
    assert first.exit_code == 0, first.output
    again = runner.invoke(cli, ["dockerfile", str(spec), "-o", str(out)])
    assert again.exit_code == 0, again.output
    assert again.stderr == f"paddlegen: unchanged: {out}\n"
    out.write_text("FROM other\n")
    changed = runner.invoke(cli, ["dockerfile", str(spec), "-o", str(out)])
    assert changed.exit_code == 2 and "already exists (use --force" in changed.stderr


def test_validate_checks_the_manifests_by_default_in_process(runner, tmp_path, monkeypatch):
    """An affinity typo the spec schema lets through (affinity is free-form there) fails the
    default validate, and so the pre-commit hook, without kubeconform on PATH."""
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    monkeypatch.delenv("PADDLEGEN_KUBECONFORM", raising=False)
    spec = tmp_path / "demo.yaml"
    spec.write_text(
        job_spec("demo")
        + "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution:"
        " {nodeSelectorTerm: []}}}\n"
    )
    result = runner.invoke(cli, ["validate", str(spec)])
    assert result.exit_code == 1
    assert "nodeSelectorTerm: unknown field" in result.stderr
    assert "[in-process]" in result.stderr and "kubeconform not found" not in result.stderr
    assert runner.invoke(cli, ["validate", "--no-manifests", str(spec)]).exit_code == 0


def test_version_names_the_commit_in_a_git_checkout_and_only_there(tmp_path):
    """From a checkout, the commit (`git rev-parse --short HEAD`); installed, the version."""
    checkout = os.path.dirname(os.path.dirname(os.path.abspath(paddlegen.__file__)))
    if os.path.exists(os.path.join(checkout, ".git")) and shutil.which("git"):
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=checkout, capture_output=True, text=True
        ).stdout.strip()
        assert version_text() == f"paddlegen, version {paddlegen.__version__} (commit {head})\n"
    # A copy of the package outside any checkout says the version alone.
    shutil.copytree(checkout + "/paddlegen", tmp_path / "paddlegen")
    code = "from paddlegen.version import version_text; print(version_text(), end='')"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert done.stdout == f"paddlegen, version {paddlegen.__version__}\n"
