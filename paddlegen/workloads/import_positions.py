"""`paddlegen import`: where a field of an input object stands in its file
(``file:line:col``), for the notes that name one.

Found when a note asks, not while reading: an input that imports without a note is parsed once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from paddlegen.yamlio import SafeLoader, load_all

FieldPath = tuple[str | int, ...]


@dataclass
class Source:
    """One input file's text, its documents composed (with marks) and loaded when first asked."""

    name: str
    text: str
    _nodes: list[yaml.Node] | None = field(default=None, repr=False)
    _data: list[Any] | None = field(default=None, repr=False)

    def documents(self) -> tuple[list[yaml.Node], list[Any]]:
        if self._nodes is None:
            self._nodes = list(yaml.compose_all(self.text, Loader=SafeLoader))
            self._data = load_all(self.text)
        assert self._data is not None
        return self._nodes, self._data


@dataclass(frozen=True)
class Origin:
    """Where one object of the input came from: its file, its document, and its index among
    a `kind: List`'s items (None for a document that is the object)."""

    source: Source
    document: int
    item: int | None = None

    def position(self, path: FieldPath, value: Any = ...) -> tuple[int, int] | None:
        """``(line, col)`` of the field at ``path`` in the object (of its key, for a mapping's
        field), or None where the object has none there; given ``value``, only where the input
        holds that value (a path into an object the importer changed may have moved)."""
        nodes, data = self.source.documents()
        node: yaml.Node = nodes[self.document]
        obj = data[self.document]
        mark = node.start_mark
        inside: FieldPath = () if self.item is None else ("items", self.item)
        for key in (*inside, *path):
            found = _step(node, obj, key)
            if found is None:
                return None
            node, obj, mark = found
        if value is not ... and obj != value:
            return None
        return mark.line + 1, mark.column + 1

    def nearest(self, path: FieldPath) -> tuple[int, int]:
        """``(line, col)`` of the field at ``path``, else of its nearest parent the object
        holds (a field the input left unset is noted where it would go), else of the object."""
        for end in range(len(path), -1, -1):
            found = self.position(path[:end])
            if found is not None:
                return found
        return 1, 1  # unreachable: an object has a position of its own


def _step(node: yaml.Node, obj: Any, key: str | int) -> Any:
    """The child ``key`` of a composed ``node`` and of its loaded value ``obj``, and the mark
    of the key (a mapping's) or of the item (a list's); None if there is none."""
    if isinstance(node, yaml.MappingNode) and isinstance(obj, dict) and key in obj:
        for key_node, value_node in reversed(node.value):  # the last of duplicate keys wins
            if key_node.value == key:
                return value_node, obj[key], key_node.start_mark
        return None
    listed = isinstance(node, yaml.SequenceNode) and isinstance(obj, list)
    if listed and isinstance(key, int) and 0 <= key < min(len(node.value), len(obj)):
        return node.value[key], obj[key], node.value[key].start_mark
    return None
