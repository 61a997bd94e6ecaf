"""`paddlegen init`'s library side: answers judged by the spec schema and checks, the spec text."""

from __future__ import annotations

import yaml

from paddlegen.authoring.init import InitOptions, init_spec


def test_characters_yaml_cannot_hold_raw_are_written_escaped():
    """DEL and C1 controls are refused raw by YAML readers; NEL and U+2028 would break lines."""
    command = "python3 \x7f \x85 \x9b \u2028 \u2029 镜像 \U0001f600"
    text = init_spec(InitOptions(name="demo", image="r/demo:v1", command=command))
    assert "\\u007f" in text and "镜像" in text
    assert yaml.safe_load(text)["spec"]["command"] == command.split(" ")
