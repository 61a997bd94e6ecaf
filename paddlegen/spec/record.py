"""``record``: the frozen dataclass of the model and the pipeline, frozen for the type checker."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

T = TypeVar("T")

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform

    @dataclass_transform(frozen_default=True, eq_default=False, field_specifiers=(field,))
    def record(cls: type[T]) -> type[T]:
        """A dataclass that compares by identity, prints as an object and is never changed."""
        ...

else:
    # Frozen where it is checked, by mypy (strict over the package: an assignment to a field
    # fails it), not at run time: CPython 3.11's dataclasses compiles a frozen class's __init__,
    # __setattr__ and __delattr__ from source (exec) when its module loads, which for the model
    # and the pipeline's records was a fourteenth of a cold `render --stdout`. Compared by
    # identity and printed as objects (eq=False, repr=False): nothing compares or prints one.
    record = dataclass(eq=False, repr=False)
