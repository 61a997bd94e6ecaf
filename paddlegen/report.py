"""Renderings of diagnostics: text (file:line:col), json and GitHub workflow commands."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence

from paddlegen.errors import Diagnostic

# Characters a terminal or a CI log viewer acts on instead of showing, so that a spec value
# reaching a diagnostic could recolour, retitle or rewrite the log, or forge a line: C0 controls
# (ESC starts escape sequences, CR returns to the line start, LF and VT start new lines), DEL,
# C1 controls (CSI and NEL among them), the Unicode line and paragraph separators, the
# bidirectional marks, embeddings, overrides and isolates that reorder what is shown ("Trojan
# Source"), and lone surrogates (undecodable bytes in file names, which would make printing
# fail). Any other text, Chinese or accented letters included, is kept as it is.
_UNPRINTABLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)
_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _SHORT.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def printable(value: str) -> str:
    """``value`` with every character of _UNPRINTABLE shown as a visible escape.

    The escapes are Python's (``\\x1b``, ``\\r``, ``\\u202e``): the same spelling ``repr()`` gives
    the quoted values inside messages, so one value reads the same wherever it appears, and
    each escape is plain ASCII that no terminal interprets. Backslashes are left alone (a
    message's repr() output is already escaped once), so a literal ``\\x1b`` typed in a spec looks
    like an escaped ESC: ambiguous to read, but harmless. Use it for any text from a spec, a
    file name or a tool that is printed to a terminal.
    """
    return _UNPRINTABLE.sub(_escaped, value)


def _summary(diagnostics: Sequence[Diagnostic]) -> list[str]:
    errors = Counter(d.file for d in diagnostics if d.is_error)
    return [f"{n} error{'s' if n != 1 else ''} in {file or 'input'}" for file, n in errors.items()]


# SGR colours of a severity at a terminal: bold red, yellow, cyan.
_COLOURS = {"error": "\x1b[1;31m", "warning": "\x1b[33m", "info": "\x1b[36m"}
_RESET = "\x1b[0m"


def text(diagnostics: Sequence[Diagnostic], *, colour: bool = False) -> str:
    """One line per finding, then the summary; with ``colour``, each severity in its colour
    (added after escaping: the only escape sequences are ours)."""
    # Escaped line by line: the separators are ours, so a whole line holds only field text.
    lines = []
    for d in diagnostics:
        line = printable(str(d))
        if colour and d.severity in _COLOURS:
            at = len(printable(d.location))
            end = at + len(d.severity)
            line = line[:at] + _COLOURS[d.severity] + d.severity + _RESET + line[end:]
        lines.append(line)
    return "".join(line + "\n" for line in lines + [printable(s) for s in _summary(diagnostics)])


def as_json(diagnostics: Sequence[Diagnostic]) -> str:
    fields = ("file", "line", "col", "severity", "path", "message", "rule", "hint", "origin")
    # ensure_ascii escapes C0 controls and all non-ASCII (C1, separators, bidi) as \uXXXX; DEL
    # is ASCII and the only control it leaves raw, and may only occur inside a JSON string.
    found = [{f: getattr(d, f) for f in fields} for d in diagnostics]
    return json.dumps(found, indent=2, ensure_ascii=True).replace("\x7f", "\\u007f") + "\n"


def _escape(value: str, *, prop: bool = False) -> str:
    # Controls first (printable), then GitHub workflow-command escaping; properties also escape
    # ':' and ','. printable() leaves no CR or LF, so a value cannot end the command and start
    # another; the %0D/%0A escapes stay as a second guard. '%' is escaped so that a literal
    # "%0A" in a value is not decoded into a line break.
    value = printable(value)
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return value.replace(":", "%3A").replace(",", "%2C") if prop else value


_GITHUB_LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


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
        level = _GITHUB_LEVELS.get(d.severity, "warning")
        out.append(f"::{level} {','.join(props)}::{_escape(message)}\n")
    return "".join(out)


REPORTERS: dict[str, Callable[[Sequence[Diagnostic]], str]] = {
    "text": text,
    "json": as_json,
    "github": github,
}
