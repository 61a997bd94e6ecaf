"""The compiled spec check never accepts what jsonschema rejects (and agrees with it)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from paddlegen.spec.schema import _validator
from paddlegen.spec.schema_compiled import is_valid
from tests.property.strategies import broken_specs, plausible_specs, schema_specs

# what YAML can give for a value: JSON's types, integer-valued floats and non-string keys too
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False),
    st.sampled_from([0, 1, 1.0, -1, 0.5, "", "1", "a", "A-b", "/x", "Always", "500m", "true"]),
    st.text(max_size=12),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(st.text(max_size=8), st.integers(0, 3)), inner, max_size=3),
    ),
    max_leaves=6,
)


def _nodes(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value in ``data`` (the root too)."""
    found = [path]
    if isinstance(data, dict):
        for key, value in data.items():
            found += _nodes(value, (*path, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found += _nodes(value, (*path, index))
    return found


@st.composite
def mutated(draw: Any, base: st.SearchStrategy[Any]) -> Any:
    """A document of ``base``, one time in four as drawn, else with one mutation."""
    data = copy.deepcopy(draw(base))
    if draw(st.sampled_from(["mutate", "mutate", "mutate", "keep"])) == "keep":
        event("mutation: none")
        return data
    path = draw(st.sampled_from(_nodes(data)))
    if not path:
        return draw(_values)
    parent = data
    for part in path[:-1]:
        parent = parent[part]
    how = draw(st.sampled_from(["replace", "remove", "add"]))
    event(f"mutation: {how}")
    if how == "replace":
        parent[path[-1]] = draw(_values)
    elif how == "remove":
        del parent[path[-1]]
    elif isinstance(parent, dict):
        key = draw(st.one_of(st.sampled_from(["name", "image", "replicas", "x", "env"]), _scalars))
        if isinstance(key, (dict, list)):
            key = str(key)
        parent[key] = draw(_values)
    else:
        parent.insert(draw(st.integers(0, len(parent))), draw(_values))
    return data


def assert_same_verdict(data: Any) -> None:
    expected = _validator().is_valid(data)
    event(f"jsonschema: {'valid' if expected else 'invalid'}")
    assert is_valid(data) == expected, data


@given(st.one_of(plausible_specs(), broken_specs().map(lambda case: case[1])))
def test_agrees_on_plausible_and_broken_specs(data):
    assert_same_verdict(data)


# Documents from the schema come only through here: generating them is most of the cost.
@given(mutated(st.one_of(schema_specs(), plausible_specs())))
def test_agrees_on_specs_from_the_schema_and_with_one_mutation_anywhere(data):
    assert_same_verdict(data)
