"""The spec: YAML with positions, JSON Schema, semantic checks, the typed job model."""
