"""Skipping unchanged jobs (the stamp), which must notice every edit of a spec, a template or
a rendered file; rendering on several processes (-j); the compiled-template cache."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys

import pytest

from paddlegen.cli import cli
from paddlegen.output import writer
from paddlegen.output.layout import HEADER, STAMP
from paddlegen.render import engine, toolchain
from tests.builders import job_spec
from tests.cli.test_gitops import rendered, repo, snapshot
from tests.helpers import own_templates


def _render(runner, jobs, deploy, *args):
    result = runner.invoke(cli, ["render", jobs, "-o", deploy, *args])
    assert result.exit_code == 0, result.output
    return result


def _fresh(runner, tmp_path, jobs, *args):
    """The output a render into an empty folder gives: what every reuse must equal."""
    out = tmp_path / "fresh"
    shutil.rmtree(out, ignore_errors=True)
    _render(runner, jobs, str(out), *args)
    return {k: v[0] for k, v in snapshot(out).items()}


def _bytes(path):
    return {k: v[0] for k, v in snapshot(path).items()}


def test_the_stamp_records_input_and_file_digests(runner, tmp_path):
    jobs, deploy = rendered(runner, tmp_path, a="1")
    text = (tmp_path / "deploy" / "a" / STAMP).read_text()
    assert text.startswith(HEADER)
    body = json.loads(text[len(HEADER) :])
    assert sorted(body["files"]) == [
        "batch_v1_job_a.yaml",
        "kustomization.yaml",
        "v1_configmap_a-run.yaml",
    ]
    assert len(body["input"]) == 64


def test_an_edited_spec_renders_again(runner, tmp_path):
    jobs, deploy = rendered(runner, tmp_path, a="1", b="1")
    (tmp_path / "jobs" / "a.yaml").write_text(job_spec("a", "img:2"))
    check = runner.invoke(cli, ["check", jobs, "-o", deploy])
    assert check.exit_code == 1 and "\n+        image: img:2\n" in check.stdout
    result = _render(runner, jobs, deploy)
    assert result.stderr.endswith("2 written, 4 unchanged, 0 removed\n")  # the Job, its record
    assert _bytes(tmp_path / "deploy") == _fresh(runner, tmp_path, jobs)


@pytest.mark.parametrize("edit", ["change", "delete", "add-generated"])
def test_an_edited_rendered_file_is_noticed_and_restored(runner, tmp_path, edit):
    jobs, deploy = rendered(runner, tmp_path, a="1")
    job = tmp_path / "deploy" / "a"
    manifest = job / "batch_v1_job_a.yaml"
    if edit == "change":
        manifest.write_text(manifest.read_text().replace("img:1", "img:evil"))
    elif edit == "delete":
        manifest.unlink()
    else:
        (job / "v1_configmap_x.yaml").write_text(HEADER + "kind: ConfigMap\n")
    check = runner.invoke(cli, ["check", jobs, "-o", deploy])
    assert check.exit_code == 1, check.output
    _render(runner, jobs, deploy)
    assert _bytes(tmp_path / "deploy") == _fresh(runner, tmp_path, jobs)


def test_a_file_paddlegen_did_not_make_does_not_stop_reuse(runner, tmp_path):
    jobs, deploy = rendered(runner, tmp_path, a="1")
    (tmp_path / "deploy" / "a" / "NOTES.md").write_text("ours\n")
    again = _render(runner, jobs, deploy)
    assert "kept" in again.stderr and "NOTES.md" in again.stderr
    assert again.stderr.endswith("0 written, 3 unchanged, 0 removed\n")


def test_an_edited_template_renders_again(runner, tmp_path):
    jobs, deploy = repo(tmp_path, a="1")
    template = own_templates(tmp_path)
    templates = ["--templates", str(tmp_path / "templates")]
    _render(runner, jobs, deploy, *templates)
    template.write_text(template.read_text().replace(', "completions": 1', ""))
    check = runner.invoke(cli, ["check", jobs, "-o", deploy, *templates])
    assert check.exit_code == 1 and "\n-  completions: 1\n" in check.stdout
    result = _render(runner, jobs, deploy, *templates)
    assert result.stderr.endswith("2 written, 1 unchanged, 0 removed\n")  # the Job, its record


def test_different_options_do_not_reuse(runner, tmp_path):
    jobs, deploy = rendered(runner, tmp_path, a="1")
    check = runner.invoke(cli, ["check", jobs, "-o", deploy, "--no-argocd"])
    assert check.exit_code == 1 and "-    argocd.argoproj.io/sync-wave" in check.stdout


def test_the_toolchain_digest_covers_code_templates_and_the_templates_folder(tmp_path):
    builtin = toolchain.toolchain_digest()
    mine = tmp_path / "templates"
    (mine / "job").mkdir(parents=True)
    (mine / "job" / "extra.yaml.j2").write_text("# one\n")
    with_mine = toolchain.toolchain_digest(str(mine))
    assert with_mine != builtin
    (mine / "job" / "extra.yaml.j2").write_text("# two\n")
    assert toolchain.toolchain_digest(str(mine)) not in (builtin, with_mine)  # never cached


def test_a_stale_stamp_alone_is_not_drift(runner, tmp_path):
    """After an upgrade every stamp is stale: check still passes when the manifests match."""
    jobs, deploy = rendered(runner, tmp_path, a="1")
    path = tmp_path / "deploy" / "a" / STAMP
    path.write_text(path.read_text().replace('"input": "', '"input": "stale'))
    check = runner.invoke(cli, ["check", jobs, "-o", deploy])
    assert check.exit_code == 0, check.output
    again = _render(runner, jobs, deploy)  # rewrites the stamp, counts no manifest
    assert again.stderr.endswith("0 written, 3 unchanged, 0 removed\n")
    assert '"input": "stale' not in path.read_text()


def test_a_skipped_job_still_reports_its_warnings(runner, tmp_path):
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "w.yaml").write_text(
        job_spec("w").replace("  resources: {limits: {memory: 1Gi}}\n", "")
    )
    first = _render(runner, str(jobs), str(tmp_path / "deploy"))
    second = _render(runner, str(jobs), str(tmp_path / "deploy"))
    assert "[limits-missing]" in first.stderr
    assert second.stderr.splitlines()[0] == first.stderr.splitlines()[0]


def test_two_specs_with_the_same_bytes_are_still_refused(runner, tmp_path):
    jobs, deploy = rendered(runner, tmp_path, a="1")
    shutil.copy(tmp_path / "jobs" / "a.yaml", tmp_path / "jobs" / "copy.yaml")
    result = runner.invoke(cli, ["render", jobs, "-o", deploy])
    assert result.exit_code == 1 and "job 'a' is also the name of" in result.output


def test_a_moved_spec_reuses_its_output(runner, tmp_path):
    jobs, deploy = rendered(runner, tmp_path, a="1")
    (tmp_path / "jobs" / "team").mkdir()
    (tmp_path / "jobs" / "a.yaml").rename(tmp_path / "jobs" / "team" / "a.yaml")
    again = _render(runner, jobs, deploy)
    assert again.stderr.endswith("0 written, 3 unchanged, 0 removed\n")


# ---- -j/--jobs ---------------------------------------------------------------------------


def _many(tmp_path, count=40):
    jobs, deploy = repo(tmp_path, **{f"job-{i:02d}": str(i) for i in range(count)})
    return jobs, deploy


def test_several_processes_write_the_same_bytes_as_one(runner, tmp_path):
    jobs, _ = _many(tmp_path)
    one = tmp_path / "one"
    two = tmp_path / "two"
    _render(runner, jobs, str(one), "-j", "1")
    _render(runner, jobs, str(two), "-j", "2")
    assert _bytes(one) == _bytes(two) and len(_bytes(one)) == 160


def test_errors_from_worker_processes_keep_their_positions(runner, tmp_path):
    jobs, deploy = _many(tmp_path)
    (tmp_path / "jobs" / "job-17.yaml").write_text(
        job_spec("job-17").replace("workload: job", "workload: jb")
    )
    (tmp_path / "jobs" / "job-33.yaml").write_text(job_spec("job-33") + "  replicas: -1\n")
    result = runner.invoke(cli, ["render", jobs, "-o", deploy, "-j", "2"])
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if ": error: " in line]
    assert lines[0].startswith(f"{jobs}/job-17.yaml:6:13: error: $.spec.workload")
    assert lines[1].startswith(f"{jobs}/job-33.yaml:9:3: error: $.spec.replicas")
    assert not (tmp_path / "deploy").exists()  # nothing written


def test_a_failed_parallel_render_leaves_the_output_as_it_was(runner, tmp_path):
    """One bad spec among many rendered in parallel: nothing is staged, nothing changes."""
    jobs, deploy = _many(tmp_path)
    _render(runner, jobs, deploy, "-j", "2")
    before = snapshot(tmp_path / "deploy")
    for i in range(0, 40, 2):  # half the jobs change, so half would be staged
        (tmp_path / "jobs" / f"job-{i:02d}.yaml").write_text(job_spec(f"job-{i:02d}", "img:new"))
    (tmp_path / "jobs" / "job-39.yaml").write_text(job_spec("job-39") + "  bogus: 1\n")
    result = runner.invoke(cli, ["render", jobs, "-o", deploy, "-j", "2"])
    assert result.exit_code == 1, result.output
    assert snapshot(tmp_path / "deploy") == before  # bytes and mtimes
    assert not [n for n in os.listdir(deploy) if n.startswith(".")]


# ---- the compiled-template cache -----------------------------------------------------------


def test_the_template_cache_never_serves_an_edited_template(tmp_path):
    """Separate processes, as users run it: the second one finds the first one's cache."""
    jobs, _ = repo(tmp_path, a="1")
    template = own_templates(tmp_path)
    env = {**os.environ, "PADDLEGEN_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("PADDLEGEN_NO_CACHE", None)

    def render() -> str:
        out = tmp_path / "out"
        shutil.rmtree(out, ignore_errors=True)
        args = ["render", jobs, "-o", str(out), "--templates", str(tmp_path / "templates")]
        run = subprocess.run(
            [sys.executable, "-m", "paddlegen", *args], capture_output=True, text=True, env=env
        )
        assert run.returncode == 0, run.stderr
        return (out / "a" / "batch_v1_job_a.yaml").read_text()

    first = render()
    assert list((tmp_path / "cache").glob("templates-*/__jinja2_*.cache"))
    template.write_text(template.read_text().replace(', "completions": 1', ""))
    second = render()
    assert "completions: 1" in first and "completions" not in second


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX ownership")
def test_a_cache_folder_others_can_write_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("PADDLEGEN_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("PADDLEGEN_NO_CACHE", raising=False)
    assert engine._bytecode_cache() is not None
    (tmp_path / f"templates-{toolchain.compiler_digest()[:16]}").chmod(0o777)
    assert engine._bytecode_cache() is None  # its entries would be loaded as code
    monkeypatch.setenv("PADDLEGEN_NO_CACHE", "1")
    assert engine._bytecode_cache() is None


def test_the_template_cache_is_named_after_the_sandbox_and_the_environment(tmp_path, monkeypatch):
    for rel in toolchain.COMPILER_MODULES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(toolchain.PACKAGE / rel, tmp_path / rel)
    monkeypatch.setattr(toolchain, "PACKAGE", tmp_path)
    digests = []
    for rel in (None, *toolchain.COMPILER_MODULES):
        if rel:
            (tmp_path / rel).write_text((tmp_path / rel).read_text() + "\n# changed\n")
        toolchain.compiler_digest.cache_clear()
        digests.append(toolchain.compiler_digest())
    toolchain.compiler_digest.cache_clear()
    assert len(set(digests)) == len(digests)  # a change to either names a new cache


def test_a_swap_that_fails_midway_leaves_no_staged_tree_behind(runner, tmp_path, monkeypatch):
    jobs, deploy = rendered(runner, tmp_path, a="1", b="1", c="1", d="1")
    for name in "abcd":
        (tmp_path / "jobs" / f"{name}.yaml").write_text(job_spec(name, "img:2"))
    calls = []
    real_swap = writer._swap

    def swap(staging, target):
        calls.append(target.name)
        if len(calls) == 3:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_swap(staging, target)

    monkeypatch.setattr(writer, "_swap", swap)
    result = runner.invoke(cli, ["render", jobs, "-o", deploy, "-j", "1"])
    assert result.exit_code == 2 and "c: cannot write: Input/output error" in result.stderr
    assert not [n for n in os.listdir(deploy) if n.startswith(".")]
    images = {
        name: "img:2" in (tmp_path / "deploy" / name / f"batch_v1_job_{name}.yaml").read_text()
        for name in "abcd"
    }
    assert images == {"a": True, "b": True, "c": False, "d": False}  # each job old or new


def test_an_edited_module_in_a_subpackage_renders_again(tmp_path):
    """The code digest covers every module of the package, nested ones too: a copy of the
    package with a subpackage renders, skips when nothing changed, renders after an edit."""
    pkg = tmp_path / "pkg"
    shutil.copytree(
        toolchain.PACKAGE, pkg / "paddlegen", ignore=shutil.ignore_patterns("__pycache__", "_data")
    )
    for data in ("templates", "schemas"):  # where a checkout keeps them
        (pkg / data).symlink_to(toolchain.PACKAGE.parent / data)
    nested = pkg / "paddlegen" / "_nested"
    nested.mkdir()
    (nested / "__init__.py").write_text("")
    (nested / "probe.py").write_text("VALUE = 1\n")
    jobs, deploy = repo(tmp_path, a="1")
    env = {**os.environ, "PYTHONPATH": str(pkg), "PADDLEGEN_NO_CACHE": "1"}

    def render_input_digest() -> str:
        subprocess.run(
            [sys.executable, "-m", "paddlegen", "render", jobs, "-o", deploy],
            cwd=tmp_path,
            env=env,
            check=True,
            capture_output=True,
        )
        return json.loads((tmp_path / "deploy" / "a" / STAMP).read_text()[len(HEADER) :])["input"]

    first = render_input_digest()
    assert render_input_digest() == first
    (nested / "probe.py").write_text("VALUE = 2\n")
    assert render_input_digest() != first
