"""The compiled spec check (scripts/compile_schema.py -> paddlegen/spec/schema_compiled.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from paddlegen.resources import spec_schema_path
from paddlegen.spec import schema as schema_module
from paddlegen.spec import schema_compiled
from paddlegen.spec.loader import parse_spec
from scripts.compile_schema import OUTPUT, compile_schema

ROOT = Path(__file__).resolve().parents[2]
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def test_committed_module_is_what_the_generator_writes_for_the_committed_schema():
    # Regenerate with `python -m scripts.generate` after a schema change.
    assert OUTPUT.read_text(encoding="utf-8") == compile_schema(spec_schema_path().read_bytes())


def _check_of(schema: dict[str, Any]) -> Any:
    """The compiled check of ``schema``, as a function."""
    namespace: dict[str, Any] = {}
    exec(compile(compile_schema(json.dumps(schema).encode()), "<compiled>", "exec"), namespace)  # noqa: S102
    return namespace["is_valid"]


# (schema, instances): each compared with jsonschema on every instance; the corners of
# JSON Schema's semantics that a hand-written check gets wrong
CORNERS: list[tuple[dict[str, Any], list[Any]]] = [
    ({"type": "integer"}, [1, 1.0, 1.5, True, "1", None, -0.0, float("inf")]),
    ({"type": "number", "minimum": 0, "maximum": 2}, [0, 2.0, 2.5, -1, True, False, "1"]),
    ({"minimum": 1}, ["a", True, 0, 1]),  # no type: other instances pass
    ({"type": ["string", "null"]}, ["", None, 0, False]),
    ({"type": "string", "pattern": "b"}, ["abc", "a", 1]),  # a search, not a full match
    ({"type": "string", "pattern": "^a$"}, ["a", "a\n", "ba"]),  # `$` before a final newline
    ({"type": "string", "pattern": "^a.b$"}, ["a-b", "a\nb", "a\rb", "a\u2028b"]),
    ({"type": "string", "pattern": "^[^\\s]+$"}, ["ab", "a b", "a\x1cb", "a\ufeffb"]),
    ({"type": "string", "pattern": "^\\d+\\w$"}, ["12a", "\u0661\u0662a", "12\u00e9"]),
    ({"type": "string", "minLength": 2, "maxLength": 3}, ["a", "ab", "abcd", "\U0001f600\u00e9"]),
    ({"enum": [0, 1, 2]}, [0, 1.0, True, False, "1", [1], None]),
    ({"enum": ["a", "b"]}, ["a", "c", 0, ["a"]]),
    ({"const": True}, [True, 1, 1.0, "true", False]),
    ({"type": "array", "uniqueItems": True}, [["a", "b"], ["a", "a"], [], [1, True]]),
    ({"type": "array", "minItems": 1, "items": {"type": "string"}}, [[], ["a"], ["a", 1], {}]),
    (
        {
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "required": ["a"],
            "additionalProperties": False,
        },
        [{"a": "x"}, {"a": 1}, {}, {"a": "x", "b": 1}, {1: "x", "a": "y"}, []],
    ),
    (
        {"type": "object", "additionalProperties": {"type": "integer"}, "properties": {"s": {}}},
        [{"s": "x", "n": 1}, {"n": "x"}, {}],
    ),
    (
        {"propertyNames": {"pattern": "^[a-z]+$"}, "minProperties": 1, "maxProperties": 2},
        [{"ab": 1}, {"Ab": 1}, {}, {"a": 1, "b": 2, "c": 3}, {1: 2}, "x"],
    ),
    ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, ["a", 1, 1.5]),
    ({"not": {"required": ["a"]}}, [{"a": 1}, {"b": 1}, 1]),
    (
        {"if": {"required": ["a"]}, "then": {"required": ["b"]}, "else": {"required": ["c"]}},
        [{"a": 1, "b": 1}, {"a": 1}, {"c": 1}, {}, 5],
    ),
    ({"if": {"required": ["a"]}, "then": {"required": ["b"]}}, [{"a": 1}, {}]),
    ({"if": {"required": ["a"]}, "else": {"required": ["c"]}}, [{"a": 1}, {}]),
    ({"then": False}, [1]),  # `then` without `if` validates nothing
    ({"items": False}, [[], [1], "x"]),
]


@pytest.mark.parametrize(("schema", "instances"), CORNERS, ids=lambda v: json.dumps(v)[:40])
def test_compiled_check_agrees_with_jsonschema_on_the_corners(schema, instances):
    check = _check_of({"$schema": DRAFT, **schema})
    reference = schema_module.validator_class()(schema)
    for instance in instances:
        verdict = reference.is_valid(instance)
        if isinstance(instance, list) and schema.get("uniqueItems") and instance == [1, True]:
            # not strings: left to jsonschema (which tells 1 and true apart)
            assert (check(instance), verdict) == (False, True)
            continue
        assert check(instance) == verdict, instance


@pytest.mark.parametrize(
    "schema",
    [
        {"oneOf": [{"type": "string"}]},
        {"patternProperties": {"a": {}}},
        {"$ref": "#/$defs/nowhere"},
        {"enum": [[1]]},
        {"format": "email"},
    ],
    ids=json.dumps,
)
def test_generator_refuses_what_it_cannot_check(schema):
    with pytest.raises(ValueError, match="does not know"):
        compile_schema(json.dumps({"$schema": DRAFT, **schema}).encode())


def test_generator_refuses_another_draft():
    with pytest.raises(ValueError, match="2020-12"):
        compile_schema(b'{"$schema": "http://json-schema.org/draft-07/schema#"}')


def test_compiled_check_agrees_with_jsonschema_on_every_example_and_corpus_spec():
    reference = schema_module._validator()
    seen = {True: 0, False: 0}
    for path in sorted(
        [*ROOT.glob("examples/**/*.yaml"), *ROOT.glob("tests/data/specs/**/*.yaml")]
    ):
        try:
            doc = parse_spec(path.read_bytes(), str(path))
        except Exception:  # noqa: BLE001 - the corpus has files that do not load
            continue
        verdict = reference.is_valid(doc.data)
        assert schema_compiled.is_valid(doc.data) == verdict, path
        seen[verdict] += 1
    assert seen[True] > 40 and seen[False] > 40, seen  # both verdicts are exercised


def test_a_schema_file_the_check_was_not_made_from_goes_to_jsonschema(tmp_path, monkeypatch):
    edited = tmp_path / "schema.json"
    text = spec_schema_path().read_text(encoding="utf-8")
    edited.write_text(text.replace('"minimum": 1', '"minimum": 2', 1), encoding="utf-8")
    monkeypatch.setattr(schema_module, "spec_schema_path", lambda: edited)
    schema_module._compiled.cache_clear()
    try:
        assert schema_module._compiled() is None
        monkeypatch.undo()
        schema_module._compiled.cache_clear()
        assert schema_module._compiled() is schema_compiled.is_valid
    finally:
        schema_module._compiled.cache_clear()
