"""The generated files (scripts/generate.py) are what the command writes from today's sources."""

from __future__ import annotations

import json

import pytest

from paddlegen.resources import spec_schema_path
from paddlegen.workloads import DEFAULT_WORKLOAD, WORKLOADS
from scripts import generate


def test_no_generated_file_is_stale():
    assert generate.stale() == [], "run `python -m scripts.generate` and commit what it writes"


def test_the_command_covers_the_schema_the_compiled_check_the_reference_and_the_tables():
    written = {path.relative_to(generate.ROOT).as_posix() for path in generate.generated()}
    assert written == {
        "schemas/trainingjob.v1.schema.json",
        "paddlegen/spec/schema_compiled.py",
        "docs/reference/spec.md",
        "docs/reference/cli.md",
        "docs/reference/rules.md",
        "README.md",
        "docs/index.md",
    }


def test_the_schema_offers_the_registrys_workloads_and_their_settings():
    schema = json.loads(spec_schema_path().read_text(encoding="utf-8"))
    spec = schema["$defs"]["spec"]["properties"]
    assert spec["workload"]["enum"] == list(WORKLOADS)
    assert spec["workload"]["default"] == DEFAULT_WORKLOAD
    described = spec["workload"]["description"]
    needs = WORKLOADS[DEFAULT_WORKLOAD].needs
    assert f"(default {DEFAULT_WORKLOAD}, which needs {needs}): " in described
    for workload in WORKLOADS.values():
        assert f"{workload.name} ({workload.summary})" in described
    for workload in WORKLOADS.values():
        fragment = generate.ROOT / "paddlegen" / "workloads" / workload.package
        assert (fragment / "settings.schema.json").is_file() == (workload.settings is not None)
        if workload.settings is None:
            continue
        section, own = workload.settings.section, workload.settings_schema()
        assert schema["$defs"][section] == own["definition"]
        assert spec[section] == {"$ref": f"#/$defs/{section}", **own["property"]}


def test_a_section_keeps_its_place_and_a_new_one_follows_the_last():
    entries = {"a": 1, "run": 2, "x": 3, "y": 4, "b": 5}
    assert list(generate._placed(entries, {"y": 0, "x": 0, "new": 0})) == [
        *("a", "run", "x", "y", "new", "b"),
    ]
    assert list(generate._placed({"a": 1, "run": 2, "b": 3}, {"new": 0})) == [
        *("a", "run", "new", "b"),
    ]


def test_the_workload_table_lists_each_workload_between_its_markers():
    page = f"intro\n{generate.TABLE_START}old\n{generate.TABLE_END}after\n"
    out = generate.with_workload_table(page, "docs/")
    assert out.startswith("intro\n") and out.endswith(f"{generate.TABLE_END}after\n")
    for name in WORKLOADS:
        assert f"| [`{name}`](docs/workloads/{name}.md) |" in out
    with pytest.raises(ValueError, match="markers"):
        generate.with_workload_table("no table here\n", "")
