"""`paddlegen import` of what paddlegen renders, changed as a hand edit might (a field deleted,
emptied, repeated or given another value of its type): a spec and its notes or a positioned
error, never an internal error (a Python exception that is not a PaddlegenError)."""

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
from paddlegen.pipeline import build
from paddlegen.spec.loader import read_spec
from tests.conftest import example_specs

Path = tuple[str | int, ...]
# What a field becomes when emptied, by its type.
EMPTY: dict[type, Any] = {dict: {}, list: [], str: "", int: 0, bool: False}


@cache
def rendered_streams() -> tuple[tuple[str, tuple[dict[str, Any], ...]], ...]:
    """Every example's rendered objects (the specs `render` accepts)."""
    found = []
    for spec in example_specs():
        result = build.render_document(read_spec(str(spec)))
        found.append((spec.name, tuple(m.obj for m in result.manifests)))
    return tuple(found)


def fields(obj: Any, at: Path = ()) -> Iterator[Path]:
    """The path of every field and list item below ``obj`` (not its kind, name or version,
    which decide what the object is)."""
    items = (
        obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    )
    for key, value in items:
        here = (*at, key)
        if here not in (("apiVersion",), ("kind",), ("metadata",), ("metadata", "name")):
            yield here
        yield from fields(value, here)


def mutate(obj: dict[str, Any], at: Path, how: str) -> None:
    parent: Any = obj
    for key in at[:-1]:
        parent = parent[key]
    key, value = at[-1], parent[at[-1]]
    if how == "delete":
        del parent[key]
    elif how == "empty":
        parent[key] = copy.deepcopy(EMPTY.get(type(value), value))
    elif how == "repeat" and isinstance(value, list) and value:
        value.append(copy.deepcopy(value[0]))
    elif isinstance(value, bool):
        parent[key] = not value
    elif isinstance(value, int):
        parent[key] = -value - 1
    elif isinstance(value, str):
        parent[key] = value + "-x"


@st.composite
def edited_streams(draw: st.DrawFn) -> str:
    name, objects = draw(st.sampled_from(rendered_streams()))
    objects = copy.deepcopy(list(objects))
    for _ in range(draw(st.integers(1, 3))):
        obj = draw(st.sampled_from(objects))
        paths = list(fields(obj))
        if paths:
            at = draw(st.sampled_from(paths))
            mutate(obj, at, draw(st.sampled_from(["delete", "empty", "repeat", "change"])))
    return yaml.safe_dump_all(objects, sort_keys=False)


@settings(max_examples=500)  # a few seconds: the first 100 missed half the bugs above
@given(edited_streams())
def test_an_edited_render_imports_or_is_refused_never_an_internal_error(text):
    with contextlib.suppress(PaddlegenError):  # a refusal, with its message and positions
        import_jobs([("edited.yaml", text)])
