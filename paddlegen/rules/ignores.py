"""Silencing: a spec's ``ignore`` entries and a run's ``--ignore`` rules drop what they name.

Only the findings of the semantic rules (``paddlegen.rules.RULES``) can be silenced, and not
those of ``REQUIRED``: a schema or YAML error means the spec cannot be read as a job at all, and
a required rule guards what every job needs. An entry silences its rule at its ``path`` and
everything under it (``$.spec.env`` covers ``$.spec.env[2].value``), or in the whole spec when
it has no path; an entry that silences nothing is reported, so stale entries do not pile up.
"""

from __future__ import annotations

from collections.abc import Iterable

from paddlegen.errors import Diagnostic, InvalidValueError, Rule
from paddlegen.spec.loader import Document, format_path

# The rules of the findings about `ignore` entries themselves (not silenceable either).
UNUSED = Rule(
    "ignore-unused",
    "every `ignore` entry silences a finding (a stale one is noticed)",
    explanation=(
        "An `ignore` entry that silences nothing is stale: the spec changed, or it never did. "
        "Reporting it keeps silenced rules from piling up."
    ),
    severity="warning",
)

REFUSED = Rule(
    "ignore-required",
    "no `ignore` entry names a required rule",
    explanation=(
        "A required rule guards what paddlegen needs to build any job. An `ignore` entry naming "
        "one is refused: fix what it reports instead."
    ),
    severity="error",
)
_WHY_REQUIRED = "it guards what paddlegen needs to build any job"


def run_rules(names: Iterable[str]) -> frozenset[str]:
    """A run's ``--ignore`` rules; an unknown or required one is an InvalidValueError."""
    rules = frozenset(names)
    if not rules:
        return rules  # the usual run: no rule's registry to import (paddlegen.rules)
    from paddlegen.rules import REQUIRED, RULES

    for name in sorted(rules):
        if name in REQUIRED:
            raise InvalidValueError(f"rule '{name}' cannot be silenced: {_WHY_REQUIRED}")
        if name not in RULES:
            from paddlegen.spec.schema import did_you_mean

            hint = did_you_mean(name, list(RULES)) or "rules: " + ", ".join(RULES)
            raise InvalidValueError(f"unknown rule '{name}' ({hint})")
    return rules


def covers(entry: str, path: str) -> bool:
    """Whether an entry's path covers a finding's: the same field, or one under it."""
    return path == entry or path.startswith((entry + ".", entry + "["))


class Silencer:
    """Drops the silenced findings of one spec, remembering which entries silenced any."""

    def __init__(self, doc: Document, run: frozenset[str]) -> None:
        self.doc = doc
        # (index in the list, rule, path); the schema already refused unknown rules
        self.entries = [
            (i, entry["rule"], entry.get("path"))
            for i, entry in enumerate(doc.data.get("ignore", []))
        ]
        self.run = run
        self.used: set[int] = set()

    def keep(self, found: Iterable[Diagnostic]) -> list[Diagnostic]:
        """The findings no entry and no run rule silences."""
        return [d for d in found if not self._silenced(d)]

    def _silenced(self, d: Diagnostic) -> bool:
        if not self.entries and not self.run:
            return False  # the usual spec: no rule's registry to import (paddlegen.rules)
        from paddlegen.rules import REQUIRED, RULES

        if d.rule not in RULES or d.rule in REQUIRED:
            return False
        hits = {
            i
            for i, rule, path in self.entries
            if rule == d.rule and (path is None or covers(path, d.path))
        }
        self.used |= hits  # every matching entry counts, so none of them looks stale
        return bool(hits) or d.rule in self.run

    def refused(self) -> list[Diagnostic]:
        """An error for each entry naming a required rule."""
        if not self.entries:
            return []
        from paddlegen.rules import REQUIRED

        return [
            self._about(
                (i, "rule"),
                f"'{rule}' cannot be silenced: {_WHY_REQUIRED}",
                REFUSED,
                "fix what it reports instead",
            )
            for i, rule, _path in self.entries
            if rule in REQUIRED
        ]

    def unused(self) -> list[Diagnostic]:
        """A warning for each entry that silenced nothing (the spec changed, or it never did)."""
        if not self.entries:
            return []
        from paddlegen.rules import REQUIRED

        return [
            self._about(
                (i,),
                f"this entry silences nothing: no '{rule}' finding "
                + (f"at or under {path}" if path else "in this spec"),
                UNUSED,
                "remove it, or correct its rule or path",
            )
            for i, rule, path in self.entries
            if i not in self.used and rule not in REQUIRED
        ]

    def _about(
        self, where: tuple[str | int, ...], message: str, rule: Rule, hint: str
    ) -> Diagnostic:
        path = ("ignore", *where)
        pos = self.doc.where(path)
        return Diagnostic(
            self.doc.file,
            pos.line,
            pos.col,
            rule.severity,
            format_path(path),
            message,
            rule.id,
            hint,
        )
