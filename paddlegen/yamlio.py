"""All of paddlegen's YAML in and out, but the positioned spec loader built on it
(spec/loader.py): rendered text read back fast, objects written canonically, manifests read
as kubeconform reads them.

Canonical YAML is block style, long lines kept whole, Go's booleans and numbers quoted.
PyYAML's representer and constructor cost more than rendering a template does, so the common
shapes (mappings and sequences of strings, integers, booleans and nulls) skip them: each
distinct scalar and key is still spelled (or typed) by PyYAML once and remembered, so every
quoting and typing decision stays PyYAML's. Anything else (a multi-line string, a float, a
long key, an object met twice, a merge key, a tag) goes through PyYAML whole.
tests/property/test_canonical.py holds both paths equal to plain PyYAML.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Block style, long lines kept whole, multi-line strings as literal blocks."""


# PyYAML already quotes what its YAML 1.1 resolver would retype (yes, on, 1.5, ...), but not
# the single letters that Go's yaml.v2 (kubectl, kustomize) still reads as booleans.
_GO_BOOLEANS = {"y", "Y", "n", "N"}
# Nor the numbers only Go reads as numbers (1e3, 1e-05, 0o17): a quantity or env value "1e3"
# would reach the API server as a float. Matched with underscores removed, as Go does.
_GO_NUMBER = re.compile(
    r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?"
    r"|[-+]?0[bBoOxX][0-9a-fA-F]+"
)


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else ('"' if value in _GO_BOOLEANS else None)
    if style is None and _GO_NUMBER.fullmatch(value.replace("_", "")):
        style = "'"  # the quotes PyYAML itself picks for 1.5 or 0x1F, so those stay as they were
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def pyyaml_dump(obj: Any) -> str:
    """The reference spelling of ``obj``; ``dump_yaml`` gives the same bytes, faster."""
    return yaml.dump(
        obj,
        Dumper=_Dumper,
        default_flow_style=False,
        sort_keys=False,
        allow_unicode=True,
        width=1 << 30,
    )


class _Fallback(Exception):
    """A shape the fast path does not write; PyYAML writes the whole document."""


# What PyYAML writes as it is, without asking it (a yaml.dump each, the first time a cold run
# meets a scalar): a word of letters, digits and . _ / - that begins with a letter leaves its
# emitter nothing to quote (yaml/emitter.py analyze_scalar), and its resolver reads no such
# word back as anything but a string except these (yaml/resolver.py: bool, null), nor does Go
# but its booleans (quoted by _represent_str). A key of 128 characters or more PyYAML writes as
# "? key" (emitter.py check_simple_key).
_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9._/-]{0,126}")
_RETYPED = {"yes", "no", "true", "false", "on", "off", "null", "y", "n"}


def _plain(text: str) -> bool:
    return _PLAIN.fullmatch(text) is not None and text.lower() not in _RETYPED


# YAML's line breaks: a scalar PyYAML writes across lines is indented by where it stands.
_BREAK = re.compile("[\n\r\x85\u2028\u2029]")
_CACHE_LIMIT = 200_000  # distinct scalars remembered (a few tens of MB at most)
_scalars: dict[tuple[type, Any], str] = {}
_keys: dict[str, str] = {}


def _remember(cache: dict[Any, str], key: Any, text: str) -> str:
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    cache[key] = text
    return text


def _scalar(value: Any) -> str:
    """A scalar as PyYAML writes it as a mapping value (or a sequence item: same rules)."""
    key = (type(value), value)
    text = _scalars.get(key)
    if text is None:
        if type(value) is str and _plain(value):
            return value
        if key[0] not in (str, int, bool, type(None)):
            raise _Fallback  # floats and the like: rare, left to PyYAML
        text = pyyaml_dump({"k": value})
        if not text.startswith("k: ") or _BREAK.search(text, 0, len(text) - 1):
            raise _Fallback  # a literal block: its indentation depends on where it stands
        text = _remember(_scalars, key, text[3:-1])
    return text


