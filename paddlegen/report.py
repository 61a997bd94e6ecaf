"""Renderings of diagnostics: text (file:line:col), json, GitHub workflow commands, and the
CI documents SARIF (code scanning) and JUnit XML (test reports); the rules they name; and
what `plan` prints of a merge plan (text, JSON, Markdown)."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paddlegen.errors import Diagnostic

if TYPE_CHECKING:
    from paddlegen.errors import Rule
    from paddlegen.gitops.merge import Change, MergePlan

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


def printable_lines(value: str) -> str:
    """``value`` (a file's text, which may hold anything) with each line ``printable``, its
    line breaks kept."""
    return "".join(
        printable(line[:-1]) + "\n" if line.endswith("\n") else printable(line)
        for line in value.splitlines(keepends=True)
    )


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


@dataclass(frozen=True)
class Run:
    """What a report of a whole run says besides its findings: the command (``validate``),
    and the spec files it read, each a JUnit test case whether it has findings or not."""

    command: str = ""
    inputs: tuple[str, ...] = ()


def as_json(diagnostics: Sequence[Diagnostic], run: Run = Run()) -> str:
    """The findings as a JSON list: the document, whatever the ``run`` (a reporter of whole
    runs, like sarif and junit, that scripts read as it was before those came)."""
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


SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
_SARIF_LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def sarif(diagnostics: Sequence[Diagnostic], run: Run = Run()) -> str:
    """A SARIF 2.1.0 log of one run (GitHub code scanning): a result per finding in a file, at
    its line and column (line 1 for a whole file), with a path relative to the working
    directory; what no file holds (a missing tool, the run's summary) as the invocation's
    notifications; each rule id used, with its declaration's texts (``declared_rules``).

    Texts are escaped as for a terminal (``printable``): code scanning shows them to people.
    """
    from paddlegen import __version__

    rules = sorted({d.rule for d in diagnostics})
    declared = {rule.id: rule for rule in declared_rules()}
    index = {rule: i for i, rule in enumerate(rules)}
    results = [_sarif_result(d, index[d.rule]) for d in diagnostics if d.file]
    notes = [_sarif_notification(d) for d in diagnostics if not d.file]
    invocation: dict[str, object] = {
        # False when paddlegen could not do its work (exit 2: an error that is in no file).
        "executionSuccessful": not any(d.is_error and not d.file for d in diagnostics),
    }
    if notes:
        invocation["toolExecutionNotifications"] = notes
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "paddlegen",
                        "version": __version__,
                        "rules": [_sarif_rule(rule, declared) for rule in rules],
                    }
                },
                "invocations": [invocation],
                "columnKind": "unicodeCodePoints",  # the loader counts characters, not UTF-16
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=True).replace("\x7f", "\\u007f") + "\n"


def _sarif_message(d: Diagnostic, *, at_origin: bool = False) -> dict[str, str]:
    message = f"{d.path}: {d.message}" if d.path else d.message
    if d.hint:
        message += f" ({d.hint})"
    if d.origin:
        message += f" (in {d.file})" if at_origin else f" (from {d.origin})"
    return {"text": printable(message)}


def _sarif_result(d: Diagnostic, rule_index: int) -> dict[str, object]:
    """A finding at its line; one in a whole file (a manifest's) at the spec line it came from
    when known, where the fix goes (and the manifest file may be one only rendered in memory),
    else at the file's first line (code scanning places a result by its line)."""
    origin = None if d.line else _origin(d)
    file, line, col = origin or (d.file, d.line, d.col)
    region = {"startLine": line or 1, **({"startColumn": col} if line and col else {})}
    return {
        "ruleId": d.rule,
        "ruleIndex": rule_index,  # in tool.driver.rules
        "level": _SARIF_LEVELS.get(d.severity, "warning"),
        "message": _sarif_message(d, at_origin=origin is not None),
        "locations": [
            {"physicalLocation": {"artifactLocation": _artifact(file), "region": region}}
        ],
    }


def _origin(d: Diagnostic) -> tuple[str, int, int] | None:
    """The spec position a manifest finding came from (``origin``, ``file:line:col``)."""
    file, *position = d.origin.rsplit(":", 2)
    if file and len(position) == 2 and all(p.isdigit() for p in position):
        return file, int(position[0]), int(position[1])
    return None


def _artifact(file: str) -> dict[str, str]:
    """A file as a URI: relative to the working directory below it (what code scanning
    resolves from the repository's root), else absolute; percent-encoded, so that no file name
    can be read as another part of the URI."""
    from pathlib import Path
    from urllib.parse import quote

    path = os.path.abspath(file)
    relative = os.path.relpath(path)
    if relative != os.pardir and not relative.startswith(os.pardir + os.sep):
        return {"uri": quote(Path(relative).as_posix()), "uriBaseId": "%SRCROOT%"}
    return {"uri": Path(path).as_uri()}


def _sarif_notification(d: Diagnostic) -> dict[str, object]:
    return {
        "level": _SARIF_LEVELS.get(d.severity, "warning"),
        "message": _sarif_message(d),
        "descriptor": {"id": d.rule},
    }


def explanation(name: str | None = None) -> str:
    """What `paddlegen explain NAME` prints: the rule's text when ``name`` is a declared
    rule's id, else the spec field's (the top-level fields without ``name``)."""
    from paddlegen.authoring.explain import explain, format_doc, format_rule
    from paddlegen.rules import REQUIRED

    rule = next((r for r in declared_rules() if r.id == name), None)
    if rule is not None:
        return format_rule(rule, required=rule.id in REQUIRED)
    return format_doc(explain(name))


def declared_rules() -> tuple[Rule, ...]:
    """Every rule paddlegen reports findings of, each declared where its findings are made:
    the semantic rules (``paddlegen.rules.REGISTRY``), then the others, in the rules
    reference's order."""
    from paddlegen import errors, sdk
    from paddlegen.authoring import import_shapes
    from paddlegen.gitops import kueue_fit, kueue_setup, merge
    from paddlegen.output import drift, owner, removals
    from paddlegen.rules import REGISTRY, ignores
    from paddlegen.spec import loader
    from paddlegen.validate import inprocess, kubeconform, kueue_queues, patched, server
    from paddlegen.workloads import import_notes

    return (
        *REGISTRY,
        # the loader, the schema and the spec set
        loader.YAML,
        loader.ENCODING,
        loader.SCHEMA,
        owner.JOB_NAME,
        ignores.UNUSED,
        ignores.REFUSED,
        # manifests
        kubeconform.RULE,
        inprocess.RULE,
        patched.RULE,
        server.RULE,
        kueue_queues.RULE,
        # check, diff and the run's summary
        drift.STALE,
        drift.MISSING,
        drift.EXTRA,
        drift.UNKNOWN,
        drift.CUSTOM_RULE,
        drift.LEFTOVER,
        # render, check --fix and plan
        removals.REMOVAL,
        merge.UNASKED_RERUN,
        errors.SUMMARY,
        # import and the SDK
        import_notes.IMPORT_NOTE,
        import_notes.IMPORT_LOSSY,
        import_shapes.RULE,
        sdk.SDK_WORKLOAD,
        # errors without findings
        errors.INPUT,
        errors.OUTPUT,
        errors.TOOL,
        errors.TEMPLATE,
        errors.USAGE,
        errors.VALUE,
        errors.ARGUMENT,
        errors.ERROR,
        errors.INTERNAL,
        # `paddlegen kueue`'s input, and the queued specs against it
        *kueue_setup.RULES,
        *kueue_fit.RULES,
    )


def _sarif_rule(rule: str, declared: dict[str, Rule]) -> dict[str, object]:
    found: dict[str, object] = {"id": rule}
    if rule in declared:
        summary = declared[rule].summary
        plain = printable(summary.replace("`", ""))
        # The short form is the first clause, what code scanning shows as the rule's name.
        short = re.split(r": |; | \(", plain, maxsplit=1)[0]
        found["shortDescription"] = {"text": short}
        found["fullDescription"] = {"text": plain}
        found["help"] = {"text": plain, "markdown": printable(summary)}
    return found


def junit(diagnostics: Sequence[Diagnostic], run: Run = Run()) -> str:
    """JUnit XML of one run (GitLab, Jenkins): one test suite, a test case per spec file (by
    the spec a manifest finding came from, when known; the file itself else), a ``failure`` per
    error. Warnings and notes fail nothing, as they fail no run: they are the test case's
    ``system-out``, and those in no file the suite's. Errors in no file (exit 2) are an
    ``error`` of a test case named after the command.

    ``failure`` has no ``type``: GitLab reads the XML with Rails' Hash.from_xml, which takes a
    ``type`` attribute for a type cast and refuses ``yaml`` (a rule id) outright.
    """
    from xml.sax.saxutils import escape, quoteattr

    suite = f"paddlegen {run.command}".strip()
    classname = suite.replace(" ", ".")
    cases: dict[str, list[Diagnostic]] = {name: [] for name in run.inputs}
    loose: list[Diagnostic] = []
    for d in diagnostics:
        name = _spec_file(d) or (suite if d.is_error else "")
        (cases.setdefault(name, []) if name else loose).append(d)
    failed = sum(any(d.is_error for d in found) and name != suite for name, found in cases.items())
    errors = int(any(d.is_error for d in cases.get(suite, [])))
    counts = f'tests="{len(cases)}" failures="{failed}" errors="{errors}"'
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f"<testsuites name={quoteattr(suite)} {counts}>",
        f'  <testsuite name={quoteattr(suite)} {counts} skipped="0">',
    ]
    for name in sorted(cases):
        found = sorted(cases[name])
        head = f"    <testcase classname={quoteattr(classname)} name={quoteattr(_xml_text(name))}"
        if not found:
            lines.append(head + "/>")
            continue
        lines.append(head + ">")
        tag = "error" if name == suite else "failure"
        for d in (d for d in found if d.is_error):
            text = _xml_text(str(d))
            lines.append(f"      <{tag} message={quoteattr(text)}>{escape(text)}</{tag}>")
        lines += _system_out([d for d in found if not d.is_error], "      ")
        lines.append("    </testcase>")
    lines += _system_out(sorted(loose), "    ")
    lines += ["  </testsuite>", "</testsuites>"]
    # ASCII, the rest as character references (as json's escapes): any stdout takes it.
    return "".join(line + "\n" for line in lines).encode("ascii", "xmlcharrefreplace").decode()


def _xml_text(value: str) -> str:
    """``printable``, and the two characters XML 1.0 has no place for that it leaves."""
    return printable(value).replace("\ufffe", "\\ufffe").replace("\uffff", "\\uffff")


def _spec_file(d: Diagnostic) -> str:
    """The spec a finding is about: its origin's (a spec position, or a spec file for a
    rendered file that is stale), else its own file."""
    origin = _origin(d)
    return origin[0] if origin else d.origin or d.file


def _system_out(diagnostics: Sequence[Diagnostic], indent: str) -> list[str]:
    from xml.sax.saxutils import escape

    if not diagnostics:
        return []
    text = "\n".join(_xml_text(str(d)) for d in diagnostics)
    return [f"{indent}<system-out>{escape(text)}</system-out>"]


REPORTERS: dict[str, Callable[..., str]] = {
    "text": text,
    "json": as_json,
    "github": github,
    "sarif": sarif,
    "junit": junit,
}
# The formats that make one document of a whole run (printed when it ends), and take its Run.
DOCUMENTS = ("json", "sarif", "junit")


def _where(c: Change) -> str:
    return f"{c.job} (environment {c.environment})" if c.environment else c.job


def plan_text(plan: MergePlan) -> str:
    """A line per Application that changes, then the counts; unchanged ones only counted."""
    lines = [
        f"{c.action:<7} {_where(c)}" + (f": {c.reason}" if c.reason else "") for c in plan.changed
    ]
    lines.append(f"merging into {plan.base}: {plan.counts()}")
    return "".join(printable(line) + "\n" for line in lines)


def plan_json(plan: MergePlan) -> str:
    """``{"targets": [{"job", "environment", "action", "reason"}]}``, every Application."""
    return json.dumps({"targets": [c.as_dict() for c in plan.changes]}, indent=2) + "\n"


_MARKDOWN = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")


def _md(value: str) -> str:
    """Text from a spec or a file name, shown as itself in a table cell (no markup, no HTML)."""
    return _MARKDOWN.sub(r"\\\1", printable(value))


def plan_markdown(plan: MergePlan) -> str:
    """A pull-request comment: the counts, and a table of the Applications that change (in
    bold what plan fails on unless allowed)."""
    out = [
        f"### paddlegen plan: merging into {_md(plan.base)}",
        "",
        f"{plan.counts()}. Each row is an Argo CD Application; under Argo CD every change to "
        "one runs its job.",
    ]
    if plan.changed:
        out += ["", "| job | environment | action | reason |", "| --- | --- | --- | --- |"]
        out += [
            f"| {_md(c.job)} | {_md(c.environment or '')} | "
            + (c.action if c.asked else f"**{c.action}**")
            + f" | {_md(c.reason)} |"
            for c in plan.changed
        ]
    return "\n".join(out) + "\n"


# `paddlegen plan --output-format`: how the plan is printed.
PLAN_FORMATS: dict[str, Callable[[MergePlan], str]] = {
    "text": plan_text,
    "json": plan_json,
    "markdown": plan_markdown,
}
