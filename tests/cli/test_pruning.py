"""A job folder is removed only when its spec is provably gone: its stamp names a spec file
that no longer exists (or that renders another job now), whatever path leads to the folder;
a run over part of the specs never removes the folders of the others."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.builders import job_spec
from tests.conftest import ROOT
from tests.helpers import invoked


@pytest.fixture
def teams(tmp_path, monkeypatch, runner):
    """jobs/team-a/qa.yaml and jobs/team-b/qb.yaml rendered into deploy/."""
    for team, name in (("team-a", "qa"), ("team-b", "qb")):
        (tmp_path / "jobs" / team).mkdir(parents=True)
        (tmp_path / "jobs" / team / f"{name}.yaml").write_text(job_spec(name))
    monkeypatch.chdir(tmp_path)
    invoked(runner, "render", "jobs", "-o", "deploy")
    return tmp_path


def _jobs(folder: str = "deploy") -> list[str]:
    return sorted(p.name for p in Path(folder).iterdir())


@pytest.mark.parametrize("given", ["jobs/team-a", "jobs/team-a/*.yaml", "jobs/team-a/qa.yaml"])
def test_a_run_over_part_of_the_specs_keeps_the_others_folders(runner, teams, given):
    result = invoked(runner, "render", given, "-o", "deploy")
    assert result.stderr.endswith("1 job in deploy: 0 written, 3 unchanged, 0 removed\n")
    assert _jobs() == ["qa", "qb"]
    assert invoked(runner, "check", given, "-o", "deploy").stderr == "1 job in deploy: up to date\n"
    invoked(runner, "check", given, "-o", "deploy", "--fix")
    assert _jobs() == ["qa", "qb"]


@pytest.mark.parametrize("given", ["jobs/team-a", "jobs/team-a/*.yaml", "jobs/team-a/qa.yaml"])
def test_the_folder_of_a_deleted_spec_outside_the_run_goes_and_is_named(runner, teams, given):
    os.remove("jobs/team-b/qb.yaml")
    check = invoked(runner, "check", given, "-o", "deploy", code=1)
    assert "extra: deploy/qb/kustomization.yaml" in check.stderr
    result = invoked(runner, "render", given, "-o", "deploy")
    assert "paddlegen: removed deploy/qb: no spec renders it any more\n" in result.stderr
    assert result.stderr.endswith("0 written, 3 unchanged, 3 removed\n")
    assert _jobs() == ["qa"]


@pytest.mark.parametrize("first", ["link", "real"])
def test_a_symlinked_output_folder_is_the_same_folder_either_way(
    runner, tmp_path, monkeypatch, first
):
    """Rendered through the link and then through the real path (or the other way), with
    the specs given in part: each folder's stamp names its spec by the same path."""
    for name in ("a", "b"):
        (tmp_path / "jobs").mkdir(exist_ok=True)
        (tmp_path / "jobs" / f"{name}.yaml").write_text(job_spec(name))
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "deploy").mkdir()
    (tmp_path / "deploy").symlink_to(tmp_path / "elsewhere" / "deploy")
    monkeypatch.chdir(tmp_path)
    paths = {"link": "deploy", "real": "elsewhere/deploy"}
    second = paths["real" if first == "link" else "link"]
    invoked(runner, "render", "jobs", "-o", paths[first])
    result = invoked(runner, "render", "jobs/a.yaml", "-o", second)
    assert result.stderr.endswith("0 written, 3 unchanged, 0 removed\n")
    (tmp_path / "jobs" / "c.yaml").write_text(job_spec("c"))
    os.remove("jobs/a.yaml")
    result = invoked(runner, "render", "jobs", "-o", second)
    assert "removed " + second + "/a:" in result.stderr
    assert _jobs(second) == ["b", "c"]
    assert invoked(runner, "check", "jobs", "-o", paths[first]).exit_code == 0


def test_another_working_directory_finds_the_same_specs(runner, teams, monkeypatch):
    """The folder, the specs and the output given from inside jobs/, and by absolute paths
    from elsewhere: nothing is an orphan."""
    monkeypatch.chdir(teams / "jobs")
    result = invoked(runner, "render", "team-a", "-o", "../deploy")
    assert result.stderr.endswith("0 written, 3 unchanged, 0 removed\n")
    monkeypatch.chdir("/")
    result = invoked(runner, "render", str(teams / "jobs" / "team-b"), "-o", str(teams / "deploy"))
    assert result.stderr.endswith("0 written, 3 unchanged, 0 removed\n")
    assert _jobs(str(teams / "deploy")) == ["qa", "qb"]


def test_a_folder_whose_stamp_names_no_spec_goes_only_with_a_whole_folder(runner, teams):
    """A repository that commits no stamps: a folder or glob given is the whole set of specs,
    and a job folder none renders is removed; listed files never remove it."""
    os.remove("deploy/qb/.paddlegen-stamp")
    invoked(runner, "render", "jobs/team-a/qa.yaml", "-o", "deploy")
    assert _jobs() == ["qa", "qb"]
    result = invoked(runner, "render", "jobs/team-a", "-o", "deploy")
    assert "paddlegen: removed deploy/qb: no spec renders it any more\n" in result.stderr
    assert _jobs() == ["qa"]


def test_another_commands_folder_among_the_jobs_is_no_job(runner, teams):
    """kueue's folder has a generated kustomization.yaml, as a job folder has; a render of
    every spec leaves it alone."""
    setup = str(ROOT / "examples" / "gitops" / "platform" / "kueue.yaml")
    invoked(runner, "kueue", setup, "-o", "deploy-kueue")
    os.rename("deploy-kueue", "deploy/kueue")
    before = sorted(p.name for p in Path("deploy/kueue").iterdir())
    result = invoked(runner, "render", "jobs", "-o", "deploy")
    assert result.stderr.endswith("2 jobs in deploy: 0 written, 6 unchanged, 0 removed\n")
    assert sorted(p.name for p in Path("deploy/kueue").iterdir()) == before
