"""Renderings of diagnostics: text (file:line:col), json and GitHub workflow commands."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence

from paddlegen.errors import Diagnostic


def _location(d: Diagnostic) -> str:
    if not d.file:
        return ""
    return f"{d.file}:{d.line}:{d.col}: " if d.line else f"{d.file}: "


def _text_line(d: Diagnostic) -> str:
    message = f"{d.path}: {d.message}" if d.path else d.message
    if d.hint:
        message += f" ({d.hint})"
    if d.origin:
        message += f" (from {d.origin})"
    return f"{_location(d)}{d.severity}: {message} [{d.rule}]"


def _summary(diagnostics: Sequence[Diagnostic]) -> list[str]:
    errors = Counter(d.file for d in diagnostics if d.is_error)
    return [f"{n} error{'s' if n != 1 else ''} in {file or 'input'}" for file, n in errors.items()]


def text(diagnostics: Sequence[Diagnostic]) -> str:
    lines = [_text_line(d) for d in diagnostics] + _summary(diagnostics)
    return "".join(line + "\n" for line in lines)


def as_json(diagnostics: Sequence[Diagnostic]) -> str:
    fields = ("file", "line", "col", "severity", "path", "message", "rule", "hint", "origin")
    return json.dumps([{f: getattr(d, f) for f in fields} for d in diagnostics], indent=2) + "\n"


def _escape(value: str, *, prop: bool = False) -> str:
    # GitHub workflow-command escaping; properties also escape ':' and ','.
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return value.replace(":", "%3A").replace(",", "%2C") if prop else value


def github(diagnostics: Sequence[Diagnostic]) -> str:
    out = []
    for d in diagnostics:
        props = [f"file={_escape(d.file, prop=True)}"] if d.file else []
        if d.line:
            props += [f"line={d.line}", f"col={d.col}"]
        props.append(f"title={_escape('paddlegen ' + d.rule, prop=True)}")
        message = f"{d.path}: {d.message}" if d.path else d.message
        if d.hint:
            message += f" ({d.hint})"
        level = "error" if d.is_error else "warning"
        out.append(f"::{level} {','.join(props)}::{_escape(message)}\n")
    return "".join(out)


REPORTERS: dict[str, Callable[[Sequence[Diagnostic]], str]] = {
    "text": text,
    "json": as_json,
    "github": github,
}
