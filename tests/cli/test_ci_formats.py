"""--format sarif (GitHub code scanning) and --format junit (GitLab's and Jenkins' test
reports): valid documents, one per run, that carry each finding where CI shows it."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from paddlegen.cli import cli
from paddlegen.rules.images import IMAGE_TAG
from tests.builders import job_spec
from tests.conftest import DATA

SARIF_SCHEMA = DATA / "sarif" / "sarif-schema-2.1.0.json"
OFFICIAL = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
AFFINITY_TYPO = (
    "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution:"
    " {nodeSelectorTerm: []}}}\n"
)


@pytest.fixture()
def repo(runner, tmp_path, monkeypatch) -> Path:
    """jobs/: a.yaml valid, w.yaml with a warning, bad.yaml with two schema errors (9:3 and
    10:8), c.yaml whose affinity renders an invalid manifest; a.yaml and w.yaml rendered into
    deploy/, then a.yaml changed (stale output). The working directory is ``tmp_path``."""
    monkeypatch.chdir(tmp_path)
    jobs = Path("jobs")
    jobs.mkdir()
    (jobs / "a.yaml").write_text(job_spec("a", "img:1"))
    (jobs / "w.yaml").write_text(job_spec("w", "img:latest"))
    args = ["render", "jobs/a.yaml", "jobs/w.yaml", "-o", "deploy"]
    assert runner.invoke(cli, args).exit_code == 0
    (jobs / "a.yaml").write_text(job_spec("a", "img:2"))
    (jobs / "bad.yaml").write_text(job_spec("bad", "img:1", "  wokrer: {}\n  shm: 2GB\n"))
    (jobs / "c.yaml").write_text(job_spec("c", "img:1", AFFINITY_TYPO))
    return tmp_path


def sarif_validator() -> jsonschema.Draft4Validator:
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(
        schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER
    )


def valid_sarif(text: str) -> dict:
    """The log; fails unless ``text`` is exactly one SARIF 2.1.0 document, valid by the
    official schema."""
    log = json.loads(text)
    errors = sorted(sarif_validator().iter_errors(log), key=str)
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    return log


def test_the_vendored_schema_is_the_official_one():
    """tests/data/sarif/SOURCES.md says where it comes from; the bytes are those."""
    digest = hashlib.sha256(SARIF_SCHEMA.read_bytes()).hexdigest()
    sources = (SARIF_SCHEMA.parent / "SOURCES.md").read_text(encoding="utf-8")
    assert f"| `sarif-schema-2.1.0.json` | `{digest}` | {OFFICIAL} |" in sources
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    assert schema["id"] == OFFICIAL
    sarif_validator()


def test_sarif_places_each_finding_with_its_rule_and_level(runner, repo):
    result = runner.invoke(cli, ["validate", "jobs", "--format", "sarif"])
    run = valid_sarif(result.stdout)["runs"][0]
    found = [
        (
            r["ruleId"],
            r["level"],
            r["locations"][0]["physicalLocation"]["artifactLocation"],
            r["locations"][0]["physicalLocation"]["region"],
        )
        for r in run["results"]
    ]
    at = {"uriBaseId": "%SRCROOT%"}
    assert found == [
        ("schema", "error", {"uri": "jobs/bad.yaml", **at}, {"startLine": 9, "startColumn": 3}),
        ("schema", "error", {"uri": "jobs/bad.yaml", **at}, {"startLine": 10, "startColumn": 8}),
        ("image-tag", "warning", {"uri": "jobs/w.yaml", **at}, {"startLine": 7, "startColumn": 10}),
        ("in-process", "error", {"uri": "jobs/c.yaml", **at}, {"startLine": 9, "startColumn": 96}),
        ("in-process", "error", {"uri": "jobs/c.yaml", **at}, {"startLine": 9, "startColumn": 77}),
    ]
    # A manifest's finding sits at the spec line it came from, naming the manifest.
    assert run["results"][4]["message"]["text"].endswith(
        "nodeSelectorTerms: required field is missing (in c/batch_v1_job_c.yaml)"
    )
    assert run["results"][0]["message"]["text"] == (
        "$.spec.wokrer: unknown field (did you mean 'worker'?)"
    )
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["image-tag", "in-process", "schema"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    assert run["invocations"] == [{"executionSuccessful": True}]


def test_sarif_rules_carry_the_readme_help_text(runner, repo):
    result = runner.invoke(cli, ["validate", "jobs/w.yaml", "--format", "sarif"])
    (rule,) = valid_sarif(result.stdout)["runs"][0]["tool"]["driver"]["rules"]
    assert rule["id"] == "image-tag"
    assert rule["help"]["markdown"] == IMAGE_TAG.summary
    assert rule["help"]["text"] == "images are pinned to a tag (not latest) or a digest"
    assert rule["shortDescription"]["text"] == "images are pinned to a tag"
    assert rule["fullDescription"] == {"text": rule["help"]["text"]}


def test_sarif_stale_files_and_the_summary(runner, repo):
    args = ["check", "jobs/a.yaml", "jobs/w.yaml", "-o", "deploy", "--format", "sarif"]
    result = runner.invoke(cli, args)
    run = valid_sarif(result.stdout)["runs"][0]
    stale = [r for r in run["results"] if r["ruleId"] == "stale"]
    assert [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in stale] == [
        "deploy/a/batch_v1_job_a.yaml",
        "deploy/a/v1_configmap_a-run.yaml",
    ]
    assert stale[0]["locations"][0]["physicalLocation"]["region"] == {"startLine": 1}
    assert stale[0]["message"]["text"] == (
        "differs from what the specs render to (from jobs/a.yaml)"
    )
    bad = runner.invoke(cli, ["render", "jobs", "-o", "deploy", "--format", "sarif"])
    (summary,) = valid_sarif(bad.stdout)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert summary == {
        "level": "note",
        "message": {"text": "nothing written: 1 of 4 specs has errors"},
        "descriptor": {"id": "summary"},
    }


def test_sarif_uris_are_percent_encoded_and_absolute_outside_the_working_directory(
    runner, repo, tmp_path_factory
):
    odd = Path("jobs/a b#1%.yaml")
    odd.write_text(job_spec("odd", "img:latest"))
    outside = tmp_path_factory.mktemp("elsewhere") / "x.yaml"
    outside.write_text(job_spec("x", "img:latest"))
    result = runner.invoke(cli, ["validate", str(odd), str(outside), "--format", "sarif"])
    run = valid_sarif(result.stdout)["runs"][0]
    locations = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]]
    assert locations == [
        {"uri": "jobs/a%20b%231%25.yaml", "uriBaseId": "%SRCROOT%"},
        {"uri": outside.as_uri()},
    ]


def test_sarif_is_the_same_bytes_with_any_hash_seed(repo):
    outputs = {
        subprocess.run(
            [sys.executable, "-m", "paddlegen", "validate", "jobs", "--format", "sarif"],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    valid_sarif(outputs.pop())


# junit-10.xsd of Jenkins' xunit plugin (src/main/resources/org/jenkinsci/plugins/xunit/types/
# model/xsd/junit-10.xsd): the attributes each element may have, and those it must.
JUNIT_ATTRIBUTES = {
    "testsuites": ({"name", "time", "tests", "failures", "errors"}, set()),
    "testsuite": (
        {"name", "tests", "failures", "errors", "group", "time", "skipped", "timestamp"}
        | {"hostname", "id", "package", "file", "log", "url"},
        {"name", "tests", "failures", "errors"},
    ),
    "testcase": ({"name", "time", "classname", "group"}, {"name"}),
    "failure": ({"type", "message"}, set()),
    "error": ({"type", "message"}, set()),
    "system-out": (set(), set()),
}
JUNIT_CHILDREN = {
    "testsuites": {"testsuite"},
    "testsuite": {"testsuite", "properties", "testcase", "system-out", "system-err"},
    "testcase": {"skipped", "error", "failure", "system-out", "system-err"},
    "failure": set(),
    "error": set(),
    "system-out": set(),
}


def junit_suite(text: str) -> ET.Element:
    """The one test suite; fails unless ``text`` is one JUnit XML document in ASCII whose
    elements and attributes are those junit-10.xsd allows."""
    assert text.isascii()
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    root = ET.fromstring(text)
    for element in root.iter():
        allowed, required = JUNIT_ATTRIBUTES[element.tag]
        assert required <= set(element.attrib) <= allowed, (element.tag, element.attrib)
        assert {child.tag for child in element} <= JUNIT_CHILDREN[element.tag], element.tag
    assert root.tag == "testsuites"
    (suite,) = root
    assert {k: root.get(k) for k in ("tests", "failures", "errors")} == {
        k: suite.get(k) for k in ("tests", "failures", "errors")
    }
    cases = suite.findall("testcase")
    assert int(suite.get("tests")) == len(cases)
    assert int(suite.get("failures")) == sum(c.find("failure") is not None for c in cases)
    assert int(suite.get("errors")) == sum(c.find("error") is not None for c in cases)
    return suite


def test_junit_has_a_test_case_per_spec_and_a_failure_per_error(runner, repo):
    result = runner.invoke(cli, ["validate", "jobs", "--format", "junit"])
    assert result.exit_code == 1
    suite = junit_suite(result.stdout)
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert sorted(cases) == ["jobs/a.yaml", "jobs/bad.yaml", "jobs/c.yaml", "jobs/w.yaml"]
    assert {c.get("classname") for c in cases.values()} == {"paddlegen.validate"}
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "2", "0")
    assert list(cases["jobs/a.yaml"]) == []  # passed
    failures = cases["jobs/bad.yaml"].findall("failure")
    assert [f.text for f in failures] == [
        "jobs/bad.yaml:9:3: error: $.spec.wokrer: unknown field (did you mean 'worker'?) [schema]",
        "jobs/bad.yaml:10:8: error: $.spec.shm: '2GB' is not a Kubernetes quantity (a "
        "non-negative number with an optional unit, examples: 500m, 2, 4Gi) [schema]",
    ]
    assert [f.get("message") for f in failures] == [f.text for f in failures]
    assert all(f.get("type") is None for f in failures)  # GitLab casts by `type` (docstring)
    # The manifest's findings count for the spec they came from.
    assert len(cases["jobs/c.yaml"].findall("failure")) == 2
    # A warning fails nothing: it is the test case's output.
    warned = cases["jobs/w.yaml"]
    assert warned.find("failure") is None
    assert warned.find("system-out").text.startswith("jobs/w.yaml:7:10: warning: $.spec.image:")


def test_junit_counts_stale_output_for_its_spec_and_exit_2_as_an_error(runner, repo):
    check = runner.invoke(
        cli, ["check", "jobs/a.yaml", "jobs/w.yaml", "-o", "deploy", "--format", "junit"]
    )
    suite = junit_suite(check.stdout)
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert sorted(cases) == ["jobs/a.yaml", "jobs/w.yaml"]
    assert [f.get("message").split(": ", 1)[0] for f in cases["jobs/a.yaml"]] == [
        "deploy/a/batch_v1_job_a.yaml",
        "deploy/a/v1_configmap_a-run.yaml",
    ]
    missing = runner.invoke(cli, ["validate", "missing.yaml", "--format", "junit"])
    assert missing.exit_code == 2
    (case,) = junit_suite(missing.stdout).findall("testcase")
    assert case.get("name") == "paddlegen validate"
    assert case.find("error").text == "error: missing.yaml: no such file [input]"


def test_junit_puts_the_summary_in_the_suite_output(runner, repo):
    result = runner.invoke(cli, ["render", "jobs", "-o", "deploy", "--format", "junit"])
    suite = junit_suite(result.stdout)
    assert suite.find("system-out").text == (
        "info: nothing written: 1 of 4 specs has errors [summary]"
    )
    assert suite.get("failures") == "1"


def test_junit_is_ascii_xml_whatever_a_file_name_holds(runner, repo):
    hostile = Path('jobs/\u955c\u50cf-\u202e\ufffe<&>".yaml')
    hostile.write_text(job_spec("h", "img:1", "  wokrer: {}\n"))
    result = runner.invoke(cli, ["validate", str(hostile), "--format", "junit"])
    (case,) = junit_suite(result.stdout).findall("testcase")
    assert case.get("name") == 'jobs/\u955c\u50cf-\\u202e\\ufffe<&>".yaml'
    assert re.search(r"\[schema\]$", case.find("failure").text)
