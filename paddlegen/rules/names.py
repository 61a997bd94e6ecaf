"""The job's name and the strings that reach a manifest."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from paddlegen.spec.loader import FieldPath
from paddlegen.spec.rule import Context, Finding, SpecRule
from paddlegen.workloads import WORKLOADS
from paddlegen.workloads.shared.jobset import POD_NAME_RANDOM

_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


def _derived_names(ctx: Context) -> Iterator[Finding]:
    name = ctx.data["metadata"]["name"]
    names = WORKLOADS[ctx.workload].derived_names(name, ctx.spec)
    if "dataPrep" in ctx.spec:
        names.append(f"{name}-data")
    for derived in names:
        if len(derived) > 63 or not _DNS1035.match(derived):
            random = (
                f", counting the 5 random characters ({POD_NAME_RANDOM}) that end a pod's name, "
                "as JobSet's webhook does when it refuses the JobSet"
                if derived.endswith(f"-{POD_NAME_RANDOM}")
                else ""
            )
            yield ctx.finding(
                ("metadata", "name"),
                f"'{name}' is too long for workload '{ctx.workload}': the derived "
                f"name '{derived}' has {len(derived)} characters, more than 63{random}",
                f"shorten the name by {len(derived) - 63} characters",
            )
            return


NAME_LENGTH = SpecRule(
    "name-length",
    "the names derived from `metadata.name` fit in 63 characters",
    explanation=(
        "Kubernetes and the operators derive names of pods and Services from `metadata.name`, and "
        "each must be a DNS label of at most 63 characters. A job name that makes one of them "
        "longer is refused by the API server, or leaves the operator unable to create its pods."
    ),
    severity="error",
    silenceable=True,
    check=_derived_names,
)


# YAML's printable characters (YAML 1.2 c-printable). Go's YAML reader, which reads the body of a
# server-side apply, refuses any other raw character ("control characters are not allowed"), and
# JSON, which kubectl sends, leaves DEL, the C1 controls and U+FFFE/U+FFFF raw. PyYAML refuses
# the same characters raw in a spec file; escaped ("\x01") they load, and this rule refuses them.
_NOT_PRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _character_kind(char: str) -> str:
    code = ord(char)
    if code < 0x20:
        return "a C0 control character"
    if code == 0x7F:
        return "the control character DEL"
    if code < 0xA0:
        return "a C1 control character"
    if 0xD800 <= code < 0xE000:
        return "a lone surrogate"
    return "a noncharacter"


def _unprintable(text: str) -> str:
    """What the message says of the characters of ``text`` YAML cannot hold ("" if none)."""
    found = _NOT_PRINTABLE.findall(text)
    if not found:
        return ""
    more = len(found) - 1
    return f"U+{ord(found[0]):04X} ({_character_kind(found[0])})" + (
        f" and {more} more such character{'s' if more > 1 else ''}" if more else ""
    )


def _control_characters(ctx: Context) -> Iterator[Finding]:
    """Every string that reaches a manifest (the metadata and the spec, but not the image build
    settings), and every mapping key, holds only characters YAML can hold."""
    hint = "remove it: a manifest may hold tabs, line breaks and printable characters only"

    def walk(node: Any, path: FieldPath) -> Iterator[Finding]:
        if path == ("spec", "build"):
            return  # paddlegen dockerfile's input, never rendered into a manifest
        if isinstance(node, str):
            what = _unprintable(node)
            if what:
                yield ctx.finding(
                    path,
                    f"the value holds {what}, which the API server refuses: a server-side "
                    "apply sends YAML, which cannot hold it",
                    hint,
                )
        elif isinstance(node, dict):
            for key, value in node.items():
                what = _unprintable(key)
                if what:
                    yield ctx.finding(
                        (*path, key),
                        f"the key holds {what}, which the API server refuses: a server-side "
                        "apply sends YAML, which cannot hold it",
                        hint,
                        key=True,
                    )
                yield from walk(value, (*path, key))
        elif isinstance(node, list):
            for i, item in enumerate(node):
                yield from walk(item, (*path, i))

    for section in ("metadata", "spec"):
        yield from walk(ctx.data.get(section), (section,))


CONTROL_CHARACTER = SpecRule(
    "control-character",
    "no string or key that reaches a manifest holds a character YAML cannot (C0 controls "
    "but tab and line breaks, DEL, C1 controls but NEL, U+FFFE, U+FFFF): a server-side "
    "apply sends YAML, and the API server refuses it",
    explanation=(
        "A server-side apply sends YAML, which cannot hold C0 and C1 control characters (but tab "
        "and line breaks), DEL, U+FFFE or U+FFFF. A string or key of the spec that reaches a "
        "manifest with one makes the API server refuse it."
    ),
    severity="error",
    silenceable=True,
    check=_control_characters,
)
