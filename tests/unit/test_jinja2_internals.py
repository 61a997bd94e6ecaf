"""The jinja2 internals the template sandbox copies or wraps are the ones it was written for.

paddlegen/sandbox.py rewrites two code-generator visitors, replaces three sandbox hooks and
reads ``jinja2.utils._PassArg``; none of them is public API. pyproject bounds jinja2 to the
versions tested, and this test fails when any of them changes, so that widening the bound is
a deliberate step: read the new jinja2 code, port the change into sandbox.py, then update the
digest here and the range in pyproject.toml.
"""

from __future__ import annotations

import hashlib
import inspect

import pytest
from jinja2 import pass_context, pass_environment, pass_eval_context
from jinja2.compiler import CodeGenerator
from jinja2.sandbox import SandboxedEnvironment
from jinja2.utils import _PassArg

# sha256 of each member's source in jinja2 3.1.6
PINNED = {
    # copied into _CodeGenerator.visit_Concat with each operand sent through sandbox_concat
    CodeGenerator.visit_Concat: "be4721533d19611d2e773a3642d56e8a9163dbf9217f56eb0d9c3c60aa87d34c",
    # wrapped: _CodeGenerator.visit_For rewrites node.iter, then calls it
    CodeGenerator.visit_For: "d4f9a74e3bdffca6cfa2faf4e49bc66309f6397f721adbee060bd476b168991f",
    # wrapped: BoundedSandboxedEnvironment.call checks str methods, then calls it
    SandboxedEnvironment.call: "dec31de35df6b71a552fc2737b6347bc282c2ecd37fd33eb3da4dc20e786e165",
    # replaced: the bounded environment's version sends format() through a bounded formatter
    SandboxedEnvironment.wrap_str_format: (
        "8b8bf2a9a0b9d0e0ab113cc61dacf6cc770a872542c54a77a37d42acab81b84f"
    ),
    # replaced: the bounded version checks operands before and the result after
    SandboxedEnvironment.call_binop: (
        "393f399d5581f8e2ea2e0a36cff5a860cb22578316400fb9614fb43f11cf1e1a"
    ),
}


@pytest.mark.parametrize("member", list(PINNED), ids=lambda m: m.__qualname__)
def test_the_jinja2_code_the_sandbox_builds_on_is_unchanged(member):
    digest = hashlib.sha256(inspect.getsource(member).encode()).hexdigest()
    assert digest == PINNED[member], (
        f"jinja2 changed {member.__qualname__}: port the change into paddlegen/sandbox.py, "
        "then update this digest and the jinja2 range in pyproject.toml"
    )


def test_passarg_tells_which_first_argument_a_filter_takes():
    """sandbox._wrap_filter skips the context, eval context or environment argument."""

    def plain(value):
        return value

    assert _PassArg.from_obj(plain) is None
    for decorator in (pass_context, pass_eval_context, pass_environment):
        assert _PassArg.from_obj(decorator(lambda _first, value: value)) is not None
