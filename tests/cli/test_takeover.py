"""A job folder belongs to the spec file its stamp names: another spec file with the same
``metadata.name`` is refused while that file is there and names the job, and every way of
giving the same spec (another path, a symlink, another working directory, a clone elsewhere,
a rename) still renders it."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from paddlegen.cli import cli
from paddlegen.output.layout import STAMP
from tests.builders import job_spec
from tests.cli.test_gitops import rendered, repo, snapshot
from tests.helpers import invoked

NAME_AT = "4:9"  # metadata.name in a job_spec


def _other_spec_of(tmp_path, name, tag):
    """A second spec file, elsewhere, for job ``name``."""
    other = tmp_path / "other"
    other.mkdir(exist_ok=True)
    (other / f"{name}.yaml").write_text(job_spec(name, f"img:{tag}"))
    return str(other / f"{name}.yaml")


def _drifted_to_img2(runner, *args):
    """``check`` sees the job's new image as drift, with no error."""
    check = runner.invoke(cli, ["check", *args])
    assert check.exit_code == 1 and "\n+        image: img:2\n" in check.stdout, check.output
    assert "error:" not in check.stderr


def _image(deploy, name="a"):
    text = (Path(deploy) / name / f"batch_v1_job_{name}.yaml").read_text()
    return next(line.split()[-1] for line in text.splitlines() if "image:" in line)


# ---- refused -----------------------------------------------------------------------------


@pytest.mark.parametrize("tag", ["2", "1"])  # other bytes, or the very same
@pytest.mark.parametrize(
    "command", [["render"], ["render", "--validate"], ["check"], ["check", "--fix"], ["diff"]]
)
def test_another_spec_file_of_the_same_job_is_refused_naming_both(runner, tmp_path, tag, command):
    jobs, deploy = rendered(runner, tmp_path, a="1")
    before = snapshot(tmp_path / "deploy")
    other = _other_spec_of(tmp_path, "a", tag)
    result = runner.invoke(cli, [*command, other, "-o", deploy])
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(
        f"{other}:{NAME_AT}: error: $.metadata.name: job 'a' in {deploy}/a was rendered from "
        f"{jobs}/a.yaml, which still names it: this spec would take the other's job over "
        f"(rename one of the jobs (metadata.name); if this spec replaces {jobs}/a.yaml, "
        "delete or move that file first) [job-name]\n"
    )
    assert snapshot(tmp_path / "deploy") == before


def test_the_refusal_names_the_other_file_as_typed_and_every_taker(runner, tmp_path, monkeypatch):
    """Relative to the working directory; several specs of one run are all reported."""
    repo(tmp_path, a="1", b="1")
    monkeypatch.chdir(tmp_path)
    invoked(runner, "render", "jobs", "-o", "deploy")
    (tmp_path / "next").mkdir()
    for name in "ab":
        (tmp_path / "next" / f"{name}.yaml").write_text(job_spec(name, "img:2"))
    result = runner.invoke(cli, ["render", "next", "-o", "deploy"])
    assert result.exit_code == 1, result.output
    for name in "ab":
        assert (
            f"next/{name}.yaml:{NAME_AT}: error: $.metadata.name: job '{name}' in "
            f"deploy/{name} was rendered from jobs/{name}.yaml, which still names it"
        ) in result.stderr
    assert result.stderr.endswith("nothing written: 2 of 2 specs have errors\n")


def test_a_spec_file_that_cannot_be_read_still_holds_its_folder(runner, tmp_path):
    jobs, deploy = rendered(runner, tmp_path, a="1")
    (tmp_path / "jobs" / "a.yaml").write_text("metadata: {name: [\n")  # mid-edit
    other = _other_spec_of(tmp_path, "a", "2")
    result = runner.invoke(cli, ["render", other, "-o", deploy])
    assert result.exit_code == 1, result.output
    assert (
        f"rendered from {jobs}/a.yaml, which is still there and reads as no spec: this spec "
        f"would take the other's job over (if {jobs}/a.yaml is a spec, fix it, then rename one "
        "of the jobs" in result.stderr
    )


@pytest.mark.parametrize("command", [["render"], ["check"], ["check", "--fix"]])
def test_a_stamp_naming_a_file_that_is_no_spec_says_to_delete_the_stamp(runner, tmp_path, command):
    """A stamp edited by hand, or a copy from elsewhere: the way out is named."""
    jobs, deploy = rendered(runner, tmp_path, a="1")
    stamp = tmp_path / "deploy" / "a" / STAMP
    program = tmp_path / "ls"
    program.write_bytes(b"\x7fELF\x02\x01\x01\x00\xff\xfe")
    stamp.write_text(re.sub(r'"spec": "[^"]*"', f'"spec": "{program}"', stamp.read_text()))
    (tmp_path / "jobs" / "a.yaml").write_text(job_spec("a", "img:2"))
    result = runner.invoke(cli, [*command, jobs, "-o", deploy])
    assert result.exit_code == 1, result.output
    assert (
        f"if it is no spec, the folder's stamp names the wrong file: delete the stamp (rm "
        f"{stamp}) and run again) [job-name]"
    ) in result.stderr
    stamp.unlink()
    invoked(runner, "render", jobs, "-o", deploy)


