"""Diagnostics, the exception tree and exit codes: errors are data until the CLI shows them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field

EXIT_OK = 0
EXIT_FINDINGS = 1  # invalid spec, invalid manifests, stale output
EXIT_ERROR = 2  # usage, I/O, missing or failing tool, internal error, no answer to a prompt
EXIT_BROKEN_PIPE = 141  # the reader of stdout closed it: 128 + SIGPIPE, as a shell reports it

# A finding's severities, from the gravest.
SEVERITIES = ("error", "warning", "info")


# Compared by identity, printed as objects (eq=False, repr=False): nothing compares or prints
# one, and dataclasses compiles each method it generates at every start.
@dataclass(frozen=True, eq=False, repr=False)
class Rule:
    """A rule id, declared once where its findings are made: the id (what findings print and
    a spec's ``ignore`` entries name), its summary (Markdown, a line of the rules reference
    and SARIF's description), its explanation (what it checks and why that matters, for
    ``explain`` and the reference), the severity of its findings, and ``also`` the other
    severities a finding of it may give itself."""

    id: str
    # The summary, or what words it when it is read: one that names workloads reads their
    # registry entries, which a run loads only as its specs need them (paddlegen/workloads).
    summarized: str | Callable[[], str]
    _: KW_ONLY
    explanation: str
    severity: str
    also: tuple[str, ...] = ()

    @property
    def summary(self) -> str:
        return self.summarized if isinstance(self.summarized, str) else self.summarized()

    @property
    def severities(self) -> tuple[str, ...]:
        """Every severity its findings can have, from the gravest."""
        return tuple(s for s in SEVERITIES if s == self.severity or s in self.also)


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One finding, positioned in a file where possible.

    ``path`` is a JSONPath-like field path (``$.spec.worker.replicas``) in the spec, or
    ``Kind/name field.path`` for a manifest finding. ``origin`` optionally names the spec
    position (``file:line:col``) that a manifest finding came from.
    """

    file: str = ""
    line: int = 0
    col: int = 0
    severity: str = "error"  # error | warning | info (what import did, nothing wrong)
    path: str = ""
    message: str = ""
    rule: str = ""
    hint: str = ""
    origin: str = field(default="", compare=False)

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    @property
    def location(self) -> str:
        """What the text line starts with: ``file:line:col: ``, ``file: `` or nothing."""
        if not self.file:
            return ""
        return f"{self.file}:{self.line}:{self.col}: " if self.line else f"{self.file}: "

    def __str__(self) -> str:
        """The line the text report prints: ``file:line:col: severity: path: message [rule]``
        (report.text escapes control characters for terminals on top of it)."""
        where = self.location
        message = f"{self.path}: {self.message}" if self.path else self.message
        if self.hint:
            message += f" ({self.hint})"
        if self.origin:
            message += f" (from {self.origin})"
        return f"{where}{self.severity}: {message} [{self.rule}]"


# The rules of what a run reports besides findings in a file: errors, and its summary.
ERROR = Rule(
    "error",
    "an error paddlegen expected",
    explanation="An error paddlegen expected that has no more specific rule.",
    severity="error",
)

INPUT = Rule(
    "input",
    "every file named can be read",
    explanation=(
        "Every file named can be read: a missing or unreadable file, or a folder where a file was "
        "expected, ends the run."
    ),
    severity="error",
)

OUTPUT = Rule(
    "output",
    "the output can be written without overwriting files paddlegen did not make",
    explanation="The output can be written, without overwriting files paddlegen did not make.",
    severity="error",
)

TOOL = Rule(
    "tool",
    "an external tool (kubeconform, kubectl) is there and answers",
    explanation=(
        "An external tool (kubeconform, kubectl) is there and answers: a missing one, or one that "
        "crashed, timed out or spoke nonsense, ends the run."
    ),
    severity="error",
)

TEMPLATE = Rule(
    "template",
    "every template renders",
    explanation="Every template renders; a failing one names the template and its line.",
    severity="error",
)

USAGE = Rule(
    "usage",
    "the command line is one paddlegen takes",
    explanation=(
        "The command line is one paddlegen takes: an unknown option, a missing argument, or a "
        "prompt that met the end of its input."
    ),
    severity="error",
)

VALUE = Rule(
    "value",
    "every value given is one paddlegen can take",
    explanation=(
        "Every value given to a library function is one it can take, such as a well-formed "
        "quantity or Dockerfile."
    ),
    severity="error",
)

ARGUMENT = Rule(
    "argument",
    "the arguments given agree with each other",
    explanation="The arguments given to the SDK agree with each other.",
    severity="error",
)

