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
    assert not set(paddlegen.__all__) & set(paddlegen._DEPRECATED)


@pytest.mark.parametrize("name", sorted(paddlegen._DEPRECATED))
def test_each_old_name_warns_and_still_works_for_one_release(name):
    import importlib

    module, instead = paddlegen._DEPRECATED[name]
    with pytest.warns(DeprecationWarning, match=rf"paddlegen\.{name} is deprecated") as said:
        value = getattr(paddlegen, name)
    assert value is getattr(importlib.import_module(module), name)
    assert instead in str(said[0].message)
    assert said[0].filename == __file__  # the warning points at the caller's line
    assert name not in dir(paddlegen)


def test_an_old_name_warns_on_every_use():
    for _ in range(2):
        with pytest.warns(DeprecationWarning, match="use paddlegen.run_render"):
            paddlegen.render_specs  # noqa: B018
