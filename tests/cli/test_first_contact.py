"""Issue #25, first contact part two: what a new user met using only the README, --help,
explain, init and the schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from paddlegen.authoring.init import schema_reference
from paddlegen.cli import cli, common
from paddlegen.resources import data_root, kueue_schema_path, spec_schema_path
from paddlegen.version import version_text
from tests.cli.test_not_a_spec import JOB

MODELINE = "# yaml-language-server: $schema="
ROOT = Path(__file__).resolve().parents[2]


def _modeline_target(spec: Path) -> Path:
    first = spec.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith(MODELINE), first
    reference = first.removeprefix(MODELINE)
    assert "://" not in reference  # a file on this machine, not a URL that serves nothing
    return spec.parent / reference  # an absolute reference replaces spec.parent


# 1. The modeline points at the schema file the spec's repository holds, relative to the spec.


@pytest.fixture
def repository(runner, tmp_path, monkeypatch) -> Path:
    """A git repository (its .git folder is all that marks one) holding exported schemas."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "repo")
    assert runner.invoke(cli, ["schemas", "export", "--spec-only", ".schemas"]).exit_code == 0
    return tmp_path / "repo"


def _init(runner, spec: Path, *more: str):
    return runner.invoke(cli, ["init", str(spec), "--no-input", "--image", "x:1", *more])


def _import(runner, spec: Path, *more: str):
    spec.parent.mkdir(parents=True, exist_ok=True)
    job = spec.parent / "job.yaml"
    job.write_text(JOB)
    return runner.invoke(cli, ["import", str(job), "-o", str(spec), "--lossy", *more])


@pytest.mark.parametrize("command", [_init, _import])
def test_the_modeline_is_relative_to_the_repositorys_schema_file(runner, repository, command):
    spec = repository / "jobs" / "team" / "demo.yaml"
    result = command(runner, spec)
    assert result.exit_code == 0, result.output
    first = spec.read_text(encoding="utf-8").splitlines()[0]
    assert first == MODELINE + "../../.schemas/trainingjob.v1.schema.json"
    assert _modeline_target(spec).resolve() == (
        repository / ".schemas" / "trainingjob.v1.schema.json"
    )
    # the same reference in a clone anywhere else: nothing of this machine's paths in it
    assert str(repository) not in first
    assert "site-packages" not in first and str(data_root()) not in first


def test_the_nearest_schema_file_wins(runner, repository):
    (repository / "jobs").mkdir()
    (repository / "jobs" / "trainingjob.v1.schema.json").write_text("{}")
    spec = repository / "jobs" / "demo.yaml"
    assert _init(runner, spec).exit_code == 0
    assert spec.read_text().splitlines()[0] == MODELINE + "trainingjob.v1.schema.json"


@pytest.mark.parametrize("command", [_init, _import])
def test_without_a_schema_file_no_modeline_and_a_note_how_to_get_one(runner, tmp_path, command):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    spec = tmp_path / "repo" / "jobs" / "demo.yaml"
    result = command(runner, spec)
    assert result.exit_code == 0, result.output
    assert not spec.read_text().startswith("# yaml-language-server")
    assert f"no yaml-language-server modeline in {spec}" in result.stderr
    assert (
        "`paddlegen schemas export --spec-only schemas` at the repository's root" in result.stderr
    )


def test_outside_a_repository_no_schema_is_searched(runner, tmp_path):
    spec = tmp_path / "demo.yaml"
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "trainingjob.v1.schema.json").write_text("{}")
    result = _init(runner, spec)
    assert not spec.read_text().startswith("# yaml-language-server")
    assert "in no git repository" in result.stderr


@pytest.mark.parametrize("command", [_init, _import])
def test_schema_names_the_reference_as_written(runner, tmp_path, command):
    spec = tmp_path / "jobs" / "demo.yaml"
    result = command(runner, spec, "--schema", "../schemas/trainingjob.v1.schema.json")
    assert result.exit_code == 0, result.output
    assert spec.read_text().splitlines()[0] == MODELINE + "../schemas/trainingjob.v1.schema.json"
    assert "modeline" not in result.stderr


