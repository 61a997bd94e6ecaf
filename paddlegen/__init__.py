"""paddlegen: PaddlePaddle training-job specs in, kustomize-ready Kubernetes manifests out.

The public API is what ``__all__`` lists, plus the modules ``paddlegen.sdk`` (a ``PaddleJob``
front end with the old Python SDK's parameters) and ``paddlegen.runtime`` (helpers for
training code). Every other module is internal and may change between releases. The names
load on first use, so that ``import paddlegen`` (and ``paddlegen --version``) costs no more
than this file.

Small on purpose, as kustomize's krusty (one options object, one entry) and copier (a handful
of ``run_*`` calls) are: a ``Request`` holds what the command line says, and each command is
one call taking it (``run_render``, ``run_check``, ``run_validate``, named after the commands;
``render`` and ``validate`` are subpackages, which importing them sets as this module's
attributes), returning a ``Result`` or a ``Validation``. A spec goes in only through a request,
so every spec is validated before it is rendered. ``import_jobs`` turns manifests back into
specs. Findings are ``Diagnostic``; every error is a ``PaddlegenError`` (its ``exit_code`` is
the CLI's), and the two worth catching apart carry diagnostics: ``SpecError`` (a spec has
errors) and ``ManifestError`` (the manifests failed validation); the others are in
``paddlegen.errors``. The pipeline's steps stay internal, so they can change.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing itself is not imported: this file is all `--version` loads
if TYPE_CHECKING:
    from typing import Any

# A literal, read by hatch at build time: `--version` must not pay for importlib.metadata.
__version__ = "0.1.0"

# name -> the module that defines it
_EXPORTS = {
    "Request": "paddlegen.api",
    "Result": "paddlegen.api",
    "run_render": "paddlegen.api",
    "run_check": "paddlegen.api",
    "run_validate": "paddlegen.api",
    "Validation": "paddlegen.validate.inputs",
    "import_jobs": "paddlegen.authoring.importer",
    "Diagnostic": "paddlegen.errors",
    "PaddlegenError": "paddlegen.errors",
    "SpecError": "paddlegen.errors",
    "ManifestError": "paddlegen.errors",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'paddlegen' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # loaded once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
