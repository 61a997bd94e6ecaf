"""paddlegen: PaddlePaddle training-job specs in, kustomize-ready Kubernetes manifests out."""

from __future__ import annotations

# A literal, read by hatch at build time: `--version` must not pay for importlib.metadata.
__version__ = "0.1.0"

__all__ = ["__version__"]
