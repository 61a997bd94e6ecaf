"""overlays: merge semantics, positions inside overlays, and the base/overlays layout."""

from __future__ import annotations

import pytest

from paddlegen.errors import SpecError
from paddlegen.output.patches import strategic_patch
from paddlegen.pipeline import build
from paddlegen.spec.overlays import deep_merge
from paddlegen.validate.merge import PatchError, apply_patch
from tests.builders import render_file

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


def render(tmp_path, overlays: str) -> build.Rendered:
    return render_file(tmp_path, BASE + overlays)


REPLICAS = (12, 26, "$.overlays.prod.spec.worker.replicas")


@pytest.mark.parametrize(
    ("overlay", "found"),
    [
        (
            "spec:\n      worker: {replicas: 0}",
            (*REPLICAS, "schema", "0 is less than the minimum of 1"),
        ),
        # a semantic check's finding too
        (
            "spec:\n      worker: {replicas: 3}",
            (*REPLICAS, "job-replicas", "workload 'job' runs exactly one pod, not 3"),
        ),
        # an overlay may not rename the job
        (
            "metadata: {name: other}",
            (11, 16, "$.overlays.prod.metadata.name", "schema", "unknown field"),
        ),
    ],
    ids=["schema", "semantic", "rename"],
)
def test_an_overlay_error_points_into_the_overlay(tmp_path, overlay, found):
    with pytest.raises(SpecError) as info:
        render(tmp_path, f"overlays:\n  prod:\n    {overlay}\n")
    (d,) = info.value.diagnostics
    assert (d.line, d.col, d.path, d.rule, d.message) == found


AFFINITY = """\
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: gpu, operator: In, values: [a]}]
"""


@pytest.mark.parametrize(
    ("overlay", "where", "path"),
    [
        (
            "      affinity:\n        nodeAffinity: {$patch: delete}\n",
            (18, 24),
            "$.overlays.prod.spec.affinity.nodeAffinity.$patch",
        ),
        (
            "      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnored"
            "DuringExecution:\n            nodeSelectorTerms: [{$patch: replace}]\n",
            (20, 34),
            "$.overlays.prod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnored"
            "DuringExecution.nodeSelectorTerms[0].$patch",
        ),
    ],
    ids=["in-a-mapping", "a-list-item"],
)
def test_a_patch_directive_in_an_overlay_is_refused_at_its_key(tmp_path, overlay, where, path):
    # kustomize would act on it in the overlay's patch (drop the affinity), --env would not
    with pytest.raises(SpecError) as info:
        render(tmp_path, AFFINITY + "overlays:\n  prod:\n    spec:\n" + overlay)
    (d,) = info.value.diagnostics
    assert ((d.line, d.col), d.path, d.rule) == (where, path, "schema")
    assert "directive to kustomize" in d.message


def test_layout_is_base_plus_one_folder_per_environment(tmp_path):
    rendered = render(
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
    rendered = render(tmp_path, "")
    assert sorted(rendered.plan) == [
        "batch_v1_job_demo.yaml",
        "kustomization.yaml",
        "v1_configmap_demo-run.yaml",
    ]


def _job(env, **pod):
    container = {"name": "main", "image": "img:1", "env": env}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "demo", "namespace": "ml", "labels": {"a": "1", "b": "2"}},
        "spec": {"template": {"spec": {"containers": [container], **pod}}},
    }


def _env(*pairs):
    return [{"name": n, "value": v} for n, v in pairs]


def test_a_patch_names_list_elements_by_key_and_holds_only_changes():
    base = _job(_env(("A", "1"), ("B", "2"), ("C", "3")), tolerations=[{"key": "x"}])
    env = _job(_env(("A", "1"), ("B", "9"), ("C", "3")), tolerations=[{"key": "y"}])
    assert strategic_patch(base, env) == {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "demo"},
        "spec": {
            "template": {
                "spec": {
                    # kustomize puts named elements first: A is named to stay first, C is not
                    "containers": [
                        {"name": "main", "env": [{"name": "A"}, {"name": "B", "value": "9"}]}
                    ],
                    "tolerations": [{"key": "y"}],  # no merge key: given whole
                }
            }
        },
    }
    assert strategic_patch(base, base) is None


def test_a_patch_deletes_removed_elements_and_fields_and_replaces_lost_labels():
    base = _job(_env(("A", "1"), ("B", "2")), nodeSelector={"pool": "a"})
    env = _job(_env(("B", "2")))
    env["metadata"]["labels"] = {"a": "1"}
    patch = strategic_patch(base, env)
    assert patch["metadata"] == {"name": "demo", "labels": {"$patch": "replace", "a": "1"}}
    assert patch["spec"]["template"]["spec"] == {
        "containers": [{"name": "main", "env": [{"name": "A", "$patch": "delete"}]}],
        "nodeSelector": None,
    }


def test_a_custom_resource_list_is_given_whole():
    base, env = _job(_env(("A", "1"), ("B", "2"))), _job(_env(("A", "1"), ("B", "3")))
    for obj in (base, env):
        obj["apiVersion"], obj["kind"] = "batch.volcano.sh/v1alpha1", "Job"
    patch = strategic_patch(base, env)
    assert (
        patch["spec"]["template"]["spec"]["containers"]
        == env["spec"]["template"]["spec"]["containers"]
    )


def test_a_list_merged_by_two_keys_is_replaced_with_a_directive():
    ports = [{"containerPort": 80, "protocol": "TCP"}]
    base, env = _job([]), _job([])
    env["spec"]["template"]["spec"]["containers"][0]["ports"] = ports
    base["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 81}]
    (container,) = strategic_patch(base, env)["spec"]["template"]["spec"]["containers"]
    assert container == {"name": "main", "ports": [{"$patch": "replace"}, *ports]}


def test_the_patch_applies_back_to_the_environment_object():
    base = _job(_env(("A", "1"), ("B", "2"), ("C", "3")), nodeSelector={"pool": "a"})
    env = _job(_env(("C", "3"), ("D", "4"), ("A", "0")))
    env["metadata"]["labels"] = {"a": "1"}
    assert apply_patch(base, strategic_patch(base, env)) == env


def test_a_patch_that_does_not_fit_is_refused():
    base = _job([])
    with pytest.raises(PatchError, match="spec.template is a list in the patch, a map in the"):
        apply_patch(base, {"spec": {"template": []}})
    with pytest.raises(PatchError, match="its kind is 'Service', not 'Job'"):
        apply_patch(base, {"kind": "Service"})
    with pytest.raises(PatchError, match="one mapping"):
        apply_patch(base, [{"op": "replace"}])
