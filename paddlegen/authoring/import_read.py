"""`paddlegen import`'s input: read within the spec loader's bounds, every document a Kubernetes
object (refused at its line otherwise), its null fields dropped as the API server drops them."""

from __future__ import annotations

from typing import Any, NoReturn

import yaml

from paddlegen.errors import InputError
from paddlegen.reading import MAX_BYTES, read_bytes, read_stdin
from paddlegen.spec.loader import MAX_DEPTH, MAX_NODES, MAX_VALUE_CHARS
from paddlegen.workloads.import_notes import dotted
from paddlegen.workloads.import_positions import FieldPath, Origin, Source
from paddlegen.yamlio import TooLarge, check_bounds, load_all

STDIN = "-"


def read_input(name: str) -> str:
    """The text of the input file ``name`` (``-``: standard input), a regular file or stdin of
    at most MAX_BYTES of UTF-8; InputError (exit 2) naming it otherwise."""
    shown = "<stdin>" if name == STDIN else name
    try:
        raw = read_stdin(MAX_BYTES) if name == STDIN else read_bytes(name, MAX_BYTES)
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except OSError as exc:
        raise InputError(f"{name}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_BYTES:
        raise InputError(
            f"{shown}: larger than {MAX_BYTES} bytes, the most import reads from one input: "
            "split it into several files"
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line, col = before.count(b"\n") + 1, len(before.rsplit(b"\n", 1)[-1]) + 1
        byte = raw[exc.start]
        raise InputError(f"{shown}:{line}:{col}: not UTF-8 text (byte 0x{byte:02x})") from None


def located_objects(name: str, text: str) -> list[tuple[dict[str, Any], Origin]]:
    """Every object of the YAML stream ``text`` (file ``name``; a `kind: List`'s items each),
    and where it stands; InputError at the first place that is no Kubernetes object."""
    try:
        # The spec loader's bounds, but a value per character of text (no alias bomb):
        # a manifest holds more values than a spec.
        nodes = max(MAX_NODES, len(text))
        check_bounds(text, max_nodes=nodes, max_chars=MAX_VALUE_CHARS, max_depth=MAX_DEPTH)
        docs = load_all(text)
    except TooLarge as exc:
        where = f"{name}:{exc.mark.line + 1}:{exc.mark.column + 1}"
        message = f"{where}: the input {exc.message} (an alias repeated too often?)"
        raise InputError(message) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{name}:{mark.line + 1}:{mark.column + 1}" if mark else name
        raise InputError(f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    source = Source(name, text)
    objects: list[tuple[dict[str, Any], Origin]] = []
    for index, doc in enumerate(docs):
        doc = without_nulls(doc)
        if doc is None:
            continue
        if isinstance(doc, dict) and doc.get("kind") == "List":
            items = doc.get("items", [])
            if not isinstance(items, list):
                _refuse(Origin(source, index), ("items",), f"a List's items are {_a(items)}")
            found = [(obj, Origin(source, index, i)) for i, obj in enumerate(items)]
        else:
            found = [(doc, Origin(source, index))]
        for obj, origin in found:
            _check_object(obj, origin)
        objects += found
    return objects


def without_nulls(value: Any) -> Any:
    """``value`` without the mapping keys whose value is null, at any depth: the API server
    reads `labels:` or `claimRef: null` as no labels and no claimRef, and so does import."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(item) for item in value]
    return value


def _check_object(obj: Any, origin: Origin) -> None:
    """Refuse ``obj`` unless it names itself as a Kubernetes object does (apiVersion and kind
    strings, a metadata mapping with a name string) and holds no null list item (its fields'
    types are import_shapes.py's to check)."""
    if not isinstance(obj, dict):
        _refuse(origin, (), f"a document is {_a(obj)}, not a Kubernetes object")
    _check_identity(obj, origin)
    empty = _null_item(obj, ())
    if empty is not None:
        _refuse(origin, empty, f"{dotted(empty)} is an empty (null) list item")


def _null_item(value: Any, at: FieldPath) -> FieldPath | None:
    """Where the first null list item below ``value`` is: unlike a null field, which is no
    field, it is an item the API server reads as empty, and refuses."""
    if not isinstance(value, (dict, list)):
        return None
    for key, item in value.items() if isinstance(value, dict) else enumerate(value):
        if item is None:
            return (*at, key)
        found = _null_item(item, (*at, key))
        if found is not None:
            return found
    return None


def _check_identity(obj: dict[str, Any], origin: Origin) -> None:
    for path in (("apiVersion",), ("kind",), ("metadata",), ("metadata", "name")):
        value: Any = obj
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        wanted = dict if path == ("metadata",) else str
        if not isinstance(value, wanted):
            field = ".".join(map(str, path))
            said = "missing or empty" if value is None else f"{_a(value)}, not {_a(wanted())}"
            _refuse(
                origin,
                path,
                f"{field} is {said}: a Kubernetes object has apiVersion, kind and metadata.name",
            )


def _refuse(origin: Origin, path: FieldPath, message: str) -> NoReturn:
    """InputError at the field at ``path`` of ``origin``'s object (at its parent, or at the
    object, where the field is missing)."""
    where = None
    while where is None and path:
        where = origin.position(path)
        path = path[:-1]
    where = where or origin.position(()) or (1, 1)
    raise InputError(f"{origin.source.name}:{where[0]}:{where[1]}: {message}")


_KINDS = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}


def _a(value: Any) -> str:
    """What ``value`` is, for a message: a mapping, a list, a number (5), ..."""
    for kind, said in _KINDS.items():
        if isinstance(value, kind):
            return said
    return f"a number ({value})" if isinstance(value, (int, float)) else type(value).__name__
