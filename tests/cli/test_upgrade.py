"""A new paddlegen never changes the output of a spec that did not change, unless asked: under
Argo CD changed objects are a sync, and a sync runs the job again. A release is simulated by a
copy of the package with a changed template and version."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.helpers import drop_source, own_templates, release, rendered_quickstart
from tests.helpers import paddlegen_of as paddlegen

JOB = "quickstart"
JOB_FILE = f"batch_v1_job_{JOB}.yaml"
KEPT = "keeps the files paddlegen 0.1.0 wrote"


def digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return rendered_quickstart(tmp_path)


def test_a_new_release_keeps_an_unchanged_specs_files_and_says_so(repo, tmp_path):
    before = digests(repo / "deploy")
    new = release(tmp_path, "0.2.0")
    done = paddlegen(new, repo, "render", "jobs", "-o", "deploy")
    assert done.returncode == 0, done.stderr
    assert f"1 job ({JOB}) in deploy {KEPT}" in done.stderr
    assert "`paddlegen render --upgrade JOB` or `--upgrade-all`" in done.stderr
    assert digests(repo / "deploy") == before  # not a byte changed, the stamp included
    check = paddlegen(new, repo, "check", "jobs", "-o", "deploy")
    assert check.returncode == 0, check.stderr  # kept output is not stale
    assert KEPT in check.stderr
    assert check.stderr.endswith("1 job in deploy: up to date\n")


@pytest.mark.parametrize("flag", [["--upgrade", JOB], ["--upgrade-all"]])
def test_upgrade_takes_the_new_rendering(repo, tmp_path, flag):
    new = release(tmp_path, "0.2.0")
    done = paddlegen(new, repo, "render", "jobs", "-o", "deploy", *flag)
    assert done.returncode == 0, done.stderr
    assert KEPT not in done.stderr
    assert "suspend: false" in (repo / "deploy" / JOB / JOB_FILE).read_text()
    assert '"version": "0.2.0"' in (repo / "deploy" / JOB / ".paddlegen-stamp").read_text()
    again = paddlegen(new, repo, "render", "jobs", "-o", "deploy")
    assert again.returncode == 0 and KEPT not in again.stderr  # taken: nothing left to keep
    assert "0 written" in again.stderr


def test_an_upgrade_of_no_job_is_refused_and_writes_nothing(repo, tmp_path):
    before = digests(repo / "deploy")
    new = release(tmp_path, "0.2.0")
    done = paddlegen(new, repo, "render", "jobs", "-o", "deploy", "--upgrade", "quikstart")
    assert done.returncode == 2
    assert done.stderr == (
        "paddlegen: error: --upgrade quikstart: no spec given renders a job of that name; "
        f"did you mean '{JOB}'?\n"
    )
    assert digests(repo / "deploy") == before


def test_a_changed_spec_takes_the_new_rendering(repo, tmp_path):
    spec = repo / "jobs" / "quickstart.yaml"
    spec.write_text(spec.read_text().replace("metadata:\n", "metadata:\n  labels: {team: a}\n", 1))
    new = release(tmp_path, "0.2.0")
    done = paddlegen(new, repo, "render", "jobs", "-o", "deploy")
    assert done.returncode == 0, done.stderr
    assert KEPT not in done.stderr
    text = (repo / "deploy" / JOB / JOB_FILE).read_text()
    assert "suspend: false" in text and "team: a" in text


def test_a_release_that_renders_the_same_files_changes_nothing_and_says_nothing(repo, tmp_path):
    before = digests(repo / "deploy")
    new = release(tmp_path, "0.2.0", template_change=False)
    done = paddlegen(new, repo, "render", "jobs", "-o", "deploy")
    assert done.returncode == 0, done.stderr
    assert KEPT not in done.stderr
    after = digests(repo / "deploy")
    stamp = f"{JOB}/.paddlegen-stamp"
    assert {k: v for k, v in after.items() if k != stamp} == {
        k: v for k, v in before.items() if k != stamp
    }
    assert '"version": "0.2.0"' in (repo / "deploy" / stamp).read_text()  # its stamp renewed


def test_a_stamp_without_its_source_takes_the_new_rendering(repo, tmp_path):
    """A folder stamped before stamps said what of the input is the user's: whether its spec
    changed cannot be told, so it is rendered anew, as before."""
    drop_source(repo / "deploy" / JOB / ".paddlegen-stamp")
    new = release(tmp_path, "0.2.0")
    done = paddlegen(new, repo, "render", "jobs", "-o", "deploy")
    assert done.returncode == 0, done.stderr
    assert "suspend: false" in (repo / "deploy" / JOB / JOB_FILE).read_text()


def test_the_users_own_templates_are_input_like_the_spec(repo, tmp_path):
    """An edit of a --templates folder is the user's change: it takes effect at once."""
    template = own_templates(tmp_path)
    args = ["render", "jobs", "-o", "deploy", "--templates", str(template.parents[1])]
    assert paddlegen(None, repo, *args).returncode == 0
    source = template.read_text()
    template.write_text(source.replace('"parallelism": 1', '"parallelism": 1, "suspend": false'))
    done = paddlegen(None, repo, *args)
    assert done.returncode == 0, done.stderr
    assert KEPT not in done.stderr
    assert "suspend: false" in (repo / "deploy" / JOB / JOB_FILE).read_text()
