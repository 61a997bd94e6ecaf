"""Safe YAML loading that keeps the line and column of every key and value."""

from __future__ import annotations

import contextlib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import yaml

from paddlegen.errors import Diagnostic, InputError, Rule, SpecError
from paddlegen.reading import MAX_BYTES, read_bytes
from paddlegen.spec.record import record
from paddlegen.yamlio import SafeLoader

# The rules of what the loader and the schema find in a spec file.
YAML = Rule(
    "yaml",
    (
        "a spec file is one YAML document, a mapping of plain values: valid syntax, no duplicate "
        "keys, no tags, within the size, alias and nesting limits"
    ),
    explanation=(
        "A spec file is one YAML document, a mapping of plain values. Syntax errors, duplicate "
        "keys, tags, and documents past the size, alias or nesting limits are refused before "
        "anything else reads the file."
    ),
    severity="error",
)

ENCODING = Rule(
    "encoding",
    "a spec file is UTF-8 text, without NUL bytes",
    explanation=(
        "A spec file is UTF-8 text. A byte that is not UTF-8, or a NUL byte, means the file is not "
        "a spec (or not one paddlegen can read)."
    ),
    severity="error",
)

SCHEMA = Rule(
    "schema",
    (
        "a spec matches its JSON Schema (`paddlegen schema`): known fields, types, enums, "
        "quantities and names"
    ),
    explanation=(
        "A spec is checked against its JSON Schema (`paddlegen schema`) before any rule: unknown "
        "fields, wrong types, values outside an enum, malformed quantities and names."
    ),
    severity="error",
)

# The C parser is several times faster; both report the same marks.
_Loader = SafeLoader

# Bounds alias expansion (billion laughs) and huge documents; the fullest example has 63
# values. Building 20,000 takes about 0.1 s, so even a bomb is refused quickly.
MAX_NODES = 20_000
MAX_DEPTH = 64  # real specs nest fewer than 10 levels
# Without aliases the values of a document hold fewer characters than its text; an anchor
# repeated many times could otherwise turn a 1 MB file into gigabytes of manifests.
MAX_VALUE_CHARS = MAX_BYTES

FieldPath = tuple[str | int, ...]

_TAG = "tag:yaml.org,2002:"
_CONSTRUCT = yaml.SafeLoader("")  # only its scalar constructors are used; they are stateless


@dataclass(frozen=True)
class Position:
    """Where a value of a spec file starts: its line and column."""

    line: int
    col: int


@record
class Document:
    """A loaded spec: plain data plus where each value (and each mapping key) stands."""

    file: str
    data: Any
    values: dict[FieldPath, Position]
    keys: dict[FieldPath, Position]
    # The source text of each value YAML typed (a number, boolean or null): `1.10`, `on`,
    # which messages show as written rather than as Python reads them (1.1, True).
    written: dict[FieldPath, str] = field(default_factory=dict)

    def as_written(self, path: FieldPath, value: Any) -> str:
        """``value`` as the spec spells it at ``path``: its YAML source text when YAML typed
        it, else its repr."""
        if not isinstance(value, str) and path in self.written:
            return self.written[path]
        return repr(value)

    def where(self, path: FieldPath, *, key: bool = False) -> Position:
        """Position of the value at ``path`` (or of its key), else of the nearest ancestor."""
        table = self.keys if key else self.values
        while path:
            if path in table:
                return table[path]
            if not key and path in self.values:
                return self.values[path]
            path = path[:-1]
        return self.values.get((), Position(1, 1))


def format_path(path: FieldPath) -> str:
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def read_spec(path: str | Path) -> Document:
    """Read and parse one spec file; missing or unreadable files raise InputError (exit 2)."""
    return parse_spec(read_spec_bytes(path), str(path))


def read_spec_bytes(path: str | Path) -> bytes:
    """The bytes of a spec file (at most MAX_BYTES + 1); problems raise InputError (exit 2)."""
    name = str(path)
    try:
        return read_bytes(name, MAX_BYTES)
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{name}: is a directory, not a spec file") from None
    except OSError as exc:
        raise InputError(f"{name}: cannot read: {exc.strerror or exc}") from None


