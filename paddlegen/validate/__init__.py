"""Manifest validation: kubeconform, the in-process backend, Kubernetes schemas, provenance."""
