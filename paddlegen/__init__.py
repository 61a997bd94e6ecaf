"""paddlegen: PaddlePaddle training-job specs in, kustomize-ready Kubernetes manifests out."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("paddlegen")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0.0.0"

__all__ = ["__version__"]
