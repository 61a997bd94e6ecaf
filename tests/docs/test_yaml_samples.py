"""Every YAML sample of the documentation parses, every one that is a whole paddlegen spec
(`kind: TrainingJob`) is valid: paddlegen's own validation finds no error in it, and every one
that is part of a spec is valid field by field against the schema."""

from __future__ import annotations

import re

import pytest
import yaml

from paddlegen.pipeline.load import validate_document
from paddlegen.spec.loader import parse_spec
from paddlegen.spec.schema import spec_schema, validator_class
from tests.conftest import ROOT
from tests.docs.pages import blocks

SAMPLES = list(blocks({"yaml", "yml"}))


def test_the_docs_have_yaml_samples_and_specs_among_them():
    assert len(SAMPLES) > 25
    assert sum(1 for s in SAMPLES if "kind: TrainingJob" in s.body) > 8


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.where for s in SAMPLES])
def test_a_yaml_sample_parses_and_a_spec_validates(sample):
    documents = list(yaml.safe_load_all(sample.body))
    assert documents, f"{sample.where}: an empty YAML sample"
    for document in documents:
        if isinstance(document, dict) and document.get("kind") == "TrainingJob":
            doc = parse_spec(sample.body, sample.where)
            errors = [
                d.format() if hasattr(d, "format") else str(d)
                for d in validate_document(doc)
                if d.severity == "error"
            ]
            assert errors == [], f"{sample.where}: the spec is not valid"


def spec_fields(document: object) -> dict | None:
    """The spec fields a sample that is part of a spec gives (under `spec:`, or the fields
    alone), or None when it is something else (a manifest, a kustomization, a whole spec)."""
    if not isinstance(document, dict) or {"apiVersion", "kind"} & document.keys():
        return None
    fields = document["spec"] if set(document) == {"spec"} else document
    known = spec_schema()["$defs"]["spec"]["properties"]
    return fields if isinstance(fields, dict) and fields and set(fields) <= known.keys() else None


FRAGMENTS = [
    (sample, fields)
    for sample in SAMPLES
    for document in yaml.safe_load_all(sample.body)
    if (fields := spec_fields(document)) is not None
]


def test_the_docs_have_spec_fragments():
    assert len(FRAGMENTS) > 15


@pytest.mark.parametrize(
    ("sample", "fields"), FRAGMENTS, ids=[sample.where for sample, _ in FRAGMENTS]
)
def test_a_sample_of_spec_fields_validates_against_the_schema(sample, fields):
    """A part of a spec (`spec:` with some of its fields, or the fields alone) is valid field
    by field: each one against the schema's definition of it."""
    schema = spec_schema()
    validator = validator_class()
    for key, value in fields.items():
        field = {"$defs": schema["$defs"], "$ref": f"#/$defs/spec/properties/{key}"}
        errors = [e.message for e in validator(field).iter_errors(value)]
        assert errors == [], f"{sample.where}: spec.{key}"


def test_the_storage_pages_volume_sources_name_the_schemas_fields():
    """The table of volume sources gives each as `source: {field, ...}`: fields of the
    schema's (a `claim: {claimName}` would send a reader to a field the schema refuses)."""
    text = (ROOT / "docs" / "storage.md").read_text("utf-8")
    rows = re.findall(r"^\| `(\w+): \{([^}]*)\}`", text, re.M)
    volume = spec_schema()["$defs"]["volume"]["properties"]
    assert len(rows) >= 6
    for source, listed in rows:
        fields = {f.split(":")[0].strip() for f in listed.split(",")} - {"...", ""}
        assert fields <= volume[source].get("properties", {}).keys(), source
