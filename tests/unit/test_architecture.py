"""The package's shape: its modules import one another without cycles.

Every import counts, the ones inside functions too (deferred to save start-up time, they still
tie two modules together) and those in ``if TYPE_CHECKING:`` blocks (types tie them too: a
module that names another's class for its signatures cannot be read or moved without it).
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import copy_repository

PACKAGE = Path(__file__).resolve().parents[2] / "paddlegen"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    return skipped


def imports_of(name: str, typing: bool = True) -> set[str]:
    """The paddlegen modules that module ``name`` imports (without ``typing``, only those it
    imports when it runs)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    skipped = set() if typing else _type_checking_nodes(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in MODULES)
        elif isinstance(node, ast.ImportFrom) and node.module in MODULES:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in MODULES else node.module)
    found.discard(name)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_finder_sees_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("typing", [False, True], ids=["run-time", "type-checking-too"])
def test_no_module_of_the_package_takes_part_in_an_import_cycle(typing):
    graph = {name: imports_of(name, typing) for name in MODULES}
    assert len(graph) > 40 and graph["paddlegen.api"]  # the walk found the package
    assert cycles(graph) == []


def subpackage(module: str) -> str:
    """The node of ``module`` in the graph between subpackages: the first component after
    ``paddlegen.`` (a top-level module such as paddlegen.errors is a node of its own)."""
    return ".".join(module.split(".")[:2])


def test_no_subpackage_takes_part_in_an_import_cycle():
    graph: dict[str, set[str]] = {}
    for name in MODULES:
        graph.setdefault(subpackage(name), set()).update(
            subpackage(imported) for imported in imports_of(name)
        )
    for node, edges in graph.items():
        edges.discard(node)
    assert "paddlegen.spec" in graph["paddlegen.rules"]  # the walk found the subpackages
    assert cycles(graph) == []


def test_type_checking_imports_count_as_imports():
    # kueue_queues names the dry-run's types only in its signatures; the walk sees them anyway
    assert "paddlegen.validate.target" in imports_of("paddlegen.validate.kueue_queues")
    target = imports_of("paddlegen.validate.kueue_queues", typing=False)
    assert "paddlegen.validate.target" not in target


def test_subpackages_hold_the_pipeline_steps():
    packages = sorted(
        n for n, p in MODULES.items() if p.name == "__init__.py" and n.count(".") == 1
    )
    assert packages == [
        f"paddlegen.{step}"
        for step in (
            "authoring",
            "cli",
            "gitops",
            "output",
            "pipeline",
            "render",
            "rules",
            "spec",
            "validate",
            "workloads",
        )
    ]


def test_at_most_twelve_modules_lie_directly_in_the_package():
    """Besides ``__init__`` and ``__main__``: what is not shared by the steps goes into the
    subpackage of its step."""
    top = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__"))
    assert len(top) <= 12, top


def test_every_workload_is_one_folder_named_after_it():
    import importlib

    from paddlegen.workloads import WORKLOADS

    folders = {
        n.rsplit(".", 1)[1]
        for n, p in MODULES.items()
        if p.name == "__init__.py" and n.startswith("paddlegen.workloads.")
    }
    # and shared/: what several workloads share, which none of them owns
    assert folders == {w.package for w in WORKLOADS.values()} | {"shared"}
    for workload in WORKLOADS.values():
        package = importlib.import_module(f"paddlegen.workloads.{workload.package}")
        assert package.WORKLOAD is workload
        # its own rules (paddlegen/rules runs them on its specs alone), from its folder
        assert workload.rules.__module__ == package.__name__
        assert (PACKAGE.parent / "templates" / workload.folder).is_dir()


def workload_of(module: str, packages: set[str]) -> str | None:
    """The workload whose folder holds ``module`` (by its package name), None for any other."""
    parts = module.split(".")
    inside = parts[:2] == ["paddlegen", "workloads"] and len(parts) > 2
    return parts[2] if inside and parts[2] in packages else None


def test_no_workload_folder_imports_another():
    """What several workloads share is in paddlegen/workloads/shared/: a workload's folder
    imports its own modules, the shared ones and the registry's, never another workload's
    (copied under a new name, a folder depends on no other)."""
    from paddlegen.workloads import WORKLOADS

    packages = {w.package for w in WORKLOADS.values()}
    assert workload_of("paddlegen.workloads.job.importer", packages) == "job"
    assert workload_of("paddlegen.workloads.shared.launcher", packages) is None
    across = {
        (name, imported)
        for name in MODULES
        if (own := workload_of(name, packages))
        for imported in imports_of(name)
        if workload_of(imported, packages) not in (None, own)
    }
    assert across == set()