def parse_spec(raw: bytes | str, name: str = "<string>") -> Document:
    """Parse spec text; every problem becomes a SpecError with a position."""
    if isinstance(raw, bytes):
        if len(raw) > MAX_BYTES:
            _fail(
                name,
                1,
                1,
                f"file is larger than {MAX_BYTES} bytes; specs are limited to {MAX_BYTES}",
                "size",
            )
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line, col = _line_col(raw[: exc.start])
            _fail(name, line, col, f"not UTF-8 text (byte 0x{raw[exc.start]:02x})", ENCODING.id)
    else:
        text = raw
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            line, col = _line_col(text[: exc.start].encode())
            _fail(name, line, col, "not UTF-8 text (a lone surrogate)", ENCODING.id)
    if "\x00" in text:
        line, col = _line_col(text[: text.index("\x00")].encode())
        _fail(name, line, col, "binary data (a NUL byte) in a YAML file", ENCODING.id)
    node = _compose_single(text, name)
    builder = _Builder(name)
    data = builder.build(node, ())
    return Document(name, data, builder.values, builder.keys, builder.written)


def _line_col(prefix: bytes) -> tuple[int, int]:
    return prefix.count(b"\n") + 1, len(prefix.rsplit(b"\n", 1)[-1]) + 1


def _fail(name: str, line: int, col: int, message: str, rule: str) -> NoReturn:
    raise SpecError(message, [Diagnostic(name, line, col, "error", "$", message, rule)])


def _compose_single(text: str, name: str) -> yaml.Node:
    loader = _Loader(text)
    try:
        _prescan(text, name)
        if not loader.check_node():
            _fail(name, 1, 1, "the file is empty; a spec is a YAML mapping", YAML.id)
        node = loader.get_node()
        if loader.check_node():
            mark = loader.peek_event().start_mark
            _fail(
                name,
                mark.line + 1,
                mark.column + 1,
                "several YAML documents in one file; put one spec per file",
                YAML.id,
            )
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        if _char_at(text, line, col) == "\t":  # libyaml only says it "cannot start any token"
            problem = "a tab character; YAML indents with spaces only"
        _fail(name, line, col, f"YAML syntax: {problem}", YAML.id)
    except yaml.reader.ReaderError as exc:
        line, col = _line_col(text[: exc.position].encode())
        _fail(
            name,
            line,
            col,
            f"YAML: {exc.reason} (U+{exc.character:04X})"
            if isinstance(exc.character, int)
            else f"YAML: {exc.reason}",
            YAML.id,
        )
    except yaml.YAMLError as exc:
        _fail(name, 1, 1, f"YAML: {str(exc).splitlines()[0]}", YAML.id)
    except RecursionError:
        _fail(name, 1, 1, "the document nests too deeply", YAML.id)
    finally:
        loader.dispose()
    if node is None:
        _fail(name, 1, 1, "the file is empty; a spec is a YAML mapping", YAML.id)
    found: yaml.Node = node
    return found


def _char_at(text: str, line: int, col: int) -> str:
    """The character at 1-based ``line``:``col``, or "" past the end."""
    lines = text.split("\n")
    return lines[line - 1][col - 1 : col] if line <= len(lines) else ""


class _Slot:
    """Where the prescan is inside one open collection."""

    __slots__ = ("mapping", "count", "key", "label")

    def __init__(self, mapping: bool) -> None:
        self.mapping = mapping
        self.count = 0
        self.key = "?"
        self.label: str | int = 0


def _prescan(text: str, name: str) -> None:
    """Refuse documents nested too deeply or with too many nodes, before composing them.

    libyaml's parser keeps its state on the heap, but the C composer recurses on the C stack:
    about 100,000 nested brackets kill the interpreter with a segfault. Walking the events first
    is cheap and stops a hostile file early, with its position and field path.
    """
    try:
        _walk_events(text, name)
    except yaml.MarkedYAMLError as exc:
        # libyaml 0.2.6 and later refuse nesting past 1,000 levels themselves, found while
        # scanning ahead of the events given out so far (up to 1,024 characters on a line, to
        # tell keys apart), so the walk never saw the levels past MAX_DEPTH. The text before
        # libyaml's error holds them: walking it reports paddlegen's limit, at its position
        # and field path, whatever libyaml's own limit is. Any other error stands as it was.
        mark = exc.problem_mark
        if mark is not None and 0 < mark.index < len(text):
            with contextlib.suppress(yaml.YAMLError):
                _walk_events(text[: mark.index], name)
        raise


def _walk_events(text: str, name: str) -> None:
    """Count nodes and nesting over the event stream; SpecError at the first limit crossed."""
    loader = _Loader(text)
    stack: list[_Slot] = []
    nodes = documents = 0
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
            if isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                stack.pop()
                continue
            if not isinstance(event, yaml.NodeEvent):
                continue
            if documents > 1:
                _several_documents(text, name, event)
            nodes += 1
            if stack:
                top = stack[-1]
                if top.mapping and top.count % 2 == 0:  # a key: its value sits under it
                    top.key = event.value if isinstance(event, yaml.ScalarEvent) else "?"
                top.label = top.key if top.mapping else top.count
                top.count += 1
            if nodes > MAX_NODES:
                _fail_at(name, event, stack, f"the document has more than {MAX_NODES} values")
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                if len(stack) >= MAX_DEPTH:
                    _fail_at(
                        name, event, stack, f"the document nests deeper than {MAX_DEPTH} levels"
                    )
                stack.append(_Slot(isinstance(event, yaml.MappingStartEvent)))
    finally:
        loader.dispose()


