"""What users read carries no history of how paddlegen was built: no references to internal
source documents ("seed 003"), issue numbers ("#26", "issue 28"), dates of test runs, or test
files. It says what paddlegen does; git and the changelog keep the history.

Checked: README.md, docs/, examples/, templates/, the benchmarks (issue numbers), every
command's --help, the docstrings of the public API
(paddlegen, paddlegen.sdk, paddlegen.runtime), the spec schema's texts (which feed the spec
reference and `paddlegen explain`), the workloads' summaries, and the rules' texts (every
string in paddlegen/rules/ and the workloads' rules.py)."""

from __future__ import annotations

import ast
import inspect
import json
import re
from collections.abc import Iterator
from types import ModuleType

import click
import pytest

import paddlegen
import paddlegen.runtime
import paddlegen.sdk
from paddlegen.cli import cli
from paddlegen.workloads import WORKLOADS
from tests.conftest import ROOT

HISTORY = re.compile(
    r"seed ?[0-9]|\bseeds?\b|issue ?#?[0-9]|\(#[0-9]+\)|#[0-9]{2}\b|tests/[a-z_/]+\.py"
    r"|20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]",
    re.IGNORECASE,
)
TEXT_SUFFIXES = {".md", ".yaml", ".yml", ".json", ".txt", ".lua", ".j2", ""}


def found(text: str) -> list[str]:
    """The lines of ``text`` that carry history."""
    return [line.strip() for line in text.splitlines() if HISTORY.search(line)]


def user_files() -> list[str]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for folder in ("examples", "templates"):  # a template's comments are read with it
        files += sorted(
            p for p in (ROOT / folder).rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES
        )
    return [str(p.relative_to(ROOT)) for p in files]


@pytest.mark.parametrize("name", user_files())
def test_no_file_users_read_carries_history(name):
    assert found((ROOT / name).read_text(encoding="utf-8")) == []


# The benchmarks' reports, targets and options (a `--seed` of their synthetic repositories is
# a random seed, not history).
ISSUE = re.compile(r"issue ?#?[0-9]|\(#[0-9]+\)|#[0-9]{2}\b", re.IGNORECASE)


BENCHMARK_TEXTS = sorted(
    str(p.relative_to(ROOT))
    for p in (ROOT / "benchmarks").rglob("*")
    if p.suffix in (".py", ".md", ".json", ".yaml", ".tpl")
    and not {".tools", "__pycache__"} & set(p.parts)
)  # not the tools a benchmark builds, nor bytecode


@pytest.mark.parametrize("name", BENCHMARK_TEXTS)
def test_no_benchmark_row_or_option_cites_an_issue(name):
    text = (ROOT / name).read_text(encoding="utf-8")
    assert [line.strip() for line in text.splitlines() if ISSUE.search(line)] == []


def test_the_seed_notes_are_gone():
    assert not (ROOT / "examples" / "SEED-NOTES.md").exists()


def commands(
    command: click.Command, path: tuple[str, ...] = (), parent: click.Context | None = None
) -> Iterator[tuple[str, str]]:
    """Every command's full --help text, by its name. Each context is made as the CLI makes it
    (its settings, its parent): click caches a command's help option from the first one."""
    name = path[-1] if path else "paddlegen"
    ctx = click.Context(command, info_name=name, parent=parent, **command.context_settings)
    yield " ".join(path) or "paddlegen", command.get_help(ctx)
    if isinstance(command, click.Group):
        for sub_name in command.list_commands(ctx):
            sub = command.get_command(ctx, sub_name)
            assert sub is not None
            yield from commands(sub, (*path, sub_name), ctx)


def test_no_help_text_carries_history():
    helps = dict(commands(cli))
    assert "import" in helps and "init" in helps
    assert {name: found(text) for name, text in helps.items() if found(text)} == {}


def docstrings(module: ModuleType) -> Iterator[tuple[str, str]]:
    """The module's docstring and those of what it defines (classes with their methods)."""
    yield module.__name__, module.__doc__ or ""
    for name, obj in vars(module).items():
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isclass(obj) or inspect.isfunction(obj):
            yield f"{module.__name__}.{name}", obj.__doc__ or ""
        if inspect.isclass(obj):
            for attribute, member in vars(obj).items():
                if inspect.isfunction(member) or isinstance(member, property):
                    yield f"{module.__name__}.{name}.{attribute}", member.__doc__ or ""


def test_no_public_docstring_carries_history():
    texts = dict(docstrings(paddlegen))
    texts |= dict(docstrings(paddlegen.sdk)) | dict(docstrings(paddlegen.runtime))
    for name in paddlegen.__all__:
        obj = getattr(paddlegen, name)
        if not isinstance(obj, str):
            texts[f"paddlegen.{name}"] = obj.__doc__ or ""
    assert {name: found(text) for name, text in texts.items() if found(text)} == {}


def strings(node: object, path: str = "$") -> Iterator[tuple[str, str]]:
    """Every string of a JSON document but the schema authors' own ``$comment``s."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key != "$comment":
                yield from strings(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from strings(value, f"{path}[{i}]")
    elif isinstance(node, str):
        yield path, node


def test_no_schema_text_carries_history():
    schema = json.loads(
        (ROOT / "schemas" / "trainingjob.v1.schema.json").read_text(encoding="utf-8")
    )
    assert {path: text for path, text in strings(schema) if found(text)} == {}


def test_no_workload_summary_carries_history():
    assert {w.name: w.summary for w in WORKLOADS.values() if found(w.summary)} == {}


def rule_files() -> list[str]:
    files = sorted((ROOT / "paddlegen" / "rules").glob("*.py"))
    files += sorted((ROOT / "paddlegen" / "workloads").glob("*/rules.py"))
    return [str(p.relative_to(ROOT)) for p in files]


@pytest.mark.parametrize("name", rule_files())
def test_no_rule_text_carries_history(name):
    """Summaries, messages and hints are string literals (comments may cite sources)."""
    tree = ast.parse((ROOT / name).read_text(encoding="utf-8"))
    texts = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]
    assert [line for text in texts for line in found(text)] == []
