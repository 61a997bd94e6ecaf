"""Every YAML sample of the documentation parses, and every one that is a whole paddlegen spec
(`kind: TrainingJob`) is valid: paddlegen's own validation finds no error in it."""

from __future__ import annotations

import pytest
import yaml

from paddlegen.pipeline.load import validate_document
from paddlegen.spec.loader import parse_spec
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
