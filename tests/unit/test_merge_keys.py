"""The lists kustomize merges by key (output/merge_keys.py) agree with the Kubernetes API's own
patch strategies, and cover every built-in kind paddlegen writes."""

from __future__ import annotations

import json
from functools import cache

import pytest

from paddlegen.output.merge_keys import MERGED_LISTS
from paddlegen.pipeline import build
from paddlegen.validate.k8s_schemas import strict_dir
from tests.conftest import example_specs

# kustomize's schema is Kubernetes 1.21.2's; the oldest the bundled schemas reach is 1.25,
# whose strategies for these fields are the same (a list's patch strategy never changes).
OLDEST = "1.25.0"


@cache
def _definitions() -> dict:
    return json.loads((strict_dir(OLDEST) / "_definitions.json").read_text())["$defs"]


def _resolve(schema: dict) -> dict:
    ref = schema.get("$ref")
    return _definitions()[ref.rsplit("/", 1)[1]] if ref else schema


def _schema_file(api_version: str, kind: str) -> str:
    group, _, version = api_version.rpartition("/")
    return f"{kind.lower()}-{group.split('.')[0] + '-' if group else ''}{version}.json"


def _field(api_version: str, kind: str, path: tuple[str, ...]) -> dict:
    schema = json.loads((strict_dir(OLDEST) / _schema_file(api_version, kind)).read_text())
    for step in path:
        schema = _resolve(schema)
        schema = schema["items"] if step == "[]" else schema["properties"][step]
    return schema


@pytest.mark.parametrize(
    ("api_version", "kind", "path"),
    [(a, k, p) for (a, k), lists in MERGED_LISTS.items() for p in lists],
    ids=lambda v: ".".join(v) if isinstance(v, tuple) else v,
)
def test_each_merged_list_has_that_strategy_and_those_keys_in_the_api(api_version, kind, path):
    field = _field(api_version, kind, path)
    assert "merge" in field["x-kubernetes-patch-strategy"].split(",")
    keys = field.get("x-kubernetes-list-map-keys") or (
        [field["x-kubernetes-patch-merge-key"]] if "x-kubernetes-patch-merge-key" in field else []
    )
    assert tuple(keys) == MERGED_LISTS[(api_version, kind)][path]


def _custom_resource(api_version: str) -> bool:
    """A kind kustomize has no schema for: its group is a domain outside Kubernetes' own."""
    group = api_version.rpartition("/")[0]
    return "." in group and (not group.endswith(".k8s.io") or group.endswith(".x-k8s.io"))


def test_every_kind_paddlegen_writes_is_listed_or_a_custom_resource():
    written = {
        (m.obj["apiVersion"], m.obj["kind"])
        for r in build.render_specs(example_specs())
        for m in [*r.manifests, *(m for ms in r.environments.values() for m in ms)]
    }
    assert len(written) > 8
    assert {w for w in written if not _custom_resource(w[0])} <= MERGED_LISTS.keys()


# Strategies 1.25 has and Kubernetes 1.21.2 (kustomize's schema) had not, as kyaml v0.20.1
# reports them: an ephemeral container's ports (which the API refuses anyway).
NEWER_THAN_KUSTOMIZES = {
    ("batch/v1", "Job"): {("spec", "template", "spec", "ephemeralContainers", "[]", "ports")}
}


def _merged_paths(schema: dict, path: tuple[str, ...] = (), seen: frozenset = frozenset()):
    """Every list under ``schema`` the API merges by strategy (not below a recursive type)."""
    ref = schema.get("$ref")
    if ref in seen:
        return
    schema, seen = _resolve(schema), seen | {ref} if ref else seen
    if "items" in schema and "merge" in schema.get("x-kubernetes-patch-strategy", "").split(","):
        yield path
    if "items" in schema:
        yield from _merged_paths(schema["items"], (*path, "[]"), seen)
    for name, sub in schema.get("properties", {}).items():
        if name not in ("status", "managedFields"):
            yield from _merged_paths(sub, (*path, name), seen)


@pytest.mark.parametrize(("api_version", "kind"), list(MERGED_LISTS), ids="/".join)
def test_every_list_the_api_merges_in_a_listed_kind_is_in_the_table(api_version, kind):
    schema = json.loads((strict_dir(OLDEST) / _schema_file(api_version, kind)).read_text())
    newer = NEWER_THAN_KUSTOMIZES.get((api_version, kind), set())
    assert set(_merged_paths(schema)) - newer == set(MERGED_LISTS[(api_version, kind)])
