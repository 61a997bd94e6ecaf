"""A value of another type in an import or a spec: refused or handled, never an internal error."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from functools import cache
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from paddlegen.authoring.importer import import_jobs
from paddlegen.errors import PaddlegenError
from paddlegen.pipeline import build, load
from paddlegen.spec.loader import parse_spec, read_spec
from tests.conftest import DATA, example_specs

Path = tuple[str | int, ...]
OTHERS: list[Any] = [None, 5, "x", [], {}, True, 2.0, [None], {"a": None}]


@cache
def manifest_streams() -> tuple[tuple[dict[str, Any], ...], ...]:
    """What import reads: its test inputs, and every example rendered."""
    found = [
        tuple(yaml.safe_load_all(path.read_text(encoding="utf-8")))
        for path in sorted((DATA / "import").glob("*.yaml"))
    ]
    for spec in example_specs():
        result = build.render_document(read_spec(str(spec)))
        found.append(tuple(m.obj for m in result.manifests))
    return tuple(found)


@cache
def spec_documents() -> tuple[dict[str, Any], ...]:
    return tuple(read_spec(str(spec)).data for spec in example_specs())


def paths(obj: Any, at: Path = ()) -> Iterator[Path]:
    """The path of every value below ``obj``, the object's identity included."""
    items = (
        obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    )
    for key, value in items:
        yield (*at, key)
        yield from paths(value, (*at, key))


def retype(data: Any, at: Path, value: Any) -> None:
    parent = data
    for key in at[:-1]:
        parent = parent[key]
    parent[at[-1]] = copy.deepcopy(value)


@st.composite
def retyped(draw: st.DrawFn, documents: list[Any]) -> list[Any]:
    """``documents`` with one to three values replaced by a value of another type."""
    documents = copy.deepcopy(documents)
    for _ in range(draw(st.integers(1, 3))):
        index = draw(st.integers(0, len(documents) - 1))
        found = list(paths(documents[index]))
        if not found:
            continue
        at = draw(st.sampled_from(found))
        retype(documents[index], at, draw(st.sampled_from(OTHERS)))
    return documents


@st.composite
def retyped_streams(draw: st.DrawFn) -> str:
    objects = list(draw(st.sampled_from(manifest_streams())))
    if draw(st.booleans()):  # as `kubectl get -o yaml` gives several objects
        objects = [{"apiVersion": "v1", "kind": "List", "items": objects}]
    return yaml.safe_dump_all(draw(retyped(objects)), sort_keys=False)


@settings(max_examples=300)  # a few seconds
@given(retyped_streams())
def test_a_retyped_manifest_imports_or_is_refused_never_an_internal_error(text: str) -> None:
    with contextlib.suppress(PaddlegenError):  # a refusal, with its message and positions
        import_jobs([("retyped.yaml", text)])


@st.composite
def retyped_specs(draw: st.DrawFn) -> str:
    spec = draw(st.sampled_from(spec_documents()))
    return yaml.safe_dump(draw(retyped([spec]))[0], sort_keys=False)


@settings(max_examples=200)
@given(retyped_specs())
def test_a_retyped_spec_renders_or_is_refused_never_an_internal_error(text: str) -> None:
    with contextlib.suppress(PaddlegenError):
        doc = parse_spec(text.encode("utf-8"), "retyped.yaml")
        load.validate_document(doc)  # what `validate` reports
        build.render_document(doc)  # what `render` does (refusing what validation finds)
