"""paddlegen.yamlio by example, in the fast tier (tests/property/test_canonical.py: by property)."""

from __future__ import annotations

from paddlegen.yamlio import dump_yaml, pyyaml_dump


def test_dump_yaml_writes_a_shared_object_as_pyyaml_does():
    shared = {"a": 1}
    data = {"x": shared, "y": shared, "z": [], "w": []}
    assert dump_yaml(data) == pyyaml_dump(data)
    assert "&id001" in dump_yaml(data)