INTERNAL = Rule(
    "internal",
    "nothing fails inside paddlegen (otherwise a bug: please report it)",
    explanation=(
        "Something failed inside paddlegen: a bug. Please report it with the traceback printed on "
        "stderr."
    ),
    severity="error",
)

SUMMARY = Rule(
    "summary",
    "what the run left undone because of the errors it found",
    explanation=(
        "What the run left undone because of the errors it found, as the last finding of a report."
    ),
    severity="info",
)


class PaddlegenError(Exception):
    """Root of every error paddlegen expects; each class knows its exit code."""

    exit_code = EXIT_ERROR
    rule = ERROR.id  # what --format json/github call an error that carries no diagnostics

    def __init__(
        self, message: str, diagnostics: list[Diagnostic] | None = None, *, shown: bool = False
    ) -> None:
        super().__init__(message)
        self.message = message
        self.diagnostics = list(diagnostics or [])
        # The caller has shown the findings already (check's drift, as it found it): what is
        # left to the CLI's handler is the exit code.
        self.shown = shown

    def __str__(self) -> str:
        # A Python caller (the SDK, a notebook) sees the reasons, not just "invalid spec".
        return "\n".join([self.message, *map(str, self.diagnostics)])

    def __reduce__(self) -> tuple[type[PaddlegenError], tuple[str, list[Diagnostic]]]:
        # Crosses process boundaries (render -j): keep the diagnostics, not just the message.
        return type(self), (self.message, self.diagnostics)


class Interrupted(BaseException):
    """SIGINT or SIGTERM ended the run (raised by the handlers ``python -m paddlegen`` and
    the ``paddlegen`` command install; the library installs none).

    A BaseException, like KeyboardInterrupt: no ``except Exception`` takes it for an error,
    only cleanup runs on its way out. Its exit code is the one a shell reports for a process
    that signal ended: 130 for SIGINT, 143 for SIGTERM.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.exit_code = 128 + signum
        self.output: str = ""  # the folder a write was under way in (pipeline/write.writing)


class SpecError(PaddlegenError):
    """The spec is invalid: carries every finding."""

    exit_code = EXIT_FINDINGS

    def undone(self, undone: str, validate: Sequence[str] | None = None) -> str:
        """What a command left ``undone`` and why (``nothing written: 1 of 12 specs has
        errors``); with ``validate``, when the findings are not shown, the specs with errors
        too, and the `paddlegen validate` of those arguments that lists them."""
        said = f"{undone}: {self.message}"
        if validate is None:
            return said
        import shlex  # here: only this message needs it, and every command imports us

        bad = ", ".join(sorted({d.file for d in self.diagnostics if d.is_error}))
        return said + f" ({bad}); `{shlex.join(['paddlegen', 'validate', *validate])}` lists them"


class ManifestError(PaddlegenError):
    """Generated manifests failed validation."""

    exit_code = EXIT_FINDINGS


class StaleOutputError(PaddlegenError):
    """Committed output differs from a fresh render."""

    exit_code = EXIT_FINDINGS


class UnsafeMergeError(PaddlegenError):
    """A write would remove an environment of a job whose spec is there (render, check --fix),
    or merging would delete an Argo CD Application or run a job whose spec did not change
    (plan), and that was not allowed."""

    exit_code = EXIT_FINDINGS


class LossyImportError(PaddlegenError):
    """An imported spec would run differently from its input, and that was not accepted."""

    exit_code = EXIT_FINDINGS


class InputError(PaddlegenError):
    """A file could not be read (missing, unreadable, a directory)."""

    rule = INPUT.id


class OutputError(PaddlegenError):
    """The output could not be written, or writing would clobber files paddlegen did not make."""

    rule = OUTPUT.id


class ToolError(PaddlegenError):
    """An external tool (kubeconform) is missing, crashed, timed out or spoke nonsense."""

    rule = TOOL.id


class TemplateError(PaddlegenError):
    """A template failed: names the template and line."""

    rule = TEMPLATE.id


class NoAnswerError(PaddlegenError):
    """A prompt met the end of its input (Ctrl-D, or stdin that ran out): nothing is written."""

    rule = USAGE.id


class InvalidValueError(PaddlegenError, ValueError):
    """A library function got a value it cannot take: a malformed quantity or Dockerfile, an
    unknown mode. Also a ValueError, as Python callers of these functions expect."""

    rule = VALUE.id


class InvalidArgumentError(PaddlegenError, TypeError):
    """The SDK was called with arguments that contradict each other. Also a TypeError, as
    Python callers expect of a call with arguments it cannot take."""

    rule = ARGUMENT.id
