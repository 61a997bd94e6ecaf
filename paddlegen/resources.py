"""Finds the packaged data (templates/, schemas/) in a wheel or in a source checkout."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


@cache
def data_root() -> Path:
    """The folder holding templates/ and schemas/.

    A wheel carries them as paddlegen/_data (hatch force-include); an editable install or a
    checkout has them at the repository root next to the package.
    """
    wheel = _PACKAGE / "_data"
    if (wheel / "templates").is_dir():
        return wheel
    return _PACKAGE.parent


def data_path(*parts: str) -> Path:
    return data_root().joinpath(*parts)


def templates_dir() -> Path:
    return data_path("templates")


def spec_schema_path() -> Path:
    return data_path("schemas", "trainingjob.v1.schema.json")


def kueue_schema_path() -> Path:
    """The schema of `paddlegen kueue`'s input (paddlegen/gitops/kueue_setup.py)."""
    return data_path("schemas", "kueue.v1.schema.json")