def _several_documents(text: str, name: str, event: yaml.Event) -> NoReturn:
    """Refuse a stream of several documents: as a manifest when the first is a Kubernetes
    object (a file of manifests), else as one spec too many.

    The walk counted the first document within the limits before reaching the second, so
    composing it alone is safe.
    """
    loader = _Loader(text)
    try:
        builder = _Builder(name)
        loader.check_node()  # the stream's start: get_node needs it read
        first = builder.build(loader.get_node(), ())
        doc = Document(name, first, builder.values, builder.keys, builder.written)
    except (yaml.YAMLError, SpecError):
        doc = None  # broken in itself: the documents' count is still the first thing to fix
    finally:
        loader.dispose()
    found = manifest_diagnostic(doc) if doc is not None else None
    if found is not None:
        raise SpecError(found.message, [found])
    _fail_at(name, event, [], "several YAML documents in one file; put one spec per file")


# A Kubernetes object's apiVersion (`v1`, `batch/v1`, `kubeflow.org/v1`,
# `trainer.kubeflow.org/v1alpha1`) and kind (`Job`, `PaddleJob`, `List`): what a manifest
# starts with. A spec's own (`paddlegen/v1`, `TrainingJob`) misspelled is no manifest.
_API_VERSION = re.compile(r"(?:[a-z0-9][-a-z0-9.]*/)?v[1-9][0-9]*(?:(?:alpha|beta)[1-9][0-9]*)?")
_KIND = re.compile(r"[A-Z][A-Za-z0-9]*")
SPEC_API_VERSION, SPEC_KIND = "paddlegen/v1", "TrainingJob"
# A KueueSetup (`paddlegen kueue`'s input, gitops/kueue_setup.py): no spec either.
SETUP_API_VERSION, SETUP_KIND = "setup.paddlegen/v1", "KueueSetup"


def is_setup(data: Any) -> bool:
    """Whether loaded YAML says it is a KueueSetup (by its apiVersion and kind)."""
    return isinstance(data, dict) and (data.get("apiVersion"), data.get("kind")) == (
        SETUP_API_VERSION,
        SETUP_KIND,
    )


def manifest_diagnostic(doc: Document) -> Diagnostic | None:
    """The one finding for a Kubernetes manifest (or a KueueSetup) given where a spec belongs
    (at its apiVersion, with the command that takes it); None for anything else."""
    data = doc.data
    if not isinstance(data, dict):
        return None
    api, kind = data.get("apiVersion"), data.get("kind")
    if not (isinstance(api, str) and isinstance(kind, str)):
        return None
    if not (_API_VERSION.fullmatch(api) and _KIND.fullmatch(kind)):
        return None
    if api.partition("/")[0] == SPEC_API_VERSION.partition("/")[0] or kind == SPEC_KIND:
        return None
    pos = doc.where(("apiVersion",))
    import shlex  # here: only this message needs it

    if (api, kind) == (SETUP_API_VERSION, SETUP_KIND):
        message = "a KueueSetup, not a paddlegen spec"
        command = shlex.join(["paddlegen", "kueue", doc.file])
        hint = f"keep it out of the specs' folder; {command} writes its objects"
    else:
        message = f"a Kubernetes manifest ({api} {kind}), not a paddlegen spec"
        hint = f"make a spec of it: {shlex.join(['paddlegen', 'import', doc.file])}"
    return Diagnostic(
        doc.file, pos.line, pos.col, "error", "$.apiVersion", message, SCHEMA.id, hint
    )


def _fail_at(name: str, event: yaml.Event, stack: list[_Slot], message: str) -> NoReturn:
    path = format_path(tuple(slot.label for slot in stack))
    mark = event.start_mark
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    raise SpecError(message, [Diagnostic(name, line, col, "error", path, message, YAML.id)])


def _short(tag: str) -> str:
    return "!!" + tag[len(_TAG) :] if tag.startswith(_TAG) else tag


