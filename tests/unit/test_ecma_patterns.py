"""Schema patterns read as ECMA-262 reads them (spec/ecma.py), and values that mean one thing."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator

import pytest

from paddlegen.resources import spec_schema_path
from paddlegen.spec.ecma import python_pattern
from paddlegen.spec.loader import parse_spec
from paddlegen.spec.schema import schema_diagnostics

# What tells Python's re and ECMA-262 apart: line breaks anywhere (a final one most of all),
# other line terminators, the white space only one of them counts, non-ASCII digits and letters.
TRICKY = [
    "",
    "a",
    "a\n",
    "\n",
    "a\nb",
    "a\r",
    "a\u2028",
    "a\u2029b",
    "x\n/../../etc",
    "a b",
    "a\x1cb",
    "a\x85b",
    "a\ufeffb",
    "\u0661\u0662",
    "\u00e9t\u00e9",
    "web-1",
    "web-1\n",
    "example.com/team",
    "example.com/team\n",
    "1Gi",
    "1Gi\n",
    "10.0.0.1:6768",
    "10.0.0.1:6768\n",
    "train/logs",
    "$.spec.image",
    "$.spec.image\n",
    "pkg=1.0\n",
    "us-east-1",
]


def _patterns(node: object) -> Iterator[str]:
    """Every pattern in the schema ``node``."""
    if isinstance(node, dict):
        if isinstance(node.get("pattern"), str):
            yield node["pattern"]
        for value in node.values():
            yield from _patterns(value)
    elif isinstance(node, list):
        for value in node:
            yield from _patterns(value)


# The spec's and the KueueSetup's, each schema's patterns
SCHEMAS = {
    path.name: set(_patterns(json.loads(path.read_text(encoding="utf-8"))))
    for path in sorted(spec_schema_path().parent.glob("*.schema.json"))
}
PATTERNS = sorted(set().union(*SCHEMAS.values()))


@pytest.mark.parametrize(
    ("pattern", "value", "matches"),
    [
        ("^a$", "a\n", False),  # Python's `$` alone would match before the final line break
        ("^a$", "a", True),
        ("^a.b$", "a\rb", False),  # `.` stops at every line terminator
        ("^a.b$", "a\u2028b", False),
        ("^a.b$", "a-b", True),
        ("^\\d+$", "\u0661", False),  # ASCII digits only
        ("^\\w+$", "\u00e9", False),
        ("^[^\\s]+$", "a\x1cb", True),  # U+001C is no ECMA white space
        ("^[^\\s]+$", "a\ufeffb", False),  # U+FEFF is
        ("^\\S+$", "a\ufeffb", False),
        ("^\\$x$", "$x", True),  # an escaped `$` stays a dollar
        ("^[$]$", "$", True),  # and so does one in a class
        ("^(?!\\.\\.)[.a]+$", "..a", False),
        ("^(?:ab)+$", "abab", True),
    ],
)
def test_patterns_match_as_ecma_262_matches(pattern: str, value: str, matches: bool) -> None:
    assert bool(re.search(python_pattern(pattern), value)) is matches


@pytest.mark.parametrize("pattern", ["a\\b", "\\Ax", "(?P<n>a)", "(?<n>a)", "[]a]", "[^]", "a\\"])
def test_what_the_two_could_read_differently_is_refused(pattern: str) -> None:
    with pytest.raises(ValueError, match="pattern"):
        python_pattern(pattern)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_every_schema_pattern_compiles(pattern: str) -> None:
    re.compile(python_pattern(pattern))


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node, an ECMA-262 engine")
def test_every_schema_pattern_agrees_with_an_ecma_262_engine() -> None:
    script = (
        "const [ps, vs] = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "console.log(JSON.stringify(ps.map(p => vs.map(v => new RegExp(p).test(v)))));"
    )
    out = subprocess.run(
        ["node", "-e", script],
        input=json.dumps([PATTERNS, TRICKY]),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    ecma = json.loads(out.stdout)
    for pattern, verdicts in zip(PATTERNS, ecma, strict=True):
        python = [bool(re.search(python_pattern(pattern), v)) for v in TRICKY]
        assert python == verdicts, pattern


SPEC = """\
apiVersion: paddlegen/v1
kind: TrainingJob
metadata:
  name: demo
spec:
  image: registry.example.com/paddle:2.6
  resources: {limits: {memory: 2Gi}}
"""


def _errors(text: str) -> list[str]:
    return [f"{d.line}:{d.col} {d.path} {d.message}" for d in schema_diagnostics(parse_spec(text))]


@pytest.mark.parametrize(
    ("old", "new", "path"),
    [
        ("name: demo", 'name: "demo\\n"', "$.metadata.name"),
        ("name: demo", 'name: demo\n  namespace: "team\\n"', "$.metadata.namespace"),
        ("name: demo", 'name: demo\n  labels: {"team\\n": a}', "$.metadata.labels.team\n"),
        ("name: demo", 'name: demo\n  labels: {team: "a\\n"}', "$.metadata.labels.team"),
        ("memory: 2Gi", 'memory: "2Gi\\n"', "$.spec.resources.limits.memory"),
        ("2Gi}}", '2Gi}}\n  workingDir: "/work\\n"', "$.spec.workingDir"),
    ],
)
def test_a_trailing_line_break_is_no_match(old: str, new: str, path: str) -> None:
    found = _errors(SPEC.replace(old, new))
    assert [e for e in found if f" {path} " in e], found


@pytest.mark.parametrize(
    ("add", "where"),
    [
        ("  worker: {replicas: 2.0}\n", "8:22 $.spec.worker.replicas 2.0"),
        ("  run: {backoffLimit: 3.0}\n", "8:23 $.spec.run.backoffLimit 3.0"),
        ("  gpus: 1.0\n", "8:9 $.spec.gpus 1.0"),
    ],
)
def test_an_integer_field_takes_integers_only(add: str, where: str) -> None:
    assert f"{where} is not of type 'integer'" in _errors(SPEC + add)


def test_integers_written_as_integers_still_pass() -> None:
    assert _errors(SPEC + "  worker: {replicas: 2}\n  run: {backoffLimit: 3}\n") == []


def test_every_pattern_is_anchored_at_both_ends() -> None:
    """A pattern matches the whole value only when anchored: `^/` alone let `"/data\\n"` in."""
    assert sorted(SCHEMAS) == ["kueue.v1.schema.json", "trainingjob.v1.schema.json"]
    assert all(SCHEMAS.values())
    assert [p for p in PATTERNS if not (p.startswith("^") and p.endswith("$"))] == []
