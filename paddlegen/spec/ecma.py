"""A JSON Schema `pattern` (an ECMA-262 regular expression) spelled so that Python's re reads it
the same way: what the schema refuses in an editor, paddlegen refuses too."""

from __future__ import annotations

from functools import lru_cache

# ECMA-262 (14th edition, 22.2.2) without flags, where it and Python's re part: `$` is the end
# of the input only (Python's also matches before a final line break, so "name\n" would pass
# "^[a-z]+$"), `.` stops at every line terminator (Python's at "\n" only), `\d` and `\w` are
# ASCII (Python's are Unicode), `\s` is its own set of white space (WhiteSpace and
# LineTerminator: Python's adds U+001C-U+001F and U+0085, lacks U+FEFF).
_LINE_TERMINATORS = "\\n\\r\\u2028\\u2029"
_SPACE = "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_CLASSES = {"d": "0-9", "w": "A-Za-z0-9_", "s": _SPACE}
_OUTSIDE = {
    **{k: f"[{v}]" for k, v in _CLASSES.items()},
    **{k.upper(): f"[^{v}]" for k, v in _CLASSES.items()},
}
# Escapes both read alike: control characters, hex and Unicode code points, back-references.
_SAME = frozenset("nrtfvxu123456789")
_GROUPS = ("(?:", "(?=", "(?!", "(?<=", "(?<!")


@lru_cache(maxsize=256)
def python_pattern(pattern: str) -> str:
    """``pattern`` for Python's ``re.search``, matching what ECMA-262 matches; ValueError for
    what the two could read differently and this does not spell (an escape such as `\\b`, a
    named group, `[]`)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        char = pattern[i]
        if char == "\\":
            if i + 1 >= n:
                raise ValueError(f"pattern {pattern!r} ends in a lone backslash")
            escaped = pattern[i + 1]
            if escaped in _CLASSES and in_class:
                out.append(_CLASSES[escaped])
            elif escaped in _OUTSIDE and not in_class:
                out.append(_OUTSIDE[escaped])
            elif escaped.isalnum() and escaped not in _SAME:
                raise ValueError(f"pattern {pattern!r}: \\{escaped} is not spelled for Python")
            else:
                out.append(char + escaped)
            i += 2
            continue
        if in_class:
            in_class = char != "]"
            out.append(char)
        elif char == "[":
            negated = pattern.startswith("[^", i)
            if pattern.startswith("]", i + 1 + negated):
                raise ValueError(f"pattern {pattern!r}: an empty class reads differently")
            in_class = True
            out.append("[^" if negated else "[")
            i += 1 + negated
            continue
        elif char == "$":
            out.append("\\Z")
        elif char == ".":
            out.append(f"[^{_LINE_TERMINATORS}]")
        elif char == "(" and pattern.startswith("(?", i):
            group = next((g for g in _GROUPS if pattern.startswith(g, i)), None)
            if group is None:
                raise ValueError(f"pattern {pattern!r}: a group Python reads differently")
            out.append(group)
            i += len(group)
            continue
        else:
            out.append(char)
        i += 1
    return "".join(out)
