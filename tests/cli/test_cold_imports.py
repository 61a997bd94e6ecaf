"""The modules a cold `render --stdout` (an Argo CD plugin's, per refresh) or `--version`
imports: those it needs and nothing heavier (pinned, not timed: see benchmarks/bench.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from paddlegen.version import version_text

ROOT = Path(__file__).resolve().parents[2]
# jsonschema and what it brings (~40% of the cost of importing the four libraries): only an
# invalid spec needs it, for its messages; difflib and traceback only a mistake or a bug.
NOT_ON_THE_HAPPY_PATH = (
    "jsonschema",
    "referencing",
    "jsonschema_specifications",
    "rpds",
    "attrs",
    "difflib",
    "traceback",
)


def imported_by(*argv: str) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """The top-level modules (and paddlegen's own, in full) that ``paddlegen argv`` has
    imported when it exits, in a new interpreter."""
    code = (
        "import atexit, json, sys\n"
        "said = lambda: sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)))\n"
        "atexit.register(said)\n"
        f"sys.argv = ['paddlegen', *{list(argv)!r}]\n"
        "from paddlegen.__main__ import main\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    modules = json.loads(done.stderr.rsplit("MODULES ", 1)[1])
    return {m.split(".")[0] for m in modules} | set(modules), done


@pytest.mark.parametrize("spec", ["examples/quickstart.yaml", "examples/paddlejob-volcano.yaml"])
def test_rendering_a_valid_spec_never_imports_jsonschema(spec):
    modules, done = imported_by("render", "--stdout", spec)
    assert done.returncode == 0, done.stderr
    assert "kind:" in done.stdout
    assert "paddlegen.spec.schema_compiled" in modules  # the compiled check said "valid"
    assert sorted(modules & set(NOT_ON_THE_HAPPY_PATH)) == []


def test_printing_a_render_loads_nothing_that_writes_or_reports():
    """--stdout writes no folder and, with nothing to say, reports nothing: the writer, the
    drift, the reporters and subprocess (which the folder's Component checks run) stay out."""
    modules, done = imported_by("render", "--stdout", "examples/quickstart.yaml")
    assert done.returncode == 0, done.stderr
    writing = {
        "paddlegen.pipeline.write",
        "paddlegen.output.writer",
        "paddlegen.output.drift",
        "paddlegen.output.owner",
        "paddlegen.report",
        "paddlegen.validate.locations",
        "subprocess",
    }
    assert sorted(modules & writing) == []


def test_rendering_loads_no_workloads_importers():
    """A workload's importers (Workload.imports) load when `paddlegen import` asks for them."""
    modules, done = imported_by("render", "--stdout", "examples/collective-resnet.yaml")
    assert done.returncode == 0, done.stderr
    assert "paddlegen.workloads.collective_job" in modules
    readers = {m for m in modules if m.startswith("paddlegen.workloads.")}
    assert sorted(m for m in readers if "import" in m or m.endswith(".convert")) == []


@pytest.mark.parametrize(
    ("spec", "folder"),
    [("examples/quickstart.yaml", "job"), ("examples/collective-resnet.yaml", "collective_job")],
)
def test_rendering_loads_its_workloads_folder_alone(spec, folder):
    """Only the spec's workload's entry and rules load (WORKLOADS loads an entry when asked
    for it), and not the rules' registry (paddlegen/rules/registry.py), which loads them all."""
    modules, done = imported_by("render", "--stdout", spec)
    assert done.returncode == 0, done.stderr
    packages = {m.split(".")[2] for m in modules if m.startswith("paddlegen.workloads.")}
    assert packages - {"base", "objects", "shared"} == {folder}
    assert f"paddlegen.workloads.{folder}.rules" in modules
    assert "paddlegen.rules.registry" not in modules


def test_an_invalid_spec_still_gets_jsonschemas_findings(tmp_path):
    spec = tmp_path / "bad.yaml"
    text = (ROOT / "examples" / "quickstart.yaml").read_text(encoding="utf-8")
    spec.write_text(text.replace("kind: TrainingJob", "kind: TrainingJob\nwokrer: 1"), "utf-8")
    modules, done = imported_by("render", "--stdout", str(spec))
    assert done.returncode == 1
    assert "jsonschema" in modules
    assert "$.wokrer: unknown field" in done.stderr


def test_version_imports_neither_typing_nor_the_cli():
    """`paddlegen --version` is answered before the CLI loads (it is asked for often), with
    what the CLI's --version prints (tests/cli/test_first_contact.py)."""
    modules, done = imported_by("--version")
    assert done.stdout == version_text()
    found = modules & {"typing", "click", "yaml", "jinja2", "jsonschema", "dataclasses"}
    assert sorted(found) == []


def test_checking_an_unchanged_spec_imports_no_rule(tmp_path):
    """The stamp says the output is current: nothing is rendered or checked again (issue 25:
    the rules, paddlegen/rules, were about 3 ms of a 100 ms `check`). `--ignore` still
    imports it, to refuse an unknown rule."""
    out = tmp_path / "deploy"
    rendered = subprocess.run(
        [sys.executable, "-m", "paddlegen", "render", "examples/quickstart.yaml", "-o", str(out)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert rendered.returncode == 0, rendered.stderr
    modules, done = imported_by("check", "examples/quickstart.yaml", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "up to date" in done.stderr
    assert sorted(modules & {"paddlegen.rules", "paddlegen.rules.ignores", "jinja2"}) == []
    modules, done = imported_by("check", "examples/quickstart.yaml", "-o", str(out), "--ignore",
                                "no-such-rule")  # fmt: skip
    assert done.returncode == 2 and "unknown rule 'no-such-rule'" in done.stderr
    assert "paddlegen.rules" in modules