def _key(key: Any) -> str:
    text = _keys.get(key) if type(key) is str else None
    if text is None:
        if type(key) is not str:
            raise _Fallback
        if _plain(key):
            return key
        text = pyyaml_dump({key: 0})
        if not text.endswith(": 0\n") or _BREAK.search(text, 0, len(text) - 1):
            raise _Fallback  # a key PyYAML writes as "? key" (long or multi-line)
        text = _remember(_keys, key, text[:-4])
    return text


def _leaf(value: Any, seen: set[int]) -> str:
    if type(value) is dict or type(value) is list:  # only empty ones are leaves
        _visit(value, seen)
        return "{}" if type(value) is dict else "[]"
    return _scalar(value)


def _visit(value: dict[Any, Any] | list[Any], seen: set[int]) -> None:
    if id(value) in seen:
        raise _Fallback  # met twice: PyYAML writes an anchor and an alias
    seen.add(id(value))


def _lines(value: dict[Any, Any] | list[Any], indent: int, out: list[str], seen: set[int]) -> None:
    """Append the block lines of a non-empty mapping or sequence, PyYAML's layout."""
    _visit(value, seen)
    pad = " " * indent
    if type(value) is dict:
        for k, v in value.items():
            if (type(v) is dict or type(v) is list) and v:
                out.append(f"{pad}{_key(k)}:")
                # PyYAML indents a mapping under its key, but not a sequence.
                _lines(v, indent + 2 if type(v) is dict else indent, out, seen)
            else:
                out.append(f"{pad}{_key(k)}: {_leaf(v, seen)}")
        return
    for v in value:
        if (type(v) is dict or type(v) is list) and v:
            first = len(out)
            _lines(v, indent + 2, out, seen)
            out[first] = f"{pad}- {out[first][indent + 2 :]}"  # the first line shares the dash
        else:
            out.append(f"{pad}- {_leaf(v, seen)}")


def dump_yaml(obj: Any) -> str:
    """``obj`` as canonical YAML, byte for byte what ``pyyaml_dump`` writes."""
    if type(obj) is not dict or not obj:
        return pyyaml_dump(obj)
    out: list[str] = []
    try:
        _lines(obj, 0, out, set())
    except _Fallback:
        return pyyaml_dump(obj)
    out.append("")
    return "\n".join(out)


_TAG = "tag:yaml.org,2002:"
_resolved: dict[tuple[str, bool], str] = {}


class SafeLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The C parser, with each plain scalar's type looked up once per distinct text."""

    def resolve(self, kind: type, value: Any, implicit: Any) -> str:
        if kind is not ScalarNode or not implicit or not implicit[0]:
            resolved: str = super().resolve(kind, value, implicit)
            return resolved
        key = (value, bool(implicit[1]))
        tag = _resolved.get(key)
        if tag is None:
            tag = _remember(_resolved, key, super().resolve(kind, value, implicit))
        return tag


def _build(
    loader: Any, node: Any, memo: dict[int, Any], duplicates: list[str] | None = None
) -> Any:
    """What PyYAML's constructor makes of ``node`` (plain maps, sequences, scalars), without
    its generators; a repeated key is noted in ``duplicates`` when it is given."""
    kind = type(node)
    if kind is ScalarNode:
        return node.value if node.tag == _TAG + "str" else loader.construct_object(node, True)
    if id(node) in memo:  # an alias: the same object, as PyYAML gives
        return memo[id(node)]
    if kind is MappingNode and node.tag == _TAG + "map":
        mapping: dict[Any, Any] = {}
        memo[id(node)] = mapping
        for key, value in node.value:
            if type(key) is not ScalarNode or key.tag == _TAG + "merge":
                raise _Fallback
            mapping[_build(loader, key, memo)] = _build(loader, value, memo, duplicates)
        if duplicates is not None and len(mapping) != len(node.value):
            seen: set[Any] = set()
            for key, _ in node.value:
                name = _build(loader, key, memo)
                if name in seen:
                    duplicates.append(f"duplicate key {name!r}")
                seen.add(name)
        return mapping
    if kind is SequenceNode and node.tag == _TAG + "seq":
        sequence: list[Any] = []
        memo[id(node)] = sequence
        sequence.extend(_build(loader, item, memo, duplicates) for item in node.value)
        return sequence
    raise _Fallback


