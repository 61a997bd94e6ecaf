"""The fast YAML paths (paddlegen.yamlio) give exactly what plain PyYAML gives."""

from __future__ import annotations

import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from paddlegen import yamlio as canonical

# Keys and strings that stress quoting: YAML indicators, Go/YAML 1.1 booleans and numbers,
# leading and trailing spaces, line breaks, non-ASCII and control characters.
_TRICKY = st.sampled_from(
    [
        "",
        " ",
        "-",
        "- a",
        "? x",
        ": y",
        "#",
        "a #b",
        "a: b",
        "'",
        '"',
        "y",
        "N",
        "yes",
        "off",
        "null",
        "~",
        "1e3",
        "0x1F",
        "0o17",
        "1_000",
        "1.5",
        ".inf",
        "2024-01-01",
        "=",
        "<<",
        "@x",
        "`x",
        "*a",
        "&a",
        "!t",
        "%p",
        "|",
        ">",
        "a\nb",
        "a\n",
        "\ta",
        "a ",
        "é中",
        "\x85",
        "\u2028",
        "k" * 130,
        "{a}",
        "[a]",
        "a,b",
        "Yes",
        "yEs",
        "TRUE",
        "Off",
        "NULL",
        "a-b.c/d_e",
        "k" * 127,
        "k" * 128,
    ]
)
# Words PyYAML writes as they are, but those it reads back as booleans or null (yamlio._plain).
_WORDS = st.from_regex(r"[A-Za-z][A-Za-z0-9._/-]{0,130}", fullmatch=True)
_TEXT = st.one_of(_TRICKY, _WORDS, st.text(max_size=12))
_SCALARS = st.one_of(_TEXT, st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False))
_DATA = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_TEXT, inner, max_size=4)),
    max_leaves=25,
)


@given(st.dictionaries(_TEXT, _DATA, min_size=1, max_size=5))
@example({"a": [{"b": [], "c": {}}, [[1, "x"], {}], None]})
@example({"k" * 130: 1})  # PyYAML writes a long key as "? key"
@example({"s": "line\nbreak", "f": 1.5})
@example({"": {"": "\u2028"}})  # a line break PyYAML keeps raw inside quotes
def test_dump_yaml_equals_pyyaml(data):
    assert canonical.dump_yaml(data) == canonical.pyyaml_dump(data)


@given(st.lists(st.dictionaries(_TEXT, _DATA, min_size=1, max_size=5), min_size=1, max_size=3))
def test_load_all_equals_pyyaml(docs):
    text = yaml.safe_dump_all(docs, allow_unicode=True)
    assert canonical.load_all(text) == list(yaml.safe_load_all(text))


def test_load_all_handles_what_it_hands_to_pyyaml():
    text = (
        "base: &b {x: 1}\nmerged:\n  <<: *b\n  y: 2\nset: !!set {a: null}\n"
        "alias: *b\nwhen: 2024-01-01\nf: 1.5\n"
    )
    assert canonical.load_all(text) == list(yaml.safe_load_all(text))
    (doc,) = canonical.load_all("a: &x [1]\nb: *x\n")
    assert doc["a"] is doc["b"]  # an alias is one object, as PyYAML gives it


def _constructed(text: str) -> list[tuple[object, list[str]]]:
    """What PyYAML's own constructor, with the manifest loader's duplicate notes, gives (the
    notes sorted: their order is the constructor's and does not matter)."""
    loader = canonical.ManifestLoader(text)
    try:
        found = []
        while loader.check_node():
            loader.duplicates = []
            document = loader.construct_document(loader.get_node())
            found.append((document, sorted(loader.duplicates)))
        return found
    finally:
        loader.dispose()


@given(st.lists(st.dictionaries(_TEXT, _DATA, min_size=1, max_size=5), min_size=1, max_size=3))
def test_manifest_documents_equal_pyyaml(docs):
    text = yaml.safe_dump_all(docs, allow_unicode=True)
    found = [(doc, sorted(notes)) for doc, notes in canonical.manifest_documents(text)]
    assert found == _constructed(text)


def test_manifest_documents_note_each_duplicate_key_and_keep_timestamps_as_text():
    text = (
        "a: 1\nb: {c: 2, c: 3}\nwhen: 2024-01-01\nl: [x, {f: 1, f: 2}]\na: 4\n"
        "---\nx: &s {k: 1}\ny: *s\nt: !!set {m: null}\n"
    )
    found = [(doc, sorted(notes)) for doc, notes in canonical.manifest_documents(text)]
    assert found == _constructed(text)
    (first, duplicates), (second, none) = found
    assert first == {"a": 4, "b": {"c": 3}, "when": "2024-01-01", "l": ["x", {"f": 2}]}
    assert duplicates == ["duplicate key 'a'", "duplicate key 'c'", "duplicate key 'f'"]
    assert second["x"] is second["y"] and second["t"] == {"m"} and none == []