# Raised but never escaping the library: each is caught and turned into a PaddlegenError.
CAUGHT_WHERE_RAISED = {
    # OSErrors: every reader turns them into an InputError or a finding naming the file
    ("paddlegen.reading", "IsADirectoryError"),
    ("paddlegen.reading", "NotRegularFile"),
    ("paddlegen.yamlio", "TooLarge"),  # authoring/import_read.py -> InputError, positioned
    # inside a template's code, as Python and jinja2 would: render/engine -> TemplateError
    ("paddlegen.render.sandbox", "TypeError"),
    ("paddlegen.render.sandbox", "SecurityError"),
    # a module's __getattr__ must raise it for unknown names
    ("paddlegen", "AttributeError"),
    ("paddlegen.rules", "AttributeError"),
    ("paddlegen.workloads", "AttributeError"),
    ("paddlegen.workloads", "KeyError"),  # WORKLOADS given an entry for no workload it lists
    ("paddlegen.validate.merge", "PatchError"),  # validate/patched.py -> an overlay finding
    # a pattern it cannot spell: only the shipped schemas' reach it, and
    # tests/unit/test_ecma_patterns.py spells every one of those
    ("paddlegen.spec.ecma", "ValueError"),
}


def test_every_error_the_package_raises_is_a_paddlegen_error():
    import importlib

    from paddlegen.errors import PaddlegenError

    foreign = set()
    for name, path in MODULES.items():
        if name.startswith("paddlegen.cli"):
            continue  # the CLI speaks click's exceptions: they are how it exits
        if name == "paddlegen.__main__":
            continue  # its signal handlers raise Interrupted, which it turns into an exit
        module = None
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)):
                continue
            func = node.exc.func
            cls_name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            module = module or importlib.import_module(name)
            cls = getattr(module, cls_name, None) or getattr(__builtins__, cls_name, None)
            if cls is None and isinstance(__builtins__, dict):
                cls = __builtins__.get(cls_name)
            if not (isinstance(cls, type) and issubclass(cls, PaddlegenError)):
                foreign.add((name, cls_name))
    assert foreign <= CAUGHT_WHERE_RAISED


WORKLOAD_NAMES = {"job", "distributed-job", "paddlejob", "kubeflow-paddlejob", "collective-job"}
WORKLOAD_NAMES |= {"trainjob"}
# Generated from the schema, whose `paddlejob:` and `trainjob:` sections are spec keys.
GENERATED = {"paddlegen.spec.schema_compiled"}


def name_comparisons(source: str) -> int:
    """The comparisons (``==``, ``in``, ...) and match cases in ``source`` that name a
    workload: code that decides by a workload's name instead of asking the registry."""
    found = 0
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.match_case):
            operands = [node.pattern]
        else:
            continue
        found += any(
            isinstance(leaf, ast.Constant) and leaf.value in WORKLOAD_NAMES
            for operand in operands
            for leaf in ast.walk(operand)
        )
    return found


def test_the_count_sees_comparisons_and_cases():
    source = """
if workload == "job" or kind in ("trainjob", "x"):
    pass
match workload:
    case "paddlejob":
        pass
if settings == "collective":
    pass
"""
    assert name_comparisons(source) == 3
    assert name_constants(source) == 3  # "job", "trainjob", "paddlejob"


def name_constants(source: str) -> int:
    """The strings in ``source`` that are a workload's name."""
    return sum(
        isinstance(node, ast.Constant) and node.value in WORKLOAD_NAMES
        for node in ast.walk(ast.parse(source))
    )


@pytest.mark.parametrize("count", [name_comparisons, name_constants], ids=["compare", "write"])
def test_only_the_workload_folders_compare_or_write_workload_names(count):
    """A decision, a default, a choice or a table names a workload by asking the registry (its
    entries' flags, ``WORKLOADS``), never by a string of its own."""
    outside = {
        name: found
        for name in MODULES
        if not name.startswith("paddlegen.workloads") and name not in GENERATED
        if (found := count(MODULES[name].read_text(encoding="utf-8")))
    }
    assert outside == {}


