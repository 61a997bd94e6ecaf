"""Generated specs: accepted ones render cleanly, rejected ones get positioned findings, exit 1."""

from __future__ import annotations

import copy
import itertools
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import assume, event, example, given
from hypothesis import strategies as st

from paddlegen.cli import cli
from paddlegen.errors import Diagnostic, SpecError
from paddlegen.pipeline import build, load
from paddlegen.spec.loader import Document, parse_spec
from paddlegen.validate import inputs as validation
from paddlegen.validate.inprocess import validate_in_process
from paddlegen.validate.manifests import validate_manifests
from tests.conftest import require_tool
from tests.property.strategies import (
    apply_text_mistake,
    broken_specs,
    plausible_specs,
    schema_specs,
)

SPEC = "spec.yaml"
# libyaml, as paddlegen's loader uses: several times faster than PyYAML's Python classes.
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Every manifest of every accepted spec, for one run of the real kubeconform at the end.
GENERATED: list[tuple[str, str]] = []
_serial = itertools.count()


def dump(data: Any) -> str:
    """Spec text as a user would write it: unicode raw, unless the emitter would lose it
    (PyYAML writes NEL and U+2028 raw into quoted scalars, where readers fold them to spaces)."""
    text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True)
    if yaml.load(text, Loader=_Loader) != data:
        text = yaml.dump(data, Dumper=_Dumper, sort_keys=False)
    return text


def verdict(text: str) -> tuple[Document | None, list[Diagnostic]]:
    """The loaded spec (None when it does not load) and every finding, as `render` sees them."""
    try:
        doc = parse_spec(text.encode("utf-8"), SPEC)
    except SpecError as exc:
        return None, exc.diagnostics
    return doc, load.validate_document(doc)


def is_accepted(doc: Document | None, found: list[Diagnostic]) -> bool:
    return doc is not None and not any(d.is_error for d in found)


def assert_renders_cleanly(text: str, data: Any) -> None:
    """Property 1: renders, byte-stable across two renders, kubeconform strict passes."""
    first = build.render_document(parse_spec(text.encode("utf-8"), SPEC))
    assert first.doc.data == data, "the loader changed a value while reading it"
    second = build.render_document(parse_spec(text.encode("utf-8"), SPEC))
    assert first.plan == second.plan
    files = [
        (f"{next(_serial)}/{path}", body)
        for path, body in validation.manifest_files([first], "deploy")
    ]
    assert files, "an accepted spec rendered no manifest"
    assert validate_in_process(files) == []
    GENERATED.extend(files)


def assert_rejected_with_positions(text: str, found: list[Diagnostic]) -> None:
    """Property 2: every diagnostic positioned inside the file; the CLI exits 1, no traceback."""
    assert any(d.is_error for d in found)
    last_line = text.count("\n") + 1
    for d in found:
        assert d.file == SPEC, d
        assert 1 <= d.line <= last_line and d.col >= 1, d
        assert d.path.startswith("$"), d
    with tempfile.TemporaryDirectory() as tmp:
        spec, out = Path(tmp, SPEC), Path(tmp, "out")
        spec.write_bytes(text.encode("utf-8"))
        result = CliRunner().invoke(cli, ["render", str(spec), "-o", str(out)])
        shown = result.stdout + result.stderr
        assert result.exception is None or isinstance(result.exception, SystemExit), shown
        assert result.exit_code == 1, shown
        assert "Traceback" not in shown and "internal error" not in shown, shown
        assert f"{spec}:" in result.stderr, shown  # file:line:col on every finding
        assert not out.exists(), "a rejected spec wrote output"


@given(schema_specs())
# PyYAML's emitter writes NEL raw into a quoted scalar, where it reads back as a space.
@example(
    {
        "apiVersion": "paddlegen/v1",
        "kind": "TrainingJob",
        "metadata": {"name": "a"},
        "spec": {"image": "\x85"},
    }
)
def test_any_schema_valid_document_renders_or_is_rejected_with_positions(data):
    text = dump(data)
    doc, found = verdict(text)
    if is_accepted(doc, found):
        event("accepted by schema and checks")
        assert_renders_cleanly(text, data)
    else:
        event("rejected: " + next(d.rule for d in found if d.is_error))
        assert_rejected_with_positions(text, found)


@given(plausible_specs())
def test_plausible_specs_are_accepted_and_render_cleanly(data):
    text = dump(data)
    doc, found = verdict(text)
    assert is_accepted(doc, found), "\n".join(map(str, found)) + "\n" + text
    event(f"workload {data['spec'].get('workload', 'default')}")
    assert_renders_cleanly(text, data)


@given(broken_specs())
def test_broken_specs_are_rejected_with_positions(case):
    mistake, data, text_mistake = case
    event(mistake)
    text = dump(data)
    if text_mistake:
        text = apply_text_mistake(text_mistake, text)
    doc, found = verdict(text)
    assert not is_accepted(doc, found), f"{mistake!r} was accepted:\n{text}"
    assert_rejected_with_positions(text, found)


# Where an unknown field goes in a plausible spec: mappings the schema closes (no free-form
# labels), by path; a list's first item when the spec has one.
_CLOSED = (
    (),
    ("metadata",),
    ("spec",),
    ("spec", "worker"),
    ("spec", "resources"),
    ("spec", "env", 0),
    ("spec", "volumes", 0),
    ("spec", "scheduling"),
)


def _mapping_at(data: Any, path: tuple[str | int, ...]) -> Any:
    for part in path:
        if isinstance(part, int):
            data = data[part] if isinstance(data, list) and len(data) > part else None
        else:
            data = data.get(part) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else None


@given(plausible_specs(), st.data())
def test_unknown_fields_hide_no_finding_of_the_rules(data, draw):
    """Fields the schema does not know (misspelling none the spec lacks) beside a spec: one
    schema error each, and every finding of the same spec without them (no rule raises)."""
    extended = copy.deepcopy(data)
    added = 0
    for path in draw.draw(st.lists(st.sampled_from(_CLOSED), min_size=1, max_size=4)):
        target = _mapping_at(extended, path)
        if target is not None:
            target[draw.draw(st.from_regex(r"zz[0-9]{3}", fullmatch=True))] = "x"
            added += 1
    assume(added)

    def kept(found: list[Diagnostic]) -> list[tuple[str, str, str, str]]:
        # positions shift with the added lines; stale `ignore` entries are not judged then
        return sorted(
            (d.severity, d.path, d.message, d.rule)
            for d in found
            if d.rule not in ("schema", "ignore-unused")
        )

    _, found = verdict(dump(extended))
    unknown = [d for d in found if d.rule == "schema"]
    assert unknown and all(d.message == "unknown field" for d in unknown), found
    assert kept(found) == kept(verdict(dump(data))[1])


def test_real_kubeconform_accepts_every_generated_manifest():
    """One batched run of the binary over what the properties above rendered in this session."""
    binary = require_tool("kubeconform")
    if not GENERATED:
        pytest.skip("no property test rendered anything in this session")
    found, used = validate_manifests(
        GENERATED, kubeconform=binary, timeout=max(60.0, len(GENERATED) / 50)
    )
    assert used == "kubeconform"
    assert found == [], "\n".join(map(str, found[:20]))
