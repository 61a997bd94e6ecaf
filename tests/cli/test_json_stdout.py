"""--format json, sarif, junit: one document per run on stdout, human text on stderr; the
document on stderr where stdout is the command's product (render --stdout, import, init,
dockerfile without a file, explain, schema, schemas export)."""

from __future__ import annotations

import json
import os
import re

import pytest
import yaml

from paddlegen import __version__
from paddlegen.cli import cli
from paddlegen.validate.kubeconform import find_kubeconform
from tests.builders import job_spec
from tests.cli.test_ci_formats import AFFINITY_TYPO, junit_suite, valid_sarif
from tests.helpers import LOSSY_JOB


@pytest.fixture()
def repo(tmp_path, runner):
    """jobs/{a,b}.yaml rendered into deploy/; then a.yaml changed (stale output), bad.yaml
    with a schema error, c.yaml whose affinity renders an invalid manifest."""
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    for name in ("a", "b"):
        (jobs / f"{name}.yaml").write_text(job_spec(name, "img:1"))
    assert runner.invoke(cli, ["render", str(jobs), "-o", str(tmp_path / "deploy")]).exit_code == 0
    (jobs / "a.yaml").write_text(job_spec("a", "img:2"))
    (jobs / "bad.yaml").write_text(job_spec("bad", "img:1") + "  wokrer: {}\n")
    (jobs / "c.yaml").write_text(job_spec("c", "img:1", AFFINITY_TYPO))
    return tmp_path


# The rule of a rendered manifest's finding: --validate's validator, kubeconform if it is here.
MANIFESTS = "kubeconform" if find_kubeconform() else "in-process"


def one_document(text: str) -> list[dict]:
    """The findings; fails unless ``text`` is exactly one JSON document."""
    found = json.loads(text)
    assert isinstance(found, list)
    return found


def rules_in(fmt: str, text: str, command: str, code: int) -> list[str]:
    """The rule of each finding; fails unless ``text`` is exactly one valid document of
    ``fmt`` (tests/cli/test_ci_formats.py) naming the ``command`` run, and whether it could
    run (exit ``code`` 2: it could not)."""
    if fmt == "json":
        return [d["rule"] for d in one_document(text)]
    if fmt == "sarif":
        (run,) = valid_sarif(text)["runs"]
        assert run["tool"]["driver"]["name"] == "paddlegen"
        assert run["tool"]["driver"]["version"] == __version__
        (invocation,) = run["invocations"]
        assert invocation["executionSuccessful"] is (code != 2)
        notes = invocation.get("toolExecutionNotifications", [])
        return [r["ruleId"] for r in run["results"]] + [n["descriptor"]["id"] for n in notes]
    suite = junit_suite(text)
    assert suite.get("name") == f"paddlegen {command}"
    assert int(suite.get("errors")) == (code == 2)
    lines = [
        line
        for element in suite.iter()
        if element.tag in ("failure", "error", "system-out")
        for line in (element.text or "").splitlines()
    ]
    return [re.search(r"\[([a-z-]+)\]$", line).group(1) for line in lines]