# ---- given up: the other file is gone or names another job -------------------------------


def test_deleting_the_other_file_gives_the_folder_up(runner, tmp_path):
    jobs, deploy = rendered(runner, tmp_path, a="1")
    other = _other_spec_of(tmp_path, "a", "2")
    os.remove(tmp_path / "jobs" / "a.yaml")
    invoked(runner, "render", other, "-o", deploy)
    assert _image(deploy) == "img:2"
    invoked(runner, "check", other, "-o", deploy)


def test_a_spec_whose_first_file_names_another_job_or_moved_takes_the_folder(runner, tmp_path):
    jobs, deploy = rendered(runner, tmp_path, a="1")
    other = _other_spec_of(tmp_path, "a", "2")
    # the first spec names another job now: the folder is no longer its
    (tmp_path / "jobs" / "a.yaml").write_text(job_spec("b", "img:1"))
    invoked(runner, "render", other, "-o", deploy)
    # the spec that rendered it moves, and changes on the way
    moved = tmp_path / "moved.yaml"
    os.rename(other, moved)
    moved.write_text(job_spec("a", "img:3"))
    invoked(runner, "render", str(moved), "-o", deploy)
    assert _image(deploy) == "img:3"


@pytest.mark.parametrize("listed", [False, True])  # the folder, or the files one by one
def test_a_renamed_spec_file_keeps_its_job(runner, tmp_path, listed):
    """`git mv jobs/a.yaml jobs/b.yaml`, edited in the same commit."""
    jobs, deploy = rendered(runner, tmp_path, a="1", c="1")
    os.rename(tmp_path / "jobs" / "a.yaml", tmp_path / "jobs" / "b.yaml")
    (tmp_path / "jobs" / "b.yaml").write_text(job_spec("a", "img:2"))
    specs = sorted(str(p) for p in (tmp_path / "jobs").iterdir()) if listed else [jobs]
    _drifted_to_img2(runner, *specs, "-o", deploy)
    invoked(runner, "render", *specs, "-o", deploy)
    assert _image(deploy) == "img:2"
    assert invoked(runner, "check", *specs, "-o", deploy).stdout == ""


# ---- the same spec file by any path ------------------------------------------------------


def test_the_same_spec_by_a_relative_path_from_another_directory(runner, tmp_path, monkeypatch):
    jobs, deploy = repo(tmp_path, a="1")
    invoked(runner, "render", f"{jobs}/a.yaml", "-o", deploy)  # absolute
    (tmp_path / "jobs" / "a.yaml").write_text(job_spec("a", "img:2"))
    monkeypatch.chdir(tmp_path / "jobs")
    invoked(runner, "render", "a.yaml", "-o", "../deploy")
    monkeypatch.chdir(tmp_path / "deploy")
    (tmp_path / "jobs" / "a.yaml").write_text(job_spec("a", "img:3"))
    invoked(runner, "render", "../jobs/a.yaml", "-o", ".")
    assert _image(deploy) == "img:3"


@pytest.mark.parametrize("first", ["link", "file"])
def test_the_same_spec_through_a_symlink(runner, tmp_path, first):
    jobs, deploy = repo(tmp_path, a="1")
    link = tmp_path / "link.yaml"
    link.symlink_to(tmp_path / "jobs" / "a.yaml")
    paths = [str(link), f"{jobs}/a.yaml"]
    if first == "file":
        paths.reverse()
    invoked(runner, "render", paths[0], "-o", deploy)
    (tmp_path / "jobs" / "a.yaml").write_text(job_spec("a", "img:2"))
    _drifted_to_img2(runner, paths[1], "-o", deploy)
    invoked(runner, "render", paths[1], "-o", deploy)
    assert _image(deploy) == "img:2"


def test_a_clone_at_another_path_owns_its_own_folders(runner, tmp_path):
    """The stamp names the spec relative to the job folder: in a clone beside the first
    checkout, the clone's own spec file, never the first checkout's."""
    first = tmp_path / "first"
    first.mkdir()
    jobs, deploy = repo(first, a="1")
    invoked(runner, "render", jobs, "-o", deploy)
    clone = tmp_path / "clone"
    shutil.copytree(first, clone)
    invoked(runner, "check", str(clone / "jobs"), "-o", str(clone / "deploy"))
    (clone / "jobs" / "a.yaml").write_text(job_spec("a", "img:2"))
    invoked(runner, "render", str(clone / "jobs" / "a.yaml"), "-o", str(clone / "deploy"))
    assert _image(clone / "deploy") == "img:2"
    assert _image(deploy) == "img:1"


def test_an_imported_spec_renders_over_its_own_job(runner, tmp_path):
    """`import` of a job's manifests into its spec file, then render."""
    jobs, deploy = rendered(runner, tmp_path, a="1")
    manifests = tmp_path / "live.yaml"
    manifests.write_text(
        runner.invoke(cli, ["render", f"{jobs}/a.yaml", "--stdout"]).stdout.replace(
            "img:1", "img:2"
        )
    )
    invoked(runner, "import", str(manifests), "-o", f"{jobs}/a.yaml", "--force")
    invoked(runner, "render", jobs, "-o", deploy)
    assert _image(deploy) == "img:2"
