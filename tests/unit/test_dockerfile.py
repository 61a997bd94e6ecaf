"""paddlegen.authoring.dockerfile: spec.build -> a Dockerfile that parses, and the parser itself."""

from __future__ import annotations

import pytest

from paddlegen.authoring.dockerfile import dockerfile_text, parse_dockerfile

# Seed 003 示例1's Dockerfile, as a build section.
SEED_003 = {
    "base": "ubuntu:18.04",
    "apt": ["python3", "python3-dev", "python3-pip"],
    "pip": ["paddlepaddle==2.0.0"],
    "pipIndexUrl": "https://mirror.baidu.com/pypi/simple",
    "package": {"src": "wide_and_deep", "dest": "/wide_and_deep"},
    "entrypoint": ["python3", "train.py"],
}


def keywords(text: str) -> list[str]:
    return [i.keyword for i in parse_dockerfile(text)]


def test_seed_003s_image_is_rebuilt_instruction_by_instruction():
    text = dockerfile_text(SEED_003, "registry.baidubce.com/demo:v1", "jobs/demo.yaml")
    found = parse_dockerfile(text)
    assert [i.keyword for i in found] == ["FROM", "RUN", "RUN", "COPY", "WORKDIR", "ENTRYPOINT"]
    assert found[0].args == "ubuntu:18.04"
    assert "python3-pip" in found[1].args
    pip = "python3 -m pip install --no-cache-dir --index-url https://mirror.baidu.com/pypi/simple"
    assert found[2].args == [*pip.split(), "paddlepaddle==2.0.0"]
    assert found[3].args == ["wide_and_deep", "/wide_and_deep"]
    assert found[4].args == "/wide_and_deep"  # WORKDIR defaults to the package's destination
    assert found[5].args == ["python3", "train.py"]
    assert "docker build -t registry.baidubce.com/demo:v1 ." in text


def test_a_base_alone_is_a_one_line_image():
    assert keywords(dockerfile_text({"base": "paddlepaddle/paddle:2.6.1"}, None, "x")) == ["FROM"]


def test_cmd_and_an_explicit_workdir():
    build = {"base": "b:1", "workingDir": "/work", "cmd": ["python", "-m", "x"]}
    assert keywords(dockerfile_text(build, "i:1", "x")) == ["FROM", "WORKDIR", "CMD"]


def test_a_newline_in_a_value_cannot_start_an_instruction():
    build = {
        "base": "b:1",
        "workingDir": "/a\nRUN rm -rf /",
        "package": {"src": "a\nb", "dest": "/x\ny"},
    }
    text = dockerfile_text(build, "img:1\nRUN evil", "spec\nRUN evil.yaml")
    assert keywords(text) == ["FROM", "COPY", "WORKDIR"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("RUN echo\n", "must start with FROM"),
        ("FROM a\nRUNN x\n", "unknown instruction"),
        ('FROM a\nCMD ["x",\n', "not a valid JSON array"),
        ("FROM a\nCMD [1]\n", "array of strings"),
        ("FROM a\nRUN x \\\n", "line continuation"),
        ("FROM a\nWORKDIR\n", "needs arguments"),
    ],
)
def test_the_parser_refuses_what_docker_build_refuses(text, message):
    with pytest.raises(ValueError, match=message):
        parse_dockerfile(text)


def test_the_parser_joins_continuations_and_skips_comments():
    text = "# c\nARG V=1\nFROM a:$V\nRUN one \\\n  # a comment line, dropped\n two\n"
    found = parse_dockerfile(text)
    assert [i.keyword for i in found] == ["ARG", "FROM", "RUN"]
    assert (found[2].line, found[2].args) == (4, "one two")
