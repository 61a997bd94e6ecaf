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

# The names of the previous release, still working until the next: name -> (the module that
# defines it, what to use instead).
_RENDER = "paddlegen.run_render(paddlegen.Request(...))"
_CHECK = "paddlegen.run_check(paddlegen.Request(...))"
_VALIDATE = "paddlegen.run_validate(paddlegen.Request(...))"
_STDOUT = "paddlegen.run_render(paddlegen.Request(..., stdout=True))"
_VALIDATED = "paddlegen.run_render(paddlegen.Request(..., validate=True))"
_ERRORS = "paddlegen.errors.{} (or catch paddlegen.PaddlegenError)"
_DEPRECATED = {
    "Rendered": ("paddlegen.pipeline.build", "paddlegen.Result.rendered, from " + _RENDER),
    "collect_specs": (
        "paddlegen.pipeline.load",
        "paddlegen.Request(specs=...), which takes folders",
    ),
    "load_valid": ("paddlegen.pipeline.load", _VALIDATE),
    "validate_document": ("paddlegen.pipeline.load", _VALIDATE),
    "render_document": ("paddlegen.pipeline.build", _RENDER),
    "render_specs": ("paddlegen.pipeline.build", _RENDER),
    "render_into": ("paddlegen.pipeline.write", _RENDER),
    "write_rendered": ("paddlegen.pipeline.write", _RENDER),
    "manifest_stream": ("paddlegen.pipeline.write", _STDOUT),
    "drift": ("paddlegen.pipeline.write", _CHECK),
    "validate_inputs": ("paddlegen.validate.inputs", _VALIDATE),
    "validate_rendered": ("paddlegen.validate.inputs", _VALIDATED),
    "parse_spec": ("paddlegen.spec.loader", _VALIDATE),
    "read_spec": ("paddlegen.spec.loader", _VALIDATE),
    "import_manifests": ("paddlegen.authoring.importer", "paddlegen.import_jobs"),
    **{
        name: ("paddlegen.errors", _ERRORS.format(name))
        for name in (
            "InputError",
            "OutputError",
            "ToolError",
            "TemplateError",
            "InvalidValueError",
            "InvalidArgumentError",
        )
    },
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None and name in _DEPRECATED:
        import warnings  # here: only an old name pays for it

        module, instead = _DEPRECATED[name]
        message = f"paddlegen.{name} is deprecated and goes in the next release; use {instead}"
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(module), name)  # not cached: each use warns
    if module is None:
        raise AttributeError(f"module 'paddlegen' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # loaded once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