class _Builder:
    """Turns a composed node tree into plain data, recording positions and bounding expansion."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.values: dict[FieldPath, Position] = {}
        self.keys: dict[FieldPath, Position] = {}
        self.written: dict[FieldPath, str] = {}
        self.count = 0
        self.chars = 0  # characters of scalar values built, aliases counted each time
        self.merging: set[int] = set()  # merge sources being expanded (a cycle guard)
        self.path: FieldPath = ()

    def build(self, node: yaml.Node, path: FieldPath) -> Any:
        self.path = path
        self.count += 1
        if self.count > MAX_NODES:
            self._fail(
                node,
                f"the document expands to more than {MAX_NODES} values (an alias bomb?)",
                YAML.id,
            )
        if len(path) > MAX_DEPTH:
            self._fail(node, f"the document nests deeper than {MAX_DEPTH} levels", YAML.id)
        if path not in self.values:  # an alias expanded twice keeps its first position
            self.values[path] = self._pos(node)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            self._check_tag(node, "seq")
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        return self._scalar(node)

    def _mapping(self, node: yaml.MappingNode, path: FieldPath) -> dict[str, Any]:
        self._check_tag(node, "map")
        out: dict[str, Any] = {}
        merged: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _TAG + "merge":
                merged.update(self._merge_source(value_node, path))
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                self._fail(key_node, "a mapping key must be a plain string", YAML.id)
            key = key_node.value  # the text as written: `on:` stays "on", not True
            if key in out:
                first = self.keys[(*path, key)]
                self._fail(
                    key_node,
                    f"duplicate key '{key}' (first defined at line "
                    f"{first.line}); a later value would silently win",
                    YAML.id,
                    (*path, key),
                )
            self.keys[(*path, key)] = self._pos(key_node)
            out[key] = self.build(value_node, (*path, key))
        for key, value in merged.items():
            out.setdefault(key, value)
        return out

    def _merge_source(self, node: yaml.Node, path: FieldPath) -> dict[str, Any]:
        sources = node.value if isinstance(node, yaml.SequenceNode) else [node]
        merged: dict[str, Any] = {}
        for source in sources:
            if not isinstance(source, yaml.MappingNode):
                self._fail(
                    source, "a merge key '<<' needs a mapping or a list of mappings", YAML.id, path
                )
            if id(source) in self.merging:
                self._fail(source, "a merge key '<<' merges a mapping into itself", YAML.id, path)
            self.merging.add(id(source))
            for key, value in self._mapping(source, path).items():
                merged.setdefault(key, value)
            self.merging.discard(id(source))
        return merged

    def _scalar(self, node: yaml.Node) -> Any:
        tag = node.tag
        self.chars += len(node.value)
        if self.chars > MAX_VALUE_CHARS:
            self._fail(
                node,
                f"the values of the document add up to more than {MAX_VALUE_CHARS} "
                "characters (an anchor repeated too often?)",
                YAML.id,
            )
        if tag in ("!", _TAG + "str"):
            return node.value
        if tag in (_TAG + "int", _TAG + "float", _TAG + "bool", _TAG + "null"):
            self.written.setdefault(self.path, node.value)
            return self._typed(node)
        if tag == _TAG + "timestamp":
            return node.value  # a date is just text to Kubernetes
        self._unsupported(node)
        return None  # unreachable: _fail raises

    def _typed(self, node: yaml.Node) -> Any:
        """An explicitly or implicitly typed scalar, refused when Kubernetes could not hold it."""
        kind = _short(node.tag)
        if kind == "!!int" and len(node.value) > 100:  # Python refuses 4300 digits anyway
            self._fail(
                node, f"an integer of {len(node.value)} characters is far too large", YAML.id
            )
        try:
            value = _CONSTRUCT.construct_object(node)
        except (ValueError, KeyError, TypeError, OverflowError):
            self._fail(node, f"{node.value[:40]!r} is not a valid {kind} value", YAML.id)
        if isinstance(value, float) and not math.isfinite(value):
            self._fail(node, f"{node.value!r} is not a finite number", YAML.id)
        return value

    def _check_tag(self, node: yaml.Node, kind: str) -> None:
        if node.tag != _TAG + kind:
            self._unsupported(node)

    def _unsupported(self, node: yaml.Node) -> None:
        self._fail(
            node,
            f"unsupported YAML tag '{_short(node.tag)}'; a spec holds only plain values",
            YAML.id,
        )

    def _pos(self, node: yaml.Node) -> Position:
        return Position(node.start_mark.line + 1, node.start_mark.column + 1)

    def _fail(
        self, node: yaml.Node, message: str, rule: str, path: FieldPath | None = None
    ) -> NoReturn:
        pos = self._pos(node)
        where = format_path(self.path if path is None else path)
        raise SpecError(
            message, [Diagnostic(self.name, pos.line, pos.col, "error", where, message, rule)]
        )
