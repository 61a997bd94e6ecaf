"""overlays: merge semantics, positions inside overlays, and the base/overlays layout."""

from __future__ import annotations

import pytest

from paddlegen import build
from paddlegen.errors import SpecError
from paddlegen.spec.overlays import deep_merge

BASE = """\
apiVersion: paddlegen/v1
kind: TrainingJob
metadata: {name: demo}
spec:
  workload: job
  image: img:1
  env: [{name: A, value: "1"}]
  resources: {requests: {cpu: 1, memory: 1Gi}, limits: {memory: 2Gi}}
"""


def test_maps_merge_lists_replace_null_removes():
    base = {"a": {"x": 1, "y": 2}, "l": [1, 2], "gone": 1}
    assert deep_merge(base, {"a": {"y": 3}, "l": [9], "gone": None}) == {
        "a": {"x": 1, "y": 3},
        "l": [9],
    }
    assert base == {"a": {"x": 1, "y": 2}, "l": [1, 2], "gone": 1}  # untouched


def render(tmp_path, overlays: str):
    spec = tmp_path / "spec.yaml"
    spec.write_text(BASE + overlays)
    return spec, build.render_specs([spec])[0]


def test_an_overlay_error_points_into_the_overlay(tmp_path):
    with pytest.raises(SpecError) as info:
        render(tmp_path, "overlays:\n  prod:\n    spec:\n      worker: {replicas: 0}\n")
    (d,) = info.value.diagnostics
    assert (d.line, d.col, d.path) == (12, 26, "$.overlays.prod.spec.worker.replicas")


def test_overlay_semantic_errors_are_reported_too(tmp_path):
    with pytest.raises(SpecError) as info:
        render(tmp_path, "overlays:\n  prod:\n    spec:\n      worker: {replicas: 3}\n")
    (d,) = info.value.diagnostics
    assert d.rule == "job-replicas" and d.line == 12


def test_overlay_may_not_rename_the_job(tmp_path):
    with pytest.raises(SpecError) as info:
        render(tmp_path, "overlays:\n  prod:\n    metadata: {name: other}\n")
    assert info.value.diagnostics[0].message == "unknown field"


def test_layout_is_base_plus_one_folder_per_environment(tmp_path):
    _, rendered = render(
        tmp_path, "overlays:\n  prod: {spec: {image: img:2}}\n  dev: {spec: {resources: null}}\n"
    )
    assert sorted(rendered.plan) == [
        "base/batch_v1_job_demo.yaml",
        "base/kustomization.yaml",
        "base/v1_configmap_demo-run.yaml",
        "overlays/dev/kustomization.yaml",
        "overlays/dev/patch-batch_v1_job_demo.yaml",
        "overlays/dev/patch-v1_configmap_demo-run.yaml",  # the digest of the Job
        "overlays/prod/kustomization.yaml",
        "overlays/prod/patch-batch_v1_job_demo.yaml",
        "overlays/prod/patch-v1_configmap_demo-run.yaml",
    ]
    prod = rendered.environments["prod"][0].obj
    assert prod["spec"]["template"]["spec"]["containers"][0]["image"] == "img:2"
    dev = rendered.environments["dev"][0].obj
    assert dev["spec"]["template"]["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "500m", "memory": "1Gi"}
    }  # back to the defaults


def test_without_overlays_the_layout_stays_flat(tmp_path):
    _, rendered = render(tmp_path, "")
    assert sorted(rendered.plan) == [
        "batch_v1_job_demo.yaml",
        "kustomization.yaml",
        "v1_configmap_demo-run.yaml",
    ]


def test_json_patch_is_exact_and_ordered():
    from paddlegen.output.patches import json_patch

    before = {"b": [1, 2], "a": {"x/y": 1, "gone": 2}, "same": "1"}
    after = {"b": [1, 3], "a": {"x/y": 2, "new": [1]}, "same": "1", "list": [1]}
    assert json_patch(before, after) == [
        {"op": "remove", "path": "/a/gone"},
        {"op": "add", "path": "/a/new", "value": [1]},
        {"op": "replace", "path": "/a/x~1y", "value": 2},
        {"op": "replace", "path": "/b/1", "value": 3},
        {"op": "add", "path": "/list", "value": [1]},
    ]
    assert json_patch([1], [1, 2]) == [{"op": "replace", "path": "", "value": [1, 2]}]
    assert json_patch(1, True) == [{"op": "replace", "path": "", "value": True}]
