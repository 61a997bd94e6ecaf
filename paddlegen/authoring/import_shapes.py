"""`paddlegen import`, before any mapping: every field of every input object has the JSON type
its schema gives it, and every field its schema requires is there, or the import is refused at
that field.

The schemas are `validate`'s own (the Kubernetes version's for built-in kinds, the vendored CRDs'
for the operators' and Volcano's). The API server refuses an object of another shape, so
`kubectl get` never prints one; a hand-written one (`spec: []`, `containers: {}`, a claim
volume without `claimName`) is refused here, at its line and field, rather than met by the
mappers, which walk the objects expecting the API's types and required fields. Only those
count: an unknown field is the mappers' to note, and values (an enum, a quantity) the spec's
validation checks after the import.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from paddlegen.errors import Diagnostic, ManifestError, Rule
from paddlegen.validate import k8s_schemas
from paddlegen.validate.inprocess import schema_for
from paddlegen.validate.kubeconform import MISSING_FIELD, diagnostic, object_name
from paddlegen.workloads.import_positions import Origin

RULE = Rule(
    "import-shape",
    "an object `import` reads has the shape its schema gives it: types and required fields",
    explanation=(
        "An object `import` reads is checked for the shape its Kubernetes or CRD schema gives "
        "(types and required fields) before it is mapped. A field of the wrong shape cannot be "
        "read back."
    ),
    severity="error",
)
# The keywords that give a field its type or require it, and those that reach the fields
# inside it. Without the others (enum, format, bounds), a schema says what shape an object has.
_SHAPE_KEYWORDS = (
    "$ref", "type", "properties", "items", "additionalProperties", "allOf", "anyOf", "required",
)  # fmt: skip


# Every kind's metadata, as the API server reads it: a CRD's schema (and an unknown kind's
# none) leaves it untyped, and the mappers read its labels and annotations.
_OBJECT_META = {
    "$ref": k8s_schemas.DEFINITIONS_URI + "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
}
_VALIDATORS: dict[int, Any] = {}  # by the schema's id(): the schemas are cached objects


def _finds_nothing(*_: Any) -> None:
    """A keyword that checks a value, not a shape."""


def _shape_validator(schema: Any) -> Any:
    """A validator of ``schema`` that checks types and required fields only."""
    if id(schema) in _VALIDATORS:
        return _VALIDATORS[id(schema)]
    from jsonschema import Draft4Validator
    from jsonschema.validators import extend as untyped_extend
    from jsonschema.validators import validator_for

    # jsonschema 4.26 leaves `extend` unannotated: called through a typed name
    extend: Callable[..., Any] = untyped_extend

    base = validator_for(schema, default=Draft4Validator)
    any_of, additional = base.VALIDATORS["anyOf"], base.VALIDATORS["additionalProperties"]

    def maps_only(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        # `additionalProperties: false` (the strict schemas) lists unknown fields: the
        # mappers' business. A schema in it types a map's values (labels: strings).
        if isinstance(value, dict):
            yield from additional(validator, value, instance, schema)

    dropped = {k: _finds_nothing for k in base.VALIDATORS if k not in _SHAPE_KEYWORDS}
    # int-or-string is a oneOf of a string and an integer: either shape will do.
    shapes = extend(base, {**dropped, "additionalProperties": maps_only, "oneOf": any_of})
    _VALIDATORS[id(schema)] = shapes(schema, registry=k8s_schemas.registry())
    return _VALIDATORS[id(schema)]


def misshapen(located: list[tuple[dict[str, Any], Origin]]) -> list[Diagnostic]:
    """A finding at each field of the objects ``located`` that is not of its schema's type or
    that it requires and they lack; of an object of a kind no schema knows, its metadata only
    (the rest is left to the mappers)."""
    found = []
    for obj, origin in located:
        schema = schema_for(str(obj["apiVersion"]), str(obj["kind"]))
        checks: list[tuple[Any, Any, list[Any]]] = [] if schema is None else [(schema, obj, [])]
        if schema is None or "$ref" not in schema["properties"].get("metadata", {}):
            checks.append((_OBJECT_META, obj["metadata"], ["metadata"]))
        name = object_name(obj["kind"], obj["metadata"]["name"])
        errors = (
            (error, [*inside, *error.absolute_path])
            for shape, value, inside in checks
            for error in _shape_validator(shape).iter_errors(value)
        )
        for error, at in errors:
            line, col = origin.position(tuple(at)) or (0, 0)  # a missing field: its parent's
            for field, message in _causes(error):
                finding = diagnostic(origin.source.name, name, at + field, message, RULE)
                found.append(replace(finding, line=line, col=col))
    return sorted(set(found))


def _causes(error: Any) -> Iterator[tuple[list[str], str]]:
    """Each field ``error`` is about, below its path, and what is wrong with it."""
    if error.validator == "required":
        for field in error.validator_value:
            if field not in error.instance:
                yield [field], MISSING_FIELD
    else:
        yield [], _said(error)


_JSON = {
    "object": "an object", "array": "a list", "string": "a string", "integer": "an integer",
    "number": "a number", "boolean": "true or false",
}  # fmt: skip


def _said(error: Any) -> str:
    """``a list, where the API takes an object``: jsonschema's message names the value and
    every type, "null" (an unset field) included, or for int-or-string none."""
    typed = [error] if error.validator == "type" else error.context
    types = [t for sub in typed if sub.validator == "type" for t in _listed(sub.validator_value)]
    expected = " or ".join(_JSON[t] for t in types if t in _JSON)
    return f"{_found(error.instance)}, where the API takes {expected}"


def _listed(types: str | list[str]) -> list[str]:
    return [types] if isinstance(types, str) else types


def _found(value: Any) -> str:
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    kinds = {dict: "an object", list: "a list", str: "a string", int: "an integer"}
    kind = next((said for t, said in kinds.items() if isinstance(value, t)), "a number")
    return kind if isinstance(value, (dict, list)) else f"{json.dumps(value)} ({kind})"


def refuse_misshapen(located: list[tuple[dict[str, Any], Origin]]) -> None:
    """Raise the findings of ``misshapen``, if there are any."""
    found = misshapen(located)
    if found:
        raise ManifestError(
            "the input holds objects the API server would refuse (a field of another type, or "
            "missing): nothing is imported",
            found,
        )