def load_all(text: str) -> list[Any]:
    """Every document in ``text``, as ``list(yaml.safe_load_all(text))`` gives them."""
    loader = SafeLoader(text)
    try:
        docs = []
        while loader.check_node():
            docs.append(_build(loader, loader.get_node(), {}))
        return docs
    except _Fallback:
        return list(yaml.load_all(text, Loader=SafeLoader))
    finally:
        loader.dispose()


class ManifestLoader(SafeLoader):
    """Reads YAML as kubeconform -strict does: notes duplicate keys, keeps timestamps as text."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[str] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        # `<<: *anchor` first, as the constructor does: a key the mapping sets again after a
        # merge is a duplicate to kubeconform -strict too ("key already set in map").
        self.flatten_mapping(node)
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                self.duplicates.append(f"duplicate key {key!r}")
            seen.add(key)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


ManifestLoader.add_constructor("tag:yaml.org,2002:timestamp", ManifestLoader.construct_yaml_str)


def manifest_documents(text: str) -> Iterator[tuple[Any, list[str]]]:
    """Each YAML document with the duplicate keys found in it: built by `_build` (a third of
    in-process validation's time went to PyYAML's constructor), by PyYAML's constructor
    when a document has merge keys or tags `_build` leaves to it."""
    loader = ManifestLoader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            duplicates: list[str] = []
            try:
                doc = _build(loader, node, {}, duplicates)
            except _Fallback:
                loader.duplicates = []
                doc = loader.construct_document(node)
                duplicates = loader.duplicates
            yield doc, duplicates
    finally:
        loader.dispose()


class TooLarge(Exception):
    """A YAML stream past a bound: where (a mark), and which bound."""

    def __init__(self, mark: Any, message: str) -> None:
        super().__init__(message)
        self.mark = mark
        self.message = message


def check_bounds(text: str, *, max_nodes: int, max_chars: int, max_depth: int) -> None:
    """Raise TooLarge at the first event past a bound: ``max_nodes`` values or ``max_chars``
    characters of scalars in the whole stream, each alias counted as the node it repeats
    (building a 755-byte alias bomb takes gigabytes), or collections nested deeper than
    ``max_depth`` (the C composer recurses on the C stack). Syntax errors are left to the
    loader: this walks the events as far as they parse."""
    loader = SafeLoader(text)
    sizes: dict[str, tuple[int, int]] = {}  # anchor -> the values and characters it repeats
    open_: list[tuple[str | None, int, int]] = []  # (anchor, nodes, chars) where each started
    nodes = chars = 0
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.CollectionStartEvent):
                if len(open_) >= max_depth:
                    raise TooLarge(event.start_mark, f"nests deeper than {max_depth} levels")
                open_.append((event.anchor, nodes, chars))
                nodes += 1
            elif isinstance(event, yaml.CollectionEndEvent):
                anchor, first_nodes, first_chars = open_.pop()
                if anchor is not None:
                    sizes[anchor] = (nodes - first_nodes, chars - first_chars)
            elif isinstance(event, yaml.ScalarEvent):
                nodes, chars = nodes + 1, chars + len(event.value)
                if event.anchor is not None:
                    sizes[event.anchor] = (1, len(event.value))
            elif isinstance(event, yaml.AliasEvent):
                repeated = sizes.get(event.anchor or "", (1, 0))  # unknown: the loader says so
                nodes, chars = nodes + repeated[0], chars + repeated[1]
            if nodes > max_nodes:
                raise TooLarge(event.start_mark, f"expands to more than {max_nodes} values")
            if chars > max_chars:
                raise TooLarge(
                    event.start_mark, f"expands to more than {max_chars} characters of values"
                )
    except yaml.YAMLError:
        return
    finally:
        loader.dispose()
