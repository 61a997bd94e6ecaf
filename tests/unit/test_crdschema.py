"""The CRD -> strict JSON Schema converter and the committed schemas/crds it produced."""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import operator
import os
import re
from pathlib import Path

import pytest
from jsonschema import Draft4Validator

from scripts import crdschema
from tests.helpers import assert_sha256sums

COMMITTED = Path(__file__).resolve().parents[2] / "schemas" / "crds"


@pytest.fixture(scope="module")
def crds_dir() -> Path:
    return crdschema.DEFAULT_CRDS_DIR  # in the repository: hack/crds


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _schema(rel: str) -> dict:
    return json.loads((COMMITTED / rel).read_text(encoding="utf-8"))


def test_regenerating_gives_the_committed_files_byte_for_byte(crds_dir, tmp_path):
    crdschema.generate(crds_dir, tmp_path)
    committed, fresh = _tree(COMMITTED), _tree(tmp_path)
    assert sorted(fresh) == sorted(committed)
    assert [rel for rel in fresh if fresh[rel] != committed[rel]] == []


def test_one_schema_per_served_version_in_kubeconform_layout():
    assert sorted(p.relative_to(COMMITTED).as_posix() for p in COMMITTED.rglob("*.json")) == [
        "argoproj.io/application_v1alpha1.json",
        "argoproj.io/applicationset_v1alpha1.json",
        "batch.paddlepaddle.org/paddlejob_v1.json",
        "batch.volcano.sh/job_v1alpha1.json",
        "jobset.x-k8s.io/jobset_v1alpha2.json",
        "kubeflow.org/paddlejob_v1.json",
        "kueue.x-k8s.io/clusterqueue_v1beta2.json",
        "kueue.x-k8s.io/localqueue_v1beta2.json",
        "kueue.x-k8s.io/resourceflavor_v1beta2.json",
        "kueue.x-k8s.io/topology_v1beta2.json",
        "kueue.x-k8s.io/workloadpriorityclass_v1beta2.json",
        "scheduling.volcano.sh/podgroup_v1beta1.json",
        "trainer.kubeflow.org/clustertrainingruntime_v1alpha1.json",
        "trainer.kubeflow.org/trainingruntime_v1alpha1.json",
        "trainer.kubeflow.org/trainjob_v1alpha1.json",
    ]


def test_recorded_sha256_and_licence_match_the_sources(crds_dir):
    rows = re.findall(
        r"^\| `([^`]+)` \| `([^`]+)` \| `([0-9a-f]{64})` \|.*\| (\S+) \|$",
        (COMMITTED / "SOURCES.md").read_text(encoding="utf-8"),
        flags=re.MULTILINE,
    )
    assert len(rows) == 15
    for schema, source, digest, licence in rows:
        assert (COMMITTED / schema).is_file()
        assert hashlib.sha256((crds_dir / source).read_bytes()).hexdigest() == digest, source
        assert licence == "Apache-2.0"


PADDLEJOB = {
    "apiVersion": "batch.paddlepaddle.org/v1",
    "kind": "PaddleJob",
    "metadata": {"name": "demo", "anything": "goes"},
    "spec": {"worker": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}},
}


@pytest.mark.parametrize(
    ("value", "valid"), [(2, True), ("500m", True), ("2x", False), (True, False)]
)
def test_int_or_string_accepts_both_and_keeps_the_quantity_pattern(value, valid):
    validator = Draft4Validator(_schema("scheduling.volcano.sh/podgroup_v1beta1.json"))
    podgroup = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "demo"},
        "spec": {"minResources": {"cpu": value}},
    }
    assert validator.is_valid(podgroup) is valid


SCHEMA = {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object"}}}}


def test_a_deprecated_version_gets_no_schema():
    # Kueue's CRDs serve v1beta1 (deprecated: true) beside v1beta2; paddlegen writes v1beta2.
    crd = {
        "spec": {
            "group": "kueue.x-k8s.io",
            "names": {"kind": "LocalQueue"},
            "versions": [
                {"name": v, "served": True, "deprecated": v == "v1beta1", "schema": SCHEMA}
                for v in ("v1beta1", "v1beta2")
            ]
            + [{"name": "v1", "served": False, "schema": SCHEMA}],
        }
    }
    assert list(crdschema.crd_schemas(crd)) == ["kueue.x-k8s.io/localqueue_v1beta2.json"]


CLUSTERQUEUE = {
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "ClusterQueue",
    "metadata": {"name": "team-a"},
    "spec": {
        "namespaceSelector": {},
        "preemption": {"withinClusterQueue": "LowerPriority"},
        "resourceGroups": [
            {
                "coveredResources": ["cpu"],
                "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": 4}]}],
            }
        ],
    },
}


