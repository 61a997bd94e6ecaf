"""User templates cannot hang a render or exhaust memory (paddlegen/render/sandbox.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from jinja2 import pass_context, pass_environment, pass_eval_context
from jinja2.sandbox import SecurityError

from paddlegen.render import engine as render
from paddlegen.render import sandbox
from tests.security.test_templates import assert_template_error, render_with

BIG = "{% set s = 'x' * 1000000 %}"  # within the bounds: 1 MB, like a large ConfigMap value

HOSTILE = {
    # operators
    "repeat-string": ("{{ 'x' * 10**9 }}", "'*' would repeat 1 items 1000000000 times"),
    "repeat-string-reversed": ("{{ 10**9 * 'x' }}", "'*' would repeat"),
    "repeat-list": ("{{ [0] * 10**9 }}", "'*' would repeat"),
    "power": ("{{ 10**(10**10) }}", "'**' would make an integer of more than 4096 bits"),
    "power-left": ("{{ (10**1000)**1000 }}", "'**' would make an integer"),
    "squaring": (
        "{% set ns = namespace(x=3) %}{% for i in range(40) %}"
        "{% set ns.x = ns.x * ns.x %}{% endfor %}",
        "'*' would make an integer",
    ),
    "doubling-plus": (
        BIG + "{% set ns = namespace(s=s) %}{% for i in range(30) %}"
        "{% set ns.s = ns.s + ns.s %}{% endfor %}",
        "'+' would make a value",
    ),
    "doubling-tilde": (
        BIG + "{% set ns = namespace(s=s) %}{% for i in range(30) %}"
        "{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
        "'~' would make a string",
    ),
    # a `~` inside another's operand, and in a loop's iterable: each is checked on its own
    "tilde-in-tilde": (BIG + "{{ (([s] * 100000) ~ '') ~ '' }}", "'~' would make a string"),
    "tilde-in-loop": (
        BIG + "{% for c in ([s] * 100000) ~ '' %}{% endfor %}",
        "'~' would make a string",
    ),
    # formatting
    "percent-width": ("{{ '%999999999d' % 1 }}", "'%' formatting would make more than"),
    "percent-precision": ("{{ '%.999999999f' % 1.0 }}", "'%' formatting would make more"),
    "percent-star": ("{{ '%*d' % (10**9, 1) }}", "'*' widths and precisions are not allowed"),
    "percent-many": (BIG + "{{ ('%s' * 1000) % ((s,) * 1000) }}", "'%' formatting would make"),
    "format-filter": ("{{ '%999999999d' | format(1) }}", "'%' formatting would make more"),
    "str-format": ("{{ '{:999999999}'.format(1) }}", "format width or precision 999999999"),
    "str-format-nested": ("{{ '{:{w}}'.format(1, w=10**9) }}", "format width or precision"),
    "str-format-map": ("{{ '{a:>999999999}'.format_map({'a': 1}) }}", "format width"),
    "str-format-many": (BIG + "{{ ('{0}' * 1000).format(s) }}", "str.format would make more"),
    # methods and filters that make long strings from short arguments
    "center": ("{{ 'x' | center(10**9) }}", "center width 1000000000"),
    "ljust": ("{{ 'x'.ljust(999999999) }}", "str.ljust width 999999999"),
    "replace-empty": (BIG + "{{ s.replace('', s) }}", "replace would make a string"),
    "replace-filter": (BIG + "{{ s | replace('x', s) }}", "replace would make a string"),
    "join-filter": ("{{ range(100000) | join('x' * 1000000) }}", "join would make a string"),
    "join-method": (
        "{{ ('x' * 1000000).join(range(1000) | map('string')) }}",
        "str.join would make a string",
    ),
    "translate": (BIG + "{{ s.translate({120: s}) }}", "str.translate could make a string"),
    "indent": ("{{ 'x' | indent(10**9, true) }}", "indent would make a string"),
    "batch": ("{{ [1] | batch(10**9, 'x') | list }}", "batch count 1000000000"),
    "lipsum": ("{{ lipsum(10**6) }}", "lipsum would make more text"),
    # many references to one long string, turned into text
    "print-list": (BIG + "{{ [s] * 1000 }}", "an output would be more than"),
    "tojson-list": (BIG + "{{ ([s] * 1000) | tojson }}", "the input of filter 'tojson'"),
    "fromkeys": (BIG + "{{ {}.fromkeys(range(1000), s) }}", "an output would be more than"),
    # work
    "nested-range": (
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "more than 200000 steps",
    ),
    "macro-fan-out": (
        "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}"
        "{% endmacro %}{{ f(40) }}",
        "more than 200000 steps",
    ),
    "output-flood": (
        BIG + "{% for i in range(100) %}{{ s }}{% endfor %}",
        "produces more than 16777216 characters",
    ),
    "static-flood": (
        "{% for i in range(100000) %}" + "y" * 200 + "{% endfor %}",
        "produces more than 16777216 characters",
    ),
}


# The bound an error names proves the template stopped there; its speed is not timed (a timed
# test fails on a busy machine; speed is the benchmark's).
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_template_fails_fast_with_template_and_line(runner, tmp_path, case):
    body, expected = HOSTILE[case]
    assert_template_error(*render_with(runner, tmp_path, body), expected)


@pytest.mark.parametrize(
    "body",
    [
        "{{ 'ab' * 3 }}-{{ 2 ** 62 }}-{{ '%05d' % 42 }}-{{ '{:>6}'.format('r') }}",
        "{{ 'x' | center(9) }}|{{ range(3) | join(',') }}|{{ 'a-b' | replace('-', '_') }}",
        "{% for i in range(1000) %}{% endfor %}{{ ('x' * 1000000) | length }}",
        "{{ job.name ~ '-' ~ job.roles | length }}",
    ],
)
def test_ordinary_templates_still_render(runner, tmp_path, body):
    result, out = render_with(runner, tmp_path, body)
    assert result.exit_code == 0, result.output
    assert out.is_dir()


def test_the_bounds_hold_below_the_limits_and_stop_just_above():
    env = render.environment()
    ok = env.from_string(f"{{{{ ('x' * {sandbox.MAX_STRING}) | length }}}}")
    assert ok.render() == str(sandbox.MAX_STRING)
    too_long = env.from_string(f"{{{{ ('x' * {sandbox.MAX_STRING + 1}) | length }}}}")
    with pytest.raises(SecurityError):
        too_long.render()
    assert env.from_string("{{ (2 ** 4095) > 0 }}").render() == "True"
    with pytest.raises(SecurityError):
        env.from_string("{{ 2 ** 4097 }}").render()


def test_each_render_gets_its_own_budget():
    """Steps are counted per render: many renders of a busy template do not add up."""
    template = render.environment().from_string(
        "{% for i in range(100000) %}{% endfor %}{% for i in range(90000) %}{% endfor %}"
    )
    for _ in range(3):
        assert template.render() == ""


@pytest.mark.parametrize(
    "workload", ["job", "distributed-job", "paddlejob", "kubeflow-paddlejob", "collective-job"]
)
def test_a_spec_at_the_size_limit_still_renders_with_the_built_in_templates(tmp_path, workload):
    """The bounds sit above anything a valid spec can make the shipped templates build."""
    from paddlegen.pipeline import build
    from paddlegen.spec.loader import MAX_BYTES

    extra = {
        "job": "",
        "distributed-job": "  distributed: {volume: data, trainConfigDir: q}\n"
        "  volumes: [{name: data, mountPath: /data, emptyDir: {}}]\n",
        "collective-job": "  args: [train.py]\n  worker: {replicas: 2}\n",
    }
    head = (
        f"apiVersion: paddlegen/v1\nkind: TrainingJob\nmetadata: {{name: big}}\nspec:\n"
        f"  workload: {workload}\n  image: img:1\n  resources: {{limits: {{memory: 1Gi}}}}\n"
        + extra.get(workload, "  ps: {replicas: 1}\n  worker: {replicas: 2}\n")
        + "  env: [{name: BIG, value: "
    )
    spec = tmp_path / "big.yaml"
    spec.write_text(head + "x" * (MAX_BYTES - len(head) - 3) + "}]\n")
    assert spec.stat().st_size == MAX_BYTES
    (rendered,) = build.render_specs([spec])
    assert sum(text.count("x" * 1000) for text in rendered.plan.values()) >= 1000


@pytest.mark.parametrize("decorator", [None, pass_context, pass_eval_context, pass_environment])
def test_a_filter_is_checked_on_its_value_whatever_jinja2_passes_it_first(decorator):
    """A filter set after the environment exists is checked too, on its value and arguments,
    not on the context, eval context or environment jinja2 passes before them."""
    env = sandbox.BoundedSandboxedEnvironment()
    if decorator is None:
        env.filters["center"] = lambda value, width=80: value.center(width)
    else:
        env.filters["center"] = decorator(lambda _first, value, width=80: value.center(width))
    assert env.from_string("{{ 'x' | center(3) }}").render() == " x "
    with pytest.raises(SecurityError, match="center width 100000000"):
        env.from_string("{{ 'x' | center(10**8) }}").render()


def test_the_sandbox_builds_on_jinja2s_public_api_alone():
    """What lets pyproject accept any jinja2 3.x: no private name, no compiler internals."""
    tree = ast.parse(Path(sandbox.__file__).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("jinja2"):
            assert node.module in ("jinja2", "jinja2.exceptions", "jinja2.sandbox"), node.module
            assert not [alias.name for alias in node.names if alias.name.startswith("_")]
        if isinstance(node, ast.Import):
            assert not [alias.name for alias in node.names if alias.name.startswith("jinja2.")]
