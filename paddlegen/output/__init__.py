"""Output: the kustomize layout, atomic writes, the reuse stamp, drift, the worker pool."""