@pytest.mark.parametrize(
    ("rel", "obj", "where", "unknown"),
    [
        ("batch.paddlepaddle.org/paddlejob_v1.json", PADDLEJOB, ["spec"], "cleanPolicy"),
        (
            "kueue.x-k8s.io/clusterqueue_v1beta2.json",
            CLUSTERQUEUE,
            ["spec", "preemption"],
            "withinQueue",
        ),
    ],
    ids=["paddlejob", "clusterqueue"],
)
def test_an_unknown_field_is_refused_where_the_cluster_would_prune_it(rel, obj, where, unknown):
    validator = Draft4Validator(_schema(rel))
    assert list(validator.iter_errors(obj)) == []
    bad = copy.deepcopy(obj)
    functools.reduce(operator.getitem, where, bad)[unknown] = "Any"
    [error] = validator.iter_errors(bad)
    assert (error.validator, list(error.absolute_path)) == ("additionalProperties", where)
    assert f"'{unknown}' was unexpected" in error.message


def test_conversion_rules():
    crd_node = {
        "type": "object",
        "description": "dropped",
        "properties": {
            "description": {"type": "string", "format": "date-time"},  # a field, not a keyword
            "port": {
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                "x-kubernetes-int-or-string": True,
            },
            "open": {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": True,
                "properties": {"a": {"type": "string"}},
            },
        },
    }
    assert crdschema.strict_schema(crd_node) == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "description": {"type": "string"},
            "port": {"type": ["integer", "string"]},
            "open": {"type": "object", "properties": {"a": {"type": "string"}}},
        },
    }
    with pytest.raises(ValueError, match=r"\$\.a: unsupported schema keyword 'nullable'"):
        crdschema.strict_schema({"properties": {"a": {"type": "string", "nullable": True}}})


def test_output_is_deterministic_text():
    text = (COMMITTED / "scheduling.volcano.sh" / "podgroup_v1beta1.json").read_text("utf-8")
    assert text == crdschema.dumps(json.loads(text))
    assert text.endswith("}\n") and '\n  "additionalProperties": false,' in text


def test_the_repository_crds_are_the_shared_upstream_copies_byte_for_byte(crds_dir):
    # ../shared/crds is the project's reference copy; a user's clone has only hack/crds.
    shared = Path(
        os.environ.get("PADDLEGEN_SHARED_CRDS", crdschema._REPO_ROOT.parent / "shared" / "crds")
    )
    if not shared.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"reference CRDs missing: {shared}")
        pytest.skip(f"reference CRDs not present at {shared}")
    ours = {rel: data for rel, data in _tree(crds_dir).items() if rel != "SHA256SUMS"}
    theirs = _tree(shared)
    # The reference copy may lag behind a newly vendored CRD (the JobSet and Trainer ones of
    # #26): every file it has is ours byte for byte; the git blob test below pins the rest.
    assert {rel: ours.get(rel) for rel in theirs if rel != "SOURCES.md"} == {
        rel: data for rel, data in theirs.items() if rel != "SOURCES.md"
    }


def git_blob(data: bytes) -> str:
    """The id git gives a file of ``data`` (`git rev-parse <commit>:<path>` upstream)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def test_each_vendored_crd_is_the_upstream_blob_its_row_names(crds_dir):
    # The recorded blob upstream: the file is unmodified.
    rows = re.findall(
        r"^\| `([^`]+\.yaml)` \|[^|]+\|[^|]+\|[^|]+\| `([0-9a-f]{40})` \|",
        (crds_dir / "SOURCES.md").read_text(encoding="utf-8"),
        flags=re.MULTILINE,
    )
    files = sorted(p.relative_to(crds_dir).as_posix() for p in crds_dir.rglob("*.yaml"))
    assert sorted(name for name, _ in rows) == files
    for name, blob in rows:
        assert git_blob((crds_dir / name).read_bytes()) == blob, name


def test_sha256sums_lists_every_crd_file(crds_dir):
    # `sha256sum -c SHA256SUMS` in hack/crds checks a copy by hand.
    assert_sha256sums(crds_dir)


def test_argocd_appproject_crd_is_the_recorded_upstream_file():
    # hack/local-cluster --with argocd installs it; SOURCES.md there says where it comes from.
    folder = crdschema._REPO_ROOT / "hack" / "tools" / "argocd" / "crds"
    for name in assert_sha256sums(folder):
        assert f"| `{name}` | argoproj/argo-cd |" in (folder / "SOURCES.md").read_text("utf-8")


def test_kueue_controller_crds_are_the_recorded_upstream_files():
    # hack/local-cluster --with kueue installs them beside the five of hack/crds.
    folder = crdschema._REPO_ROOT / "hack" / "tools" / "kueue" / "crds"
    rows = dict(
        re.findall(
            r"^\| `([^`]+\.yaml)` \| `([0-9a-f]{40})` \|",
            (folder / "SOURCES.md").read_text(encoding="utf-8"),
            flags=re.MULTILINE,
        )
    )
    assert sorted(assert_sha256sums(folder)) == sorted(rows) and len(rows) == 6
    for name, blob in rows.items():
        assert git_blob((folder / name).read_bytes()) == blob, name