# Long modules are hard to read and to review; a generated one is read by nobody.
MAX_LINES = 700


def test_no_module_is_longer_than_700_lines():
    long = {
        name
        for name, path in MODULES.items()
        if name not in GENERATED and len(path.read_text(encoding="utf-8").splitlines()) > MAX_LINES
    }
    assert long == set()


def test_mypy_checks_the_package_and_hack_strictly():
    import tomllib

    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["tool"]["mypy"] == {"files": ["paddlegen", "hack"], "strict": True}


def test_gitops_keeps_no_table_of_kinds():
    """Argo CD's health checks and ignoreDifferences come from the kinds of object the
    workloads list (paddlegen/workloads/objects.py): no module of gitops/ names one of those
    kinds, its API version or group, or a health check's Lua file, as a string of its own."""
    from paddlegen.workloads import judged_objects

    names = {"PaddleJob", "TrainJob", "JobSet", "PodGroup", "Job"}
    for obj in judged_objects():
        names |= {obj.kind, obj.api_version, obj.health_key, *(f.name for f in obj.health)}
        names |= {obj.group} - {""}
    named = {
        (name, node.value)
        for name, path in MODULES.items()
        if name.startswith("paddlegen.gitops")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and node.value in names
    }
    assert named == set()


# What a copy of the repository needs to regenerate and render (scripts/generate.py writes
# into the schema, the package, the reference pages and the tables of README.md and docs/).
COPIED = ("paddlegen", "templates", "schemas", "scripts", "docs", "README.md")


def test_a_copy_of_job_under_a_new_name_renders_after_one_regeneration(tmp_path):
    """Adding a workload is its folder, its template folder, its registry line and loader and
    `python -m scripts.generate` (CONTRIBUTING.md). Import is left out: a copy of `job` claims
    the batch Jobs `job` claims, as three workloads already share that kind."""
    tree = tmp_path / "repo"
    copy_repository(tree, COPIED)
    workloads = tree / "paddlegen" / "workloads"
    shutil.copytree(workloads / "job", workloads / "batch_copy")
    shutil.copytree(tree / "templates" / "job", tree / "templates" / "batch-copy")
    entry = workloads / "batch_copy" / "__init__.py"
    text = entry.read_text(encoding="utf-8")
    assert text.count('    name="job",\n') == 1
    entry.write_text(text.replace('    name="job",\n', '    name="batch-copy",\n'), "utf-8")
    registry = workloads / "__init__.py"
    text = registry.read_text(encoding="utf-8")
    loader = "def _job() -> Workload:\n    from paddlegen.workloads.job import WORKLOAD\n"
    assert text.count(loader) == 1 and text.count('        "job": _job,\n') == 1
    copied = loader.replace("job", "batch_copy") + "\n    return WORKLOAD\n\n\n"
    text = text.replace(loader, copied + loader)
    line = '        "job": _job,\n'
    text = text.replace(line, line + '        "batch-copy": _batch_copy,\n')
    registry.write_text(text, "utf-8")

    env = {**os.environ, "PYTHONPATH": str(tree)}

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *argv], cwd=tree, env=env, capture_output=True, text=True, check=False
        )

    (tree / "copy.yaml").write_text(
        "apiVersion: paddlegen/v1\nkind: TrainingJob\nmetadata: {name: demo}\n"
        "spec:\n  workload: batch-copy\n  image: registry.example.com/demo:v1\n",
        "utf-8",
    )
    render = ("-m", "paddlegen", "render", "copy.yaml", "-o", "out")
    refused = run(*render)  # the schema's workload enum does not know it yet
    assert refused.returncode == 1 and "batch-copy" in refused.stderr, refused.stderr
    generated = run("-m", "scripts.generate")
    assert generated.returncode == 0, generated.stderr
    assert "wrote schemas/trainingjob.v1.schema.json" in generated.stdout
    schema = (tree / "schemas" / "trainingjob.v1.schema.json").read_text(encoding="utf-8")
    assert "batch-copy (one `batch/v1` Job, one pod)" in schema  # the workload's description
    rendered = run(*render)
    assert rendered.returncode == 0, rendered.stderr
    written = [p.read_text(encoding="utf-8") for p in (tree / "out").rglob("*.yaml")]
    assert any("kind: Job\n" in text and "name: demo\n" in text for text in written)
