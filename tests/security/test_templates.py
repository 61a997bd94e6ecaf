"""User templates (--templates DIR) and built-in ones run sandboxed with StrictUndefined."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import Result
from jinja2 import StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from paddlegen.cli import cli
from paddlegen.render import engine as render
from tests.security.trees import GOOD_SPEC

TEMPLATE = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n  a: {body}\n"


def job_template(tmp_path, body: str) -> str:
    """A --templates folder whose `job` template is TEMPLATE around ``body``; its path."""
    folder = tmp_path / "templates" / "job"
    folder.mkdir(parents=True)
    (folder / "job.yaml.j2").write_text(TEMPLATE.format(body=body))
    return str(tmp_path / "templates")


def render_with(runner, tmp_path, body: str) -> tuple[Result, Path]:
    """`paddlegen render` of GOOD_SPEC into tmp_path/deploy with job_template's ``body``."""
    out = tmp_path / "deploy"
    templates = job_template(tmp_path, body)
    args = ["render", str(GOOD_SPEC), "-o", str(out), "--templates", templates]
    return runner.invoke(cli, args), out


def assert_template_error(result: Result, out: Path, expected: str) -> None:
    """Exit 2, no traceback, the last line names the job template's line 6 and ``expected``,
    and nothing is written."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.stderr
    last = result.stderr.splitlines()[-1]
    assert last.startswith("paddlegen: error: job/job.yaml.j2:6: template error: "), last
    assert expected in last, last
    assert not out.exists()


HOSTILE = {
    "mro-of-job": ("{{ job.__class__.__mro__ }}", "access to attribute '__class__'"),
    "class-of-str": ("{{ ''.__class__ }}", "access to attribute '__class__'"),
    "cycler-globals": ("{{ cycler.__init__.__globals__ }}", "access to attribute '__init__'"),
    "lipsum-globals": ("{{ lipsum.__globals__ }}", "access to attribute '__globals__'"),
    "self-init": ("{{ self.__init__ }}", "access to attribute '__init__'"),
    "job-dict": ("{{ job.__dict__ }}", "access to attribute '__dict__'"),
    "format-string": ("{{ '{0.__class__}'.format(job) }}", "access to attribute '__class__'"),
    "mutate-a-list": ("{% set x = [] %}{{ x.append(1) }}", "access to attribute 'append'"),
    "include-absolute": ("{% include '/etc/passwd' %}", "'/etc/passwd' not found"),
    "include-parent": ("{% include '../../x' %}", "../../x"),
    "import-parent": ("{% import '../secrets.j2' as s %}", "../secrets.j2"),
    "undefined-name": ("{{ nothere }}", "'nothere' is undefined"),
    "undefined-attribute": ("{{ job.nothere }}", "has no attribute 'nothere'"),
    "undefined-in-loop": ("{% for x in job.nothere %}{% endfor %}", "no attribute 'nothere'"),
    "huge-range": ("{{ range(10**9) | list }}", "Range too big"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_user_template_fails_with_template_and_line(runner, tmp_path, case):
    body, expected = HOSTILE[case]
    (tmp_path / "secrets.j2").write_text("{% set token = 'hunter2' %}")
    result, out = render_with(runner, tmp_path, body)
    assert_template_error(result, out, expected)
    assert "root:" not in result.output and "hunter2" not in result.output


def test_an_error_in_an_included_partial_names_the_partial(runner, tmp_path):
    folder = tmp_path / "templates"
    (folder / "job").mkdir(parents=True)
    (folder / "_partials").mkdir()
    (folder / "_partials" / "probe.yaml.j2").write_text("# one\n# two\n{{ job.missing }}\n")
    (folder / "job" / "job.yaml.j2").write_text(
        TEMPLATE.format(body="x") + "{% include '_partials/probe.yaml.j2' %}\n"
    )
    result = runner.invoke(cli, ["render", str(GOOD_SPEC), "--stdout", "--templates", str(folder)])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[-1].startswith(
        "paddlegen: error: _partials/probe.yaml.j2:3: template error:"
    )


def test_a_template_syntax_error_names_template_and_line(runner, tmp_path):
    result = runner.invoke(
        cli,
        ["render", str(GOOD_SPEC), "--stdout", "--templates", job_template(tmp_path, "{% if %}")],
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[-1].startswith(
        "paddlegen: error: job/job.yaml.j2:6: template syntax:"
    )


def test_a_user_template_cannot_inject_yaml_through_spec_values(runner, tmp_path):
    """Values reach templates as data: a name cannot smuggle keys (tojson quotes it)."""
    templates = job_template(tmp_path, "{{ job.roles.worker.image | tojson }}")
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        GOOD_SPEC.read_text().replace(
            "image: mypaddle/paddle:quickstart", 'image: "x:1\\n  evil: true"'
        )
    )
    result = runner.invoke(cli, ["render", str(spec), "--stdout", "--templates", templates])
    assert result.exit_code == 0, result.output
    assert "\nevil:" not in result.stdout and "\n  evil: true" not in result.stdout
    assert "a: |-\n    x:1\n      evil: true\n" in result.stdout  # one string, kept whole


@pytest.mark.parametrize("extra", [None, "user"])
def test_every_environment_is_the_immutable_sandbox_with_strict_undefined(tmp_path, extra):
    env = render.environment(str(tmp_path) if extra else None)
    assert isinstance(env, ImmutableSandboxedEnvironment)
    assert env.undefined is StrictUndefined
    assert env.sandboxed


def test_built_in_templates_render_through_the_sandbox(monkeypatch):
    seen = []
    real = render.environment

    def spy(extra_dir=None):
        env = real(extra_dir)
        seen.append(env)
        return env

    monkeypatch.setattr(render, "environment", spy)
    from paddlegen.pipeline import build

    build.render_specs([GOOD_SPEC])
    assert seen and all(isinstance(env, ImmutableSandboxedEnvironment) for env in seen)


def test_built_in_templates_have_no_unsafe_constructs():
    """Nothing in the shipped templates reaches for dunders or files."""
    root = Path(render.templates_dir())
    for path in root.rglob("*.j2"):
        text = path.read_text(encoding="utf-8")
        assert "__" not in text, path
        for include in ("include '/", "include '..", "import '/", "import '.."):
            assert include not in text, path