def test_the_reference_is_relative_inside_a_checkout_like_the_examples():
    # The examples' own modeline is what init writes for a spec in examples/.
    example = data_root() / "examples" / "quickstart.yaml"
    if not (data_root() / ".git").exists():
        pytest.skip("not a git checkout")
    assert schema_reference(str(example)) == "../schemas/trainingjob.v1.schema.json"
    assert schema_reference(str(example)) == schema_reference(str(example))  # deterministic


EXAMPLES = sorted(
    p for p in (ROOT / "examples").rglob("*.yaml") if p.read_text("utf-8").startswith(MODELINE)
)


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.name)
def test_every_example_modeline_reaches_the_schema(spec):
    # its own for `paddlegen kueue`'s input, a KueueSetup
    setup = "\nkind: KueueSetup\n" in spec.read_text("utf-8")
    schema = kueue_schema_path() if setup else spec_schema_path()
    assert _modeline_target(spec).resolve() == (ROOT / "schemas" / schema.name)


def test_stdout_and_other_names_that_are_no_file_get_no_modeline(runner, tmp_path):
    assert schema_reference("-") is None
    assert schema_reference(None) is None
    assert schema_reference("<stdout>") is None
    job = tmp_path / "job.yaml"
    job.write_text(JOB)
    result = runner.invoke(cli, ["import", str(job), "--lossy"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("# imported by `paddlegen import`")


# 2. A number or boolean where a string belongs: shown as written, with how to quote it.

TYPED = (
    "apiVersion: paddlegen/v1\nkind: TrainingJob\nmetadata: {name: demo, labels: {v: 1.10}}\n"
    "spec:\n  image: x:1\n  resources: {limits: {memory: 1Gi}}\n  env:\n"
    "  - {name: VERSION, value: 1.10}\n  - {name: FLAG, value: on}\n"
    "  - {name: API_KEY, value: 12345678}\n  workload: paddlejob\n"
)


def test_env_and_label_values_yaml_typed_show_as_written_with_a_quoting_hint(runner, tmp_path):
    spec = tmp_path / "demo.yaml"
    spec.write_text(TYPED)
    result = runner.invoke(cli, ["validate", "--no-manifests", str(spec)])
    assert result.exit_code == 1
    number = 'a number in YAML, not a string (quote it: "1.10"; unquoted, YAML reads it as 1.1)'
    assert result.stderr.splitlines()[:3] == [
        f"{spec}:3:36: error: $.metadata.labels.v: 1.10 is {number} [schema]",
        f"{spec}:8:28: error: $.spec.env[0].value: 1.10 is {number} [schema]",
        f"{spec}:9:25: error: $.spec.env[1].value: on is a boolean in YAML, not a string "
        '(quote it: "on"; unquoted, YAML reads it as true) [schema]',
    ]
    assert "12345678" not in result.stderr  # a credential's value is still never echoed
    assert "True" not in result.stderr and " 1.1 is" not in result.stderr


def test_an_overlay_value_shows_as_the_overlay_wrote_it(runner, tmp_path):
    spec = tmp_path / "demo.yaml"
    spec.write_text(
        "apiVersion: paddlegen/v1\nkind: TrainingJob\nmetadata: {name: demo}\nspec:\n"
        "  workload: paddlejob\n"
        "  image: x:1\n  resources: {limits: {memory: 1Gi}}\n"
        "  env: [{name: A, value: '1'}]\noverlays:\n  prod:\n    spec:\n"
        "      env: [{name: A, value: 2.50}]\n"
    )
    result = runner.invoke(cli, ["validate", "--no-manifests", str(spec)])
    assert result.exit_code == 1
    assert '2.50 is a number in YAML, not a string (quote it: "2.50"' in result.stderr


# 3. CLI habits: colour at a terminal, completion scripts, -V, end of input at a prompt.

WARNED = (
    "apiVersion: paddlegen/v1\nkind: TrainingJob\nmetadata: {name: demo}\nspec:\n"
    "  image: x\n  workload: paddlejob\n"
)


def _validate_at_terminal(
    runner, tmp_path, monkeypatch, terminal: bool, no_color: str | None, *args: str
) -> str:
    """What `validate` of a spec with warnings prints (stdout, then stderr), at a terminal or
    not, with NO_COLOR set to ``no_color`` (None: unset)."""
    monkeypatch.setattr(common, "_stderr_is_terminal", lambda: terminal)
    if no_color is None:
        monkeypatch.delenv("NO_COLOR", raising=False)
    else:
        monkeypatch.setenv("NO_COLOR", no_color)
    spec = tmp_path / "demo.yaml"
    spec.write_text(WARNED)
    result = runner.invoke(cli, ["validate", "--no-manifests", *args, str(spec)])
    return result.stdout + result.stderr


def test_severities_are_coloured_at_a_terminal(runner, tmp_path, monkeypatch):
    output = _validate_at_terminal(runner, tmp_path, monkeypatch, True, None)
    assert "\x1b[33mwarning\x1b[0m: $.spec.image:" in output  # image-tag, limits-missing
    assert output.count("\x1b[") == 2 * output.count("warning")


@pytest.mark.parametrize(("terminal", "no_color"), [(True, "1"), (False, None), (False, "")])
def test_no_colour_with_no_color_or_off_a_terminal(
    runner, tmp_path, monkeypatch, terminal, no_color
):
    output = _validate_at_terminal(runner, tmp_path, monkeypatch, terminal, no_color)
    assert "warning: $.spec.image:" in output
    assert "\x1b" not in output


@pytest.mark.parametrize("fmt", ["json", "github"])
def test_colour_never_reaches_json_or_github(runner, tmp_path, monkeypatch, fmt):
    output = _validate_at_terminal(runner, tmp_path, monkeypatch, True, None, "--format", fmt)
    assert "image" in output and "\x1b" not in output


def test_a_spec_cannot_colour_the_terminal_through_a_coloured_line():
    from paddlegen.errors import Diagnostic
    from paddlegen.report import text

    line = text([Diagnostic("a\x1b[31m.yaml", 1, 1, "error", "$.x", "m", "r")], colour=True)
    assert line.startswith("a\\x1b[31m.yaml:1:1: \x1b[1;31merror\x1b[0m: $.x: m [r]")


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_the_shell_script(runner, shell):
    result = runner.invoke(cli, ["completion", shell])
    assert result.exit_code == 0, result.output
    assert f"_PADDLEGEN_COMPLETE={shell}_complete" in result.stdout
    assert result.stderr == ""


def test_completion_refuses_another_shell(runner):
    result = runner.invoke(cli, ["completion", "tcsh"])
    assert result.exit_code == 2
    assert "'tcsh' is not one of 'bash', 'zsh', 'fish'" in result.stderr


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_and_dash_v_print_the_version(runner, flag):
    result = runner.invoke(cli, [flag])
    assert result.exit_code == 0
    assert result.stdout == version_text()


@pytest.mark.parametrize("answers", ["", "paddlejob\n", "paddlejob\ndemo\n"])
def test_init_at_end_of_input_exits_2_with_one_line(runner, tmp_path, answers):
    spec = tmp_path / "demo.yaml"
    result = runner.invoke(cli, ["init", str(spec)], input=answers)
    assert result.exit_code == 2
    assert "Traceback" not in result.output and "Aborted" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("paddlegen: error: init: no answer (end of input); nothing written")
    assert not spec.exists()


def test_init_at_end_of_input_reports_json(runner, tmp_path):
    result = runner.invoke(cli, ["init", str(tmp_path / "d.yaml"), "--format", "json"], input="")
    assert result.exit_code == 2
    assert '"rule": "usage"' in result.stdout + result.stderr