@pytest.mark.parametrize(
    ("args", "code", "rules"),
    [
        (["check", "jobs/a.yaml", "jobs/b.yaml", "-o", "deploy"], 1, ["stale"]),
        (["check", "jobs/b.yaml", "-o", "deploy"], 0, []),
        (["diff", "jobs/a.yaml", "jobs/b.yaml", "-o", "deploy"], 0, ["stale"]),
        (["render", "jobs/a.yaml", "-o", "deploy"], 0, []),
        (["render", "jobs/bad.yaml", "-o", "deploy"], 1, ["schema", "summary"]),
        (["render", "jobs/a.yaml", "--validate", "-o", "deploy"], 0, []),
        (["render", "missing.yaml", "-o", "deploy"], 2, ["input"]),
        (["validate", "jobs/a.yaml"], 0, []),
        (["validate", "jobs"], 1, ["schema", "in-process"]),
        (["render", "jobs/c.yaml", "--validate", "-o", "deploy"], 1, [MANIFESTS]),
        (["schemas", "export", "jobs/a.yaml"], 2, ["usage"]),  # a file where a folder goes
        (["validate", "jobs/bad.yaml"], 1, ["schema"]),
        (["validate", "missing.yaml"], 2, ["input"]),
        (["check", "jobs/bad.yaml", "-o", "deploy"], 1, ["schema", "summary"]),
        (
            ["import", "job.yaml", "-o", "imported.yaml"],
            1,
            ["import-note", "import-lossy", "limits-missing"],
        ),
        (
            ["import", "job.yaml", "-o", "imported/"],
            1,
            ["import-note", "import-lossy", "limits-missing"],
        ),
        (["argocd", "--repo-url", "https://git.example.com/r.git"], 0, []),
        (["check", "jobs/a.yaml", "-o", "deploy", "--workload", "nope"], 2, ["usage"]),
    ],
)
@pytest.mark.parametrize("fmt", ["json", "sarif", "junit"])
def test_json_is_one_document_on_stdout(runner, repo, monkeypatch, args, code, rules, fmt):
    monkeypatch.chdir(repo)
    (repo / "job.yaml").write_text(LOSSY_JOB)
    result = runner.invoke(cli, [*args, "--format", fmt])
    assert result.exit_code == code, result.output
    assert sorted(set(rules_in(fmt, result.stdout, args[0], code))) == sorted(rules)
    # no document among the human text
    assert not result.stderr.lstrip().startswith(("[", "{", "<"))


def test_the_diff_of_check_and_diff_goes_to_stderr_in_json(runner, repo, monkeypatch):
    monkeypatch.chdir(repo)
    for command in ("check", "diff"):
        result = runner.invoke(cli, [command, "jobs/a.yaml", "-o", "deploy", "--format", "json"])
        found = [(f["file"], f["rule"]) for f in one_document(result.stdout)]
        assert found == [
            ("deploy/a/batch_v1_job_a.yaml", "stale"),
            ("deploy/a/v1_configmap_a-run.yaml", "stale"),  # its digest
        ]
        assert "+        image: img:2" in result.stderr
    # text keeps the diff on stdout, for a pager or patch
    text = runner.invoke(cli, ["diff", "jobs/a.yaml", "-o", "deploy"])
    assert "+        image: img:2" in text.stdout


def test_render_with_stdout_keeps_stdout_for_the_manifests(runner, repo, monkeypatch):
    monkeypatch.chdir(repo)
    result = runner.invoke(cli, ["render", "jobs/a.yaml", "--stdout", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert [d["kind"] for d in yaml.safe_load_all(result.stdout)] == ["Job", "ConfigMap"]
    assert one_document(result.stderr) == []


def test_import_to_stdout_keeps_stdout_for_the_spec(runner, tmp_path):
    result = runner.invoke(cli, ["import", "-", "--format", "json", "--lossy"], input=LOSSY_JOB)
    assert result.exit_code == 0, result.output
    assert yaml.safe_load(result.stdout)["kind"] == "TrainingJob"
    rules = {d["rule"] for d in one_document(result.stderr)}
    assert rules == {"import-note", "import-lossy", "limits-missing"}


def test_an_error_after_findings_joins_the_one_document(runner, repo, monkeypatch):
    """render --validate: the warnings and the manifests' errors are one report."""
    monkeypatch.chdir(repo)
    (repo / "jobs" / "c.yaml").write_text(job_spec("c", "img", AFFINITY_TYPO))  # [image-tag]
    result = runner.invoke(
        cli, ["render", "jobs/c.yaml", "--validate", "-o", "deploy", "--format", "json"]
    )
    assert result.exit_code == 1, result.output
    rules = {d["rule"] for d in one_document(result.stdout)}
    assert "image-tag" in rules and len(rules) >= 2
    assert not os.path.exists("deploy/c")


def test_help_with_json_prints_the_help_alone(runner):
    result = runner.invoke(cli, ["check", "--format", "json", "--help"])
    assert result.exit_code == 0
    assert result.stdout.startswith("Usage: ") and "[]" not in result.stdout
