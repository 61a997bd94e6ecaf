"""The public API: what `paddlegen.__all__` lists, loaded on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

import paddlegen


@pytest.mark.parametrize("name", paddlegen.__all__)
def test_every_public_name_resolves_and_is_documented(name):
    value = getattr(paddlegen, name)
    assert value is not None
    if name != "__version__":
        assert value.__doc__, name
        assert name in dir(paddlegen)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'rendr'"):
        paddlegen.rendr  # noqa: B018


def test_importing_the_package_loads_no_library_and_no_pipeline():
    """`import paddlegen` and `paddlegen --version` pay for this file alone."""
    code = (
        "import sys, paddlegen; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('paddlegen', 'click', 'jinja2', 'jsonschema', 'yaml')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['paddlegen']"


def test_the_errors_are_one_tree_with_value_and_type_errors_where_python_expects_them():
    from paddlegen import errors

    assert issubclass(errors.InvalidValueError, (paddlegen.PaddlegenError, ValueError))
    assert issubclass(errors.InvalidArgumentError, (paddlegen.PaddlegenError, TypeError))
    for name in paddlegen.__all__:
        value = getattr(paddlegen, name)
        if isinstance(value, type) and issubclass(value, Exception):
            assert issubclass(value, paddlegen.PaddlegenError), name


def test_the_public_api_is_small_on_purpose():
    assert len(paddlegen.__all__) <= 12
