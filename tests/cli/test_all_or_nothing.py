"""Issue #25: one bad spec among many writes nothing for any job (atomic), and the run says so
as its last line, and in --format json as a finding of rule `summary`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paddlegen.cli import cli
from tests.builders import job_spec
from tests.security.trees import tree_state

BAD = "  wokrer: {replicas: 2}\n"  # line 9, column 3 of a job_spec


@pytest.fixture()
def jobs(runner, tmp_path, monkeypatch) -> Path:
    """jobs/ with twelve specs rendered into deploy/; then every image changed (all stale) and
    j05 broken."""
    monkeypatch.chdir(tmp_path)
    folder = Path("jobs")
    folder.mkdir()
    for i in range(12):
        (folder / f"j{i:02d}.yaml").write_text(job_spec(f"j{i:02d}"))
    assert runner.invoke(cli, ["render", "jobs", "-o", "deploy"]).exit_code == 0
    for i in range(12):
        (folder / f"j{i:02d}.yaml").write_text(job_spec(f"j{i:02d}", "img:2"))
    (folder / "j05.yaml").write_text(job_spec("j05", "img:2", BAD))
    return folder


FINDING = "jobs/j05.yaml:9:3: error: $.spec.wokrer: unknown field (did you mean 'worker'?) [schema]"


@pytest.mark.parametrize(
    ("args", "last"),
    [
        (["render", "jobs", "-o", "deploy"], "nothing written"),
        (["render", "jobs", "-o", "deploy", "-j", "2"], "nothing written"),
        (["render", "jobs", "-o", "deploy", "--validate"], "nothing written"),
        (["check", "jobs", "-o", "deploy", "--fix"], "nothing written"),
        (["check", "jobs", "-o", "deploy"], "nothing checked"),
        (["diff", "jobs", "-o", "deploy"], "nothing compared"),
        (["render", "jobs", "--stdout"], "nothing printed"),
    ],
)
def test_one_bad_spec_of_twelve_writes_nothing_and_says_so_last(runner, jobs, args, last):
    before = tree_state(Path("deploy"))

    result = runner.invoke(cli, args)

    assert result.exit_code == 1, result.output
    assert tree_state(Path("deploy")) == before  # no job written, stale ones included
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        FINDING,
        "1 error in jobs/j05.yaml",
        f"paddlegen: {last}: 1 of 12 specs has errors",
    ]


def test_the_count_is_of_specs_not_errors(runner, jobs):
    (jobs / "j07.yaml").write_text(job_spec("j07", "img:2", "  gpus: -1\n  shm: 2GB\n"))
    result = runner.invoke(cli, ["render", "jobs", "-o", "deploy"])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == "paddlegen: nothing written: 2 of 12 specs have errors"
    one = runner.invoke(cli, ["render", "jobs/j05.yaml", "-o", "deploy"])
    assert one.stderr.splitlines()[-1] == "paddlegen: nothing written: 1 of 1 spec has errors"


def test_a_job_name_clash_counts_each_spec_it_stops(runner, jobs):
    (jobs / "j05.yaml").write_text(job_spec("j04", "img:2"))  # the name of j04.yaml
    result = runner.invoke(cli, ["render", "jobs", "-o", "deploy"])
    assert result.exit_code == 1
    assert "[job-name]" in result.stderr
    assert result.stderr.splitlines()[-1] == "paddlegen: nothing written: 1 of 12 specs has errors"


@pytest.mark.parametrize(
    ("args", "undone"),
    [
        (["render", "jobs", "-o", "deploy"], "nothing written"),
        (["check", "jobs", "-o", "deploy", "--fix"], "nothing written"),
        (["check", "jobs", "-o", "deploy"], "nothing checked"),
    ],
)
def test_json_reports_the_same_fact_in_its_one_document(runner, jobs, args, undone):
    result = runner.invoke(cli, [*args, "--format", "json"])
    assert result.exit_code == 1, result.output
    found = json.loads(result.stdout)
    assert [(d["file"], d["severity"], d["rule"]) for d in found] == [
        ("jobs/j05.yaml", "error", "schema"),
        ("", "info", "summary"),
    ]
    assert found[-1]["message"] == f"{undone}: 1 of 12 specs has errors"


def test_without_spec_findings_check_names_the_specs_and_how_to_list_them(runner, jobs):
    """What the pre-commit hooks run, beside paddlegen-validate (which lists the findings)."""
    args = ["check", "jobs", "-o", "deploy", "--no-spec-findings", "--ignore", "image-tag"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 1
    assert result.stderr == (
        "paddlegen: nothing checked: 1 of 12 specs has errors (jobs/j05.yaml); "
        "`paddlegen validate jobs --ignore image-tag` lists them\n"
    )
    fixed = runner.invoke(cli, ["check", "jobs", "-o", "deploy", "--fix", "--no-spec-findings"])
    assert fixed.stderr.startswith("paddlegen: nothing written: 1 of 12 specs has errors (")


def test_without_spec_findings_warnings_are_left_to_validate_too(runner, jobs):
    (jobs / "j05.yaml").write_text(job_spec("j05", "img:latest"))  # valid, a warning
    shown = runner.invoke(cli, ["check", "jobs", "-o", "deploy"])
    assert "[image-tag]" in shown.stderr
    left = runner.invoke(cli, ["check", "jobs", "-o", "deploy", "--no-spec-findings"])
    assert left.exit_code == 1  # stale
    assert "[image-tag]" not in left.stderr and "stale: deploy/j05/" in left.stderr
    as_json = runner.invoke(
        cli, ["check", "jobs", "-o", "deploy", "--no-spec-findings", "--format", "json"]
    )
    assert {d["rule"] for d in json.loads(as_json.stdout)} == {"stale"}
