"""Rendering: the jinja2 engine and sandbox, manifests parsed back, Argo CD sync waves."""
