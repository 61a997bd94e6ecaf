"""paddlegen: PaddlePaddle training-job specs in, kustomize-ready Kubernetes manifests out.

The public API is what ``__all__`` lists, plus the modules ``paddlegen.sdk`` (seed 002's
``PaddleJob`` front end) and ``paddlegen.runtime`` (helpers for training code). Every other
module is internal and may change between releases. The names load on first use, so that
``import paddlegen`` (and ``paddlegen --version``) costs no more than this file.
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
    # the pipeline, for one spec or ten thousand
    "Rendered": "paddlegen.api",
    "Validation": "paddlegen.api",
    "collect_specs": "paddlegen.api",
    "load_valid": "paddlegen.api",
    "validate_document": "paddlegen.api",
    "render_document": "paddlegen.api",
    "render_specs": "paddlegen.api",
    "render_into": "paddlegen.api",
    "write_rendered": "paddlegen.api",
    "drift": "paddlegen.api",
    "manifest_stream": "paddlegen.api",
    "validate_inputs": "paddlegen.api",
    "validate_rendered": "paddlegen.api",
    # specs in, specs out
    "parse_spec": "paddlegen.spec.loader",
    "read_spec": "paddlegen.spec.loader",
    "import_manifests": "paddlegen.authoring.importer",
    "import_jobs": "paddlegen.authoring.importer",
    # findings and errors: every error paddlegen raises is a PaddlegenError
    "Diagnostic": "paddlegen.errors",
    "PaddlegenError": "paddlegen.errors",
    "SpecError": "paddlegen.errors",
    "ManifestError": "paddlegen.errors",
    "InputError": "paddlegen.errors",
    "OutputError": "paddlegen.errors",
    "ToolError": "paddlegen.errors",
    "TemplateError": "paddlegen.errors",
    "InvalidValueError": "paddlegen.errors",
    "InvalidArgumentError": "paddlegen.errors",
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
