"""The in-process backend: kubeconform's checks, with jsonschema and the same schema files."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from paddlegen.errors import Diagnostic, Rule, ToolError
from paddlegen.validate import k8s_schemas as k8sschemas
from paddlegen.validate.kubeconform import (
    MISSING_FIELD,
    MISSING_HINT,
    UNKNOWN_FIELD,
    crd_schemas_dir,
    diagnostic,
    object_name,
)
from paddlegen.validate.locations import NO_EXTRA, ExtraSchemas
from paddlegen.yamlio import manifest_documents

# Its findings say where they come from: kubeconform was not there to find them.
RULE = Rule(
    "in-process",
    (
        "a rendered manifest is valid by the Kubernetes and CRD schemas, checked in process "
        "(kubeconform was not installed)"
    ),
    explanation=(
        "Rendered manifests are checked against the Kubernetes and CRD schemas in process when "
        "kubeconform is not installed."
    ),
    severity="error",
)


@cache
def _load_json(path: Path) -> Any:
    return json.loads(path.read_bytes())


def schema_for(
    api_version: str,
    kind: str,
    kubernetes_version: str = k8sschemas.DEFAULT_KUBERNETES_VERSION,
) -> Any:
    """The schema kubeconform would pick, looking in the same order as kubeconform_argv."""
    group, version = api_version.split("/")[0], api_version.split("/")[-1]
    crd = crd_schemas_dir() / group / f"{kind.lower()}_{version}.json"
    if crd.is_file():
        return _load_json(crd)
    return k8sschemas.kind_schema(api_version, kind, kubernetes_version)


def _jsonschema_causes(validator: Any, doc: Any) -> Iterator[tuple[list[object], str]]:
    for error in validator.iter_errors(doc):
        at = list(error.absolute_path)
        if error.validator == "additionalProperties" and error.validator_value is False:
            known = error.schema.get("properties", {})
            for name in error.instance:
                if name not in known:
                    yield [*at, name], UNKNOWN_FIELD
        elif error.validator == "required":
            for name in error.validator_value:
                if name not in error.instance:
                    yield [*at, name], MISSING_FIELD
        else:
            yield at, error.message


class _InProcess:
    """Validators for one Kubernetes version, built once per schema."""

    def __init__(self, kubernetes_version: str, extra: ExtraSchemas) -> None:
        self.version = kubernetes_version
        self.extra = extra
        self.registry = k8sschemas.registry(kubernetes_version)
        self.validators: dict[int, Any] = {}  # schemas are cached objects, so id() is stable
        self.missing: set[str] = set()

    def causes(self, doc: dict[str, Any]) -> Iterator[tuple[list[object], str]]:
        from jsonschema import Draft4Validator
        from jsonschema.validators import validator_for

        api_version, kind = str(doc["apiVersion"]), str(doc["kind"])
        schema = schema_for(api_version, kind, self.version)
        if schema is None:
            schema = self.extra.schema(api_version, kind, self.version)
        if schema is None:
            if not self.extra.ignore_missing:
                self.missing.add(f"{api_version} {kind}")
            return
        if id(schema) not in self.validators:
            # Like kubeconform: the schema's own $schema decides, draft-04 when it names none.
            cls = validator_for(schema, default=Draft4Validator)
            self.validators[id(schema)] = cls(schema, registry=self.registry)
        from referencing.exceptions import Unresolvable

        try:
            yield from _jsonschema_causes(self.validators[id(schema)], doc)
        except Unresolvable as exc:  # a schema of --schema-location that refers elsewhere
            raise ToolError(
                f"the schema for {api_version} {kind} has a $ref not found: {exc}"
            ) from None


def validate_in_process(
    files: Sequence[tuple[str, str]],
    kubernetes_version: str = k8sschemas.DEFAULT_KUBERNETES_VERSION,
    extra: ExtraSchemas = NO_EXTRA,
) -> list[Diagnostic]:
    """The same checks as run_kubeconform, with jsonschema and the same schema files."""
    checker = _InProcess(k8sschemas.resolve_version(kubernetes_version), extra)
    found: set[Diagnostic] = set()
    for name, text in files:
        try:
            for doc, duplicates in manifest_documents(text):
                if doc is None:
                    continue
                if not isinstance(doc, dict) or not doc.get("kind") or not doc.get("apiVersion"):
                    found.add(
                        diagnostic(
                            name, "", [], "not a Kubernetes object (no apiVersion/kind)", RULE
                        )
                    )
                    continue
                meta = doc.get("metadata")
                obj = object_name(doc["kind"], meta.get("name") if isinstance(meta, dict) else "")
                found.update(diagnostic(name, obj, [], message, RULE) for message in duplicates)
                found.update(diagnostic(name, obj, t, m, RULE) for t, m in checker.causes(doc))
        except yaml.YAMLError as exc:
            found.add(diagnostic(name, "", [], f"invalid YAML: {exc}", RULE))
    if checker.missing:
        raise ToolError(f"no schema for: {', '.join(sorted(checker.missing))}; {MISSING_HINT}")
    return sorted(found)
