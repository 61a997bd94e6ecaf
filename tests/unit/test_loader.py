"""loader: plain data, positions, and positioned errors for every kind of broken YAML."""

from __future__ import annotations

import pytest

from paddlegen.errors import InputError, SpecError
from paddlegen.spec.loader import MAX_NODES, Position, format_path, parse_spec, read_spec


def error_of(text: str | bytes) -> tuple[int, int, str, str]:
    with pytest.raises(SpecError) as info:
        parse_spec(text, "s.yaml")
    (d,) = info.value.diagnostics
    return d.line, d.col, d.path, d.message


def test_positions_of_keys_and_values():
    doc = parse_spec("a: 1\nb:\n  c: [x, y]\n", "s.yaml")
    assert doc.data == {"a": 1, "b": {"c": ["x", "y"]}}
    assert doc.where(("b", "c", 1)) == Position(3, 10)
    assert doc.where(("b", "c"), key=True) == Position(3, 3)
    assert doc.where(("b", "missing")) == Position(3, 3)  # nearest ancestor's value


def test_keys_stay_text_and_dates_stay_strings():
    doc = parse_spec("on: 2024-01-01\n", "s.yaml")
    assert doc.data == {"on": "2024-01-01"}


def test_merge_keys_are_expanded():
    doc = parse_spec("base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  y: 3\n", "s.yaml")
    assert doc.data["other"] == {"x": 1, "y": 3}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", (1, 1, "$", "the file is empty; a spec is a YAML mapping")),
        ("# only a comment\n", (1, 1, "$", "the file is empty; a spec is a YAML mapping")),
        (
            "a: 1\n---\nb: 2\n",
            (3, 1, "$", "several YAML documents in one file; put one spec per file"),
        ),
        ("a: 1\nb: [1\n", (3, 1, "$", "YAML syntax: did not find expected ',' or ']'")),
        (
            "a:\n  b: 1\n  b: 2\n",
            (
                3,
                3,
                "$.a.b",
                "duplicate key 'b' (first defined at line 2); a later value would silently win",
            ),
        ),
        (
            "a: !!python/object/apply:os.system [ls]\n",
            (
                1,
                4,
                "$.a",
                "unsupported YAML tag '!!python/object/apply:os.system'; "
                "a spec holds only plain values",
            ),
        ),
        (
            "a: !custom x\n",
            (1, 4, "$.a", "unsupported YAML tag '!custom'; a spec holds only plain values"),
        ),
        (b"a: \xff\n", (1, 4, "$", "not UTF-8 text (byte 0xff)")),
        ("a: 1\nb: \x00\n", (2, 4, "$", "binary data (a NUL byte) in a YAML file")),
    ],
)
def test_broken_yaml_is_positioned(text, expected):
    assert error_of(text) == expected


def test_alias_bomb_is_bounded():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    line, col, _, message = error_of("\n".join(lines) + "\n")
    assert f"more than {MAX_NODES} values" in message


def test_oversized_file_is_refused():
    _, _, _, message = error_of(b"a: " + b"x" * (2 * 1024 * 1024))
    assert "specs are limited to" in message


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_spec(tmp_path / "nope.yaml")
    with pytest.raises(InputError, match="is a directory"):
        read_spec(tmp_path)


def test_format_path():
    assert format_path(("spec", "env", 0, "name")) == "$.spec.env[0].name"
    assert format_path(()) == "$"


def test_a_tab_in_the_indentation_is_named_as_such():
    with pytest.raises(SpecError) as info:
        parse_spec("spec:\n\tworker: {}\n", "t.yaml")
    (d,) = info.value.diagnostics
    assert (d.line, d.col) == (2, 1)
    assert d.message == "YAML syntax: a tab character; YAML indents with spaces only"


def test_the_security_page_states_the_loaders_limits():
    from tests.conftest import ROOT

    page = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    assert f"more than {MAX_NODES:,} values after alias expansion" in page
