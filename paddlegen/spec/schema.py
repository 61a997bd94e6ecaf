"""JSON Schema validation of a loaded spec, turned into positioned diagnostics."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from paddlegen.errors import Diagnostic
from paddlegen.resources import spec_schema_path
from paddlegen.spec.ecma import python_pattern
from paddlegen.spec.loader import SCHEMA, Document, FieldPath, format_path
from paddlegen.spec.secrets import is_secret_name, looks_like_secret, redact


@lru_cache(maxsize=1)
def spec_schema() -> dict[str, Any]:
    with open(spec_schema_path(), encoding="utf-8") as fh:
        schema: dict[str, Any] = json.load(fh)
    return schema


@lru_cache(maxsize=1)
def _compiled() -> Callable[[Any], bool] | None:
    """The generated yes/no check (scripts/compile_schema.py), when it was made from this very
    schema file; else None, and jsonschema decides alone (a schema edited in a checkout and not
    compiled again must not let through what it now rejects)."""
    import hashlib

    from paddlegen.spec import schema_compiled

    with open(spec_schema_path(), "rb") as fh:
        digest = hashlib.sha256(fh.read()).hexdigest()
    return schema_compiled.is_valid if digest == schema_compiled.SCHEMA_SHA256 else None


@lru_cache(maxsize=1)
def validator_class() -> Any:
    """Draft 2020-12 as the spec schema means it, whoever reads it: a `pattern` matches as
    ECMA-262 matches (spec/ecma.py: "name\\n" is no name, as in an editor), and an integer is
    an integer (2.0 is no replica count: jsonschema's Draft 2020-12 takes any integral number,
    and a template would render it as written). scripts/compile_schema.py checks the same."""
    # Imported here: jsonschema costs ~90 ms and only validating commands need it.
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import ValidationError

    def pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
        # jsonschema's own (_keywords.py at v4.26.0), with the pattern as ECMA-262 reads it
        if validator.is_type(instance, "string") and not re.search(
            python_pattern(pattern), instance
        ):
            yield ValidationError(f"{instance!r} does not match {pattern!r}")

    checker = Draft202012Validator.TYPE_CHECKER.redefine("integer", lambda _, x: type(x) is int)
    return validators.extend(  # type: ignore[no-untyped-call]
        Draft202012Validator, {"pattern": pattern}, type_checker=checker
    )


@lru_cache(maxsize=1)
def _validator() -> Any:
    return validator_class()(_inline_refs(spec_schema()))


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with each local ``$ref`` replaced by its definition, merged in place.

    Same verdicts (2020-12 applies a ``$ref`` and its siblings together, and no sibling
    redefines a keyword of its target), in half the time: jsonschema no longer resolves a
    reference at every use. A reference inside its own definition stays a reference.

    Each definition is inlined once per set of definitions it sits in, and that copy shared by
    every reference to it (nothing changes a schema once built): the pod settings every role
    references made this walk four times longer than the schema.
    """
    defs = schema.get("$defs", {})
    # (definition, the definitions around it) -> its inlined copy; only whether a name is
    # among those around matters (it stays a reference), not their order.
    done: dict[tuple[str, frozenset[str]], Any] = {}

    def inline(node: Any, stack: frozenset[str]) -> Any:
        if isinstance(node, list):
            return [inline(item, stack) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        name = ref.removeprefix("#/$defs/") if isinstance(ref, str) else None
        if name is not None and name in defs and name not in stack:
            siblings = {k: inline(v, stack) for k, v in node.items() if k != "$ref"}
            key = (name, stack)
            if key not in done:
                done[key] = inline(defs[name], stack | {name})
            return {**done[key], **siblings}
        return {k: v if k == "$defs" else inline(v, stack) for k, v in node.items()}

    inlined: dict[str, Any] = inline(schema, frozenset())
    return inlined


def warm_validator() -> None:
    """Load the compiled check now (before worker processes fork, say); jsonschema only if
    the check is stale (an invalid spec in a worker imports it there)."""
    if _compiled() is None:
        _validator()


@lru_cache(maxsize=4)
def file_validator(path: str) -> Any:
    """A validator of the JSON Schema at ``path`` (another file than a spec's: `paddlegen
    kueue`'s input)."""
    with open(path, encoding="utf-8") as fh:
        return validator_class()(_inline_refs(json.load(fh)))


def schema_diagnostics(doc: Document, validator: Any = None) -> list[Diagnostic]:
    """Every schema violation in ``doc``, each pointing at the offending key or value; by
    the spec schema unless ``validator`` (``file_validator``) is given."""
    if validator is None:
        compiled = _compiled()
        # A valid spec, the common case, never imports jsonschema (~40% of a cold render's
        # imports); "invalid" only means jsonschema looks and words what it finds.
        if compiled is not None and compiled(doc.data):
            return []
    found: list[Diagnostic] = []
    for error in (validator or _validator()).iter_errors(doc.data):
        found.extend(_explain(doc, error))
        if len(found) >= MAX_DIAGNOSTICS:  # a hostile file: enough to act on, in bounded time
            break
    return sorted(set(found))


MAX_DIAGNOSTICS = 1000


def readable_part(doc: Document) -> Document | None:
    """``doc`` without its unknown fields, when they are all the schema finds wrong with it
    and none of them stands for a field the spec lacks: the part of an invalid spec that the
    rules can still check (no rule reads a field the schema does not know, and the rules see
    only data the schema accepts). None when the schema finds anything else (the rules
    assume the shapes it guarantees), or when an unknown field is a misspelt or misplaced
    one (`wokrer:` with no `worker:`; a field the schema words a message for): without it
    the rules would judge a job its author did not write."""
    unknown: list[FieldPath] = []
    for n, error in enumerate(_validator().iter_errors(doc.data)):
        if error.validator != "additionalProperties" or n >= MAX_DIAGNOSTICS:
            return None
        path = tuple(error.absolute_path)
        known = error.schema.get("properties", {})
        absent = [k for k in known if k not in error.instance]
        told = error.schema.get("x-unknown", {})
        for key in (k for k in error.instance if k not in known):
            # (past a few dozen unknown fields, a hostile file: not worth the guessing)
            if key in told or len(unknown) >= _MAX_SUGGESTIONS or nearest(key, absent):
                return None
            unknown.append((*path, key))
    data = _without(doc.data, unknown)
    compiled = _compiled()
    valid = compiled(data) if compiled is not None else _validator().is_valid(data)
    return Document(doc.file, data, doc.values, doc.keys, doc.written) if valid else None


def _without(data: Any, paths: list[FieldPath]) -> Any:
    """A copy of ``data`` without the mapping keys at ``paths`` (only what leads to them is
    copied; list items keep their indexes, so every position still holds)."""
    if not paths:
        return data
    if isinstance(data, dict):
        gone = {p[0] for p in paths if len(p) == 1}
        under: dict[Any, list[FieldPath]] = {}
        for p in paths:
            if len(p) > 1:
                under.setdefault(p[0], []).append(p[1:])
        return {k: _without(v, under.get(k, [])) for k, v in data.items() if k not in gone}
    under_items: dict[Any, list[FieldPath]] = {}
    for p in paths:
        under_items.setdefault(p[0], []).append(p[1:])
    return [_without(v, under_items.get(i, [])) for i, v in enumerate(data)]


_A = {"object": "a mapping", "array": "a list", "string": "a string", "integer": "an integer"}


def _explain(doc: Document, error: Any) -> Iterator[Diagnostic]:
    path: FieldPath = tuple(error.absolute_path)
    kind = error.validator
    if kind == "additionalProperties":
        yield from _unknown_keys(doc, error, path)
        return
    if kind in ("anyOf", "oneOf") and error.context:
        from jsonschema.exceptions import best_match

        yield from _explain(doc, best_match(error.context))
        return
    if kind == "required":
        pos = doc.where(path, key=True) if path else doc.where(())
        yield _diag(doc, pos, path, f"missing required field {error.message.split()[0]}")
        return
    own = error.schema if isinstance(error.schema, dict) else {}
    if "propertyNames" in error.relative_schema_path:
        path = (*path, error.instance)  # the key itself is wrong: point at it
        pos = doc.where(path, key=True)
    else:
        # A failed `not` on an object speaks of its fields (a cephfs volume's form): its key;
        # a list item (an envFrom entry) has none, so the item itself.
        named = bool(path) and isinstance(path[-1], str)
        pos = doc.where(path, key=kind == "not" and isinstance(error.instance, dict) and named)
    message = error.message
    if _is_secret(doc, path, error.instance):
        message = redact(message, error.instance)
    custom = own.get("x-error")
    if custom and kind == "not":
        message = custom  # the node names the fields; the value is the whole object
    elif custom:
        message = f"{doc.as_written(path, error.instance)} {custom}"
    if kind == "const":
        message = f"expected {error.validator_value!r}, not {doc.as_written(path, error.instance)}"
    hint = own.get("x-hint", "") if custom else ""
    quote = _quote_hint(doc, path, error.instance, own) if kind == "type" else ""
    if quote:
        message = f"{doc.as_written(path, error.instance)} is {_READ_AS[type(error.instance)]}"
        message += ", not a string"
    hint = quote or hint
    if _is_secret(doc, path, error.instance):
        message = redact(redact(message, error.instance), doc.as_written(path, error.instance))
        hint = redact(redact(hint, error.instance), doc.as_written(path, error.instance))
    if kind == "type" and error.instance is None:
        # `spec:` with nothing under it at a deeper indent: YAML reads it as null, and the
        # fields meant for it usually sit one level too far left.
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        message = f"is empty (null), expected {_A.get(expected, expected)}"
        if path and expected in ("object", "array"):
            hint = "indent the fields that belong under it, or remove the key"
    if kind == "enum" and isinstance(error.instance, str):
        hint = did_you_mean(error.instance, [str(v) for v in error.validator_value])
    yield _diag(doc, pos, path, message, hint)


_READ_AS = {bool: "a boolean in YAML", int: "a number in YAML", float: "a number in YAML"}


def _quote_hint(doc: Document, path: FieldPath, value: Any, schema: dict[str, Any]) -> str:
    """For a number or boolean where a string belongs (an env value, a label value), and that
    the field takes once quoted: how to quote it. Empty for anything else (`name: 123` is no
    name quoted either)."""
    if type(value) not in _READ_AS:
        return ""
    written = doc.as_written(path, value)
    if not _validator_for(json.dumps(schema, sort_keys=True)).is_valid(written):
        return ""
    read = json.dumps(value)  # YAML's spelling of what it read: true, 1.1
    unquoted = f"; unquoted, YAML reads it as {read}" if read != written else ""
    return f'quote it: "{written}"{unquoted}'


@lru_cache(maxsize=64)
def _validator_for(schema: str) -> Any:
    return validator_class()(json.loads(schema))


def _is_secret(doc: Document, path: FieldPath, value: Any) -> bool:
    """A value in a credential-named env entry, or one shaped like a key: never echoed."""
    if looks_like_secret(value):
        return True
    if len(path) >= 2 and path[-1] == "value" and isinstance(path[-2], int):
        entry: Any = doc.data
        try:
            for part in path[:-1]:
                entry = entry[part]
        except (KeyError, IndexError, TypeError):
            return False
        return isinstance(entry, dict) and is_secret_name(str(entry.get("name", "")))
    return False


def _unknown_keys(doc: Document, error: Any, path: FieldPath) -> Iterator[Diagnostic]:
    known = list(error.schema.get("properties", {}))
    # what a node says about a field people expect there (Kubernetes' own, spelled elsewhere)
    told = error.schema.get("x-unknown", {})
    unknown = [key for key in error.instance if key not in known]
    for n, key in enumerate(unknown):
        key_path = (*path, key)
        # difflib is slow: past a few dozen unknown keys (a hostile file) suggest nothing
        close = did_you_mean(key, known) if n < _MAX_SUGGESTIONS and key not in told else ""
        yield _diag(
            doc,
            doc.where(key_path, key=True),
            key_path,
            "unknown field",
            told.get(key) or close or _known_list(known),
        )


_MAX_SUGGESTIONS = 50


def did_you_mean(word: str, choices: list[str]) -> str:
    close = nearest(word, choices)
    return f"did you mean '{close}'?" if close else ""


def nearest(word: str, choices: list[str]) -> str:
    """The choice ``word`` most likely misspells, or ""."""
    import difflib  # here: a valid spec never needs it

    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in choices}
        close = [lowered[word.lower()]] if word.lower() in lowered else []
    return close[0] if close else ""


def _known_list(known: list[str]) -> str:
    return "known fields: " + ", ".join(sorted(known)) if known else ""


def _diag(doc: Document, pos: Any, path: FieldPath, message: str, hint: str = "") -> Diagnostic:
    return Diagnostic(
        doc.file, pos.line, pos.col, "error", format_path(path), message, SCHEMA.id, hint
    )
